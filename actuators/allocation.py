"""Thrust allocation: the thrust commands that produce a demanded force (or wrench).

The paper's allocation (eq. 49), for a thruster set with mapping ``H = [H_f; H_t]``
(eq. 35, :class:`~dqspace.actuators.thrusters.ThrusterSet`):

    min_sigma  sum_i w_i sigma_i
    s.t.       H_f sigma = f,   sigma_min <= sigma_i <= sigma_max            (49)

with ``w_i = 1`` in the paper.  ``mode="force"`` is eq. (49) as printed (the VSCMGs take
the torque, eq. 48); ``mode="wrench"`` replaces ``H_f sigma = f`` by ``H sigma = [f; tau]``
for a base controlled by thrusters alone.

Faults are planned around (``ThrusterSet.faults``): a failed-off thruster is excluded
(its command is fixed at 0), a stuck-on one is excluded too and its known wrench
``H_i sigma_stuck`` is subtracted from the demand so the others compensate it, a degraded
one enters with its column scaled by its effectiveness.  With ``A = H_rows diag(eff)``,
``b = demand - H_rows sigma_fixed`` and ``[lo, hi]`` the command bounds, the problem solved
is ``min w.sigma s.t. A sigma = b, lo <= sigma <= hi``.

When that is infeasible (a demand beyond what the thrusters can give) the allocator falls
back to the bounded least-squares best effort

    min_sigma  || W (A sigma - b) ||^2   s.t.  lo <= sigma <= hi

(``W = diag(residual_weights)``), and reports the residual.  It never raises for a
demand it cannot meet, nor for a solver failure: every outcome is an
:class:`AllocationResult` whose ``status`` says what happened:

============== ========================================================================
status          meaning
============== ========================================================================
optimal         eq. (49) solved; re-checked: ``|A sigma - b| <= tol``, bounds hold
inaccurate      the solver reported ``optimal_inaccurate``; the answer passed the same
                re-check and is used
best_effort     the demand is infeasible (``infeasible``/``infeasible_inaccurate``);
                ``sigma`` is the bounded least-squares solution, ``residual != 0``
solver_error    the LP solver failed (``SolverError``, ``unbounded``, iteration
                limit, an answer that failed the re-check, ...); ``sigma`` is the
                least-squares fallback, or every command at its lower bound if that
                failed too.  ``message`` says what failed.
============== ========================================================================

Two interchangeable methods, chosen by name:

* ``method="cvxpy"``: both problems are built once with cvxpy Parameters (DPP; see
  ``Allocator.lp_problem.is_dpp()``) and re-solved every call (default solver CLARABEL).
* ``method="fast"``: one compiled kernel, :func:`allocate_kernel` (callable from
  compiled flight software): the bounded-variable simplex of
  :mod:`dqspace.actuators.simplex` (two phases, Bland's rule, so deterministic) for the LP,
  the re-check, and the bounded-variable least squares of :mod:`dqspace.actuators.bvls`
  (Stark & Parker) for the best effort.  It needs neither cvxpy nor scipy.

cvxpy is imported on first use (not with this module).

The LP optimum may be non-unique (e.g. two thrusters pushing the same way); the two
methods then agree on the objective and the achieved wrench, not necessarily on
``sigma``.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .bvls import BVLS_OPTIMAL, BVLS_STATUS
from .bvls import bvls as _bvls
from .linalg import lstsq_min_norm
from .simplex import SIMPLEX_INFEASIBLE, SIMPLEX_OPTIMAL, SIMPLEX_STATUS
from .simplex import bounded_simplex as _bounded_simplex
from .thrusters import ThrusterSet

__all__ = [
    "AllocationMethod",
    "AllocationMode",
    "AllocationResult",
    "AllocationStatus",
    "Allocator",
    "allocate_kernel",
    "allocation_problem",
    "recheck_kernel",
]


class AllocationMode(StrEnum):
    """Which rows of ``H`` the allocator must match."""

    FORCE = "force"  # H_f sigma = f (paper eq. 49)
    WRENCH = "wrench"  # H sigma = [f; tau]


class AllocationMethod(StrEnum):
    """How the allocation problems are solved."""

    CVXPY = "cvxpy"
    FAST = "fast"


class AllocationStatus(StrEnum):
    """Outcome of one allocation (see the module docstring)."""

    OPTIMAL = "optimal"
    INACCURATE = "inaccurate"
    BEST_EFFORT = "best_effort"
    SOLVER_ERROR = "solver_error"


@dataclass(frozen=True, eq=False)
class AllocationResult:
    """One allocation.

    Attributes
    ----------
    sigma : (S,) array [N]
        Commanded thrusts, within the command bounds (0 for failed-off and stuck-on
        thrusters).
    status : AllocationStatus
    mode : AllocationMode
    method : AllocationMethod
    demand : (m,) array
        The demand: force ``f`` [N] (m = 3) or wrench ``[f, tau]`` [N, N m] (m = 6).
    achieved : (m,) array
        The same rows of the wrench the thrusters produce for ``sigma`` (faults
        included, stuck-on thrust too).
    residual : (m,) array
        ``demand - achieved``.
    wrench : (6,) array
        The whole wrench ``[f, tau]`` the thrusters produce, about the base origin, base
        coordinates [N, N m] (in force mode, the torque the VSCMGs must absorb, eq. 48).
    objective : float [N]
        ``sum_i w_i sigma_i`` (``w`` dimensionless).
    saturated_max, saturated_min : (k,) int arrays
        Thrusters (with a free command) whose command sits at its upper / lower bound.
    solver_status : str
        The solvers' own statuses, e.g. ``"lp: optimal"`` or
        ``"lp: infeasible; lsq: optimal"``.
    message : str
        What happened, in words (empty when optimal).
    """

    sigma: NDArray[np.float64]
    status: AllocationStatus
    mode: AllocationMode
    method: AllocationMethod
    demand: NDArray[np.float64]
    achieved: NDArray[np.float64]
    residual: NDArray[np.float64]
    wrench: NDArray[np.float64]
    objective: float
    saturated_max: NDArray[np.int64]
    saturated_min: NDArray[np.int64]
    solver_status: str
    message: str

    @property
    def ok(self) -> bool:
        """True if the demand is met by an optimal allocation."""
        return self.status is AllocationStatus.OPTIMAL

    @property
    def saturated(self) -> NDArray[np.int64]:
        """(k,) int array: thrusters at either bound (``saturated_max`` and ``saturated_min``)."""
        return np.union1d(self.saturated_max, self.saturated_min)


# ---------------------------------------------------------------------------------------
# The allocator
# ---------------------------------------------------------------------------------------
# cvxpy's status strings (cvxpy itself is imported only when a cvxpy allocator is built:
# it takes about a second)
_CVX_OPTIMAL = {"optimal": "optimal", "optimal_inaccurate": "inaccurate"}
_CVX_INFEASIBLE = {"infeasible", "infeasible_inaccurate"}


def _cvxpy():
    import cvxpy

    return cvxpy


# CLARABEL's default tolerances (1e-8) leave objective errors up to ~5e-7 N on random
# layouts; 1e-9 brings them to ~1e-7 for about one more iteration; 1e-10 now and then ends
# "almost solved" (optimal_inaccurate).
_DEFAULT_SOLVER_OPTIONS = {
    "CLARABEL": {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9},
}


def _polish_lsq(x, A, b, lo, hi):
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
class _Attempt:
    """One solver call: the solution (or None), the outcome and the solver's own status."""

    x: np.ndarray | None
    outcome: str  # "optimal", "inaccurate", "infeasible", "error"
    raw: str
    detail: str = ""


class Allocator:
    """Allocates thrust commands for a demanded force or wrench (paper eq. 49).

    The problems are built once; :meth:`allocate` re-solves them every control step.

    Parameters
    ----------
    thrusters : ThrusterSet
        The thrusters (geometry, bounds and the health to plan with by default).
    mode : {"force", "wrench"}
        ``"force"``: match ``H_f sigma = f`` (the paper); ``"wrench"``: match
        ``H sigma = [f; tau]`` (a base controlled by thrusters alone).
    method : {"cvxpy", "fast"}
        cvxpy with Parameters (DPP), or the compiled kernel (simplex, BVLS fallback).
    weights : (S,) array, optional
        Non-negative, dimensionless cost weights ``w_i`` of eq. (49), default ones (the
        paper's ``sum sigma_i``).
    residual_weights : (m,) array, optional
        Positive weights of the best-effort residual, default ones (in wrench mode they
        trade newtons against newton-metres).
    solver : str
        cvxpy solver for ``method="cvxpy"`` (default ``"CLARABEL"``).
    solver_options : dict, optional
        Keyword arguments for ``cvxpy.Problem.solve``.  Default for CLARABEL:
        ``tol_gap_abs = tol_gap_rel = tol_feas = 1e-9`` (its defaults, 1e-8, leave
        objective errors up to ~5e-7 N); none for the other solvers.
    tol : float
        Relative tolerance of the re-check: ``|A sigma - b|_inf <= tol * scale`` and bounds
        within ``tol * max(1, max sigma_max)``, with ``scale = max(1, |b|_inf,
        max sigma_max)``.  Default 1e-9.
    """

    def __init__(
        self,
        thrusters: ThrusterSet,
        *,
        mode: AllocationMode | str = "force",
        method: AllocationMethod | str = "cvxpy",
        weights: ArrayLike | None = None,
        residual_weights: ArrayLike | None = None,
        solver: str = "CLARABEL",
        solver_options: Mapping[str, object] | None = None,
        tol: float = 1e-9,
    ) -> None:
        if not isinstance(thrusters, ThrusterSet):
            raise ValueError(f"thrusters must be a ThrusterSet, got {type(thrusters).__name__}")
        try:
            self.mode = AllocationMode(mode)
        except ValueError:
            raise ValueError(
                f"mode must be one of {[m.value for m in AllocationMode]}, got {mode!r}"
            ) from None
        try:
            self.method = AllocationMethod(method)
        except ValueError:
            raise ValueError(
                f"method must be one of {[m.value for m in AllocationMethod]}, got {method!r}"
            ) from None
        self.thrusters = thrusters
        S = thrusters.n
        m = 3 if self.mode is AllocationMode.FORCE else 6
        self.n_rows = m
        self._H_rows = np.array(thrusters.H[:m])  # writable: one compiled signature
        self.weights = self._vector(weights, S, "weights", minimum=0.0, strict=False)
        self.residual_weights = self._vector(
            residual_weights, m, "residual_weights", minimum=0.0, strict=True
        )
        self._w_kernel = np.array(self.weights)  # writable copies for the compiled kernels
        self._rw_kernel = np.array(self.residual_weights)
        self._health_of = None
        tol = float(tol)
        if not (np.isfinite(tol) and 0.0 < tol < 1e-3):
            raise ValueError(f"tol must be in (0, 1e-3), got {tol}")
        self.tol = tol
        self.solver = str(solver)
        if solver_options is None:
            solver_options = _DEFAULT_SOLVER_OPTIONS.get(self.solver, {})
        self.solver_options = dict(solver_options)
        self.lp_problem = None
        self.lsq_problem = None
        if self.method is AllocationMethod.CVXPY:
            cp = _cvxpy()
            if self.solver not in cp.installed_solvers():
                raise ValueError(
                    f"solver {self.solver!r} is not installed; cvxpy has {cp.installed_solvers()}"
                )
            self._build_cvxpy(m, S)

    @staticmethod
    def _vector(value, n, name, *, minimum, strict):
        v = np.ones(n) if value is None else np.array(value, dtype=float)
        if v.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},), got {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be finite, got {v}")
        bad = v <= minimum if strict else v < minimum
        if np.any(bad):
            rel = ">" if strict else ">="
            raise ValueError(f"{name} must be {rel} {minimum}, got {v}")
        v.flags.writeable = False
        return v

    def _build_cvxpy(self, m, S):
        """The two problems, built once (DPP: only Parameters change between solves)."""
        cp = _cvxpy()
        self._p_A = cp.Parameter((m, S), name="A")
        self._p_b = cp.Parameter(m, name="b")
        self._p_Aw = cp.Parameter((m, S), name="W_A")
        self._p_bw = cp.Parameter(m, name="W_b")
        self._p_lo = cp.Parameter(S, name="sigma_lo")
        self._p_hi = cp.Parameter(S, name="sigma_hi")
        self._p_w = cp.Parameter(S, nonneg=True, name="w")
        self._p_w.value = self.weights
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

    # -- entry point ---------------------------------------------------------------------
    def allocate(
        self, demand: ArrayLike, *, thrusters: ThrusterSet | None = None
    ) -> AllocationResult:
        """Thrust commands for one control step.

        Parameters
        ----------
        demand : (m,) array
            Force ``f`` [N] in base coordinates (mode ``"force"``, m = 3) or wrench
            ``[f, tau]`` [N, N m] about the base origin (mode ``"wrench"``, m = 6).
        thrusters : ThrusterSet, optional
            The thrusters' current health (same thrusters as the allocator's, faults may
            differ), e.g. after a failure: the plan uses it from this call on.  Default:
            the allocator's set.

        Returns
        -------
        AllocationResult
        """
        m = self.n_rows
        d = np.array(demand, dtype=float)
        if d.shape != (m,):
            raise ValueError(
                f"demand must have shape ({m},) in mode {self.mode.value!r}, got {d.shape}"
            )
        if not np.all(np.isfinite(d)):
            raise ValueError(f"demand must be finite, got {d}")
        ts = self.thrusters if thrusters is None else thrusters
        if ts is not self.thrusters and not self.thrusters.same_geometry(ts):
            raise ValueError(
                "thrusters must be the allocator's thruster set (faults may differ); "
                "build a new Allocator for other thrusters"
            )
        if self.method is AllocationMethod.FAST:
            return self._allocate_fast(d, ts)
        A = np.empty(self._H_rows.shape)
        b = np.empty(m)
        eff, fixed, lo, hi = self._health(ts)
        eq_tol, bound_tol = allocation_problem(self._H_rows, eff, fixed, d, hi, self.tol, A, b)

        lp = self._lp(A, b, lo, hi)
        raw = f"lp: {lp.raw}"
        notes = []
        if lp.outcome in ("optimal", "inaccurate"):
            sigma, why = self._recheck(lp.x, A, b, lo, hi, eq_tol, bound_tol)
            if sigma is not None:
                status = (
                    AllocationStatus.OPTIMAL
                    if lp.outcome == "optimal"
                    else AllocationStatus.INACCURATE
                )
                msg = "" if lp.outcome == "optimal" else "solver reported optimal_inaccurate"
                return self._result(sigma, status, d, ts, lo, hi, bound_tol, raw, msg)
            notes.append(f"LP answer reported {lp.raw!r} failed the re-check: {why}")
        elif lp.outcome == "error":
            notes.append(f"LP solver failed ({lp.raw}){': ' + lp.detail if lp.detail else ''}")
        else:
            notes.append(f"demand infeasible for the thrusters ({lp.raw})")

        rw = self.residual_weights
        Aw = A * rw[:, None]
        bw = b * rw
        ls = self._lsq(Aw, bw, lo, hi)
        raw += f"; lsq: {ls.raw}"
        sigma = None
        if ls.outcome in ("optimal", "inaccurate"):
            sigma, why = self._recheck(ls.x, None, None, lo, hi, eq_tol, bound_tol)
            if sigma is None:
                notes.append(f"least-squares answer failed the re-check: {why}")
            else:
                sigma = _polish_lsq(sigma, Aw, bw, lo, hi)
        else:
            notes.append(
                f"least-squares fallback failed ({ls.raw}){': ' + ls.detail if ls.detail else ''}"
            )
        status, tail = _fallback_status(sigma is not None, lp.outcome == "infeasible")
        if sigma is None:
            sigma = lo.copy()
        notes.append(tail)
        return self._result(sigma, status, d, ts, lo, hi, bound_tol, raw, "; ".join(notes))

    def _health(self, ts):
        """Writable float64 copies of the set's ``effectiveness, fixed_thrust, command_lower,
        command_upper`` (one compiled signature), kept while the same set is passed."""
        if ts is not self._health_of:
            arrays = (ts.effectiveness, ts.fixed_thrust, ts.command_lower, ts.command_upper)
            self._health_arrays = tuple(np.array(a) for a in arrays)
            self._health_of = ts
        return self._health_arrays

    def _allocate_fast(self, d, ts):
        """The fast method: :func:`allocate_kernel`, then the result and its message."""
        S, m = self.thrusters.n, self.n_rows
        eff, fixed, lo, hi = self._health(ts)
        sigma = np.empty(S)
        info = np.empty(ALLOC_INFO_SIZE)
        status, lp_st, lp_it, lp_check, lsq_st, lsq_it, lsq_check = allocate_kernel(
            self._H_rows, eff, fixed, d, lo, hi, self._w_kernel, self._rw_kernel, self.tol,
            _LP_ITERATIONS * (m + S), _LSQ_ITERATIONS * (m + S), sigma, info,
        )  # fmt: skip
        lp_raw = SIMPLEX_STATUS[lp_st]
        raw = f"lp: {lp_raw}"
        notes = []
        if lp_st == SIMPLEX_OPTIMAL and lp_check != CHECK_OK:
            why = _check_reason(lp_check, info, INFO_LP, lo, hi)
            notes.append(f"LP answer reported {lp_raw!r} failed the re-check: {why}")
        elif lp_st == SIMPLEX_INFEASIBLE:
            notes.append(f"demand infeasible for the thrusters ({lp_raw})")
        elif lp_st != SIMPLEX_OPTIMAL:
            notes.append(f"LP solver failed ({lp_raw}): after {lp_it} iterations")
        bound_tol = float(info[INFO_BOUND_TOL])
        if status == ALLOC_OPTIMAL:
            return self._result(sigma, AllocationStatus.OPTIMAL, d, ts, lo, hi, bound_tol, raw, "")
        if lsq_st == LSQ_NO_FREE:
            raw += "; lsq: optimal (no free thruster)"
        else:
            raw += f"; lsq: {BVLS_STATUS[lsq_st]}"
        solved = lsq_st == BVLS_OPTIMAL or lsq_st == LSQ_NO_FREE
        if solved and lsq_check != CHECK_OK:
            why = _check_reason(lsq_check, info, INFO_LSQ, lo, hi)
            notes.append(f"least-squares answer failed the re-check: {why}")
        elif not solved:
            notes.append(
                f"least-squares fallback failed ({BVLS_STATUS[lsq_st]}): after {lsq_it} iterations"
            )
        st, tail = _fallback_status(solved and lsq_check == CHECK_OK, lp_st == SIMPLEX_INFEASIBLE)
        notes.append(tail)
        return self._result(sigma, st, d, ts, lo, hi, bound_tol, raw, "; ".join(notes))

    # -- solvers (cvxpy method) ------------------------------------------------------------
    def _lp(self, A, b, lo, hi):
        self._p_A.value = A
        self._p_b.value = b
        self._p_lo.value = lo
        self._p_hi.value = hi
        return self._cvxpy_solve(self.lp_problem, self._x_lp)

    def _lsq(self, Aw, bw, lo, hi):
        self._p_Aw.value = Aw
        self._p_bw.value = bw
        self._p_lo.value = lo
        self._p_hi.value = hi
        return self._cvxpy_solve(self.lsq_problem, self._x_lsq)

    def _cvxpy_solve(self, problem, var):
        cp = _cvxpy()
        try:
            problem.solve(solver=self.solver, **self.solver_options)
        except cp.error.SolverError as exc:
            return _Attempt(None, "error", "SolverError", str(exc))
        status = problem.status
        x = var.value
        if status in _CVX_OPTIMAL:
            if x is None:
                return _Attempt(None, "error", str(status), "no solution returned")
            return _Attempt(np.array(x, dtype=float), _CVX_OPTIMAL[status], str(status))
        if status in _CVX_INFEASIBLE:
            return _Attempt(None, "infeasible", str(status))
        return _Attempt(None, "error", str(status))

    @staticmethod
    def _recheck(x, A, b, lo, hi, eq_tol, bound_tol):
        """Check a solver's answer before use (:func:`recheck_kernel`); returns
        (sigma or None, reason)."""
        x = np.array(x, dtype=float)
        if x.shape != lo.shape or not np.all(np.isfinite(x)):
            return None, f"non-finite or mis-shaped answer {x}"
        info = np.empty(CHECK_WIDTH)
        if A is None:
            A, b = np.zeros((0, x.size)), np.zeros(0)
        code = recheck_kernel(x, A, b, lo, hi, eq_tol, bound_tol, A.shape[0] > 0, info, 0)
        if code != CHECK_OK:
            return None, _check_reason(code, info, 0, lo, hi)
        return x, ""

    def _result(self, sigma, status, d, ts, lo, hi, bound_tol, raw, msg):
        wrench = ts.wrench(sigma)
        achieved = wrench[: self.n_rows]
        free = hi > lo
        sat_tol = max(bound_tol, 1e-7 * max(1.0, float(hi.max())))
        return AllocationResult(
            sigma=sigma,
            status=status,
            mode=self.mode,
            method=self.method,
            demand=d,
            achieved=achieved,
            residual=d - achieved,
            wrench=wrench,
            objective=float(self.weights @ sigma),
            saturated_max=np.flatnonzero(free & (sigma >= hi - sat_tol)),
            saturated_min=np.flatnonzero(free & (sigma <= lo + sat_tol)),
            solver_status=raw,
            message=msg,
        )


def _fallback_status(have_sigma, lp_infeasible):
    """Status and closing note after the least-squares fallback (both methods)."""
    if have_sigma and lp_infeasible:
        return AllocationStatus.BEST_EFFORT, _ALLOC_TAIL[ALLOC_BEST_EFFORT]
    if have_sigma:
        return AllocationStatus.SOLVER_ERROR, _ALLOC_TAIL[ALLOC_SOLVER_ERROR]
    return AllocationStatus.SOLVER_ERROR, _ALLOC_TAIL[ALLOC_LOWER_BOUNDS]


def _check_reason(code, info, at, lo, hi):
    """The words for a failed re-check (``info[at:at + CHECK_WIDTH]`` from the kernel)."""
    viol, value, err = info[at + CHECK_VIOLATION], info[at + CHECK_VALUE], info[at + CHECK_ERROR]
    i = int(info[at + CHECK_INDEX])
    if code == CHECK_BOUNDS:
        return (
            f"bounds violated by {viol:.3g} N at thruster {i} "
            f"(sigma = {value:.6g}, bounds [{lo[i]}, {hi[i]}])"
        )
    if code == CHECK_EQUALITY:
        return f"|A sigma - b| = {err:.3g} exceeds {viol:.3g}"
    return f"non-finite or mis-shaped answer (sigma[{i}] = {value})"


# ---------------------------------------------------------------------------------------
# Compiled kernels: the fast method, and the problem set-up and re-check both methods use
# ---------------------------------------------------------------------------------------
#: Status codes of :func:`allocate_kernel`: the order of :class:`AllocationStatus`.
ALLOC_OPTIMAL, ALLOC_INACCURATE, ALLOC_BEST_EFFORT, ALLOC_SOLVER_ERROR = 0, 1, 2, 3
#: Not a status: the code of the closing note "every command set to its lower bound".
ALLOC_LOWER_BOUNDS = 4
_ALLOC_TAIL = {
    ALLOC_BEST_EFFORT: "sigma is the bounded least-squares best effort",
    ALLOC_SOLVER_ERROR: "sigma is the bounded least-squares fallback",
    ALLOC_LOWER_BOUNDS: "every command set to its lower bound",
}
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
# iteration limits per row plus column
_LP_ITERATIONS = 50
_LSQ_ITERATIONS = 50


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
    x, lp_status, lp_it = _bounded_simplex(A, b, weights, lo, hi, lp_max_iter, SIMPLEX_TOL)
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
        lsq_status, lsq_it = _bvls(A, b, lo, hi, lsq_max_iter, sigma)
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
