"""Group axioms of the dual-quaternion product on random inputs (hypothesis)."""

import numpy as np
from hypothesis import given

import dqspace.dq as d
from support.strategies import general_dqs, poses

ID = d.dq_identity()


def close(a, b, tol=1e-12):
    scale = max(1.0, np.abs(a).max(), np.abs(b).max())
    return np.abs(np.asarray(a) - np.asarray(b)).max() <= tol * scale


@given(general_dqs(), general_dqs(), general_dqs())
def test_product_is_associative(a, b, c):
    assert close(d.dq_mul(d.dq_mul(a, b), c), d.dq_mul(a, d.dq_mul(b, c)), 1e-11)


@given(general_dqs())
def test_identity_is_neutral(a):
    assert np.array_equal(d.dq_mul(ID, a), a)
    assert np.array_equal(d.dq_mul(a, ID), a)


@given(general_dqs())
def test_inverse_gives_identity(a):
    # relative to the conditioning |a|^2 / |a_r|^2 of the inverse
    cond = (np.linalg.norm(a) / np.linalg.norm(a[:4])) ** 2
    assert close(d.dq_mul(a, d.dq_inv(a)), ID, 1e-12 * cond)
    assert close(d.dq_mul(d.dq_inv(a), a), ID, 1e-12 * cond)


@given(general_dqs(), general_dqs())
def test_conjugate_of_product_reverses(a, b):
    assert close(d.dq_conj(d.dq_mul(a, b)), d.dq_mul(d.dq_conj(b), d.dq_conj(a)))


@given(poses(), poses())
def test_unit_norm_preserved_by_product(a, b):
    n = d.dq_norm(d.dq_mul(a, b))
    scale = 1.0 + np.abs(a).max() * np.abs(b).max()
    assert abs(n[0] - 1.0) <= 1e-14 * 10 and abs(n[1]) <= 1e-14 * 10 * scale


@given(poses())
def test_conjugate_of_unit_is_inverse(a):
    assert close(d.dq_conj(a), d.dq_inv(a), 1e-13)


@given(general_dqs())
def test_norm_is_sqrt_of_a_times_conj(a):
    n = d.dq_norm(a)  # (|p|, (p.q)/|p|): n^2 = a a* = |p|^2 + eps 2 p.q
    prod = d.dq_mul(a, d.dq_conj(a))
    assert close(prod[[0, 4]], [n[0] ** 2, 2 * n[0] * n[1]])
    assert close(prod[[1, 2, 3, 5, 6, 7]], np.zeros(6))


@given(general_dqs())
def test_normalize_lands_on_manifold_and_fixes_units(a):
    u = d.dq_normalize(a)
    assert d.dq_unit_error(u) <= 1e-14 * (1 + np.abs(a[4:]).max() / np.linalg.norm(a[:4]))
    assert close(d.dq_normalize(u), u, 1e-14 * (1 + np.abs(u).max()))


def test_batch_broadcasting_matches_loop(rng):
    from support.random import random_pose

    A = random_pose(rng, (4, 5))
    B = random_pose(rng, (5,))
    out = d.dq_mul(A, B)
    assert out.shape == (4, 5, 8)
    for i in range(4):
        for j in range(5):
            assert np.array_equal(out[i, j], d.dq_mul(A[i, j], B[j]))
