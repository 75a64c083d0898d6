"""Loading scenarios: a file path or an embedded name, plus ``--set`` overrides.

Besides each key's type and range (:mod:`.schema`), :func:`load_scenario` checks the
constraints between keys that a run relies on (:func:`cross_checks`), so that a
scenario it accepts does not fail later for a reason visible in the file: at least
one control tick (closed loop) or recorded interval (open loop), periods that are
whole numbers of integrator steps, faults a run can apply.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .config import (
    ScenarioError,
    apply_overrides,
    did_you_mean,
    dumps_toml,
    embedded_path,
    embedded_scenarios,
    load_toml,
    printable,
    short,
    validate,
)
from .dispersions import Dispersions
from .physical import check_device_axes, plausibility_warnings
from .requirements import ARM_METRICS
from .schema import SCHEMA
from .schema_arms import with_arm_requirements
from .schema_capture import capture_checks

__all__ = [
    "Scenario",
    "load_scenario",
    "cross_checks",
    "MAX_STEPS_PER_PERIOD",
    "MAX_SAMPLES",
    "N_THRUSTERS",
]

#: at most this many integrator steps per control (closed loop) or recording period
MAX_STEPS_PER_PERIOD = 10**6
#: at most this many recorded samples per run (control ticks, or open-loop outputs)
MAX_SAMPLES = 10**6
#: thrusters of the paper's layout (``faults[i].thruster`` indexes the thruster set)
N_THRUSTERS = 12
_PLOT_FORMATS = ("png", "pdf")
#: load-time warnings (implausible masses and inertias, normalised axes)
log = logging.getLogger("dqspace.scenario")


@dataclass(frozen=True)
class Scenario:
    """A resolved scenario: every key present (defaults filled in) and validated.

    Attributes
    ----------
    config : dict section -> {key: value} (``faults``: a list of tables)
    source : str, the file it came from (with the overrides applied)
    dispersions : dict key -> distribution, the file's ``[dispersions]`` table (checked
        against ``config``; see :mod:`dqspace.scenarios.spec.dispersions`); used by Monte Carlo
        campaigns only, a single run ignores it
    """

    config: dict
    source: str
    dispersions: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.config["scenario"]["name"]

    def to_toml(self) -> str:
        """The resolved scenario as TOML (what ``dqspace show`` prints)."""
        text = dumps_toml(self.config, with_arm_requirements(SCHEMA, self.config))
        if self.dispersions:
            lines = ["[dispersions]"]
            for key, spec in self.dispersions.items():
                inline = ", ".join(f"{k} = {_toml_scalar(v)}" for k, v in spec.items())
                lines.append(f"{_toml_scalar(key)} = {{ {inline} }}")
            text += "\n".join(lines) + "\n"
        return text


#: the file that a folder given where a scenario is expected stands for (``dqspace new``
#: writes ``NAME/scenario.toml``)
FOLDER_SCENARIO = "scenario.toml"


def _scenario_path(name_or_path):
    """The file of a scenario, the one resolver of every command: a file as given (a
    ``.toml`` path always); a folder holding :data:`FOLDER_SCENARIO`, that file; else the
    embedded scenario of that name.
    What the user typed wins: a file or a folder (with its ``scenario.toml``) of the name
    is read rather than an embedded scenario of the same name."""
    p = Path(name_or_path)
    if p.suffix == ".toml" and not p.exists():
        raise ScenarioError(
            f"{printable(p)}: no such scenario file{did_you_mean(p.stem, embedded_scenarios())}"
        )
    if p.suffix != ".toml" and p.is_dir():  # a .toml path is a file (a folder: unreadable)
        if (p / FOLDER_SCENARIO).is_file():
            return p / FOLDER_SCENARIO
        if str(name_or_path) not in embedded_scenarios():
            raise ScenarioError(
                f"{printable(p)}: a folder without {FOLDER_SCENARIO} (give a scenario file, "
                f"or a folder `dqspace new` wrote)"
            )
    return p if p.suffix == ".toml" or p.is_file() else embedded_path(str(name_or_path))


def load_scenario(name_or_path: str | os.PathLike, overrides: Sequence[str] = ()) -> Scenario:
    """Load, override and validate a scenario.

    Parameters
    ----------
    name_or_path : str or Path, a TOML file or the name of an embedded scenario
        (``"station-keeping"``, ``"dynamics-check"``)
    overrides : sequence of ``"section.key=value"`` (TOML values)

    Raises
    ------
    ScenarioError (a ValueError) naming the file and the key.
    """
    if isinstance(overrides, str):
        raise ScenarioError(
            f"overrides must be a list of 'section.key=value' strings, got the string {overrides!r}"
        )
    path = _scenario_path(name_or_path)
    doc = _with_includes(path, load_toml(path), ())
    source = printable(path)
    schema = with_arm_requirements(SCHEMA, doc)  # [[extra_arm]]: ee_max_<name> ...
    if overrides:
        doc = apply_overrides(doc, overrides, f"{source}: --set", schema)
        source += " (with " + ", ".join(short(o) for o in overrides) + ")"
    table = doc.pop("dispersions", {})
    cfg = validate(doc, schema, source)
    _resolve_files(cfg, Path.cwd())  # paths given with --set: relative to the current folder
    cross_checks(cfg, source)
    if cfg["scenario"]["kind"] != "open_loop":  # an open-loop run has no system of its own
        for note in plausibility_warnings(cfg, source):
            log.warning("%s", note)
    try:
        Dispersions.from_table(table, cfg)
    except ValueError as exc:
        raise ScenarioError(f"{source}: {exc}") from None
    return Scenario(cfg, source, dict(table))


def _toml_scalar(v):
    return dumps_toml({"x": {"v": v}}).splitlines()[1].split(" = ", 1)[1]


#: keys that name files: (section, key, the values that are not files)
FILE_KEYS = (("arm", "model", ("iiwa", "dh", "none")), ("base", "urdf", ("",)))


def _resolve_files(doc, folder):
    """Make the file paths of ``doc`` absolute, relative to ``folder`` (in place)."""
    for sec, key, builtin in FILE_KEYS:
        table = doc.get(sec)
        if isinstance(table, dict) and isinstance(table.get(key), str):
            value = table[key]
            if value and value not in builtin and not Path(value).is_absolute():
                table[key] = str((folder / value).resolve())
    for row in doc.get("extra_arm", []) if isinstance(doc.get("extra_arm"), list) else []:
        value = row.get("model") if isinstance(row, dict) else None  # a URDF, or 'iiwa'
        if isinstance(value, str) and value not in ("iiwa", "") and not Path(value).is_absolute():
            row["model"] = str((folder / value).resolve())


#: the most scenario files one scenario may bring in through ``include``, and the deepest
#: chain of includes
MAX_INCLUDE_FILES, MAX_INCLUDE_DEPTH = 64, 16


def _with_includes(path, doc, seen, memo=None):
    """``doc`` with its files resolved relative to ``path``'s folder and the files named by
    its top-level ``include`` (a string or a list, relative to ``path``) merged under it:
    an included file gives sections and keys the including file does not set.  Each file
    is read and expanded once (``memo``: a file included many times costs one read, not
    one per path to it), at most :data:`MAX_INCLUDE_FILES` files and
    :data:`MAX_INCLUDE_DEPTH` levels."""
    memo = {} if memo is None else memo
    path = Path(path).resolve()
    if len(seen) >= MAX_INCLUDE_DEPTH:
        raise ScenarioError(
            f"{printable(path)}: includes nested deeper than {MAX_INCLUDE_DEPTH} levels"
        )
    doc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in doc.items()}
    _resolve_files(doc, path.parent)
    inc = doc.pop("include", [])
    if isinstance(inc, str):
        inc = [inc]
    if not isinstance(inc, list) or not all(isinstance(x, str) for x in inc):
        raise ScenarioError(f"{printable(path)}: include must be a file name or a list of them")
    merged = {}
    for name in inc:
        p = (path.parent / name).resolve()
        if p in seen or p == path:
            raise ScenarioError(f"{printable(path)}: include {name!r} includes itself")
        if not p.is_file():
            raise ScenarioError(f"{printable(path)}: include {name!r}: no such file")
        if p not in memo:
            if len(memo) >= MAX_INCLUDE_FILES:
                raise ScenarioError(
                    f"{printable(path)}: includes more than {MAX_INCLUDE_FILES} files"
                )
            memo[p] = None  # counted while it expands
            memo[p] = _with_includes(p, load_toml(p), (*seen, path), memo)
        sub = memo[p]
        for k, v in sub.items():
            if isinstance(v, dict) and isinstance(merged.get(k), dict):
                merged[k] = {**merged[k], **v}
            else:
                merged[k] = v
    for k, v in doc.items():
        if isinstance(v, dict) and isinstance(merged.get(k), dict):
            merged[k] = {**merged[k], **v}
        else:
            merged[k] = v
    return merged


# ------------------------------------------------------------ cross-checks


def _whole(x):
    """``round(x)`` if ``x`` is finite and within rounding of an integer, else None."""
    if not math.isfinite(x):
        return None
    n = round(x)
    return n if abs(x - n) <= max(1e-9, 1e-12 * abs(x)) else None


def _per(a, b):
    """``a / b`` for positive floats, ``inf`` where it overflows."""
    try:
        return a / b
    except (OverflowError, ZeroDivisionError):
        return math.inf


def _check_count(T, rate, source, key, period_name, sample_name):
    """The duration ``T`` is a whole number (1..MAX_SAMPLES) of periods ``1 / rate``."""
    count, period = T * rate, _per(1.0, rate)
    head = f"{source}: scenario.duration = {T} s"
    if count < 1.0 - 1e-9:
        raise ScenarioError(
            f"{head} is shorter than one {period_name} (1/{key} = {period:.6g} s): "
            f"the run would have no {sample_name}"
        )
    if count > MAX_SAMPLES:
        raise ScenarioError(
            f"{head} at {key} = {rate} Hz makes {count:.4g} {sample_name}s, more than "
            f"the {MAX_SAMPLES} a run may record"
        )
    if _whole(count) is None:
        raise ScenarioError(f"{head} must be a whole number of {period_name}s ({period:.6g} s)")


def _check_steps(rate, dt, source, key):
    """The period ``1 / rate`` is a whole number (1..MAX_STEPS_PER_PERIOD) of steps ``dt``."""
    steps = _per(1.0, rate * dt) if rate * dt > 0.0 else math.inf
    period = _per(1.0, rate)
    if steps > MAX_STEPS_PER_PERIOD:
        raise ScenarioError(
            f"{source}: {key} = {rate} Hz: one period ({period:.6g} s) would take "
            f"{steps:.4g} steps of integrator.dt = {dt} s (at most {MAX_STEPS_PER_PERIOD})"
        )
    if steps < 1.0 - 1e-9 or _whole(steps) is None:
        raise ScenarioError(
            f"{source}: {key} = {rate} Hz: the period ({period:.6g} s) must be a "
            f"whole number of integrator.dt = {dt} s steps"
        )


def _check_closed_loop_timing(cfg, source):
    integ, rate, T = cfg["integrator"], cfg["control"]["rate"], cfg["scenario"]["duration"]
    if integ["method"] != "rk4":
        raise ScenarioError(
            f"{source}: integrator.method = {integ['method']!r} applies to open-loop runs; "
            f"the closed loop steps RK4 at integrator.dt (method = 'rk4')"
        )
    _check_count(T, rate, source, "control.rate", "control period", "control tick")
    _check_steps(rate, integ["dt"], source, "control.rate")


def _check_open_loop_timing(cfg, source):
    integ, rate, T = cfg["integrator"], cfg["control"]["record_rate"], cfg["scenario"]["duration"]
    _check_count(T, rate, source, "control.record_rate", "recording period", "recorded interval")
    if integ["method"] == "rk4":
        _check_steps(rate, integ["dt"], source, "control.record_rate")


def _check_actuators(cfg, source):
    tc, vc = cfg["thrusters"], cfg["vscmg"]
    period = _per(1.0, cfg["control"]["rate"])
    if tc["enabled"] and tc["pwm"] and tc["min_impulse_bit"] > tc["max_thrust"] * period:
        raise ScenarioError(
            f"{source}: thrusters.min_impulse_bit = {tc['min_impulse_bit']} N s "
            f"exceeds max_thrust * control period"
        )
    if tc["enabled"]:
        for key in ("open_delay", "close_delay"):
            if tc[key] >= period:
                raise ScenarioError(
                    f"{source}: thrusters.{key} = {tc[key]:g} s must be shorter than the "
                    f"control period {period:g} s (1 / control.rate)"
                )
        if tc["min_on_time"] > period:
            raise ScenarioError(
                f"{source}: thrusters.min_on_time = {tc['min_on_time']:g} s must be at most "
                f"the control period {period:g} s (1 / control.rate)"
            )
    if vc["enabled"] and vc["layout"] == "table" and not cfg["vscmg_unit"]:
        raise ScenarioError(f"{source}: vscmg.layout = 'table' needs [[vscmg_unit]] rows")
    K = 4 if vc["layout"] == "pyramid" else len(cfg["vscmg_unit"])
    if vc["enabled"] and len(vc["initial_gimbal_deg"]) not in (0, 1, K):
        raise ScenarioError(
            f"{source}: vscmg.initial_gimbal_deg has {len(vc['initial_gimbal_deg'])} values: "
            f"give {K} values (one per unit) or one for all"
        )
    if tc["enabled"] and tc["layout"] == "table" and not cfg["thruster"]:
        raise ScenarioError(f"{source}: thrusters.layout = 'table' needs [[thruster]] rows")
    wc = cfg["wheels"]
    if wc["enabled"] and wc["layout"] == "table" and not cfg["wheel"]:
        raise ScenarioError(f"{source}: wheels.layout = 'table' needs [[wheel]] rows")
    W = {"pyramid": 4, "orthogonal": 3}.get(wc["layout"], len(cfg["wheel"]))
    if wc["enabled"] and len(wc["initial_speed_rpm"]) not in (0, 1, W):
        raise ScenarioError(
            f"{source}: wheels.initial_speed_rpm has {len(wc['initial_speed_rpm'])} values: "
            f"give {W} values (one per wheel) or one for all"
        )
    if wc["enabled"] and wc["desaturation_stop"] >= wc["desaturation_start"]:
        raise ScenarioError(
            f"{source}: wheels.desaturation_stop = {wc['desaturation_stop']} must be below "
            f"desaturation_start = {wc['desaturation_start']}"
        )
    unused = [
        ("thruster", cfg["thruster"], tc["layout"] == "table", "thrusters.layout = 'table'"),
        ("vscmg_unit", cfg["vscmg_unit"], vc["layout"] == "table", "vscmg.layout = 'table'"),
        ("wheel", cfg["wheel"], wc["layout"] == "table", "wheels.layout = 'table'"),
        ("dh", cfg["dh"], cfg["arm"]["model"] == "dh", "arm.model = 'dh'"),
        (
            "waypoint",
            cfg["waypoint"],
            cfg["trajectory"]["type"] == "waypoints",
            "trajectory.type = 'waypoints'",
        ),
    ]
    for name, rows, used, needs in unused:
        if rows and not used:
            raise ScenarioError(
                f"{source}: [[{name}]] rows are given but not used: they need {needs}"
            )
    if cfg["arm"]["model"] == "dh" and not cfg["dh"]:
        raise ScenarioError(f"{source}: arm.model = 'dh' needs a [[dh]] table")
    if cfg["trajectory"]["type"] == "waypoints" and len(cfg["waypoint"]) < 2:
        raise ScenarioError(
            f"{source}: trajectory.type = 'waypoints' needs at least two [[waypoint]] rows"
        )


#: what only an arm uses: sections whose keys a scenario without an arm (``arm.model =
#: "none"``) must leave at their defaults, and the ``[arm]`` keys but ``model``
_ARM_ONLY_SECTIONS = ("arm", "trajectory", "arm_controller")
_ARM_ONLY_PLANT = ("link_mass_error", "payload_mass_error")


def _check_armless(cfg, source):
    """``arm.model = "none"`` (a closed loop without an arm): a key that asks for what only
    an arm does (an end-effector trajectory, an arm law, joints, a payload, a requirement on
    an arm metric) is refused, naming every such key; one left at its default is accepted
    (it asks for nothing)."""
    if cfg["arm"]["model"] != "none":
        return
    given = []
    for sec in _ARM_ONLY_SECTIONS:
        for key, f in SCHEMA[sec].fields.items():
            if (sec, key) != ("arm", "model") and cfg[sec][key] != f.default:
                given.append(f"{sec}.{key}")
    given += [f"plant.{k}" for k in _ARM_ONLY_PLANT if cfg["plant"][k]]
    req = SCHEMA["requirements"].fields
    given += [
        f"requirements.{m}"
        for m in ARM_METRICS
        if cfg["requirements"].get(m) not in (None, req[m].default)
    ]
    if cfg["waypoint"]:
        given.append("[[waypoint]]")
    if given:
        raise ScenarioError(
            f"{source}: arm.model = 'none' (a base without an arm) but the scenario sets what "
            f"only an arm uses: {', '.join(given)} (remove them: without an arm there is no "
            "end-effector trajectory, arm law, joint, payload or end-effector metric)"
        )


#: the [base] keys a base read from a URDF link (``base.urdf``) takes from the file
_BASE_FROM_URDF = ("mass", "com", "inertia")
#: the [arm] keys a URDF that holds the base and the arm decides (the joint origins)
_MOUNT_FROM_URDF = ("mount_xyz", "mount_rpy_deg")


def _set_keys(cfg, section, keys):
    """``section.key`` of the ``keys`` whose values in ``cfg`` differ from the schema's
    defaults (given by the user)."""
    fields = SCHEMA[section].fields
    return [f"{section}.{k}" for k in keys if cfg[section][k] != fields[k].default]


def _check_urdf_base(cfg, source):
    """``base.urdf``: the base's mass, CoM and inertia come from the file, so giving them too
    is refused, naming the keys; an arm from the same file hangs from the base's link
    (``arm.root_link`` = ``base.link``) where the file's joint origins put it (a mount given
    too is refused)."""
    b, a = cfg["base"], cfg["arm"]
    if not b["urdf"]:
        if b["link"]:
            raise ScenarioError(f"{source}: base.link = {b['link']!r} needs base.urdf (the file)")
        return
    given = _set_keys(cfg, "base", _BASE_FROM_URDF)
    if given:
        raise ScenarioError(
            f"{source}: base.urdf gives the base's mass, centre of mass and inertia; "
            f"{', '.join(given)} must then stay unset (give one or the other)"
        )
    if a["model"] == b["urdf"]:
        if a["root_link"] != b["link"] or not b["link"]:
            raise ScenarioError(
                f"{source}: the arm comes from the base's URDF (arm.model = base.urdf): set "
                f"arm.root_link to the base's link, base.link = {b['link']!r} (and name it)"
            )
        given = _set_keys(cfg, "arm", _MOUNT_FROM_URDF)
        if given:
            raise ScenarioError(
                f"{source}: the arm hangs from the base's link in its URDF, placed by the "
                f"file's joint origins; {', '.join(given)} must then stay unset (edit the file)"
            )


def _check_extra_arms(cfg, source):
    """``[[extra_arm]]``: each has a name, unique among the arms, and needs a first arm;
    ``[[extra_arm_waypoint]]`` rows name an arm whose task is 'waypoints' (two rows at least
    each, times increasing)."""
    arms = cfg.get("extra_arm", [])
    rows = cfg.get("extra_arm_waypoint", [])
    if (arms or rows) and cfg["arm"]["model"] == "none":
        raise ScenarioError(
            f"{source}: extra_arm[0]: a second arm needs a first one (arm.model = 'none')"
        )
    seen = {}
    for i, a in enumerate(arms):
        if a["name"] in seen:
            raise ScenarioError(
                f"{source}: extra_arm[{i}].name = {a['name']!r} is already the name of "
                f"extra_arm[{seen[a['name']]}] (each arm needs its own name)"
            )
        seen[a["name"]] = i
        if a["model"] == "dh":
            raise ScenarioError(
                f"{source}: extra_arm[{i}].model = 'dh': an extra arm is 'iiwa' or a URDF file"
            )
        if cfg["base"]["urdf"] and a["model"] == cfg["base"]["urdf"]:
            fields = SCHEMA["extra_arm"].fields
            given = [f"extra_arm[{i}].{k}" for k in _MOUNT_FROM_URDF if a[k] != fields[k].default]
            if given or not a["root_link"]:
                raise ScenarioError(
                    f"{source}: extra_arm[{i}] comes from the base's URDF (model = base.urdf): "
                    "it hangs from its root_link, a link moved by a joint below base.link, "
                    "placed by the file's joint origins; "
                    + (f"{', '.join(given)} must then stay unset" if given else "set root_link")
                )
    for i, w in enumerate(rows):
        if w["arm"] not in seen:
            raise ScenarioError(
                f"{source}: extra_arm_waypoint[{i}].arm = {w['arm']!r} is not the name of an "
                f"extra arm{did_you_mean(w['arm'], list(seen))}"
            )
    for i, a in enumerate(arms):
        times = [w["time"] for w in rows if w["arm"] == a["name"]]
        if a["task"] == "waypoints" and len(times) < 2:
            raise ScenarioError(
                f"{source}: extra_arm[{i}].task = 'waypoints' needs at least two "
                f"[[extra_arm_waypoint]] rows with arm = {a['name']!r}"
            )
        if times and a["task"] != "waypoints":
            raise ScenarioError(
                f"{source}: [[extra_arm_waypoint]] rows name the arm {a['name']!r} but "
                f"extra_arm[{i}].task = {a['task']!r} (they need task = 'waypoints')"
            )
        if any(b <= x for x, b in itertools.pairwise(times)):
            raise ScenarioError(
                f"{source}: [[extra_arm_waypoint]] of arm {a['name']!r}: times must increase "
                "strictly"
            )


def _check_faults(cfg, source):
    faults = cfg["faults"]
    if faults and cfg["scenario"]["kind"] != "closed_loop":
        raise ScenarioError(
            f"{source}: faults[0]: thruster faults apply to closed-loop runs only "
            f"(scenario.kind = {cfg['scenario']['kind']!r})"
        )
    if faults and not cfg["thrusters"]["enabled"]:
        raise ScenarioError(
            f"{source}: faults[0]: thruster faults need thrusters (thrusters.enabled = false)"
        )
    tc = cfg["thrusters"]
    n = N_THRUSTERS if tc["layout"] == "paper" else len(cfg["thruster"])
    for i, f in enumerate(faults):
        if f["thruster"] >= n:
            raise ScenarioError(
                f"{source}: faults[{i}].thruster = {f['thruster']} is out of range "
                f"(the thruster set has {n} thrusters: 0..{n - 1})"
            )
        if f["kind"] != "degraded" and f["scale"] != 1.0:
            raise ScenarioError(
                f"{source}: faults[{i}].scale = {f['scale']} applies to degraded faults only "
                f"(kind = {f['kind']!r}; leave scale at 1.0)"
            )


def _check_outputs(cfg, source):
    out = cfg["outputs"]
    fmt = [f.strip() for f in out["formats"].split(",") if f.strip()]
    bad = [f for f in fmt if f not in _PLOT_FORMATS]
    if bad:
        raise ScenarioError(
            f"{source}: outputs.formats: unknown format {bad[0]!r}"
            f"{did_you_mean(bad[0], _PLOT_FORMATS)} (png, pdf)"
        )
    if out["plots"] and not fmt:
        raise ScenarioError(
            f"{source}: outputs.formats is empty: give png, pdf or both (or outputs.plots = false)"
        )


def cross_checks(cfg: dict, source: str) -> None:
    """Check the constraints between keys of a validated scenario (module docstring).

    Parameters
    ----------
    cfg : dict, a scenario resolved by :func:`~dqspace.scenarios.spec.config.validate`
        against :data:`~dqspace.scenarios.spec.schema.SCHEMA`
    source : str, named in the messages (the file, with its overrides)

    Raises
    ------
    ScenarioError naming ``source`` and the keys: timing that is not a whole number of
    ticks or steps, actuator settings that contradict each other, tables given but
    unused, device axes far from unit length or orthogonality
    (:func:`~dqspace.scenarios.spec.physical.check_device_axes`, which normalises the
    nearly-unit ones in ``cfg`` with a warning), faults a run cannot apply, unknown plot
    formats, keys only an arm uses in a scenario without one (``arm.model = "none"``), base
    keys given with ``base.urdf``.
    """
    if cfg["scenario"]["kind"] != "open_loop":  # closed_loop, capture
        _check_closed_loop_timing(cfg, source)
        _check_actuators(cfg, source)
        check_device_axes(cfg, source)  # nearly-unit VSCMG axes normalised, with a warning
        _check_armless(cfg, source)
        _check_urdf_base(cfg, source)
        _check_extra_arms(cfg, source)
        capture_checks(cfg, source)  # scenario.kind = "capture": [target], [capture]
    else:
        _check_open_loop_timing(cfg, source)
        if cfg["orbit"]["enabled"]:
            raise ScenarioError(
                f"{source}: orbit.enabled applies to closed-loop runs only "
                f"(scenario.kind = {cfg['scenario']['kind']!r})"
            )
    _check_faults(cfg, source)
    _check_outputs(cfg, source)
    band = cfg["sensors"]["gyro_bias_instability_band"]
    if not band[0] < band[1]:
        raise ScenarioError(
            f"{source}: sensors.gyro_bias_instability_band = {list(band)} must be "
            "(tau_lo, tau_hi) [s] with tau_lo < tau_hi"
        )
