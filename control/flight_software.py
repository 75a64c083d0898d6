"""The controllers of one control tick, composed once: arm law, base law, arm torques.

Every controller in dqspace follows one protocol::

    command = controller(t, state, reference, **extra)

``state`` a :class:`~dqspace.control.pd.State` (q, v) of the *controller model* (base and
arm, the momentum devices locked into the base), ``reference`` what the controller tracks
(a :class:`~dqspace.control.trajectories.PoseReference`, or a
:class:`~dqspace.control.trajectories.JointReference` for a joint-space law).

* A **base controller** is called with ``arm_acc=`` (the arm's planned joint accelerations,
  or None for no feedforward) and returns an object with ``wrench`` (6,) ``[f, tau]`` [N,
  N m] in base axes; ``feedforward`` (6,) when it has one.  Built-in:
  :class:`~dqspace.control.BaseController` (dual PD, P46, + arm-reaction feedforward, P47).
* An **arm controller** is called with ``base_force=`` (None) and returns an object with
  ``tau`` (n,) joint torques; ``acc`` (n,) planned joint accelerations (fed forward to the
  base when present) and ``task_error`` (a PoseError, recorded) when it has them.  If it
  has a method ``torque(state, acc, base_force=None) -> (tau, base_acc)``, the torques are
  recomputed with the base acceleration the commanded base wrench causes.  Built-in:
  :class:`~dqspace.control.ArmController` (IK + joint computed torque),
  :class:`~dqspace.control.task_space.TaskSpaceController` (dual PD on the end-effector
  pose through the Jacobian), :class:`~dqspace.control.JointComputedTorque` (joint
  references).

:class:`StationKeepingLaw` is the composition of one tick, used by the scenario runner
and by :class:`~dqspace.control.StationKeepingFeedback` (the law as a state feedback, for
linearisation), so that both compute the same commands:

1. ``arm_cmd = arm(t, state, arm_reference)`` -- the planned joint accelerations;
2. ``base_cmd = base(t, state, base_reference, arm_acc=arm_cmd.acc)`` (``None`` without
   feedforward);
3. ``tau = arm.torque(state, arm_cmd.acc, base_force=base_cmd.generalized force)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..dq import swap
from .base import BaseController
from .pd import PDGains, State

__all__ = ["StationKeepingLaw", "LawOutput"]


@dataclass(frozen=True)
class LawOutput:
    """What one tick of :class:`StationKeepingLaw` commands.

    Attributes
    ----------
    wrench : (6,) base wrench ``[f, tau]`` [N, N m], base axes
    arm_tau : (n,) arm joint torques [N m]
    feedforward : (6,) the feedforward part of ``wrench`` (zeros without)
    reaction : (6,) the arm's planned reaction on the base (``-feedforward`` of the planned
        motion, computed whether or not it is fed forward) [N, N m]
    base_command, arm_command : the controllers' own outputs
    """

    wrench: NDArray[np.float64]
    arm_tau: NDArray[np.float64]
    feedforward: NDArray[np.float64]
    reaction: NDArray[np.float64]
    base_command: Any
    arm_command: Any


class StationKeepingLaw:
    """The base and arm controllers of one control tick (see the module docstring).

    Parameters
    ----------
    base : a base controller (e.g. :class:`~dqspace.control.BaseController`)
    arm : an arm controller (e.g. :class:`~dqspace.control.ArmController`)
    model : the controller model (for the arm's reaction when ``base`` has no
        ``feedforward`` method); default ``base.model``
    feedforward : bool, feed the arm's reaction forward to the base controller
    """

    def __init__(self, base: Any, arm: Any, *, model: Any = None, feedforward: bool = True):
        for name, c in (("base", base), ("arm", arm)):
            if not callable(c):
                raise ValueError(f"{name} controller must be callable, got {type(c).__name__}")
        self.base, self.arm = base, arm
        self.feedforward = bool(feedforward)
        model = getattr(base, "model", None) if model is None else model
        if hasattr(base, "feedforward"):
            self._reaction = base.feedforward
        elif model is not None:
            zero = PDGains(kp_rot=0.0, kd_rot=0.0, kp_trans=0.0, kd_trans=0.0)
            self._reaction = BaseController(model, zero).feedforward
        else:
            self._reaction = None
        self._torque = getattr(arm, "torque", None)

    def __call__(
        self, t: float, state: State, base_reference: Any, arm_reference: Any
    ) -> LawOutput:
        arm_cmd = self.arm(t, state, arm_reference)
        acc = getattr(arm_cmd, "acc", None)
        ff_acc = acc if (self.feedforward and acc is not None) else None
        base_cmd = self.base(t, state, base_reference, arm_acc=ff_acc)
        wrench = np.asarray(base_cmd.wrench, dtype=float)
        if wrench.shape != (6,):
            raise ValueError(f"the base controller's wrench must be (6,), got {wrench.shape}")
        ff = getattr(base_cmd, "feedforward", None)
        ff = np.zeros(6) if ff is None else np.asarray(ff, dtype=float)
        if ff_acc is not None:
            reaction = -ff
        elif acc is not None and self._reaction is not None:
            reaction = -self._reaction(state, acc)
        else:
            reaction = np.zeros(6)
        if self._torque is not None and acc is not None:
            # computed torque with the base acceleration the commanded base wrench causes
            # (zero when the base holds; essential for a light or uncontrolled base)
            tau, _ = self._torque(state, acc, base_force=swap(wrench))
        else:
            tau = np.asarray(arm_cmd.tau, dtype=float)
        return LawOutput(wrench, np.asarray(tau, dtype=float), ff, reaction, base_cmd, arm_cmd)
