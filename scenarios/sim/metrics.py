"""Figures of merit of a closed-loop run (used by the CLI, the README report and sweeps),
and its degradations: ticks where an actuator could not deliver what was asked.

Degradations (:func:`degradations`, recorded by the runner in ``manifest["degraded"]``
and as events):

- **steering saturation**: the VSCMG steering law's torque error ``|vscmg_torque_err|``
  exceeds :data:`STEERING_TOL_ABS` + :data:`STEERING_TOL_REL` ``|vscmg_torque_cmd|``
  (gimbal-rate or wheel-acceleration limits, the singular set); nominal steering leaves
  errors of ~1e-12 N m;
- **allocation best effort**: the thrust allocator could not meet the demand
  (``alloc_status`` best effort or solver error), e.g. every thruster failed or the
  thrust bounds are too small;
- **motor limits**: the plant clipped a VSCMG gimbal or wheel motor (torque, rate or
  speed limit of ``[vscmg]``) or a reaction-wheel motor during a period
  (``gimbal_limited``, ``vscmg_spin_limited``, ``rw_limited``).

Saturation counts (:func:`summarize`): ticks where the allocation put a thruster at its
maximum thrust (``thrust_saturated``), where the plant's limiter clipped a gimbal, a VSCMG
wheel or a reaction wheel in the period before the tick, where an arm joint met its limit,
and where the steering or the wheel distribution fell short.
"""

import numpy as np

from ..spec.schema import SCHEMA

__all__ = [
    "summarize",
    "degradations",
    "steering_saturated",
    "alloc_best_effort",
    "motors_limited",
    "METRICS",
    "DEFAULT_TRANSIENT",
    "run_transient",
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

#: name -> (unit, description)
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
}


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
    and NaN otherwise (``min_det_GGt`` without VSCMGs).
    """
    if transient is None:
        transient = run_transient(res)
    t = res.t
    out = {}
    out["base_pos_err_max"] = float(np.abs(res["base_pos_err"]).max())
    out["base_att_err_max"] = float(np.degrees(np.linalg.norm(res["base_att_err"], axis=1)).max())
    late = t >= transient
    if late.any():
        e = np.linalg.norm(res["ee_err"][late], axis=1)
        out["ee_rms"] = float(np.sqrt(np.mean(e**2)))
        out["ee_max"] = float(e.max())
    else:  # no sample after the transient: not measured (NaN), never 0
        out["ee_rms"] = out["ee_max"] = float("nan")
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
    for name, series in (
        ("thrust_saturated_ticks", "thrust_saturated"),
        ("gimbal_limited_ticks", "gimbal_limited"),
        ("vscmg_spin_limited_ticks", "vscmg_spin_limited"),
        ("rw_limited_ticks", "rw_limited"),
    ):
        out[name] = float(_any_ticks(res, series).sum())
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


def _report(t, mask, peak, event, what, peak_name, unit):
    if not mask.any():
        return [], []
    eps = _episodes(mask)
    first = t[eps[0][0]]
    msg = (
        f"{what} on {int(mask.sum())} of {len(t)} control ticks, from t = {first:.3f} s "
        f"({len(eps)} episode{'s' * (len(eps) > 1)}"
    )
    if peak is not None:
        msg += f"; {peak_name} up to {peak[mask].max():.4g} {unit}"
    events = []
    for a, b in eps[:_MAX_EPISODES]:
        ev = {"t": float(t[a]), "event": event, "until": float(t[b]), "ticks": int(b - a + 1)}
        if peak is not None:
            ev[peak_name] = float(peak[a : b + 1].max())
        events.append(ev)
    if len(eps) > _MAX_EPISODES:
        events.append(
            {"t": float(t[eps[_MAX_EPISODES][0]]), "event": f"{event}: further episodes not listed"}
        )
    return [msg + ")"], events


def degradations(res):
    """``(messages, events)`` of a closed-loop Results: one line per kind of degradation
    (empty when none, see the module docstring) and one event per episode."""
    t = res.t
    msgs, events = [], []
    err = np.linalg.norm(res["vscmg_torque_err"], axis=1) if "vscmg_torque_err" in res else None
    for m, e in (
        _report(
            t,
            steering_saturated(res),
            err,
            "steering saturated",
            "VSCMG steering saturated (torque not delivered)",
            "torque_error",
            "N m",
        ),
        _report(
            t,
            alloc_best_effort(res),
            None,
            "allocation best effort",
            "thruster allocation could not meet the force demand (best effort)",
            "",
            "",
        ),
        _report(
            t,
            motors_limited(res),
            None,
            "motor limited",
            "the plant clipped a VSCMG or reaction-wheel motor (torque, rate or speed limit)",
            "",
            "",
        ),
    ):
        msgs += m
        events += e
    return msgs, events
