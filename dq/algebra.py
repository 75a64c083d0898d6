"""Quaternion and dual-quaternion algebra (paper Table 1, eq. 2-5).

Conventions (``docs/conventions.md``): Hamilton product, scalar first.

* quaternion ``q``: ``(..., 4)`` array ``[w, x, y, z]``;
* dual quaternion ``dq = q_r + eps q_d``: ``(..., 8)`` array
  ``[qw, qx, qy, qz, dw, dx, dy, dz]``; a pose of frame b relative to frame a is
  ``q_ba + eps 1/2 q_ba o r^b = q_ba + eps 1/2 r^a o q_ba``;
* dual vector: ``(..., 6)`` array ``[real(3), dual(3)]``, a twist ``w + eps v``
  or a wrench ``f + eps tau`` (their scalar parts are zero and not stored).

Every function accepts leading batch axes and broadcasts them like numpy.
Inputs are validated: a wrong trailing shape, a non-finite value, a zero
quaternion where an inverse is needed, or a non-unit input where a unit one is
required (beyond :data:`UNIT_TOL`) raises :class:`ValueError` naming the
argument.  The arithmetic itself is the compiled kernels of
:mod:`dqspace.dq.kernels`, the same code the multibody recursions call.
"""

import numpy as np
from numba import njit, types
from numpy.typing import ArrayLike, NDArray

from .._jit import lazy_njit
from . import _ufuncs as u
from . import kernels as k
from .checks import (
    UNIT_TOL,
    as_float_array,
    check_dq,
    check_quat,
    check_unit_dq,
    check_unit_quat,
)

__all__ = [
    "UNIT_TOL",
    "quat_mul",
    "quat_conj",
    "quat_inv",
    "quat_norm",
    "quat_normalize",
    "quat_rotate",
    "quat_exp",
    "quat_log",
    "dq_mul",
    "dq_conj",
    "dq_inv",
    "dq_norm",
    "dq_normalize",
    "dq_unit_error",
    "dq_identity",
    "dq_left_matrix",
    "dq_right_matrix",
    "dq_log",
    "dq_exp",
    "dual_cross",
    "frame_change",
    "frame_change_inv",
    "adjoint_matrix",
    "swap",
]


# ------------------------------------------------------------------ quaternions


def quat_mul(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """Hamilton product ``a o b``.

    Parameters
    ----------
    a, b : (..., 4) array_like, ``[w, x, y, z]``

    Returns
    -------
    (..., 4) ndarray
    """
    return u.q_mul(as_float_array(a, "a", (4,)), as_float_array(b, "b", (4,)))


def quat_conj(q: ArrayLike) -> NDArray[np.float64]:
    """Conjugate ``q* = [w, -x, -y, -z]``; (..., 4) -> (..., 4)."""
    return u.q_conj(as_float_array(q, "q", (4,)))


def quat_norm(q: ArrayLike) -> NDArray[np.float64]:
    """Euclidean norm ``|q|``; (..., 4) -> (...)."""
    return np.linalg.norm(as_float_array(q, "q", (4,)), axis=-1)


def quat_inv(q: ArrayLike) -> NDArray[np.float64]:
    """Inverse ``q^-1 = q* / |q|^2`` (eq. 2); raises on a zero quaternion."""
    q = check_quat(q, "q")
    return u.q_conj(q) / np.einsum("...i,...i->...", q, q)[..., None]


def quat_normalize(q: ArrayLike) -> NDArray[np.float64]:
    """``q / |q|``; raises on a zero quaternion."""
    q = check_quat(q, "q")
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def quat_rotate(q: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
    """Rotate vectors: ``q o v o q*`` for unit q (..., 4) and v (..., 3).

    With ``q = q_ba`` this maps coordinates in b to coordinates in a.
    """
    return u.q_rotate(check_unit_quat(q, "q"), as_float_array(v, "v", (3,)))


def quat_exp(x: ArrayLike) -> NDArray[np.float64]:
    """Exponential of the pure quaternion x (..., 3): ``cos|x| + sin|x| x/|x|``."""
    return u.q_exp(as_float_array(x, "x", (3,)), u.S4)


def quat_log(q: ArrayLike) -> NDArray[np.float64]:
    """Logarithm of a unit quaternion, (..., 4) -> (..., 3): ``phi n``, phi in [0, pi].

    ``q = cos(phi) + sin(phi) n`` represents a rotation by ``theta = 2 phi``
    about n.  Smooth at the identity and at a half-turn.
    """
    return u.q_log(check_unit_quat(q, "q"), u.S3)


# ------------------------------------------------------------ dual quaternions


def dq_identity(shape: int | tuple[int, ...] = ()) -> NDArray[np.float64]:
    """Identity pose(s) ``[1, 0, 0, 0, 0, 0, 0, 0]`` with leading ``shape``."""
    out = np.zeros((*np.atleast_1d(shape).astype(int), 8) if shape != () else (8,))
    out[..., 0] = 1.0
    return out


def dq_mul(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """Dual-quaternion product ``a o b = p_a p_b + eps (p_a q_b + q_a p_b)`` (Table 1).

    Composition of poses: ``dq_ca = dq_mul(dq_ba, dq_cb)``.

    Parameters
    ----------
    a, b : (..., 8) array_like

    Returns
    -------
    (..., 8) ndarray
    """
    try:  # the commonest call, one product of two float64 vectors: no Python-side checks
        if a.ndim + b.ndim == 2:  # two vectors (a batch would fail the dispatch slowly)
            out = _empty(8)
            if _mul_1(a, b, out):
                return out
    except (TypeError, AttributeError):  # not two contiguous float64 vectors: the paths below
        pass
    if type(a) is _ND and type(b) is _ND and a.dtype is _F64 and b.dtype is _F64:
        if a.shape == b.shape and a.shape[-1:] == _8:
            out = _fast_rows(_mul_rows, a, b, np.empty(a.shape), 0.0)
            if out is not None:
                return out
    a, b = as_float_array(a, "a", (8,)), as_float_array(b, "b", (8,))
    with np.errstate(over="ignore", invalid="ignore"):  # reported as an error below
        return _no_overflow(u.dq_mul(a, b), "dq_mul")


def dq_conj(a: ArrayLike) -> NDArray[np.float64]:
    """Conjugate ``p* + eps q*`` (Table 1); for a unit pose, its inverse."""
    return u.dq_conj(as_float_array(a, "a", (8,)))


def dq_inv(a: ArrayLike) -> NDArray[np.float64]:
    """Inverse ``a^-1 = a* / |a|^2`` of a dual quaternion with non-zero real part."""
    return u.dq_inv(check_dq(a, "a"))


def dq_norm(a: ArrayLike) -> NDArray[np.float64]:
    """Dual-number norm ``|a| = |p| + eps dot(p, q)/|p|``; (..., 8) -> (..., 2) ``[real, dual]``."""
    return u.dq_norm(check_dq(a, "a"), u.S2)


def dq_normalize(a: ArrayLike) -> NDArray[np.float64]:
    """Project a nearly-unit dual quaternion onto the unit manifold: ``a / |a|``.

    The real part is scaled to unit length and the dual part loses its
    component along the real part (``q_r . q_d = 0`` afterwards).
    """
    return u.dq_normalize(check_dq(a, "a"))


def dq_unit_error(a: ArrayLike) -> NDArray[np.float64]:
    """``max(| |q_r| - 1 |, |dot(q_r, q_d)|)`` per dual quaternion; (..., 8) -> (...)."""
    a = as_float_array(a, "a", (8,))
    n = np.linalg.norm(a[..., :4], axis=-1)
    d = np.einsum("...i,...i->...", a[..., :4], a[..., 4:])
    return np.maximum(np.abs(n - 1.0), np.abs(d))


def dq_left_matrix(a: ArrayLike) -> NDArray[np.float64]:
    """Left product matrix ``[a]^+`` (eq. 3), (..., 8) -> (..., 8, 8): ``a o b = [a]^+ b``."""
    return u.dq_left_matrix(as_float_array(a, "a", (8,)), u.S88)


def dq_right_matrix(b: ArrayLike) -> NDArray[np.float64]:
    """Right product matrix ``[b]^-`` (eq. 3), (..., 8) -> (..., 8, 8): ``a o b = [b]^- a``."""
    return u.dq_right_matrix(as_float_array(b, "b", (8,)), u.S88)


def dq_log(a: ArrayLike) -> NDArray[np.float64]:
    """Pose logarithm of Table 1, (..., 8) -> (..., 6).

    ``log(q + eps 1/2 q o r^b) = 1/2 theta n + eps 1/2 r^b`` for a unit dual
    quaternion: half the rotation vector and half the position in the moving
    frame.  This is the logarithm the dual PD law (P46) uses; the screw
    (group) logarithm is :func:`dqspace.dq.dq_screw_log`.  ``theta`` lies in
    [0, 2 pi]: ``dq_log(-a)`` differs from ``dq_log(a)`` although both are the
    same pose (choose the sign first if the short way matters).
    """
    return u.dq_log(check_unit_dq(a, "a"), u.S6)


def dq_exp(x: ArrayLike) -> NDArray[np.float64]:
    """Inverse of :func:`dq_log`, (..., 6) -> (..., 8): ``exp(u) + eps exp(u) o w``."""
    return u.dq_exp(as_float_array(x, "x", (6,)), u.S8)


# ---------------------------------------------------------------- dual vectors


def dual_cross(x: ArrayLike, y: ArrayLike) -> NDArray[np.float64]:
    """Dual cross product (Table 1), (..., 6) x (..., 6) -> (..., 6).

    ``x_r x y_r + eps (x_r x y_d + x_d x y_r)``: the se(3) bracket on twists and
    the ``w x M w`` term of the rigid-body equation (P6) on twist x momentum.
    """
    return u.dv_cross(as_float_array(x, "x", (6,)), as_float_array(y, "y", (6,)))


def frame_change(dq_ba: ArrayLike, x_a: ArrayLike) -> NDArray[np.float64]:
    """Express a dual vector of frame a in frame b: ``x^b = q_ba* o x^a o q_ba`` (P8, P19).

    Works for twists ``[w, v]`` (v the velocity of the frame origin) and
    wrenches ``[f, tau]`` (tau about the frame origin) alike:
    real ``R^T x_r``, dual ``R^T x_d + (R^T x_r) x r^b``.

    Parameters
    ----------
    dq_ba : (..., 8) array_like, unit pose of b relative to a
    x_a : (..., 6) array_like, dual vector in a (at a's origin, a's axes)

    Returns
    -------
    (..., 6) ndarray, the same dual vector at b's origin in b's axes
    """
    q, x = dq_ba, x_a
    try:  # the commonest call, one pose and one dual vector: no Python-side checks
        if q.ndim + x.ndim == 2:  # two vectors (a batch would fail the dispatch slowly)
            out = _empty(6)
            if _fc_1(q, x, out, UNIT_TOL):
                return out
    except (TypeError, AttributeError):  # not contiguous float64 vectors: the paths below
        pass
    if type(q) is _ND and type(x) is _ND and q.dtype is _F64 and x.dtype is _F64:
        if q.shape[-1:] == _8 and x.shape[-1:] == _6 and q.shape[:-1] == x.shape[:-1]:
            out = _fast_rows(_fc_rows, q, x, np.empty(x.shape), UNIT_TOL)
            if out is not None:
                return out
    q, x = check_unit_dq(dq_ba, "dq_ba"), as_float_array(x_a, "x_a", (6,))
    with np.errstate(over="ignore", invalid="ignore"):  # reported as an error below
        return _no_overflow(u.dv_frame_change(q, x), "frame_change")


def frame_change_inv(dq_ba: ArrayLike, x_b: ArrayLike) -> NDArray[np.float64]:
    """Inverse of :func:`frame_change`: ``x^a = q_ba o x^b o q_ba*``."""
    return u.dv_frame_change_inv(check_unit_dq(dq_ba, "dq_ba"), as_float_array(x_b, "x_b", (6,)))


def adjoint_matrix(dq_ba: ArrayLike) -> NDArray[np.float64]:
    """6x6 matrix of :func:`frame_change`, (..., 8) -> (..., 6, 6): ``x^b = Ad x^a``.

    ``Ad = [[R^T, 0], [-[r^b]x R^T, R^T]]``, R the rotation of dq_ba.
    """
    return u.dq_adjoint(check_unit_dq(dq_ba, "dq_ba"), u.S66)


def swap(x: ArrayLike) -> NDArray[np.float64]:
    """Exchange the real and dual parts of dual vectors, (..., 6) -> (..., 6).

    The power of a wrench f on a twist w is ``swap(f) . w = w . tau + v . f``;
    a joint's generalized force is ``H^T swap(f)`` (``docs/conventions.md``).
    """
    x = as_float_array(x, "x", (6,))
    return np.concatenate([x[..., 3:], x[..., :3]], axis=-1)


def _no_overflow(out, what):
    """``out``, or a ValueError when finite inputs gave a non-finite result (overflow)."""
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"{what} overflowed: the inputs are finite but the result exceeds "
            f"the float64 range (~1.8e308)"
        )
    return out


# ------------------------------------------------- fast paths of dq_mul, frame_change
# For the commonest calls -- float64 ndarrays of equal batch shape, C-contiguous --
# validation and arithmetic run in one compiled call instead of a validation scan
# per argument plus a gufunc: one pass over memory, the rows handed to the kernel
# as tuples (no per-row array views, whose reference counting costs more than the
# arithmetic).  The result is the same kernel's, bit for bit.  Inputs are
# validated through the outputs: the kernels use only +, - and * and every input
# reaches an output, so a NaN or inf in any input makes an output non-finite.
# Whenever an output is not finite (or, for frame_change, a pose is off the unit
# manifold) the fast path gives up and the general path runs, which raises the
# documented error (or, for finite inputs whose products overflow, returns the
# same result).  Like the gufuncs of ``_ufuncs``, they are cached on disk with the
# kernels compiled in: after editing ``kernels.py``, delete the caches
# (``find . -name '*.nb[ic]' -delete``).


_ND = np.ndarray
_F64 = np.dtype(np.float64)
_8 = (8,)
_6 = (6,)


_V = types.float64[::1]
_RO = types.Array(types.float64, 1, "C", readonly=True)
_empty = np.empty


# Explicit signatures: any other argument type (a strided view, an integer array) raises
# TypeError at dispatch, which sends the call to the general paths.  A failed dispatch is
# slow (numba searches type conversions: ~70 us), so the callers first check that both
# arguments are vectors (``ndim``; a list has none): batches never reach these functions.
# One signature with read-only inputs: writable arrays convert to it (numba registers the
# conversion at the first call), and a single overload dispatches ~50 ns faster than the
# four writable/read-only combinations.
@lazy_njit(types.boolean(_RO, _RO, _V), cache=True)
def _mul_1(a, b, out):
    if a.shape[0] != 8 or b.shape[0] != 8:
        return False
    k.dq_mul(a, b, out)
    s = ((out[0] + out[1]) + (out[2] + out[3])) + ((out[4] + out[5]) + (out[6] + out[7]))
    return s - s == 0.0


@njit(cache=True)
def _mul_rows(A, B, out, tol):
    o = np.empty(8)
    z = 0.0
    for i in range(A.shape[0]):
        # rows passed as tuples: in registers, no per-row array view
        a = (A[i, 0], A[i, 1], A[i, 2], A[i, 3], A[i, 4], A[i, 5], A[i, 6], A[i, 7])
        b = (B[i, 0], B[i, 1], B[i, 2], B[i, 3], B[i, 4], B[i, 5], B[i, 6], B[i, 7])
        k.dq_mul(a, b, o)
        s = ((o[0] + o[1]) + (o[2] + o[3])) + ((o[4] + o[5]) + (o[6] + o[7]))
        z += s - s
        for j in range(8):
            out[i, j] = o[j]
    return z == 0.0


@lazy_njit(types.boolean(_RO, _RO, _V, types.float64), cache=True)
def _fc_1(q, x, out, tol):
    if q.shape[0] != 8 or x.shape[0] != 6 or not k.dq_unit_error(q) <= tol:
        return False
    k.dv_frame_change(q, x, out)
    s = ((out[0] + out[1]) + (out[2] + out[3])) + (out[4] + out[5])
    return s - s == 0.0


@njit(cache=True)
def _fc_rows(Q, X, out, tol):
    o = np.empty(6)
    z = 0.0
    unit = True
    for i in range(Q.shape[0]):
        q = (Q[i, 0], Q[i, 1], Q[i, 2], Q[i, 3], Q[i, 4], Q[i, 5], Q[i, 6], Q[i, 7])
        x = (X[i, 0], X[i, 1], X[i, 2], X[i, 3], X[i, 4], X[i, 5])
        if not k.dq_unit_error(q) <= tol:
            unit = False
        k.dv_frame_change(q, x, o)
        s = ((o[0] + o[1]) + (o[2] + o[3])) + (o[4] + o[5])
        z += s - s
        for j in range(6):
            out[i, j] = o[j]
    return unit and z == 0.0


def _fast_rows(rows, a, b, out, tol):
    """Run a fused loop on C-contiguous (..., n) batches; None when it declines."""
    if a.flags.c_contiguous and b.flags.c_contiguous:
        shape = (-1, a.shape[-1]), (-1, b.shape[-1]), (-1, out.shape[-1])
        if rows(a.reshape(shape[0]), b.reshape(shape[1]), out.reshape(shape[2]), tol):
            return out
    return None
