"""Recursive Newton-Euler inverse dynamics (P12, P16, P23) with the swap.

The base-to-tip pass is :func:`.kinematics._forward_pass` (with the body wrenches); the
tip-to-base pass here adds each body's wrench into its parent's (P19) and projects it on
the joint (``tau_k = S_k^T f_k^s``).  Workspace: :data:`.layout.RNEA_WS`.
"""

import numpy as np
from numba import njit

from .frames import _wrench_to_parent
from .kinematics import _forward_pass
from .layout import (
    AXIS,
    FREE,
    JOINT_TYPE,
    PARENT,
    PRISMATIC,
    REVOLUTE,
    RNEA_WIDTH,
    SPHERICAL,
    V_INDEX,
    WRENCH,
)

# ------------------------------------------------------------ inverse dynamics


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _rnea(ints, reals, gravity, q, v, a, fext, tau, W):
    """The two passes of :func:`rnea` on the workspace W (nb + 1, RNEA_WIDTH).

    Fills ``tau`` (nv,); ``W[k, WRENCH:WRENCH+6]`` holds the joint wrench ``f_k`` swapped.
    ``fext`` is (nb, 6), or (0, 6) for no external wrenches.
    """
    nb = ints.shape[0]
    _forward_pass(ints, reals, gravity, q, v, a, fext, W, True)
    for k in range(nb - 1, -1, -1):
        t = ints[k, JOINT_TYPE]
        i = ints[k, V_INDEX]
        if t == REVOLUTE or t == PRISMATIC:
            o = WRENCH if t == REVOLUTE else WRENCH + 3  # the torque or the force
            tau[i] = (
                reals[k, AXIS] * W[k, o]
                + reals[k, AXIS + 1] * W[k, o + 1]
                + reals[k, AXIS + 2] * W[k, o + 2]
            )
        elif t == SPHERICAL:
            for j in range(3):
                tau[i + j] = W[k, WRENCH + j]
        elif t == FREE:
            for j in range(6):
                tau[i + j] = W[k, WRENCH + j]
        p = ints[k, PARENT]
        if p >= 0:
            _wrench_to_parent(W, k, k, WRENCH, p, WRENCH)


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
    W = np.empty((nb + 1, RNEA_WIDTH))
    _rnea(ints, reals, gravity, q, v, a, fext, tau, W)
    for k in range(nb):
        for j in range(3):
            force[k, j] = W[k, WRENCH + 3 + j]
            force[k, 3 + j] = W[k, WRENCH + j]
