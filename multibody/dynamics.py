"""Inverse dynamics, mass matrix, bias forces and forward dynamics (paper eq. 17-32).

Generalized forces pair with v (power ``v^T tau``): a revolute joint's torque,
a prismatic joint's force, a spherical joint's torque (3,) in the child
frame, and for the floating base ``[torque, force]`` in base coordinates (the
swap of the wrench ``f + eps tau``).  External wrenches ``f_ext`` are an
(nb, 6) array of ``[f, tau]`` per body, in the body frame about its origin
(:func:`dqspace.multibody.external_wrenches` builds it from named frames).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from . import _state
from . import kernels as K
from .articulated import _NONE, _not_positive_definite, forward_dynamics_aba
from .kernels.articulated import _inputs_ok
from .kernels.mass_matrix import _crba
from .kernels.newton_euler import _rnea
from .model import Model

__all__ = [
    "inverse_dynamics",
    "joint_wrenches",
    "mass_matrix",
    "bias_forces",
    "forward_dynamics",
    "FreeFloatingResult",
    "free_floating_inverse_dynamics",
]


def _checked_state(model, q, v, x, name, f_ext):
    """``(q, v, x, fext)`` through the checks of ``_state``; x (nv,) is ``a`` or ``tau``."""
    return (
        _state.configuration(model, q),
        _state.vector(v, "v", model.nv),
        _state.vector(x, name, model.nv),
        _state.wrenches(model, f_ext),
    )


def _rnea_checked(model, q, v, a, f_ext):
    """``(tau, force)`` of the recursion (P23) on checked inputs: (nv,) and (nb, 6)."""
    q, v, a, fext = _checked_state(model, q, v, a, "a", f_ext)
    tau = np.empty(model.nv)
    force = np.empty((model.nb, 6))
    K.rnea(model._ints, model._reals, model.gravity, q, v, a, fext, tau, force)
    _state.finite_result(model, "inverse dynamics", (tau, force), q=q, v=v, a=a, f_ext=fext)
    return tau, force


def inverse_dynamics(
    model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, f_ext: ArrayLike | None = None
) -> NDArray[np.float64]:
    """Generalized forces ``tau = M(q) a + C(q, v)`` by the recursion (P23).

    Returns
    -------
    tau : (nv,) ; for a floating base ``tau[:6]`` is the wrench ``[torque, force]``
        (base coordinates) the base needs for the given accelerations.
    """
    if _plain_state(model, q, v, a, f_ext):
        tau = np.empty(model.nv)
        fext = _NONE if f_ext is None else f_ext
        if _id_fast(model._ints, model._reals, model.gravity, q, v, a, fext, tau):
            return tau
    return _rnea_checked(model, q, v, a, f_ext)[0]


def joint_wrenches(
    model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, f_ext: ArrayLike | None = None
) -> NDArray[np.float64]:
    """The wrench (nb, 6) ``[f, tau]`` each joint transmits from the parent to its body.

    Expressed in the body frame, about its origin (the ``f_k`` of P23).  For the
    root it is the wrench applied by the base joint (zero for a free-floating
    base with consistent accelerations).
    """
    return _rnea_checked(model, q, v, a, f_ext)[1]


def mass_matrix(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """Joint-space mass matrix ``M(q) = H^T Phi M^ Phi^T H`` (P31), symmetric (nv, nv)."""
    if type(q) is _ND and q.dtype is _F64 and q.shape == (model.nq,):
        M = np.empty((model.nv, model.nv))
        if _crba_fast(model._ints, model._reals, q, M, _state.CONFIG_TOL):
            return M
    q = _state.configuration(model, q)
    M = np.empty((model.nv, model.nv))
    K.crba(model._ints, model._reals, q, M)
    _state.finite_result(model, "mass_matrix", (M,), q=q)
    return M


def bias_forces(
    model: Model, q: ArrayLike, v: ArrayLike, f_ext: ArrayLike | None = None
) -> NDArray[np.float64]:
    """``C(q, v)`` of (P31): velocity-product, gravity and external-wrench terms, (nv,).

    Equal to ``inverse_dynamics(model, q, v, 0, f_ext)``.
    """
    return inverse_dynamics(model, q, v, np.zeros(model.nv), f_ext)


def forward_dynamics(
    model: Model,
    q: ArrayLike,
    v: ArrayLike,
    tau: ArrayLike,
    f_ext: ArrayLike | None = None,
    method: str = "aba",
) -> NDArray[np.float64]:
    """Accelerations (nv,) from ``M(q) a + C(q, v) = tau`` (P32).

    Parameters
    ----------
    method : {"aba", "matrix"}
        ``"aba"`` (default): the O(n) articulated-body recursion
        (:func:`dqspace.multibody.forward_dynamics_aba`); ``"matrix"``: the
        paper's matrix form (P32), ``M`` by composite inertias and a Cholesky
        solve, O(n^3).  They agree to ~1e-13 (tests); ABA is faster from about
        three bodies on.
    """
    if method == "aba":  # first: the default's path is one comparison long
        return forward_dynamics_aba(model, q, v, tau, f_ext)
    if method != "matrix":
        raise ValueError(f"method must be 'aba' or 'matrix', got {method!r}")
    if _plain_state(model, q, v, tau, f_ext):
        a = np.empty(model.nv)
        fext = _NONE if f_ext is None else f_ext
        if _fd_fast(model._ints, model._reals, model.gravity, q, v, tau, fext, a):
            return a
    q, v, tau, fext = _checked_state(model, q, v, tau, "tau", f_ext)
    a = np.empty(model.nv)
    ok = K.forward_dynamics_matrix(model._ints, model._reals, model.gravity, q, v, tau, fext, a)
    if not ok:
        msg = "the mass matrix is not positive-definite at this q"
        raise _not_positive_definite(model, q, "forward_dynamics", msg)
    _state.finite_result(model, "forward_dynamics", (a,), q=q, v=v, tau=tau, f_ext=fext)
    return a


# ------------------------------------------------------------------ fast paths
# The commonest call -- float64 ndarrays of the right shapes -- is validated and
# computed in one compiled call (one dispatch instead of one per check plus the
# kernel's).  The input checks are ``kernels.articulated._inputs_ok``, the compiled twin of
# ``_state``'s (sizes, finite values; base pose and joint quaternions within
# CONFIG_TOL of unit), shared with the articulated-body path; whenever one fails,
# the mass matrix is not positive-definite or the result is not finite (finite
# inputs so large that the arithmetic overflows), the fast path declines and the
# general path runs, which raises the documented error.  They call the kernels'
# passes directly (``_rnea``, ``_crba`` on a workspace; no (nb, 6) force array).
# Like the kernels they are cached on disk, with the kernels they call compiled
# in (dqspace clears the caches when any of its sources changes).

_ND = np.ndarray
_F64 = np.dtype(np.float64)


def _plain_state(model, q, v, w, f_ext):
    """True when q, v, w (and f_ext unless None) are float64 ndarrays of the model's shapes."""
    nv = (model.nv,)
    return (
        type(q) is _ND
        and type(v) is _ND
        and type(w) is _ND
        and q.dtype is _F64
        and v.dtype is _F64
        and w.dtype is _F64
        and q.shape == (model.nq,)
        and v.shape == nv
        and w.shape == nv
        and (
            f_ext is None
            or (type(f_ext) is _ND and f_ext.dtype is _F64 and f_ext.shape == (model.nb, 6))
        )
    )


@njit(cache=True)
def _id_fast(ints, reals, gravity, q, v, a, fext, tau):
    if not _inputs_ok(ints, q, v, a, fext, tau):
        return False
    W = np.empty((ints.shape[0] + 1, K.RNEA_WIDTH))
    _rnea(ints, reals, gravity, q, v, a, fext, tau, W)
    return _state.all_finite(tau)


@njit(cache=True)
def _crba_fast(ints, reals, q, M, tol):
    if not _state.all_finite(q):
        return False
    err, _ = K.config_error(ints, q)
    if not err <= tol:
        return False
    W = np.empty((ints.shape[0], K.CRBA_WIDTH))
    _crba(ints, reals, q, M, W)
    return _state.all_finite(M.reshape(-1))


@njit(cache=True)
def _fd_fast(ints, reals, gravity, q, v, tau, fext, a):
    if not _inputs_ok(ints, q, v, tau, fext, a):
        return False
    ok = K.forward_dynamics_matrix(ints, reals, gravity, q, v, tau, fext, a)
    return ok and _state.all_finite(a)


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


def free_floating_inverse_dynamics(
    model: Model, q: ArrayLike, v: ArrayLike, a_joints: ArrayLike, f_ext: ArrayLike | None = None
) -> FreeFloatingResult:
    """Joint accelerations given, base wrench zero: base acceleration and joint forces.

    Solves ``M_bb a_b = -(M_bm a_m + C_b)`` for the base (its generalized force is
    zero: no thrusters, only ``f_ext``), then the joint forces by the recursion.
    """
    if not model.floating:
        raise ValueError("free_floating_inverse_dynamics needs a floating-base model")
    q = _state.configuration(model, q)
    v = _state.vector(v, "v", model.nv)
    a_joints = _state.vector(a_joints, "a_joints", model.nv - 6)
    fext = _state.wrenches(model, f_ext)
    args = (model._ints, model._reals, model.gravity)
    a = np.concatenate([np.zeros(6), a_joints])
    tau = np.empty(model.nv)
    force = np.empty((model.nb, 6))
    K.rnea(*args, q, v, a, fext, tau, force)  # base row: M_bm a_m + C_b
    M = np.empty((model.nv, model.nv))
    K.crba(model._ints, model._reals, q, M)
    what = "free_floating_inverse_dynamics"
    inputs = dict(q=q, v=v, a_joints=a_joints, f_ext=fext)
    _state.finite_result(model, what, (tau, M), **inputs)
    a[:6] = -np.linalg.solve(M[:6, :6], tau[:6])
    K.rnea(*args, q, v, a, fext, tau, force)
    _state.finite_result(model, what, (a, tau), **inputs)
    return FreeFloatingResult(base_acc=a[:6].copy(), tau=tau[6:], a=a)
