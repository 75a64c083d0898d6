"""O(n) articulated-body dynamics: forward dynamics, the mixed problem, joint wrenches.

The recursions of the SOA paper (``spatial-operator-algebra-recursive``,
section 5 eq. 80-97 and the mixed forward/inverse problem of its section 3)
written in dqspace's dual-quaternion quantities; ``docs/articulated.md``
gives the equations.  Conventions are those of :mod:`dqspace.multibody.dynamics`:
generalized forces pair with v (the floating base's share is
``[torque, force]`` in base coordinates), external wrenches ``f_ext`` are an
(nb, 6) array of ``[f, tau]`` per body, in the body frame about its origin.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy import ascontiguousarray as _contiguous
from numpy import empty as _empty
from numpy.typing import ArrayLike, NDArray

from . import _state
from . import kernels as A
from . import kernels as K
from .model import Model

__all__ = [
    "JointWrenches",
    "ForwardDynamicsResult",
    "MixedResult",
    "forward_dynamics_aba",
    "mixed_dynamics",
    "constraint_wrenches",
]

# "no external wrenches" / "no joint wrenches wanted" for the kernels (size 0: nothing to
# write; left writable so that it has the same numba type as a user's array)
_NONE = np.zeros((0, 6))
_F64 = np.dtype(np.float64)  # positional, pre-built dtype: the cheapest conversion call


@dataclass(frozen=True)
class JointWrenches:
    """The wrenches the joints transmit, each (nb, 6) ``[f, tau]`` [N, N m].

    Row k is the wrench body k's parent (the inertial frame for the root)
    exerts on body k through joint k, in body k's frame about its origin
    (which lies on the joint).

    Attributes
    ----------
    wrench : (nb, 6) the whole transmitted wrench ``f_k``
    actuation : (nb, 6) its part in the joint's motion subspace,
        ``swap(S_k S_k^T f_k^s)``: the joint torque (revolute, spherical) or
        force (prismatic) as a wrench; all of ``f_k`` for a FREE joint, zero
        for a FIXED one
    constraint : (nb, 6) the reaction ``f_k - actuation_k``: the constraint
        forces and moments of the joint, which do no work on its motion
        (``S_k^T constraint_k^s = 0``)
    tau : (nv,) the generalized joint forces ``S_k^T f_k^s``
    """

    wrench: np.ndarray
    actuation: np.ndarray
    constraint: np.ndarray
    tau: np.ndarray


@dataclass(frozen=True)
class ForwardDynamicsResult:
    """Accelerations and joint wrenches from :func:`forward_dynamics_aba`.

    Attributes
    ----------
    a : (nv,) generalized accelerations (the base's ``d/dt [w, v]`` in base coordinates)
    wrenches : :class:`JointWrenches` at these accelerations
    """

    a: np.ndarray
    wrenches: JointWrenches


@dataclass(frozen=True)
class MixedResult:
    """Solution of the mixed forward/inverse problem (:func:`mixed_dynamics`).

    Attributes
    ----------
    a : (nv,) all generalized accelerations (the prescribed ones as given)
    tau : (nv,) all generalized forces (the free ones as given; the
        prescribed ones are what the servos must supply)
    """

    a: np.ndarray
    tau: np.ndarray


def _raise_state_error(model, q, v, tau, f_ext):
    """Let the ``_state`` checks name the offending argument (one of them fails)."""
    _state.configuration(model, q)
    _state.vector(v, "v", model.nv)
    _state.vector(tau, "tau", model.nv)
    _state.wrenches(model, f_ext)
    raise ValueError("invalid q, v, tau or f_ext")  # not reached: a check above raises


#: Return code of the checked recursions for a non-finite result (after 0 = success,
#: 1 = an input fails a check, 2 = articulated inertia not positive-definite).
_OVERFLOW = 3


@njit(cache=True)
def _aba_finite(ints, reals, gravity, q, v, tau, fext, a):
    """``kernels.aba_checked``, and code 3 if the accelerations are not finite (overflow)."""
    code = A.aba_checked(ints, reals, gravity, q, v, tau, fext, a)
    return _OVERFLOW if code == 0 and not _state.all_finite(a) else code


@njit(cache=True)
def _aba_wrenches_finite(ints, reals, gravity, q, v, tau, fext, a, wrench):
    """``kernels.aba_wrenches_checked``, and code 3 if a or the wrenches are not finite."""
    code = A.aba_wrenches_checked(ints, reals, gravity, q, v, tau, fext, a, wrench)
    if code == 0 and not (_state.all_finite(a) and _state.all_finite(wrench.reshape(-1))):
        return _OVERFLOW
    return code


def _not_positive_definite(model, q, what, message):
    """The error for a failed factorisation at q: an overflow naming q if the mass matrix
    at q is not finite (a huge prismatic coordinate), else ``ValueError(message)``."""
    M = np.empty((model.nv, model.nv))
    K.crba(model._ints, model._reals, q, M)
    if not _state.all_finite(M.reshape(-1)):
        return _state.overflow_error(model, what, q=q)
    return ValueError(message)


def _split(model, wrench):
    actuation = np.empty_like(wrench)
    constraint = np.empty_like(wrench)
    tau = np.empty(model.nv)
    A.split_wrenches(model._ints, model._reals, wrench, actuation, constraint, tau)
    return JointWrenches(wrench, actuation, constraint, tau)


def forward_dynamics_aba(
    model: Model,
    q: ArrayLike,
    v: ArrayLike,
    tau: ArrayLike,
    f_ext: ArrayLike | None = None,
    *,
    return_constraint_wrenches: bool = False,
) -> NDArray[np.float64] | ForwardDynamicsResult:
    """Accelerations (nv,) of ``M(q) a + C(q, v) = tau`` by the articulated-body algorithm.

    O(n) recursion of the SOA paper, section 5 (eq. 80-95): base-to-tip
    kinematics, tip-to-base articulated inertias and bias wrenches, the base
    acceleration ``P_0^-1 (tau_0 - z_0)`` (eq. 92, with a base wrench), and
    base-to-tip accelerations.  Any tree, floating or fixed root, uniform
    gravity ``model.gravity``, external wrenches.

    Parameters
    ----------
    model : Model
    q : (nq,) configuration (base pose as a unit dual quaternion first)
    v : (nv,) velocities (the base's body twist ``[w, v]`` first) [rad/s, m/s]
    tau : (nv,) generalized forces (the base's ``[torque, force]`` first) [N m, N]
    f_ext : (nb, 6) external wrenches ``[f, tau]`` per body (body frame, about
        its origin) [N, N m], or None
    return_constraint_wrenches : bool
        Also return the joint wrenches (:class:`JointWrenches`), from
        ``f_k = P_k acc_k + z_k`` (SOA eq. 33) at no extra recursion.

    Returns
    -------
    a : (nv,) [rad/s^2, m/s^2], or a :class:`ForwardDynamicsResult` when
        ``return_constraint_wrenches`` is set

    Raises
    ------
    ValueError
        on a wrong shape, a non-finite entry or a non-unit quaternion (as
        :func:`dqspace.multibody.forward_dynamics`), if the articulated
        inertias are not positive-definite, or if finite inputs are so large that
        the result overflows (the message names the input).
    """
    try:
        qa = _contiguous(q, _F64)
        va = _contiguous(v, _F64)
        ta = _contiguous(tau, _F64)
        fa = _NONE if f_ext is None else _contiguous(f_ext, _F64)
        ok = qa.ndim == 1 and va.ndim == 1 and ta.ndim == 1 and fa.ndim == 2
        if ok and not (qa is q and va is v and ta is tau and (f_ext is None or fa is f_ext)):
            ok = _state.real_inputs(q, v, tau, f_ext)  # converted: not from strings, complex
    except (TypeError, ValueError):
        ok = False
    a = _empty(model.nv)
    if not ok:
        code = 1
    elif return_constraint_wrenches:
        wrench = np.empty((model.nb, 6))
        code = _aba_wrenches_finite(
            model._ints, model._reals, model.gravity, qa, va, ta, fa, a, wrench
        )
        if code == 0:
            return ForwardDynamicsResult(a, _split(model, wrench))
    else:
        code = _aba_finite(model._ints, model._reals, model.gravity, qa, va, ta, fa, a)
        if code == 0:
            return a
    if code == 1:
        _raise_state_error(model, q, v, tau, f_ext)
    if code == _OVERFLOW:
        raise _state.overflow_error(model, "forward_dynamics", q=qa, v=va, tau=ta, f_ext=f_ext)
    msg = "the articulated inertias are not positive-definite at this q"
    raise _not_positive_definite(model, qa, "forward_dynamics", msg)


def constraint_wrenches(
    model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, f_ext: ArrayLike | None = None
) -> JointWrenches:
    """The wrenches every joint transmits at (q, v, a), split into actuation and reaction.

    The whole wrench is the inverse-dynamics force ``f_k`` of (P23) (what
    :func:`dqspace.multibody.joint_wrenches` returns); its projection on the
    joint's motion subspace is the joint's actuator force and the rest is the
    constraint reaction (the decomposition ``F = H F_T + W F_S`` of the
    constraint-force paper, eq. 5).

    Parameters
    ----------
    model : Model
    q : (nq,), v : (nv,), a : (nv,) configuration, velocities, accelerations
    f_ext : (nb, 6) external wrenches ``[f, tau]`` per body, or None

    Returns
    -------
    JointWrenches
    """
    q = _state.configuration(model, q)
    v = _state.vector(v, "v", model.nv)
    a = _state.vector(a, "a", model.nv)
    fext = _state.wrenches(model, f_ext)
    tau = np.empty(model.nv)
    wrench = np.empty((model.nb, 6))
    K.rnea(model._ints, model._reals, model.gravity, q, v, a, fext, tau, wrench)
    _state.finite_result(model, "constraint_wrenches", (wrench,), q=q, v=v, a=a, f_ext=fext)
    return _split(model, wrench)


def _prescribed_mask(model, prescribed):
    """The (nv,) bool mask of prescribed degrees of freedom."""
    if isinstance(prescribed, (str, int, np.integer)):
        prescribed = [prescribed]
    arr = np.asarray(prescribed)
    if arr.dtype == bool:
        if arr.shape != (model.nv,):
            raise ValueError(
                f"prescribed: a bool mask is over the degrees of freedom and must have shape "
                f"(nv,) = ({model.nv},), got {arr.shape} (to select joints, give body names "
                f"or indices)"
            )
        return arr.copy()
    mask = np.zeros(model.nv, dtype=bool)
    for b in prescribed:  # body names / indices; body_index raises for unknown ones
        mask[model.v_slice(b)] = True
    return mask


def _spread(x, name, mask, n):
    """A full (n,) vector from a full (n,) one or one with an entry per True of mask."""
    if x is None:
        return np.zeros(n)
    cnt = int(mask.sum())
    a = _state.real_array(x, name)
    if a.shape == (n,):
        out = a
    elif a.shape == (cnt,):
        out = np.zeros(n)
        out[mask] = a
    else:
        raise ValueError(
            f"{name} must have shape ({n},) (all degrees of freedom) or ({cnt},) (only "
            f"the {'prescribed' if name == 'a_prescribed' else 'free'} ones), got {a.shape}"
        )
    return _state.vector(out, name, n)


def mixed_dynamics(
    model: Model,
    q: ArrayLike,
    v: ArrayLike,
    *,
    prescribed: ArrayLike,
    a_prescribed: ArrayLike | None = None,
    tau_free: ArrayLike | None = None,
    f_ext: ArrayLike | None = None,
) -> MixedResult:
    """The mixed forward/inverse problem in O(n) (SOA paper, section 3 and eq. 80-97).

    Some degrees of freedom have a prescribed motion (their accelerations are
    given and their forces unknown: servo-driven joints such as VSCMG gimbals
    and wheels, or a kinematically driven arm); the others have given forces
    and unknown accelerations (a free-floating base with zero or external
    wrench, passive joints).  One articulated-body recursion gives both
    unknowns.

    Parameters
    ----------
    model : Model
    q : (nq,), v : (nv,) configuration and velocities
    prescribed : (nv,) bool mask over the degrees of freedom (a spherical or
        FREE joint may be split), or a body name / index or a sequence of them
        (all degrees of freedom of those bodies' joints)
    a_prescribed : (nv,) or (n_prescribed,) accelerations of the prescribed
        degrees of freedom [rad/s^2, m/s^2] (full vector: other entries ignored);
        None for zeros
    tau_free : (nv,) or (n_free,) generalized forces of the free degrees of
        freedom [N m, N] (the base's ``[torque, force]``); None for zeros
    f_ext : (nb, 6) external wrenches ``[f, tau]`` per body, or None

    Returns
    -------
    MixedResult
        ``a`` (nv,) and ``tau`` (nv,), with ``M a + C = tau``.
    """
    q = _state.configuration(model, q)
    v = _state.vector(v, "v", model.nv)
    fext = _NONE if f_ext is None else _state.wrenches(model, f_ext)
    mask = _prescribed_mask(model, prescribed)
    a_in = _spread(a_prescribed, "a_prescribed", mask, model.nv)
    tau_in = _spread(tau_free, "tau_free", ~mask, model.nv)
    a = np.empty(model.nv)
    tau = np.empty(model.nv)
    ok = A.mixed(model._ints, model._reals, model.gravity, q, v, mask, a_in, tau_in, fext, a, tau)
    if not ok:
        msg = "the articulated inertias of the free joints are not positive-definite"
        raise _not_positive_definite(model, q, "mixed_dynamics", msg)
    inputs = dict(q=q, v=v, a_prescribed=a_in, tau_free=tau_in, f_ext=fext)
    _state.finite_result(model, "mixed_dynamics", (a, tau), **inputs)
    return MixedResult(a, tau)
