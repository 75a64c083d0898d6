"""The controllers of one control tick, composed once: arm law, base law, arm torques.

Every controller in dqspace follows one protocol::

    command = controller(t, state, reference, **extra)

``state`` a :class:`~dqspace.control.pd.State` (q, v) of the *controller model* (base and
arm, the momentum devices locked into the base), ``reference`` what the controller tracks
(a :class:`~dqspace.control.trajectories.PoseReference`, or a
:class:`~dqspace.control.trajectories.JointReference` for a joint-space law).

* A **base controller** is called with ``arm_acc=`` (the arm's planned joint accelerations,
  or None for no feedforward) and returns an object with ``wrench`` (6,) ``[f, tau]`` [N,
  N m] in base axes; ``feedforward`` (6,) when it has one; ``compensation`` (6,) when
  part of the wrench cancels the law's estimate of an external wrench (a disturbance
  observer's ``-d^``).  Built-in:
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
3. ``tau = arm.torque(state, arm_cmd.acc, base_force=swap(wrench - compensation))``: the
   base accelerates under the commanded wrench less the part that cancels the estimated
   disturbance (the disturbance takes that part); without it, under a constant
   disturbance the arm's torques would deflect the joints and feed a phantom reaction
   forward.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit, types
from numba.extending import overload
from numpy.typing import NDArray

from ...dq import swap
from ..arm import (
    ArmCommand,
    ArmController,
    ArmLawParams,
    NoArm,
    joint_acceleration_kernel,
    joint_reference_kernel,
    joint_torque_kernel,
    task_error_kernel,
)
from ..base import (
    BaseCommand,
    BaseController,
    BaseLawParams,
    pd_base_law_kernel,
    reaction_kernel,
)
from ..ik import IK_STATUSES, LIMIT_TOL, IKResult
from ..multi_arm import MultiArmController
from ..pd import PDGains, State, checked_state
from ..pose_error import PoseError
from ..reactionless import (
    ReactionlessArmController,
    ReactionlessParams,
    reactionless_reference_kernel,
)
from ..trajectories import JointReference

__all__ = [
    "StationKeepingLaw",
    "LawOutput",
    "LawWork",
    "law_work",
    "station_keeping_kernel",
    "base_only_kernel",
    "arms_kernel",
    "register_base_law",
    "BASE_LAWS",
]

#: The base laws the compiled tick runs: controller class -> its kernel (see
#: :func:`register_base_law`).
BASE_LAWS: dict = {}


def register_base_law(
    controller_class, params_class, kernel, *, compensation=None, feedforward_is_reaction=True
) -> None:
    """Make ``controller_class`` a base law the compiled tick runs.

    ``controller_class`` follows the base controller protocol (``base(t, state, reference,
    *, arm_acc=None) -> command`` with ``wrench`` and ``feedforward``) and has
    ``kernel_params()`` returning a ``params_class`` (a named tuple of arrays and numbers
    holding at least the controller model's ``ints``, ``reals``, ``gravity``) and
    ``kernel_state()`` returning the law's state carried from tick to tick (arrays it
    advances in place, or None).  ``kernel`` is compiled::

        kernel(P, state, t, q, v, pose, twist, acc, use_ff, arm_acc,
               wrench, fb, ff, e, e_log, e_twist)

    with the base's state in ``q[:8]``, ``v[:6]`` (controller model), its reference
    ``pose`` (8,), ``twist``, ``acc`` (6,) (inertial), ``use_ff`` (bool) and the arm's
    planned joint accelerations ``arm_acc``; it writes the wrench ``[f, tau]`` (6,), its
    feedback and feedforward parts, and the pose error ``e`` (8,), ``e_log``, ``e_twist``
    (6,).  ``compensation`` (compiled, optional), ``compensation(P, state, out)``, writes
    the part of the last wrench that cancels the law's estimate of an external wrench
    (6,) (none: zeros); the arm's torques assume the base accelerates under the wrench
    without it.  ``feedforward_is_reaction`` (default True): the law's feedforward is the
    arm's reaction negated (P47), and the tick records it so; False (a law that does not
    cancel the reaction, e.g. the centre-of-mass hold): the tick computes the reaction from
    the inverse dynamics, as without feedforward.  Only the exact class runs compiled (a
    user's subclass runs in Python).
    """
    BASE_LAWS[controller_class] = (params_class, kernel, compensation)
    if not feedforward_is_reaction:
        _FEEDFORWARD_NOT_REACTION.add(params_class)


#: The params classes of the registered base laws whose feedforward is not the arm's
#: reaction (:func:`register_base_law`).
_FEEDFORWARD_NOT_REACTION: set = set()


def _feedforward_is_reaction(P):
    raise TypeError("compiled only: whether a base law's feedforward is the arm's reaction")


@overload(_feedforward_is_reaction)
def _feedforward_is_reaction_typed(P):
    if isinstance(P, types.BaseNamedTuple):
        if P.instance_class in _FEEDFORWARD_NOT_REACTION:
            return lambda P: False
        return lambda P: True
    return None


def _base_law(P, state, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, el, et):
    raise TypeError("compiled only: the base law stage of station_keeping_kernel")


def _stage(kernel):
    """The base-law stage calling ``kernel`` (a registered law's)."""

    def impl(P, state, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, el, et):
        kernel(P, state, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, el, et)

    return impl


@overload(_base_law)
def _base_law_typed(
    P, state, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, el, et
):
    if isinstance(P, types.BaseNamedTuple):
        for params_class, kernel, _ in BASE_LAWS.values():
            if P.instance_class is params_class:
                return _stage(kernel)
    return None


def _base_compensation(P, state, out):
    raise TypeError("compiled only: the base law's compensation in station_keeping_kernel")


def _no_compensation(P, state, out):
    out[:] = 0.0


def _compensation_stage(kernel):
    def impl(P, state, out):
        kernel(P, state, out)

    return impl


@overload(_base_compensation)
def _base_compensation_typed(P, state, out):
    if isinstance(P, types.BaseNamedTuple):
        for params_class, _, kernel in BASE_LAWS.values():
            if P.instance_class is params_class:
                return _no_compensation if kernel is None else _compensation_stage(kernel)
    return None


def _arm_reference(A, seed, q, v, pose, twist, acc, q_r, v_r, a_r, e, J):
    raise TypeError("compiled only: the arm law's references in station_keeping_kernel")


@overload(_arm_reference)
def _arm_reference_typed(A, seed, q, v, pose, twist, acc, q_r, v_r, a_r, e, J):
    """The arm law's joint references, by the type of its parameters: the IK
    (:data:`~dqspace.control.arm.ArmLawParams`) or the reaction null space
    (:data:`~dqspace.control.reactionless.ReactionlessParams`, at the measured state)."""
    if isinstance(A, types.BaseNamedTuple):
        if A.instance_class is ReactionlessParams:

            def reactionless(A, seed, q, v, pose, twist, acc, q_r, v_r, a_r, e, J):
                return reactionless_reference_kernel(
                    A, seed, q, v, pose, twist, acc, q_r, v_r, a_r, e, J
                )

            return reactionless
        if A.instance_class is ArmLawParams:

            def ik(A, seed, q, v, pose, twist, acc, q_r, v_r, a_r, e, J):
                return joint_reference_kernel(A, seed, pose, twist, acc, q_r, v_r, a_r, e, J)

            return ik
    return None


#: The arrays one tick of :func:`station_keeping_kernel` writes (:func:`law_work` makes
#: them): the base ``wrench``, ``feedback``, ``feedforward``, ``reaction`` (6,) ``[f,
#: tau]`` [N, N m] and the law's ``compensation`` (6,) (:func:`register_base_law`); the
#: arm's ``tau``, ``acc`` (n,) and ``base_acc`` (6,); the joint references ``q_r``,
#: ``v_r``, ``a_r`` and errors ``joint_err``, ``joint_rate_err`` (n,); the IK residual
#: ``ik_e`` (6,), Jacobian ``J`` (6, n) and ``ik_info`` (2,) (status code, trial steps);
#: the end-effector error ``ee_dq`` (8,), ``ee_log``, ``ee_twist`` (6,); the base error
#: ``base_dq`` (8,), ``base_log``, ``base_twist`` (6,).
LawWork = namedtuple(
    "LawWork",
    [
        "wrench", "feedback", "feedforward", "reaction", "compensation", "tau", "acc",
        "base_acc", "q_r", "v_r", "a_r", "joint_err", "joint_rate_err", "ik_e", "J",
        "ik_info", "ee_dq", "ee_log", "ee_twist", "base_dq", "base_log", "base_twist",
    ],
)  # fmt: skip


def law_work(n: int) -> LawWork:
    """Fresh :data:`LawWork` arrays for an arm of n joints."""
    sizes = {"tau": n, "acc": n, "q_r": n, "v_r": n, "a_r": n, "joint_err": n}
    sizes.update(joint_rate_err=n, ik_e=6, J=(6, n), ik_info=2, ee_dq=8, base_dq=8)
    return LawWork(*(np.zeros(sizes.get(f, 6)) for f in LawWork._fields))


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
    compensation : (6,) the part of ``wrench`` that cancels the base law's estimate of an
        external wrench (zeros without one; :attr:`BaseCommand.compensation
        <dqspace.control.base.BaseCommand.compensation>`)
    """

    wrench: NDArray[np.float64]
    arm_tau: NDArray[np.float64]
    feedforward: NDArray[np.float64]
    reaction: NDArray[np.float64]
    base_command: Any
    arm_command: Any
    compensation: NDArray[np.float64] = field(default_factory=lambda: np.zeros(6))


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
        if self.compiled:
            return self._compiled(t, state, base_reference, arm_reference)
        arm_cmd = self.arm(t, state, arm_reference)
        acc = getattr(arm_cmd, "acc", None)
        ff_acc = acc if (self.feedforward and acc is not None) else None
        base_cmd = self.base(t, state, base_reference, arm_acc=ff_acc)
        wrench = np.asarray(base_cmd.wrench, dtype=float)
        if wrench.shape != (6,):
            raise ValueError(f"the base controller's wrench must be (6,), got {wrench.shape}")
        ff = getattr(base_cmd, "feedforward", None)
        ff = np.zeros(6) if ff is None else np.asarray(ff, dtype=float)
        if ff_acc is not None and getattr(self.base, "feedforward_is_reaction", True):
            reaction = -ff
        elif acc is not None and self._reaction is not None:
            reaction = -self._reaction(state, acc)
        else:
            reaction = np.zeros(6)
        comp = getattr(base_cmd, "compensation", None)
        if comp is not None:
            comp = np.asarray(comp, dtype=float)
            if comp.shape != (6,):
                raise ValueError(
                    f"the base controller's compensation must be (6,), got {comp.shape}"
                )
        if self._torque is not None and acc is not None:
            # computed torque with the base acceleration the commanded base wrench causes
            # (zero when the base holds; essential for a light or uncontrolled base), less
            # the part that cancels an estimated disturbance (the disturbance takes it)
            u = wrench if comp is None else wrench - comp
            tau, _ = self._torque(state, acc, base_force=swap(u))
        else:
            tau = np.asarray(arm_cmd.tau, dtype=float)
        comp = np.zeros(6) if comp is None else comp
        tau = np.asarray(tau, dtype=float)
        return LawOutput(wrench, tau, ff, reaction, base_cmd, arm_cmd, comp)

    @property
    def compiled(self) -> bool:
        """True when both controllers are the built-in ones (:class:`ArmController`,
        :class:`~dqspace.control.reactionless.ReactionlessArmController`, or
        :class:`~dqspace.control.arm.NoArm` for a system without an arm, and a registered
        base law): the tick then runs as :func:`station_keeping_kernel` (or
        :func:`base_only_kernel`)."""
        arms = (ArmController, ReactionlessArmController, NoArm, MultiArmController)
        return type(self.arm) in arms and type(self.base) in BASE_LAWS

    def _compiled(self, t, state, base_reference, arm_reference):
        if type(self.arm) is NoArm:
            q, v = checked_state(self.base.model, state)
            w = law_work(0)
            base_only_kernel(
                self.base.kernel_params(), self.base.kernel_state(), self.feedforward, t, q, v,
                base_reference.pose, base_reference.twist, base_reference.acc, w,
            )  # fmt: skip
            return LawOutput(
                w.wrench.copy(), w.tau.copy(), w.feedforward.copy(), w.reaction.copy(),
                BaseCommand(
                    wrench=w.wrench.copy(), feedback=w.feedback.copy(),
                    feedforward=w.feedforward.copy(),
                    error=PoseError(w.base_dq.copy(), w.base_log.copy(), w.base_twist.copy()),
                    compensation=w.compensation.copy(),
                ),
                self.arm(t, state), w.compensation.copy(),
            )  # fmt: skip
        q, v = self.arm.law._state(state)
        w = law_work(self.arm.law.n)
        self.arm.seed = np.array(self.arm.seed, dtype=float)
        if type(self.arm) is MultiArmController:  # arm_reference: one per arm, in order
            refs = np.concatenate([np.r_[r.pose, r.twist, r.acc] for r in arm_reference])
            arms_kernel(
                self.arm.kernel_params(), self.arm.seed, self.base.kernel_params(),
                self.base.kernel_state(), self.feedforward, t, q, v, refs, base_reference.pose,
                base_reference.twist, base_reference.acc, w,
            )  # fmt: skip
            return law_output(w, self.arm.all_params())
        station_keeping_kernel(
            self.arm.kernel_params(), self.arm.seed, self.base.kernel_params(),
            self.base.kernel_state(), self.feedforward, t, q, v, arm_reference.pose,
            arm_reference.twist, arm_reference.acc, base_reference.pose, base_reference.twist,
            base_reference.acc, w,
        )  # fmt: skip
        return law_output(w, self.arm.kernel_params())


def law_output(w: LawWork, P) -> LawOutput:
    """A :class:`LawOutput` (with the built-in controllers' commands) from a tick's
    :data:`LawWork`; ``P`` the arm's ``ArmLawParams`` (for the joints at a limit)."""
    ik = IKResult(
        w.q_r.copy(), IK_STATUSES[int(w.ik_info[0])], w.ik_e.copy(), int(w.ik_info[1]),
        (w.q_r <= P.lo + LIMIT_TOL) | (w.q_r >= P.hi - LIMIT_TOL), w.J.copy(),
    )  # fmt: skip
    task = PoseError(w.ee_dq.copy(), w.ee_log.copy(), w.ee_twist.copy())
    arm_cmd = ArmCommand(
        tau=w.tau.copy(), acc=w.acc.copy(), base_acc=w.base_acc.copy(),
        joint_reference=JointReference(w.q_r.copy(), w.v_r.copy(), w.a_r.copy()),
        joint_error=w.joint_err.copy(), task_error=task, ik=ik,
    )  # fmt: skip
    base_err = PoseError(w.base_dq.copy(), w.base_log.copy(), w.base_twist.copy())
    base_cmd = BaseCommand(
        wrench=w.wrench.copy(), feedback=w.feedback.copy(), feedforward=w.feedforward.copy(),
        error=base_err, compensation=w.compensation.copy(),
    )  # fmt: skip
    return LawOutput(
        w.wrench.copy(), w.tau.copy(), w.feedforward.copy(), w.reaction.copy(), base_cmd,
        arm_cmd, w.compensation.copy(),
    )  # fmt: skip


@njit(cache=True)
def station_keeping_kernel(A, seed, B, base_state, feedforward, t, q, v, arm_pose, arm_twist,
                           arm_acc, base_pose, base_twist, base_acc, w):  # fmt: skip
    """One tick of :class:`StationKeepingLaw` with the built-in controllers, compiled.

    ``A`` the arm's ``ArmLawParams`` (or ``ReactionlessParams``), ``seed`` (n,) its IK
    warm start (advanced), ``B`` the base's ``BaseLawParams``; ``q``, ``v`` the controller
    model's state; the end-effector reference (relative to the base) and the base reference
    (inertial), each a pose (8,), twist and acceleration (6,).  Writes every array of ``w``
    (:data:`LawWork`):

    1. joint references by IK (or, for a
       :class:`~dqspace.control.reactionless.ReactionlessArmController`, in the reaction
       null space at the measured state) and the planned joint accelerations (the arm law);
    2. the base wrench: dual PD plus, with ``feedforward``, the arm's reaction (P46, P47);
       the reaction is computed either way;
    3. the arm torques with the base acceleration the commanded base wrench causes, less
       the law's compensation of an estimated disturbance;
    4. the end-effector's pose and twist error (recorded).
    """
    code, it = _arm_reference(
        A, seed, q, v, arm_pose, arm_twist, arm_acc, w.q_r, w.v_r, w.a_r, w.ik_e, w.J
    )
    w.ik_info[0] = code
    w.ik_info[1] = it
    joint_acceleration_kernel(
        A.kp, A.kd, A.q0, A.v0, q, v, w.q_r, w.v_r, w.a_r, w.acc, w.joint_err, w.joint_rate_err
    )
    _base_part(B, base_state, feedforward, t, q, v, base_pose, base_twist, base_acc, w)
    u_b = np.empty(6)  # swap(wrench - compensation): the base's generalized force [tau, f]
    for j in range(3):
        u_b[j] = w.wrench[3 + j] - w.compensation[3 + j]
        u_b[3 + j] = w.wrench[j] - w.compensation[j]
    joint_torque_kernel(
        A.ints, A.reals, A.gravity, A.floating, A.v0, q, v, w.acc, True, u_b, w.tau, w.base_acc
    )
    task_error_kernel(A, q, v, arm_pose, arm_twist, w.ee_dq, w.ee_log, w.ee_twist)


@njit(cache=True)
def _base_part(B, base_state, feedforward, t, q, v, base_pose, base_twist, base_acc, w):
    """The base's part of a law tick (:func:`station_keeping_kernel` and
    :func:`arms_kernel` step 2, and all of :func:`base_only_kernel`): the base law's wrench
    with ``w.acc`` the planned joint accelerations, the arms' reaction (the feedforward
    negated, or from the inverse dynamics without feedforward or when the law's feedforward
    is not the reaction, :func:`register_base_law`), and the law's compensation
    of an estimated disturbance."""
    _base_law(
        B, base_state, t, q, v, base_pose, base_twist, base_acc, feedforward, w.acc, w.wrench,
        w.feedback, w.feedforward, w.base_dq, w.base_log, w.base_twist,
    )  # fmt: skip
    if feedforward and _feedforward_is_reaction(B):
        for j in range(6):
            w.reaction[j] = -w.feedforward[j]
    else:
        reaction_kernel(B.ints, B.reals, B.gravity, q, v, np.zeros(6), w.acc, w.reaction)
    _base_compensation(B, base_state, w.compensation)


@njit(cache=True)
def base_only_kernel(B, base_state, feedforward, t, q, v, base_pose, base_twist, base_acc, w):
    """One tick of :class:`StationKeepingLaw` for a system without an arm (its arm
    controller :class:`~dqspace.control.arm.NoArm`), compiled: the base law alone, as in
    :func:`station_keeping_kernel` with no joint (no inverse kinematics, no joint torque).
    ``B`` the base's ``BaseLawParams``, ``q``, ``v`` the controller model's state (the base
    and its locked devices), the base reference (inertial) a pose (8,), twist and
    acceleration (6,).  Writes the base's arrays of ``w`` (:data:`LawWork` of 0 joints): the
    wrench (with ``feedforward``: the reference acceleration carried into the base frame and
    the base's own gyroscopic term), its parts, the "reaction" (its feedforward negated, as
    for an arm at rest), the compensation; the end-effector error is the identity."""
    _base_part(B, base_state, feedforward, t, q, v, base_pose, base_twist, base_acc, w)
    w.ee_dq[:] = 0.0
    w.ee_dq[0] = 1.0
    w.ee_log[:] = 0.0
    w.ee_twist[:] = 0.0


@njit(cache=True)
def arms_kernel(As, seed, B, base_state, feedforward, t, q, v, arm_ref, base_pose, base_twist,
                base_acc, w):  # fmt: skip
    """One tick of :class:`StationKeepingLaw` for several arms
    (:class:`~dqspace.control.multi_arm.MultiArmController`), compiled: as
    :func:`station_keeping_kernel`, with

    1. each arm's joint references by the inverse kinematics of its own end-effector
       reference on its own joints, and its planned joint accelerations (``As`` a tuple of
       each arm's ``ArmLawParams``, its joints at ``v0``; ``seed`` (n,) every arm's IK warm
       start, arm after arm; ``arm_ref`` (20 A,) each arm's pose (8,), twist, acceleration
       (6,) relative to the base, arm after arm);
    2. the base wrench with the reaction of all the arms (the planned accelerations of
       every joint);
    3. the torques of every joint from the inverse dynamics of the whole tree;
    4. the first arm's end-effector error (the others' are measured from the recorded
       states).

    ``w`` (:data:`LawWork` of all n joints): the IK's residual and status are the first
    arm's; ``J`` holds each arm's Jacobian in its own columns."""
    off = 0
    w.J[:, :] = 0.0
    for k in range(len(As)):
        A = As[k]
        n = A.lo.shape[0]
        r = 20 * k
        e = np.empty(6)
        J = np.empty((6, n))
        sk = seed[off : off + n]
        q_r, v_r, a_r = np.empty(n), np.empty(n), np.empty(n)
        code, it = joint_reference_kernel(
            A, sk, arm_ref[r : r + 8], arm_ref[r + 8 : r + 14], arm_ref[r + 14 : r + 20], q_r,
            v_r, a_r, e, J,
        )  # fmt: skip
        if k == 0:
            w.ik_e[:] = e
            w.ik_info[0] = code
            w.ik_info[1] = it
        acc, err, rate_err = np.empty(n), np.empty(n), np.empty(n)
        joint_acceleration_kernel(A.kp, A.kd, A.q0, A.v0, q, v, q_r, v_r, a_r, acc, err, rate_err)
        for j in range(n):
            w.q_r[off + j] = q_r[j]
            w.v_r[off + j] = v_r[j]
            w.a_r[off + j] = a_r[j]
            w.acc[off + j] = acc[j]
            w.joint_err[off + j] = err[j]
            w.joint_rate_err[off + j] = rate_err[j]
            for i in range(6):
                w.J[i, off + j] = J[i, j]
        off += n
    _base_part(B, base_state, feedforward, t, q, v, base_pose, base_twist, base_acc, w)
    u_b = np.empty(6)  # swap(wrench - compensation): the base's generalized force [tau, f]
    for j in range(3):
        u_b[j] = w.wrench[3 + j] - w.compensation[3 + j]
        u_b[3 + j] = w.wrench[j] - w.compensation[j]
    A0 = As[0]
    joint_torque_kernel(
        A0.ints, A0.reals, A0.gravity, A0.floating, A0.v0, q, v, w.acc, True, u_b, w.tau,
        w.base_acc,
    )  # fmt: skip
    task_error_kernel(A0, q, v, arm_ref[:8], arm_ref[8:14], w.ee_dq, w.ee_log, w.ee_twist)


register_base_law(BaseController, BaseLawParams, pd_base_law_kernel)
