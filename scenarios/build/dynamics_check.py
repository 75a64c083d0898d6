"""A second, independent computation of the dynamics-check scenario (paper eq. 50).

``dqspace run dynamics-check`` integrates the open-loop system (base force and torque
``sin(w t)`` times the amplitudes, everything at rest at t = 0) with the articulated-body
forward dynamics (ABA) and the Lie-group integrators (RK4 or the adaptive
``simulate_adaptive``).  :func:`reference_ee_positions` recomputes the end-effector
path with as little of that machinery as possible:

* dynamics: the paper's matrix form ``a = M(q)⁻¹ (tau − C(q, v))`` (composite inertias
  and a Cholesky solve, ``forward_dynamics(..., method="matrix")``), not ABA;
* integrator: scipy's ``solve_ivp`` DOP853 (8th order) at ``rtol = atol = 1e-13``;
* state: the configuration *embedded* (the base pose's 8 dual-quaternion numbers as
  plain coordinates, ``d/dt q̂ = ½ q̂ ∘ ω̂``; joint angles ``d/dt q = v``), projected
  onto the unit manifold only where the dynamics and the kinematics read it -- not the
  local coordinates (``dexpinv``, re-anchoring) the package's integrators use.

What both share is the model and the forward kinematics of the ``"ee"`` frame.

Accuracy of the reference (measured on the 20 s check, 2001 output times): it moves by
1.7e-9 m from ``rtol = 1e-12`` to ``1e-13``, and the adaptive run of the scenario
(RK45, rtol 1e-8, max step 1 ms) lies within 3.6e-10 m of it; RK4 at 1 kHz within
3.7e-10 m after 3 s and 8.4e-7 m after 20 s, converging at 4th order (errors 16 times
smaller per halved step).  A 20 s reference takes under a second.

"""

import numpy as np

from ...dq import dq_mul, dq_normalize, quat_mul, translation_from_dq
from ...multibody import JointType, forward_dynamics, frame_pose, models

__all__ = [
    "REFERENCE_RTOL",
    "REFERENCE_METHOD",
    "open_loop_model",
    "reference_ee_positions",
    "ReferenceIntegrator",
]

#: relative and absolute tolerance of the reference integration
REFERENCE_RTOL = 1e-13
#: how the reference is computed, in words (figures quote it)
REFERENCE_METHOD = "matrix-form M⁻¹(τ − C), DOP853, rtol = atol = 1e-13, embedded state"


def open_loop_model(config):
    """The model an open-loop scenario runs on (the paper's space manipulator).

    Parameters
    ----------
    config : dict, a resolved scenario (``Scenario.config`` or ``manifest["scenario"]``)

    Notes
    -----
    The runner's open-loop branch builds ``models.space_manipulator()`` with its
    defaults; this mirrors it (the scenario's ``[model]`` section is not read there).
    """

    _section(config, "open_loop")
    return models.space_manipulator()


def _section(config, name):
    try:
        return config[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"config: no [{name}] section; pass a resolved open-loop scenario "
            f"(Scenario.config or a result's manifest['scenario'])"
        ) from None


def _base_force(config):
    """(w [rad/s], (6,) amplitudes ``[torque (N m), force (N)]``) of the open-loop input."""
    ol = _section(config, "open_loop")
    amp = np.r_[ol["base_torque_amplitude"], ol["base_force_amplitude"]].astype(float)
    if amp.shape != (6,):
        raise ValueError("config: open_loop amplitudes must have 3 components each")
    return float(ol["frequency"]), amp


def _embedded_kinematics(model):
    """Functions ``project(y) -> q`` and ``rates(q, v) -> dq/dt`` on the embedded state."""

    joints = [
        (int(model.joint_type[k]), model.q_slice(k), model.v_slice(k)) for k in range(model.nb)
    ]
    unknown = {t for t, _, _ in joints} - {int(t) for t in JointType}
    if unknown:
        raise ValueError(f"model: joint types {sorted(unknown)} are not handled")

    def project(y):
        q = y[: model.nq].copy()
        for t, qs, _ in joints:
            if t == JointType.FREE:
                q[qs] = dq_normalize(q[qs])
            elif t == JointType.SPHERICAL:
                q[qs] /= np.linalg.norm(q[qs])
        return q

    def rates(q, v):
        qd = np.zeros(model.nq)
        for t, qs, vs in joints:
            if t == JointType.FREE:  # d/dt q^ = 1/2 q^ o (w + eps v), body twist [w, v]
                w = v[vs]
                qd[qs] = 0.5 * dq_mul(q[qs], np.r_[0.0, w[:3], 0.0, w[3:]])
            elif t == JointType.SPHERICAL:  # d/dt q = 1/2 q o w, w in the child frame
                qd[qs] = 0.5 * quat_mul(q[qs], np.r_[0.0, v[vs]])
            elif t in (JointType.REVOLUTE, JointType.PRISMATIC):
                qd[qs] = v[vs]
        return qd

    return project, rates


class ReferenceIntegrator:
    """The independent reference of an open-loop scenario, integrated segment by segment
    (a run records it as it goes, in bounded memory): :meth:`advance` returns the
    end-effector positions at later times, continuing from where the last call stopped.

    Parameters
    ----------
    config : dict, the resolved open-loop scenario (``Scenario.config`` or a result's
        ``manifest["scenario"]``); reads ``[open_loop]`` (frequency, amplitudes)
    rtol : float, relative and absolute tolerance of DOP853
    """

    def __init__(self, config, rtol=REFERENCE_RTOL):
        self.model = model = open_loop_model(config)
        self.w, self.amp = _base_force(config)
        self.project, self.rates = _embedded_kinematics(model)
        self.rtol = rtol
        self.t = 0.0  # the system is at rest at t = 0
        self.y = np.r_[model.neutral_configuration(), np.zeros(model.nv)]

    def _rhs(self, time, y):
        model = self.model
        q, v = self.project(y), y[model.nq :]
        tau = np.zeros(model.nv)
        tau[:6] = np.sin(self.w * time) * self.amp
        return np.concatenate(
            [self.rates(q, v), forward_dynamics(model, q, v, tau, method="matrix")]
        )

    def advance(self, t):
        """(n, 3) end-effector positions [m] (inertial) at the times ``t`` (n,) [s],
        non-decreasing, none before the last call's last time; ValueError on bad times or
        a failed integration."""
        t = np.asarray(t, dtype=float)
        if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)):
            raise ValueError("t: must be a non-empty 1-D array of finite times [s]")
        if t[0] < self.t or np.any(np.diff(t) < 0.0):
            raise ValueError(f"t: must be non-decreasing and start at or after {self.t:g} s")
        if t[-1] > self.t:
            # scipy.integrate loads in ~0.5 s: only an open-loop run pays it
            from scipy.integrate import solve_ivp

            sol = solve_ivp(
                self._rhs, (self.t, t[-1]), self.y, method="DOP853", t_eval=t, rtol=self.rtol,
                atol=self.rtol, dense_output=False,
            )  # fmt: skip
            if not sol.success:
                raise ValueError(
                    f"reference integration failed at t = {sol.t[-1]:.6g} s: {sol.message}"
                )
            states = sol.y.T
            self.t, self.y = float(t[-1]), states[-1].copy()
        else:
            states = np.tile(self.y, (t.size, 1))
        model, project = self.model, self.project
        return np.array([translation_from_dq(frame_pose(model, project(y), "ee")) for y in states])


def reference_ee_positions(config, t, rtol=REFERENCE_RTOL):
    """End-effector positions of an open-loop scenario by the independent computation
    (:class:`ReferenceIntegrator` in one segment).

    Parameters
    ----------
    config : dict, the resolved open-loop scenario (``Scenario.config`` or a result's
        ``manifest["scenario"]``); reads ``[open_loop]`` (frequency, amplitudes)
    t : (n,) output times [s], non-decreasing, from 0 on (the system is at rest at t = 0)
    rtol : float, relative and absolute tolerance of DOP853

    Returns
    -------
    (n, 3) ndarray : the origin of frame ``"ee"`` in the inertial frame [m]

    Raises
    ------
    ValueError : a config without ``[open_loop]``, bad times, a failed integration
    """
    return ReferenceIntegrator(config, rtol).advance(t)
