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
* ``method="fast"``: the compiled bounded-variable simplex of
  :mod:`dqspace.actuators.simplex` (two phases, Bland's rule, so deterministic) for the LP,
  and ``scipy.optimize.lsq_linear`` (BVLS) for the best effort.

cvxpy and ``scipy.optimize`` are imported on first use (not with this module).

The LP optimum may be non-unique (e.g. two thrusters pushing the same way); the two
methods then agree on the objective and the achieved wrench, not necessarily on
``sigma``.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .simplex import SIMPLEX_INFEASIBLE, SIMPLEX_OPTIMAL, SIMPLEX_STATUS
from .simplex import bounded_simplex as _bounded_simplex
from .thrusters import ThrusterSet

__all__ = [
    "AllocationMethod",
    "AllocationMode",
    "AllocationResult",
    "AllocationStatus",
    "Allocator",
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


def lsq_linear(*args, **kwargs):
    """``scipy.optimize.lsq_linear``, imported on the first call (not with this module)."""
    from scipy.optimize import lsq_linear as solve

    return solve(*args, **kwargs)


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
        cvxpy with Parameters (DPP), or the compiled simplex with scipy's BVLS fallback.
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
        self._H_rows = np.ascontiguousarray(thrusters.H[:m])
        self.weights = self._vector(weights, S, "weights", minimum=0.0, strict=False)
        self.residual_weights = self._vector(
            residual_weights, m, "residual_weights", minimum=0.0, strict=True
        )
        self._w_kernel = np.array(self.weights)  # writable copy for the compiled kernel
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
        A = self._H_rows * ts.effectiveness
        b = d - self._H_rows @ ts.fixed_thrust
        lo = ts.command_lower
        hi = ts.command_upper
        hmax = max(1.0, float(hi.max()))
        eq_tol = self.tol * max(hmax, float(np.abs(b).max()))
        bound_tol = self.tol * hmax

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
            elif self.method is AllocationMethod.CVXPY:
                sigma = _polish_lsq(sigma, Aw, bw, lo, hi)
        else:
            notes.append(
                f"least-squares fallback failed ({ls.raw}){': ' + ls.detail if ls.detail else ''}"
            )
        if sigma is not None and lp.outcome == "infeasible":
            status = AllocationStatus.BEST_EFFORT
            notes.append("sigma is the bounded least-squares best effort")
        elif sigma is not None:
            status = AllocationStatus.SOLVER_ERROR
            notes.append("sigma is the bounded least-squares fallback")
        else:
            status = AllocationStatus.SOLVER_ERROR
            sigma = lo.copy()
            notes.append("every command set to its lower bound")
        return self._result(sigma, status, d, ts, lo, hi, bound_tol, raw, "; ".join(notes))

    # -- solvers ---------------------------------------------------------------------------
    def _lp(self, A, b, lo, hi):
        if self.method is AllocationMethod.FAST:
            # writable float64 copies: one compiled signature whatever the callers pass
            x, st, it = _bounded_simplex(
                np.array(A),
                np.array(b),
                self._w_kernel,
                np.array(lo),
                np.array(hi),
                50 * (A.shape[0] + A.shape[1]),
                1e-9,
            )
            if st == SIMPLEX_OPTIMAL:
                return _Attempt(x, "optimal", "optimal")
            outcome = "infeasible" if st == SIMPLEX_INFEASIBLE else "error"
            return _Attempt(None, outcome, SIMPLEX_STATUS[st], f"after {it} iterations")
        self._p_A.value = A
        self._p_b.value = b
        self._p_lo.value = lo
        self._p_hi.value = hi
        return self._cvxpy_solve(self.lp_problem, self._x_lp)

    def _lsq(self, Aw, bw, lo, hi):
        if self.method is AllocationMethod.CVXPY:
            self._p_Aw.value = Aw
            self._p_bw.value = bw
            self._p_lo.value = lo
            self._p_hi.value = hi
            return self._cvxpy_solve(self.lsq_problem, self._x_lsq)
        free = hi > lo
        x = lo.copy()
        if not np.any(free):
            return _Attempt(x, "optimal", "optimal (no free thruster)")
        try:
            res = lsq_linear(
                Aw[:, free],
                bw - Aw[:, ~free] @ lo[~free],
                bounds=(lo[free], hi[free]),
                method="bvls",
                tol=1e-12,
            )
        except (ValueError, np.linalg.LinAlgError) as exc:
            return _Attempt(None, "error", "exception", f"{type(exc).__name__}: {exc}")
        if not res.success:
            return _Attempt(None, "error", f"status {res.status}", str(res.message))
        x[free] = res.x
        return _Attempt(x, "optimal", "optimal")

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
        """Check a solver's answer before use; returns (sigma or None, reason).

        Bounds must hold within ``bound_tol`` (then ``sigma`` is clipped onto them); with
        ``A`` given, ``A sigma = b`` must hold within ``eq_tol`` after a least-squares
        correction of the commands strictly inside their bounds (applied only to
        residuals already below ``1e3 * eq_tol``, so it polishes, never repairs).
        """
        x = np.asarray(x, dtype=float)
        if x.shape != lo.shape or not np.all(np.isfinite(x)):
            return None, f"non-finite or mis-shaped answer {x}"
        viol = max(float(np.max(lo - x)), float(np.max(x - hi)))
        if viol > bound_tol:
            i = int(np.argmax(np.maximum(lo - x, x - hi)))
            return None, (
                f"bounds violated by {viol:.3g} N at thruster {i} "
                f"(sigma = {x[i]:.6g}, bounds [{lo[i]}, {hi[i]}])"
            )
        x = np.clip(x, lo, hi)
        if A is None:
            return x, ""
        r = b - A @ x
        err = float(np.abs(r).max())
        if eq_tol < err <= 1e3 * eq_tol:
            free = (x > lo + bound_tol) & (x < hi - bound_tol)
            if np.any(free):
                x = x.copy()
                x[free] += np.linalg.lstsq(A[:, free], r, rcond=None)[0]
                x = np.clip(x, lo, hi)
                r = b - A @ x
                err = float(np.abs(r).max())
        if err > eq_tol:
            return None, f"|A sigma - b| = {err:.3g} exceeds {eq_tol:.3g}"
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
