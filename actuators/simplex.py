"""A compiled bounded-variable simplex for small dense linear programs (numba).

Problem solved by :func:`bounded_simplex`::

    min_x  c . x     s.t.   A x = b,    lo <= x <= hi

with ``A`` (m, n) dense, ``b`` (m,), ``c``, ``lo``, ``hi`` (n,) and finite bounds
``lo <= hi`` (a variable with ``lo == hi`` is fixed).  It is written for the thrust
allocation of :mod:`dqspace.actuators.allocation` (m <= 6 rows, a dozen variables) but
knows nothing about thrusters.

Method: two phases on a dense tableau in the shifted variables ``y = x - lo``; nonbasic
variables sit at either bound.  Phase 1 drives one artificial variable per row to zero,
phase 2 minimises the cost with the artificials fixed at 0.  Bland's rule (lowest index)
picks the entering variable and breaks ties among the leaving ones, so it never cycles and
its result is deterministic.  At the end the basic values are recomputed from the original
columns with :func:`solve_small` (Gaussian elimination with partial pivoting), so
``A x = b`` holds to rounding, and ``x`` is clipped into ``[lo, hi]``.

Status codes (the second value returned; names in :data:`SIMPLEX_STATUS`):

=================================  ====================================================
``SIMPLEX_OPTIMAL = 0``            ``x`` is an optimal vertex
``SIMPLEX_INFEASIBLE = 1``         phase 1 left ``sum |artificials| > tol max(1,
                                   |b - A lo|_inf)``: no ``x`` within the bounds meets
                                   ``A x = b``; ``x = lo``
``SIMPLEX_ITERATION_LIMIT = 2``    more than ``max_iter`` pivots and bound flips (both
                                   phases together); ``x = lo``
``SIMPLEX_UNBOUNDED = 3``          an unbounded step; cannot happen with finite bounds,
                                   so it signals numerical trouble; ``x = lo``
=================================  ====================================================

Tolerance ``tol`` (dimensionless; the allocator passes 1e-9): a reduced cost improves
when it is below ``-tol`` in phase 1 and below ``-tol max(1, |c|_inf)`` in phase 2;
tableau entries with ``|entry| <= tol`` are ignored in the ratio test; phase 1 declares
infeasibility as above.  Ratios within ``1e-12`` count as ties.  :func:`solve_small`
treats a pivot below ``1e-14`` as singular.

Arrays must be float64 (pass writable copies to keep to one compiled signature).
"""

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .linalg import lu_factor, lu_solve

__all__ = [
    "SIMPLEX_INFEASIBLE",
    "SIMPLEX_ITERATION_LIMIT",
    "SIMPLEX_OPTIMAL",
    "SIMPLEX_STATUS",
    "SIMPLEX_UNBOUNDED",
    "bounded_simplex",
    "solve_small",
]

#: Status codes returned by :func:`bounded_simplex` (index into :data:`SIMPLEX_STATUS`).
SIMPLEX_OPTIMAL, SIMPLEX_INFEASIBLE, SIMPLEX_ITERATION_LIMIT, SIMPLEX_UNBOUNDED = 0, 1, 2, 3
#: The status codes' names.
SIMPLEX_STATUS = ("optimal", "infeasible", "iteration_limit", "unbounded")


@njit(cache=True)
def bounded_simplex(  # noqa: C901
    A: NDArray[np.float64],
    b: NDArray[np.float64],
    c: NDArray[np.float64],
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    max_iter: int,
    tol: float,
) -> tuple[NDArray[np.float64], int, int]:
    """``min c.x  s.t.  A x = b, lo <= x <= hi`` (finite bounds) by a two-phase simplex.

    Shifted variables ``y = x - lo`` in ``[0, hi - lo]``; nonbasic variables sit at either
    bound.  Phase 1 minimizes the sum of one artificial per row, phase 2 the cost, with the
    artificials fixed at 0 (they never re-enter).  Bland's rule (lowest index) picks the
    entering and, among ties, the leaving variable, so there is no cycling and the result
    is deterministic.  The basic values are recomputed at the end from the original
    columns, so ``A x = b`` holds to rounding.

    Parameters
    ----------
    A : (m, n) float64 array, equality constraint matrix
    b : (m,) float64 array, right-hand side
    c : (n,) float64 array, cost
    lo, hi : (n,) float64 arrays, finite bounds with ``lo <= hi``
    max_iter : int, the most pivots and bound flips (both phases together)
    tol : float, the tolerance described in the module docstring (e.g. 1e-9)

    Returns
    -------
    x : (n,) float64 array, the solution (``lo`` unless the status is optimal)
    status : int, one of the ``SIMPLEX_*`` codes (module docstring)
    iterations : int, pivots and bound flips made
    """
    m, n = A.shape
    N = n + m
    T = np.zeros((m, N))
    beta = np.empty(m)
    ub = np.empty(N)
    for j in range(n):
        ub[j] = hi[j] - lo[j]
    basis = np.empty(m, np.int64)
    is_basic = np.zeros(N, np.bool_)
    at_upper = np.zeros(N, np.bool_)
    bscale = 1.0
    for i in range(m):
        r = b[i]
        for j in range(n):
            r -= A[i, j] * lo[j]
        s = 1.0 if r >= 0.0 else -1.0
        for j in range(n):
            T[i, j] = s * A[i, j]
        T[i, n + i] = 1.0
        beta[i] = s * r
        ub[n + i] = np.inf
        basis[i] = n + i
        is_basic[n + i] = True
        bscale = max(bscale, abs(r))
    T0 = T.copy()
    rhs0 = beta.copy()
    cscale = 1.0
    for j in range(n):
        cscale = max(cscale, abs(c[j]))
    cost = np.zeros(N)
    it = 0
    for phase in range(2):
        if phase == 0:
            for j in range(n, N):
                cost[j] = 1.0
            dtol = tol
        else:
            for j in range(n):
                cost[j] = c[j]
            for j in range(n, N):
                cost[j] = 0.0
                ub[j] = 0.0
            dtol = tol * cscale
        while True:
            # entering variable: lowest index with an improving reduced cost
            enter = -1
            dirn = 1.0
            for j in range(n):
                if is_basic[j] or ub[j] <= 0.0:
                    continue
                d = cost[j]
                for i in range(m):
                    d -= cost[basis[i]] * T[i, j]
                if not at_upper[j] and d < -dtol:
                    enter = j
                    dirn = 1.0
                    break
                if at_upper[j] and d > dtol:
                    enter = j
                    dirn = -1.0
                    break
            if enter < 0:
                break
            if it >= max_iter:
                return lo.copy(), SIMPLEX_ITERATION_LIMIT, it
            it += 1
            # ratio test: the entering variable's own range, then each basic variable
            step = ub[enter]
            leave = -1
            leave_up = False
            for i in range(m):
                g = -dirn * T[i, enter]
                k = basis[i]
                if g < -tol:
                    ratio = beta[i] / (-g)
                    up = False
                elif g > tol and ub[k] < np.inf:
                    ratio = (ub[k] - beta[i]) / g
                    up = True
                else:
                    continue
                if ratio < 0.0:
                    ratio = 0.0
                if ratio < step - 1e-12 or (
                    leave >= 0 and ratio <= step + 1e-12 and k < basis[leave]
                ):
                    step = ratio
                    leave = i
                    leave_up = up
            if step == np.inf:
                return lo.copy(), SIMPLEX_UNBOUNDED, it
            for i in range(m):
                beta[i] -= dirn * T[i, enter] * step
            if leave < 0:  # bound flip, no pivot
                at_upper[enter] = not at_upper[enter]
                continue
            value = step if dirn > 0.0 else ub[enter] - step
            k = basis[leave]
            is_basic[k] = False
            at_upper[k] = leave_up
            p = T[leave, enter]
            for j in range(N):
                T[leave, j] /= p
            for i in range(m):
                if i != leave:
                    f = T[i, enter]
                    if f != 0.0:
                        for j in range(N):
                            T[i, j] -= f * T[leave, j]
            basis[leave] = enter
            is_basic[enter] = True
            at_upper[enter] = False
            beta[leave] = value
        if phase == 0:
            infeas = 0.0
            for i in range(m):
                if basis[i] >= n:
                    infeas += abs(beta[i])
            if infeas > tol * bscale:
                return lo.copy(), SIMPLEX_INFEASIBLE, it
    # recompute the basic values from the original columns
    y = np.zeros(N)
    for j in range(n):
        if not is_basic[j] and at_upper[j]:
            y[j] = ub[j]
    rhs = rhs0.copy()
    for j in range(n):
        if y[j] != 0.0:
            for i in range(m):
                rhs[i] -= T0[i, j] * y[j]
    B = np.empty((m, m))
    for i in range(m):
        for r in range(m):
            B[r, i] = T0[r, basis[i]]
    yb = solve_small(B, rhs)
    if yb.size == 0:  # singular basis (cannot happen in exact arithmetic): keep the tableau
        yb = beta
    for i in range(m):
        y[basis[i]] = yb[i]
    x = np.empty(n)
    for j in range(n):
        x[j] = min(max(lo[j] + y[j], lo[j]), hi[j])
    return x, SIMPLEX_OPTIMAL, it


@njit(cache=True)
def solve_small(B: NDArray[np.float64], rhs: NDArray[np.float64]) -> NDArray[np.float64]:
    """Solve ``B x = rhs`` for a small square ``B`` (m <= 6 here) by Gaussian elimination
    with partial pivoting (:func:`dqspace.actuators.linalg.lu_factor`).

    Parameters
    ----------
    B : (m, m) float64 array (not modified)
    rhs : (m,) float64 array (not modified)

    Returns
    -------
    (m,) float64 array, or an empty array when a pivot falls below 1e-14 (singular ``B``)
    """
    m = B.shape[0]
    M = B.copy()
    perm = np.empty(m, np.int64)
    lu_factor(M, m, perm)
    for k in range(m):
        if abs(M[k, k]) < 1e-14:
            return np.empty(0)
    x = rhs.copy()
    lu_solve(M, m, perm, x)
    return x
