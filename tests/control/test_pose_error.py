"""Pose error (P43-P44), its Table-1 logarithm and the body-frame twist error.

References: scipy's rotation matrices / rotation vectors, poses built from
(R, p) by hand, and finite differences of the error along exact screw motions.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dqspace.control import PoseError, dq_error, pose_error, shortest_sign, twist_error
from dqspace.dq import (
    dq_conj,
    dq_from_quat_translation,
    dq_mul,
    dq_screw_exp,
    quat_from_axis_angle,
    rotation_matrix_from_dq,
    translation_from_dq,
)
from support.random import random_pose


def test_error_is_pose_of_body_in_desired_frame(rng):
    """e^ = q^_d* o q^ is the pose of B in D:
    rotation R_d^T R, log = [rotvec / 2, R^T (p - p_d) / 2]."""
    dq_IB = random_pose(rng, (50,))
    dq_ID = random_pose(rng, (50,))
    err = pose_error(dq_IB, dq_ID)
    R, p = rotation_matrix_from_dq(dq_IB), translation_from_dq(dq_IB)
    Rd, pd = rotation_matrix_from_dq(dq_ID), translation_from_dq(dq_ID)
    R_DB = np.einsum("kji,kjl->kil", Rd, R)
    rotvec = Rotation.from_matrix(R_DB).as_rotvec()  # angle in [0, pi]
    r_B = np.einsum("kji,kj->ki", R, p - pd)
    assert np.all(err.dq[:, 0] >= 0.0)
    np.testing.assert_allclose(rotation_matrix_from_dq(err.dq), R_DB, atol=1e-12)
    np.testing.assert_allclose(err.log[:, :3], 0.5 * rotvec, atol=1e-10)
    np.testing.assert_allclose(err.log[:, 3:], 0.5 * r_B, atol=1e-12)
    np.testing.assert_allclose(err.angle, np.linalg.norm(rotvec, axis=1), atol=1e-10)
    np.testing.assert_allclose(err.distance, np.linalg.norm(p - pd, axis=1), atol=1e-12)


def test_sign_of_either_pose_does_not_change_the_error(rng):
    dq_IB = random_pose(rng, (40,))
    dq_ID = random_pose(rng, (40,))
    w_B = rng.normal(size=(40, 6))
    w_D = rng.normal(size=(40, 6))
    ref = pose_error(dq_IB, dq_ID, w_B, w_D)
    for a, b in ((-dq_IB, dq_ID), (dq_IB, -dq_ID), (-dq_IB, -dq_ID)):
        e = pose_error(a, b, w_B, w_D)
        np.testing.assert_array_equal(e.dq, ref.dq)
        np.testing.assert_array_equal(e.log, ref.log)
        np.testing.assert_allclose(e.twist, ref.twist, atol=1e-14)


def test_half_turn_sign_is_canonical():
    """At exactly 180 deg both signs have a zero scalar part; the choice is still unique."""
    q = np.array([0.0, 0.0, -1.0, 0.0])  # pi about -y, the same as pi about +y
    dq = dq_from_quat_translation(q, [0.1, 0.2, 0.3])
    a, b = dq_error(dq, np.eye(8)[0]), dq_error(-dq, np.eye(8)[0])
    np.testing.assert_array_equal(a, b)
    assert a[2] > 0.0
    np.testing.assert_array_equal(shortest_sign(-a), a)


def _screw_path(dq0, xi, t):
    """Pose at time t under the constant body twist xi (exact)."""
    return dq_mul(dq0, dq_screw_exp(0.5 * xi * t))


def test_twist_error_is_the_rate_of_the_pose_error(rng):
    """d/dt e^ = 1/2 e^ o w^_e (central differences along exact screw motions of B and D),
    and the printed (P45) without the frame change misses it when D rotates."""
    h = 1e-5
    worst = 0.0
    for _ in range(20):
        dq_B0, dq_D0 = random_pose(rng), random_pose(rng)
        xi_B, xi_D = rng.normal(size=6), rng.normal(size=6)

        def e_at(t, dq_B0=dq_B0, dq_D0=dq_D0, xi_B=xi_B, xi_D=xi_D):
            return dq_error(_screw_path(dq_B0, xi_B, t), _screw_path(dq_D0, xi_D, t))

        e0 = e_at(0.0)
        de = (e_at(h) - e_at(-h)) / (2 * h)
        w_e = twist_error(e0, xi_B, xi_D)
        pure = np.concatenate([[0.0], w_e[:3], [0.0], w_e[3:]])
        predicted = 0.5 * dq_mul(e0, pure)
        worst = max(worst, np.abs(de - predicted).max())
        naive = xi_B - xi_D
        pure_naive = np.concatenate([[0.0], naive[:3], [0.0], naive[3:]])
        assert np.abs(de - 0.5 * dq_mul(e0, pure_naive)).max() > 1e-3
    assert worst < 1e-8


def test_twist_error_vanishes_when_following_the_reference(rng):
    dq = random_pose(rng)
    w = rng.normal(size=6)
    e = pose_error(dq, dq, w, w)
    np.testing.assert_allclose(e.log, 0.0, atol=1e-15)
    np.testing.assert_allclose(e.twist, 0.0, atol=1e-14)


def test_twist_error_carries_desired_twist_into_body_frame():
    """B = D rotated 90 deg about z: a desired x-rate is a -y rate in B."""
    dq_ID = np.eye(8)[0]
    dq_IB = dq_from_quat_translation(quat_from_axis_angle([0, 0, 1.0], np.pi / 2), [0, 0, 0])
    e = pose_error(dq_IB, dq_ID, np.zeros(6), [1.0, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(e.twist, [0, 1.0, 0, 0, 0, 0], atol=1e-15)  # 0 - (0, -1, 0)
    # the same through the composition e^ = q^_ID* o q^_IB
    np.testing.assert_allclose(e.dq, dq_mul(dq_conj(dq_ID), dq_IB), atol=1e-15)


def test_error_object_fields():
    e = pose_error(np.eye(8)[0], np.eye(8)[0])
    assert isinstance(e, PoseError) and e.twist is None
    assert e.angle == 0.0 and e.distance == 0.0


def test_non_unit_pose_is_rejected():
    with pytest.raises(ValueError, match="dq_IB"):
        pose_error(2 * np.eye(8)[0], np.eye(8)[0])


def test_desired_twist_without_body_twist_is_rejected():
    with pytest.raises(ValueError, match="w_IB_B"):
        pose_error(np.eye(8)[0], np.eye(8)[0], None, np.zeros(6))
