"""Integration on the configuration manifold: the map q (+) v dt, fixed-step Lie-group
RK4, and an adaptive integrator around scipy's ``solve_ivp``.

The base pose is a unit dual quaternion and stays one: both integrators work
in local coordinates ``q(t) = q_ref (+) theta(t)`` with the exact rates
``theta_dot = dexpinv(theta, v)`` (see :func:`dqspace.multibody.kernels.dexpinv`)
and map back with the group exponential, so unit length is never restored by
normalising after the fact.

Inputs (generalized forces and external wrenches) are functions of time only
within a step: ``inputs(t) -> tau`` or ``-> (tau, f_ext)``.  A state-feedback
controller acts through a zero-order hold between steps (``controller`` with
its own period), as a digital controller does.  A state that turns
non-finite stops the integration with :class:`IntegrationError` naming the
time and the component.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._jit import compiled
from ..dq import dq_mul, dq_screw_log, quat_log, quat_mul
from . import _state
from . import kernels as K
from .dynamics import forward_dynamics
from .kernels import sim as _sim
from .model import Model

__all__ = [
    "integrate",
    "difference",
    "state_derivative",
    "IntegrationError",
    "Trajectory",
    "rk4_step",
    "simulate_rk4",
    "simulate_adaptive",
]


class IntegrationError(RuntimeError):
    """The integration could not continue (non-finite state, singular mass matrix)."""


def integrate(model: Model, q: ArrayLike, v: ArrayLike, dt: float = 1.0) -> NDArray[np.float64]:
    """``q (+) v dt``: the configuration reached from q under the constant velocity v after dt.

    Free joint: ``q^ o screw_exp(1/2 v dt)``; spherical: ``q o exp(1/2 w dt)``;
    revolute and prismatic: ``q + v dt``.
    """
    q = _state.configuration(model, q)
    v = _state.vector(v, "v", model.nv)
    dt = _finite(dt, "dt")
    out = np.empty(model.nq)
    K.integrate(model._ints, q, v, dt, out)
    _state.finite_result(model, "integrate", (out,), q=q, v=v, dt=dt)
    return out


def _finite(x, name, positive=False):
    """A finite float (positive if asked), or a ValueError naming it (also for a string)."""
    try:
        if isinstance(x, (str, bytes, bool, np.bool_)):
            raise TypeError
        x = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {x!r}") from None
    if not np.isfinite(x) or (positive and x <= 0):
        raise ValueError(f"{name} must be {'positive and ' if positive else ''}finite, got {x}")
    return x


def _positive_int(x, name):
    """A positive integer (Python or numpy; not a float, not a bool), or a ValueError naming it."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) or x < 1:
        raise ValueError(f"{name} must be a positive integer, got {x!r}")
    return int(x)


def difference(model: Model, q0: ArrayLike, q1: ArrayLike) -> NDArray[np.float64]:
    """The velocity v with ``integrate(model, q0, v, 1) == q1`` (the manifold logarithm)."""
    q0 = _state.configuration(model, q0, "q0")
    q1 = _state.configuration(model, q1, "q1")
    v = np.zeros(model.nv)
    for k in range(model.nb):
        t = int(model.joint_type[k])
        qs, vs = model.q_slice(k), model.v_slice(k)
        if t == K.FREE:
            a, b = q0[qs], q1[qs]
            d = dq_mul(np.r_[a[0], -a[1:4], a[4], -a[5:8]], b)
            v[vs] = 2.0 * dq_screw_log(d if d[0] >= 0 else -d)
        elif t == K.SPHERICAL:
            a, b = q0[qs], q1[qs]
            d = quat_mul(np.r_[a[0], -a[1:4]], b)
            v[vs] = 2.0 * quat_log(d if d[0] >= 0 else -d)
        else:
            v[vs] = q1[qs] - q0[qs]
    return v


def _inputs_at(model, inputs, t):
    """(tau, f_ext) from an inputs spec: None, an array, or a callable of t."""
    u = inputs(t) if callable(inputs) else inputs
    if u is None:
        return np.zeros(model.nv), np.zeros((model.nb, 6))
    if isinstance(u, tuple):
        tau, f_ext = u
        return _state.vector(tau, "tau", model.nv), _state.wrenches(model, f_ext)
    return _state.vector(u, "tau", model.nv), np.zeros((model.nb, 6))


def state_derivative(
    model: Model,
    q: ArrayLike,
    v: ArrayLike,
    tau: ArrayLike | None = None,
    f_ext: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(v, a)``: the rates of the state; a from the forward dynamics."""
    tau = np.zeros(model.nv) if tau is None else tau
    return np.asarray(v, float).copy(), forward_dynamics(model, q, v, tau, f_ext)


@dataclass(frozen=True)
class Trajectory:
    """A simulated trajectory.

    Attributes
    ----------
    t : (N,) times [s]
    q : (N, nq) configurations
    v : (N, nv) velocities
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray


def _guard(model, t, q, v):
    bad = np.flatnonzero(~np.isfinite(q))
    if bad.size:
        raise IntegrationError(f"state turned non-finite at t = {t:.6g} s: q[{bad[0]}]")
    bad = np.flatnonzero(~np.isfinite(v))
    if bad.size:
        raise IntegrationError(f"state turned non-finite at t = {t:.6g} s: v[{bad[0]}]")


def rk4_step(
    model: Model,
    q: ArrayLike,
    v: ArrayLike,
    dt: float,
    inputs: Callable | None = None,
    t: float = 0.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One Lie-group RK4 step of length dt from time t; returns (q, v)."""
    q = _state.configuration(model, q)
    v = _state.vector(v, "v", model.nv)
    return _step(model, q, v, _finite(dt, "dt", positive=True), inputs, _finite(t, "t"))


def _step(model, q, v, dt, inputs, t):
    """One RK4 step with inputs sampled (in Python) at t, t + dt/2, t + dt."""
    nv, nb = model.nv, model.nb
    params = np.empty(2 + 3 * nv + 18 * nb)
    params[0], params[1] = t, dt
    for i, s in enumerate((0.0, 0.5, 1.0)):
        tau, f = _inputs_at(model, inputs, t + s * dt)
        params[2 + i * nv : 2 + (i + 1) * nv] = tau
        params[2 + 3 * nv + 6 * nb * i : 2 + 3 * nv + 6 * nb * (i + 1)] = f.reshape(-1)
    q1 = np.empty(model.nq)
    v1 = np.empty(nv)
    status = _sim.rk4_step(
        model._ints,
        model._reals,
        model.gravity,
        q,
        v,
        t,
        dt,
        compiled(_sim.sampled_inputs),
        params,
        _EMPTY,
        q1,
        v1,
    )
    _raise_status(status, t, dt, q1, v1)
    return q1, v1


_EMPTY = np.zeros(0)


def _raise_status(status, t, dt, q1, v1):
    if status == _sim.NONFINITE:
        _guard(None, t + dt, q1, v1)
        raise IntegrationError(f"state turned non-finite at t = {t + dt:.6g} s")
    if status == _sim.SINGULAR:
        raise IntegrationError(f"mass matrix not positive-definite at t = {t:.6g} s")


def simulate_rk4(
    model: Model,
    q0: ArrayLike,
    v0: ArrayLike,
    *,
    dt: float,
    n_steps: int,
    inputs: Callable | None = None,
    controller: Callable | None = None,
    control_every: int = 1,
    record_every: int = 1,
) -> Trajectory:
    """Fixed-step Lie-group RK4 from (q0, v0).

    Parameters
    ----------
    dt : float, step [s], positive and finite
    n_steps : int, positive (Python or numpy integer; a float is refused, not truncated)
    inputs : None, (nv,) array, or callable ``inputs(t) -> tau | (tau, f_ext)``
        Open-loop inputs, sampled at the RK4 stage times.
    controller : callable ``controller(t, q, v) -> tau | (tau, f_ext)``, optional
        Feedback law evaluated every ``control_every`` steps and held
        (zero-order hold); added to ``inputs``.
    control_every : int, positive; steps between two evaluations of ``controller``
    record_every : int, positive; keep every k-th state (the last state is always kept)

    Returns
    -------
    Trajectory
    """
    q = _state.configuration(model, q0, "q0")
    v = _state.vector(v0, "v0", model.nv)
    dt = _finite(dt, "dt", positive=True)
    n_steps = _positive_int(n_steps, "n_steps")
    control_every = _positive_int(control_every, "control_every")
    record_every = _positive_int(record_every, "record_every")
    held = (np.zeros(model.nv), np.zeros((model.nb, 6)))

    def total(t):
        tau, f = _inputs_at(model, inputs, t)
        return tau + held[0], f + held[1]

    ts, qs, vs = [0.0], [q], [v]
    for n in range(n_steps):
        t = n * dt
        if controller is not None and n % control_every == 0:
            held = _inputs_at(model, controller(t, q, v), t)
        q, v = _step(model, q, v, dt, total, t)
        if (n + 1) % record_every == 0 or n + 1 == n_steps:
            ts.append((n + 1) * dt)
            qs.append(q)
            vs.append(v)
    return Trajectory(np.array(ts), np.array(qs), np.array(vs))


def simulate_adaptive(
    model: Model,
    q0: ArrayLike,
    v0: ArrayLike,
    t_span: tuple[float, float],
    *,
    inputs: Callable | None = None,
    t_eval: ArrayLike | None = None,
    rtol: float = 1e-8,
    atol: float = 1e-8,
    max_step: float = np.inf,
    method: str = "RK45",
) -> Trajectory:
    """Adaptive integration with ``scipy.integrate.solve_ivp`` on the manifold.

    The state is ``(theta, v)`` in local coordinates around a reference
    configuration that is moved to the current state at every output time
    (re-anchoring keeps theta small), so the base pose stays a unit dual
    quaternion.  Returns the states at ``t_eval`` (default: 101 points).
    """
    q_ref = _state.configuration(model, q0, "q0").copy()
    v = _state.vector(v0, "v0", model.nv).copy()
    if len(t_span) != 2:
        raise ValueError(f"t_span must be (t0, t1), got {t_span}")
    t0, t1 = _finite(t_span[0], "t_span[0]"), _finite(t_span[1], "t_span[1]")
    if not t1 > t0:
        raise ValueError(f"t_span must have t1 > t0, got {t_span}")
    t_eval = np.linspace(t0, t1, 101) if t_eval is None else _state.real_array(t_eval, "t_eval")
    if (
        t_eval.ndim != 1
        or not np.all(np.isfinite(t_eval))
        or np.any(np.diff(t_eval) < 0)
        or t_eval[0] < t0
        or t_eval[-1] > t1
    ):
        raise ValueError("t_eval must be finite, non-decreasing and inside t_span")
    nv = model.nv
    qbuf = np.empty(model.nq)
    dth = np.empty(nv)

    def rhs(t, y):
        th, vel = y[:nv], y[nv:]
        if not np.all(np.isfinite(y)):
            i = int(np.flatnonzero(~np.isfinite(y))[0])
            name = f"theta[{i}]" if i < nv else f"v[{i - nv}]"
            raise IntegrationError(f"state turned non-finite at t = {t:.6g} s: {name}")
        K.integrate(model._ints, q_ref, th, 1.0, qbuf)
        K.dexpinv(model._ints, th, vel, dth)
        tau, f = _inputs_at(model, inputs, t)
        return np.concatenate([dth, forward_dynamics(model, qbuf, vel, tau, f)])

    from scipy.integrate import solve_ivp  # here, not at import: it takes ~0.2 s

    ts, qs, vs = [], [], []
    t = t0
    first_step = None
    for te in t_eval:
        if te > t:
            sol = solve_ivp(
                rhs,
                (t, te),
                np.concatenate([np.zeros(nv), v]),
                method=method,
                rtol=rtol,
                atol=atol,
                max_step=max_step,
                first_step=first_step,
            )
            if not sol.success:
                raise IntegrationError(f"solve_ivp failed at t = {sol.t[-1]:.6g} s: {sol.message}")
            y = sol.y[:, -1]
            if len(sol.t) > 1:
                first_step = min(float(sol.t[-1] - sol.t[-2]), max_step)
            K.integrate(model._ints, q_ref, y[:nv], 1.0, qbuf)
            q_ref = qbuf.copy()
            v = y[nv:].copy()
            _guard(model, te, q_ref, v)
            t = te
        ts.append(t)
        qs.append(q_ref.copy())
        vs.append(v.copy())
    return Trajectory(np.array(ts), np.array(qs), np.array(vs))
