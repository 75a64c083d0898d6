"""The dual-quaternion PD law (paper eq. 46), its gains, and the state controllers read.

Law, with the pose error ``e^`` and twist error ``w^_e`` of
:mod:`dqspace.control.pose_error` (both in the body frame B):

    u^ = -(k_p log e^ + k_d w^_e)                                  (P46)

``log e^ = [1/2 theta n, 1/2 r]`` and ``w^_e = [w_e, v_e]`` are in twist order
(rotation first).  The gains act per component: ``k_p = kp_rot + eps kp_trans``
and ``k_d = kd_rot + eps kd_trans``, each a diagonal (3,).  The command is a
wrench ``[f, tau]`` on B, in B coordinates, about B's origin, obtained by the
swap (``docs/conventions.md``: power ``<w^, swap(f^)> = w . tau + v . f``):

    f   = -(kp_trans * 1/2 r + kd_trans * v_e)       translational error -> force
    tau = -(kp_rot * 1/2 theta n + kd_rot * w_e)     rotational error -> torque

so ``swap(wrench) = u^``.  For a floating base, ``swap(wrench) = [tau, f]`` is
also its generalized force.  With scalar gains,
``V = 1/4 kp_rot theta^2 + 1/4 kp_trans |r|^2 + T`` (T the kinetic energy) has
``dV/dt = -kd_rot |w|^2 - kd_trans |v|^2`` while holding a fixed pose: the loop
converges and, with theta in [0, pi] (short-way sign), never unwinds.  Reading
(P46) literally as ``f^ = f + eps tau`` without the swap would push with a
force on the rotation error; with the paper's (P45) sign the damping would be
negative.  See ``docs/control.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..dq import swap
from ..multibody import check_configuration
from .pose_error import PoseError, pose_error
from .trajectories import PoseReference

__all__ = ["PDGains", "State", "PDCommand", "dual_pd", "DualPD", "dual_pd_kernel"]


def _gain(value, name, n=3):
    """A finite, non-negative gain vector (n,) from a scalar or an (n,) array."""
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number or a ({n},) array, got {value!r}") from exc
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got {a.tolist()}")
    if np.any(a < 0.0):
        raise ValueError(f"{name} must be non-negative, got {a.tolist()}")
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class PDGains:
    """Gains of the dual PD law (P46): diagonal, one 3-vector per part (scalars broadcast).

    Attributes
    ----------
    kp_rot : (3,) [N m / rad], multiplies ``1/2 theta n``: the stiffness about
        each body axis is ``kp_rot / 2`` [N m/rad]
    kp_trans : (3,) [N/m], multiplies ``1/2 r``: stiffness ``kp_trans / 2`` [N/m]
    kd_rot : (3,) [N m s / rad], multiplies the angular-velocity error
    kd_trans : (3,) [N s/m], multiplies the velocity error

    All must be finite and non-negative (``ValueError`` otherwise); positive
    for convergence.
    """

    kp_rot: np.ndarray
    kp_trans: np.ndarray
    kd_rot: np.ndarray
    kd_trans: np.ndarray

    def __post_init__(self):
        for name in ("kp_rot", "kp_trans", "kd_rot", "kd_trans"):
            object.__setattr__(self, name, _gain(getattr(self, name), name))

    @classmethod
    def from_natural_frequency(
        cls, mass: float, inertia: ArrayLike, omega_n: ArrayLike, zeta: ArrayLike = 1.0
    ) -> PDGains:
        """Gains that give each axis of a rigid body the natural frequency ``omega_n``.

        From the linearised loop ``J phi'' + kd_rot phi' + kp_rot/2 phi = 0``
        (``phi = theta n``) and ``m r'' + kd_trans r' + kp_trans/2 r = 0``:
        ``kp_rot = 2 J omega_n^2``, ``kd_rot = 2 zeta omega_n J``,
        ``kp_trans = 2 m omega_n^2``, ``kd_trans = 2 zeta omega_n m``.
        Exact for a body whose centre of mass is at its frame origin.

        Parameters
        ----------
        mass : float [kg]
        inertia : (3,) principal moments or (3, 3) inertia (its diagonal is used) [kg m^2]
        omega_n : float [rad/s], > 0
        zeta : float, damping ratio, >= 0
        """
        J = np.asarray(inertia, float)
        if J.shape == (3, 3):
            J = np.diag(J).copy()
        if J.shape != (3,) or not np.all(np.isfinite(J)) or np.any(J <= 0):
            raise ValueError(f"inertia must be positive (3,) or (3, 3), got {inertia!r}")
        if not (np.isfinite(mass) and mass > 0):
            raise ValueError(f"mass must be positive and finite, got {mass}")
        if not (np.isfinite(omega_n) and omega_n > 0):
            raise ValueError(f"omega_n must be positive and finite, got {omega_n}")
        if not (np.isfinite(zeta) and zeta >= 0):
            raise ValueError(f"zeta must be non-negative and finite, got {zeta}")
        return cls(
            kp_rot=2.0 * J * omega_n**2,
            kp_trans=2.0 * mass * omega_n**2,
            kd_rot=2.0 * zeta * omega_n * J,
            kd_trans=2.0 * zeta * omega_n * mass,
        )


@dataclass(frozen=True)
class State:
    """The state a controller reads: a multibody ``(q, v)``.

    Attributes
    ----------
    q : (nq,) configuration ``[base pose (8), joint positions]`` (for a single
        free body just its pose)
    v : (nv,) velocity ``[base body twist [w, v] (6), joint rates]``
    """

    q: np.ndarray
    v: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "q", np.asarray(self.q, float))
        object.__setattr__(self, "v", np.asarray(self.v, float))


@dataclass(frozen=True)
class PDCommand:
    """Output of :class:`DualPD`.

    Attributes
    ----------
    wrench : (6,) commanded wrench ``[f, tau]`` on the body, body coordinates,
        about the body origin [N, N m]
    error : PoseError, the pose and twist error the law acted on
    """

    wrench: np.ndarray
    error: PoseError

    @property
    def generalized_force(self) -> NDArray[np.float64]:
        """``[tau, f]`` (6,): the floating base's generalized force (the swap of the wrench)."""
        return swap(self.wrench)


def dual_pd(error: PoseError, gains: PDGains) -> NDArray[np.float64]:
    """The dual PD law (P46) as a wrench: ``[f, tau] = swap(-(k_p log e^ + k_d w^_e))``.

    Parameters
    ----------
    error : PoseError, with ``twist`` set
    gains : PDGains

    Returns
    -------
    (..., 6) ndarray, wrench ``[f, tau]`` in the body frame [N, N m]
    """
    if error.twist is None:
        raise ValueError("the PD law needs the twist error: build the PoseError with w_IB_B")
    lg, we = np.broadcast_arrays(np.asarray(error.log, float), np.asarray(error.twist, float))
    L = np.ascontiguousarray(lg.reshape(-1, 6))
    T = np.ascontiguousarray(we.reshape(-1, 6))
    out = np.empty_like(L)
    for i in range(L.shape[0]):
        dual_pd_kernel(
            gains.kp_rot, gains.kp_trans, gains.kd_rot, gains.kd_trans, L[i], T[i], out[i]
        )
    return out.reshape(lg.shape)


@njit(cache=True)
def dual_pd_kernel(kp_rot, kp_trans, kd_rot, kd_trans, e_log, e_twist, wrench):
    """The dual PD law (P46) of one error: ``wrench`` (6,) ``[f, tau]`` from ``e_log`` and
    ``e_twist`` (6,) (twist order) and the four gain vectors (3,) (:class:`PDGains`)."""
    for j in range(3):
        wrench[3 + j] = -(kp_rot[j] * e_log[j] + kd_rot[j] * e_twist[j])
        wrench[j] = -(kp_trans[j] * e_log[3 + j] + kd_trans[j] * e_twist[3 + j])


def checked_state(model, state: State) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(q, v)`` of ``state`` for the kernels of a controller on ``model``: shapes
    ``(nq,)``, ``(nv,)``, a valid configuration (unit base pose), a finite velocity;
    ValueError naming what is wrong."""
    q = np.asarray(state.q, float)
    v = np.asarray(state.v, float)
    if q.shape != (model.nq,) or v.shape != (model.nv,):
        raise ValueError(
            f"state must have q ({model.nq},) and v ({model.nv},), got {q.shape} and {v.shape}"
        )
    q = check_configuration(model, q, "state.q")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"state.v must be finite, got {v}")
    return q, np.ascontiguousarray(v)


def _root_state(state):
    q = np.asarray(state.q, float)
    v = np.asarray(state.v, float)
    if q.ndim != 1 or q.shape[0] < 8:
        raise ValueError(f"state.q must start with the body pose (8,), got shape {q.shape}")
    if v.ndim != 1 or v.shape[0] < 6:
        raise ValueError(f"state.v must start with the body twist (6,), got shape {v.shape}")
    return q[:8], v[:6]


class DualPD:
    """Pose controller of a free body (the root of a floating model) by the dual PD law (P46).

    Call shape ``controller(t, state, reference) -> PDCommand``: ``state.q[:8]``
    and ``state.v[:6]`` are the body's pose ``q^_IB`` and body twist,
    ``reference`` a :class:`~dqspace.control.trajectories.PoseReference` in the
    same frame I.  Stateless.

    Parameters
    ----------
    gains : PDGains
    """

    def __init__(self, gains: PDGains) -> None:
        if not isinstance(gains, PDGains):
            raise ValueError(f"gains must be a PDGains, got {type(gains).__name__}")
        self.gains = gains

    def __call__(self, t: float, state: State, reference: PoseReference) -> PDCommand:
        dq_IB, w_IB_B = _root_state(state)
        err = pose_error(dq_IB, reference.pose, w_IB_B, reference.twist)
        return PDCommand(wrench=dual_pd(err, self.gains), error=err)
