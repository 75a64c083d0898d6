"""The model-predictive base law (dqspace.control.mpc, dqspace.control.mpc_qp).

References: the same QP written with cvxpy and solved by Clarabel at tight tolerance (a
second formulation and a second solver), a finite-horizon Riccati recursion written here
(the unconstrained LQ problem the QP reduces to without active bounds and without the
impulse cost), a free rigid body in a nonlinear closed loop (RK4, another kernel), and the
scenario runner.
"""

import pickle

import numpy as np
import pytest

from dqspace.actuators.thrusters import paper_thruster_set
from dqspace.control import BaseFeedback, PoseReference, linearize
from dqspace.control.mpc import MPCBaseController
from dqspace.control.mpc_qp import MPCProblem, MPCWeights, cvxpy_problem, prediction_matrices
from dqspace.dq import dq_conj, dq_from_rpy_deg, dq_log, dq_mul
from dqspace.multibody import Body, Joint, JointType, Model, simulate_rk4

THRUSTERS = paper_thruster_set(half_size=0.15, sigma_max=10.0, min_impulse_bit=0.01)
G_FORCE = np.vstack([np.zeros((3, THRUSTERS.n)), THRUSTERS.H_f])  # thrusters: force mode
TIGHT = dict(eps=1e-12, max_iter=400000, polish=True)  # OSQP for the comparisons
#: weights of the comparisons with Clarabel (with which it reaches its 1e-14 tolerances)
WEIGHTS = dict(q_rot=2.0e4, r_impulse=10.0)


def _inertia(rng):
    A = rng.normal(size=(6, 6))
    return np.diag([2.0, 2.5, 3.0, 50.0, 50.0, 50.0]) + 0.2 * (A @ A.T)


def _clarabel(weights, G, lo, hi, M, x0, d, tau_prev):
    prob, par, var = cvxpy_problem(weights, G, lo, hi)
    Minv = np.linalg.inv(M)
    par["x0"].value, par["Minv"].value = x0, Minv
    par["acc"].value = np.tile(Minv @ d, (weights.horizon, 1))
    par["tau_prev"].value = tau_prev
    tol = dict(tol_gap_abs=1e-14, tol_gap_rel=1e-14, tol_feas=1e-14, tol_ktratio=1e-14)
    prob.solve(solver="CLARABEL", **tol)
    assert prob.status == "optimal"
    return var["s"].value, var["tau"].value, var["x"].value


@pytest.mark.parametrize(
    "seed, x_scale, d_scale, upper_active",
    [(0, 0.002, 1.0, False), (1, 0.002, 1.0, False), (2, 0.1, 3.0, True), (5, 0.1, 3.0, False)],
)
def test_the_run_time_qp_equals_cvxpy_with_clarabel(seed, x_scale, d_scale, upper_active):
    """OSQP on the assembled QP against cvxpy + Clarabel on the cvxpy formulation, to
    1e-6, at random states and disturbances: small ones (few bounds active) and large ones
    (thrusters at 0, one case at their largest force, device torques at their limit and
    rate limit); the bounds hold.  ``r_thrust = 1`` keeps the thrusters' split well
    conditioned (with a weak quadratic weight a 1e-6 difference in the forces is a 1e-14
    relative difference in the cost, below what either solver resolves)."""
    rng = np.random.default_rng(seed)
    M = _inertia(rng)
    w = MPCWeights(horizon=12, period=0.05, torque_limit=[0.3, 0.4, 0.5],
                   torque_rate_limit=4.0, r_thrust=1.0, **TIGHT, **WEIGHTS)  # fmt: skip
    x0, d = rng.normal(size=12) * x_scale, rng.normal(size=6) * d_scale
    tau_prev = rng.uniform(-0.2, 0.2, 3)
    qp = MPCProblem(w, G_FORCE, 0.0, 10.0, M)
    s, tau, x = qp.solve(x0, d, tau_prev)
    s_ref, tau_ref, x_ref = _clarabel(w, G_FORCE, 0.0, 10.0, M, x0, d, tau_prev)
    np.testing.assert_allclose(s, s_ref, rtol=0, atol=1e-6)
    np.testing.assert_allclose(tau, tau_ref, rtol=0, atol=1e-6)
    np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-6)
    tol = 1e-7
    assert s.min() >= -tol and s.max() <= 10.0 + tol
    assert np.all(np.abs(tau) <= w.torque_limit + tol)
    steps = np.diff(np.vstack([tau_prev, tau]), axis=0)
    assert np.abs(steps).max() <= 4.0 * 0.05 + tol
    assert np.isclose(s, 0.0, atol=1e-6).any()
    assert np.isclose(s, 10.0, atol=1e-6).any() == upper_active
    if x_scale > 0.01:  # the large cases: the torque at its limit and at its rate limit
        assert np.isclose(np.abs(tau), w.torque_limit, atol=1e-6).any()
        assert np.isclose(np.abs(steps), 0.2, atol=1e-6).any()


def test_the_inertia_update_gives_the_qp_of_the_new_inertia():
    """A QP built at one inertia then updated to another solves as one built at the
    other (the values of the dynamics' input block written in place)."""
    rng = np.random.default_rng(7)
    M1, M2 = _inertia(rng), _inertia(rng)
    w = MPCWeights(horizon=10, **TIGHT, **WEIGHTS)
    x0, d = rng.normal(size=12) * 0.01, rng.normal(size=6)
    qp = MPCProblem(w, G_FORCE, 0.0, 10.0, M1)
    qp.solve(x0, d)
    qp.set_inertia(M2)
    s, tau, _ = qp.solve(x0, d)
    s_ref, tau_ref, _ = _clarabel(w, G_FORCE, 0.0, 10.0, M2, x0, d, np.zeros(3))
    np.testing.assert_allclose(np.r_[s.ravel(), tau.ravel()], np.r_[s_ref.ravel(),
                               tau_ref.ravel()], rtol=0, atol=1e-6)  # fmt: skip


def test_without_active_bounds_or_impulse_cost_the_first_move_is_the_lq_gain():
    """No impulse cost, bounds far away: the first move is ``-K_0 x_0`` of the
    finite-horizon LQ problem, K_0 from a backward Riccati recursion on (A, B M^-1 [G E])
    with Q on x_1..x_N-1, terminal Q_N, R = diag(r_thrust, r_torque)."""
    rng = np.random.default_rng(3)
    M = _inertia(rng)
    G = np.vstack([np.zeros((3, 3)), np.eye(3)])  # three force inputs, both signs allowed
    w = MPCWeights(horizon=15, period=0.04, r_impulse=0.0, r_thrust=0.02, r_torque=0.5,
                   torque_limit=1e4, terminal=5.0, **TIGHT)  # fmt: skip
    x0 = rng.normal(size=12) * 0.01
    qp = MPCProblem(w, G, -1e4, 1e4, M)
    s, tau, _ = qp.solve(x0, np.zeros(6))
    A, B = prediction_matrices(w.period)
    Bu = B @ np.linalg.solve(M, np.hstack([G, np.vstack([np.eye(3), np.zeros((3, 3))])]))
    R = np.diag(np.r_[np.full(3, w.r_thrust), np.full(3, w.r_torque)])
    P = w.terminal * w.Q
    for _ in range(w.horizon - 1):
        K = np.linalg.solve(R + Bu.T @ P @ Bu, Bu.T @ P @ A)
        P = w.Q + A.T @ P @ (A - Bu @ K)
    K0 = np.linalg.solve(R + Bu.T @ P @ Bu, Bu.T @ P @ A)
    u0 = -K0 @ x0
    assert np.abs(u0).max() < 1e3  # no bound active
    np.testing.assert_allclose(np.r_[s[0], tau[0]], u0, rtol=0, atol=1e-6 * np.abs(u0).max())


@pytest.fixture(scope="module")
def body():
    J = np.diag([0.4, 0.5, 0.6])
    return Model.build([Body("body", None, Joint(JointType.FREE), 27.0, np.zeros(3), J)])


def test_the_closed_loop_brings_a_rigid_body_to_its_reference(body):
    """A free rigid body (RK4, 2 ms; the law every 10 ms), its reference 2 cm and 2 deg
    away, no disturbance, no impulse weight: after 3 s the pose error is below 0.1 mm and
    0.01 deg; every commanded force is made of thrusters' forces in [0, 10] N and every
    torque is within the limit.  (With an impulse weight the law stops firing once the
    error is worth less than the impulse: no convergence to zero, by design.)"""
    ref_pose = dq_from_rpy_deg([2.0, -1.0, 1.5], [0.02, -0.01, 0.015])
    law = MPCBaseController(body, THRUSTERS, MPCWeights(torque_limit=0.5, r_impulse=0.0))
    fb = BaseFeedback(law, PoseReference(ref_pose, np.zeros(6), np.zeros(6)))
    wrenches = []

    def controller(t, q, v):
        tau = fb(t, q, v)
        wrenches.append(np.r_[tau[3:6], tau[:3]])
        s = law.last_thrust  # the first move's forces (clipped to the bounds)
        assert s.min() >= 0.0 and s.max() <= 10.0
        np.testing.assert_allclose(wrenches[-1][:3], THRUSTERS.H_f @ s, atol=1e-12)
        return tau

    q0 = body.neutral_configuration()
    traj = simulate_rk4(
        body, q0, np.zeros(6), dt=2e-3, n_steps=1500, inputs=lambda t: (np.zeros(6), None),
        controller=controller, control_every=5, record_every=1500,
    )  # fmt: skip
    e = dq_mul(dq_conj(ref_pose), traj.q[-1][:8])
    log = 2.0 * dq_log(e if e[0] >= 0 else -e)
    assert np.degrees(np.linalg.norm(log[:3])) < 0.01 and np.linalg.norm(log[3:]) < 1e-4
    W = np.array(wrenches)
    assert np.all(np.abs(W[:, 3:]) <= 0.5 + 1e-6)
    assert np.abs(W[0, :3]).max() > 1.0  # it did use the thrusters


def test_the_law_pickles_and_rebuilds_its_solver(body):
    law = MPCBaseController(body, THRUSTERS)
    ref = PoseReference(dq_from_rpy_deg([1.0, 0.0, 0.0], [0.01, 0.0, 0.0]), np.zeros(6),
                        np.zeros(6))  # fmt: skip
    from dqspace.control import State

    st = State(body.neutral_configuration(), np.zeros(6))
    w1 = law(0.0, st, ref).wrench
    copy = pickle.loads(pickle.dumps(law))  # as a Dask worker receives it
    copy.reset()
    np.testing.assert_allclose(copy(0.0, st, ref).wrench, w1, atol=1e-9)
    assert np.abs(w1[:3]).max() > 0.1  # it commands something


def test_the_linearisation_refuses_the_mpc(body):
    fb = BaseFeedback(MPCBaseController(body, THRUSTERS), body.neutral_configuration()[:8])
    with pytest.raises(ValueError, match="MPCBaseController.*no linearisation"):
        linearize(body, body.neutral_configuration(), controller=fb)


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(horizon=1), "horizon"),
        (dict(period=0.0), "period"),
        (dict(q_rot=[-1.0, 0.0, 0.0]), "q_rot"),
        (dict(torque_limit=[1.0, 2.0]), "torque_limit"),
        (dict(r_impulse=np.nan), "r_impulse"),
        (dict(max_iter=0), "max_iter"),
    ],
)
def test_bad_weights_raise(change, match):
    with pytest.raises(ValueError, match=match):
        MPCWeights(**change)


@pytest.mark.parametrize(
    "overrides, match",
    [
        (["base_controller.mpc_horizon=1"], "mpc_horizon"),
        (["base_controller.mpc_r_thrust=0.0"], "mpc_r_thrust"),
        (["base_controller.mpc_torque_limit=[1.0, 0.0, 1.0]"], "mpc_torque_limit"),
        (["thrusters.enabled=false"], "needs thrusters.enabled"),
    ],
)
def test_bad_scenario_keys_are_named(overrides, match):
    from dqspace.scenarios import load_scenario
    from dqspace.scenarios.build.system import build_system

    with pytest.raises(ValueError, match=match):
        sc = load_scenario("station-keeping", ['base_controller.law="mpc"', *overrides])
        build_system(sc.config)


def test_the_scenario_runs_the_mpc_in_the_flight_software():
    """station-keeping for 2 s with ``base_controller.law = "mpc"`` (the law called back
    from the compiled tick, the arm law in Python with it): the base stays within the
    scenario's requirements (1 mm, 0.05 deg) and the end-effector tracks (< 0.1 mm)."""
    from dqspace.scenarios import load_scenario, run
    from dqspace.scenarios.sim.metrics import summarize

    sc = load_scenario("station-keeping", ["scenario.duration=2", 'base_controller.law="mpc"'])
    m = summarize(run(sc, progress=False))
    assert m["base_pos_err_max"] < 1e-3 and m["base_att_err_max"] < 0.05
    assert m["ee_max"] < 1e-4


def test_a_servicer_with_several_arms_refuses_the_mpc(tmp_path):
    """[[extra_arm]] runs compiled laws only: base_controller.law = mpc is refused, named."""
    from dqspace.scenarios import load_scenario, run
    from dqspace.scenarios.spec.config import ScenarioError

    f = tmp_path / "two.toml"
    f.write_text('[scenario]\nname = "two"\n[base_controller]\nlaw = "mpc"\n'
                 '[[extra_arm]]\nname = "b"\n')  # fmt: skip
    with pytest.raises(ScenarioError, match="base_controller.law = 'mpc'.*not mpc"):
        run(load_scenario(f), progress=False)
