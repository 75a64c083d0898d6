"""Reference trajectories: the lemniscate of (P51), ScLERP screw motions, hold.

References: the printed formula (P51) evaluated here, central finite
differences of positions and poses, ``dqspace.dq.sclerp`` for the screw path.
"""

import numpy as np
import pytest

from dqspace.control import (
    LEMNISCATE_ORIENTATION,
    ConstantPose,
    JointReference,
    Lemniscate,
    PoseReference,
    ScrewMotion,
    quintic_time_scaling,
)
from dqspace.dq import (
    dq_mul,
    rotation_matrix_from_quat,
    sclerp,
    translation_from_dq,
)
from support.random import random_pose


def _pure(x):
    return np.concatenate([[0.0], x[:3], [0.0], x[3:]])


def _check_reference_derivatives(traj, times, h=1e-5, tol=1e-8):
    """d/dt pose = 1/2 pose o twist and d/dt twist = acc, by central differences."""
    worst = 0.0
    for t in times:
        ref = traj(t)
        dpose = (traj(t + h).pose - traj(t - h).pose) / (2 * h)
        worst = max(worst, np.abs(dpose - 0.5 * dq_mul(ref.pose, _pure(ref.twist))).max())
        dtwist = (traj(t + h).twist - traj(t - h).twist) / (2 * h)
        worst = max(worst, np.abs(dtwist - ref.acc).max())
    assert worst < tol


def test_lemniscate_follows_p51_with_the_paper_parameters():
    lem = Lemniscate()
    assert (lem.r, lem.zeta, lem.theta_m, lem.x0, lem.y0, lem.z0) == (0.1, 1.0, 0.0, 0.3, 0, 0.7)
    t = np.linspace(0.0, 20.0, 201)
    r, z, th = 0.1, 1.0, 0.0
    expected = np.column_stack(
        [
            r * (1 + np.cos(z * t + th)) + 0.3,
            r * np.sin(z * t + th),
            2 * r * np.sin(z * t / 2 + th / 2) + 0.7,
        ]
    )
    np.testing.assert_allclose(lem.position(t), expected, atol=1e-15)
    np.testing.assert_allclose(lem.position(0.0), [0.5, 0.0, 0.7], atol=1e-15)
    np.testing.assert_allclose(lem.position(4 * np.pi), [0.5, 0.0, 0.7], atol=1e-14)


def test_lemniscate_derivatives_match_finite_differences():
    lem = Lemniscate(r=0.15, zeta=1.3, theta_m=0.4, x0=0.1, y0=-0.2, z0=0.5)
    t = np.linspace(0.0, 10.0, 37)
    h = 1e-5
    v_fd = (lem.position(t + h) - lem.position(t - h)) / (2 * h)
    a_fd = (lem.velocity(t + h) - lem.velocity(t - h)) / (2 * h)
    a_fd2 = (lem.position(t + h) - 2 * lem.position(t) + lem.position(t - h)) / h**2
    np.testing.assert_allclose(lem.velocity(t), v_fd, atol=1e-10)
    np.testing.assert_allclose(lem.acceleration(t), a_fd, atol=1e-10)
    np.testing.assert_allclose(lem.acceleration(t), a_fd2, atol=1e-5)


def test_lemniscate_pose_reference_is_consistent():
    lem = Lemniscate()
    R = rotation_matrix_from_quat(LEMNISCATE_ORIENTATION)
    np.testing.assert_allclose(R[:, 2], [-np.cos(np.pi / 6), 0, np.sin(np.pi / 6)], atol=1e-15)
    for t in (0.0, 1.3, 7.7):
        ref = lem(t)
        np.testing.assert_allclose(translation_from_dq(ref.pose), lem.position(t), atol=1e-15)
        np.testing.assert_allclose(ref.twist[:3], 0.0)
        np.testing.assert_allclose(R @ ref.twist[3:], lem.velocity(t), atol=1e-15)
        np.testing.assert_allclose(R @ ref.acc[3:], lem.acceleration(t), atol=1e-15)
    _check_reference_derivatives(lem, np.linspace(0.0, 12.0, 13))


def test_screw_motion_is_sclerp_with_quintic_timing(rng):
    a, b = random_pose(rng), random_pose(rng)
    motion = ScrewMotion(a, b, duration=4.0, t0=1.0)
    for t in np.linspace(1.0, 5.0, 9):
        s, _, _ = quintic_time_scaling((t - 1.0) / 4.0)
        np.testing.assert_allclose(motion(t).pose, sclerp(a, b, s), atol=1e-12)
    np.testing.assert_allclose(motion(0.0).pose, a, atol=1e-15)
    end = motion(9.0).pose
    np.testing.assert_allclose(end * np.sign(end @ b), b, atol=1e-12)
    for t in (0.0, 1.0, 5.0, 6.0):  # at rest at both ends and outside
        np.testing.assert_allclose(motion(t).twist, 0.0, atol=1e-15)
        np.testing.assert_allclose(motion(t).acc, 0.0, atol=1e-15)
    _check_reference_derivatives(motion, np.linspace(1.1, 4.9, 11))


def test_screw_motion_twist_keeps_one_screw_axis(rng):
    motion = ScrewMotion(random_pose(rng), random_pose(rng), duration=2.0)
    xi = np.array([motion(t).twist for t in np.linspace(0.1, 1.9, 7)])
    unit = xi / np.linalg.norm(xi, axis=1, keepdims=True)
    np.testing.assert_allclose(unit, np.broadcast_to(unit[0], unit.shape), atol=1e-12)


def test_quintic_scaling_derivatives():
    tau = np.linspace(0.0, 1.0, 41)
    h = 1e-6
    s, ds, dds = quintic_time_scaling(tau)
    sp, dsp, _ = quintic_time_scaling(tau[1:-1] + h)
    sm, dsm, _ = quintic_time_scaling(tau[1:-1] - h)
    np.testing.assert_allclose(ds[1:-1], (sp - sm) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(dds[1:-1], (dsp - dsm) / (2 * h), atol=1e-7)
    assert (s[0], s[-1], ds[0], ds[-1], dds[0], dds[-1]) == (0, 1, 0, 0, 0, 0)


def test_constant_pose_holds(rng):
    p = random_pose(rng)
    ref = ConstantPose(p)(3.0)
    np.testing.assert_array_equal(ref.pose, p)
    assert not ref.twist.any() and not ref.acc.any()


def test_user_callable_is_a_trajectory():
    """The protocol is just ``trajectory(t) -> PoseReference``: a plain function will do."""
    lem = Lemniscate()

    def shifted(t):
        return lem(t + 1.0)

    _check_reference_derivatives(shifted, [0.0, 2.0])


def test_screw_motion_needs_positive_duration(rng):
    with pytest.raises(ValueError, match="duration must be positive"):
        ScrewMotion(random_pose(rng), random_pose(rng), duration=0.0)


def test_pose_reference_shapes_are_checked():
    with pytest.raises(ValueError, match=r"twist must have shape \(6,\)"):
        PoseReference(np.eye(8)[0], np.zeros(3))
    with pytest.raises(ValueError, match=r"pose must have shape \(8,\)"):
        PoseReference(np.zeros(4))


def test_pose_reference_must_be_unit():
    with pytest.raises(ValueError, match="pose"):
        PoseReference(np.full(8, 0.5))


def test_lemniscate_parameters_are_checked():
    with pytest.raises(ValueError, match="zeta must be finite"):
        Lemniscate(zeta=np.inf)
    with pytest.raises(ValueError, match="orientation"):
        Lemniscate(orientation=[2.0, 0, 0, 0])


def test_joint_reference_shapes_are_checked():
    with pytest.raises(ValueError, match=r"v must have shape \(3,\)"):
        JointReference(np.zeros(3), np.zeros(2), np.zeros(3))
