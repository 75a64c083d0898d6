"""The closed loop, compiled: flight-software ticks and the plant between them.

:func:`closed_loop` runs control ticks ``k0 .. k1 - 1`` of a run without returning to
Python.  At every tick k (time ``t = k * period``) it

1. takes the joint limiter's report of the last period (``limited``);
2. runs one tick of the flight software (:func:`~dqspace.control.flight.tick.tick`: the
   estimate, the laws, the actuators, the commands), on the plant's true state;
3. records the tick (:data:`Record`; with sensors, the navigation's errors against the
   truth);
4. integrates the plant over the period with the commands held (with ``delay``, the
   previous tick's commands: one period of computation delay), the plant boundary being
   the compiled callback of :mod:`dqspace.scenarios.sim.boundary`.

It stops early on a non-finite command or a failed integration step and says where (``out``
= status, rows recorded, dynamics steps done in the failing period, tick reached).  Every
run takes this loop: users' controllers and the cvxpy allocator enter the tick as Python
stages (:mod:`dqspace.control.flight.python_stage`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..._jit import signature_on_first_call
from ...control.flight.navigation import estimate_error_kernel
from ...control.flight.tick import (
    OK,
    PYTHON_RAISED,
    STAGE_RAISED,
    TORQUE_NONFINITE,
    WRENCH_NONFINITE,
    tick,
)
from ...multibody.kernels import sim
from .boundary import apply_commands

__all__ = [
    "Record",
    "record_arrays",
    "PlantBlock",
    "Tables",
    "closed_loop",
    "record_tick",
    "OK",
    "SINGULAR",
    "NONFINITE",
    "WRENCH_NONFINITE",
    "TORQUE_NONFINITE",
    "PYTHON_RAISED",
    "STAGE_RAISED",
]

#: Status codes of :func:`closed_loop`: the tick's and the integrator's.
SINGULAR, NONFINITE = sim.SINGULAR, sim.NONFINITE
assert sim.OK == OK and {SINGULAR, NONFINITE}.isdisjoint(
    {WRENCH_NONFINITE, TORQUE_NONFINITE, PYTHON_RAISED, *STAGE_RAISED}
)

#: The recorded rows of a closed-loop run, one per tick (:func:`record_arrays`): ``t`` [s];
#: the plant state ``q``, ``v``; the law's ``wrench``, ``feedforward``, ``reaction`` (6,)
#: [N, N m], ``arm_tau`` (n,) [N m] (as commanded), the end-effector error ``ee_dq`` (8,),
#: ``ee_log`` (6,), ``ik_info`` (2,); the actuation's ``dump`` (3,), ``sigma``, ``n_on``,
#: ``on_level``, ``off_level``, ``mean`` (S,), ``alloc_info`` (2,), ``w_thr`` (6,),
#: ``tau_v``, ``steer_err`` (3,), ``steer_info`` (7,), ``gimbal_rate_cmd``,
#: ``wheel_accel_cmd`` (K,), ``rw_cmd`` (W,), ``rw_err`` (3,); the estimate's ``gimbal``,
#: ``gimbal_rate``, ``vscmg_speed`` (K,), ``rw_speed`` (W,); the navigation's errors
#: ``nav_att_err`` [rad], ``nav_pos_err`` [m] (3,) (zero with perfect knowledge); the
#: plant's report: ``limited`` (L,) 1 where the joint limiter clipped in the period
#: before the tick, ``delivered`` (S,) [N] the mean thrust the valves let through in the
#: period after it.  The series a result holds are made from these
#: (:mod:`dqspace.scenarios.sim.series`).
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


#: The plant between ticks: ``integrate`` the integration loop
#: (:func:`~dqspace.multibody.kernels.sim.rk4_loop`, a pointer: compiled once for every
#: run, it reports failures by status), the model's packed ``ints``, ``reals``,
#: ``gravity``; the boundary's compiled callback ``inputs`` (typed as numba's
#: ``FunctionType``) and its
#: ``params`` vector, the limiter's report ``mem`` (L,); the dynamics step ``dt`` [s] and
#: ``steps`` per period; the valves' timing ``valves`` (3,) [steps], their state
#: ``valve_carry``, ``tail_level`` (S,) (:func:`~dqspace.scenarios.sim.boundary.
#: apply_commands`); ``tau`` (nv,) the generalized forces held (written at every tick).
PlantBlock = namedtuple(
    "PlantBlock",
    ["integrate", "ints", "reals", "gravity", "inputs", "params", "mem", "dt", "steps",
     "valves", "valve_carry", "tail_level", "tau"],
)  # fmt: skip

#: A chunk's tables, one row per tick: the references ``arm_ref``, ``base_ref`` (m, 20)
#: (pose, twist, acceleration) and the disturbance wrench on the base ``dist`` (m, 6).
Tables = namedtuple("Tables", ["arm_ref", "base_ref", "dist"])


@njit(cache=True)
def record_tick(rec, k, t, q, v, law, act, est):
    """Row k of ``rec`` from the tick's state, ``LawWork``, ``ActuationWork`` and
    ``Estimate`` (the navigation's errors are written apart)."""
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
    rec.gimbal[k] = est.gimbal
    rec.gimbal_rate[k] = est.gimbal_rate
    rec.vscmg_speed[k] = est.vscmg_speed
    rec.rw_speed[k] = est.rw_speed


@njit(cache=True)
def generalized_forces(ix, cmd, tau):
    """The commands' joint torques as the plant's generalized forces ``tau`` (nv,): the arm
    joints and the wheel motors at their places (``ix`` a ``PlantIndex``), zero elsewhere
    (the VSCMGs' servo loops act inside the plant boundary)."""
    tau[:] = 0.0
    for j in range(ix.arm_v.shape[0]):
        tau[ix.arm_v[j]] = cmd.arm_tau[j]
    for j in range(ix.rw_v.shape[0]):
        tau[ix.rw_v[j]] = cmd.rw_torque[j]


def _nav_errors(nav, est, q, att_err, pos_err):
    raise TypeError("compiled only (closed_loop)")


@overload(_nav_errors)
def _nav_errors_typed(nav, est, q, att_err, pos_err):
    if isinstance(nav, types.NoneType):  # perfect knowledge: no error
        return lambda nav, est, q, att_err, pos_err: None
    return lambda nav, est, q, att_err, pos_err: estimate_error_kernel(est, q, att_err, pos_err)


def _closed_loop(
    plant, fsw, fsw_state, work, tables, held, fresh, q, v, period, delay, k0, k1, last, rec, out
):  # fmt: skip
    """Ticks ``k0 .. k1 - 1`` (the module docstring).

    ``plant`` (:data:`PlantBlock`); the flight software's ``fsw``, ``fsw_state`` and
    ``work`` (:data:`~dqspace.control.flight.tick.FlightParams`, ``FlightState``,
    ``TickWork``); row ``k - k0`` of ``tables`` (:data:`Tables`) and of ``rec``
    (:data:`Record`); ``held`` the commands the plant holds (with ``delay``, last tick's
    until this tick's, decided into ``fresh``, apply); ``q``, ``v`` (the state at tick k0)
    advance in place; ``last`` the final tick, recorded without a plant step after it;
    ``out`` (4,) int64 receives the status, the rows recorded, the dynamics steps done in
    the failing period and the tick reached."""
    Q, V = np.empty((1, q.shape[0])), np.empty((1, v.shape[0]))
    mem = plant.mem
    out[0] = OK
    for k in range(k0, k1):
        r = k - k0  # the chunk's row: references, disturbance and record
        out[3] = k
        t = k * period
        for i in range(mem.shape[0]):  # what the plant clipped in the last period
            rec.limited[r, i] = 1.0 if mem[i] > 0.0 else 0.0
            mem[i] = 0.0
        # ---- the flight software's tick on the plant's true state
        status = tick(
            fsw, fsw_state, work, t, q, v, tables.arm_ref[r], tables.base_ref[r],
            fresh if delay else held,
        )  # fmt: skip
        if status != OK:
            out[0] = status
            return
        record_tick(rec, r, t, q, v, work.law, work.act, work.est)
        _nav_errors(fsw.nav, work.est, q, rec.nav_att_err[r], rec.nav_pos_err[r])
        out[1] = r + 1
        # ---- the plant: the commands held over the period
        generalized_forces(fsw.index, held, plant.tau)
        apply_commands(
            plant.params, t, plant.steps, plant.tau, held.n_on, held.on_level, held.off_level,
            tables.dist[r], held.gimbal_rate_cmd, held.wheel_accel_cmd, plant.valves,
            plant.valve_carry, plant.tail_level, k != last, rec.delivered[r],
        )  # fmt: skip
        if k == last:
            return
        if delay:  # this tick's commands apply from the next tick
            held.arm_tau[:] = fresh.arm_tau
            held.rw_torque[:] = fresh.rw_torque
            held.n_on[:] = fresh.n_on
            held.on_level[:] = fresh.on_level
            held.off_level[:] = fresh.off_level
            held.gimbal_rate_cmd[:] = fresh.gimbal_rate_cmd
            held.wheel_accel_cmd[:] = fresh.wheel_accel_cmd
        status, n = plant.integrate(
            plant.ints, plant.reals, plant.gravity, q, v, t, plant.dt, plant.steps,
            plant.steps, plant.inputs, plant.params, mem, Q, V,
        )  # fmt: skip
        if status != OK:
            out[0] = status
            out[2] = n
            return
        q[:] = Q[0]
        v[:] = V[0]
    out[3] = k1 - 1


#: :func:`_closed_loop` compiled with an explicit signature from its first call's argument
#: types (the plant's callback is numba's ``FunctionType``, which keeps it cacheable).
closed_loop = signature_on_first_call({}, cache=True)(_closed_loop)
