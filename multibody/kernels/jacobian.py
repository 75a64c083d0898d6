"""Jacobian of a frame attached to a body, in the frame's own axes."""

import numpy as np
from numba import njit

from ...dq.kernels import dq_mul, dv_frame_change
from .frames import _column
from .layout import JOINT_NV, JOINT_TYPE, PARENT, V_INDEX


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
        t = ints[k, JOINT_TYPE]
        nk = JOINT_NV[t]
        vk = ints[k, V_INDEX]
        if nk > 0:
            for m in range(8):
                conj[m] = -pose[k, m] if (m % 4) != 0 else pose[k, m]
            dq_mul(conj, pf, kf)
            for c in range(nk):
                _column(ints, reals, k, c, col)
                dv_frame_change(kf, col, out)
                for i in range(6):
                    J[i, vk + c] = out[i]
        k = ints[k, PARENT]
