"""Compiled mixed forward/inverse dynamics (SOA section 3) in O(n).

Some degrees of freedom have their acceleration given, the others their generalized force
(:func:`mixed`); the recursion is the articulated-body algorithm of :mod:`.articulated` run
per degree of freedom, on the same workspace ``W`` (:data:`.layout.ABA_WS`) and with its
base-to-tip velocity pass, frame changes and acceleration step.  Notation and the
``_nrt=False`` rule: the docstring of :mod:`.articulated` and ``docs/articulated.md``.
"""

import numpy as np
from numba import njit

from .articulated import acceleration_bias, inertia_to_parent, velocity_pass
from .frames import _column, _store6, _wrench_to_parent
from .kinematics import _inertial_acceleration
from .layout import (
    ABA_WIDTH,
    ACC,
    ALPHA,
    ART_INERTIA,
    ART_INERTIA_A,
    BIAS,
    BIAS_A,
    INERTIAL_ACC,
    JOINT_NV,
    JOINT_TYPE,
    PARENT,
    TMP1,
    TMP2,
    U_VEC,
    V_INDEX,
)
from .linalg import cholesky, cholesky_solve

__all__ = ["mixed"]


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _mixed_articulated(ints, reals, prescribed, a_in, tau_in, W, V, F):
    """Tip-to-base pass of the mixed problem (SOA 3.3, 5.2 (1)-(2), per degree of freedom).

    Joint k's columns split into free ones ``S_f`` (given force) and prescribed
    ones ``S_p`` (given acceleration).  The prescribed motion joins the
    velocity product, ``alpha'_k = alpha_k + S_p a_p``, and the recursion
    (80-89) runs on ``S_f`` alone: ``U = P S_f``, ``D = S_f^T U`` (Cholesky
    factor kept), ``u = tau_f - S_f^T z``, ``P^A = P - U D^-1 U^T``,
    ``z^A = z + P^A alpha' + U D^-1 u``.  A fully prescribed joint passes
    ``P`` and ``z + P alpha'`` on (SOA eq. 90-91).  ``V[k, 0]`` holds U,
    ``V[k, 1]`` the factor, ``F[k]`` the free columns.
    """
    nb = ints.shape[0]
    col = W[nb, TMP1 : TMP1 + 6]
    x = W[nb, TMP2 : TMP2 + 6]
    G = W[nb + 1, 0:36].reshape((6, 6))
    for k in range(nb - 1, -1, -1):
        p = ints[k, PARENT]
        vi = ints[k, V_INDEX]
        nk = JOINT_NV[ints[k, JOINT_TYPE]]
        nf = 0
        for j in range(nk):
            _column(ints, reals, k, j, col)
            if prescribed[vi + j]:
                for m in range(6):
                    W[k, ALPHA + m] += col[m] * a_in[vi + j]
            else:
                F[k, nf] = j
                nf += 1
        F[k, 6] = nf
        U = V[k, 0]
        L = V[k, 1]
        for c in range(nf):
            _column(ints, reals, k, F[k, c], col)
            s = tau_in[vi + F[k, c]]
            for m in range(6):
                s -= col[m] * W[k, BIAS + m]
                U[m, c] = 0.0
                for l in range(6):
                    U[m, c] += W[k, ART_INERTIA + 6 * m + l] * col[l]
            W[k, U_VEC + c] = s
            for c2 in range(c + 1):
                s = 0.0
                for m in range(6):
                    s += col[m] * U[m, c2]
                L[c, c2] = s
        if not cholesky(L, nf):
            return False
        if p < 0:
            continue
        # P^A = P - G U^T with G = U D^-1 (row m of G solves D g = U[m, :]^T)
        for m in range(6):
            for c in range(nf):
                x[c] = U[m, c]
            cholesky_solve(L, nf, x)
            for c in range(nf):
                G[m, c] = x[c]
        for m in range(6):
            for l in range(6):
                s = W[k, ART_INERTIA + 6 * m + l]
                for c in range(nf):
                    s -= G[m, c] * U[l, c]
                W[nb, ART_INERTIA_A + 6 * m + l] = s
        # z^A = z + P^A alpha' + G u
        for m in range(6):
            s = W[k, BIAS + m]
            for l in range(6):
                s += W[nb, ART_INERTIA_A + 6 * m + l] * W[k, ALPHA + l]
            for c in range(nf):
                s += G[m, c] * W[k, U_VEC + c]
            W[nb, BIAS_A + m] = s
        inertia_to_parent(W, k, nb, ART_INERTIA_A, p)
        _wrench_to_parent(W, k, nb, BIAS_A, p, BIAS)
    return True


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _mixed_accelerations(ints, reals, gravity, prescribed, a_in, tau_in, W, V, F, a, tau):
    """Base-to-tip pass of the mixed problem (SOA eq. 92-97, per degree of freedom).

    ``acc' = Ad_k acc_parent + alpha'_k``, ``a_f = D^-1 (u - U^T acc')``,
    ``acc_k = acc' + S_f a_f``; the forces of the prescribed columns are the
    projections of the joint wrench ``f_k = P_k acc_k + z_k`` (97).
    """
    nb = ints.shape[0]
    col = W[nb, TMP1 : TMP1 + 6]
    x = W[nb, TMP2 : TMP2 + 6]
    _store6(W, nb, INERTIAL_ACC, _inertial_acceleration(gravity))
    for k in range(nb):
        p = ints[k, PARENT]
        vi = ints[k, V_INDEX]
        nk = JOINT_NV[ints[k, JOINT_TYPE]]
        acceleration_bias(W, k, p, nb)
        nf = F[k, 6]
        U = V[k, 0]
        for c in range(nf):
            s = W[k, U_VEC + c]
            for m in range(6):
                s -= U[m, c] * W[k, ACC + m]
            x[c] = s
        cholesky_solve(V[k, 1], nf, x)
        for c in range(nf):
            j = F[k, c]
            a[vi + j] = x[c]
            tau[vi + j] = tau_in[vi + j]
            _column(ints, reals, k, j, col)
            for m in range(6):
                W[k, ACC + m] += col[m] * x[c]
        for j in range(nk):
            if prescribed[vi + j]:
                a[vi + j] = a_in[vi + j]
                _column(ints, reals, k, j, col)
                s = 0.0
                for m in range(6):
                    f = W[k, BIAS + m]
                    for l in range(6):
                        f += W[k, ART_INERTIA + 6 * m + l] * W[k, ACC + l]
                    s += col[m] * f
                tau[vi + j] = s


@njit(cache=True)
def mixed(ints, reals, gravity, q, v, prescribed, a_in, tau_in, fext, a, tau):
    """The mixed forward/inverse problem (SOA section 3) in O(n).

    ``prescribed`` (nv,) bool: the degrees of freedom whose acceleration is
    given (``a_in``), the others have their generalized force given
    (``tau_in``).  Fills the full ``a`` and ``tau`` (nv,).  With nothing
    prescribed this is :func:`aba`, with everything prescribed ``rnea``.
    Returns False if a free block ``D_k`` is not positive-definite.
    """
    nb = ints.shape[0]
    W = np.empty((nb + 2, ABA_WIDTH))
    V = np.empty((nb, 2, 6, 6))
    F = np.empty((nb, 7), dtype=np.int64)
    velocity_pass(ints, reals, q, v, fext, W)
    if not _mixed_articulated(ints, reals, prescribed, a_in, tau_in, W, V, F):
        return False
    _mixed_accelerations(ints, reals, gravity, prescribed, a_in, tau_in, W, V, F, a, tau)
    return True
