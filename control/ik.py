"""Inverse kinematics by damped least squares on the dual-quaternion pose error.

Target: the pose ``q^_AD`` of a named frame F (the end-effector) relative to
the model's root frame A: the base body of a floating model (the base pose in
q is ignored: the arm's kinematics relative to the base do not depend on
it), the inertial frame of a fixed-base one.  The unknowns are the joint
positions after the root joint (revolute or prismatic joints only).

Iteration (Levenberg-Marquardt with Sugihara's damping, with joint limits):

* error ``e^ = q^_AD* o q^_AF(theta)`` with the short-way sign, and the residual
  ``e = 2 log e^ = [theta n, r^F]`` [rad, m] (Table-1 logarithm, in F);
* ``d/dt e^ = 1/2 e^ o (J theta')`` with J the LOCAL Jacobian of F (its joint
  columns), so ``de = J dtheta`` at the solution;
* step ``dtheta = -J^T (J J^T + lambda^2 I)^-1 e`` with
  ``lambda^2 = mu (1/2 |e|^2 + damping)``: heavily damped far from the target,
  Gauss-Newton near it (fast final convergence).  A step is kept only if it
  lowers ``|e|``; then ``mu`` shrinks tenfold (down to 1e-3), otherwise it grows
  tenfold and the step is retried;
* joint limits: joints whose step would leave ``[lower, upper]`` are locked at
  the bound and the step re-solved for the others (an active set); the step
  is then shortened to ``max_step``.

Failures are reported, never raised: :class:`IKResult` carries a status
(converged; stalled -- no step lowers ``|e|`` even with ``mu`` = 1e12: a local
minimum, typically an unreachable pose or one cut off by the joint limits;
or out of iterations) and the final residual.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .._jit import param_array
from ..dq import kernels as D
from ..dq.checks import check_unit_dq
from ..multibody import kernels as K
from ..multibody.kinematics import frame_target
from ..multibody.model import JointType, Model
from .pose_error import short_way_kernel

__all__ = [
    "IIWA_JOINT_LIMITS",
    "IIWA_LEMNISCATE_SEED",
    "IKStatus",
    "IKResult",
    "IK_STATUSES",
    "solve_ik",
    "arm_coordinates",
    "joint_limits",
]

#: Joint limits of the KUKA LBR iiwa [rad], rows ``[lower, upper]`` for joints 1..7
#: (+-170, +-120, +-170, +-120, +-170, +-120, +-175 deg).
IIWA_JOINT_LIMITS = np.radians(
    [[-170, 170], [-120, 120], [-170, 170], [-120, 120], [-170, 170], [-120, 120], [-175, 175]]
)
IIWA_JOINT_LIMITS.setflags(write=False)

#: A joint configuration [rad] from which :func:`solve_ik` reaches the start of the
#: default :class:`~dqspace.control.trajectories.Lemniscate` (0.5, 0, 0.7) m on the
#: reference space manipulator (arm mounted at (0, 0, 0.15) m on the base), on a
#: branch that stays within :data:`IIWA_JOINT_LIMITS` along the whole curve
#: (27, 107, 45, -81, -28, -103, 28 deg; see ``docs/control.md``).
IIWA_LEMNISCATE_SEED = np.radians([27.0, 107.0, 45.0, -81.0, -28.0, -103.0, 28.0])
IIWA_LEMNISCATE_SEED.setflags(write=False)

_MU_MIN, _MU_MAX = 1e-3, 1e12  # range of the adaptive damping factor
#: A joint this close to a limit [rad or m] counts as on it (``IKResult.at_limit``).
LIMIT_TOL = 1e-6


class IKStatus(Enum):
    """Outcome of :func:`solve_ik`."""

    CONVERGED = "converged"
    STALLED = "stalled"
    MAX_ITERATIONS = "max_iterations"


#: Status codes of :func:`ik_kernel` (index into :data:`IK_STATUSES`).
IK_CONVERGED, IK_STALLED, IK_MAX_ITERATIONS = 0, 1, 2
#: The :class:`IKStatus` of each status code of :func:`ik_kernel` (``IK_STATUSES[code]``).
IK_STATUSES = (IKStatus.CONVERGED, IKStatus.STALLED, IKStatus.MAX_ITERATIONS)


@dataclass(frozen=True)
class IKResult:
    """Result of :func:`solve_ik`.

    Attributes
    ----------
    joints : (n,) joint positions [rad or m], within the limits
    status : IKStatus
    residual : (6,) ``2 log e^ = [theta n, r]`` [rad, m] at ``joints``, in the frame F
    iterations : int, trial steps taken (one Jacobian each)
    at_limit : (n,) bool, joints on a limit (within :data:`LIMIT_TOL`)
    jacobian : (6, n) LOCAL Jacobian of F (its joint columns) at ``joints``
    """

    joints: np.ndarray
    status: IKStatus
    residual: np.ndarray
    iterations: int
    at_limit: np.ndarray
    jacobian: np.ndarray = None

    @property
    def success(self) -> bool:
        """True when the residual met the tolerance."""
        return self.status is IKStatus.CONVERGED

    @property
    def residual_norm(self) -> float:
        """Largest component of the residual (rad or m)."""
        return float(np.abs(self.residual).max())


def arm_coordinates(model):
    """``(q0, v0, n)``: where the arm's joints start in q and v, and their number.

    For a floating model the root's FREE joint is skipped (q0 = 8, v0 = 6);
    for a fixed-base model q0 = v0 = 0.  The arm joints must be revolute or
    prismatic (one coordinate each).
    """
    q0, v0 = (8, 6) if model.floating else (0, 0)
    n = model.nv - v0
    bad = [
        model.body_names[k]
        for k in range(1 if model.floating else 0, model.nb)
        if int(model.joint_type[k])
        not in (JointType.REVOLUTE, JointType.PRISMATIC, JointType.FIXED)
    ]
    if bad or model.nq - q0 != n:
        raise ValueError(
            f"inverse kinematics needs revolute/prismatic arm joints; bodies {bad} have others"
        )
    return q0, v0, n


def joint_limits(
    limits: ArrayLike | None, n: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(lower, upper)`` (n,) joint limits [rad or m] from ``[[lower, upper], ...]`` (n, 2)
    rows, or unbounded (``-inf``, ``+inf``) for ``None``; a ValueError for a wrong shape, a
    NaN or a row with ``lower > upper``."""
    if limits is None:
        return np.full(n, -np.inf), np.full(n, np.inf)
    L = np.asarray(limits, float)
    if L.shape != (n, 2):
        raise ValueError(f"limits must have shape ({n}, 2) = [[lower, upper], ...], got {L.shape}")
    if np.any(np.isnan(L)) or np.any(L[:, 0] > L[:, 1]):
        raise ValueError(
            f"limits must be [lower, upper] rows with lower <= upper, got {L.tolist()}"
        )
    return L[:, 0].copy(), L[:, 1].copy()


def solve_ik(
    model: Model,
    target: ArrayLike,
    seed: ArrayLike,
    *,
    frame: str = "ee",
    limits: ArrayLike | None = None,
    tol: float = 1e-10,
    max_iterations: int = 100,
    damping: float = 1e-6,
    max_step: float = 0.5,
    posture: ArrayLike | None = None,
    posture_gain: float = 0.2,
) -> IKResult:
    """Joint positions that put ``frame`` at the pose ``target`` relative to the root frame.

    Parameters
    ----------
    model : Model, floating (target relative to the base body) or fixed-base
    target : (8,) unit dual quaternion ``q^_AD``
    seed : (n,) initial joint positions (clipped into the limits)
    frame : str, named frame or body
    limits : (n, 2) array ``[[lower, upper], ...]`` [rad or m], optional
        (e.g. :data:`IIWA_JOINT_LIMITS`)
    tol : float, convergence when every residual component is below tol [rad, m]
    max_iterations : int, largest number of trial steps
    damping : float, constant part of ``lambda^2 / mu`` (bounds the steps near singularities)
    max_step : float, largest joint step per iteration (infinity norm) [rad or m]
    posture : (n,) preferred joint positions, optional.  For a redundant arm, once the
        task is met, one step ``(I - J^+ J) posture_gain (posture - theta)`` toward the
        posture in the null space of the task is taken and the task re-solved (kept only
        if it converges): called once per control tick, this pulls the joints toward the
        posture, away from their limits, without disturbing the end-effector.
    posture_gain : float in (0, 1], fraction of the posture error corrected per call

    Returns
    -------
    IKResult
    """
    q0, _, n = arm_coordinates(model)
    target = np.asarray(target, float)
    if target.shape != (8,):
        raise ValueError(f"target must have shape (8,), got {target.shape}")
    target = check_unit_dq(target, "target")
    seed = np.asarray(seed, float)
    if seed.shape != (n,) or not np.all(np.isfinite(seed)):
        raise ValueError(f"seed must be a finite ({n},) vector, got {seed}")
    lo, hi = joint_limits(limits, n)
    if posture is not None:
        posture = np.asarray(posture, float)
        if posture.shape != (n,) or not np.all(np.isfinite(posture)):
            raise ValueError(f"posture must be a finite ({n},) vector, got {posture}")
        if not (np.isfinite(posture_gain) and 0.0 < posture_gain <= 1.0):
            raise ValueError(f"posture_gain must be in (0, 1], got {posture_gain}")
    for name, x in (("tol", tol), ("damping", damping), ("max_step", max_step)):
        if not (np.isfinite(x) and x > 0) and not (name == "damping" and x == 0):
            raise ValueError(f"{name} must be positive and finite, got {x}")

    q = model.neutral_configuration()
    body, place = frame_target(model, frame)
    ints, reals = model.packed
    theta = np.empty(n)
    e = np.empty(6)
    J = np.empty((6, n))
    use_posture = posture is not None
    code, it = ik_kernel(
        ints,
        reals,
        q,
        q0,
        model.nv - n,
        body,
        np.ascontiguousarray(place),
        target,
        seed,
        param_array(lo),  # read-only, as in the flight software's parameter block: one
        param_array(hi),  # compiled solver for both (a second costs seconds on a cold cache)
        float(tol),
        int(max_iterations),
        float(damping),
        float(max_step),
        param_array(posture if use_posture else seed),
        use_posture,
        float(posture_gain),
        theta,
        e,
        J,
    )
    status = IK_STATUSES[code]
    at_limit = (theta <= lo + LIMIT_TOL) | (theta >= hi - LIMIT_TOL)
    return IKResult(theta, status, e, it, at_limit, J)


@njit(cache=True)
def task_residual_kernel(ints, reals, q, body, place, target, e, J, jacobian, v0):
    """Residual ``e = 2 log e^`` (Table-1 log of the short-way error ``q^_AD* o q^_AF``)
    and, if asked, the LOCAL Jacobian columns ``v0:`` of F, in one compiled pass."""
    nb = ints.shape[0]
    rel = np.empty((nb, 8))
    pose = np.empty((nb, 8))
    K.poses(ints, reals, q, rel, pose)
    pf = np.empty(8)
    D.dq_mul(pose[body], place, pf)
    tc = np.empty(8)
    D.dq_conj(target, tc)
    err = np.empty(8)
    D.dq_mul(tc, pf, err)
    short_way_kernel(err)
    x = np.empty(6)
    D.dq_log(err, x)
    for j in range(6):
        e[j] = 2.0 * x[j]
    if jacobian:
        Jf = np.empty((6, v0 + J.shape[1]))
        K.frame_jacobian(ints, reals, pose, body, place, Jf)
        for i in range(6):
            for j in range(J.shape[1]):
                J[i, j] = Jf[i, v0 + j]


_NO_J = np.empty((6, 0))


@njit(cache=True)
def damped_min_norm(J, use, reg, floor, rhs, y, A, b, idx):
    """``y_u = J_u^T (J_u J_u^T + reg I)^-1 rhs`` over the columns j with ``use[j]``
    (``y = 0`` elsewhere), by Cholesky.

    Of the two equivalent forms the smaller is solved: the m x m one as written, or
    ``(J_u^T J_u + reg I) y_u = J_u^T rhs`` when fewer than m columns are used, i.e. when
    ``J_u J_u^T`` is singular and the m x m form would keep only the digits that ``reg``
    leaves (the least-squares solution instead).  ``reg`` is at least
    ``floor tr(J_u^T J_u) / m`` and is raised tenfold until the factorization succeeds.
    Scratch: ``A`` (p, p), ``b`` (p,), ``idx`` (n,) with ``p = max(m, n)``.
    """
    m, n = J.shape
    k = 0
    trace = 0.0
    for j in range(n):
        y[j] = 0.0
        if use[j]:
            idx[k] = j
            k += 1
            for i in range(m):
                trace += J[i, j] * J[i, j]
    if k == 0:
        return
    reg = max(reg, floor * trace / m)
    p = min(k, m)
    if k < m:
        for a in range(k):
            s = 0.0
            for i in range(m):
                s += J[i, idx[a]] * rhs[i]
            b[a] = s
    else:
        for i in range(m):
            b[i] = rhs[i]
    while True:
        for a in range(p):
            for c in range(a + 1):
                s = 0.0
                if k < m:
                    for i in range(m):
                        s += J[i, idx[a]] * J[i, idx[c]]
                else:
                    for t in range(k):
                        s += J[a, idx[t]] * J[c, idx[t]]
                A[a, c] = s
            A[a, a] += reg
        if K.cholesky(A, p):
            break
        reg = max(10.0 * reg, 1e-300)
    K.cholesky_solve(A, p, b)
    if k < m:
        for a in range(k):
            y[idx[a]] = b[a]
    else:
        for t in range(k):
            j = idx[t]
            s = 0.0
            for i in range(m):
                s += J[i, j] * b[i]
            y[j] = s


@njit(cache=True)
def _step(J, e, lam2, theta, lo, hi):
    """Damped least-squares step ``d = -J_f^T (J_f J_f^T + lam2 I)^-1 r`` over the free
    joints f; joints that would cross a limit are locked on it (their step taken to the
    bound, moved into ``r = e + J_locked d_locked``) and the rest re-solved.  ``lam2`` is
    at least ``1e-12 tr(J_f^T J_f) / 6`` (see :func:`damped_min_norm`)."""
    m, n = J.shape
    free = np.ones(n, dtype=np.bool_)
    to_bound = np.zeros(n)  # steps of the locked joints (to their bound)
    d = np.zeros(n)
    y = np.empty(n)
    p = max(m, n)
    A, b, idx = np.empty((p, p)), np.empty(p), np.empty(n, dtype=np.int64)
    r = np.empty(m)
    for _ in range(n):
        for i in range(m):
            s = e[i]
            for j in range(n):
                if not free[j]:
                    s += J[i, j] * to_bound[j]
            r[i] = s
        damped_min_norm(J, free, lam2, 1e-12, r, y, A, b, idx)
        crossed = False
        for j in range(n):
            if not free[j]:
                d[j] = to_bound[j]
                continue
            d[j] = -y[j]
            new = theta[j] + d[j]
            if new < lo[j]:
                free[j] = False
                to_bound[j] = lo[j] - theta[j]
                crossed = True
            elif new > hi[j]:
                free[j] = False
                to_bound[j] = hi[j] - theta[j]
                crossed = True
        if not crossed:
            break
        if not free.any():
            for j in range(n):
                d[j] = to_bound[j]
            break
    return d


@njit(cache=True)
def right_inverse(J, x, side, free):
    """Minimum-norm ``y`` with ``J y = x`` over the ``free`` joints (bool (n,), updated).

    ``side`` (n,) is +1 for a joint on its upper limit, -1 on its lower limit, 0
    otherwise; such a joint that ``y`` would push further out is frozen (``y = 0``,
    ``free`` cleared) and the rest re-solved.  Regularised by ``1e-12 I``; with fewer free
    joints than task rows it is the least-squares solution (see :func:`damped_min_norm`).
    """
    m, n = J.shape
    y = np.zeros(n)
    p = max(m, n)
    A, b, idx = np.empty((p, p)), np.empty(p), np.empty(n, dtype=np.int64)
    for _ in range(n):
        damped_min_norm(J, free, 1e-12, 0.0, x, y, A, b, idx)
        pushed = False
        for j in range(n):
            if free[j] and side[j] * y[j] > 0.0:
                free[j] = False
                pushed = True
        if not pushed:
            break
    return y


@njit(cache=True)
def _newton(ints, reals, q, q0, v0, body, place, target, theta, lo, hi, tol, max_iterations,
            damping, max_step, e, J):  # fmt: skip
    """Damped least squares from ``theta`` (updated in place) to the task; ``e`` and ``J``
    receive the residual and the Jacobian at the result.  Returns (status code, trial steps).
    """
    n = theta.shape[0]
    J_trial = np.empty((6, n))
    e_trial = np.empty(6)
    trial = np.empty(n)
    for j in range(n):
        q[q0 + j] = theta[j]
    task_residual_kernel(ints, reals, q, body, place, target, e, J, True, v0)
    mu = 1.0
    status = IK_MAX_ITERATIONS
    it = 0
    while True:
        if np.abs(e).max() <= tol:
            status = IK_CONVERGED
            break
        if it >= max_iterations:
            break
        it += 1
        ee = np.dot(e, e)
        d = _step(J, e, mu * (0.5 * ee + damping), theta, lo, hi)
        big = np.abs(d).max()
        if big > max_step:
            d *= max_step / big
        for j in range(n):
            trial[j] = min(max(theta[j] + d[j], lo[j]), hi[j])
            q[q0 + j] = trial[j]
        task_residual_kernel(ints, reals, q, body, place, target, e_trial, J_trial, True, v0)
        if np.dot(e_trial, e_trial) < ee:  # accept, trust the linear model more
            theta[:] = trial
            e[:] = e_trial
            J[:, :] = J_trial
            mu = max(0.1 * mu, _MU_MIN)
        else:  # reject, damp harder; no descent direction left: a local minimum
            mu *= 10.0
            if mu > _MU_MAX or big < 1e-14:
                status = IK_STALLED
                break
    return status, it


@njit(cache=True)
def ik_kernel(ints, reals, q, q0, v0, body, place, target, seed, lo, hi, tol, max_iterations,
              damping, max_step, posture, use_posture, posture_gain, theta, e, J):  # fmt: skip
    """The compiled solver behind :func:`solve_ik` (see the module docstring); trusts its
    inputs.

    ``q`` (nq,) the model's neutral configuration (its arm entries ``q0:`` are overwritten),
    ``v0`` the first arm column of the Jacobian, ``body``/``place`` the frame
    (:func:`~dqspace.multibody.kinematics.frame_target`), ``target`` (8,), ``seed``,
    ``lo``, ``hi`` (n,) [rad or m], ``posture`` (n,) read when ``use_posture``.  Writes the
    solution ``theta`` (n,), its residual ``e`` (6,) and Jacobian ``J`` (6, n); returns
    ``(status code, trial steps)`` (:data:`IK_CONVERGED`, :data:`IK_STALLED`,
    :data:`IK_MAX_ITERATIONS`).
    """
    n = theta.shape[0]
    for j in range(n):
        theta[j] = min(max(seed[j], lo[j]), hi[j])
    status, it = _newton(
        ints, reals, q, q0, v0, body, place, target, theta, lo, hi, tol, max_iterations,
        damping, max_step, e, J,
    )  # fmt: skip
    if use_posture and status == IK_CONVERGED:
        # one step toward the posture in the task's null space, then back onto the task
        pull = posture_gain * (posture - theta)
        pull -= np.linalg.pinv(J) @ (J @ pull)
        t2 = np.empty(n)
        for j in range(n):
            t2[j] = min(max(theta[j] + pull[j], lo[j]), hi[j])
        e2 = np.empty(6)
        J2 = np.empty((6, n))
        s2, it2 = _newton(
            ints, reals, q, q0, v0, body, place, target, t2, lo, hi, tol, max_iterations,
            damping, max_step, e2, J2,
        )  # fmt: skip
        it += it2
        if s2 == IK_CONVERGED:
            theta[:] = t2
            e[:] = e2
            J[:, :] = J2
    return status, it
