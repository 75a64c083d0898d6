"""Compiled scalar kernels of the logarithm and exponential of unit dual quaternions (the
Table-1 form and the group exponential of screw motion), powers and ScLERP.

Kernels read all of their inputs into locals before writing, so ``out`` may alias an
input; none of them validates.  :mod:`dqspace.dq.kernels` lists the kernels of every family.
"""

import math

import numpy as np
from numba import njit

from .dual_kernels import dq_conj, dq_mul, dq_translation_body
from .quaternion_kernels import SMALL_ANGLE, norm3, q_exp, q_log

__all__ = [
    "dq_log",
    "dq_exp",
    "dq_screw_exp",
    "dq_screw_log",
    "dq_pow",
    "dq_sclerp",
]


@njit(cache=True)
def dq_log(a, out):
    """Logarithm of Table 1 of a unit dual quaternion, out (6,).

    ``log(p + eps q) = log p + eps p^-1 o q = 1/2 theta n + eps 1/2 r^b``: the
    decoupled pose logarithm used by the dual PD law (P46).
    """
    q_log(a[:4], out[:3])
    r = np.empty(3)
    dq_translation_body(a, r)
    out[3] = 0.5 * r[0]
    out[4] = 0.5 * r[1]
    out[5] = 0.5 * r[2]


@njit(cache=True)
def dq_exp(x, out):
    """Inverse of :func:`dq_log`: ``exp(u + eps w) = exp(u) + eps exp(u) o w``."""
    p = np.empty(4)
    q_exp(x[:3], p)
    w1, w2, w3 = x[3], x[4], x[5]
    p0, p1, p2, p3 = p[0], p[1], p[2], p[3]
    out[0] = p0
    out[1] = p1
    out[2] = p2
    out[3] = p3
    out[4] = -p1 * w1 - p2 * w2 - p3 * w3
    out[5] = p0 * w1 + p2 * w3 - p3 * w2
    out[6] = p0 * w2 - p1 * w3 + p3 * w1
    out[7] = p0 * w3 + p1 * w2 - p2 * w1


@njit(cache=True)
def dq_screw_exp(x, out):
    """Group exponential of the pure dual quaternion x = u + eps w, out (8,).

    ``exp(x) = cos(phi^) + sin(phi^)/phi^ x`` evaluated with dual numbers,
    ``phi^ = |u| + eps (u . w)/|u|``.  ``screw_exp(1/2 xi dt)`` is the exact
    motion over dt under the constant body twist ``xi = w + eps v``.
    """
    u0, u1, u2, w0, w1, w2 = x[0], x[1], x[2], x[3], x[4], x[5]
    phi2 = u0 * u0 + u1 * u1 + u2 * u2
    phi = math.sqrt(phi2)
    uw = u0 * w0 + u1 * w1 + u2 * w2
    if phi < SMALL_ANGLE:
        s = 1.0 - phi2 / 6.0 + phi2 * phi2 / 120.0  # sin(phi)/phi
        c = math.cos(phi)
        g = -1.0 / 3.0 + phi2 / 30.0  # (phi cos phi - sin phi) / phi^3
    else:
        sn = math.sin(phi)
        c = math.cos(phi)
        s = sn / phi
        g = (phi * c - sn) / (phi2 * phi)
    out[0] = c
    out[1] = s * u0
    out[2] = s * u1
    out[3] = s * u2
    out[4] = -s * uw
    out[5] = s * w0 + g * uw * u0
    out[6] = s * w1 + g * uw * u1
    out[7] = s * w2 + g * uw * u2


@njit(cache=True)
def dq_screw_log(a, out):
    """Inverse of :func:`dq_screw_exp` for a unit dual quaternion, out (6,).

    Principal branch ``phi = atan2(|p_vec|, p_w)`` in [0, pi); the dual part is
    ``phi/sin(phi) q_vec + g(phi) (q_vec . p_vec) p_vec - q_w p_vec`` with
    ``g = (cos phi - phi/sin phi)/sin^2 phi``, smooth through phi = 0.  At
    ``p = -1`` (a rotation of 2 pi) the screw is undefined: take the
    logarithm of ``-a`` instead (same pose).
    """
    p0, p1, p2, p3 = a[0], a[1], a[2], a[3]
    q0, q1, q2, q3 = a[4], a[5], a[6], a[7]
    sn = norm3(p1, p2, p3)
    phi = math.atan2(sn, p0)
    if phi < SMALL_ANGLE:
        ph2 = phi * phi
        k = 1.0 + ph2 / 6.0 + 7.0 * ph2 * ph2 / 360.0  # phi / sin(phi)
        g = -2.0 / 3.0 - ph2 / 5.0  # (cos phi - phi/sin phi)/sin^2 phi
    else:
        k = phi / sn
        g = (p0 - k) / (sn * sn)
    out[0] = k * p1
    out[1] = k * p2
    out[2] = k * p3
    qp = q1 * p1 + q2 * p2 + q3 * p3
    c = g * qp - q0
    out[3] = k * q1 + c * p1
    out[4] = k * q2 + c * p2
    out[5] = k * q3 + c * p3


@njit(cache=True)
def dq_pow(a, t, out):
    """``a^t = screw_exp(t screw_log(a))``: the screw motion of a, scaled by t."""
    x = np.empty(6)
    dq_screw_log(a, x)
    for i in range(6):
        x[i] *= t
    dq_screw_exp(x, out)


@njit(cache=True)
def dq_sclerp(a, b, t, out):
    """Screw linear interpolation ``a o (a^-1 o b)^t`` along the shorter screw."""
    ac = np.empty(8)
    dq_conj(a, ac)
    d = np.empty(8)
    dq_mul(ac, b, d)
    if d[0] < 0.0:
        for i in range(8):
            d[i] = -d[i]
    dt = np.empty(8)
    dq_pow(d, t, dt)
    dq_mul(a, dt, out)
