"""The MPC's previewed disturbance (dqspace.control.mpc: ReactionPreview,
nominal_reaction_table, MPCBaseController(preview=...)) and its scenario key
``base_controller.mpc_preview``.

References: Pinocchio's RNEA (an independent inverse dynamics) at the arm's planned joint
state with the base on its reference; the QP with a time-varying disturbance written with
cvxpy and solved by Clarabel (a second formulation and solver); numpy's interpolation.
"""

import numpy as np
import pinocchio as pin
import pytest

from dqspace.actuators.thrusters import paper_thruster_set
from dqspace.control import PoseReference, State
from dqspace.control.mpc import MPCBaseController, ReactionPreview
from dqspace.control.mpc_qp import MPCProblem, MPCWeights, cvxpy_problem
from dqspace.dq import dq_from_rpy_deg
from dqspace.multibody import Body, Joint, JointType, Model
from dqspace.scenarios import load_scenario
from dqspace.scenarios.build.system import build_system
from support.pin_bridge import q_to_pin, to_pinocchio, v_from_pin, v_to_pin

THRUSTERS = paper_thruster_set(half_size=0.15, sigma_max=10.0, min_impulse_bit=0.01)
G_FORCE = np.vstack([np.zeros((3, THRUSTERS.n)), THRUSTERS.H_f])
TIGHT = dict(eps=1e-12, max_iter=400000, polish=True)
#: a slewing base (twist and acceleration of the reference not zero) under a moving arm
SLEW = [
    'base_controller.law="mpc"', "base_controller.mpc_preview=true", "scenario.duration=1.0",
    'base_reference.type="slew"',
    "base_reference.rpy_deg=[3.0, -2.0, 4.0]", "base_reference.xyz=[0.02, 0.01, -0.01]",
    "base_reference.duration=0.8", "base_reference.start_time=0.1",
]  # fmt: skip


@pytest.fixture(scope="module")
def slewing():
    return build_system(load_scenario("station-keeping", SLEW).config)


def test_the_preview_table_is_the_rnea_reaction_along_the_planned_motion(slewing):
    """At grid times and between them, the table equals the base rows of Pinocchio's RNEA
    at the IK's joint state (a fresh copy of the arm controller run along the same grid),
    the base on its reference (its pose, twist, acceleration), to 1e-9; between grid
    points the linear interpolation of the two.  The system's arm controller's seed is
    the start's (the table was built on a copy)."""
    sy = slewing
    base, arm = sy.base, sy.arm
    prev = base.preview
    assert isinstance(prev, ReactionPreview)
    T = base.weights.period
    np.testing.assert_allclose(prev.times[1] - prev.times[0], T, rtol=1e-12)
    assert prev.times[-1] >= 1.0 + (base.weights.horizon - 1) * T
    np.testing.assert_array_equal(arm.seed, sy.q0[8 : 8 + arm.seed.size])  # untouched
    model = base.model
    pm = to_pinocchio(model)
    pd = pm.createData()
    import copy  # noqa: PLC0415 - the test's own copy of the arm controller

    ik = copy.deepcopy(arm)
    n = arm.seed.size
    q, v, a = model.neutral_configuration(), np.zeros(model.nv), np.zeros(model.nv)
    expected = []
    checked = [0, 3, 7, 12, 19]
    for i in range(max(checked) + 1):
        t = i * T
        ref = sy.base_reference(t)
        q[:8], v[:6], a[:6] = ref.pose, ref.twist, ref.acc
        jref, _ = ik.joint_reference(sy.trajectory(t), State(q.copy(), v.copy()))
        q[8 : 8 + n], v[6 : 6 + n], a[6 : 6 + n] = jref.q, jref.v, jref.a
        tau = pin.rnea(pm, pd, q_to_pin(model, q), v_to_pin(model, v), v_to_pin(model, a))
        expected.append(v_from_pin(model, tau)[:6])  # [torque, force] of the base
    expected = np.array(expected)
    assert np.abs(expected[7]).max() > 0.05  # the arm moves, the base slews
    for i in checked:
        np.testing.assert_allclose(prev(i * T), expected[i], rtol=0, atol=1e-9)
    mid = 0.5 * (expected[3] + expected[4])
    np.testing.assert_allclose(prev(3.5 * T), mid, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(prev(1e3), prev.values[-1])  # held beyond the end


def test_the_preview_interpolates_and_holds():
    times = np.array([0.0, 0.1, 0.3])
    values = np.arange(18.0).reshape(3, 6) ** 2
    p = ReactionPreview(times, values)
    for t in (-1.0, 0.05, 0.2, 0.3, 5.0):
        ref = [np.interp(t, times, values[:, j]) for j in range(6)]
        np.testing.assert_allclose(p(t), ref, rtol=1e-15)
    with pytest.raises(ValueError, match="increasing"):
        ReactionPreview([0.0, 0.0], np.zeros((2, 6)))
    with pytest.raises(ValueError, match=r"\(2, 6\)"):
        ReactionPreview([0.0, 1.0], np.zeros((2, 5)))


@pytest.mark.parametrize("seed", [11, 12])
def test_the_qp_with_a_time_varying_disturbance_equals_cvxpy_with_clarabel(seed):
    """OSQP with d (N, 6), one row per prediction step, against cvxpy + Clarabel on the
    cvxpy formulation with acc_k = M^-1 d_k, to 1e-6; and the plan differs from the one
    with d_0 held (the rows reach the prediction)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(6, 6))
    M = np.diag([2.0, 2.5, 3.0, 50.0, 50.0, 50.0]) + 0.2 * (A @ A.T)
    w = MPCWeights(horizon=12, period=0.05, torque_limit=[0.3, 0.4, 0.5], torque_rate_limit=4.0,
                   r_thrust=1.0, q_rot=2.0e4, r_impulse=10.0, **TIGHT)  # fmt: skip
    x0, d = rng.normal(size=12) * 0.002, rng.normal(size=(w.horizon, 6)) * 1.5
    tau_prev = rng.uniform(-0.2, 0.2, 3)
    qp = MPCProblem(w, G_FORCE, 0.0, 10.0, M)
    s, tau, x = qp.solve(x0, d, tau_prev)
    prob, par, var = cvxpy_problem(w, G_FORCE, 0.0, 10.0)
    Minv = np.linalg.inv(M)
    par["x0"].value, par["Minv"].value, par["tau_prev"].value = x0, Minv, tau_prev
    par["acc"].value = d @ Minv.T
    tol = dict(tol_gap_abs=1e-14, tol_gap_rel=1e-14, tol_feas=1e-14, tol_ktratio=1e-14)
    prob.solve(solver="CLARABEL", **tol)
    assert prob.status == "optimal"
    np.testing.assert_allclose(s, var["s"].value, rtol=0, atol=1e-6)
    np.testing.assert_allclose(tau, var["tau"].value, rtol=0, atol=1e-6)
    np.testing.assert_allclose(x, var["x"].value, rtol=0, atol=1e-6)
    s_held, _, _ = qp.solve(x0, d[0], tau_prev)
    assert np.abs(s_held - s).max() > 1e-3


@pytest.fixture(scope="module")
def body_arm():
    J = np.diag([0.4, 0.5, 0.6])
    return Model.build([
        Body("base", None, Joint(JointType.FREE), 27.0, np.zeros(3), J),
        Body("link", "base", Joint(JointType.REVOLUTE, axis=[0, 0, 1]), 2.0,
             np.array([0.3, 0.0, 0.0]), np.diag([0.01, 0.02, 0.02])),
    ])  # fmt: skip


def test_the_law_previews_the_planned_change_and_without_a_preview_is_unchanged(body_arm):
    """Same inputs: a law without a preview and a law with a constant preview give the
    same first move, bit for bit (the disturbance d held); a law with a ramp preview
    solves the QP with rows ``d + ramp(t + k T) - ramp(t)`` (the same QP solved directly
    gives its first move)."""
    ref = PoseReference(dq_from_rpy_deg([1.0, 0.5, 0.0], [0.01, 0.0, -0.005]), np.zeros(6),
                        np.zeros(6))  # fmt: skip
    st = State(body_arm.neutral_configuration(), np.r_[np.zeros(6), 0.3])
    arm_acc = np.array([2.0])
    w = MPCWeights(horizon=10)
    held = MPCBaseController(body_arm, THRUSTERS, w)
    const = MPCBaseController(body_arm, THRUSTERS, w, preview=lambda t: np.full(6, 0.7))
    c1, c2 = held(0.2, st, ref, arm_acc=arm_acc), const(0.2, st, ref, arm_acc=arm_acc)
    np.testing.assert_array_equal(c1.wrench, c2.wrench)
    np.testing.assert_array_equal(c1.feedforward, c2.feedforward)
    slope = np.array([0.0, 0.0, 0.5, 3.0, -2.0, 1.0])
    table = (np.array([0.0, 10.0]), np.vstack([np.zeros(6), 10.0 * slope]))
    ramp = MPCBaseController(body_arm, THRUSTERS, w, preview=table)
    c3 = ramp(0.2, st, ref, arm_acc=arm_acc)
    d = np.r_[c3.feedforward[3:], c3.feedforward[:3]]
    rows = d + np.outer(np.arange(w.horizon) * w.period, slope)
    qp = MPCProblem(w, held.G, 0.0, held.s_max, held.base_inertia(st.q))
    s, tau, _ = qp.solve(np.r_[c3.error.log, c3.error.twist], rows)
    np.testing.assert_allclose(ramp.last_plan[0], s, atol=1e-9)
    assert np.abs(c3.wrench - c1.wrench).max() > 1e-3
    with pytest.raises(ValueError, match="preview"):
        MPCBaseController(body_arm, THRUSTERS, w, preview=(np.zeros(2), np.zeros((3, 6))))


def test_the_scenario_key_and_an_armless_system():
    """``mpc_preview = false`` (the default): no preview (the law of before); an arm-less
    system: no preview either (d = 0)."""
    off = build_system(
        load_scenario("station-keeping", [*SLEW, "base_controller.mpc_preview=false"]).config
    )
    assert off.base.preview is None
    default = build_system(load_scenario("station-keeping", ['base_controller.law="mpc"']).config)
    assert default.base.preview is None
    none = build_system(load_scenario("station-keeping", [*SLEW, 'arm.model="none"']).config)
    assert none.base.preview is None
