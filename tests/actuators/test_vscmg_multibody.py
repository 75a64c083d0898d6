"""VSCMG cluster as bodies of the multibody tree: kinematics of the attachment, the torque on
the base against eq. (40)-(41) (all terms, and the size of the neglected B gamma_ddot), servo
loops, and conservation of the total momentum over a 10 s closed-loop run."""

import numpy as np
import pytest

from dqspace.actuators.servo import ServoGains, servo_controller, servo_torques
from dqspace.actuators.steering import SteeringLaw, steer
from dqspace.actuators.vscmg import pyramid_cluster
from dqspace.actuators.vscmg_multibody import attach_cluster
from dqspace.dq import (
    dq_conj,
    dq_identity,
    dq_mul,
    frame_change_inv,
    rotation_matrix_from_dq,
    translation_from_dq,
)
from dqspace.multibody import (
    Body,
    Joint,
    JointType,
    Model,
    forward_dynamics,
    forward_kinematics,
    inverse_dynamics,
    joint_wrenches,
    models,
    momentum,
    simulate_rk4,
)

CLUSTER = pyramid_cluster()


def _bare_base():
    base = Body(
        "base",
        None,
        Joint(JointType.FREE, placement=dq_identity(), name="base"),
        models.BASE_MASS,
        np.zeros(3),
        models.BASE_INERTIA,
    )
    return Model.build([base])


@pytest.fixture(scope="module")
def arm_cm():
    return attach_cluster(models.space_manipulator(), CLUSTER)


def _random_state(cm, rng, *, base_rate=0.5):
    m = cm.model
    q = m.random_configuration(rng)
    v = rng.normal(size=m.nv)
    v[:3] *= base_rate
    q, v = cm.with_state(
        q, v, wheel_speed=CLUSTER.nominal_wheel_speed * rng.uniform(0.8, 1.2, CLUSTER.K)
    )
    return q, v


def _cluster_wrench_on_base(cm, q, v, a):
    """Sum of the gimbal joints' reactions on the base, base coordinates about its origin."""
    F = joint_wrenches(cm.model, q, v, a)
    kin = forward_kinematics(cm.model, q)
    total = np.zeros(6)
    for k in cm.index.gimbal_body:
        dq_BG = dq_mul(dq_conj(kin.pose[0]), kin.pose[k])
        total += frame_change_inv(dq_BG, -F[k])
    return total  # [f, tau]


def _locked_torque(cl, gamma, w, w_dot, a_O):
    """Torque on the base of the cluster locked at gamma, a rigid body moving with the base."""
    ax = cl.axes(gamma)
    N = np.zeros(3)
    for i, u in enumerate(cl.units):
        p = u.position
        a_p = a_O + np.cross(w_dot, p) + np.cross(w, np.cross(w, p))
        R = np.column_stack([ax.A_s[:, i], ax.A_t[:, i], ax.A_g[:, i]])
        J = R @ np.diag([cl.I_s[i], cl.I_t[i], cl.I_cg[i]]) @ R.T
        N += -(u.wheel_mass + u.gimbal_mass) * np.cross(p, a_p) - (J @ w_dot + np.cross(w, J @ w))
    return N


def _actuator_torque_multibody(cm, q, v, a):
    """Cluster torque on the base from the multibody joint wrenches, minus the locked part."""
    st = cm.state(q, v)
    a_O = a[3:6] + np.cross(v[:3], v[3:6])  # inertial acceleration of the base origin
    N = _cluster_wrench_on_base(cm, q, v, a)[3:]
    return N - _locked_torque(cm.cluster, st.gamma, st.w_IB_B, a[:3], a_O)


# ---------------------------------------------------------------- attachment


def test_attached_bodies_index_map_and_kinematics(arm_cm, rng):
    cm, m, ix = arm_cm, arm_cm.model, arm_cm.index
    assert m.nb == 8 + 8 and m.nv == 13 + 8 and m.nq == 15 + 8
    for i in range(4):
        assert m.body_names[ix.gimbal_body[i]] == f"vscmg{i + 1}_gimbal"
        assert m.body_names[ix.wheel_body[i]] == f"vscmg{i + 1}_wheel"
        assert m.parent[ix.gimbal_body[i]] == 0 and m.parent[ix.wheel_body[i]] == ix.gimbal_body[i]
        assert m.v_slice(ix.gimbal_body[i]).start == ix.gimbal_v[i]
        assert m.v_slice(ix.wheel_body[i]).start == ix.wheel_v[i]
        assert m.q_slice(ix.gimbal_body[i]).start == ix.gimbal_q[i]
        assert m.q_slice(ix.wheel_body[i]).start == ix.wheel_q[i]
    q, v = _random_state(cm, rng)
    v[:6] = 0.0  # base at rest: body rates are the relative rates
    kin = forward_kinematics(m, q, v)
    st = cm.state(q, v)
    ax = CLUSTER.axes(st.gamma)
    R_IB = rotation_matrix_from_dq(kin.pose[0])
    for i in range(4):
        kg, kw = ix.gimbal_body[i], ix.wheel_body[i]
        R_BG = R_IB.T @ rotation_matrix_from_dq(kin.pose[kg])
        R_BW = R_IB.T @ rotation_matrix_from_dq(kin.pose[kw])
        assert np.allclose(R_BG[:, 0], ax.A_s[:, i], atol=1e-13)  # gimbal x = s(gamma)
        assert np.allclose(R_BG[:, 1], ax.A_t[:, i], atol=1e-13)
        assert np.allclose(R_BG[:, 2], ax.A_g[:, i], atol=1e-13)
        assert np.allclose(R_BW[:, 0], ax.A_s[:, i], atol=1e-13)  # wheel spins about s
        w_W_B = R_BW @ kin.twist[kw, :3]
        expected = st.gamma_dot[i] * ax.A_g[:, i] + st.wheel_speed[i] * ax.A_s[:, i]
        assert np.allclose(w_W_B, expected, rtol=1e-13, atol=1e-12)
        # gimbal and wheel origins at the mounting point
        for k in (kg, kw):
            p_B = R_IB.T @ (translation_from_dq(kin.pose[k]) - translation_from_dq(kin.pose[0]))
            assert np.allclose(p_B, CLUSTER.positions[i], atol=1e-13)


# --------------------------------------------------- torque on the base (40)-(41)


def test_cluster_torque_matches_joint_wrenches_all_terms(arm_cm, rng):
    """Base + iiwa + 4 VSCMGs, random states and motor torques everywhere: the cluster's
    torque on the base (gimbal-joint reactions, minus the locked-cluster part) equals
    B gamma_ddot + C gamma_dot + E Omega_dot + d."""
    cm, m, ix = arm_cm, arm_cm.model, arm_cm.index
    worst = 0.0
    for _ in range(10):
        q, v = _random_state(cm, rng)
        a = forward_dynamics(m, q, v, rng.normal(size=m.nv) * 3)
        st = cm.state(q, v)
        tau_mb = _actuator_torque_multibody(cm, q, v, a)
        tau = CLUSTER.base_torque(
            st.gamma, st.gamma_dot, st.wheel_speed, st.w_IB_B, a[ix.gimbal_v], a[ix.wheel_v]
        )
        worst = max(worst, np.abs(tau - tau_mb).max() / np.abs(tau_mb).max())
    assert worst < 1e-12


def test_cluster_torque_matches_base_balance(rng):
    """Bare base + cluster, no other force: the base's own Newton-Euler equations give the
    cluster's wrench on it (no joint wrenches involved)."""
    cm = attach_cluster(_bare_base(), CLUSTER)
    m, ix = cm.model, cm.index
    for _ in range(10):
        q, v = _random_state(cm, rng)
        tau_motor = cm.joint_torques(rng.normal(size=4) * 5, rng.normal(size=4))
        a = forward_dynamics(m, q, v, tau_motor)
        w, vl, wd, vd = v[:3], v[3:6], a[:3], a[3:6]
        J_B = models.BASE_INERTIA
        N = J_B @ wd + np.cross(w, J_B @ w)  # base CoM at its origin
        F = models.BASE_MASS * (vd + np.cross(w, vl))
        st = cm.state(q, v)
        a_O = vd + np.cross(w, vl)
        # force: the cluster's centres of mass do not move in the base -> locked-body force
        a_p = [
            a_O + np.cross(wd, u.position) + np.cross(w, np.cross(w, u.position))
            for u in CLUSTER.units
        ]
        F_locked = -sum(
            (u.wheel_mass + u.gimbal_mass) * ap for u, ap in zip(CLUSTER.units, a_p, strict=True)
        )
        scale = sum(
            (u.wheel_mass + u.gimbal_mass)
            * np.linalg.norm(u.position)
            * (wd @ wd + (w @ w) ** 2) ** 0.5
            for u in CLUSTER.units
        )  # size of the individual terms (they nearly cancel in the symmetric pyramid)
        assert np.allclose(F, F_locked, rtol=0, atol=1e-13 * scale)
        tau_act = N - _locked_torque(CLUSTER, st.gamma, w, wd, a_O)
        tau = CLUSTER.base_torque(
            st.gamma, st.gamma_dot, st.wheel_speed, w, a[ix.gimbal_v], a[ix.wheel_v]
        )
        assert np.allclose(tau, tau_act, rtol=1e-12, atol=1e-12 * np.abs(tau_act).max())


def test_paper_C_misses_the_locked_inertia_rate(rng):
    """Without the D(w) [I_s - I_t] column term (the paper's C) the torque is off by exactly
    that term; it vanishes at w = 0."""
    cm = attach_cluster(_bare_base(), CLUSTER)
    m, ix = cm.model, cm.index
    q, v = _random_state(cm, rng, base_rate=1.0)
    a = forward_dynamics(m, q, v, np.zeros(m.nv))
    st = cm.state(q, v)
    mat = CLUSTER.matrices(st.gamma, st.wheel_speed, st.w_IB_B)
    w = st.w_IB_B
    C_paper = -(mat.A_t * (CLUSTER.I_ws * st.wheel_speed) + np.cross(w, mat.A_g.T).T * CLUSTER.I_cg)
    tau_paper = mat.B @ a[ix.gimbal_v] + C_paper @ st.gamma_dot + mat.E @ a[ix.wheel_v] + mat.d
    tau_mb = _actuator_torque_multibody(cm, q, v, a)
    missing = tau_mb - tau_paper
    D = mat.A_t * (w @ mat.A_s) + mat.A_s * (w @ mat.A_t)
    assert np.linalg.norm(missing) > 1e-6 * np.linalg.norm(tau_mb)  # well above rounding
    expected = -(D * (CLUSTER.I_s - CLUSTER.I_t)) @ st.gamma_dot
    assert np.allclose(missing, expected, rtol=0, atol=1e-13 * np.linalg.norm(tau_mb))


# -------------------------------------------------------------------- servos


def test_servo_torques_equal_inverse_dynamics(arm_cm, rng):
    """With the base acceleration known and zero loop errors, the servo laws are the exact
    joint equations: they equal the recursive inverse dynamics at the gimbal/wheel joints."""
    cm, m, ix = arm_cm, arm_cm.model, arm_cm.index
    for _ in range(10):
        q, v = _random_state(cm, rng)
        a = rng.normal(size=m.nv)
        tau_id = inverse_dynamics(m, q, v, a)
        st = cm.state(q, v)
        s = servo_torques(
            cm,
            q,
            v,
            st.gamma_dot,
            a[ix.wheel_v],
            gimbal_accel_ff=a[ix.gimbal_v],
            w_dot_IB_B=a[:3],
        )
        scale = np.abs(tau_id[ix.gimbal_v]).max()
        assert np.allclose(s.gimbal, tau_id[ix.gimbal_v], rtol=1e-12, atol=1e-12 * scale)
        assert np.allclose(s.wheel, tau_id[ix.wheel_v], rtol=1e-12, atol=1e-12 * scale)
        assert np.count_nonzero(s.tau) <= 8  # motor torques only at the cluster's joints
        assert np.all(s.tau[ix.gimbal_v] == s.gimbal) and np.all(s.tau[ix.wheel_v] == s.wheel)


def test_servo_loops_track_rate_and_speed_commands():
    """Bare base + cluster: a null-motion gimbal-rate command (no net torque at gamma = 0)
    and wheel-speed references; the rate error dies out and the speed error decays as
    exp(-k_w t)."""
    cm = attach_cluster(_bare_base(), CLUSTER)
    m = cm.model
    q0, v0 = cm.with_state(m.neutral_configuration(), np.zeros(m.nv), wheel_speed="nominal")
    rate_cmd = 0.1 * np.array([1.0, -1.0, 1.0, -1.0])
    speed_ref = CLUSTER.nominal_wheel_speed * np.array([1.01, 0.99, 1.02, 0.98])
    gains = ServoGains(gimbal_rate=50.0, wheel_speed=5.0)

    def controller(t, q, v):
        return servo_torques(
            cm, q, v, rate_cmd, np.zeros(4), wheel_speed_ref=speed_ref, gains=gains
        ).tau

    tr = simulate_rk4(m, q0, v0, dt=1e-3, n_steps=1000, controller=controller, record_every=1000)
    st = cm.state(tr.q[-1], tr.v[-1])
    assert np.abs(st.gamma_dot - rate_cmd).max() < 1e-3  # from 0.1 at t = 0
    decay = (st.wheel_speed - speed_ref) / (CLUSTER.nominal_wheel_speed - speed_ref)
    assert np.allclose(decay, np.exp(-5.0 * 1.0), rtol=0.1)


# ---------------------------------------------------- 10 s closed-loop run
# The paper's regime: the arm moves (joint motors, internal torques) and the VSCMGs hold the
# base attitude.  The base attitude law is a test-only PD on the base quaternion; the
# cluster starts with tilted gimbals so that the total angular momentum is not zero.

_Q_ARM0 = np.array([0.3, -0.5, 0.2, 1.0, 0.1, -0.4, 0.2])
_GAMMA0 = np.array([0.3, -0.2, 0.1, 0.4])


def _base_pd(q, v):
    """Attitude hold at the identity: -Kp 2 sign(qw) q_vec - Kd w [N m], base coordinates."""
    sgn = 1.0 if q[0] >= 0 else -1.0
    return -15.0 * 2.0 * sgn * q[1:4] - 30.0 * v[:3]


def _arm_torques(t, q, v):
    """Low-gain PD of joints 1-4 to sinusoids; joints 5-7 free [N m]."""
    ph = 0.5 * t + np.arange(7)
    tau = 10.0 * (_Q_ARM0 + 0.3 * np.sin(ph) - q[8:15]) + 5.0 * (0.15 * np.cos(ph) - v[6:13])
    tau[4:] = 0.0
    return tau


@pytest.fixture(scope="module")
def run(arm_cm):
    cm, m = arm_cm, arm_cm.model
    law = SteeringLaw.for_cluster(CLUSTER)
    q0, v0 = m.neutral_configuration(), np.zeros(m.nv)
    q0[8:15] = _Q_ARM0
    q0, v0 = cm.with_state(q0, v0, gamma=_GAMMA0, wheel_speed="nominal")

    def command(t, q, v):
        st = cm.state(q, v)
        mat = CLUSTER.matrices(st.gamma, st.wheel_speed, st.w_IB_B)
        # the steering's input: the demand minus the command-independent term d
        r = steer(law, mat.C, mat.E, _base_pd(q, v) - mat.d, t=t)
        return r.gimbal_rates, r.wheel_accels

    servo = servo_controller(cm, command)

    def controller(t, q, v):
        tau = servo(t, q, v)
        tau[6:13] = _arm_torques(t, q, v)
        return tau

    tr = simulate_rk4(
        m,
        q0,
        v0,
        dt=1e-3,
        n_steps=10_000,
        controller=controller,
        control_every=1,
        record_every=50,
    )
    return cm, tr, controller


def test_total_momentum_conserved_over_10s(run):
    """Motor torques only (gimbals, wheels, arm joints: internal): momentum is constant."""
    cm, tr, _ = run
    mom = [momentum(cm.model, q, v) for q, v in zip(tr.q, tr.v, strict=True)]
    L = np.array([x.angular for x in mom])
    P = np.array([x.linear for x in mom])
    assert tr.t[-1] == pytest.approx(10.0)
    L0 = np.linalg.norm(L[0])
    drift = np.abs(L - L[0]).max() / L0
    print(f"\nangular momentum |L0| = {L0:.4g} N m s, max |L - L0| / |L0| = {drift:.3g}")
    print(f"linear momentum max |P - P0| = {np.abs(P - P[0]).max():.3g} kg m/s")
    assert L0 > 10.0  # a non-trivial total momentum (tilted gimbals)
    assert drift < 1e-9
    assert np.abs(P - P[0]).max() < 1e-9 * L0
    # the run did something: the arm and the gimbals moved, the wheels spin, the base held
    q, v = tr.q[-1], tr.v[-1]
    st = cm.state(q, v)
    assert np.abs(st.gamma - _GAMMA0).max() > 0.01
    assert np.abs(q[8:12] - _Q_ARM0[:4]).max() > 0.1
    assert np.all(np.abs(st.wheel_speed) > 300)
    att = [2 * np.linalg.norm(x[1:4]) for x in tr.q]
    print(f"base attitude error max {max(att):.3g} rad")
    assert max(att) < 0.05


def test_neglected_B_gamma_ddot_along_the_run(run):
    """Along the run, the multibody torque equals B gamma_ddot + C gamma_dot + E Omega_dot + d
    (all terms, 1e-12); the neglected B gamma_ddot is small next to C gamma_dot; the torque
    delivered follows the demand of the attitude law."""
    cm, tr, controller = run
    m, ix = cm.model, cm.index
    ratios, worst, err, dem = [], 0.0, [], []
    for t, q, v in zip(tr.t, tr.q, tr.v, strict=True):
        a = forward_dynamics(m, q, v, controller(t, q, v))
        st = cm.state(q, v)
        mat = CLUSTER.matrices(st.gamma, st.wheel_speed, st.w_IB_B)
        gdd, Od = a[ix.gimbal_v], a[ix.wheel_v]
        tau_mb = _actuator_torque_multibody(cm, q, v, a)
        full = mat.B @ gdd + mat.C @ st.gamma_dot + mat.E @ Od + mat.d
        worst = max(worst, np.abs(full - tau_mb).max() / np.abs(tau_mb).max())
        if t >= 1.0:  # after the start-up transient
            ratios.append(np.linalg.norm(mat.B @ gdd) / np.linalg.norm(mat.C @ st.gamma_dot))
            err.append(np.linalg.norm(tau_mb - _base_pd(q, v)))
            dem.append(np.linalg.norm(_base_pd(q, v)))
    ratios = np.array(ratios)
    print(f"\nfull (40) vs multibody: worst relative {worst:.3g}")
    print(f"|B gdd| / |C gd| for t >= 1 s: median {np.median(ratios):.3g}, max {ratios.max():.3g}")
    print(f"delivered - demanded torque: max {max(err):.3g} N m (demand up to {max(dem):.3g} N m)")
    assert worst < 1e-12
    assert ratios.max() < 0.05
    assert max(err) < 0.1 * max(dem)
