"""Dual-quaternion pose and twist errors (paper eq. 43-45, with the frame change done right).

Frames: I the reference frame (inertial for a base, the base frame for an
end-effector), B the controlled body frame, D the desired frame.

* Pose error (P43): ``e^ = q^_ID* o q^_IB = q^_DB``, the pose of B relative to
  D.  ``e^`` and ``-e^`` are the same pose; the one with a non-negative scalar
  part is taken (when the scalar part is exactly zero, a half turn, the one
  whose first non-zero vector component is positive), so its rotation angle
  is in [0, pi] and a controller built on it turns the short way (no
  unwinding), and ``-q^`` or ``-q^_d`` give the same error.
* Its logarithm (Table 1): ``log e^ = 1/2 theta n + eps 1/2 r^B_DB``, half the
  rotation vector of B relative to D and half the position of B's origin
  relative to D's origin, in B coordinates (:func:`dqspace.dq.dq_log`).
* Twist error: ``w^_e = w^_IB^B - frame_change(e^, w^_ID^D)``: the body twist
  minus the desired twist carried from D into B, i.e. the twist of B relative
  to D in B coordinates, so that ``d/dt e^ = 1/2 e^ o w^_e`` exactly.  The paper's
  (P45) ``w^_d - w^`` omits the frame change and has the opposite sign.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..dq import dq_conj, dq_log, dq_mul, frame_change
from ..dq import kernels as D
from ..dq.checks import as_float_array, check_unit_dq

__all__ = [
    "PoseError",
    "dq_error",
    "twist_error",
    "pose_error",
    "shortest_sign",
    "pose_error_kernel",
    "short_way_kernel",
]


def shortest_sign(dq: ArrayLike) -> NDArray[np.float64]:
    """The sign representative of unit dual quaternions with a non-negative scalar part.

    ``dq`` and ``-dq`` are the same pose.  The result has ``dq[..., 0] > 0``, or
    at a half turn (``dq[..., 0] == 0``) its first non-zero component among
    ``dq[..., 1:4]`` positive, so the choice is unique.

    Parameters
    ----------
    dq : (..., 8) array_like

    Returns
    -------
    (..., 8) ndarray
    """
    out = np.array(dq, dtype=float)  # a copy, C-contiguous
    for row in out.reshape(-1, 8):
        short_way_kernel(row)
    return out


def dq_error(dq_IB: ArrayLike, dq_ID: ArrayLike) -> NDArray[np.float64]:
    """Pose error ``e^ = q^_ID* o q^_IB`` (P43) with the short-way sign.

    Parameters
    ----------
    dq_IB : (..., 8) array_like, actual pose of the body B
    dq_ID : (..., 8) array_like, desired pose D

    Returns
    -------
    (..., 8) ndarray, ``q^_DB`` with a non-negative scalar part (:func:`shortest_sign`)
    """
    dq_IB = check_unit_dq(dq_IB, "dq_IB")
    dq_ID = check_unit_dq(dq_ID, "dq_ID")
    return shortest_sign(dq_mul(dq_conj(dq_ID), dq_IB))


def twist_error(dq_DB: ArrayLike, w_IB_B: ArrayLike, w_ID_D: ArrayLike) -> NDArray[np.float64]:
    """Twist error ``w^_e = w^_IB^B - frame_change(q^_DB, w^_ID^D)`` in B coordinates.

    Parameters
    ----------
    dq_DB : (..., 8) array_like, pose error (pose of B relative to D)
    w_IB_B : (..., 6) array_like, body twist ``[w, v]`` of B in B [rad/s, m/s]
    w_ID_D : (..., 6) array_like, desired body twist of D in D [rad/s, m/s]

    Returns
    -------
    (..., 6) ndarray, the twist of B relative to D in B coordinates
    """
    w_IB_B = as_float_array(w_IB_B, "w_IB_B", (6,))
    w_ID_D = as_float_array(w_ID_D, "w_ID_D", (6,))
    return w_IB_B - frame_change(check_unit_dq(dq_DB, "dq_DB"), w_ID_D)


@dataclass(frozen=True)
class PoseError:
    """Pose and twist error of a body B with respect to a desired frame D.

    Attributes
    ----------
    dq : (..., 8) ``e^ = q^_DB`` with a non-negative scalar part (P43)
    log : (..., 6) ``log e^ = [1/2 theta n, 1/2 r^B_DB]`` [rad, m] (Table 1)
    twist : (..., 6) or None, ``w^_e`` = twist of B relative to D in B, ``[w, v]`` [rad/s, m/s]
    """

    dq: np.ndarray
    log: np.ndarray
    twist: np.ndarray | None = None

    @property
    def angle(self) -> NDArray[np.float64]:
        """Rotation angle theta of the error [rad], in [0, pi]."""
        return 2.0 * np.linalg.norm(self.log[..., :3], axis=-1)

    @property
    def distance(self) -> NDArray[np.float64]:
        """Distance between the origins of B and D [m]."""
        return 2.0 * np.linalg.norm(self.log[..., 3:], axis=-1)


def pose_error(
    dq_IB: ArrayLike,
    dq_ID: ArrayLike,
    w_IB_B: ArrayLike | None = None,
    w_ID_D: ArrayLike | None = None,
) -> PoseError:
    """Pose error (P43-P44), its Table-1 logarithm and, given the body twist, the twist error.

    Parameters
    ----------
    dq_IB : (..., 8) array_like, actual pose of B in I
    dq_ID : (..., 8) array_like, desired pose D in I
    w_IB_B : (..., 6) array_like, optional, body twist of B in B [rad/s, m/s]
    w_ID_D : (..., 6) array_like, optional, desired twist of D in D (zero if omitted)

    Returns
    -------
    PoseError (``twist`` is None when ``w_IB_B`` is None)
    """
    e = dq_error(dq_IB, dq_ID)
    twist = None
    if w_IB_B is not None:
        w_d = np.zeros(6) if w_ID_D is None else w_ID_D
        twist = twist_error(e, w_IB_B, w_d)
    elif w_ID_D is not None:
        raise ValueError("w_ID_D was given without the body twist w_IB_B")
    return PoseError(dq=e, log=dq_log(e), twist=twist)


@njit(cache=True)
def pose_error_kernel(dq_IB, dq_ID, w_IB_B, w_ID_D, e, e_log, e_twist):
    """:func:`pose_error` of one pose, compiled (trusts its inputs): writes ``e`` (8,) (the
    short-way ``q^_ID* o q^_IB``), ``e_log`` (6,) and ``e_twist`` (6,) ``w_IB_B -
    frame_change(e, w_ID_D)``.  The same dual-quaternion kernels as the public functions."""
    c = np.empty(8)
    D.dq_conj(dq_ID, c)
    D.dq_mul(c, dq_IB, e)
    short_way_kernel(e)
    D.dq_log(e, e_log)
    D.dv_frame_change(e, w_ID_D, e_twist)
    for j in range(6):
        e_twist[j] = w_IB_B[j] - e_twist[j]


@njit(cache=True)
def short_way_kernel(e):
    """:func:`shortest_sign` of one dual quaternion (8,), in place, compiled."""
    flip = e[0] < 0.0
    if e[0] == 0.0:  # half turn: the first non-zero vector component positive
        for j in range(1, 4):
            if e[j] != 0.0:
                flip = e[j] < 0.0
                break
    if flip:
        for j in range(8):
            e[j] = -e[j]
