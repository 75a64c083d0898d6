"""Arm control: task-space reference -> inverse kinematics -> joint-space computed torque.

Law (chosen over a task-space dual PD, see ``docs/control.md``):

1. Joint reference from the end-effector reference ``(q^_AD, w^_D, dw^_D)``
   given relative to the arm's root frame A (the base body of a floating
   model): ``theta_r`` by :func:`~dqspace.control.ik.solve_ik` (warm-started from
   the previous solution, joint limits respected);
   ``theta_r' = J^+ w^_D`` and ``theta_r'' = J^+ (dw^_D - J' theta_r')``, J the
   LOCAL Jacobian of the end-effector's joint columns at ``theta_r`` (the
   end-effector twist relative to the root, in its own frame; ``J' theta'`` from
   the forward acceleration recursion with the root at rest).  ``J^+`` is the
   minimum-norm right inverse; a joint within ``limit_margin`` of a limit that
   it would push further out is frozen (zero rate and acceleration).
2. Computed torque on the full floating model (P17-P23 recursion):
   ``a_m = theta_r'' + k_d (theta_r' - theta') + k_p (theta_r - theta)`` and
   ``tau_m = ID(q, v, [a_b; a_m])[6:]`` with the measured base pose and twist
   in (q, v).  ``a_b`` is the base acceleration the arm should expect:
   zero by default (the base controller holds the base and feeds forward the
   arm's reaction), or, given the base's generalized force ``u_b``, exactly
   ``a_b = M_bb^-1 (u_b - ID(q, v, [0; a_m])[:6])``; then the closed loop has
   ``theta'' = a_m`` exactly, so each joint error obeys
   ``e'' + k_d e' + k_p e = 0``.

Controllers share the call shape ``controller(t, state, reference) -> command``
(``state`` a :class:`~dqspace.control.pd.State`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..multibody import (
    Model,
    Reference,
    forward_kinematics,
    frame_jacobian,
    frame_pose,
    inverse_dynamics,
    mass_matrix,
)
from .ik import IKResult, arm_coordinates, right_inverse, solve_ik
from .pd import State
from .pose_error import PoseError, pose_error
from .trajectories import JointReference, PoseReference

__all__ = ["JointGains", "JointCommand", "JointComputedTorque", "ArmCommand", "ArmController"]


@dataclass(frozen=True)
class JointGains:
    """Gains of the joint-space computed-torque law (scalars broadcast to every joint).

    Attributes
    ----------
    kp : () or (n,) [1/s^2], position gain (``omega_n^2``)
    kd : () or (n,) [1/s], rate gain (``2 zeta omega_n``)

    Both finite and non-negative (``ValueError`` otherwise).
    """

    kp: np.ndarray
    kd: np.ndarray

    def __post_init__(self):
        for name in ("kp", "kd"):
            try:
                a = np.array(getattr(self, name), dtype=float)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{name} must be a number or a vector") from exc
            if a.ndim > 1:
                raise ValueError(f"{name} must be a scalar or a vector, got shape {a.shape}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{name} must be finite, got {a.tolist()}")
            if np.any(a < 0.0):
                raise ValueError(f"{name} must be non-negative, got {a.tolist()}")
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    @classmethod
    def from_natural_frequency(cls, omega_n: ArrayLike, zeta: ArrayLike = 1.0) -> JointGains:
        """``kp = omega_n^2``, ``kd = 2 zeta omega_n``: each joint error a damped oscillator."""
        if not (np.all(np.isfinite(omega_n)) and np.all(np.asarray(omega_n) > 0)):
            raise ValueError(f"omega_n must be positive and finite, got {omega_n}")
        w = np.asarray(omega_n, float)
        return cls(kp=w**2, kd=2.0 * np.asarray(zeta, float) * w)

    def resolved(self, n: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(kp, kd) as (n,) arrays; ValueError if a vector gain has another length."""
        out = []
        for name in ("kp", "kd"):
            a = getattr(self, name)
            if a.ndim == 1 and a.shape != (n,):
                raise ValueError(f"{name} has {a.shape[0]} entries but the arm has {n} joints")
            out.append(np.broadcast_to(a, (n,)))
        return tuple(out)


@dataclass(frozen=True)
class JointCommand:
    """Output of :class:`JointComputedTorque`.

    Attributes
    ----------
    tau : (n,) joint torques [N m] (forces [N] for prismatic joints)
    acc : (n,) commanded joint accelerations ``a_m`` [rad/s^2]
    base_acc : (6,) base acceleration assumed by the inverse dynamics
        (zero unless ``base_force`` was given; empty for a fixed base)
    error : (n,) ``theta_r - theta`` [rad]
    rate_error : (n,) ``theta_r' - theta'`` [rad/s]
    """

    tau: np.ndarray
    acc: np.ndarray
    base_acc: np.ndarray
    error: np.ndarray
    rate_error: np.ndarray


class JointComputedTorque:
    """Computed-torque tracking of joint references on a (floating) multibody model.

    Call ``law(t, state, reference, *, base_force=None) -> JointCommand`` with a
    :class:`~dqspace.control.trajectories.JointReference` of the arm joints.

    Parameters
    ----------
    model : Model, floating (the arm joints follow the FREE root) or fixed-base
    gains : JointGains
    """

    def __init__(self, model: Model, gains: JointGains) -> None:
        if not isinstance(gains, JointGains):
            raise ValueError(f"gains must be a JointGains, got {type(gains).__name__}")
        self.model = model
        self._q0, self._v0, self.n = arm_coordinates(model)
        self.kp, self.kd = gains.resolved(self.n)

    def _state(self, state):
        m = self.model
        q = np.asarray(state.q, float)
        v = np.asarray(state.v, float)
        if q.shape != (m.nq,) or v.shape != (m.nv,):
            raise ValueError(
                f"state must have q ({m.nq},) and v ({m.nv},), got {q.shape} and {v.shape}"
            )
        return q, v

    def acceleration(
        self, state: State, reference: JointReference
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Commanded joint accelerations ``a_m`` (n,) and the errors (position, rate)."""
        q, v = self._state(state)
        if reference.q.shape != (self.n,):
            raise ValueError(f"reference must have {self.n} joints, got {reference.q.shape}")
        e = reference.q - q[self._q0 :]
        de = reference.v - v[self._v0 :]
        return reference.a + self.kd * de + self.kp * e, e, de

    def torque(
        self, state: State, acc: ArrayLike, base_force: ArrayLike | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Joint torques (n,) that produce the joint accelerations ``acc``, and the base
        acceleration (6,) assumed: zero, or the one ``base_force`` ``[torque, force]`` causes."""
        m = self.model
        q, v = self._state(state)
        a = np.zeros(m.nv)
        a[self._v0 :] = acc
        tau = inverse_dynamics(m, q, v, a)
        if not m.floating:
            if base_force is not None:
                raise ValueError("base_force is only meaningful for a floating-base model")
            return tau, np.zeros(0)
        if base_force is None:
            return tau[6:], np.zeros(6)
        u_b = np.asarray(base_force, float)
        if u_b.shape != (6,) or not np.all(np.isfinite(u_b)):
            raise ValueError(f"base_force must be a finite (6,) [torque, force], got {u_b}")
        M = mass_matrix(m, q)
        a_b = np.linalg.solve(M[:6, :6], u_b - tau[:6])
        return tau[6:] + M[6:, :6] @ a_b, a_b

    def __call__(
        self,
        t: float,
        state: State,
        reference: JointReference,
        *,
        base_force: ArrayLike | None = None,
    ) -> JointCommand:
        acc, e, de = self.acceleration(state, reference)
        tau, a_b = self.torque(state, acc, base_force)
        return JointCommand(tau=tau, acc=acc, base_acc=a_b, error=e, rate_error=de)


@dataclass(frozen=True)
class ArmCommand:
    """Output of :class:`ArmController`.

    Attributes
    ----------
    tau : (n,) joint torques [N m]
    acc : (n,) commanded joint accelerations [rad/s^2] (what the base feedforward needs)
    base_acc : (6,) base acceleration assumed by the inverse dynamics
    joint_reference : JointReference, from the inverse kinematics
    joint_error : (n,) ``theta_r - theta`` [rad]
    task_error : PoseError, end-effector pose and twist error relative to its reference,
        in the end-effector frame (measured relative to the root frame A)
    ik : IKResult of this step's inverse kinematics
    """

    tau: np.ndarray
    acc: np.ndarray
    base_acc: np.ndarray
    joint_reference: JointReference
    joint_error: np.ndarray
    task_error: PoseError
    ik: IKResult


class ArmController:
    """End-effector tracking: IK references tracked by joint-space computed torque.

    Call ``arm(t, state, reference, *, base_force=None) -> ArmCommand`` with a
    :class:`~dqspace.control.trajectories.PoseReference` of the end-effector
    relative to the root frame A (the base body for a floating model).

    The IK is warm-started from the previous step's solution, kept in the
    attribute ``seed`` (n,) -- the one piece of state; set it (or build a new
    controller) to restart from another configuration.

    Parameters
    ----------
    model : Model
    gains : JointGains
    seed : (n,) initial joint positions for the first IK [rad]
    frame : str, the end-effector frame
    limits : (n, 2) joint limits [rad], optional (e.g. ``IIWA_JOINT_LIMITS``)
    ik_tol : float, IK tolerance [rad, m]
    ik_max_iterations : int
    limit_margin : float [rad], a joint this close to a limit counts as on it for the
        rate and acceleration references (frozen if they would push it out)
    posture : (n,) preferred joint positions [rad], optional: each IK call takes one
        null-space step toward it (see :func:`~dqspace.control.ik.solve_ik`), which stops
        the redundant arm from drifting toward its limits
    posture_gain : float in (0, 1], fraction of the posture error corrected per call
    """

    def __init__(
        self,
        model: Model,
        gains: JointGains,
        *,
        seed: ArrayLike,
        frame: str = "ee",
        limits: ArrayLike | None = None,
        ik_tol: float = 1e-10,
        ik_max_iterations: int = 50,
        limit_margin: float = 1e-3,
        posture: ArrayLike | None = None,
        posture_gain: float = 0.2,
    ) -> None:
        self.law = JointComputedTorque(model, gains)
        self.model = model
        self.frame = frame
        self.limits = None if limits is None else np.asarray(limits, float)
        self.ik_tol = float(ik_tol)
        self.ik_max_iterations = int(ik_max_iterations)
        if not (np.isfinite(limit_margin) and limit_margin >= 0):
            raise ValueError(f"limit_margin must be non-negative and finite, got {limit_margin}")
        self.limit_margin = float(limit_margin)
        seed = np.asarray(seed, float)
        if seed.shape != (self.law.n,) or not np.all(np.isfinite(seed)):
            raise ValueError(f"seed must be a finite ({self.law.n},) vector, got {seed}")
        self.seed = seed.copy()
        self.posture = None if posture is None else np.array(posture, float)
        self.posture_gain = float(posture_gain)
        frame_pose(model, model.neutral_configuration(), frame)  # checks the frame name
        self._is_named = frame in {f.name for f in model.frames}

    def joint_reference(self, reference: PoseReference) -> tuple[JointReference, IKResult]:
        """(JointReference, IKResult) for a task-space reference; advances ``seed``."""
        m, n = self.model, self.law.n
        ik = solve_ik(
            m,
            reference.pose,
            self.seed,
            frame=self.frame,
            limits=self.limits,
            tol=self.ik_tol,
            max_iterations=self.ik_max_iterations,
            posture=self.posture,
            posture_gain=self.posture_gain,
        )
        self.seed = ik.joints.copy()
        qa = m.neutral_configuration()
        qa[self.law._q0 :] = ik.joints
        J = ik.jacobian  # LOCAL, at the IK solution
        side = np.zeros(n)  # +1 at an upper limit, -1 at a lower one
        if self.limits is not None:
            side[ik.joints >= self.limits[:, 1] - self.limit_margin] = 1.0
            side[ik.joints <= self.limits[:, 0] + self.limit_margin] = -1.0
        v_ref, free = _right_inverse(J, reference.twist, side)
        va = np.zeros(m.nv)
        va[self.law._v0 :] = v_ref
        kin = forward_kinematics(m, qa, va, np.zeros(m.nv))
        if self._is_named:
            jdot_v = kin.frame_acc[m.frame_index(self.frame)]
        else:
            jdot_v = kin.acc[m.body_index(self.frame)]
        a_ref, _ = _right_inverse(J, reference.acc - jdot_v, np.zeros(n), free)
        return JointReference(ik.joints, v_ref, a_ref), ik

    def task_error(self, state: State, reference: PoseReference) -> PoseError:
        """End-effector pose and twist error (PoseError) relative to the reference."""
        m, n = self.model, self.law.n
        q, v = self.law._state(state)
        qa = q.copy()
        if m.floating:
            qa[:8] = m.neutral_configuration()[:8]  # pose relative to the base body
        J = frame_jacobian(m, qa, self.frame, Reference.LOCAL)[:, m.nv - n :]
        return pose_error(
            frame_pose(m, qa, self.frame), reference.pose, J @ v[m.nv - n :], reference.twist
        )

    def torque(
        self, state: State, acc: ArrayLike, base_force: ArrayLike | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """See :meth:`JointComputedTorque.torque`."""
        return self.law.torque(state, acc, base_force)

    def __call__(
        self,
        t: float,
        state: State,
        reference: PoseReference,
        *,
        base_force: ArrayLike | None = None,
    ) -> ArmCommand:
        jref, ik = self.joint_reference(reference)
        cmd = self.law(t, state, jref, base_force=base_force)
        return ArmCommand(
            tau=cmd.tau,
            acc=cmd.acc,
            base_acc=cmd.base_acc,
            joint_reference=jref,
            joint_error=cmd.error,
            task_error=self.task_error(state, reference),
            ik=ik,
        )


def _right_inverse(J, x, side, free=None):
    """Minimum-norm ``y`` with ``J y = x`` over the ``free`` joints (all by default),
    freezing joints on a limit that ``y`` would push further out
    (:func:`~dqspace.control.ik.right_inverse`).  Returns ``(y, free)``."""
    free = np.ones(J.shape[1], bool) if free is None else free.copy()
    c = np.ascontiguousarray
    y = right_inverse(c(J, float), c(x, float), c(side, float), free)
    return y, free
