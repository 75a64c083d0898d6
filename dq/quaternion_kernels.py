"""Compiled scalar kernels of quaternions ``[w, x, y, z]`` (Hamilton, scalar first):
products, rotations, rotation matrices, exponential and logarithm.

Kernels read all of their inputs into locals before writing, so ``out`` may alias an
input; none of them validates.  :mod:`dqspace.dq.kernels` lists the kernels of every family.
"""

import math

from numba import njit

__all__ = [
    "SMALL_ANGLE",
    "q_mul",
    "q_conj",
    "q_rotate",
    "q_rotate_inv",
    "q_to_rotation_matrix",
    "q_from_rotation_matrix",
    "norm3",
    "q_exp",
    "q_log",
]

#: Below this angle [rad] the trigonometric ratios of the exponentials and logarithms use
#: their series.
SMALL_ANGLE = 1e-4


@njit(cache=True)
def q_mul(a, b, out):
    """Hamilton product ``out = a o b`` of quaternions (4,)."""
    a0, a1, a2, a3 = a[0], a[1], a[2], a[3]
    b0, b1, b2, b3 = b[0], b[1], b[2], b[3]
    out[0] = a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3
    out[1] = a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2
    out[2] = a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1
    out[3] = a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0


@njit(cache=True)
def q_conj(a, out):
    """Conjugate ``a*`` of a quaternion (4,)."""
    out[0] = a[0]
    out[1] = -a[1]
    out[2] = -a[2]
    out[3] = -a[3]


@njit(cache=True)
def q_rotate(q, v, out):
    """``out = q o v o q*`` for a unit quaternion q (4,) and a vector v (3,)."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    v0, v1, v2 = v[0], v[1], v[2]
    # t = 2 q_vec x v ; v' = v + w t + q_vec x t
    t0 = 2.0 * (y * v2 - z * v1)
    t1 = 2.0 * (z * v0 - x * v2)
    t2 = 2.0 * (x * v1 - y * v0)
    out[0] = v0 + w * t0 + (y * t2 - z * t1)
    out[1] = v1 + w * t1 + (z * t0 - x * t2)
    out[2] = v2 + w * t2 + (x * t1 - y * t0)


@njit(cache=True)
def q_rotate_inv(q, v, out):
    """``out = q* o v o q`` for a unit quaternion q (4,) and a vector v (3,)."""
    w, x, y, z = q[0], -q[1], -q[2], -q[3]
    v0, v1, v2 = v[0], v[1], v[2]
    t0 = 2.0 * (y * v2 - z * v1)
    t1 = 2.0 * (z * v0 - x * v2)
    t2 = 2.0 * (x * v1 - y * v0)
    out[0] = v0 + w * t0 + (y * t2 - z * t1)
    out[1] = v1 + w * t1 + (z * t0 - x * t2)
    out[2] = v2 + w * t2 + (x * t1 - y * t0)


@njit(cache=True)
def q_to_rotation_matrix(q, R):
    """Rotation matrix R (3, 3) with ``R v = q o v o q*`` for a unit quaternion."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    R[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    R[0, 1] = 2.0 * (x * y - w * z)
    R[0, 2] = 2.0 * (x * z + w * y)
    R[1, 0] = 2.0 * (x * y + w * z)
    R[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    R[1, 2] = 2.0 * (y * z - w * x)
    R[2, 0] = 2.0 * (x * z - w * y)
    R[2, 1] = 2.0 * (y * z + w * x)
    R[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@njit(cache=True)
def q_from_rotation_matrix(R, out):
    """Unit quaternion (4,) of a rotation matrix (3, 3), scalar part >= 0.

    Shepperd's method: the largest of the four squared components is taken
    from the trace, so no division by a small number occurs.
    """
    m00, m11, m22 = R[0, 0], R[1, 1], R[2, 2]
    tr = m00 + m11 + m22
    if tr >= m00 and tr >= m11 and tr >= m22:
        s = 2.0 * math.sqrt(max(1.0 + tr, 0.0))
        w = 0.25 * s
        x = (R[2, 1] - R[1, 2]) / s
        y = (R[0, 2] - R[2, 0]) / s
        z = (R[1, 0] - R[0, 1]) / s
    elif m00 >= m11 and m00 >= m22:
        s = 2.0 * math.sqrt(max(1.0 + m00 - m11 - m22, 0.0))
        w = (R[2, 1] - R[1, 2]) / s
        x = 0.25 * s
        y = (R[0, 1] + R[1, 0]) / s
        z = (R[0, 2] + R[2, 0]) / s
    elif m11 >= m22:
        s = 2.0 * math.sqrt(max(1.0 + m11 - m00 - m22, 0.0))
        w = (R[0, 2] - R[2, 0]) / s
        x = (R[0, 1] + R[1, 0]) / s
        y = 0.25 * s
        z = (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * math.sqrt(max(1.0 + m22 - m00 - m11, 0.0))
        w = (R[1, 0] - R[0, 1]) / s
        x = (R[0, 2] + R[2, 0]) / s
        y = (R[1, 2] + R[2, 1]) / s
        z = 0.25 * s
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    n = math.sqrt(w * w + x * x + y * y + z * z)
    out[0] = w / n
    out[1] = x / n
    out[2] = y / n
    out[3] = z / n


@njit(cache=True)
def norm3(x, y, z):
    """Euclidean norm of (x, y, z) without underflow of the squares (the rotation angle of
    the logarithms)."""
    m = max(abs(x), abs(y), abs(z))
    if m == 0.0 or m > 1e-150:
        return math.sqrt(x * x + y * y + z * z)
    x, y, z = x / m, y / m, z / m
    return m * math.sqrt(x * x + y * y + z * z)


@njit(cache=True)
def _sinc(phi):
    """sin(phi) / phi, accurate near 0."""
    if phi < SMALL_ANGLE:
        p2 = phi * phi
        return 1.0 - p2 / 6.0 + p2 * p2 / 120.0
    return math.sin(phi) / phi


@njit(cache=True)
def q_exp(u, out):
    """Exponential of the pure quaternion u (3,): ``cos|u| + sin|u| u/|u|``."""
    phi = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    k = _sinc(phi)
    out[0] = math.cos(phi)
    out[1] = k * u[0]
    out[2] = k * u[1]
    out[3] = k * u[2]


@njit(cache=True)
def q_log(q, out):
    """Logarithm (3,) of a unit quaternion: ``phi n`` with ``q = cos phi + sin phi n``.

    ``phi = atan2(|q_vec|, q_w)`` lies in [0, pi]; the function is smooth at the
    identity and at a half-turn (``q_w = 0``).  At ``q = -1`` exactly (a 2 pi
    rotation) the axis is undefined and x is returned.
    """
    x, y, z = q[1], q[2], q[3]
    s = norm3(x, y, z)
    if 0.0 < s < 1e-150:
        # subnormal or tiny: the axis from the components scaled by the largest (exact
        # quotients), not x / s (s of subnormals carries only a few significant digits)
        m = max(abs(x), abs(y), abs(z))
        x, y, z = x / m, y / m, z / m
        a = math.atan2(s, q[0])
        n = norm3(x, y, z)
        out[0] = a * (x / n)
        out[1] = a * (y / n)
        out[2] = a * (z / n)
    elif s > 0.0:  # angle times the unit axis (x/s <= 1: no overflow for tiny s)
        a = math.atan2(s, q[0])
        out[0] = a * (x / s)
        out[1] = a * (y / s)
        out[2] = a * (z / s)
    elif q[0] >= 0.0:
        k = 1.0 / q[0]
        out[0] = k * x
        out[1] = k * y
        out[2] = k * z
    else:  # q = -1: any axis; pick x
        out[0] = math.pi
        out[1] = 0.0
        out[2] = 0.0
