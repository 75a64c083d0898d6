"""Navigation filters: a multiplicative EKF for the attitude and gyro bias, a Kalman filter for
the base's translation.

:class:`AttitudeMEKF` (the multiplicative extended Kalman filter of Lefferts, Markley and
Shuster): the estimate ``q^`` (q_IB) and ``b^`` (gyro bias), the error state
``x = [dtheta, db]`` with ``q = q^ o exp(1/2 dtheta)`` (error in the body frame) and
``db = b - b^``.  Gyro model ``w_meas = w + b + n_v``, ``b' = n_u`` (spectral densities
``arw^2``, ``rrw^2``, the :class:`~dqspace.control.sensors.Gyro` parameters).

* propagate over dt with ``w^ = w_meas - b^``: ``q^ <- q^ o exp(1/2 w^ dt)``;
  ``F = [[-[w^ x], -I], [0, 0]]``, ``Phi = exp(F dt)`` to second order, and
  ``Q = [[arw^2 dt + rrw^2 dt^3 / 3, -rrw^2 dt^2 / 2], [-rrw^2 dt^2 / 2, rrw^2 dt]]`` per axis;
* update with a star-tracker quaternion: residual ``z = 2 vec(q^* o q_meas)`` (short way),
  ``H = [I 0]``, ``R = diag(sigma^2)``; Joseph-form covariance; the correction is folded
  into ``q^`` multiplicatively and ``dtheta`` reset to zero.

``nees(q, b)`` and the last update's ``nis`` test consistency: over seeded runs their means lie
within chi-square bounds (6 and 3 degrees of freedom).

:class:`TranslationKF`: ``x = [r, v]`` in the inertial frame, ``r' = v``, ``v' = a_cmd + w``
with white acceleration noise of spectral density ``accel_psd``; measurements of r (and v).

Compiled kernels (the one implementation; the classes wrap them, and compiled code, e.g.
:func:`~dqspace.control.navigation_tick.navigation_kernel`, calls them directly); they
trust their inputs (float64, C-contiguous), update the state arrays in place:

* ``mekf_propagate_kernel(params, state, w_meas, dt)`` and ``mekf_update_kernel(params,
  state, q_meas)``, ``params`` a :data:`MEKFParams`, ``state`` a :data:`MEKFState`;
* ``translation_predict_kernel(params, state, a_cmd, dt)`` and
  ``translation_update_kernel(params, state, z)`` (z (3,) position or (6,) position and
  velocity), ``params`` a :data:`TranslationKFParams`, ``state`` a
  :data:`TranslationKFState`.

Both updates share one measurement update for ``H = [I_m 0]`` (the first m error states
measured): ``S = P_mm + R``, ``K = P H^T S^-1`` (a Cholesky solve), Joseph form.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from ..dq import quat_conj, quat_mul, quat_normalize
from ..dq.kernels import q_exp, q_mul

__all__ = [
    "AttitudeMEKF",
    "TranslationKF",
    "MEKFParams",
    "MEKFState",
    "TranslationKFParams",
    "TranslationKFState",
    "mekf_propagate_kernel",
    "mekf_update_kernel",
    "translation_predict_kernel",
    "translation_update_kernel",
]

#: :class:`AttitudeMEKF`'s constants: ``arw`` [rad/sqrt(s)], ``rrw`` [rad/s/sqrt(s)], ``R``
#: (3,) the star tracker's noise variance per body axis [rad^2].
MEKFParams = namedtuple("MEKFParams", ["arw", "rrw", "R"])
#: :class:`AttitudeMEKF`'s estimate: ``q`` (4,) q_IB, ``bias`` (3,) [rad/s], ``P`` (6, 6)
#: the covariance of ``[dtheta, db]``, ``nis`` (1,) the last update's NIS (nan before one).
MEKFState = namedtuple("MEKFState", ["q", "bias", "P", "nis"])
#: :class:`TranslationKF`'s constants: ``accel_psd`` [(m/s^2)^2/Hz], ``R`` (6,) the noise
#: variances of a position [m^2] (three) and a velocity [(m/s)^2] (three) measurement.
TranslationKFParams = namedtuple("TranslationKFParams", ["accel_psd", "R"])
#: :class:`TranslationKF`'s estimate: ``x`` (6,) ``[r, v]`` [m, m/s], ``P`` (6, 6), ``nis`` (1,).
TranslationKFState = namedtuple("TranslationKFState", ["x", "P", "nis"])


def _vec_err(q_est, q):
    """2 vec(q_est* o q), short way (the rotation vector for small errors)."""
    e = quat_mul(quat_conj(q_est), q)
    if e[0] < 0:
        e = -e
    return 2.0 * e[1:]


def _cov(P, n, name):
    P = np.array(P, dtype=float)
    if P.shape != (n, n) or not np.all(np.isfinite(P)) or not np.allclose(P, P.T):
        raise ValueError(f"{name} must be a finite symmetric ({n}, {n}) matrix")
    try:
        np.linalg.cholesky(P)
    except np.linalg.LinAlgError:
        raise ValueError(f"{name} must be positive definite") from None
    return P


def _vector(x, n, name):
    a = np.ascontiguousarray(x, dtype=float)
    if a.shape != (n,):
        raise ValueError(f"{name} must be ({n},), got shape {a.shape}")
    return a


# ------------------------------------------------------------------ shared linear algebra


@njit(cache=True)
def _sandwich(A, P, out):
    """``out = A P A^T`` (n, n); ``out`` may not be P."""
    n = P.shape[0]
    AP = np.zeros((n, n))
    for i in range(n):
        for k in range(n):
            a = A[i, k]
            if a != 0.0:
                for j in range(n):
                    AP[i, j] += a * P[k, j]
    for i in range(n):
        for j in range(n):
            acc = 0.0
            for k in range(n):
                acc += AP[i, k] * A[j, k]
            out[i, j] = acc


@njit(cache=True)
def _kalman_update(P, y, R, dx):
    """The measurement update of the first m = len(y) states (``H = [I_m 0]``): residual
    ``y`` (m,), noise variances ``R[:m]``; writes the correction ``dx = K y`` (n,), replaces
    ``P`` (n, n) by ``(I - K H) P (I - K H)^T + K R K^T`` and returns the NIS
    ``y^T S^-1 y``."""
    m, n = y.shape[0], P.shape[0]
    L = np.zeros((m, m))  # S = P_mm + R = L L^T
    for i in range(m):
        for j in range(i + 1):
            acc = P[i, j] + (R[i] if i == j else 0.0)
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            L[i, j] = math.sqrt(acc) if i == j else acc / L[j, j]
    X = np.empty((m, n + 1))  # S^-1 [P[:m, :], y]: K^T (m, n), then S^-1 y
    for i in range(m):
        for c in range(n):
            X[i, c] = P[i, c]
        X[i, n] = y[i]
    for c in range(n + 1):  # L z = b, then L^T x = z
        for i in range(m):
            acc = X[i, c]
            for k in range(i):
                acc -= L[i, k] * X[k, c]
            X[i, c] = acc / L[i, i]
        for i in range(m - 1, -1, -1):
            acc = X[i, c]
            for k in range(i + 1, m):
                acc -= L[k, i] * X[k, c]
            X[i, c] = acc / L[i, i]
    nis = 0.0
    for i in range(m):
        nis += y[i] * X[i, n]
    for c in range(n):  # dx = K y, K = X[:, :n]^T
        acc = 0.0
        for i in range(m):
            acc += X[i, c] * y[i]
        dx[c] = acc
    A = np.eye(n)  # I - K H
    for r in range(n):
        for i in range(m):
            A[r, i] -= X[i, r]
    out = np.empty((n, n))
    _sandwich(A, P, out)
    for r in range(n):
        for c in range(n):
            acc = 0.0
            for i in range(m):
                acc += X[i, r] * R[i] * X[i, c]
            P[r, c] = out[r, c] + acc
    return nis


@njit(cache=True)
def _rotate_step(q, u):
    """``q <- normalize(q o exp(u))`` for a rotation-vector half-angle u (3,)."""
    dq = np.empty(4)
    q_exp(u, dq)
    out = np.empty(4)
    q_mul(q, dq, out)
    norm = math.sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3])
    for j in range(4):
        q[j] = out[j] / norm


# ------------------------------------------------------------------ attitude MEKF


@njit(cache=True)
def mekf_propagate_kernel(p, s, w_meas, dt):
    """Advance the :class:`AttitudeMEKF` state ``s`` by dt [s] with the gyro's rate
    ``w_meas`` (3,) [rad/s] held (module docstring); ``p`` a :data:`MEKFParams`."""
    w = np.empty(3)
    half = np.empty(3)
    for j in range(3):
        w[j] = w_meas[j] - s.bias[j]
        half[j] = 0.5 * w[j] * dt
    _rotate_step(s.q, half)
    F = np.zeros((6, 6))  # [[-[w x], -I], [0, 0]]
    F[0, 1], F[0, 2] = w[2], -w[1]
    F[1, 0], F[1, 2] = -w[2], w[0]
    F[2, 0], F[2, 1] = w[1], -w[0]
    for j in range(3):
        F[j, 3 + j] = -1.0
    Phi = np.eye(6)  # I + F dt + 1/2 F^2 dt^2
    for i in range(6):
        for j in range(6):
            FF = 0.0
            for k in range(6):
                FF += F[i, k] * F[k, j]
            Phi[i, j] = Phi[i, j] + F[i, j] * dt + 0.5 * FF * dt * dt
    qv, qu = p.arw * p.arw, p.rrw * p.rrw
    P = np.empty((6, 6))
    _sandwich(Phi, s.P, P)
    for j in range(3):
        P[j, j] += qv * dt + qu * dt**3.0 / 3.0
        P[j, 3 + j] += -qu * dt**2.0 / 2.0
        P[3 + j, j] += -qu * dt**2.0 / 2.0
        P[3 + j, 3 + j] += qu * dt
    s.P[:] = P


@njit(cache=True)
def mekf_update_kernel(p, s, q_meas):
    """Fold the star tracker's attitude ``q_meas`` (4,) into the :class:`AttitudeMEKF`
    state ``s`` (module docstring); ``p`` a :data:`MEKFParams`."""
    conj = np.empty(4)
    conj[0] = s.q[0]
    for j in range(1, 4):
        conj[j] = -s.q[j]
    e = np.empty(4)
    q_mul(conj, q_meas, e)
    sign = -2.0 if e[0] < 0 else 2.0
    z = np.empty(3)
    for j in range(3):
        z[j] = sign * e[1 + j]
    dx = np.empty(6)
    s.nis[0] = _kalman_update(s.P, z, p.R, dx)
    half = np.empty(3)
    for j in range(3):
        half[j] = 0.5 * dx[j]
        s.bias[j] = s.bias[j] + dx[3 + j]
    _rotate_step(s.q, half)


class AttitudeMEKF:
    """Attitude and gyro-bias estimator (module docstring; :func:`mekf_propagate_kernel`,
    :func:`mekf_update_kernel`).

    Parameters
    ----------
    q0 : (4,) initial attitude estimate q_IB
    bias0 : (3,) initial bias estimate [rad/s]
    P0 : (6, 6) initial error covariance ([rad^2], [(rad/s)^2])
    arw : angle random walk [rad/sqrt(s)]; rrw : rate random walk [rad/s/sqrt(s)]
    star_tracker_sigma : (3,) star-tracker noise per body axis [rad]

    ``q``, ``bias``, ``P`` and ``nis`` are the estimate now (copies); ``params`` and
    ``state`` the kernels' arrays.
    """

    def __init__(
        self,
        q0: ArrayLike,
        bias0: ArrayLike,
        P0: ArrayLike,
        *,
        arw: float,
        rrw: float,
        star_tracker_sigma: ArrayLike,
    ) -> None:
        q = np.array(quat_normalize(np.asarray(q0, dtype=float)), dtype=float)
        bias = np.array(bias0, dtype=float)
        if bias.shape != (3,):
            raise ValueError(f"bias0 must be (3,), got {bias.shape}")
        P = _cov(P0, 6, "P0")
        if not (arw >= 0 and rrw >= 0):
            raise ValueError("arw and rrw must be >= 0")
        self.arw, self.rrw = float(arw), float(rrw)
        s = np.broadcast_to(np.asarray(star_tracker_sigma, dtype=float), (3,))
        if not np.all(s > 0):
            raise ValueError("star_tracker_sigma must be positive")
        self.R = np.diag(s**2)
        self.params = MEKFParams(self.arw, self.rrw, np.ascontiguousarray(s**2))
        self.state = MEKFState(q, bias, P, np.full(1, np.nan))

    q = property(lambda self: self.state.q.copy(), doc="(4,) the attitude estimate q_IB")
    bias = property(lambda self: self.state.bias.copy(), doc="(3,) the bias estimate [rad/s]")
    P = property(lambda self: self.state.P.copy(), doc="(6, 6) the error covariance")
    nis = property(lambda self: float(self.state.nis[0]), doc="the last update's NIS")

    def propagate(self, w_meas: ArrayLike, dt: float) -> None:
        """Advance by dt [s] with the gyro's measured rate [rad/s] (held over dt)."""
        mekf_propagate_kernel(self.params, self.state, _vector(w_meas, 3, "w_meas"), float(dt))

    def update(self, q_meas: ArrayLike) -> None:
        """Fold in a star-tracker attitude measurement."""
        mekf_update_kernel(self.params, self.state, _vector(q_meas, 4, "q_meas"))

    def nees(self, q_true: ArrayLike, bias_true: ArrayLike) -> float:
        """Normalised estimation error squared of the 6 error states."""
        e = np.r_[_vec_err(self.q, np.asarray(q_true, dtype=float)), bias_true - self.bias]
        return float(e @ np.linalg.solve(self.P, e))


# ------------------------------------------------------------------ translation KF


@njit(cache=True)
def translation_predict_kernel(p, s, a_cmd, dt):
    """Advance the :class:`TranslationKF` state ``s`` by dt [s] with the known acceleration
    ``a_cmd`` (3,) [m/s^2]: ``r += v dt + a dt^2 / 2``, ``v += a dt``, ``P = F P F^T + Q``;
    ``p`` a :data:`TranslationKFParams`."""
    for j in range(3):
        r, v = s.x[j], s.x[3 + j]
        s.x[j] = r + dt * v + 0.5 * dt * dt * a_cmd[j]
        s.x[3 + j] = v + dt * a_cmd[j]
    F = np.eye(6)
    for j in range(3):
        F[j, 3 + j] = dt
    P = np.empty((6, 6))
    _sandwich(F, s.P, P)
    q = p.accel_psd
    for j in range(3):
        P[j, j] += q * (dt**3.0 / 3.0)
        P[j, 3 + j] += q * (dt**2.0 / 2.0)
        P[3 + j, j] += q * (dt**2.0 / 2.0)
        P[3 + j, 3 + j] += q * dt
    s.P[:] = P


@njit(cache=True)
def translation_update_kernel(p, s, z):
    """Fold a position (z (3,) [m]) or position and velocity (z (6,) [m, m/s]) measurement
    into the :class:`TranslationKF` state ``s``; ``p`` a :data:`TranslationKFParams`."""
    m = z.shape[0]
    y = np.empty(m)
    for j in range(m):
        y[j] = z[j] - s.x[j]
    dx = np.empty(6)
    s.nis[0] = _kalman_update(s.P, y, p.R, dx)
    for j in range(6):
        s.x[j] = s.x[j] + dx[j]


class TranslationKF:
    """Kalman filter of the base's position and velocity (module docstring;
    :func:`translation_predict_kernel`, :func:`translation_update_kernel`).

    Parameters
    ----------
    x0 : (6,) initial [r, v]; P0 : (6, 6)
    accel_psd : white-acceleration spectral density [(m/s^2)^2 / Hz]
    position_sigma : [m]; velocity_sigma : [m/s] (used when velocity is measured)

    ``x``, ``P`` and ``nis`` are the estimate now (copies); ``params`` and ``state`` the
    kernels' arrays.
    """

    def __init__(
        self,
        x0: ArrayLike,
        P0: ArrayLike,
        *,
        accel_psd: float,
        position_sigma: float,
        velocity_sigma: float = 1.0,
    ) -> None:
        x = np.array(x0, dtype=float)
        if x.shape != (6,):
            raise ValueError(f"x0 must be (6,) [r, v], got {x.shape}")
        P = _cov(P0, 6, "P0")
        if not accel_psd >= 0 or not position_sigma > 0 or not velocity_sigma > 0:
            raise ValueError("accel_psd must be >= 0, the sigmas > 0")
        self.q = float(accel_psd)
        self.Rp, self.Rv = float(position_sigma) ** 2, float(velocity_sigma) ** 2
        R = np.array([self.Rp] * 3 + [self.Rv] * 3)
        self.params = TranslationKFParams(self.q, R)
        self.state = TranslationKFState(x, P, np.full(1, np.nan))

    x = property(lambda self: self.state.x.copy(), doc="(6,) the estimate [r, v] [m, m/s]")
    P = property(lambda self: self.state.P.copy(), doc="(6, 6) its covariance")
    nis = property(lambda self: float(self.state.nis[0]), doc="the last update's NIS")

    def predict(self, a_cmd: ArrayLike, dt: float) -> None:
        """Advance by dt with the known (commanded) acceleration [m/s^2]."""
        translation_predict_kernel(self.params, self.state, _vector(a_cmd, 3, "a_cmd"), float(dt))

    def update(self, z_pos: ArrayLike, z_vel: ArrayLike | None = None) -> None:
        """Fold in a position (and velocity) measurement."""
        z = _vector(z_pos, 3, "z_pos")
        if z_vel is not None:
            z = np.r_[z, _vector(z_vel, 3, "z_vel")]
        translation_update_kernel(self.params, self.state, z)

    def nees(self, x_true: ArrayLike) -> float:
        e = np.asarray(x_true, dtype=float) - self.x
        return float(e @ np.linalg.solve(self.P, e))
