"""The single-call and batch fast paths of dq_mul and frame_change return what the general
broadcasting path returns, bit for bit, and fall back to it (and its errors) otherwise."""

import numpy as np
import pytest

import dqspace.dq as d
from dqspace.dq import _ufuncs as u
from support.random import random_pose


@pytest.fixture
def data(rng):
    A = random_pose(rng, (6,))
    B = random_pose(rng, (6,))
    X = rng.normal(size=(6, 6))
    return A, B, X


def variants(x):
    """The same values as: ndarray, read-only, list, strided view, Fortran 2-D, batch of 1."""
    ro = x.copy()
    ro.setflags(write=False)
    strided = np.zeros((x.shape[0], 2))[:, 0]
    strided[:] = x
    return [x, ro, list(x), strided, x[None, :], np.asfortranarray(x[None, :])]


def test_dq_mul_every_input_kind_matches_the_gufunc(data):
    A, B, _ = data
    ref = u.dq_mul(A[0], B[0])
    for a in variants(A[0]):
        for b in variants(B[0]):
            got = d.dq_mul(a, b)
            assert np.array_equal(np.reshape(got, -1), ref)
    assert np.array_equal(d.dq_mul(A, B), u.dq_mul(A, B))  # batch fast path
    assert np.array_equal(d.dq_mul(A[0], B), u.dq_mul(A[0], B))  # broadcast: general path


def test_frame_change_every_input_kind_matches_the_gufunc(data):
    A, _, X = data
    ref = u.dv_frame_change(A[0], X[0])
    for a in variants(A[0]):
        for x in variants(X[0]):
            assert np.array_equal(np.reshape(d.frame_change(a, x), -1), ref)
    assert np.array_equal(d.frame_change(A, X), u.dv_frame_change(A, X))


def test_fast_paths_fall_back_to_the_documented_errors(data):
    A, B, X = data
    bad = A[0].copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="a contains a non-finite value"):
        d.dq_mul(bad, B[0])
    with pytest.raises(ValueError, match=r"b must have shape \(\.\.\., 8\)"):
        d.dq_mul(A[0], np.ones(7))
    with pytest.raises(ValueError, match="dq_ba is not a unit dual quaternion"):
        d.frame_change(2 * A[0], X[0])
    with pytest.raises(ValueError, match=r"x_a must have shape \(\.\.\., 6\)"):
        d.frame_change(A[0], np.ones(8))
    huge = np.full(8, 1e200)  # finite inputs whose product overflows: an error, not NaN
    with pytest.raises(ValueError, match="dq_mul overflowed"):
        d.dq_mul(huge, huge)
    with pytest.raises(ValueError, match="dq_mul overflowed"):
        d.dq_mul(np.tile(huge, (3, 1)), np.tile(huge, (3, 1)))


def test_batches_never_reach_the_single_vector_dispatch(data, monkeypatch):
    """A 2-D argument sent to the explicit-signature single-vector kernels fails numba's
    dispatch slowly (~70 us of type-conversion search, more than the product itself by
    two orders): dq_mul and frame_change must route batches, broadcasts and rows of one
    elsewhere before dispatching."""
    from dqspace.dq import algebra

    A, B, X = data
    calls = []

    def spy(real):
        def f(*args):
            calls.append(tuple(np.ndim(x) for x in args[:2]))
            return real(*args)

        return f

    monkeypatch.setattr(algebra, "_mul_1", spy(algebra._mul_1))
    monkeypatch.setattr(algebra, "_fc_1", spy(algebra._fc_1))
    for a, b in ((A, B), (A[:1], B[:1]), (A[0], B), (A, B[0]), (A[None], B[None])):
        assert np.array_equal(d.dq_mul(a, b), u.dq_mul(a, b))
    for q, x in ((A, X), (A[:1], X[:1]), (A[0], X), (A, X[0])):
        assert np.array_equal(d.frame_change(q, x), u.dv_frame_change(q, x))
    assert calls == []
    d.dq_mul(A[0], B[0])
    d.frame_change(A[0], X[0])
    assert calls == [(1, 1), (1, 1)]  # the single-vector calls still take the fast path
