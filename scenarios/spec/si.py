"""A resolved scenario in SI units: a read-only view, every value converted exactly once.

A scenario file is written in the units people think in (``vscmg.wheel_speed_rpm``,
``arm.mount_rpy_deg``, ``sensors.gyro_arw`` in deg/sqrt(h)); the code that builds and runs
the system wants SI.  :func:`si_view` gives the resolved scenario with each non-SI value
converted once, here, by one table keyed by the schema's units (:data:`CONVERSIONS`), and
the key renamed without its unit suffix::

    >>> spec = si_view(load_scenario("station-keeping"))
    >>> spec.vscmg.wheel_speed          # [rad/s], from vscmg.wheel_speed_rpm = 3000
    314.1592653589793
    >>> spec.sensors.star_tracker_noise  # [rad], from star_tracker_noise_arcsec
    array([2.42406841e-05, 2.42406841e-05, 1.93925472e-04])

================  ================  ================================================
schema unit       SI unit           conversion
================  ================  ================================================
deg               rad               ``math.radians``
rpm               rad/s             ``x * RPM`` (``pi / 30``)
arcsec            rad               ``x * ARCSEC``
deg/h             rad/s             ``bias_instability_from_deg_per_hour``
deg/sqrt(h)       rad/sqrt(s)       ``arw_from_deg_per_root_hour``
deg/h/sqrt(h)     rad/s/sqrt(s)     ``rrw_from_deg_per_hour_root_hour``
================  ================  ================================================

``ARCSEC`` and the three gyro conversions are :mod:`dqspace.control.sensors`'s, the ones
the sensors are specified with.  Every other unit of the schema is SI already (``Hz`` is
1/s) and its values are passed as they are.

A key ending in its unit (``_deg``, ``_rpm``, ``_arcsec``) loses that suffix: ``skew_deg``
-> ``skew``, ``wheel_speed_max_rpm`` -> ``wheel_speed_max``, ``star_tracker_noise_arcsec``
-> ``star_tracker_noise``; other names stay (``sensors.gyro_arw`` is in rad/sqrt(s)).

**Kept as given** (:data:`AS_GIVEN`): the joint keys whose unit depends on the joint
(``arm.lower_deg``, ``arm.upper_deg``, ``arm.initial_joints_deg``, the same keys of an
``extra_arm[i]``, ``dh[i].lower_deg``, ``dh[i].upper_deg``: deg for a revolute joint, m for
a prismatic one; schema unit ``deg or m``) keep their name and value; the build step
converts them joint by joint (:func:`dqspace.scenarios.build.arm.joint_values`).

Values: a number is a float (an int stays an int), a vector a read-only float64 array
(n,), a bool or a string as it is; an array of tables (``faults``, ``dh``, ...) is a tuple
of sections.  The view is read-only, and an unknown name raises AttributeError naming the
section and the closest key (or saying what a unit-suffixed key is called here).

This module imports :mod:`dqspace.control.sensors` (for its conversions), so loading it
loads the control package: the build and simulation steps use it, reading a scenario
does not.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ...actuators import RPM
from ...control.sensors import (
    ARCSEC,
    arw_from_deg_per_root_hour,
    bias_instability_from_deg_per_hour,
    rrw_from_deg_per_hour_root_hour,
)
from .config import did_you_mean
from .scenario import Scenario
from .schema import SCHEMA
from .schema_arms import arm_metric_names

__all__ = [
    "si_view",
    "Spec",
    "SpecSection",
    "Conversion",
    "CONVERSIONS",
    "SIField",
    "SI_FIELDS",
    "AS_GIVEN",
]


def _rpm_to_rad_per_s(x: float) -> float:
    """[rpm] -> [rad/s] (:data:`dqspace.actuators.RPM`, the one constant)."""
    return x * RPM


def _arcsec_to_rad(x: float) -> float:
    """[arcsec] -> [rad]."""
    return x * ARCSEC


@dataclass(frozen=True)
class Conversion:
    """How a schema unit becomes SI.

    Attributes
    ----------
    si_unit : str, the unit of the converted value
    convert : callable float -> float, applied to a number or to each element of a vector
    suffix : str, the key suffix that names the unit (dropped from the key), or ``""``
    """

    si_unit: str
    convert: Callable[[float], float]
    suffix: str = ""


#: schema unit -> its conversion to SI: the one place a scenario's units become SI
CONVERSIONS = {
    "deg": Conversion("rad", math.radians, "_deg"),
    "rpm": Conversion("rad/s", _rpm_to_rad_per_s, "_rpm"),
    "arcsec": Conversion("rad", _arcsec_to_rad, "_arcsec"),
    "deg/h": Conversion("rad/s", bias_instability_from_deg_per_hour),
    "deg/sqrt(h)": Conversion("rad/sqrt(s)", arw_from_deg_per_root_hour),
    "deg/h/sqrt(h)": Conversion("rad/s/sqrt(s)", rrw_from_deg_per_hour_root_hour),
}

#: (section, key) whose unit depends on the joint type (deg or m): kept as given
AS_GIVEN = frozenset(
    {
        ("arm", "lower_deg"),
        ("arm", "upper_deg"),
        ("arm", "initial_joints_deg"),
        ("extra_arm", "lower_deg"),
        ("extra_arm", "upper_deg"),
        ("extra_arm", "initial_joints_deg"),
        ("dh", "lower_deg"),
        ("dh", "upper_deg"),
    }
)


@dataclass(frozen=True)
class SIField:
    """One key of the SI view.

    Attributes
    ----------
    key : str, the scenario's key (``"wheel_speed_rpm"``)
    unit : str, the scenario's unit (the schema's, ``"rpm"``)
    si_unit : str, the unit in the view (``"rad/s"``; the schema's when not converted)
    conversion : Conversion or None (None: passed as it is)
    """

    key: str
    unit: str
    si_unit: str
    conversion: Conversion | None


def _si_fields():
    out = {}
    for sec, section in SCHEMA.items():
        fields = {}
        for key, f in section.fields.items():
            conv = None if (sec, key) in AS_GIVEN else CONVERSIONS.get(f.unit)
            name = key
            if conv is not None and conv.suffix and key.endswith(conv.suffix):
                name = key[: -len(conv.suffix)]
            if name in fields or (name != key and name in section.fields):
                raise AssertionError(f"{sec}.{key}: its SI name {name!r} is taken")
            si_unit = conv.si_unit if conv is not None else f.unit
            fields[name] = SIField(key, f.unit, si_unit, conv)
        out[sec] = fields
    return out


#: section -> {name in the view: SIField}, generated from the schema
SI_FIELDS = _si_fields()


def _value(value, kind, conv):
    """A validated value in the view: converted once, vectors as read-only arrays."""
    if kind == "vec":
        items = value if conv is None else [conv.convert(x) for x in value]
        arr = np.array(items, dtype=float)
        arr.flags.writeable = False
        return arr
    if conv is not None:
        return conv.convert(value)
    return value


class SpecSection:
    """One table of a scenario in SI units: read-only, its keys as attributes
    (:func:`si_view`).  ``len``, iteration (the names) and ``in`` work as for a mapping."""

    __slots__ = ("_where", "_section", "_values")

    def __init__(self, where: str, section: str, table: Mapping) -> None:
        fields = SI_FIELDS[section]
        kinds = SCHEMA[section].fields
        given, known = set(table), {f.key for f in fields.values()}
        if given != known:
            extra, missing = sorted(given - known), sorted(known - given)
            problem = f"unknown key {extra[0]!r}" if extra else f"no key {missing[0]!r}"
            raise ValueError(
                f"si_view: {where}: {problem}; give a resolved scenario (load_scenario)"
            )
        values = {
            name: _value(table[f.key], kinds[f.key].kind, f.conversion)
            for name, f in fields.items()
        }
        object.__setattr__(self, "_where", where)
        object.__setattr__(self, "_section", section)
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name):  # called only for names that are not attributes: the keys
        if name.startswith("_"):
            raise AttributeError(name)
        values = self._values
        if name in values:
            return values[name]
        fields = SI_FIELDS[self._section]
        renamed = [n for n, f in fields.items() if f.key == name and n != name]
        if renamed:
            f = fields[renamed[0]]
            raise AttributeError(
                f"{self._where}.{name} [{f.unit}] is {self._where}.{renamed[0]} "
                f"[{f.si_unit}] in the SI view"
            )
        kept = [f.key for f in fields.values() if (self._section, f.key) in AS_GIVEN]
        kept = [k for k in kept if k.rsplit("_", 1)[0] == name]
        if kept:
            raise AttributeError(
                f"{self._where} has no key {name!r} in the SI view: {self._where}.{kept[0]} "
                f"is kept as given (deg for a revolute joint, m for a prismatic one)"
            )
        raise AttributeError(
            f"{self._where} has no key {name!r} in the SI view{did_you_mean(name, fields)} "
            f"(keys: {', '.join(fields)})"
        )

    def __setattr__(self, name, value):
        raise AttributeError(f"{self._where}: the SI view is read-only (cannot set {name!r})")

    def __delattr__(self, name):
        raise AttributeError(f"{self._where}: the SI view is read-only (cannot delete {name!r})")

    def __dir__(self):
        return list(self._values)

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __contains__(self, name):
        return name in self._values

    def __repr__(self):
        items = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"SpecSection({self._where}: {items})"


class Spec:
    """A resolved scenario in SI units (:func:`si_view`): one attribute per section, a
    :class:`SpecSection` (a tuple of them for an array of tables).  Read-only."""

    __slots__ = ("_sections",)

    def __init__(self, config: Mapping) -> None:
        if set(config) != set(SCHEMA):
            extra, missing = sorted(set(config) - set(SCHEMA)), sorted(set(SCHEMA) - set(config))
            problem = f"unknown section {extra[0]!r}" if extra else f"no section {missing[0]!r}"
            raise ValueError(f"si_view: {problem}; give a resolved scenario (load_scenario)")
        sections = {}
        for sec, section in SCHEMA.items():
            if section.many:
                sections[sec] = tuple(
                    SpecSection(f"{sec}[{i}]", sec, t) for i, t in enumerate(config[sec])
                )
            elif sec == "requirements":  # an extra arm's (ee_max_<name>) is not in the view
                extra = set(arm_metric_names(config))
                table = {k: v for k, v in config[sec].items() if k not in extra}
                sections[sec] = SpecSection(sec, sec, table)
            else:
                sections[sec] = SpecSection(sec, sec, config[sec])
        object.__setattr__(self, "_sections", sections)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        sections = object.__getattribute__(self, "_sections")
        if name in sections:
            return sections[name]
        raise AttributeError(
            f"the scenario has no section {name!r}{did_you_mean(name, sections)} "
            f"(sections: {', '.join(sections)})"
        )

    def __setattr__(self, name, value):
        raise AttributeError(f"the SI view is read-only (cannot set {name!r})")

    def __delattr__(self, name):
        raise AttributeError(f"the SI view is read-only (cannot delete {name!r})")

    def __dir__(self):
        return list(self._sections)

    def __repr__(self):
        return f"Spec({', '.join(self._sections)})"


def si_view(scenario: Scenario | Mapping) -> Spec:
    """The resolved scenario in SI units, read-only (module docstring).

    Parameters
    ----------
    scenario : Scenario, or its ``config`` (a scenario resolved against the schema: every
        section and key present)

    Returns
    -------
    Spec : ``spec.<section>.<name>``; names without their unit suffix, values in SI
        (:data:`SI_FIELDS` gives each name's scenario key and units)

    Raises
    ------
    ValueError : a section or key missing or unknown (not a resolved scenario)
    """
    config = scenario.config if isinstance(scenario, Scenario) else scenario
    return Spec(config)
