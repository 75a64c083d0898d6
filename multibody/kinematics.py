"""Forward kinematics, frame Jacobians, centre of mass, momentum and energy.

Public functions take ``(model, q, v, ...)`` arrays, validate them (see
:mod:`dqspace.multibody._state`) and call the compiled recursions of
:mod:`dqspace.multibody.kernels`.  Body quantities are in body coordinates:
poses ``q^_{I,k}`` (8,), twists ``[w, v]`` and accelerations (6,) of each body
frame relative to the inertial frame I, expressed in the body frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import (
    dq_mul,
    frame_change,
    frame_change_inv,
    rotation_matrix_from_dq,
)
from . import _state
from . import kernels as K
from .dynamics import mass_matrix
from .model import Model

__all__ = [
    "Reference",
    "Kinematics",
    "forward_kinematics",
    "frame_pose",
    "frame_twist",
    "frame_jacobian",
    "floating_base_jacobians",
    "generalized_jacobian",
    "center_of_mass",
    "Momentum",
    "momentum",
    "kinetic_energy",
    "external_wrenches",
]


class Reference(Enum):
    """Where a twist or Jacobian is expressed (Pinocchio's ``ReferenceFrame``).

    LOCAL: at the frame origin, in the frame's axes.
    WORLD: at the inertial origin, in inertial axes (the spatial twist).
    LOCAL_WORLD_ALIGNED: at the frame origin, in inertial axes.
    """

    LOCAL = "local"
    WORLD = "world"
    LOCAL_WORLD_ALIGNED = "local_world_aligned"


@dataclass(frozen=True)
class Kinematics:
    """Result of :func:`forward_kinematics` (arrays indexed by body, then by named frame).

    Attributes
    ----------
    pose : (nb, 8) unit dual quaternions q^_{I,k}
    twist : (nb, 6) body twists [w, v] in body coordinates, or None
    acc : (nb, 6) body accelerations d/dt [w, v] (body-frame derivatives), or None
    frame_pose, frame_twist, frame_acc : the same for the model's named frames
    """

    pose: np.ndarray
    twist: np.ndarray | None
    acc: np.ndarray | None
    frame_pose: np.ndarray
    frame_twist: np.ndarray | None
    frame_acc: np.ndarray | None


_NO_ACC = np.empty((0, 6))


def forward_kinematics(
    model: Model, q: ArrayLike, v: ArrayLike | None = None, a: ArrayLike | None = None
) -> Kinematics:
    """Poses, twists and accelerations of every body and named frame (P12, P16).

    Parameters
    ----------
    model : Model
    q : (nq,) configuration
    v : (nv,) velocity, optional
    a : (nv,) acceleration, optional (needs v)

    Returns
    -------
    Kinematics
    """
    q = _state.configuration(model, q)
    nb = model.nb
    rel = np.empty((nb, 8))
    pose = np.empty((nb, 8))
    K.poses(model._ints, model._reals, q, rel, pose)
    twist = acc = None
    if a is not None and v is None:
        raise ValueError("accelerations need the velocity v as well")
    if v is not None:
        v = _state.vector(v, "v", model.nv)
        twist = np.empty((nb, 6))
        if a is not None:
            a = _state.vector(a, "a", model.nv)
            acc = np.empty((nb, 6))
        # the forward pass of the dynamics without gravity; acc (0, 6): twists only, a unread
        K.body_motions(
            model._ints, model._reals, q, v, v if a is None else a, twist,
            _NO_ACC if acc is None else acc,
        )  # fmt: skip
    fb, fp = model.frame_body, model.frame_placement
    f_pose = dq_mul(pose[fb], fp) if len(fb) else np.empty((0, 8))
    f_twist = frame_change(fp, twist[fb]) if twist is not None and len(fb) else None
    f_acc = frame_change(fp, acc[fb]) if acc is not None and len(fb) else None
    return Kinematics(pose, twist, acc, f_pose, f_twist, f_acc)


def frame_target(model: Model, frame: str | int) -> tuple[bool, int]:
    """(body index, placement) of a named frame or a body (name or index)."""
    if isinstance(frame, str) and frame in {f.name for f in model.frames}:
        i = model.frame_index(frame)
        return int(model.frame_body[i]), model.frame_placement[i]
    return model.body_index(frame), np.array([1.0, 0, 0, 0, 0, 0, 0, 0])


def frame_pose(model: Model, q: ArrayLike, frame: str | int) -> NDArray[np.float64]:
    """Pose q^_{I,F} (8,) of a named frame or body F."""
    body, place = frame_target(model, frame)
    kin = forward_kinematics(model, q)
    return dq_mul(kin.pose[body], place)


def _express(pose_F, x_local, reference):
    if reference is Reference.LOCAL:
        return x_local
    if reference is Reference.WORLD:
        return (
            frame_change_inv(pose_F, x_local.T).T
            if x_local.ndim == 2
            else frame_change_inv(pose_F, x_local)
        )
    R = rotation_matrix_from_dq(pose_F)
    if x_local.ndim == 2:
        return np.vstack([R @ x_local[:3], R @ x_local[3:]])
    return np.concatenate([R @ x_local[:3], R @ x_local[3:]])


def frame_twist(
    model: Model,
    q: ArrayLike,
    v: ArrayLike,
    frame: str | int,
    reference: Reference = Reference.LOCAL,
) -> NDArray[np.float64]:
    """Twist [w, v] (6,) of a named frame or body F relative to the inertial frame.

    ``reference`` chooses where it is expressed (see :class:`Reference`).
    """
    body, place = frame_target(model, frame)
    kin = forward_kinematics(model, q, v)
    pose_F = dq_mul(kin.pose[body], place)
    return _express(pose_F, frame_change(place, kin.twist[body]), Reference(reference))


def frame_jacobian(
    model: Model, q: ArrayLike, frame: str | int, reference: Reference = Reference.LOCAL
) -> NDArray[np.float64]:
    """Geometric Jacobian (6, nv) of a named frame or body: ``twist_F = J v``.

    Rows are ``[w, v]``; ``reference`` chooses where the twist is expressed.
    """
    q = _state.configuration(model, q)
    body, place = frame_target(model, frame)
    rel = np.empty((model.nb, 8))
    pose = np.empty((model.nb, 8))
    K.poses(model._ints, model._reals, q, rel, pose)
    J = np.empty((6, model.nv))
    K.frame_jacobian(model._ints, model._reals, pose, body, np.ascontiguousarray(place), J)
    return _express(dq_mul(pose[body], place), J, Reference(reference))


def _require_floating(model):
    if not model.floating:
        raise ValueError("this function needs a floating-base model (root joint FREE)")


def floating_base_jacobians(
    model: Model, q: ArrayLike, frame: str | int, reference: Reference = Reference.LOCAL
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """SpaceDyn's split ``twist_F = J_b v_base + J_m qdot`` (its eq. 16).

    Returns
    -------
    J_b : (6, 6), the columns of the base twist [w, v] (base coordinates)
    J_m : (6, nv - 6), the columns of the joint rates
    """
    _require_floating(model)
    J = frame_jacobian(model, q, frame, reference)
    return J[:, :6], J[:, 6:]


def generalized_jacobian(
    model: Model, q: ArrayLike, frame: str | int, reference: Reference = Reference.LOCAL
) -> NDArray[np.float64]:
    """Generalized Jacobian of a free-floating system at zero momentum (6, nv - 6).

    With no external force and zero initial momentum, the base moves so that
    ``M_bb v_b + M_bm qdot = 0``; the frame's twist is then ``J* qdot`` with
    ``J* = J_m - J_b M_bb^-1 M_bm``.
    """
    J_b, J_m = floating_base_jacobians(model, q, frame, reference)
    M = mass_matrix(model, q)
    return J_m - J_b @ np.linalg.solve(M[:6, :6], M[:6, 6:])


def center_of_mass(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """System centre of mass in the inertial frame (3,) [m] (the compiled kernel
    :func:`~dqspace.multibody.kernels.center_of_mass`)."""
    q = _state.configuration(model, q)
    out = np.empty(3)
    K.center_of_mass(model._ints, model._reals, q, out)
    _state.finite_result(model, "center_of_mass", (out,), q=q)
    return out


@dataclass(frozen=True)
class Momentum:
    """Linear momentum (3,) [kg m/s] and angular momentum (3,) [kg m^2/s] about ``point``,
    both in inertial coordinates."""

    linear: np.ndarray
    angular: np.ndarray
    point: np.ndarray


def momentum(
    model: Model, q: ArrayLike, v: ArrayLike, point: ArrayLike = (0.0, 0.0, 0.0)
) -> Momentum:
    """System linear and angular momentum in the inertial frame, angular about ``point`` [m]."""
    q = _state.configuration(model, q)
    v = _state.vector(v, "v", model.nv)
    point = _state.vector(point, "point", 3)
    out = np.empty(6)
    K.system_momentum(model._ints, model._reals, q, v, out)
    _state.finite_result(model, "momentum", (out,), q=q, v=v)
    p, h_O = out[:3], out[3:]
    return Momentum(p, h_O - np.cross(point, p), point)


def kinetic_energy(model: Model, q: ArrayLike, v: ArrayLike) -> float:
    """Kinetic energy ``1/2 sum_k <w_k, (M^_k w_k)^s>`` [J]."""
    q = _state.configuration(model, q)
    v = _state.vector(v, "v", model.nv)
    T = np.array([K.kinetic_energy(model._ints, model._reals, q, v)])
    _state.finite_result(model, "kinetic_energy", (T,), q=q, v=v)
    return float(T[0])


def external_wrenches(
    model: Model, q: ArrayLike, wrenches: ArrayLike, expressed_in: Reference = Reference.LOCAL
) -> NDArray[np.float64]:
    """Build the (nb, 6) ``f_ext`` array from wrenches on named frames or bodies.

    Parameters
    ----------
    wrenches : dict {frame or body name/index: (6,) [f, tau]}
        Each wrench acts at the frame origin; with ``Reference.LOCAL`` its
        components are in the frame's axes, with ``LOCAL_WORLD_ALIGNED`` in
        inertial axes, with ``WORLD`` it is about the inertial origin in
        inertial axes.
    """
    reference = Reference(expressed_in)
    f = np.zeros((model.nb, 6))
    kin = forward_kinematics(model, q) if reference is not Reference.LOCAL else None
    for target, w in wrenches.items():
        w = _state.vector(w, f"wrench on {target!r}", 6)
        body, place = frame_target(model, target)
        if reference is Reference.LOCAL:
            w_F = w
        else:
            pose_F = dq_mul(kin.pose[body], place)
            if reference is Reference.WORLD:
                w_F = frame_change(pose_F, w)
            else:
                R = rotation_matrix_from_dq(pose_F)
                w_F = np.concatenate([R.T @ w[:3], R.T @ w[3:]])
        f[body] += frame_change_inv(place, w_F)
    return f
