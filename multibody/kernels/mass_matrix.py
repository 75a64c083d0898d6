"""Mass matrix by composite rigid-body inertias (P31), and forward dynamics by it (P32).

Workspace: :data:`.layout.CRBA_WS` (the frame of body k, then the composite inertia of its
subtree: mass, first moment ``m c``, inertia about the origin, upper triangle).
"""

import numpy as np
from numba import njit

from .frames import _joint_column, _joint_transform, _rotate, _to_parent
from .layout import (
    AXIS,
    C_FIRST_MOMENT,
    C_INERTIA,
    C_MASS,
    COM,
    CRBA_WIDTH,
    FREE,
    INERTIA_O,
    JOINT_NV,
    JOINT_TYPE,
    MASS,
    PARENT,
    PRISMATIC,
    REVOLUTE,
    RNEA_WIDTH,
    ROT,
    SPHERICAL,
    TRANS,
    V_INDEX,
)
from .linalg import cholesky, cholesky_solve
from .newton_euler import _rnea

# ----------------------------------------------------------------- mass matrix

# crba's workspace row k (layout.CRBA_WS): the frame fields, then the composite
# rigid-body inertia of the subtree of body k, in body k's frame, about its origin.


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def _composite_to_parent(W, k, p):
    """Add body k's composite inertia (m, h = m c, J) to its parent's, moved through rel_k.

    About the parent's origin, in k's axes (r = r^k): ``h' = h + m r``,
    ``J' = J - [r]x[h]x - [h]x[r]x - m [r]x^2
    = J + (2 r.h + m r.r) I - h r^T - r h^T - m r r^T``; then rotated into the
    parent's axes: ``h_p += R h'``, ``J_p += R J' R^T``.
    """
    m = W[k, C_MASS]
    r0, r1, r2 = W[k, TRANS], W[k, TRANS + 1], W[k, TRANS + 2]
    h0, h1, h2 = W[k, C_FIRST_MOMENT], W[k, C_FIRST_MOMENT + 1], W[k, C_FIRST_MOMENT + 2]
    d = 2.0 * (r0 * h0 + r1 * h1 + r2 * h2) + m * (r0 * r0 + r1 * r1 + r2 * r2)
    mr0, mr1, mr2 = m * r0, m * r1, m * r2
    j00 = W[k, C_INERTIA] + d - 2.0 * h0 * r0 - mr0 * r0
    j01 = W[k, C_INERTIA + 1] - h0 * r1 - r0 * h1 - mr0 * r1
    j02 = W[k, C_INERTIA + 2] - h0 * r2 - r0 * h2 - mr0 * r2
    j11 = W[k, C_INERTIA + 3] + d - 2.0 * h1 * r1 - mr1 * r1
    j12 = W[k, C_INERTIA + 4] - h1 * r2 - r1 * h2 - mr1 * r2
    j22 = W[k, C_INERTIA + 5] + d - 2.0 * h2 * r2 - mr2 * r2
    g0, g1, g2 = h0 + mr0, h1 + mr1, h2 + mr2
    R = (
        W[k, ROT], W[k, ROT + 1], W[k, ROT + 2],
        W[k, ROT + 3], W[k, ROT + 4], W[k, ROT + 5],
        W[k, ROT + 6], W[k, ROT + 7], W[k, ROT + 8],
    )  # fmt: skip
    A = _rotate(R, j00, j01, j02, j01, j11, j12, j02, j12, j22, True)
    W[p, C_MASS] += m
    W[p, C_FIRST_MOMENT] += R[0] * g0 + R[1] * g1 + R[2] * g2
    W[p, C_FIRST_MOMENT + 1] += R[3] * g0 + R[4] * g1 + R[5] * g2
    W[p, C_FIRST_MOMENT + 2] += R[6] * g0 + R[7] * g1 + R[8] * g2
    W[p, C_INERTIA] += A[0]
    W[p, C_INERTIA + 1] += A[1]
    W[p, C_INERTIA + 2] += A[2]
    W[p, C_INERTIA + 3] += A[4]
    W[p, C_INERTIA + 4] += A[5]
    W[p, C_INERTIA + 5] += A[8]


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _composite_momentum(W, k, w0, w1, w2, v0, v1, v2):
    """``[p, h_O]`` of body k's composite inertia moving with the twist ``[w, v]`` (P6)."""
    m = W[k, C_MASS]
    h0, h1, h2 = W[k, C_FIRST_MOMENT], W[k, C_FIRST_MOMENT + 1], W[k, C_FIRST_MOMENT + 2]
    J00, J01, J02 = W[k, C_INERTIA], W[k, C_INERTIA + 1], W[k, C_INERTIA + 2]
    J11, J12, J22 = W[k, C_INERTIA + 3], W[k, C_INERTIA + 4], W[k, C_INERTIA + 5]
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
    t = ints[j, JOINT_TYPE]
    vj = ints[j, V_INDEX]
    if t == REVOLUTE or t == PRISMATIC:
        if t == REVOLUTE:
            x = reals[j, AXIS] * t0 + reals[j, AXIS + 1] * t1 + reals[j, AXIS + 2] * t2
        else:
            x = reals[j, AXIS] * f0 + reals[j, AXIS + 1] * f1 + reals[j, AXIS + 2] * f2
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
    """:func:`crba` on the workspace W (nb, at least CRBA_WIDTH columns)."""
    nb = ints.shape[0]
    nv = M.shape[0]
    for k in range(nb):
        _joint_transform(ints, reals, k, q, W)
        m = reals[k, MASS]
        W[k, C_MASS] = m
        for i in range(3):
            W[k, C_FIRST_MOMENT + i] = m * reals[k, COM + i]
        W[k, C_INERTIA] = reals[k, INERTIA_O]
        W[k, C_INERTIA + 1] = reals[k, INERTIA_O + 1]
        W[k, C_INERTIA + 2] = reals[k, INERTIA_O + 2]
        W[k, C_INERTIA + 3] = reals[k, INERTIA_O + 4]
        W[k, C_INERTIA + 4] = reals[k, INERTIA_O + 5]
        W[k, C_INERTIA + 5] = reals[k, INERTIA_O + 8]
    for k in range(nb - 1, -1, -1):
        p = ints[k, PARENT]
        if p >= 0:
            _composite_to_parent(W, k, p)
    for i in range(nv):
        for j in range(nv):
            M[i, j] = 0.0
    for k in range(nb):
        vk = ints[k, V_INDEX]
        for c in range(JOINT_NV[ints[k, JOINT_TYPE]]):
            s0, s1, s2, s3, s4, s5 = _joint_column(ints, reals, k, c)
            # the composite momentum Ic_k S_k e_c, a wrench [f, tau] in body k
            f0, f1, f2, t0, t1, t2 = _composite_momentum(W, k, s0, s1, s2, s3, s4, s5)
            j = k
            while True:
                _project_column(ints, reals, j, f0, f1, f2, t0, t1, t2, M, vk + c)
                p = ints[j, PARENT]
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
    W = np.empty((ints.shape[0], CRBA_WIDTH))
    _crba(ints, reals, q, M, W)


@njit(cache=True)
def forward_dynamics_matrix(ints, reals, gravity, q, v, tau, fext, a):
    """Forward dynamics (P32): ``M a = tau - C`` by a Cholesky solve.

    ``M`` by :func:`crba` (P31), ``C`` by :func:`rnea` (P23) at zero acceleration,
    on one workspace; the factorization is :func:`cholesky` (shared with the mixed
    problem of :mod:`.articulated`).  Returns False if M is not positive-definite (``a``
    is then left untouched).
    """
    nv = v.shape[0]
    M = np.empty((nv, nv))
    W = np.empty((ints.shape[0] + 1, RNEA_WIDTH))
    _crba(ints, reals, q, M, W)
    C = np.empty(nv)
    zero = np.zeros(nv)
    _rnea(ints, reals, gravity, q, v, zero, fext, C, W)
    if not cholesky(M, nv):
        return False
    for i in range(nv):
        a[i] = tau[i] - C[i]
    cholesky_solve(M, nv, a)
    return True
