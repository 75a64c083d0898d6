"""The DualQuaternion value class gives the same numbers as the functions it wraps."""

import numpy as np
import pytest

import dqspace.dq as d
from dqspace.dq import DualQuaternion
from support.random import random_pose


def test_operators_match_functions(rng):
    a, b = random_pose(rng), random_pose(rng)
    A, B = DualQuaternion(a), DualQuaternion(b)
    assert np.array_equal((A * B).array, d.dq_mul(a, b))
    assert np.array_equal(A.conj().array, d.dq_conj(a))
    assert np.array_equal(A.log(), d.dq_log(a))
    assert np.array_equal((A**0.3).array, d.dq_pow(a, 0.3))
    assert (A * A.inv()).allclose(DualQuaternion.identity())
    assert np.allclose(A.matrix, d.transform_from_dq(a))
    assert np.allclose(DualQuaternion.exp(A.log()).array, a)


def test_apply_maps_points_to_reference_frame(rng):
    a = random_pose(rng)
    p = rng.normal(size=(5, 3))
    T = d.transform_from_dq(a)
    assert np.allclose(DualQuaternion(a).apply(p), p @ T[:3, :3].T + T[:3, 3])


def test_constructors_and_batches():
    T = DualQuaternion.from_rpy_deg([0, 0, 90], [1.0, 0, 0])
    assert np.allclose(T.apply([1.0, 0, 0]), [1, 1, 0])
    assert np.allclose(T.rpy_deg(), [0, 0, 90])
    R = DualQuaternion.from_axis_angle([0, 0, 1], np.pi / 2, [1.0, 0, 0])
    assert R.allclose(T)
    batch = DualQuaternion(np.stack([T.array, R.array, (-T).array if False else T.array]))
    assert len(batch) == 3 and batch.shape == (3,)
    assert batch[1].allclose(R)
    assert "DualQuaternion(real=" in repr(T)
    with pytest.raises(TypeError):
        len(T)


def test_value_is_immutable(rng):
    a = random_pose(rng)
    A = DualQuaternion(a)
    a[0] = 5.0  # the caller's array is copied
    assert A.array[0] != 5.0
    with pytest.raises(ValueError):
        A.array[0] = 1.0


def test_sign_equivalence_in_allclose(rng):
    a = random_pose(rng)
    assert DualQuaternion(a).allclose(-a)
    assert not DualQuaternion(a).allclose(-a, same_pose=False)
