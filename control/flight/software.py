"""The flight software of a run as one object: its blocks, its state, and one tick on demand.

:class:`FlightSoftware` holds what :func:`~dqspace.control.flight.tick.tick` reads and
advances (:data:`~dqspace.control.flight.tick.FlightParams`, ``FlightState``,
``TickWork``), samples the references the tick tracks, changes the thrusters' health after
a fault, and registers the stages written in Python (a user's controllers, a Python
allocator) for as long as it lives.  A simulation's loop passes :attr:`params`,
:attr:`state` and :attr:`work` to the compiled tick; :meth:`step` runs one tick from Python
(to inspect what the flight software decides at a given state).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..arm import NoArm
from ..multi_arm import MultiArmController
from ..trajectories import sample_trajectory
from .actuation import ActuationState, actuation_work
from .interfaces import Commands, Estimate, command_arrays, estimate_arrays
from .law import LawWork, law_work
from .navigation import measurement_arrays
from .python_stage import (
    AllocationStage,
    LawStage,
    PythonAllocation,
    PythonLaw,
    register,
    take_error,
)
from .tick import (
    PYTHON_RAISED,
    STAGE_KERNELS,
    STAGE_RAISED,
    CompiledArmsLaw,
    CompiledBaseLaw,
    CompiledLaw,
    FlightParams,
    FlightState,
    Stages,
    TickWork,
    stage_arguments,
    tick,
)

__all__ = ["FlightSoftware", "FlightSoftwareError", "TickOutput"]


class FlightSoftwareError(RuntimeError):
    """A stage of the compiled tick raised (numba does not keep the exception's message:
    this names the stage and the time)."""


@dataclass(frozen=True)
class TickOutput:
    """One tick of :meth:`FlightSoftware.step`: ``status`` (0: OK, else the tick's code),
    the ``estimate``, the laws' ``law`` (LawWork), the actuation's ``actuation``
    (ActuationWork) and the ``commands``, each a copy."""

    status: int
    estimate: Estimate
    law: LawWork
    actuation: Any
    commands: Commands


def _copy(nt):
    return type(nt)(*(np.array(x) for x in nt))


class FlightSoftware:
    """The flight software of a run (module docstring).

    Parameters
    ----------
    index : PlantIndex, where the sensors read the plant
    law : StationKeepingLaw, the controllers (built-in ones run compiled, others in Python)
    actuation : ActuationParams
    dump_active : (1,) the momentum manager's hysteresis state (shared with its object)
    trajectory : the end-effector reference (a trajectory, ``trajectory(t)``); several
        arms (:class:`~dqspace.control.multi_arm.MultiArmController`): a tuple, one per arm
    base_reference : the base reference (a reference, or a callable of t)
    ee_frame : the end-effector frame of the controller model
    navigation : ``(NavigationParams, NavigationState)``, or None for perfect knowledge
    allocator : a Python allocator (``allocate(demand, thrusters=)``), or None for the
        compiled fast allocation
    thrusters : the thruster set as built (the Python allocator's health)
    """

    def __init__(
        self, *, index, law, actuation, dump_active, trajectory, base_reference, ee_frame,
        navigation=None, allocator=None, thrusters=None,
    ):  # fmt: skip
        self.index, self.law, self.trajectory = index, law, trajectory
        self.base_reference = base_reference
        model = law.base.model if hasattr(law.base, "model") else None
        n, S = index.arm_v.shape[0], actuation.thrusters.H.shape[1]
        K, W = actuation.vscmg.geometry.A_g0.shape[1], actuation.wheels.A.shape[1]
        self.n, self.S, self.K, self.W = n, S, K, W
        if law.compiled and type(law.arm) is NoArm:  # no arm: the base law alone
            law_block = CompiledBaseLaw(law.base.kernel_params(), law.feedforward)
            seed, base_state = np.zeros(0), law.base.kernel_state()
        elif law.compiled and type(law.arm) is MultiArmController:  # several arms
            law_block = CompiledArmsLaw(
                law.arm.kernel_params(), law.base.kernel_params(), law.feedforward
            )
            seed, base_state = law.arm.seed, law.base.kernel_state()
        elif law.compiled:
            law_block = CompiledLaw(
                law.arm.kernel_params(), law.base.kernel_params(), law.feedforward
            )
            law.arm.seed = np.array(law.arm.seed, dtype=float)
            seed, base_state = law.arm.seed, law.base.kernel_state()
        else:
            stage = LawStage(law, trajectory, base_reference, model, ee_frame)
            law_block = PythonLaw(register(stage, self))
            seed, base_state = np.zeros(n), None
        alloc_block = None
        self.allocation = None
        if allocator is not None and S:
            self.allocation = AllocationStage(allocator, thrusters)
            alloc_block = PythonAllocation(register(self.allocation, self))
        nav, nav_state = navigation if navigation is not None else (None, None)
        python = (PythonLaw, PythonAllocation)
        self._keys = [b.key for b in (law_block, alloc_block) if isinstance(b, python)]
        self.state = FlightState(
            nav_state,
            seed,
            base_state,
            ActuationState(np.zeros(S, dtype=np.bool_), np.zeros(S), dump_active),
        )
        self.work = TickWork(
            measurement_arrays(n, K, W),
            estimate_arrays(index.nq_c, index.nv_c, K, W),
            law_work(n),
            actuation_work(S, K, W),
        )
        # the stages, compiled for these blocks at the first tick (or by precompile)
        s, w = self.state, self.work
        args = stage_arguments(
            index, nav, s.nav, law_block, s.seed, s.base, actuation, s.act, alloc_block, w
        )
        stages = Stages(*(k.pointer(*a) for k, a in zip(STAGE_KERNELS, args, strict=True)))
        self.params = FlightParams(index, nav, law_block, alloc_block, actuation, stages)

    def kernel_jobs(self) -> list:
        """``(kernel, signature)`` of each stage of the tick (:data:`~dqspace.control.
        flight.tick.Stages`) for this flight software's blocks (what
        :func:`~dqspace._precompile.precompile` takes)."""
        return [(p.kernel, p.signature()) for p in self.params.stages]

    def stage_error(self, status: int, t: float) -> BaseException | None:
        """The error a tick's ``status`` at ``t`` [s] stands for when a stage raised: the
        Python stage's own exception, or a :class:`FlightSoftwareError` naming the compiled
        stage; None for any other status."""
        if status == PYTHON_RAISED:
            return self.take_error() or RuntimeError("a Python stage of the tick failed")
        if status in STAGE_RAISED:
            return FlightSoftwareError(
                f"the flight software's {STAGE_RAISED[status]} stage raised an error in "
                f"compiled code at t = {t:.6g} s (compiled code does not keep the message: a "
                "singular matrix, or an error a compiled controller raised)"
            )
        return None

    def take_error(self) -> BaseException | None:
        """The exception a stage in Python (a user's controllers, a Python allocator) raised
        in the last tick that stopped with ``PYTHON_RAISED``, or None; cleared."""
        errors = [e for e in map(take_error, self._keys) if e is not None]
        return errors[0] if errors else None

    @property
    def compiled(self) -> bool:
        """True when no stage of the tick runs in Python (the built-in controllers and the
        fast allocation, with or without sensors)."""
        compiled = isinstance(self.params.law, (CompiledLaw, CompiledBaseLaw, CompiledArmsLaw))
        return compiled and self.params.alloc is None

    @property
    def sensing(self) -> bool:
        """True when the flight software estimates its state from sensors."""
        return self.params.nav is not None

    def set_health(self, health) -> None:
        """The thrusters as they are now (after a fault): the allocation plans with them."""
        if self.allocation is not None:
            self.allocation.health = health
        a = self.params.act.thrusters
        if self.S:
            a.effectiveness[:] = health.effectiveness
            a.fixed_thrust[:] = health.fixed_thrust
            a.command_lower[:] = health.command_lower
            a.command_upper[:] = health.command_upper

    def references(self, times: NDArray[np.float64]):
        """``(arm_ref, base_ref)`` (m, 20) each: pose, twist, acceleration at ``times``
        [s] (the end-effector's relative to the base, the base's inertial)."""
        times = np.asarray(times, dtype=float)
        if isinstance(self.trajectory, tuple):  # several arms: each arm's (20,), in order
            arm = np.concatenate(
                [np.concatenate(sample_trajectory(tr, times), axis=1) for tr in self.trajectory],
                axis=1,
            )
        else:
            arm = np.concatenate(sample_trajectory(self.trajectory, times), axis=1)
        b = self.base_reference
        if callable(b):
            base = np.concatenate(sample_trajectory(b, times), axis=1)
        else:
            base = np.tile(np.r_[b.pose, b.twist, b.acc], (times.shape[0], 1))
        return np.ascontiguousarray(arm), np.ascontiguousarray(base)

    def step(self, t: float, q: NDArray[np.float64], v: NDArray[np.float64]) -> TickOutput:
        """One tick at ``t`` [s] from the plant's true ``(q, v)``: the flight software's
        state advances as in a run (sensors, filters, pulse modulation, IK warm start)."""
        arm, base = self.references(np.array([float(t)]))
        cmd = command_arrays(self.n, self.S, self.K, self.W)
        q = np.ascontiguousarray(q, dtype=float)
        v = np.ascontiguousarray(v, dtype=float)
        status = tick(self.params, self.state, self.work, float(t), q, v, arm[0], base[0], cmd)
        error = self.stage_error(status, float(t))
        if error is not None:
            raise error
        w = self.work
        return TickOutput(int(status), _copy(w.est), _copy(w.law), _copy(w.act), cmd)
