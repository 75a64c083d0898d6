"""Relative navigation of a capture target: a pose sensor and a filter of its pose and twist.

:class:`TargetPoseSensor` -- a camera or lidar pose solution of a target
(:class:`~dqspace.multibody.Target`): its attitude ``q_IT`` and the position of its frame's
origin, sampled at ``rate`` [Hz] (first sample at t = 0) and delivered ``latency`` [s]
later.  It is two of the sensors of :mod:`~dqspace.control.sensors` on the same schedule,
each drawing from its own generator: a :class:`~dqspace.control.sensors.StarTracker` on
the target's attitude (``q_meas = q_IT o exp(1/2 n)``, ``n ~ N(0, sigma_att^2 I3)`` in the
target's axes) and a :class:`~dqspace.control.sensors.RelativeNavigation` on its position
(``r + N(0, sigma_pos^2 I3)``; its velocity channel is left at zero noise and unused).

:class:`TargetNavigationFilter` -- an extended Kalman filter of the target's pose and twist
with its torque-free dynamics (its mass properties known), split as the base's navigation
is (:mod:`~dqspace.control.navigation`):

* **rotation**: a multiplicative EKF of ``[dtheta, dw]``, ``q_IT = q^ o exp(1/2 dtheta)``
  (body axes) and ``w = w^ + dw`` (body rate).  Its state has the layout of the attitude
  MEKF's (:data:`~dqspace.control.navigation.MEKFState`, the rate estimate in the slot of
  the gyro bias), so the star tracker's update is the MEKF's own
  (:func:`~dqspace.control.navigation.mekf_update_kernel`: ``H = [I 0]``, Joseph form,
  the correction folded in multiplicatively).  Between measurements the mean follows the
  torque-free motion of the target's model (:func:`~dqspace.multibody.free_motion`, the
  Lie-group RK4) and the covariance the linearised error dynamics

  ``dtheta' = -[w^ x] dtheta + dw``,
  ``dw' = J^-1 ([(J w^) x] - [w^ x] J) dw + n_a``

  (``J`` the inertia about the centre of mass, ``n_a`` white angular acceleration of
  spectral density ``angular_accel_psd`` standing for what the model leaves out),
  discretised exactly over each step for ``F`` held at its start (Van Loan:
  ``Phi = exp(F dt)``, ``Q_d = int Phi G Q G^T Phi^T``);
* **translation**: the centre of mass ``[r_c, v_c]`` in the navigation frame, a straight
  line (no force): the base's :class:`~dqspace.control.navigation.TranslationKF`
  kernels with a zero acceleration and white acceleration noise ``accel_psd``; its
  measurement is the measured origin carried to the centre of mass with the measured
  attitude, ``r_meas + R(q_meas) c``, whose variance is bounded per axis by
  ``sigma_pos^2 + sigma_att^2 |c|^2`` (used as the filter's; the small correlation with
  the attitude's noise is left out, as the two filters are independent).

The pose and twist estimate recombine both: ``r^ = r^_c - R(q^) c`` and the body twist
``[w^, R(q^)^T v^_c - w^ x c]``.  :func:`estimate_motion` runs sensor and filter along a
tabulated true motion and handles the latency exactly: the filter stays at the newest
sample's time and its estimate is predicted from there to each tick.

``docs/capture.md`` describes its use in a capture scenario.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import (
    dq_from_quat_translation,
    quat_conj,
    quat_exp,
    quat_mul,
    rotation_matrix_from_quat,
    translation_from_dq,
)
from ..multibody import Target, free_motion
from .navigation import (
    MEKFParams,
    MEKFState,
    TranslationKFParams,
    TranslationKFState,
    mekf_update_kernel,
    translation_predict_kernel,
    translation_update_kernel,
)
from .sensors import ARCSEC, RelativeNavigation, StarTracker

__all__ = [
    "TargetPoseMeasurement",
    "TargetPoseSensor",
    "TargetNavigationFilter",
    "estimate_motion",
    "initial_estimate",
    "rotation_error_jacobian",
]

#: the smallest variance [rad^2, m^2] the filter takes for a noise-free sensor (its
#: measurement update needs a positive innovation covariance)
VARIANCE_FLOOR = 1e-18


@dataclass(frozen=True)
class TargetPoseMeasurement:
    """A pose sample: ``q`` (4,) the measured attitude ``q_IT``, ``r`` (3,) the measured
    position of the target frame's origin [m], ``t`` [s] the time it was taken, ``index``
    its number (0 for the sample at t = 0)."""

    q: NDArray[np.float64]
    r: NDArray[np.float64]
    t: float
    index: int


class TargetPoseSensor:
    """The target's pose measured by a camera or lidar pose solution (module docstring).

    Parameters
    ----------
    rng_attitude, rng_position : numpy.random.Generator, one per noise (seeded by the
        caller, as every sensor's)
    rate : float [Hz]; latency : float [s]
    attitude_noise : float [rad], 1 sigma per target axis
    position_noise : float [m], 1 sigma per axis
    """

    def __init__(
        self,
        rng_attitude: np.random.Generator,
        rng_position: np.random.Generator,
        *,
        rate: float = 10.0,
        attitude_noise: float = np.radians(0.2),
        position_noise: float = 2e-3,
        latency: float = 0.0,
    ) -> None:
        self.attitude = StarTracker(
            rng_attitude, rate=rate, noise_arcsec=float(attitude_noise) / ARCSEC, latency=latency
        )
        self.position = RelativeNavigation(
            rng_position, rate=rate, position_noise=position_noise, velocity_noise=0.0,
            latency=latency,
        )  # fmt: skip
        self.period, self.latency = self.attitude.period, self.attitude.latency
        self.attitude_noise = float(attitude_noise)
        self.position_noise = self.position.position_noise

    def measure(self, t: float, pose: ArrayLike) -> TargetPoseMeasurement | None:
        """The newest sample delivered by ``t`` [s] (None before the first), the true pose
        ``pose`` (8,) given at (at least) every sample time."""
        pose = np.asarray(pose, dtype=float)
        q = self.attitude.measure(t, pose[:4])
        p = self.position.measure(t, translation_from_dq(pose), np.zeros(3))
        if q is None:
            return None
        n = int(self.attitude.schedule.delivered[0]) - 1
        return TargetPoseMeasurement(q, p[0], n * self.period, n)


def rotation_error_jacobian(inertia: ArrayLike, w: ArrayLike) -> NDArray[np.float64]:
    """The (6, 6) ``F`` of the rotational error ``[dtheta, dw]`` of a torque-free body
    turning at ``w`` (3,) [rad/s] (body axes), ``inertia`` (3, 3) about its centre of mass:
    ``[[-[w x], I], [0, J^-1 ([(J w) x] - [w x] J)]]`` (module docstring)."""
    J = np.asarray(inertia, dtype=float)
    w = np.asarray(w, dtype=float)
    F = np.zeros((6, 6))
    F[:3, :3] = -_skew(w)
    F[:3, 3:] = np.eye(3)
    F[3:, 3:] = np.linalg.solve(J, _skew(J @ w) - _skew(w) @ J)
    return F


class TargetNavigationFilter:
    """The target's pose and twist from pose samples (module docstring).

    Parameters
    ----------
    target : Target (its mass properties are the filter's model)
    pose0 : (8,) the initial pose estimate; twist0 : (6,) the initial body twist estimate
    P0_rotation : (6, 6) covariance of ``[dtheta, dw]`` [rad^2, (rad/s)^2]
    P0_translation : (6, 6) covariance of the centre of mass ``[r_c, v_c]`` [m^2, (m/s)^2]
    attitude_sigma : [rad], position_sigma : [m] the sensor's noise (1 sigma per axis)
    angular_accel_psd : [(rad/s^2)^2/Hz]; accel_psd : [(m/s^2)^2/Hz] process noise

    ``pose``, ``twist`` are the estimate; ``rotation`` (:data:`~dqspace.control.navigation.
    MEKFState`: ``q``, the rate in ``bias``, ``P``, ``nis``) and ``translation``
    (:data:`~dqspace.control.navigation.TranslationKFState`) the two filters' arrays.
    """

    def __init__(
        self,
        target: Target,
        pose0: ArrayLike,
        twist0: ArrayLike,
        P0_rotation: ArrayLike,
        P0_translation: ArrayLike,
        *,
        attitude_sigma: float,
        position_sigma: float,
        angular_accel_psd: float = 0.0,
        accel_psd: float = 0.0,
    ) -> None:
        if not isinstance(target, Target):
            raise ValueError(f"target must be a Target, got {type(target).__name__}")
        for name, x in (
            ("attitude_sigma", attitude_sigma),
            ("position_sigma", position_sigma),
            ("angular_accel_psd", angular_accel_psd),
            ("accel_psd", accel_psd),
        ):
            if not (np.isfinite(x) and x >= 0.0):
                raise ValueError(f"{name} must be finite and >= 0, got {x!r}")
        self.target = target
        c = target.com
        var_att = max(float(attitude_sigma) ** 2, VARIANCE_FLOOR)
        var_pos = max(float(position_sigma) ** 2 + var_att * float(c @ c), VARIANCE_FLOOR)
        self.angular_accel_psd = float(angular_accel_psd)
        self.rotation_params = MEKFParams(0.0, 0.0, np.full(3, var_att))
        self.translation_params = TranslationKFParams(
            float(accel_psd), np.array([var_pos] * 3 + [1.0] * 3)
        )
        pose0 = np.asarray(pose0, dtype=float)
        twist0 = np.asarray(twist0, dtype=float)
        if pose0.shape != (8,) or twist0.shape != (6,):
            raise ValueError(
                f"pose0 must be (8,) and twist0 (6,), got {pose0.shape}, {twist0.shape}"
            )
        q = pose0[:4] / np.linalg.norm(pose0[:4])
        R = rotation_matrix_from_quat(q)
        x = np.r_[translation_from_dq(pose0) + R @ c, R @ (twist0[3:] + np.cross(twist0[:3], c))]
        self.rotation = MEKFState(
            q, twist0[:3].copy(), _covariance(P0_rotation, "P0_rotation"), np.full(1, np.nan)
        )
        self.translation = TranslationKFState(
            x, _covariance(P0_translation, "P0_translation"), np.full(1, np.nan)
        )

    @property
    def pose(self) -> NDArray[np.float64]:
        """(8,) the pose estimate ``q^_{I,T}``."""
        q = self.rotation.q
        r = self.translation.x[:3] - rotation_matrix_from_quat(q) @ self.target.com
        return dq_from_quat_translation(q, r)

    @property
    def twist(self) -> NDArray[np.float64]:
        """(6,) the body twist estimate ``[w, v]`` of the target frame's origin."""
        R = rotation_matrix_from_quat(self.rotation.q)
        return self.target.twist(self.rotation.bias, R.T @ self.translation.x[3:])

    def copy(self) -> TargetNavigationFilter:
        """An independent copy (its own state arrays; the target and parameters shared)."""
        new = copy.copy(self)
        new.rotation = MEKFState(*(a.copy() for a in self.rotation))
        new.translation = TranslationKFState(*(a.copy() for a in self.translation))
        return new

    def propagate(self, dt: float, substeps: int = 1) -> None:
        """Advance by ``dt`` [s]: the mean by the torque-free motion (``substeps`` RK4
        steps), the covariances by the linearised dynamics (module docstring)."""
        s, n = self.rotation, 6
        F = rotation_error_jacobian(self.target.inertia, s.bias)
        GQG = np.zeros((n, n))
        GQG[3:, 3:] = self.angular_accel_psd * np.eye(3)
        B = _expm_small(np.block([[-F, GQG], [np.zeros((n, n)), F.T]]) * dt)  # Van Loan
        Phi = B[n:, n:].T
        P = Phi @ s.P @ Phi.T + Phi @ B[:n, n:]
        s.P[:] = 0.5 * (P + P.T)
        motion = free_motion(self.target, self.pose, self.twist, dt=dt / substeps, n_steps=substeps)
        pose, twist = motion.q[-1], motion.v[-1]
        s.q[:] = pose[:4] / np.linalg.norm(pose[:4])
        s.bias[:] = twist[:3]
        translation_predict_kernel(self.translation_params, self.translation, np.zeros(3), dt)

    def update(self, q_meas: ArrayLike, r_meas: ArrayLike) -> None:
        """Fold in a pose sample: the measured attitude ``q_IT`` (4,) and origin (3,) [m]."""
        q = np.ascontiguousarray(q_meas, dtype=float)
        r = np.asarray(r_meas, dtype=float)
        mekf_update_kernel(self.rotation_params, self.rotation, q)
        z = np.ascontiguousarray(r + rotation_matrix_from_quat(q) @ self.target.com)
        translation_update_kernel(self.translation_params, self.translation, z)

    def errors(self, pose: ArrayLike, twist: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """The estimate's errors from the true ``pose`` (8,) and body ``twist`` (6,), in the
        filter's error states: ``([dtheta, dw], [dr_c, dv_c])`` (6,) each."""
        pose, twist = np.asarray(pose, dtype=float), np.asarray(twist, dtype=float)
        e = quat_mul(quat_conj(self.rotation.q), pose[:4])
        dtheta = (-2.0 if e[0] < 0 else 2.0) * e[1:]
        R = rotation_matrix_from_quat(pose[:4])
        c = self.target.com
        x = np.r_[translation_from_dq(pose) + R @ c, R @ (twist[3:] + np.cross(twist[:3], c))]
        return np.r_[dtheta, twist[:3] - self.rotation.bias], x - self.translation.x

    def nees(self, pose: ArrayLike, twist: ArrayLike) -> tuple[float, float]:
        """Normalised estimation errors squared ``(rotation, translation)``, 6 degrees of
        freedom each, of the true ``pose`` (8,) and ``twist`` (6,)."""
        a, b = self.errors(pose, twist)
        return (
            float(a @ np.linalg.solve(self.rotation.P, a)),
            float(b @ np.linalg.solve(self.translation.P, b)),
        )


def estimate_motion(
    nav: TargetNavigationFilter,
    sensor: TargetPoseSensor,
    poses: ArrayLike,
    period: float,
    substeps: int = 1,
) -> tuple[NDArray[np.float64], NDArray[np.float64], list[TargetNavigationFilter]]:
    """The estimate at the ticks ``k period`` of a true motion ``poses`` (N, 8).

    At each tick the sensor sees the true pose; a sample delivered then (taken ``latency``
    earlier) is folded into ``nav`` at its own time -- ``nav`` is propagated to the
    sample's time, updated, and the estimate predicted from there to the tick
    (``substeps`` RK4 steps per period).  Causal: the estimate at a tick uses the samples
    delivered by then only.  The sensor's period and latency must be whole numbers of
    ``period``.  ``nav`` is advanced in place (to the newest sample's time).

    Returns
    -------
    poses (N, 8), twists (N, 6) : the estimate at the ticks
    filters : list of N :class:`TargetNavigationFilter`, the estimate at each tick (its
        covariance, for consistency checks)
    """
    poses = np.asarray(poses, dtype=float)
    period = float(period)
    for name, x in (("the sensor's period", sensor.period), ("its latency", sensor.latency)):
        if abs(x / period - round(x / period)) > 1e-9 * max(1.0, x / period):
            raise ValueError(f"{name} ({x:g} s) must be a whole number of periods ({period:g} s)")
    t_nav, newest = 0.0, -1
    out = nav.copy()
    P, X, filters = np.empty((len(poses), 8)), np.empty((len(poses), 6)), []
    for k, pose in enumerate(poses):
        t = k * period
        if k > 0:
            out.propagate(period, substeps)
        m = sensor.measure(t, pose)
        if m is not None and m.index != newest:
            newest = m.index
            for _ in range(int(round((m.t - t_nav) / period))):
                nav.propagate(period, substeps)
            t_nav = m.t
            nav.update(m.q, m.r)
            out = nav.copy()
            for _ in range(int(round((t - t_nav) / period))):
                out.propagate(period, substeps)
        P[k], X[k] = out.pose, out.twist
        filters.append(out.copy())
    return P, X, filters


def initial_estimate(
    target: Target, pose: ArrayLike, twist: ArrayLike, error_rotation, error_translation
):
    """``(pose, twist)`` of an estimate off the true ``pose`` (8,) and ``twist`` (6,) by the
    error states ``[dtheta, dw]`` and ``[dr_c, dv_c]`` (6,) each (the filter's definition:
    :meth:`TargetNavigationFilter.errors` of the result gives them back)."""
    pose, twist = np.asarray(pose, dtype=float), np.asarray(twist, dtype=float)
    a, b = np.asarray(error_rotation, dtype=float), np.asarray(error_translation, dtype=float)
    c = target.com
    R = rotation_matrix_from_quat(pose[:4])
    rc = translation_from_dq(pose) + R @ c - b[:3]
    vc = R @ (twist[3:] + np.cross(twist[:3], c)) - b[3:]
    q = quat_mul(pose[:4], quat_exp(-0.5 * a[:3]))
    Rq = rotation_matrix_from_quat(q)
    return dq_from_quat_translation(q, rc - Rq @ c), target.twist(twist[:3] - a[3:], Rq.T @ vc)


def _expm_small(A, terms=8):
    """``exp(A)`` by its Taylor series after scaling ``A`` to a norm below 1/8, then
    squaring back (a step of the error dynamics has ``|F| dt`` ~ 1e-3: no squaring, and
    the truncation is below 1e-20)."""
    norm = float(np.abs(A).sum(axis=1).max())
    squarings = max(0, int(np.ceil(np.log2(norm * 8.0)))) if norm > 0.125 else 0
    A = A / 2.0**squarings
    out = term = np.eye(A.shape[0])
    for k in range(1, terms + 1):
        term = term @ A / k
        out = out + term
    for _ in range(squarings):
        out = out @ out
    return out


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _covariance(P, name):
    P = np.array(P, dtype=float)
    if P.shape != (6, 6) or not np.all(np.isfinite(P)) or not np.allclose(P, P.T):
        raise ValueError(f"{name} must be a finite symmetric (6, 6) matrix")
    eig = np.linalg.eigvalsh(P)
    if eig.min() < -1e-12 * max(eig.max(), 0.0):  # semi-definite to rounding
        raise ValueError(f"{name} must be positive semi-definite")
    return np.ascontiguousarray(P)
