"""Centre-of-mass hold: a base law whose translational objective is the system's centre
of mass, with the base attitude (``base_controller.translation = "com"``).

The dual PD of :mod:`dqspace.control.base` holds the base *origin*: when the arm moves, the
base recoils (its reaction, an internal force of the system) and the thrusters push it back,
spending propellant on motion that leaves the whole system where it was.  This law holds
what an internal force cannot move, the system's centre of mass ``c`` (base, arm and the
momentum devices locked in the base, inertial frame), and the base attitude; the base
origin then moves with the arm (``docs/control.md``, "Centre-of-mass hold").

Law, in base axes (``R`` the base attitude, ``B`` its origin):

    wrench   = [f, tau] = swap(-(k_p l + k_d w)) + wrench_ff
    l        = [1/2 theta n,  1/2 R^T (c - c_ref)]       (log-like error)
    w        = [w_e,          R^T (c' - c'_ref)]          (rate error)

``1/2 theta n`` and ``w_e`` are the base's attitude error and angular rate error (the
rotational halves of the base's pose and twist errors, :mod:`.pose_error`); ``c' = p / m``
the centre of mass's velocity from the system's linear momentum ``p`` (m the total mass).
The half on the position keeps the meaning of ``kp_trans`` (P46 acts on ``1/2 r``).

**The reference.**  ``c_ref(t) = r_D + R_D d0``: the point at the offset ``d0`` (base axes)
from the base reference pose ``D`` (``com_offset``; the scenario builder takes the centre of
mass of the starting configuration, base and arm, in base axes).  For a held base reference
``c_ref`` is the centre of mass where the run starts (with the base on its reference); a
base slew carries it round with the reference.  With the reference's body twist ``[w_D,
v_D]`` and its derivative ``[a_w, a_v]`` (D axes)::

    c'_ref  = R_D (v_D + w_D x d0)
    c''_ref = R_D (a_v + a_w x d0 + w_D x (v_D + w_D x d0))

**The feedforward** (``arm_acc`` given).  Internal forces cancel in the sum over the
bodies: the total external force moves the centre of mass, ``m c'' = R f + m g``.  The force
that gives ``c'' = c''_ref`` is therefore ``f_ff = m R^T (c''_ref - g)`` -- zero for a held
reference in free space, whatever the arm does.  The arm's reaction force is not
commanded.  The torque must still hold the attitude while the arm moves *and* the base
translates freely: with the inverse dynamics ``[tau_0, f_0] = ID(q, v, [a_w,b, 0; acc])_b``
(the reference's angular acceleration carried into base axes, zero linear acceleration of
the base, the arm's planned joint accelerations ``acc``) and the locked inertia of the
whole system at the base ``[[J_O, m [c_b]x], [-m [c_b]x, m I]]`` (``c_b = R^T (c - r_B)``),
the linear acceleration that makes the force ``f_ff`` is ``a = (f_ff - f_0) / m`` and the
torque it needs

    tau_ff = tau_0 + c_b x (f_ff - f_0)

(the extra linear acceleration of the whole system acts through its centre of mass).
``wrench_ff = [f_ff, tau_ff]``.  With perfect knowledge, no disturbance and the centre of
mass on its (held) reference the commanded force is zero to rounding while the base moves.

The feedforward is not the arm's reaction: the tick records the arm's reaction from the
inverse dynamics (:func:`~dqspace.control.base.reaction_kernel`) as without feedforward
(``register_base_law(..., feedforward_is_reaction=False)``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..dq.kernels import dq_translation, dv_frame_change, q_rotate, q_rotate_inv
from ..multibody import Model
from ..multibody.kernels import center_of_mass, system_momentum
from ._checks import finite_vector
from .base import BaseController, BaseLawParams, reaction_kernel
from .flight.law import register_base_law
from .pd import PDGains, State, checked_state, dual_pd_kernel
from .pose_error import pose_error_kernel
from .trajectories import PoseReference

__all__ = [
    "CoMHoldController",
    "CoMLawParams",
    "com_offset",
    "com_errors",
    "com_state_kernel",
    "com_reference_kernel",
    "com_base_law_kernel",
]

#: What the compiled centre-of-mass hold reads: the fields of
#: :data:`~dqspace.control.base.BaseLawParams` and the centre of mass's offset from the
#: base reference ``com_offset`` (3,) [m] (base axes).
CoMLawParams = namedtuple("CoMLawParams", [*BaseLawParams._fields, "com_offset"])


class CoMHoldController(BaseController):
    """Centre-of-mass hold with the base attitude (module docstring).

    Call ``base(t, state, reference, *, arm_acc=None) -> BaseCommand`` as
    :class:`~dqspace.control.BaseController`: ``reference`` the base pose reference (its
    attitude is held; its position, through ``com_offset``, places the centre of mass's
    reference).  ``BaseCommand.error`` is the *base's* pose error (what the base does);
    :meth:`com` and :meth:`com_reference` give the centre of mass and its reference.
    Stateless.

    Parameters
    ----------
    model : Model with a FREE root (the controller model)
    gains : PDGains (``kp_trans``, ``kd_trans`` act on the centre of mass)
    com_offset : (3,) the centre of mass's reference relative to the base reference pose,
        base axes [m]; :meth:`from_configuration` takes it from a configuration
    """

    #: The feedforward is not the arm's reaction (the tick computes the reaction apart).
    feedforward_is_reaction = False

    def __init__(self, model: Model, gains: PDGains, com_offset: ArrayLike) -> None:
        super().__init__(model, gains)
        self.com_offset = finite_vector(com_offset, "com_offset", 3)
        self.com_offset.setflags(write=False)

    @classmethod
    def from_configuration(cls, model: Model, gains: PDGains, q: ArrayLike) -> CoMHoldController:
        """The law holding the centre of mass at its place relative to the base in the
        configuration ``q`` (nq,) (e.g. where the run starts): ``com_offset = R^T (c(q) -
        r_B)``."""
        return cls(model, gains, com_offset(model, q))

    def kernel_params(self) -> CoMLawParams:
        """The :data:`CoMLawParams` of this controller (for the kernels)."""
        return CoMLawParams(*super().kernel_params(), self.com_offset)

    def com(self, state: State) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(c, c')`` (3,) each: the system's centre of mass [m] and its velocity [m/s]
        (linear momentum / total mass), inertial frame (:func:`com_state_kernel`)."""
        q, v = self._state(state)
        c, c_dot = np.empty(3), np.empty(3)
        ints, reals = self.model.packed
        com_state_kernel(ints, reals, q, v, c, c_dot)
        return c, c_dot

    def com_reference(
        self, reference: PoseReference
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(c_ref, c'_ref, c''_ref)`` (3,) each, inertial frame: the centre of mass's
        reference for the base reference ``reference`` (:func:`com_reference_kernel`)."""
        out = np.empty((3, 3))
        com_reference_kernel(
            np.ascontiguousarray(reference.pose, dtype=float),
            np.ascontiguousarray(reference.twist, dtype=float),
            np.ascontiguousarray(reference.acc, dtype=float), self.com_offset, out[0], out[1],
            out[2],
        )  # fmt: skip
        return out[0], out[1], out[2]

    def _law(self, t, q, v, reference, use_ff, acc, wrench, fb, ff, e, e_log, e_twist):
        """:func:`com_base_law_kernel` (the base controller protocol's ``__call__`` is
        :class:`~dqspace.control.BaseController`'s)."""
        com_base_law_kernel(
            self.kernel_params(), None, t, q, v, reference.pose, reference.twist,
            reference.acc, use_ff, acc, wrench, fb, ff, e, e_log, e_twist,
        )  # fmt: skip


def com_offset(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """The system's centre of mass relative to the base in the configuration ``q`` (nq,),
    base axes (3,) [m]: ``R^T (c(q) - r_B)``."""
    q, _ = checked_state(model, State(q, np.zeros(model.nv)))
    c = np.empty(3)
    ints, reals = model.packed
    center_of_mass(ints, reals, q, c)
    r, d = np.empty(3), np.empty(3)
    dq_translation(q[:8], r)
    q_rotate_inv(q[:4], c - r, d)
    return d


def com_errors(
    model: Model, q0: ArrayLike, Q: ArrayLike, base_ref: ArrayLike
) -> NDArray[np.float64]:
    """The system's centre of mass minus its reference at each row, inertial frame (m, 3)
    [m]: ``Q`` (m, nq) configurations of ``model``, ``base_ref`` (m, >= 20) the base
    reference's pose (8), twist, acceleration (6) per row; the reference is the point at
    the centre of mass's offset in ``q0`` (:func:`com_offset`) from the base reference
    (:func:`com_reference_kernel`), what the centre-of-mass hold holds."""
    d0 = com_offset(model, q0)
    Q = np.ascontiguousarray(Q, dtype=float)
    ref = np.ascontiguousarray(base_ref, dtype=float)
    out = np.empty((Q.shape[0], 3))
    c, c_ref, dummy = np.empty(3), np.empty(3), np.empty(3)
    ints, reals = model.packed
    for k in range(Q.shape[0]):
        center_of_mass(ints, reals, Q[k], c)
        com_reference_kernel(ref[k, :8], ref[k, 8:14], ref[k, 14:20], d0, c_ref, dummy, dummy)
        out[k] = c - c_ref
    return out


@njit(cache=True)
def com_state_kernel(ints, reals, q, v, c, c_dot):
    """The system's centre of mass ``c`` (3,) (:func:`~dqspace.multibody.kernels.
    center_of_mass`) and its velocity ``c_dot`` (3,), the linear momentum
    (:func:`~dqspace.multibody.kernels.system_momentum`) over the total mass, inertial
    frame; returns the total mass [kg]."""
    m = center_of_mass(ints, reals, q, c)
    h = np.empty(6)
    system_momentum(ints, reals, q, v, h)
    for j in range(3):
        c_dot[j] = h[j] / m
    return m


@njit(cache=True)
def com_reference_kernel(pose, twist, acc, d0, c, c_dot, c_acc):
    """The centre of mass's reference (module docstring) for the base reference ``pose``
    (8,), its body twist ``twist`` and acceleration ``acc`` (6,) (D axes) and the offset
    ``d0`` (3,) (base axes): position ``c``, velocity ``c_dot``, acceleration ``c_acc`` (3,)
    (inertial)."""
    w0, w1, w2 = twist[0], twist[1], twist[2]
    u = np.empty(3)  # v_D + w_D x d0
    u[0] = twist[3] + w1 * d0[2] - w2 * d0[1]
    u[1] = twist[4] + w2 * d0[0] - w0 * d0[2]
    u[2] = twist[5] + w0 * d0[1] - w1 * d0[0]
    s = np.empty(3)  # a_v + a_w x d0 + w_D x u
    s[0] = acc[3] + acc[1] * d0[2] - acc[2] * d0[1] + w1 * u[2] - w2 * u[1]
    s[1] = acc[4] + acc[2] * d0[0] - acc[0] * d0[2] + w2 * u[0] - w0 * u[2]
    s[2] = acc[5] + acc[0] * d0[1] - acc[1] * d0[0] + w0 * u[1] - w1 * u[0]
    r, rd = np.empty(3), np.empty(3)
    dq_translation(pose, r)
    q_rotate(pose[:4], d0, rd)
    for j in range(3):
        c[j] = r[j] + rd[j]
    q_rotate(pose[:4], u, c_dot)
    q_rotate(pose[:4], s, c_acc)


@njit(cache=True)
def com_base_law_kernel(P, state, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e,
                        e_log, e_twist):  # fmt: skip
    """The centre-of-mass hold (module docstring) as the compiled tick's base-law stage
    (contract: :func:`~dqspace.control.flight.law.register_base_law`; ``state`` (None) and
    ``t`` unused).  ``e``, ``e_log``, ``e_twist`` are the *base's* pose and twist errors (the
    recorded base error); the PD acts on their rotational halves and on the centre of mass's
    error in base axes."""
    pose_error_kernel(q[:8], pose, v[:6], twist, e, e_log, e_twist)
    c, c_dot = np.empty(3), np.empty(3)
    m = com_state_kernel(P.ints, P.reals, q, v, c, c_dot)
    c_ref, c_ref_dot, c_ref_acc = np.empty(3), np.empty(3), np.empty(3)
    com_reference_kernel(pose, twist, acc, P.com_offset, c_ref, c_ref_dot, c_ref_acc)
    el, et, x, y = np.empty(6), np.empty(6), np.empty(3), np.empty(3)
    for j in range(3):
        el[j] = e_log[j]
        et[j] = e_twist[j]
        x[j] = c[j] - c_ref[j]
    q_rotate_inv(q[:4], x, y)
    for j in range(3):
        el[3 + j] = 0.5 * y[j]
        x[j] = c_dot[j] - c_ref_dot[j]
    q_rotate_inv(q[:4], x, y)
    for j in range(3):
        et[3 + j] = y[j]
    dual_pd_kernel(P.kp_rot, P.kp_trans, P.kd_rot, P.kd_trans, el, et, fb)
    if use_ff:
        a_b = np.empty(6)  # the reference's acceleration in base axes, its angular part
        dv_frame_change(e, acc, a_b)
        for j in range(3):
            a_b[3 + j] = 0.0
        reaction_kernel(P.ints, P.reals, P.gravity, q, v, a_b, arm_acc, ff)  # -[f_0, tau_0]
        r_B, f_ff, c_b = np.empty(3), np.empty(3), np.empty(3)
        for j in range(3):
            x[j] = m * (c_ref_acc[j] - P.gravity[j])
        q_rotate_inv(q[:4], x, f_ff)
        dq_translation(q[:8], r_B)
        for j in range(3):
            x[j] = c[j] - r_B[j]
        q_rotate_inv(q[:4], x, c_b)
        for j in range(3):
            y[j] = f_ff[j] + ff[j]  # f_ff - f_0
        ff[3] = -ff[3] + c_b[1] * y[2] - c_b[2] * y[1]
        ff[4] = -ff[4] + c_b[2] * y[0] - c_b[0] * y[2]
        ff[5] = -ff[5] + c_b[0] * y[1] - c_b[1] * y[0]
        for j in range(3):
            ff[j] = f_ff[j]
    else:
        ff[:] = 0.0
    for j in range(6):
        wrench[j] = fb[j] + ff[j]


register_base_law(
    CoMHoldController, CoMLawParams, com_base_law_kernel, feedforward_is_reaction=False
)
