"""Way-point pose trajectories: poses joined by ScLERP with a quintic time scaling.

Between consecutive way-points ``q_i`` (at ``t_i``) and ``q_{i+1}``, the pose moves along
the constant screw from one to the other::

    q(t) = q_i o screw_exp(s(t) x_i),    x_i = screw_log(q_i* o q_{i+1})

with ``s`` the quintic rest-to-rest scaling of ``(t - t_i) / (t_{i+1} - t_i)``.  Along a
screw motion the body twist is constant in direction: the reference's body twist is
``2 s'(t) x_i`` and its body acceleration ``2 s''(t) x_i`` (``d/dt q = 1/2 q o w``, see
``docs/conventions.md``), both zero at every way-point.  Before the first time the first
pose is held, after the last the last.  Of ``q_{i+1}`` and ``-q_{i+1}`` (the same pose), the
one nearer ``q_i`` is used: the shorter screw.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..dq import dq_conj, dq_from_rpy_deg, dq_mul, dq_screw_exp, dq_screw_log
from ..dq.checks import check_unit_dq
from .trajectories import PoseReference, quintic_time_scaling

__all__ = ["Waypoints", "BaseSlew"]


class Waypoints:
    """A pose trajectory through way-points (see the module docstring).

    Parameters
    ----------
    poses : (N, 8) unit dual quaternions, N >= 2
    times : (N,) strictly increasing times [s]

    Call ``traj(t) -> PoseReference``.
    """

    def __init__(self, poses: ArrayLike, times: ArrayLike) -> None:
        P = np.array(poses, dtype=float)
        T = np.array(times, dtype=float)
        if P.ndim != 2 or P.shape[1] != 8 or P.shape[0] < 2:
            raise ValueError(f"poses must be (N, 8) with N >= 2, got shape {P.shape}")
        if T.shape != (P.shape[0],):
            raise ValueError(f"times must be ({P.shape[0]},), one per pose, got {T.shape}")
        if not (np.all(np.isfinite(P)) and np.all(np.isfinite(T))):
            raise ValueError("poses and times must be finite")
        if np.any(np.diff(T) <= 0):
            raise ValueError(f"times must increase strictly, got {T.tolist()}")
        check_unit_dq(P, "poses")
        for i in range(1, len(P)):  # the shorter screw
            if P[i, :4] @ P[i - 1, :4] < 0:
                P[i] = -P[i]
        self.poses, self.times = P, T
        self.logs = np.array(
            [dq_screw_log(dq_mul(dq_conj(a), b)) for a, b in zip(P, P[1:], strict=False)]
        )

    @classmethod
    def from_positions(
        cls, positions: ArrayLike, orientations_rpy_deg: ArrayLike, times: ArrayLike
    ) -> Waypoints:
        """From (N, 3) positions [m] and (N, 3) roll-pitch-yaw angles [deg]."""
        p = np.asarray(positions, dtype=float)
        r = np.asarray(orientations_rpy_deg, dtype=float)
        if p.shape != r.shape or p.ndim != 2 or p.shape[1] != 3:
            raise ValueError(
                f"positions and orientations_rpy_deg must both be (N, 3), got {p.shape}, {r.shape}"
            )
        return cls(np.array([dq_from_rpy_deg(a, b) for a, b in zip(r, p, strict=True)]), times)

    def __call__(self, t: float) -> PoseReference:
        P, T, A = self.sample(np.array([float(t)]))
        return PoseReference(P[0], T[0], A[0])

    def sample(self, times: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(poses (m, 8), twists (m, 6), accs (m, 6))`` at the times (m,) [s]: the segment
        of each time, its quintic scaling and the screw of the module docstring."""
        t = np.asarray(times, dtype=float).reshape(-1)
        T = self.times
        i = np.clip(np.searchsorted(T, t, side="right") - 1, 0, len(T) - 2)
        d = T[i + 1] - T[i]
        s, ds, dds = quintic_time_scaling((t - T[i]) / d)  # clipped to [0, 1]: holds outside
        x = self.logs[i]
        pose = dq_mul(self.poses[i], dq_screw_exp(s[:, None] * x))
        twist = (2.0 * ds / d)[:, None] * x
        acc = (2.0 * dds / (d * d))[:, None] * x
        before, after = t <= T[0], t >= T[-1]
        pose[before], pose[after] = self.poses[0], self.poses[-1]
        twist[before | after] = 0.0
        acc[before | after] = 0.0
        return pose, twist, acc


class BaseSlew(Waypoints):
    """The base's reference for a slew: hold ``start_pose``, move to ``end_pose`` along the
    screw between them over ``duration`` seconds from ``start_time``, then hold."""

    def __init__(
        self, start_pose: ArrayLike, end_pose: ArrayLike, start_time: float, duration: float
    ) -> None:
        if not (np.isfinite(duration) and duration > 0):
            raise ValueError(f"duration must be positive and finite, got {duration}")
        super().__init__([start_pose, end_pose], [start_time, start_time + duration])
