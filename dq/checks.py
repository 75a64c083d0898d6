"""Input validation shared by every public function of dqspace (public: other packages use it).

Each ``check_*`` returns the validated float64 array (never the caller's array
modified) or raises a :class:`ValueError` that names the argument, the problem
and the offending numbers.  The scans are compiled single passes, so a check
costs a fraction of a microsecond on a single value and about one memory pass
on a batch.
"""

import math

import numpy as np
from numba import njit

#: Largest accepted distance from the unit manifold, ``max(| |q_r| - 1 |, |dot(q_r, q_d)|)``.
#: Inputs further away raise; :func:`dqspace.dq.dq_normalize` projects them back.
UNIT_TOL = 1e-6
#: Largest accepted distance ``| |a| - 1 |`` of an axis or a direction from unit length
#: (joint axes, gimbal and spin axes, thruster directions): a unit vector written with all
#: its digits passes, a rounded one such as ``[0, 0.7071, 0.7071]`` does not.
AXIS_TOL = 1e-9
#: Shortest vector :func:`check_unit_vector` normalises when any length is accepted
#: (``tol=math.inf``, a direction given up to scale).
MIN_AXIS_NORM = 1e-12


@njit(cache=True)
def first_nonfinite(flat):
    """Index of the first non-finite entry of the 1-D array ``flat``, or -1 if all are finite."""
    for i in range(flat.shape[0]):
        if not math.isfinite(flat[i]):
            return i
    return -1


@njit(cache=True)
def _worst_unit_dq(x):
    """(largest unit error, its row) over rows of an (N, 8) array; NaN counts as inf."""
    worst = 0.0
    at = -1
    for i in range(x.shape[0]):
        p0, p1, p2, p3 = x[i, 0], x[i, 1], x[i, 2], x[i, 3]
        n = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2 + p3 * p3)
        d = p0 * x[i, 4] + p1 * x[i, 5] + p2 * x[i, 6] + p3 * x[i, 7]
        e = max(abs(n - 1.0), abs(d))
        if not math.isfinite(e):
            return math.inf, i
        if e > worst:
            worst = e
            at = i
    return worst, at


@njit(cache=True)
def _worst_unit_q(x):
    worst = 0.0
    at = -1
    for i in range(x.shape[0]):
        n = math.sqrt(x[i, 0] ** 2 + x[i, 1] ** 2 + x[i, 2] ** 2 + x[i, 3] ** 2)
        e = abs(n - 1.0)
        if not math.isfinite(e):
            return math.inf, i
        if e > worst:
            worst = e
            at = i
    return worst, at


@njit(cache=True)
def _smallest_norm(x):
    """(smallest Euclidean norm, its row) over the rows of an (N, m) array."""
    best = math.inf
    at = -1
    for i in range(x.shape[0]):
        s = 0.0
        for j in range(x.shape[1]):
            s += x[i, j] * x[i, j]
        if s < best:
            best = s
            at = i
    return math.sqrt(best), at


def _where(shape, flat_row):
    """Human-readable batch index of a row of the flattened leading axes."""
    if len(shape) == 0 or flat_row < 0:
        return ""
    return f" at batch index {tuple(int(i) for i in np.unravel_index(flat_row, shape))}"


def as_float_array(x, name, trailing):
    """``x`` as a float64 array with the given trailing shape, checked finite.

    Parameters
    ----------
    x : array_like
    name : str
        Argument name used in error messages.
    trailing : tuple of int
        Required trailing shape, e.g. ``(8,)`` or ``(3, 3)``.
    """
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real numeric array, got {type(x).__name__}") from exc
    nt = len(trailing)
    if a.shape[a.ndim - nt :] != trailing or a.ndim < nt:
        want = "(..., " + ", ".join(map(str, trailing)) + ")"
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    bad = first_nonfinite(a.reshape(-1))
    if bad >= 0:
        row = bad // max(1, math.prod(trailing))
        lead = a.shape[: a.ndim - nt]
        raise ValueError(
            f"{name} contains a non-finite value ({a.reshape(-1)[bad]}){_where(lead, row)}"
        )
    return a


def as_scalar_array(x, name):
    """``x`` as a finite float64 array of any shape (for scalars such as t)."""
    a = np.asarray(x, dtype=np.float64)
    bad = first_nonfinite(a.reshape(-1))
    if bad >= 0:
        raise ValueError(f"{name} contains a non-finite value ({a.reshape(-1)[bad]})")
    return a


def check_dq(x, name):
    """A finite dual-quaternion array of shape (..., 8)."""
    a = as_float_array(x, name, (8,))
    rows = a.reshape(-1, 8)
    n, at = _smallest_norm(rows[:, :4])
    if n == 0.0:
        raise ValueError(
            f"{name} has a zero real part{_where(a.shape[:-1], at)}: it is not invertible"
        )
    return a


def check_unit_dq(x, name, tol=UNIT_TOL):
    """A unit dual quaternion array (..., 8): ``|q_r| = 1`` and ``q_r . q_d = 0`` within tol."""
    a = as_float_array(x, name, (8,))
    err, at = _worst_unit_dq(a.reshape(-1, 8))
    if err > tol:
        row = a.reshape(-1, 8)[at]
        raise ValueError(
            f"{name} is not a unit dual quaternion{_where(a.shape[:-1], at)}: "
            f"|q_r| = {np.linalg.norm(row[:4]):.12g}, q_r . q_d = {row[:4] @ row[4:]:.3g} "
            f"(tolerance {tol:g}); use dq_normalize() to project it onto the unit manifold"
        )
    return a


def check_quat(x, name):
    """A finite, non-zero quaternion array (..., 4)."""
    a = as_float_array(x, name, (4,))
    n, at = _smallest_norm(a.reshape(-1, 4))
    if n == 0.0:
        raise ValueError(f"{name} is a zero quaternion{_where(a.shape[:-1], at)}")
    return a


def check_unit_quat(x, name, tol=UNIT_TOL):
    """A unit quaternion array (..., 4) within tol."""
    a = as_float_array(x, name, (4,))
    err, at = _worst_unit_q(a.reshape(-1, 4))
    if err > tol:
        row = a.reshape(-1, 4)[at]
        raise ValueError(
            f"{name} is not a unit quaternion{_where(a.shape[:-1], at)}: "
            f"|q| = {np.linalg.norm(row):.12g} (tolerance {tol:g}); normalise it first"
        )
    return a


def check_rotation_matrix(x, name, tol=UNIT_TOL):
    """A proper rotation matrix array (..., 3, 3): orthonormal with determinant +1."""
    R = as_float_array(x, name, (3, 3))
    RtR = np.einsum("...ji,...jk->...ik", R, R)
    err = np.abs(RtR - np.eye(3)).max(axis=(-2, -1))
    det = np.linalg.det(R)
    bad = (err > tol) | (det <= 0)
    if np.any(bad):
        at = np.argwhere(np.atleast_1d(bad))[0]
        e = np.atleast_1d(err)[tuple(at)]
        d = np.atleast_1d(det)[tuple(at)]
        where = f" at batch index {tuple(at)}" if R.ndim > 2 else ""
        raise ValueError(
            f"{name} is not a rotation matrix{where}: max |R^T R - I| = {e:.3g}, det = {d:.6g}"
        )
    return R


def check_unit_vector(x, name, *, tol=AXIS_TOL, normalize=True):
    """A unit axis or direction (3,) or a batch (..., 3), checked and normalised.

    Parameters
    ----------
    x : array_like (3,) or (..., 3)
    name : str
        The quantity, as the error message names it (e.g. ``"thruster 'T1': direction"``).
    tol : float
        Largest accepted ``| |x| - 1 |`` (default :data:`AXIS_TOL`); ``math.inf`` accepts
        any length (a direction given up to scale) longer than :data:`MIN_AXIS_NORM`.
    normalize : bool
        Return ``x / |x|`` (default) or ``x`` as given (a float64 copy).

    Returns
    -------
    ndarray (3,) or (..., 3), float64

    Raises
    ------
    ValueError
        a wrong shape, a non-finite component, a length further than ``tol`` from 1 (the
        message gives the vector, its norm, the tolerance and the fix), a zero vector.
    """
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0 or a.shape[-1] != 3 or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be a finite 3-vector, got {x!r}")
    if a.ndim == 1:
        n = float(np.linalg.norm(a))
        norms = np.array(n)
    else:
        norms = np.linalg.norm(a, axis=-1)
    err = np.abs(norms - 1.0)
    if math.isinf(tol):
        short = np.flatnonzero(~(norms.reshape(-1) > MIN_AXIS_NORM))
        if short.size:
            at = int(short[0])
            raise ValueError(
                f"{name} must not be zero{_where(a.shape[:-1], at)}: its norm "
                f"{norms.reshape(-1)[at]:.3g} leaves it no direction; give a non-zero vector"
            )
    elif np.any(err > tol):
        at = int(np.argmax(err.reshape(-1)))
        row = a.reshape(-1, 3)[at]
        raise ValueError(
            f"{name} must be a unit vector{_where(a.shape[:-1], at)}, got {row.tolist()} "
            f"(norm {norms.reshape(-1)[at]:.12g}, accepted within {tol:g} of 1); "
            "normalise it, or give its components with all their digits"
        )
    if not normalize:
        return a.copy() if a is x else a
    if a.ndim == 1:
        return a / n
    return a / norms[..., None]
