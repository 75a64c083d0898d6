"""The compiled thrust allocation: the problem set-up, the re-check of an answer and the
fast method start to end (:func:`allocate_kernel`, callable from compiled flight software).

The problem (:mod:`dqspace.actuators.allocation`, paper eq. 49 with the thrusters' health):
``min w.sigma  s.t.  A sigma = b, lo <= sigma <= hi`` with ``A = H_rows diag(eff)``,
``b = demand - H_rows sigma_fixed`` (:func:`allocation_problem`); its best-effort fallback
``min |W (A sigma - b)|^2  s.t.  lo <= sigma <= hi``.  Both methods of
:class:`~dqspace.actuators.allocation.Allocator` set the problem up and re-check a solver's
answer (:func:`recheck_kernel`) here; the fast method solves it with the bounded-variable
simplex of :mod:`dqspace.actuators.simplex` and BVLS (:mod:`dqspace.actuators.bvls`).
"""

import math

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .bvls import BVLS_OPTIMAL, BVLS_STATUS, bvls
from .linalg import lstsq_min_norm
from .simplex import SIMPLEX_INFEASIBLE, SIMPLEX_OPTIMAL, bounded_simplex

__all__ = [
    "ALLOC_BEST_EFFORT",
    "ALLOC_INACCURATE",
    "ALLOC_INFO_SIZE",
    "ALLOC_LOWER_BOUNDS",
    "ALLOC_OPTIMAL",
    "ALLOC_SOLVER_ERROR",
    "CHECK_BOUNDS",
    "CHECK_EQUALITY",
    "CHECK_ERROR",
    "CHECK_INDEX",
    "CHECK_NONFINITE",
    "CHECK_OK",
    "CHECK_VALUE",
    "CHECK_VIOLATION",
    "CHECK_WIDTH",
    "INFO_BOUND_TOL",
    "INFO_EQ_TOL",
    "INFO_LP",
    "INFO_LSQ",
    "LSQ_NO_FREE",
    "SIMPLEX_TOL",
    "allocate_kernel",
    "allocation_problem",
    "recheck_kernel",
]

#: Status codes of :func:`allocate_kernel`: the order of :class:`AllocationStatus`.
ALLOC_OPTIMAL, ALLOC_INACCURATE, ALLOC_BEST_EFFORT, ALLOC_SOLVER_ERROR = 0, 1, 2, 3
#: Not a status: the code of the closing note "every command set to its lower bound".
ALLOC_LOWER_BOUNDS = 4
#: Outcomes of :func:`recheck_kernel`.
CHECK_OK, CHECK_NONFINITE, CHECK_BOUNDS, CHECK_EQUALITY = 0, 1, 2, 3
#: What :func:`recheck_kernel` writes at ``info[at + ...]``: the bound violation [N] (for
#: CHECK_EQUALITY: the tolerance exceeded), the thruster index, its command [N], and
#: ``|A sigma - b|_inf``.
CHECK_VIOLATION, CHECK_INDEX, CHECK_VALUE, CHECK_ERROR = 0, 1, 2, 3
CHECK_WIDTH = 4
#: Layout of :func:`allocate_kernel`'s ``info``: the LP answer's re-check, the
#: least-squares answer's re-check, then the two tolerances used.
INFO_LP, INFO_LSQ = 0, CHECK_WIDTH
INFO_EQ_TOL, INFO_BOUND_TOL = 2 * CHECK_WIDTH, 2 * CHECK_WIDTH + 1
ALLOC_INFO_SIZE = 2 * CHECK_WIDTH + 2
#: The least-squares status when no thruster has a free command (sigma = lower bounds).
LSQ_NO_FREE = len(BVLS_STATUS)
#: Tolerance handed to the simplex (dimensionless, see :mod:`.simplex`).
SIMPLEX_TOL = 1e-9


@njit(cache=True)
def allocation_problem(
    H_rows: NDArray[np.float64],
    effectiveness: NDArray[np.float64],
    fixed_thrust: NDArray[np.float64],
    demand: NDArray[np.float64],
    hi: NDArray[np.float64],
    tol: float,
    A: NDArray[np.float64],
    b: NDArray[np.float64],
) -> tuple[float, float]:
    """The allocation problem for the thrusters' health (module docstring).

    ``A = H_rows diag(effectiveness)``, ``b = demand - H_rows fixed_thrust``.

    Parameters
    ----------
    H_rows : (m, S) the matched rows of the mapping H [1] and [m]
    effectiveness, fixed_thrust : (S,) [-], [N] (:class:`ThrusterSet`)
    demand : (m,) [N] or [N, N m]
    hi : (S,) upper command bounds [N]
    tol : float, the allocator's relative tolerance
    A : (m, S) written
    b : (m,) written

    Returns
    -------
    (eq_tol, bound_tol) : ``tol max(1, max hi, |b|_inf)`` and ``tol max(1, max hi)``
    """
    m, S = H_rows.shape
    hmax = 1.0
    for j in range(S):
        hmax = max(hmax, hi[j])
    bmax = 0.0
    for i in range(m):
        acc = 0.0
        for j in range(S):
            A[i, j] = H_rows[i, j] * effectiveness[j]
            acc += H_rows[i, j] * fixed_thrust[j]
        b[i] = demand[i] - acc
        bmax = max(bmax, abs(b[i]))
    return tol * max(hmax, bmax), tol * hmax


@njit(cache=True)
def recheck_kernel(  # noqa: C901
    x: NDArray[np.float64],
    A: NDArray[np.float64],
    b: NDArray[np.float64],
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    eq_tol: float,
    bound_tol: float,
    with_equality: bool,
    info: NDArray[np.float64],
    at: int,
) -> int:
    """Check a solver's answer before use, in place (both methods use it).

    Bounds must hold within ``bound_tol`` (then ``x`` is clipped onto them); with
    ``with_equality``, ``A x = b`` must hold within ``eq_tol`` after a least-squares
    correction of the commands strictly inside their bounds (minimum norm,
    :func:`dqspace.actuators.linalg.lstsq_min_norm`), applied only to residuals already
    below ``1e3 eq_tol``: it polishes, never repairs.

    Parameters
    ----------
    x : (S,) the answer [N]; clipped and polished in place
    A : (m, S), b : (m,) the equality constraints (read only with ``with_equality``)
    lo, hi : (S,) command bounds [N]
    eq_tol, bound_tol : float, tolerances [N] (:func:`allocation_problem`)
    with_equality : bool
    info : float64 array; on failure ``info[at + CHECK_*]`` written (see the constants)
    at : int, offset into ``info``

    Returns
    -------
    int, ``CHECK_OK``, ``CHECK_NONFINITE``, ``CHECK_BOUNDS`` or ``CHECK_EQUALITY``
    """
    S = x.shape[0]
    for j in range(S):
        if not math.isfinite(x[j]):
            info[at + CHECK_INDEX] = j
            info[at + CHECK_VALUE] = x[j]
            return CHECK_NONFINITE
    viol = -np.inf
    worst = 0
    for j in range(S):
        v = max(lo[j] - x[j], x[j] - hi[j])
        if v > viol:
            viol = v
            worst = j
    if viol > bound_tol:
        info[at + CHECK_VIOLATION] = viol
        info[at + CHECK_INDEX] = worst
        info[at + CHECK_VALUE] = x[worst]
        return CHECK_BOUNDS
    for j in range(S):
        x[j] = min(max(x[j], lo[j]), hi[j])
    if not with_equality:
        return CHECK_OK
    m = A.shape[0]
    r = np.empty(m)
    err = _residual(A, b, x, r)
    if eq_tol < err <= 1e3 * eq_tol:
        cols = np.empty(S, np.int64)
        k = 0
        for j in range(S):
            if x[j] > lo[j] + bound_tol and x[j] < hi[j] - bound_tol:
                cols[k] = j
                k += 1
        if k > 0:
            dx = np.empty(k)
            lstsq_min_norm(A, cols, k, r, np.finfo(np.float64).eps * max(m, k), dx)
            for f in range(k):
                j = cols[f]
                x[j] = min(max(x[j] + dx[f], lo[j]), hi[j])
            err = _residual(A, b, x, r)
    if err > eq_tol:
        info[at + CHECK_VIOLATION] = eq_tol
        info[at + CHECK_ERROR] = err
        return CHECK_EQUALITY
    return CHECK_OK


@njit(cache=True)
def _residual(A, b, x, r):
    """``r = b - A x``; returns ``|r|_inf``."""
    err = 0.0
    for i in range(A.shape[0]):
        acc = 0.0
        for j in range(A.shape[1]):
            acc += A[i, j] * x[j]
        r[i] = b[i] - acc
        err = max(err, abs(r[i]))
    return err


@njit(cache=True)
def allocate_kernel(
    H_rows: NDArray[np.float64],
    effectiveness: NDArray[np.float64],
    fixed_thrust: NDArray[np.float64],
    demand: NDArray[np.float64],
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    weights: NDArray[np.float64],
    residual_weights: NDArray[np.float64],
    tol: float,
    lp_max_iter: int,
    lsq_max_iter: int,
    sigma: NDArray[np.float64],
    info: NDArray[np.float64],
) -> tuple[int, int, int, int, int, int, int]:
    """The fast allocation, start to end (compiled; the one implementation of the method).

    1. ``A, b`` and the tolerances (:func:`allocation_problem`);
    2. the LP ``min weights.sigma  s.t.  A sigma = b, lo <= sigma <= hi`` by the simplex
       (:func:`dqspace.actuators.simplex.bounded_simplex`, tolerance ``SIMPLEX_TOL``);
       an optimal answer is re-checked (:func:`recheck_kernel`) and, if it passes, used;
    3. otherwise the best effort ``min |W (A sigma - b)|^2  s.t.  lo <= sigma <= hi``
       (``W = diag(residual_weights)``) by BVLS (:func:`dqspace.actuators.bvls.bvls`),
       its answer re-checked against the bounds; if that fails too, ``sigma = lo``.

    Parameters
    ----------
    H_rows : (m, S) the matched rows of H (m = 3 force mode, 6 wrench mode)
    effectiveness, fixed_thrust : (S,) the thrusters' health [-], [N]
    demand : (m,) force [N] or wrench [N, N m]
    lo, hi : (S,) command bounds [N] (``ThrusterSet.command_lower / command_upper``)
    weights : (S,) cost weights [-]
    residual_weights : (m,) best-effort weights, positive
    tol : float, relative tolerance of the re-check (``Allocator.tol``)
    lp_max_iter, lsq_max_iter : int, iteration limits of the simplex and of BVLS
    sigma : (S,) written, the commands [N]
    info : (ALLOC_INFO_SIZE,) written where relevant: the re-checks' details at
        ``INFO_LP`` and ``INFO_LSQ``, the tolerances at ``INFO_EQ_TOL``, ``INFO_BOUND_TOL``

    Returns
    -------
    status : int, ``ALLOC_*`` (the order of :class:`AllocationStatus`)
    lp_status, lp_iterations : int, the simplex's ``SIMPLEX_*`` status and iterations
    lp_check : int, ``CHECK_*`` of the LP answer (``CHECK_OK`` if not optimal)
    lsq_status, lsq_iterations : int, BVLS's ``BVLS_*`` status (``LSQ_NO_FREE`` when no
        command is free) and iterations; -1 and 0 when the LP answer was used
    lsq_check : int, ``CHECK_*`` of the least-squares answer
    """
    m, S = H_rows.shape
    A = np.empty((m, S))
    b = np.empty(m)
    eq_tol, bound_tol = allocation_problem(
        H_rows, effectiveness, fixed_thrust, demand, hi, tol, A, b
    )
    info[INFO_EQ_TOL] = eq_tol
    info[INFO_BOUND_TOL] = bound_tol
    # ---- the LP
    x, lp_status, lp_it = bounded_simplex(A, b, weights, lo, hi, lp_max_iter, SIMPLEX_TOL)
    lp_check = CHECK_OK
    if lp_status == SIMPLEX_OPTIMAL:
        for j in range(S):
            sigma[j] = x[j]
        lp_check = recheck_kernel(sigma, A, b, lo, hi, eq_tol, bound_tol, True, info, INFO_LP)
        if lp_check == CHECK_OK:
            return ALLOC_OPTIMAL, lp_status, lp_it, lp_check, -1, 0, CHECK_OK
    # ---- the bounded least-squares fallback
    for i in range(m):
        for j in range(S):
            A[i, j] *= residual_weights[i]
        b[i] *= residual_weights[i]
    any_free = False
    for j in range(S):
        any_free = any_free or hi[j] > lo[j]
    if any_free:
        lsq_status, lsq_it = bvls(A, b, lo, hi, lsq_max_iter, sigma)
    else:
        for j in range(S):
            sigma[j] = lo[j]
        lsq_status, lsq_it = LSQ_NO_FREE, 0
    lsq_check = CHECK_OK
    ok = lsq_status == BVLS_OPTIMAL or lsq_status == LSQ_NO_FREE
    if ok:
        lsq_check = recheck_kernel(sigma, A, b, lo, hi, eq_tol, bound_tol, False, info, INFO_LSQ)
        ok = lsq_check == CHECK_OK
    if ok:
        status = ALLOC_BEST_EFFORT if lp_status == SIMPLEX_INFEASIBLE else ALLOC_SOLVER_ERROR
    else:
        status = ALLOC_SOLVER_ERROR
        for j in range(S):
            sigma[j] = lo[j]
    return status, lp_status, lp_it, lp_check, lsq_status, lsq_it, lsq_check
