"""Reference trajectories: task-space poses with their twists and accelerations.

A pose trajectory is any callable ``trajectory(t) -> PoseReference`` (the
:class:`PoseTrajectory` protocol); a joint trajectory is any callable
``trajectory(t) -> JointReference``.  Conventions (``docs/conventions.md``):

* ``pose`` (8,) is the unit dual quaternion ``q^_AD`` of the desired frame D
  relative to the trajectory's reference frame A (the inertial frame for a
  base, the base frame for an end-effector);
* ``twist`` (6,) is D's body twist ``[w, v]`` expressed in D (``d/dt q^_AD =
  1/2 q^_AD o twist``) [rad/s, m/s];
* ``acc`` (6,) is its time derivative ``d/dt [w, v]`` (the components in D
  differentiated) [rad/s^2, m/s^2].

Provided here: :class:`ConstantPose` (hold a pose), :class:`Lemniscate` (the
3-D lemniscate of the paper, eq. 51) and :class:`ScrewMotion` (point-to-point
ScLERP with a quintic time scaling).
"""

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from ..dq import (
    dq_conj,
    dq_from_quat_translation,
    dq_mul,
    dq_screw_exp,
    dq_screw_log,
    rotation_matrix_from_quat,
)
from ..dq.checks import as_float_array, check_unit_dq, check_unit_quat

__all__ = [
    "sample_trajectory",
    "PoseReference",
    "JointReference",
    "PoseTrajectory",
    "JointTrajectory",
    "ConstantPose",
    "Lemniscate",
    "ScrewMotion",
    "quintic_time_scaling",
    "LEMNISCATE_ORIENTATION",
]


@dataclass(frozen=True)
class PoseReference:
    """A desired pose with its body twist and acceleration at one instant.

    Attributes
    ----------
    pose : (8,) unit dual quaternion ``q^_AD`` of the desired frame D in the reference frame A
    twist : (6,) body twist ``[w, v]`` of D in D coordinates [rad/s, m/s]
    acc : (6,) ``d/dt twist`` (components in D differentiated) [rad/s^2, m/s^2]
    """

    pose: np.ndarray
    twist: np.ndarray = field(default_factory=lambda: np.zeros(6))
    acc: np.ndarray = field(default_factory=lambda: np.zeros(6))

    def __post_init__(self):
        pose = np.array(self.pose, float)
        if pose.shape != (8,):
            raise ValueError(f"pose must have shape (8,), got {pose.shape}")
        object.__setattr__(self, "pose", check_unit_dq(pose, "pose"))
        for name in ("twist", "acc"):
            x = np.array(getattr(self, name), float)
            if x.shape != (6,):
                raise ValueError(f"{name} must have shape (6,), got {x.shape}")
            object.__setattr__(self, name, as_float_array(x, name, (6,)))


@dataclass(frozen=True)
class JointReference:
    """Desired joint positions, rates and accelerations at one instant.

    Attributes
    ----------
    q : (n,) positions [rad or m]
    v : (n,) rates [rad/s or m/s]
    a : (n,) accelerations [rad/s^2 or m/s^2]
    """

    q: np.ndarray
    v: np.ndarray
    a: np.ndarray

    def __post_init__(self):
        q = np.array(self.q, float)
        if q.ndim != 1:
            raise ValueError(f"q must be a vector, got shape {q.shape}")
        object.__setattr__(self, "q", as_float_array(q, "q", q.shape))
        for name in ("v", "a"):
            x = np.array(getattr(self, name), float)
            if x.shape != q.shape:
                raise ValueError(f"{name} must have shape {q.shape} like q, got {x.shape}")
            object.__setattr__(self, name, as_float_array(x, name, q.shape))


class PoseTrajectory(Protocol):
    """Anything callable as ``trajectory(t) -> PoseReference`` (t in [s]).

    A trajectory may also have ``sample(times) -> (poses (m, 8), twists (m, 6), accs (m, 6))``,
    the references at many times at once (:func:`sample_trajectory` uses it)."""

    def __call__(self, t: float) -> PoseReference: ...


def sample_trajectory(
    trajectory: PoseTrajectory, times: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The references of a pose trajectory at the times (m,) [s]: ``(poses (m, 8), twists
    (m, 6), accelerations (m, 6))``, from its vectorised ``sample`` method when it has one
    (every trajectory of dqspace), else from one call per time."""
    times = np.asarray(times, dtype=float).reshape(-1)
    if hasattr(trajectory, "sample"):
        P, T, A = trajectory.sample(times)
        return np.asarray(P, float), np.asarray(T, float), np.asarray(A, float)
    m = times.shape[0]
    P, T, A = np.empty((m, 8)), np.empty((m, 6)), np.empty((m, 6))
    for i, t in enumerate(times):
        ref = trajectory(float(t))
        P[i], T[i], A[i] = ref.pose, ref.twist, ref.acc
    return P, T, A


def _first(sampled):
    """The :class:`PoseReference` of the first row of ``sample``'s arrays."""
    P, T, A = sampled
    return PoseReference(P[0], T[0], A[0])


class JointTrajectory(Protocol):
    """Anything callable as ``trajectory(t) -> JointReference`` (t in [s])."""

    def __call__(self, t: float) -> JointReference: ...


@dataclass(frozen=True)
class ConstantPose:
    """Hold one pose: zero twist and acceleration (station keeping).

    Attributes
    ----------
    pose : (8,) unit dual quaternion
    """

    pose: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "pose", check_unit_dq(np.array(self.pose, float), "pose"))

    def __call__(self, t: float) -> PoseReference:
        return PoseReference(self.pose)

    def sample(
        self, times: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(poses, twists, accs)`` at the times (m,) (see :func:`sample_trajectory`)."""
        m = np.asarray(times, dtype=float).reshape(-1).shape[0]
        return np.tile(self.pose, (m, 1)), np.zeros((m, 6)), np.zeros((m, 6))


def quintic_time_scaling(tau: float) -> tuple[float, float, float]:
    """Quintic rest-to-rest scaling ``s = 10 tau^3 - 15 tau^4 + 6 tau^5`` on [0, 1].

    ``s`` goes from 0 to 1; ``ds/dtau`` and ``d2s/dtau2`` vanish at both ends
    (rest to rest, no acceleration jump).  tau is clipped to [0, 1].

    Parameters
    ----------
    tau : array_like, normalised time

    Returns
    -------
    s, ds, dds : arrays like tau, the scaling and its first two derivatives in tau
    """
    x = np.clip(np.asarray(tau, float), 0.0, 1.0)
    s = x**3 * (10.0 - 15.0 * x + 6.0 * x * x)
    ds = 30.0 * x**2 * (1.0 - x) ** 2
    dds = 60.0 * x * (1.0 - x) * (1.0 - 2.0 * x)
    return s, ds, dds


#: Default constant orientation of the lemniscate reference, ``Ry(-60 deg)``: the
#: tool axis (z) points back over the base and 30 deg up, ``(-cos 30, 0, sin 30)``
#: in the base frame.  The paper does not give one; the curve passes 0.30 m from
#: the iiwa's shoulder, and with ``|theta_4| <= 120`` deg the wrist centre cannot come
#: closer than 0.41 m to it, so the tool must point roughly back toward the
#: shoulder (within ~35 deg of -x) for the whole curve to be reachable within the
#: joint limits (``docs/control.md``).
LEMNISCATE_ORIENTATION = np.array([np.cos(np.pi / 6), 0.0, -np.sin(np.pi / 6), 0.0])


@dataclass(frozen=True)
class Lemniscate:
    """The 3-D lemniscate of the paper's closed-loop example (eq. 51).

    ``x = r [1 + cos(zeta t + theta_m)] + x0``, ``y = r sin(zeta t + theta_m) + y0``,
    ``z = 2 r sin(zeta t / 2 + theta_m / 2) + z0``, with a constant orientation.
    The defaults are the paper's (Sec. 5.2): the curve lies in the base frame,
    starts at ``(x0 + 2 r, y0, z0) = (0.5, 0, 0.7)`` m and closes after
    ``4 pi / zeta`` s.

    Attributes
    ----------
    r : float, size [m]
    zeta : float, angular rate [rad/s]
    theta_m : float, phase [rad]
    x0, y0, z0 : float, offset [m]
    orientation : (4,) unit quaternion of the desired frame in the reference frame
        (default :data:`LEMNISCATE_ORIENTATION`)
    """

    r: float = 0.1
    zeta: float = 1.0
    theta_m: float = 0.0
    x0: float = 0.3
    y0: float = 0.0
    z0: float = 0.7
    orientation: np.ndarray = field(default_factory=lambda: LEMNISCATE_ORIENTATION.copy())

    def __post_init__(self):
        for name in ("r", "zeta", "theta_m", "x0", "y0", "z0"):
            val = getattr(self, name)
            if not np.isfinite(val):
                raise ValueError(f"{name} must be finite, got {val}")
        q = check_unit_quat(np.array(self.orientation, float), "orientation")
        object.__setattr__(self, "orientation", q)

    def _phase(self, t):
        return self.zeta * np.asarray(t, float) + self.theta_m

    def position(self, t: float) -> NDArray[np.float64]:
        """Position (..., 3) [m] at times t (...)."""
        p, r = self._phase(t), self.r
        return np.stack(
            [
                r * (1.0 + np.cos(p)) + self.x0,
                r * np.sin(p) + self.y0,
                2.0 * r * np.sin(0.5 * p) + self.z0,
            ],
            axis=-1,
        )

    def velocity(self, t: float) -> NDArray[np.float64]:
        """Velocity (..., 3) [m/s], the analytic time derivative of :meth:`position`."""
        p, rz = self._phase(t), self.r * self.zeta
        return np.stack([-rz * np.sin(p), rz * np.cos(p), rz * np.cos(0.5 * p)], axis=-1)

    def acceleration(self, t: float) -> NDArray[np.float64]:
        """Acceleration (..., 3) [m/s^2], the analytic second derivative of :meth:`position`."""
        p, rz2 = self._phase(t), self.r * self.zeta**2
        return np.stack([-rz2 * np.cos(p), -rz2 * np.sin(p), -0.5 * rz2 * np.sin(0.5 * p)], axis=-1)

    def __call__(self, t: float) -> PoseReference:
        """:class:`PoseReference` at time t [s]: constant orientation, body-frame twist."""
        return _first(self.sample(np.array([float(t)])))

    def sample(
        self, times: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(poses, twists, accs)`` at the times (m,) (see :func:`sample_trajectory`)."""
        t = np.asarray(times, dtype=float).reshape(-1)
        R = rotation_matrix_from_quat(self.orientation)
        zero = np.zeros((t.shape[0], 3))
        q = np.broadcast_to(self.orientation, (t.shape[0], 4))
        return (
            dq_from_quat_translation(q, self.position(t)),
            np.concatenate([zero, self.velocity(t) @ R], axis=-1),
            np.concatenate([zero, self.acceleration(t) @ R], axis=-1),
        )


@dataclass(frozen=True)
class ScrewMotion:
    """Point-to-point screw motion (ScLERP) with a quintic time scaling.

    ``pose(t) = start o exp(s(tau) X)`` with ``X = screw_log(start* o end)`` (the
    shorter screw: the sign of ``start* o end`` with non-negative scalar part),
    ``tau = (t - t0) / duration`` and ``s`` :func:`quintic_time_scaling`; this is
    ``sclerp(start, end, s)``.  Because ``X`` commutes with ``exp(s X)``, the body
    twist is ``2 ds/dt X`` and its derivative ``2 d2s/dt2 X``: the body moves along
    one fixed screw, starting and stopping at rest.  Before t0 the pose is
    ``start``, after ``t0 + duration`` it is ``end``.

    Attributes
    ----------
    start, end : (8,) unit dual quaternions
    duration : float [s], > 0
    t0 : float, start time [s]
    """

    start: np.ndarray
    end: np.ndarray
    duration: float
    t0: float = 0.0

    def __post_init__(self):
        a = check_unit_dq(np.array(self.start, float), "start")
        b = check_unit_dq(np.array(self.end, float), "end")
        if a.shape != (8,) or b.shape != (8,):
            raise ValueError(f"start and end must have shape (8,), got {a.shape}, {b.shape}")
        if not (np.isfinite(self.duration) and self.duration > 0):
            raise ValueError(f"duration must be positive and finite, got {self.duration}")
        if not np.isfinite(self.t0):
            raise ValueError(f"t0 must be finite, got {self.t0}")
        d = dq_mul(dq_conj(a), b)
        if d[0] < 0.0:
            d = -d
        object.__setattr__(self, "start", a)
        object.__setattr__(self, "end", b)
        object.__setattr__(self, "_screw", dq_screw_log(d))

    def __call__(self, t: float) -> PoseReference:
        """:class:`PoseReference` at time t [s]."""
        return _first(self.sample(np.array([float(t)])))

    def sample(
        self, times: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(poses, twists, accs)`` at the times (m,) (see :func:`sample_trajectory`)."""
        t = np.asarray(times, dtype=float).reshape(-1)
        s, ds, dds = quintic_time_scaling((t - self.t0) / self.duration)
        X = self._screw
        T = self.duration
        return (
            dq_mul(self.start, dq_screw_exp(s[:, None] * X)),
            (2.0 * ds / T)[:, None] * X,
            (2.0 * dds / T**2)[:, None] * X,
        )
