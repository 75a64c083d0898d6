"""Every documented input error raises ValueError naming the argument; nothing returns NaN."""

import numpy as np
import pytest

import dqspace.dq as d
from dqspace.dq.checks import check_unit_vector

GOOD = d.dq_from_rpy_deg([10, 20, 30], [1, 2, 3])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: d.dq_mul(np.ones(7), GOOD), r"a must have shape \(\.\.\., 8\)"),
        (lambda: d.dq_mul(GOOD, np.ones((3, 4))), r"b must have shape"),
        (lambda: d.dq_mul(GOOD, [np.nan] * 8), r"b contains a non-finite value \(nan\)"),
        (lambda: d.dq_conj([np.inf] + [0] * 7), r"a contains a non-finite value \(inf\)"),
        (lambda: d.dq_inv([0, 0, 0, 0, 1, 0, 0, 0]), r"a has a zero real part"),
        (lambda: d.dq_normalize(np.zeros(8)), r"zero real part"),
        (lambda: d.dq_log(2 * GOOD), r"a is not a unit dual quaternion.*\|q_r\| = 2"),
        (lambda: d.dq_log(GOOD + [0, 0, 0, 0, 1e-3, 0, 0, 0]), r"q_r \. q_d"),
        (lambda: d.frame_change(2 * GOOD, np.zeros(6)), r"dq_ba is not a unit"),
        (lambda: d.frame_change(GOOD, np.zeros(5)), r"x_a must have shape \(\.\.\., 6\)"),
        (lambda: d.quat_inv(np.zeros(4)), r"q is a zero quaternion"),
        (lambda: d.quat_rotate([1, 1, 0, 0], [1, 0, 0]), r"q is not a unit quaternion"),
        (lambda: d.quat_from_axis_angle([0, 0, 0], 1.0), r"axis must be non-zero"),
        (lambda: d.quat_from_rotation_matrix(np.diag([1, 1, -1.0])), r"R is not a rotation"),
        (lambda: d.quat_from_rotation_matrix(2 * np.eye(3)), r"R is not a rotation"),
        (lambda: d.dq_from_transform(np.ones((4, 4))), r"not a rotation"),
        (lambda: d.dq_pow(GOOD, np.nan), r"t contains a non-finite"),
        (lambda: d.dq_screw_log(np.r_[-1.0, 0, 0, 0, 0, 0, 0, 0]), r"2 pi rotation"),
        (lambda: d.dq_mul("abc", GOOD), r"a must be a real numeric array"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_batch_error_names_the_batch_index():
    batch = np.tile(GOOD, (3, 4, 1))
    batch[2, 1, 0] = 3.0
    with pytest.raises(ValueError, match=r"at batch index \(2, 1\)"):
        d.dq_log(batch)


def test_unit_tolerance_is_the_documented_one():
    assert d.UNIT_TOL == 1e-6
    nearly = GOOD.copy()
    nearly[:4] *= 1 + 0.5e-6
    d.dq_log(nearly)  # within tolerance: accepted
    nearly[:4] *= 1 + 2e-6
    with pytest.raises(ValueError):
        d.dq_log(nearly)


def test_inputs_are_never_modified():
    a = GOOD.copy()
    b = d.dq_from_rpy_deg([1, 2, 3], [0, 0, 1])
    a0, b0 = a.copy(), b.copy()
    d.dq_mul(a, b)
    d.dq_normalize(a)
    d.frame_change(a, np.ones(6))
    assert np.array_equal(a, a0) and np.array_equal(b, b0)


# -- the one unit-norm check of axes and directions ------------------------------------------
def test_unit_vector_check_accepts_within_its_tolerance_and_normalises():
    assert d.AXIS_TOL == 1e-9
    a = np.array([0.0, 0.6, 0.8]) * (1 + 0.5e-9)
    out = check_unit_vector(a, "axis")
    assert out is not a and np.array_equal(out, a / np.linalg.norm(a))
    assert abs(np.linalg.norm(out) - 1.0) <= 2 * np.finfo(float).eps
    kept = check_unit_vector(a, "axis", normalize=False)  # as given, a copy
    assert np.array_equal(kept, a) and kept is not a
    # a wider tolerance passed by a caller (thruster directions: UNIT_TOL)
    b = np.array([0.0, 0.0, 1.0 + 5e-7])
    np.testing.assert_array_equal(check_unit_vector(b, "direction", tol=d.UNIT_TOL), [0, 0, 1])
    # any length, tol=inf: a direction given up to scale
    np.testing.assert_allclose(
        check_unit_vector([3.0, 4.0, 0.0], "axis", tol=np.inf), [0.6, 0.8, 0]
    )
    # batches: checked row by row, not normalised unless asked
    rows = np.array([[1.0, 0, 0], [0, 1.0, 0]])
    np.testing.assert_array_equal(check_unit_vector(rows, "l", normalize=False), rows)


@pytest.mark.parametrize(
    "x, kw, match",
    [
        (
            [0.0, 0.7071, 0.7071],
            {},
            r"^joint 'j': axis must be a unit vector, got \[0.0, 0.7071, 0.7071\] "
            r"\(norm 0.999990409954, accepted within 1e-09 of 1\); normalise it, or give its "
            r"components with all their digits$",
        ),
        ([0.0, 0.0, 1.1], {"tol": 1e-6}, r"norm 1.1, accepted within 1e-06 of 1"),
        ([0.0, 0.0, 0.0], {}, r"must be a unit vector, got \[0.0, 0.0, 0.0\] \(norm 0,"),
        ([0.0, 0.0, 0.0], {"tol": np.inf}, r"axis must not be zero: its norm 0 leaves it"),
        ([1e-13, 0.0, 0.0], {"tol": np.inf}, r"must not be zero"),
        ([1.0, 0.0], {}, r"axis must be a finite 3-vector"),
        ([np.nan, 0.0, 1.0], {}, r"axis must be a finite 3-vector"),
        ([[1.0, 0, 0], [0, 2.0, 0]], {}, r"at batch index \(1,\), got \[0.0, 2.0, 0.0\]"),
    ],
)
def test_unit_vector_check_names_the_quantity_its_norm_the_tolerance_and_the_fix(x, kw, match):
    name = "joint 'j': axis" if "joint" in match else "axis"
    with pytest.raises(ValueError, match=match):
        check_unit_vector(x, name, **kw)
