"""Dual PD law (P46): signs, frames, short way, closed-loop convergence of one rigid body.

References: scipy rotation vectors for the short way, the Lyapunov function
``V = 1/4 kp theta^2 + 1/4 kp |r|^2 + T`` (its rate along the exact dynamics
by finite differences), eigenvalues of the linearised closed loop, and a
simulation with ``simulate_rk4``.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dqspace.control import (
    ConstantPose,
    DualPD,
    PDGains,
    PoseReference,
    State,
    dual_pd,
    pose_error,
)
from dqspace.dq import (
    dq_from_quat_translation,
    dq_identity,
    dq_mul,
    quat_from_axis_angle,
    rotation_matrix_from_dq,
    swap,
)
from dqspace.multibody import (
    Body,
    Joint,
    JointType,
    Model,
    forward_dynamics,
    integrate,
    kinetic_energy,
    simulate_rk4,
)
from support.random import random_pose

MASS = 27.0
INERTIA = np.diag([0.4, 0.5, 0.6])
COM = np.array([0.05, -0.03, 0.02])  # off the frame origin: couples rotation and translation


def rigid_body():
    return Model.build([Body("body", None, Joint(JointType.FREE), MASS, COM, INERTIA)])


def test_rigid_body_converges_from_170_deg_and_1_m_without_unwinding():
    model = rigid_body()
    n = np.array([1.0, 2.0, -1.0]) / np.sqrt(6.0)
    r0 = np.array([0.6, -0.5, 0.6245])
    r0 /= np.linalg.norm(r0)  # 1 m
    q0 = dq_from_quat_translation(quat_from_axis_angle(n, np.radians(170.0)), r0)
    ref = ConstantPose(dq_identity())
    pd = DualPD(PDGains.from_natural_frequency(MASS, INERTIA, omega_n=2.0))

    def controller(t, q, v):
        return pd(t, State(q, v), ref(t)).generalized_force

    traj = simulate_rk4(model, q0, np.zeros(6), dt=0.01, n_steps=2000, controller=controller)
    err = pose_error(traj.q, dq_identity(), traj.v)
    theta0 = np.radians(170.0)
    assert err.angle[0] == pytest.approx(theta0, abs=1e-12)
    assert err.distance[0] == pytest.approx(1.0, abs=1e-12)
    # converged after 20 s
    assert err.angle[-1] < 1e-6 and err.distance[-1] < 1e-6
    assert np.abs(err.twist[-1]).max() < 1e-6
    # never beyond the initial angle ...
    assert err.angle.max() <= theta0 + 1e-12
    # ... and the continuous (unflipped) error never passes through 180 deg toward 190 deg:
    # its scalar part cos(theta/2) stays >= cos(85 deg)
    assert traj.q[:, 0].min() >= np.cos(np.radians(85.0)) - 1e-12
    # the angle falls monotonically while it is large (it rings near zero only)
    big = err.angle > np.radians(1.0)
    last_big = np.flatnonzero(big)[-1]
    assert np.all(np.diff(err.angle[: last_big + 1]) <= 0.0)


@pytest.mark.parametrize("deg", [179.0, 181.0])
def test_179_and_181_deg_take_the_short_way(deg):
    """The torque points toward the nearest equivalent rotation: -kp/2 times the
    rotation vector (angle in [0, pi]) of R_d^T R."""
    n = np.array([0.3, -0.4, 0.5]) / np.linalg.norm([0.3, -0.4, 0.5])
    dq_ID = dq_from_quat_translation(quat_from_axis_angle([0.0, 0.6, 0.8], 0.7), [1.0, 2, 3])
    rel = dq_from_quat_translation(quat_from_axis_angle(n, np.radians(deg)), [0.0, 0, 0])
    dq_IB = dq_mul(dq_ID, rel)
    gains = PDGains(kp_rot=3.0, kp_trans=1.0, kd_rot=0.5, kd_trans=0.5)
    cmd = DualPD(gains)(0.0, State(dq_IB, np.zeros(6)), ConstantPose(dq_ID)(0.0))
    R_DB = rotation_matrix_from_dq(dq_ID).T @ rotation_matrix_from_dq(dq_IB)
    rotvec = Rotation.from_matrix(R_DB).as_rotvec()
    np.testing.assert_allclose(cmd.wrench[3:], -1.5 * rotvec, atol=1e-12)
    # about the axis n: 179 deg -> turn back (negative), 181 deg -> carry on (positive)
    tau_n = cmd.wrench[3:] @ n
    expected = -1.5 * np.radians(179.0) * (1.0 if deg < 180 else -1.0)
    assert tau_n == pytest.approx(expected, rel=1e-12)


def test_negated_poses_give_the_same_command(rng):
    gains = PDGains(kp_rot=[1.0, 2.0, 3.0], kp_trans=[4.0, 5.0, 6.0], kd_rot=0.7, kd_trans=0.8)
    pd = DualPD(gains)
    for _ in range(30):
        dq_IB, dq_ID = random_pose(rng), random_pose(rng)
        w, wd = rng.normal(size=6), rng.normal(size=6)
        ref = PoseReference(dq_ID, wd)
        a = pd(0.0, State(dq_IB, w), ref).wrench
        b = pd(0.0, State(-dq_IB, w), ref).wrench
        c = pd(0.0, State(dq_IB, w), PoseReference(-dq_ID, wd)).wrench
        np.testing.assert_allclose(b, a, atol=1e-13)
        np.testing.assert_allclose(c, a, atol=1e-13)


def test_translational_error_drives_force_and_rotational_error_drives_torque():
    """The swap: log e^ = [theta n/2, r/2] -> f from r, tau from theta n; the generalized
    force of the base is [tau, f]."""
    gains = PDGains(kp_rot=2.0, kp_trans=10.0, kd_rot=0.0, kd_trans=0.0)
    pure_translation = dq_from_quat_translation([1.0, 0, 0, 0], [0.2, 0.0, 0.0])
    cmd = DualPD(gains)(0.0, State(pure_translation, np.zeros(6)), ConstantPose(dq_identity())(0))
    np.testing.assert_allclose(cmd.wrench, [-1.0, 0, 0, 0, 0, 0], atol=1e-15)  # f = -10 * 0.1
    np.testing.assert_allclose(cmd.generalized_force, [0, 0, 0, -1.0, 0, 0], atol=1e-15)
    spin = dq_from_quat_translation(quat_from_axis_angle([0, 0, 1.0], 0.4), [0.0, 0, 0])
    cmd = DualPD(gains)(0.0, State(spin, np.zeros(6)), ConstantPose(dq_identity())(0))
    np.testing.assert_allclose(cmd.wrench, [0, 0, 0, 0, 0, -0.4], atol=1e-15)  # tau = -2 * 0.2


def _closed_loop_rate(model, law, gains_scalar, rng):
    """dV/dt along the exact dynamics at random states, by central differences."""

    def V(q, v):
        e = pose_error(q, dq_identity())
        return (
            0.25 * gains_scalar[0] * e.angle**2
            + 0.25 * gains_scalar[1] * e.distance**2
            + kinetic_energy(model, q, v)
        )

    out = []
    for _ in range(20):
        q = dq_from_quat_translation(_unit_axis_quat(rng), rng.normal(size=3))
        v = rng.normal(size=6)
        a = forward_dynamics(model, q, v, law(q, v))
        h = 1e-6
        Vp = V(integrate(model, q, v, h), v + h * a)
        Vm = V(integrate(model, q, v, -h), v - h * a)
        out.append(((Vp - Vm) / (2 * h), v))
    return out


def _unit_axis_quat(rng):
    axis = rng.normal(size=3)
    return quat_from_axis_angle(axis / np.linalg.norm(axis), rng.uniform(0.2, 2.8))


def test_lyapunov_rate_with_isotropic_gains(rng):
    """With scalar gains dV/dt = -kd_rot |w|^2 - kd_trans |v|^2 exactly (the power of the
    commanded wrench on the body twist), which fixes both the swap and the signs."""
    model = rigid_body()
    g = PDGains(kp_rot=8.0, kp_trans=50.0, kd_rot=3.0, kd_trans=20.0)

    def law(q, v):
        return swap(dual_pd(pose_error(q, dq_identity(), v), g))

    for rate, v in _closed_loop_rate(model, law, (8.0, 50.0), rng):
        expected = -3.0 * v[:3] @ v[:3] - 20.0 * v[3:] @ v[3:]
        assert rate == pytest.approx(expected, rel=1e-6, abs=1e-6)


def _linearised_eigenvalues(model, law):
    q0 = dq_identity()

    def f(x):
        q = integrate(model, q0, x[:6])
        return np.concatenate([x[6:], forward_dynamics(model, q, x[6:], law(q, x[6:]))])

    A = np.empty((12, 12))
    h = 1e-6
    for i in range(12):
        d = np.zeros(12)
        d[i] = h
        A[:, i] = (f(d) - f(-d)) / (2 * h)
    return np.linalg.eigvals(A)


def test_printed_readings_of_p45_p46_are_unstable():
    """The deviations documented in docs/control.md, checked: our law is exponentially
    stable; the printed (P45) sign (w_d - w) and (P46) without the swap are not."""
    model = rigid_body()
    g = PDGains.from_natural_frequency(MASS, INERTIA, omega_n=2.0)

    def ours(q, v):
        return swap(dual_pd(pose_error(q, dq_identity(), v), g))

    def printed_sign(q, v):
        e = pose_error(q, dq_identity(), v)
        return swap(dual_pd(type(e)(e.dq, e.log, -e.twist), g))

    def no_swap(q, v):
        return dual_pd(pose_error(q, dq_identity(), v), g)  # u^ taken as f + eps tau

    assert _linearised_eigenvalues(model, ours).real.max() < -1.0
    assert _linearised_eigenvalues(model, printed_sign).real.max() > 1.0
    assert _linearised_eigenvalues(model, no_swap).real.max() > 1.0


@pytest.mark.parametrize("name", ["kp_rot", "kp_trans", "kd_rot", "kd_trans"])
def test_negative_gain_is_rejected(name):
    kw = dict(kp_rot=1.0, kp_trans=1.0, kd_rot=1.0, kd_trans=1.0)
    kw[name] = [1.0, -2.0, 1.0]
    with pytest.raises(ValueError, match=f"{name} must be non-negative"):
        PDGains(**kw)


def test_non_finite_gain_is_rejected():
    with pytest.raises(ValueError, match="kd_rot must be finite"):
        PDGains(kp_rot=1.0, kp_trans=1.0, kd_rot=np.nan, kd_trans=1.0)


def test_gain_of_wrong_shape_is_rejected():
    with pytest.raises(ValueError, match=r"kp_trans must be a scalar or have shape \(3,\)"):
        PDGains(kp_rot=1.0, kp_trans=[1.0, 2.0], kd_rot=1.0, kd_trans=1.0)


def test_pd_law_needs_the_twist_error():
    g = PDGains(1.0, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="twist error"):
        dual_pd(pose_error(dq_identity(), dq_identity()), g)
