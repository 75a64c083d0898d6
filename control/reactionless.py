"""Reaction-null-space arm motion: joint rates that leave the base's attitude undisturbed.

For the free-floating system (no external wrench) the momentum of the whole system,
expressed at the base frame, is the first six rows of the mass matrix times the velocity,

    h = M_bb v_b + M_bm theta'       (angular rows first, v_b = [w_b, v_b] the base twist).

Started at rest (h = 0) it stays zero, so ``v_b = -M_bb^-1 M_bm theta'``: the base's angular
velocity is ``w_b = -R theta'`` with the **reaction map** ``R = [M_bb^-1 M_bm]_{0:3}`` (3, n),
the angular rows (the base's translation absorbs the linear part: the centre of mass stays
where it is and the attitude is not involved).  Joint rates in the null space of R,
``theta' = N y`` with ``N`` (n, n - 3) an orthonormal basis of ker R, turn the arm without
turning the base: for a 7-DOF arm four reactionless degrees of freedom (Nenchev and
co-workers; Sone and Nenchev 2016).  A base whose translation is held (thrusters pushing
through its origin, ``base = "held"``) keeps instead its angular momentum about its origin,
``M_ww w_b + M_wm theta' = 0``: then ``R = M_ww^-1 M_wm``.  The momentum devices locked
into the base belong to the base's inertia (the controller model has them locked), so R is
the map of the base as the controller sees it.

The law (:class:`ReactionlessArmController`, ``arm_controller.law = "reactionless"``) is a
resolved-rate variant of the IK + computed-torque law of :mod:`~dqspace.control.arm`, with
the task in the root frame A's axes (so that a position task does not depend on the
end-effector's orientation, which it leaves free):

1. the end-effector's task error at the *measured* joints, ``err = [R_AF theta n, r_F -
   r_D]`` (``theta n`` the rotation part of the IK's residual ``2 log(q^_AD* o q^_AF)``),
   and its Jacobian in A's axes, ``J_A = diag(R_AF, R_AF) J`` (J the LOCAL one);
2. the task rate ``x = R_AD w^_D - k_task err`` (all six rows, ``task = "pose"``, or the
   three translation rows, ``task = "position"``; ``J_t`` the same rows of ``J_A``);
3. ``theta_r' = N (J_t N)^+ x``: minimum norm; least squares when the task has more rows
   than the null space (a 6-row pose task for a 7-DOF arm), what cannot be achieved
   reported; a singularity-robust inverse, damped as ``J_t N`` loses rank (the
   reactionless motion's algorithmic singularities).  The feedforward keeps the base's
   angular acceleration zero too: ``theta_r'' = a_p + N (J_t N)^+ (d/dt(R_AD w^_D) -
   d/dt(J_A) theta_r' - J_t a_p)``, ``a_p`` the minimum-norm solution of ``R a_p = b``, the
   velocity-product terms of the base's equations of motion at ``theta_r'``
   (:func:`reaction_drift`);
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

from ..dq.kernels import dq_mul, dq_to_transform, dv_frame_change
from ..multibody import Model
from ..multibody.kernels import body_motions, crba, poses, rnea
from .arm import ArmController, ArmLawParams, JointGains
from .ik import (
    IK_CONVERGED,
    IK_STALLED,
    IK_STATUSES,
    LIMIT_TOL,
    IKResult,
    damped_min_norm,
    task_residual_kernel,
)
from .pd import State
from .trajectories import JointReference, PoseReference

__all__ = [
    "ReactionlessArmController",
    "ReactionlessParams",
    "REACTIONLESS_TASKS",
    "REACTIONLESS_BASES",
    "reaction_map",
    "reaction_null_space",
    "reaction_map_kernel",
    "reaction_from_mass",
    "reaction_drift",
    "null_space_kernel",
    "reactionless_reference_kernel",
]

#: The tasks a reactionless law can be given: the end-effector's whole pose (6 rows) or
#: its position alone (3 rows).
REACTIONLESS_TASKS = ("pose", "position")
#: The bases a reactionless law can assume: floating free, or with its translation held.
REACTIONLESS_BASES = ("free", "held")

#: What the compiled reactionless law reads: the fields of
#: :data:`~dqspace.control.arm.ArmLawParams`, then ``task_gain`` [1/s] (``k_task``),
#: ``position_only`` (bool: the task is the position alone) and ``rank_tol`` (a singular
#: value of R below ``rank_tol`` times the largest counts as zero), ``band`` and
#: ``max_damping`` (the singularity-robust inverse: damping ``max_damping^2 (1 -
#: (s_min / band)^2)`` when the smallest singular value ``s_min`` of the projected task
#: Jacobian falls below ``band``, none above), ``held`` (bool: the reaction map of a base
#: whose translation is held, :func:`reaction_map_kernel`).
ReactionlessParams = namedtuple(
    "ReactionlessParams",
    [
        *ArmLawParams._fields,
        "task_gain",
        "position_only",
        "rank_tol",
        "band",
        "max_damping",
        "held",
    ],
)

_NO_FEXT = np.zeros((0, 6))

#: Singular values of the reaction map below this fraction of the largest count as zero.
RANK_TOL = 1e-9


@njit(cache=True)
def reaction_map_kernel(ints, reals, q, v0, held, R):
    """The reaction map (3, n) into ``R``: the base's angular velocity is ``-R theta'`` for
    joint rates ``theta'`` of the joints ``v0 : v0 + n`` when the system's momentum is zero
    (see the module docstring).  A free base, ``R = [M_bb^-1 M_bm]_{0:3}``; with ``held``,
    a base whose translation is held (its velocity zero, the holding force through its
    origin), ``R = M_ww^-1 M_wm`` from the angular momentum about the base's origin alone.
    ``q`` (nq,) the floating model's configuration (the mass matrix does not depend on the
    base's pose)."""
    nv = v0 + R.shape[1]
    M = np.empty((nv, nv))
    crba(ints, reals, q, M)
    reaction_from_mass(M, v0, held, R)


@njit(cache=True)
def reaction_from_mass(M, v0, held, R):
    """The reaction map (3, n) into ``R`` from the floating mass matrix ``M`` (nv, nv)
    (:func:`reaction_map_kernel`)."""
    nv = v0 + R.shape[1]
    k = 3 if held else 6
    Mbb = np.ascontiguousarray(M[:k, :k])
    Mbm = np.ascontiguousarray(M[:k, v0:nv])
    X = np.linalg.solve(Mbb, Mbm)
    for i in range(3):
        for j in range(R.shape[1]):
            R[i, j] = X[i, j]


@njit(cache=True)
def reaction_drift(ints, reals, gravity, q, M, v0, held, rates):
    """``b`` (3,) with ``R theta'' = b`` the joint accelerations that keep the base's angular
    acceleration zero while the joints move at ``rates`` (n,) with the base not rotating:
    the base's rows of the equations of motion, ``M_bb a_b + M_bm theta'' + c_b = 0`` (no
    external wrench; ``c_b`` the base's rows of the inverse dynamics at zero acceleration,
    with the base's twist from zero momentum, or zero for a ``held`` base), give
    ``w_b' = -R theta'' - [M_bb^-1 c_b]_{0:3}``, so ``b = -[M_bb^-1 c_b]_{0:3}``."""
    n = rates.shape[0]
    nv = v0 + n
    k = 3 if held else 6
    v = np.zeros(nv)
    for j in range(n):
        v[v0 + j] = rates[j]
    if not held:
        vb = np.linalg.solve(
            np.ascontiguousarray(M[:6, :6]), np.ascontiguousarray(M[:6, v0:nv]) @ rates
        )
        for i in range(6):
            v[i] = -vb[i]
    c = np.empty(nv)
    force = np.empty((ints.shape[0], 6))
    rnea(ints, reals, gravity, q, v, np.zeros(nv), _NO_FEXT, c, force)
    x = np.linalg.solve(np.ascontiguousarray(M[:k, :k]), np.ascontiguousarray(c[:k]))
    return -x[:3]


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
def _in_root(R, x, out):
    """``out = [R x_ang, R x_lin]`` (6,): a dual vector's two parts rotated by ``R`` (3, 3)."""
    for i in range(3):
        out[i] = R[i, 0] * x[0] + R[i, 1] * x[1] + R[i, 2] * x[2]
        out[3 + i] = R[i, 0] * x[3] + R[i, 1] * x[4] + R[i, 2] * x[5]


@njit(cache=True)
def _cross_into(w, v, out):
    """``out[3:6] += w[0:3] x v[3:6]``: the velocity's rotation term of a point's
    acceleration (a body twist ``[w, v]`` differentiated in rotating axes)."""
    out[3] += w[1] * v[5] - w[2] * v[4]
    out[4] += w[2] * v[3] - w[0] * v[5]
    out[5] += w[0] * v[4] - w[1] * v[3]


@njit(cache=True)
def reactionless_reference_kernel(P, seed, q, v, pose, twist, acc, q_r, v_r, a_r, e, J):
    """Joint references of the reactionless law (steps 1-4 of the module docstring) at the
    measured state ``q``, ``v`` (controller model): writes ``q_r`` (the measured joints),
    ``v_r``, ``a_r`` (n,), the task residual ``e`` (6,) at the measured joints and the LOCAL
    Jacobian ``J`` (6, n); ``seed`` follows the measured joints.  ``pose`` (8,), ``twist``,
    ``acc`` (6,) the end-effector reference relative to the root (twist and acceleration in
    the desired frame D).  The task rows are taken in the root's axes (angular velocity and
    the end-effector's velocity), so that the position task does not depend on the
    end-effector's orientation, which it leaves free.  Returns ``(status, dimension of the
    reaction null space)``: :data:`~dqspace.control.ik.IK_CONVERGED` when the task rate is
    met, :data:`~dqspace.control.ik.IK_STALLED` when part of it cannot be (a task with more
    rows than the null space, a singular configuration)."""
    n = seed.shape[0]
    nv = P.v0 + n
    nb = P.ints.shape[0]
    qa = P.q_neutral.copy()  # the base at the origin: the arm relative to its root
    for j in range(n):
        qa[P.q0 + j] = q[P.q0 + j]
        q_r[j] = q[P.q0 + j]
        seed[j] = q[P.q0 + j]
    task_residual_kernel(P.ints, P.reals, qa, P.body, P.place, pose, e, J, True, P.v0)
    rel = np.empty((nb, 8))
    pose_b = np.empty((nb, 8))
    poses(P.ints, P.reals, qa, rel, pose_b)
    pf = np.empty(8)
    dq_mul(pose_b[P.body], P.place, pf)
    TF = np.empty((4, 4))
    TD = np.empty((4, 4))
    dq_to_transform(pf, TF)
    dq_to_transform(pose, TD)
    RF = np.ascontiguousarray(TF[:3, :3])
    RD = np.ascontiguousarray(TD[:3, :3])
    # the task in the root's axes: J_A = diag(R_AF, R_AF) J, the reference twist R_AD w^D,
    # the error [R_AF theta n, r_F - r_D] closed at the rate task_gain
    JA = np.empty((6, n))
    col = np.empty(6)
    for j in range(n):
        _in_root(RF, J[:, j].copy(), col)
        JA[:, j] = col
    ref = np.empty(6)
    _in_root(RD, twist, ref)
    err = np.empty(6)
    _in_root(RF, e, err)
    for i in range(3):
        err[3 + i] = TF[i, 3] - TD[i, 3]
    M = np.empty((nv, nv))
    crba(P.ints, P.reals, qa, M)
    R = np.empty((3, n))
    reaction_from_mass(M, P.v0, P.held, R)
    N = null_space_kernel(R, P.rank_tol)
    r = N.shape[1]
    r0 = 3 if P.position_only else 0
    m = 6 - r0
    JN = np.zeros((m, r))
    for i in range(m):
        for c in range(r):
            s = 0.0
            for j in range(n):
                s += JA[r0 + i, j] * N[j, c]
            JN[i, c] = s
    x = np.empty(m)
    for i in range(m):
        x[i] = ref[r0 + i] - P.task_gain * err[r0 + i]
    # singularity-robust inverse: damped as the projected task loses rank
    sv = np.linalg.svd(JN)[1]
    s_min = sv[-1] if sv.shape[0] == m else 0.0  # fewer columns than rows: rank < m
    lam2 = 1e-12
    if s_min < P.band:
        lam2 = max(P.max_damping**2 * (1.0 - (s_min / P.band) ** 2), lam2)
    use = np.ones(r, dtype=np.bool_)
    p = max(m, r)
    A, b, idx = np.empty((p, p)), np.empty(p), np.empty(r, dtype=np.int64)
    y = np.empty(r)
    damped_min_norm(JN, use, lam2, 0.0, x, y, A, b, idx)
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
    # feedforward: d/dt (J_A theta') = J_A theta'' + (the same with theta'' = 0), the
    # latter from the forward acceleration recursion with the root at rest, N held
    va = np.zeros(nv)
    for j in range(n):
        va[P.v0 + j] = v_r[j]
    tw = np.empty((nb, 6))
    ab = np.empty((nb, 6))
    body_motions(P.ints, P.reals, qa, va, np.zeros(nv), tw, ab)
    jdot_v = np.empty(6)
    tw_f = np.empty(6)
    if P.named:
        dv_frame_change(P.place, ab[P.body], jdot_v)
        dv_frame_change(P.place, tw[P.body], tw_f)
    else:
        jdot_v[:] = ab[P.body]
        tw_f[:] = tw[P.body]
    _cross_into(tw_f, tw_f, jdot_v)
    acc_d = acc.copy()
    _cross_into(twist, twist, acc_d)
    ff_f = np.empty(6)
    ff_d = np.empty(6)
    _in_root(RF, jdot_v, ff_f)
    _in_root(RD, acc_d, ff_d)
    # the acceleration that keeps the base's rotation at rest, R a_p = b (minimum norm),
    # plus the task's acceleration in the null space: a_r = a_p + N (J_t N)^+ (xa - J_t a_p)
    drift = reaction_drift(P.ints, P.reals, P.gravity, qa, M, P.v0, P.held, v_r)
    a_p = np.linalg.lstsq(R, drift)[0]
    xa = np.empty(m)
    for i in range(m):
        s = 0.0
        for j in range(n):
            s += JA[r0 + i, j] * a_p[j]
        xa[i] = ff_d[r0 + i] - ff_f[r0 + i] - s
    y2 = np.empty(r)
    damped_min_norm(JN, use, lam2, 0.0, xa, y2, A, b, idx)
    for j in range(n):
        s = a_p[j]
        for c in range(r):
            s += N[j, c] * y2[c]
        a_r[j] = s
    status = IK_CONVERGED if miss <= 1e-8 * scale else IK_STALLED
    return status, r


def reaction_map(model: Model, q: ArrayLike, *, held: bool = False) -> NDArray[np.float64]:
    """The reaction map R (3, n) of a floating ``model`` at the configuration ``q`` (nq,):
    the base's angular velocity is ``-R theta'`` for joint rates ``theta'`` (n,) at zero
    momentum, the base free or (``held``) its translation held
    (:func:`reaction_map_kernel`).  ValueError for a fixed-base model."""
    if not model.floating:
        raise ValueError("the reaction map needs a floating-base model")
    q = np.ascontiguousarray(q, dtype=float)
    if q.shape != (model.nq,) or not np.all(np.isfinite(q)):
        raise ValueError(f"q must be a finite ({model.nq},) vector, got shape {q.shape}")
    ints, reals = model.packed
    R = np.empty((3, model.nv - 6))
    reaction_map_kernel(ints, reals, q, 6, bool(held), R)
    return R


def reaction_null_space(
    model: Model, q: ArrayLike, rank_tol: float = RANK_TOL, *, held: bool = False
) -> NDArray[np.float64]:
    """An orthonormal basis (n, n - rank R) of the reactionless joint rates of a floating
    ``model`` at ``q``: any ``theta' = N y`` leaves the base's attitude at rest when the
    system's momentum is zero (:func:`null_space_kernel` of :func:`reaction_map`; ``held``:
    the base's translation held)."""
    return null_space_kernel(reaction_map(model, q, held=held), float(rank_tol))


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
    band : float [m/rad], below this smallest singular value of the projected task Jacobian
        the inverse is damped (singularity-robust inverse)
    max_damping : float [m/rad], the damping at a singularity
    base : "free" (the base floats: its translation absorbs the linear reaction) or
        "held" (its translation held by thrusters: the angular momentum about its origin)
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
        band: float = 0.03,
        max_damping: float = 0.03,
        base: str = "free",
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
        for name, x in (("band", band), ("max_damping", max_damping)):
            if not (np.isfinite(x) and x > 0.0):
                raise ValueError(f"{name} must be positive and finite, got {x}")
        self.task_gain, self.task, self.rank_tol = float(task_gain), task, float(rank_tol)
        self.band, self.max_damping = float(band), float(max_damping)
        if base not in REACTIONLESS_BASES:
            raise ValueError(f"base must be one of {REACTIONLESS_BASES}, got {base!r}")
        self.base = base

    def kernel_params(self) -> ReactionlessParams:
        """The :data:`ReactionlessParams` of this controller (for the kernels)."""
        return ReactionlessParams(
            *super().kernel_params(), self.task_gain, self.task == "position", self.rank_tol,
            self.band, self.max_damping, self.base == "held",
        )  # fmt: skip

    def joint_reference(
        self, reference: PoseReference, state: State | None = None
    ) -> tuple[JointReference, IKResult]:
        """(JointReference, IKResult) at the measured ``state`` (required) for a task-space
        reference (:func:`reactionless_reference_kernel`)."""
        if state is None:
            raise ValueError("the reactionless law resolves the task at the measured state")
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
