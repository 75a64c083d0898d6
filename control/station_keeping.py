"""The station-keeping control law as a state feedback (for closed-loop linearisation).

:class:`StationKeepingFeedback` composes the controllers of :mod:`dqspace.control.base`
and :mod:`dqspace.control.arm` into one ``k(t, q, v) -> tau`` with ideal actuators: the
law of one control tick of the scenario runner, in the controller signature of
:func:`dqspace.multibody.simulate_rk4` and :func:`dqspace.control.linearize`.  See
``docs/linearization.md``.  :class:`BaseFeedback` is a base law alone in the same signature
(a base without an arm, or with its other joints free).
"""

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import swap
from ._checks import finite_vector, unit_pose
from .arm import JointComputedTorque
from .base import BaseController
from .flight.law import StationKeepingLaw
from .pd import State
from .reactionless import ReactionlessArmController
from .trajectories import JointReference, PoseReference

__all__ = ["StationKeepingFeedback", "BaseFeedback"]


class StationKeepingFeedback:
    """The station-keeping control law of one control tick as a state feedback
    ``k(t, q, v) -> tau`` (nv,), with ideal actuators (the commanded base wrench is applied).

    The composition is :class:`~dqspace.control.flight.law.StationKeepingLaw`, the one
    the scenario runner (:mod:`dqspace.scenarios.runner`) calls each tick:

    1. arm: ``a_m = theta_r'' + k_d (theta_r' - theta') + k_p (theta_r - theta)``
       (:meth:`JointComputedTorque.acceleration`, a fixed joint reference: the arm
       joints held, or followed along a joint trajectory);
    2. base: dual PD (P46) + the arm-reaction feedforward for ``a_m`` (P47)
       (:class:`~dqspace.control.BaseController`; ``feedforward=False``: PD only);
    3. arm torques by computed torque with the base acceleration the commanded
       base wrench causes (:meth:`JointComputedTorque.torque` with ``base_force``),
       so the joint errors obey ``e'' + k_d e' + k_p e = 0``.

    ``tau = [swap(base wrench), arm torques]``.

    **A base law with states** (:class:`~dqspace.control.BasePIDController`'s integral,
    :class:`~dqspace.control.BaseDOBController`'s observer): calling the feedback advances
    them by one control period (call it once per period, as
    :func:`~dqspace.multibody.simulate_rk4` does with ``control_every``: the discrete law
    of the runner).  For linearisation the feedback declares them (``law_states``, their
    names; :meth:`law_states0`; :meth:`law_rates`, the law at given states and their
    continuous-time rates, nothing advanced): :func:`~dqspace.control.linearize` adds them
    to the state vector.

    Parameters
    ----------
    base : BaseController (its model is the one linearised)
    arm : JointComputedTorque on the same model (e.g. ``ArmController.law``), or a
        :class:`~dqspace.control.reactionless.ReactionlessArmController` (a state feedback
        of its own: its joint references follow from the measured state and the task)
    base_reference : PoseReference, or a (8,) pose held with zero twist
    joint_reference : JointReference, or (n,) joint angles held [rad]; for a
        ReactionlessArmController the end-effector's task relative to the base, a
        PoseReference or a (8,) pose held
    feedforward : bool, the arm-reaction feedforward of (P47)
    """

    def __init__(
        self,
        base: BaseController,
        arm: JointComputedTorque,
        base_reference: PoseReference | ArrayLike,
        joint_reference: JointReference | ArrayLike,
        *,
        feedforward: bool = True,
    ) -> None:
        if not isinstance(base, BaseController):
            raise ValueError(f"base must be a BaseController, got {type(base).__name__}")
        reactionless = type(arm) is ReactionlessArmController
        if not (reactionless or isinstance(arm, JointComputedTorque)):
            raise ValueError(
                "arm must be a JointComputedTorque or a ReactionlessArmController, got "
                f"{type(arm).__name__}"
            )
        if arm.model is not base.model:
            raise ValueError("base and arm controllers must act on the same model")
        self.model = base.model
        self.base, self.arm = base, arm
        if not isinstance(base_reference, PoseReference):
            pose = unit_pose(base_reference, "base_reference")
            base_reference = PoseReference(pose, np.zeros(6), np.zeros(6))
        if reactionless:  # the end-effector task relative to the base: a pose, held or moving
            if not isinstance(joint_reference, PoseReference):
                pose = unit_pose(joint_reference, "joint_reference")
                joint_reference = PoseReference(pose, np.zeros(6), np.zeros(6))
        elif not isinstance(joint_reference, JointReference):
            qj = finite_vector(joint_reference, "joint_reference", arm.n)
            joint_reference = JointReference(qj, np.zeros(arm.n), np.zeros(arm.n))
        if not reactionless and joint_reference.q.shape != (arm.n,):
            raise ValueError(
                f"joint_reference must have {arm.n} joints, got {joint_reference.q.shape}"
            )
        self.base_reference = base_reference
        self.joint_reference = joint_reference
        self.feedforward = bool(feedforward)
        # the runner's composition of one tick (dqspace.control.flight.law)
        self.law = StationKeepingLaw(base, arm, feedforward=feedforward)
        self.law_states = tuple(getattr(base, "law_states", ()))
        if self.law_states:  # the same composition with the base law at given states
            self._at = _BaseAtStates(base)
            self._law_at = StationKeepingLaw(self._at, arm, feedforward=feedforward)

    def __call__(self, t: float, q: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
        out = self.law(t, State(q, v), self.base_reference, self.joint_reference)
        return np.concatenate([swap(out.wrench), out.arm_tau])

    def law_states0(self, t: float, q: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
        """The base law's states at an equilibrium without disturbance at ``(q, v)`` (nz,)
        (zero integral; the observer's momentum integral equal to the momentum)."""
        if not self.law_states:
            return np.zeros(0)
        return self.base.law_states0(State(q, v))

    def law_rates(
        self, t: float, q: ArrayLike, v: ArrayLike, z: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(tau (nv,), z' (nz,))``: the feedback with the base law's states at ``z`` and
        their continuous-time rates (the base law's ``law_rates``); nothing advanced."""
        if not self.law_states:
            raise ValueError("the base law has no states of its own: call the feedback")
        self._at.z = z
        out = self._law_at(t, State(q, v), self.base_reference, self.joint_reference)
        return np.concatenate([swap(out.wrench), out.arm_tau]), self._at.z_dot


class _BaseAtStates:
    """A base law with states evaluated at given states ``z`` (its ``law_rates``): the
    base controller of :meth:`StationKeepingFeedback.law_rates`; ``z_dot`` the last rates."""

    def __init__(self, base):
        self.base, self.model = base, base.model
        self.feedforward = base.feedforward
        self.z = self.z_dot = None

    def __call__(self, t, state, reference, *, arm_acc=None):
        cmd, self.z_dot = self.base.law_rates(t, state, reference, self.z, arm_acc=arm_acc)
        return cmd


class BaseFeedback:
    """A base law alone as a state feedback ``k(t, q, v) -> tau`` (nv,): the commanded base
    wrench on the base's six velocities (``swap(wrench)``), nothing on the other joints.

    For a base without an arm, or to study the base law with the arm's joints free.  A law
    with states (:class:`~dqspace.control.BasePIDController`,
    :class:`~dqspace.control.BaseDOBController`) declares them for
    :func:`~dqspace.control.linearize` as :class:`StationKeepingFeedback` does
    (``law_states``, :meth:`law_states0`, :meth:`law_rates`).

    Parameters
    ----------
    base : BaseController (its model is the one fed back)
    reference : PoseReference, or a (8,) pose held with zero twist
    """

    def __init__(self, base: BaseController, reference: PoseReference | ArrayLike) -> None:
        if not isinstance(base, BaseController):
            raise ValueError(f"base must be a BaseController, got {type(base).__name__}")
        if not isinstance(reference, PoseReference):
            pose = unit_pose(reference, "reference")
            reference = PoseReference(pose, np.zeros(6), np.zeros(6))
        self.base, self.model, self.reference = base, base.model, reference
        self.law_states = tuple(getattr(base, "law_states", ()))

    def _tau(self, wrench):
        tau = np.zeros(self.model.nv)
        tau[:6] = swap(wrench)
        return tau

    def __call__(self, t: float, q: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
        return self._tau(self.base(t, State(q, v), self.reference).wrench)

    def law_states0(self, t: float, q: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
        """The base law's states at an equilibrium without disturbance (nz,)."""
        if not self.law_states:
            return np.zeros(0)
        return self.base.law_states0(State(q, v))

    def law_rates(
        self, t: float, q: ArrayLike, v: ArrayLike, z: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(tau (nv,), z' (nz,))`` with the law's states at ``z``; nothing advanced."""
        if not self.law_states:
            raise ValueError("the base law has no states of its own: call the feedback")
        cmd, z_dot = self.base.law_rates(t, State(q, v), self.reference, z)
        return self._tau(cmd.wrench), z_dot
