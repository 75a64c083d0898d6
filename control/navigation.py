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
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..dq import quat_conj, quat_exp, quat_mul, quat_normalize

__all__ = ["AttitudeMEKF", "TranslationKF"]


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


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


class AttitudeMEKF:
    """Attitude and gyro-bias estimator (module docstring).

    Parameters
    ----------
    q0 : (4,) initial attitude estimate q_IB
    bias0 : (3,) initial bias estimate [rad/s]
    P0 : (6, 6) initial error covariance ([rad^2], [(rad/s)^2])
    arw : angle random walk [rad/sqrt(s)]; rrw : rate random walk [rad/s/sqrt(s)]
    star_tracker_sigma : (3,) star-tracker noise per body axis [rad]
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
        self.q = quat_normalize(np.asarray(q0, dtype=float))
        self.bias = np.array(bias0, dtype=float)
        if self.bias.shape != (3,):
            raise ValueError(f"bias0 must be (3,), got {self.bias.shape}")
        self.P = _cov(P0, 6, "P0")
        if not (arw >= 0 and rrw >= 0):
            raise ValueError("arw and rrw must be >= 0")
        self.arw, self.rrw = float(arw), float(rrw)
        s = np.broadcast_to(np.asarray(star_tracker_sigma, dtype=float), (3,))
        if not np.all(s > 0):
            raise ValueError("star_tracker_sigma must be positive")
        self.R = np.diag(s**2)
        self.nis = float("nan")

    def propagate(self, w_meas: ArrayLike, dt: float) -> None:
        """Advance by dt [s] with the gyro's measured rate [rad/s] (held over dt)."""
        w = np.asarray(w_meas, dtype=float) - self.bias
        self.q = quat_normalize(quat_mul(self.q, quat_exp(0.5 * w * dt)))
        F = np.zeros((6, 6))
        F[:3, :3] = -_skew(w)
        F[:3, 3:] = -np.eye(3)
        Phi = np.eye(6) + F * dt + 0.5 * (F @ F) * dt * dt
        qv, qu = self.arw**2, self.rrw**2
        Q = np.zeros((6, 6))
        Q[:3, :3] = (qv * dt + qu * dt**3 / 3.0) * np.eye(3)
        Q[:3, 3:] = Q[3:, :3] = -qu * dt**2 / 2.0 * np.eye(3)
        Q[3:, 3:] = qu * dt * np.eye(3)
        self.P = Phi @ self.P @ Phi.T + Q

    def update(self, q_meas: ArrayLike) -> None:
        """Fold in a star-tracker attitude measurement."""
        z = _vec_err(self.q, np.asarray(q_meas, dtype=float))
        H = np.hstack([np.eye(3), np.zeros((3, 3))])
        S = H @ self.P @ H.T + self.R
        K = self.P @ H.T @ np.linalg.inv(S)
        dx = K @ z
        self.nis = float(z @ np.linalg.solve(S, z))
        self.q = quat_normalize(quat_mul(self.q, quat_exp(0.5 * dx[:3])))
        self.bias = self.bias + dx[3:]
        A = np.eye(6) - K @ H
        self.P = A @ self.P @ A.T + K @ self.R @ K.T

    def nees(self, q_true: ArrayLike, bias_true: ArrayLike) -> float:
        """Normalised estimation error squared of the 6 error states."""
        e = np.r_[_vec_err(self.q, np.asarray(q_true, dtype=float)), bias_true - self.bias]
        return float(e @ np.linalg.solve(self.P, e))


class TranslationKF:
    """Kalman filter of the base's position and velocity (module docstring).

    Parameters
    ----------
    x0 : (6,) initial [r, v]; P0 : (6, 6)
    accel_psd : white-acceleration spectral density [(m/s^2)^2 / Hz]
    position_sigma : [m]; velocity_sigma : [m/s] (used when velocity is measured)
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
        self.x = np.array(x0, dtype=float)
        if self.x.shape != (6,):
            raise ValueError(f"x0 must be (6,) [r, v], got {self.x.shape}")
        self.P = _cov(P0, 6, "P0")
        if not accel_psd >= 0 or not position_sigma > 0 or not velocity_sigma > 0:
            raise ValueError("accel_psd must be >= 0, the sigmas > 0")
        self.q = float(accel_psd)
        self.Rp, self.Rv = float(position_sigma) ** 2, float(velocity_sigma) ** 2
        self.nis = float("nan")

    def predict(self, a_cmd: ArrayLike, dt: float) -> None:
        """Advance by dt with the known (commanded) acceleration [m/s^2]."""
        a = np.asarray(a_cmd, dtype=float)
        I3 = np.eye(3)
        F = np.block([[I3, dt * I3], [np.zeros((3, 3)), I3]])
        self.x = F @ self.x + np.r_[0.5 * dt * dt * a, dt * a]
        Q = self.q * np.block([[dt**3 / 3 * I3, dt**2 / 2 * I3], [dt**2 / 2 * I3, dt * I3]])
        self.P = F @ self.P @ F.T + Q

    def update(self, z_pos: ArrayLike, z_vel: ArrayLike | None = None) -> None:
        """Fold in a position (and velocity) measurement."""
        if z_vel is None:
            H = np.hstack([np.eye(3), np.zeros((3, 3))])
            z = np.asarray(z_pos, dtype=float)
            R = self.Rp * np.eye(3)
        else:
            H = np.eye(6)
            z = np.r_[z_pos, z_vel]
            R = np.diag([self.Rp] * 3 + [self.Rv] * 3)
        y = z - H @ self.x
        S = H @ self.P @ H.T + R
        K = self.P @ H.T @ np.linalg.inv(S)
        self.nis = float(y @ np.linalg.solve(S, y))
        self.x = self.x + K @ y
        A = np.eye(6) - K @ H
        self.P = A @ self.P @ A.T + K @ R @ K.T

    def nees(self, x_true: ArrayLike) -> float:
        e = np.asarray(x_true, dtype=float) - self.x
        return float(e @ np.linalg.solve(self.P, e))
