"""Thrust allocation (P49): optimality against scipy's HiGHS, best effort, faults, solver
failures forced one by one, agreement of the cvxpy and fast paths, bad input."""

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import linprog

from dqspace.actuators import allocation, allocation_kernels
from dqspace.actuators.allocation import AllocationStatus, Allocator
from dqspace.actuators.thrusters import Thruster, ThrusterFault, ThrusterSet, paper_thruster_set

MODES = ["force", "wrench"]
METHODS = ["cvxpy", "fast"]
PLUS_X = [6, 9]  # the paper layout's thrusters pushing along +x


@pytest.fixture(scope="module")
def thrusters():
    return paper_thruster_set()


@pytest.fixture(scope="module")
def allocators(thrusters):
    return {
        (mode, method): Allocator(thrusters, mode=mode, method=method)
        for mode in MODES
        for method in METHODS
    }


def rows(mode):
    return 3 if mode == "force" else 6


def feasible_demands(ts, mode, rng, n):
    """Demands H_rows sigma for random admissible sigma, plus small random ones."""
    m = rows(mode)
    out = [ts.H[:m] @ rng.uniform(0, 10, ts.n) for _ in range(n // 2)]
    out += [ts.H[:m] @ (rng.uniform(0, 10, ts.n) * (rng.random(ts.n) < 0.4)) for _ in range(n // 2)]
    return out


def reference_lp(ts, m, d, weights=None, lo=None, hi=None):
    """Independent LP solve of P49 with scipy's HiGHS (dual simplex)."""
    lo = ts.command_lower if lo is None else lo
    hi = ts.command_upper if hi is None else hi
    A = ts.H[:m] * ts.effectiveness
    b = d - ts.H[:m] @ ts.fixed_thrust
    w = np.ones(ts.n) if weights is None else weights
    res = linprog(w, A_eq=A, b_eq=b, bounds=list(zip(lo, hi, strict=True)), method="highs-ds")
    return res


def assert_meets(r, ts, lo=None, hi=None, tol=1e-8):
    lo = ts.command_lower if lo is None else lo
    hi = ts.command_upper if hi is None else hi
    assert np.all(r.sigma >= lo) and np.all(r.sigma <= hi)
    m = r.demand.size
    np.testing.assert_allclose(ts.wrench(r.sigma)[:m], r.demand, rtol=0, atol=tol)
    np.testing.assert_allclose(r.residual, r.demand - r.achieved, rtol=0, atol=1e-15)


def test_problems_are_dpp_and_built_once(allocators, thrusters):
    for mode in MODES:
        a = allocators[(mode, "cvxpy")]
        assert a.lp_problem.is_dpp() and a.lsq_problem.is_dpp()
        lp, lsq = a.lp_problem, a.lsq_problem
        a.allocate(np.zeros(rows(mode)))
        a.allocate(thrusters.H[: rows(mode)] @ np.full(12, 20.0))  # infeasible: both solved
        assert a.lp_problem is lp and a.lsq_problem is lsq
        assert {p.name() for p in lp.parameters()} == {"A", "b", "sigma_lo", "sigma_hi", "w"}
    assert allocators[("force", "fast")].lp_problem is None


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("mode", MODES)
def test_random_feasible_demands_are_met_at_the_lp_optimum(
    allocators, thrusters, mode, method, rng
):
    a = allocators[(mode, method)]
    m = rows(mode)
    for d in feasible_demands(thrusters, mode, rng, 30):
        r = a.allocate(d)
        assert r.status is AllocationStatus.OPTIMAL and r.ok, r.message
        assert_meets(r, thrusters)
        ref = reference_lp(thrusters, m, d)
        assert ref.status == 0
        assert abs(r.objective - ref.fun) <= 1e-6, (r.objective, ref.fun)
        assert r.objective == pytest.approx(r.sigma.sum(), abs=1e-12)
        np.testing.assert_allclose(r.wrench, thrusters.H @ r.sigma, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_weighted_objective_matches_reference(thrusters, method, rng):
    w = rng.uniform(0.5, 2.0, 12)
    a = Allocator(thrusters, mode="wrench", method=method, weights=w)
    for d in feasible_demands(thrusters, "wrench", rng, 10):
        r = a.allocate(d)
        assert r.ok
        assert_meets(r, thrusters)
        assert abs(r.objective - reference_lp(thrusters, 6, d, weights=w).fun) <= 1e-6
        assert r.objective == pytest.approx(w @ r.sigma, abs=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_cvxpy_and_fast_paths_agree(allocators, thrusters, mode, rng):
    slow, fast = allocators[(mode, "cvxpy")], allocators[(mode, "fast")]
    m = rows(mode)
    for d in feasible_demands(thrusters, mode, rng, 20):
        r1, r2 = slow.allocate(d), fast.allocate(d)
        assert r1.status == r2.status == "optimal"
        assert abs(r1.objective - r2.objective) <= 1e-6
        np.testing.assert_allclose(r1.achieved, r2.achieved, atol=1e-8)
    # infeasible demands: the achieved wrench (a projection, unique) and the residual agree
    n_infeasible = 0
    while n_infeasible < 10:
        d = rng.normal(size=m) * ([30.0] * 3 + [4.0] * 3)[:m]
        if reference_lp(thrusters, m, d).status != 2:
            continue
        n_infeasible += 1
        r1, r2 = slow.allocate(d), fast.allocate(d)
        assert r1.status == r2.status == "best_effort"
        np.testing.assert_allclose(r1.achieved, r2.achieved, atol=1e-6)
        assert np.linalg.norm(r1.residual) == pytest.approx(np.linalg.norm(r2.residual), abs=1e-6)


def random_faulty_set(rng):
    S = int(rng.integers(3, 17))
    ths = []
    for _ in range(S):
        d = rng.normal(size=3)
        smax = rng.uniform(1, 20)
        smin = rng.uniform(0, 0.3 * smax) if rng.random() < 0.3 else 0.0
        ths.append(Thruster(rng.uniform(-1, 1, 3), d / np.linalg.norm(d), smax, sigma_min=smin))
    faults = {}
    for i, u in enumerate(rng.random(S)):
        if u < 0.1:
            faults[i] = ThrusterFault.failed_off()
        elif u < 0.15:
            faults[i] = ThrusterFault.stuck_on(rng.uniform(0, ths[i].sigma_max))
        elif u < 0.25:
            faults[i] = ThrusterFault.degraded(rng.uniform(0.1, 1))
    return ThrusterSet(ths, faults)


def test_random_layouts_bounds_and_faults_match_reference(rng):
    """Generated thruster sets (3-16 thrusters, sigma_min > 0 on some, random faults and
    weights): status, objective and the met demand agree with scipy's HiGHS on both paths,
    whether the demand is feasible or not."""
    counts = {"optimal": 0, "best_effort": 0}
    for _ in range(25):
        ts = random_faulty_set(rng)
        mode = str(rng.choice(MODES))
        m = rows(mode)
        w = rng.uniform(0, 2, ts.n)
        fast = Allocator(ts, mode=mode, method="fast", weights=w)
        slow = Allocator(ts, mode=mode, method="cvxpy", weights=w)
        for feasible in (True, False, False):
            d = ts.wrench(rng.uniform(0, 20, ts.n))[:m] if feasible else rng.normal(size=m) * 5
            ref = reference_lp(ts, m, d, weights=w)
            expected = {0: "optimal", 2: "best_effort"}[ref.status]
            counts[expected] += 1
            r1, r2 = fast.allocate(d), slow.allocate(d)
            assert r1.status == r2.status == expected, (r1.message, r2.message)
            for r in (r1, r2):
                assert np.all(r.sigma >= ts.command_lower) and np.all(r.sigma <= ts.command_upper)
                np.testing.assert_allclose(r.achieved, ts.wrench(r.sigma)[:m], atol=1e-12)
            if expected == "optimal":
                np.testing.assert_allclose(r1.residual, 0, atol=1e-9 * max(1, abs(d).max()))
                np.testing.assert_allclose(r2.residual, 0, atol=1e-8 * max(1, abs(d).max()))
                assert abs(r1.objective - ref.fun) <= 1e-6 and abs(r2.objective - ref.fun) <= 1e-6
            else:
                np.testing.assert_allclose(r1.achieved, r2.achieved, atol=1e-6)
    assert min(counts.values()) >= 10, counts


def test_fast_path_is_deterministic(thrusters, rng):
    d = np.array([6.0, 0.0, -6.0])  # non-unique optimum: two thrusters per direction
    r1 = Allocator(thrusters, method="fast").allocate(d)
    r2 = Allocator(thrusters, method="fast").allocate(d)
    np.testing.assert_array_equal(r1.sigma, r2.sigma)
    for d in rng.uniform(-15, 15, (10, 3)):
        a = Allocator(thrusters, method="fast")
        np.testing.assert_array_equal(a.allocate(d).sigma, a.allocate(d.copy()).sigma)


# -- infeasible demands ----------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
def test_infeasible_force_gives_the_projection_onto_the_capability_box(thrusters, method, rng):
    """Force mode, paper layout: the reachable forces are the box [-20, 20]^3 N (two 10 N
    thrusters per axis direction), so the best effort is the demand clipped to it."""
    a = Allocator(thrusters, method=method)
    r = a.allocate([100.0, 0.0, 0.0])
    assert r.status is AllocationStatus.BEST_EFFORT and not r.ok
    np.testing.assert_allclose(r.achieved, [20, 0, 0], atol=1e-6)
    np.testing.assert_allclose(r.residual, [80, 0, 0], atol=1e-6)
    assert set(PLUS_X) <= set(r.saturated_max)
    assert "lp: infeasible" in r.solver_status and "best effort" in r.message
    for _ in range(10):
        d = rng.uniform(-60, 60, 3)
        d[0] = 35.0
        r = a.allocate(d)
        assert r.status is AllocationStatus.BEST_EFFORT
        np.testing.assert_allclose(r.achieved, np.clip(d, -20, 20), atol=1e-6)
        assert np.all(r.sigma >= 0) and np.all(r.sigma <= 10)
        assert np.linalg.norm(r.residual) > 1.0


@pytest.mark.parametrize("method", METHODS)
def test_infeasible_wrench_best_effort_satisfies_the_lsq_optimality_conditions(
    thrusters, method, rng
):
    """KKT of min ||W (H sigma - d)||^2 on the box: the gradient g = H^T W^2 (H sigma - d)
    vanishes on free thrusters, is >= 0 at the lower bound and <= 0 at the upper one."""
    W = np.array([1.0, 1.0, 1.0, 5.0, 5.0, 5.0])
    a = Allocator(thrusters, mode="wrench", method=method, residual_weights=W)
    H = thrusters.H
    for _ in range(8):
        d = np.r_[rng.uniform(-40, 40, 3), rng.uniform(-6, 6, 3)]
        r = a.allocate(d)
        if reference_lp(thrusters, 6, d).status == 0:
            continue
        assert r.status is AllocationStatus.BEST_EFFORT
        assert np.linalg.norm(r.residual) > 1e-3
        g = H.T @ (W**2 * (H @ r.sigma - d))
        scale = np.abs(H.T @ (W**2 * d)).max()
        tol = 1e-6 * scale
        lower, upper = r.sigma <= 1e-7, r.sigma >= 10 - 1e-7
        free = ~lower & ~upper
        assert np.all(np.abs(g[free]) <= tol), g[free]
        assert np.all(g[lower] >= -tol) and np.all(g[upper] <= tol)


# -- faults --------------------------------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("mode", MODES)
def test_failed_thruster_is_excluded_and_demand_still_met(thrusters, mode, method, rng):
    failed = thrusters.with_faults({6: ThrusterFault.failed_off()})
    a = Allocator(failed, mode=mode, method=method)
    m = rows(mode)
    for _ in range(8):
        s = rng.uniform(0, 10, 12)
        s[6] = 0.0
        d = thrusters.H[:m] @ s
        r = a.allocate(d)
        assert r.ok, r.message
        assert r.sigma[6] == 0.0
        assert_meets(r, failed)
        assert abs(r.objective - reference_lp(failed, m, d).fun) <= 1e-6
        assert 6 not in r.saturated


@pytest.mark.parametrize("method", METHODS)
def test_failure_mid_run_replans_from_the_next_step(thrusters, method):
    a = Allocator(thrusters, method=method)
    d = np.array([15.0, 0.0, 0.0])
    r = a.allocate(d)
    assert r.ok and r.sigma[PLUS_X].sum() == pytest.approx(15.0, abs=1e-8)
    assert r.sigma[6] > 0 and r.sigma[9] > 0  # 15 N needs both +x thrusters
    failed = thrusters.with_faults({"v2_x": ThrusterFault.failed_off()})  # index 6
    r = a.allocate(d, thrusters=failed)
    assert r.status is AllocationStatus.BEST_EFFORT and r.sigma[6] == 0.0
    np.testing.assert_allclose(r.achieved, [10.0, 0, 0], atol=1e-6)
    r = a.allocate([8.0, 0.0, 0.0], thrusters=failed)
    assert r.ok and r.sigma[6] == 0.0 and r.sigma[9] == pytest.approx(8.0, abs=1e-8)
    assert a.allocate(d).ok  # the allocator's own set is unchanged


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("mode", MODES)
def test_stuck_on_thruster_is_compensated(thrusters, mode, method, rng):
    m = rows(mode)
    for thrust in (None, 4.0):
        stuck = thrusters.with_faults({0: ThrusterFault.stuck_on(thrust)})
        level = 10.0 if thrust is None else thrust
        a = Allocator(thrusters, mode=mode, method=method)
        for d in [np.zeros(m), *feasible_demands(thrusters, mode, rng, 4)]:
            d = d * 0.5  # leave room for the compensation
            r = a.allocate(d, thrusters=stuck)
            assert r.ok, r.message
            assert r.sigma[0] == 0.0  # its command is meaningless
            delivered = r.sigma.copy()
            delivered[0] = level
            np.testing.assert_allclose(thrusters.H[:m] @ delivered, d, atol=1e-8)
            np.testing.assert_allclose(r.wrench, thrusters.H @ delivered, atol=1e-12)
            ref = reference_lp(stuck, m, d)
            assert abs(r.objective - ref.fun) <= 1e-6


@pytest.mark.parametrize("method", METHODS)
def test_degraded_thruster_plans_with_its_reduced_effectiveness(thrusters, method):
    degraded = thrusters.with_faults({6: ThrusterFault.degraded(0.5)})
    a = Allocator(degraded, method=method)
    r = a.allocate([15.0, 0.0, 0.0])  # 10 N from thruster 9 + 0.5 * 10 N from thruster 6
    assert r.ok
    np.testing.assert_allclose(r.sigma[PLUS_X], [10.0, 10.0], atol=1e-8)
    np.testing.assert_allclose(r.achieved, [15.0, 0, 0], atol=1e-8)
    r = a.allocate([16.0, 0.0, 0.0])
    assert r.status is AllocationStatus.BEST_EFFORT
    np.testing.assert_allclose(r.achieved, [15.0, 0, 0], atol=1e-6)
    np.testing.assert_array_equal(np.sort(r.saturated_max), PLUS_X)


# -- solver failures, forced -------------------------------------------------------------------
def fake_solve(problem, status=None, value=None, error=None):
    """Replace problem.solve: raise SolverError, or set a status and a value."""

    def solve(*args, **kwargs):
        if error is not None:
            raise cp.error.SolverError(error)
        problem._status = status
        problem.variables()[0].value = value

    return solve


@pytest.fixture
def cvx(thrusters):
    return Allocator(thrusters, method="cvxpy")


D_OK = np.array([3.0, -4.0, 5.0])


def test_solver_error_in_lp_falls_back_to_least_squares(cvx, thrusters, monkeypatch):
    monkeypatch.setattr(cvx.lp_problem, "solve", fake_solve(cvx.lp_problem, error="boom"))
    r = cvx.allocate(D_OK)
    assert r.status is AllocationStatus.SOLVER_ERROR
    assert "SolverError" in r.solver_status and "boom" in r.message
    assert "least-squares fallback" in r.message
    assert_meets(r, thrusters, tol=1e-6)  # the fallback still reaches a feasible demand


def test_solver_error_in_both_problems_leaves_thrusters_at_lower_bounds(cvx, monkeypatch):
    monkeypatch.setattr(cvx.lp_problem, "solve", fake_solve(cvx.lp_problem, error="lp down"))
    monkeypatch.setattr(cvx.lsq_problem, "solve", fake_solve(cvx.lsq_problem, error="lsq down"))
    r = cvx.allocate(D_OK)
    assert r.status is AllocationStatus.SOLVER_ERROR
    assert "lp down" in r.message and "lsq down" in r.message
    np.testing.assert_array_equal(r.sigma, np.zeros(12))
    np.testing.assert_allclose(r.residual, D_OK, atol=0)


def test_inaccurate_answer_that_passes_the_recheck_is_used(cvx, thrusters, monkeypatch):
    good = reference_lp(thrusters, 3, D_OK).x
    monkeypatch.setattr(
        cvx.lp_problem, "solve", fake_solve(cvx.lp_problem, cp.OPTIMAL_INACCURATE, good)
    )
    r = cvx.allocate(D_OK)
    assert r.status is AllocationStatus.INACCURATE and not r.ok
    assert "optimal_inaccurate" in r.solver_status
    np.testing.assert_allclose(r.sigma, good, atol=1e-12)
    assert_meets(r, thrusters)


def test_inaccurate_answer_that_fails_the_recheck_is_rejected(cvx, thrusters, monkeypatch):
    bad = reference_lp(thrusters, 3, D_OK).x
    bad[PLUS_X] += 0.01  # inside the bounds, 0.02 N off the equality
    monkeypatch.setattr(
        cvx.lp_problem, "solve", fake_solve(cvx.lp_problem, cp.OPTIMAL_INACCURATE, bad)
    )
    r = cvx.allocate(D_OK)
    assert r.status is AllocationStatus.SOLVER_ERROR
    assert "failed the re-check" in r.message and "|A sigma - b|" in r.message
    assert_meets(r, thrusters, tol=1e-6)


def test_optimal_answer_outside_the_bounds_is_rejected(cvx, thrusters, monkeypatch):
    bad = reference_lp(thrusters, 3, D_OK).x
    bad[2] = -1.0
    monkeypatch.setattr(cvx.lp_problem, "solve", fake_solve(cvx.lp_problem, cp.OPTIMAL, bad))
    r = cvx.allocate(D_OK)
    assert r.status is AllocationStatus.SOLVER_ERROR
    assert "bounds violated by 1 N at thruster 2" in r.message
    assert np.all(r.sigma >= 0) and np.all(r.sigma <= 10)


def test_optimal_status_without_a_solution_is_an_error(cvx, monkeypatch):
    monkeypatch.setattr(cvx.lp_problem, "solve", fake_solve(cvx.lp_problem, cp.OPTIMAL, None))
    r = cvx.allocate(D_OK)
    assert r.status is AllocationStatus.SOLVER_ERROR and "no solution returned" in r.message


@pytest.mark.parametrize("status", [cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE, cp.USER_LIMIT])
def test_unbounded_or_limited_status_is_a_solver_error(cvx, thrusters, status, monkeypatch):
    monkeypatch.setattr(cvx.lp_problem, "solve", fake_solve(cvx.lp_problem, status, None))
    r = cvx.allocate(D_OK)
    assert r.status is AllocationStatus.SOLVER_ERROR
    assert f"lp: {status}" in r.solver_status
    assert_meets(r, thrusters, tol=1e-6)


def test_infeasible_inaccurate_status_gives_a_best_effort(cvx, monkeypatch):
    monkeypatch.setattr(
        cvx.lp_problem, "solve", fake_solve(cvx.lp_problem, cp.INFEASIBLE_INACCURATE, None)
    )
    r = cvx.allocate([30.0, 0.0, 0.0])
    assert r.status is AllocationStatus.BEST_EFFORT
    assert "infeasible_inaccurate" in r.solver_status
    np.testing.assert_allclose(r.achieved, [20.0, 0, 0], atol=1e-6)


def test_inaccurate_least_squares_is_reported(cvx, thrusters, monkeypatch):
    good = np.zeros(12)
    good[PLUS_X] = 10.0
    monkeypatch.setattr(
        cvx.lsq_problem, "solve", fake_solve(cvx.lsq_problem, cp.OPTIMAL_INACCURATE, good)
    )
    r = cvx.allocate([30.0, 0.0, 0.0])
    assert r.status is AllocationStatus.BEST_EFFORT
    assert r.solver_status == "lp: infeasible; lsq: optimal_inaccurate"
    np.testing.assert_allclose(r.achieved, [20.0, 0, 0], atol=1e-12)


def test_least_squares_outside_the_bounds_is_rejected(cvx, monkeypatch):
    bad = np.full(12, 11.0)
    monkeypatch.setattr(cvx.lsq_problem, "solve", fake_solve(cvx.lsq_problem, cp.OPTIMAL, bad))
    r = cvx.allocate([30.0, 0.0, 0.0])
    assert r.status is AllocationStatus.SOLVER_ERROR
    assert "least-squares answer failed the re-check" in r.message
    np.testing.assert_array_equal(r.sigma, np.zeros(12))


@pytest.fixture
def fast(thrusters):
    return Allocator(thrusters, method="fast")


def test_fast_path_iteration_limit_is_a_solver_error(fast, thrusters, monkeypatch):
    monkeypatch.setattr(allocation, "_LP_ITERATIONS", 0)  # the compiled simplex stops at once
    r = fast.allocate(D_OK)
    assert r.status is AllocationStatus.SOLVER_ERROR
    assert "lp: iteration_limit" in r.solver_status
    assert_meets(r, thrusters, tol=1e-6)


def test_fast_path_bad_optimal_answer_is_rejected(fast, thrusters, monkeypatch):
    # compiled code binds the simplex when it is compiled: run the kernel's Python source
    # (allocation_kernels' globals), with a simplex that answers outside the bounds
    monkeypatch.setattr(allocation, "allocate_kernel", allocation_kernels.allocate_kernel.py_func)
    monkeypatch.setattr(
        allocation_kernels, "bounded_simplex", lambda A, b, c, lo, hi, it, tol: (hi.copy(), 0, 1)
    )
    r = fast.allocate(D_OK)
    assert r.status is AllocationStatus.SOLVER_ERROR and "failed the re-check" in r.message
    assert_meets(r, thrusters, tol=1e-6)


def test_fast_path_least_squares_failure_is_reported(fast, monkeypatch):
    monkeypatch.setattr(allocation, "_LSQ_ITERATIONS", 0)  # the compiled BVLS stops at once
    r = fast.allocate([30.0, 0.0, 0.0])
    assert r.status is AllocationStatus.SOLVER_ERROR
    assert "least-squares fallback failed (iteration_limit): after 0 iterations" in r.message
    assert r.solver_status == "lp: infeasible; lsq: iteration_limit"
    assert r.message.endswith("every command set to its lower bound")
    np.testing.assert_array_equal(r.sigma, np.zeros(12))


def test_fast_path_statuses_match_the_cvxpy_path(fast, cvx):
    for d in ([1.0, 2.0, 3.0], [30.0, 0.0, 0.0]):
        r1, r2 = fast.allocate(d), cvx.allocate(d)
        assert r1.status == r2.status
        assert r1.solver_status == r2.solver_status


# -- bad input -------------------------------------------------------------------------------
def test_nan_demand_is_rejected(fast):
    with pytest.raises(ValueError, match=r"demand must be finite, got \[ 1. nan  0.\]"):
        fast.allocate([1.0, np.nan, 0.0])


def test_wrong_shape_demand_is_rejected(fast):
    with pytest.raises(
        ValueError, match=r"demand must have shape \(3,\) in mode 'force', got \(6,\)"
    ):
        fast.allocate(np.zeros(6))


def test_unknown_mode_is_rejected(thrusters):
    with pytest.raises(
        ValueError, match=r"mode must be one of \['force', 'wrench'\], got 'torque'"
    ):
        Allocator(thrusters, mode="torque")


def test_unknown_method_is_rejected(thrusters):
    with pytest.raises(
        ValueError, match=r"method must be one of \['cvxpy', 'fast'\], got 'gurobi'"
    ):
        Allocator(thrusters, method="gurobi")


def test_uninstalled_solver_is_rejected(thrusters):
    with pytest.raises(ValueError, match=r"solver 'MOSEK' is not installed"):
        Allocator(thrusters, solver="MOSEK")


def test_negative_weights_are_rejected(thrusters):
    w = np.ones(12)
    w[4] = -1.0
    with pytest.raises(ValueError, match=r"weights must be >= 0.0"):
        Allocator(thrusters, weights=w)


def test_wrong_shape_weights_are_rejected(thrusters):
    with pytest.raises(ValueError, match=r"weights must have shape \(12,\), got \(3,\)"):
        Allocator(thrusters, weights=np.ones(3))


def test_non_positive_residual_weights_are_rejected(thrusters):
    with pytest.raises(ValueError, match=r"residual_weights must be > 0.0"):
        Allocator(thrusters, mode="wrench", residual_weights=[1, 1, 1, 0, 1, 1])


def test_bad_tolerance_is_rejected(thrusters):
    with pytest.raises(ValueError, match=r"tol must be in \(0, 1e-3\), got 0.0"):
        Allocator(thrusters, tol=0.0)


def test_non_thruster_set_is_rejected():
    with pytest.raises(ValueError, match="thrusters must be a ThrusterSet, got list"):
        Allocator([1, 2, 3])


def test_other_thrusters_at_allocation_time_are_rejected(fast):
    with pytest.raises(ValueError, match="must be the allocator's thruster set"):
        fast.allocate(D_OK, thrusters=paper_thruster_set(sigma_max=5.0))
