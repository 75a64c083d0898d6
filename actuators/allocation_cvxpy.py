"""The cvxpy method of the thrust allocation: both problems built once with cvxpy
Parameters (DPP) and re-solved every call, and the polish of an interior-point
least-squares answer.

cvxpy itself is imported only when a cvxpy allocator is built (it takes about a second):
:func:`cvxpy_module` imports it on first use.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["DEFAULT_SOLVER_OPTIONS", "Attempt", "CvxpyProblems", "cvxpy_module", "polish_lsq"]

# cvxpy's status strings
_CVX_OPTIMAL = {"optimal": "optimal", "optimal_inaccurate": "inaccurate"}
_CVX_INFEASIBLE = {"infeasible", "infeasible_inaccurate"}


def cvxpy_module() -> Any:
    """The ``cvxpy`` module, imported here on first use (not with the package: it is slow)."""
    import cvxpy  # here: importing cvxpy takes about a second

    return cvxpy


#: Keyword arguments of ``cvxpy.Problem.solve`` per solver when none are given.
#: CLARABEL's default tolerances (1e-8) leave objective errors up to ~5e-7 N on random
#: layouts; 1e-9 brings them to ~1e-7 for about one more iteration; 1e-10 now and then ends
#: "almost solved" (optimal_inaccurate).
DEFAULT_SOLVER_OPTIONS = {
    "CLARABEL": {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9},
}


def polish_lsq(
    x: NDArray[np.float64],
    A: NDArray[np.float64],
    b: NDArray[np.float64],
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Sharpen an interior-point solution of ``min |A x - b|^2, lo <= x <= hi``.

    The interior point stops short of the bounds where the cost barely pushes (seen: 2e-5 N
    off a bound with a gradient of 3e-3).  The active set is guessed from it: a command
    within ``1e-3 (hi - lo)`` of a bound whose gradient ``g = A^T (A x - b)`` pushes into
    that bound is put on it; the others get the minimum-norm least-squares correction.  A
    few active-set passes follow (a free command that leaves its range is bounded, a
    bounded one whose gradient has the wrong sign is freed).  The result is kept only when
    it satisfies the optimality conditions (which certify the optimum of this convex
    problem) and does not raise the cost; else ``x`` is returned unchanged.
    """
    fixed = hi <= lo
    near = 1e-3 * (hi - lo)
    g = A.T @ (A @ x - b)
    gtol = 1e-9 * max(1.0, float(np.abs(A.T @ b).max()))
    at_lo = ~fixed & (x <= lo + near) & (g > gtol)
    at_hi = ~fixed & (x >= hi - near) & (g < -gtol)
    for _ in range(2 * len(x)):
        free = ~(fixed | at_lo | at_hi)
        y = np.where(at_hi, hi, np.where(at_lo | fixed, lo, x))
        if np.any(free):
            y[free] += np.linalg.lstsq(A[:, free], b - A @ y, rcond=None)[0]
            below = free & (y < lo)
            above = free & (y > hi)
            if np.any(below | above):
                at_lo |= below
                at_hi |= above
                continue
        g = A.T @ (A @ y - b)
        wrong = (at_lo & (g < -gtol)) | (at_hi & (g > gtol))
        if np.any(wrong):
            at_lo &= ~wrong
            at_hi &= ~wrong
            continue
        cost_x = float(np.sum((A @ x - b) ** 2))
        cost_y = float(np.sum((A @ y - b) ** 2))
        return y if cost_y <= cost_x + 1e-12 * (1.0 + cost_x) else x
    return x


@dataclass(frozen=True)
class Attempt:
    """One solver call: the solution (or None), the outcome and the solver's own status."""

    x: NDArray[np.float64] | None
    outcome: str  # "optimal", "inaccurate", "infeasible", "error"
    raw: str
    detail: str = ""


class CvxpyProblems:
    """The allocation LP and its bounded least-squares fallback as cvxpy problems.

    Built once (DPP: only Parameters change between solves); :meth:`lp` and :meth:`lsq` set
    the Parameters and solve.

    Parameters
    ----------
    m, S : int, matched rows and thrusters
    weights : (S,) cost weights of the LP [-]
    solver : str, a cvxpy solver installed
    solver_options : mapping, keyword arguments of ``cvxpy.Problem.solve``

    Attributes
    ----------
    lp_problem, lsq_problem : cvxpy.Problem
    """

    def __init__(
        self,
        m: int,
        S: int,
        weights: NDArray[np.float64],
        solver: str,
        solver_options: Mapping[str, object],
    ) -> None:
        cp = cvxpy_module()
        self.solver = solver
        self.solver_options = solver_options
        self._p_A = cp.Parameter((m, S), name="A")
        self._p_b = cp.Parameter(m, name="b")
        self._p_Aw = cp.Parameter((m, S), name="W_A")
        self._p_bw = cp.Parameter(m, name="W_b")
        self._p_lo = cp.Parameter(S, name="sigma_lo")
        self._p_hi = cp.Parameter(S, name="sigma_hi")
        self._p_w = cp.Parameter(S, nonneg=True, name="w")
        self._p_w.value = weights
        x = cp.Variable(S, name="sigma")
        self.lp_problem = cp.Problem(
            cp.Minimize(self._p_w @ x),
            [self._p_A @ x == self._p_b, x >= self._p_lo, x <= self._p_hi],
        )
        y = cp.Variable(S, name="sigma_lsq")
        self.lsq_problem = cp.Problem(
            cp.Minimize(cp.sum_squares(self._p_Aw @ y - self._p_bw)),
            [y >= self._p_lo, y <= self._p_hi],
        )
        self._x_lp = x
        self._x_lsq = y

    def lp(
        self,
        A: NDArray[np.float64],
        b: NDArray[np.float64],
        lo: NDArray[np.float64],
        hi: NDArray[np.float64],
    ) -> Attempt:
        """Solve ``min w.sigma  s.t.  A sigma = b, lo <= sigma <= hi``."""
        self._p_A.value = A
        self._p_b.value = b
        self._p_lo.value = lo
        self._p_hi.value = hi
        return self._solve(self.lp_problem, self._x_lp)

    def lsq(
        self,
        Aw: NDArray[np.float64],
        bw: NDArray[np.float64],
        lo: NDArray[np.float64],
        hi: NDArray[np.float64],
    ) -> Attempt:
        """Solve ``min |Aw sigma - bw|^2  s.t.  lo <= sigma <= hi``."""
        self._p_Aw.value = Aw
        self._p_bw.value = bw
        self._p_lo.value = lo
        self._p_hi.value = hi
        return self._solve(self.lsq_problem, self._x_lsq)

    def _solve(self, problem, var):
        cp = cvxpy_module()
        try:
            problem.solve(solver=self.solver, **self.solver_options)
        except cp.error.SolverError as exc:
            return Attempt(None, "error", "SolverError", str(exc))
        status = problem.status
        x = var.value
        if status in _CVX_OPTIMAL:
            if x is None:
                return Attempt(None, "error", str(status), "no solution returned")
            return Attempt(np.array(x, dtype=float), _CVX_OPTIMAL[status], str(status))
        if status in _CVX_INFEASIBLE:
            return Attempt(None, "infeasible", str(status))
        return Attempt(None, "error", str(status))
