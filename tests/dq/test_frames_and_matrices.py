"""Frame changes of twists and wrenches, the adjoint, and the matrix forms of eq. (3)."""

import numpy as np
from hypothesis import given

import dqspace.dq as d
from support.random import random_pose
from support.strategies import dual_vectors, general_dqs, poses


@given(poses(), dual_vectors)
def test_twist_frame_change_is_rotation_plus_cross(a, x):
    """v_b = R^T v_a + (R^T w) x r^b: velocity of b's origin from that of a's."""
    R = d.rotation_matrix_from_dq(a)
    r_b = d.body_translation_from_dq(a)
    w_b = R.T @ x[:3]
    expect = np.concatenate([w_b, R.T @ x[3:] + np.cross(w_b, r_b)])
    got = d.frame_change(a, x)
    assert np.allclose(got, expect, atol=1e-12 * (1 + np.abs(x).max()) * (1 + np.abs(a).max()))


@given(poses(), dual_vectors)
def test_wrench_frame_change_moves_torque_reference_point(a, f):
    """tau_b = R^T (tau_a - r^a x f_a): moment about b's origin."""
    R = d.rotation_matrix_from_dq(a)
    r_a = d.translation_from_dq(a)
    expect = np.concatenate([R.T @ f[:3], R.T @ (f[3:] - np.cross(r_a, f[:3]))])
    got = d.frame_change(a, f)
    assert np.allclose(got, expect, atol=1e-12 * (1 + np.abs(f).max()) * (1 + np.abs(a).max()))


@given(poses(), dual_vectors, dual_vectors)
def test_power_is_frame_invariant(a, w, f):
    wb, fb = d.frame_change(a, w), d.frame_change(a, f)
    p_a = w @ d.swap(f)
    p_b = wb @ d.swap(fb)
    assert np.isclose(p_a, p_b, atol=1e-10 * (1 + abs(p_a)) * (1 + np.abs(a).max()) ** 2)


@given(poses(), dual_vectors)
def test_frame_change_is_the_quaternion_sandwich(a, x):
    pure = np.concatenate([[0.0], x[:3], [0.0], x[3:]])
    s = d.dq_mul(d.dq_conj(a), d.dq_mul(pure, a))
    got = d.frame_change(a, x)
    tol = 1e-12 * (1 + np.abs(x).max()) * (1 + np.abs(a).max()) ** 2
    assert np.allclose(got, s[[1, 2, 3, 5, 6, 7]], atol=tol)
    assert abs(s[0]) < tol and abs(s[4]) < tol
    assert np.allclose(d.frame_change_inv(a, got), x, atol=tol * 10)


@given(poses(), dual_vectors)
def test_adjoint_matrix_equals_frame_change(a, x):
    Ad = d.adjoint_matrix(a)
    tol = 1e-12 * (1 + np.abs(x).max()) * (1 + np.abs(a).max())
    assert np.allclose(Ad @ x, d.frame_change(a, x), atol=tol)


@given(general_dqs(), general_dqs())
def test_left_and_right_matrices_equal_the_product(a, b):
    ab = d.dq_mul(a, b)
    tol = 1e-12 * (1 + np.abs(ab).max())
    assert np.allclose(d.dq_left_matrix(a) @ b, ab, atol=tol)
    assert np.allclose(d.dq_right_matrix(b) @ a, ab, atol=tol)


def test_frame_change_matrix_of_eq24(rng):
    """(P24): q* o s o q = [q*]^+ [q]^- s for any dual quaternion s."""
    a = random_pose(rng)
    s = rng.normal(size=8)
    Q = d.dq_left_matrix(d.dq_conj(a)) @ d.dq_right_matrix(a)
    assert np.allclose(Q @ s, d.dq_mul(d.dq_conj(a), d.dq_mul(s, a)), atol=1e-13)


@given(dual_vectors, dual_vectors, dual_vectors)
def test_dual_cross_is_a_lie_bracket(x, y, z):
    c = d.dual_cross
    assert np.allclose(c(x, y), -c(y, x), atol=1e-12)
    jac = c(x, c(y, z)) + c(y, c(z, x)) + c(z, c(x, y))
    assert np.abs(jac).max() <= 1e-11 * (1 + np.abs(x).max() * np.abs(y).max() * np.abs(z).max())


def test_frame_change_commutes_with_bracket(rng):
    a = random_pose(rng)
    x, y = rng.normal(size=6), rng.normal(size=6)
    lhs = d.frame_change(a, d.dual_cross(x, y))
    rhs = d.dual_cross(d.frame_change(a, x), d.frame_change(a, y))
    assert np.allclose(lhs, rhs, atol=1e-12)


def test_composition_of_frame_changes(rng):
    """x^c = Ad(q_cb) Ad(q_ba) x^a and q_ca = q_ba o q_cb (composition, docs/conventions.md)."""
    q_ba, q_cb = random_pose(rng), random_pose(rng)
    x = rng.normal(size=6)
    two = d.frame_change(q_cb, d.frame_change(q_ba, x))
    one = d.frame_change(d.dq_mul(q_ba, q_cb), x)
    assert np.allclose(two, one, atol=1e-12)


def test_golden_conventions():
    """wxyz order; q_ba maps b to a; r^a in the dual part as 1/2 r o q."""
    q = d.quat_from_axis_angle([0, 0, 1], np.pi / 2)
    assert np.allclose(q, [np.sqrt(0.5), 0, 0, np.sqrt(0.5)])
    a = d.dq_from_quat_translation(q, [1.0, 2.0, 3.0])
    assert np.allclose(d.quat_rotate(q, [1, 0, 0]), [0, 1, 0])
    assert np.allclose(d.translation_from_dq(a), [1, 2, 3])
    assert np.allclose(d.body_translation_from_dq(a), [2, -1, 3])  # R^T r
    T = d.transform_from_dq(a)
    assert np.allclose(T @ [1, 0, 0, 1], [1, 3, 3, 1])
