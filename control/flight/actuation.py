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
    "ThrusterParams",
    "AllocationParams",
    "PulseParams",
    "VSCMGParams",
    "WheelParams",
    "thruster_stage",
    "vscmg_stage",
    "wheel_stage",
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

#: The thrusters as the flight software knows them (S of them; S = 0 without): ``mode``
#: (:data:`FORCE` or :data:`WRENCH`), ``H`` (6, S) nominal ``[d; r x d]``, ``sigma_min``,
#: ``sigma_max`` (S,) [N], and their health, which a fault changes between ticks:
#: ``effectiveness``, ``fixed_thrust`` [N], ``command_lower``, ``command_upper`` [N] (S,).
ThrusterParams = namedtuple(
    "ThrusterParams",
    ["mode", "H", "sigma_min", "sigma_max", "effectiveness", "fixed_thrust", "command_lower",
     "command_upper"],
)  # fmt: skip

#: The fast allocation (:func:`~dqspace.actuators.kernels.allocate_kernel`): ``H_rows``
#: (3 or 6, S) the rows of H matched, ``weights`` (S,), ``residual_weights`` (3 or 6,),
#: ``tol``, ``lp_max_iter``, ``lsq_max_iter``.
AllocationParams = namedtuple(
    "AllocationParams",
    ["H_rows", "weights", "residual_weights", "tol", "lp_max_iter", "lsq_max_iter"],
)

#: The pulse modulation: ``pwm`` (bool; False: continuous thrust held over the period),
#: ``min_impulse_bit`` (S,) [N s], ``on_fraction``, ``off_fraction`` (Schmitt trigger; 0.5,
#: 0.5 for rounding), ``quantum`` [s], ``error_feedback`` (bool).
PulseParams = namedtuple(
    "PulseParams",
    ["pwm", "min_impulse_bit", "on_fraction", "off_fraction", "quantum", "error_feedback"],
)

#: The VSCMG cluster (K of them): its ``geometry``
#: (:data:`~dqspace.actuators.vscmg.VSCMGGeometry`) and its ``steering`` law
#: (:data:`~dqspace.actuators.kernels.SteeringParams`).
VSCMGParams = namedtuple("VSCMGParams", ["geometry", "steering"])

#: The reaction wheels (W of them): ``A`` (3, W) spin axes, ``I_s`` (W,) [kg m^2],
#: ``max_torque`` [N m], ``max_speed`` [rad/s] (W,); momentum dumping: ``dumping`` (bool),
#: ``dump_gain`` [1/s], ``dump_start``, ``dump_stop`` (fractions of the speed limit).
WheelParams = namedtuple(
    "WheelParams",
    ["A", "I_s", "max_torque", "max_speed", "dumping", "dump_gain", "dump_start", "dump_stop"],
)

#: What :func:`actuation_kernel` reads: the timing ``period`` [s], ``dt`` [s] (the
#: dynamics step), ``steps`` (per period), and one block per device: ``thrusters``
#: (:data:`ThrusterParams`), ``allocation`` (:data:`AllocationParams`), ``pulses``
#: (:data:`PulseParams`), ``vscmg`` (:data:`VSCMGParams`), ``wheels`` (:data:`WheelParams`).
ActuationParams = namedtuple(
    "ActuationParams",
    ["period", "dt", "steps", "thrusters", "allocation", "pulses", "vscmg", "wheels"],
)

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
    demand ``w.demand`` (its first ``P.allocation.H_rows.shape[0]`` entries: the force,
    then the dumping torque with wheels or the wrench's torque)."""
    R = P.wheels
    W = R.A.shape[1]
    w.dump[:] = 0.0
    if W > 0 and R.dumping:
        momentum_dump_kernel(
            R.A, R.I_s, R.max_speed, R.dump_gain, R.dump_start, R.dump_stop, rw_speed,
            np.zeros(3), st.dump_active, w.dump,
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
    thruster_stage(P.thrusters, P.allocation, P.pulses, P.period, P.dt, P.steps, st, allocate, w)
    for j in range(3):  # the VSCMGs: the torque the thrusters do not deliver
        w.tau_v[j] = wrench[3 + j] - w.w_thr[3 + j]
    K = vscmg_stage(P.vscmg, t, gimbal, vscmg_speed, base_rate, w)
    # the wheels: what the VSCMGs could not deliver (all of it without VSCMGs)
    wheel_stage(P.wheels, P.period, w.steer_err if K > 0 else w.tau_v, rw_speed, base_rate, w)


@njit(cache=True)
def thruster_stage(T, A, M, period, dt, steps, st, allocate, w):
    """The thrusters' part of :func:`actuation_kernel`: the allocation of ``w.demand``
    (with ``allocate``), the pulse modulation, the levels while on and off and the mean
    nominal wrench ``w.w_thr`` over the period; ``T``, ``A``, ``M`` the
    :data:`ThrusterParams`, :data:`AllocationParams`, :data:`PulseParams`."""
    S = T.H.shape[1]
    w.w_thr[:] = 0.0
    if S == 0:
        w.alloc_info[0] = -1.0
        w.alloc_info[1] = 0.0
        return
    if allocate:
        m = A.H_rows.shape[0]
        res = allocate_kernel(
            A.H_rows, T.effectiveness, T.fixed_thrust, w.demand[:m], T.command_lower,
            T.command_upper, A.weights, A.residual_weights, A.tol, A.lp_max_iter,
            A.lsq_max_iter, w.sigma, np.empty(ALLOC_INFO_SIZE),
        )  # fmt: skip
        w.alloc_info[0] = res[0]
        w.alloc_info[1] = res[2]
    zero = np.zeros(S)
    delivered_thrust_kernel(
        zero, T.sigma_min, T.sigma_max, T.effectiveness, T.fixed_thrust, w.off_level
    )
    if M.pwm:
        on_time = np.empty(S)
        impulse = np.empty(S)
        firing = np.empty(S, dtype=np.bool_)
        carry = np.empty(S)
        cmd = np.empty(S)
        for i in range(S):
            cmd[i] = min(max(w.sigma[i], 0.0), T.sigma_max[i])
        modulate_kernel(
            cmd, T.sigma_max, M.min_impulse_bit, period, M.on_fraction, M.off_fraction,
            M.quantum, M.error_feedback, st.firing, st.carry, on_time, impulse, firing, carry,
        )  # fmt: skip
        st.firing[:] = firing
        st.carry[:] = carry
        for i in range(S):
            w.n_on[i] = np.rint(on_time[i] / dt)
        delivered_thrust_kernel(
            T.sigma_max, T.sigma_min, T.sigma_max, T.effectiveness, T.fixed_thrust, w.on_level
        )
    else:  # continuous thrust held over the period
        w.n_on[:] = steps
        delivered_thrust_kernel(
            w.sigma, T.sigma_min, T.sigma_max, T.effectiveness, T.fixed_thrust, w.on_level
        )
    for i in range(S):
        w.mean[i] = (w.on_level[i] * w.n_on[i] + w.off_level[i] * (steps - w.n_on[i])) / (steps)
    for r in range(6):
        s = 0.0
        for i in range(S):
            s += T.H[r, i] * w.mean[i]
        w.w_thr[r] = s


@njit(cache=True)
def vscmg_stage(V, t, gimbal, vscmg_speed, base_rate, w):
    """The VSCMGs' part of :func:`actuation_kernel`: ``w.tau_v`` less the cluster's
    gyroscopic term, steered into gimbal rates and wheel accelerations (P42, P48); ``V`` a
    :data:`VSCMGParams`.  Returns K."""
    g = V.geometry
    K = g.A_g0.shape[1]
    w.steer_err[:] = 0.0
    w.steer_info[:] = np.nan
    if K > 0:
        B = np.empty((3, K))
        C = np.empty((3, K))
        E = np.empty((3, K))
        d = np.empty(3)
        vscmg_matrices(
            g.A_g0, g.A_s0, g.A_t0, g.I_cg, g.I_ws, g.I_s, g.I_t, gimbal, vscmg_speed,
            base_rate, B, C, E, d,
        )  # fmt: skip
        info = steer_kernel(
            V.steering, C, E, w.tau_v - d, t, w.gimbal_rate_cmd, w.wheel_accel_cmd,
            w.steer_err,
        )  # fmt: skip
        for j in range(7):
            w.steer_info[j] = info[j]
    return K


@njit(cache=True)
def wheel_stage(R, period, torque, rw_speed, base_rate, w):
    """The reaction wheels' part of :func:`actuation_kernel`: ``torque`` (3,) [N m] plus the
    compensation of the wheels' momentum turning with the base, distributed over the wheels
    (motor torques ``w.rw_cmd``); ``R`` a :data:`WheelParams`."""
    if R.A.shape[1] == 0:
        return
    wanted = np.empty(3)
    for j in range(3):
        wanted[j] = torque[j]
    h = np.empty(3)
    wheel_momentum_kernel(R.A, R.I_s, rw_speed, base_rate, h)
    wanted[0] += base_rate[1] * h[2] - base_rate[2] * h[1]
    wanted[1] += base_rate[2] * h[0] - base_rate[0] * h[2]
    wanted[2] += base_rate[0] * h[1] - base_rate[1] * h[0]
    distribute_kernel(
        R.A, R.I_s, R.max_torque, R.max_speed, wanted, rw_speed, period, w.rw_cmd, w.rw_err,
        w.rw_saturated,
    )  # fmt: skip
