"""Reaction-null-space arm motion (issue 27): ``control/reactionless.py``.

* open loop, against Pinocchio: at random configurations of the iiwa space manipulator
  and of the UR5 (URDF) on a floating base, joint rates in the reaction null space with
  the base twist from momentum conservation (zero momentum) have zero centroidal momentum
  (``pinocchio.ccrba``) and a base angular velocity of zero, to 1e-9; the base twist
  Pinocchio's own centroidal momentum matrix gives for those joint rates has zero angular
  velocity too; the null space has dimension n - 3; the reaction map ``-R theta'`` is the
  base's angular velocity Pinocchio gives for any joint rates (so the test can fail);
* closed joint loop, no base control (the base free, no momentum device): dqspace's own
  integrator; the reactionless law moves the end-effector along a straight line while the
  base's attitude stays within a tiny bound, the IK law's motion turns it measurably;
* the task error of the reactionless motion along a compatible path (position task), and
  a pose task reported as asking more than the null space gives;
* the held-base map (angular momentum about the base's origin) and the acceleration
  feedforward (the base's angular acceleration zero), against Pinocchio;
* the compiled law tick against the Python composition of the same controllers;
* the law's refusals (a fixed base, a bad task, a bad gain).
"""

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from dqspace.control import (
    ArmController,
    JointGains,
    PoseReference,
    ReactionlessArmController,
    State,
    reaction_map,
    reaction_null_space,
)
from dqspace.control.ik import IIWA_LEMNISCATE_SEED, IKStatus
from dqspace.dq import (
    dq_from_quat_translation,
    quat_from_dq,
    rotation_matrix_from_dq,
    translation_from_dq,
)
from dqspace.multibody import frame_pose, mass_matrix, model_from_urdf, models, simulate_rk4
from support.pin_bridge import q_to_pin, to_pinocchio, v_to_pin

UR5_URDF = Path(__file__).resolve().parents[2] / "scenarios" / "data" / "arms" / "ur5.urdf"
TOL = 1e-9


def _systems():
    return {
        "iiwa": models.space_manipulator(),
        "ur5": model_from_urdf(UR5_URDF, floating=True),
    }


def _pin_base_twist(model, pm, pd, q, qdot):
    """The base twist ``[w, v]`` (dqspace's order, base axes) at zero centroidal momentum for
    the joint rates ``qdot``, from Pinocchio's centroidal momentum matrix alone."""
    v = np.r_[np.zeros(6), qdot]
    Ag = pin.ccrba(pm, pd, q_to_pin(model, q), v_to_pin(model, v)).copy()
    vb_pin = -np.linalg.solve(Ag[:, :6], Ag[:, 6:] @ qdot)  # pin's free flyer: [v, w]
    return np.r_[vb_pin[3:], vb_pin[:3]]


@pytest.mark.parametrize("name", ["iiwa", "ur5"])
def test_null_space_joint_rates_leave_the_momentum_and_the_base_attitude_still(name):
    model = _systems()[name]
    pm = to_pinocchio(model)
    pd = pm.createData()
    n = model.nv - 6
    rng = np.random.default_rng(27)
    worst_h = worst_w = worst_map = 0.0
    for _ in range(5):
        q = model.random_configuration(rng, translation=0.3)
        N = reaction_null_space(model, q)
        assert N.shape == (n, n - 3)
        assert np.abs(N.T @ N - np.eye(n - 3)).max() < 1e-12  # orthonormal
        qdot = N @ rng.normal(0.0, 1.0, n - 3)
        # the base twist from momentum conservation with dqspace's mass matrix
        M = mass_matrix(model, q)
        v = np.r_[-np.linalg.solve(M[:6, :6], M[:6, 6:] @ qdot), qdot]
        h = pin.computeCentroidalMomentum(pm, pd, q_to_pin(model, q), v_to_pin(model, v))
        scale = np.abs(qdot).max()
        worst_h = max(worst_h, np.abs(np.r_[h.linear, h.angular]).max() / scale)
        worst_w = max(worst_w, np.abs(v[:3]).max() / scale)
        # Pinocchio's own base twist for these joint rates: no rotation either
        vb = _pin_base_twist(model, pm, pd, q, qdot)
        worst_w = max(worst_w, np.abs(vb[:3]).max() / scale)
        # any joint rates: the base turns at -R qdot, as Pinocchio says
        any_rate = rng.normal(0.0, 1.0, n)
        w_pin = _pin_base_twist(model, pm, pd, q, any_rate)[:3]
        assert np.abs(w_pin).max() > 1e-3  # a motion outside the null space turns the base
        worst_map = max(worst_map, np.abs(w_pin + reaction_map(model, q) @ any_rate).max())
    print(
        f"\n{name}: centroidal momentum {worst_h:.1e}, base angular velocity {worst_w:.1e} "
        f"(per rad/s of joint rate); reaction map against Pinocchio {worst_map:.1e} rad/s"
    )
    assert worst_h < TOL and worst_w < TOL and worst_map < TOL


# ------------------------------------------------------------ the law, base left free

SPEED = 0.03  # [m/s] of the end-effector along the line
T_END = 1.0


def _line(model, q0):
    """A straight line from the end-effector's start, at SPEED along the best-conditioned
    direction of the reactionless position task there, orientation held."""
    pose0 = frame_pose(model, q0, "ee")
    N = reaction_null_space(model, q0)
    from dqspace.multibody import frame_jacobian  # only here: the start's Jacobian

    J = frame_jacobian(model, q0, "ee")[:, 6:]
    R0 = rotation_matrix_from_dq(pose0)
    u = np.linalg.svd(R0 @ J[3:] @ N)[0][:, 0]
    vel = SPEED * u

    def ref(t):
        pose = dq_from_quat_translation(quat_from_dq(pose0), translation_from_dq(pose0) + vel * t)
        return PoseReference(pose, np.r_[np.zeros(3), R0.T @ vel], np.zeros(6))

    return ref


def _run(arm, model, q0, ref):
    status = []

    def controller(t, q, v):
        cmd = arm(t, State(q, v), ref(t), base_force=np.zeros(6))  # no base control
        status.append(cmd.ik.status)
        return np.r_[np.zeros(6), cmd.tau]

    tr = simulate_rk4(
        model, q0, np.zeros(model.nv), dt=2e-3, n_steps=int(T_END / 2e-3),
        controller=controller, control_every=5, record_every=25,
    )  # fmt: skip
    turned = max(
        2.0 * np.arccos(min(1.0, abs(quat_from_dq(q[:8]) @ quat_from_dq(q0[:8])))) for q in tr.q
    )
    end = np.r_[q0[:8], tr.q[-1, 8:]]  # the end-effector relative to the base
    miss = translation_from_dq(frame_pose(model, end, "ee")) - translation_from_dq(ref(T_END).pose)
    return turned, np.linalg.norm(miss), status


@pytest.fixture(scope="module")
def line_runs():
    model = models.space_manipulator()
    q0 = model.neutral_configuration()
    q0[8:] = IIWA_LEMNISCATE_SEED
    ref = _line(model, q0)
    gains = JointGains.from_natural_frequency(20.0)
    rl = ReactionlessArmController(model, gains, seed=q0[8:], task="position")
    ik = ArmController(model, gains, seed=q0[8:])
    return _run(rl, model, q0, ref), _run(ik, model, q0, ref)


def test_reactionless_motion_leaves_the_free_base_attitude_while_the_ik_turns_it(line_runs):
    (rl_turn, rl_miss, _), (ik_turn, ik_miss, _) = line_runs
    print(
        f"\nbase free, {SPEED * T_END * 1e3:.0f} mm line in {T_END} s: base turned "
        f"{np.degrees(rl_turn):.2e} deg (reactionless) against {np.degrees(ik_turn):.2e} "
        f"deg (IK); end-effector miss {rl_miss * 1e3:.3f} mm against {ik_miss * 1e3:.3f} mm"
    )
    assert ik_turn > np.radians(0.2)  # the plain IK's motion turns the base measurably
    assert rl_turn < 1e-4 * ik_turn  # the reactionless one ten thousand times less
    assert rl_turn < np.radians(1e-4)  # measured 6.4e-6 deg (the tracking's hold error)


def test_reactionless_position_task_is_met_where_compatible(line_runs):
    (_, rl_miss, status), _ = line_runs
    assert all(s is IKStatus.CONVERGED for s in status)  # the task rate was met every tick
    assert rl_miss < 1e-4  # [m] after 30 mm


def test_a_pose_task_asks_more_than_the_null_space_gives():
    model = models.space_manipulator()
    q0 = model.neutral_configuration()
    q0[8:] = IIWA_LEMNISCATE_SEED
    ref = _line(model, q0)(0.0)
    gains = JointGains.from_natural_frequency(20.0)
    cmd = ReactionlessArmController(model, gains, seed=q0[8:], task="pose")(
        0.0, State(q0, np.zeros(13)), ref
    )
    assert cmd.ik.status is IKStatus.STALLED  # 6 rows, 4 reactionless joint rates
    assert cmd.ik.iterations == 4  # the null space's dimension
    assert np.abs(reaction_map(model, q0) @ cmd.joint_reference.v).max() < 1e-12


def test_refusals():
    gains = JointGains.from_natural_frequency(20.0)
    with pytest.raises(ValueError, match="floating base"):
        ReactionlessArmController(models.iiwa(), gains, seed=np.zeros(7))
    m = models.space_manipulator()
    with pytest.raises(ValueError, match="task must be one of"):
        ReactionlessArmController(m, gains, seed=IIWA_LEMNISCATE_SEED, task="orientation")
    with pytest.raises(ValueError, match="task_gain"):
        ReactionlessArmController(m, gains, seed=IIWA_LEMNISCATE_SEED, task_gain=-1.0)
    with pytest.raises(ValueError, match="floating-base"):
        reaction_map(models.iiwa(), np.zeros(7))


@pytest.mark.parametrize("name", ["iiwa", "ur5"])
def test_held_base_null_space_keeps_the_angular_momentum_about_the_base_origin(name):
    """``base = "held"``: the base's translation held (zero velocity) and its rotation at
    rest, null-space joint rates leave the angular momentum about the base's origin zero
    (Pinocchio's centroidal momentum carried to the base's origin), and any other joint
    rates turn a held base at ``-R qdot`` (Pinocchio's angular momentum about the origin
    solved for the base's angular velocity)."""
    model = _systems()[name]
    pm = to_pinocchio(model)
    pd = pm.createData()
    n = model.nv - 6
    rng = np.random.default_rng(28)

    def h_origin(q, v):
        qp = q_to_pin(model, q)
        h = pin.computeCentroidalMomentum(pm, pd, qp, v_to_pin(model, v))
        c = pd.com[0]
        return h.angular + np.cross(c - qp[:3], h.linear)  # about the base's origin, world

    worst = worst_map = 0.0
    for _ in range(5):
        q = model.random_configuration(rng, translation=0.3)
        N = reaction_null_space(model, q, held=True)
        assert N.shape == (n, n - 3)
        qdot = N @ rng.normal(0.0, 1.0, n - 3)
        worst = max(worst, np.abs(h_origin(q, np.r_[np.zeros(6), qdot])).max())
        # any rates: the held base's w from h_origin linear in w, by three unit rotations
        any_rate = rng.normal(0.0, 1.0, n)
        h0 = h_origin(q, np.r_[np.zeros(6), any_rate])
        H = np.column_stack(
            [h_origin(q, np.r_[e, np.zeros(3 + n)]) for e in np.eye(3)]
        )  # world-axis angular momentum per base-axis angular velocity
        w = -np.linalg.solve(H, h0)
        assert np.abs(w).max() > 1e-3
        worst_map = max(worst_map, np.abs(w + reaction_map(model, q, held=True) @ any_rate).max())
    print(f"\n{name}, held base: momentum about the origin {worst:.1e}, map {worst_map:.1e}")
    assert worst < TOL and worst_map < TOL


@pytest.mark.parametrize("name", ["iiwa", "ur5"])
def test_the_feedforward_keeps_the_free_base_angular_acceleration_zero(name):
    """The law's joint acceleration reference ``theta_r''`` with its rates ``theta_r'`` and
    the base's twist from zero momentum: Pinocchio's equations of motion (``crba``,
    ``rnea``), the base's rows with no wrench on it, give a base angular acceleration of
    zero; the joints at rest accelerating nowhere would not (the velocity-product terms
    the feedforward cancels)."""
    model = _systems()[name]
    pm = to_pinocchio(model)
    pd = pm.createData()
    n = model.nv - 6
    rng = np.random.default_rng(29)
    frame = "ee" if name == "iiwa" else model.frames[-1].name
    ctrl = ReactionlessArmController(
        model, JointGains.from_natural_frequency(20.0), seed=np.zeros(n), frame=frame
    )
    worst = drift = 0.0
    for _ in range(4):
        q = model.random_configuration(rng, translation=0.3)
        pose = frame_pose(model, np.r_[model.neutral_configuration()[:8], q[8:]], frame)
        ref = PoseReference(pose, rng.normal(0.0, 0.3, 6), rng.normal(0.0, 0.3, 6))
        jref, _ = ctrl.joint_reference(ref, State(q, np.zeros(model.nv)))
        M = mass_matrix(model, q)
        v = np.r_[-np.linalg.solve(M[:6, :6], M[:6, 6:] @ jref.v), jref.v]
        qp, vp = q_to_pin(model, q), v_to_pin(model, v)

        def base_angular_acc(a_m, qp=qp, vp=vp):
            Mp = pin.crba(pm, pd, qp).copy()
            Mp = np.triu(Mp) + np.triu(Mp, 1).T
            rows = pin.rnea(pm, pd, qp, vp, np.r_[np.zeros(6), a_m])[:6].copy()
            return -np.linalg.solve(Mp[:6, :6], rows)[3:]  # pin's free flyer: [v', w']

        scale = max(np.abs(jref.a).max(), np.abs(jref.v).max() ** 2)
        worst = max(worst, np.abs(base_angular_acc(jref.a)).max() / scale)
        drift = max(drift, np.abs(base_angular_acc(np.zeros(n))).max() / scale)
    print(f"\n{name}: base angular acceleration {worst:.1e}, without the feedforward {drift:.1e}")
    assert drift > 1e-3
    assert worst < TOL


def test_the_compiled_tick_runs_the_reactionless_references():
    """The compiled law tick (``station_keeping_kernel``, chosen by the arm parameters'
    type) gives the joint references and torques of the Python composition of the same
    controllers (the reactionless references at the measured state, then the base law, then
    the computed torque under the commanded wrench); a plain IK arm law gives others."""
    from dqspace.control import BaseController, PDGains  # only here: the base law
    from dqspace.control.flight.law import StationKeepingLaw  # only here: the tick
    from dqspace.dq import swap  # only here: the base's generalized force

    model = models.space_manipulator()
    rng = np.random.default_rng(30)
    q = model.random_configuration(rng, translation=0.2)
    q[8:] = IIWA_LEMNISCATE_SEED + rng.normal(0.0, 0.05, 7)
    v = rng.normal(0.0, 0.1, model.nv)
    gains = JointGains.from_natural_frequency(20.0)
    arm = ReactionlessArmController(model, gains, seed=q[8:])
    base = BaseController(model, PDGains.from_natural_frequency(27.0, [0.4, 0.4, 0.4], 1.0))
    ref = _line(model, np.r_[model.neutral_configuration()[:8], q[8:]])(0.3)  # base-relative
    hold = PoseReference(q[:8].copy(), np.zeros(6), np.zeros(6))
    law = StationKeepingLaw(base, arm)
    assert law.compiled
    out = law(0.0, State(q, v), hold, ref)
    cmd = arm(0.0, State(q, v), ref)
    b = base(0.0, State(q, v), hold, arm_acc=cmd.acc)
    tau, _ = arm.torque(State(q, v), cmd.acc, base_force=swap(b.wrench))
    jr = out.arm_command.joint_reference
    assert np.allclose(jr.v, cmd.joint_reference.v, rtol=0, atol=1e-12)
    assert np.allclose(jr.a, cmd.joint_reference.a, rtol=0, atol=1e-12)
    assert np.allclose(out.wrench, b.wrench, rtol=0, atol=1e-9)
    assert np.allclose(out.arm_tau, tau, rtol=0, atol=1e-9)
    ik = StationKeepingLaw(base, ArmController(model, gains, seed=q[8:]))(
        0.0, State(q, v), hold, ref
    )
    assert np.abs(ik.arm_command.joint_reference.v - jr.v).max() > 1e-3
