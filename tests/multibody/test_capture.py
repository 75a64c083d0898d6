"""Capture of a tumbling target (issue 28): the target, the combined model, the grasp impact.

References, all independent of the code under test:

* the target's tumble: the torque-free rigid body's invariants (linear and angular
  momentum, kinetic energy, the centre of mass in uniform straight motion) and, for an
  axisymmetric body, the closed-form motion ``R(t) = exp(t [h/I_t]x) R0 exp(-t lambda [e3]x)``
  with ``lambda = (I_a - I_t) w3 / I_t`` (the body rates turn about the symmetry axis at
  ``lambda``);
* the combined model (target fixed to the servicer's end-effector link): its mass matrix
  and forward dynamics against a Pinocchio model of the servicer with the target's inertia
  appended to the end-effector joint by ``appendBodyToJoint``, the placement composed with
  Pinocchio's ``SE3``; the servicers are the paper's space manipulator (Pinocchio model by
  the test bridge), a floating UR5 (Pinocchio's own URDF parser) and the paper's
  manipulator grasping with a payload body fixed to its flange;
* the grasp: momentum of servicer + target before against the combined system after, by
  ``momentum`` and by Pinocchio's ``computeCentroidalMomentum``; the velocity jump against
  Pinocchio's ``impulseDynamics`` on a model holding servicer and target as two free
  trees, with a ``CONTACT_6D`` ``RigidConstraintModel`` and with the constraint Jacobian
  built from Pinocchio's frame Jacobians; the relative twist after the impact ``-e`` times
  the one before, recomputed from frame twists; the energy conserved for ``e = 1``
  (Pinocchio's kinetic energy).

Tolerance 1e-10 relative throughout (the tumble: against the RK4 truncation error, stated
at each test).
"""

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from dqspace.dq import (
    dq_conj,
    dq_from_quat_translation,
    dq_identity,
    dq_mul,
    rotation_matrix_from_dq,
    translation_from_dq,
)
from dqspace.multibody import (
    Target,
    attach_target,
    forward_dynamics,
    forward_dynamics_aba,
    frame_pose,
    frame_twist,
    free_motion,
    grasp_impact,
    grasp_misalignment,
    kinetic_energy,
    mass_matrix,
    model_from_urdf,
    models,
    momentum,
    simulate_rk4,
)
from support.pin_bridge import q_to_pin, se3, to_pinocchio, v_to_pin
from support.pin_compare import pin_model_from_urdf, rel_err
from support.random import random_pose, random_unit_quat
from support.random_trees import random_inertia

TOL = 1e-10
UR5 = (Path(__file__).resolve().parents[2] / "scenarios" / "data" / "arms" / "ur5.urdf").read_text()
DEG = np.pi / 180.0


# ----------------------------------------------------------------------- helpers
def _servicers():
    """(name, dqspace model, its Pinocchio model built independently, grasping frame).

    The paper's manipulator by its flange; a floating UR5 by its ``ee`` frame; the paper's
    manipulator with a payload (a body fixed to link 7) by that payload body's frame.
    """
    paper = models.space_manipulator()
    ur5 = model_from_urdf(UR5, floating=True)
    payload = models.space_manipulator(payload_mass=3.0)
    return [
        ("paper", paper, to_pinocchio(paper), "ee"),
        ("ur5", ur5, pin_model_from_urdf(UR5, True, np.zeros(3)), "ee"),
        ("payload", payload, to_pinocchio(payload), "payload"),
    ]


SERVICERS = pytest.mark.parametrize("which", [0, 1, 2], ids=["paper", "ur5", "payload"])


def _random_target(rng, name="target"):
    """A target of 50-2000 kg, ~1-3 m in size, with its CoM and fixture off the origin."""
    mass = rng.uniform(50.0, 2000.0)
    inertia = random_inertia(rng, mass) * rng.uniform(10.0, 100.0)
    return Target(
        mass=mass,
        com=rng.uniform(-0.5, 0.5, 3),
        inertia=inertia,
        fixture=random_pose(rng, scale=1.0),
        name=name,
    )


def _tumble(rng, target):
    """A tumble of 2-5 deg/s about a random axis, the CoM drifting at up to 5 cm/s."""
    w = random_unit_quat(rng)[1:]
    w = rng.uniform(2.0, 5.0) * DEG * w / np.linalg.norm(w)
    return target.twist(w, rng.uniform(-0.05, 0.05, 3))


def _servicer_state(rng, model):
    return model.random_configuration(rng), 0.2 * rng.normal(size=model.nv)


def _grasp_state(rng, model, target, offset=None, frame="ee"):
    """A servicer state and the target pose with its fixture at ``frame o offset``."""
    q, v = _servicer_state(rng, model)
    ee = frame_pose(model, q, frame)
    if offset is not None:
        ee = dq_mul(ee, offset)
    pose = dq_mul(ee, dq_conj(target.fixture))
    return q, v, pose, _tumble(rng, target)


def _pin_inertia(target):
    return pin.Inertia(target.mass, np.array(target.com), np.array(target.inertia))


def _pin_combined(pm, target, offset, frame):
    """Pinocchio's servicer with the target's inertia appended to the grasping frame's joint."""
    pm = pin.Model(pm)
    ee = pm.frames[pm.getFrameId(frame)]
    placement = ee.placement * se3(offset) * se3(target.fixture).inverse()
    pm.appendBodyToJoint(ee.parentJoint, _pin_inertia(target), placement)
    return pm


def _pin_two_trees(pm, target):
    """Pinocchio's servicer and, as a second tree, the target on its own free flyer."""
    pm = pin.Model(pm)
    jt = pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "target_free")
    pm.appendBodyToJoint(jt, _pin_inertia(target), pin.SE3.Identity())
    return pm, jt


def _to_pin_two(model, q, v, pose, xi):
    """Pinocchio's (q, v) of the two-tree model: servicer, then the target's free flyer."""
    qp = np.concatenate([q_to_pin(model, q), translation_from_dq(pose), pose[1:4], pose[:1]])
    return qp, np.concatenate([v_to_pin(model, v), xi[3:], xi[:3]])


def _momentum_sum(*parts):
    lin = sum(m.linear for m in parts)
    ang = sum(m.angular for m in parts)
    return np.concatenate([lin, ang])


# ------------------------------------------------------------------ the target
def test_target_validation_names_what_is_wrong():
    good = dict(mass=500.0, com=np.zeros(3), inertia=np.diag([300.0, 250.0, 200.0]))
    cases = [
        (dict(mass=-1.0), "mass must be positive"),
        (dict(mass=np.nan), "mass must be finite"),
        (dict(inertia=np.array([[300.0, 1, 0], [0, 250, 0], [0, 0, 200]])), "not symmetric"),
        (dict(inertia=np.diag([300.0, -250.0, 200.0])), "not positive-definite"),
        (dict(inertia=np.diag([100.0, 100.0, 300.0])), "triangle inequality"),
        (dict(inertia=np.eye(2)), "inertia must have shape"),
        (dict(com=[0.0, 1.0]), "com must have shape"),
        (dict(fixture=[1.0, 0, 0, 0, 0.3, 0, 0, 0]), "not a unit dual quaternion"),
        (dict(name=""), "name must be a non-empty string"),
    ]
    for change, message in cases:
        with pytest.raises(ValueError, match=message):
            Target(**{**good, **change})
    with pytest.raises(ValueError, match=r"target\.mass"):
        Target.from_dict({"mass": "5", "inertia": [1.0, 1, 1, 0, 0, 0]})
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['masse'\]"):
        Target.from_dict({"masse": 5.0, "mass": 5.0, "inertia": [1.0, 1, 1, 0, 0, 0]})
    with pytest.raises(ValueError, match="missing key 'inertia'"):
        Target.from_dict({"mass": 5.0})
    with pytest.raises(ValueError, match=r"inertia must be a 3x3 matrix or \[Ixx"):
        Target.from_dict({"mass": 5.0, "inertia": [1.0, 1.0, 1.0]})
    with pytest.raises(ValueError, match=r"fixture: unknown key\(s\) \['rpy'\]"):
        Target.from_dict({"mass": 5.0, "inertia": np.eye(3), "fixture": {"rpy": [0, 0, 1]}})


def test_target_from_a_table_and_from_a_urdf_hold_the_same_body():
    """The table's six numbers, the fixture's position/rpy and a two-link fixed URDF."""
    table = {
        "mass": 500.0,
        "com": [0.1, -0.2, 0.05],
        "inertia": [300.0, 250.0, 200.0, 8.0, -5.0, 10.0],  # Ixx Iyy Izz Iyz Ixz Ixy
        "fixture": {"position": [0.0, 0.0, 1.2], "rpy_deg": [0.0, 90.0, 0.0]},
    }
    t = Target.from_dict(table)
    J = np.array([[300.0, 10.0, -5.0], [10.0, 250.0, 8.0], [-5.0, 8.0, 200.0]])
    assert np.array_equal(t.inertia, J) and t.mass == 500.0
    # rpy (0, 90 deg, 0): the fixture's z axis is the body's -x... R = Ry(90 deg)
    R = rotation_matrix_from_dq(t.fixture)
    assert np.allclose(R, [[0, 0, 1], [0, 1, 0], [-1, 0, 0]], atol=1e-15)
    assert np.allclose(translation_from_dq(t.fixture), [0, 0, 1.2], atol=1e-15)
    # the spatial inertia gives the kinetic energy of a twist about the CoM
    w, vc = np.array([0.01, -0.03, 0.02]), np.array([0.1, 0.0, -0.2])
    xi = t.twist(w, vc)
    T = 0.5 * t.mass * vc @ vc + 0.5 * w @ J @ w
    assert abs(0.5 * xi @ t.spatial_inertia @ xi - T) < 1e-14 * T
    urdf = """<robot name="sat">
      <link name="bus"><inertial><origin xyz="0.1 -0.2 0.05" rpy="0 0 0"/><mass value="500"/>
        <inertia ixx="300" iyy="250" izz="200" iyz="8" ixz="-5" ixy="10"/></inertial></link>
      <link name="grapple"/>
      <joint name="g" type="fixed"><parent link="bus"/><child link="grapple"/>
        <origin xyz="0 0 1.2" rpy="0 1.5707963267948966 0"/></joint>
    </robot>"""
    u = Target.from_urdf(urdf, "grapple")
    assert u.mass == t.mass and np.allclose(u.com, t.com, atol=1e-15)
    assert np.allclose(u.inertia, J, atol=1e-12)
    assert np.allclose(u.fixture, t.fixture, atol=1e-15)
    with pytest.raises(ValueError, match="no link named 'handle'"):
        Target.from_urdf(urdf, "handle")


def test_tumble_keeps_momentum_energy_and_a_straight_com_line(rng):
    """500 kg, 4 deg/s about a non-principal axis, 30 s in 0.05 s RK4 steps.

    RK4's local truncation error at w dt = 3.5e-3 rad is ~(w dt)^5 ~ 5e-13; the invariants
    and the CoM line hold to 1e-10 relative.
    """
    J = np.array([[300.0, 20.0, -15.0], [20.0, 250.0, 10.0], [-15.0, 10.0, 180.0]])
    t = Target(mass=500.0, com=[0.3, -0.1, 0.2], inertia=J)
    w = 4.0 * DEG * np.array([1.0, 2.0, -1.5]) / np.linalg.norm([1.0, 2.0, -1.5])
    vc = np.array([0.02, -0.01, 0.03])
    pose0 = random_pose(rng)
    traj = free_motion(t, pose0, t.twist(w, vc), dt=0.05, n_steps=600, record_every=50)
    m0 = momentum(t.model, traj.q[0], traj.v[0])
    T0 = kinetic_energy(t.model, traj.q[0], traj.v[0])
    T_ref = 0.5 * t.mass * vc @ vc + 0.5 * w @ J @ w  # about the CoM, by hand
    assert abs(T0 - T_ref) < 1e-14 * T_ref
    R0 = rotation_matrix_from_dq(pose0)
    c0 = translation_from_dq(pose0) + R0 @ t.com
    for k in range(len(traj.t)):
        m = momentum(t.model, traj.q[k], traj.v[k])
        assert rel_err(m.linear, m0.linear) < TOL
        assert rel_err(m.angular, m0.angular) < TOL
        assert abs(kinetic_energy(t.model, traj.q[k], traj.v[k]) - T0) < TOL * T0
        R = rotation_matrix_from_dq(traj.q[k])
        c = translation_from_dq(traj.q[k]) + R @ t.com
        assert rel_err(c, c0 + traj.t[k] * R0 @ vc) < TOL
    assert traj.t[-1] == pytest.approx(30.0)


def test_axisymmetric_tumble_follows_the_closed_form_precession(rng):
    """I = diag(I_t, I_t, I_a): R(t) = exp(t [h/I_t]x) R0 exp(-t lambda [e3]x), 40 s.

    The attitude to 1e-10 (Frobenius norm of the rotation matrices' difference) and the
    body rates turning about the symmetry axis at lambda = (I_a - I_t) w3 / I_t.
    """
    from scipy.spatial.transform import Rotation  # the reference's exponential map

    It, Ia = 400.0, 150.0  # a prolate body (a rocket stage): lambda < 0
    Q = rotation_matrix_from_dq(random_pose(rng))  # the target's body axes, rotated
    t = Target(mass=800.0, com=np.zeros(3), inertia=Q @ np.diag([It, It, Ia]) @ Q.T)
    w_sym = 5.0 * DEG * np.array([0.6, -0.3, 0.74])  # in the symmetry axes
    xi0 = t.twist(Q @ w_sym)
    pose0 = random_pose(rng)
    traj = free_motion(t, pose0, xi0, dt=0.1, n_steps=400, record_every=40)
    R0 = rotation_matrix_from_dq(pose0) @ Q  # the symmetry axes' attitude
    h = R0 @ np.diag([It, It, Ia]) @ w_sym  # angular momentum, inertial
    lam = (Ia - It) * w_sym[2] / It
    for k, tk in enumerate(traj.t):
        R_ref = (
            Rotation.from_rotvec(tk * h / It).as_matrix()
            @ R0
            @ Rotation.from_rotvec([0.0, 0.0, -lam * tk]).as_matrix()
        )
        R = rotation_matrix_from_dq(traj.q[k]) @ Q
        assert np.linalg.norm(R - R_ref) < TOL, (tk, np.linalg.norm(R - R_ref))
        c, s = np.cos(lam * tk), np.sin(lam * tk)
        w_ref = np.array([c * w_sym[0] - s * w_sym[1], s * w_sym[0] + c * w_sym[1], w_sym[2]])
        assert rel_err(Q.T @ traj.v[k, :3], w_ref) < TOL


# --------------------------------------------------------------- combined model
@SERVICERS
def test_combined_model_agrees_with_pinocchio(which, rng):
    """Mass matrix (CRBA), forward dynamics (ABA and the mass-matrix solve) vs Pinocchio."""
    name, model, pm_servicer, frame = _servicers()[which]
    before = (model.nb, model.nq, model.nv, model.mass.copy(), len(model.frames))
    worst = dict.fromkeys(("M", "aba", "fd"), 0.0)
    for i in range(6):  # six targets, three of them with an offset at the grasp
        target = _random_target(rng)
        offset = random_pose(rng, scale=0.1) if i % 2 else None
        combined = attach_target(model, target, frame, offset)
        assert (combined.nq, combined.nv, combined.nb) == (model.nq, model.nv, model.nb + 1)
        pm = _pin_combined(pm_servicer, target, dq_identity() if offset is None else offset, frame)
        pd = pm.createData()
        for _ in range(5):
            q = combined.random_configuration(rng)
            v, tau = rng.normal(size=model.nv), 10.0 * rng.normal(size=model.nv)
            qp, vp, taup = q_to_pin(combined, q), v_to_pin(combined, v), v_to_pin(combined, tau)
            Mp = pin.crba(pm, pd, qp)
            Mp = np.triu(Mp) + np.triu(Mp, 1).T
            P = v_to_pin(combined, np.eye(combined.nv))
            worst["M"] = max(worst["M"], rel_err(P @ mass_matrix(combined, q) @ P.T, Mp))
            a_ref = pin.aba(pm, pd, qp, vp, taup)
            a_aba = forward_dynamics_aba(combined, q, v, tau)
            worst["aba"] = max(worst["aba"], rel_err(v_to_pin(combined, a_aba), a_ref))
            a_fd = forward_dynamics(combined, q, v, tau)
            worst["fd"] = max(worst["fd"], rel_err(v_to_pin(combined, a_fd), a_ref))
            # the fixture frame sits where the servicer's frame o offset is
            ee = frame_pose(combined, q, frame)
            fx = frame_pose(combined, q, target.fixture_frame)
            nominal = ee if offset is None else dq_mul(ee, offset)
            assert max(grasp_misalignment(model, q, target, dq_mul(fx, dq_conj(target.fixture)),
                                          frame, offset)) < 1e-12  # fmt: skip
            assert rel_err(rotation_matrix_from_dq(fx), rotation_matrix_from_dq(nominal)) < TOL
    print(f"\ncombined model ({name}) vs Pinocchio, worst relative errors: {worst}")
    assert max(worst.values()) < TOL, worst
    after = (model.nb, model.nq, model.nv, model.mass, len(model.frames))
    assert before[:3] == after[:3] and np.array_equal(before[3], after[3])
    assert before[4] == after[4]


def test_attach_refuses_a_name_clash():
    model = models.space_manipulator()
    t = Target(mass=10.0, com=np.zeros(3), inertia=np.eye(3), name="link3")
    with pytest.raises(ValueError, match="already has a body named 'link3'"):
        attach_target(model, t)
    with pytest.raises(ValueError, match="no frame|no body named 'gripper'"):
        attach_target(model, Target(mass=10.0, com=np.zeros(3), inertia=np.eye(3)), "gripper")


# -------------------------------------------------------------------- the grasp
def _impulse_reference_jacobian(pm2, jt, model, q, v, pose, xi, e, target, link_joint):
    """Pinocchio's velocity after the impact, the constraint Jacobian from frame Jacobians.

    Two frames at the fixture's pose: c1 on the servicer's ee joint, c2 on the target's
    free flyer; J = J_c2 - J_c1 (LOCAL), so ``J v`` is the relative twist at the fixture.
    """
    pm2 = pin.Model(pm2)
    qp, vp = _to_pin_two(model, q, v, pose, xi)
    pd = pm2.createData()
    pin.forwardKinematics(pm2, pd, qp)
    X_fix = se3(target.fixture)
    c1 = pd.oMi[link_joint].inverse() * pd.oMi[jt] * X_fix
    f1 = pm2.addFrame(pin.Frame("c1", link_joint, 0, c1, pin.FrameType.OP_FRAME))
    f2 = pm2.addFrame(pin.Frame("c2", jt, 0, X_fix, pin.FrameType.OP_FRAME))
    pd = pm2.createData()
    pin.computeJointJacobians(pm2, pd, qp)
    pin.updateFramePlacements(pm2, pd)
    J = pin.getFrameJacobian(pm2, pd, f2, pin.LOCAL) - pin.getFrameJacobian(pm2, pd, f1, pin.LOCAL)
    return vp, pin.impulseDynamics(pm2, pd, qp, vp, J, e, 0.0), c1


def _impulse_reference_contact(pm2, jt, model, q, v, pose, xi, e, c1, X_fix, link_joint):
    """Pinocchio's velocity jump with a CONTACT_6D RigidConstraintModel (ee joint, target).

    Pinocchio 4.1's ``impulseDynamics`` takes the pre-impact constraint velocity from
    joint 1 alone (``data.ov[joint1_id]``), right only when joint 2 is at rest; the jump
    is unchanged by a rigid motion common to all bodies (it leaves the relative twist,
    hence the impulse, as they are), so the state is first shifted by the target's own
    motion (base twist minus the target's twist carried to the base, target at rest).
    """
    qp, vp = _to_pin_two(model, q, v, pose, xi)
    pd = pm2.createData()
    pin.forwardKinematics(pm2, pd, qp)
    V_t = pin.Motion(vp[model.nv : model.nv + 3], vp[model.nv + 3 :])
    V_b = (pd.oMi[1].inverse() * pd.oMi[jt]).act(V_t)
    vs = vp.copy()
    vs[:6] -= V_b.vector
    vs[model.nv :] = 0.0
    cm = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_6D, pm2, link_joint, c1, jt, X_fix, pin.ReferenceFrame.LOCAL
    )
    cms = pin.StdVec_RigidConstraintModel()
    cms.append(cm)
    cds = pin.StdVec_RigidConstraintData()
    cds.append(cm.createData())
    pin.initConstraintDynamics(pm2, pd, cms, cds)
    after = pin.impulseDynamics(pm2, pd, qp, vs, cms, cds, e, pin.ProximalSettings(1e-14, 0.0, 1))
    return after - vs


@SERVICERS
def test_grasp_impact_agrees_with_pinocchio_and_keeps_momentum(which, rng):
    """Random targets, tumbles and servicer states; e = 0, a random e in (0, 1), e = 1."""
    name, model, pm_servicer, frame = _servicers()[which]
    link_joint = pm_servicer.frames[pm_servicer.getFrameId(frame)].parentJoint
    worst = dict.fromkeys(("jump_J", "jump_6D", "momentum", "pin_momentum", "rel", "T"), 0.0)
    for i in range(12):
        target = _random_target(rng)
        offset = random_pose(rng, scale=0.1) if i % 3 == 2 else None
        q, v, pose, xi = _grasp_state(rng, model, target, offset, frame)
        pm2, jt = _pin_two_trees(pm_servicer, target)
        before = _momentum_sum(momentum(model, q, v), momentum(target.model, pose, xi))
        for e in (0.0, rng.uniform(0.05, 0.95), 1.0):
            r = grasp_impact(
                model, q, v, target, pose, xi, frame=frame, offset=offset, restitution=e
            )
            ours = np.concatenate(
                [v_to_pin(model, r.servicer_v), r.target_twist[3:], r.target_twist[:3]]
            )
            # (b) the velocity jump, two ways through Pinocchio
            vp, after_J, c1 = _impulse_reference_jacobian(
                pm2, jt, model, q, v, pose, xi, e, target, link_joint
            )
            worst["jump_J"] = max(worst["jump_J"], rel_err(ours - vp, after_J - vp))
            jump = _impulse_reference_contact(
                pm2, jt, model, q, v, pose, xi, e, c1, se3(target.fixture), link_joint
            )
            worst["jump_6D"] = max(worst["jump_6D"], rel_err(ours - vp, jump))
            # (a) momentum: the servicer and target after, separately and (rigid) combined
            after = _momentum_sum(
                momentum(model, q, r.servicer_v), momentum(target.model, pose, r.target_twist)
            )
            worst["momentum"] = max(worst["momentum"], rel_err(after, before))
            # (c) the relative twist at the fixture, from frame twists
            fix = frame_twist(target.model, pose, r.target_twist, target.fixture_frame)
            grip = frame_twist(r.model, q, r.servicer_v, target.fixture_frame)
            g_before = frame_twist(target.model, pose, xi, target.fixture_frame) - frame_twist(
                r.model, q, v, target.fixture_frame
            )
            worst["rel"] = max(
                worst["rel"], np.linalg.norm(fix - grip + e * g_before) / np.linalg.norm(g_before)
            )
            if e == 0.0:
                assert r.v is not None and np.array_equal(r.v, r.servicer_v)
                m_c = momentum(r.model, r.q, r.v)
                worst["momentum"] = max(worst["momentum"], rel_err(_momentum_sum(m_c), before))
                # the target's twist in the combined model is the one returned
                assert rel_err(frame_twist(r.model, q, r.v, target.name), r.target_twist) < TOL
                pm_c = _pin_combined(
                    pm_servicer, target, _actual_offset(model, q, target, pose, frame), frame
                )
                pd_c = pm_c.createData()
                hg = pin.computeCentroidalMomentum(
                    pm_c, pd_c, q_to_pin(r.model, q), v_to_pin(r.model, r.v)
                )
                h_O = hg.angular + np.cross(pd_c.com[0], hg.linear)
                err = rel_err(np.concatenate([hg.linear, h_O]), before)
                worst["pin_momentum"] = max(worst["pin_momentum"], err)
                assert r.energy_lost > 0.0
            else:
                assert r.v is None
            # (d) the energy lost, by Pinocchio's kinetic energy: (1 - e^2) times the plastic
            # loss (docs/capture.md); none for e = 1
            qp, vp0 = _to_pin_two(model, q, v, pose, xi)
            pd2 = pm2.createData()
            T0 = pin.computeKineticEnergy(pm2, pd2, qp, vp0)
            T1 = pin.computeKineticEnergy(pm2, pd2, qp, ours)
            worst["T"] = max(worst["T"], abs(r.energy_lost - (T0 - T1)) / T0)
            if e == 0.0:
                plastic = r.energy_lost
            else:
                err = abs(r.energy_lost - (1.0 - e * e) * plastic) / T0
                worst["T"] = max(worst["T"], err)
    print(f"\ngrasp impact ({name}) vs Pinocchio, worst relative errors: {worst}")
    assert max(worst.values()) < TOL, worst


def _actual_offset(model, q, target, pose, frame):
    """The fixture's actual pose in the grasping frame (the attachment of a grasp)."""
    return dq_mul(dq_conj(frame_pose(model, q, frame)), dq_mul(pose, target.fixture))


def test_grasp_checks_its_inputs_and_the_alignment(rng):
    model = models.space_manipulator()
    target = _random_target(rng)
    q, v, pose, xi = _grasp_state(rng, model, target)
    for e in (-0.1, 1.5, "0.5", np.nan):
        with pytest.raises(ValueError, match="restitution must be"):
            grasp_impact(model, q, v, target, pose, xi, restitution=e)
    moved = dq_mul(dq_from_quat_translation([1.0, 0, 0, 0], [0.0, 0.01, 0.0]), pose)
    with pytest.raises(ValueError, match=r"fixture is 0.01 m and .* rad from its grasp pose"):
        grasp_impact(model, q, v, target, moved, xi)
    d, a = grasp_misalignment(model, q, target, moved)
    assert abs(d - 0.01) < 1e-12 and a < 1e-12
    # accepted with a looser tol (or none): the target is held where it is
    r = grasp_impact(model, q, v, target, moved, xi, tol=None)
    assert rel_err(frame_pose(r.model, q, target.name), moved) < TOL
    with pytest.raises(ValueError, match="tol must be a non-negative number"):
        grasp_impact(model, q, v, target, pose, xi, tol=-1.0)
    with pytest.raises(ValueError, match="no frame or body named 'gripper'"):
        grasp_impact(model, q, v, target, pose, xi, frame="gripper")
    with pytest.raises(ValueError, match="target_twist must have shape"):
        grasp_impact(model, q, v, target, pose, xi[:3])
    with pytest.raises(ValueError, match="offset is not a unit dual quaternion"):
        grasp_impact(model, q, v, target, pose, xi, offset=2.0 * dq_identity())


def test_the_comparisons_can_fail(rng):
    """A target's CoM off by 1 cm: Pinocchio's jump and the momentum balance both reject it."""
    name, model, pm_servicer, _ = _servicers()[0]
    link_joint = pm_servicer.frames[pm_servicer.getFrameId("ee")].parentJoint
    target = _random_target(rng)
    q, v, pose, xi = _grasp_state(rng, model, target)
    wrong = Target(target.mass, target.com + [0.01, 0.0, 0.0], target.inertia, target.fixture)
    r = grasp_impact(model, q, v, wrong, pose, xi)
    pm2, jt = _pin_two_trees(pm_servicer, target)
    vp, after, _ = _impulse_reference_jacobian(
        pm2, jt, model, q, v, pose, xi, 0.0, target, link_joint
    )
    ours = np.concatenate([v_to_pin(model, r.servicer_v), r.target_twist[3:], r.target_twist[:3]])
    assert rel_err(ours - vp, after - vp) > 1e-4
    before = _momentum_sum(momentum(model, q, v), momentum(target.model, pose, xi))
    assert rel_err(_momentum_sum(momentum(r.model, q, r.v)), before) > 1e-4


def test_after_a_rigid_grasp_the_combined_system_drifts_with_the_momentum_of_before(rng):
    """The combined model from the grasp, simulated torque-free for 1 s (RK4, 2.5 ms steps):
    the momentum the servicer and the target had before the grasp, to 1e-10 relative, and
    the fixture stays on the end-effector (the target moves as a body of the tree).

    RK4's momentum error is its truncation error, ~dt^4: on this state, after 2 s, 7e-11,
    4e-12 and 3e-13 with 5, 2.5 and 1.25 ms steps.
    """
    model = models.space_manipulator()
    target = _random_target(rng)
    q, v, pose, xi = _grasp_state(rng, model, target)
    before = _momentum_sum(momentum(model, q, v), momentum(target.model, pose, xi))
    r = grasp_impact(model, q, v, target, pose, xi)
    traj = simulate_rk4(r.model, r.q, r.v, dt=0.0025, n_steps=400, record_every=100)
    for qk, vk in zip(traj.q, traj.v, strict=True):
        assert rel_err(_momentum_sum(momentum(r.model, qk, vk)), before) < TOL
        fixture = frame_pose(r.model, qk, target.fixture_frame)
        target_pose = dq_mul(fixture, dq_conj(target.fixture))
        assert max(grasp_misalignment(model, qk, target, target_pose)) < 1e-12
