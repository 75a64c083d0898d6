"""Compiled recursions of the multibody engine (the one implementation of each).

All kernels take the model's packed arrays ``ints`` (nb, 4) and ``reals``
(nb, 24) (layout in :mod:`dqspace.multibody.model`) and flat state vectors.
Quantities are in body coordinates: poses are unit dual quaternions, twists
``[w, v]`` and wrenches ``[f, tau]`` dual vectors about the body origin.  The
dual-quaternion operations are the kernels of :mod:`dqspace.dq._kernels`.

Notation (paper Sec. 2, ``DESIGN.md``): ``rel[k] = q^_{parent,k}``, the pose
of body k in its parent; ``Ad_k x = rel[k]* o x o rel[k]`` carries a dual
vector from the parent's frame to k's (P8, P19); ``S_k`` is the joint's motion
subspace (the paper's ``H^_k``); ``M^_k`` the dual inertia.
"""

import math

import numpy as np
from numba import njit

from dqspace.dq._kernels import (
    dq_mul,
    dq_normalize,
    dq_screw_exp,
    dq_translation,
    dv_cross,
    dv_frame_change,
    dv_frame_change_inv,
    q_exp,
    q_mul,
    q_rotate_inv,
    q_to_rotation_matrix,
)

FIXED, REVOLUTE, PRISMATIC, SPHERICAL, FREE = 0, 1, 2, 3, 4
I_PARENT, I_JTYPE, I_QI, I_VI = 0, 1, 2, 3
R_AXIS, R_PLACE, R_MASS, R_COM, R_JO = 0, 3, 11, 12, 15

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


@njit(cache=True)
def relative_pose(ints, reals, k, q, out):
    """``rel = placement_k o X_J(q_k)``: pose of body k in its parent (or the inertial frame).

    The joint motion X_J is passed to the product as a tuple (no allocation).
    """
    t = ints[k, I_JTYPE]
    i = ints[k, I_QI]
    place = reals[k, R_PLACE : R_PLACE + 8]
    if t == REVOLUTE:
        h = 0.5 * q[i]
        s = math.sin(h)
        a0, a1, a2 = reals[k, R_AXIS], reals[k, R_AXIS + 1], reals[k, R_AXIS + 2]
        dq_mul(place, (math.cos(h), s * a0, s * a1, s * a2, 0.0, 0.0, 0.0, 0.0), out)
    elif t == PRISMATIC:
        h = 0.5 * q[i]
        a0, a1, a2 = reals[k, R_AXIS], reals[k, R_AXIS + 1], reals[k, R_AXIS + 2]
        dq_mul(place, (1.0, 0.0, 0.0, 0.0, 0.0, h * a0, h * a1, h * a2), out)
    elif t == SPHERICAL:
        dq_mul(place, (q[i], q[i + 1], q[i + 2], q[i + 3], 0.0, 0.0, 0.0, 0.0), out)
    elif t == FREE:
        dq_mul(place, q[i : i + 8], out)
    else:
        for j in range(8):
            out[j] = place[j]


@njit(cache=True)
def motion(ints, reals, k, x, out):
    """``out = S_k x_k``: the joint's twist for joint-velocity (or acceleration) vector x."""
    t = ints[k, I_JTYPE]
    i = ints[k, I_VI]
    for j in range(6):
        out[j] = 0.0
    if t == REVOLUTE:
        for j in range(3):
            out[j] = reals[k, R_AXIS + j] * x[i]
    elif t == PRISMATIC:
        for j in range(3):
            out[3 + j] = reals[k, R_AXIS + j] * x[i]
    elif t == SPHERICAL:
        for j in range(3):
            out[j] = x[i + j]
    elif t == FREE:
        for j in range(6):
            out[j] = x[i + j]


@njit(cache=True)
def project(ints, reals, k, f, tau):
    """``tau_k = S_k^T f^s``: the generalized force of joint k from the wrench f (swap)."""
    t = ints[k, I_JTYPE]
    i = ints[k, I_VI]
    if t == REVOLUTE:
        tau[i] = reals[k, R_AXIS] * f[3] + reals[k, R_AXIS + 1] * f[4] + reals[k, R_AXIS + 2] * f[5]
    elif t == PRISMATIC:
        tau[i] = reals[k, R_AXIS] * f[0] + reals[k, R_AXIS + 1] * f[1] + reals[k, R_AXIS + 2] * f[2]
    elif t == SPHERICAL:
        for j in range(3):
            tau[i + j] = f[3 + j]
    elif t == FREE:
        for j in range(3):
            tau[i + j] = f[3 + j]
            tau[i + 3 + j] = f[j]


@njit(cache=True)
def momentum(reals, k, w, out):
    """``out = M^_k w = [p, h]``: ``p = m (v + w x c)``, ``h = J_O w + m c x v`` (P6)."""
    m = reals[k, R_MASS]
    c0, c1, c2 = reals[k, R_COM], reals[k, R_COM + 1], reals[k, R_COM + 2]
    w0, w1, w2, v0, v1, v2 = w[0], w[1], w[2], w[3], w[4], w[5]
    out[0] = m * (v0 + w1 * c2 - w2 * c1)
    out[1] = m * (v1 + w2 * c0 - w0 * c2)
    out[2] = m * (v2 + w0 * c1 - w1 * c0)
    J = reals[k, R_JO : R_JO + 9]
    out[3] = J[0] * w0 + J[1] * w1 + J[2] * w2 + m * (c1 * v2 - c2 * v1)
    out[4] = J[3] * w0 + J[4] * w1 + J[5] * w2 + m * (c2 * v0 - c0 * v2)
    out[5] = J[6] * w0 + J[7] * w1 + J[8] * w2 + m * (c0 * v1 - c1 * v0)


@njit(cache=True)
def spatial_inertia(reals, k, out):
    """Symmetric 6x6 ``swap(M^_k) = [[J_O, m [c]x], [-m [c]x, m I]]`` (twist -> [h, p])."""
    m = reals[k, R_MASS]
    c0, c1, c2 = reals[k, R_COM], reals[k, R_COM + 1], reals[k, R_COM + 2]
    for i in range(3):
        for j in range(3):
            out[i, j] = reals[k, R_JO + 3 * i + j]
            out[3 + i, 3 + j] = m if i == j else 0.0
    # m [c]x
    out[0, 3] = 0.0
    out[0, 4] = -m * c2
    out[0, 5] = m * c1
    out[1, 3] = m * c2
    out[1, 4] = 0.0
    out[1, 5] = -m * c0
    out[2, 3] = -m * c1
    out[2, 4] = m * c0
    out[2, 5] = 0.0
    for i in range(3):
        for j in range(3):
            out[3 + i, j] = out[j, 3 + i]


# --------------------------------------------------------------- kinematics


@njit(cache=True)
def poses(ints, reals, q, rel, pose):
    """Relative poses ``rel[k]`` and inertial poses ``pose[k] = pose[parent] o rel[k]``."""
    nb = ints.shape[0]
    for k in range(nb):
        relative_pose(ints, reals, k, q, rel[k])
        p = ints[k, I_PARENT]
        if p < 0:
            for j in range(8):
                pose[k, j] = rel[k, j]
        else:
            dq_mul(pose[p], rel[k], pose[k])


@njit(cache=True)
def twists(ints, reals, rel, v, twist):
    """Base-to-tip velocity recursion (P12): ``w_k = Ad_k w_parent + S_k v_k``."""
    nb = ints.shape[0]
    sv = np.empty(6)
    for k in range(nb):
        motion(ints, reals, k, v, sv)
        p = ints[k, I_PARENT]
        if p < 0:
            for j in range(6):
                twist[k, j] = sv[j]
        else:
            dv_frame_change(rel[k], twist[p], twist[k])
            for j in range(6):
                twist[k, j] += sv[j]


@njit(cache=True)
def accelerations(ints, reals, rel, twist, v, a, acc):
    """Base-to-tip acceleration recursion (P16) with the velocity-product term (P15).

    ``acc_k = Ad_k acc_parent + S_k a_k + w_k x (S_k v_k)``: for joints whose
    motion subspace is constant in body coordinates, (P15) reduces to the
    single dual cross product ``alpha_k = w_k x S_k v_k``.
    """
    nb = ints.shape[0]
    sv = np.empty(6)
    sa = np.empty(6)
    c = np.empty(6)
    for k in range(nb):
        motion(ints, reals, k, v, sv)
        motion(ints, reals, k, a, sa)
        dv_cross(twist[k], sv, c)
        p = ints[k, I_PARENT]
        if p < 0:
            for j in range(6):
                acc[k, j] = sa[j] + c[j]
        else:
            dv_frame_change(rel[k], acc[p], acc[k])
            for j in range(6):
                acc[k, j] += sa[j] + c[j]


@njit(cache=True)
def gravity_in_body(pose, k, gravity, out):
    """``[0, R_Ik^T g]``: uniform gravity as a dual vector in body k (zero rotation part)."""
    g = np.empty(3)
    q_rotate_inv(pose[k, :4], gravity, g)
    out[0] = 0.0
    out[1] = 0.0
    out[2] = 0.0
    out[3] = g[0]
    out[4] = g[1]
    out[5] = g[2]


# ------------------------------------------------------------ inverse dynamics


@njit(cache=True)
def rnea(ints, reals, gravity, q, v, a, fext, tau, force):
    """Recursive inverse dynamics (P23) with the swap; returns nothing, fills tau and force.

    Forward pass: twists and accelerations (P12, P16).  Backward pass:
    ``f_k = M^_k (acc_k - g_k) + w_k x M^_k w_k - fext_k + sum_c Ad_c^-1 f_c``
    and ``tau_k = S_k^T f_k^s``.  ``force[k]`` is the wrench the joint of body
    k transmits to body k (from its parent), in body k, about its origin.
    """
    nb = ints.shape[0]
    rel = np.empty((nb, 8))
    pose = np.empty((nb, 8))
    twist = np.empty((nb, 6))
    acc = np.empty((nb, 6))
    poses(ints, reals, q, rel, pose)
    twists(ints, reals, rel, v, twist)
    accelerations(ints, reals, rel, twist, v, a, acc)
    h = np.empty(6)
    c = np.empty(6)
    g = np.empty(6)
    use_g = gravity[0] != 0.0 or gravity[1] != 0.0 or gravity[2] != 0.0
    for k in range(nb):
        if use_g:
            gravity_in_body(pose, k, gravity, g)
            for j in range(6):
                g[j] = acc[k, j] - g[j]
            momentum(reals, k, g, force[k])
        else:
            momentum(reals, k, acc[k], force[k])
        momentum(reals, k, twist[k], h)
        dv_cross(twist[k], h, c)
        for j in range(6):
            force[k, j] += c[j] - fext[k, j]
    for k in range(nb - 1, -1, -1):
        project(ints, reals, k, force[k], tau)
        p = ints[k, I_PARENT]
        if p >= 0:
            dv_frame_change_inv(rel[k], force[k], c)
            for j in range(6):
                force[p, j] += c[j]


# ----------------------------------------------------------------- mass matrix


@njit(cache=True)
def _composite_to_parent(rel, m, h, J, hp, Jp):
    """Add the rigid-body inertia (m, h = m c, J about the origin; child frame) to the
    parent's (hp, Jp) after moving it into the parent frame through ``rel = q^_{p,c}``.

    ``h' = R h + m r``, ``J' = R J R^T - [r]x[Rh]x - [Rh]x[r]x - m [r]x^2``.
    """
    R = np.empty((3, 3))
    q_to_rotation_matrix(rel[:4], R)
    r = np.empty(3)
    dq_translation(rel, r)
    Rh0 = R[0, 0] * h[0] + R[0, 1] * h[1] + R[0, 2] * h[2]
    Rh1 = R[1, 0] * h[0] + R[1, 1] * h[1] + R[1, 2] * h[2]
    Rh2 = R[2, 0] * h[0] + R[2, 1] * h[1] + R[2, 2] * h[2]
    # R J R^T
    T = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            T[i, j] = R[i, 0] * J[0, j] + R[i, 1] * J[1, j] + R[i, 2] * J[2, j]
    for i in range(3):
        for j in range(i, 3):
            v = T[i, 0] * R[j, 0] + T[i, 1] * R[j, 1] + T[i, 2] * R[j, 2]
            Jp[i, j] += v
            if j != i:
                Jp[j, i] += v
    # -[r]x[a]x - [a]x[r]x = (r.a + a.r) I - (r a^T + a r^T) - ... : use
    # -[r]x[a]x = (r.a) I - a r^T  and  -[a]x[r]x = (a.r) I - r a^T,  -m[r]x^2 = m((r.r) I - r r^T)
    ra = r[0] * Rh0 + r[1] * Rh1 + r[2] * Rh2
    rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
    a = (Rh0, Rh1, Rh2)
    for i in range(3):
        for j in range(3):
            d = 2.0 * ra + m * rr if i == j else 0.0
            Jp[i, j] += d - a[i] * r[j] - r[i] * a[j] - m * r[i] * r[j]
    hp[0] += Rh0 + m * r[0]
    hp[1] += Rh1 + m * r[1]
    hp[2] += Rh2 + m * r[2]


@njit(cache=True)
def _momentum_of(m, h, J, w, out):
    """``[p, h_O]`` of a rigid-body inertia (m, h = m c, J_O) moving with twist w = [w, v]."""
    w0, w1, w2, v0, v1, v2 = w[0], w[1], w[2], w[3], w[4], w[5]
    out[0] = m * v0 + (w1 * h[2] - w2 * h[1])
    out[1] = m * v1 + (w2 * h[0] - w0 * h[2])
    out[2] = m * v2 + (w0 * h[1] - w1 * h[0])
    out[3] = J[0, 0] * w0 + J[0, 1] * w1 + J[0, 2] * w2 + (h[1] * v2 - h[2] * v1)
    out[4] = J[1, 0] * w0 + J[1, 1] * w1 + J[1, 2] * w2 + (h[2] * v0 - h[0] * v2)
    out[5] = J[2, 0] * w0 + J[2, 1] * w1 + J[2, 2] * w2 + (h[0] * v1 - h[1] * v0)


@njit(cache=True)
def crba(ints, reals, q, M):
    """Mass matrix ``M = S^T Phi^T I Phi S`` (P31) by composite inertias.

    ``Phi = (I - Q)^-1`` is never formed: its nilpotent block structure (a
    block ``Phi[j, k]`` is non-zero only for j an ancestor of k) lets the
    product be evaluated by one tip-to-base sweep of composite rigid-body
    inertias (10 parameters each: mass, first moment, inertia about the body
    origin) and, per joint column, one walk to the root carrying the
    composite momentum ``Ic_k S_k`` with the wrench frame change (P19).
    """
    nb = ints.shape[0]
    nv = M.shape[0]
    rel = np.empty((nb, 8))
    for k in range(nb):
        relative_pose(ints, reals, k, q, rel[k])
    mc = np.empty(nb)
    hc = np.empty((nb, 3))
    Jc = np.empty((nb, 3, 3))
    for k in range(nb):
        m = reals[k, R_MASS]
        mc[k] = m
        for i in range(3):
            hc[k, i] = m * reals[k, R_COM + i]
            for j in range(3):
                Jc[k, i, j] = reals[k, R_JO + 3 * i + j]
    for k in range(nb - 1, 0, -1):
        p = ints[k, I_PARENT]
        _composite_to_parent(rel[k], mc[k], hc[k], Jc[k], hc[p], Jc[p])
        mc[p] += mc[k]
    for i in range(nv):
        for j in range(nv):
            M[i, j] = 0.0
    e = np.zeros(nv)
    col = np.empty(6)
    F = np.empty(6)
    tau = np.zeros(nv)
    for k in range(nb):
        nk = joint_nv(ints[k, I_JTYPE])
        vk = ints[k, I_VI]
        for c in range(nk):
            e[vk + c] = 1.0
            motion(ints, reals, k, e, col)
            e[vk + c] = 0.0
            _momentum_of(mc[k], hc[k], Jc[k], col, F)  # composite momentum, wrench form
            j = k
            while True:
                project(ints, reals, j, F, tau)
                vj = ints[j, I_VI]
                for r in range(joint_nv(ints[j, I_JTYPE])):
                    M[vj + r, vk + c] = tau[vj + r]
                    M[vk + c, vj + r] = tau[vj + r]
                p = ints[j, I_PARENT]
                if p < 0:
                    break
                dv_frame_change_inv(rel[j], F, F)
                j = p


@njit(cache=True)
def cholesky_solve(M, b, x):
    """Solve the symmetric positive-definite system ``M x = b`` (M is left untouched).

    Returns False when M is not positive-definite.
    """
    n = M.shape[0]
    L = np.zeros((n, n))
    for j in range(n):
        s = M[j, j]
        for m in range(j):
            s -= L[j, m] * L[j, m]
        if not s > 0.0:
            return False
        d = math.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, n):
            s = M[i, j]
            for m in range(j):
                s -= L[i, m] * L[j, m]
            L[i, j] = s / d
    for i in range(n):
        s = b[i]
        for m in range(i):
            s -= L[i, m] * x[m]
        x[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for m in range(i + 1, n):
            s -= L[m, i] * x[m]
        x[i] = s / L[i, i]
    return True


@njit(cache=True)
def forward_dynamics_matrix(ints, reals, gravity, q, v, tau, fext, a):
    """Forward dynamics (P32): ``M a = tau - C`` by a Cholesky solve; False if M is singular."""
    nv = v.shape[0]
    nb = ints.shape[0]
    M = np.empty((nv, nv))
    crba(ints, reals, q, M)
    C = np.empty(nv)
    force = np.empty((nb, 6))
    zero = np.zeros(nv)
    rnea(ints, reals, gravity, q, v, zero, fext, C, force)
    rhs = np.empty(nv)
    for i in range(nv):
        rhs[i] = tau[i] - C[i]
    return cholesky_solve(M, rhs, a)


# ----------------------------------------------------------- configuration


@njit(cache=True)
def integrate(ints, q, v, dt, out):
    """``out = q (+) v dt`` on the configuration manifold.

    Free joint: ``q^ o screw_exp(1/2 v dt)`` (exact under a constant body
    twist); spherical: ``q o exp(1/2 w dt)``; others: ``q + v dt``.  The group
    product keeps unit length up to rounding; the rounding (~1e-16 per step,
    which would otherwise accumulate over 10^5 steps) is removed by projecting
    the product back onto the unit manifold.
    """
    nb = ints.shape[0]
    x = np.empty(6)
    for k in range(nb):
        t = ints[k, I_JTYPE]
        i = ints[k, I_QI]
        j = ints[k, I_VI]
        if t == REVOLUTE or t == PRISMATIC:
            out[i] = q[i] + v[j] * dt
        elif t == SPHERICAL:
            e = np.empty(4)
            for m in range(3):
                x[m] = 0.5 * dt * v[j + m]
            q_exp(x[:3], e)
            q_mul(q[i : i + 4], e, out[i : i + 4])
            n = 1.0 / math.sqrt(out[i] ** 2 + out[i + 1] ** 2 + out[i + 2] ** 2 + out[i + 3] ** 2)
            for m in range(4):
                out[i + m] *= n
        elif t == FREE:
            e = np.empty(8)
            for m in range(6):
                x[m] = 0.5 * dt * v[j + m]
            dq_screw_exp(x, e)
            dq_mul(q[i : i + 8], e, out[i : i + 8])
            dq_normalize(out[i : i + 8], out[i : i + 8])


@njit(cache=True)
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
    """Total momentum ``[p, h_O]`` in the inertial frame, h about the inertial origin.

    Each body's ``M^_k w_k`` (about its origin, in its frame) is carried to the
    inertial frame with the wrench frame change ``pose_k o x o pose_k*``.
    """
    nb = ints.shape[0]
    rel = np.empty((nb, 8))
    pose = np.empty((nb, 8))
    twist = np.empty((nb, 6))
    poses(ints, reals, q, rel, pose)
    twists(ints, reals, rel, v, twist)
    h = np.empty(6)
    w = np.empty(6)
    for j in range(6):
        out[j] = 0.0
    for k in range(nb):
        momentum(reals, k, twist[k], h)
        dv_frame_change_inv(pose[k], h, w)
        for j in range(6):
            out[j] += w[j]


@njit(cache=True)
def kinetic_energy(ints, reals, q, v):
    """``T = 1/2 sum_k <w_k, (M^_k w_k)^s>``."""
    nb = ints.shape[0]
    rel = np.empty((nb, 8))
    pose = np.empty((nb, 8))
    twist = np.empty((nb, 6))
    poses(ints, reals, q, rel, pose)
    twists(ints, reals, rel, v, twist)
    h = np.empty(6)
    T = 0.0
    for k in range(nb):
        momentum(reals, k, twist[k], h)
        for j in range(3):
            T += twist[k, j] * h[3 + j] + twist[k, 3 + j] * h[j]
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
    e = np.zeros(nv)
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
                e[vk + c] = 1.0
                motion(ints, reals, k, e, col)
                e[vk + c] = 0.0
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
    w1 = np.empty(6)
    w2 = np.empty(6)
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
            th = theta[j : j + 6]
            dv_cross(th, v[j : j + 6], w1)
            dv_cross(th, w1, w2)
            phi = math.sqrt(th[0] ** 2 + th[1] ** 2 + th[2] ** 2)
            f, g = _f_dexp(phi)
            rd = g * (th[0] * th[3] + th[1] * th[4] + th[2] * th[5])  # f'(phi) phi_d
            for m in range(3):
                out[j + m] = v[j + m] + 0.5 * w1[m] + f * w2[m]
                out[j + 3 + m] = v[j + 3 + m] + 0.5 * w1[3 + m] + f * w2[3 + m] + rd * w2[m]

