"""Compiled scalar kernels of the dual-quaternion algebra (the one implementation).

Every operation of :mod:`dqspace.dq` is written once, as a numba ``njit`` function acting
on 1-D arrays and writing into an ``out`` array, in the module of its family --
:mod:`.quaternion_kernels` (quaternions), :mod:`.dual_kernels` (dual quaternions and dual
vectors), :mod:`.screw_kernels` (logarithms, exponentials, powers, ScLERP) -- and listed
here.  The public functions broadcast these kernels over leading batch axes through
gufuncs (:mod:`dqspace.dq._ufuncs`), and the multibody recursions call them directly from
compiled code, where LLVM inlines them.

Conventions (see ``docs/conventions.md``): Hamilton product, scalar first.

* quaternion ``[w, x, y, z]``;
* dual quaternion ``[qw, qx, qy, qz, dw, dx, dy, dz]`` = ``q + eps d`` with
  ``d = 1/2 q o r^b = 1/2 r^a o q`` for a pose;
* dual vector (twist ``w + eps v`` or wrench ``f + eps tau``) ``[real(3), dual(3)]``.

Kernels read all of their inputs into locals before writing, so ``out`` may
alias an input.  None of them validates: validation is the wrappers' job (with
:mod:`dqspace.dq.checks`).  This module is public API: other packages of dqspace
(the multibody and control kernels) call these functions from compiled code.
"""

from .dual_kernels import (
    dq_adjoint,
    dq_conj,
    dq_from_quat_translation,
    dq_from_transform,
    dq_inv,
    dq_left_matrix,
    dq_mul,
    dq_norm,
    dq_normalize,
    dq_right_matrix,
    dq_to_transform,
    dq_translation,
    dq_translation_body,
    dq_unit_error,
    dv_cross,
    dv_frame_change,
    dv_frame_change_inv,
)
from .quaternion_kernels import (
    q_conj,
    q_exp,
    q_from_rotation_matrix,
    q_log,
    q_mul,
    q_rotate,
    q_rotate_inv,
    q_to_rotation_matrix,
)
from .screw_kernels import (
    dq_exp,
    dq_log,
    dq_pow,
    dq_sclerp,
    dq_screw_exp,
    dq_screw_log,
)

__all__ = [
    "q_mul",
    "q_conj",
    "q_rotate",
    "q_rotate_inv",
    "q_to_rotation_matrix",
    "q_from_rotation_matrix",
    "q_exp",
    "q_log",
    "dq_mul",
    "dq_conj",
    "dq_norm",
    "dq_inv",
    "dq_normalize",
    "dq_unit_error",
    "dq_translation_body",
    "dq_translation",
    "dq_from_quat_translation",
    "dq_to_transform",
    "dq_from_transform",
    "dv_cross",
    "dv_frame_change",
    "dv_frame_change_inv",
    "dq_adjoint",
    "dq_left_matrix",
    "dq_right_matrix",
    "dq_log",
    "dq_exp",
    "dq_screw_exp",
    "dq_screw_log",
    "dq_pow",
    "dq_sclerp",
]
