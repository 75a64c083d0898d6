"""Users' Python code inside the compiled tick: the controllers and allocators numba cannot
compile, called back from the compiled loop.

A stage implemented in Python (a user's controller class, the cvxpy allocator) is
registered here for the length of a run (:class:`registered`) and travels through the
compiled tick as a small key (:data:`PythonLaw`, :data:`PythonAllocation`); the tick calls
it through numba's object mode (:func:`call_law`, :func:`call_allocation`).  The work
arrays are shared with the compiled code: the stage writes its outputs into them in place.

:class:`LawStage` is the Python law stage of one tick: the controllers of a
:class:`~dqspace.control.flight.law.StationKeepingLaw` (the one controller protocol) on the
estimate, with the references sampled at the tick, and what the records need written into
the tick's :data:`~dqspace.control.flight.law.LawWork`.  :class:`AllocationStage` is the
thrusters' allocation by a Python allocator (:class:`~dqspace.actuators.Allocator` with
``method="cvxpy"``), planning with the thrusters as they are now (:attr:`health`).
"""

from __future__ import annotations

import itertools
import traceback
import weakref
from collections import namedtuple
from typing import Any

import numpy as np

from ...multibody import frame_pose
from ..ik import IKStatus
from ..pd import State
from ..pose_error import pose_error

__all__ = [
    "ControllerError",
    "code_location",
    "PythonLaw",
    "PythonAllocation",
    "LawStage",
    "AllocationStage",
    "register",
    "call_law",
    "call_allocation",
    "take_error",
    "ALLOCATION_STATUS",
]

#: The law stage of a tick in Python: ``key`` the registered :class:`LawStage`.
PythonLaw = namedtuple("PythonLaw", ["key"])
#: The allocation stage of a tick in Python: ``key`` the registered :class:`AllocationStage`.
PythonAllocation = namedtuple("PythonAllocation", ["key"])

#: the allocation status codes recorded (``AllocationStatus`` values, in their order)
ALLOCATION_STATUS = ("optimal", "inaccurate", "best_effort", "solver_error")
_IK_CODE = {s: i for i, s in enumerate((IKStatus.CONVERGED, IKStatus.STALLED,
                                         IKStatus.MAX_ITERATIONS))}  # fmt: skip

_STAGES: dict[int, Any] = {}
_ERRORS: dict[int, BaseException] = {}
_KEYS = itertools.count(1)


class ControllerError(RuntimeError):
    """A user's controller (or allocator) raised while the flight software ran it: the
    error is in that code; the message says what it raised and where (file:line)."""


def code_location(exc: BaseException) -> str:
    """``file:line`` where ``exc`` was raised (the innermost frame of its traceback; a
    SyntaxError's own position)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    frames = traceback.extract_tb(exc.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "unknown location"


def _user_call(what, fn, *args):
    try:
        return fn(*args)
    except Exception as exc:  # the user's code: report it as theirs, with where
        raise ControllerError(
            f"{what} raised {type(exc).__name__}: {exc} ({code_location(exc)})"
        ) from exc


def register(stage, owner) -> int:
    """Register ``stage`` for as long as ``owner`` lives; returns its key."""
    key = next(_KEYS)
    _STAGES[key] = stage
    weakref.finalize(owner, _STAGES.pop, key, None)
    weakref.finalize(owner, _ERRORS.pop, key, None)
    return key


def call_law(key, t, q, v, wrench, feedforward, reaction, comp, tau, ee_dq, ee_log, ik_info):
    """The registered law stage ``key`` at the tick ``t`` (called from compiled code);
    returns 0, or 1 when it raised (the exception is kept for :func:`take_error`)."""
    try:
        _STAGES[key].step(t, q, v, wrench, feedforward, reaction, comp, tau, ee_dq, ee_log, ik_info)
    except BaseException as exc:  # Ctrl-C included: handed to the caller of the loop
        _ERRORS[key] = exc
        return 1
    return 0


def call_allocation(key, demand, sigma, alloc_info):
    """The registered allocation stage ``key`` (called from compiled code); returns 0, or 1
    when it raised (kept for :func:`take_error`)."""
    try:
        _STAGES[key].step(demand, sigma, alloc_info)
    except BaseException as exc:
        _ERRORS[key] = exc
        return 1
    return 0


def take_error(key) -> BaseException | None:
    """The exception the stage ``key`` raised in the compiled tick (compiled code cannot
    carry it: the tick returns a status and the exception waits here), or None; cleared."""
    return _ERRORS.pop(key, None)


class LawStage:
    """The controllers of one tick in Python (module docstring).

    Parameters
    ----------
    law : :class:`~dqspace.control.flight.law.StationKeepingLaw`
    trajectory : the end-effector reference, ``trajectory(t)`` (relative to the base)
    base_reference : the base reference (a reference, or a callable of t)
    model : the controller model (the end-effector pose when the arm controller reports
        no task error)
    ee_frame : the end-effector frame of ``model``
    """

    def __init__(self, law, trajectory, base_reference, model, ee_frame):
        self.law, self.trajectory, self.base_reference = law, trajectory, base_reference
        self.model, self.ee_frame = model, ee_frame

    def step(self, t, q, v, wrench, feedforward, reaction, comp, tau, ee_dq, ee_log, ik_info):
        ref = self.trajectory(t)
        b = self.base_reference
        base_ref = b(t) if callable(b) else b
        state = State(np.array(q), np.array(v))
        out = _user_call(f"the controllers at t = {t:.3f} s", self.law, t, state, base_ref, ref)
        e_ee = getattr(out.arm_command, "task_error", None)
        if e_ee is None:
            q_at_base = np.array(q, dtype=float)
            q_at_base[:8] = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            e_ee = pose_error(frame_pose(self.model, q_at_base, self.ee_frame), ref.pose)
        wrench[:] = out.wrench
        feedforward[:] = out.feedforward
        reaction[:] = out.reaction
        comp[:] = getattr(out, "compensation", 0.0)
        tau[:] = out.arm_tau
        ee_dq[:] = e_ee.dq
        ee_log[:] = e_ee.log
        ik = getattr(out.arm_command, "ik", None)
        ik_info[:] = (0.0, 0.0) if ik is None else (_IK_CODE[ik.status], ik.iterations)


class AllocationStage:
    """The thrusters' allocation by a Python ``allocator`` (module docstring); ``health``
    the thruster set as it is now (the runner sets it when a fault happens)."""

    def __init__(self, allocator, health):
        self.allocator, self.health = allocator, health

    def step(self, demand, sigma, alloc_info):
        a = self.allocator
        res = _user_call(
            "the allocator", lambda: a.allocate(np.array(demand[: a.n_rows]), thrusters=self.health)
        )
        sigma[:] = res.sigma
        alloc_info[0] = ALLOCATION_STATUS.index(res.status.value)
        alloc_info[1] = 0.0
