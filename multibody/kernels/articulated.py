"""Compiled articulated-body recursions: forward dynamics and joint wrenches.

The O(n) recursions of the SOA paper (section 5, eq. 80-97; the mixed forward/inverse
problem of its section 3, which runs the same passes per degree of freedom, is
:mod:`.mixed_problem`) in the quantities of
:mod:`.frames` and :mod:`.kinematics`: body-frame twists ``[w, v]``, wrenches, the
dual inertia and its swap.  Notation (``docs/articulated.md``):

* ``rel_k = q^_{parent,k}``, the pose of body k in its parent.  The frame
  change ``Ad_k x = rel_k* o x o rel_k`` carries a twist from the parent into
  body k; ``Ad_k^T`` carries a swapped wrench back.  The kernels evaluate both
  through the matrix ``Ad_k = [[R^T, 0], [-[r]x R^T, R^T]]`` (``dq_adjoint``):
  R the rotation of ``rel_k`` (body k -> parent), r its translation ``r^k``
  in body k (``dq_translation_body``).  These frames, the frame changes, the
  base-to-tip velocity step and the acceleration step are those of ``rnea``,
  ``crba`` and the kinematics (:mod:`.kinematics`: ``_joint_transform``,
  ``_twist_step``, ``_bias_acceleration``, ``_wrench_to_parent``, workspace
  fields ``ROT``, ``TRANS``, ``TWIST``, ``ALPHA``).
* Articulated inertias ``P_k`` are the swapped, symmetric 6x6 form of a dual
  inertia (as ``spatial_inertia`` stores ``swap(M^_k)``): acceleration
  ``[w', v']`` -> swapped wrench ``[tau, f]``.  Bias wrenches ``z_k`` are
  kept swapped too, so a joint's generalized force is ``S_k^T f^s`` and the
  base's ``[torque, force]`` *is* its swapped wrench.
* Gravity enters as the acceleration ``-g`` of the inertial frame (the
  parent of the root), so the body accelerations ``acc_k`` of the recursions
  are ``d/dt w_k - g_k``, as in ``rnea``.

Speed.  Per-body data live in one workspace ``W`` (nb + 2, ``ABA_WIDTH``), allocated
once per call, whose columns are the named fields of :data:`.layout.ABA_WS`
(row nb: :data:`.layout.ABA_SCRATCH`).  The passes and their helpers are compiled with numba's
``_nrt=False`` (as are those of :mod:`.frames`): a compiled function with array
arguments and branches otherwise pays an atomic reference-count increment and
decrement per array argument and per array view at every call (about 100 ns
for a helper taking nine arrays), which numba's pruning does not remove.  The
rule that makes this safe: an ``_nrt=False`` function never allocates, never
returns an array, and only sees arrays its NRT-enabled caller owns (the
public kernels ``aba``, ``aba_wrenches``, ``mixed`` (:mod:`.mixed_problem`), ... allocate W
and call the passes).
"""

import math

import numpy as np
from numba import njit

from .configuration import config_error
from .frames import _rotate, _store6, _wrench_to_parent
from .kinematics import _bias_acceleration, _inertial_acceleration, _twist_step, _velocity_wrench
from .layout import (
    ABA_WIDTH,
    ACC,
    ALPHA,
    ART_INERTIA,
    ART_INERTIA_A,
    AXIS,
    BIAS,
    BIAS_A,
    CONFIG_TOL,
    D_INV,
    FREE,
    INERTIAL_ACC,
    JOINT_NQ,
    JOINT_NV,
    JOINT_TYPE,
    PARENT,
    PRISMATIC,
    Q_INDEX,
    REVOLUTE,
    ROT,
    SPATIAL_INERTIA,
    SPHERICAL,
    TMP1,
    TRANS,
    U_MAT,
    U_VEC,
    V_INDEX,
)

# --------------------------------------------------------------- frame changes


@njit(cache=True, _nrt=False, fastmath={"contract"})
def inertia_to_parent(W, k, src, so, p):
    """``P_p += Ad_k^T X Ad_k`` for the symmetric swapped inertia ``X`` at ``W[src, so:so+36]``.

    With ``X = [[A, B], [B^T, C]]`` and ``Ad_k = T_r diag(R^T, R^T)``,
    ``T_r = [[I, 0], [-[r]x, I]]``: first the shift to the parent's origin (in
    body k's axes) ``B' = B + [r]x C``, ``A' = A - B'[r]x - (B [r]x)^T``, then
    the rotations ``R A' R^T``, ``R B' R^T``, ``R C R^T``: about 200
    multiplications instead of the ~430 of the dense product ``Ad^T X Ad``.
    Only the upper triangle of ``X`` is read (A and C upper, B whole).
    """
    r0, r1, r2 = W[k, TRANS], W[k, TRANS + 1], W[k, TRANS + 2]
    R = (
        W[k, ROT], W[k, ROT + 1], W[k, ROT + 2],
        W[k, ROT + 3], W[k, ROT + 4], W[k, ROT + 5],
        W[k, ROT + 6], W[k, ROT + 7], W[k, ROT + 8],
    )  # fmt: skip
    a00, a01, a02 = W[src, so], W[src, so + 1], W[src, so + 2]
    a11, a12, a22 = W[src, so + 7], W[src, so + 8], W[src, so + 14]
    b00, b01, b02 = W[src, so + 3], W[src, so + 4], W[src, so + 5]
    b10, b11, b12 = W[src, so + 9], W[src, so + 10], W[src, so + 11]
    b20, b21, b22 = W[src, so + 15], W[src, so + 16], W[src, so + 17]
    c00, c01, c02 = W[src, so + 21], W[src, so + 22], W[src, so + 23]
    c11, c12, c22 = W[src, so + 28], W[src, so + 29], W[src, so + 35]
    # B' = B + r x C, column by column
    e00 = b00 + (r1 * c02 - r2 * c01)
    e10 = b10 + (r2 * c00 - r0 * c02)
    e20 = b20 + (r0 * c01 - r1 * c00)
    e01 = b01 + (r1 * c12 - r2 * c11)
    e11 = b11 + (r2 * c01 - r0 * c12)
    e21 = b21 + (r0 * c11 - r1 * c01)
    e02 = b02 + (r1 * c22 - r2 * c12)
    e12 = b12 + (r2 * c02 - r0 * c22)
    e22 = b22 + (r0 * c12 - r1 * c02)
    # A' = A - Y - Z^T with rows Y_i = B'_i x r, Z_i = B_i x r (upper triangle)
    f00 = a00 - (e01 * r2 - e02 * r1) - (b01 * r2 - b02 * r1)
    f01 = a01 - (e02 * r0 - e00 * r2) - (b11 * r2 - b12 * r1)
    f02 = a02 - (e00 * r1 - e01 * r0) - (b21 * r2 - b22 * r1)
    f11 = a11 - (e12 * r0 - e10 * r2) - (b12 * r0 - b10 * r2)
    f12 = a12 - (e10 * r1 - e11 * r0) - (b22 * r0 - b20 * r2)
    f22 = a22 - (e20 * r1 - e21 * r0) - (b20 * r1 - b21 * r0)
    A = _rotate(R, f00, f01, f02, f01, f11, f12, f02, f12, f22, True)
    B = _rotate(R, e00, e01, e02, e10, e11, e12, e20, e21, e22, False)
    C = _rotate(R, c00, c01, c02, c01, c11, c12, c02, c12, c22, True)
    for i in range(3):
        for j in range(3):
            W[p, ART_INERTIA + 6 * i + j] += A[3 * i + j]
            W[p, ART_INERTIA + 6 * i + 3 + j] += B[3 * i + j]
            W[p, ART_INERTIA + 6 * (3 + j) + i] += B[3 * i + j]
            W[p, ART_INERTIA + 6 * (3 + i) + 3 + j] += C[3 * i + j]


# ----------------------------------------------------------------- passes


@njit(cache=True, _nrt=False, fastmath={"contract"})
def velocity_pass(ints, reals, q, v, fext, W):
    """Base-to-tip pass (SOA 5.1; P12, P15): frames, twists, velocity products, body terms.

    ``w_k = Ad_k w_parent + S_k v_k``, ``alpha_k = w_k x S_k v_k``
    (``kinematics._twist_step``, shared with ``rnea``), and the initial values
    of the backward pass (SOA 5.2): ``P_k = swap(M^_k)``,
    ``z_k = swap(w_k x M^_k w_k - fext_k)`` (SOA eq. 78-79 in body coordinates).
    """
    nb = ints.shape[0]
    for k in range(nb):
        _twist_step(ints, reals, k, q, v, W)
        for j in range(36):  # swap(M^_k), precomputed by the model
            W[k, ART_INERTIA + j] = reals[k, SPATIAL_INERTIA + j]
        f0, f1, f2, t0, t1, t2 = _velocity_wrench(reals, k, W, fext)
        _store6(W, k, BIAS, (t0, t1, t2, f0, f1, f2))


@njit(cache=True)
def _inv_sym3(a00, a01, a02, a11, a12, a22):
    """Inverse of a symmetric 3x3 matrix by cofactors: (ok, i00, i01, i02, i11, i12, i22).

    ``ok`` is False unless the matrix is positive-definite (leading minors > 0).
    """
    c00 = a11 * a22 - a12 * a12
    c01 = a02 * a12 - a01 * a22
    c02 = a01 * a12 - a02 * a11
    det = a00 * c00 + a01 * c01 + a02 * c02
    m2 = a00 * a11 - a01 * a01
    if not (a00 > 0.0 and m2 > 0.0 and det > 0.0):
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    s = 1.0 / det
    return (
        True,
        c00 * s,
        c01 * s,
        c02 * s,
        (a00 * a22 - a02 * a02) * s,
        (a01 * a02 - a00 * a12) * s,
        m2 * s,
    )


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _inv_spd3(W, k, o, out):
    """``W[k, out:out+9] = A^-1`` for the 3x3 block ``A`` at ``W[k, o]`` (row stride 6).

    False unless A is positive-definite.
    """
    ok, i00, i01, i02, i11, i12, i22 = _inv_sym3(
        W[k, o], W[k, o + 1], W[k, o + 2], W[k, o + 7], W[k, o + 8], W[k, o + 14]
    )
    W[k, out] = i00
    W[k, out + 1] = i01
    W[k, out + 2] = i02
    W[k, out + 3] = i01
    W[k, out + 4] = i11
    W[k, out + 5] = i12
    W[k, out + 6] = i02
    W[k, out + 7] = i12
    W[k, out + 8] = i22
    return ok


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _solve_free(W, k, x):
    """``x[0:6] = P_k^-1 u_k`` for a FREE joint (SOA eq. 92 with a base wrench).

    Block elimination on ``P = [[A, B], [B^T, C]]`` with closed-form 3x3
    inverses: ``S = A - B C^-1 B^T``, ``x_1 = S^-1 (u_1 - B C^-1 u_2)``,
    ``x_2 = C^-1 (u_2 - B^T x_1)``.  False unless P is positive-definite
    (C and its Schur complement S are).
    """
    o = ART_INERTIA
    ok, c00, c01, c02, c11, c12, c22 = _inv_sym3(
        W[k, o + 21], W[k, o + 22], W[k, o + 23], W[k, o + 28], W[k, o + 29], W[k, o + 35]
    )
    if not ok:
        return False
    b00, b01, b02 = W[k, o + 3], W[k, o + 4], W[k, o + 5]
    b10, b11, b12 = W[k, o + 9], W[k, o + 10], W[k, o + 11]
    b20, b21, b22 = W[k, o + 15], W[k, o + 16], W[k, o + 17]
    # G = B C^-1
    g00 = b00 * c00 + b01 * c01 + b02 * c02
    g01 = b00 * c01 + b01 * c11 + b02 * c12
    g02 = b00 * c02 + b01 * c12 + b02 * c22
    g10 = b10 * c00 + b11 * c01 + b12 * c02
    g11 = b10 * c01 + b11 * c11 + b12 * c12
    g12 = b10 * c02 + b11 * c12 + b12 * c22
    g20 = b20 * c00 + b21 * c01 + b22 * c02
    g21 = b20 * c01 + b21 * c11 + b22 * c12
    g22 = b20 * c02 + b21 * c12 + b22 * c22
    ok, s00, s01, s02, s11, s12, s22 = _inv_sym3(
        W[k, o] - (g00 * b00 + g01 * b01 + g02 * b02),
        W[k, o + 1] - (g00 * b10 + g01 * b11 + g02 * b12),
        W[k, o + 2] - (g00 * b20 + g01 * b21 + g02 * b22),
        W[k, o + 7] - (g10 * b10 + g11 * b11 + g12 * b12),
        W[k, o + 8] - (g10 * b20 + g11 * b21 + g12 * b22),
        W[k, o + 14] - (g20 * b20 + g21 * b21 + g22 * b22),
    )
    if not ok:
        return False
    u0, u1, u2 = W[k, U_VEC], W[k, U_VEC + 1], W[k, U_VEC + 2]
    u3, u4, u5 = W[k, U_VEC + 3], W[k, U_VEC + 4], W[k, U_VEC + 5]
    y0 = u0 - (g00 * u3 + g01 * u4 + g02 * u5)
    y1 = u1 - (g10 * u3 + g11 * u4 + g12 * u5)
    y2 = u2 - (g20 * u3 + g21 * u4 + g22 * u5)
    x0 = s00 * y0 + s01 * y1 + s02 * y2
    x1 = s01 * y0 + s11 * y1 + s12 * y2
    x2 = s02 * y0 + s12 * y1 + s22 * y2
    w0 = u3 - (b00 * x0 + b10 * x1 + b20 * x2)
    w1 = u4 - (b01 * x0 + b11 * x1 + b21 * x2)
    w2 = u5 - (b02 * x0 + b12 * x1 + b22 * x2)
    x[0] = x0
    x[1] = x1
    x[2] = x2
    x[3] = c00 * w0 + c01 * w1 + c02 * w2
    x[4] = c01 * w0 + c11 * w1 + c12 * w2
    x[5] = c02 * w0 + c12 * w1 + c22 * w2
    return True


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _articulated(ints, reals, tau, W):
    """Tip-to-base pass (SOA eq. 80-89): articulated inertias and bias wrenches.

    For joint k with motion subspace ``S_k`` (the paper's ``H_k``):
    ``U_k = P_k S_k``, ``D_k = S_k^T U_k`` (80), ``u_k = tau_k - S_k^T z_k`` (88),
    ``P_k^A = P_k - U_k D_k^-1 U_k^T`` (84-86),
    ``z_k^A = z_k + P_k^A alpha_k + U_k D_k^-1 u_k`` (89), and
    ``P_parent += Ad_k^T P_k^A Ad_k`` (87), ``z_parent += Ad_k^T z_k^A``.
    A FIXED joint passes ``P_k``, ``z_k`` on unchanged, a FREE joint only ``tau_k``.
    Returns False if some ``D_k`` is not positive-definite.
    """
    nb = ints.shape[0]
    for k in range(nb - 1, -1, -1):
        t = ints[k, JOINT_TYPE]
        i = ints[k, V_INDEX]
        p = ints[k, PARENT]
        if t == REVOLUTE or t == PRISMATIC:
            o = 0 if t == REVOLUTE else 3
            n0, n1, n2 = reals[k, AXIS], reals[k, AXIS + 1], reals[k, AXIS + 2]
            for m in range(6):
                c = ART_INERTIA + 6 * m + o
                W[k, U_MAT + m] = W[k, c] * n0 + W[k, c + 1] * n1 + W[k, c + 2] * n2
            d = n0 * W[k, U_MAT + o] + n1 * W[k, U_MAT + o + 1] + n2 * W[k, U_MAT + o + 2]
            if not d > 0.0:
                return False
            di = 1.0 / d
            W[k, D_INV] = di
            uk = tau[i] - (n0 * W[k, BIAS + o] + n1 * W[k, BIAS + o + 1] + n2 * W[k, BIAS + o + 2])
            W[k, U_VEC] = uk
            if p < 0:
                continue
            ua = 0.0  # U^T alpha
            for l in range(6):
                ua += W[k, U_MAT + l] * W[k, ALPHA + l]
            ud = (uk - ua) * di
            for m in range(6):
                wm = W[k, U_MAT + m] * di
                s = W[k, BIAS + m] + W[k, U_MAT + m] * ud
                for l in range(6):
                    s += W[k, ART_INERTIA + 6 * m + l] * W[k, ALPHA + l]
                W[nb, BIAS_A + m] = s
                # P^A is symmetric and inertia_to_parent reads its upper triangle only
                for l in range(m, 6):
                    W[nb, ART_INERTIA_A + 6 * m + l] = (
                        W[k, ART_INERTIA + 6 * m + l] - wm * W[k, U_MAT + l]
                    )
        elif t == SPHERICAL:
            if not _inv_spd3(W, k, ART_INERTIA, D_INV):
                return False
            for j in range(3):
                W[k, U_VEC + j] = tau[i + j] - W[k, BIAS + j]
            if p < 0:
                continue
            # U = P[:, 0:3];  G = U D^-1 row by row;  P^A = P - G U^T
            for m in range(6):
                u0, u1, u2 = (
                    W[k, ART_INERTIA + 6 * m],
                    W[k, ART_INERTIA + 6 * m + 1],
                    W[k, ART_INERTIA + 6 * m + 2],
                )
                g0 = W[k, D_INV] * u0 + W[k, D_INV + 1] * u1 + W[k, D_INV + 2] * u2
                g1 = W[k, D_INV + 3] * u0 + W[k, D_INV + 4] * u1 + W[k, D_INV + 5] * u2
                g2 = W[k, D_INV + 6] * u0 + W[k, D_INV + 7] * u1 + W[k, D_INV + 8] * u2
                for l in range(m, 6):
                    c = ART_INERTIA + 6 * l
                    x = W[k, ART_INERTIA + 6 * m + l] - (
                        g0 * W[k, c] + g1 * W[k, c + 1] + g2 * W[k, c + 2]
                    )
                    W[nb, ART_INERTIA_A + 6 * m + l] = x
                    W[nb, ART_INERTIA_A + 6 * l + m] = x
                W[nb, BIAS_A + m] = W[k, BIAS + m] + (
                    g0 * W[k, U_VEC] + g1 * W[k, U_VEC + 1] + g2 * W[k, U_VEC + 2]
                )
            for m in range(6):
                s = 0.0
                for l in range(6):
                    s += W[nb, ART_INERTIA_A + 6 * m + l] * W[k, ALPHA + l]
                W[nb, BIAS_A + m] += s
        elif t == FREE:
            for j in range(6):
                W[k, U_VEC + j] = tau[i + j] - W[k, BIAS + j]
            if p >= 0:  # P^A = 0, z^A = tau: only the joint's own wrench reaches the parent
                for j in range(6):
                    W[nb, BIAS_A + j] = tau[i + j]
                _wrench_to_parent(W, k, nb, BIAS_A, p, BIAS)
            continue
        else:
            if p >= 0:
                inertia_to_parent(W, k, k, ART_INERTIA, p)
                _wrench_to_parent(W, k, k, BIAS, p, BIAS)
            continue
        inertia_to_parent(W, k, nb, ART_INERTIA_A, p)
        _wrench_to_parent(W, k, nb, BIAS_A, p, BIAS)
    return True


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def acceleration_bias(W, k, p, nb):
    """``acc'_k = Ad_k acc_parent + alpha_k`` (SOA eq. 92; P16 without ``S_k a_k``) into
    ``W[k, ACC]`` (``kinematics._bias_acceleration``); the root's parent is the
    inertial frame, whose acceleration ``-g`` is at ``W[nb, INERTIAL_ACC]``."""
    if p < 0:
        _store6(W, k, ACC, _bias_acceleration(W, k, nb, INERTIAL_ACC))
    else:
        _store6(W, k, ACC, _bias_acceleration(W, k, p, ACC))


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _accelerations(ints, reals, gravity, W, a):
    """Base-to-tip pass (SOA eq. 92-95): joint and body accelerations.

    ``acc'_k = Ad_k acc_parent + alpha_k`` (``acc_parent = -g`` for the root),
    ``a_k = D_k^-1 (u_k - U_k^T acc'_k)`` (93-94), ``acc_k = acc'_k + S_k a_k`` (95).
    A FREE joint solves ``P_k acc_k = tau_k - z_k`` (92, with a base wrench;
    :func:`_solve_free`), ``a_k = acc_k - acc'_k``.  False if that ``P_k`` is not
    positive-definite.
    """
    nb = ints.shape[0]
    x = W[nb, TMP1 : TMP1 + 6]
    _store6(W, nb, INERTIAL_ACC, _inertial_acceleration(gravity))
    for k in range(nb):
        t = ints[k, JOINT_TYPE]
        i = ints[k, V_INDEX]
        p = ints[k, PARENT]
        acceleration_bias(W, k, p, nb)
        if t == REVOLUTE or t == PRISMATIC:
            o = 0 if t == REVOLUTE else 3
            s = W[k, U_VEC]
            for j in range(6):
                s -= W[k, U_MAT + j] * W[k, ACC + j]
            qdd = W[k, D_INV] * s
            a[i] = qdd
            for j in range(3):
                W[k, ACC + o + j] += reals[k, AXIS + j] * qdd
        elif t == SPHERICAL:
            for j in range(3):
                s = W[k, U_VEC + j]
                for m in range(6):
                    s -= W[k, ART_INERTIA + 6 * m + j] * W[k, ACC + m]
                x[j] = s
            for j in range(3):
                qdd = W[k, D_INV + 3 * j] * x[0] + W[k, D_INV + 3 * j + 1] * x[1]
                qdd += W[k, D_INV + 3 * j + 2] * x[2]
                a[i + j] = qdd
                W[k, ACC + j] += qdd
        elif t == FREE:
            if not _solve_free(W, k, x):
                return False
            for j in range(6):
                a[i + j] = x[j] - W[k, ACC + j]
                W[k, ACC + j] = x[j]
    return True


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _joint_wrenches(ints, W, wrench):
    """``f_k = P_k acc_k + z_k`` (SOA eq. 33, 43), unswapped to ``[f, tau]``, into wrench."""
    for k in range(ints.shape[0]):
        for m in range(6):
            s = W[k, BIAS + m]
            for j in range(6):
                s += W[k, ART_INERTIA + 6 * m + j] * W[k, ACC + j]
            wrench[k, (m + 3) % 6] = s


# ------------------------------------------------------------------ kernels


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _aba(ints, reals, gravity, q, v, tau, fext, a, W):
    """The three passes of the articulated-body algorithm on the workspace W."""
    velocity_pass(ints, reals, q, v, fext, W)
    if not _articulated(ints, reals, tau, W):
        return False
    return _accelerations(ints, reals, gravity, W, a)


@njit(cache=True)
def aba(ints, reals, gravity, q, v, tau, fext, a):
    """Articulated-body forward dynamics (SOA section 5): accelerations ``a`` (nv,) in O(n).

    Same contract as ``mass_matrix.forward_dynamics_matrix``: ``gravity`` (3,) in the
    inertial frame, ``tau`` (nv,) generalized forces, ``fext`` (nb, 6) wrenches
    ``[f, tau]`` per body (body frame, about its origin; an empty (0, 6) array
    means none).  Returns False if an articulated joint inertia ``D_k`` is not
    positive-definite (``a`` is then incomplete).
    """
    W = np.empty((ints.shape[0] + 2, ABA_WIDTH))
    return _aba(ints, reals, gravity, q, v, tau, fext, a, W)


@njit(cache=True)
def aba_wrenches(ints, reals, gravity, q, v, tau, fext, a, wrench):
    """:func:`aba` that also fills the joint wrenches ``wrench`` (nb, 6).

    ``wrench[k] = [f, tau]``: the wrench body k's parent exerts on it through
    the joint, in body k's frame about its origin: ``f_k = P_k acc_k + z_k``
    (SOA eq. 33), the same quantity as ``rnea``'s ``force`` at these accelerations.
    """
    W = np.empty((ints.shape[0] + 2, ABA_WIDTH))
    if not _aba(ints, reals, gravity, q, v, tau, fext, a, W):
        return False
    _joint_wrenches(ints, W, wrench)
    return True


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _inputs_ok(ints, q, v, tau, fext, a):
    """The checks of ``multibody._state`` on (q, v, tau, fext): sizes (from the packed
    model), finite entries, base pose and joint quaternions unit within ``CONFIG_TOL``."""
    nb = ints.shape[0]
    t = ints[nb - 1, JOINT_TYPE]
    nq = ints[nb - 1, Q_INDEX] + JOINT_NQ[t]
    nv = ints[nb - 1, V_INDEX] + JOINT_NV[t]
    if q.shape[0] != nq or v.shape[0] != nv or tau.shape[0] != nv or a.shape[0] != nv:
        return False
    if (fext.shape[0] != 0 and fext.shape[0] != nb) or fext.shape[1] != 6:
        return False
    for i in range(nq):
        if not math.isfinite(q[i]):
            return False
    for i in range(nv):
        if not (math.isfinite(v[i]) and math.isfinite(tau[i])):
            return False
    for k in range(fext.shape[0]):
        for j in range(6):
            if not math.isfinite(fext[k, j]):
                return False
    return config_error(ints, q)[0] <= CONFIG_TOL


@njit(cache=True)
def aba_checked(ints, reals, gravity, q, v, tau, fext, a):
    """:func:`aba` behind the input checks of ``multibody._state``, in one compiled call.

    Returns 0 on success, 1 if an input fails a check (the caller then lets
    ``multibody._state`` name it), 2 if the articulated inertias are not positive-definite.
    """
    if not _inputs_ok(ints, q, v, tau, fext, a):
        return 1
    W = np.empty((ints.shape[0] + 2, ABA_WIDTH))
    return 0 if _aba(ints, reals, gravity, q, v, tau, fext, a, W) else 2


@njit(cache=True)
def aba_wrenches_checked(ints, reals, gravity, q, v, tau, fext, a, wrench):
    """:func:`aba_wrenches` behind the checks of :func:`aba_checked` (same return codes)."""
    if not _inputs_ok(ints, q, v, tau, fext, a):
        return 1
    W = np.empty((ints.shape[0] + 2, ABA_WIDTH))
    if not _aba(ints, reals, gravity, q, v, tau, fext, a, W):
        return 2
    _joint_wrenches(ints, W, wrench)
    return 0


# ------------------------------------------------------------ joint wrenches


@njit(cache=True)
def split_wrenches(ints, reals, wrench, actuation, constraint, tau):
    """Split each joint wrench ``f_k = [f, tau]`` (nb, 6) into its actuated and reaction parts.

    ``tau_k = S_k^T f_k^s`` (nv,) are the joint forces and
    ``actuation_k = swap(S_k tau_k)`` the part of ``f_k`` in the joint's
    motion subspace (the columns of ``S_k`` are orthonormal);
    ``constraint_k = f_k - actuation_k`` is the reaction, with
    ``S_k^T constraint_k^s = 0`` (no power on the joint's motion): the
    decomposition ``F = H F_T + W F_S`` of the constraint-force paper (eq. 5),
    with the reaction kept as a wrench instead of coordinates on a basis W.
    """
    for k in range(ints.shape[0]):
        t = ints[k, JOINT_TYPE]
        i = ints[k, V_INDEX]
        for j in range(6):
            actuation[k, j] = 0.0
        if t == REVOLUTE or t == PRISMATIC:
            o = 3 if t == REVOLUTE else 0  # the torque or the force of [f, tau]
            n0, n1, n2 = reals[k, AXIS], reals[k, AXIS + 1], reals[k, AXIS + 2]
            s = n0 * wrench[k, o] + n1 * wrench[k, o + 1] + n2 * wrench[k, o + 2]
            tau[i] = s
            actuation[k, o] = s * n0
            actuation[k, o + 1] = s * n1
            actuation[k, o + 2] = s * n2
        elif t == SPHERICAL:
            for j in range(3):
                tau[i + j] = wrench[k, 3 + j]
                actuation[k, 3 + j] = wrench[k, 3 + j]
        elif t == FREE:
            for j in range(3):
                tau[i + j] = wrench[k, 3 + j]
                tau[i + 3 + j] = wrench[k, j]
            for j in range(6):
                actuation[k, j] = wrench[k, j]
        for j in range(6):
            constraint[k, j] = wrench[k, j] - actuation[k, j]
