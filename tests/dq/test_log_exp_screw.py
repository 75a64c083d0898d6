"""Logarithms, exponentials, power, screw parameters and ScLERP."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import solve_ivp

import dqspace.dq as d
from support.random import random_pose, random_unit_quat
from support.strategies import dual_vectors, poses


def same_pose(a, b, tol=1e-12):
    return min(np.abs(a - b).max(), np.abs(a + b).max()) <= tol


# angles that stress the branches: identity, tiny, series threshold, half-turn, near 2 pi
ANGLES = [
    0.0,
    1e-12,
    1e-8,
    9.9e-5,
    1.01e-4,
    0.3,
    np.pi - 1e-9,
    np.pi,
    np.pi + 1e-9,
    2 * np.pi - 1e-6,
]


@pytest.mark.parametrize("theta", ANGLES)
def test_log_exp_round_trip_at_critical_angles(theta, rng):
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    q = d.quat_from_axis_angle(n, theta)
    a = d.dq_from_quat_translation(q, rng.normal(size=3))
    x = d.dq_log(a)
    assert np.allclose(np.linalg.norm(x[:3]), theta / 2, atol=1e-15, rtol=1e-12)
    assert np.abs(d.dq_exp(x) - a).max() <= 2e-15 * 8
    # and the other way round from the Lie-algebra side
    assert np.abs(d.dq_log(d.dq_exp(x)) - x).max() <= 1e-13


@given(poses())
def test_exp_log_is_identity(a):
    assert np.abs(d.dq_exp(d.dq_log(a)) - a).max() <= 1e-13 * (1 + np.abs(a).max())


@given(dual_vectors)
def test_log_exp_is_identity_inside_the_principal_branch(x):
    x = x.copy()
    n = np.linalg.norm(x[:3])
    if n >= np.pi - 1e-6:  # log returns 1/2 theta in [0, pi]
        x[:3] *= (np.pi - 1e-3) / n
    assert np.abs(d.dq_log(d.dq_exp(x)) - x).max() <= 1e-12 * (1 + np.abs(x).max())


def test_log_of_table1_is_half_angle_and_half_body_position(rng):
    a = random_pose(rng)
    x = d.dq_log(a)
    axis, angle = d.axis_angle_from_quat(a[:4])
    assert np.allclose(x[:3], 0.5 * angle * axis, atol=1e-14)
    assert np.allclose(x[3:], 0.5 * d.body_translation_from_dq(a), atol=1e-14)


def test_sign_ambiguity_same_pose_different_log(rng):
    a = random_pose(rng)
    la, lb = d.dq_log(a), d.dq_log(-a)
    assert np.allclose(d.dq_exp(lb), -a, atol=1e-14)
    # same pose: same transform, same position
    assert np.allclose(d.transform_from_dq(a), d.transform_from_dq(-a), atol=1e-14)
    assert np.allclose(la[3:], lb[3:], atol=1e-14)
    # rotation angles theta and 2 pi - theta about opposite axes
    ta, tb = 2 * np.linalg.norm(la[:3]), 2 * np.linalg.norm(lb[:3])
    assert np.isclose(ta + tb, 2 * np.pi, atol=1e-12)


@pytest.mark.parametrize("theta", ANGLES[:-1])
def test_screw_log_exp_round_trip(theta, rng):
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    a = d.dq_from_quat_translation(d.quat_from_axis_angle(n, theta), rng.normal(size=3))
    x = d.dq_screw_log(a)
    assert np.abs(d.dq_screw_exp(x) - a).max() <= 1e-14 * 8
    assert np.abs(d.dq_screw_log(d.dq_screw_exp(x)) - x).max() <= 1e-12


def test_screw_exp_is_the_flow_of_a_constant_body_twist(rng):
    """exp(1/2 xi t) solves d/dt q = 1/2 q o xi (an independent ODE solve)."""
    xi = rng.normal(size=6)
    q0 = random_pose(rng)
    pure = np.concatenate([[0.0], xi[:3], [0.0], xi[3:]])

    def rhs(_, y):
        return 0.5 * d.dq_mul(y, pure)

    t = 1.7
    sol = solve_ivp(rhs, (0, t), q0, rtol=1e-12, atol=1e-13, method="DOP853")
    assert np.abs(sol.y[:, -1] - d.dq_mul(q0, d.dq_screw_exp(0.5 * xi * t))).max() < 1e-10


def test_pow_matches_repeated_product_and_sclerp_endpoints(rng):
    a = random_pose(rng)
    if a[0] < 0:
        a = -a
    assert np.allclose(d.dq_pow(a, 3.0), d.dq_mul(a, d.dq_mul(a, a)), atol=1e-13)
    assert np.allclose(d.dq_mul(d.dq_pow(a, 0.5), d.dq_pow(a, 0.5)), a, atol=1e-13)
    b = random_pose(rng)
    assert same_pose(d.sclerp(a, b, 0.0), a, 1e-13)
    assert same_pose(d.sclerp(a, b, 1.0), b, 1e-13)
    ts = np.linspace(0, 1, 7)
    path = d.sclerp(a, b, ts)
    assert path.shape == (7, 8)
    # constant screw: consecutive relative displacements are equal
    rel = d.dq_mul(d.dq_conj(path[:-1]), path[1:])
    assert np.abs(rel - rel[0]).max() < 1e-12


def test_screw_parameters_round_trip_and_geometry(rng):
    a = random_pose(rng)
    s = d.screw_parameters(a)
    assert np.isclose(np.linalg.norm(s.l), 1.0) and abs(s.l @ s.m) < 1e-12
    assert same_pose(d.dq_from_screw_parameters(s.theta, s.d, s.l, s.m), a, 1e-12)
    # a point on the axis moves only along the axis by d
    p_axis = np.cross(s.l, s.m)  # closest point of the axis to the origin
    T = d.transform_from_dq(a)
    moved = T[:3, :3] @ p_axis + T[:3, 3]
    assert np.allclose(moved - p_axis, s.d * s.l, atol=1e-12)


def test_screw_parameters_of_pure_translation(rng):
    a = d.dq_from_translation([0.0, 3.0, 4.0])
    s = d.screw_parameters(a)
    assert s.theta == 0.0 and np.isclose(s.d, 5.0) and np.allclose(s.l, [0, 0.6, 0.8])


@given(st.floats(-3.0, 3.0))
def test_quaternion_exp_log_round_trip(phi):
    q = d.quat_exp([phi, 0.0, 0.0])
    assert np.allclose(d.quat_exp(d.quat_log(q)), q, atol=1e-15)


def test_quat_log_batch_near_half_turn(rng):
    q = random_unit_quat(rng, (50,))
    q[:, 0] = 1e-17 * rng.normal(size=50)  # exactly or nearly half-turns
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    v = d.quat_log(q)
    assert np.allclose(np.linalg.norm(v, axis=-1), np.pi / 2, atol=1e-15)
    assert np.allclose(d.quat_exp(v), q, atol=1e-15)


def test_log_of_subnormal_vector_parts_does_not_overflow():
    """Found by hypothesis: q_r = [-1, 5.6e-309, ...] made the angle/|v| factor overflow."""
    for w in (-1.0, 1.0):
        a = np.array([w, 5.6e-309, 5.6e-309, 5.6e-309, -0.0, 0.0, 0.0, 0.0])
        x = d.dq_log(a)
        assert np.all(np.isfinite(x))
        assert np.abs(d.dq_exp(x) - a).max() < 1e-15


def test_screw_log_near_a_full_turn_raises_instead_of_returning_inf():
    import pytest

    a = np.array([-1.0 + 1e-16, 5.6e-309, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="too close to a 2 pi rotation"):
        d.dq_screw_log(a)
    assert np.all(np.isfinite(d.dq_screw_log(-a)))


def test_log_of_a_full_turn_with_a_subnormal_axis_keeps_the_angle():
    # found by hypothesis: the axis of subnormal vector parts taken as x / |x| was off by
    # ~1e-12 (|x| of subnormals has few digits), so exp(log(q)) missed q by 1e-12
    a = np.array([-1.0, 2.22507386e-313, 2.22507386e-313, 2.22507386e-313, 0, 0, 0, 0])
    x = d.dq_log(a)
    assert abs(np.linalg.norm(x[:3]) - np.pi) <= 4 * np.finfo(float).eps * np.pi
    np.testing.assert_allclose(d.dq_exp(x), a, atol=1e-15)
