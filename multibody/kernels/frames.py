"""Joints, inertias and frames: the per-body building blocks of every recursion.

* The joint of body k: its twist ``S_k x`` for a velocity or acceleration vector x
  (:func:`_joint_twist`), the columns of its motion subspace ``S_k`` (the paper's ``H^_k``;
  :func:`_joint_column`), and its pose ``rel_k = placement_k o X_J(q_k)``
  (:func:`relative_pose`, the one place that builds it).
* The dual inertia ``M^_k`` applied to a twist (:func:`_momentum6`, P6).
* Frames as rotation + translation.  The dual-quaternion frame change
  ``Ad_k x = rel_k* o x o rel_k`` (P8) of a twist and its dual ``rel_k o f o rel_k*`` (P19)
  of a wrench are evaluated through their matrix form
  ``Ad_k = [[R^T, 0], [-[r]x R^T, R^T]]`` (``dq_adjoint``; r = r^k the translation of
  rel_k in body k), from R and r^k computed once per body (:func:`_joint_transform`, into
  the workspace fields ``ROT`` and ``TRANS`` of :mod:`.layout`): 24 multiplications per
  frame change instead of the 57 of the sandwich product ``dv_frame_change``
  (``docs/op-counts.md``).  :func:`_to_child` carries a twist into body k,
  :func:`_to_parent` a wrench out of it.

Speed.  The passes are compiled with ``fastmath={"contract"}`` only: LLVM may fuse
``a * b + c`` into one fused multiply-add (one rounding instead of two, so never less
accurate; no other fast-math licence -- no reassociation, NaNs and infinities kept).
Results stay deterministic on a given machine; they may differ in the last bit from a
machine without FMA.  The helpers and passes taking arrays are compiled with numba's
``_nrt=False``: a compiled function with array arguments and branches otherwise pays an
atomic reference-count increment and decrement per array argument and per array view at
every call, which numba's pruning does not remove.  The rule that makes this safe: an
``_nrt=False`` function never allocates, never returns an array, and only sees arrays its
NRT-enabled caller owns (the public kernels ``rnea``, ``crba``, ``body_motions``, ``aba``,
... allocate W and call the passes).  Small results travel as tuples of floats.  The
per-body steps called once per body by every recursion (relative_pose, _joint_transform,
_twist_step, _acceleration_step, _velocity_wrench, _composite_to_parent) are inlined by
numba (``inline="always"``): LLVM does not inline them on its own (too large), and the
call, which passes each array as its ~9 separate fields, cost about 200 ns per rnea call
on the paper's model; inlining them costs ~2 s of compilation from a cold cache, once.
"""

import math

from numba import njit

from .layout import (
    AXIS,
    COM,
    FREE,
    INERTIA_O,
    JOINT_TYPE,
    MASS,
    PLACEMENT,
    PRISMATIC,
    Q_INDEX,
    REVOLUTE,
    ROT,
    SPATIAL_INERTIA,
    SPHERICAL,
    TRANS,
    V_INDEX,
)

# ------------------------------------------------------------------ joints


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _joint_twist(ints, reals, k, x):
    """``S_k x_k``: the joint's twist for the joint-velocity (or acceleration) vector x.

    A 6-tuple ``[w, v]`` (``S_k theta_dot_k`` of P12, ``S_k a_k`` of P16).
    """
    t = ints[k, JOINT_TYPE]
    i = ints[k, V_INDEX]
    if t == REVOLUTE:
        s = x[i]
        return (
            reals[k, AXIS] * s, reals[k, AXIS + 1] * s, reals[k, AXIS + 2] * s,
            0.0, 0.0, 0.0,
        )  # fmt: skip
    if t == PRISMATIC:
        s = x[i]
        return (
            0.0, 0.0, 0.0,
            reals[k, AXIS] * s, reals[k, AXIS + 1] * s, reals[k, AXIS + 2] * s,
        )  # fmt: skip
    if t == SPHERICAL:
        return (x[i], x[i + 1], x[i + 2], 0.0, 0.0, 0.0)
    if t == FREE:
        return (x[i], x[i + 1], x[i + 2], x[i + 3], x[i + 4], x[i + 5])
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _joint_column(ints, reals, k, c):
    """``S_k e_c``: column c of joint k's motion subspace, a twist 6-tuple ``[w, v]``."""
    t = ints[k, JOINT_TYPE]
    if t == REVOLUTE:
        return (reals[k, AXIS], reals[k, AXIS + 1], reals[k, AXIS + 2], 0.0, 0.0, 0.0)
    if t == PRISMATIC:
        return (0.0, 0.0, 0.0, reals[k, AXIS], reals[k, AXIS + 1], reals[k, AXIS + 2])
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
    m = reals[k, MASS]
    c0, c1, c2 = reals[k, COM], reals[k, COM + 1], reals[k, COM + 2]
    return (
        m * (v0 + w1 * c2 - w2 * c1),
        m * (v1 + w2 * c0 - w0 * c2),
        m * (v2 + w0 * c1 - w1 * c0),
        reals[k, INERTIA_O] * w0 + reals[k, INERTIA_O + 1] * w1 + reals[k, INERTIA_O + 2] * w2
        + m * (c1 * v2 - c2 * v1),
        reals[k, INERTIA_O + 3] * w0 + reals[k, INERTIA_O + 4] * w1 + reals[k, INERTIA_O + 5] * w2
        + m * (c2 * v0 - c0 * v2),
        reals[k, INERTIA_O + 6] * w0 + reals[k, INERTIA_O + 7] * w1 + reals[k, INERTIA_O + 8] * w2
        + m * (c0 * v1 - c1 * v0),
    )  # fmt: skip


@njit(cache=True)
def spatial_inertia(reals, k, out):
    """Symmetric 6x6 ``swap(M^_k) = [[J_O, m [c]x], [-m [c]x, m I]]`` (twist -> [h, p]).

    Precomputed by the model (field ``spatial_inertia`` of :data:`.layout.REALS`); copied
    into ``out``.
    """
    for i in range(6):
        for j in range(6):
            out[i, j] = reals[k, SPATIAL_INERTIA + 6 * i + j]


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
    t = ints[k, JOINT_TYPE]
    iq = ints[k, Q_INDEX]
    p0, p1, p2, p3 = (
        reals[k, PLACEMENT],
        reals[k, PLACEMENT + 1],
        reals[k, PLACEMENT + 2],
        reals[k, PLACEMENT + 3],
    )
    d0, d1, d2, d3 = (
        reals[k, PLACEMENT + 4],
        reals[k, PLACEMENT + 5],
        reals[k, PLACEMENT + 6],
        reals[k, PLACEMENT + 7],
    )
    if t == REVOLUTE or t == SPHERICAL:
        if t == REVOLUTE:
            h = 0.5 * q[iq]
            s = math.sin(h)
            x0, x1, x2, x3 = (
                math.cos(h),
                s * reals[k, AXIS],
                s * reals[k, AXIS + 1],
                s * reals[k, AXIS + 2],
            )
        else:
            x0, x1, x2, x3 = q[iq], q[iq + 1], q[iq + 2], q[iq + 3]
        r0, r1, r2, r3 = _qmul(p0, p1, p2, p3, x0, x1, x2, x3)
        e0, e1, e2, e3 = _qmul(d0, d1, d2, d3, x0, x1, x2, x3)
    elif t == PRISMATIC:
        h = 0.5 * q[iq]
        r0, r1, r2, r3 = p0, p1, p2, p3
        h0, h1, h2 = h * reals[k, AXIS], h * reals[k, AXIS + 1], h * reals[k, AXIS + 2]
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
    W[k, ROT] = 1.0 - 2.0 * (r2 * r2 + r3 * r3)
    W[k, ROT + 1] = 2.0 * (r1 * r2 - r0 * r3)
    W[k, ROT + 2] = 2.0 * (r1 * r3 + r0 * r2)
    W[k, ROT + 3] = 2.0 * (r1 * r2 + r0 * r3)
    W[k, ROT + 4] = 1.0 - 2.0 * (r1 * r1 + r3 * r3)
    W[k, ROT + 5] = 2.0 * (r2 * r3 - r0 * r1)
    W[k, ROT + 6] = 2.0 * (r1 * r3 - r0 * r2)
    W[k, ROT + 7] = 2.0 * (r2 * r3 + r0 * r1)
    W[k, ROT + 8] = 1.0 - 2.0 * (r1 * r1 + r2 * r2)
    # r^k = 2 vec(rel_r* o rel_d)
    _, t1, t2, t3 = _qmul(r0, -r1, -r2, -r3, e0, e1, e2, e3)
    W[k, TRANS] = 2.0 * t1
    W[k, TRANS + 1] = 2.0 * t2
    W[k, TRANS + 2] = 2.0 * t3


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _to_child(W, k, x0, x1, x2, x3, x4, x5):
    """``Ad_k x = rel_k* o x o rel_k`` (P8) of a twist or acceleration ``x = [w, v]``.

    Real part ``R^T x_r``, dual part ``R^T x_d + (R^T x_r) x r^k``; a 6-tuple.
    """
    R00, R01, R02 = W[k, ROT], W[k, ROT + 1], W[k, ROT + 2]
    R10, R11, R12 = W[k, ROT + 3], W[k, ROT + 4], W[k, ROT + 5]
    R20, R21, R22 = W[k, ROT + 6], W[k, ROT + 7], W[k, ROT + 8]
    r0, r1, r2 = W[k, TRANS], W[k, TRANS + 1], W[k, TRANS + 2]
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
    r0, r1, r2 = W[k, TRANS], W[k, TRANS + 1], W[k, TRANS + 2]
    m0 = t0 + (r1 * f2 - r2 * f1)
    m1 = t1 + (r2 * f0 - r0 * f2)
    m2 = t2 + (r0 * f1 - r1 * f0)
    R00, R01, R02 = W[k, ROT], W[k, ROT + 1], W[k, ROT + 2]
    R10, R11, R12 = W[k, ROT + 3], W[k, ROT + 4], W[k, ROT + 5]
    R20, R21, R22 = W[k, ROT + 6], W[k, ROT + 7], W[k, ROT + 8]
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
