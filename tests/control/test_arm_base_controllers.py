"""Arm (IK + computed torque) and base (PD + arm-reaction feedforward, P47) controllers.

References: forward dynamics (CRBA + Cholesky, a different algorithm from the
recursive inverse dynamics the controllers use), the analytic solution of the
closed-loop joint error ``e'' + kd e' + kp e = 0``, finite differences of the
forward kinematics, and physical golden values.
"""

import numpy as np
import pytest

from dqspace.control import (
    IIWA_JOINT_LIMITS,
    IIWA_LEMNISCATE_SEED,
    ArmController,
    BaseController,
    ConstantPose,
    JointComputedTorque,
    JointGains,
    JointReference,
    Lemniscate,
    PDGains,
    ScrewMotion,
    State,
    pose_error,
    solve_ik,
)
from dqspace.dq import dq_from_rpy_deg, dq_identity, swap
from dqspace.multibody import (
    Body,
    Joint,
    JointType,
    Model,
    center_of_mass,
    forward_dynamics,
    frame_pose,
    frame_twist,
    models,
    simulate_rk4,
)


@pytest.fixture(scope="module")
def robot():
    return models.space_manipulator()


def _random_state(model, rng):
    q = model.random_configuration(rng)
    v = rng.normal(size=model.nv)
    return State(q, v)


def test_feedforward_keeps_the_base_still(robot, rng):
    """Feedforward wrench on the base + the arm torques for the planned accelerations:
    forward dynamics gives zero base acceleration and exactly the planned joint ones;
    the opposite sign does not."""
    base = BaseController(robot, PDGains(1.0, 1.0, 1.0, 1.0))
    law = JointComputedTorque(robot, JointGains(0.0, 0.0))
    for _ in range(10):
        s = _random_state(robot, rng)
        arm_acc = rng.normal(size=7)
        ff = base.feedforward(s, arm_acc)
        tau_arm, a_b = law.torque(s, arm_acc)
        assert not a_b.any()
        a = forward_dynamics(robot, s.q, s.v, np.concatenate([swap(ff), tau_arm]))
        np.testing.assert_allclose(a[:6], 0.0, atol=1e-10)
        np.testing.assert_allclose(a[6:], arm_acc, atol=1e-10)
        a_wrong = forward_dynamics(robot, s.q, s.v, np.concatenate([-swap(ff), tau_arm]))
        assert np.abs(a_wrong[:6]).max() > 1e-3


def test_feedforward_golden_joint_1_spin(robot):
    """At rest, spinning joint 1 (axis = base z through the base origin) by alpha > 0: the
    base must push with the rate of the arm's linear momentum, alpha z x (m r_com), and
    twist about z with joint 1's torque (the arm's reaction is the opposite)."""
    base = BaseController(robot, PDGains(1.0, 1.0, 1.0, 1.0))
    law = JointComputedTorque(robot, JointGains(0.0, 0.0))
    q = robot.neutral_configuration()
    q[8:] = np.radians([0.0, 60.0, 0.0, -60.0, 0.0, 30.0, 0.0])
    s = State(q, np.zeros(robot.nv))
    alpha = 2.0
    ff = base.feedforward(s, [alpha, 0, 0, 0, 0, 0, 0])
    tau_arm, _ = law.torque(s, [alpha, 0, 0, 0, 0, 0, 0])
    m_r = robot.total_mass * center_of_mass(robot, q)  # the base's CoM is at its origin
    np.testing.assert_allclose(ff[:3], alpha * np.cross([0.0, 0.0, 1.0], m_r), atol=1e-12)
    assert tau_arm[0] > 0.0
    assert ff[5] == pytest.approx(tau_arm[0], rel=1e-12)


def test_base_command_contract(robot, rng):
    gains = PDGains(kp_rot=40.0, kp_trans=300.0, kd_rot=20.0, kd_trans=150.0)
    base = BaseController(robot, gains)
    s = _random_state(robot, rng)
    ref = ConstantPose(dq_identity())(0.0)
    arm_acc = rng.normal(size=7)
    cmd = base(0.0, s, ref, arm_acc=arm_acc)
    np.testing.assert_allclose(cmd.wrench, cmd.feedback + cmd.feedforward, atol=1e-15)
    np.testing.assert_allclose(cmd.feedforward, base.feedforward(s, arm_acc), atol=1e-15)
    np.testing.assert_array_equal(cmd.force, cmd.wrench[:3])
    np.testing.assert_array_equal(cmd.torque, cmd.wrench[3:])
    np.testing.assert_array_equal(cmd.generalized_force, np.r_[cmd.torque, cmd.force])
    e = pose_error(s.q[:8], ref.pose, s.v[:6])
    expected_tau = -(40.0 * e.log[:3] + 20.0 * e.twist[:3])
    expected_f = -(300.0 * e.log[3:] + 150.0 * e.twist[3:])
    np.testing.assert_allclose(cmd.feedback, np.r_[expected_f, expected_tau], atol=1e-12)
    assert not base(0.0, s, ref).feedforward.any()  # no arm_acc: pure PD


def test_joint_computed_torque_on_free_floating_base(robot, rng):
    """Free-floating base (zero base force, told to the law): each joint error follows
    e(t) = (e0 + (de0 + w e0) t) exp(-w t) (critically damped, w = 8 rad/s)."""
    w = 8.0
    law = JointComputedTorque(robot, JointGains.from_natural_frequency(w))
    amp = np.radians([20.0, 15.0, 25.0, 20.0, 30.0, 25.0, 40.0])
    freq = np.array([1.0, 1.3, 0.7, 1.1, 1.7, 0.9, 2.0])
    mid = np.radians([0.0, 40.0, 0.0, -60.0, 0.0, 50.0, 0.0])

    def joint_ref(t):
        return JointReference(
            mid + amp * np.sin(freq * t),
            amp * freq * np.cos(freq * t),
            -amp * freq**2 * np.sin(freq * t),
        )

    e0 = np.radians([3.0, -2.0, 4.0, -3.0, 2.0, -4.0, 5.0])
    q0 = robot.neutral_configuration()
    q0[8:] = joint_ref(0.0).q - e0
    v0 = np.zeros(robot.nv)
    v0[6:] = joint_ref(0.0).v  # zero initial rate error

    def controller(t, q, v):
        cmd = law(t, State(q, v), joint_ref(t), base_force=np.zeros(6))
        return np.concatenate([np.zeros(6), cmd.tau])

    dt = 1e-3
    traj = simulate_rk4(robot, q0, v0, dt=dt, n_steps=2500, controller=controller, record_every=10)
    err = np.array([joint_ref(t).q for t in traj.t]) - traj.q[:, 8:]
    analytic = (e0 + w * e0 * traj.t[:, None]) * np.exp(-w * traj.t[:, None])
    # the deviation is the zero-order hold, first order in dt (1.6e-4 rad at 1 ms, 7.8e-5 at 0.5 ms)
    assert np.abs(err - analytic).max() < 2e-3 * np.abs(e0).max()
    assert np.abs(err[-1]).max() < 1e-4
    assert np.abs(traj.v[-1, :6]).max() > 1e-2  # the base did float (the test is not trivial)


def test_joint_reference_from_ik_is_consistent(robot):
    """theta_r reaches the pose; moving along (theta_r', theta_r'') reproduces the
    reference twist and acceleration (finite differences of the forward kinematics)."""
    lem = Lemniscate()
    arm = ArmController(
        robot, JointGains(1.0, 1.0), seed=IIWA_LEMNISCATE_SEED, limits=IIWA_JOINT_LIMITS
    )
    h = 1e-5
    for t in (0.0, 2.0, 5.5):
        ref = lem(t)
        jref, ik = arm.joint_reference(ref)
        assert ik.success
        q = robot.neutral_configuration()

        def at(tau, jref=jref, q=q):
            qq = q.copy()
            qq[8:] = jref.q + jref.v * tau + 0.5 * jref.a * tau**2
            vv = np.zeros(robot.nv)
            vv[6:] = jref.v + jref.a * tau
            return qq, vv

        qq, vv = at(0.0)
        np.testing.assert_allclose(frame_pose(robot, qq, "ee"), ref.pose, atol=1e-9)
        np.testing.assert_allclose(frame_twist(robot, qq, vv, "ee"), ref.twist, atol=1e-10)
        twist_p = frame_twist(robot, *at(h), "ee")
        twist_m = frame_twist(robot, *at(-h), "ee")
        np.testing.assert_allclose((twist_p - twist_m) / (2 * h), ref.acc, atol=1e-7)


def test_joint_reference_holds_a_joint_on_its_limit(robot):
    """Around t = 8 s the lemniscate drives joint 2 onto its 120 deg limit: its rate
    reference is then zero (not pushing out) and the other six joints still produce the
    reference twist."""
    lem = Lemniscate()
    arm = ArmController(
        robot, JointGains(1.0, 1.0), seed=IIWA_LEMNISCATE_SEED, limits=IIWA_JOINT_LIMITS
    )
    for t in np.arange(0.0, 8.0, 0.05):
        arm.joint_reference(lem(t))
    jref, ik = arm.joint_reference(lem(8.0))
    assert ik.success
    assert jref.q[1] == pytest.approx(IIWA_JOINT_LIMITS[1, 1], abs=arm.limit_margin)
    assert jref.v[1] == 0.0 and jref.a[1] == 0.0
    q = robot.neutral_configuration()
    q[8:] = jref.q
    v = np.zeros(robot.nv)
    v[6:] = jref.v
    np.testing.assert_allclose(frame_twist(robot, q, v, "ee"), lem(8.0).twist, atol=1e-10)


def _lemniscate_run(robot, feedforward, seconds=1.0):
    lem = Lemniscate()
    ik = solve_ik(robot, lem(0.0).pose, IIWA_LEMNISCATE_SEED, limits=IIWA_JOINT_LIMITS)
    q0 = robot.neutral_configuration()
    q0[8:] = ik.joints
    base = BaseController(
        robot, PDGains.from_natural_frequency(robot.total_mass, [2.0, 2.0, 2.0], omega_n=2.0)
    )
    arm = ArmController(
        robot,
        JointGains.from_natural_frequency(10.0),
        seed=ik.joints,
        limits=IIWA_JOINT_LIMITS,
    )
    hold = ConstantPose(dq_identity())
    log = []

    def controller(t, q, v):
        s = State(q, v)
        a = arm(t, s, lem(t))
        b = base(t, s, hold(t), arm_acc=a.acc if feedforward else None)
        tau, _ = arm.torque(s, a.acc, base_force=b.generalized_force)
        log.append((b.error.angle, b.error.distance, a.task_error.distance, a.ik.success))
        return np.concatenate([b.generalized_force, tau])

    simulate_rk4(
        robot,
        q0,
        np.zeros(robot.nv),
        dt=1e-3,
        n_steps=int(seconds / 1e-3),
        controller=controller,
        record_every=100,
    )
    return np.array(log)


def test_lemniscate_closed_loop_base_holds_with_feedforward(robot):
    """Short closed loop of the paper's example: with the feedforward the base stays within
    micrometres while the arm moves; PD alone lets it drift by millimetres."""
    with_ff = _lemniscate_run(robot, True)
    without = _lemniscate_run(robot, False)
    assert with_ff[:, 3].all()  # IK converged at every step
    assert with_ff[:, 1].max() < 1e-5 and with_ff[:, 0].max() < 1e-4
    assert without[:, 1].max() > 100 * with_ff[:, 1].max()
    # the end-effector catches the moving reference (it starts at rest)
    assert with_ff[-1, 2] < 1e-3 < with_ff[:, 2].max()


def test_rigid_body_reference_acceleration_feedforward():
    """With no arm, the feedforward is the rigid body's own M a_d + w x M w: a screw motion is
    tracked to within the zero-order-hold error (halving with dt), the PD alone lags by 0.1."""
    body = Model.build(
        [
            Body(
                "b",
                None,
                Joint(JointType.FREE),
                27.0,
                [0.05, -0.03, 0.02],
                np.diag([0.4, 0.5, 0.6]),
            )
        ]
    )
    start = dq_identity()
    motion = ScrewMotion(
        start, dq_from_rpy_deg([40.0, -30.0, 60.0], [0.5, -0.3, 0.2]), duration=3.0
    )
    base = BaseController(body, PDGains.from_natural_frequency(27.0, [0.4, 0.5, 0.6], 2.0))

    def worst_error(ff, dt):
        def controller(t, q, v):
            cmd = base(t, State(q, v), motion(t), arm_acc=np.zeros(0) if ff else None)
            return cmd.generalized_force

        n = round(3.0 / dt)
        traj = simulate_rk4(body, start, np.zeros(6), dt=dt, n_steps=n, controller=controller)
        e = pose_error(traj.q, np.array([motion(t).pose for t in traj.t]))
        return max(e.angle.max(), e.distance.max())

    coarse, fine = worst_error(True, 2e-3), worst_error(True, 1e-3)
    assert fine < 2e-4
    assert coarse / fine == pytest.approx(2.0, rel=0.05)  # first order in dt: the hold
    assert worst_error(False, 2e-3) > 0.1


def test_base_controller_needs_a_floating_model():
    with pytest.raises(ValueError, match="floating-base model"):
        BaseController(models.iiwa(), PDGains(1.0, 1.0, 1.0, 1.0))


def test_arm_acc_shape_is_checked(robot, rng):
    base = BaseController(robot, PDGains(1.0, 1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match=r"arm_acc must have shape \(7,\)"):
        base(0.0, _random_state(robot, rng), ConstantPose(dq_identity())(0.0), arm_acc=np.zeros(6))


def test_negative_joint_gain_is_rejected():
    with pytest.raises(ValueError, match="kd must be non-negative"):
        JointGains(kp=1.0, kd=[1.0, -1.0])


def test_joint_gain_length_is_checked(robot):
    with pytest.raises(ValueError, match="kp has 3 entries but the arm has 7 joints"):
        JointComputedTorque(robot, JointGains(kp=[1.0, 2.0, 3.0], kd=1.0))


def test_arm_seed_shape_is_checked(robot):
    with pytest.raises(ValueError, match=r"seed must be a finite \(7,\) vector"):
        ArmController(robot, JointGains(1.0, 1.0), seed=np.zeros(8))


def test_base_force_on_a_fixed_base_is_rejected():
    arm = models.iiwa()
    law = JointComputedTorque(arm, JointGains(1.0, 1.0))
    with pytest.raises(ValueError, match="base_force is only meaningful"):
        law.torque(State(np.zeros(7), np.zeros(7)), np.zeros(7), base_force=np.zeros(6))


def test_state_shape_is_checked(robot):
    law = JointComputedTorque(robot, JointGains(1.0, 1.0))
    with pytest.raises(ValueError, match=r"state must have q \(15,\) and v \(13,\)"):
        law.torque(State(np.zeros(7), np.zeros(7)), np.zeros(7))
