"""Capture of a free target: the grasp as an impact, and the combined model after it.

* :func:`attach_target` returns a new :class:`~dqspace.multibody.Model`: the servicer's
  bodies, plus the target as a body fixed (``FIXED`` joint) to one of its links, with the
  target's fixture frame; the servicer's q and v keep their layout (a fixed joint adds no
  coordinate), so the servicer's state is the combined system's state.
* :func:`grasp_impact` resolves the contact at the grasp instant by the impulse-momentum
  equations of servicer and target, for a rigid (perfectly plastic) grasp or a restitution
  coefficient ``e`` acting on the six components of the relative twist at the fixture.

The derivation, the conventions and what the model leaves out are in ``docs/capture.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..dq import (
    UNIT_TOL,
    adjoint_matrix,
    dq_conj,
    dq_identity,
    dq_mul,
    dq_normalize,
    dq_unit_error,
    swap,
    translation_from_dq,
)
from . import _state
from .dynamics import mass_matrix
from .kinematics import forward_kinematics, frame_jacobian, frame_target, kinetic_energy
from .model import Body, Frame, Joint, JointType, Model
from .target import Target

__all__ = ["GraspImpact", "attach_target", "grasp_impact", "grasp_misalignment"]


def attach_target(
    model: Model,
    target: Target,
    frame: str | int = "ee",
    offset: ArrayLike | None = None,
) -> Model:
    """The servicer ``model`` holding ``target`` rigidly, as a new model (``model`` unchanged).

    The target becomes a body named ``target.name``, child of the link that carries
    ``frame`` (a named frame or a body), joined by a ``FIXED`` joint placed so that the
    target's fixture sits at ``offset`` (8,) in ``frame`` (default identity: fixture and
    ``frame`` coincident); the target's fixture frame ``target.fixture_frame`` is added.
    The combined model's q and v are the servicer's (same length and layout).

    Raises
    ------
    ValueError
        if ``model`` already has a body or a frame of the target's names, or ``frame`` is
        unknown.
    """
    link, place = _grasp_frame(model, frame)
    offset = dq_identity() if offset is None else _pose(offset, "offset")
    # pose of the target's body frame in the link's frame: link -> frame -> fixture -> target
    placement = dq_mul(dq_mul(place, offset), dq_conj(target.fixture))
    return _attach(model, target, link, placement)


def _attach(model, target, link, placement):
    """``model`` with ``target`` fixed to body ``link`` at ``placement`` (8,) in its frame."""
    if target.name in model.body_names:
        raise ValueError(f"the servicer already has a body named {target.name!r} (the target's)")
    if target.fixture_frame in {f.name for f in model.frames}:
        raise ValueError(f"the servicer already has a frame named {target.fixture_frame!r}")
    body = Body(
        target.name,
        link,
        Joint(JointType.FIXED, placement=placement, name=target.name),
        target.mass,
        target.com,
        target.inertia,
    )
    return model.with_bodies([body], [Frame(target.fixture_frame, target.name, target.fixture)])


def grasp_misalignment(
    model: Model,
    q: ArrayLike,
    target: Target,
    target_pose: ArrayLike,
    frame: str | int = "ee",
    offset: ArrayLike | None = None,
) -> tuple[float, float]:
    """How far the fixture is from its grasp pose: ``(distance [m], angle [rad])``.

    The pose of the target's fixture relative to ``frame`` (composed with ``offset``, default
    identity) at the servicer configuration ``q`` and the target pose ``target_pose`` (8,);
    ``(0, 0)`` when they coincide.
    """
    return _misalignment(_fixture_in_frame(model, q, target, target_pose, frame, offset)[1])


def _misalignment(err):
    """``(|r|, angle)`` of a unit dual quaternion: translation [m], rotation angle [rad]."""
    angle = 2.0 * float(np.arctan2(np.linalg.norm(err[1:4]), abs(err[0])))
    return float(np.linalg.norm(translation_from_dq(err))), angle


def _fixture_in_frame(model, q, target, target_pose, frame, offset):
    """(link index, pose of the fixture relative to ``frame o offset``, link pose in I)."""
    link, place = _grasp_frame(model, frame)
    offset = dq_identity() if offset is None else _pose(offset, "offset")
    pose = _state.configuration(target.model, target_pose, "target_pose")
    link_pose = forward_kinematics(model, q).pose[link]
    nominal = dq_mul(link_pose, dq_mul(place, offset))
    return link, dq_mul(dq_conj(nominal), dq_mul(pose, target.fixture)), link_pose, pose


@dataclass(frozen=True)
class GraspImpact:
    """The result of :func:`grasp_impact`.

    Attributes
    ----------
    model : Model, the combined model (:func:`attach_target`) with the target held where it
        is at the grasp instant
    q : (nq,) the combined model's configuration (the servicer's q)
    v : (nv,) the combined model's velocity after the impact; for a restitution ``e > 0``
        the bodies separate and ``v`` is None (use ``servicer_v`` and ``target_twist``)
    servicer_v : (nv,) the servicer's velocity after the impact
    target_twist : (6,) the target's body twist ``[w, v]`` after the impact
    impulse : (6,) the impulse ``[f, tau]`` [N s, N m s] the servicer applies to the target
        at the fixture origin, in the fixture's axes (the servicer receives its opposite)
    relative_twist_before, relative_twist_after : (6,) twist ``[w, v]`` of the fixture
        relative to the servicer's grasp frame, in the fixture's axes, before and after
        (``after = -e before``)
    energy_lost : float [J], kinetic energy dissipated by the impact, ``>= 0``
    """

    model: Model
    q: np.ndarray
    v: np.ndarray | None
    servicer_v: np.ndarray
    target_twist: np.ndarray
    impulse: np.ndarray
    relative_twist_before: np.ndarray
    relative_twist_after: np.ndarray
    energy_lost: float


def grasp_impact(
    model: Model,
    q: ArrayLike,
    v: ArrayLike,
    target: Target,
    target_pose: ArrayLike,
    target_twist: ArrayLike,
    *,
    frame: str | int = "ee",
    offset: ArrayLike | None = None,
    restitution: float = 0.0,
    tol: float | None = 1e-6,
) -> GraspImpact:
    """The velocities just after the servicer grasps the target (an impact).

    Parameters
    ----------
    model : Model, the servicer (any tree; a floating base conserves momentum)
    q, v : (nq,), (nv,) the servicer's state at the grasp instant
    target : Target
    target_pose : (8,) the target's pose q^_{I,T}; target_twist : (6,) its body twist
    frame : the servicer's grasping frame (named frame or body), default ``"ee"``
    offset : (8,) the fixture's nominal pose in ``frame`` at grasp (default identity)
    restitution : float e in [0, 1]; the relative twist at the fixture after the impact is
        ``-e`` times the one before, all six components (0: rigid grasp, perfectly plastic)
    tol : float or None; a ValueError if the fixture is farther than ``tol`` [m] or
        ``tol`` [rad] from its nominal pose (None: no check).  Either way the combined
        model holds the target where it actually is, so the equations are exact.

    Returns
    -------
    GraspImpact
    """
    e = _restitution(restitution)
    q = _state.configuration(model, q)
    v = _state.vector(v, "v", model.nv)
    xi = _state.vector(target_twist, "target_twist", 6)
    link, rel, link_pose, pose = _fixture_in_frame(model, q, target, target_pose, frame, offset)
    if tol is not None:
        if isinstance(tol, (str, bytes, bool, np.bool_)) or not float(tol) >= 0.0:
            raise ValueError(f"tol must be a non-negative number or None, got {tol!r}")
        dist, angle = _misalignment(rel)
        if not (dist <= tol and angle <= tol):
            raise ValueError(
                f"grasp: the fixture is {dist:.3g} m and {angle:.3g} rad from its grasp pose in "
                f"frame {frame!r} (tol {tol:g}); bring them together or pass a larger tol"
            )
    # (normalized: the poses are unit to the configuration tolerance, a placement to 1e-9)
    combined = _attach(model, target, link, dq_normalize(dq_mul(dq_conj(link_pose), pose)))
    # the servicer's grasp frame: fixed to the link, at the fixture's pose now; in the
    # combined model the fixture frame is exactly that (its body is fixed to the link)
    J_s = frame_jacobian(combined, q, target.fixture_frame)  # (6, nv), fixture axes
    J_t = adjoint_matrix(target.fixture)  # target twist -> fixture twist
    M_t = target.spatial_inertia
    # the impulse-momentum equations with G = [-J_s, J_t] (docs/capture.md): the jump
    # M^-1 G^T lam, lam from the 6x6 W = G M^-1 G^T (the interface's inverse inertia)
    Ms_Js = np.linalg.solve(mass_matrix(model, q), J_s.T)  # M_s^-1 J_s^T (nv, 6)
    Mt_Jt = np.linalg.solve(M_t, J_t.T)
    W = J_s @ Ms_Js + J_t @ Mt_Jt
    g_before = J_t @ xi - J_s @ v
    target_g = -e * g_before
    lam = np.zeros(6)  # [torque, force] on the target, power-conjugate to [w, v]
    v_after, xi_after, g_after = v, xi, g_before
    for _ in range(2):  # a solve, then one refinement step on the residual
        dlam = np.linalg.solve(W, target_g - g_after)
        lam = lam + dlam
        v_after = v_after - Ms_Js @ dlam
        xi_after = xi_after + Mt_Jt @ dlam
        g_after = J_t @ xi_after - J_s @ v_after
    T_before = kinetic_energy(model, q, v) + kinetic_energy(target.model, pose, xi)
    T_after = kinetic_energy(model, q, v_after) + kinetic_energy(target.model, pose, xi_after)
    return GraspImpact(
        model=combined,
        q=q.copy(),
        v=v_after.copy() if e == 0.0 else None,
        servicer_v=v_after,
        target_twist=xi_after,
        impulse=swap(lam),
        relative_twist_before=g_before,
        relative_twist_after=g_after,
        energy_lost=float(T_before - T_after),
    )


def _grasp_frame(model, frame):
    """(link, placement) of the grasping frame, or a ValueError naming the known ones."""
    frames = [f.name for f in model.frames]
    if isinstance(frame, str) and frame not in frames and frame not in model.body_names:
        raise ValueError(
            f"the servicer has no frame or body named {frame!r}; frames: {frames}, "
            f"bodies: {list(model.body_names)}"
        )
    return frame_target(model, frame)


def _pose(x, name):
    """A unit dual quaternion (8,), or a ValueError naming it."""
    x = _state.vector(x, name, 8)
    err = dq_unit_error(x)
    if not err <= UNIT_TOL:
        raise ValueError(f"{name} is not a unit dual quaternion (unit error {err:.3g})")
    return x


def _restitution(e):
    if isinstance(e, (str, bytes, bool, np.bool_)):
        raise ValueError(f"restitution must be a number in [0, 1], got {e!r}")
    try:
        e = float(e)
    except (TypeError, ValueError):
        raise ValueError(f"restitution must be a number in [0, 1], got {e!r}") from None
    if not 0.0 <= e <= 1.0:
        raise ValueError(f"restitution must be in [0, 1], got {e}")
    return e
