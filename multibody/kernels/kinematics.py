"""The base-to-tip pass shared by every recursion, and the kinematics kernels built on it.

One step per body (P12, P15, P16): :func:`_twist_step` (the joint's frame R, r^k, the twist
``w_k = Ad_k w_parent + S_k v_k`` and the velocity product ``alpha_k``) and
:func:`_acceleration_step` (``acc_k = Ad_k acc_parent + alpha_k + S_k a_k``), run over the
tree by :func:`_forward_pass` into a workspace of layout :data:`.layout.RNEA_WS`.
Public kernels: :func:`poses` (inertial and relative poses), :func:`body_motions` (twists
and accelerations).
"""

import numpy as np
from numba import njit

from ...dq.kernels import dq_mul
from .frames import (
    _cross6,
    _joint_transform,
    _joint_twist,
    _momentum6,
    _store6,
    _to_child,
    relative_pose,
)
from .layout import ACC, ALPHA, PARENT, RNEA_WIDTH, TWIST, WRENCH


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
    p = ints[k, PARENT]
    if p < 0:
        w0 = w1 = w2 = w3 = w4 = w5 = 0.0
    else:
        w0, w1, w2, w3, w4, w5 = _to_child(
            W, k, W[p, TWIST], W[p, TWIST + 1], W[p, TWIST + 2],
            W[p, TWIST + 3], W[p, TWIST + 4], W[p, TWIST + 5],
        )  # fmt: skip
    s0, s1, s2, s3, s4, s5 = _joint_twist(ints, reals, k, v)
    _store6(W, k, ALPHA, _cross6(w0, w1, w2, w3, w4, w5, s0, s1, s2, s3, s4, s5))
    _store6(W, k, TWIST, (w0 + s0, w1 + s1, w2 + s2, w3 + s3, w4 + s4, w5 + s5))


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def _velocity_wrench(reals, k, W, fext):
    """``w_k x M^_k w_k - fext_k`` (the velocity and external terms of P23), ``[f, tau]``.

    ``fext`` (nb, 6), or (0, 6) for none.  A 6-tuple.
    """
    w0, w1, w2 = W[k, TWIST], W[k, TWIST + 1], W[k, TWIST + 2]
    w3, w4, w5 = W[k, TWIST + 3], W[k, TWIST + 4], W[k, TWIST + 5]
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
        y0 + W[k, ALPHA], y1 + W[k, ALPHA + 1], y2 + W[k, ALPHA + 2],
        y3 + W[k, ALPHA + 3], y4 + W[k, ALPHA + 4], y5 + W[k, ALPHA + 5],
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
    p = ints[k, PARENT]
    if p < 0:
        p = ints.shape[0]
    y0, y1, y2, y3, y4, y5 = _bias_acceleration(W, k, p, ACC)
    s0, s1, s2, s3, s4, s5 = _joint_twist(ints, reals, k, a)
    _store6(W, k, ACC, (y0 + s0, y1 + s1, y2 + s2, y3 + s3, y4 + s4, y5 + s5))


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def _body_wrench(reals, k, W, fext):
    """``f_k = M^_k acc_k + w_k x M^_k w_k - fext_k`` (P23 before the children's
    wrenches are added), swapped ``[tau, f]``, into ``W[k, WRENCH]``."""
    m0, m1, m2, m3, m4, m5 = _momentum6(
        reals, k, W[k, ACC], W[k, ACC + 1], W[k, ACC + 2],
        W[k, ACC + 3], W[k, ACC + 4], W[k, ACC + 5],
    )  # fmt: skip
    b0, b1, b2, b3, b4, b5 = _velocity_wrench(reals, k, W, fext)
    _store6(W, k, WRENCH, (m3 + b3, m4 + b4, m5 + b5, m0 + b0, m1 + b1, m2 + b2))


@njit(cache=True, _nrt=False, inline="always", fastmath={"contract"})
def _forward_pass(ints, reals, gravity, q, v, a, fext, W, wrenches):
    """Base-to-tip pass of every recursion (P12, P15, P16) into W (nb + 1, RNEA_WIDTH).

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
    _store6(W, nb, ACC, _inertial_acceleration(gravity))
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
    ``acc_k = d/dt w_k`` (P16) of every body into W (nb + 1, RNEA_WIDTH).
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
        p = ints[k, PARENT]
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
    W = np.empty((nb + 1, RNEA_WIDTH))
    _kinematics_pass(ints, reals, q, v, a if with_acc else np.zeros(v.shape[0]), W)
    for k in range(nb):
        for j in range(6):
            twist[k, j] = W[k, TWIST + j]
            if with_acc:
                acc[k, j] = W[k, ACC + j]
