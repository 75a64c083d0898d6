"""The station-keeping control law as a state feedback (for closed-loop linearisation).

:class:`StationKeepingFeedback` composes the controllers of :mod:`dqspace.control.base`
and :mod:`dqspace.control.arm` into one ``k(t, q, v) -> tau`` with ideal actuators: the
law of one control tick of the scenario runner, in the controller signature of
:func:`dqspace.multibody.simulate_rk4` and :func:`dqspace.control.linearize`.  See
``docs/linearization.md``.
"""

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import swap
from ._checks import finite_vector, unit_pose
from .arm import JointComputedTorque
from .base import BaseController
from .flight.law import StationKeepingLaw
from .pd import State
from .trajectories import JointReference, PoseReference

__all__ = ["StationKeepingFeedback"]


class StationKeepingFeedback:
    """The station-keeping control law of one control tick as a state feedback
    ``k(t, q, v) -> tau`` (nv,), with ideal actuators (the commanded base wrench is applied).

    The composition is :class:`~dqspace.control.flight_software.StationKeepingLaw`, the one
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

    Parameters
    ----------
    base : BaseController (its model is the one linearised)
    arm : JointComputedTorque on the same model (e.g. ``ArmController.law``)
    base_reference : PoseReference, or a (8,) pose held with zero twist
    joint_reference : JointReference, or (n,) joint angles held [rad]
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
        if not isinstance(arm, JointComputedTorque):
            raise ValueError(f"arm must be a JointComputedTorque, got {type(arm).__name__}")
        if arm.model is not base.model:
            raise ValueError("base and arm controllers must act on the same model")
        self.model = base.model
        self.base, self.arm = base, arm
        if not isinstance(base_reference, PoseReference):
            pose = unit_pose(base_reference, "base_reference")
            base_reference = PoseReference(pose, np.zeros(6), np.zeros(6))
        if not isinstance(joint_reference, JointReference):
            qj = finite_vector(joint_reference, "joint_reference", arm.n)
            joint_reference = JointReference(qj, np.zeros(arm.n), np.zeros(arm.n))
        if joint_reference.q.shape != (arm.n,):
            raise ValueError(
                f"joint_reference must have {arm.n} joints, got {joint_reference.q.shape}"
            )
        self.base_reference = base_reference
        self.joint_reference = joint_reference
        self.feedforward = bool(feedforward)
        # the runner's composition of one tick (dqspace.control.flight_software)
        self.law = StationKeepingLaw(base, arm, feedforward=feedforward)

    def __call__(self, t: float, q: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
        out = self.law(t, State(q, v), self.base_reference, self.joint_reference)
        return np.concatenate([swap(out.wrench), out.arm_tau])
