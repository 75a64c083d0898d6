"""Figures of merit of a closed-loop run (used by the CLI, the README report and sweeps)."""

import numpy as np

__all__ = ["summarize", "METRICS"]

#: name -> (unit, description)
METRICS = {
    "base_pos_err_max": ("m", "largest base position error (any axis), whole run"),
    "base_att_err_max": ("deg", "largest base attitude error angle, whole run"),
    "ee_rms": ("m", "end-effector position error, RMS over t >= transient"),
    "ee_max": ("m", "end-effector position error, max over t >= transient"),
    "total_impulse": ("N s", "thruster impulse delivered, all thrusters"),
    "peak_gimbal_rate": ("rad/s", "largest gimbal rate"),
    "vscmg_effort": ("rad", "integral of |gimbal rate| summed over the gimbals"),
    "min_det_GGt": ("-", "smallest singularity measure det(G G^T)"),
    "alloc_not_optimal": ("-", "control ticks whose allocation was not optimal"),
}


def summarize(res, transient=2.0):
    """Metrics (dict name -> float) of a closed-loop Results; see :data:`METRICS`."""
    t = res.t
    out = {}
    out["base_pos_err_max"] = float(np.abs(res["base_pos_err"]).max())
    out["base_att_err_max"] = float(np.degrees(np.linalg.norm(res["base_att_err"], axis=1)).max())
    late = t >= transient
    e = np.linalg.norm(res["ee_err"][late], axis=1) if late.any() else np.zeros(1)
    out["ee_rms"] = float(np.sqrt(np.mean(e**2)))
    out["ee_max"] = float(e.max())
    out["total_impulse"] = float(res["thrust_impulse"].sum()) if "thrust_impulse" in res else 0.0
    gr = res["gimbal_rate"]
    out["peak_gimbal_rate"] = float(np.abs(gr).max()) if gr.size else 0.0
    dt = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    out["vscmg_effort"] = float(np.abs(gr).sum() * dt) if gr.size else 0.0
    det = res["det_GGt"]
    out["min_det_GGt"] = float(np.nanmin(det)) if np.isfinite(det).any() else float("nan")
    out["alloc_not_optimal"] = float(np.sum(res["alloc_status"] > 0))
    return out
