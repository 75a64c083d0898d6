"""The search space of a robust tuning: scenario keys and their ranges (``KEY=LO:HI``).

A tuned parameter is one number of the scenario, named like ``--set`` names it:

* a scalar key, ``arm_controller.omega_n=5:40``: its value is searched in ``[5, 40]``;
* a vector key as one factor, ``base_controller.kp_trans=200:2000``: the searched value is
  the vector's largest ``|component|`` (for the usual equal-axis gains, every component) and
  the other components keep their ratios to it, as :func:`dqspace.scenarios.campaigns.tuning.tune`
  scales gains;
* one component of a vector, ``base_controller.kp_trans[2]=200:2000``: that component
  alone (several components of a key may be tuned, not the whole key and a component).

The scale is logarithmic when ``LO > 0`` and ``HI / LO >= 10`` (gains, noise densities:
what matters is the ratio), linear otherwise; ``log:LO:HI`` or ``lin:LO:HI`` says so
explicitly.  An integer key (``int`` in the schema) is searched over integers.  Values are
rounded to 6 significant digits before they are applied, so a design reads back from
``best.toml`` exactly as it ran.  Every range is checked against the schema at both ends
when the tuning starts (ValueError naming the key).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..spec.config import did_you_mean
from ..spec.variants import resolved_value, scenario_with

__all__ = [
    "TunedParam",
    "LOG_RATIO",
    "parse_param",
    "parse_range",
    "tuned_params",
    "design_values",
    "design_overrides",
    "round_value",
]

#: a range ``LO:HI`` with ``LO > 0`` and ``HI / LO`` at least this is searched on a log scale
LOG_RATIO = 10.0
_COMPONENT = re.compile(r"^(?P<key>[^\[\]]+\.[^.\[\]]+)\[(?P<index>\d+)\]$")


@dataclass(frozen=True)
class TunedParam:
    """One tuned number of the scenario.

    Attributes
    ----------
    name : str, as given (``"base_controller.kp_trans"``, ``"base_controller.kp_trans[2]"``);
        the parameter's name in the study and in ``history.csv``
    key : str, the scenario key (``"base_controller.kp_trans"``)
    index : int or None, the component of a vector key (None: the whole key)
    low, high : float, the range, in the key's unit (schema)
    log : bool, searched on a log scale
    integer : bool, an integer key (searched over integers)
    base : the base scenario's value of ``key`` (a number or a list)
    ref : float, a whole vector key: its base's largest ``|component|`` (the searched value
        replaces it, the others keep their ratios); else 1
    """

    name: str
    key: str
    index: int | None
    low: float
    high: float
    log: bool
    integer: bool
    base: object
    ref: float = 1.0

    @property
    def vector(self) -> bool:
        """A whole vector key scaled as one factor."""
        return isinstance(self.base, list) and self.index is None

    def start(self) -> float:
        """The base scenario's value of this parameter (its largest ``|component|`` for a
        whole vector key)."""
        if self.vector:
            return self.ref
        return self.base[self.index] if self.index is not None else self.base

    def describe(self) -> str:
        """``kp_trans in [200, 2000] (log)`` style text."""
        scale = "log" if self.log else "linear"
        what = " (largest component; ratios kept)" if self.vector else ""
        return f"{self.name} in [{self.low:g}, {self.high:g}] ({scale}){what}"

    def as_dict(self) -> dict:
        """Plain data (JSON): name, key, index, low, high, log, integer."""
        return {
            "name": self.name,
            "key": self.key,
            "index": self.index,
            "low": self.low,
            "high": self.high,
            "log": self.log,
            "integer": self.integer,
        }


def round_value(x: float, digits: int = 6) -> float:
    """``x`` rounded to ``digits`` significant digits (what a tuned value is applied as)."""
    return float(f"{float(x):.{digits - 1}e}")


def parse_param(text: str) -> tuple[str, str]:
    """Split ``"KEY=LO:HI"`` (the command line's ``--param``) into ``(KEY, "LO:HI")``.

    Raises
    ------
    ValueError naming the text when there is no ``=`` or no key.
    """
    if not isinstance(text, str) or "=" not in text:
        raise ValueError(
            f"--param {text!r}: expected KEY=LO:HI (e.g. base_controller.kp_rot=10:200)"
        )
    key, spec = (s.strip() for s in text.split("=", 1))
    if not key:
        raise ValueError(f"--param {text!r}: no key before '='")
    return key, spec


def _number(text, name, what):
    try:
        x = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"param {name}: {what} {text!r} is not a number") from None
    if not math.isfinite(x):
        raise ValueError(f"param {name}: {what} {text!r} is not a finite number")
    return x


def parse_range(name: str, spec: object) -> tuple[float, float, str]:
    """``(low, high, scale)`` of a range: ``"LO:HI"``, ``"log:LO:HI"``, ``"lin:LO:HI"`` or a
    pair ``(lo, hi)`` (scale ``"auto"``: module docstring).

    Raises
    ------
    ValueError naming the parameter: not two numbers, ``LO >= HI``, a log scale with
    ``LO <= 0``.
    """
    scale = "auto"
    if isinstance(spec, str):
        parts = [p.strip() for p in spec.split(":")]
        if parts and parts[0] in ("log", "lin"):
            scale = parts.pop(0)
        if len(parts) != 2:
            raise ValueError(
                f"param {name}: range {spec!r}: expected LO:HI, log:LO:HI or lin:LO:HI"
            )
        lo, hi = parts
    else:
        try:
            lo, hi = spec
        except (TypeError, ValueError):
            raise ValueError(f"param {name}: range {spec!r}: expected (low, high)") from None
    low, high = _number(lo, name, "low"), _number(hi, name, "high")
    if not low < high:
        raise ValueError(f"param {name}: low {low:g} must be below high {high:g}")
    if scale == "log" and low <= 0:
        raise ValueError(f"param {name}: a log scale needs low > 0, got {low:g}")
    return low, high, scale


def _base_value(scenario, name):
    """(key, index, base value of key) for a parameter name (ValueError naming it)."""
    m = _COMPONENT.match(name)
    key, index = (m["key"], int(m["index"])) if m else (name, None)
    try:
        value = resolved_value(scenario.config, key)
    except (KeyError, ValueError, IndexError):
        sec, _, field = key.partition(".")
        cfg = scenario.config
        hint = did_you_mean(field, cfg[sec]) if isinstance(cfg.get(sec), dict) else ""
        hint = hint or did_you_mean(sec, [s for s in cfg if isinstance(cfg[s], dict)])
        raise ValueError(
            f"param {name}: {key!r} is not a key of the scenario (section.key){hint}"
        ) from None
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    vector = (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    )
    if not (numeric or vector):
        raise ValueError(f"param {name}: {key} = {value!r} is not a number or a vector")
    if index is not None:
        if not vector:
            raise ValueError(f"param {name}: {key} = {value!r} is not a vector")
        if index >= len(value):
            raise ValueError(
                f"param {name}: {key} has {len(value)} components (0 to {len(value) - 1})"
            )
    return key, index, value


def tuned_params(scenario, params: Mapping[str, object]) -> list[TunedParam]:
    """The parameters of a tuning, checked against the scenario.

    Parameters
    ----------
    scenario : Scenario, the base
    params : dict name -> range (``"LO:HI"``, ``"log:LO:HI"``, ``"lin:LO:HI"`` or a pair)

    Raises
    ------
    ValueError naming the parameter: an unknown key, a key that is not a number, a
    component out of range, a bad range, a whole key and one of its components both
    tuned, a vector whose base is zero, a range the schema refuses at either end.
    """
    if not isinstance(params, Mapping) or not params:
        raise ValueError("params: give at least one KEY=LO:HI (a dict name -> range)")
    out = []
    for name, spec in params.items():
        name = str(name).strip()
        key, index, base = _base_value(scenario, name)
        low, high, scale = parse_range(name, spec)
        integer = isinstance(base, int) and not isinstance(base, bool)
        if integer and not (low.is_integer() and high.is_integer()):
            raise ValueError(f"param {name}: {key} is an integer: give integer bounds")
        log = scale == "log" or (scale == "auto" and low > 0 and high / low >= LOG_RATIO)
        ref = 1.0
        if isinstance(base, list) and index is None:
            ref = max(abs(float(b)) for b in base)
            if ref == 0.0:
                raise ValueError(
                    f"param {name}: {key} = {base!r} is zero: scaling it keeps it zero; tune "
                    f"its components ({key}[0], ...) or set a starting value with --set"
                )
            if low < 0:
                raise ValueError(
                    f"param {name}: a whole vector is tuned by its largest |component|: "
                    f"give a range of magnitudes (low >= 0), or tune components ({key}[i])"
                )
        out.append(TunedParam(name, key, index, low, high, log, integer, base, ref))
    _check_overlaps(out)
    for p in out:  # the schema's ranges hold at both ends (the others at their base values)
        for end in (p.low, p.high):
            scenario_with(
                scenario, design_overrides([p], {p.name: end}), f"param {p.name} = {end:g}"
            )
    return out


def _check_overlaps(params):
    seen = {}
    for p in params:
        if p.name in seen:
            raise ValueError(f"param {p.name}: given twice")
        seen[p.name] = p
    whole = {p.key for p in params if p.index is None}
    for p in params:
        if p.index is not None and p.key in whole:
            raise ValueError(
                f"param {p.name}: {p.key} is tuned as a whole too: tune the whole key or "
                f"its components, not both"
            )


def design_values(params, values: Mapping[str, float]) -> dict:
    """The values of a design as they are applied: parameter name -> value rounded by
    :func:`round_value` (an integer parameter: an int)."""
    return {
        p.name: int(round(values[p.name])) if p.integer else round_value(values[p.name])
        for p in params
    }


def design_overrides(params, values: Mapping[str, float]) -> dict:
    """The scenario overrides of a design: key -> value.

    Parameters
    ----------
    params : list of TunedParam
    values : dict parameter name -> value (rounded first: :func:`design_values`)

    Returns
    -------
    dict key -> value, ready for :func:`dqspace.scenarios.spec.variants.scenario_with`: a
    scalar, or the whole vector with its tuned components (or scaled, keeping ratios).
    """
    out = {}
    applied = design_values(params, values)
    for p in params:
        v = applied[p.name]
        if p.vector:
            out[p.key] = [round_value(v * (float(b) / p.ref)) for b in p.base]
        elif p.index is not None:
            vec = out.get(p.key, list(p.base))
            vec = [float(x) for x in vec]
            vec[p.index] = v
            out[p.key] = vec
        else:
            out[p.key] = v
    return out
