"""The closed loop, compiled: flight-software ticks and the plant between them.

:func:`closed_loop` runs control ticks ``k0 .. k1 - 1`` of a run without returning to
Python.  At every tick k (time ``t = k * period``) it

1. records the plant state ``(q, v)``;
2. measures: the controller model's state ``q[:nq_c]``, ``v[:nv_c]``, the gimbal angles and
   rates, the VSCMG wheel speeds, the reaction-wheel speeds and the base rate, all true
   (perfect knowledge, :func:`truth_kernel`), or, with ``sensing``, as the sensors and
   filters estimate them (:func:`~dqspace.control.navigation_tick.navigation_kernel`);
3. runs the flight software: the station-keeping law
   (:func:`~dqspace.control.flight_software.station_keeping_kernel`) and the actuator
   decisions (:func:`~dqspace.control.actuation.actuation_kernel`), recording both (and,
   with ``sensing``, the estimate errors; the planned force on the base goes to the
   navigation's next prediction,
   :func:`~dqspace.control.navigation_tick.commanded_force_kernel`);
4. integrates the plant over the period with the commands held (with ``delay``, the
   previous tick's commands: one period of computation delay), the plant boundary being
   the compiled callback of :mod:`dqspace.scenarios._inputs`.

It stops early on a non-finite command or a failed integration step and says where
(``out`` = status, tick).  The Python loop of the runner (a user's controllers, the cvxpy
allocator) fills the same :data:`Record` with the same kernels, so what follows the loop (the
series of the results) is shared.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..._jit import signature_on_first_call
from ...control.flight.actuation import actuation_kernel, demand_kernel
from ...control.flight.law import station_keeping_kernel
from ...control.flight.navigation import Estimate, commanded_force_kernel, navigation_kernel
from ...multibody.kernels import sim
from .boundary import apply_commands

__all__ = [
    "Record",
    "record_arrays",
    "PlantIndex",
    "Commands",
    "closed_loop",
    "record_tick",
    "plant_commands",
    "truth_kernel",
    "OK",
    "SINGULAR",
    "NONFINITE",
    "WRENCH_NONFINITE",
    "TORQUE_NONFINITE",
]

#: Status codes of :func:`closed_loop` (the first two are the integrator's).
OK, SINGULAR, NONFINITE = sim.OK, sim.SINGULAR, sim.NONFINITE
WRENCH_NONFINITE, TORQUE_NONFINITE = 3, 4

#: The recorded series of a closed-loop run, one row per tick (:func:`record_arrays`):
#: ``t`` [s]; the plant state ``q``, ``v``; the law's ``wrench``, ``feedforward``,
#: ``reaction`` (6,) [N, N m], ``arm_tau`` (n,) [N m] (as commanded), the end-effector
#: error ``ee_dq`` (8,), ``ee_log`` (6,), ``ik_info`` (2,); the actuation's ``dump`` (3,),
#: ``sigma``, ``n_on``, ``on_level``, ``off_level``, ``mean`` (S,), ``alloc_info`` (2,),
#: ``w_thr`` (6,), ``tau_v``, ``steer_err`` (3,), ``steer_info`` (7,),
#: ``gimbal_rate_cmd``, ``wheel_accel_cmd`` (K,), ``rw_cmd`` (W,), ``rw_err`` (3,); the
#: measurements ``gimbal``, ``gimbal_rate``, ``vscmg_speed`` (K,), ``rw_speed`` (W,); the
#: navigation's estimate errors ``nav_att_err`` [rad], ``nav_pos_err`` [m] (3,); the
#: plant's report: ``limited`` (L,) 1 where the joint limiter clipped in the period before
#: the tick, ``delivered`` (S,) [N] the mean thrust the valves let through in the period
#: after it.
Record = namedtuple(
    "Record",
    [
        "t", "q", "v", "wrench", "feedforward", "reaction", "arm_tau", "ee_dq", "ee_log",
        "ik_info", "dump", "sigma", "n_on", "on_level", "off_level", "mean", "alloc_info",
        "w_thr", "tau_v", "steer_err", "steer_info", "gimbal_rate_cmd", "wheel_accel_cmd",
        "rw_cmd", "rw_err", "gimbal", "gimbal_rate", "vscmg_speed", "rw_speed", "nav_att_err",
        "nav_pos_err", "limited", "delivered",
    ],
)  # fmt: skip


def record_arrays(N: int, nq: int, nv: int, n: int, S: int, K: int, W: int, L: int = 0) -> Record:
    """Zeroed :data:`Record` arrays of N rows (L: the joint limiter's rows)."""
    size = dict(t=(), q=nq, v=nv, arm_tau=n, ee_dq=8, ik_info=2, alloc_info=2, steer_info=7)
    size.update(dict.fromkeys(("wrench", "feedforward", "reaction", "ee_log", "w_thr"), 6))
    size.update(dict.fromkeys(("sigma", "n_on", "on_level", "off_level", "mean"), S))
    size.update(dict.fromkeys(("gimbal_rate_cmd", "wheel_accel_cmd", "gimbal"), K))
    size.update(gimbal_rate=K, vscmg_speed=K, rw_cmd=W, rw_speed=W, limited=L, delivered=S)
    return Record(*(np.zeros((N, *np.atleast_1d(size.get(f, 3)))) for f in Record._fields))


#: Where the flight software's measurements sit in the plant state: the controller model's
#: sizes ``nq_c``, ``nv_c``; ``arm_v`` (n,) the arm joints in v; ``gimbal_q`` (K,) in q,
#: ``gimbal_v``, ``wheel_v`` (K,) and ``rw_v`` (W,) in v (int64 arrays).
PlantIndex = namedtuple(
    "PlantIndex", ["nq_c", "nv_c", "arm_v", "gimbal_q", "gimbal_v", "wheel_v", "rw_v"]
)

#: The commands held over a period (the plant boundary's tick fields): ``tau`` (nv,)
#: generalized forces (arm torques, wheel motor torques), ``n_on``, ``on_level``,
#: ``off_level`` (S,), ``gimbal_rate_cmd``, ``wheel_accel_cmd`` (K,).
Commands = namedtuple(
    "Commands", ["tau", "n_on", "on_level", "off_level", "gimbal_rate_cmd", "wheel_accel_cmd"]
)


@njit(cache=True)
def plant_commands(ix, law, act, c):
    """The commands of a tick (``law`` a ``LawWork``, ``act`` an ``ActuationWork``) into
    ``c`` (:data:`Commands`)."""
    c.tau[:] = 0.0
    for j in range(ix.arm_v.shape[0]):
        c.tau[ix.arm_v[j]] = law.tau[j]
    for j in range(ix.rw_v.shape[0]):
        c.tau[ix.rw_v[j]] = act.rw_cmd[j]
    c.n_on[:] = act.n_on
    c.on_level[:] = act.on_level
    c.off_level[:] = act.off_level
    c.gimbal_rate_cmd[:] = act.gimbal_rate_cmd
    c.wheel_accel_cmd[:] = act.wheel_accel_cmd


@njit(cache=True)
def record_tick(rec, k, t, q, v, law, act, gimbal, gimbal_rate, vscmg_speed, rw_speed):
    """Row k of ``rec`` from the tick's state, ``LawWork``, ``ActuationWork`` and
    measurements (the navigation errors are written by whoever estimates)."""
    rec.t[k] = t
    rec.q[k] = q
    rec.v[k] = v
    rec.wrench[k] = law.wrench
    rec.feedforward[k] = law.feedforward
    rec.reaction[k] = law.reaction
    rec.arm_tau[k] = law.tau
    rec.ee_dq[k] = law.ee_dq
    rec.ee_log[k] = law.ee_log
    rec.ik_info[k] = law.ik_info
    rec.dump[k] = act.dump
    rec.sigma[k] = act.sigma
    rec.n_on[k] = act.n_on
    rec.on_level[k] = act.on_level
    rec.off_level[k] = act.off_level
    rec.mean[k] = act.mean
    rec.alloc_info[k] = act.alloc_info
    rec.w_thr[k] = act.w_thr
    rec.tau_v[k] = act.tau_v
    rec.steer_err[k] = act.steer_err
    rec.steer_info[k] = act.steer_info
    rec.gimbal_rate_cmd[k] = act.gimbal_rate_cmd
    rec.wheel_accel_cmd[k] = act.wheel_accel_cmd
    rec.rw_cmd[k] = act.rw_cmd
    rec.rw_err[k] = act.rw_err
    rec.gimbal[k] = gimbal
    rec.gimbal_rate[k] = gimbal_rate
    rec.vscmg_speed[k] = vscmg_speed
    rec.rw_speed[k] = rw_speed


@njit(cache=True)
def truth_kernel(ix, q, v, out):
    """Perfect knowledge: the plant's true ``q``, ``v`` as the measurement ``out`` (an
    :data:`~dqspace.control.navigation_tick.Estimate`; its estimate errors left as they
    are)."""
    out.q[:] = q[: ix.nq_c]
    out.v[:] = v[: ix.nv_c]
    for i in range(ix.gimbal_q.shape[0]):
        out.gimbal[i] = q[ix.gimbal_q[i]]
        out.gimbal_rate[i] = v[ix.gimbal_v[i]]
        out.vscmg_speed[i] = v[ix.wheel_v[i]]
    for i in range(ix.rw_v.shape[0]):
        out.rw_speed[i] = v[ix.rw_v[i]]
    for j in range(3):
        out.base_rate[j] = v[j]


@njit(cache=True)
def _finite(x):
    for j in range(x.shape[0]):
        if not np.isfinite(x[j]):
            return False
    return True


def _closed_loop(
    ints, reals, gravity, inputs, params, mem, A, seed, B, feedforward, P, st, ix, sensing,
    NP, NS, arm_ref, base_ref, dist, q, v, period, dt, steps, valves, valve_carry, tail_level,
    delay, held, k0, k1, last, law, act, rec, out,
):  # fmt: skip
    """Ticks ``k0 .. k1 - 1`` (the module docstring); ``sensing`` (bool): the measurements
    are the navigation's (``NP`` its
    :data:`~dqspace.control.navigation_tick.NavigationParams`, ``NS`` its
    :data:`~dqspace.control.navigation_tick.NavigationState`, advanced), else the truth
    (``NP``, ``NS`` unused, of the same types); row ``k - k0`` of the chunk's tables
    ``arm_ref``, ``base_ref`` (m, 20: pose, twist, acceleration), ``dist`` (m, 6) and of
    ``rec`` (:data:`Record`); ``q``, ``v`` (the state at tick k0)
    advance in place; ``valves``, ``valve_carry``, ``tail_level`` the valves' timing and
    state (:func:`~dqspace.scenarios._inputs.apply_commands`; the state advances);
    ``held`` (:data:`Commands`) the commands the plant holds (with
    ``delay``, last tick's until this tick's are decided); ``last`` the final tick, recorded
    without a plant step after it; ``out`` (4,) int64 receives the status, the rows
    recorded, the dynamics steps done in the failing period and the tick reached."""
    nq, nv = q.shape[0], v.shape[0]
    K, W = ix.gimbal_q.shape[0], ix.rw_v.shape[0]
    m = Estimate(  # the measurement
        np.zeros(ix.nq_c), np.zeros(ix.nv_c), np.zeros(K), np.zeros(K), np.zeros(K),
        np.zeros(W), np.zeros(3), np.zeros(3), np.zeros(3),
    )  # fmt: skip
    f_B = np.empty(3)
    Q, V = np.empty((1, nq)), np.empty((1, nv))
    fresh = Commands(
        np.zeros(nv), np.zeros_like(held.n_on), np.zeros_like(held.on_level),
        np.zeros_like(held.off_level), np.zeros(K), np.zeros(K),
    )  # fmt: skip
    out[0] = OK
    for k in range(k0, k1):
        r = k - k0  # the chunk's row: references, disturbance and record
        out[3] = k
        t = k * period
        for i in range(mem.shape[0]):  # what the plant clipped in the last period
            rec.limited[r, i] = 1.0 if mem[i] > 0.0 else 0.0
            mem[i] = 0.0
        # ---- measure: the truth, or the navigation's estimates
        if sensing:
            navigation_kernel(NP, NS, ix, t, q, v, m)
        else:
            truth_kernel(ix, q, v, m)
        # ---- flight software
        station_keeping_kernel(
            A, seed, B, feedforward, m.q, m.v, arm_ref[r, :8], arm_ref[r, 8:14],
            arm_ref[r, 14:20], base_ref[r, :8], base_ref[r, 8:14], base_ref[r, 14:20], law,
        )  # fmt: skip
        if not _finite(law.wrench):
            out[0] = WRENCH_NONFINITE
            return
        if not _finite(law.tau):
            out[0] = TORQUE_NONFINITE
            return
        demand_kernel(P, st, law.wrench, m.rw_speed, act)
        actuation_kernel(
            P, st, t, law.wrench, m.gimbal, m.vscmg_speed, m.rw_speed, m.base_rate, True, act
        )
        if sensing:  # the force planned on the base: the next prediction's
            for j in range(3):
                f_B[j] = act.w_thr[j] + law.reaction[j]
            commanded_force_kernel(NP.mass, NS.pose, f_B, NS.accel)
        record_tick(rec, r, t, q, v, law, act, m.gimbal, m.gimbal_rate, m.vscmg_speed, m.rw_speed)
        rec.nav_att_err[r] = m.att_err
        rec.nav_pos_err[r] = m.pos_err
        out[1] = r + 1
        # ---- plant: the commands held over the period
        plant_commands(ix, law, act, fresh if delay else held)
        apply_commands(
            params, t, steps, held.tau, held.n_on, held.on_level, held.off_level, dist[r],
            held.gimbal_rate_cmd, held.wheel_accel_cmd, valves, valve_carry, tail_level,
            k != last, rec.delivered[r],
        )  # fmt: skip
        if k == last:
            return
        if delay:  # this tick's commands apply from the next tick
            held.tau[:] = fresh.tau
            held.n_on[:] = fresh.n_on
            held.on_level[:] = fresh.on_level
            held.off_level[:] = fresh.off_level
            held.gimbal_rate_cmd[:] = fresh.gimbal_rate_cmd
            held.wheel_accel_cmd[:] = fresh.wheel_accel_cmd
        status, n = sim.rk4_loop(
            ints, reals, gravity, q, v, t, dt, steps, steps, inputs, params, mem, Q, V
        )
        if status != OK:
            out[0] = status
            out[2] = n
            return
        q[:] = Q[0]
        v[:] = V[0]
    out[3] = k1 - 1


#: :func:`_closed_loop` compiled with its plant callback typed as numba's ``FunctionType``
#: of :data:`~dqspace.multibody.kernels.sim.INPUTS_SIG` (so that it is cached).
closed_loop = signature_on_first_call({3: sim.InputsFn}, cache=True)(_closed_loop)
