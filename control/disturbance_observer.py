"""Base pose control with a disturbance observer: the dual PD of (P46) plus the
arm-reaction feedforward of (P47), minus the estimate of the external wrench on the base.

**The observer** (momentum-based, no acceleration measured).  ``h = [P, L]`` (6,) is the
momentum of the whole system (base and arm) in base axes, ``P`` linear, ``L`` angular about
the base origin: ``h = swap((M(q) v)[:6])``, the base rows of the generalized momentum.  The
arm's joint torques are internal, so with the base twist ``[w, v_b]`` it obeys

    h' = m(h, v) + u + d,      m = [-w x P ;  -w x L - v_b x P]

``u`` (6,) ``[f, tau]`` the wrench the actuators apply, ``d`` the external wrench (a
disturbance, constant or slowly varying, in base axes about the base origin).  The residual

    d^(t) = K (h(t) - S(t)),     S' = m(h, v) + u + d^,     S(0) = h(0)

obeys ``d^' = K (d - d^)``: each component of the estimate follows the disturbance through
a first-order lag of bandwidth ``K`` [rad/s] (``bandwidth``), from ``d^(0) = 0``.  The law
takes for ``u`` what it commanded (it knows nothing else): what the actuators fail to
deliver (pulse modulation, allocation, misalignment, VSCMG steering) enters ``d^`` as if it
were a disturbance, and is compensated with it.

**The law**, at the control ticks ``t_k = k T``::

    wrench_k = swap(-(k_p log e^_k + k_d w^_e,k)) + wrench_ff,k - d^_k
    d^_k = K (h_k - S_k),   S_k+1 = S_k + T (m(h_k, v_k) + wrench_k + d^_k),   S_0 = h_0

(``S`` by rectangles over the period; the discrete estimate's pole is ``1 - K T``: the
bandwidth must satisfy ``K T <= 1``).  ``-d^`` is the disturbance's feedforward; it is
recorded in the command's ``feedback`` (the PD minus ``d^``), since ``feedforward`` is the
arm's reaction by contract (the navigation predicts with it), and as its
``compensation``: the arm's torques assume the base accelerates under the wrench without
it (the disturbance takes that part), so the feedforward sees no phantom reaction.

A registered base law (:func:`~dqspace.control.flight.law.register_base_law`):
:func:`dob_base_law_kernel` runs in the compiled tick with the observer's state
(:data:`ObserverState`) in the flight state, and calling the controller from Python advances
the same arrays through the same kernel.  See ``docs/control.md``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..multibody import Model
from ..multibody.kernels import rnea
from .base import BaseCommand, BaseController, BaseLawParams, base_law_kernel
from .base_integral import control_period
from .flight.law import register_base_law
from .pd import PDGains, State
from .pose_error import PoseError
from .trajectories import PoseReference

__all__ = [
    "BaseDOBController",
    "DOBLawParams",
    "ObserverState",
    "OBSERVER_STATES",
    "base_momentum_kernel",
    "dob_base_law_kernel",
    "dob_rates_kernel",
    "dob_compensation_kernel",
]

#: What the compiled observer law reads: the fields of
#: :data:`~dqspace.control.base.BaseLawParams`, the observer's ``bandwidth`` (6,) [rad/s]
#: per wrench component and the control ``period`` [s].
DOBLawParams = namedtuple("DOBLawParams", [*BaseLawParams._fields, "bandwidth", "period"])
#: The observer's state: ``integral`` (6,) S [N s, N m s], ``estimate`` (6,) d^ ``[f, tau]``
#: [N, N m] (the last tick's), ``started`` (1,) (0 until the first tick sets S = h).
ObserverState = namedtuple("ObserverState", ["integral", "estimate", "started"])
#: Names of S's components (the law's states in a linearisation) [N s, N m s].
OBSERVER_STATES = ("obs_px", "obs_py", "obs_pz", "obs_lx", "obs_ly", "obs_lz")
_NO_FEXT = np.zeros((0, 6))


class BaseDOBController(BaseController):
    """Base pose controller with a disturbance observer (module docstring): dual PD (P46)
    + arm-reaction feedforward (P47) - the estimated external wrench.

    Call ``base(t, state, reference, *, arm_acc=None) -> BaseCommand`` once per control
    tick; each call advances the observer by one ``period``.

    Parameters
    ----------
    model : Model with a FREE root (the controller model: its momentum is observed)
    gains : PDGains
    bandwidth : float or (6,) [rad/s], K per wrench component ``[f, tau]``, positive, with
        ``bandwidth * period <= 1``
    period : float, the control period T [s]
    """

    def __init__(
        self, model: Model, gains: PDGains, *, bandwidth: ArrayLike, period: float
    ) -> None:
        super().__init__(model, gains)
        self.period = control_period(period)
        try:
            K = np.array(bandwidth, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"bandwidth must be a number or (6,), got {bandwidth!r}") from None
        K = np.full(6, float(K)) if K.ndim == 0 else K
        if K.shape != (6,) or not np.all(np.isfinite(K)) or np.any(K <= 0.0):
            raise ValueError(f"bandwidth must be positive and finite, scalar or (6,), got {K}")
        if np.any(K * self.period > 1.0):
            raise ValueError(
                f"bandwidth * period must be <= 1 (the discrete observer's pole 1 - K T), "
                f"got bandwidth {K.max():g} rad/s at period {self.period:g} s"
            )
        K.setflags(write=False)
        self.bandwidth = K
        self._state_arrays = ObserverState(np.zeros(6), np.zeros(6), np.zeros(1))

    def kernel_params(self) -> DOBLawParams:
        """The :data:`DOBLawParams` of this controller (for the kernels)."""
        return DOBLawParams(*super().kernel_params(), self.bandwidth, self.period)

    def kernel_state(self) -> ObserverState:
        """The observer's :data:`ObserverState`: the controller's own arrays, advanced in
        place by the kernel (in the compiled tick and in :meth:`__call__`)."""
        return self._state_arrays

    @property
    def estimate(self) -> NDArray[np.float64]:
        """A copy of the last tick's estimate d^ (6,) ``[f, tau]`` [N, N m] (base axes, about
        the base origin; zeros before the first tick)."""
        return self._state_arrays.estimate.copy()

    def reset(self) -> None:
        """Restart the observer: the next tick sets S = h, d^ = 0."""
        for a in self._state_arrays:
            a[:] = 0.0

    def momentum(self, state: State) -> NDArray[np.float64]:
        """The system's momentum ``h = [P, L]`` (6,) [N s, N m s] in base axes, ``L`` about
        the base origin (:func:`base_momentum_kernel`)."""
        q, v = self._state(state)
        h = np.empty(6)
        ints, reals = self.model.packed
        base_momentum_kernel(ints, reals, q, v, h)
        return h

    def __call__(
        self, t: float, state: State, reference: PoseReference, *, arm_acc: ArrayLike | None = None
    ) -> BaseCommand:
        return self._command(self._state_arrays, t, state, reference, arm_acc)[0]

    # ---- the law with its state as an argument (for linearisation: nothing advanced)

    law_states = OBSERVER_STATES

    def law_states0(self, state: State) -> NDArray[np.float64]:
        """S at an equilibrium without disturbance: ``h(q, v)`` (d^ = 0)."""
        return self.momentum(state)

    def law_rates(
        self,
        t: float,
        state: State,
        reference: PoseReference,
        z: ArrayLike,
        *,
        arm_acc: ArrayLike | None = None,
    ) -> tuple[BaseCommand, NDArray[np.float64]]:
        """The command with the observer's integral ``S = z`` (6,) and its rate ``S'`` (6,)
        in continuous time (module docstring); the controller's own state is not touched."""
        z = np.array(z, dtype=float)
        if z.shape != (6,):
            raise ValueError(f"z must have shape (6,), got {z.shape}")
        s = ObserverState(z, np.zeros(6), np.ones(1))
        return self._command(s, t, state, reference, arm_acc, rates=True)

    def _command(self, s, t, state, reference, arm_acc, rates=False):
        q, v = self._state(state)
        use_ff = arm_acc is not None
        acc = self._arm_acc(arm_acc) if use_ff else np.zeros(self.model.nv - 6)
        wrench, fb, ff, z_dot = np.empty(6), np.empty(6), np.empty(6), np.empty(6)
        e, e_log, e_twist = np.empty(8), np.empty(6), np.empty(6)
        args = (
            self.kernel_params(), s, float(t), q, v, reference.pose, reference.twist,
            reference.acc, use_ff, acc, wrench, fb, ff, e, e_log, e_twist,
        )  # fmt: skip
        if rates:
            dob_rates_kernel(*args, z_dot)
        else:
            dob_base_law_kernel(*args)
        err = PoseError(dq=e, log=e_log, twist=e_twist)
        cmd = BaseCommand(
            wrench=wrench, feedback=fb, feedforward=ff, error=err, compensation=-s.estimate
        )
        return cmd, z_dot


@njit(cache=True)
def base_momentum_kernel(ints, reals, q, v, h):
    """``h = [P, L]`` (6,): the momentum of the whole model in base axes, ``P`` linear
    [N s], ``L`` angular about the base origin [N m s]; ``swap((M(q) v)[:6])``, by the
    inverse dynamics at zero velocity and gravity with ``v`` as the acceleration."""
    nv = v.shape[0]
    tau = np.empty(nv)
    force = np.empty((ints.shape[0], 6))
    rnea(ints, reals, np.zeros(3), q, np.zeros(nv), v, _NO_FEXT, tau, force)
    for j in range(3):
        h[j] = tau[3 + j]
        h[3 + j] = tau[j]


@njit(cache=True)
def _dob_output(P, s, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log,
                e_twist, rate):  # fmt: skip
    """The law's outputs at the observer's state ``s`` (d^ written into ``s.estimate``) and
    S's rate ``rate`` (6,) (module docstring)."""
    base_law_kernel(P, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log, e_twist)
    h = np.empty(6)
    base_momentum_kernel(P.ints, P.reals, q, v, h)
    d = s.estimate
    for j in range(6):
        d[j] = P.bandwidth[j] * (h[j] - s.integral[j])
        fb[j] -= d[j]
        wrench[j] = fb[j] + ff[j]
    w0, w1, w2, v0, v1, v2 = v[0], v[1], v[2], v[3], v[4], v[5]
    p0, p1, p2, l0, l1, l2 = h[0], h[1], h[2], h[3], h[4], h[5]
    rate[0] = -(w1 * p2 - w2 * p1)  # -w x P
    rate[1] = -(w2 * p0 - w0 * p2)
    rate[2] = -(w0 * p1 - w1 * p0)
    rate[3] = -(w1 * l2 - w2 * l1) - (v1 * p2 - v2 * p1)  # -w x L - v_b x P
    rate[4] = -(w2 * l0 - w0 * l2) - (v2 * p0 - v0 * p2)
    rate[5] = -(w0 * l1 - w1 * l0) - (v0 * p1 - v1 * p0)
    for j in range(6):
        rate[j] += wrench[j] + d[j]


@njit(cache=True)
def dob_base_law_kernel(P, s, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e,
                        e_log, e_twist):  # fmt: skip
    """The observer law of one tick as the compiled tick's base-law stage (the contract of
    :func:`~dqspace.control.flight.law.register_base_law`): ``P`` :data:`DOBLawParams`,
    ``s`` :data:`ObserverState` (S set to h at the first tick, then advanced by one period;
    d^ written); ``t`` unused."""
    if s.started[0] == 0.0:
        base_momentum_kernel(P.ints, P.reals, q, v, s.integral)
        s.started[0] = 1.0
    rate = np.empty(6)
    _dob_output(P, s, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log,
                e_twist, rate)  # fmt: skip
    for j in range(6):
        s.integral[j] += P.period * rate[j]


@njit(cache=True)
def dob_rates_kernel(P, s, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log,
                     e_twist, s_dot):  # fmt: skip
    """The observer law's outputs at the state ``s`` (as :func:`dob_base_law_kernel`, S not
    advanced) and S's continuous-time rate ``s_dot`` (6,)."""
    _dob_output(P, s, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, e_log,
                e_twist, s_dot)  # fmt: skip


@njit(cache=True)
def dob_compensation_kernel(P, s, out):
    """The observer law's compensation ``-d^`` (6,) of its last tick (``out``)."""
    for j in range(6):
        out[j] = -s.estimate[j]


register_base_law(
    BaseDOBController, DOBLawParams, dob_base_law_kernel, compensation=dob_compensation_kernel
)
