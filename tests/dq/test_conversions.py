"""Conversions to and from rotation matrices, transforms, axis-angle and roll-pitch-yaw."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import dqspace.dq as d
from support.random import random_pose, random_unit_quat


def test_rotation_matrix_round_trip_against_scipy(rng):
    q = random_unit_quat(rng, (300,))
    R = d.rotation_matrix_from_quat(q)
    ref = Rotation.from_quat(q[:, [1, 2, 3, 0]]).as_matrix()  # scipy is scalar-last
    assert np.abs(R - ref).max() < 1e-14
    q2 = d.quat_from_rotation_matrix(R)
    assert np.all(q2[:, 0] >= 0)
    assert np.abs(np.abs((q2 * q).sum(-1)) - 1).max() < 1e-14


@pytest.mark.parametrize("angle", [0.0, 1e-9, np.pi / 2, np.pi - 1e-12, np.pi])
def test_matrix_to_quat_is_robust_near_half_turn(angle, rng):
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    q = d.quat_from_axis_angle(axis, angle)
    R = d.rotation_matrix_from_quat(q)
    q2 = d.quat_from_rotation_matrix(R)
    assert np.allclose(d.rotation_matrix_from_quat(q2), R, atol=1e-15)
    assert abs(abs(q2 @ q) - 1) < 1e-15


def test_transform_round_trip(rng):
    a = random_pose(rng, (20,))
    a[a[:, 0] < 0] *= -1
    T = d.transform_from_dq(a)
    assert np.allclose(d.dq_from_transform(T), a, atol=1e-14)
    p = rng.normal(size=3)
    # transform of a point equals q p q* + r
    want = d.quat_rotate(a[0, :4], p) + d.translation_from_dq(a[0])
    assert np.allclose(T[0, :3, :3] @ p + T[0, :3, 3], want, atol=1e-14)
    assert np.allclose(d.dq_from_rotation_translation(T[:, :3, :3], T[:, :3, 3]), a, atol=1e-14)


def test_axis_angle_round_trip(rng):
    axis = rng.normal(size=(10, 3))
    angle = rng.uniform(0, 2 * np.pi, size=10)
    q = d.quat_from_axis_angle(axis, angle)
    ax2, an2 = d.axis_angle_from_quat(q)
    assert np.allclose(an2, angle, atol=1e-12)
    assert np.allclose(ax2, axis / np.linalg.norm(axis, axis=-1, keepdims=True), atol=1e-12)


def test_rpy_matches_scipy_extrinsic_xyz(rng):
    rpy = rng.uniform([-180, -89, -180], [180, 89, 180], size=(50, 3))
    q = d.quat_from_rpy_deg(rpy)
    ref = Rotation.from_euler("xyz", rpy, degrees=True).as_matrix()  # extrinsic x-y-z
    assert np.abs(d.rotation_matrix_from_quat(q) - ref).max() < 1e-14
    assert np.allclose(d.rpy_deg_from_quat(q), rpy, atol=1e-10)


def test_rpy_gimbal_lock_keeps_the_rotation():
    q = d.quat_from_rpy_deg([30.0, 90.0, 10.0])
    rpy = d.rpy_deg_from_quat(q)
    assert rpy[0] == 0.0
    assert np.allclose(
        d.rotation_matrix_from_quat(d.quat_from_rpy_deg(rpy)),
        d.rotation_matrix_from_quat(q),
        atol=1e-7,
    )


def test_translation_accessors(rng):
    q = random_unit_quat(rng)
    r = rng.normal(size=3)
    a = d.dq_from_quat_translation(q, r)
    assert np.allclose(d.translation_from_dq(a), r, atol=1e-15)
    assert np.allclose(d.body_translation_from_dq(a), d.rotation_matrix_from_quat(q).T @ r)
    assert np.allclose(d.quat_from_dq(a), q)
    assert np.allclose(d.dq_from_translation(r), d.dq_from_quat_translation([1, 0, 0, 0], r))
    assert np.allclose(d.dq_from_quat(q), d.dq_from_quat_translation(q, [0, 0, 0]))
    assert np.allclose(d.dq_from_rpy_deg([0, 0, 0], r), d.dq_from_translation(r))
