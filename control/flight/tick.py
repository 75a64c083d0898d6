"""One control tick of the flight software: the order, stated once.

:func:`tick` at the tick time ``t`` with the plant's true state ``(q, v)``:

1. **knowledge** -- the sensors, then the filters
   (:func:`~dqspace.control.flight.navigation.sense_kernel`,
   :func:`~dqspace.control.flight.navigation.filter_kernel`), or, with perfect knowledge,
   the true state (:func:`~dqspace.control.flight.navigation.truth_kernel`): the
   :data:`~dqspace.control.flight.interfaces.Estimate`;
2. **laws** -- the arm law, the base law with the arm's reaction fed forward, the arm
   torques (:func:`~dqspace.control.flight.law.station_keeping_kernel`, or the user's
   controllers in Python); a non-finite wrench or torque stops the tick
   (:data:`WRENCH_NONFINITE`, :data:`TORQUE_NONFINITE`);
3. **actuation** -- momentum management and the thrusters' demand
   (:func:`~dqspace.control.flight.actuation.demand_kernel`), the allocation (the fast one
   inside the actuation kernel, or a Python allocator), pulse modulation, VSCMG steering
   and the wheels (:func:`~dqspace.control.flight.actuation.actuation_kernel`);
4. **prediction** -- what the tick plans on the base (the thrusters' mean force, the law's
   torque, the arm's planned reaction) becomes the navigation's next prediction
   (:func:`~dqspace.control.flight.navigation.planned_acceleration_kernel`);
5. **commands** -- what the plant holds over the period
   (:data:`~dqspace.control.flight.interfaces.Commands`).

Each stage is chosen by the type of its block in :data:`FlightParams`, when the tick is
compiled: ``nav`` a :data:`~dqspace.control.flight.navigation.NavigationParams` or
``None`` (perfect knowledge: no filter is compiled); ``law`` a :data:`CompiledLaw` (the
built-in controllers) or a :data:`~dqspace.control.flight.python_stage.PythonLaw`;
``alloc`` ``None`` (the fast allocation) or a
:data:`~dqspace.control.flight.python_stage.PythonAllocation`.  A stage in Python runs in
numba's object mode, inside the same compiled tick: there is one composition, for the
built-in controllers and for users' code alike.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, objmode, types
from numba.extending import overload

from .actuation import actuation_kernel, demand_kernel
from .law import station_keeping_kernel
from .navigation import (
    filter_kernel,
    planned_acceleration_kernel,
    sense_kernel,
    truth_kernel,
)
from .python_stage import PythonAllocation, PythonLaw, call_allocation, call_law

__all__ = [
    "FlightParams",
    "FlightState",
    "TickWork",
    "CompiledLaw",
    "tick",
    "OK",
    "WRENCH_NONFINITE",
    "TORQUE_NONFINITE",
]

#: Status codes of :func:`tick` (the loop adds the integrator's after them).
OK, WRENCH_NONFINITE, TORQUE_NONFINITE = 0, 3, 4

#: The built-in controllers' law stage: ``arm`` the arm's
#: :data:`~dqspace.control.arm.ArmLawParams`, ``base`` the base's
#: :data:`~dqspace.control.base.BaseLawParams`, ``feedforward`` (bool) feed the arm's
#: reaction forward to the base.
CompiledLaw = namedtuple("CompiledLaw", ["arm", "base", "feedforward"])

#: What the flight software is, constant over a run but for the thrusters' health:
#: ``index`` (:data:`~dqspace.control.flight.interfaces.PlantIndex`, what the sensors
#: read), ``nav`` (the navigation, or None), ``law`` (:data:`CompiledLaw` or
#: ``PythonLaw``), ``alloc`` (None or ``PythonAllocation``), ``act``
#: (:data:`~dqspace.control.flight.actuation.ActuationParams`).
FlightParams = namedtuple("FlightParams", ["index", "nav", "law", "alloc", "act"])

#: What carries over from tick to tick: ``nav`` (the navigation's state, or None),
#: ``seed`` (n,) the IK's warm start, ``base`` the base law's state (its
#: ``kernel_state()``, None for a stateless law), ``act``
#: (:data:`~dqspace.control.flight.actuation.ActuationState`).
FlightState = namedtuple("FlightState", ["nav", "seed", "base", "act"])

#: A tick's work arrays: ``meas`` (Measurements), ``est`` (Estimate), ``law`` (LawWork),
#: ``act`` (ActuationWork).
TickWork = namedtuple("TickWork", ["meas", "est", "law", "act"])


@njit(cache=True)
def _finite(x):
    for j in range(x.shape[0]):
        if not np.isfinite(x[j]):
            return False
    return True


@njit(cache=True)
def tick(p, s, w, t, q, v, arm_ref, base_ref, cmd):
    """One tick (module docstring): ``p`` :data:`FlightParams`, ``s`` :data:`FlightState`
    (advanced), ``w`` :data:`TickWork` (written), ``t`` [s], the plant's true ``q``, ``v``,
    the references at the tick ``arm_ref`` (end-effector relative to the base) and
    ``base_ref`` (inertial), each (20,) (pose (8,), twist, acceleration (6,)); writes
    ``cmd`` (:data:`~dqspace.control.flight.interfaces.Commands`).  Returns :data:`OK` or
    the status that stopped it."""
    # ---- 1. what the flight software knows
    _know(p.nav, s.nav, p.index, t, q, v, w.meas, w.est)
    # ---- 2. the laws
    _laws(p.law, s.seed, s.base, t, w.est, arm_ref, base_ref, w.law)
    if not _finite(w.law.wrench):
        return WRENCH_NONFINITE
    if not _finite(w.law.tau):
        return TORQUE_NONFINITE
    # ---- 3. the actuators
    demand_kernel(p.act, s.act, w.law.wrench, w.est.rw_speed, w.act)
    fast = _allocate(p.alloc, w.act)
    e = w.est
    actuation_kernel(
        p.act, s.act, t, w.law.wrench, e.gimbal, e.vscmg_speed, e.rw_speed, e.base_rate, fast,
        w.act,
    )  # fmt: skip
    # ---- 4. the wrench planned on the base: the navigation's next prediction
    _predict(p.nav, s.nav, w.est, w.law, w.act.w_thr)
    # ---- 5. the commands
    cmd.arm_tau[:] = w.law.tau
    cmd.rw_torque[:] = w.act.rw_cmd
    cmd.n_on[:] = w.act.n_on
    cmd.on_level[:] = w.act.on_level
    cmd.off_level[:] = w.act.off_level
    cmd.gimbal_rate_cmd[:] = w.act.gimbal_rate_cmd
    cmd.wheel_accel_cmd[:] = w.act.wheel_accel_cmd
    return OK


# ------------------------------------------------------------------ the stages by type
# Each function below is a stage of the tick; its implementation is chosen by numba from
# the type of the stage's block (an overload).  They exist only in compiled code.


def _compiled_only():
    raise TypeError("a stage of the compiled tick: call dqspace.control.flight.tick.tick")


def _know(nav, nav_state, ix, t, q, v, meas, est):
    """Stage 1: the estimate (:func:`_know_typed`)."""
    _compiled_only()


def _laws(law, seed, base_state, t, est, arm_ref, base_ref, w):
    """Stage 2: the laws (:func:`_laws_typed`)."""
    _compiled_only()


def _allocate(alloc, act):
    """Stage 3's allocation: True when the actuation kernel allocates (:func:`_allocate_typed`)."""
    _compiled_only()


def _predict(nav, nav_state, est, law, w_thr):
    """Stage 4: the planned wrench into the navigation (:func:`_predict_typed`)."""
    _compiled_only()


@overload(_know)
def _know_typed(nav, nav_state, ix, t, q, v, meas, est):
    if isinstance(nav, types.NoneType):

        def truth(nav, nav_state, ix, t, q, v, meas, est):
            truth_kernel(ix, q, v, est)

        return truth

    def sensed(nav, nav_state, ix, t, q, v, meas, est):
        sense_kernel(nav.sensors, nav_state.sensors, ix, t, q, v, meas)
        filter_kernel(nav.filters, nav_state.filters, meas, est)

    return sensed


@overload(_laws)
def _laws_typed(law, seed, base_state, t, est, arm_ref, base_ref, w):
    if isinstance(law, types.BaseNamedTuple) and law.instance_class is PythonLaw:

        def python(law, seed, base_state, t, est, arm_ref, base_ref, w):
            q, v = est.q, est.v
            wrench, ff, reaction, tau = w.wrench, w.feedforward, w.reaction, w.tau
            comp, ee_dq, ee_log, ik_info = w.compensation, w.ee_dq, w.ee_log, w.ik_info
            key = law.key
            with objmode():
                call_law(key, t, q, v, wrench, ff, reaction, comp, tau, ee_dq, ee_log, ik_info)

        return python

    def built_in(law, seed, base_state, t, est, arm_ref, base_ref, w):
        station_keeping_kernel(
            law.arm, seed, law.base, base_state, law.feedforward, t, est.q, est.v, arm_ref[:8],
            arm_ref[8:14], arm_ref[14:20], base_ref[:8], base_ref[8:14], base_ref[14:20], w,
        )  # fmt: skip

    return built_in


@overload(_allocate)
def _allocate_typed(alloc, act):
    if isinstance(alloc, types.BaseNamedTuple) and alloc.instance_class is PythonAllocation:

        def python(alloc, act):
            demand, sigma, info, key = act.demand, act.sigma, act.alloc_info, alloc.key
            with objmode():
                call_allocation(key, demand, sigma, info)
            return False

        return python

    def fast(alloc, act):
        return True

    return fast


@overload(_predict)
def _predict_typed(nav, nav_state, est, law, w_thr):
    if isinstance(nav, types.NoneType):
        return lambda nav, nav_state, est, law, w_thr: None

    def planned(nav, nav_state, est, law, w_thr):
        f = nav_state.filters
        planned_acceleration_kernel(
            nav.filters, est, law.wrench, law.reaction, law.compensation, w_thr, f.accel
        )

    return planned
