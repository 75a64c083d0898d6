"""Compiled simulation: whole RK4 loops and batches that do not return to Python per step.

* :func:`simulate_compiled` runs a trajectory with a compiled inputs callback
  (signature :data:`INPUTS_SIG`, see :mod:`dqspace.multibody.kernels.sim`) evaluated at
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

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._jit import KernelPointer, LazyKernel, compiled
from . import _state
from .integrators import IntegrationError, Trajectory, _finite, _positive_int
from .kernels import sim as _sim
from .model import Model

__all__ = [
    "INPUTS_SIG",
    "resolve_inputs",
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


_RESOLVED = {}


def resolve_inputs(fn):
    """The inputs callback ``fn`` (a numba function compiled with :data:`INPUTS_SIG`, or None
    for no inputs) as a resolved :class:`~dqspace._jit.KernelPointer`: what a
    compiled loop that calls ``rk4_loop`` takes (cached per callback)."""
    fn = _sim.no_inputs if fn is None else fn
    if isinstance(fn, LazyKernel) and fn._signature != INPUTS_SIG:
        raise ValueError(
            f"inputs must be compiled with INPUTS_SIG, got {fn.py_func.__name__} with "
            f"{fn._signature}"
        )
    if not isinstance(fn, LazyKernel):  # a lazy kernel is compiled at the first call
        fn = compiled(fn)
    try:
        return _RESOLVED[fn]
    except KeyError:
        if not isinstance(fn, LazyKernel) and not (
            hasattr(fn, "get_compile_result") or hasattr(fn, "__wrapper_address__")
        ):
            raise ValueError(
                "inputs must be a numba function compiled with INPUTS_SIG "
                f"(@njit(INPUTS_SIG)), got {type(fn).__name__}"
            ) from None
        _RESOLVED[fn] = w = fn if isinstance(fn, KernelPointer) else KernelPointer(fn, INPUTS_SIG)
        return w


def _f64(x, name, ndim=None):
    """x as a finite C-contiguous float64 array (of ``ndim`` dimensions if given)."""
    a = np.ascontiguousarray(_state.real_array(x, name))
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        at = "".join(f"[{i}]" for i in bad)
        raise ValueError(f"{name}{at} is not finite ({a[bad]})")
    return a


def _memory(mem, shape, name="mem"):
    """The callback's memory: the caller's own C-contiguous, writable float64 array."""
    if mem is None:
        return np.zeros(shape)
    if not (
        isinstance(mem, np.ndarray)
        and mem.dtype == np.float64
        and mem.flags.c_contiguous
        and mem.flags.writeable
    ):
        raise ValueError(
            f"{name} must be a C-contiguous, writable float64 array (the callback writes it)"
        )
    if mem.ndim != len(shape) or mem.shape[:-1] != shape[:-1]:
        want = "(M,)" if len(shape) == 1 else f"({shape[0]}, M)"
        raise ValueError(f"{name} must have shape {want}, got {mem.shape}")
    return mem


def _steps(n_steps, record_every):
    """Checked (n_steps, record_every): positive integers, n_steps a multiple of record_every."""
    n_steps = _positive_int(n_steps, "n_steps")
    record_every = _positive_int(record_every, "record_every")
    if n_steps % record_every:
        raise ValueError(f"n_steps ({n_steps}) must be a multiple of record_every ({record_every})")
    return n_steps, record_every


def _status_error(status, t):
    if status == _sim.SINGULAR:
        return IntegrationError(f"mass matrix not positive-definite at t = {t:.6g} s")
    return IntegrationError(f"state turned non-finite at t = {t:.6g} s")


def simulate_compiled(
    model: Model,
    q0: ArrayLike,
    v0: ArrayLike,
    *,
    dt: float,
    n_steps: int,
    inputs: Any = None,
    params: ArrayLike | None = None,
    mem: ArrayLike | None = None,
    record_every: int = 1,
    t0: float = 0.0,
    hook: Callable | None = None,
    hook_every: int | None = None,
) -> Trajectory:
    """Fixed-step Lie-group RK4 run in compiled chunks.

    Parameters
    ----------
    q0 : (nq,), v0 : (nv,) initial state (any strides; copied)
    dt : float, step [s], positive and finite
    n_steps : int, positive (Python or numpy integer; a float is refused, not truncated)
    inputs : numba function compiled with ``INPUTS_SIG``, optional (default: no inputs)
    params : (P,) float array read by the callback (may be changed by ``hook``)
    mem : (M,) C-contiguous, writable float64 array the callback may write (its memory)
    record_every : int, positive, dividing n_steps; keep every k-th state (the
        initial state is always kept)
    t0 : float, initial time [s]
    hook : callable ``hook(t, q, v, params, mem)``, optional
        Python-level controller called before each chunk of ``hook_every`` steps.
    hook_every : int, positive multiple of record_every (default 1)

    Returns
    -------
    Trajectory (t, q, v) at the recorded steps.  If the integration fails,
    :class:`IntegrationError` is raised; its ``partial`` attribute holds the
    trajectory up to the last good step.
    """
    q = _state.configuration(model, q0, "q0").copy()
    v = _state.vector(v0, "v0", model.nv).copy()
    dt, t0 = _finite(dt, "dt", positive=True), _finite(t0, "t0")
    n_steps, record_every = _steps(n_steps, record_every)
    inputs = resolve_inputs(inputs)
    params = _f64(np.zeros(0) if params is None else params, "params", ndim=1)
    mem = _memory(mem, (0,))
    chunk = n_steps
    if hook is not None:
        if not callable(hook):
            raise ValueError(f"hook must be callable, got {type(hook).__name__}")
        chunk = _positive_int(1 if hook_every is None else hook_every, "hook_every")
        if chunk % record_every:
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

    def __init__(
        self,
        t: NDArray[np.float64],
        q: NDArray[np.float64],
        v: NDArray[np.float64],
        status: NDArray[np.float64],
        steps: NDArray[np.float64],
    ) -> None:
        self.t, self.q, self.v, self.status, self.steps = t, q, v, status, steps

    @property
    def ok(self) -> NDArray[np.bool_]:
        """(B,) True where the trajectory completed."""
        return self.status == _sim.OK


def simulate_batch(
    model: Model,
    Q0: ArrayLike,
    V0: ArrayLike,
    *,
    dt: float,
    n_steps: int,
    inputs: Any = None,
    params: ArrayLike | None = None,
    mem: ArrayLike | None = None,
    record_every: int = 1,
    t0: float = 0.0,
    reals: ArrayLike | None = None,
) -> BatchTrajectories:
    """Many independent trajectories in parallel (both cores), one compiled call.

    Parameters
    ----------
    Q0 : (B, nq), V0 : (B, nv) initial states
    dt : float, step [s], positive and finite
    n_steps, record_every : positive integers, n_steps a multiple of record_every
    params : (B, P) per-trajectory parameters for the callback (or (P,), shared)
    mem : (B, M) per-trajectory callback memory, C-contiguous, writable float64 (written)
    reals : (B, nb, 60), optional per-trajectory model parameters (the packed
        ``model._reals`` of models with the same topology, e.g. from
        :func:`stack_model_parameters`) for parameter sweeps over masses/inertias
    """
    Q0, V0 = _f64(Q0, "Q0", ndim=2), _f64(V0, "V0", ndim=2)
    B = Q0.shape[0]
    if Q0.shape != (B, model.nq) or V0.shape != (B, model.nv):
        raise ValueError(
            f"Q0 must be (B, {model.nq}) and V0 (B, {model.nv}); got {Q0.shape}, {V0.shape}"
        )
    for i in range(B):
        _state.configuration(model, Q0[i], f"Q0[{i}]")
    dt, t0 = _finite(dt, "dt", positive=True), _finite(t0, "t0")
    n_steps, record_every = _steps(n_steps, record_every)
    params = np.zeros((B, 0)) if params is None else _f64(params, "params")
    if params.ndim == 1:
        params = np.ascontiguousarray(np.broadcast_to(params, (B, params.shape[0])))
    if params.ndim != 2 or params.shape[0] != B:
        raise ValueError(f"params must have shape (P,) or ({B}, P), got {params.shape}")
    mem = _memory(mem, (B, 0))
    if reals is None:
        reals = np.broadcast_to(model._reals, (B, *model._reals.shape))
    reals = _f64(reals, "reals")
    if reals.shape != (B, *model._reals.shape):
        raise ValueError(
            f"reals must have shape (B, nb, {model._reals.shape[1]}) = "
            f"({B}, {model.nb}, {model._reals.shape[1]}), got {reals.shape}"
        )
    rows = n_steps // record_every
    Q = np.empty((B, rows + 1, model.nq))
    V = np.empty((B, rows + 1, model.nv))
    Q[:, 0], V[:, 0] = Q0, V0
    st = np.zeros((B, 2), dtype=np.int64)
    inputs = resolve_inputs(inputs)
    Qw = np.empty((B, max(rows, 1), model.nq))
    Vw = np.empty((B, max(rows, 1), model.nv))
    _sim.rk4_batch(
        model._ints,
        reals,
        model.gravity,
        Q0,
        V0,
        t0,
        dt,
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


def stack_model_parameters(models: Sequence[Model]) -> NDArray[np.float64]:
    """(B, nb, 60) packed parameters of models that share one topology (for simulate_batch)."""
    base = models[0]
    for m in models[1:]:
        if not (np.array_equal(m._ints, base._ints)):
            raise ValueError("all models must have the same topology and joint types")
    return np.stack([m._reals for m in models])


def forward_dynamics_batch(
    model: Model, Q: ArrayLike, V: ArrayLike, TAU: ArrayLike
) -> NDArray[np.float64]:
    """Accelerations (B, nv) for B states at once, in parallel (no external wrenches)."""
    Q, V, TAU = (_f64(x, n, ndim=2) for x, n in ((Q, "Q"), (V, "V"), (TAU, "TAU")))
    B = Q.shape[0]
    if Q.shape != (B, model.nq) or V.shape != (B, model.nv) or TAU.shape != (B, model.nv):
        raise ValueError(f"Q must be (B, {model.nq}), V and TAU (B, {model.nv})")
    A = np.empty((B, model.nv))
    chunks = _sim.batch_chunks(Q.shape[0])
    if not _sim.forward_dynamics_batch(
        model._ints, model._reals, model.gravity, Q, V, TAU, A, chunks
    ):
        raise ValueError("the mass matrix is not positive-definite for some state")
    _finite_rows(model, "forward_dynamics_batch", A, q=Q, v=V, tau=TAU)
    return A


def inverse_dynamics_batch(
    model: Model, Q: ArrayLike, V: ArrayLike, A: ArrayLike
) -> NDArray[np.float64]:
    """Generalized forces (B, nv) for B states at once, in parallel (no external wrenches)."""
    Q, V, A = (_f64(x, n, ndim=2) for x, n in ((Q, "Q"), (V, "V"), (A, "A")))
    B = Q.shape[0]
    if Q.shape != (B, model.nq) or V.shape != (B, model.nv) or A.shape != (B, model.nv):
        raise ValueError(f"Q must be (B, {model.nq}), V and A (B, {model.nv})")
    TAU = np.empty((B, model.nv))
    chunks = _sim.batch_chunks(Q.shape[0])
    _sim.inverse_dynamics_batch(model._ints, model._reals, model.gravity, Q, V, A, TAU, chunks)
    _finite_rows(model, "inverse_dynamics_batch", TAU, q=Q, v=V, a=A)
    return TAU


def _finite_rows(model, what, out, **inputs):
    """Raise :func:`_state.overflow_error` for the first non-finite row of out (B, nv)."""
    bad = np.flatnonzero(~np.isfinite(out).all(axis=1))
    if bad.size:
        i = int(bad[0])
        rows = {f"{k.upper()}[{i}]": x[i] for k, x in inputs.items()}
        raise _state.overflow_error(model, f"{what}, state {i}", **rows)
