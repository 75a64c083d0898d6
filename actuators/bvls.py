"""A compiled bounded-variable least-squares solver for small dense problems (numba).

Problem solved by :func:`bvls`::

    min_x  |A x - b|_2^2     s.t.   lo <= x <= hi

with ``A`` (m, n) dense (any rank; more columns than rows is fine), ``b`` (m,) and finite
bounds ``lo <= hi`` (``lo == hi`` fixes a variable).  It is the best-effort fallback of the
thrust allocation (:mod:`dqspace.actuators.allocation`: m <= 6 rows, a few dozen columns)
but knows nothing about thrusters.

Method: the active-set algorithm of Stark & Parker (1995, "Bounded-variable least-squares:
an algorithm and applications", Computational Statistics 10, 129-141), i.e. Lawson &
Hanson's NNLS with two-sided bounds.  Every variable starts at its lower bound.  Each outer
iteration computes the negative gradient ``w = A^T (b - A x)``; a variable at its lower
bound with ``w_j > tol`` or at its upper bound with ``w_j < -tol`` would lower the cost by
moving inward, and the one with the largest ``|w_j|`` is freed.  The free variables then
take the unconstrained least-squares solution ``z`` of ``A_F z = b - A_B x_B``
(:func:`dqspace.actuators.linalg.lstsq_min_norm`); where ``z`` leaves the box, ``x`` moves
toward ``z`` as far as the first bound allows, that variable is bound there, and ``z`` is
recomputed, until ``z`` is inside the box.  When no variable can move inward the
Karush-Kuhn-Tucker conditions hold to ``tol`` and ``x`` is optimal.

The free columns stay linearly independent: a freed column whose addition does not raise
the numerical rank (singular values within ``RANK_RCOND`` of the largest), or whose
least-squares value does not move it inward (rounding), is put back and skipped until the
next accepted move.  Hence rank-deficient ``A`` (repeated or zero columns, dependent rows)
is handled, and the optimum found is a vertex-like solution (the cost is unique, ``x``
need not be).

Tolerance: ``tol = KKT_TOL * max_j |a_j| * |b - A lo|`` (a gradient below it changes the
cost by less than ``KKT_TOL^2 |b - A lo|^2 / 2``).

Status codes (the first value returned; names in :data:`BVLS_STATUS`):

=================================  ====================================================
``BVLS_OPTIMAL = 0``               ``x`` optimal (KKT conditions to ``tol``)
``BVLS_ITERATION_LIMIT = 1``       more than ``max_iter`` moves (freed variables plus
                                   steps to a bound); ``x`` is the last feasible iterate
=================================  ====================================================
"""

import math

import numpy as np
from numba import njit
from numpy.typing import NDArray

from .linalg import lstsq_min_norm

__all__ = ["BVLS_ITERATION_LIMIT", "BVLS_OPTIMAL", "BVLS_STATUS", "bvls"]

#: Status codes returned by :func:`bvls` (index into :data:`BVLS_STATUS`).
BVLS_OPTIMAL, BVLS_ITERATION_LIMIT = 0, 1
#: The status codes' names.
BVLS_STATUS = ("optimal", "iteration_limit")
#: Relative size of the gradient below which a bound variable counts as optimal.
KKT_TOL = 1e-13
#: Relative singular value below which a set of free columns counts as rank-deficient.
RANK_RCOND = 1e-12

# where a variable is (state array)
_FREE, _AT_LO, _AT_HI, _FIXED = 0, -1, 1, 2


@njit(cache=True)
def _free_solution(A, b, x, state, cols, rhs, zf):
    """Least-squares values ``zf[:k]`` of the free variables ``cols[:k]``; returns (k, rank)."""
    m, n = A.shape
    k = 0
    for j in range(n):
        if state[j] == _FREE:
            cols[k] = j
            k += 1
    for i in range(m):
        acc = b[i]
        for j in range(n):
            if state[j] != _FREE:
                acc -= A[i, j] * x[j]
        rhs[i] = acc
    rank = lstsq_min_norm(A, cols, k, rhs, RANK_RCOND, zf)
    return k, rank


@njit(cache=True)
def bvls(  # noqa: C901
    A: NDArray[np.float64],
    b: NDArray[np.float64],
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    max_iter: int,
    x: NDArray[np.float64],
) -> tuple[int, int]:
    """``min |A x - b|^2  s.t.  lo <= x <= hi`` by Stark & Parker's BVLS (module docstring).

    Parameters
    ----------
    A : (m, n) float64 array
    b : (m,) float64 array
    lo, hi : (n,) float64 arrays, finite bounds with ``lo <= hi``
    max_iter : int, the most moves (freed variables plus steps to a bound)
    x : (n,) float64 array, written: the solution, inside ``[lo, hi]``

    Returns
    -------
    status : int, ``BVLS_OPTIMAL`` or ``BVLS_ITERATION_LIMIT``
    iterations : int, moves made
    """
    m, n = A.shape
    state = np.empty(n, np.int64)
    blocked = np.zeros(n, np.bool_)
    cols = np.empty(n, np.int64)
    zf = np.empty(n)
    r = np.empty(m)
    rhs = np.empty(m)
    for j in range(n):
        x[j] = lo[j]
        state[j] = _FIXED if hi[j] <= lo[j] else _AT_LO
    anorm = 0.0
    for j in range(n):
        s = 0.0
        for i in range(m):
            s += A[i, j] * A[i, j]
        anorm = max(anorm, math.sqrt(s))
    rnorm = 0.0
    for i in range(m):
        acc = b[i]
        for j in range(n):
            acc -= A[i, j] * x[j]
        r[i] = acc
        rnorm += acc * acc
    tol = KKT_TOL * anorm * math.sqrt(rnorm)
    it = 0
    while True:
        # ---- the bound variable that lowers the cost fastest by moving inward
        enter = -1
        best = tol
        for j in range(n):
            if blocked[j]:
                continue
            wj = 0.0
            for i in range(m):
                wj += A[i, j] * r[i]
            if (state[j] == _AT_LO and wj > best) or (state[j] == _AT_HI and -wj > best):
                enter = j
                best = abs(wj)
        if enter < 0:
            return BVLS_OPTIMAL, it
        if it >= max_iter:
            return BVLS_ITERATION_LIMIT, it
        it += 1
        side = state[enter]
        state[enter] = _FREE
        k, rank = _free_solution(A, b, x, state, cols, rhs, zf)
        z_enter = 0.0
        for f in range(k):
            if cols[f] == enter:
                z_enter = zf[f]
        inward = z_enter > x[enter] if side == _AT_LO else z_enter < x[enter]
        if rank < k or not inward:  # dependent column, or rounding: skip it for now
            state[enter] = side
            blocked[enter] = True
            continue
        blocked[:] = False
        # ---- move toward z; bind the first variable that would leave the box, re-solve
        while True:
            alpha = 1.0
            limit = -1
            for f in range(k):
                j = cols[f]
                if zf[f] < lo[j]:
                    a = (lo[j] - x[j]) / (zf[f] - x[j])
                elif zf[f] > hi[j]:
                    a = (hi[j] - x[j]) / (zf[f] - x[j])
                else:
                    continue
                if a < alpha:
                    alpha = a
                    limit = j
            if limit < 0:
                for f in range(k):
                    x[cols[f]] = zf[f]
                break
            if it >= max_iter:
                return BVLS_ITERATION_LIMIT, it
            it += 1
            alpha = max(alpha, 0.0)
            for f in range(k):
                j = cols[f]
                xj = x[j] + alpha * (zf[f] - x[j])
                xj = min(max(xj, lo[j]), hi[j])
                x[j] = xj
                if j == limit or (zf[f] < lo[j] and xj <= lo[j]) or (zf[f] > hi[j] and xj >= hi[j]):
                    if zf[f] < lo[j]:
                        state[j] = _AT_LO
                        x[j] = lo[j]
                    else:
                        state[j] = _AT_HI
                        x[j] = hi[j]
            k, rank = _free_solution(A, b, x, state, cols, rhs, zf)
        for i in range(m):
            acc = b[i]
            for j in range(n):
                acc -= A[i, j] * x[j]
            r[i] = acc
