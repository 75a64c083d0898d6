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

import math
from collections import namedtuple
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .linalg import lu_factor, lu_solve
from .vscmg import VSCMGCluster

__all__ = [
    "GIMBAL_RATE_MAX",
    "WHEEL_ACCEL_MAX",
    "SteeringLaw",
    "SteeringCommand",
    "SteeringParams",
    "steer",
    "steer_kernel",
]

#: Default largest gimbal rate the law commands [rad/s] (:meth:`SteeringLaw.for_cluster`; the
#: scenario key ``vscmg.gimbal_rate_limit``).
GIMBAL_RATE_MAX = 1.0
#: Default largest wheel acceleration the law commands [rad/s^2] (:meth:`SteeringLaw.for_cluster`;
#: the scenario key ``vscmg.wheel_accel_limit``).
WHEEL_ACCEL_MAX = 10.0

#: The law's parameters as the compiled kernel takes them (:attr:`SteeringLaw.kernel_params`):
#: the fields of :class:`SteeringLaw`, floats, with ``epsilon_phase`` a 3-tuple of floats.
SteeringParams = namedtuple(
    "SteeringParams",
    [
        "h_ref",
        "lambda0",
        "mu",
        "gimbal_rate_max",
        "wheel_accel_max",
        "gimbal_weight",
        "wheel_weight0",
        "wheel_mu",
        "epsilon0",
        "epsilon_rate",
        "epsilon_phase",
    ],
)


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
            "gimbal_rate_max": GIMBAL_RATE_MAX,
            "wheel_accel_max": WHEEL_ACCEL_MAX,
            "wheel_weight0": (h / Iws) ** 2,
            "wheel_mu": 10.0,
        }
        p.update(overrides)
        return cls(**p)

    @cached_property
    def kernel_params(self) -> SteeringParams:
        """The parameters as :func:`steer_kernel` takes them (built once per law)."""
        return SteeringParams(
            float(self.h_ref),
            float(self.lambda0),
            float(self.mu),
            float(self.gimbal_rate_max),
            float(self.wheel_accel_max),
            float(self.gimbal_weight),
            float(self.wheel_weight0),
            float(self.wheel_mu),
            float(self.epsilon0),
            float(self.epsilon_rate),
            tuple(float(p) for p in self.epsilon_phase),
        )

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
    numpy.linalg.LinAlgError
        ``G W G^T + lambda R`` singular (possible only with ``lambda0 = 0``).

    The computation is :func:`steer_kernel`'s; this function checks the arguments.
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
    gd = np.empty(K)
    Od = np.empty(K)
    err = np.empty(3)
    C, E, tau = np.ascontiguousarray(C), np.ascontiguousarray(E), np.ascontiguousarray(tau)
    lam, det_GGt, det_CCt, delta_C, delta_G, ww, scale = steer_kernel(
        law.kernel_params, C, E, tau, t, gd, Od, err
    )
    if not (np.all(np.isfinite(gd)) and np.all(np.isfinite(Od))):
        raise np.linalg.LinAlgError(
            f"G W G^T + lambda R is singular (lambda = {lam}): no steering solution"
        )
    return SteeringCommand(
        gimbal_rates=gd,
        wheel_accels=Od,
        torque=tau - err,
        torque_error=err,
        lam=lam,
        det_GGt=det_GGt,
        det_CCt=det_CCt,
        delta_C=delta_C,
        delta_G=delta_G,
        wheel_weight=ww,
        scale=scale,
        saturated=bool(scale < 1.0),
    )


@njit(cache=True)
def steer_kernel(
    params: SteeringParams,
    C: NDArray[np.float64],
    E: NDArray[np.float64],
    tau_B: NDArray[np.float64],
    t: float,
    gimbal_rates: NDArray[np.float64],
    wheel_accels: NDArray[np.float64],
    torque_error: NDArray[np.float64],
) -> tuple[float, float, float, float, float, float, float]:
    """The weighted singularity-robust steering law (compiled; the one implementation).

    Eq. (42) with the weighting, as in the module docstring::

        delta_C = det(C C^T) / h_ref^6,        w_w = w_w0 exp(-mu_w delta_C)
        G W G^T = w_g C C^T + w_w E E^T,       delta_G = det(G W G^T) / (w_g^3 h_ref^6)
        lambda = lambda0 exp(-mu delta_G)
        y = (G W G^T + lambda R(t))^-1 tau_B,  gamma_dot = w_g C^T y,  Omega_dot = w_w E^T y

    then both scaled by ``scale = min(1, 1 / ratio)``, ``ratio`` the largest of
    ``|gamma_dot|_inf / gimbal_rate_max`` and ``|Omega_dot|_inf / wheel_accel_max``.
    Determinants by LU with partial pivoting (:func:`dqspace.actuators.linalg.lu_factor`).

    Parameters
    ----------
    params : SteeringParams (:attr:`SteeringLaw.kernel_params`)
    C : (3, K) torque per gimbal rate [N m s]
    E : (3, K) torque per wheel acceleration [kg m^2]
    tau_B : (3,) torque to exert on the base [N m]
    t : float, time [s] (the time-varying R)
    gimbal_rates : (K,) written [rad/s]
    wheel_accels : (K,) written [rad/s^2]
    torque_error : (3,) written, ``tau_B - (C gamma_dot + E Omega_dot)`` [N m]

    Returns
    -------
    (lam, det_GGt, det_CCt, delta_C, delta_G, wheel_weight, scale) : floats, as in
    :class:`SteeringCommand`.  A singular ``G W G^T + lambda R`` (only possible with
    ``lambda0 = 0``) gives non-finite rates.
    """
    K = C.shape[1]
    work = np.empty((4, 3, 3))  # C C^T, E E^T, LU scratch, (y, rows of R)
    CCt, EEt, M, aux = work[0], work[1], work[2], work[3]
    perm = np.empty(3, np.int64)
    for r in range(3):
        for c in range(r, 3):
            cc = ee = 0.0
            for i in range(K):
                cc += C[r, i] * C[c, i]
                ee += E[r, i] * E[c, i]
            CCt[r, c] = CCt[c, r] = cc
            EEt[r, c] = EEt[c, r] = ee
    h6 = params.h_ref**6
    M[:, :] = CCt
    det_CCt = lu_factor(M, 3, perm)
    delta_C = det_CCt / h6
    wg = params.gimbal_weight
    ww = params.wheel_weight0 * math.exp(-params.wheel_mu * delta_C)
    for r in range(3):
        for c in range(3):
            M[r, c] = wg * CCt[r, c] + ww * EEt[r, c]
    delta_G = lu_factor(M, 3, perm) / (wg**3 * h6)
    lam = params.lambda0 * math.exp(-params.mu * delta_G)
    # R(t): ones on the diagonal, e_i = eps0 sin(omega_eps t + phi_i) off it
    e = aux[1]
    for k in range(3):
        e[k] = params.epsilon0 * math.sin(params.epsilon_rate * t + params.epsilon_phase[k])
    for r in range(3):
        for c in range(3):
            R = 1.0 if r == c else e[3 - r - c]  # (0,1) -> e3, (0,2) -> e2, (1,2) -> e1
            M[r, c] = wg * CCt[r, c] + ww * EEt[r, c] + lam * R
    y = aux[0]
    for r in range(3):
        y[r] = tau_B[r]
    lu_factor(M, 3, perm)
    lu_solve(M, 3, perm, y)
    gmax = amax = 0.0
    for i in range(K):
        gimbal_rates[i] = wg * (C[0, i] * y[0] + C[1, i] * y[1] + C[2, i] * y[2])
        wheel_accels[i] = ww * (E[0, i] * y[0] + E[1, i] * y[1] + E[2, i] * y[2])
        gmax = max(gmax, abs(gimbal_rates[i]))
        amax = max(amax, abs(wheel_accels[i]))
    ratio = max(gmax / params.gimbal_rate_max, amax / params.wheel_accel_max)
    scale = 1.0 / ratio if ratio > 1.0 else 1.0
    for i in range(K):
        gimbal_rates[i] *= scale
        wheel_accels[i] *= scale
    for r in range(3):
        acc = 0.0
        for i in range(K):
            acc += C[r, i] * gimbal_rates[i]
        for i in range(K):
            acc += E[r, i] * wheel_accels[i]
        torque_error[r] = tau_B[r] - acc
    for r in range(3):
        for c in range(3):
            M[r, c] = CCt[r, c] + EEt[r, c]  # G G^T
    det_GGt = lu_factor(M, 3, perm)
    return lam, det_GGt, det_CCt, delta_C, delta_G, ww, scale
