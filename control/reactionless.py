"""Reaction-null-space arm motion: joint rates that leave the base's attitude undisturbed.

For the free-floating system (no external wrench) the momentum of the whole system,
expressed at the base frame, is the first six rows of the mass matrix times the velocity,

    h = M_bb v_b + M_bm theta'       (angular rows first, v_b = [w_b, v_b] the base twist).

Started at rest (h = 0) it stays zero, so ``v_b = -M_bb^-1 M_bm theta'``: the base's angular
velocity is ``w_b = -R theta'`` with the **reaction map** ``R = [M_bb^-1 M_bm]_{0:3}`` (3, n),
the angular rows (the base's translation absorbs the linear part: it moves the centre of
mass nowhere and leaves the attitude alone).  Joint rates in the null space of R,
``theta' = N y`` with ``N`` (n, n - 3) an orthonormal basis of ker R, turn the arm without
turning the base: for a 7-DOF arm four reactionless degrees of freedom (Nenchev and
co-workers; Sone and Nenchev 2016).  The momentum devices locked into the base belong to
the base's inertia (the controller model has them locked), so R is the map of the base as
the controller sees it.

The law (:class:`ReactionlessArmController`, ``arm_controller.law = "reactionless"``) is a
resolved-rate variant of the IK + computed-torque law of :mod:`~dqspace.control.arm`:

1. the end-effector task error at the *measured* joints, ``e = 2 log(q^_AD* o q^_AF)`` in F
   (the IK's residual), and the LOCAL Jacobian J of the end-effector;
2. the task rate ``x = w^_D - k_task e`` (all six rows, ``task = "pose"``, or the three
   translation rows, ``task = "position"``);
3. ``theta_r' = N (J_t N)^+ x`` (minimum norm; least squares when the task has more rows than
   the null space, as a 6-row pose task has for a 7-DOF arm: what cannot be achieved is
   reported) and ``theta_r'' = N (J_t N)^+ (dw^_D - J' theta_r')`` (the feedforward, with N
   held over the tick);
4. ``theta_r = theta`` (no position reference: the motion is not integrable, a joint
   configuration is not a function of the task), then the same joint computed torque:
   ``a_m = theta_r'' + k_d (theta_r' - theta')`` and the torques from the inverse dynamics
   with the base acceleration the commanded base wrench causes.

The base law's feedforward of the arm's planned reaction is unchanged: a reactionless
motion has (up to the feedback and the tracking error) no angular reaction to feed forward,
but its linear reaction on the base remains.

The kernels reuse the compiled mass matrix (:func:`~dqspace.multibody.kernels.crba`),
kinematics and Jacobians; nothing here is a second copy of them.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..dq.kernels import dv_frame_change
from ..multibody import Model
from ..multibody.kernels import body_motions, crba
from .arm import ArmCommand, ArmController, ArmLawParams, JointGains
from .ik import (
    IK_CONVERGED,
    IK_STALLED,
    IK_STATUSES,
    LIMIT_TOL,
    IKResult,
    right_inverse,
    task_residual_kernel,
)
from .pd import State
from .trajectories import JointReference, PoseReference

__all__ = [
    "ReactionlessArmController",
    "ReactionlessParams",
    "REACTIONLESS_TASKS",
    "reaction_map",
    "reaction_null_space",
    "reaction_map_kernel",
    "null_space_kernel",
    "reactionless_reference_kernel",
]

#: The tasks a reactionless law can be given: the end-effector's whole pose (6 rows) or
#: its position alone (3 rows).
REACTIONLESS_TASKS = ("pose", "position")

#: What the compiled reactionless law reads: the fields of
#: :data:`~dqspace.control.arm.ArmLawParams`, then ``task_gain`` [1/s] (``k_task``),
#: ``position_only`` (bool: the task is the position alone) and ``rank_tol`` (a singular
#: value of R below ``rank_tol`` times the largest counts as zero).
ReactionlessParams = namedtuple(
    "ReactionlessParams", [*ArmLawParams._fields, "task_gain", "position_only", "rank_tol"]
)

#: Singular values of the reaction map below this fraction of the largest count as zero.
RANK_TOL = 1e-9


@njit(cache=True)
def reaction_map_kernel(ints, reals, q, v0, R):
    """The reaction map ``R = [M_bb^-1 M_bm]_{0:3}`` (3, n) into ``R``: the base's angular
    velocity is ``-R theta'`` for joint rates ``theta'`` of the joints ``v0 : v0 + n`` when
    the system's momentum is zero (see the module docstring).  ``q`` (nq,) the floating
    model's configuration (the mass matrix does not depend on the base's pose)."""
    nv = v0 + R.shape[1]
    M = np.empty((nv, nv))
    crba(ints, reals, q, M)
    Mbb = np.ascontiguousarray(M[:6, :6])
    Mbm = np.ascontiguousarray(M[:6, v0:nv])
    X = np.linalg.solve(Mbb, Mbm)
    for i in range(3):
        for j in range(R.shape[1]):
            R[i, j] = X[i, j]


@njit(cache=True)
def null_space_kernel(R, rank_tol):
    """An orthonormal basis N (n, n - rank R) of the null space of ``R`` (m, n) by the
    singular value decomposition; the rank counts the singular values above ``rank_tol``
    times the largest."""
    n = R.shape[1]
    _, s, vt = np.linalg.svd(R)
    rank = 0
    for k in range(s.shape[0]):
        if s[k] > rank_tol * s[0]:
            rank += 1
    N = np.empty((n, n - rank))
    for i in range(n):
        for j in range(n - rank):
            N[i, j] = vt[rank + j, i]
    return N


@njit(cache=True)
def reactionless_reference_kernel(P, seed, q, v, pose, twist, acc, q_r, v_r, a_r, e, J):
    """Joint references of the reactionless law (steps 1-4 of the module docstring) at the
    measured state ``q``, ``v`` (controller model): writes ``q_r`` (the measured joints),
    ``v_r``, ``a_r`` (n,), the task residual ``e`` (6,) at the measured joints and the LOCAL
    Jacobian ``J`` (6, n); ``seed`` follows the measured joints.  ``pose`` (8,), ``twist``,
    ``acc`` (6,) the end-effector reference relative to the root.  Returns ``(status,
    dimension of the reaction null space)``: :data:`~dqspace.control.ik.IK_CONVERGED` when
    the task rate is met, :data:`~dqspace.control.ik.IK_STALLED` when part of it cannot be
    (a task with more rows than the null space, a singular configuration)."""
    n = seed.shape[0]
    nv = P.v0 + n
    qa = P.q_neutral.copy()  # the base at the origin: the arm relative to its root
    for j in range(n):
        qa[P.q0 + j] = q[P.q0 + j]
        q_r[j] = q[P.q0 + j]
        seed[j] = q[P.q0 + j]
    task_residual_kernel(P.ints, P.reals, qa, P.body, P.place, pose, e, J, True, P.v0)
    R = np.empty((3, n))
    reaction_map_kernel(P.ints, P.reals, qa, P.v0, R)
    N = null_space_kernel(R, P.rank_tol)
    r = N.shape[1]
    r0 = 3 if P.position_only else 0
    m = 6 - r0
    JN = np.zeros((m, r))
    for i in range(m):
        for c in range(r):
            s = 0.0
            for j in range(n):
                s += J[r0 + i, j] * N[j, c]
            JN[i, c] = s
    x = np.empty(m)
    for i in range(m):
        x[i] = twist[r0 + i] - P.task_gain * e[r0 + i]
    none = np.zeros(r)
    y = right_inverse(JN, x, none, np.ones(r, dtype=np.bool_))
    miss = 0.0
    scale = 1.0
    for i in range(m):
        s = 0.0
        for c in range(r):
            s += JN[i, c] * y[c]
        miss = max(miss, abs(x[i] - s))
        scale = max(scale, abs(x[i]))
    for j in range(n):
        s = 0.0
        for c in range(r):
            s += N[j, c] * y[c]
        v_r[j] = s
    # feedforward: J' theta_r' from the forward acceleration recursion with the root at rest
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
    xa = np.empty(m)
    for i in range(m):
        xa[i] = acc[r0 + i] - jdot_v[r0 + i]
    y2 = right_inverse(JN, xa, none, np.ones(r, dtype=np.bool_))
    for j in range(n):
        s = 0.0
        for c in range(r):
            s += N[j, c] * y2[c]
        a_r[j] = s
    status = IK_CONVERGED if miss <= 1e-8 * scale else IK_STALLED
    return status, r


def reaction_map(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """The reaction map R (3, n) of a floating ``model`` at the configuration ``q`` (nq,):
    the base's angular velocity is ``-R theta'`` for joint rates ``theta'`` (n,) at zero
    momentum (:func:`reaction_map_kernel`).  ValueError for a fixed-base model."""
    if not model.floating:
        raise ValueError("the reaction map needs a floating-base model")
    q = np.ascontiguousarray(q, dtype=float)
    if q.shape != (model.nq,) or not np.all(np.isfinite(q)):
        raise ValueError(f"q must be a finite ({model.nq},) vector, got shape {q.shape}")
    ints, reals = model.packed
    R = np.empty((3, model.nv - 6))
    reaction_map_kernel(ints, reals, q, 6, R)
    return R


def reaction_null_space(
    model: Model, q: ArrayLike, rank_tol: float = RANK_TOL
) -> NDArray[np.float64]:
    """An orthonormal basis (n, n - rank R) of the reactionless joint rates of a floating
    ``model`` at ``q``: any ``theta' = N y`` leaves the base's attitude at rest when the
    system's momentum is zero (:func:`null_space_kernel` of :func:`reaction_map`)."""
    return null_space_kernel(reaction_map(model, q), float(rank_tol))


class ReactionlessArmController(ArmController):
    """End-effector tracking restricted to the reaction null space (module docstring).

    Called as :class:`~dqspace.control.ArmController`, ``arm(t, state, reference, *,
    base_force=None) -> ArmCommand``; its ``ik`` reports the task rate met (``converged``)
    or not (``stalled``: the task needs more than the null space gives), the residual the
    task error at the measured joints and ``iterations`` the null space's dimension.  The
    compiled flight software runs it (:func:`reactionless_reference_kernel` in its tick).

    Parameters
    ----------
    model : Model, floating (ValueError for a fixed base: there is no base to keep still)
    gains : JointGains (only ``kd`` acts: the joint reference is the measured joints)
    seed : (n,) initial joint positions [rad]
    frame : str, the end-effector frame
    limits : (n, 2) joint limits [rad], optional (recorded; the law does not keep the
        joints within them)
    task_gain : float [1/s], ``k_task``: the rate at which the task error is closed
    task : "pose" (6 rows) or "position" (3 rows)
    rank_tol : float, relative threshold on the reaction map's singular values
    """

    def __init__(
        self,
        model: Model,
        gains: JointGains,
        *,
        seed: ArrayLike,
        frame: str = "ee",
        limits: ArrayLike | None = None,
        task_gain: float = 5.0,
        task: str = "position",
        rank_tol: float = RANK_TOL,
    ) -> None:
        if not model.floating:
            raise ValueError("the reactionless arm law needs a floating base (a fixed base "
                             "takes no reaction)")  # fmt: skip
        super().__init__(model, gains, seed=seed, frame=frame, limits=limits)
        if model.nv - 6 < 4:
            raise ValueError(
                f"the reactionless arm law needs at least 4 joints (3 are taken by the "
                f"reaction), the arm has {model.nv - 6}"
            )
        if not (np.isfinite(task_gain) and task_gain >= 0.0):
            raise ValueError(f"task_gain must be non-negative and finite, got {task_gain}")
        if task not in REACTIONLESS_TASKS:
            raise ValueError(f"task must be one of {REACTIONLESS_TASKS}, got {task!r}")
        if not (np.isfinite(rank_tol) and 0.0 < rank_tol < 1.0):
            raise ValueError(f"rank_tol must be in (0, 1), got {rank_tol}")
        self.task_gain, self.task, self.rank_tol = float(task_gain), task, float(rank_tol)

    def kernel_params(self) -> ReactionlessParams:
        """The :data:`ReactionlessParams` of this controller (for the kernels)."""
        return ReactionlessParams(
            *super().kernel_params(), self.task_gain, self.task == "position", self.rank_tol
        )

    def joint_reference(  # type: ignore[override]
        self, reference: PoseReference, state: State
    ) -> tuple[JointReference, IKResult]:
        """(JointReference, IKResult) at the measured ``state`` for a task-space reference
        (:func:`reactionless_reference_kernel`)."""
        P, n = self.kernel_params(), self.law.n
        q, v = self.law._state(state)
        self.seed = np.array(self.seed, dtype=float)
        q_r, v_r, a_r = np.empty(n), np.empty(n), np.empty(n)
        e, J = np.empty(6), np.empty((6, n))
        code, r = reactionless_reference_kernel(
            P, self.seed, q, v, reference.pose, reference.twist, reference.acc, q_r, v_r, a_r,
            e, J,
        )  # fmt: skip
        at_limit = (q_r <= P.lo + LIMIT_TOL) | (q_r >= P.hi - LIMIT_TOL)
        return JointReference(q_r, v_r, a_r), IKResult(
            q_r.copy(), IK_STATUSES[code], e, r, at_limit, J
        )

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
