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
built-in controllers), a :data:`CompiledBaseLaw` (the base law of a system without an arm)
or a :data:`~dqspace.control.flight.python_stage.PythonLaw`;
``alloc`` ``None`` (the fast allocation) or a
:data:`~dqspace.control.flight.python_stage.PythonAllocation`.  A stage in Python runs in
numba's object mode, inside the same compiled tick: there is one composition, for the
built-in controllers and for users' code alike.

The three big stages (know, laws, actuate) are kernels of their own, compiled for their
blocks' types and called through pointers (:data:`Stages`, :class:`~dqspace._jit.
KernelPointer`): the tick itself stays small, a new kind of navigation recompiles only its
stage, and a stage that raises returns a status instead (:data:`STAGE_RAISED`,
:data:`PYTHON_RAISED`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit, objmode, types
from numba.extending import overload

from ..._jit import signature_on_first_call
from .actuation import actuation_kernel, demand_kernel
from .law import arms_kernel, base_only_kernel, station_keeping_kernel
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
    "CompiledBaseLaw",
    "CompiledArmsLaw",
    "Stages",
    "STAGE_KERNELS",
    "stage_arguments",
    "tick",
    "OK",
    "WRENCH_NONFINITE",
    "TORQUE_NONFINITE",
    "NAVIGATION_RAISED",
    "LAWS_RAISED",
    "ACTUATION_RAISED",
    "PYTHON_RAISED",
    "STAGE_RAISED",
]

#: Status codes of :func:`tick` (the loop adds the integrator's, 1 and 2): a non-finite
#: wrench or torque; a stage's compiled code raised (:data:`STAGE_RAISED` names it); a
#: stage in Python raised (the exception is kept: ``FlightSoftware.take_error``).
OK, WRENCH_NONFINITE, TORQUE_NONFINITE = 0, 3, 4
NAVIGATION_RAISED, LAWS_RAISED, ACTUATION_RAISED, PYTHON_RAISED = 5, 6, 7, 8
#: the stage whose compiled code raised, by status
STAGE_RAISED = {NAVIGATION_RAISED: "navigation", LAWS_RAISED: "laws",
                ACTUATION_RAISED: "actuation"}  # fmt: skip

#: The stages of a tick as kernel pointers (:class:`~dqspace._jit.KernelPointer`), each
#: compiled for the types of the blocks it receives (:func:`stage_arguments`): ``know``
#: (sensors and filters, or the truth), ``laws``, ``actuate``.
Stages = namedtuple("Stages", ["know", "laws", "actuate"])

#: The built-in controllers' law stage: ``arm`` the arm's
#: :data:`~dqspace.control.arm.ArmLawParams`, ``base`` the base's
#: :data:`~dqspace.control.base.BaseLawParams`, ``feedforward`` (bool) feed the arm's
#: reaction forward to the base.
CompiledLaw = namedtuple("CompiledLaw", ["arm", "base", "feedforward"])

#: The law stage of a system without an arm (its arm controller
#: :class:`~dqspace.control.arm.NoArm`): the built-in base law alone
#: (:func:`~dqspace.control.flight.law.base_only_kernel`); ``base`` its
#: :data:`~dqspace.control.base.BaseLawParams`, ``feedforward`` (bool).
CompiledBaseLaw = namedtuple("CompiledBaseLaw", ["base", "feedforward"])

#: The law stage of several arms (:class:`~dqspace.control.multi_arm.MultiArmController`,
#: :func:`~dqspace.control.flight.law.arms_kernel`): ``arms`` a tuple of each arm's
#: ``ArmLawParams``, ``base``, ``feedforward`` as in :data:`CompiledLaw`; the tick's arm
#: reference is then every arm's (20,), arm after arm.
CompiledArmsLaw = namedtuple("CompiledArmsLaw", ["arms", "base", "feedforward"])

#: What the flight software is, constant over a run but for the thrusters' health:
#: ``index`` (:data:`~dqspace.control.flight.interfaces.PlantIndex`, what the sensors
#: read), ``nav`` (the navigation, or None), ``law`` (:data:`CompiledLaw` or
#: ``PythonLaw``), ``alloc`` (None or ``PythonAllocation``), ``act``
#: (:data:`~dqspace.control.flight.actuation.ActuationParams`), ``stages``
#: (:data:`Stages`, compiled for the other blocks' types).
FlightParams = namedtuple("FlightParams", ["index", "nav", "law", "alloc", "act", "stages"])

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
    st = p.stages
    # ---- 1. what the flight software knows
    status = st.know(p.nav, s.nav, p.index, t, q, v, w.meas, w.est)
    if status != OK:
        return status
    # ---- 2. the laws
    status = st.laws(p.law, s.seed, s.base, t, w.est, arm_ref, base_ref, w.law)
    if status != OK:
        return status
    if not _finite(w.law.wrench):
        return WRENCH_NONFINITE
    if not _finite(w.law.tau):
        return TORQUE_NONFINITE
    # ---- 3. the actuators
    status = st.actuate(p.act, s.act, p.alloc, t, w.law, w.est, w.act)
    if status != OK:
        return status
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


# ------------------------------------------------------------------ the stages
# Each stage is a kernel of its own, compiled (and cached) for the types of its blocks and
# reached from the tick through a pointer (:class:`~dqspace._jit.KernelPointer`): a new
# kind of navigation recompiles the navigation stage and the small tick, not the laws.  A
# stage returns a status: a stage catches its own exception, so that the tick and the loop
# stop where they are with every record kept
# (numba does not keep the exception: the status names the stage).


def _know_stage(nav, nav_state, ix, t, q, v, meas, est):
    """Stage 1: the estimate (:func:`_know_typed`)."""
    try:
        _know(nav, nav_state, ix, t, q, v, meas, est)
    except Exception:  # noqa: BLE001 (compiled: numba catches any exception this way)
        return NAVIGATION_RAISED
    return OK


def _laws_stage(law, seed, base_state, t, est, arm_ref, base_ref, w):
    """Stage 2: the laws (:func:`_laws_typed`)."""
    try:
        return _laws(law, seed, base_state, t, est, arm_ref, base_ref, w)
    except Exception:  # noqa: BLE001
        return LAWS_RAISED


def _actuation_stage(act, act_state, alloc, t, law, est, w):
    """Stage 3: momentum management, the thrusters' demand, the allocation (compiled, or
    :func:`_allocate_typed` in Python), pulses, VSCMG steering, the wheels."""
    try:
        demand_kernel(act, act_state, law.wrench, est.rw_speed, w)
        status, fast = _allocate(alloc, w)
        if status != OK:
            return status
        actuation_kernel(
            act, act_state, t, law.wrench, est.gimbal, est.vscmg_speed, est.rw_speed,
            est.base_rate, fast, w,
        )  # fmt: skip
    except Exception:  # noqa: BLE001
        return ACTUATION_RAISED
    return OK


know_stage = signature_on_first_call({}, returns=types.int64, cache=True)(_know_stage)
laws_stage = signature_on_first_call({}, returns=types.int64, cache=True)(_laws_stage)
actuation_stage = signature_on_first_call({}, returns=types.int64, cache=True)(_actuation_stage)


def stage_arguments(index, nav, nav_state, law, seed, base_state, act, act_state, alloc, work):
    """Arguments of the types each stage receives from :func:`tick` (``know``, ``laws``,
    ``actuate``, as in :data:`Stages`), for typing and compiling them."""
    t, x = 0.0, np.zeros(1)
    return Stages(
        (nav, nav_state, index, t, x, x, work.meas, work.est),
        (law, seed, base_state, t, work.est, x, x, work.law),
        (act, act_state, alloc, t, work.law, work.est, work.act),
    )


STAGE_KERNELS = Stages(know_stage, laws_stage, actuation_stage)


# ------------------------------------------------------------------ the stages by type
# Each function below is a piece of a stage; its implementation is chosen by numba from
# the type of the stage's block (an overload).  They exist only in compiled code.


def _compiled_only():
    raise TypeError("a stage of the compiled tick: call dqspace.control.flight.tick.tick")


def _know(nav, nav_state, ix, t, q, v, meas, est):
    """Stage 1: the estimate (:func:`_know_typed`)."""
    _compiled_only()


def _laws(law, seed, base_state, t, est, arm_ref, base_ref, w):
    """Stage 2: the laws, their status (:func:`_laws_typed`)."""
    _compiled_only()


def _allocate(alloc, act):
    """Stage 3's allocation: ``(status, fast)``, ``fast`` True when the actuation kernel
    allocates (:func:`_allocate_typed`)."""
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
            with objmode(failed="int64"):
                failed = call_law(
                    key, t, q, v, wrench, ff, reaction, comp, tau, ee_dq, ee_log, ik_info
                )
            return PYTHON_RAISED if failed else OK

        return python

    if isinstance(law, types.BaseNamedTuple) and law.instance_class is CompiledBaseLaw:

        def base_only(law, seed, base_state, t, est, arm_ref, base_ref, w):
            base_only_kernel(
                law.base, base_state, law.feedforward, t, est.q, est.v, base_ref[:8],
                base_ref[8:14], base_ref[14:20], w,
            )  # fmt: skip
            return OK

        return base_only

    if isinstance(law, types.BaseNamedTuple) and law.instance_class is CompiledArmsLaw:

        def arms(law, seed, base_state, t, est, arm_ref, base_ref, w):
            arms_kernel(
                law.arms, seed, law.base, base_state, law.feedforward, t, est.q, est.v, arm_ref,
                base_ref[:8], base_ref[8:14], base_ref[14:20], w,
            )  # fmt: skip
            return OK

        return arms

    def built_in(law, seed, base_state, t, est, arm_ref, base_ref, w):
        station_keeping_kernel(
            law.arm, seed, law.base, base_state, law.feedforward, t, est.q, est.v, arm_ref[:8],
            arm_ref[8:14], arm_ref[14:20], base_ref[:8], base_ref[8:14], base_ref[14:20], w,
        )  # fmt: skip
        return OK

    return built_in


@overload(_allocate)
def _allocate_typed(alloc, act):
    if isinstance(alloc, types.BaseNamedTuple) and alloc.instance_class is PythonAllocation:

        def python(alloc, act):
            demand, sigma, info, key = act.demand, act.sigma, act.alloc_info, alloc.key
            with objmode(failed="int64"):
                failed = call_allocation(key, demand, sigma, info)
            return (PYTHON_RAISED if failed else OK), False

        return python

    def fast(alloc, act):
        return OK, True

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
