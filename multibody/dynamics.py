"""Inverse dynamics, mass matrix, bias forces and forward dynamics (paper eq. 17-32).

Generalized forces pair with v (power ``v^T tau``): a revolute joint's torque,
a prismatic joint's force, a spherical joint's torque (3,) in the child
frame, and for the floating base ``[torque, force]`` in base coordinates (the
swap of the wrench ``f + eps tau``).  External wrenches ``f_ext`` are an
(nb, 6) array of ``[f, tau]`` per body, in the body frame about its origin
(:func:`dqspace.multibody.external_wrenches` builds it from named frames).
"""

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from . import _kernels as K
from . import _state
from .articulated import forward_dynamics_aba

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
    return tau, force


def inverse_dynamics(model, q, v, a, f_ext=None):
    """Generalized forces ``tau = M(q) a + C(q, v)`` by the recursion (P23).

    Returns
    -------
    tau : (nv,) ; for a floating base ``tau[:6]`` is the wrench ``[torque, force]``
        (base coordinates) the base needs for the given accelerations.
    """
    if _plain_state(model, q, v, a, f_ext):
        tau = np.empty(model.nv)
        tol = _state.CONFIG_TOL
        if _id_fast(model._ints, model._reals, model.gravity, q, v, a, f_ext, tau, tol):
            return tau
    return _rnea_checked(model, q, v, a, f_ext)[0]


def joint_wrenches(model, q, v, a, f_ext=None):
    """The wrench (nb, 6) ``[f, tau]`` each joint transmits from the parent to its body.

    Expressed in the body frame, about its origin (the ``f_k`` of P23).  For the
    root it is the wrench applied by the base joint (zero for a free-floating
    base with consistent accelerations).
    """
    return _rnea_checked(model, q, v, a, f_ext)[1]


def mass_matrix(model, q):
    """Joint-space mass matrix ``M(q) = H^T Phi M^ Phi^T H`` (P31), symmetric (nv, nv)."""
    if type(q) is _ND and q.dtype is _F64 and q.shape == (model.nq,):
        M = np.empty((model.nv, model.nv))
        if _crba_fast(model._ints, model._reals, q, M, _state.CONFIG_TOL):
            return M
    q = _state.configuration(model, q)
    M = np.empty((model.nv, model.nv))
    K.crba(model._ints, model._reals, q, M)
    return M


def bias_forces(model, q, v, f_ext=None):
    """``C(q, v)`` of (P31): velocity-product, gravity and external-wrench terms, (nv,).

    Equal to ``inverse_dynamics(model, q, v, 0, f_ext)``.
    """
    return inverse_dynamics(model, q, v, np.zeros(model.nv), f_ext)


def forward_dynamics(model, q, v, tau, f_ext=None, method="aba"):
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
        tol = _state.CONFIG_TOL
        if _fd_fast(model._ints, model._reals, model.gravity, q, v, tau, f_ext, a, tol):
            return a
    q, v, tau, fext = _checked_state(model, q, v, tau, "tau", f_ext)
    a = np.empty(model.nv)
    ok = K.forward_dynamics_matrix(model._ints, model._reals, model.gravity, q, v, tau, fext, a)
    if not ok:
        raise ValueError("the mass matrix is not positive-definite at this q")
    return a


# ------------------------------------------------------------------ fast paths
# The commonest call -- float64 ndarrays of the right shapes -- is validated and
# computed in one compiled call (one dispatch instead of one per check plus the
# kernel's).  The checks are those of ``_state`` (finite values; base pose and
# joint quaternions within CONFIG_TOL of unit); whenever one fails, or the mass
# matrix is not positive-definite, the fast path declines and the general path
# runs, which raises the documented error.  They call the kernels' passes
# directly (``_rnea``, ``_crba`` on a workspace; no (nb, 6) force or zero
# wrench arrays).  Like the kernels they are cached on disk, with the kernels
# they call compiled in: numba does not notice when ``_kernels.py`` changes, so
# delete the caches (``*.nbi``, ``*.nbc``) after editing a kernel.

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


@njit(cache=True, _nrt=False)
def _finite(x):
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return False
    return True


@njit(cache=True, _nrt=False)
def _state_ok(ints, q, v, w, fext, tol):
    """q, v, w finite, fext (None or (nb, 6)) finite and q on its unit manifold."""
    if not (_finite(q) and _finite(v) and _finite(w)):
        return False
    if fext is not None:
        for k in range(fext.shape[0]):
            for j in range(6):
                if not math.isfinite(fext[k, j]):
                    return False
    err, _ = K.config_error(ints, q)
    return err <= tol


@njit(cache=True)
def _empty_if_none(fext):
    """The kernels' "no external wrenches": an (0, 6) array for None."""
    if fext is None:
        return np.empty((0, 6))
    return fext


@njit(cache=True)
def _id_fast(ints, reals, gravity, q, v, a, fext, tau, tol):
    if not _state_ok(ints, q, v, a, fext, tol):
        return False
    W = np.empty((ints.shape[0] + 1, K._RNEA_STRIDE))
    K._rnea(ints, reals, gravity, q, v, a, _empty_if_none(fext), tau, W)
    return True


@njit(cache=True)
def _crba_fast(ints, reals, q, M, tol):
    if not _finite(q):
        return False
    err, _ = K.config_error(ints, q)
    if not err <= tol:
        return False
    W = np.empty((ints.shape[0], K._CRBA_STRIDE))
    K._crba(ints, reals, q, M, W)
    return True


@njit(cache=True)
def _fd_fast(ints, reals, gravity, q, v, tau, fext, a, tol):
    if not _state_ok(ints, q, v, tau, fext, tol):
        return False
    return K.forward_dynamics_matrix(ints, reals, gravity, q, v, tau, _empty_if_none(fext), a)


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
