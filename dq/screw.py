"""Screw motion: the group exponential and logarithm, power, screw parameters, ScLERP.

A unit dual quaternion is a screw motion ``cos(theta^/2) + sin(theta^/2) s^``
with dual angle ``theta^ = theta + eps d`` and screw axis ``s^ = l + eps m``
(direction l, moment ``m = p x l`` for a point p on the axis, in the reference
frame).  The group logarithm is ``screw_log(dq) = 1/2 theta^ s^``; it differs
from the pose logarithm :func:`dqspace.dq.dq_log` of Table 1 when rotation
and translation are coupled.
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _ufuncs as u
from .checks import as_float_array, as_scalar_array, check_unit_dq, check_unit_vector

__all__ = [
    "dq_screw_exp",
    "dq_screw_log",
    "dq_pow",
    "sclerp",
    "ScrewParameters",
    "screw_parameters",
    "dq_from_screw_parameters",
]


def dq_screw_exp(x: ArrayLike) -> NDArray[np.float64]:
    """Group exponential of the pure dual quaternion x, (..., 6) -> (..., 8).

    ``dq_screw_exp(0.5 * xi * dt)`` is the exact displacement after dt under the
    constant body twist ``xi = [w, v]`` (``d/dt dq = 1/2 dq o xi``).
    """
    return u.dq_screw_exp(as_float_array(x, "x", (6,)), u.S8)


def dq_screw_log(a: ArrayLike) -> NDArray[np.float64]:
    """Group logarithm of a unit dual quaternion, (..., 8) -> (..., 6): ``1/2 theta^ s^``.

    Principal branch: rotation angle theta in [0, 2 pi); at ``q_r = -1`` exactly
    use ``-a`` (the same pose).
    """
    a = check_unit_dq(a, "a")
    if np.any(a[..., 0] == -1.0):
        raise ValueError("a has q_r = -1 (a 2 pi rotation): its screw is undefined; use -a")
    with np.errstate(over="ignore", invalid="ignore"):  # reported below as an error
        out = u.dq_screw_log(a, u.S6)
    if not np.all(np.isfinite(out)):
        raise ValueError(
            "a is too close to a 2 pi rotation (q_r ~ -1): its screw log "
            "overflows; use -a (the same pose)"
        )
    return out


def dq_pow(a: ArrayLike, t: ArrayLike) -> NDArray[np.float64]:
    """Power ``a^t``: the screw motion of a scaled by t (any real t), (..., 8) -> (..., 8)."""
    return u.dq_pow(check_unit_dq(a, "a"), as_scalar_array(t, "t"))


def sclerp(a: ArrayLike, b: ArrayLike, t: ArrayLike) -> NDArray[np.float64]:
    """Screw linear interpolation ``a o (a* o b)^t`` between unit poses a and b.

    Takes the shorter screw (``a* o b`` and its negative are the same pose; the
    one with non-negative scalar part is used).  ``t`` = 0 gives a, 1 gives b
    (up to sign); t broadcasts against the leading axes.
    """
    return u.dq_sclerp(check_unit_dq(a, "a"), check_unit_dq(b, "b"), as_scalar_array(t, "t"))


@dataclass(frozen=True)
class ScrewParameters:
    """Screw parameters of a unit dual quaternion (arrays with the leading shape).

    Attributes
    ----------
    theta : (...) rotation angle about the axis [rad], in [0, 2 pi)
    d : (...) translation along the axis [m]
    l : (..., 3) unit axis direction (for a pure translation, its direction;
        for the identity, x)
    m : (..., 3) moment of the axis ``p x l`` [m]
    """

    theta: np.ndarray
    d: np.ndarray
    l: np.ndarray
    m: np.ndarray


def screw_parameters(
    a: ArrayLike,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Screw parameters (theta, d, l, m) of unit dual quaternions (..., 8)."""
    x = dq_screw_log(a)
    xr, xd = x[..., :3], x[..., 3:]
    half = np.linalg.norm(xr, axis=-1)
    theta = 2.0 * half
    rot = half > 1e-12
    tr = np.linalg.norm(xd, axis=-1)
    safe_half = np.where(rot, half, 1.0)
    l_rot = xr / safe_half[..., None]
    # pure translation: axis along the translation (identity: x)
    l_tr = np.where((tr > 0)[..., None], xd / np.where(tr > 0, tr, 1.0)[..., None], [1.0, 0, 0])
    l_ = np.where(rot[..., None], l_rot, l_tr)
    d = 2.0 * np.einsum("...i,...i->...", xd, l_)
    m = np.where(
        rot[..., None],
        (2.0 * xd - d[..., None] * l_) / np.where(rot, theta, 1.0)[..., None],
        0.0,
    )
    return ScrewParameters(theta=theta, d=d, l=l_, m=m)


def dq_from_screw_parameters(
    theta: ArrayLike, d: ArrayLike, l: ArrayLike, m: ArrayLike
) -> NDArray[np.float64]:
    """Unit dual quaternion of a screw motion (inverse of :func:`screw_parameters`).

    Parameters
    ----------
    theta : (...) rotation angle [rad]
    d : (...) translation along the axis [m]
    l : (..., 3) unit axis direction (length within :data:`~dqspace.dq.checks.AXIS_TOL` of 1)
    m : (..., 3) axis moment [m], orthogonal to l
    """
    theta = as_scalar_array(theta, "theta")
    d = as_scalar_array(d, "d")
    l = check_unit_vector(as_float_array(l, "l", (3,)), "l", normalize=False)
    m = as_float_array(m, "m", (3,))
    x = np.concatenate(
        [0.5 * theta[..., None] * l, 0.5 * (d[..., None] * l + theta[..., None] * m)], axis=-1
    )
    return u.dq_screw_exp(x, u.S8)
