"""Figures of merit of a closed-loop run (used by the CLI, the README report and sweeps),
and its degradations: ticks where an actuator could not deliver what was asked.

Degradations (:func:`degradations`; the runner records one line per kind in
``manifest["degraded"]``, one entry per kind with its time intervals in
``manifest["degradations"]`` and one event per episode), every kind of :data:`KINDS`:

- **steering saturated**: the VSCMG steering law's torque error ``|vscmg_torque_err|``
  exceeds :data:`STEERING_TOL_ABS` + :data:`STEERING_TOL_REL` ``|vscmg_torque_cmd|``
  (gimbal-rate or wheel-acceleration limits, the singular set); nominal steering leaves
  errors of ~1e-12 N m;
- **allocation best effort**: the thrust allocator could not meet the demand
  (``alloc_status`` best effort or solver error), e.g. every thruster failed or the
  thrust bounds are too small; the message says whether the force or the torque demand
  was unmet, along which axes and by how much at most (:mod:`.shortfall`);
- **thrust at maximum**: the allocation put a thruster at its maximum thrust
  (``thrust_saturated``);
- **wheel torque short**: the reaction-wheel law could not deliver the torque asked
  (``|rw_torque_err|`` above the same tolerance as the steering's);
- **reaction-wheel motor limited**, **gimbal motor limited**, **VSCMG wheel motor
  limited**: the plant clipped a reaction-wheel motor, a VSCMG gimbal or wheel motor
  (torque, rate or speed limit of ``[wheels]``, ``[vscmg]``) during a period
  (``rw_limited``, ``gimbal_limited``, ``vscmg_spin_limited``);
- **arm torque limit**, **arm rate limit**: an arm joint at its torque limit (the law
  asked more: the plant clips it) or at its rate limit (``arm_saturated``, split by the
  limits of ``manifest["system"]["arm"]``; a result without them has one kind, **arm
  joint limit**).

Each names the units involved (``arm joints 2, 4 at their torque limit``) and how long it
held (ticks times the control period).

Saturation counts (:func:`summarize`): ticks where the allocation put a thruster at its
maximum thrust (``thrust_saturated``), where the plant's limiter clipped a gimbal, a VSCMG
wheel or a reaction wheel in the period before the tick, where an arm joint met its limit,
and where the steering or the wheel distribution fell short.
"""

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..spec.requirements import ARM_METRICS
from ..spec.schema import SCHEMA
from ..spec.schema_arms import ARM_METRIC_BASES
from ..spec.schema_capture import CAPTURE_METRICS
from .shortfall import allocation_shortfall, shortfall_words

__all__ = [
    "summarize",
    "degradations",
    "Degradations",
    "KINDS",
    "NO_THRUSTER",
    "Kind",
    "Found",
    "found",
    "steering_saturated",
    "alloc_best_effort",
    "motors_limited",
    "METRICS",
    "DEFAULT_TRANSIENT",
    "run_transient",
    "has_arm",
    "extra_arm_names",
    "ARM_METRICS",
    "ALLOC_STATUS",
    "STEERING_TOL_ABS",
    "STEERING_TOL_REL",
]

#: the allocator status codes recorded in ``alloc_status`` (``AllocationStatus`` order;
#: -1: no thrusters)
ALLOC_STATUS = ("optimal", "inaccurate", "best_effort", "solver_error")
_SHORT = (ALLOC_STATUS.index("best_effort"), ALLOC_STATUS.index("solver_error"))

#: [N m] and [-]: steering torque error above ``ABS + REL * |torque asked|`` is saturation
STEERING_TOL_ABS, STEERING_TOL_REL = 1e-3, 1e-2
_MAX_EPISODES = 20  # events listed per kind of degradation

#: [s] the default start of the end-effector metrics' window (the scenario key
#: ``metrics.transient``)
DEFAULT_TRANSIENT = float(SCHEMA["metrics"].fields["transient"].default)


def _arm_metric_base(name) -> str | None:
    """``ee_max`` for ``ee_max_<arm>`` (an extra arm's metric), else None."""
    for base in ARM_METRIC_BASES:
        if isinstance(name, str) and name.startswith(base + "_") and len(name) > len(base) + 1:
            return base
    return None


class _Metrics(dict):
    """The table of :data:`METRICS`; an extra arm's metric ``ee_rms_<arm>``,
    ``ee_max_<arm>`` (``[[extra_arm]]``) is found in it too (``in``, ``[]``), with the unit
    of ``ee_rms``, ``ee_max``, and so is a capture's (``scenario.kind = "capture"``:
    :data:`~dqspace.scenarios.spec.schema_capture.CAPTURE_METRICS`); iterating gives the
    standard metrics only (what :func:`summarize` gives)."""

    def __missing__(self, name):
        if isinstance(name, str) and name in CAPTURE_METRICS:
            return CAPTURE_METRICS[name]
        base = _arm_metric_base(name)
        if base is None:
            raise KeyError(name)
        unit, doc = dict.__getitem__(self, base)
        return unit, f"arm {name[len(base) + 1 :]}: {doc}"

    def __contains__(self, name):
        return (
            dict.__contains__(self, name)
            or _arm_metric_base(name) is not None
            or (isinstance(name, str) and name in CAPTURE_METRICS)
        )

    def get(self, name, default=None):
        return self[name] if name in self else default


#: name -> (unit, description); an extra arm's ``ee_rms_<arm>``, ``ee_max_<arm>`` as
#: ``ee_rms``, ``ee_max`` (:class:`_Metrics`)
METRICS = {
    "base_pos_err_max": ("m", "largest base position error (any axis), whole run"),
    "base_att_err_max": ("deg", "largest base attitude error angle, whole run"),
    "ee_rms": (
        "m",
        "end-effector position error, RMS over t >= metrics.transient (not measured when "
        "the run ends before)",
    ),
    "ee_max": (
        "m",
        "end-effector position error, max over t >= metrics.transient (not measured when "
        "the run ends before)",
    ),
    "total_impulse": ("N s", "thruster impulse delivered, all thrusters"),
    "peak_gimbal_rate": ("rad/s", "largest gimbal rate"),
    "vscmg_effort": ("rad", "integral of |gimbal rate| summed over the gimbals"),
    "min_det_GGt": ("-", "smallest singularity measure det(G G^T)"),
    "alloc_not_optimal": ("-", "control ticks whose allocation was not optimal"),
    "alloc_best_effort_ticks": (
        "-",
        "control ticks whose thrust allocation could not meet the demand (best effort)",
    ),
    "peak_rw_speed": ("rad/s", "largest reaction-wheel speed (0 without wheels)"),
    "rw_saturated_ticks": (
        "-",
        "control ticks whose reaction-wheel torque error exceeded the tolerance",
    ),
    "arm_saturated_ticks": ("-", "control ticks where an arm joint met its torque or rate limit"),
    "steering_saturated_ticks": (
        "-",
        "control ticks whose VSCMG steering torque error exceeded the tolerance",
    ),
    "thrust_saturated_ticks": (
        "-",
        "control ticks whose allocation put a thruster at its maximum thrust",
    ),
    "gimbal_limited_ticks": (
        "-",
        "control periods in which the plant clipped a gimbal motor (torque or rate limit)",
    ),
    "vscmg_spin_limited_ticks": (
        "-",
        "control periods in which the plant clipped a VSCMG wheel motor (torque or speed)",
    ),
    "rw_limited_ticks": (
        "-",
        "control periods in which the plant clipped a reaction-wheel motor (torque or speed)",
    ),
    "com_err_max": (
        "m",
        "largest system centre-of-mass error (any axis; against the start's centre of mass "
        "carried by the base reference), whole run",
    ),
    "force_cmd_rms": ("N", "commanded base force (the thrusters' demand), RMS of its norm"),
}
METRICS = _Metrics(METRICS)


def _any_ticks(res, name):
    """(N,) bool: ticks where any entry of the recorded flags ``name`` is set (False where
    the series is absent or empty)."""
    x = res[name] if name in res else np.zeros((len(res.t), 0))
    return np.any(x > 0, axis=1) if x.size else np.zeros(len(res.t), bool)


def motors_limited(res):
    """(N,) bool: ticks after a period in which the plant clipped a VSCMG gimbal or wheel
    motor or a reaction-wheel motor."""
    return (
        _any_ticks(res, "gimbal_limited")
        | _any_ticks(res, "vscmg_spin_limited")
        | _any_ticks(res, "rw_limited")
    )


def steering_saturated(res):
    """(N,) bool: ticks whose steering torque error exceeds the tolerance (module doc)."""
    if "vscmg_torque_err" not in res:
        return np.zeros(len(res.t), bool)
    err = np.linalg.norm(res["vscmg_torque_err"], axis=1)
    asked = np.linalg.norm(res["vscmg_torque_cmd"], axis=1) if "vscmg_torque_cmd" in res else 0.0
    return err > STEERING_TOL_ABS + STEERING_TOL_REL * asked


def alloc_best_effort(res):
    """(N,) bool: ticks whose allocation fell short of the demand."""
    if "alloc_status" not in res:
        return np.zeros(len(res.t), bool)
    return np.isin(res["alloc_status"], _SHORT)


def has_arm(res) -> bool:
    """False for a run of a system without an arm (``arm.model = "none"``: its joint series
    ``arm_q`` has 0 columns); its metrics :data:`ARM_METRICS` are then not measured."""
    x = res["arm_q"] if "arm_q" in res else None
    return x is None or np.ndim(x) != 2 or np.shape(x)[1] > 0


def extra_arm_names(res) -> list[str]:
    """The names of a run's extra arms (``[[extra_arm]]``: those with an ``ee_err_<name>``
    series), in order."""
    cols = res.data if isinstance(getattr(res, "data", None), dict) else {}
    return [k[len("ee_err_") :] for k in cols if k.startswith("ee_err_")]


def run_transient(res) -> float:
    """[s] the start of the window of a run's end-effector metrics: its scenario's
    ``metrics.transient`` (``manifest["scenario"]``), else the schema's default (2 s)."""
    sc = res.manifest.get("scenario") if isinstance(res.manifest, dict) else None
    sec = sc.get("metrics") if isinstance(sc, dict) else None
    value = sec.get("transient") if isinstance(sec, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return DEFAULT_TRANSIENT


def summarize(res, transient=None):
    """Metrics (dict name -> float) of a closed-loop Results; see :data:`METRICS`.

    ``transient`` [s]: the end-effector metrics (``ee_rms``, ``ee_max``) are taken over
    ``t >= transient``; default: the run's ``metrics.transient`` (:func:`run_transient`).
    A metric without a sample (those two, for a run that ends before ``transient``) is NaN:
    **not measured**, never 0; a requirement on it is not met either (UNDECIDED).  Metrics
    of a device the run does not have are 0 where :data:`METRICS` says so (``peak_rw_speed``)
    and NaN otherwise (``min_det_GGt`` without VSCMGs); a system without an arm has the
    metrics of :data:`ARM_METRICS` (``ee_rms``, ``ee_max``, ``arm_saturated_ticks``) NaN.
    """
    if transient is None:
        transient = run_transient(res)
    t = res.t
    out = {}
    out["base_pos_err_max"] = float(np.abs(res["base_pos_err"]).max())
    out["base_att_err_max"] = float(np.degrees(np.linalg.norm(res["base_att_err"], axis=1)).max())
    late = t >= transient
    if not has_arm(res):  # no arm: its metrics are not measured (NaN), never 0
        out["ee_rms"] = out["ee_max"] = float("nan")
    elif late.any():
        e = np.linalg.norm(res["ee_err"][late], axis=1)
        out["ee_rms"] = float(np.sqrt(np.mean(e**2)))
        out["ee_max"] = float(e.max())
    else:  # no sample after the transient: not measured (NaN), never 0
        out["ee_rms"] = out["ee_max"] = float("nan")
    for name in extra_arm_names(res):  # [[extra_arm]]: ee_rms_<name>, ee_max_<name>
        if late.any():
            e = np.linalg.norm(res[f"ee_err_{name}"][late], axis=1)
            out[f"ee_rms_{name}"] = float(np.sqrt(np.mean(e**2)))
            out[f"ee_max_{name}"] = float(e.max())
        else:  # no sample after the transient: not measured (NaN), never 0
            out[f"ee_rms_{name}"] = out[f"ee_max_{name}"] = float("nan")
    out["total_impulse"] = float(res["thrust_impulse"].sum()) if "thrust_impulse" in res else 0.0
    gr = res["gimbal_rate"]
    out["peak_gimbal_rate"] = float(np.abs(gr).max()) if gr.size else 0.0
    dt = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    out["vscmg_effort"] = float(np.abs(gr).sum() * dt) if gr.size else 0.0
    det = res["det_GGt"]
    out["min_det_GGt"] = float(np.nanmin(det)) if np.isfinite(det).any() else float("nan")
    out["alloc_not_optimal"] = float(np.sum(res["alloc_status"] > 0))
    out["alloc_best_effort_ticks"] = float(alloc_best_effort(res).sum())
    out["steering_saturated_ticks"] = float(steering_saturated(res).sum())
    rw = res["rw_speed"] if "rw_speed" in res else np.zeros((0, 0))
    out["peak_rw_speed"] = float(np.abs(rw).max()) if rw.size else 0.0
    out["rw_saturated_ticks"] = float(wheels_saturated(res).sum())
    sat = res["arm_saturated"] if "arm_saturated" in res else np.zeros((0, 0))
    out["arm_saturated_ticks"] = float(np.any(sat > 0, axis=1).sum()) if sat.size else 0.0
    if not has_arm(res):
        out["arm_saturated_ticks"] = float("nan")
    for name, series in (
        ("thrust_saturated_ticks", "thrust_saturated"),
        ("gimbal_limited_ticks", "gimbal_limited"),
        ("vscmg_spin_limited_ticks", "vscmg_spin_limited"),
        ("rw_limited_ticks", "rw_limited"),
    ):
        out[name] = float(_any_ticks(res, series).sum())
    if "com_err" in res:  # results recorded before the series: not measured
        out["com_err_max"] = float(np.abs(res["com_err"]).max())
    else:
        out["com_err_max"] = float("nan")
    f = np.linalg.norm(res["wrench_cmd"][:, :3], axis=1)
    out["force_cmd_rms"] = float(np.sqrt(np.mean(f**2)))
    return out


def wheels_saturated(res):
    """(N,) bool: ticks whose wheel torque error exceeds the tolerance (as for the VSCMGs)."""
    if "rw_torque_err" not in res or "rw_speed" not in res or res["rw_speed"].size == 0:
        return np.zeros(len(res.t), bool)
    err = np.linalg.norm(res["rw_torque_err"], axis=1)
    asked = np.linalg.norm(res["vscmg_torque_cmd"], axis=1) if "vscmg_torque_cmd" in res else 0.0
    return err > STEERING_TOL_ABS + STEERING_TOL_REL * asked


def _episodes(mask):
    """``[(first, last), ...]`` index ranges where ``mask`` is True."""
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(np.int8), 0]))
    return list(zip(edges[::2], edges[1::2] - 1, strict=True))


@dataclass(frozen=True)
class Kind:
    """A kind of degradation: ``kind`` (its event name, also the key of figures' hatches),
    ``what`` (what it is, short, as figures name it: ``"VSCMG steering saturated"``), or
    ``unit_word`` (how one of its units is called: ``"thruster"``) and ``limit`` (what
    the units are at, singular and plural: ``("at its torque limit", "at their torque
    limit")``) for a kind that names its units; ``detail`` what a message adds."""

    kind: str
    what: str = ""
    unit_word: str = ""
    limit: tuple = ("", "")
    detail: str = ""


def _at(singular, plural=None):
    return (f"at its {singular}", f"at their {plural or singular}")


#: Every kind of degradation, in the order they are listed (and hatched): the flight
#: software's shortfalls first, then the plant's limits.
KINDS = (
    Kind("steering saturated", "VSCMG steering saturated", detail="torque not delivered"),
    Kind(
        "allocation best effort",
        "thrust allocation short of the demand",
        detail="the allocator could not meet the demand: best effort",
    ),
    Kind("thrust at maximum", "", "thruster", _at("maximum thrust")),
    Kind(
        "wheel torque short",
        "reaction wheels short of the torque asked",
        detail="the wheel law's torque or speed limit",
    ),
    Kind(
        "reaction-wheel motor limited",
        unit_word="reaction wheel",
        limit=_at("motor's torque or speed limit", "motors' torque or speed limit"),
        detail="the plant clipped the motor",
    ),
    Kind(
        "gimbal motor limited",
        unit_word="VSCMG gimbal",
        limit=_at("motor's torque or rate limit", "motors' torque or rate limit"),
        detail="the plant clipped the motor",
    ),
    Kind(
        "VSCMG wheel motor limited",
        unit_word="VSCMG wheel",
        limit=_at("motor's torque or speed limit", "motors' torque or speed limit"),
        detail="the plant clipped the motor",
    ),
    Kind("arm torque limit", unit_word="arm joint", limit=_at("torque limit")),
    Kind("arm rate limit", unit_word="arm joint", limit=_at("rate limit")),
    Kind(  # a result without the arm's limits in its manifest
        "arm joint limit", unit_word="arm joint", limit=_at("torque or rate limit")
    ),
)
_KIND = {k.kind: k for k in KINDS}
#: the event (and kind of degradation) of the last working thruster failing (recorded by
#: the closed loop; the runner lists it first)
NO_THRUSTER = "no working thruster"
_LISTED_UNITS = 4  # units named in a label, then "and n more"
_MAX_INTERVALS = 1000  # intervals kept per kind in manifest["degradations"]


@dataclass(frozen=True)
class Found:
    """One kind of degradation found in a run: its :class:`Kind`, ``mask`` (N,) the ticks
    it holds at, ``units`` the names of the units involved (``()`` for the whole device),
    ``peak`` (N,) a magnitude per tick or None, with ``peak_name`` and ``peak_unit``;
    ``detail`` what its message adds in place of the kind's (``""``: the kind's)."""

    kind: Kind
    mask: NDArray[np.bool_]
    units: tuple = ()
    peak: NDArray[np.float64] | None = None
    peak_name: str = ""
    peak_unit: str = ""
    detail: str = ""

    @property
    def label(self) -> str:
        """What it is, short, naming its units: ``"arm joints 2, 4 at their torque
        limit"``."""
        k = self.kind
        if not k.unit_word:
            return k.what
        n = len(self.units)
        shown = list(self.units[:_LISTED_UNITS])
        names = ", ".join(shown) + (f" and {n - len(shown)} more" if n > len(shown) else "")
        word = k.unit_word + ("s" if n > 1 else "")
        return f"{word} {names} {k.limit[n > 1]}"


def _unit_names(word, n, names=None):
    """Names of n units: their own names where given (``3 (-y)`` for a thruster), else
    numbers from 1 (0 for thrusters, as the thrusters figure numbers them)."""
    first = 0 if word == "thruster" else 1
    out = []
    for i in range(n):
        number = str(i + first)
        name = str(names[i]) if names is not None and i < len(names) else ""
        plain = name.lower().replace("_", "").replace(" ", "")
        plain_name = not name or plain in (f"joint{i + 1}", number)
        out.append(number if plain_name else f"{number} ({name})")
    return out


def _per_unit(res, kind, flags, names=None):
    """A :class:`Found` of ``flags`` (N, units) bool, naming the units that were set."""
    flags = np.asarray(flags, bool).reshape(len(res.t), -1)
    hit = np.flatnonzero(flags.any(axis=0))
    all_names = _unit_names(kind.unit_word, flags.shape[1], names)
    return Found(kind, flags.any(axis=1), tuple(all_names[i] for i in hit))


def _system(res):
    sy = res.manifest.get("system") if isinstance(res.manifest, dict) else None
    return sy if isinstance(sy, dict) else {}


def _arm_limits(res):
    """``(torque_limit, rate_limit)`` (n,) of the manifest's arm, or None (not recorded)."""
    arm = _system(res).get("arm") or {}
    n = res["arm_saturated"].shape[1] if "arm_saturated" in res else 0
    try:
        tau = np.asarray(arm["torque_limit"], float).reshape(-1)
        rate = np.asarray(arm["rate_limit"], float).reshape(-1)
    except (KeyError, TypeError, ValueError):
        return None
    return (tau, rate) if tau.shape == rate.shape == (n,) else None


def _arm_found(res):
    """The arm joints at their torque limit and at their rate limit (one kind each when
    the manifest has the limits, else one kind from ``arm_saturated``)."""
    if "arm_saturated" not in res or res["arm_saturated"].size == 0:
        return []
    sat = res["arm_saturated"] > 0
    names = (_system(res).get("arm") or {}).get("joints")
    limits = _arm_limits(res)
    if limits is None or "arm_tau" not in res or "v" not in res:
        return [_per_unit(res, _KIND["arm joint limit"], sat, names)]
    tau_lim, rate_lim = limits
    n = sat.shape[1]
    torque = sat & (np.abs(res["arm_tau"]) >= tau_lim * (1.0 - 1e-12))
    rate = sat & (np.abs(res["v"][:, 6 : 6 + n]) >= rate_lim)
    other = sat & ~torque & ~rate  # a commanded torque above the limit, clipped in arm_tau
    return [
        _per_unit(res, _KIND["arm torque limit"], torque | other, names),
        _per_unit(res, _KIND["arm rate limit"], rate, names),
    ]


def _alloc_found(res):
    """The allocation's best effort, its message naming what was unmet (force, torque) and
    along which axes (:mod:`.shortfall`) when the result tells."""
    mask = alloc_best_effort(res)
    short = allocation_shortfall(res) if mask.any() else None
    words = shortfall_words(short, mask) if short is not None else ""
    detail = f"the allocator could not meet the {words}: best effort" if words else ""
    return Found(_KIND["allocation best effort"], mask, detail=detail)


def found(res) -> list[Found]:
    """Every kind of degradation of a closed-loop Results that held at some tick, in the
    order of :data:`KINDS` (see the module docstring)."""
    thr = _system(res).get("thrusters") or []
    thr_names = [t.get("name", "") if isinstance(t, dict) else "" for t in thr]
    err = np.linalg.norm(res["vscmg_torque_err"], axis=1) if "vscmg_torque_err" in res else None
    out = [
        Found(_KIND["steering saturated"], steering_saturated(res), (), err, "torque_error", "N m"),
        _alloc_found(res),
    ]
    empty = np.zeros((len(res.t), 0))

    def units(kind, series, names=None):
        return _per_unit(res, _KIND[kind], res[series] > 0 if series in res else empty, names)

    out += [
        units("thrust at maximum", "thrust_saturated", thr_names),
        Found(_KIND["wheel torque short"], wheels_saturated(res)),
        units("reaction-wheel motor limited", "rw_limited"),
        units("gimbal motor limited", "gimbal_limited"),
        units("VSCMG wheel motor limited", "vscmg_spin_limited"),
    ]
    out += _arm_found(res)
    return [f for f in out if f.mask.any()]


def _period(t):
    return float(np.median(np.diff(t))) if len(t) > 1 else 0.0


def _report(t, f):
    """``(message, events, record)`` of one :class:`Found`."""
    mask, peak = f.mask, f.peak
    eps = _episodes(mask)
    period = _period(t)
    duration = float(mask.sum()) * period
    first = float(t[eps[0][0]])
    detail = f" ({f.detail or f.kind.detail})" if f.detail or f.kind.detail else ""
    msg = (
        f"{f.label}{detail} on {int(mask.sum())} of {len(t)} control ticks "
        f"({duration:.3g} s), from t = {first:.3f} s "
        f"({len(eps)} episode{'s' * (len(eps) > 1)}"
    )
    if peak is not None:
        msg += f"; {f.peak_name} up to {peak[mask].max():.4g} {f.peak_unit}"
    events = []
    for a, b in eps[:_MAX_EPISODES]:
        ev = {"t": float(t[a]), "event": f.kind.kind, "until": float(t[b]), "ticks": int(b - a + 1)}
        if peak is not None:
            ev[f.peak_name] = float(peak[a : b + 1].max())
        events.append(ev)
    if len(eps) > _MAX_EPISODES:
        events.append(
            {
                "t": float(t[eps[_MAX_EPISODES][0]]),
                "event": f"{f.kind.kind}: further episodes not listed",
            }
        )
    record = {
        "kind": f.kind.kind,
        "label": f.label,
        "units": list(f.units),
        "ticks": int(mask.sum()),
        "duration": float(f"{duration:.12g}"),
        "first": first,
        "episodes": len(eps),
        # [t of the first tick, t of the last tick + one period): the time it held
        "intervals": [[float(t[a]), float(t[b]) + period] for a, b in eps[:_MAX_INTERVALS]],
    }
    if peak is not None:
        record[f.peak_name] = float(peak[mask].max())
    return msg + ")", events, record


Degradations = namedtuple("Degradations", ["messages", "events", "table"])


def degradations(res) -> Degradations:
    """The degradations of a closed-loop Results (the module docstring), one per kind that
    held at some tick: ``messages`` (one line each, ``[]`` when none), ``events`` (one per
    episode, at most :data:`_MAX_EPISODES` per kind, ``{"t", "event", "until", "ticks"}``)
    and ``table`` (one dict each: ``kind``, ``label``, ``units``, ``ticks``, ``duration``
    [s], ``first`` [s], ``episodes`` and ``intervals`` ``[[t0, t1], ...]`` [s], the first
    :data:`_MAX_INTERVALS`), what the runner records in ``manifest["degraded"]``,
    ``manifest["events"]`` and ``manifest["degradations"]``."""
    msgs, events, table = [], [], []
    for f in found(res):
        m, e, r = _report(res.t, f)
        msgs.append(m)
        events += e
        table.append(r)
    return Degradations(msgs, events, table)
