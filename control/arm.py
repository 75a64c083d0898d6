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

from collections import namedtuple
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .._jit import param_array
from ..dq.kernels import dq_mul, dv_frame_change
from ..multibody import Model, frame_pose
from ..multibody.kernels import body_motions, crba, frame_jacobian, poses, rnea
from ..multibody.kinematics import frame_target
from .ik import (
    IK_STATUSES,
    LIMIT_TOL,
    IKResult,
    arm_coordinates,
    ik_kernel,
    joint_limits,
    right_inverse,
)
from .pd import State, checked_state
from .pose_error import PoseError, pose_error_kernel
from .trajectories import JointReference, PoseReference

__all__ = [
    "JointGains",
    "JointCommand",
    "JointComputedTorque",
    "ArmCommand",
    "ArmController",
    "NoArm",
    "NoArmCommand",
]


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
        self.kp, self.kd = (np.ascontiguousarray(g, dtype=float) for g in gains.resolved(self.n))

    def _state(self, state):
        return checked_state(self.model, state)

    def acceleration(
        self, state: State, reference: JointReference
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Commanded joint accelerations ``a_m`` (n,) and the errors (position, rate)."""
        q, v = self._state(state)
        if reference.q.shape != (self.n,):
            raise ValueError(f"reference must have {self.n} joints, got {reference.q.shape}")
        acc, e, de = np.empty(self.n), np.empty(self.n), np.empty(self.n)
        joint_acceleration_kernel(
            self.kp, self.kd, self._q0, self._v0, q, v, reference.q, reference.v, reference.a,
            acc, e, de,
        )  # fmt: skip
        return acc, e, de

    def torque(
        self, state: State, acc: ArrayLike, base_force: ArrayLike | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Joint torques (n,) that produce the joint accelerations ``acc``, and the base
        acceleration (6,) assumed: zero, or the one ``base_force`` ``[torque, force]`` causes
        (:func:`joint_torque_kernel`)."""
        m = self.model
        q, v = self._state(state)
        acc = np.ascontiguousarray(acc, dtype=float)
        if acc.shape != (self.n,) or not np.all(np.isfinite(acc)):
            raise ValueError(f"acc must be a finite ({self.n},) vector, got {acc}")
        if not m.floating:
            if base_force is not None:
                raise ValueError("base_force is only meaningful for a floating-base model")
            u_b = np.zeros(6)
        elif base_force is None:
            u_b = np.zeros(6)
        else:
            u_b = np.ascontiguousarray(base_force, dtype=float)
            if u_b.shape != (6,) or not np.all(np.isfinite(u_b)):
                raise ValueError(f"base_force must be a finite (6,) [torque, force], got {u_b}")
        tau = np.empty(self.n)
        a_b = np.zeros(6 if m.floating else 0)
        ints, reals = m.packed
        joint_torque_kernel(
            ints, reals, m.gravity, m.floating, self._v0, q, v, acc, base_force is not None,
            u_b, tau, a_b,
        )  # fmt: skip
        return tau, a_b

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


@dataclass(frozen=True)
class NoArmCommand:
    """Output of :class:`NoArm`: no joint torque, no planned joint acceleration (both
    (0,)), and no end-effector error (``task_error`` the identity, zero log and twist)."""

    tau: np.ndarray
    acc: np.ndarray
    task_error: PoseError


class NoArm:
    """The arm controller of a system without an arm (``arm.model = "none"``): there is no
    joint to command, no inverse kinematics and no end-effector task.  Called as any arm
    controller, ``arm(t, state, reference, *, base_force=None)``; the reference is
    ignored.  The flight software runs the base law alone for it (compiled)."""

    n = 0

    def __call__(
        self, t: float, state: State, reference: Any = None, *, base_force: Any = None
    ) -> NoArmCommand:
        identity = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
        return NoArmCommand(np.zeros(0), np.zeros(0), PoseError(identity, np.zeros(6), np.zeros(6)))


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
        self._body, self._place = frame_target(model, frame)
        self._named = frame in {f.name for f in model.frames}

    def kernel_params(self) -> ArmLawParams:
        """The :data:`ArmLawParams` of this controller as it is now (for the kernels)."""
        m, n = self.model, self.law.n
        ints, reals = m.packed
        lo, hi = joint_limits(self.limits, n)
        posture = self.posture
        return ArmLawParams(
            param_array(ints, np.int64), param_array(reals), param_array(m.gravity),
            m.floating, param_array(m.neutral_configuration()), self.law._q0, self.law._v0,
            self._body, param_array(self._place), self._named, param_array(lo),
            param_array(hi), self.limits is not None, self.limit_margin,
            param_array(self.law.kp), param_array(self.law.kd), self.ik_tol,
            self.ik_max_iterations, _IK_DAMPING, _IK_MAX_STEP,
            param_array(np.zeros(n) if posture is None else posture),
            posture is not None, self.posture_gain,
        )  # fmt: skip

    def joint_reference(
        self, reference: PoseReference, state: State | None = None
    ) -> tuple[JointReference, IKResult]:
        """(JointReference, IKResult) for a task-space reference; advances ``seed``
        (:func:`joint_reference_kernel`).  ``state`` (the measured one) is not used by the
        IK, which starts from its seed; a subclass resolving the task at the measured joints
        reads it."""
        P, n = self.kernel_params(), self.law.n
        self.seed = np.array(self.seed, dtype=float)
        q_r, v_r, a_r = np.empty(n), np.empty(n), np.empty(n)
        e, J = np.empty(6), np.empty((6, n))
        code, it = joint_reference_kernel(
            P, self.seed, reference.pose, reference.twist, reference.acc, q_r, v_r, a_r, e, J
        )
        at_limit = (q_r <= P.lo + LIMIT_TOL) | (q_r >= P.hi - LIMIT_TOL)
        ik = IKResult(q_r.copy(), IK_STATUSES[code], e, it, at_limit, J)
        return JointReference(q_r, v_r, a_r), ik

    def task_error(self, state: State, reference: PoseReference) -> PoseError:
        """End-effector pose and twist error (PoseError) relative to the reference
        (:func:`task_error_kernel`)."""
        q, v = self.law._state(state)
        e_dq, e_log, e_twist = np.empty(8), np.empty(6), np.empty(6)
        task_error_kernel(
            self.kernel_params(), q, v, reference.pose, reference.twist, e_dq, e_log, e_twist
        )
        return PoseError(e_dq, e_log, e_twist)

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
        jref, ik = self.joint_reference(reference, state)
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


# ------------------------------------------------------------------ compiled kernels

#: What the compiled arm law reads (built once by :meth:`ArmController.kernel_params`):
#: the controller model (``ints``, ``reals`` from ``Model.packed``, ``gravity`` (3,)),
#: ``floating`` (bool), ``q_neutral`` (nq,), the first arm index in q and v (``q0``,
#: ``v0``), the end-effector ``body`` and its ``place`` (8,) on it (``named``: a named
#: frame, else the body itself), the joint limits ``lo``, ``hi`` (n,) [rad or m] and
#: ``limited`` (bool), ``limit_margin`` [rad], the gains ``kp`` (n,) [1/s^2], ``kd`` (n,)
#: [1/s], and the IK's ``ik_tol``, ``ik_max_iterations``, ``ik_damping``, ``ik_max_step``,
#: ``posture`` (n,), ``use_posture`` (bool), ``posture_gain``.
ArmLawParams = namedtuple(
    "ArmLawParams",
    [
        "ints", "reals", "gravity", "floating", "q_neutral", "q0", "v0", "body", "place",
        "named", "lo", "hi", "limited", "limit_margin", "kp", "kd", "ik_tol",
        "ik_max_iterations", "ik_damping", "ik_max_step", "posture", "use_posture",
        "posture_gain",
    ],
)  # fmt: skip

_NO_FEXT = np.zeros((0, 6))
_IK_DAMPING, _IK_MAX_STEP = 1e-6, 0.5  # solve_ik's defaults


@njit(cache=True)
def joint_reference_kernel(P, seed, pose, twist, acc, q_r, v_r, a_r, e, J):
    """Joint references ``(theta_r, theta_r', theta_r'')`` of an end-effector reference
    (step 1 of the module docstring): IK warm-started from ``seed`` (n,), which is advanced
    to the solution; ``pose`` (8,), ``twist``, ``acc`` (6,) the reference relative to the
    root; writes ``q_r``, ``v_r``, ``a_r`` (n,), the IK residual ``e`` (6,) and the LOCAL
    Jacobian ``J`` (6, n) at the solution.  Returns the IK's ``(status code, trial steps)``.
    """
    n = seed.shape[0]
    nv = P.v0 + n
    qa = P.q_neutral.copy()
    status, it = ik_kernel(
        P.ints, P.reals, qa, P.q0, P.v0, P.body, P.place, pose, seed, P.lo, P.hi, P.ik_tol,
        P.ik_max_iterations, P.ik_damping, P.ik_max_step, P.posture, P.use_posture,
        P.posture_gain, q_r, e, J,
    )  # fmt: skip
    qa[:] = P.q_neutral
    side = np.zeros(n)  # +1 at an upper limit, -1 at a lower one
    for j in range(n):
        seed[j] = q_r[j]
        qa[P.q0 + j] = q_r[j]
        if P.limited:
            if q_r[j] >= P.hi[j] - P.limit_margin:
                side[j] = 1.0
            if q_r[j] <= P.lo[j] + P.limit_margin:
                side[j] = -1.0
    free = np.ones(n, dtype=np.bool_)
    v_r[:] = right_inverse(J, twist, side, free)
    va = np.zeros(nv)
    for j in range(n):
        va[P.v0 + j] = v_r[j]
    nb = P.ints.shape[0]
    tw = np.empty((nb, 6))
    ab = np.empty((nb, 6))
    body_motions(P.ints, P.reals, qa, va, np.zeros(nv), tw, ab)
    jdot_v = np.empty(6)
    if P.named:
        dv_frame_change(P.place, ab[P.body], jdot_v)
    else:
        jdot_v[:] = ab[P.body]
    a_r[:] = right_inverse(J, acc - jdot_v, np.zeros(n), free)
    return status, it


@njit(cache=True)
def joint_torque_kernel(
    ints, reals, gravity, floating, v0, q, v, acc, use_base_force, u_b, tau, a_b
):
    """Joint torques ``tau`` (n,) that produce the joint accelerations ``acc`` (n,), and the
    base acceleration ``a_b`` (6,) assumed (step 2 of the module docstring): zero, or, with
    ``use_base_force``, the one the base's generalized force ``u_b`` ``[torque, force]``
    causes, ``a_b = M_bb^-1 (u_b - ID(q, v, [0; acc])_b)``.  ``a_b`` is left untouched
    for a fixed base."""
    nv = v.shape[0]
    n = acc.shape[0]
    a = np.zeros(nv)
    for j in range(n):
        a[v0 + j] = acc[j]
    full = np.empty(nv)
    force = np.empty((ints.shape[0], 6))
    rnea(ints, reals, gravity, q, v, a, _NO_FEXT, full, force)
    for j in range(n):
        tau[j] = full[v0 + j]
    if not floating:
        return
    if not use_base_force:
        a_b[:] = 0.0
        return
    M = np.empty((nv, nv))
    crba(ints, reals, q, M)
    a_b[:] = np.linalg.solve(M[:6, :6], u_b - full[:6])
    for j in range(n):
        s = 0.0
        for c in range(6):
            s += M[6 + j, c] * a_b[c]
        tau[j] += s


@njit(cache=True)
def task_error_kernel(P, q, v, pose, twist, e_dq, e_log, e_twist):
    """End-effector pose and twist error relative to the reference (``pose`` (8,), ``twist``
    (6,), relative to the root), measured with the base at the origin: writes ``e_dq``
    (8,), ``e_log``, ``e_twist`` (6,) (:func:`~dqspace.control.pose_error.pose_error_kernel`)."""
    nb = P.ints.shape[0]
    nv = v.shape[0]
    n = P.lo.shape[0]
    qa = q.copy()
    if P.floating:
        qa[:8] = P.q_neutral[:8]
    rel = np.empty((nb, 8))
    pose_b = np.empty((nb, 8))
    poses(P.ints, P.reals, qa, rel, pose_b)
    pf = np.empty(8)
    dq_mul(pose_b[P.body], P.place, pf)
    Jf = np.empty((6, nv))
    frame_jacobian(P.ints, P.reals, pose_b, P.body, P.place, Jf)
    tw = np.zeros(6)
    for i in range(6):
        s = 0.0
        for j in range(P.v0, P.v0 + n):  # the arm's own joints (v0 = nv - n for one arm)
            s += Jf[i, j] * v[j]
        tw[i] = s
    pose_error_kernel(pf, pose, tw, twist, e_dq, e_log, e_twist)


@njit(cache=True)
def joint_acceleration_kernel(kp, kd, q0, v0, q, v, q_r, v_r, a_r, acc, err, rate_err):
    """Commanded joint accelerations ``a_m = theta_r'' + k_d (theta_r' - theta') + k_p
    (theta_r - theta)`` (n,) into ``acc``, the errors ``theta_r - theta`` and ``theta_r' -
    theta'`` into ``err`` and ``rate_err``; the arm starts at ``q0`` in q, ``v0`` in v."""
    for j in range(acc.shape[0]):
        e = q_r[j] - q[q0 + j]
        de = v_r[j] - v[v0 + j]
        err[j] = e
        rate_err[j] = de
        acc[j] = a_r[j] + kd[j] * de + kp[j] * e
