"""Base (satellite) pose control: dual PD plus the feedforward of the arm's reaction (P47).

Law, in base coordinates about the base origin:

    wrench = swap(-(k_p log e^ + k_d w^_e)) + wrench_ff                (P46, P47)
    wrench_ff = swap(ID(q, v, [a_b,d; theta_planned''])[:6])

``ID`` is the recursive inverse dynamics of the whole system
(:func:`dqspace.multibody.inverse_dynamics`) at the measured state (q, v):
its base row is the generalized force ``[torque, force]`` the base needs so
that, while the arm moves with the planned joint accelerations, the base
accelerates as desired -- ``a_b,d``, the reference's acceleration carried
into the base frame, zero when holding a pose.  In the paper's notation
``wrench_ff = -f^_0`` with ``f^_0`` the reaction of the arm on the base (plus
the base's own gyroscopic term); (P47) prints ``-f^_0`` accordingly.

Output contract (:class:`BaseCommand`), for the actuator layer: ``force``
(3,) [N] and ``torque`` (3,) [N m], both in base axes, the torque about the
base frame origin.  Thrusters take the force: ``H_f sigma = force`` (P49);
the VSCMGs take what remains of the torque after the thrusters' own moment
about the same origin: ``tau_vscmg = torque - H_t sigma`` (P48).
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..dq import swap
from ..dq.kernels import dv_frame_change
from ..multibody import Model
from ..multibody.kernels import rnea
from .pd import PDGains, State, checked_state, dual_pd_kernel
from .pose_error import PoseError, pose_error_kernel
from .trajectories import PoseReference

__all__ = [
    "BaseCommand",
    "BaseController",
    "BaseLawParams",
    "base_law_kernel",
    "pd_base_law_kernel",
    "reaction_kernel",
]

#: What the compiled base law reads (:meth:`BaseController.kernel_params`): the model
#: (``ints``, ``reals``, ``gravity``) and the four gain vectors (3,) of :class:`PDGains`.
BaseLawParams = namedtuple(
    "BaseLawParams", ["ints", "reals", "gravity", "kp_rot", "kp_trans", "kd_rot", "kd_trans"]
)
_NO_FEXT = np.zeros((0, 6))


@dataclass(frozen=True)
class BaseCommand:
    """Output of :class:`BaseController`: the commanded base wrench and its parts.

    Attributes
    ----------
    wrench : (6,) total ``[f, tau]`` [N, N m], base axes, torque about the base origin
    feedback : (6,) PD part ``[f, tau]``
    feedforward : (6,) arm-reaction feedforward ``[f, tau]`` (zero without ``arm_acc``)
    error : PoseError of the base relative to its reference
    compensation : (6,) the part of ``wrench`` that cancels the law's estimate of an
        external wrench on the base (a disturbance observer's ``-d^``), or None (no
        estimate).  The arm's torques assume the base accelerates under ``wrench -
        compensation``, the wrench left once the disturbance acts.
    """

    wrench: np.ndarray
    feedback: np.ndarray
    feedforward: np.ndarray
    error: PoseError
    compensation: np.ndarray | None = None

    @property
    def force(self) -> NDArray[np.float64]:
        """(3,) commanded force [N] in base axes: the thrusters' share (P49)."""
        return self.wrench[:3]

    @property
    def torque(self) -> NDArray[np.float64]:
        """(3,) commanded torque [N m] about the base origin.

        The VSCMGs supply ``torque - H_t sigma`` (P48).
        """
        return self.wrench[3:]

    @property
    def generalized_force(self) -> NDArray[np.float64]:
        """(6,) ``[torque, force]``: the base rows of the generalized force."""
        return swap(self.wrench)


class BaseController:
    """Pose controller of a floating base carrying an arm (P47).

    Call ``base(t, state, reference, *, arm_acc=None) -> BaseCommand``:
    ``state`` a :class:`~dqspace.control.pd.State` of the whole model,
    ``reference`` a :class:`~dqspace.control.trajectories.PoseReference` of the
    base in the inertial frame, ``arm_acc`` (nv - 6,) the arm's planned joint
    accelerations [rad/s^2] (e.g. ``ArmCommand.acc``); ``None`` switches the
    feedforward off (pure PD).  Stateless.

    Parameters
    ----------
    model : Model with a FREE root
    gains : PDGains
    """

    def __init__(self, model: Model, gains: PDGains) -> None:
        if not model.floating:
            raise ValueError("BaseController needs a floating-base model (root joint FREE)")
        if not isinstance(gains, PDGains):
            raise ValueError(f"gains must be a PDGains, got {type(gains).__name__}")
        self.model = model
        self.gains = gains

    def kernel_params(self) -> BaseLawParams:
        """The :data:`BaseLawParams` of this controller (for the kernels)."""
        ints, reals = self.model.packed
        g = self.gains
        return BaseLawParams(
            ints, reals, self.model.gravity, g.kp_rot, g.kp_trans, g.kd_rot, g.kd_trans
        )

    def kernel_state(self) -> None:
        """The law's state carried from tick to tick: none (the dual PD is stateless)."""
        return None

    def _state(self, state):
        return checked_state(self.model, state)

    def _arm_acc(self, arm_acc):
        a = np.ascontiguousarray(arm_acc, dtype=float)
        if a.shape != (self.model.nv - 6,):
            raise ValueError(f"arm_acc must have shape ({self.model.nv - 6},), got {a.shape}")
        return a

    def feedforward(
        self, state: State, arm_acc: ArrayLike, base_acc: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """``swap(ID(q, v, [base_acc; arm_acc])[:6])``: the wrench ``[f, tau]`` (6,) the base
        needs to accelerate by ``base_acc`` (default zero) while the arm moves
        (:func:`reaction_kernel`, negated)."""
        q, v = self._state(state)
        a_b = np.zeros(6) if base_acc is None else np.ascontiguousarray(base_acc, dtype=float)
        out = np.empty(6)
        ints, reals = self.model.packed
        reaction_kernel(ints, reals, self.model.gravity, q, v, a_b, self._arm_acc(arm_acc), out)
        return -out

    def __call__(
        self, t: float, state: State, reference: PoseReference, *, arm_acc: ArrayLike | None = None
    ) -> BaseCommand:
        q, v = self._state(state)
        use_ff = arm_acc is not None
        acc = self._arm_acc(arm_acc) if use_ff else np.zeros(self.model.nv - 6)
        wrench, fb, ff = np.empty(6), np.empty(6), np.empty(6)
        e, e_log, e_twist = np.empty(8), np.empty(6), np.empty(6)
        self._law(t, q, v, reference, use_ff, acc, wrench, fb, ff, e, e_log, e_twist)
        err = PoseError(dq=e, log=e_log, twist=e_twist)
        return BaseCommand(wrench=wrench, feedback=fb, feedforward=ff, error=err)

    def _law(self, t, q, v, reference, use_ff, acc, wrench, fb, ff, e, e_log, e_twist):
        """The law's kernel into the outputs (a subclass with a registered kernel of its
        own overrides this, and only this, to call it)."""
        base_law_kernel(
            self.kernel_params(), q, v, reference.pose, reference.twist, reference.acc, use_ff,
            acc, wrench, fb, ff, e, e_log, e_twist,
        )  # fmt: skip


@njit(cache=True)
def reaction_kernel(ints, reals, gravity, q, v, base_acc, arm_acc, out):
    """``out = -swap(ID(q, v, [base_acc; arm_acc])[:6])`` (6,) ``[f, tau]``: the arm's
    reaction on a base accelerating by ``base_acc`` (6,) while the arm's joints accelerate
    by ``arm_acc`` (nv - 6,) (plus the base's own inertial and gyroscopic terms; the
    negated feedforward of P47)."""
    nv = v.shape[0]
    a = np.empty(nv)
    for j in range(6):
        a[j] = base_acc[j]
    for j in range(nv - 6):
        a[6 + j] = arm_acc[j]
    tau = np.empty(nv)
    force = np.empty((ints.shape[0], 6))
    rnea(ints, reals, gravity, q, v, a, _NO_FEXT, tau, force)
    for j in range(3):
        out[j] = -tau[3 + j]
        out[3 + j] = -tau[j]


@njit(cache=True)
def base_law_kernel(P, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log, e_twist):
    """The base law (P46 + P47) of :class:`BaseController`, compiled: the pose and twist
    error of the base ``q[:8]``, ``v[:6]`` relative to the reference (``pose`` (8,),
    ``twist``, ``acc`` (6,), inertial frame) into ``e``, ``e_log``, ``e_twist``; the PD
    wrench ``fb`` (6,) ``[f, tau]``; with ``use_ff`` the feedforward ``ff`` (6,) of the
    arm's planned joint accelerations ``arm_acc`` and the reference acceleration carried
    into the base frame (zeros otherwise); ``wrench = fb + ff``."""
    pose_error_kernel(q[:8], pose, v[:6], twist, e, e_log, e_twist)
    dual_pd_kernel(P.kp_rot, P.kp_trans, P.kd_rot, P.kd_trans, e_log, e_twist, fb)
    if use_ff:
        a_b = np.empty(6)
        dv_frame_change(e, acc, a_b)
        reaction_kernel(P.ints, P.reals, P.gravity, q, v, a_b, arm_acc, ff)
        for j in range(6):
            ff[j] = -ff[j]
    else:
        ff[:] = 0.0
    for j in range(6):
        wrench[j] = fb[j] + ff[j]


@njit(cache=True)
def pd_base_law_kernel(P, state, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e,
                       e_log, e_twist):  # fmt: skip
    """:func:`base_law_kernel` as the compiled tick's base-law stage (its contract:
    :func:`~dqspace.control.flight.law.register_base_law`); ``state`` (None) and ``t``
    unused."""
    base_law_kernel(P, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log, e_twist)
