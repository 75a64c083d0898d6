"""The configuration manifold: ``q (+) v dt``, its distance from the manifold, and dexp^-1.

:func:`integrate` steps a configuration (joint quaternions and the base's dual quaternion
by the group exponential), :func:`config_error` measures how far a configuration is from
unit, and :func:`dexpinv` gives the rates of local coordinates (the Lie-group RK4 of
:mod:`.sim` runs on them).
"""

import math

from numba import njit

from ...dq.kernels import dq_mul, dq_normalize, dq_screw_exp, q_exp, q_mul
from .frames import _cross6
from .layout import FREE, JOINT_TYPE, PRISMATIC, Q_INDEX, REVOLUTE, SPHERICAL, V_INDEX

# ----------------------------------------------------------- configuration


@njit(cache=True)
def integrate(ints, q, v, dt, out):
    """``out = q (+) v dt`` on the configuration manifold.

    Free joint: ``q^ o screw_exp(1/2 v dt)`` (exact under a constant body
    twist); spherical: ``q o exp(1/2 w dt)``; others: ``q + v dt``.  The group
    product keeps unit length up to rounding; the rounding (~1e-16 per step,
    which would otherwise accumulate over 10^5 steps) is removed by projecting
    the product back onto the unit manifold.  ``out`` must not be ``q``.
    No allocation (small vectors travel as tuples).
    """
    nb = ints.shape[0]
    h = 0.5 * dt
    for k in range(nb):
        t = ints[k, JOINT_TYPE]
        i = ints[k, Q_INDEX]
        j = ints[k, V_INDEX]
        if t == REVOLUTE or t == PRISMATIC:
            out[i] = q[i] + v[j] * dt
        elif t == SPHERICAL:
            seg = out[i : i + 4]  # exp(1/2 w dt) here, then q o it (q_mul reads first)
            q_exp((h * v[j], h * v[j + 1], h * v[j + 2]), seg)
            q_mul(q[i : i + 4], seg, seg)
            n = 1.0 / math.sqrt(out[i] ** 2 + out[i + 1] ** 2 + out[i + 2] ** 2 + out[i + 3] ** 2)
            for m in range(4):
                out[i + m] *= n
        elif t == FREE:
            seg = out[i : i + 8]
            dq_screw_exp(
                (h * v[j], h * v[j + 1], h * v[j + 2], h * v[j + 3], h * v[j + 4], h * v[j + 5]),
                seg,
            )
            dq_mul(q[i : i + 8], seg, seg)
            dq_normalize(seg, seg)


@njit(cache=True, _nrt=False, fastmath={"contract"})
def config_error(ints, q):
    """(worst distance of a quaternion or base pose from its unit manifold, body index)."""
    worst = 0.0
    at = -1
    for k in range(ints.shape[0]):
        t = ints[k, JOINT_TYPE]
        i = ints[k, Q_INDEX]
        if t == SPHERICAL or t == FREE:
            n = math.sqrt(q[i] ** 2 + q[i + 1] ** 2 + q[i + 2] ** 2 + q[i + 3] ** 2)
            e = abs(n - 1.0)
            if t == FREE:
                d = (
                    q[i] * q[i + 4]
                    + q[i + 1] * q[i + 5]
                    + q[i + 2] * q[i + 6]
                    + q[i + 3] * q[i + 7]
                )
                e = max(e, abs(d))
            if e > worst:
                worst = e
                at = k
    return worst, at


# ------------------------------------------------------- time integration


@njit(cache=True)
def _f_dexp(phi):
    """f(phi) = (1 - (phi/2) cot(phi/2)) / phi^2 and g(phi) = f'(phi) / phi."""
    if phi < 1e-3:
        p2 = phi * phi
        return 1.0 / 12.0 + p2 / 720.0 + p2 * p2 / 30240.0, 1.0 / 360.0 + p2 / 7560.0
    h = 0.5 * phi
    cot = math.cos(h) / math.sin(h)
    p2 = phi * phi
    f = 1.0 / p2 - cot / (2.0 * phi)
    fp = -2.0 / (p2 * phi) + cot / (2.0 * p2) + 1.0 / (4.0 * phi * math.sin(h) ** 2)
    return f, fp / phi


@njit(cache=True)
def dexpinv(ints, theta, v, out):
    """Local-coordinate rates ``theta_dot`` of ``q(t) = q0 (+) theta(t)`` for velocity v.

    Free joint (exact on SE(3)): ``v + 1/2 th x v + f(th^) th x (th x v)`` with
    the dual cross product and ``f`` evaluated at the dual angle
    ``th^ = |th_r| + eps (th_r . th_d)/|th_r|``, ``f(phi) = (1 - phi/2 cot(phi/2))/phi^2``
    (the SO(3) right-Jacobian inverse extended to dual numbers).
    Spherical joint: the same on SO(3).  Other joints: ``theta_dot = v``.
    """
    nb = ints.shape[0]
    for k in range(nb):
        t = ints[k, JOINT_TYPE]
        j = ints[k, V_INDEX]
        if t == REVOLUTE or t == PRISMATIC:
            out[j] = v[j]
        elif t == SPHERICAL:
            a0, a1, a2 = theta[j], theta[j + 1], theta[j + 2]
            b0, b1, b2 = v[j], v[j + 1], v[j + 2]
            c0, c1, c2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
            d0, d1, d2 = a1 * c2 - a2 * c1, a2 * c0 - a0 * c2, a0 * c1 - a1 * c0
            f, _ = _f_dexp(math.sqrt(a0 * a0 + a1 * a1 + a2 * a2))
            out[j] = b0 + 0.5 * c0 + f * d0
            out[j + 1] = b1 + 0.5 * c1 + f * d1
            out[j + 2] = b2 + 0.5 * c2 + f * d2
        elif t == FREE:
            t0, t1, t2 = theta[j], theta[j + 1], theta[j + 2]
            t3, t4, t5 = theta[j + 3], theta[j + 4], theta[j + 5]
            w1 = _cross6(t0, t1, t2, t3, t4, t5,
                         v[j], v[j + 1], v[j + 2], v[j + 3], v[j + 4], v[j + 5])  # fmt: skip
            w2 = _cross6(t0, t1, t2, t3, t4, t5, w1[0], w1[1], w1[2], w1[3], w1[4], w1[5])
            phi = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
            f, g = _f_dexp(phi)
            rd = g * (t0 * t3 + t1 * t4 + t2 * t5)  # f'(phi) phi_d
            for m in range(3):
                out[j + m] = v[j + m] + 0.5 * w1[m] + f * w2[m]
                out[j + 3 + m] = v[j + 3 + m] + 0.5 * w1[3 + m] + f * w2[3 + m] + rd * w2[m]
