"""The paper's task-space arm law: the dual PD (P46) on the end-effector pose, through the
Jacobian.

With the end-effector E's pose error ``e^`` relative to its reference D and the twist error
``w^_e`` (both in E, relative to the arm's root frame A: the base body of a floating
model), the dual PD law gives ``u^ = -(k_p log e^ + k_d w^_e)`` (P46, twist order).

* ``computed_torque=True`` (default): ``u^`` is a task acceleration.  The desired
  acceleration of E is ``a_d = Ad(e^) dw^_D + u^`` and the joint accelerations
  ``a_m = J^+ (a_d - J' v) + (I - J^+ J)(-k_n v_m)``: the minimum-norm solution plus a
  damping of the self-motion; the torques follow by computed torque on the whole model
  (:meth:`JointComputedTorque.torque <dqspace.control.JointComputedTorque.torque>`, with the
  base acceleration the commanded base wrench causes).  Then, while ``J`` has full row rank,
  ``e'' + k_d e' + (k_p / 2) e = 0`` per component for small errors (``log e^`` is half the
  rotation vector and half the displacement): gains ``k_p = 2 w^2``, ``k_d = 2 zeta w`` give
  the natural frequency ``w`` and damping ``zeta``.
* ``computed_torque=False``: the paper's transpose form ``tau_m = J^T swap(f^) - k_n v_m``
  with ``f^`` the PD wrench ``[f, tau]`` (``swap`` pairs it with the twist for power, see
  ``docs/conventions.md``): a spring and damper at the end-effector, no model needed beyond
  J; the arm's acceleration for the base feedforward is estimated by the forward dynamics.
  ``wrench_limit=(f_max, tau_max)`` saturates the PD wrench first: its force and its torque
  are each scaled down to those norms (an impedance whose wrench on what the end-effector
  holds stays bounded: the capture's hold, ``docs/capture.md``; the damping ``k_n v_m`` is
  then kept to the null space, ``(1 - J^T J^{+T}) k_n v_m``).  ``held_base=True``
  estimates the arm's acceleration with the base held instead (``a_m = M_mm^-1 (tau -
  c_m)``, the base rows left out): the one its base law aims at; with a heavy payload the
  free-base estimate, paired with a held base in the feedforward, is far off.

``J`` is the LOCAL Jacobian of E's arm columns (E's twist relative to the root, in E): the
right choice when the base is held by its own controller.  For an uncontrolled free-floating
base, the generalized Jacobian (:func:`~dqspace.multibody.generalized_jacobian`, zero total
momentum) maps the joint rates to E's inertial twist; ``jacobian="generalized"`` uses it in
the transpose form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import frame_change, swap
from ..multibody import (
    Model,
    Reference,
    forward_dynamics,
    forward_kinematics,
    frame_jacobian,
    frame_pose,
    generalized_jacobian,
    inverse_dynamics,
    mass_matrix,
)
from .arm import JointComputedTorque, JointGains
from .ik import arm_coordinates
from .pd import PDGains, State, dual_pd
from .pose_error import PoseError, pose_error
from .trajectories import JointReference, PoseReference

__all__ = ["TaskSpaceController", "TaskSpaceCommand", "saturate_wrench"]


def saturate_wrench(wrench: ArrayLike, f_max: float, tau_max: float) -> NDArray[np.float64]:
    """``[f, tau]`` (6,) with the force scaled down to the norm ``f_max`` [N] and the
    torque to ``tau_max`` [N m] when above them (each keeps its direction)."""
    w = np.array(wrench, dtype=float)
    for part, cap in ((slice(0, 3), f_max), (slice(3, 6), tau_max)):
        norm = float(np.linalg.norm(w[part]))
        if norm > cap:
            w[part] *= cap / norm
    return w


@dataclass(frozen=True)
class TaskSpaceCommand:
    """Output of :class:`TaskSpaceController` (the fields the runner reads, as ArmCommand).

    Attributes
    ----------
    tau : (n,) joint torques [N m]
    acc : (n,) planned joint accelerations [rad/s^2]
    base_acc : (6,) base acceleration the torques assume (zero: held base)
    joint_reference : JointReference of the current joints, rates and ``acc``
    joint_error : (n,) zeros (no joint reference in a task-space law)
    task_error : PoseError of the end-effector
    ik : None
    wrench : (6,) ``[f, tau]`` the transpose form's (saturated) PD wrench at the
        end-effector, in its axes (None in the computed-torque form)
    """

    tau: NDArray[np.float64]
    acc: NDArray[np.float64]
    base_acc: NDArray[np.float64]
    joint_reference: JointReference
    joint_error: NDArray[np.float64]
    task_error: PoseError
    ik: Any = None
    wrench: Any = None


class TaskSpaceController:
    """End-effector tracking by the dual PD law through the Jacobian (module docstring).

    Call ``arm(t, state, reference, *, base_force=None) -> TaskSpaceCommand`` with a
    :class:`~dqspace.control.trajectories.PoseReference` of the end-effector relative to the
    root frame.

    Parameters
    ----------
    model : Model, floating or fixed-base
    gains : PDGains, the task-space gains (``k_p``, ``k_d`` per rotation and translation)
    frame : str, the end-effector frame or body
    jacobian : "local" or "generalized" (the latter: transpose form, floating model only)
    null_space_damping : float >= 0 [1/s], ``k_n``
    computed_torque : bool
    limits : (n, 2) joint limits [rad], optional: a joint on a limit that the planned
        acceleration would push further out is stopped there (acceleration zeroed)
    wrench_limit : (f_max [N], tau_max [N m]), optional, transpose form only: the PD
        wrench's force and torque are each scaled down to these norms, and the damping
        ``k_n v_m`` projected onto the null space of ``J^{+T}`` (it then adds no static
        wrench at the end-effector)
    held_base : bool, transpose form: the arm's acceleration (``acc``, fed forward to the
        base) with the base held rather than free
    """

    def __init__(
        self,
        model: Model,
        gains: PDGains,
        *,
        frame: str = "ee",
        jacobian: str = "local",
        null_space_damping: float = 2.0,
        computed_torque: bool = True,
        limits: ArrayLike | None = None,
        wrench_limit: tuple[float, float] | None = None,
        held_base: bool = False,
    ) -> None:
        if not isinstance(gains, PDGains):
            raise ValueError(f"gains must be a PDGains, got {type(gains).__name__}")
        if jacobian not in ("local", "generalized"):
            raise ValueError(f"jacobian must be 'local' or 'generalized', got {jacobian!r}")
        if jacobian == "generalized" and (computed_torque or not model.floating):
            raise ValueError(
                "jacobian='generalized' needs a floating model and computed_torque=False "
                "(the transpose form)"
            )
        k = float(null_space_damping)
        if not (np.isfinite(k) and k >= 0):
            raise ValueError(f"null_space_damping must be >= 0 and finite, got {k}")
        if wrench_limit is not None:
            lim = np.asarray(wrench_limit, dtype=float)
            if computed_torque or lim.shape != (2,) or not np.all(lim > 0):
                raise ValueError(
                    "wrench_limit must be (f_max, tau_max) > 0, with computed_torque=False "
                    f"(the transpose form), got {wrench_limit!r}"
                )
            wrench_limit = (float(lim[0]), float(lim[1]))
        self.wrench_limit, self.held_base = wrench_limit, bool(held_base)
        frame_pose(model, model.neutral_configuration(), frame)  # checks the frame name
        self.model, self.gains, self.frame = model, gains, frame
        self.jacobian, self.k_null, self.computed_torque = jacobian, k, bool(computed_torque)
        self._q0, self._v0, self.n = arm_coordinates(model)
        self.limits = None if limits is None else np.asarray(limits, dtype=float)
        self._is_named = frame in {f.name for f in model.frames}
        zero = JointGains(kp=0.0, kd=0.0)
        self._ct = JointComputedTorque(model, zero)

    def _relative(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        qa = q.copy()
        if self.model.floating:
            qa[:8] = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # poses relative to the base
        return qa

    def task_error(self, state: State, reference: PoseReference) -> PoseError:
        """End-effector pose and twist error relative to the reference (in E)."""
        q, v = self._ct._state(state)
        qa = self._relative(q)
        J = frame_jacobian(self.model, qa, self.frame, Reference.LOCAL)[:, self._v0 :]
        twist = J @ v[self._v0 :]
        return pose_error(
            frame_pose(self.model, qa, self.frame), reference.pose, twist, reference.twist
        )

    @property
    def torque(self):
        """``torque(state, acc, base_force=None) -> (tau, base_acc)`` (computed torque), or
        None in the transpose form (its torques are not recomputed)."""
        return self._ct.torque if self.computed_torque else None

    def __call__(
        self,
        t: float,
        state: State,
        reference: PoseReference,
        *,
        base_force: ArrayLike | None = None,
    ) -> TaskSpaceCommand:
        m, n = self.model, self.n
        q, v = self._ct._state(state)
        vm = v[self._v0 :]
        qa = self._relative(q)
        J = frame_jacobian(m, qa, self.frame, Reference.LOCAL)[:, self._v0 :]
        err = pose_error(frame_pose(m, qa, self.frame), reference.pose, J @ vm, reference.twist)
        f = dual_pd(err, self.gains)  # [f, tau] = swap(-(k_p log e + k_d w_e))
        if self.wrench_limit is not None:
            f = saturate_wrench(f, *self.wrench_limit)
        u = swap(f)  # twist order
        if self.computed_torque:
            va = np.zeros(m.nv)
            va[self._v0 :] = vm
            kin = forward_kinematics(m, qa, va, np.zeros(m.nv))
            if self._is_named:
                jdot_v = kin.frame_acc[m.frame_index(self.frame)]
            else:
                jdot_v = kin.acc[m.body_index(self.frame)]
            a_d = frame_change(err.dq, reference.acc) + u
            Jp = np.linalg.pinv(J, rcond=1e-8)
            acc = Jp @ (a_d - jdot_v) - (np.eye(n) - Jp @ J) @ (self.k_null * vm)
            acc = self._at_limits(q[self._q0 :], acc)
            tau, a_b = self._ct.torque(state, acc, base_force)
        else:
            if self.jacobian == "generalized":
                Jt = generalized_jacobian(m, q, self.frame, Reference.LOCAL)
            else:
                Jt = J
            damping = self.k_null * vm
            if self.wrench_limit is not None:  # in the null space: no wrench at E (static)
                # weighted by the arm's inertia, k_n a rate [1/s]: a torque k_n v_m on a
                # light self-motion (the wrist's near its singularity) would exceed what a
                # sampled law can damp (k_n dt / I > 2)
                M_mm = mass_matrix(m, q)[self._v0 :, self._v0 :]
                damping = M_mm @ damping
                damping = damping - Jt.T @ (np.linalg.pinv(Jt.T, rcond=1e-8) @ damping)
            tau = Jt.T @ u - damping  # power pairing: <J v_m, u> = v_m . J^T u
            full = np.zeros(m.nv)
            full[self._v0 :] = tau
            if self.held_base and m.floating:  # M_mm a_m = tau - c_m, the base at a_b = 0
                c = inverse_dynamics(m, q, v, np.zeros(m.nv))[self._v0 :]
                acc = np.linalg.solve(mass_matrix(m, q)[self._v0 :, self._v0 :], tau - c)
            else:
                acc = forward_dynamics(m, q, v, full)[self._v0 :]
            a_b = np.zeros(6) if m.floating else np.zeros(0)
        jref = JointReference(q[self._q0 :].copy(), vm.copy(), acc.copy())
        w = None if self.computed_torque else f
        return TaskSpaceCommand(tau, acc, a_b, jref, np.zeros(n), err, wrench=w)

    def _at_limits(self, theta, acc):
        if self.limits is None:
            return acc
        acc = acc.copy()
        acc[(theta >= self.limits[:, 1]) & (acc > 0)] = 0.0
        acc[(theta <= self.limits[:, 0]) & (acc < 0)] = 0.0
        return acc
