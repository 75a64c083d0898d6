"""Compiled scalar kernels of dual quaternions ``[q, d]`` (8,) and dual vectors
``[real, dual]`` (6,): products, inverses, normalisation, translations and transforms, the
cross product and frame changes of twists and wrenches, the adjoint and the 8x8 product
matrices.

Kernels read all of their inputs into locals before writing, so ``out`` may alias an
input; none of them validates.  :mod:`dqspace.dq.kernels` lists the kernels of every family.
"""

import math

import numpy as np
from numba import njit

from .quaternion_kernels import q_from_rotation_matrix, q_to_rotation_matrix

__all__ = [
    "dq_mul",
    "dq_conj",
    "dq_norm",
    "dq_inv",
    "dq_normalize",
    "dq_unit_error",
    "dq_translation_body",
    "dq_translation",
    "dq_from_quat_translation",
    "dq_to_transform",
    "dq_from_transform",
    "dv_cross",
    "dv_frame_change",
    "dv_frame_change_inv",
    "dq_adjoint",
    "dq_left_matrix",
    "dq_right_matrix",
]


@njit(cache=True)
def dq_mul(a, b, out):
    """Dual-quaternion product ``out = a o b`` (Table 1): p1 p2 + eps (p1 q2 + q1 p2)."""
    a0, a1, a2, a3, a4, a5, a6, a7 = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
    b0, b1, b2, b3, b4, b5, b6, b7 = b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]
    out[0] = a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3
    out[1] = a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2
    out[2] = a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1
    out[3] = a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0
    out[4] = (a0 * b4 - a1 * b5 - a2 * b6 - a3 * b7) + (a4 * b0 - a5 * b1 - a6 * b2 - a7 * b3)
    out[5] = (a0 * b5 + a1 * b4 + a2 * b7 - a3 * b6) + (a4 * b1 + a5 * b0 + a6 * b3 - a7 * b2)
    out[6] = (a0 * b6 - a1 * b7 + a2 * b4 + a3 * b5) + (a4 * b2 - a5 * b3 + a6 * b0 + a7 * b1)
    out[7] = (a0 * b7 + a1 * b6 - a2 * b5 + a3 * b4) + (a4 * b3 + a5 * b2 - a6 * b1 + a7 * b0)


@njit(cache=True)
def dq_conj(a, out):
    """Conjugate ``p* + eps q*`` (Table 1) of a dual quaternion (8,)."""
    out[0] = a[0]
    out[1] = -a[1]
    out[2] = -a[2]
    out[3] = -a[3]
    out[4] = a[4]
    out[5] = -a[5]
    out[6] = -a[6]
    out[7] = -a[7]


@njit(cache=True)
def dq_norm(a, out):
    """Dual-number norm ``|a| = sqrt(a o a*) = |p| + eps (p . q)/|p|``, out (2,)."""
    n = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3])
    d = a[0] * a[4] + a[1] * a[5] + a[2] * a[6] + a[3] * a[7]
    out[0] = n
    out[1] = d / n


@njit(cache=True)
def dq_inv(a, out):
    """Inverse ``a^-1 = a* / |a|^2`` of a dual quaternion with non-zero real part."""
    n = a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3]
    d = 2.0 * (a[0] * a[4] + a[1] * a[5] + a[2] * a[6] + a[3] * a[7])
    r = 1.0 / n
    s = d / (n * n)
    p0, p1, p2, p3 = a[0], -a[1], -a[2], -a[3]
    out[4] = r * a[4] - s * p0
    out[5] = -r * a[5] - s * p1
    out[6] = -r * a[6] - s * p2
    out[7] = -r * a[7] - s * p3
    out[0] = r * p0
    out[1] = r * p1
    out[2] = r * p2
    out[3] = r * p3


@njit(cache=True)
def dq_normalize(a, out):
    """Nearest unit dual quaternion ``a / |a|`` (dual-number division).

    The real part is scaled to unit length and the dual part loses its
    component along the real part, so that ``p . q = 0``.
    """
    n = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3])
    r = 1.0 / n
    p0, p1, p2, p3 = a[0] * r, a[1] * r, a[2] * r, a[3] * r
    d0, d1, d2, d3 = a[4] * r, a[5] * r, a[6] * r, a[7] * r
    c = p0 * d0 + p1 * d1 + p2 * d2 + p3 * d3
    out[0] = p0
    out[1] = p1
    out[2] = p2
    out[3] = p3
    out[4] = d0 - c * p0
    out[5] = d1 - c * p1
    out[6] = d2 - c * p2
    out[7] = d3 - c * p3


@njit(cache=True)
def dq_unit_error(a):
    """Distance of a dual quaternion from the unit manifold: max(| |p| - 1 |, |p . q|)."""
    n = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3])
    d = a[0] * a[4] + a[1] * a[5] + a[2] * a[6] + a[3] * a[7]
    return max(abs(n - 1.0), abs(d))


@njit(cache=True)
def dq_translation_body(a, out):
    """Position ``r^b = 2 vec(p* o q)`` of a unit dual quaternion, in the moving frame."""
    p0, p1, p2, p3 = a[0], a[1], a[2], a[3]
    q0, q1, q2, q3 = a[4], a[5], a[6], a[7]
    # vec(p* o q) with p* = (p0, -p1, -p2, -p3)
    out[0] = 2.0 * (p0 * q1 - p1 * q0 - p2 * q3 + p3 * q2)
    out[1] = 2.0 * (p0 * q2 + p1 * q3 - p2 * q0 - p3 * q1)
    out[2] = 2.0 * (p0 * q3 - p1 * q2 + p2 * q1 - p3 * q0)


@njit(cache=True)
def dq_translation(a, out):
    """Position ``r^a = 2 vec(q o p*)`` of a unit dual quaternion, in the reference frame."""
    p0, p1, p2, p3 = a[0], -a[1], -a[2], -a[3]
    q0, q1, q2, q3 = a[4], a[5], a[6], a[7]
    out[0] = 2.0 * (q0 * p1 + q1 * p0 + q2 * p3 - q3 * p2)
    out[1] = 2.0 * (q0 * p2 - q1 * p3 + q2 * p0 + q3 * p1)
    out[2] = 2.0 * (q0 * p3 + q1 * p2 - q2 * p1 + q3 * p0)


@njit(cache=True)
def dq_from_quat_translation(q, r, out):
    """Pose ``q + eps 1/2 r^a o q`` from a unit quaternion (4,) and r^a (3,)."""
    q0, q1, q2, q3 = q[0], q[1], q[2], q[3]
    r1, r2, r3 = 0.5 * r[0], 0.5 * r[1], 0.5 * r[2]
    out[0] = q0
    out[1] = q1
    out[2] = q2
    out[3] = q3
    out[4] = -r1 * q1 - r2 * q2 - r3 * q3
    out[5] = r1 * q0 + r2 * q3 - r3 * q2
    out[6] = -r1 * q3 + r2 * q0 + r3 * q1
    out[7] = r1 * q2 - r2 * q1 + r3 * q0


@njit(cache=True)
def dq_to_transform(a, T):
    """Homogeneous transform T (4, 4) of a unit dual quaternion."""
    q_to_rotation_matrix(a[:4], T[:3, :3])
    dq_translation(a, T[:3, 3])
    T[3, 0] = 0.0
    T[3, 1] = 0.0
    T[3, 2] = 0.0
    T[3, 3] = 1.0


@njit(cache=True)
def dq_from_transform(T, out):
    """Unit dual quaternion (scalar part >= 0) of a homogeneous transform (4, 4)."""
    q = np.empty(4)
    q_from_rotation_matrix(T[:3, :3], q)
    r = np.empty(3)
    r[0] = T[0, 3]
    r[1] = T[1, 3]
    r[2] = T[2, 3]
    dq_from_quat_translation(q, r, out)


@njit(cache=True)
def dv_cross(x, y, out):
    """Dual cross product (Table 1): ``x_r x y_r + eps (x_r x y_d + x_d x y_r)``.

    On twists this is the Lie bracket of se(3) (``ad_x y``); ``dv_cross(w, f)``
    with a twist w and a momentum or wrench f is the ``w x M w`` term of (P6).
    """
    a0, a1, a2, a3, a4, a5 = x[0], x[1], x[2], x[3], x[4], x[5]
    b0, b1, b2, b3, b4, b5 = y[0], y[1], y[2], y[3], y[4], y[5]
    out[0] = a1 * b2 - a2 * b1
    out[1] = a2 * b0 - a0 * b2
    out[2] = a0 * b1 - a1 * b0
    out[3] = (a1 * b5 - a2 * b4) + (a4 * b2 - a5 * b1)
    out[4] = (a2 * b3 - a0 * b5) + (a5 * b0 - a3 * b2)
    out[5] = (a0 * b4 - a1 * b3) + (a3 * b1 - a4 * b0)


@njit(cache=True)
def dv_frame_change(a, x, out):
    """``x^b = a* o x^a o a`` (P8, P19): a dual vector from frame a into frame b.

    ``a`` is the unit pose q_ba.  Twists and wrenches (``[w, v]``, ``[f, tau]``)
    change frames by the same formula:
    real ``R^T x_r``, dual ``R^T x_d + (R^T x_r) x r^b``.
    """
    p0, p1, p2, p3 = a[0], a[1], a[2], a[3]
    q0, q1, q2, q3 = a[4], a[5], a[6], a[7]
    # r^b = 2 vec(p* o q)
    r0 = 2.0 * (p0 * q1 - p1 * q0 - p2 * q3 + p3 * q2)
    r1 = 2.0 * (p0 * q2 + p1 * q3 - p2 * q0 - p3 * q1)
    r2 = 2.0 * (p0 * q3 - p1 * q2 + p2 * q1 - p3 * q0)
    # rotate by p* : v' = v + w t + u x t, t = 2 u x v with u = -p_vec
    w, u0, u1, u2 = p0, -p1, -p2, -p3
    v0, v1, v2 = x[0], x[1], x[2]
    t0 = 2.0 * (u1 * v2 - u2 * v1)
    t1 = 2.0 * (u2 * v0 - u0 * v2)
    t2 = 2.0 * (u0 * v1 - u1 * v0)
    xr0 = v0 + w * t0 + (u1 * t2 - u2 * t1)
    xr1 = v1 + w * t1 + (u2 * t0 - u0 * t2)
    xr2 = v2 + w * t2 + (u0 * t1 - u1 * t0)
    v0, v1, v2 = x[3], x[4], x[5]
    t0 = 2.0 * (u1 * v2 - u2 * v1)
    t1 = 2.0 * (u2 * v0 - u0 * v2)
    t2 = 2.0 * (u0 * v1 - u1 * v0)
    out[3] = v0 + w * t0 + (u1 * t2 - u2 * t1) + (xr1 * r2 - xr2 * r1)
    out[4] = v1 + w * t1 + (u2 * t0 - u0 * t2) + (xr2 * r0 - xr0 * r2)
    out[5] = v2 + w * t2 + (u0 * t1 - u1 * t0) + (xr0 * r1 - xr1 * r0)
    out[0] = xr0
    out[1] = xr1
    out[2] = xr2


@njit(cache=True)
def dv_frame_change_inv(a, x, out):
    """``x^a = a o x^b o a*``: the inverse of :func:`dv_frame_change`."""
    p0, p1, p2, p3 = a[0], a[1], a[2], a[3]
    q0, q1, q2, q3 = a[4], a[5], a[6], a[7]
    r0 = 2.0 * (p0 * q1 - p1 * q0 - p2 * q3 + p3 * q2)
    r1 = 2.0 * (p0 * q2 + p1 * q3 - p2 * q0 - p3 * q1)
    r2 = 2.0 * (p0 * q3 - p1 * q2 + p2 * q1 - p3 * q0)
    xr0, xr1, xr2 = x[0], x[1], x[2]
    # dual in b before rotating: x_d - x_r x r^b
    d0 = x[3] - (xr1 * r2 - xr2 * r1)
    d1 = x[4] - (xr2 * r0 - xr0 * r2)
    d2 = x[5] - (xr0 * r1 - xr1 * r0)
    w, u0, u1, u2 = p0, p1, p2, p3
    t0 = 2.0 * (u1 * xr2 - u2 * xr1)
    t1 = 2.0 * (u2 * xr0 - u0 * xr2)
    t2 = 2.0 * (u0 * xr1 - u1 * xr0)
    o0 = xr0 + w * t0 + (u1 * t2 - u2 * t1)
    o1 = xr1 + w * t1 + (u2 * t0 - u0 * t2)
    o2 = xr2 + w * t2 + (u0 * t1 - u1 * t0)
    t0 = 2.0 * (u1 * d2 - u2 * d1)
    t1 = 2.0 * (u2 * d0 - u0 * d2)
    t2 = 2.0 * (u0 * d1 - u1 * d0)
    out[3] = d0 + w * t0 + (u1 * t2 - u2 * t1)
    out[4] = d1 + w * t1 + (u2 * t0 - u0 * t2)
    out[5] = d2 + w * t2 + (u0 * t1 - u1 * t0)
    out[0] = o0
    out[1] = o1
    out[2] = o2


@njit(cache=True)
def dq_adjoint(a, out):
    """6x6 matrix of :func:`dv_frame_change`: ``x^b = Ad x^a``.

    ``Ad = [[R^T, 0], [-[r^b]x R^T, R^T]]`` with ``R`` the rotation of a.
    """
    R = np.empty((3, 3))
    q_to_rotation_matrix(a[:4], R)
    r = np.empty(3)
    dq_translation_body(a, r)
    for i in range(3):
        for j in range(3):
            rt = R[j, i]
            out[i, j] = rt
            out[i + 3, j + 3] = rt
            out[i, j + 3] = 0.0
    # -[r]x R^T : row i = -(r x col) ; (r x c)_i
    for j in range(3):
        c0, c1, c2 = R[j, 0], R[j, 1], R[j, 2]  # column j of R^T is row j of R
        out[3, j] = -(r[1] * c2 - r[2] * c1)
        out[4, j] = -(r[2] * c0 - r[0] * c2)
        out[5, j] = -(r[0] * c1 - r[1] * c0)


@njit(cache=True)
def _q_left(p, M, i0, j0):
    """Write the 4x4 left-product matrix P_L of (P3) into M at (i0, j0)."""
    p0, p1, p2, p3 = p[0], p[1], p[2], p[3]
    M[i0 + 0, j0 + 0] = p0
    M[i0 + 0, j0 + 1] = -p1
    M[i0 + 0, j0 + 2] = -p2
    M[i0 + 0, j0 + 3] = -p3
    M[i0 + 1, j0 + 0] = p1
    M[i0 + 1, j0 + 1] = p0
    M[i0 + 1, j0 + 2] = -p3
    M[i0 + 1, j0 + 3] = p2
    M[i0 + 2, j0 + 0] = p2
    M[i0 + 2, j0 + 1] = p3
    M[i0 + 2, j0 + 2] = p0
    M[i0 + 2, j0 + 3] = -p1
    M[i0 + 3, j0 + 0] = p3
    M[i0 + 3, j0 + 1] = -p2
    M[i0 + 3, j0 + 2] = p1
    M[i0 + 3, j0 + 3] = p0


@njit(cache=True)
def _q_right(p, M, i0, j0):
    """Write the 4x4 right-product matrix Q_R of (P3) into M at (i0, j0)."""
    p0, p1, p2, p3 = p[0], p[1], p[2], p[3]
    M[i0 + 0, j0 + 0] = p0
    M[i0 + 0, j0 + 1] = -p1
    M[i0 + 0, j0 + 2] = -p2
    M[i0 + 0, j0 + 3] = -p3
    M[i0 + 1, j0 + 0] = p1
    M[i0 + 1, j0 + 1] = p0
    M[i0 + 1, j0 + 2] = p3
    M[i0 + 1, j0 + 3] = -p2
    M[i0 + 2, j0 + 0] = p2
    M[i0 + 2, j0 + 1] = -p3
    M[i0 + 2, j0 + 2] = p0
    M[i0 + 2, j0 + 3] = p1
    M[i0 + 3, j0 + 0] = p3
    M[i0 + 3, j0 + 1] = p2
    M[i0 + 3, j0 + 2] = -p1
    M[i0 + 3, j0 + 3] = p0


@njit(cache=True)
def dq_left_matrix(a, M):
    """``[a]^+`` (8, 8) of (P3): ``a o b = [a]^+ b``."""
    _q_left(a[:4], M, 0, 0)
    _q_left(a[:4], M, 4, 4)
    _q_left(a[4:], M, 4, 0)
    for i in range(4):
        for j in range(4):
            M[i, j + 4] = 0.0


@njit(cache=True)
def dq_right_matrix(b, M):
    """``[b]^-`` (8, 8) of (P3): ``a o b = [b]^- a``."""
    _q_right(b[:4], M, 0, 0)
    _q_right(b[:4], M, 4, 4)
    _q_right(b[4:], M, 4, 0)
    for i in range(4):
        for j in range(4):
            M[i, j + 4] = 0.0
