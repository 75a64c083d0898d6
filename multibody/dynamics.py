"""Inverse dynamics, mass matrix, bias forces and forward dynamics (paper eq. 17-32).

Generalized forces pair with v (power ``v^T tau``): a revolute joint's torque,
a prismatic joint's force, a spherical joint's torque (3,) in the child
frame, and for the floating base ``[torque, force]`` in base coordinates (the
swap of the wrench ``f + eps tau``).  External wrenches ``f_ext`` are an
(nb, 6) array of ``[f, tau]`` per body, in the body frame about its origin
(:func:`dqspace.multibody.external_wrenches` builds it from named frames).
"""

from dataclasses import dataclass

import numpy as np

from . import _kernels as K
from . import _state

__all__ = [
    "inverse_dynamics",
    "joint_wrenches",
    "mass_matrix",
    "bias_forces",
    "forward_dynamics",
    "FreeFloatingResult",
    "free_floating_inverse_dynamics",
]


def inverse_dynamics(model, q, v, a, f_ext=None):
    """Generalized forces ``tau = M(q) a + C(q, v)`` by the recursion (P23).

    Returns
    -------
    tau : (nv,) ; for a floating base ``tau[:6]`` is the wrench ``[torque, force]``
        (base coordinates) the base needs for the given accelerations.
    """
    q = _state.configuration(model, q)
    v = _state.vector(v, "v", model.nv)
    a = _state.vector(a, "a", model.nv)
    fext = _state.wrenches(model, f_ext)
    tau = np.empty(model.nv)
    force = np.empty((model.nb, 6))
    K.rnea(model._ints, model._reals, model.gravity, q, v, a, fext, tau, force)
    return tau


def joint_wrenches(model, q, v, a, f_ext=None):
    """The wrench (nb, 6) ``[f, tau]`` each joint transmits from the parent to its body.

    Expressed in the body frame, about its origin (the ``f_k`` of P23).  For the
    root it is the wrench applied by the base joint (zero for a free-floating
    base with consistent accelerations).
    """
    q = _state.configuration(model, q)
    v = _state.vector(v, "v", model.nv)
    a = _state.vector(a, "a", model.nv)
    fext = _state.wrenches(model, f_ext)
    tau = np.empty(model.nv)
    force = np.empty((model.nb, 6))
    K.rnea(model._ints, model._reals, model.gravity, q, v, a, fext, tau, force)
    return force


def mass_matrix(model, q):
    """Joint-space mass matrix ``M(q) = H^T Phi M^ Phi^T H`` (P31), symmetric (nv, nv)."""
    q = _state.configuration(model, q)
    M = np.empty((model.nv, model.nv))
    K.crba(model._ints, model._reals, q, M)
    return M


def bias_forces(model, q, v, f_ext=None):
    """``C(q, v)`` of (P31): velocity-product, gravity and external-wrench terms, (nv,).

    Equal to ``inverse_dynamics(model, q, v, 0, f_ext)``.
    """
    return inverse_dynamics(model, q, v, np.zeros(model.nv), f_ext)


def forward_dynamics(model, q, v, tau, f_ext=None, method="matrix"):
    """Accelerations (nv,) from ``M(q) a + C(q, v) = tau`` (P32).

    Parameters
    ----------
    method : {"matrix"}
        ``"matrix"``: the paper's matrix form, solved by Cholesky.
    """
    q = _state.configuration(model, q)
    v = _state.vector(v, "v", model.nv)
    tau = _state.vector(tau, "tau", model.nv)
    fext = _state.wrenches(model, f_ext)
    a = np.empty(model.nv)
    if method == "matrix":
        ok = K.forward_dynamics_matrix(model._ints, model._reals, model.gravity, q, v, tau, fext, a)
    else:
        raise ValueError(f"method must be 'matrix', got {method!r}")
    if not ok:
        raise ValueError("the mass matrix is not positive-definite at this q")
    return a


@dataclass(frozen=True)
class FreeFloatingResult:
    """Solution of the free-floating problem.

    Attributes
    ----------
    base_acc : (6,) base acceleration d/dt [w, v] (base coordinates)
    tau : (nv - 6,) joint forces that produce the given joint accelerations
    a : (nv,) the full acceleration vector ``[base_acc, a_joints]``
    """

    base_acc: np.ndarray
    tau: np.ndarray
    a: np.ndarray


def free_floating_inverse_dynamics(model, q, v, a_joints, f_ext=None):
    """Joint accelerations given, base wrench zero: base acceleration and joint forces.

    Solves ``M_bb a_b = -(M_bm a_m + C_b)`` for the base (its generalized force is
    zero: no thrusters, only ``f_ext``), then the joint forces by the recursion.
    """
    if not model.floating:
        raise ValueError("free_floating_inverse_dynamics needs a floating-base model")
    a_joints = _state.vector(a_joints, "a_joints", model.nv - 6)
    a = np.concatenate([np.zeros(6), a_joints])
    tau0 = inverse_dynamics(model, q, v, a, f_ext)  # base row: M_bm a_m + C_b
    M = mass_matrix(model, q)
    a[:6] = -np.linalg.solve(M[:6, :6], tau0[:6])
    tau = inverse_dynamics(model, q, v, a, f_ext)
    return FreeFloatingResult(base_acc=a[:6].copy(), tau=tau[6:], a=a)
