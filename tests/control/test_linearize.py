"""Linearisation in tangent coordinates (dqspace.control.linearize).

References: Pinocchio's analytic ABA derivatives (``computeABADerivatives``) and
its own chart (``pin.integrate`` / ``pin.dIntegrate``, the same exponential
chart of the free flyer) and ``pin.aba`` for the nonlinear state derivative;
the SE(3) kinematics ``delta' = v - 1/2 ad_v delta``; the analytic poles of a
rigid body under the dual PD law; the static balance of a held base.
"""

import importlib
import sys
import types

import numpy as np
import pinocchio as pin
import pytest

from dqspace.control import (
    BaseController,
    DualPD,
    Input,
    JointComputedTorque,
    JointGains,
    LinearModel,
    Output,
    PDGains,
    PoseReference,
    ReactionlessArmController,
    State,
    StationKeepingFeedback,
    linearize,
    python_control,
)
from dqspace.multibody import Body, Joint, JointType, Model, frame_pose, models
from support.pin_bridge import q_to_pin, to_pinocchio, v_from_pin, v_to_pin

pycontrol_module = importlib.import_module("dqspace.control.pycontrol")


@pytest.fixture(scope="module")
def robot():
    return models.space_manipulator()


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _random_state(model, rng):
    q = model.random_configuration(rng, translation=0.5)
    return q, rng.normal(size=model.nv)


def _ours(model, M_pin):
    """A Pinocchio (nv, nv) matrix in dqspace's velocity order (base [w, v])."""
    P = np.array([np.flatnonzero(v_to_pin(model, np.eye(model.nv)[i]))[0] for i in range(model.nv)])
    return M_pin[np.ix_(P, P)]


class PinRates:
    """The nonlinear state derivative ``[delta', a]`` from Pinocchio alone: its chart
    ``q = pin.integrate(q0, delta)``, ``delta' = dIntegrate_dv(q0, delta)^-1 v`` and
    ``a = pin.aba`` (base body wrench as a joint-1 external force)."""

    def __init__(self, model, q0, controller=None, wrench_on=None):
        self.model, self.pm = model, to_pinocchio(model)
        self.pd = self.pm.createData()
        self.q0p = q_to_pin(model, q0)
        self.controller = controller
        self.wrench_on = wrench_on  # pin joint id receiving u[-6:] as [f, tau]

    def __call__(self, delta, v, u):
        m, pm = self.model, self.pm
        dp, vp = v_to_pin(m, delta), v_to_pin(m, v)
        qp = pin.integrate(pm, self.q0p, dp)
        Jd = pin.dIntegrate(pm, self.q0p, dp, pin.ArgumentPosition.ARG1)
        ddelta = v_from_pin(m, np.linalg.solve(Jd, vp))
        tau = u[: m.nv].copy()
        if self.controller is not None:
            tau += self.controller(0.0, _q_from_pin(m, qp), v)
        fext = pin.StdVec_Force()
        for j in range(pm.njoints):
            f = pin.Force.Zero()
            if j == self.wrench_on:
                f = pin.Force(u[m.nv : m.nv + 3], u[m.nv + 3 : m.nv + 6])
            fext.append(f)
        a = v_from_pin(m, pin.aba(pm, self.pd, qp, vp, v_to_pin(m, tau), fext))
        return np.concatenate([ddelta, a])


def _q_from_pin(model, qp):
    """dqspace q from Pinocchio's (free flyer [x, y, z, qx, qy, qz, qw], then revolute)."""
    from dqspace.dq import dq_from_quat_translation

    base = dq_from_quat_translation(np.r_[qp[6], qp[3:6]], qp[:3])
    return np.concatenate([base, qp[7:]])


def test_dynamics_rows_equal_pinocchio_aba_derivatives(robot, rng):
    """A's acceleration rows and B against Pinocchio's analytic ABA derivatives at a
    non-equilibrium state (random q, v, generalized forces), default method."""
    q, v = _random_state(robot, rng)
    u0 = rng.normal(size=robot.nv)
    lin = linearize(robot, q, v, u0=u0)
    pm = to_pinocchio(robot)
    pd = pm.createData()
    qp, vp, up = q_to_pin(robot, q), v_to_pin(robot, v), v_to_pin(robot, u0)
    pin.computeABADerivatives(pm, pd, qp, vp, up)
    Minv = np.triu(pd.Minv) + np.triu(pd.Minv, 1).T
    nv = robot.nv
    # error model of the differences: rounding ~ eps |a| / h, truncation ~ h^4 (entries
    # of the Jacobian): about 1e-12 of the larger of the accelerations and the entries
    a_max = np.abs(lin.xdot0[nv:]).max()
    for got, ref in (
        (lin.A[nv:, :nv], _ours(robot, pd.ddq_dq)),
        (lin.A[nv:, nv:], _ours(robot, pd.ddq_dv)),
        (lin.B[nv:], _ours(robot, Minv)),
    ):
        assert np.abs(got - ref).max() <= 1e-11 * max(a_max, np.abs(ref).max())
    # operating-point rate: a from Pinocchio's ABA
    a_ref = v_from_pin(robot, pin.aba(pm, pd, qp, vp, up))
    assert np.allclose(lin.xdot0[nv:], a_ref, rtol=0, atol=1e-11 * np.abs(a_ref).max())
    assert np.array_equal(lin.xdot0[:nv], v)  # delta' = v at delta = 0


def test_kinematic_rows_are_the_se3_differential(robot, rng):
    """delta' = dexp^-1(delta) v: at delta = 0, d/d delta = -1/2 ad_v on the base's
    [w, v] block (ad_v = [[w x, 0], [v x, w x]]), zero for the joints; d/dv = I."""
    q, v = _random_state(robot, rng)
    lin = linearize(robot, q, v)
    nv = robot.nv
    ad = np.zeros((6, 6))
    ad[:3, :3] = ad[3:, 3:] = _skew(v[:3])
    ad[3:, :3] = _skew(v[3:6])
    expected = np.zeros((nv, nv))
    expected[:6, :6] = -0.5 * ad
    assert np.abs(lin.A[:nv, :nv] - expected).max() < 1e-12
    assert np.abs(lin.A[:nv, nv:] - np.eye(nv)).max() < 1e-12
    assert np.all(lin.B[:nv] == 0.0)


@pytest.mark.parametrize(
    "closed_loop", [False, True, "reactionless"], ids=["open_loop", "closed_loop", "reactionless"]
)
def test_linear_rates_match_finite_differences_at_two_steps(robot, rng, closed_loop):
    """At a non-equilibrium point, A dx + B du equals the central difference of the
    nonlinear state derivative (Pinocchio's chart and ABA) along random directions, with
    second-order convergence: the mismatch falls ~100x from eps = 1e-2 to 1e-3.  Closed
    loops: the computed-torque arm law on held joint references, and the reactionless arm
    law (``control/reactionless.py``) on an end-effector pose away from the arm's."""
    q, v = _random_state(robot, rng)
    nv = robot.nv
    controller = None
    if closed_loop:
        # station keeping of a pose away from q, arm joints held away from theirs
        base = BaseController(robot, PDGains.from_natural_frequency(40.0, [3, 3, 3], 1.5))
        gains = JointGains.from_natural_frequency(5.0)
        ref = robot.random_configuration(rng, translation=0.5)
        if closed_loop == "reactionless":
            # the task near the arm's pose (0.1 rad of joint offsets): a far one (a random
            # configuration) asks joint rates of hundreds of rad/s, whose third derivatives
            # make the central differences themselves (the reference here) err 4e-6
            arm = ReactionlessArmController(robot, gains, seed=q[8:], task_gain=2.0)
            near = np.r_[robot.neutral_configuration()[:8], q[8:] + rng.normal(0.0, 0.1, 7)]
            target = frame_pose(robot, near, "ee")
            controller = StationKeepingFeedback(base, arm, ref[:8], target)
        else:
            arm = JointComputedTorque(robot, gains)
            controller = StationKeepingFeedback(base, arm, ref[:8], ref[8:])
    inputs = [Input.generalized_forces(robot), Input.external_wrench(robot, "base")]
    u0 = rng.normal(size=nv + 6)
    lin = linearize(robot, q, v, u0=u0, inputs=inputs, controller=controller)
    f = PinRates(robot, q, controller, wrench_on=1)
    for _ in range(3):
        d = rng.normal(size=2 * nv + nv + 6)
        d /= np.linalg.norm(d)
        dx, du = d[: 2 * nv], d[2 * nv :]
        lin_rate = lin.A @ dx + lin.B @ du
        errs = []
        for eps in (1e-2, 1e-3):
            zp = np.concatenate([lin.x0, u0]) + eps * d
            zm = np.concatenate([lin.x0, u0]) - eps * d
            fd = f(zp[:nv], zp[nv : 2 * nv], zp[2 * nv :]) - f(
                zm[:nv], zm[nv : 2 * nv], zm[2 * nv :]
            )
            fd /= 2 * eps
            errs.append(np.abs(fd - lin_rate).max())
        scale = np.abs(lin_rate).max()
        assert errs[1] < errs[0] / 50.0  # O(eps^2): ratio ~100 (measured 99.5-100.5)
        assert errs[1] < 1e-6 * scale  # measured <= 1e-8 of the rates


def test_rigid_body_under_dual_pd_has_the_mass_spring_damper_poles(rng):
    """Single rigid body (CoM at its origin, principal axes = body axes) held at a random
    pose by the dual PD law: the closed-loop poles are the roots of
    m s^2 + kd_trans s + kp_trans/2 and J_i s^2 + kd_rot s + kp_rot/2 per axis (the gains
    act on 1/2 theta n and 1/2 r, docs/control.md)."""
    m, J = 27.0, np.array([0.4, 0.5, 0.6])
    model = Model.build([Body("body", None, Joint(JointType.FREE), m, np.zeros(3), np.diag(J))])
    gains = PDGains(
        kp_rot=[2.0, 3.0, 5.0],
        kd_rot=[0.3, 0.2, 0.5],
        kp_trans=[100.0, 150.0, 60.0],
        kd_trans=[5.0, 9.0, 3.0],
    )
    pose = model.random_configuration(rng)
    pd = DualPD(gains)
    ref = PoseReference(pose, np.zeros(6), np.zeros(6))

    def k(t, q, v):
        return pd(t, State(q, v), ref).generalized_force

    lin = linearize(model, pose, controller=k, inputs=[])
    expected = []
    for mass, kp, kd in [(J[i], gains.kp_rot[i], gains.kd_rot[i]) for i in range(3)] + [
        (m, gains.kp_trans[i], gains.kd_trans[i]) for i in range(3)
    ]:
        expected += list(np.roots([mass, kd, kp / 2.0]))
    got = np.sort_complex(lin.poles())
    expected = np.sort_complex(np.array(expected))
    assert np.abs(got - expected).max() < 1e-8
    assert np.abs(lin.xdot0).max() < 1e-14  # an equilibrium
    assert lin.B.shape == (12, 0)


@pytest.fixture(scope="module")
def held(robot):
    """Space manipulator held at a bent posture: base PD, arm computed torque."""
    q0 = robot.neutral_configuration()
    q0[8:] = np.radians([20.0, 50.0, -10.0, -70.0, 15.0, 40.0, 0.0])
    gains = PDGains(
        kp_rot=[40.0, 50.0, 60.0], kd_rot=60.0, kp_trans=[600.0, 500.0, 400.0], kd_trans=500.0
    )
    base = BaseController(robot, gains)
    arm = JointComputedTorque(robot, JointGains.from_natural_frequency(20.0))
    return q0, gains, base, arm


@pytest.mark.parametrize("feedforward", [False, True])
def test_held_base_closed_loop_is_stable(robot, held, feedforward):
    q0, gains, base, arm = held
    fb = StationKeepingFeedback(base, arm, q0[:8], q0[8:], feedforward=feedforward)
    lin = linearize(robot, q0, controller=fb, inputs=[Input.external_wrench(robot)])
    assert lin.poles().real.max() < -0.1
    assert np.abs(lin.xdot0).max() < 1e-12  # held at rest: an equilibrium


def test_static_gain_of_the_held_base_is_twice_the_inverse_stiffness(robot, held):
    """A constant disturbance wrench [f, tau] on the base, PD without feedforward: at rest
    the PD wrench balances it, -(kp/2) [r; theta n] = [f; tau], whatever the arm does:
    the DC gain to [theta n, r] is 2/kp_rot (torque -> attitude) and 2/kp_trans
    (force -> position), decoupled."""
    q0, gains, base, arm = held
    fb = StationKeepingFeedback(base, arm, q0[:8], q0[8:], feedforward=False)
    lin = linearize(
        robot,
        q0,
        controller=fb,
        inputs=[Input.external_wrench(robot)],
        outputs=[Output.base_pose_error(), Output.frame_position(robot, "ee")],
    )
    G = lin.dc_gain()
    expected = np.zeros((6, 6))
    expected[:3, 3:] = np.diag(2.0 / gains.kp_rot)
    expected[3:, :3] = np.diag(2.0 / gains.kp_trans)
    assert np.abs(G[:6] - expected).max() < 1e-9
    sub = lin.select(inputs=["d_fx"], outputs=["pos_x", "att_y"])
    assert sub.dc_gain() == pytest.approx(G[[3, 1]][:, [0]], abs=1e-12)
    H = lin.frequency_response([0.0, 1e4])
    assert np.abs(H[:, :, 0].real - G).max() < 1e-9
    assert np.abs(H[:6, :, 1]).max() < 1e-6  # high frequency: inertia only, ~1/(M w^2)


def test_output_rows_against_pinocchio_jacobians(robot, rng):
    """C of the end-effector position = Pinocchio's LOCAL_WORLD_ALIGNED frame Jacobian
    (same chart); base pose error about its own reference: C = [I 0]; accelerations as
    outputs: D = M^-1."""
    q, v = _random_state(robot, rng)
    lin = linearize(
        robot,
        q,
        v,
        outputs=[
            Output.frame_position(robot, "ee"),
            Output.base_pose_error(),
            Output.acceleration(robot),
            Output.state(),
        ],
    )
    pm = to_pinocchio(robot)
    pd = pm.createData()
    qp = q_to_pin(robot, q)
    fid = pm.getFrameId("ee")
    Jp = pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL_WORLD_ALIGNED)[:3]
    J = np.empty_like(Jp)
    for i in range(robot.nv):
        J[:, i] = Jp @ v_to_pin(robot, np.eye(robot.nv)[i])
    nv = robot.nv
    assert np.abs(lin.C[:3, :nv] - J).max() < 1e-10
    assert np.abs(lin.C[:3, nv:]).max() == 0.0
    assert np.abs(lin.C[3:9] - np.eye(6, 2 * nv)).max() < 1e-10
    Minv = pin.computeMinverse(pm, pd, qp)
    Minv = np.triu(Minv) + np.triu(Minv, 1).T
    assert np.abs(lin.D[9 : 9 + nv] - _ours(robot, Minv)).max() < 1e-10 * np.abs(Minv).max()
    assert np.array_equal(lin.C[9 + nv :], np.eye(2 * nv))
    assert np.array_equal(lin.D[9 + nv :], np.zeros((2 * nv, nv)))
    assert lin.output_names[:3] == ("ee_x", "ee_y", "ee_z")
    assert lin.output_names[9 + nv :] == lin.state_names


def test_station_keeping_plant_with_vscmg_cluster(rng):
    """nv = 21 plant (base + arm + 4 VSCMGs, wheels spinning): a non-equilibrium point
    (xdot0 = wheel speeds in the wheel-angle rows); the wheel angles do not enter the
    dynamics (axisymmetric wheels), so their A columns vanish."""
    from dqspace.scenarios import load_scenario
    from dqspace.scenarios.build.system import build_system

    sy = build_system(load_scenario("station-keeping").config)
    p = sy.plant
    lin = linearize(p, sy.q0, sy.v0, inputs=[Input.base_wrench(p)])
    assert lin.A.shape == (42, 42) and lin.B.shape == (42, 6)
    wheels = [i for i, n in enumerate(lin.state_names) if n.endswith("_wheel_q")]
    assert len(wheels) == 4
    assert np.allclose(lin.xdot0[wheels], sy.v0[wheels], rtol=1e-15)
    assert np.abs(lin.xdot0[wheels]).min() > 300.0
    assert np.abs(lin.A[:, wheels]).max() < 1e-8


def test_statespace_conversion_keeps_matrices_and_names(robot, rng):
    q, v = _random_state(robot, rng)
    lin = linearize(
        robot,
        q,
        v,
        inputs=[Input.base_wrench(robot), Input.joint_torques(robot)],
        outputs=[Output.base_pose_error(), Output.base_twist(robot)],
    )
    ss = lin.to_statespace()
    for name in "ABCD":
        assert np.array_equal(np.asarray(getattr(ss, name)), getattr(lin, name))
    assert tuple(ss.input_labels) == lin.input_names
    assert tuple(ss.output_labels) == lin.output_names
    assert tuple(ss.state_labels) == lin.state_names
    assert type(ss).__module__.startswith("control.")


def test_python_control_missing_names_the_extra(monkeypatch):
    monkeypatch.delitem(sys.modules, "control", raising=False)
    monkeypatch.setattr(pycontrol_module, "_find_spec", lambda name, path: None)
    with pytest.raises(ImportError, match=r"pip install 'dqspace\[control\]'"):
        python_control()


def test_python_control_shadowed_by_the_repository_folder(monkeypatch):
    monkeypatch.setitem(sys.modules, "control", types.ModuleType("control"))
    with pytest.raises(ImportError, match="is not python-control"):
        python_control()


def test_richardson_and_central_agree(robot, rng):
    q, v = _random_state(robot, rng)
    a = linearize(robot, q, v)
    b = linearize(robot, q, v, method="central")
    assert np.abs(a.A - b.A).max() < 1e-7 * np.abs(a.A).max()
    assert np.abs(a.B - b.B).max() < 1e-7 * np.abs(a.B).max()


# ------------------------------------------------------------------ bad input


def _k_wrong_shape(t, q, v):
    return np.zeros(3)


def _bad_output():
    return Output(["y"], lambda t, q, v, a: np.zeros(2))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(method="forward"), "method must be"),
        (dict(step=0.0), r"step must lie in \(0, 0.1\]"),
        (dict(step=0.5), r"step must lie in \(0, 0.1\]"),
        (dict(step=np.nan), r"step must lie in \(0, 0.1\]"),
        (dict(v=np.zeros(5)), r"v must have shape \(13,\)"),
        (dict(v=np.full(13, np.inf)), r"v\[0\] is not finite"),
        (dict(u0=np.zeros(2)), r"u0 must have shape \(13,\)"),
        (dict(t=np.nan), "t must be finite"),
        (dict(controller=3), "controller must be callable"),
        (dict(controller=_k_wrong_shape), r"controller must return tau of shape \(13,\)"),
        (dict(outputs=[_bad_output()]), r"returned shape \(2,\), expected \(1,\)"),
        (dict(inputs=["tau"]), "inputs must be Input objects"),
        (dict(outputs=["state"]), "outputs must be Output objects"),
    ],
)
def test_bad_arguments_raise(robot, kwargs, match):
    q = robot.neutral_configuration()
    with pytest.raises(ValueError, match=match):
        linearize(robot, q, **kwargs)


def test_non_unit_configuration_is_rejected(robot):
    q = robot.neutral_configuration()
    q[0] = 1.1
    with pytest.raises(ValueError, match="is not unit"):
        linearize(robot, q)


def test_duplicate_input_names_are_rejected(robot):
    q = robot.neutral_configuration()
    with pytest.raises(ValueError, match=r"input names must be unique; repeated: \['d_fx'"):
        linearize(robot, q, inputs=[Input.external_wrench(robot), Input.external_wrench(robot)])


def test_input_of_another_model_is_rejected(robot):
    other = Model.build([Body("b", None, Joint(JointType.FREE), 1.0, np.zeros(3), np.eye(3))])
    with pytest.raises(ValueError, match="generalized matrix has 6 rows, the model has nv = 13"):
        linearize(robot, robot.neutral_configuration(), inputs=[Input.base_wrench(other)])


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda m: Input.generalized_forces(m, [0, 13]), r"indices must lie in 0..12"),
        (lambda m: Input.generalized_forces(m, [1, 1]), "indices must be distinct"),
        (lambda m: Input.generalized_forces(m, [0.5]), "list of integers"),
        (lambda m: Input.matrix(m, np.zeros((5, 2)), ["a", "b"]), r"S must have shape"),
        (lambda m: Input.matrix(m, np.zeros((13, 2)), ["a"]), "names has 1 entries"),
        (lambda m: Input(["a"], generalized=np.zeros((13, 2))), r"one column per name"),
        (lambda m: Input(["a"]), "needs a generalized-force or an external-wrench matrix"),
        (lambda m: Input.external_wrench(m, "nowhere"), "no frame named|no body named"),
        (lambda m: Output.frame_position(m, "nowhere"), "no frame named|no body named"),
        (lambda m: Output.base_pose_error(np.ones(8)), "not a unit dual quaternion"),
        (lambda m: Output.acceleration(m, [20]), r"indices must lie in 0..12"),
        (lambda m: Output(["pos.x"], lambda t, q, v, a: q[:1]), "must not contain '.'"),
    ],
)
def test_bad_channel_definitions_raise(robot, build, match):
    with pytest.raises(ValueError, match=match):
        build(robot)


def test_base_channels_need_a_floating_base():
    fixed = models.iiwa()
    with pytest.raises(ValueError, match="base_wrench needs a floating-base model"):
        Input.base_wrench(fixed)
    with pytest.raises(ValueError, match="base_twist needs a floating-base model"):
        Output.base_twist(fixed)
    with pytest.raises(ValueError, match="base_pose_error needs a floating-base model"):
        linearize(fixed, fixed.neutral_configuration(), outputs=[Output.base_pose_error()])


def test_linear_model_queries_reject_bad_arguments(robot):
    lin = linearize(robot, robot.neutral_configuration(), inputs=[Input.base_wrench(robot)])
    assert isinstance(lin, LinearModel)
    with pytest.raises(ValueError, match="no input named 'd_fx'"):
        lin.select(inputs=["d_fx"])
    with pytest.raises(ValueError, match="output index 99 out of range"):
        lin.select(outputs=[99])
    with pytest.raises(ValueError, match="omega must be finite, non-negative"):
        lin.frequency_response([-1.0])
    with pytest.raises(ValueError, match="A is singular"):
        lin.dc_gain()  # open-loop floating base: rigid-body modes
    with pytest.raises(ValueError, match="singular at omega = 0 rad/s"):
        lin.frequency_response([0.0])


def test_station_keeping_feedback_rejects_bad_parts(robot, held):
    q0, gains, base, arm = held
    with pytest.raises(ValueError, match="base must be a BaseController"):
        StationKeepingFeedback(arm, arm, q0[:8], q0[8:])
    with pytest.raises(ValueError, match="arm must be a JointComputedTorque"):
        StationKeepingFeedback(base, base, q0[:8], q0[8:])
    with pytest.raises(ValueError, match=r"joint_reference must have shape \(7,\)"):
        StationKeepingFeedback(base, arm, q0[:8], q0[8:12])
    with pytest.raises(ValueError, match="base_reference is not a unit dual quaternion"):
        StationKeepingFeedback(base, arm, 2 * q0[:8], q0[8:])
    other = JointComputedTorque(models.space_manipulator(), JointGains(1.0, 1.0))
    with pytest.raises(ValueError, match="must act on the same model"):
        StationKeepingFeedback(base, other, q0[:8], q0[8:])


def test_the_linear_model_lives_in_its_own_module_and_is_re_exported():
    linear_model = importlib.import_module("dqspace.control.linear_model")
    linearize_module = importlib.import_module("dqspace.control.linearize")
    assert LinearModel is linear_model.LinearModel is linearize_module.LinearModel
    assert "LinearModel" in linear_model.__all__
