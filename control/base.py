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

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import frame_change, swap
from ..multibody import Model, inverse_dynamics
from .pd import PDGains, State, _root_state, dual_pd
from .pose_error import PoseError, pose_error
from .trajectories import PoseReference

__all__ = ["BaseCommand", "BaseController"]


@dataclass(frozen=True)
class BaseCommand:
    """Output of :class:`BaseController`: the commanded base wrench and its parts.

    Attributes
    ----------
    wrench : (6,) total ``[f, tau]`` [N, N m], base axes, torque about the base origin
    feedback : (6,) PD part ``[f, tau]``
    feedforward : (6,) arm-reaction feedforward ``[f, tau]`` (zero without ``arm_acc``)
    error : PoseError of the base relative to its reference
    """

    wrench: np.ndarray
    feedback: np.ndarray
    feedforward: np.ndarray
    error: PoseError

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

    def feedforward(
        self, state: State, arm_acc: ArrayLike, base_acc: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """``swap(ID(q, v, [base_acc; arm_acc])[:6])``: the wrench ``[f, tau]`` (6,) the base
        needs to accelerate by ``base_acc`` (default zero) while the arm moves."""
        m = self.model
        arm_acc = np.asarray(arm_acc, float)
        if arm_acc.shape != (m.nv - 6,):
            raise ValueError(f"arm_acc must have shape ({m.nv - 6},), got {arm_acc.shape}")
        a = np.zeros(m.nv)
        if base_acc is not None:
            a[:6] = base_acc
        a[6:] = arm_acc
        return swap(inverse_dynamics(m, state.q, state.v, a)[:6])

    def __call__(
        self, t: float, state: State, reference: PoseReference, *, arm_acc: ArrayLike | None = None
    ) -> BaseCommand:
        dq_IB, w_IB_B = _root_state(state)
        err = pose_error(dq_IB, reference.pose, w_IB_B, reference.twist)
        fb = dual_pd(err, self.gains)
        if arm_acc is None:
            ff = np.zeros(6)
        else:
            ff = self.feedforward(state, arm_acc, frame_change(err.dq, reference.acc))
        return BaseCommand(wrench=fb + ff, feedback=fb, feedforward=ff, error=err)
