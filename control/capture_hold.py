"""Holding a captured target: a task-space impedance, and a base law the grapple passes on.

After a rigid grasp the servicer carries the target as its end-effector's payload, and
whatever the arm applies to the target at the grapple fixture, the *interface wrench*, is
the target's momentum rate.  Two laws keep it within limits ``(f_max, tau_max)``
(``docs/capture.md`` derives them):

* :func:`impedance_hold`: the end-effector (holding the target) is a spring and damper about
  its pose at the grasp relative to the base, in the task space: the transpose form of
  :class:`~dqspace.control.task_space.TaskSpaceController` (``tau_m = J^T swap(f^) - k_n
  v_m``), its dual PD wrench saturated at the limits (``wrench_limit``), its gains those
  that give the held target (its inertia at the fixture, diagonal in the end-effector's
  axes) the natural frequency ``omega_n`` and damping ratio ``zeta``
  (:meth:`~dqspace.control.pd.PDGains.from_natural_frequency`).
* :class:`InterfaceLimitedBase`: the base's dual PD (P46, P47: :func:`~dqspace.control.base.
  base_law_kernel`) whose command is scaled down, as a whole, so that the interface wrench
  it would cause, were the stack one rigid body at rest, stays within the limits:
  ``g = G swap(u)`` (:func:`interface_map`).  It does not decelerate the stack faster than
  the interface can pass on to the target.  A registered base law
  (:func:`~dqspace.control.flight.law.register_base_law`): it runs in the compiled tick
  with the compiled arm laws, in Python with the others.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..dq import adjoint_matrix, dq_mul, rotation_matrix_from_dq, translation_from_dq
from ..multibody import Model, Target, frame_pose, mass_matrix
from .base import BaseController, BaseLawParams, base_law_kernel
from .flight.law import register_base_law
from .pd import PDGains
from .task_space import TaskSpaceController

__all__ = [
    "held_inertia",
    "impedance_hold",
    "interface_map",
    "InterfaceLimitedBase",
    "LimitedBaseParams",
    "limited_base_law_kernel",
]


def held_inertia(target: Target, held: ArrayLike) -> tuple[float, NDArray[np.float64]]:
    """``(mass, I_E)``: the target's mass [kg] and its inertia (3, 3) [kg m^2] about the
    end-effector's origin, in its axes, the target held at ``held`` (8,), the target frame's
    pose in the end-effector's (parallel axes: ``I_c + m (|d|^2 1 - d d^T)``, ``d`` the
    CoM from the origin)."""
    R = rotation_matrix_from_dq(held)
    d = R @ target.com + translation_from_dq(held)
    J = R @ target.inertia @ R.T + target.mass * (d @ d * np.eye(3) - np.outer(d, d))
    return target.mass, J


def impedance_hold(
    model: Model,
    target: Target,
    held: ArrayLike,
    *,
    omega_n: float,
    zeta: float = 1.0,
    frame: str = "ee",
    wrench_limit: tuple[float, float] | None = None,
    null_space_damping: float = 0.0,
) -> TaskSpaceController:
    """The task-space impedance holding ``target`` (held at ``held`` (8,) in ``frame``).

    The transpose form of :class:`~dqspace.control.task_space.TaskSpaceController`: joint
    torques ``J^T swap(f^) - k_n v_m`` with ``f^`` the dual PD wrench ``-(k_p log e^ + k_d
    w^_e)`` (saturated at ``wrench_limit`` ``(f_max, tau_max)``); with the reference the
    end-effector's pose at the grasp relative to the base (zero twist) it is a spring and
    damper about that pose.  Gains: ``PDGains.from_natural_frequency(m, I_E, omega_n,
    zeta)`` with ``I_E`` the target's inertia about the end-effector (:func:`held_inertia`;
    its diagonal), so that each axis of the held target, on a base at rest and a massless
    arm, is a second-order system of natural frequency ``omega_n`` and damping ``zeta``.
    The arm's planned acceleration (fed forward to the base law) is the one with the base
    held (``held_base``).
    """
    mass, J = held_inertia(target, held)
    gains = PDGains.from_natural_frequency(mass, J, omega_n, zeta)
    return TaskSpaceController(
        model,
        gains,
        frame=frame,
        jacobian="local",
        null_space_damping=null_space_damping,
        computed_torque=False,
        wrench_limit=wrench_limit,
        held_base=True,
    )


def interface_map(
    model: Model, q: ArrayLike, target: Target, held: ArrayLike, frame: str = "ee"
) -> NDArray[np.float64]:
    """``G`` (6, 6): the interface wrench ``[tau, f]`` at the fixture, fixture axes, that a
    base generalized force ``[tau, f]`` (base axes, base origin) causes when the stack (the
    floating ``model`` holding the target as its payload, at ``q``) moves as one rigid
    body from rest.

    The stack's acceleration at the base ``a_B = M_BB^-1 u`` (``M_BB`` the mass matrix's
    base block: the locked stack's spatial inertia), the target's ``a_T = Ad(q_BT) a_B``,
    its momentum rate ``M_T a_T`` (:attr:`Target.spatial_inertia`) carried to the fixture,
    ``Ad(fixture)^-T``: ``G = Ad_F^-T M_T Ad(q_BT) M_BB^-1``.  Velocity products (the
    tumble's centripetal and gyroscopic terms) are left out.
    """
    q = np.array(q, dtype=float)
    q[:8] = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # poses relative to the base
    q_bt = dq_mul(frame_pose(model, q, frame), held)
    M_bb = mass_matrix(model, q)[:6, :6]
    A = target.spatial_inertia @ adjoint_matrix(q_bt) @ np.linalg.inv(M_bb)
    return np.linalg.solve(adjoint_matrix(target.fixture).T, A)


#: What :func:`limited_base_law_kernel` reads: the dual PD's :data:`~dqspace.control.base.
#: BaseLawParams`, the map ``G`` (6, 6) (:func:`interface_map`) and ``limits`` (2,)
#: ``(f_max [N], tau_max [N m])``.
LimitedBaseParams = namedtuple("LimitedBaseParams", [*BaseLawParams._fields, "G", "limits"])


class InterfaceLimitedBase(BaseController):
    """The base's dual PD (P46, P47) scaled to what the grapple interface passes on.

    The command ``u`` of :class:`~dqspace.control.BaseController` (wrench, feedback and
    feedforward alike) is multiplied by ``s = min(1, f_max / |g_f|, tau_max / |g_tau|)``
    with ``g = G swap(u)`` the interface wrench it would cause on a rigid stack
    (:func:`interface_map`): the stack is never decelerated faster than the interface can
    decelerate the target.  Called as the base controller protocol says.

    Parameters
    ----------
    model : Model with a FREE root (the stack: base, arm, the target as payload)
    gains : PDGains
    G : (6, 6) :func:`interface_map` of the stack
    limits : (f_max [N], tau_max [N m]), > 0
    """

    def __init__(self, model: Model, gains: PDGains, G: ArrayLike, limits: ArrayLike):
        super().__init__(model, gains)
        self.G = np.ascontiguousarray(G, dtype=float)
        self.limits = np.asarray(limits, dtype=float)
        if self.G.shape != (6, 6) or not np.all(np.isfinite(self.G)):
            raise ValueError(f"G must be a finite (6, 6) matrix, got shape {self.G.shape}")
        if self.limits.shape != (2,) or not np.all(self.limits > 0):
            raise ValueError(f"limits must be (f_max, tau_max) > 0, got {limits!r}")

    def kernel_params(self) -> LimitedBaseParams:
        """The :data:`LimitedBaseParams` of this controller."""
        return LimitedBaseParams(*super().kernel_params(), self.G, self.limits)

    def _law(self, t, q, v, reference, use_ff, acc, wrench, fb, ff, e, e_log, e_twist):
        """:func:`limited_base_law_kernel` (the base controller protocol's ``__call__`` is
        :class:`~dqspace.control.BaseController`'s)."""
        limited_base_law_kernel(
            self.kernel_params(), None, t, q, v, reference.pose, reference.twist,
            reference.acc, use_ff, acc, wrench, fb, ff, e, e_log, e_twist,
        )  # fmt: skip


@njit(cache=True)
def interface_scale(G, limits, wrench):
    """``min(1, f_max / |g_f|, tau_max / |g_tau|)`` with ``g = G swap(wrench)``."""
    u = np.empty(6)
    for j in range(3):
        u[j] = wrench[3 + j]
        u[3 + j] = wrench[j]
    g = G @ u
    tau = np.sqrt(g[0] ** 2 + g[1] ** 2 + g[2] ** 2)
    f = np.sqrt(g[3] ** 2 + g[4] ** 2 + g[5] ** 2)
    s = 1.0
    if f > limits[0]:
        s = limits[0] / f
    if tau > limits[1]:
        s = min(s, limits[1] / tau)
    return s


@njit(cache=True)
def limited_base_law_kernel(P, state, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb,
                            ff, e, e_log, e_twist):  # fmt: skip
    """:class:`InterfaceLimitedBase` as the compiled tick's base-law stage (contract:
    :func:`~dqspace.control.flight.law.register_base_law`): :func:`~dqspace.control.base.
    base_law_kernel`, then the wrench and its parts scaled by :func:`interface_scale`;
    ``state`` (None) and ``t`` unused."""
    base_law_kernel(P, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log, e_twist)
    s = interface_scale(P.G, P.limits, wrench)
    for j in range(6):
        wrench[j] *= s
        fb[j] *= s
        ff[j] *= s


register_base_law(InterfaceLimitedBase, LimitedBaseParams, limited_base_law_kernel)
