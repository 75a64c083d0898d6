"""Model-predictive base control on the dual-quaternion pose error (``base_controller.law =
"mpc"``).

At each control tick the law measures the base's pose error ``e^`` and twist error
``w^_e`` against its reference (:func:`~dqspace.control.pose_error.pose_error_kernel`: the
same ``log e^`` the dual PD acts on), computes what the reference needs from the base --
the generalized force that holds the base on its reference while the arm moves with its
planned joint accelerations (the feedforward of the dual PD, (P47), by the inverse
dynamics) -- and solves the QP of :mod:`dqspace.control.mpc_qp` over the horizon:

* prediction: the error dynamics linearised about the reference, ``d/dt log e^ = 1/2
  w^_e``, ``M d/dt w^_e = u - d``, sampled at ``period``; ``M`` the base rows and columns
  of the controller model's mass matrix at the current configuration (the composite
  inertia of the base with the arm locked in its current shape: the arm's joints follow
  their planned accelerations whatever the base does, so the base's own dynamics are
  those of this composite body), refreshed when it changes by more than
  ``inertia_tolerance`` (relative);
* decision variables: the thrusters' forces ``0 <= s_i <= s_max,i`` directly (their
  geometry from the thruster set) and the momentum devices' torque, bounded per axis and
  in rate;
* the arm's planned reaction ``d`` enters as a disturbance previewed over the horizon:
  its value at the tick, held; or, with a ``preview`` (:class:`ReactionPreview`, the
  nominal reaction ``d_nom(t)`` tabulated along the arm's planned motion by
  :func:`nominal_reaction_table`), ``d_k = d(t) + d_nom(t + k T) - d_nom(t)``: the
  measured reaction now plus its planned change;
* cost: the log and twist errors, the thrusters' impulse (linear: forces are
  non-negative), the devices' effort, a terminal weight.

The command is the first move: ``wrench = [H_f s_0, tau_0 (+ H_t s_0 with thrusters in
wrench mode)]``; its ``feedforward`` is the reaction estimate ``d`` (as the dual PD's, so
that records and the arm's planned reaction read the same), ``feedback = wrench -
feedforward``.  The solver runs in Python (OSQP, warm started): the law is not compiled,
the flight software calls it back from the compiled tick (its arm law then runs in
Python too).  A constrained optimiser has no linearisation: :attr:`linearizable` is
False and the linearisation refuses it.  See ``docs/control.md``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..actuators.thrusters import ThrusterSet
from ..dq.kernels import dv_frame_change
from ..multibody import Model
from ..multibody.kernels import crba
from .base import BaseCommand, BaseController, reaction_kernel
from .mpc_qp import MPCProblem, MPCWeights
from .pd import PDGains, State
from .pose_error import PoseError, pose_error_kernel
from .trajectories import PoseReference

__all__ = ["MPCBaseController", "MPCWeights", "ReactionPreview", "nominal_reaction_table"]

_NO_GAINS = PDGains(kp_rot=0.0, kd_rot=0.0, kp_trans=0.0, kd_trans=0.0)


class MPCBaseController(BaseController):
    """Model-predictive base pose controller (module docstring).

    Call ``base(t, state, reference, *, arm_acc=None) -> BaseCommand`` once per control
    tick, as :class:`~dqspace.control.BaseController`; ``arm_acc`` None: nothing
    previewed (``d = 0``, as the dual PD without feedforward).  The law carries the
    torque it last commanded (for the rate limit) and the solver's warm start;
    :meth:`reset` forgets them.  It pickles (the solver is rebuilt where it is
    unpickled: a Dask worker).

    Parameters
    ----------
    model : Model with a FREE root (the controller model)
    thrusters : ThrusterSet, the thrusters' geometry and largest forces
    weights : MPCWeights
    torque_from_thrusters : bool, the thrusters' moments count in the torque (thrusters
        in ``wrench`` mode); False: the thrusters give the force, the devices the torque
    inertia_tolerance : float, relative change of the base's inertia (Frobenius norm)
        that refreshes the prediction (0: every tick)
    preview : callable ``t -> (6,)`` (generalized ``[torque, force]``, e.g. a
        :class:`ReactionPreview`) or a ``(times, values)`` table, optional: the nominal
        reaction whose change over the horizon is previewed (None: ``d`` held)

    Attributes
    ----------
    solve_times : list of float, each tick's QP time (update + solve) [s]
    statuses : dict, OSQP status -> count
    last_plan : (s (N, m), tau (N, 3), x (N, 12)), the last solution
    last_thrust : (m,) the thrusters' forces of the last first move (within bounds) [N]
    """

    linearizable = False

    def __init__(
        self,
        model: Model,
        thrusters: ThrusterSet,
        weights: MPCWeights | None = None,
        *,
        torque_from_thrusters: bool = False,
        inertia_tolerance: float = 0.01,
        preview: Callable | tuple | None = None,
    ) -> None:
        super().__init__(model, _NO_GAINS)
        weights = MPCWeights() if weights is None else weights
        if not isinstance(weights, MPCWeights):
            raise ValueError(f"weights must be an MPCWeights, got {type(weights).__name__}")
        if thrusters is None or not hasattr(thrusters, "H_f"):
            raise ValueError("the MPC base law needs the thrusters (a ThrusterSet)")
        tol = float(inertia_tolerance)
        if not (np.isfinite(tol) and tol >= 0.0):
            raise ValueError(f"inertia_tolerance must be non-negative, got {inertia_tolerance!r}")
        self.weights = weights
        self.thrusters = thrusters
        self.torque_from_thrusters = bool(torque_from_thrusters)
        self.inertia_tolerance = tol
        H_f, H_t = np.asarray(thrusters.H_f, float), np.asarray(thrusters.H_t, float)
        self.G = np.vstack([H_t if self.torque_from_thrusters else np.zeros_like(H_t), H_f])
        self.s_max = np.asarray(thrusters.sigma_max, float) * np.ones(thrusters.n)
        self._problem = None
        self.preview = preview
        self.reset()

    @property
    def preview(self) -> Callable | None:
        """The nominal reaction previewed over the horizon, ``t -> (6,)`` (a
        :class:`ReactionPreview` or the user's callable; None: the reaction held)."""
        return self._preview

    @preview.setter
    def preview(self, value) -> None:
        if value is not None and not callable(value):
            try:
                value = ReactionPreview(*value)
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"preview must be a callable t -> (6,) or a (times, values) table: {exc}"
                ) from None
        self._preview = value

    def disturbance(self, t: float, d: NDArray[np.float64]) -> NDArray[np.float64]:
        """The disturbance over the horizon: ``d`` (6,) held without a preview, else
        (N, 6) rows ``d + d_nom(t + k T) - d_nom(t)``, ``k = 0 .. N-1``."""
        if self._preview is None:
            return d
        w = self.weights
        times = t + np.arange(w.horizon) * w.period
        if isinstance(self._preview, ReactionPreview):  # one interpolation per column
            rows = self._preview.at(times)
        else:
            rows = np.array([np.asarray(self._preview(tk), dtype=float) for tk in times])
        if rows.shape != (w.horizon, 6):
            raise ValueError(f"the preview must give (6,) values, got rows {rows.shape}")
        return d + (rows - rows[0])

    # ---- state of the law

    def reset(self) -> None:
        """Forget the last torque and the warm start (a new controller's state)."""
        self._tau_prev = np.zeros(3)
        self._problem = None
        self.solve_times: list[float] = []
        self.statuses: dict[str, int] = {}
        self.last_plan = self.last_thrust = None

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_problem"] = None  # OSQP's workspace does not pickle: rebuilt on first use
        return state

    def base_inertia(self, q: ArrayLike) -> NDArray[np.float64]:
        """(6, 6) the base rows and columns of the controller model's mass matrix at ``q``
        (``[rotation, translation]``): the composite inertia the base sees."""
        ints, reals = self.model.packed
        M = np.empty((self.model.nv, self.model.nv))
        crba(ints, reals, np.ascontiguousarray(q, dtype=float), M)
        return M[:6, :6].copy()

    def problem(self, q: ArrayLike) -> MPCProblem:
        """The QP (built on first use, at the configuration ``q``), its inertia refreshed
        when it moved by more than ``inertia_tolerance``."""
        M = self.base_inertia(q)
        if self._problem is None:
            self._problem = MPCProblem(self.weights, self.G, 0.0, self.s_max, M)
        else:
            M0 = self._problem.inertia
            if np.linalg.norm(M - M0) > self.inertia_tolerance * np.linalg.norm(M0):
                self._problem.set_inertia(M)
        return self._problem

    # ---- the law

    def reference_force(
        self, q: ArrayLike, v: ArrayLike, e: ArrayLike, acc: ArrayLike, arm_acc: ArrayLike
    ) -> NDArray[np.float64]:
        """``d`` (6,) ``[f, tau]``: what the base needs to follow the reference's
        acceleration ``acc`` (inertial, carried into the base frame through the pose error
        ``e``) while the arm moves with ``arm_acc`` (the dual PD's feedforward, (P47))."""
        a_b, out = np.empty(6), np.empty(6)
        dv_frame_change(e, np.ascontiguousarray(acc, dtype=float), a_b)
        ints, reals = self.model.packed
        q, v, arm_acc = (np.ascontiguousarray(x, dtype=float) for x in (q, v, arm_acc))
        reaction_kernel(ints, reals, self.model.gravity, q, v, a_b, arm_acc, out)
        return -out

    def __call__(
        self, t: float, state: State, reference: PoseReference, *, arm_acc: ArrayLike | None = None
    ) -> BaseCommand:
        q, v = self._state(state)
        e, e_log, e_twist = np.empty(8), np.empty(6), np.empty(6)
        pose_error_kernel(q[:8], reference.pose, v[:6], reference.twist, e, e_log, e_twist)
        if arm_acc is None:
            ff = np.zeros(6)
        else:
            ff = self.reference_force(q, v, e, reference.acc, self._arm_acc(arm_acc))
        t0 = time.perf_counter()
        qp = self.problem(q)
        d = np.r_[ff[3:], ff[:3]]  # generalized [torque, force]
        if arm_acc is not None:
            d = self.disturbance(t, d)
        s, tau, x = qp.solve(np.r_[e_log, e_twist], d, self._tau_prev)
        self.solve_times.append(time.perf_counter() - t0)
        self.statuses[qp.last_status] = self.statuses.get(qp.last_status, 0) + 1
        self.last_plan = (s, tau, x)
        s0 = np.clip(s[0], 0.0, self.s_max)
        tau0 = np.clip(tau[0], -self.weights.torque_limit, self.weights.torque_limit)
        self._tau_prev = tau0
        self.last_thrust = s0
        g = self.G @ s0
        wrench = np.r_[g[3:], g[:3] + tau0]
        err = PoseError(dq=e, log=e_log, twist=e_twist)
        return BaseCommand(wrench=wrench, feedback=wrench - ff, feedforward=ff, error=err)


class ReactionPreview:
    """The nominal reaction ``d_nom(t)`` (6,) on a time grid, interpolated linearly,
    held before the first and after the last time.

    Parameters
    ----------
    times : (n,) strictly increasing [s]
    values : (n, 6) generalized ``[torque, force]`` [N m, N]
    """

    def __init__(self, times: ArrayLike, values: ArrayLike) -> None:
        times, values = np.asarray(times, dtype=float), np.asarray(values, dtype=float)
        if times.ndim != 1 or times.size < 1 or np.any(np.diff(times) <= 0.0):
            raise ValueError("times must be a non-empty, strictly increasing (n,) array")
        if values.shape != (times.size, 6) or not np.all(np.isfinite(values)):
            raise ValueError(f"values must be a finite ({times.size}, 6) array")
        self.times, self.values = times, values

    def __call__(self, t: float) -> NDArray[np.float64]:
        return self.at(np.array([t]))[0]

    def at(self, times: ArrayLike) -> NDArray[np.float64]:
        """(len(times), 6) the values at ``times``."""
        times = np.asarray(times, dtype=float)
        return np.stack([np.interp(times, self.times, self.values[:, j]) for j in range(6)], 1)


def nominal_reaction_table(
    base: MPCBaseController, arm, trajectory, base_reference, duration: float
) -> ReactionPreview:
    """The arm's planned reaction along its task, ``d_nom`` on a grid of the MPC period
    over ``[0, duration + horizon * period]``: the arm's joint references from its own IK
    (``arm.joint_reference(trajectory(t), state)``, on a COPY of ``arm``: its seed is left
    as it is), the base on its reference (``base_reference(t)`` or a fixed
    :class:`~dqspace.control.trajectories.PoseReference`: its pose, twist and
    acceleration), through :meth:`MPCBaseController.reference_force` (the law's reaction
    at a zero pose error).  Returns a :class:`ReactionPreview` of ``[torque, force]``."""
    w = base.weights
    arm = copy.deepcopy(arm)
    times = np.arange(int(np.ceil(duration / w.period)) + w.horizon + 1) * w.period
    e = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])  # no pose error
    q = base.model.neutral_configuration()
    v = np.zeros(base.model.nv)
    n = np.asarray(arm.seed).size  # the arm's joints first (a model with devices: more)
    q[8 : 8 + n] = arm.seed
    a = np.zeros(base.model.nv - 6)
    values = np.empty((times.size, 6))
    for i, t in enumerate(times):
        ref = base_reference(t) if callable(base_reference) else base_reference
        q[:8], v[:6] = ref.pose, ref.twist
        jref, _ = arm.joint_reference(trajectory(t), State(q.copy(), v.copy()))
        q[8 : 8 + n], v[6 : 6 + n], a[:n] = jref.q, jref.v, jref.a
        ff = base.reference_force(q, v, e, ref.acc, a)
        values[i] = np.r_[ff[3:], ff[:3]]
    return ReactionPreview(times, values)
