"""The actuator decisions of one control tick, composed and compiled (P48, P49).

Given the base wrench ``[f, tau]`` the base law commands (base axes, about the base origin)
and what the flight software measures of its devices, one tick decides:

1. **momentum management** (reaction wheels): the dumping torque the thrusters should apply
   (hysteresis, :func:`~dqspace.actuators.kernels.momentum_dump_kernel`);
2. **thrusters**: the allocation of the demand -- the force (``mode = FORCE``, P49), the
   force and the dumping torque (``WRENCH`` with wheels), or the whole wrench (``WRENCH``)
   -- over the thrusters as they are now (faults included), then the pulse modulation of
   the commands into on/off pulses switched on dynamics-step boundaries (or, without PWM,
   the commands held over the period); the mean wrench they deliver over the period;
3. **VSCMGs**: the torque the thrusters do not deliver, less the cluster's gyroscopic term
   ``d``, steered into gimbal rates and wheel accelerations (P42, P48);
4. **reaction wheels**: what the VSCMGs could not deliver (all of it without VSCMGs), plus the
   compensation of the wheels' momentum turning with the base, distributed over the wheels.

:func:`demand_kernel` (step 1 and the thrusters' demand) and :func:`actuation_kernel` (the
rest) are the one implementation; the scenario runner calls them from its compiled closed
loop and from its Python loop (a user's controllers, the cvxpy allocator between the two),
through the same :data:`ActuationParams`, :data:`ActuationState` and :data:`ActuationWork`
arrays.

Status codes of the allocation are those of :class:`~dqspace.actuators.AllocationStatus`
in its order (``optimal`` 0, ``inaccurate`` 1, ``best_effort`` 2, ``solver_error`` 3), -1
without thrusters.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ...actuators.kernels import (
    ALLOC_INFO_SIZE,
    allocate_kernel,
    delivered_thrust_kernel,
    distribute_kernel,
    modulate_kernel,
    momentum_dump_kernel,
    steer_kernel,
    vscmg_matrices,
    wheel_momentum_kernel,
)

__all__ = [
    "ActuationParams",
    "ActuationState",
    "ActuationWork",
    "actuation_work",
    "actuation_kernel",
    "demand_kernel",
    "FORCE",
    "WRENCH",
]

#: Thruster modes (``thrusters.mode``): the thrusters take the force, or the whole wrench.
FORCE, WRENCH = 0, 1

#: What :func:`actuation_kernel` reads (constant over a run, except the thrusters' health
#: fields, which a fault changes between ticks).
#:
#: * timing: ``period`` [s], ``dt`` [s] (the dynamics step), ``steps`` (per period);
#: * thrusters (S of them; S = 0 without): ``mode``, ``H`` (6, S) nominal ``[d; r x d]``,
#:   ``sigma_min``, ``sigma_max`` (S,) [N], the health ``effectiveness``, ``fixed_thrust``
#:   [N], ``command_lower``, ``command_upper`` [N] (S,), the fast allocation's ``H_rows``
#:   (3 or 6, S) (the rows of H matched), ``weights`` (S,), ``residual_weights`` (3 or 6,),
#:   ``alloc_tol``, ``lp_max_iter``, ``lsq_max_iter``
#:   (:func:`~dqspace.actuators.kernels.allocate_kernel`), and the pulse modulation:
#:   ``pwm`` (bool), ``min_impulse_bit`` (S,) [N s], ``on_fraction``, ``off_fraction``
#:   (Schmitt trigger; 0.5, 0.5 for rounding), ``quantum`` [s],
#:   ``error_feedback`` (bool);
#: * VSCMGs (K of them): ``A_g0``, ``A_s0``, ``A_t0`` (3, K), ``I_cg``, ``I_ws``, ``I_s``,
#:   ``I_t`` (K,) [kg m^2], ``steering`` (:data:`~dqspace.actuators.kernels.SteeringParams`);
#: * reaction wheels (W of them): ``rw_A`` (3, W) spin axes, ``rw_I_s`` (W,) [kg m^2],
#:   ``rw_max_torque`` [N m], ``rw_max_speed`` [rad/s] (W,); momentum dumping: ``dumping``
#:   (bool), ``dump_gain`` [1/s], ``dump_start``, ``dump_stop`` (fractions of the speed
#:   limit).
ActuationParams = namedtuple(
    "ActuationParams",
    [
        "period", "dt", "steps",
        "mode", "H", "sigma_min", "sigma_max", "effectiveness", "fixed_thrust",
        "command_lower", "command_upper", "H_rows", "weights", "residual_weights",
        "alloc_tol", "lp_max_iter", "lsq_max_iter",
        "pwm", "min_impulse_bit", "on_fraction", "off_fraction", "quantum", "error_feedback",
        "A_g0", "A_s0", "A_t0", "I_cg", "I_ws", "I_s", "I_t", "steering",
        "rw_A", "rw_I_s", "rw_max_torque", "rw_max_speed",
        "dumping", "dump_gain", "dump_start", "dump_stop",
    ],
)  # fmt: skip

#: What carries over from one tick to the next: ``firing`` (S,) bool, which thrusters
#: fired in the last period; ``carry`` (S,) the impulse still owed [N s] (error feedback);
#: ``dump_active`` (1,) the momentum manager's hysteresis state (1.0 while dumping).
ActuationState = namedtuple("ActuationState", ["firing", "carry", "dump_active"])

#: What one tick decides (:func:`actuation_work` makes the arrays): ``dump`` (3,) [N m];
#: ``demand`` (6,) (the first 3 or 6 entries used); ``sigma`` (S,) [N] allocated thrusts,
#: ``alloc_info`` (2,) (status code, -1 without thrusters; LP iterations), ``n_on`` (S,)
#: dynamics steps each thruster is on, ``on_level``, ``off_level`` (S,) [N] thrust while on
#: and off (faults in), ``mean`` (S,) [N] mean thrust over the period, ``w_thr`` (6,) their
#: nominal wrench ``[f, tau]``; ``tau_v`` (3,) [N m] the torque asked of the VSCMGs,
#: ``gimbal_rate_cmd``, ``wheel_accel_cmd`` (K,), ``steer_err`` (3,) [N m], ``steer_info``
#: (7,) (lambda, det(G G^T), det(C C^T), delta_C, delta_G, wheel weight, scale);
#: ``rw_cmd`` (W,) [N m] wheel motor torques, ``rw_err`` (3,) [N m], ``rw_saturated`` (W,)
#: bool.
ActuationWork = namedtuple(
    "ActuationWork",
    [
        "dump", "demand", "sigma", "alloc_info", "n_on", "on_level", "off_level", "mean",
        "w_thr", "tau_v", "gimbal_rate_cmd", "wheel_accel_cmd", "steer_err", "steer_info",
        "rw_cmd", "rw_err", "rw_saturated",
    ],
)  # fmt: skip


def actuation_work(S: int, K: int, W: int) -> ActuationWork:
    """Fresh :data:`ActuationWork` arrays for S thrusters, K VSCMGs and W wheels."""
    size = {"sigma": S, "n_on": S, "on_level": S, "off_level": S, "mean": S}
    size.update(gimbal_rate_cmd=K, wheel_accel_cmd=K, rw_cmd=W, alloc_info=2, steer_info=7)
    size.update(demand=6, w_thr=6)
    out = {f: np.zeros(size.get(f, 3)) for f in ActuationWork._fields}
    out["rw_saturated"] = np.zeros(W, dtype=np.bool_)
    return ActuationWork(**out)


@njit(cache=True)
def demand_kernel(P, st, wrench, rw_speed, w):
    """Steps 1 and the first half of 2 of the module docstring: the momentum-dumping torque
    ``w.dump`` (3,) (the hysteresis state ``st.dump_active`` advances) and the thrusters'
    demand ``w.demand`` (its first ``P.H_rows.shape[0]`` entries: the force, then the
    dumping torque with wheels or the wrench's torque)."""
    W = P.rw_A.shape[1]
    w.dump[:] = 0.0
    if W > 0 and P.dumping:
        momentum_dump_kernel(
            P.rw_A, P.rw_I_s, P.rw_max_speed, P.dump_gain, P.dump_start, P.dump_stop,
            rw_speed, np.zeros(3), st.dump_active, w.dump,
        )  # fmt: skip
    for j in range(3):
        w.demand[j] = wrench[j]
        w.demand[3 + j] = w.dump[j] if W > 0 else wrench[3 + j]


@njit(cache=True)
def actuation_kernel(P, st, t, wrench, gimbal, vscmg_speed, rw_speed, base_rate, allocate, w):
    """One tick's actuator decisions after :func:`demand_kernel` (module docstring).

    Parameters
    ----------
    P : ActuationParams
    st : ActuationState, updated (the pulse modulator's state)
    t : float, the tick's time [s] (the steering law's time-varying R)
    wrench : (6,) the base wrench ``[f, tau]`` [N, N m] the base law commands, base axes
    gimbal, vscmg_speed : (K,) measured gimbal angles [rad] and VSCMG wheel speeds [rad/s]
    rw_speed : (W,) measured reaction-wheel speeds [rad/s]
    base_rate : (3,) measured base angular velocity, base axes [rad/s]
    allocate : bool, allocate ``w.demand`` by the fast allocation; False: ``w.sigma`` and
        ``w.alloc_info`` hold another allocator's answer
    w : ActuationWork, ``dump`` and ``demand`` from :func:`demand_kernel`; the rest written
    """
    S = P.H.shape[1]
    K = P.A_g0.shape[1]
    W = P.rw_A.shape[1]
    # ---- thrusters
    w.w_thr[:] = 0.0
    if S == 0:
        w.alloc_info[0] = -1.0
        w.alloc_info[1] = 0.0
    elif allocate:
        m = P.H_rows.shape[0]
        res = allocate_kernel(
            P.H_rows, P.effectiveness, P.fixed_thrust, w.demand[:m], P.command_lower,
            P.command_upper, P.weights, P.residual_weights, P.alloc_tol, P.lp_max_iter,
            P.lsq_max_iter, w.sigma, np.empty(ALLOC_INFO_SIZE),
        )  # fmt: skip
        w.alloc_info[0] = res[0]
        w.alloc_info[1] = res[2]
    if S > 0:
        zero = np.zeros(S)
        delivered_thrust_kernel(
            zero, P.sigma_min, P.sigma_max, P.effectiveness, P.fixed_thrust, w.off_level
        )
        if P.pwm:
            on_time = np.empty(S)
            impulse = np.empty(S)
            firing = np.empty(S, dtype=np.bool_)
            carry = np.empty(S)
            cmd = np.empty(S)
            for i in range(S):
                cmd[i] = min(max(w.sigma[i], 0.0), P.sigma_max[i])
            modulate_kernel(
                cmd, P.sigma_max, P.min_impulse_bit, P.period, P.on_fraction, P.off_fraction,
                P.quantum, P.error_feedback, st.firing, st.carry, on_time, impulse, firing,
                carry,
            )  # fmt: skip
            st.firing[:] = firing
            st.carry[:] = carry
            for i in range(S):
                w.n_on[i] = np.rint(on_time[i] / P.dt)
            delivered_thrust_kernel(
                P.sigma_max, P.sigma_min, P.sigma_max, P.effectiveness, P.fixed_thrust,
                w.on_level,
            )  # fmt: skip
        else:  # continuous thrust held over the period
            w.n_on[:] = P.steps
            delivered_thrust_kernel(
                w.sigma, P.sigma_min, P.sigma_max, P.effectiveness, P.fixed_thrust, w.on_level
            )
        for i in range(S):
            w.mean[i] = (w.on_level[i] * w.n_on[i] + w.off_level[i] * (P.steps - w.n_on[i])) / (
                P.steps
            )
        for r in range(6):
            s = 0.0
            for i in range(S):
                s += P.H[r, i] * w.mean[i]
            w.w_thr[r] = s
    # ---- VSCMGs: the torque the thrusters do not deliver
    for j in range(3):
        w.tau_v[j] = wrench[3 + j] - w.w_thr[3 + j]
    w.steer_err[:] = 0.0
    w.steer_info[:] = np.nan
    if K > 0:
        B = np.empty((3, K))
        C = np.empty((3, K))
        E = np.empty((3, K))
        d = np.empty(3)
        vscmg_matrices(
            P.A_g0, P.A_s0, P.A_t0, P.I_cg, P.I_ws, P.I_s, P.I_t, gimbal, vscmg_speed,
            base_rate, B, C, E, d,
        )  # fmt: skip
        info = steer_kernel(
            P.steering, C, E, w.tau_v - d, t, w.gimbal_rate_cmd, w.wheel_accel_cmd,
            w.steer_err,
        )  # fmt: skip
        for j in range(7):
            w.steer_info[j] = info[j]
    # ---- reaction wheels: what the VSCMGs did not deliver (plus the gyroscopic term)
    if W > 0:
        wanted = np.empty(3)
        for j in range(3):  # with VSCMGs, only the torque they could not deliver
            wanted[j] = w.steer_err[j] if K > 0 else w.tau_v[j]
        h = np.empty(3)
        wheel_momentum_kernel(P.rw_A, P.rw_I_s, rw_speed, base_rate, h)
        wanted[0] += base_rate[1] * h[2] - base_rate[2] * h[1]
        wanted[1] += base_rate[2] * h[0] - base_rate[0] * h[2]
        wanted[2] += base_rate[0] * h[1] - base_rate[1] * h[0]
        distribute_kernel(
            P.rw_A, P.rw_I_s, P.rw_max_torque, P.rw_max_speed, wanted, rw_speed, P.period,
            w.rw_cmd, w.rw_err, w.rw_saturated,
        )  # fmt: skip
