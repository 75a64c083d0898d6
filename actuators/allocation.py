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

cvxpy is imported on first use (not with this module).  The cvxpy problems are
:mod:`dqspace.actuators.allocation_cvxpy`; the compiled problem set-up, re-check and fast
method are :mod:`dqspace.actuators.allocation_kernels` (:func:`allocate_kernel`,
:func:`allocation_problem`, :func:`recheck_kernel` re-exported here).

The LP optimum may be non-unique (e.g. two thrusters pushing the same way); the two
methods then agree on the objective and the achieved wrench, not necessarily on
``sigma``.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .allocation_cvxpy import DEFAULT_SOLVER_OPTIONS, CvxpyProblems, cvxpy_module, polish_lsq
from .allocation_kernels import (
    ALLOC_BEST_EFFORT,
    ALLOC_INFO_SIZE,
    ALLOC_LOWER_BOUNDS,
    ALLOC_OPTIMAL,
    ALLOC_SOLVER_ERROR,
    CHECK_BOUNDS,
    CHECK_EQUALITY,
    CHECK_ERROR,
    CHECK_INDEX,
    CHECK_OK,
    CHECK_VALUE,
    CHECK_VIOLATION,
    CHECK_WIDTH,
    INFO_BOUND_TOL,
    INFO_LP,
    INFO_LSQ,
    LSQ_NO_FREE,
    allocate_kernel,
    allocation_problem,
    recheck_kernel,
)
from .bvls import BVLS_OPTIMAL, BVLS_STATUS
from .simplex import SIMPLEX_INFEASIBLE, SIMPLEX_OPTIMAL, SIMPLEX_STATUS
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


# the closing note of each fallback outcome (both methods)
_ALLOC_TAIL = {
    ALLOC_BEST_EFFORT: "sigma is the bounded least-squares best effort",
    ALLOC_SOLVER_ERROR: "sigma is the bounded least-squares fallback",
    ALLOC_LOWER_BOUNDS: "every command set to its lower bound",
}
# iteration limits of the fast method per row plus column
_LP_ITERATIONS = 50
_LSQ_ITERATIONS = 50


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
            solver_options = DEFAULT_SOLVER_OPTIONS.get(self.solver, {})
        self.solver_options = dict(solver_options)
        self.lp_problem = None
        self.lsq_problem = None
        if self.method is AllocationMethod.CVXPY:
            cp = cvxpy_module()
            if self.solver not in cp.installed_solvers():
                raise ValueError(
                    f"solver {self.solver!r} is not installed; cvxpy has {cp.installed_solvers()}"
                )
            self._cvx = CvxpyProblems(m, S, self.weights, self.solver, self.solver_options)
            self.lp_problem = self._cvx.lp_problem
            self.lsq_problem = self._cvx.lsq_problem

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

        lp = self._cvx.lp(A, b, lo, hi)
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
        ls = self._cvx.lsq(Aw, bw, lo, hi)
        raw += f"; lsq: {ls.raw}"
        sigma = None
        if ls.outcome in ("optimal", "inaccurate"):
            sigma, why = self._recheck(ls.x, None, None, lo, hi, eq_tol, bound_tol)
            if sigma is None:
                notes.append(f"least-squares answer failed the re-check: {why}")
            else:
                sigma = polish_lsq(sigma, Aw, bw, lo, hi)
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
