"""The relative navigation of the target in a capture scenario (``[target_navigation]``).

The sensor gives the target's pose in the servicer's navigation frame, the frame of the
base's held reference (the base holds it during the approach), so the estimate does not
depend on the servicer's state: it is computed before the run, causally (the estimate at a
tick uses the samples delivered by then), along the target's true torque-free motion, and
tabulated at the ticks for the approach's reference
(:class:`~dqspace.scenarios.sim.capture.FixtureTrack`).  The grasp then happens where the
target truly is, with the estimate's error in the misalignment.  The sensor and the filter
are :mod:`dqspace.control.target_navigation`'s; ``docs/capture.md`` describes them.

Random numbers: three generators spawned from ``scenario.seed`` (``spawn_key = (17, i)``:
the attitude noise, the position noise, the initial estimate's error), apart from the flight
software's sensors' and the devices', so a Monte Carlo run stays reproducible and turning
this section on or off draws nothing elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...control.target_navigation import (
    TargetNavigationFilter,
    TargetPoseSensor,
    estimate_motion,
    initial_estimate,
)
from ...dq import (
    adjoint_matrix,
    dq_mul,
    quat_conj,
    quat_mul,
    rotation_matrix_from_dq,
    translation_from_dq,
)
from ..spec.schema_target_nav import TARGET_NAV_METRICS

__all__ = [
    "TargetEstimate",
    "target_estimate",
    "estimate_errors",
    "navigation_metrics",
    "navigation_series",
    "navigation_recorder",
    "NAV_SERIES",
]

#: first element of the spawn key of this section's generators
SPAWN_KEY = 17
#: RK4 steps of the filter's mean per control period (the truth takes ten: at a few deg/s
#: over 10 ms one step's error is ~1e-16 relative)
FILTER_SUBSTEPS = 1

#: the series a navigating capture records (its spec entry: shape, unit, labels, doc)
NAV_SERIES = {
    "target_nav_error": (
        (4,),
        "m, rad, rad/s, m/s",
        ("position", "attitude", "rate", "velocity"),
        "the target's estimate's errors: fixture position, attitude angle, body rate, fixture "
        "velocity (NaN after the grasp)",
    )
}


@dataclass(frozen=True)
class TargetEstimate:
    """The estimate of the target's motion at the ticks ``k period`` up to the grasp:
    ``q`` (N, 8) poses and ``v`` (N, 6) body twists (a trajectory's names), ``errors``
    (N, 4) their errors (:func:`estimate_errors`), ``filters`` the filter at each tick
    (:class:`~dqspace.control.target_navigation.TargetNavigationFilter`, its
    covariances), ``sensor`` the pose sensor."""

    q: np.ndarray
    v: np.ndarray
    errors: np.ndarray
    filters: list
    sensor: TargetPoseSensor


def target_estimate(cfg, target, motion, period) -> TargetEstimate | None:
    """The estimate of ``target``'s true ``motion`` (a trajectory at the ticks) by the
    ``[target_navigation]`` of ``cfg``; None when it is disabled (perfect knowledge)."""
    n = cfg["target_navigation"]
    if not n["enabled"]:
        return None
    seed = cfg["scenario"]["seed"]
    rng = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(SPAWN_KEY, i)))
           for i in range(3)]  # fmt: skip
    att, pos = np.radians(n["attitude_noise_deg"]), n["position_noise"]
    sensor = TargetPoseSensor(rng[0], rng[1], rate=n["rate"], attitude_noise=att,
                              position_noise=pos, latency=n["latency"])  # fmt: skip
    sd_rot = np.radians([n["initial_attitude_error_deg"]] * 3 + [n["initial_rate_error_deg_s"]] * 3)
    sd_tr = np.array([n["initial_position_error"]] * 3 + [n["initial_velocity_error"]] * 3)
    err_rot = sd_rot * rng[2].standard_normal(6)
    err_tr = sd_tr * rng[2].standard_normal(6)
    pose0, twist0 = initial_estimate(target, motion.q[0], motion.v[0], err_rot, err_tr)
    nav = TargetNavigationFilter(
        target, pose0, twist0, np.diag(sd_rot**2), np.diag(sd_tr**2),
        attitude_sigma=att, position_sigma=pos,
        angular_accel_psd=n["angular_accel_psd"], accel_psd=n["accel_psd"],
    )  # fmt: skip
    P, X, filters = estimate_motion(nav, sensor, motion.q, period, FILTER_SUBSTEPS)
    errors = estimate_errors(target, P, X, motion.q, motion.v)
    return TargetEstimate(P, X, errors, filters, sensor)


def estimate_errors(target, poses_est, twists_est, poses, twists) -> np.ndarray:
    """(N, 4) the estimate's errors at N rows: the fixture's position [m], the target's
    attitude [rad], its body rate [rad/s] and the fixture's inertial velocity [m/s]."""
    out = np.empty((len(poses), 4))
    Ad = adjoint_matrix(target.fixture)
    rows = zip(poses_est, twists_est, poses, twists, strict=True)
    for k, (pe, xe, p, x) in enumerate(rows):
        Fe, F = dq_mul(pe, target.fixture), dq_mul(p, target.fixture)
        e = quat_mul(quat_conj(pe[:4]), p[:4])
        ve = rotation_matrix_from_dq(Fe) @ (Ad @ xe)[3:]
        v = rotation_matrix_from_dq(F) @ (Ad @ x)[3:]
        out[k] = (
            np.linalg.norm(translation_from_dq(Fe) - translation_from_dq(F)),
            2.0 * np.arctan2(np.linalg.norm(e[1:]), abs(e[0])),
            np.linalg.norm(xe[:3] - x[:3]),
            np.linalg.norm(ve - v),
        )
    return out


def navigation_metrics(est, period, window_start, grasp_tick) -> dict:
    """The metrics of ``TARGET_NAV_METRICS``: the estimate's errors at the grasp (the tick
    ``grasp_tick``) and their rms over the ticks from ``window_start`` [s] (the end of the
    approach: synchronised) to the grasp; all zero with perfect knowledge (``est`` None)."""
    if est is None:
        return dict.fromkeys(TARGET_NAV_METRICS, 0.0)
    e = est.errors[: grasp_tick + 1]
    sync = e[np.arange(len(e)) * period >= window_start - 1e-9]
    return {
        "target_nav_pos_err_at_grasp": float(e[-1, 0]),
        "target_nav_att_err_at_grasp": float(np.degrees(e[-1, 1])),
        "target_nav_rate_err_at_grasp": float(e[-1, 2]),
        "target_nav_vel_err_at_grasp": float(e[-1, 3]),
        "target_nav_pos_err_rms": float(np.sqrt(np.mean(sync[:, 0] ** 2))),
        "target_nav_att_err_rms": float(np.degrees(np.sqrt(np.mean(sync[:, 1] ** 2)))),
    }


def navigation_series(est) -> dict:
    """The spec entries a capture adds for its estimate (:data:`NAV_SERIES`; none with
    perfect knowledge, so such a run records what it did before the section)."""
    return {} if est is None else dict(NAV_SERIES)


class _NavigationRows:
    """A recorder passing rows on to ``rec`` with the estimate's errors added (the row of
    the tick ``round(t / period)``, NaN past the grasp: ``grasp_tick``, set by the capture
    when it grasps, and past the table)."""

    def __init__(self, rec, errors, period):
        self.rec, self.manifest, self.errors, self.period = rec, rec.manifest, errors, period
        self.grasp_tick = None

    def add_rows(self, m, **blocks):
        k = np.round(np.asarray(blocks["t"][:m]) / self.period).astype(int)
        e = np.full((m, 4), np.nan)
        end = len(self.errors) if self.grasp_tick is None else self.grasp_tick + 1
        inside = k < min(end, len(self.errors))
        e[inside] = self.errors[k[inside]]
        self.rec.add_rows(m, **blocks, target_nav_error=e)


def navigation_recorder(rec, est, period):
    """``rec``, recording :data:`NAV_SERIES` too when the capture navigates (``est``)."""
    return rec if est is None else _NavigationRows(rec, est.errors, period)
