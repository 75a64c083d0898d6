"""Singularity-robust steering of a VSCMG cluster (paper eq. 42): decisions, not physics.

Contract
--------
Input: the torque ``tau_B`` (3,) [N m] the cluster is to exert ON THE BASE, base
coordinates, and the cluster matrices ``C`` (3, K) [N m s] and ``E`` (3, K)
[kg m^2] at the current state (:meth:`dqspace.actuators.vscmg.VSCMGCluster.matrices`),
whose sign convention is ``tau_on_base = C gamma_dot + E Omega_dot`` (+ the neglected
``B gamma_ddot`` and the command-independent ``d``; to obtain a total torque
``tau_des`` pass ``tau_des - d``).
Output: gimbal rates [rad/s] and wheel accelerations [rad/s^2] (a
:class:`SteeringCommand`), for the servo loops of the device.

Law (weighted singularity-robust inverse, eq. 42 with a weighting W)::

    x = [gamma_dot; Omega_dot] = W G^T (G W G^T + lambda R)^-1 tau_B,     G = [C E]
    W = diag(w_g 1_K, w_w 1_K),   w_w = w_w0 exp(-mu_w delta_C)
    lambda = lambda0 exp(-mu delta_G)
    delta_C = det(C C^T) / h_ref^6,   delta_G = det(G W G^T) / (w_g^3 h_ref^6)
    R = [[1, e3, e2], [e3, 1, e1], [e2, e1, 1]],   e_i = eps0 sin(omega_eps t + phi_i)

then, if a gimbal rate or wheel acceleration exceeds its limit, the whole vector
is scaled down (its direction kept) and the result is flagged as saturated.
Details, defaults and the reasons for them: ``docs/vscmg.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .vscmg import VSCMGCluster

__all__ = ["SteeringLaw", "SteeringCommand", "steer"]


@dataclass(frozen=True)
class SteeringCommand:
    """Result of :func:`steer`.

    Attributes
    ----------
    gimbal_rates : (K,) gimbal rate commands [rad/s]
    wheel_accels : (K,) wheel acceleration commands [rad/s^2]
    torque : (3,) torque these commands produce on the base, ``G x`` [N m]
    torque_error : (3,) ``tau_B - G x`` [N m] (regularisation and saturation)
    lam : float, the regularisation lambda used [N^2 m^2 s^2]
    det_GGt : float, ``det(G G^T)`` (unweighted, mixed units as printed in the paper)
    det_CCt : float, ``det(C C^T)`` [N^6 m^6 s^6], the CMG singularity measure
    delta_C : float, ``det(C C^T) / h_ref^6`` [-]
    delta_G : float, ``det(G W G^T) / (w_g^3 h_ref^6)`` [-]
    wheel_weight : float, w_w [1/s^2]
    scale : float, factor (<= 1) applied to meet the limits
    saturated : bool, True when scale < 1
    """

    gimbal_rates: np.ndarray
    wheel_accels: np.ndarray
    torque: np.ndarray
    torque_error: np.ndarray
    lam: float
    det_GGt: float
    det_CCt: float
    delta_C: float
    delta_G: float
    wheel_weight: float
    scale: float
    saturated: bool


def _check(x, name, *, positive=False, unit=""):
    x = float(x)
    if not np.isfinite(x) or x < 0 or (positive and x == 0):
        kind = "positive" if positive else "non-negative"
        raise ValueError(f"SteeringLaw.{name} must be {kind} and finite [{unit}], got {x}")
    return x


@dataclass(frozen=True)
class SteeringLaw:
    """Parameters of the weighted singularity-robust steering law (see the module docstring).

    Attributes
    ----------
    h_ref : float, reference wheel momentum normalising the determinants [N m s]
    lambda0 : float, regularisation at a singularity [N^2 m^2 s^2]
    mu : float, decay of lambda with delta_G [-]
    gimbal_rate_max : float [rad/s]
    wheel_accel_max : float [rad/s^2]
    gimbal_weight : float, w_g [-]
    wheel_weight0 : float, w_w0, wheel weight at a CMG singularity [1/s^2] (0: CMG only)
    wheel_mu : float, decay of the wheel weight with delta_C [-]
    epsilon0 : float, amplitude of the off-diagonal terms of R [-], in [0, 0.5)
    epsilon_rate : float, omega_eps [rad/s] (0: constant e_i = eps0 sin(phi_i))
    epsilon_phase : (3,) phi_i [rad]
    """

    h_ref: float
    lambda0: float
    mu: float
    gimbal_rate_max: float
    wheel_accel_max: float
    gimbal_weight: float = 1.0
    wheel_weight0: float = 0.0
    wheel_mu: float = 10.0
    epsilon0: float = 0.01
    epsilon_rate: float = 0.5 * np.pi
    epsilon_phase: tuple = (0.0, 0.5 * np.pi, np.pi)

    def __post_init__(self):
        _check(self.h_ref, "h_ref", positive=True, unit="N m s")
        _check(self.lambda0, "lambda0", unit="N^2 m^2 s^2")
        _check(self.mu, "mu", unit="-")
        _check(self.gimbal_rate_max, "gimbal_rate_max", positive=True, unit="rad/s")
        _check(self.wheel_accel_max, "wheel_accel_max", positive=True, unit="rad/s^2")
        _check(self.gimbal_weight, "gimbal_weight", positive=True, unit="-")
        _check(self.wheel_weight0, "wheel_weight0", unit="1/s^2")
        _check(self.wheel_mu, "wheel_mu", unit="-")
        e0 = _check(self.epsilon0, "epsilon0", unit="-")
        if e0 >= 0.5:
            raise ValueError(
                f"SteeringLaw.epsilon0 must be < 0.5 so that R stays positive-definite, got {e0}"
            )
        _check(abs(self.epsilon_rate), "epsilon_rate", unit="rad/s")
        ph = np.asarray(self.epsilon_phase, dtype=float)
        if ph.shape != (3,) or not np.all(np.isfinite(ph)):
            raise ValueError(f"SteeringLaw.epsilon_phase must be 3 finite angles, got {ph}")
        object.__setattr__(self, "epsilon_phase", tuple(ph.tolist()))

    @classmethod
    def for_cluster(cls, cluster: VSCMGCluster, **overrides: float) -> SteeringLaw:
        """Defaults scaled to a cluster (values and reasons in ``docs/vscmg.md``).

        ``h_ref = mean(I_ws Omega_0)``, ``lambda0 = 0.01 h_ref^2``, ``mu = 20``,
        ``gimbal_rate_max = 1 rad/s``, ``wheel_accel_max = 10 rad/s^2``,
        ``wheel_weight0 = (h_ref / mean I_ws)^2`` (gimbal and wheel mode weighted
        equally per unit torque at a singularity), ``wheel_mu = 10``, and Wie's
        ``eps0 = 0.01``, ``omega_eps = pi/2 rad/s``, ``phi = (0, pi/2, pi)``.
        Keyword arguments override any field.
        """
        h = cluster.nominal_momentum
        Iws = float(np.mean(cluster.I_ws))
        p = {
            "h_ref": h,
            "lambda0": 0.01 * h**2,
            "mu": 20.0,
            "gimbal_rate_max": 1.0,
            "wheel_accel_max": 10.0,
            "wheel_weight0": (h / Iws) ** 2,
            "wheel_mu": 10.0,
        }
        p.update(overrides)
        return cls(**p)

    def epsilon(self, t: float) -> NDArray[np.float64]:
        """The off-diagonal terms ``(e1, e2, e3)`` of R at time t [s]."""
        return self.epsilon0 * np.sin(self.epsilon_rate * float(t) + np.asarray(self.epsilon_phase))

    def R(self, t: float) -> NDArray[np.float64]:
        """The (3, 3) matrix ``R`` of (42) at time t [s]."""
        e1, e2, e3 = self.epsilon(t)
        return np.array([[1.0, e3, e2], [e3, 1.0, e1], [e2, e1, 1.0]])


def steer(
    law: SteeringLaw, C: ArrayLike, E: ArrayLike, tau_B: ArrayLike, *, t: float = 0.0
) -> SteeringCommand:
    """Gimbal rates and wheel accelerations producing ``tau_B`` on the base (eq. 42).

    Parameters
    ----------
    law : SteeringLaw
    C : (3, K) torque per gimbal rate [N m s] (``VSCMGMatrices.C``)
    E : (3, K) torque per wheel acceleration [kg m^2] (``VSCMGMatrices.E``)
    tau_B : (3,) torque to exert on the base, base coordinates [N m]
    t : float, time [s] (for the time-varying R)

    Returns
    -------
    SteeringCommand

    Raises
    ------
    ValueError
        wrong shapes, non-finite entries, K < 3.
    """
    if not isinstance(law, SteeringLaw):
        raise ValueError(f"law must be a SteeringLaw, got {type(law).__name__}")
    C = np.asarray(C, dtype=float)
    E = np.asarray(E, dtype=float)
    tau = np.asarray(tau_B, dtype=float)
    if C.ndim != 2 or C.shape[0] != 3:
        raise ValueError(f"C must have shape (3, K), got {C.shape}")
    K = C.shape[1]
    if K < 3:
        raise ValueError(f"steering needs K >= 3 VSCMGs for full 3-axis control, got K = {K}")
    if E.shape != (3, K):
        raise ValueError(f"E must have shape (3, {K}) like C, got {E.shape}")
    if tau.shape != (3,):
        raise ValueError(f"tau_B must have shape (3,), got {tau.shape}")
    for name, a in (("C", C), ("E", E), ("tau_B", tau)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} has non-finite entries: {a.tolist()}")
    t = float(t)
    if not np.isfinite(t):
        raise ValueError(f"t must be finite, got {t}")

    h6 = law.h_ref**6
    CCt = C @ C.T
    det_CCt = float(np.linalg.det(CCt))
    delta_C = det_CCt / h6
    wg = law.gimbal_weight
    ww = law.wheel_weight0 * np.exp(-law.wheel_mu * delta_C)
    GWGt = wg * CCt + ww * (E @ E.T)
    delta_G = float(np.linalg.det(GWGt)) / (wg**3 * h6)
    lam = law.lambda0 * np.exp(-law.mu * delta_G)
    y = np.linalg.solve(GWGt + lam * law.R(t), tau)
    gd = wg * (C.T @ y)
    Od = ww * (E.T @ y)

    ratio = max(np.abs(gd).max() / law.gimbal_rate_max, np.abs(Od).max() / law.wheel_accel_max)
    scale = 1.0 / ratio if ratio > 1.0 else 1.0
    gd, Od = scale * gd, scale * Od
    achieved = C @ gd + E @ Od
    G = np.hstack([C, E])
    return SteeringCommand(
        gimbal_rates=gd,
        wheel_accels=Od,
        torque=achieved,
        torque_error=tau - achieved,
        lam=float(lam),
        det_GGt=float(np.linalg.det(G @ G.T)),
        det_CCt=det_CCt,
        delta_C=float(delta_C),
        delta_G=float(delta_G),
        wheel_weight=float(ww),
        scale=float(scale),
        saturated=bool(scale < 1.0),
    )
