"""Base pose control with integral action: the dual PD of (P46) plus the arm-reaction
feedforward of (P47), plus the integral of the pose error, with anti-windup.

Law, in base coordinates about the base origin, at the control ticks ``t_k = k T``:

    wrench_k = swap(-(k_p log e^_k + k_d w^_e,k)) + wrench_ff,k + w_I,k
    w_I,k+1  = clamp(w_I,k - T swap(k_i log e^_k), -limit, +limit)      w_I,0 = 0

``w_I`` (6,) ``[f, tau]`` [N, N m] is the integral term as it enters the wrench: the
integral of ``-swap(k_i log e^)`` by rectangles over the control period ``T`` (the tick uses
the integral of the errors before it, then adds its own).  ``k_i = ki_rot + eps ki_trans``
acts per component, like the PD's gains, on ``log e^ = [1/2 theta n, 1/2 r]``.

* **Anti-windup: clamping.**  Each component of ``w_I`` stays within ``[-limit, +limit]``
  (``limit_force`` (3,) [N], ``limit_torque`` (3,) [N m], per base axis): the integral never
  asks for more than that, whatever the actuators deliver.  The law does not know whether
  the actuators saturate (the allocation decides that after it), so there is no conditional
  integration; set the limits below what the thrusters and VSCMGs can deliver on each axis,
  above the largest constant disturbance to be rejected.
* **Reset: never during a run.**  ``w_I`` starts at zero when the controller is made (or
  :meth:`BasePIDController.reset` is called) and is carried from tick to tick, through base
  slews: what it has learned is the disturbance, which does not change when the reference
  moves; the clamp bounds what a slew's transient can wind up.

The law is a registered base law (:func:`~dqspace.control.flight.law.register_base_law`):
:func:`pid_base_law_kernel` runs in the compiled tick with the integral in the flight
state (:meth:`BasePIDController.kernel_state`, the controller's own array), and calling
the controller from Python advances the same array through the same kernel.  See
``docs/control.md``.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..multibody import Model
from .base import BaseCommand, BaseController, BaseLawParams, base_law_kernel
from .flight.law import register_base_law
from .pd import PDGains, State
from .pose_error import PoseError
from .trajectories import PoseReference

__all__ = [
    "IntegralGains",
    "BasePIDController",
    "PIDLawParams",
    "pid_base_law_kernel",
    "pid_rates_kernel",
    "INTEGRAL_STATES",
    "vector3",
    "control_period",
]

#: What the compiled PID law reads: the fields of
#: :data:`~dqspace.control.base.BaseLawParams`, the integral gains ``ki_rot``, ``ki_trans``
#: (3,), the clamps ``limit_force``, ``limit_torque`` (3,) and the control ``period`` [s].
PIDLawParams = namedtuple(
    "PIDLawParams",
    [*BaseLawParams._fields, "ki_rot", "ki_trans", "limit_force", "limit_torque", "period"],
)
#: Names of the integral term's components ``w_I`` (the law's states in a linearisation).
INTEGRAL_STATES = ("wi_fx", "wi_fy", "wi_fz", "wi_tx", "wi_ty", "wi_tz")


def vector3(value: ArrayLike, name: str, *, allow_inf: bool = False) -> NDArray[np.float64]:
    """A read-only non-negative (3,) vector from a scalar or a (3,) array; ValueError
    naming ``name`` otherwise (``allow_inf``: +inf accepted, e.g. no clamp)."""
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or a (3,) array, got {value!r}") from None
    a = np.full(3, float(a)) if a.ndim == 0 else a
    if a.shape != (3,):
        raise ValueError(f"{name} must be a scalar or have shape (3,), got shape {a.shape}")
    if np.any(np.isnan(a)) or (not allow_inf and not np.all(np.isfinite(a))):
        raise ValueError(f"{name} must be finite, got {a.tolist()}")
    if np.any(a < 0.0):
        raise ValueError(f"{name} must be non-negative, got {a.tolist()}")
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class IntegralGains:
    """Integral action of :class:`BasePIDController`: gains and clamps, per base axis.

    Attributes
    ----------
    ki_rot : (3,) [N m / (rad s)], multiplies the integral of ``1/2 theta n``
    ki_trans : (3,) [N / (m s)], multiplies the integral of ``1/2 r``
    limit_force : (3,) [N], largest magnitude of each force component of the integral term
    limit_torque : (3,) [N m], same for the torque

    Scalars broadcast; all non-negative (the limits may be ``inf``: no clamp).  Zero gains
    leave the dual PD.
    """

    ki_rot: np.ndarray
    ki_trans: np.ndarray
    limit_force: np.ndarray
    limit_torque: np.ndarray

    def __post_init__(self):
        for name in ("ki_rot", "ki_trans", "limit_force", "limit_torque"):
            value = vector3(getattr(self, name), name, allow_inf=name.startswith("limit"))
            object.__setattr__(self, name, value)


def control_period(period: float) -> float:
    """``period`` [s] as a positive finite float, or a ValueError."""
    try:
        T = float(period)
    except (TypeError, ValueError):
        raise ValueError(f"period must be a number of seconds, got {period!r}") from None
    if not (np.isfinite(T) and T > 0.0):
        raise ValueError(f"period must be positive and finite, got {period!r}")
    return T


class BasePIDController(BaseController):
    """Base pose controller with integral action (module docstring): dual PD (P46) +
    arm-reaction feedforward (P47) + the clamped integral of the pose error.

    Call ``base(t, state, reference, *, arm_acc=None) -> BaseCommand`` once per control
    tick (as :class:`~dqspace.control.BaseController`); each call advances the integral by
    one ``period``.  ``BaseCommand.feedback`` holds the PD and the integral term.

    Parameters
    ----------
    model : Model with a FREE root
    gains : PDGains
    integral : IntegralGains
    period : float, the control period T [s] the integral advances by at each call
    """

    def __init__(
        self, model: Model, gains: PDGains, integral: IntegralGains, *, period: float
    ) -> None:
        super().__init__(model, gains)
        if not isinstance(integral, IntegralGains):
            raise ValueError(f"integral must be an IntegralGains, got {type(integral).__name__}")
        self.integral_gains = integral
        self.period = control_period(period)
        self._integral = np.zeros(6)

    def kernel_params(self) -> PIDLawParams:
        """The :data:`PIDLawParams` of this controller (for the kernels)."""
        i = self.integral_gains
        return PIDLawParams(
            *super().kernel_params(), i.ki_rot, i.ki_trans, i.limit_force, i.limit_torque,
            self.period,
        )  # fmt: skip

    def kernel_state(self) -> NDArray[np.float64]:
        """The integral term ``w_I`` (6,) ``[f, tau]`` [N, N m]: the controller's own array,
        advanced in place by the kernel (in the compiled tick and in :meth:`__call__`)."""
        return self._integral

    @property
    def integral(self) -> NDArray[np.float64]:
        """A copy of the integral term ``w_I`` (6,) ``[f, tau]`` [N, N m] the next tick uses."""
        return self._integral.copy()

    def reset(self) -> None:
        """Zero the integral term (the state a new controller starts with)."""
        self._integral[:] = 0.0

    def __call__(
        self, t: float, state: State, reference: PoseReference, *, arm_acc: ArrayLike | None = None
    ) -> BaseCommand:
        return self._command(self._integral, t, state, reference, arm_acc)[0]

    # ---- the law with its state as an argument (for linearisation: nothing advanced)

    law_states = INTEGRAL_STATES

    def law_states0(self, state: State) -> NDArray[np.float64]:
        """The integral term at an equilibrium without disturbance: zeros (6,)."""
        return np.zeros(6)

    def law_rates(
        self,
        t: float,
        state: State,
        reference: PoseReference,
        z: ArrayLike,
        *,
        arm_acc: ArrayLike | None = None,
    ) -> tuple[BaseCommand, NDArray[np.float64]]:
        """The command with the integral term ``z`` (6,) [N, N m] and the term's rate
        ``z' = -swap(k_i log e^)`` (6,) [N/s, N m/s] in continuous time (the clamp not
        applied); the controller's own integral is not touched."""
        z = np.array(z, dtype=float)
        if z.shape != (6,):
            raise ValueError(f"z must have shape (6,), got {z.shape}")
        return self._command(z, t, state, reference, arm_acc, rates=True)

    def _command(self, z, t, state, reference, arm_acc, rates=False):
        q, v = self._state(state)
        use_ff = arm_acc is not None
        acc = self._arm_acc(arm_acc) if use_ff else np.zeros(self.model.nv - 6)
        wrench, fb, ff, z_dot = np.empty(6), np.empty(6), np.empty(6), np.empty(6)
        e, e_log, e_twist = np.empty(8), np.empty(6), np.empty(6)
        args = (
            self.kernel_params(), z, float(t), q, v, reference.pose, reference.twist,
            reference.acc, use_ff, acc, wrench, fb, ff, e, e_log, e_twist,
        )  # fmt: skip
        if rates:
            pid_rates_kernel(*args, z_dot)
        else:
            pid_base_law_kernel(*args)
        err = PoseError(dq=e, log=e_log, twist=e_twist)
        return BaseCommand(wrench=wrench, feedback=fb, feedforward=ff, error=err), z_dot


@njit(cache=True)
def _pid_output(P, wi, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log, e_twist):
    base_law_kernel(P, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log, e_twist)
    for j in range(6):
        fb[j] += wi[j]
        wrench[j] = fb[j] + ff[j]


@njit(cache=True)
def pid_base_law_kernel(P, wi, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e,
                        e_log, e_twist):  # fmt: skip
    """The PID base law of one tick as the compiled tick's base-law stage (the contract of
    :func:`~dqspace.control.flight.law.register_base_law`): ``P`` :data:`PIDLawParams`,
    ``wi`` (6,) the integral term ``[f, tau]`` [N, N m], used then advanced by one period
    and clamped (module docstring); ``t`` unused."""
    _pid_output(P, wi, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log, e_twist)
    T = P.period
    for j in range(3):
        f = wi[j] - T * P.ki_trans[j] * e_log[3 + j]
        wi[j] = min(max(f, -P.limit_force[j]), P.limit_force[j])
        tau = wi[3 + j] - T * P.ki_rot[j] * e_log[j]
        wi[3 + j] = min(max(tau, -P.limit_torque[j]), P.limit_torque[j])


@njit(cache=True)
def pid_rates_kernel(P, wi, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log,
                     e_twist, wi_dot):  # fmt: skip
    """The PID law's outputs at the integral term ``wi`` (6,) (as :func:`pid_base_law_kernel`,
    ``wi`` not advanced) and its continuous-time rate ``wi_dot = -swap(k_i log e^)`` (6,)."""
    _pid_output(P, wi, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log, e_twist)
    for j in range(3):
        wi_dot[j] = -P.ki_trans[j] * e_log[3 + j]
        wi_dot[3 + j] = -P.ki_rot[j] * e_log[j]


register_base_law(BasePIDController, PIDLawParams, pid_base_law_kernel)
