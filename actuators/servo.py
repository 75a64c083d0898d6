"""VSCMG servo loops: the motor torques that make gimbals and wheels follow their commands.

A decision module, like :mod:`dqspace.actuators.steering`: the physics it relies on (the
device and the cluster) is in :mod:`dqspace.actuators.vscmg`, their multibody coupling in
:mod:`dqspace.actuators.vscmg_multibody`.
Derivation and the reasons for the choices: ``docs/vscmg.md`` ("Servo loops").

Contract
--------
Input: a :class:`~dqspace.actuators.vscmg_multibody.ClusterModel` and the state ``(q, v)``
of its extended model; per unit the commanded gimbal rate ``gamma_dot_cmd`` [rad/s] and wheel
acceleration ``Omega_dot_cmd`` [rad/s^2] (e.g. a
:class:`~dqspace.actuators.steering.SteeringCommand`); optionally a gimbal-acceleration
feedforward [rad/s^2], a wheel-speed reference [rad/s] and an estimate of the carrying
body's angular acceleration ``w_dot`` [rad/s^2]; the loop bandwidths (:class:`ServoGains`).
Output: the gimbal motor torques ``tau_g`` (K,) about g and the wheel motor torques
``tau_w`` (K,) about s [N m] (a :class:`ServoTorques`, which also holds them as a
generalized-force vector (nv,), zero outside the cluster's joints).  The motors act between
gimbal and carrying body and between wheel and gimbal: internal torques.

Laws (computed torque on the exact joint equations of unit i; axes ``g, s(gamma_i),
t(gamma_i)`` and the angular velocity ``w`` of the carrying body in its coordinates)::

    gamma_ddot = gamma_ddot_ff + k_g (gamma_dot_cmd - gamma_dot)          gimbal rate loop
    Omega_dot  = Omega_dot_cmd [+ k_w (Omega_ref - Omega)]                wheel acceleration
    tau_g = I_cg (gamma_ddot + g.w_dot) + (I_t - I_s)(s.w)(t.w) - I_ws Omega (t.w)
    tau_w = I_ws (Omega_dot + s.w_dot + gamma_dot s.(w x g))

with ``I_cg = I_gg + I_wt``, ``I_s = I_ws + I_gs``, ``I_t = I_wt + I_gt``.  ``w_dot`` is
zero unless given (the rate loop absorbs ``g.w_dot``); the speed term only when a
wheel-speed reference is given.  With ``w_dot`` exact and zero loop errors the torques
equal the inverse dynamics at the gimbal and wheel joints.

Entry points: :func:`servo_torques` (checked arguments), :func:`servo_kernel` (the one
compiled implementation, callable from compiled simulation callbacks) and
:func:`servo_controller` (a ``controller(t, q, v)`` for
:func:`dqspace.multibody.simulate_rk4`).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ._checks import finite_vec3, finite_vector
from .vscmg import unit_axes
from .vscmg_multibody import ClusterModel

__all__ = [
    "ServoGains",
    "ServoTorques",
    "servo_torques",
    "servo_kernel",
    "servo_unit",
    "servo_controller",
]

_Vector = NDArray[np.float64]
# command(t, q, v) -> (gimbal_rate_cmd (K,), wheel_accel_cmd (K,)); controller(t, q, v) -> tau
_Command = Callable[[float, _Vector, _Vector], tuple[ArrayLike, ArrayLike]]
_Controller = Callable[[float, _Vector, _Vector], _Vector]


@dataclass(frozen=True)
class ServoGains:
    """Bandwidths of the device's motor loops.

    Attributes
    ----------
    gimbal_rate : float, gimbal-rate loop bandwidth k_g [1/s]
    wheel_speed : float, wheel-speed loop bandwidth k_w [1/s] (used only when a wheel
        speed reference is given)
    """

    gimbal_rate: float = 50.0
    wheel_speed: float = 5.0

    def __post_init__(self) -> None:
        for name in ("gimbal_rate", "wheel_speed"):
            x = float(getattr(self, name))
            if not np.isfinite(x) or x < 0:
                raise ValueError(
                    f"ServoGains.{name} must be non-negative and finite [1/s], got {x}"
                )


@dataclass(frozen=True)
class ServoTorques:
    """Motor torques of the servo loops.

    Attributes
    ----------
    gimbal : (K,) gimbal motor torques about g [N m]
    wheel : (K,) wheel motor torques about s [N m]
    tau : (nv,) the generalized-force vector with these entries (zeros elsewhere)
    """

    gimbal: NDArray[np.float64]
    wheel: NDArray[np.float64]
    tau: NDArray[np.float64]


def servo_torques(
    cm: ClusterModel,
    q: ArrayLike,
    v: ArrayLike,
    gimbal_rate_cmd: ArrayLike,
    wheel_accel_cmd: ArrayLike,
    *,
    gimbal_accel_ff: ArrayLike | None = None,
    wheel_speed_ref: ArrayLike | None = None,
    w_dot_IB_B: ArrayLike | None = None,
    gains: ServoGains = ServoGains(),
) -> ServoTorques:
    """Gimbal-rate and wheel-acceleration servo loops as motor torques (computed torque).

    The exact joint equations of unit i (gimbal + wheel about g, wheel about s) are::

        tau_g = I_cg (gamma_ddot + g.w_dot) + (I_t - I_s)(s.w)(t.w) - I_ws Omega (t.w)
        tau_w = I_ws (Omega_dot + s.w_dot + gamma_dot s.(w x g))

    The servos use them with ``gamma_ddot = gamma_ddot_ff + k_g (gamma_dot_cmd - gamma_dot)``,
    ``Omega_dot = Omega_dot_cmd [+ k_w (Omega_ref - Omega)]`` and the base angular
    acceleration ``w_dot`` if given (zero otherwise: the rate loop absorbs it).  With
    ``w_dot`` exact and zero loop errors the torques are those of the inverse dynamics.

    Parameters
    ----------
    cm : ClusterModel
    q, v : (nq,), (nv,) state of the extended model
    gimbal_rate_cmd : (K,) commanded gimbal rates [rad/s]
    wheel_accel_cmd : (K,) commanded wheel accelerations [rad/s^2]
    gimbal_accel_ff : (K,) gimbal acceleration feedforward [rad/s^2], default 0
    wheel_speed_ref : (K,) wheel speed reference [rad/s], default None (no speed loop)
    w_dot_IB_B : (3,) base angular acceleration estimate [rad/s^2], default 0
    gains : ServoGains

    Returns
    -------
    ServoTorques
    """
    cl = cm.cluster
    K = cl.K
    st = cm.state(q, v)
    gr = finite_vector(gimbal_rate_cmd, "gimbal_rate_cmd", K)
    wa = finite_vector(wheel_accel_cmd, "wheel_accel_cmd", K)
    gff = (
        np.zeros(K)
        if gimbal_accel_ff is None
        else finite_vector(gimbal_accel_ff, "gimbal_accel_ff", K)
    )
    wd = np.zeros(3) if w_dot_IB_B is None else finite_vec3(w_dot_IB_B, "w_dot_IB_B")
    use_ref = wheel_speed_ref is not None
    ref = finite_vector(wheel_speed_ref, "wheel_speed_ref", K) if use_ref else np.zeros(K)
    tau_g = np.empty(K)
    tau_w = np.empty(K)
    servo_kernel(
        st.gamma,
        st.gamma_dot,
        st.wheel_speed,
        st.w_IB_B,
        wd,
        cl.A_g0,
        cl.A_s0,
        cl.A_t0,
        cl.I_cg,
        cl.I_ws,
        cl.I_s,
        cl.I_t,
        gr,
        wa,
        gff,
        ref,
        use_ref,
        float(gains.gimbal_rate),
        float(gains.wheel_speed),
        tau_g,
        tau_w,
    )
    return ServoTorques(tau_g, tau_w, cm.joint_torques(tau_g, tau_w))


@njit(cache=True)
def servo_kernel(
    gamma: NDArray[np.float64],
    gamma_dot: NDArray[np.float64],
    wheel_speed: NDArray[np.float64],
    w: NDArray[np.float64],
    w_dot: NDArray[np.float64],
    A_g0: NDArray[np.float64],
    A_s0: NDArray[np.float64],
    A_t0: NDArray[np.float64],
    I_cg: NDArray[np.float64],
    I_ws: NDArray[np.float64],
    I_s: NDArray[np.float64],
    I_t: NDArray[np.float64],
    gimbal_rate_cmd: NDArray[np.float64],
    wheel_accel_cmd: NDArray[np.float64],
    gimbal_accel_ff: NDArray[np.float64],
    wheel_speed_ref: NDArray[np.float64],
    use_ref: bool,
    k_g: float,
    k_w: float,
    tau_g: NDArray[np.float64],
    tau_w: NDArray[np.float64],
) -> None:
    """Compiled servo laws of :func:`servo_torques` (the one implementation: each unit's
    torques are :func:`servo_unit`'s).

    All arrays (K,) except ``w``, ``w_dot`` (3,) and the axes (3, K); writes
    ``tau_g`` and ``tau_w`` (K,).  Callable from compiled simulation callbacks.
    """
    for i in range(gamma.shape[0]):
        tau_g[i], tau_w[i] = servo_unit(
            i, gamma[i], gamma_dot[i], wheel_speed[i], w, w_dot, A_g0, A_s0, A_t0, I_cg,
            I_ws, I_s, I_t, gimbal_rate_cmd[i], wheel_accel_cmd[i], gimbal_accel_ff[i],
            wheel_speed_ref[i], use_ref, k_g, k_w,
        )  # fmt: skip


@njit(cache=True)
def servo_unit(
    i, gamma, gamma_dot, wheel_speed, w, w_dot, A_g0, A_s0, A_t0, I_cg, I_ws, I_s, I_t,
    gimbal_rate_cmd, wheel_accel_cmd, gimbal_accel_ff, wheel_speed_ref, use_ref, k_g, k_w,
):  # fmt: skip
    """Unit ``i``'s servo torques ``(tau_g, tau_w)`` (:func:`servo_kernel`'s arguments,
    the unit's own as numbers; ``w``, ``w_dot`` anything indexed 0..2, e.g. the state's
    ``v``, whose first three entries are the base's angular velocity).  The plant calls it
    per unit with no array made (an array per call costs more than the law)."""
    c, s = math.cos(gamma), math.sin(gamma)
    ws = wt = wds = wdg = 0.0
    for j in range(3):
        a_s, a_t = unit_axes(A_s0, A_t0, i, j, c, s)
        ws += w[j] * a_s
        wt += w[j] * a_t
        wdg += w_dot[j] * A_g0[j, i]
        wds += w_dot[j] * a_s
    # s . (w x g)
    g0, g1, g2 = A_g0[0, i], A_g0[1, i], A_g0[2, i]
    s0 = unit_axes(A_s0, A_t0, i, 0, c, s)[0]
    s1 = unit_axes(A_s0, A_t0, i, 1, c, s)[0]
    s2 = unit_axes(A_s0, A_t0, i, 2, c, s)[0]
    sxg = s0 * (w[1] * g2 - w[2] * g1) + s1 * (w[2] * g0 - w[0] * g2) + s2 * (w[0] * g1 - w[1] * g0)
    gdd = gimbal_accel_ff + k_g * (gimbal_rate_cmd - gamma_dot)
    tau_g = I_cg[i] * (gdd + wdg) + (I_t[i] - I_s[i]) * ws * wt - I_ws[i] * wheel_speed * wt
    om_dot = wheel_accel_cmd
    if use_ref:
        om_dot += k_w * (wheel_speed_ref - wheel_speed)
    return tau_g, I_ws[i] * (om_dot + wds + gamma_dot * sxg)


def servo_controller(
    cm: ClusterModel,
    command: _Command,
    *,
    gains: ServoGains = ServoGains(),
) -> _Controller:
    """A ``controller(t, q, v) -> tau`` for :func:`dqspace.multibody.simulate_rk4`.

    A pure function of ``(t, q, v)``: the servo laws of :func:`servo_torques` without a
    base-acceleration estimate (the rate loop absorbs ``g . w_dot``; a backward-difference
    estimate of ``w_dot`` was tried and tracked worse, see ``docs/vscmg.md``).

    Parameters
    ----------
    cm : ClusterModel
    command : callable ``command(t, q, v) -> (gimbal_rate_cmd (K,), wheel_accel_cmd (K,))``
        e.g. a steering law fed by an attitude controller
    gains : ServoGains

    Returns
    -------
    callable, the servo torques as a generalized-force vector (nv,), zero outside the
        cluster's joints
    """

    def controller(t, q, v):
        gr, wa = command(t, q, v)
        return servo_torques(cm, q, v, gr, wa, gains=gains).tau

    return controller
