"""Compiled recursions of the multibody engine (the one implementation of each).

All kernels take the model's packed arrays ``ints`` (nb, 4) and ``reals``
(nb, 24) (layout in :mod:`dqspace.multibody.model`) and flat state vectors.
Quantities are in body coordinates: poses are unit dual quaternions, twists
``[w, v]`` and wrenches ``[f, tau]`` dual vectors about the body origin.  The
dual-quaternion operations are the kernels of :mod:`dqspace.dq._kernels`.

Notation (paper Sec. 2, ``docs/conventions.md``): ``rel[k] = q^_{parent,k}``, the pose
of body k in its parent; ``Ad_k x = rel[k]* o x o rel[k]`` carries a dual
vector from the parent's frame to k's (P8, P19); ``S_k`` is the joint's motion
subspace (the paper's ``H^_k``); ``M^_k`` the dual inertia.

One base-to-tip step serves every recursion: :func:`relative_pose` builds the
joint's dual quaternion ``rel_k`` (the one place that does), and
:func:`_twist_step` (frame R, r^k of ``rel_k``, twist P12, velocity product
P15) with :func:`_acceleration_step` (P16) advance it one body;
:func:`_forward_pass` runs them over the tree.  The dynamics (``rnea``
P12/P16/P23, ``crba`` P31, the articulated-body recursions of :mod:`._aba`)
and the kinematics (``body_motions``, ``system_momentum``,
``kinetic_energy``) are built on them, with the dual-quaternion frame changes
evaluated through their 3x3 rotation + translation form (section "frames as
rotation + translation" below).  The inertial poses (``poses``) and the frame
Jacobians (``frame_jacobian``) work on the dual quaternions themselves.
"""

import math

import numpy as np
from numba import njit

from dqspace.dq._kernels import (
    dq_mul,
    dq_normalize,
    dq_screw_exp,
    dv_frame_change,
    q_exp,
    q_mul,
)

FIXED, REVOLUTE, PRISMATIC, SPHERICAL, FREE = 0, 1, 2, 3, 4
I_PARENT, I_JTYPE, I_QI, I_VI = 0, 1, 2, 3
R_AXIS, R_PLACE, R_MASS, R_COM, R_JO, R_SI = 0, 3, 11, 12, 15, 24

NV_OF = (0, 1, 1, 3, 6)
NQ_OF = (0, 1, 1, 4, 8)


# ------------------------------------------------------------------ joints


@njit(cache=True)
def joint_nv(t):
    if t == FREE:
        return 6
    if t == SPHERICAL:
        return 3
    if t == FIXED:
        return 0
    return 1


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _joint_twist(ints, reals, k, x):
    """``S_k x_k``: the joint's twist for the joint-velocity (or acceleration) vector x.

    A 6-tuple ``[w, v]`` (``S_k theta_dot_k`` of P12, ``S_k a_k`` of P16).
    """
    t = ints[k, I_JTYPE]
    i = ints[k, I_VI]
    if t == REVOLUTE:
        s = x[i]
        return (
            reals[k, R_AXIS] * s, reals[k, R_AXIS + 1] * s, reals[k, R_AXIS + 2] * s,
            0.0, 0.0, 0.0,
        )  # fmt: skip
    if t == PRISMATIC:
        s = x[i]
        return (
            0.0, 0.0, 0.0,
            reals[k, R_AXIS] * s, reals[k, R_AXIS + 1] * s, reals[k, R_AXIS + 2] * s,
        )  # fmt: skip
    if t == SPHERICAL:
        return (x[i], x[i + 1], x[i + 2], 0.0, 0.0, 0.0)
    if t == FREE:
        return (x[i], x[i + 1], x[i + 2], x[i + 3], x[i + 4], x[i + 5])
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _joint_column(ints, reals, k, c):
    """``S_k e_c``: column c of joint k's motion subspace, a twist 6-tuple ``[w, v]``."""
    t = ints[k, I_JTYPE]
    if t == REVOLUTE:
        return (reals[k, R_AXIS], reals[k, R_AXIS + 1], reals[k, R_AXIS + 2], 0.0, 0.0, 0.0)
    if t == PRISMATIC:
        return (0.0, 0.0, 0.0, reals[k, R_AXIS], reals[k, R_AXIS + 1], reals[k, R_AXIS + 2])
    return (
        1.0 if c == 0 else 0.0,
        1.0 if c == 1 else 0.0,
        1.0 if c == 2 else 0.0,
        1.0 if c == 3 else 0.0,
        1.0 if c == 4 else 0.0,
        1.0 if c == 5 else 0.0,
    )


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _column(ints, reals, k, c, out):
    """``out = S_k e_c``: :func:`_joint_column` into an array (6,)."""
    out[0], out[1], out[2], out[3], out[4], out[5] = _joint_column(ints, reals, k, c)


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _momentum6(reals, k, w0, w1, w2, v0, v1, v2):
    """``M^_k w = [p, h]`` (P6) for the twist ``w = [w, v]``, as a 6-tuple."""
    m = reals[k, R_MASS]
    c0, c1, c2 = reals[k, R_COM], reals[k, R_COM + 1], reals[k, R_COM + 2]
    return (
        m * (v0 + w1 * c2 - w2 * c1),
        m * (v1 + w2 * c0 - w0 * c2),
        m * (v2 + w0 * c1 - w1 * c0),
        reals[k, R_JO] * w0 + reals[k, R_JO + 1] * w1 + reals[k, R_JO + 2] * w2
        + m * (c1 * v2 - c2 * v1),
        reals[k, R_JO + 3] * w0 + reals[k, R_JO + 4] * w1 + reals[k, R_JO + 5] * w2
        + m * (c2 * v0 - c0 * v2),
        reals[k, R_JO + 6] * w0 + reals[k, R_JO + 7] * w1 + reals[k, R_JO + 8] * w2
        + m * (c0 * v1 - c1 * v0),
    )  # fmt: skip


@njit(cache=True)
def spatial_inertia(reals, k, out):
    """Symmetric 6x6 ``swap(M^_k) = [[J_O, m [c]x], [-m [c]x, m I]]`` (twist -> [h, p]).

    Precomputed by the model (``Model._reals[:, R_SI:R_SI+36]``); copied into ``out``.
    """
    for i in range(6):
        for j in range(6):
            out[i, j] = reals[k, R_SI + 6 * i + j]


# ------------------------------------------------ frames as rotation + translation
# The recursions (the forward pass, rnea and crba below, the articulated-body
# ones of ``_aba``, the kinematics kernels) keep their per-body quantities in
# one workspace ``W`` (a row per body plus scratch rows), allocated once per
# call and addressed by row and offset.  Row k starts with the frame of body k
# in its parent, its velocity and its acceleration:
_R = 0  # rotation R of rel_k (body k -> parent), R[i, j] at _R + 3 i + j
_RB = 9  # translation r^k of rel_k, in body k
_TW = 12  # twist w_k (P12)
_AL = 18  # velocity product alpha_k (P15)
_ACC = 24  # acceleration acc_k = d/dt w_k - g_k (P16; row nb: -g, the inertial frame's)
_F = 30  # rnea: wrench f_k, swapped: [tau, f]
_RNEA_STRIDE = 36
# (``_aba`` keeps the first four and lays out the rest of its rows itself.)
# The dual-quaternion frame change ``Ad_k x = rel_k* o x o rel_k`` (P8) of a
# twist and its dual ``rel_k o f o rel_k*`` (P19) of a wrench are evaluated
# through their matrix form ``Ad_k = [[R^T, 0], [-[r]x R^T, R^T]]``
# (``dq_adjoint``; r = r^k the translation of rel_k in body k), from R and r^k
# computed once per body from the joint's dual quaternion
# (:func:`_joint_transform`): 24 multiplications per frame change instead of
# the 57 of the sandwich product ``dv_frame_change`` (``docs/op-counts.md``).
#
# Speed.  The passes are compiled with ``fastmath={"contract"}`` only: LLVM may fuse
# ``a * b + c`` into one fused multiply-add (one rounding instead of two, so never
# less accurate; no other fast-math licence -- no reassociation, NaNs and infinities
# kept).  Results stay deterministic on a given machine; they may differ in the last
# bit from a machine without FMA.
# The helpers and passes taking arrays are compiled with numba's
# ``_nrt=False``: a compiled function with array arguments and branches
# otherwise pays an atomic reference-count increment and decrement per array
# argument and per array view at every call, which numba's pruning does not
# remove.  The rule that
# makes this safe: an ``_nrt=False`` function never allocates, never returns
# an array, and only sees arrays its NRT-enabled caller owns (the public
# kernels ``rnea``, ``crba``, ``body_motions``, ``_aba.aba``, ... allocate W
# and call the passes).  Small results travel as tuples of floats.  The
# per-body steps called once per body by every recursion (relative_pose,
# _joint_transform, _twist_step, _acceleration_step, _velocity_wrench,
# _composite_to_parent) are inlined by numba (``inline="always"``): LLVM does
# not inline them on its own (too large), and the call, which passes each
# array as its ~9 separate fields, cost about 200 ns per rnea call on the
# paper's model; inlining them costs ~2 s of compilation from a cold cache,
# once.


@njit(cache=True)
def _qmul(a0, a1, a2, a3, b0, b1, b2, b3):
    """The Hamilton product ``a o b`` (``q_mul``) on scalars, returned as a 4-tuple."""
    return (
        a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
        a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
        a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
        a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0,
    )


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _store6(W, k, o, x):
    """``W[k, o:o+6] = x`` for a 6-tuple x (a dual vector into its workspace field)."""
    W[k, o] = x[0]
    W[k, o + 1] = x[1]
    W[k, o + 2] = x[2]
    W[k, o + 3] = x[3]
    W[k, o + 4] = x[4]
    W[k, o + 5] = x[5]


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def relative_pose(ints, reals, k, q):
    """``rel_k = placement_k o X_J(q_k)``: pose of body k in its parent (or the inertial frame).

    The dual-quaternion product (Table 1) ``p_r x_r + eps (p_r x_d + p_d x_r)``
    of the placement ``p`` and the joint motion ``x = X_J(q_k)`` (revolute:
    ``[cos(theta/2), sin(theta/2) axis]``; prismatic: ``1 + eps theta/2 axis``;
    spherical: the joint's quaternion; free: its dual quaternion), with the
    joint motion's zero parts skipped.  The one place that builds a joint's
    pose; an 8-tuple ``[rel_r, rel_d]``.
    """
    t = ints[k, I_JTYPE]
    iq = ints[k, I_QI]
    p0, p1, p2, p3 = (
        reals[k, R_PLACE],
        reals[k, R_PLACE + 1],
        reals[k, R_PLACE + 2],
        reals[k, R_PLACE + 3],
    )
    d0, d1, d2, d3 = (
        reals[k, R_PLACE + 4],
        reals[k, R_PLACE + 5],
        reals[k, R_PLACE + 6],
        reals[k, R_PLACE + 7],
    )
    if t == REVOLUTE or t == SPHERICAL:
        if t == REVOLUTE:
            h = 0.5 * q[iq]
            s = math.sin(h)
            x0, x1, x2, x3 = (
                math.cos(h),
                s * reals[k, R_AXIS],
                s * reals[k, R_AXIS + 1],
                s * reals[k, R_AXIS + 2],
            )
        else:
            x0, x1, x2, x3 = q[iq], q[iq + 1], q[iq + 2], q[iq + 3]
        r0, r1, r2, r3 = _qmul(p0, p1, p2, p3, x0, x1, x2, x3)
        e0, e1, e2, e3 = _qmul(d0, d1, d2, d3, x0, x1, x2, x3)
    elif t == PRISMATIC:
        h = 0.5 * q[iq]
        r0, r1, r2, r3 = p0, p1, p2, p3
        h0, h1, h2 = h * reals[k, R_AXIS], h * reals[k, R_AXIS + 1], h * reals[k, R_AXIS + 2]
        e0, e1, e2, e3 = _qmul(p0, p1, p2, p3, 0.0, h0, h1, h2)
        e0, e1, e2, e3 = e0 + d0, e1 + d1, e2 + d2, e3 + d3
    elif t == FREE:
        r0, r1, r2, r3 = _qmul(p0, p1, p2, p3, q[iq], q[iq + 1], q[iq + 2], q[iq + 3])
        e0, e1, e2, e3 = _qmul(p0, p1, p2, p3, q[iq + 4], q[iq + 5], q[iq + 6], q[iq + 7])
        f0, f1, f2, f3 = _qmul(d0, d1, d2, d3, q[iq], q[iq + 1], q[iq + 2], q[iq + 3])
        e0, e1, e2, e3 = e0 + f0, e1 + f1, e2 + f2, e3 + f3
    else:
        r0, r1, r2, r3 = p0, p1, p2, p3
        e0, e1, e2, e3 = d0, d1, d2, d3
    return r0, r1, r2, r3, e0, e1, e2, e3


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def _joint_transform(ints, reals, k, q, W):
    """The frame of body k in its parent: R and r^k of :func:`relative_pose` into W[k].

    ``R`` is the rotation matrix of ``rel_r`` (``q_to_rotation_matrix``) and
    ``r^k = 2 vec(rel_r* o rel_d)`` (``dq_translation_body``).
    """
    r0, r1, r2, r3, e0, e1, e2, e3 = relative_pose(ints, reals, k, q)
    # rotation matrix of rel_r (q_to_rotation_matrix)
    W[k, _R] = 1.0 - 2.0 * (r2 * r2 + r3 * r3)
    W[k, _R + 1] = 2.0 * (r1 * r2 - r0 * r3)
    W[k, _R + 2] = 2.0 * (r1 * r3 + r0 * r2)
    W[k, _R + 3] = 2.0 * (r1 * r2 + r0 * r3)
    W[k, _R + 4] = 1.0 - 2.0 * (r1 * r1 + r3 * r3)
    W[k, _R + 5] = 2.0 * (r2 * r3 - r0 * r1)
    W[k, _R + 6] = 2.0 * (r1 * r3 - r0 * r2)
    W[k, _R + 7] = 2.0 * (r2 * r3 + r0 * r1)
    W[k, _R + 8] = 1.0 - 2.0 * (r1 * r1 + r2 * r2)
    # r^k = 2 vec(rel_r* o rel_d)
    _, t1, t2, t3 = _qmul(r0, -r1, -r2, -r3, e0, e1, e2, e3)
    W[k, _RB] = 2.0 * t1
    W[k, _RB + 1] = 2.0 * t2
    W[k, _RB + 2] = 2.0 * t3


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _to_child(W, k, x0, x1, x2, x3, x4, x5):
    """``Ad_k x = rel_k* o x o rel_k`` (P8) of a twist or acceleration ``x = [w, v]``.

    Real part ``R^T x_r``, dual part ``R^T x_d + (R^T x_r) x r^k``; a 6-tuple.
    """
    R00, R01, R02 = W[k, _R], W[k, _R + 1], W[k, _R + 2]
    R10, R11, R12 = W[k, _R + 3], W[k, _R + 4], W[k, _R + 5]
    R20, R21, R22 = W[k, _R + 6], W[k, _R + 7], W[k, _R + 8]
    r0, r1, r2 = W[k, _RB], W[k, _RB + 1], W[k, _RB + 2]
    y0 = R00 * x0 + R10 * x1 + R20 * x2
    y1 = R01 * x0 + R11 * x1 + R21 * x2
    y2 = R02 * x0 + R12 * x1 + R22 * x2
    return (
        y0,
        y1,
        y2,
        R00 * x3 + R10 * x4 + R20 * x5 + (y1 * r2 - y2 * r1),
        R01 * x3 + R11 * x4 + R21 * x5 + (y2 * r0 - y0 * r2),
        R02 * x3 + R12 * x4 + R22 * x5 + (y0 * r1 - y1 * r0),
    )


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _to_parent(W, k, f0, f1, f2, t0, t1, t2):
    """``rel_k o f o rel_k*`` (P19) of a wrench ``[f, tau]`` of body k, in its parent.

    ``f_p = R f``, ``tau_p = R (tau + r^k x f)`` (the moment about the parent's
    origin); a 6-tuple ``[f_p, tau_p]``.
    """
    r0, r1, r2 = W[k, _RB], W[k, _RB + 1], W[k, _RB + 2]
    m0 = t0 + (r1 * f2 - r2 * f1)
    m1 = t1 + (r2 * f0 - r0 * f2)
    m2 = t2 + (r0 * f1 - r1 * f0)
    R00, R01, R02 = W[k, _R], W[k, _R + 1], W[k, _R + 2]
    R10, R11, R12 = W[k, _R + 3], W[k, _R + 4], W[k, _R + 5]
    R20, R21, R22 = W[k, _R + 6], W[k, _R + 7], W[k, _R + 8]
    return (
        R00 * f0 + R01 * f1 + R02 * f2,
        R10 * f0 + R11 * f1 + R12 * f2,
        R20 * f0 + R21 * f1 + R22 * f2,
        R00 * m0 + R01 * m1 + R02 * m2,
        R10 * m0 + R11 * m1 + R12 * m2,
        R20 * m0 + R21 * m1 + R22 * m2,
    )


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _wrench_to_parent(W, k, src, so, p, dst):
    """``W[p, dst:dst+6] += Ad_k^T f`` for the swapped wrench ``f = W[src, so:so+6] = [tau, f]``.

    ``Ad_k^T f`` is the swap of ``rel_k o f^ o rel_k*`` (:func:`_to_parent`).
    """
    f0, f1, f2, t0, t1, t2 = _to_parent(
        W, k, W[src, so + 3], W[src, so + 4], W[src, so + 5],
        W[src, so], W[src, so + 1], W[src, so + 2],
    )  # fmt: skip
    W[p, dst] += t0
    W[p, dst + 1] += t1
    W[p, dst + 2] += t2
    W[p, dst + 3] += f0
    W[p, dst + 4] += f1
    W[p, dst + 5] += f2


@njit(cache=True)
def _rotate(R, s00, s01, s02, s10, s11, s12, s20, s21, s22, sym):
    """``R S R^T`` for a 3x3 ``S`` (row-major scalars), R a 9-tuple (row-major).

    Returns the 9 entries row-major; with ``sym`` (S symmetric) the lower
    triangle is copied from the upper one.
    """
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = R
    # T = S R^T
    t00 = s00 * R00 + s01 * R01 + s02 * R02
    t01 = s00 * R10 + s01 * R11 + s02 * R12
    t02 = s00 * R20 + s01 * R21 + s02 * R22
    t10 = s10 * R00 + s11 * R01 + s12 * R02
    t11 = s10 * R10 + s11 * R11 + s12 * R12
    t12 = s10 * R20 + s11 * R21 + s12 * R22
    t20 = s20 * R00 + s21 * R01 + s22 * R02
    t21 = s20 * R10 + s21 * R11 + s22 * R12
    t22 = s20 * R20 + s21 * R21 + s22 * R22
    o00 = R00 * t00 + R01 * t10 + R02 * t20
    o01 = R00 * t01 + R01 * t11 + R02 * t21
    o02 = R00 * t02 + R01 * t12 + R02 * t22
    o11 = R10 * t01 + R11 * t11 + R12 * t21
    o12 = R10 * t02 + R11 * t12 + R12 * t22
    o22 = R20 * t02 + R21 * t12 + R22 * t22
    if sym:
        return o00, o01, o02, o01, o11, o12, o02, o12, o22
    o10 = R10 * t00 + R11 * t10 + R12 * t20
    o20 = R20 * t00 + R21 * t10 + R22 * t20
    o21 = R20 * t01 + R21 * t11 + R22 * t21
    return o00, o01, o02, o10, o11, o12, o20, o21, o22


@njit(cache=True)
def _cross6(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    """Dual cross product ``a x b`` (``dv_cross``, Table 1) on scalars, a 6-tuple."""
    return (
        a1 * b2 - a2 * b1,
        a2 * b0 - a0 * b2,
        a0 * b1 - a1 * b0,
        (a1 * b5 - a2 * b4) + (a4 * b2 - a5 * b1),
        (a2 * b3 - a0 * b5) + (a5 * b0 - a3 * b2),
        (a0 * b4 - a1 * b3) + (a3 * b1 - a4 * b0),
    )


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def _twist_step(ints, reals, k, q, v, W):
    """Frame, twist and velocity product of body k into W[k] (one step of P12, P15).

    ``rel_k`` as R and r^k (:func:`_joint_transform`), ``w_k = Ad_k w_parent +
    S_k v_k`` (P12; the root's parent is the inertial frame, at rest) and
    ``alpha_k = (Ad_k w_parent) x S_k v_k = w_k x S_k v_k`` (P15 for a joint
    whose motion subspace is constant in body coordinates).  The velocity step
    of every recursion (``benchmarks/op_counts.py`` counts it).
    """
    _joint_transform(ints, reals, k, q, W)
    p = ints[k, I_PARENT]
    if p < 0:
        w0 = w1 = w2 = w3 = w4 = w5 = 0.0
    else:
        w0, w1, w2, w3, w4, w5 = _to_child(
            W, k, W[p, _TW], W[p, _TW + 1], W[p, _TW + 2],
            W[p, _TW + 3], W[p, _TW + 4], W[p, _TW + 5],
        )  # fmt: skip
    s0, s1, s2, s3, s4, s5 = _joint_twist(ints, reals, k, v)
    _store6(W, k, _AL, _cross6(w0, w1, w2, w3, w4, w5, s0, s1, s2, s3, s4, s5))
    _store6(W, k, _TW, (w0 + s0, w1 + s1, w2 + s2, w3 + s3, w4 + s4, w5 + s5))


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def _velocity_wrench(reals, k, W, fext):
    """``w_k x M^_k w_k - fext_k`` (the velocity and external terms of P23), ``[f, tau]``.

    ``fext`` (nb, 6), or (0, 6) for none.  A 6-tuple.
    """
    w0, w1, w2 = W[k, _TW], W[k, _TW + 1], W[k, _TW + 2]
    w3, w4, w5 = W[k, _TW + 3], W[k, _TW + 4], W[k, _TW + 5]
    h0, h1, h2, h3, h4, h5 = _momentum6(reals, k, w0, w1, w2, w3, w4, w5)
    c0, c1, c2, c3, c4, c5 = _cross6(w0, w1, w2, w3, w4, w5, h0, h1, h2, h3, h4, h5)
    if fext.shape[0] > 0:
        return (
            c0 - fext[k, 0], c1 - fext[k, 1], c2 - fext[k, 2],
            c3 - fext[k, 3], c4 - fext[k, 4], c5 - fext[k, 5],
        )  # fmt: skip
    return (c0, c1, c2, c3, c4, c5)


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _bias_acceleration(W, k, src, so):
    """``Ad_k acc_parent + alpha_k``: P16 without the joint's own ``S_k a_k``, a 6-tuple.

    ``acc_parent = W[src, so:so+6]`` (the parent's row, or the inertial
    frame's ``-g``), ``alpha_k`` the velocity product of :func:`_twist_step`.
    """
    y0, y1, y2, y3, y4, y5 = _to_child(
        W, k, W[src, so], W[src, so + 1], W[src, so + 2],
        W[src, so + 3], W[src, so + 4], W[src, so + 5],
    )  # fmt: skip
    return (
        y0 + W[k, _AL], y1 + W[k, _AL + 1], y2 + W[k, _AL + 2],
        y3 + W[k, _AL + 3], y4 + W[k, _AL + 4], y5 + W[k, _AL + 5],
    )  # fmt: skip


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _inertial_acceleration(gravity):
    """``[0, -g]``: the acceleration of the inertial frame, the root's parent, in the
    recursions, so that gravity ``gravity`` (3,) [m/s^2] enters every body's
    acceleration (``acc_k = d/dt w_k - g_k``).  A 6-tuple."""
    return (0.0, 0.0, 0.0, -gravity[0], -gravity[1], -gravity[2])


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def _acceleration_step(ints, reals, k, a, W):
    """Acceleration of body k into W[k] (one step of P16, after :func:`_twist_step`).

    ``acc_k = Ad_k acc_parent + alpha_k + S_k a_k``; the root's parent is the
    inertial frame, whose acceleration ``-g`` is in row nb of W.
    """
    p = ints[k, I_PARENT]
    if p < 0:
        p = ints.shape[0]
    y0, y1, y2, y3, y4, y5 = _bias_acceleration(W, k, p, _ACC)
    s0, s1, s2, s3, s4, s5 = _joint_twist(ints, reals, k, a)
    _store6(W, k, _ACC, (y0 + s0, y1 + s1, y2 + s2, y3 + s3, y4 + s4, y5 + s5))


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def _body_wrench(reals, k, W, fext):
    """``f_k = M^_k acc_k + w_k x M^_k w_k - fext_k`` (P23 before the children's
    wrenches are added), swapped ``[tau, f]``, into ``W[k, _F]``."""
    m0, m1, m2, m3, m4, m5 = _momentum6(
        reals, k, W[k, _ACC], W[k, _ACC + 1], W[k, _ACC + 2],
        W[k, _ACC + 3], W[k, _ACC + 4], W[k, _ACC + 5],
    )  # fmt: skip
    b0, b1, b2, b3, b4, b5 = _velocity_wrench(reals, k, W, fext)
    _store6(W, k, _F, (m3 + b3, m4 + b4, m5 + b5, m0 + b0, m1 + b1, m2 + b2))


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def _forward_pass(ints, reals, gravity, q, v, a, fext, W, wrenches):
    """Base-to-tip pass of every recursion (P12, P15, P16) into W (nb + 1, _RNEA_STRIDE).

    For each body k, in one sweep: its frame in its parent (R, r^k), twist
    ``w_k`` and velocity product ``alpha_k`` (:func:`_twist_step`), and its
    acceleration ``acc_k = d/dt w_k - g_k`` (:func:`_acceleration_step`;
    ``gravity`` (3,) [m/s^2] enters as the acceleration ``-g`` of the inertial
    frame, row nb); with ``wrenches``, also rnea's body wrench
    (:func:`_body_wrench`; ``fext`` (nb, 6), or (0, 6) for none; not read
    otherwise).  ``wrenches`` is a constant at each call, so the inlined pass
    keeps only what is asked for; computing the wrenches in the same sweep,
    not in a second loop, saves ~1 % of rnea.
    """
    nb = ints.shape[0]
    _store6(W, nb, _ACC, _inertial_acceleration(gravity))
    for k in range(nb):
        _twist_step(ints, reals, k, q, v, W)
        _acceleration_step(ints, reals, k, a, W)
        if wrenches:
            _body_wrench(reals, k, W, fext)


# --------------------------------------------------------------- kinematics


@njit(cache=True)
def _kinematics_pass(ints, reals, q, v, a, W):
    """:func:`_forward_pass` without gravity nor wrenches, compiled as a function of its own.

    Frames, twists (P12), velocity products (P15) and accelerations
    ``acc_k = d/dt w_k`` (P16) of every body into W (nb + 1, _RNEA_STRIDE).
    For the kinematics kernels, which are not speed-critical: one compilation
    shared by all of them instead of an inlined copy each (~1 s of compilation
    from a cold cache per copy).
    """
    _forward_pass(ints, reals, np.zeros(3), q, v, a, np.empty((0, 6)), W, False)


@njit(cache=True)
def poses(ints, reals, q, rel, pose):
    """Relative poses ``rel[k]`` (:func:`relative_pose`) and inertial poses
    ``pose[k] = pose[parent] o rel[k]`` (nb, 8)."""
    nb = ints.shape[0]
    for k in range(nb):
        x = relative_pose(ints, reals, k, q)
        rel[k, 0], rel[k, 1], rel[k, 2], rel[k, 3] = x[0], x[1], x[2], x[3]
        rel[k, 4], rel[k, 5], rel[k, 6], rel[k, 7] = x[4], x[5], x[6], x[7]
        p = ints[k, I_PARENT]
        if p < 0:
            for j in range(8):
                pose[k, j] = rel[k, j]
        else:
            dq_mul(pose[p], rel[k], pose[k])


@njit(cache=True)
def body_motions(ints, reals, q, v, a, twist, acc):
    """Twists ``twist`` (nb, 6) (P12) and accelerations ``acc`` (nb, 6) (P16) of every body.

    The forward pass of the dynamics (:func:`_kinematics_pass`) without
    gravity: ``acc[k] = d/dt w_k`` (the body-frame derivative of the body
    twist).  ``acc`` (0, 6) for the twists only (``a`` is then not read).
    """
    nb = ints.shape[0]
    with_acc = acc.shape[0] > 0
    W = np.empty((nb + 1, _RNEA_STRIDE))
    _kinematics_pass(ints, reals, q, v, a if with_acc else np.zeros(v.shape[0]), W)
    for k in range(nb):
        for j in range(6):
            twist[k, j] = W[k, _TW + j]
            if with_acc:
                acc[k, j] = W[k, _ACC + j]


# ------------------------------------------------------------ inverse dynamics


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _rnea(ints, reals, gravity, q, v, a, fext, tau, W):
    """The two passes of :func:`rnea` on the workspace W (nb + 1, _RNEA_STRIDE).

    Fills ``tau`` (nv,); ``W[k, _F:_F+6]`` holds the joint wrench ``f_k`` swapped.
    ``fext`` is (nb, 6), or (0, 6) for no external wrenches.
    """
    nb = ints.shape[0]
    _forward_pass(ints, reals, gravity, q, v, a, fext, W, True)
    for k in range(nb - 1, -1, -1):
        t = ints[k, I_JTYPE]
        i = ints[k, I_VI]
        if t == REVOLUTE or t == PRISMATIC:
            o = _F if t == REVOLUTE else _F + 3  # the torque or the force
            tau[i] = (
                reals[k, R_AXIS] * W[k, o]
                + reals[k, R_AXIS + 1] * W[k, o + 1]
                + reals[k, R_AXIS + 2] * W[k, o + 2]
            )
        elif t == SPHERICAL:
            for j in range(3):
                tau[i + j] = W[k, _F + j]
        elif t == FREE:
            for j in range(6):
                tau[i + j] = W[k, _F + j]
        p = ints[k, I_PARENT]
        if p >= 0:
            _wrench_to_parent(W, k, k, _F, p, _F)


@njit(cache=True)
def rnea(ints, reals, gravity, q, v, a, fext, tau, force):
    """Recursive inverse dynamics (P23) with the swap; returns nothing, fills tau and force.

    Base-to-tip pass: frames, twists ``w_k = Ad_k w_parent + S_k v_k`` (P12),
    accelerations ``acc_k = Ad_k acc_parent + S_k a_k + w_k x S_k v_k`` (P16,
    P15) and the wrenches ``M^_k acc_k + w_k x M^_k w_k - fext_k``; gravity
    enters as the acceleration ``-g`` of the inertial frame (the parent of the
    root), so ``acc_k = d/dt w_k - g_k``.  Tip-to-base pass:
    ``f_k += sum_c Ad_c^-1 f_c`` (the wrench frame change ``rel_c o f_c o
    rel_c*``, P19) and ``tau_k = S_k^T f_k^s``.  The frame changes are the
    dual-quaternion ones evaluated through their rotation + translation form
    (see :func:`_to_child`, :func:`_to_parent`).  ``force[k]`` (nb, 6) is the
    wrench ``[f, tau]`` the joint of body k transmits to body k (from its
    parent), in body k, about its origin.  ``fext`` (nb, 6) (or (0, 6): none).
    """
    nb = ints.shape[0]
    W = np.empty((nb + 1, _RNEA_STRIDE))
    _rnea(ints, reals, gravity, q, v, a, fext, tau, W)
    for k in range(nb):
        for j in range(3):
            force[k, j] = W[k, _F + 3 + j]
            force[k, 3 + j] = W[k, _F + j]


# ----------------------------------------------------------------- mass matrix

# crba's workspace row k: the frame fields, then the composite rigid-body
# inertia of the subtree of body k, in body k's frame, about its origin:
_MC = 12  # mass [kg]
_HC = 13  # first moment m c [kg m]
_JC = 16  # inertia about the origin, upper triangle J00 J01 J02 J11 J12 J22 [kg m^2]
_CRBA_STRIDE = 22


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def _composite_to_parent(W, k, p):
    """Add body k's composite inertia (m, h = m c, J) to its parent's, moved through rel_k.

    About the parent's origin, in k's axes (r = r^k): ``h' = h + m r``,
    ``J' = J - [r]x[h]x - [h]x[r]x - m [r]x^2
    = J + (2 r.h + m r.r) I - h r^T - r h^T - m r r^T``; then rotated into the
    parent's axes: ``h_p += R h'``, ``J_p += R J' R^T``.
    """
    m = W[k, _MC]
    r0, r1, r2 = W[k, _RB], W[k, _RB + 1], W[k, _RB + 2]
    h0, h1, h2 = W[k, _HC], W[k, _HC + 1], W[k, _HC + 2]
    d = 2.0 * (r0 * h0 + r1 * h1 + r2 * h2) + m * (r0 * r0 + r1 * r1 + r2 * r2)
    mr0, mr1, mr2 = m * r0, m * r1, m * r2
    j00 = W[k, _JC] + d - 2.0 * h0 * r0 - mr0 * r0
    j01 = W[k, _JC + 1] - h0 * r1 - r0 * h1 - mr0 * r1
    j02 = W[k, _JC + 2] - h0 * r2 - r0 * h2 - mr0 * r2
    j11 = W[k, _JC + 3] + d - 2.0 * h1 * r1 - mr1 * r1
    j12 = W[k, _JC + 4] - h1 * r2 - r1 * h2 - mr1 * r2
    j22 = W[k, _JC + 5] + d - 2.0 * h2 * r2 - mr2 * r2
    g0, g1, g2 = h0 + mr0, h1 + mr1, h2 + mr2
    R = (
        W[k, _R], W[k, _R + 1], W[k, _R + 2],
        W[k, _R + 3], W[k, _R + 4], W[k, _R + 5],
        W[k, _R + 6], W[k, _R + 7], W[k, _R + 8],
    )  # fmt: skip
    A = _rotate(R, j00, j01, j02, j01, j11, j12, j02, j12, j22, True)
    W[p, _MC] += m
    W[p, _HC] += R[0] * g0 + R[1] * g1 + R[2] * g2
    W[p, _HC + 1] += R[3] * g0 + R[4] * g1 + R[5] * g2
    W[p, _HC + 2] += R[6] * g0 + R[7] * g1 + R[8] * g2
    W[p, _JC] += A[0]
    W[p, _JC + 1] += A[1]
    W[p, _JC + 2] += A[2]
    W[p, _JC + 3] += A[4]
    W[p, _JC + 4] += A[5]
    W[p, _JC + 5] += A[8]


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _composite_momentum(W, k, w0, w1, w2, v0, v1, v2):
    """``[p, h_O]`` of body k's composite inertia moving with the twist ``[w, v]`` (P6)."""
    m = W[k, _MC]
    h0, h1, h2 = W[k, _HC], W[k, _HC + 1], W[k, _HC + 2]
    J00, J01, J02 = W[k, _JC], W[k, _JC + 1], W[k, _JC + 2]
    J11, J12, J22 = W[k, _JC + 3], W[k, _JC + 4], W[k, _JC + 5]
    return (
        m * v0 + (w1 * h2 - w2 * h1),
        m * v1 + (w2 * h0 - w0 * h2),
        m * v2 + (w0 * h1 - w1 * h0),
        J00 * w0 + J01 * w1 + J02 * w2 + (h1 * v2 - h2 * v1),
        J01 * w0 + J11 * w1 + J12 * w2 + (h2 * v0 - h0 * v2),
        J02 * w0 + J12 * w1 + J22 * w2 + (h0 * v1 - h1 * v0),
    )


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _project_column(ints, reals, j, f0, f1, f2, t0, t1, t2, M, col):
    """``M[v_j, col] = M[col, v_j] = S_j^T f^s`` for the wrench ``[f, tau]`` of body j."""
    t = ints[j, I_JTYPE]
    vj = ints[j, I_VI]
    if t == REVOLUTE or t == PRISMATIC:
        if t == REVOLUTE:
            x = reals[j, R_AXIS] * t0 + reals[j, R_AXIS + 1] * t1 + reals[j, R_AXIS + 2] * t2
        else:
            x = reals[j, R_AXIS] * f0 + reals[j, R_AXIS + 1] * f1 + reals[j, R_AXIS + 2] * f2
        M[vj, col] = x
        M[col, vj] = x
    elif t == SPHERICAL or t == FREE:
        M[vj, col] = M[col, vj] = t0
        M[vj + 1, col] = M[col, vj + 1] = t1
        M[vj + 2, col] = M[col, vj + 2] = t2
        if t == FREE:
            M[vj + 3, col] = M[col, vj + 3] = f0
            M[vj + 4, col] = M[col, vj + 4] = f1
            M[vj + 5, col] = M[col, vj + 5] = f2


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _crba(ints, reals, q, M, W):
    """:func:`crba` on the workspace W (nb, at least _CRBA_STRIDE columns)."""
    nb = ints.shape[0]
    nv = M.shape[0]
    for k in range(nb):
        _joint_transform(ints, reals, k, q, W)
        m = reals[k, R_MASS]
        W[k, _MC] = m
        for i in range(3):
            W[k, _HC + i] = m * reals[k, R_COM + i]
        W[k, _JC] = reals[k, R_JO]
        W[k, _JC + 1] = reals[k, R_JO + 1]
        W[k, _JC + 2] = reals[k, R_JO + 2]
        W[k, _JC + 3] = reals[k, R_JO + 4]
        W[k, _JC + 4] = reals[k, R_JO + 5]
        W[k, _JC + 5] = reals[k, R_JO + 8]
    for k in range(nb - 1, -1, -1):
        p = ints[k, I_PARENT]
        if p >= 0:
            _composite_to_parent(W, k, p)
    for i in range(nv):
        for j in range(nv):
            M[i, j] = 0.0
    for k in range(nb):
        vk = ints[k, I_VI]
        for c in range(joint_nv(ints[k, I_JTYPE])):
            s0, s1, s2, s3, s4, s5 = _joint_column(ints, reals, k, c)
            # the composite momentum Ic_k S_k e_c, a wrench [f, tau] in body k
            f0, f1, f2, t0, t1, t2 = _composite_momentum(W, k, s0, s1, s2, s3, s4, s5)
            j = k
            while True:
                _project_column(ints, reals, j, f0, f1, f2, t0, t1, t2, M, vk + c)
                p = ints[j, I_PARENT]
                if p < 0:
                    break
                f0, f1, f2, t0, t1, t2 = _to_parent(W, j, f0, f1, f2, t0, t1, t2)
                j = p


@njit(cache=True)
def crba(ints, reals, q, M):
    """Mass matrix ``M = S^T Phi^T I Phi S`` (P31) by composite inertias.

    ``Phi = (I - Q)^-1`` is never formed: its nilpotent block structure (a
    block ``Phi[j, k]`` is non-zero only for j an ancestor of k) lets the
    product be evaluated by one tip-to-base sweep of composite rigid-body
    inertias (10 parameters each: mass, first moment, inertia about the body
    origin) and, per joint column, one walk to the root carrying the
    composite momentum ``Ic_k S_k`` with the wrench frame change
    ``rel_j o f o rel_j*`` (P19, evaluated through its rotation + translation
    form, :func:`_to_parent`).
    """
    W = np.empty((ints.shape[0], _CRBA_STRIDE))
    _crba(ints, reals, q, M, W)


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _chol(A, n):
    """In-place Cholesky ``A = L L^T`` of the leading n x n block: L below the diagonal,
    ``1 / L_jj`` on it.  False if A is not positive-definite."""
    for j in range(n):
        s = A[j, j]
        for m in range(j):
            s -= A[j, m] * A[j, m]
        if not s > 0.0:
            return False
        r = 1.0 / math.sqrt(s)
        A[j, j] = r
        for i in range(j + 1, n):
            s = A[i, j]
            for m in range(j):
                s -= A[i, m] * A[j, m]
            A[i, j] = s * r
    return True


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _chol_solve(L, n, x):
    """``x <- (L L^T)^-1 x`` in place (first n entries) with the factor of :func:`_chol`."""
    for i in range(n):
        s = x[i]
        for m in range(i):
            s -= L[i, m] * x[m]
        x[i] = s * L[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for m in range(i + 1, n):
            s -= L[m, i] * x[m]
        x[i] = s * L[i, i]


@njit(cache=True)
def forward_dynamics_matrix(ints, reals, gravity, q, v, tau, fext, a):
    """Forward dynamics (P32): ``M a = tau - C`` by a Cholesky solve.

    ``M`` by :func:`crba` (P31), ``C`` by :func:`rnea` (P23) at zero acceleration,
    on one workspace; the factorization is :func:`_chol` (shared with the mixed
    problem of ``_aba``).  Returns False if M is not positive-definite (``a``
    is then left untouched).
    """
    nv = v.shape[0]
    M = np.empty((nv, nv))
    W = np.empty((ints.shape[0] + 1, _RNEA_STRIDE))
    _crba(ints, reals, q, M, W)
    C = np.empty(nv)
    zero = np.zeros(nv)
    _rnea(ints, reals, gravity, q, v, zero, fext, C, W)
    if not _chol(M, nv):
        return False
    for i in range(nv):
        a[i] = tau[i] - C[i]
    _chol_solve(M, nv, a)
    return True


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
        t = ints[k, I_JTYPE]
        i = ints[k, I_QI]
        j = ints[k, I_VI]
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
        t = ints[k, I_JTYPE]
        i = ints[k, I_QI]
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


# ------------------------------------------------------ momentum and energy


@njit(cache=True)
def system_momentum(ints, reals, q, v, out):
    """Total momentum ``[p, h_O]`` (6,) in the inertial frame, h about the inertial origin.

    Twists by the forward pass (P12); each body's momentum ``M^_k w_k = [p, h]``
    (P6, about its origin, in its frame) is added into its parent's with the
    wrench frame change ``rel_k o x o rel_k*`` (P19, as in ``rnea``'s
    tip-to-base pass), and a root's (its parent is the inertial frame) into ``out``.
    """
    nb = ints.shape[0]
    W = np.empty((nb + 1, _RNEA_STRIDE))
    _kinematics_pass(ints, reals, q, v, np.zeros(v.shape[0]), W)
    for k in range(nb):
        p0, p1, p2, h0, h1, h2 = _momentum6(
            reals, k, W[k, _TW], W[k, _TW + 1], W[k, _TW + 2],
            W[k, _TW + 3], W[k, _TW + 4], W[k, _TW + 5],
        )  # fmt: skip
        W[k, _F], W[k, _F + 1], W[k, _F + 2] = h0, h1, h2
        W[k, _F + 3], W[k, _F + 4], W[k, _F + 5] = p0, p1, p2
    for j in range(6):
        out[j] = 0.0
    for k in range(nb - 1, -1, -1):
        p = ints[k, I_PARENT]
        if p >= 0:
            _wrench_to_parent(W, k, k, _F, p, _F)
        else:
            f = _to_parent(
                W, k, W[k, _F + 3], W[k, _F + 4], W[k, _F + 5],
                W[k, _F], W[k, _F + 1], W[k, _F + 2],
            )  # fmt: skip
            for j in range(6):
                out[j] += f[j]


@njit(cache=True)
def kinetic_energy(ints, reals, q, v):
    """``T = 1/2 sum_k <w_k, (M^_k w_k)^s>`` [J], twists by the forward pass (P12)."""
    nb = ints.shape[0]
    W = np.empty((nb + 1, _RNEA_STRIDE))
    _kinematics_pass(ints, reals, q, v, np.zeros(v.shape[0]), W)
    T = 0.0
    for k in range(nb):
        w0, w1, w2 = W[k, _TW], W[k, _TW + 1], W[k, _TW + 2]
        u0, u1, u2 = W[k, _TW + 3], W[k, _TW + 4], W[k, _TW + 5]
        p0, p1, p2, h0, h1, h2 = _momentum6(reals, k, w0, w1, w2, u0, u1, u2)
        T += w0 * h0 + w1 * h1 + w2 * h2 + u0 * p0 + u1 * p1 + u2 * p2
    return 0.5 * T


@njit(cache=True)
def frame_jacobian(ints, reals, pose, body, placement, J):
    """Jacobian (6, nv) of a frame rigidly attached to ``body``, in the frame's own axes.

    Column block of joint k (k on the path from body to the root):
    ``Ad(q^_{k,F}) S_k`` with ``q^_{k,F} = pose_k* o pose_body o placement``.
    """
    nv = J.shape[1]
    for i in range(6):
        for j in range(nv):
            J[i, j] = 0.0
    pf = np.empty(8)
    dq_mul(pose[body], placement, pf)
    conj = np.empty(8)
    kf = np.empty(8)
    col = np.empty(6)
    out = np.empty(6)
    k = body
    while k >= 0:
        t = ints[k, I_JTYPE]
        nk = joint_nv(t)
        vk = ints[k, I_VI]
        if nk > 0:
            for m in range(8):
                conj[m] = -pose[k, m] if (m % 4) != 0 else pose[k, m]
            dq_mul(conj, pf, kf)
            for c in range(nk):
                _column(ints, reals, k, c, col)
                dv_frame_change(kf, col, out)
                for i in range(6):
                    J[i, vk + c] = out[i]
        k = ints[k, I_PARENT]


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
        t = ints[k, I_JTYPE]
        j = ints[k, I_VI]
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
