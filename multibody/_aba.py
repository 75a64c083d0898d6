"""Compiled articulated-body recursions: forward dynamics, the mixed problem, joint wrenches.

The O(n) recursions of the SOA paper (section 5, eq. 80-97; the mixed
forward/inverse problem of its section 3) in the quantities of
:mod:`dqspace.multibody._kernels`: body-frame twists ``[w, v]``, wrenches, the
dual inertia and its swap.  Notation (``docs/articulated.md``):

* ``rel_k = q^_{parent,k}``: the pose of body k in its parent; the frame change
  ``Ad_k x = rel_k* o x o rel_k`` carries a twist (or a wrench ``[f, tau]``)
  from the parent into body k, ``Ad_k^-1`` back.  The kernels evaluate it
  through its matrix ``[[R^T, 0], [-[r]x R^T, R^T]]`` (``dq_adjoint``): R the
  rotation of ``rel_k`` (body k -> parent), r its translation ``r^k`` in body
  k (``dq_translation_body``).
* Articulated inertias ``P_k`` are stored as the swapped (symmetric) 6x6
  form of a dual inertia, ``swap(P^_k)``, as ``spatial_inertia`` stores
  ``swap(M^_k)``: it maps an acceleration ``[w', v']`` to the swapped wrench
  ``[tau, f]``.  Bias wrenches ``z_k`` and joint wrenches are kept swapped,
  ``[tau, f]``, so that a joint's generalized force is ``S_k^T f^s`` with
  no further shuffling, and the base's generalized force ``[torque, force]``
  *is* its swapped wrench.
* Gravity enters as an acceleration ``-g`` of the inertial frame (the
  parent of the root), so every body acceleration ``acc_k`` below is
  ``d/dt w_k - g_k``, as in ``rnea``.

Every kernel allocates one workspace buffer per call (no allocation per
body) and reads the model's packed arrays ``ints`` / ``reals``.
"""

import math

import numpy as np
from numba import njit

from dqspace.dq._kernels import dq_mul, dq_translation_body, dv_cross, q_to_rotation_matrix

from ._kernels import (
    FIXED,
    FREE,
    I_JTYPE,
    I_PARENT,
    I_QI,
    I_VI,
    PRISMATIC,
    R_AXIS,
    R_PLACE,
    REVOLUTE,
    SPHERICAL,
    cholesky_solve,
    config_error,
    joint_nv,
    momentum,
    spatial_inertia,
)



# --------------------------------------------------------------- frame changes


@njit(cache=True)
def _joint_transform(ints, reals, k, q, xj, rel, R, rb):
    """``rel = placement_k o X_J(q_k)``; R its rotation (k -> parent), rb its translation r^k.

    The allocation-free twin of ``_kernels.relative_pose`` (``xj``, ``rel``: (8,) scratch).
    """
    t = ints[k, I_JTYPE]
    i = ints[k, I_QI]
    if t == FIXED:
        for j in range(8):
            rel[j] = reals[k, R_PLACE + j]
    else:
        if t == REVOLUTE:
            h = 0.5 * q[i]
            s = math.sin(h)
            xj[0] = math.cos(h)
            for j in range(3):
                xj[1 + j] = s * reals[k, R_AXIS + j]
                xj[4 + j] = 0.0
            xj[7] = 0.0
        elif t == PRISMATIC:
            h = 0.5 * q[i]
            xj[0] = 1.0
            for j in range(3):
                xj[1 + j] = 0.0
                xj[5 + j] = h * reals[k, R_AXIS + j]
            xj[4] = 0.0
        elif t == SPHERICAL:
            for j in range(4):
                xj[j] = q[i + j]
                xj[4 + j] = 0.0
        else:
            for j in range(8):
                xj[j] = q[i + j]
        dq_mul(reals[k, R_PLACE : R_PLACE + 8], xj, rel)
    q_to_rotation_matrix(rel, R)
    dq_translation_body(rel, rb)


@njit(cache=True)
def _motion_to_child(R, rb, x, out):
    """``out = Ad_k x = rel* o x o rel`` for a twist or acceleration ``x = [w, v]`` of the parent.

    ``out_r = R^T x_r``, ``out_d = R^T x_d + out_r x r``.
    """
    x0, x1, x2, x3, x4, x5 = x[0], x[1], x[2], x[3], x[4], x[5]
    y0 = R[0, 0] * x0 + R[1, 0] * x1 + R[2, 0] * x2
    y1 = R[0, 1] * x0 + R[1, 1] * x1 + R[2, 1] * x2
    y2 = R[0, 2] * x0 + R[1, 2] * x1 + R[2, 2] * x2
    e0 = R[0, 0] * x3 + R[1, 0] * x4 + R[2, 0] * x5
    e1 = R[0, 1] * x3 + R[1, 1] * x4 + R[2, 1] * x5
    e2 = R[0, 2] * x3 + R[1, 2] * x4 + R[2, 2] * x5
    r0, r1, r2 = rb[0], rb[1], rb[2]
    out[0] = y0
    out[1] = y1
    out[2] = y2
    out[3] = e0 + (y1 * r2 - y2 * r1)
    out[4] = e1 + (y2 * r0 - y0 * r2)
    out[5] = e2 + (y0 * r1 - y1 * r0)


@njit(cache=True)
def _wrench_to_parent_add(R, rb, f, out):
    """``out += Ad_k^T f``: a swapped wrench ``f = [tau, F]`` of body k, about the parent's origin.

    ``F_p = R F``, ``tau_p = R (tau + r x F)`` (the swap of ``rel o f^ o rel*``).
    """
    F0, F1, F2 = f[3], f[4], f[5]
    r0, r1, r2 = rb[0], rb[1], rb[2]
    m0 = f[0] + (r1 * F2 - r2 * F1)
    m1 = f[1] + (r2 * F0 - r0 * F2)
    m2 = f[2] + (r0 * F1 - r1 * F0)
    for i in range(3):
        out[i] += R[i, 0] * m0 + R[i, 1] * m1 + R[i, 2] * m2
        out[3 + i] += R[i, 0] * F0 + R[i, 1] * F1 + R[i, 2] * F2


@njit(cache=True)
def _inertia_to_parent_add(R, rb, X, S, out):
    """``out += Ad_k^T X Ad_k`` for a symmetric swapped inertia X (6, 6) of body k.

    With ``X = [[A, B], [B^T, C]]`` and ``Ad_k = T_r diag(R^T, R^T)``,
    ``T_r = [[I, 0], [-[r]x, I]]``: first the shift to the parent's origin
    (in body k's axes) ``B' = B + [r]x C``, ``A' = A - B'[r]x - (B [r]x)^T``,
    then the rotation ``R A' R^T``, ``R B' R^T``, ``R C R^T``.  ``S`` (6, 6) is scratch.
    """
    r0, r1, r2 = rb[0], rb[1], rb[2]
    # B' = B + r x C (column by column) -> S[0:3, 3:6]
    for j in range(3):
        c0, c1, c2 = X[3, 3 + j], X[4, 3 + j], X[5, 3 + j]
        S[0, 3 + j] = X[0, 3 + j] + (r1 * c2 - r2 * c1)
        S[1, 3 + j] = X[1, 3 + j] + (r2 * c0 - r0 * c2)
        S[2, 3 + j] = X[2, 3 + j] + (r0 * c1 - r1 * c0)
    # Z = B [r]x (row i: B_i x r) -> S[3:6, 0:3]
    for i in range(3):
        b0, b1, b2 = X[i, 3], X[i, 4], X[i, 5]
        S[3 + i, 0] = b1 * r2 - b2 * r1
        S[3 + i, 1] = b2 * r0 - b0 * r2
        S[3 + i, 2] = b0 * r1 - b1 * r0
    # A' = A - B'[r]x - Z^T -> S[0:3, 0:3]
    for i in range(3):
        p0, p1, p2 = S[i, 3], S[i, 4], S[i, 5]
        y0 = p1 * r2 - p2 * r1
        y1 = p2 * r0 - p0 * r2
        y2 = p0 * r1 - p1 * r0
        S[i, 0] = X[i, 0] - y0 - S[3, i]
        S[i, 1] = X[i, 1] - y1 - S[4, i]
        S[i, 2] = X[i, 2] - y2 - S[5, i]
    # C -> S[3:6, 3:6]
    for i in range(3):
        for j in range(3):
            S[3 + i, 3 + j] = X[3 + i, 3 + j]
    # rotate the three blocks: out_blk += R S_blk R^T
    for bi in range(2):
        for bj in range(bi, 2):
            oi = 3 * bi
            oj = 3 * bj
            for i in range(3):
                t0 = S[oi + i, oj] * R[0, 0] + S[oi + i, oj + 1] * R[0, 1] + S[oi + i, oj + 2] * R[0, 2]
                t1 = S[oi + i, oj] * R[1, 0] + S[oi + i, oj + 1] * R[1, 1] + S[oi + i, oj + 2] * R[1, 2]
                t2 = S[oi + i, oj] * R[2, 0] + S[oi + i, oj + 1] * R[2, 1] + S[oi + i, oj + 2] * R[2, 2]
                # reuse the row i of the (now consumed) block for T = S_blk R^T
                S[oi + i, oj] = t0
                S[oi + i, oj + 1] = t1
                S[oi + i, oj + 2] = t2
            for i in range(3):
                for j in range(3):
                    s = R[i, 0] * S[oi, oj + j] + R[i, 1] * S[oi + 1, oj + j] + R[i, 2] * S[oi + 2, oj + j]
                    out[oi + i, oj + j] += s
                    if bi != bj:
                        out[oj + j, oi + i] += s


# ------------------------------------------------------------ forward sweep


@njit(cache=True)
def _velocities(ints, reals, q, v, fext, R, rb, twist, alpha, P, z, s8a, s8b, s6a, s6b):
    """Base-to-tip pass (SOA 5.1, P12, P15): frames, twists, velocity products, body terms.

    ``w_k = Ad_k w_parent + S_k v_k``, ``alpha_k = w_k x S_k v_k``,
    ``P_k = swap(M^_k)`` and ``z_k = swap(w_k x M^_k w_k - fext_k)`` (SOA eq. 78-79).
    """
    nb = ints.shape[0]
    has_fext = fext.shape[0] > 0
    for k in range(nb):
        t = ints[k, I_JTYPE]
        i = ints[k, I_VI]
        p = ints[k, I_PARENT]
        _joint_transform(ints, reals, k, q, s8a, s8b, R[k], rb[k])
        tw = twist[k]
        if p < 0:
            for j in range(6):
                tw[j] = 0.0
        else:
            _motion_to_child(R[k], rb[k], twist[p], tw)
        al = alpha[k]
        if t == REVOLUTE:
            x0 = reals[k, R_AXIS] * v[i]
            x1 = reals[k, R_AXIS + 1] * v[i]
            x2 = reals[k, R_AXIS + 2] * v[i]
            tw[0] += x0
            tw[1] += x1
            tw[2] += x2
            # [w x s, v x s]
            al[0] = tw[1] * x2 - tw[2] * x1
            al[1] = tw[2] * x0 - tw[0] * x2
            al[2] = tw[0] * x1 - tw[1] * x0
            al[3] = tw[4] * x2 - tw[5] * x1
            al[4] = tw[5] * x0 - tw[3] * x2
            al[5] = tw[3] * x1 - tw[4] * x0
        elif t == PRISMATIC:
            x0 = reals[k, R_AXIS] * v[i]
            x1 = reals[k, R_AXIS + 1] * v[i]
            x2 = reals[k, R_AXIS + 2] * v[i]
            tw[3] += x0
            tw[4] += x1
            tw[5] += x2
            # [0, w x s]
            al[0] = 0.0
            al[1] = 0.0
            al[2] = 0.0
            al[3] = tw[1] * x2 - tw[2] * x1
            al[4] = tw[2] * x0 - tw[0] * x2
            al[5] = tw[0] * x1 - tw[1] * x0
        elif t == SPHERICAL:
            x0, x1, x2 = v[i], v[i + 1], v[i + 2]
            tw[0] += x0
            tw[1] += x1
            tw[2] += x2
            al[0] = tw[1] * x2 - tw[2] * x1
            al[1] = tw[2] * x0 - tw[0] * x2
            al[2] = tw[0] * x1 - tw[1] * x0
            al[3] = tw[4] * x2 - tw[5] * x1
            al[4] = tw[5] * x0 - tw[3] * x2
            al[5] = tw[3] * x1 - tw[4] * x0
        elif t == FREE:
            s6a[0:6] = v[i : i + 6]
            dv_cross(tw, s6a, al)  # the parent's share x S v (zero at the root)
            for j in range(6):
                tw[j] += v[i + j]
        else:
            for j in range(6):
                al[j] = 0.0
        spatial_inertia(reals, k, P[k])
        momentum(reals, k, tw, s6a)
        dv_cross(tw, s6a, s6b)
        zk = z[k]
        for j in range(3):
            zk[j] = s6b[3 + j]
            zk[3 + j] = s6b[j]
        if has_fext:
            for j in range(3):
                zk[j] -= fext[k, 3 + j]
                zk[3 + j] -= fext[k, j]


@njit(cache=True)
def _workspace(nb, nv):
    """One allocation, carved into the per-body arrays of the recursions (C-contiguous views)."""
    W = np.empty(nb * 93 + nv + 36 + 28)
    o = 0
    R = W[o : o + 9 * nb].reshape((nb, 3, 3))
    o += 9 * nb
    rb = W[o : o + 3 * nb].reshape((nb, 3))
    o += 3 * nb
    twist = W[o : o + 6 * nb].reshape((nb, 6))
    o += 6 * nb
    alpha = W[o : o + 6 * nb].reshape((nb, 6))
    o += 6 * nb
    P = W[o : o + 36 * nb].reshape((nb, 6, 6))
    o += 36 * nb
    z = W[o : o + 6 * nb].reshape((nb, 6))
    o += 6 * nb
    acc = W[o : o + 6 * nb].reshape((nb, 6))
    o += 6 * nb
    U = W[o : o + 6 * nb].reshape((nb, 6))
    o += 6 * nb
    Dinv = W[o : o + 9 * nb].reshape((nb, 3, 3))
    o += 9 * nb
    u = W[o : o + nv]
    o += nv
    Pa = W[o : o + 36].reshape((6, 6))
    o += 36
    scratch = W[o : o + 28]
    return R, rb, twist, alpha, P, z, acc, U, Dinv, u, Pa, scratch


@njit(cache=True)
def _inv_spd3(P, out):
    """``out = A^-1`` for the symmetric 3x3 block ``A = P[0:3, 0:3]``; False unless A > 0."""
    a00, a01, a02 = P[0, 0], P[0, 1], P[0, 2]
    a11, a12, a22 = P[1, 1], P[1, 2], P[2, 2]
    c00 = a11 * a22 - a12 * a12
    c01 = a02 * a12 - a01 * a22
    c02 = a01 * a12 - a02 * a11
    det = a00 * c00 + a01 * c01 + a02 * c02
    if not (a00 > 0.0 and a00 * a11 - a01 * a01 > 0.0 and det > 0.0):
        return False
    s = 1.0 / det
    out[0, 0] = c00 * s
    out[0, 1] = c01 * s
    out[0, 2] = c02 * s
    out[1, 0] = c01 * s
    out[1, 1] = (a00 * a22 - a02 * a02) * s
    out[1, 2] = (a01 * a02 - a00 * a12) * s
    out[2, 0] = c02 * s
    out[2, 1] = out[1, 2]
    out[2, 2] = (a00 * a11 - a01 * a01) * s
    return True


# ---------------------------------------------------------- backward sweep


@njit(cache=True)
def _articulated(ints, reals, tau, R, rb, alpha, P, z, U, Dinv, u, Pa, za, S):
    """Tip-to-base pass (SOA eq. 80-89): articulated inertias and bias wrenches.

    For joint k with motion subspace ``S_k`` (the paper's ``H_k``):
    ``U_k = P_k S_k``, ``D_k = S_k^T U_k`` (80), ``u_k = tau_k - S_k^T z_k`` (88),
    ``P_k^A = P_k - U_k D_k^-1 U_k^T`` (84-86),
    ``z_k^A = z_k + P_k^A alpha_k + U_k D_k^-1 u_k`` (89), and then
    ``P_parent += Ad_k^T P_k^A Ad_k`` (87), ``z_parent += Ad_k^T z_k^A``.
    Returns False if some ``D_k`` is not positive-definite.
    """
    nb = ints.shape[0]
    for k in range(nb - 1, -1, -1):
        t = ints[k, I_JTYPE]
        i = ints[k, I_VI]
        p = ints[k, I_PARENT]
        Pk = P[k]
        zk = z[k]
        Uk = U[k]
        al = alpha[k]
        if t == REVOLUTE or t == PRISMATIC:
            o = 0 if t == REVOLUTE else 3
            n0, n1, n2 = reals[k, R_AXIS], reals[k, R_AXIS + 1], reals[k, R_AXIS + 2]
            for m in range(6):
                Uk[m] = Pk[m, o] * n0 + Pk[m, o + 1] * n1 + Pk[m, o + 2] * n2
            d = n0 * Uk[o] + n1 * Uk[o + 1] + n2 * Uk[o + 2]
            if not d > 0.0:
                return False
            di = 1.0 / d
            Dinv[k, 0, 0] = di
            uk = tau[i] - (n0 * zk[o] + n1 * zk[o + 1] + n2 * zk[o + 2])
            u[i] = uk
            if p < 0:
                continue
            ud = uk * di
            for m in range(6):
                wm = Uk[m] * di
                for l in range(m, 6):
                    x = Pk[m, l] - wm * Uk[l]
                    Pa[m, l] = x
                    Pa[l, m] = x
            for m in range(6):
                s = zk[m] + Uk[m] * ud
                for l in range(6):
                    s += Pa[m, l] * al[l]
                za[m] = s
        elif t == SPHERICAL:
            Di = Dinv[k]
            if not _inv_spd3(Pk, Di):
                return False
            for j in range(3):
                u[i + j] = tau[i + j] - zk[j]
            if p < 0:
                continue
            # U = P[:, 0:3]: P^A = P - U D^-1 U^T
            for m in range(6):
                w0 = Di[0, 0] * Pk[m, 0] + Di[0, 1] * Pk[m, 1] + Di[0, 2] * Pk[m, 2]
                w1 = Di[1, 0] * Pk[m, 0] + Di[1, 1] * Pk[m, 1] + Di[1, 2] * Pk[m, 2]
                w2 = Di[2, 0] * Pk[m, 0] + Di[2, 1] * Pk[m, 1] + Di[2, 2] * Pk[m, 2]
                for l in range(m, 6):
                    x = Pk[m, l] - (w0 * Pk[l, 0] + w1 * Pk[l, 1] + w2 * Pk[l, 2])
                    Pa[m, l] = x
                    Pa[l, m] = x
            x0 = Di[0, 0] * u[i] + Di[0, 1] * u[i + 1] + Di[0, 2] * u[i + 2]
            x1 = Di[1, 0] * u[i] + Di[1, 1] * u[i + 1] + Di[1, 2] * u[i + 2]
            x2 = Di[2, 0] * u[i] + Di[2, 1] * u[i + 1] + Di[2, 2] * u[i + 2]
            for m in range(6):
                s = zk[m] + Pk[m, 0] * x0 + Pk[m, 1] * x1 + Pk[m, 2] * x2
                for l in range(6):
                    s += Pa[m, l] * al[l]
                za[m] = s
        elif t == FREE:
            for j in range(6):
                u[i + j] = tau[i + j] - zk[j]
            if p < 0:
                continue
            # P^A = 0 and z^A = tau: only the joint's own wrench reaches the parent
            _wrench_to_parent_add(R[k], rb[k], tau[i : i + 6], z[p])
            continue
        else:
            if p >= 0:
                _inertia_to_parent_add(R[k], rb[k], Pk, S, P[p])
                _wrench_to_parent_add(R[k], rb[k], zk, z[p])
            continue
        _inertia_to_parent_add(R[k], rb[k], Pa, S, P[p])
        _wrench_to_parent_add(R[k], rb[k], za, z[p])
    return True


# ------------------------------------------------------------- forward sweep


@njit(cache=True)
def _accelerations(ints, reals, gravity, R, rb, alpha, P, U, Dinv, u, acc, a, s6, y6):
    """Base-to-tip pass (SOA eq. 92-95): joint and body accelerations.

    ``acc'_k = Ad_k acc_parent + alpha_k`` (``acc_parent = -g`` for the root),
    ``a_k = D_k^-1 (u_k - U_k^T acc'_k)`` (93-94), ``acc_k = acc'_k + S_k a_k`` (95).
    A FREE joint solves ``P_k acc_k = u_k + z_k - z_k = tau_k - z_k`` (92 with a base
    wrench) by Cholesky.  Returns False if that ``P_k`` is not positive-definite.
    """
    nb = ints.shape[0]
    for k in range(nb):
        t = ints[k, I_JTYPE]
        i = ints[k, I_VI]
        p = ints[k, I_PARENT]
        ak = acc[k]
        if p < 0:
            s6[0] = 0.0
            s6[1] = 0.0
            s6[2] = 0.0
            s6[3] = -gravity[0]
            s6[4] = -gravity[1]
            s6[5] = -gravity[2]
            _motion_to_child(R[k], rb[k], s6, ak)
        else:
            _motion_to_child(R[k], rb[k], acc[p], ak)
        for j in range(6):
            ak[j] += alpha[k, j]
        if t == REVOLUTE or t == PRISMATIC:
            o = 0 if t == REVOLUTE else 3
            Uk = U[k]
            s = u[i]
            for j in range(6):
                s -= Uk[j] * ak[j]
            qdd = Dinv[k, 0, 0] * s
            a[i] = qdd
            for j in range(3):
                ak[o + j] += reals[k, R_AXIS + j] * qdd
        elif t == SPHERICAL:
            Pk = P[k]
            for j in range(3):
                s = u[i + j]
                for m in range(6):
                    s -= Pk[m, j] * ak[m]
                s6[j] = s
            Di = Dinv[k]
            for j in range(3):
                qdd = Di[j, 0] * s6[0] + Di[j, 1] * s6[1] + Di[j, 2] * s6[2]
                a[i + j] = qdd
                ak[j] += qdd
        elif t == FREE:
            if not cholesky_solve(P[k], u[i : i + 6], y6):
                return False
            for j in range(6):
                a[i + j] = y6[j] - ak[j]
                ak[j] = y6[j]
    return True


# ------------------------------------------------------------------ kernels


@njit(cache=True)
def _aba_core(ints, reals, gravity, q, v, tau, fext, a, ws):
    R, rb, twist, alpha, P, z, acc, U, Dinv, u, Pa, sc = ws
    _velocities(
        ints, reals, q, v, fext, R, rb, twist, alpha, P, z, sc[0:8], sc[8:16], sc[16:22], sc[22:28]
    )
    if not _articulated(ints, reals, tau, R, rb, alpha, P, z, U, Dinv, u, Pa, sc[0:6], sc[8:8], sc):
        return False
    return _accelerations(ints, reals, gravity, R, rb, alpha, P, U, Dinv, u, acc, a, sc[16:22], sc[22:28])
