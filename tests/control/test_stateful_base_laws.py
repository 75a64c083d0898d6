"""The base laws with states of their own: the dual PID (integral action, clamped) and the
dual PD with a disturbance observer (dqspace.control.base_integral,
dqspace.control.disturbance_observer), and their linearisation.

References: the laws' definitions written out in numpy (one tick of the integral, the
clamp), the system's momentum by :func:`dqspace.multibody.momentum` (another kernel), the
analytic poles of a rigid body (``J s^3 + kd s^2 + kp/2 s + ki/2`` with the integral; the
PD's poles and ``-K`` with the observer, the separation principle), the static balance of a
held base, and a nonlinear closed-loop simulation of the discrete laws
(:func:`~dqspace.multibody.simulate_rk4`) against the linear models' step responses.
"""

import numpy as np
import pytest

from dqspace.control import (
    BaseController,
    BaseDOBController,
    BaseFeedback,
    BasePIDController,
    IntegralGains,
    JointComputedTorque,
    JointGains,
    Output,
    PDGains,
    PoseReference,
    State,
    StationKeepingFeedback,
    disturbance_response,
    linearize,
    step_response,
)
from dqspace.dq import (
    dq_conj,
    dq_from_rpy_deg,
    dq_log,
    dq_mul,
    rotation_matrix_from_dq,
    swap,
    translation_from_dq,
)
from dqspace.multibody import Body, Joint, JointType, Model, external_wrenches, models, simulate_rk4
from dqspace.multibody import momentum as system_momentum

T = 0.01  # control period [s]
GAINS = PDGains(
    kp_rot=[40.0, 50.0, 60.0], kd_rot=60.0, kp_trans=[600.0, 500.0, 400.0], kd_trans=500.0
)
INTEGRAL = IntegralGains(ki_rot=[4.0, 5.0, 6.0], ki_trans=[120.0, 100.0, 80.0], limit_force=2.0,
                         limit_torque=0.2)  # fmt: skip
#: a disturbance wrench [f, tau] on the base [N, N m]
D = np.array([0.05, -0.03, 0.02, 0.004, -0.002, 0.003])


@pytest.fixture(scope="module")
def robot():
    return models.space_manipulator()


@pytest.fixture(scope="module")
def held(robot):
    """The space manipulator at a bent posture, its base reference the initial pose."""
    q0 = robot.neutral_configuration()
    q0[8:] = np.radians([20.0, 50.0, -10.0, -70.0, 15.0, 40.0, 0.0])
    arm = JointComputedTorque(robot, JointGains.from_natural_frequency(20.0))
    return q0, arm


def _law(name, model, bandwidth=2.0):
    if name == "pd":
        return BaseController(model, GAINS)
    if name == "pid":
        return BasePIDController(model, GAINS, INTEGRAL, period=T)
    return BaseDOBController(model, GAINS, bandwidth=bandwidth, period=T)


def _offset_state(robot, q0, rng):
    """A state near ``q0``: the base displaced and turned a little, moving."""
    q = q0.copy()
    q[:8] = dq_mul(q0[:8], dq_from_rpy_deg(rng.normal(0, 2.0, 3), rng.normal(0, 0.02, 3)))
    return State(q, 0.05 * rng.normal(size=robot.nv))


# ------------------------------------------------------------------ the PID law, one tick


def test_pid_integral_starts_at_zero_then_adds_one_period_of_error(robot, held, rng):
    q0, _ = held
    ref = PoseReference(q0[:8], np.zeros(6), np.zeros(6))
    pid, pd = _law("pid", robot), _law("pd", robot)
    s = _offset_state(robot, q0, rng)
    acc = rng.normal(size=7)
    first = pid(0.0, s, ref, arm_acc=acc)
    np.testing.assert_array_equal(first.wrench, pd(0.0, s, ref, arm_acc=acc).wrench)
    e = first.error.log  # [1/2 theta n, 1/2 r]
    expected = -T * np.r_[INTEGRAL.ki_trans * e[3:], INTEGRAL.ki_rot * e[:3]]
    np.testing.assert_allclose(pid.integral, expected, rtol=1e-15, atol=0)
    second = pid(T, s, ref, arm_acc=acc)  # the same state: the PD's wrench + the integral
    np.testing.assert_allclose(second.wrench, first.wrench + expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(second.feedback - second.wrench, -second.feedforward, atol=1e-15)


def test_the_integral_is_clamped_at_its_limit_and_leaves_it_at_once(robot, held):
    """Anti-windup: an error held for 60 s would integrate to far beyond the limits; each
    component stops at its limit (exactly) and, when the error changes sign, the integral
    moves back from the limit at the next tick."""
    q0, _ = held
    pid = _law("pid", robot)
    off = q0.copy()
    off[:8] = dq_mul(q0[:8], dq_from_rpy_deg([3.0, -2.0, 1.0], [0.05, -0.04, 0.03]))
    ref = PoseReference(q0[:8], np.zeros(6), np.zeros(6))
    s = State(off, np.zeros(robot.nv))
    for k in range(6000):
        cmd = pid(k * T, s, ref)
    limit = np.r_[INTEGRAL.limit_force, INTEGRAL.limit_torque]
    sign = -np.sign(swap(cmd.error.log))  # the integral pushes against the error
    np.testing.assert_array_equal(pid.integral, sign * limit)
    back = State(q0.copy(), np.zeros(robot.nv))  # error of the other sign
    back.q[:8] = dq_mul(q0[:8], dq_from_rpy_deg([-3.0, 2.0, -1.0], [-0.05, 0.04, -0.03]))
    pid(0.0, back, ref)
    assert np.all(np.abs(pid.integral) < limit)


def test_the_integral_is_not_reset_when_the_reference_moves_and_reset_zeroes_it(robot, held):
    q0, _ = held
    pid = _law("pid", robot)
    s = State(q0, np.zeros(robot.nv))
    a = PoseReference(dq_mul(q0[:8], dq_from_rpy_deg([1, 2, 3], [0.01, -0.02, 0.03])),
                      np.zeros(6), np.zeros(6))  # fmt: skip
    b = PoseReference(dq_mul(q0[:8], dq_from_rpy_deg([0, -2, 0], [0, 0.02, 0])), np.zeros(6),
                      np.zeros(6))  # fmt: skip
    for k in range(50):
        pid(k * T, s, a)
    before = pid.integral
    cmd = pid(50 * T, s, b)  # the reference jumps: the integral carries on
    e = cmd.error.log
    step = -T * np.r_[INTEGRAL.ki_trans * e[3:], INTEGRAL.ki_rot * e[:3]]
    np.testing.assert_allclose(pid.integral, before + step, rtol=1e-14)
    assert np.abs(before).min() > 0
    pid.reset()
    np.testing.assert_array_equal(pid.integral, 0.0)
    np.testing.assert_array_equal(pid(0.0, s, b).wrench, _law("pd", robot)(0.0, s, b).wrench)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda m: IntegralGains(ki_rot=-1.0, ki_trans=0, limit_force=1, limit_torque=1), "ki_rot"),
        (
            lambda m: IntegralGains(ki_rot=1, ki_trans=[1, 2], limit_force=1, limit_torque=1),
            "shape",
        ),
        (lambda m: IntegralGains(ki_rot=1, ki_trans=np.inf, limit_force=1, limit_torque=1), "fin"),
        (lambda m: BasePIDController(m, GAINS, INTEGRAL, period=0.0), "period"),
        (lambda m: BasePIDController(m, GAINS, GAINS, period=T), "IntegralGains"),
        (lambda m: BaseDOBController(m, GAINS, bandwidth=0.0, period=T), "positive"),
        (lambda m: BaseDOBController(m, GAINS, bandwidth=150.0, period=T), "period must be"),
        (lambda m: BaseDOBController(m, GAINS, bandwidth=[1, 2], period=T), "scalar or"),
    ],
)
def test_bad_arguments_raise(robot, make, match):
    with pytest.raises(ValueError, match=match):
        make(robot)


def test_an_infinite_limit_means_no_clamp():
    g = IntegralGains(ki_rot=1.0, ki_trans=1.0, limit_force=np.inf, limit_torque=[1, np.inf, 2])
    assert np.isinf(g.limit_force).all() and g.limit_torque[1] == np.inf


# ------------------------------------------------------------------ the observer


def test_the_observed_momentum_is_the_system_momentum_in_base_axes(robot, rng):
    """``swap((M v)[:6])`` (the inverse dynamics at zero velocity) against the momentum of
    :func:`dqspace.multibody.momentum` (the bodies' momenta summed), carried into base axes
    with the angular part about the base origin."""
    dob = _law("dob", robot)
    for _ in range(5):
        q = robot.random_configuration(rng, translation=0.5)
        v = rng.normal(size=robot.nv)
        R = rotation_matrix_from_dq(q[:8])
        ref = system_momentum(robot, q, v, point=translation_from_dq(q[:8]))
        h = dob.momentum(State(q, v))
        np.testing.assert_allclose(h[:3], R.T @ ref.linear, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(h[3:], R.T @ ref.angular, rtol=1e-12, atol=1e-12)


def test_law_rates_are_the_kernels_tick_without_advancing(robot, held, rng):
    """``law_rates`` at the controller's state gives the command a call gives (bit for bit)
    and the rate whose one period is the call's increment; the controller's state stays."""
    q0, _ = held
    ref = PoseReference(q0[:8], np.zeros(6), np.zeros(6))
    for name in ("pid", "dob"):
        law = _law(name, robot)
        for k in range(3):
            law(k * T, _offset_state(robot, q0, rng), ref)
        s = _offset_state(robot, q0, rng)
        z = law.integral if name == "pid" else law.kernel_state().integral.copy()
        cmd, z_dot = law.law_rates(0.0, s, ref, z)
        z_again = law.integral if name == "pid" else law.kernel_state().integral
        np.testing.assert_array_equal(z_again, z)  # nothing advanced
        now = law(0.0, s, ref)
        np.testing.assert_array_equal(cmd.wrench, now.wrench)
        z_next = law.integral if name == "pid" else law.kernel_state().integral
        np.testing.assert_allclose(z_next - z, T * z_dot, rtol=1e-12, atol=1e-15)


def test_the_observer_estimates_a_constant_disturbance_and_the_offset_vanishes(body, rng):
    """The discrete laws in a nonlinear closed loop (RK4, 2 ms; the law every 10 ms, held),
    a free rigid body under a constant wrench ``D`` (base axes): the PD's offset is
    ``2 D / kp`` (``[theta n, r]``, to 1e-5 relative after 40 s: its slowest pole, -0.33
    1/s, leaves 1.6e-6); the observer's estimate
    reaches ``D`` (to 1e-6 of it, bandwidth 2 rad/s) and the offset vanishes (< 1e-6 of
    the PD's); the integral leaves < 1 % of the PD's offset after 40 s (its slowest poles
    are at -0.17 1/s)."""
    pose = body.random_configuration(rng)
    q0 = pose.copy()
    errs = {}
    for name in ("pd", "pid", "dob"):
        base = _law(name, body)
        traj = _simulate(body, q0, BaseFeedback(base, pose), D, 40.0, record=40.0, dt=2e-3)
        errs[name] = _pose_error(q0, traj.q[-1])
        if name == "dob":
            est = base.estimate
    expected_pd = 2.0 * np.r_[D[3:] / GAINS.kp_rot, D[:3] / GAINS.kp_trans]  # [theta n, r]
    np.testing.assert_allclose(errs["pd"], expected_pd, rtol=1e-5)
    np.testing.assert_allclose(est, D, rtol=0, atol=1e-6 * np.abs(D).max())
    assert np.abs(errs["dob"]).max() < 1e-6 * np.abs(expected_pd).max()
    assert np.abs(errs["pid"]).max() < 1e-2 * np.abs(expected_pd).max()


def _simulate(model, q0, feedback, d, duration, record=0.5, dt=1e-3):
    f_ext = external_wrenches(model, q0, {0: d})
    return simulate_rk4(
        model, q0, np.zeros(model.nv), dt=dt, n_steps=int(round(duration / dt)),
        inputs=lambda t: (np.zeros(model.nv), f_ext), controller=feedback,
        control_every=int(round(T / dt)), record_every=int(round(record / dt)),
    )  # fmt: skip


def _pose_error(q0, q):
    """``2 log(q0* o q)`` of the base, short way: ``[theta n, r]`` (Output.base_pose_error)."""
    e = dq_mul(dq_conj(q0[:8]), q[:8])
    return 2.0 * dq_log(e if e[0] >= 0 else -e)


# ------------------------------------------------------------------ linearisation


@pytest.fixture(scope="module")
def body():
    m, J = 27.0, np.array([0.4, 0.5, 0.6])
    return Model.build([Body("body", None, Joint(JointType.FREE), m, np.zeros(3), np.diag(J))])


def _axes():
    """(inertia, kp, kd, ki) per axis: rotation x, y, z then translation x, y, z."""
    J, m = (0.4, 0.5, 0.6), 27.0
    g, i = GAINS, INTEGRAL
    rot = [(J[k], g.kp_rot[k], g.kd_rot[k], i.ki_rot[k]) for k in range(3)]
    return rot + [(m, g.kp_trans[k], g.kd_trans[k], i.ki_trans[k]) for k in range(3)]


def test_rigid_body_poles_with_the_integral_and_with_the_observer(body, rng):
    """Free rigid body held at a random pose: with the integral the 18 poles are the roots
    of ``J s^3 + kd s^2 + kp/2 s + ki/2`` per axis (the integral acts on the halved error
    like kp); with the observer they are the PD's (``J s^2 + kd s + kp/2``) and ``-K`` of
    each wrench component (the separation principle)."""
    pose = body.random_configuration(rng)
    K = np.array([0.5, 1.0, 1.5, 2.0, 2.5, 3.0])
    pid = linearize(body, pose, controller=BaseFeedback(_law("pid", body), pose), inputs=[])
    dob = BaseDOBController(body, GAINS, bandwidth=K, period=T)
    obs = linearize(body, pose, controller=BaseFeedback(dob, pose), inputs=[])
    cubic = np.concatenate([np.roots([J, kd, kp / 2, ki / 2]) for J, kp, kd, ki in _axes()])
    quad = np.concatenate([np.roots([J, kd, kp / 2]) for J, kp, kd, _ in _axes()])
    assert pid.nx == obs.nx == 18
    assert pid.state_names[12:] == ("wi_fx", "wi_fy", "wi_fz", "wi_tx", "wi_ty", "wi_tz")
    assert np.abs(np.sort_complex(pid.poles()) - np.sort_complex(cubic)).max() < 1e-8
    want = np.sort_complex(np.r_[quad, -K])
    assert np.abs(np.sort_complex(obs.poles()) - want).max() < 1e-8
    assert np.abs(pid.xdot0).max() < 1e-12 and np.abs(obs.xdot0).max() < 1e-12  # at rest


def test_the_controllers_command_as_an_output(body, rng):
    """``Output.control``: at the reference pose at rest, the PD's force depends on the
    position and velocity through ``-kp/2`` and ``-kd`` (base axes), nothing else."""
    pose = body.random_configuration(rng)
    lin = linearize(body, pose, controller=BaseFeedback(_law("pd", body), pose), inputs=[],
                    outputs=[Output.control(body, [3, 4, 5])])  # fmt: skip
    assert lin.output_names == ("cmd_joint_body_fx", "cmd_joint_body_fy", "cmd_joint_body_fz")
    expected = np.zeros((3, 12))
    expected[:, 3:6] = -np.diag(GAINS.kp_trans) / 2
    expected[:, 9:12] = -np.diag(GAINS.kd_trans)
    np.testing.assert_allclose(lin.C, expected, atol=1e-9)


@pytest.mark.parametrize("feedforward", [False, True])
def test_static_gains_of_the_held_base(robot, held, feedforward):
    """From a disturbance wrench on the base to the base pose error: the PD's static gain
    is ``2/kp`` (without feedforward, a decoupled diagonal); the integral puts a zero at
    s = 0 (static gain 0 and |G| proportional to w at low frequency, with or without the
    feedforward); the observer's is 0 too, with or without the feedforward (the arm's
    torques assume the base accelerates under the wrench less the observer's compensation:
    no phantom reaction, docs/control.md)."""
    q0, arm = held
    lins = {}
    for name in ("pd", "pid", "dob"):
        fb = StationKeepingFeedback(_law(name, robot), arm, q0[:8], q0[8:],
                                    feedforward=feedforward)  # fmt: skip
        lins[name] = disturbance_response(robot, q0, controller=fb)
        assert lins[name].poles().real.max() < -0.05
    if not feedforward:
        expected = np.zeros((6, 6))
        expected[:3, 3:] = np.diag(2.0 / GAINS.kp_rot)
        expected[3:, :3] = np.diag(2.0 / GAINS.kp_trans)
        assert np.abs(lins["pd"].dc_gain() - expected).max() < 1e-9
    assert np.abs(lins["dob"].dc_gain()).max() < 1e-9
    assert np.abs(lins["pid"].dc_gain()).max() < 1e-9
    G = np.abs(lins["pid"].frequency_response([1e-4, 1e-3]))
    big = G[:, :, 1] > 1e-3 * G[:, :, 1].max()
    np.testing.assert_allclose(G[:, :, 1][big] / G[:, :, 0][big], 10.0, rtol=1e-3)


@pytest.mark.parametrize("name", ["pd", "pid", "dob"])
def test_linear_step_response_matches_the_nonlinear_closed_loop(robot, held, name):
    """A step of the disturbance wrench ``D`` on the held base (feedforward on): the base
    pose error of the linear closed loop (continuous law) against the nonlinear simulation
    of the discrete law (held over 10 ms) over 12 s, every 0.5 s: within 2 % of each
    component's peak (the zero-order hold's half-period delay is most of it)."""
    q0, arm = held
    fb = StationKeepingFeedback(_law(name, robot), arm, q0[:8], q0[8:], feedforward=True)
    lin = disturbance_response(robot, q0, controller=fb)
    times = np.arange(0.0, 12.0 + 1e-9, 0.5)
    y_lin = step_response(lin, D, times)
    fb = StationKeepingFeedback(_law(name, robot), arm, q0[:8], q0[8:], feedforward=True)
    traj = _simulate(robot, q0, fb, D, 12.0)
    y = np.array([_pose_error(q0, q) for q in traj.q])
    peak = np.abs(y_lin).max(axis=0)
    assert np.all(np.abs(y - y_lin).max(axis=0) < 0.02 * peak)


def test_a_base_feedback_puts_the_wrench_on_the_base_and_nothing_on_the_arm(robot, held, rng):
    q0, _ = held
    base = _law("pid", robot)
    fb = BaseFeedback(base, q0[:8])
    s = _offset_state(robot, q0, rng)
    q, v = s.q, s.v
    tau = fb(0.0, q, v)
    assert tau.shape == (robot.nv,)
    assert np.all(tau[6:] == 0.0)
    # the same law (a twin, its integral at zero like the feedback's) called directly
    twin = _law("pid", robot)
    ref = PoseReference(q0[:8], np.zeros(6), np.zeros(6))
    np.testing.assert_array_equal(tau[:6], swap(twin(0.0, State(q, v), ref).wrench))
    z = np.arange(1.0, len(fb.law_states) + 1.0) * 1e-3
    tau_z, z_dot = fb.law_rates(0.0, q, v, z)
    cmd, z_dot_direct = twin.law_rates(0.0, State(q, v), ref, z)
    np.testing.assert_array_equal(tau_z[:6], swap(cmd.wrench))
    np.testing.assert_array_equal(z_dot, z_dot_direct)
    with pytest.raises(ValueError, match="BaseController"):
        BaseFeedback(object(), q0[:8])
    with pytest.raises(ValueError, match="no states"):
        BaseFeedback(_law("pd", robot), q0[:8]).law_rates(0.0, q, v, z)
