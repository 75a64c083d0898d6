"""Compiled simulation: whole RK4 loops and batches that do not return to Python per step.

* :func:`simulate_compiled` runs a trajectory with a compiled inputs callback
  (signature :data:`INPUTS_SIG`, see :mod:`dqspace.multibody._sim`) evaluated at
  every RK4 stage, and an optional Python-level ``hook`` called every
  ``hook_every`` steps between compiled chunks — the place for a controller
  that runs at a lower rate in Python (it may update ``params`` and ``mem``
  in place, which the compiled callback reads).
* :func:`simulate_batch` runs many trajectories (states and/or parameter sets)
  in parallel on all cores.
* :func:`forward_dynamics_batch`, :func:`inverse_dynamics_batch` evaluate many
  states at once in parallel.

Writing a callback::

    from numba import njit
    from dqspace.multibody import INPUTS_SIG

    @njit(INPUTS_SIG, cache=True)
    def joint_damping(t, t_step, q, v, params, mem, tau, fext):
        fext[:, :] = 0.0
        tau[:6] = 0.0
        for j in range(6, v.shape[0]):
            tau[j] = -params[0] * v[j]
"""

import numpy as np
from numba import types
from numba.experimental.function_type import _get_wrapper_address
from numba.extending import typeof_impl

from . import _sim, _state
from .integrators import IntegrationError, Trajectory

__all__ = [
    "INPUTS_SIG",
    "no_inputs",
    "simulate_compiled",
    "simulate_batch",
    "BatchTrajectories",
    "forward_dynamics_batch",
    "inverse_dynamics_batch",
    "stack_model_parameters",
]

INPUTS_SIG = _sim.INPUTS_SIG
no_inputs = _sim.no_inputs


class _Compiled(types.WrapperAddressProtocol):
    """A compiled callback's address, resolved once (numba otherwise looks the
    wrapper up again on every call of a loop taking it, ~20 us each)."""

    def __init__(self, fn):
        self._fn = fn  # keep the dispatcher (and its code) alive
        self._addr = _get_wrapper_address(fn, INPUTS_SIG)

    def __wrapper_address__(self):
        return self._addr

    def signature(self):
        return INPUTS_SIG


_INPUTS_TYPE = types.FunctionType(INPUTS_SIG)


@typeof_impl.register(_Compiled)
def _typeof_compiled(val, c):
    """Every resolved callback has the same numba type: built once here instead of at each
    call of the loop (numba's generic rule rebuilds it: ~7 us per call)."""
    return _INPUTS_TYPE


_RESOLVED = {}


def _callback(fn):
    """The inputs callback as a resolved function pointer (cached per callback)."""
    fn = _sim.no_inputs if fn is None else fn
    try:
        return _RESOLVED[fn]
    except KeyError:
        if not hasattr(fn, "get_compile_result") and not hasattr(fn, "__wrapper_address__"):
            raise ValueError(
                "inputs must be a numba function compiled with INPUTS_SIG "
                f"(@njit(INPUTS_SIG)), got {type(fn).__name__}"
            ) from None
        _RESOLVED[fn] = w = fn if hasattr(fn, "__wrapper_address__") else _Compiled(fn)
        return w


def _f64(x, name):
    a = np.ascontiguousarray(x, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains non-finite values")
    return a


def _status_error(status, t):
    if status == _sim.SINGULAR:
        return IntegrationError(f"mass matrix not positive-definite at t = {t:.6g} s")
    return IntegrationError(f"state turned non-finite at t = {t:.6g} s")


def simulate_compiled(
    model,
    q0,
    v0,
    *,
    dt,
    n_steps,
    inputs=None,
    params=None,
    mem=None,
    record_every=1,
    t0=0.0,
    hook=None,
    hook_every=None,
):
    """Fixed-step Lie-group RK4 run in compiled chunks.

    Parameters
    ----------
    inputs : numba function compiled with ``INPUTS_SIG``, optional (default: no inputs)
    params : (P,) float array read by the callback (may be changed by ``hook``)
    mem : (M,) float array the callback may write (its memory)
    record_every : int, keep every k-th state (the initial state is always kept)
    hook : callable ``hook(t, q, v, params, mem)``, optional
        Python-level controller called before each chunk of ``hook_every`` steps.

    Returns
    -------
    Trajectory (t, q, v) at the recorded steps.  If the integration fails,
    :class:`IntegrationError` is raised; its ``partial`` attribute holds the
    trajectory up to the last good step.
    """
    q = _state.configuration(model, q0, "q0").copy()
    v = _state.vector(v0, "v0", model.nv).copy()
    if not dt > 0 or not np.isfinite(dt):
        raise ValueError(f"dt must be positive and finite, got {dt}")
    n_steps, record_every = int(n_steps), int(record_every)
    if record_every < 1:
        raise ValueError(f"record_every must be >= 1, got {record_every}")
    inputs = _callback(inputs)
    params = _f64(np.zeros(0) if params is None else params, "params")
    mem = np.zeros(0) if mem is None else mem
    if not (isinstance(mem, np.ndarray) and mem.dtype == np.float64 and mem.flags.c_contiguous):
        raise ValueError("mem must be a C-contiguous float64 array (the callback writes it)")
    chunk = n_steps if hook is None else int(hook_every or 1)
    if chunk % record_every and hook is not None:
        raise ValueError("hook_every must be a multiple of record_every")
    ts, qs, vs = [t0], [q.copy()], [v.copy()]
    done = 0
    while done < n_steps:
        n = min(chunk, n_steps - done)
        t = t0 + done * dt
        if hook is not None:
            hook(t, q, v, params, mem)
        rows = n // record_every
        Q = np.empty((max(rows, 1), model.nq))
        V = np.empty((max(rows, 1), model.nv))
        status, steps = _sim.rk4_loop(
            model._ints,
            model._reals,
            model.gravity,
            q,
            v,
            t,
            dt,
            n,
            record_every,
            inputs,
            params,
            mem,
            Q,
            V,
        )
        good = steps // record_every
        for r in range(good):
            ts.append(t + (r + 1) * record_every * dt)
            qs.append(Q[r])
            vs.append(V[r])
        if status != _sim.OK:
            err = _status_error(status, t + steps * dt)
            err.partial = Trajectory(np.array(ts), np.array(qs), np.array(vs))
            raise err
        if good:
            q, v = Q[good - 1].copy(), V[good - 1].copy()
        done += n
        if n % record_every:  # keep the exact final state even if not a record step
            raise ValueError("n_steps must be a multiple of record_every")
    return Trajectory(np.array(ts), np.array(qs), np.array(vs))


class BatchTrajectories:
    """Trajectories of :func:`simulate_batch`.

    Attributes
    ----------
    t : (R,) times of the records [s]
    q : (B, R, nq), v : (B, R, nv)
    status : (B,) 0 = ok, 1 = singular mass matrix, 2 = non-finite state
    steps : (B,) steps completed by each trajectory
    """

    def __init__(self, t, q, v, status, steps):
        self.t, self.q, self.v, self.status, self.steps = t, q, v, status, steps

    @property
    def ok(self):
        """(B,) True where the trajectory completed."""
        return self.status == _sim.OK


def simulate_batch(
    model,
    Q0,
    V0,
    *,
    dt,
    n_steps,
    inputs=None,
    params=None,
    mem=None,
    record_every=1,
    t0=0.0,
    reals=None,
):
    """Many independent trajectories in parallel (both cores), one compiled call.

    Parameters
    ----------
    Q0 : (B, nq), V0 : (B, nv) initial states
    params : (B, P) per-trajectory parameters for the callback (or (P,), shared)
    mem : (B, M) per-trajectory callback memory (written)
    reals : (B, nb, 24), optional per-trajectory model parameters (the packed
        ``model._reals`` of models with the same topology, e.g. from
        :func:`stack_model_parameters`) for parameter sweeps over masses/inertias
    """
    Q0 = np.ascontiguousarray(Q0, dtype=np.float64)
    V0 = np.ascontiguousarray(V0, dtype=np.float64)
    B = Q0.shape[0]
    if Q0.shape != (B, model.nq) or V0.shape != (B, model.nv):
        raise ValueError(
            f"Q0 must be (B, {model.nq}) and V0 (B, {model.nv}); got {Q0.shape}, {V0.shape}"
        )
    for i in range(B):
        _state.configuration(model, Q0[i], f"Q0[{i}]")
        _state.vector(V0[i], f"V0[{i}]", model.nv)
    n_steps, record_every = int(n_steps), int(record_every)
    if n_steps % record_every:
        raise ValueError("n_steps must be a multiple of record_every")
    params = np.zeros((B, 0)) if params is None else np.asarray(params, dtype=np.float64)
    if params.ndim == 1:
        params = np.broadcast_to(params, (B, params.shape[0]))
    params = _f64(params, "params")
    mem = np.zeros((B, 0)) if mem is None else np.ascontiguousarray(mem, dtype=np.float64)
    if reals is None:
        reals = np.broadcast_to(model._reals, (B, *model._reals.shape))
    reals = np.ascontiguousarray(reals, dtype=np.float64)
    if reals.shape != (B, *model._reals.shape):
        raise ValueError(f"reals must have shape (B, nb, 24) = ({B}, {model.nb}, 24)")
    rows = n_steps // record_every
    Q = np.empty((B, rows + 1, model.nq))
    V = np.empty((B, rows + 1, model.nv))
    Q[:, 0], V[:, 0] = Q0, V0
    st = np.zeros((B, 2), dtype=np.int64)
    inputs = _callback(inputs)
    Qw = np.empty((B, max(rows, 1), model.nq))
    Vw = np.empty((B, max(rows, 1), model.nv))
    _sim.rk4_batch(
        model._ints,
        reals,
        model.gravity,
        Q0,
        V0,
        float(t0),
        float(dt),
        n_steps,
        record_every,
        inputs,
        params,
        mem,
        Qw,
        Vw,
        st,
    )
    Q[:, 1:], V[:, 1:] = Qw[:, :rows], Vw[:, :rows]
    t = t0 + dt * record_every * np.arange(rows + 1)
    return BatchTrajectories(t, Q, V, st[:, 0], st[:, 1])


def stack_model_parameters(models):
    """(B, nb, 24) packed parameters of models that share one topology (for simulate_batch)."""
    base = models[0]
    for m in models[1:]:
        if not (np.array_equal(m._ints, base._ints)):
            raise ValueError("all models must have the same topology and joint types")
    return np.stack([m._reals for m in models])


def forward_dynamics_batch(model, Q, V, TAU):
    """Accelerations (B, nv) for B states at once, in parallel (no external wrenches)."""
    Q, V, TAU = (_f64(x, n) for x, n in ((Q, "Q"), (V, "V"), (TAU, "TAU")))
    B = Q.shape[0]
    if Q.shape != (B, model.nq) or V.shape != (B, model.nv) or TAU.shape != (B, model.nv):
        raise ValueError(f"Q must be (B, {model.nq}), V and TAU (B, {model.nv})")
    A = np.empty((B, model.nv))
    chunks = _sim.batch_chunks(Q.shape[0])
    if not _sim.forward_dynamics_batch(
        model._ints, model._reals, model.gravity, Q, V, TAU, A, chunks
    ):
        raise ValueError("the mass matrix is not positive-definite for some state")
    return A


def inverse_dynamics_batch(model, Q, V, A):
    """Generalized forces (B, nv) for B states at once, in parallel (no external wrenches)."""
    Q, V, A = (_f64(x, n) for x, n in ((Q, "Q"), (V, "V"), (A, "A")))
    B = Q.shape[0]
    if Q.shape != (B, model.nq) or V.shape != (B, model.nv) or A.shape != (B, model.nv):
        raise ValueError(f"Q must be (B, {model.nq}), V and A (B, {model.nv})")
    TAU = np.empty((B, model.nv))
    chunks = _sim.batch_chunks(Q.shape[0])
    _sim.inverse_dynamics_batch(model._ints, model._reals, model.gravity, Q, V, A, TAU, chunks)
    return TAU
