"""Total momentum, centre of mass and kinetic energy of the system (P6, P12, P19)."""

import numpy as np
from numba import njit

from ...dq.kernels import dq_translation, q_rotate
from .frames import _momentum6, _to_parent, _wrench_to_parent
from .kinematics import _kinematics_pass, poses
from .layout import COM, MASS, PARENT, RNEA_WIDTH, TWIST, WRENCH

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
    W = np.empty((nb + 1, RNEA_WIDTH))
    _kinematics_pass(ints, reals, q, v, np.zeros(v.shape[0]), W)
    for k in range(nb):
        p0, p1, p2, h0, h1, h2 = _momentum6(
            reals, k, W[k, TWIST], W[k, TWIST + 1], W[k, TWIST + 2],
            W[k, TWIST + 3], W[k, TWIST + 4], W[k, TWIST + 5],
        )  # fmt: skip
        W[k, WRENCH], W[k, WRENCH + 1], W[k, WRENCH + 2] = h0, h1, h2
        W[k, WRENCH + 3], W[k, WRENCH + 4], W[k, WRENCH + 5] = p0, p1, p2
    for j in range(6):
        out[j] = 0.0
    for k in range(nb - 1, -1, -1):
        p = ints[k, PARENT]
        if p >= 0:
            _wrench_to_parent(W, k, k, WRENCH, p, WRENCH)
        else:
            f = _to_parent(
                W, k, W[k, WRENCH + 3], W[k, WRENCH + 4], W[k, WRENCH + 5],
                W[k, WRENCH], W[k, WRENCH + 1], W[k, WRENCH + 2],
            )  # fmt: skip
            for j in range(6):
                out[j] += f[j]


@njit(cache=True)
def center_of_mass(ints, reals, q, out):
    """System centre of mass ``out`` (3,) [m] in the inertial frame; returns the total
    mass [kg].

    Inertial poses by :func:`.kinematics.poses`; each body's centre of mass ``r_k + R_k
    c_k`` weighted by its mass: ``c = sum_k m_k (r_k + R_k c_k) / sum_k m_k``.  Its
    velocity is the linear momentum of :func:`system_momentum` over the total mass.
    """
    nb = ints.shape[0]
    rel = np.empty((nb, 8))
    pose = np.empty((nb, 8))
    poses(ints, reals, q, rel, pose)
    r, rc = np.empty(3), np.empty(3)
    acc0, acc1, acc2, mass = 0.0, 0.0, 0.0, 0.0
    for k in range(nb):
        m = reals[k, MASS]
        dq_translation(pose[k], r)
        q_rotate(pose[k, :4], reals[k, COM : COM + 3], rc)
        acc0 += m * (r[0] + rc[0])
        acc1 += m * (r[1] + rc[1])
        acc2 += m * (r[2] + rc[2])
        mass += m
    out[0] = acc0 / mass
    out[1] = acc1 / mass
    out[2] = acc2 / mass
    return mass


@njit(cache=True)
def kinetic_energy(ints, reals, q, v):
    """``T = 1/2 sum_k <w_k, (M^_k w_k)^s>`` [J], twists by the forward pass (P12)."""
    nb = ints.shape[0]
    W = np.empty((nb + 1, RNEA_WIDTH))
    _kinematics_pass(ints, reals, q, v, np.zeros(v.shape[0]), W)
    T = 0.0
    for k in range(nb):
        w0, w1, w2 = W[k, TWIST], W[k, TWIST + 1], W[k, TWIST + 2]
        u0, u1, u2 = W[k, TWIST + 3], W[k, TWIST + 4], W[k, TWIST + 5]
        p0, p1, p2, h0, h1, h2 = _momentum6(reals, k, w0, w1, w2, u0, u1, u2)
        T += w0 * h0 + w1 * h1 + w2 * h2 + u0 * p0 + u1 * p1 + u2 * p2
    return 0.5 * T
