"""The compiled kernels of the actuator laws: BVLS against scipy's lsq_linear, the small linear
algebra against NumPy, the allocation kernel's best-effort path, every kernel called from other
compiled code (what a compiled flight-software tick does), and the momentum manager's state
shared between the Python object and the kernel."""

import numpy as np
import pytest
from numba import njit
from scipy.optimize import lsq_linear

from dqspace.actuators import (
    Allocator,
    PulseModulator,
    SchmittTrigger,
    SteeringLaw,
    ThrusterFault,
    paper_thruster_set,
    pyramid_cluster,
    steer,
)
from dqspace.actuators import kernels as K
from dqspace.actuators.reaction_wheels import orthogonal_wheels, pyramid_wheels
from dqspace.actuators.wheel_control import MomentumManager, distribute

EPS = np.finfo(float).eps


# ------------------------------------------------------------------ linear algebra
def test_lu_determinant_and_solve_match_numpy(rng):
    for _ in range(300):
        n = int(rng.integers(1, 7))
        M = rng.normal(size=(n, n)) * 10.0 ** rng.uniform(-3, 3)
        rhs = rng.normal(size=n)
        LU, perm = M.copy(), np.empty(n, np.int64)
        det = K.lu_factor(LU, n, perm)
        assert det == pytest.approx(np.linalg.det(M), rel=1e-12 * np.linalg.cond(M))
        x = rhs.copy()
        K.lu_solve(LU, n, perm, x)
        np.testing.assert_allclose(M @ x, rhs, rtol=0, atol=1e-12 * np.linalg.cond(M))
    # a zero pivot gives a zero determinant, not an exception
    assert K.lu_factor(np.array([[1.0, 2.0], [2.0, 4.0]]), 2, np.empty(2, np.int64)) == 0.0


def test_minimum_norm_least_squares_matches_numpy_lstsq(rng):
    """Tall, wide, rank-deficient and column subsets: the minimum-norm solution and rank."""
    for _ in range(400):
        m, n = int(rng.integers(1, 7)), int(rng.integers(1, 31))
        A = rng.normal(size=(m, n))
        if rng.random() < 0.4:
            A[:, rng.integers(0, n, n // 2)] = A[:, [0]]  # repeated columns
        if rng.random() < 0.3 and m > 1:
            A[-1] = 2.0 * A[0]  # dependent rows
        k = int(rng.integers(1, n + 1))
        cols = rng.permutation(n)[:k].astype(np.int64)
        b = rng.normal(size=m)
        x = np.full(n, np.nan)
        rank = K.lstsq_min_norm(A, cols, k, b, EPS * max(m, k), x)
        ref, _, ref_rank, sv = np.linalg.lstsq(A[:, cols], b, rcond=None)
        assert rank == ref_rank
        np.testing.assert_allclose(x[:k], ref, rtol=0, atol=1e-12 * sv[0] / sv[ref_rank - 1])
        assert np.all(np.isnan(x[k:]))  # nothing written beyond k


# ------------------------------------------------------------------ BVLS
def _random_problem(rng, kind):
    m, n = int(rng.integers(1, 7)), int(rng.integers(1, 31))
    A = rng.normal(size=(m, n)) * 10.0 ** rng.uniform(-2, 2)
    lo = rng.uniform(-2.0, 1.0, n)
    hi = lo + rng.uniform(0.0, 3.0, n)
    if kind == "rank_deficient":
        A[:, rng.integers(0, n, n // 2)] = A[:, [0]]
        if m > 1:
            A[-1] = 3.0 * A[0]
    elif kind == "fixed":  # lo == hi for some (or all) variables
        fix = rng.random(n) < rng.uniform(0.2, 1.0)
        hi[fix] = lo[fix]
    elif kind == "zero_column":
        A[:, rng.integers(0, n)] = 0.0
    x0 = rng.uniform(lo, hi)
    b = A @ x0
    if kind != "consistent":
        b = b + rng.normal(size=m) * np.abs(A).max()
    if kind == "far":  # far outside the reachable set: many bounds active
        b = 100.0 * b
    return A, b, lo, hi


def _reference_cost(A, b, lo, hi):
    """scipy's lsq_linear on the free variables: the better of BVLS and TRF (scipy's BVLS
    stops short of the optimum on some under-determined problems; its TRF does not)."""
    free = hi > lo
    cost_lo = float(np.sum((A @ lo - b) ** 2))
    if not free.any():
        return cost_lo
    bf = b - A[:, ~free] @ lo[~free]
    costs = []
    for method in ("bvls", "trf"):
        res = lsq_linear(A[:, free], bf, bounds=(lo[free], hi[free]), method=method, tol=1e-15)
        costs.append(float(np.sum((A[:, free] @ res.x - bf) ** 2)))
    return min(costs)


@pytest.mark.parametrize(
    "kind", ["generic", "consistent", "rank_deficient", "fixed", "zero_column", "far"]
)
def test_bvls_reaches_the_least_squares_optimum_of_lsq_linear(rng, kind):
    for _ in range(60):
        A, b, lo, hi = _random_problem(rng, kind)
        x = np.empty(A.shape[1])
        status, iterations = K.bvls(A, b, lo, hi, 50 * sum(A.shape), x)
        assert status == K.BVLS_OPTIMAL and iterations <= 50 * sum(A.shape)
        assert np.all(x >= lo) and np.all(x <= hi)
        np.testing.assert_array_equal(x[hi == lo], lo[hi == lo])
        cost = float(np.sum((A @ x - b) ** 2))
        ref = _reference_cost(A, b, lo, hi)
        floor = 1e-14 * float(np.sum((A @ lo - b) ** 2))  # a zero optimum: rounding only
        assert abs(cost - ref) <= 1e-10 * max(ref, floor), (cost, ref)
        # KKT on its own: g = A^T (A x - b) is 0 on free variables, >= 0 at lo, <= 0 at hi
        g = A.T @ (A @ x - b)
        tol = 1e-9 * np.linalg.norm(A, axis=0).max() * np.linalg.norm(A @ lo - b)
        at_lo, at_hi = x == lo, x == hi
        free = ~at_lo & ~at_hi
        assert np.all(np.abs(g[free]) <= tol)
        assert np.all(g[at_lo & ~at_hi] >= -tol) and np.all(g[at_hi & ~at_lo] <= tol)


def test_bvls_with_every_bound_active_and_every_variable_fixed():
    A = np.eye(4)
    lo, hi = np.zeros(4), np.ones(4)
    b = np.array([5.0, -5.0, 7.0, -0.5])  # each beyond a bound: the answer is the corner
    x = np.empty(4)
    assert K.bvls(A, b, lo, hi, 100, x)[0] == K.BVLS_OPTIMAL
    np.testing.assert_array_equal(x, [1.0, 0.0, 1.0, 0.0])
    assert K.bvls(A, b, lo + 0.3, lo + 0.3, 100, x) == (K.BVLS_OPTIMAL, 0)  # lo == hi
    np.testing.assert_array_equal(x, np.full(4, 0.3))


def test_bvls_reports_its_iteration_limit():
    A = np.array([[1.0, 2.0, 0.5], [0.0, 1.0, -1.0]])
    x = np.empty(3)
    status, iterations = K.bvls(A, np.array([3.0, 1.0]), np.zeros(3), np.ones(3), 0, x)
    assert (status, iterations) == (K.BVLS_ITERATION_LIMIT, 0)
    assert K.BVLS_STATUS[status] == "iteration_limit"
    assert np.all(x >= 0.0) and np.all(x <= 1.0)


# ------------------------------------------------------------------ allocation kernel
def _kernel_allocate(ts, demand, m, *, residual_weights=None):
    H = np.array(ts.H[:m])
    rw = np.ones(m) if residual_weights is None else np.array(residual_weights)
    sigma, info = np.empty(ts.n), np.empty(K.ALLOC_INFO_SIZE)
    codes = K.allocate_kernel(
        H, np.array(ts.effectiveness), np.array(ts.fixed_thrust), np.array(demand, float),
        np.array(ts.command_lower), np.array(ts.command_upper), np.ones(ts.n), rw, 1e-9,
        50 * (m + ts.n), 50 * (m + ts.n), sigma, info,
    )  # fmt: skip
    return codes, sigma, info


def test_allocation_kernel_best_effort_is_the_weighted_least_squares_optimum(rng):
    ts = paper_thruster_set().with_faults({4: ThrusterFault.degraded(0.5)})
    W = np.array([1.0, 1.0, 1.0, 5.0, 5.0, 5.0])
    A = ts.H * ts.effectiveness
    lo, hi = ts.command_lower, ts.command_upper
    seen = 0
    for _ in range(40):
        d = np.r_[rng.uniform(-60, 60, 3), rng.uniform(-8, 8, 3)]
        (status, lp_st, _, _, lsq_st, _, lsq_check), sigma, _ = _kernel_allocate(
            ts, d, 6, residual_weights=W
        )
        if lp_st == K.SIMPLEX_OPTIMAL:
            assert status == K.ALLOC_OPTIMAL
            continue
        seen += 1
        assert lp_st == K.SIMPLEX_INFEASIBLE and status == K.ALLOC_BEST_EFFORT
        assert lsq_st == K.BVLS_OPTIMAL and lsq_check == K.CHECK_OK
        assert np.all(sigma >= lo) and np.all(sigma <= hi)
        ref = lsq_linear(W[:, None] * A, W * d, bounds=(lo, hi), method="trf", tol=1e-15)
        cost = np.sum((W * (A @ sigma - d)) ** 2)
        ref_cost = np.sum((W * (A @ ref.x - d)) ** 2)
        assert abs(cost - ref_cost) <= 1e-10 * ref_cost
    assert seen >= 10


def test_allocation_kernel_with_no_free_thruster_puts_every_command_at_its_bound():
    ts = paper_thruster_set()
    dead = ts.with_faults({i: ThrusterFault.failed_off() for i in range(ts.n)})
    (status, lp_st, _, _, lsq_st, lsq_it, _), sigma, _ = _kernel_allocate(dead, [1.0, 0, 0], 3)
    assert lp_st == K.SIMPLEX_INFEASIBLE and status == K.ALLOC_BEST_EFFORT
    assert (lsq_st, lsq_it) == (K.LSQ_NO_FREE, 0)
    np.testing.assert_array_equal(sigma, np.zeros(ts.n))
    r = Allocator(dead, method="fast").allocate([1.0, 0.0, 0.0])
    assert r.solver_status == "lp: infeasible; lsq: optimal (no free thruster)"
    assert r.status == "best_effort"


def test_allocation_kernel_gives_what_the_allocator_returns(rng):
    ts = paper_thruster_set().with_faults({2: ThrusterFault.stuck_on(3.0)})
    a = Allocator(ts, mode="wrench", method="fast")
    for _ in range(20):
        d = np.r_[rng.uniform(-30, 30, 3), rng.uniform(-4, 4, 3)]
        (status, *_), sigma, _ = _kernel_allocate(ts, d, 6)
        r = a.allocate(d)
        np.testing.assert_array_equal(r.sigma, sigma)
        assert list(type(r.status)).index(r.status) == status


# ------------------------------------------------------------------ called from compiled code
@njit
def _compiled_vscmg_and_steering(A_g0, A_s0, A_t0, I_cg, I_ws, I_s, I_t, gamma, Om, w, params):
    k = gamma.shape[0]
    A_s, A_t = np.empty((3, k)), np.empty((3, k))
    B, C, E, d = np.empty((3, k)), np.empty((3, k)), np.empty((3, k)), np.empty(3)
    K.vscmg_axes(A_s0, A_t0, gamma, A_s, A_t)
    K.vscmg_matrices(A_g0, A_s0, A_t0, I_cg, I_ws, I_s, I_t, gamma, Om, w, B, C, E, d)
    tau = np.array([0.3, -0.2, 0.5]) - d
    gd, wa, err = np.empty(k), np.empty(k), np.empty(3)
    scalars = K.steer_kernel(params, C, E, tau, 0.7, gd, wa, err)
    return A_s, C, E, d, gd, wa, err, scalars


def test_vscmg_and_steering_kernels_are_callable_from_compiled_code(rng):
    cl = pyramid_cluster()
    law = SteeringLaw.for_cluster(cl)
    assert law.kernel_params is law.kernel_params  # built once
    gamma, Om, w = rng.uniform(-np.pi, np.pi, 4), cl.nominal_wheel_speed * 1.1, rng.normal(size=3)
    A_s, C, E, d, gd, wa, err, scalars = _compiled_vscmg_and_steering(
        cl.A_g0, cl.A_s0, cl.A_t0, cl.I_cg, cl.I_ws, cl.I_s, cl.I_t, gamma, Om, w,
        law.kernel_params,
    )  # fmt: skip
    m = cl.matrices(gamma, Om, w)
    np.testing.assert_array_equal(A_s, m.A_s)
    np.testing.assert_array_equal(C, m.C)
    np.testing.assert_array_equal(E, m.E)
    np.testing.assert_array_equal(d, m.d)
    sc = steer(law, m.C, m.E, np.array([0.3, -0.2, 0.5]) - m.d, t=0.7)
    np.testing.assert_array_equal(gd, sc.gimbal_rates)
    np.testing.assert_array_equal(wa, sc.wheel_accels)
    np.testing.assert_array_equal(err, sc.torque_error)
    assert scalars == (
        sc.lam, sc.det_GGt, sc.det_CCt, sc.delta_C, sc.delta_G, sc.wheel_weight, sc.scale
    )  # fmt: skip


@njit
def _compiled_thrusters(H, eff, fixed, smin, smax, lo, hi, mib, demand, T, prev, carry):
    S = H.shape[1]
    sigma, info = np.empty(S), np.empty(K.ALLOC_INFO_SIZE)
    codes = K.allocate_kernel(
        H, eff, fixed, demand, lo, hi, np.ones(S), np.ones(H.shape[0]), 1e-9, 500, 500,
        sigma, info,
    )  # fmt: skip
    on_time, impulse, firing, carry_out = (
        np.empty(S),
        np.empty(S),
        np.empty(S, np.bool_),
        np.empty(S),
    )
    K.modulate_kernel(
        sigma, smax, mib, T, 0.75, 0.25, T / 10.0, True, prev, carry,
        on_time, impulse, firing, carry_out,
    )  # fmt: skip
    delivered = np.empty(S)
    K.delivered_thrust_kernel(sigma, smin, smax, eff, fixed, delivered)
    return codes[0], sigma, on_time, impulse, firing, carry_out, delivered


def test_thruster_kernels_are_callable_from_compiled_code(rng):
    ts = paper_thruster_set(min_impulse_bit=0.05).with_faults({3: ThrusterFault.degraded(0.7)})
    pwm = PulseModulator(ts, 0.1, schmitt=SchmittTrigger(0.75, 0.25), quantum=0.01,
                         error_feedback=True)  # fmt: skip
    alloc = Allocator(ts, method="fast")
    prev, carry = rng.random(ts.n) < 0.5, rng.normal(0.0, 0.02, ts.n)
    for d in (np.array([3.0, -4.0, 5.0]), np.array([35.0, 0.0, 0.0])):
        status, sigma, on_time, impulse, firing, carry_out, delivered = _compiled_thrusters(
            ts.H[:3], ts.effectiveness, ts.fixed_thrust, ts.sigma_min, ts.sigma_max,
            ts.command_lower, ts.command_upper, ts.min_impulse_bit, d, 0.1, prev, carry,
        )  # fmt: skip
        r = alloc.allocate(d)
        assert type(r.status)(list(type(r.status))[status]) is r.status
        np.testing.assert_array_equal(sigma, r.sigma)
        p = pwm.modulate(np.clip(sigma, 0.0, ts.sigma_max), prev, carry)
        np.testing.assert_array_equal(on_time, p.on_time)
        np.testing.assert_array_equal(impulse, p.impulse)
        np.testing.assert_array_equal(firing, p.firing)
        np.testing.assert_array_equal(carry_out, p.carry)
        np.testing.assert_array_equal(delivered, ts.delivered_thrust(sigma))


@njit
def _compiled_wheels(A, I_s, max_torque, max_speed, torque, speed, w, dt, active):
    n = A.shape[1]
    h = np.empty(3)
    K.wheel_momentum_kernel(A, I_s, speed, w, h)
    u, err, sat = np.empty(n), np.empty(3), np.empty(n, np.bool_)
    K.distribute_kernel(A, I_s, max_torque, max_speed, torque, speed, dt, u, err, sat)
    dump = np.empty(3)
    K.momentum_dump_kernel(A, I_s, max_speed, 0.5, 0.8, 0.5, speed, w, active, dump)
    return h, u, err, sat, dump


def test_wheel_kernels_are_callable_from_compiled_code_and_share_the_dumping_state(rng):
    arr = pyramid_wheels(max_torque=0.2)
    mgr = MomentumManager(arr, gain=0.5, start_fraction=0.8, stop_fraction=0.5)
    w = rng.normal(0.0, 0.05, 3)
    torque = rng.normal(0.0, 0.3, 3)
    fast = 0.85 * arr.max_speed * np.array([1.0, -0.3, 0.2, 0.1])
    slow = 0.3 * arr.max_speed * np.ones(4)
    args = (arr.A, arr.I_s, arr.max_torque, arr.max_speed, torque)

    h, u, err, sat, dump = _compiled_wheels(*args, fast, w, 0.01, mgr.active_state)
    np.testing.assert_array_equal(h, arr.momentum(fast, w))
    c = distribute(arr, torque, fast, dt=0.01)
    np.testing.assert_array_equal(u, c.motor_torque)
    np.testing.assert_array_equal(err, c.torque_error)
    np.testing.assert_array_equal(sat, c.saturated)
    # the compiled call started dumping, and the Python object sees it
    assert mgr.active and mgr.active_state[0] == 1.0
    np.testing.assert_array_equal(dump, -0.5 * arr.momentum(fast, w))
    # the Python object keeps dumping between the thresholds (hysteresis) ...
    between = 0.6 * arr.max_speed * np.ones(4)
    np.testing.assert_array_equal(mgr(between, w), -0.5 * arr.momentum(between, w))
    # ... and the compiled code sees what the Python object decided
    mgr.active = False
    *_, dump = _compiled_wheels(*args, between, w, 0.01, mgr.active_state)
    np.testing.assert_array_equal(dump, np.zeros(3))
    assert not mgr.active
    mgr.active = True
    *_, dump = _compiled_wheels(*args, slow, w, 0.01, mgr.active_state)
    assert not mgr.active and np.all(dump == 0.0)  # below stop_fraction: off again


def test_dt_none_and_dt_zero_mean_the_same_speed_limit_rule():
    arr = orthogonal_wheels()
    speed = np.array([arr.max_speed[0], 0.0, -arr.max_speed[2]])
    c = distribute(arr, np.array([-0.1, 0.2, 0.1]), speed)
    u, err, sat = np.empty(3), np.empty(3), np.empty(3, bool)
    K.distribute_kernel(
        arr.A, arr.I_s, arr.max_torque, arr.max_speed, np.array([-0.1, 0.2, 0.1]), speed, 0.0,
        u, err, sat,
    )  # fmt: skip
    np.testing.assert_array_equal(u, c.motor_torque)
    np.testing.assert_array_equal(u, [0.0, -0.2, 0.0])
