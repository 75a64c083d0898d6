"""Compiled time stepping: Lie-group RK4 with compiled input callbacks, whole loops, batches.

An *inputs callback* is a numba function compiled with the signature
:data:`INPUTS_SIG`::

    @numba.njit(INPUTS_SIG, cache=True)
    def my_inputs(t, t_step, q, v, params, mem, tau, fext):
        # fill tau (nv,) and fext (nb, 6) for time t and state (q, v);
        # params: read-only parameters, mem: the callback's own mutable memory
        ...

It is called at every RK4 stage with that stage's time ``t`` and state, so a
servo loop written as a callback is a continuous-time law.  ``t_step`` is the
start time of the RK4 step the stage belongs to: an input that must stay
constant over whole steps (a thruster pulse switched on step boundaries, a
zero-order-hold command) decides from ``t_step``, since the last stage of a
step and the first of the next share the same ``t``.
The loops here are compiled once for that function *type* (not for each
callback) and cached on disk, so a new callback costs only its own
compilation.
"""

import numpy as np
from numba import get_num_threads, njit, prange, types

from ..._jit import NativeFunctionType, lazy_njit
from .articulated import _aba as forward_dynamics  # the one forward dynamics of the integrators
from .configuration import dexpinv, integrate
from .layout import ABA_WIDTH
from .newton_euler import rnea


def _ro(dtype, ndim):
    return types.Array(dtype, ndim, "C", readonly=True)


_I2 = _ro(types.int64, 2)  # model arrays are read-only
_R2 = _ro(types.float64, 2)
_R3 = _ro(types.float64, 3)
_RV = _ro(types.float64, 1)  # read-only inputs (q, v, params)
_RM = _ro(types.float64, 2)
_V = types.float64[::1]
_M = types.float64[:, ::1]

#: Signature of an inputs callback: (t, t_step, q, v, params, mem, tau_out, fext_out) -> None.
#: q, v and params are read-only; mem, tau_out and fext_out are written.
INPUTS_SIG = types.void(types.float64, types.float64, _RV, _RV, _RV, _V, _V, _M)
InputsFn = NativeFunctionType(INPUTS_SIG)

OK, SINGULAR, NONFINITE = 0, 1, 2


@lazy_njit(INPUTS_SIG, cache=True)
def no_inputs(t, t_step, q, v, params, mem, tau, fext):
    """Zero generalized forces and external wrenches."""
    tau[:] = 0.0
    fext[:, :] = 0.0


@lazy_njit(INPUTS_SIG, cache=True)
def sampled_inputs(t, t_step, q, v, params, mem, tau, fext):
    """Inputs sampled at t0, t0 + dt/2, t0 + dt: params = [t0, dt, tau (3, nv), fext (3, nb, 6)]."""
    nv = tau.shape[0]
    nb = fext.shape[0]
    t0, dt = params[0], params[1]
    s = int(round(2.0 * (t - t0) / dt))
    s = min(max(s, 0), 2)
    base = 2 + s * nv
    for j in range(nv):
        tau[j] = params[base + j]
    base = 2 + 3 * nv + s * nb * 6
    for k in range(nb):
        for j in range(6):
            fext[k, j] = params[base + 6 * k + j]


@njit(cache=True)
def _workspace(nq, nv, nb):
    """The arrays one RK4 step works in (allocated once per trajectory, reused by every step):
    stage rates kq, kv (4, nv); theta, the stage velocity, the stage configuration; the
    inputs tau, fext; the acceleration; the articulated-body workspace W."""
    return (
        np.empty((4, nv)),
        np.empty((4, nv)),
        np.empty(nv),
        np.empty(nv),
        np.empty(nq),
        np.empty(nv),
        np.empty((nb, 6)),
        np.empty(nv),
        np.empty((nb + 2, ABA_WIDTH)),
    )


@njit(cache=True, _nrt=False, fastmath={"contract"})
def _rk4(ints, reals, gravity, q, v, t, dt, inputs, params, mem, q_out, v_out, ws):
    """One step of Lie-group RK4 (Munthe-Kaas) in local coordinates around q (see rk4_step).

    Compiled without reference counting (``_nrt=False``, the rule of the
    module docstring of :mod:`.frames`: no allocation here, every array is owned by the caller,
    the workspace ``ws`` by ``rk4_step`` / ``rk4_loop``): counting the ~20 arrays
    it passes on would cost about 0.5 us of a 4 us step.
    """
    kq, kv, th, vs, qs, tau, fext, acc, W = ws
    nv = v.shape[0]
    nq = q.shape[0]
    ok = True
    for s in range(4):
        if s == 0:
            ts = t
            for j in range(nq):
                qs[j] = q[j]
            for j in range(nv):
                vs[j] = v[j]
                kq[0, j] = v[j]
        else:
            h = dt if s == 3 else 0.5 * dt
            ts = t + h
            for j in range(nv):
                th[j] = h * kq[s - 1, j]
                vs[j] = v[j] + h * kv[s - 1, j]
            integrate(ints, q, th, 1.0, qs)
            dexpinv(ints, th, vs, kq[s])
        inputs(ts, t, qs, vs, params, mem, tau, fext)
        ok &= forward_dynamics(ints, reals, gravity, qs, vs, tau, fext, acc, W)
        for j in range(nv):
            kv[s, j] = acc[j]
    c = dt / 6.0
    finite = True
    for j in range(nv):
        th[j] = c * (kq[0, j] + 2.0 * kq[1, j] + 2.0 * kq[2, j] + kq[3, j])
        v_out[j] = v[j] + c * (kv[0, j] + 2.0 * kv[1, j] + 2.0 * kv[2, j] + kv[3, j])
        finite &= np.isfinite(v_out[j]) and np.isfinite(th[j])
    integrate(ints, q, th, 1.0, q_out)
    for j in range(nq):
        finite &= np.isfinite(q_out[j])
    if not finite:
        return NONFINITE
    return OK if ok else SINGULAR


@lazy_njit(
    types.int64(_I2, _R2, _RV, _RV, _RV, types.float64, types.float64, InputsFn, _RV, _V, _V, _V),
    cache=True,
)
def rk4_step(ints, reals, gravity, q, v, t, dt, inputs, params, mem, q_out, v_out):
    """One step of Lie-group RK4 (Munthe-Kaas) in local coordinates around q.

    ``q(t) = q (+) theta(t)``, ``theta' = dexpinv(theta, v)`` (exact), classical
    RK4 on ``(theta, v)`` from ``theta = 0``, then ``q_out = q (+) theta(dt)``:
    the base pose stays a unit dual quaternion by construction.  Returns
    OK, SINGULAR (articulated inertia not positive-definite) or NONFINITE.
    """
    ws = _workspace(q.shape[0], v.shape[0], ints.shape[0])
    return _rk4(ints, reals, gravity, q, v, t, dt, inputs, params, mem, q_out, v_out, ws)


#: :func:`rk4_loop`'s signature (a compiled loop may take it as a pointer of this type)
RK4_LOOP_SIG = types.UniTuple(types.int64, 2)(
    _I2, _R2, _RV, _RV, _RV, types.float64, types.float64, types.int64, types.int64,
    InputsFn, _RV, _V, _M, _M,
)  # fmt: skip


@lazy_njit(RK4_LOOP_SIG, cache=True)
def rk4_loop(
    ints, reals, gravity, q0, v0, t0, dt, n_steps, record_every, inputs, params, mem, Q, V
):
    """``n_steps`` RK4 steps without returning to Python.

    Rows of Q (., nq) and V (., nv) receive the state after every
    ``record_every``-th step (row 0 is the state after the first record).
    Returns (status, steps done); on a failure the rows written so far are valid
    and the failing step is not recorded.
    """
    nq = q0.shape[0]
    nv = v0.shape[0]
    q = q0.copy()
    v = v0.copy()
    q1 = np.empty(nq)
    v1 = np.empty(nv)
    ws = _workspace(nq, nv, ints.shape[0])
    row = 0
    for n in range(n_steps):
        status = _rk4(ints, reals, gravity, q, v, t0 + n * dt, dt, inputs, params, mem, q1, v1, ws)
        if status != OK:
            return status, n
        for j in range(nq):
            q[j] = q1[j]
        for j in range(nv):
            v[j] = v1[j]
        if (n + 1) % record_every == 0:
            for j in range(nq):
                Q[row, j] = q[j]
            for j in range(nv):
                V[row, j] = v[j]
            row += 1
    return OK, n_steps


@lazy_njit(
    types.void(
        _I2,
        _R3,
        _RV,
        _RM,
        _RM,
        types.float64,
        types.float64,
        types.int64,
        types.int64,
        InputsFn,
        _RM,
        _M,
        types.float64[:, :, ::1],
        types.float64[:, :, ::1],
        types.int64[:, ::1],
    ),
    cache=True,
    parallel=True,
)
def rk4_batch(
    ints,
    reals_b,
    gravity,
    Q0,
    V0,
    t0,
    dt,
    n_steps,
    record_every,
    inputs,
    params_b,
    mem_b,
    Q,
    V,
    status,
):
    """Independent trajectories in parallel (one per row of Q0 / reals_b / params_b).

    ``status[i] = (status, steps done)`` of trajectory i.
    """
    for i in prange(Q0.shape[0]):
        s, n = rk4_loop(
            ints,
            reals_b[i],
            gravity,
            Q0[i],
            V0[i],
            t0,
            dt,
            n_steps,
            record_every,
            inputs,
            params_b[i],
            mem_b[i],
            Q[i],
            V[i],
        )
        status[i, 0] = s
        status[i, 1] = n


def batch_chunks(n):
    """How many contiguous chunks the batch kernels split n states into: one per thread
    (numba's prange schedules statically), each with one workspace for all its states."""
    return max(1, min(n, get_num_threads()))


@lazy_njit(types.boolean(_I2, _R2, _RV, _RM, _RM, _RM, _M, types.int64), cache=True, parallel=True)
def forward_dynamics_batch(ints, reals, gravity, Q, V, TAU, A, m):
    """Forward dynamics of many states in parallel, in m chunks (:func:`batch_chunks`);
    no external wrenches.  False if any failed."""
    nb = ints.shape[0]
    n = Q.shape[0]
    ok = np.ones(n, dtype=np.bool_)
    fext = np.zeros((0, 6))  # none
    size = (n + m - 1) // m
    for c in prange(m):
        W = np.empty((nb + 2, ABA_WIDTH))
        for i in range(c * size, min(n, (c + 1) * size)):
            ok[i] = forward_dynamics(ints, reals, gravity, Q[i], V[i], TAU[i], fext, A[i], W)
    return ok.all()


@lazy_njit(types.void(_I2, _R2, _RV, _RM, _RM, _RM, _M, types.int64), cache=True, parallel=True)
def inverse_dynamics_batch(ints, reals, gravity, Q, V, A, TAU, m):
    """Inverse dynamics of many states in parallel, in m chunks; no external wrenches."""
    nb = ints.shape[0]
    n = Q.shape[0]
    size = (n + m - 1) // m
    for c in prange(m):
        fext = np.zeros((nb, 6))
        force = np.empty((nb, 6))
        for i in range(c * size, min(n, (c + 1) * size)):
            rnea(ints, reals, gravity, Q[i], V[i], A[i], fext, TAU[i], force)
