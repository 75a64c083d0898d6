"""Conversions between dual quaternions and other pose representations.

Names read ``<to>_from_<from>``.  A pose of frame b relative to frame a is
``dq = q_ba + eps 1/2 r^a o q_ba``: ``q_ba`` maps b coordinates to a
coordinates and ``r^a`` is the position of b's origin in a.  The homogeneous
transform of the same pose is ``T = [[R(q_ba), r^a], [0, 1]]``.  Quaternions
returned from matrices have a non-negative scalar part.
"""

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _ufuncs as u
from .checks import (
    as_float_array,
    as_scalar_array,
    check_rotation_matrix,
    check_unit_dq,
    check_unit_quat,
)

__all__ = [
    "dq_from_quat_translation",
    "dq_from_quat",
    "dq_from_translation",
    "quat_from_dq",
    "translation_from_dq",
    "body_translation_from_dq",
    "rotation_matrix_from_quat",
    "quat_from_rotation_matrix",
    "rotation_matrix_from_dq",
    "dq_from_rotation_translation",
    "transform_from_dq",
    "dq_from_transform",
    "quat_from_axis_angle",
    "axis_angle_from_quat",
    "quat_from_rpy_deg",
    "rpy_deg_from_quat",
    "dq_from_rpy_deg",
]


def dq_from_quat_translation(q: ArrayLike, r: ArrayLike) -> NDArray[np.float64]:
    """Pose from a unit quaternion q_ba (..., 4) and the position r^a (..., 3) of b in a."""
    return u.dq_from_quat_translation(check_unit_quat(q, "q"), as_float_array(r, "r", (3,)), u.S8)


def dq_from_quat(q: ArrayLike) -> NDArray[np.float64]:
    """Pure rotation ``q + eps 0`` from a unit quaternion (..., 4)."""
    q = check_unit_quat(q, "q")
    return np.concatenate([q, np.zeros_like(q)], axis=-1)


def dq_from_translation(r: ArrayLike) -> NDArray[np.float64]:
    """Pure translation ``1 + eps 1/2 r`` from a position (..., 3)."""
    r = as_float_array(r, "r", (3,))
    out = np.zeros((*r.shape[:-1], 8))
    out[..., 0] = 1.0
    out[..., 5:] = 0.5 * r
    return out


def quat_from_dq(dq: ArrayLike) -> NDArray[np.float64]:
    """Rotation part q_ba (..., 4) of a unit dual quaternion."""
    return check_unit_dq(dq, "dq")[..., :4].copy()


def translation_from_dq(dq: ArrayLike) -> NDArray[np.float64]:
    """Position r^a = 2 q_d o q_r* (..., 3) of b's origin, in the reference frame a."""
    return u.dq_translation(check_unit_dq(dq, "dq"), u.S3)


def body_translation_from_dq(dq: ArrayLike) -> NDArray[np.float64]:
    """Position r^b = 2 q_r* o q_d (..., 3) of b's origin relative to a, in the moving frame b."""
    return u.dq_translation_body(check_unit_dq(dq, "dq"), u.S3)


def rotation_matrix_from_quat(q: ArrayLike) -> NDArray[np.float64]:
    """Rotation matrix (..., 3, 3) of unit quaternions: ``R v = q o v o q*``."""
    return u.q_to_rotation_matrix(check_unit_quat(q, "q"), u.S33)


def quat_from_rotation_matrix(R: ArrayLike) -> NDArray[np.float64]:
    """Unit quaternion (..., 4), scalar part >= 0, of rotation matrices (..., 3, 3)."""
    return u.q_from_rotation_matrix(check_rotation_matrix(R, "R"), u.S4)


def rotation_matrix_from_dq(dq: ArrayLike) -> NDArray[np.float64]:
    """Rotation matrix (..., 3, 3) of the real part of unit dual quaternions."""
    return u.q_to_rotation_matrix(check_unit_dq(dq, "dq")[..., :4], u.S33)


def dq_from_rotation_translation(R: ArrayLike, r: ArrayLike) -> NDArray[np.float64]:
    """Pose from a rotation matrix (..., 3, 3) and a position r^a (..., 3)."""
    q = u.q_from_rotation_matrix(check_rotation_matrix(R, "R"), u.S4)
    return u.dq_from_quat_translation(q, as_float_array(r, "r", (3,)), u.S8)


def transform_from_dq(dq: ArrayLike) -> NDArray[np.float64]:
    """Homogeneous transform (..., 4, 4) of unit dual quaternions."""
    return u.dq_to_transform(check_unit_dq(dq, "dq"), u.S44)


def dq_from_transform(T: ArrayLike) -> NDArray[np.float64]:
    """Unit dual quaternion (..., 8) of homogeneous transforms (..., 4, 4)."""
    T = as_float_array(T, "T", (4, 4))
    check_rotation_matrix(T[..., :3, :3], "T[..., :3, :3]")
    last = T[..., 3, :]
    if np.any(np.abs(last - [0.0, 0.0, 0.0, 1.0]) > 1e-12):
        raise ValueError(f"T must have last row [0, 0, 0, 1], got {last}")
    return u.dq_from_transform(T, u.S8)


def quat_from_axis_angle(axis: ArrayLike, angle: ArrayLike) -> NDArray[np.float64]:
    """Unit quaternion of a rotation by ``angle`` [rad] about ``axis`` (normalised here).

    Parameters
    ----------
    axis : (..., 3) array_like, non-zero
    angle : (...) array_like [rad]
    """
    axis = as_float_array(axis, "axis", (3,))
    angle = as_scalar_array(angle, "angle")
    n = np.linalg.norm(axis, axis=-1, keepdims=True)
    if np.any(n == 0.0):
        raise ValueError("axis must be non-zero")
    h = 0.5 * angle[..., None]
    return np.concatenate([np.cos(h), np.sin(h) * axis / n], axis=-1)


def axis_angle_from_quat(q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Axis (..., 3) and angle (...) in [0, 2 pi] of unit quaternions (identity: axis x)."""
    v = u.q_log(check_unit_quat(q, "q"), u.S3)
    half = np.linalg.norm(v, axis=-1)
    safe = np.where(half > 0.0, half, 1.0)
    axis = np.where((half > 0.0)[..., None], v / safe[..., None], [1.0, 0.0, 0.0])
    return axis, 2.0 * half


def _axis_quats(angle_rad, k):
    h = 0.5 * angle_rad
    q = np.zeros((*np.shape(h), 4))
    q[..., 0] = np.cos(h)
    q[..., 1 + k] = np.sin(h)
    return q


def quat_from_rpy_deg(rpy_deg: ArrayLike) -> NDArray[np.float64]:
    """Unit quaternion from roll, pitch, yaw in degrees (..., 3).

    Fixed-axis x-y-z convention of URDF and ROS: ``R = Rz(yaw) Ry(pitch) Rx(roll)``.
    """
    rpy = np.radians(as_float_array(rpy_deg, "rpy_deg", (3,)))
    qx = _axis_quats(rpy[..., 0], 0)
    qy = _axis_quats(rpy[..., 1], 1)
    qz = _axis_quats(rpy[..., 2], 2)
    return u.q_mul(qz, u.q_mul(qy, qx))


def rpy_deg_from_quat(q: ArrayLike) -> NDArray[np.float64]:
    """Roll, pitch, yaw in degrees (..., 3) of unit quaternions.

    The inverse of :func:`quat_from_rpy_deg`.

    Pitch lies in [-90, 90]; at pitch = +-90 (gimbal lock) roll is reported as 0.
    """
    R = u.q_to_rotation_matrix(check_unit_quat(q, "q"), u.S33)
    pitch = np.arcsin(np.clip(-R[..., 2, 0], -1.0, 1.0))
    lock = np.abs(R[..., 2, 0]) > 1.0 - 1e-12
    roll = np.where(lock, 0.0, np.arctan2(R[..., 2, 1], R[..., 2, 2]))
    yaw = np.where(
        lock,
        np.arctan2(-R[..., 0, 1], R[..., 1, 1]),
        np.arctan2(R[..., 1, 0], R[..., 0, 0]),
    )
    return np.degrees(np.stack([roll, pitch, yaw], axis=-1))


def dq_from_rpy_deg(
    rpy_deg: ArrayLike, translation: ArrayLike = (0.0, 0.0, 0.0)
) -> NDArray[np.float64]:
    """Pose from roll-pitch-yaw in degrees (..., 3) and a position r^a (..., 3) [m]."""
    q = quat_from_rpy_deg(rpy_deg)
    return u.dq_from_quat_translation(q, as_float_array(translation, "translation", (3,)), u.S8)
