"""dqspace.dq: the dual-quaternion algebra.

Quaternions ``[w, x, y, z]`` (Hamilton, scalar first), dual quaternions
``[q_r, q_d]`` (8,), dual vectors ``[real, dual]`` (6,), all with leading batch
axes.  A pose of b relative to a is ``q_ba + eps 1/2 q_ba o r^b``; twists are
``w + eps v`` and wrenches ``f + eps tau``; ``frame_change`` moves both from
frame a to frame b.  See ``docs/conventions.md`` for the full conventions.

The functions here validate and broadcast; the arithmetic is written once as
compiled kernels in :mod:`dqspace.dq.kernels`, which the multibody engine
calls directly.
"""

from .._numba_cache import install as _install_kernel_cache

_install_kernel_cache()  # before any compiled function is defined (see dqspace._numba_cache)

from .algebra import (
    UNIT_TOL,
    adjoint_matrix,
    dq_conj,
    dq_exp,
    dq_identity,
    dq_inv,
    dq_left_matrix,
    dq_log,
    dq_mul,
    dq_norm,
    dq_normalize,
    dq_right_matrix,
    dq_unit_error,
    dual_cross,
    frame_change,
    frame_change_inv,
    quat_conj,
    quat_exp,
    quat_inv,
    quat_log,
    quat_mul,
    quat_norm,
    quat_normalize,
    quat_rotate,
    swap,
)
from .checks import AXIS_TOL
from .conversions import (
    axis_angle_from_quat,
    body_translation_from_dq,
    dq_from_quat,
    dq_from_quat_translation,
    dq_from_rotation_translation,
    dq_from_rpy_deg,
    dq_from_transform,
    dq_from_translation,
    quat_from_axis_angle,
    quat_from_dq,
    quat_from_rotation_matrix,
    quat_from_rpy_deg,
    rotation_matrix_from_dq,
    rotation_matrix_from_quat,
    rpy_deg_from_quat,
    transform_from_dq,
    translation_from_dq,
)
from .dualquaternion import DualQuaternion
from .screw import (
    ScrewParameters,
    dq_from_screw_parameters,
    dq_pow,
    dq_screw_exp,
    dq_screw_log,
    sclerp,
    screw_parameters,
)

__all__ = [
    "AXIS_TOL",
    "UNIT_TOL",
    "DualQuaternion",
    "ScrewParameters",
    "adjoint_matrix",
    "axis_angle_from_quat",
    "body_translation_from_dq",
    "dq_conj",
    "dq_exp",
    "dq_from_quat",
    "dq_from_quat_translation",
    "dq_from_rotation_translation",
    "dq_from_rpy_deg",
    "dq_from_screw_parameters",
    "dq_from_transform",
    "dq_from_translation",
    "dq_identity",
    "dq_inv",
    "dq_left_matrix",
    "dq_log",
    "dq_mul",
    "dq_norm",
    "dq_normalize",
    "dq_pow",
    "dq_right_matrix",
    "dq_screw_exp",
    "dq_screw_log",
    "dq_unit_error",
    "dual_cross",
    "frame_change",
    "frame_change_inv",
    "quat_conj",
    "quat_exp",
    "quat_from_axis_angle",
    "quat_from_dq",
    "quat_from_rotation_matrix",
    "quat_from_rpy_deg",
    "quat_inv",
    "quat_log",
    "quat_mul",
    "quat_norm",
    "quat_normalize",
    "quat_rotate",
    "rotation_matrix_from_dq",
    "rotation_matrix_from_quat",
    "rpy_deg_from_quat",
    "sclerp",
    "screw_parameters",
    "swap",
    "transform_from_dq",
    "translation_from_dq",
]
