"""The compiled inputs of a closed-loop run (one callback, evaluated at every RK4 stage).

Within a control period the callback applies:

* the held (zero-order-hold) generalized forces of the arm controller;
* the thrusters' wrench on the base: thruster i pushes with ``on_level[i]``
  during the first ``n_on[i]`` dynamics steps of the period and with
  ``off_level[i]`` afterwards (zero, or a stuck-on thruster's thrust); pulses
  switch on step boundaries, decided from the step's start time ``t_step``;
* a constant disturbance wrench on the base;
* the VSCMG servo loops (continuous-time laws of
  :func:`dqspace.actuators.servo.servo_kernel`, evaluated with the stage's state).

``params`` layout (built by :func:`pack`)::

    [t_tick, dt, nv, S, K,
     tau_hold (nv),
     n_on (S), on_level (S), off_level (S), H (6 S, row-major [f; tau] x S),
     disturbance (6),
     servo: k_g, gimbal_rate_cmd (K), wheel_accel_cmd (K),
            gimbal_q (K), gimbal_v (K), wheel_v (K),
            A_g0 (3K), A_s0 (3K), A_t0 (3K), I_cg (K), I_ws (K), I_s (K), I_t (K)]
"""

import numpy as np

from .._jit import lazy_njit
from ..actuators.servo import servo_kernel
from ..multibody.simulation import INPUTS_SIG

__all__ = ["closed_loop_inputs", "open_loop_inputs", "pack", "Layout"]


class Layout:
    """Offsets into ``params`` for given sizes (nv, S thrusters, K VSCMGs)."""

    def __init__(self, nv, S, K):
        self.nv, self.S, self.K = nv, S, K
        o = 5
        self.tau = o
        o += nv
        self.n_on = o
        o += S
        self.level = o
        o += 2 * S
        self.H = o
        o += 6 * S
        self.dist = o
        o += 6
        self.k_g = o
        o += 1
        self.gr = o
        o += K
        self.wa = o
        o += K
        self.gq = o
        o += K
        self.gv = o
        o += K
        self.wv = o
        o += K
        self.A = o
        o += 9 * K
        self.I = o
        o += 4 * K
        self.size = o


def pack(
    layout,
    *,
    t_tick,
    dt,
    tau_hold,
    n_on,
    on_level,
    off_level,
    H,
    disturbance,
    k_g=0.0,
    gimbal_rate_cmd=None,
    wheel_accel_cmd=None,
    cluster_index=None,
    cluster=None,
    out=None,
):
    """Fill (or create) the ``params`` vector of :func:`closed_loop_inputs`."""
    L = layout
    p = np.zeros(L.size) if out is None else out
    p[0], p[1], p[2], p[3], p[4] = t_tick, dt, L.nv, L.S, L.K
    p[L.tau : L.tau + L.nv] = tau_hold
    if L.S:
        p[L.n_on : L.n_on + L.S] = n_on
        p[L.level : L.level + L.S] = on_level
        p[L.level + L.S : L.level + 2 * L.S] = off_level
        p[L.H : L.H + 6 * L.S] = np.asarray(H, float).reshape(-1)
    p[L.dist : L.dist + 6] = disturbance
    p[L.k_g] = k_g
    K = L.K
    if K:
        p[L.gr : L.gr + K] = gimbal_rate_cmd
        p[L.wa : L.wa + K] = wheel_accel_cmd
        ix = cluster_index
        p[L.gq : L.gq + K] = ix.gimbal_q
        p[L.gv : L.gv + K] = ix.gimbal_v
        p[L.wv : L.wv + K] = ix.wheel_v
        p[L.A : L.A + 3 * K] = cluster.A_g0.reshape(-1)
        p[L.A + 3 * K : L.A + 6 * K] = cluster.A_s0.reshape(-1)
        p[L.A + 6 * K : L.A + 9 * K] = cluster.A_t0.reshape(-1)
        p[L.I : L.I + K] = cluster.I_cg
        p[L.I + K : L.I + 2 * K] = cluster.I_ws
        p[L.I + 2 * K : L.I + 3 * K] = cluster.I_s
        p[L.I + 3 * K : L.I + 4 * K] = cluster.I_t
    return p


@lazy_njit(INPUTS_SIG, cache=True)
def closed_loop_inputs(t, t_step, q, v, params, mem, tau, fext):
    """Arm torques (held), thruster pulses, disturbance, VSCMG servos; see module docstring."""
    t_tick, dt = params[0], params[1]
    nv, S, K = int(params[2]), int(params[3]), int(params[4])
    o = 5
    for j in range(nv):
        tau[j] = params[o + j]
    o += nv
    fext[:, :] = 0.0
    step = int(np.floor((t_step - t_tick) / dt + 0.5))
    o_on, o_lv, o_off, o_H = o, o + S, o + 2 * S, o + 3 * S
    for i in range(S):
        f = params[o_lv + i] if step < params[o_on + i] else params[o_off + i]
        if f != 0.0:
            for r in range(6):
                fext[0, r] += f * params[o_H + r * S + i]
    o = o_H + 6 * S
    for r in range(6):
        fext[0, r] += params[o + r]
    o += 6
    if K == 0:
        return
    k_g = params[o]
    o += 1
    gr = params[o : o + K]
    wa = params[o + K : o + 2 * K]
    gq = params[o + 2 * K : o + 3 * K]
    gv = params[o + 3 * K : o + 4 * K]
    wv = params[o + 4 * K : o + 5 * K]
    o += 5 * K
    A_g0 = params[o : o + 3 * K].reshape((3, K))
    A_s0 = params[o + 3 * K : o + 6 * K].reshape((3, K))
    A_t0 = params[o + 6 * K : o + 9 * K].reshape((3, K))
    o += 9 * K
    I_cg = params[o : o + K]
    I_ws = params[o + K : o + 2 * K]
    I_s = params[o + 2 * K : o + 3 * K]
    I_t = params[o + 3 * K : o + 4 * K]
    gamma = np.empty(K)
    gamma_dot = np.empty(K)
    om = np.empty(K)
    for i in range(K):
        gamma[i] = q[int(gq[i])]
        gamma_dot[i] = v[int(gv[i])]
        om[i] = v[int(wv[i])]
    w = np.empty(3)
    for j in range(3):
        w[j] = v[j]  # the cluster sits on the base (body 0, FREE): its angular velocity
    zero3 = np.zeros(3)
    zeroK = np.zeros(K)
    tg = np.empty(K)
    tw = np.empty(K)
    servo_kernel(
        gamma,
        gamma_dot,
        om,
        w,
        zero3,
        A_g0,
        A_s0,
        A_t0,
        I_cg,
        I_ws,
        I_s,
        I_t,
        gr,
        wa,
        zeroK,
        zeroK,
        False,
        k_g,
        0.0,
        tg,
        tw,
    )
    for i in range(K):
        tau[int(gv[i])] += tg[i]
        tau[int(wv[i])] += tw[i]


@lazy_njit(INPUTS_SIG, cache=True)
def open_loop_inputs(t, t_step, q, v, params, mem, tau, fext):
    """Base generalized force ``sin(w t) [torque amplitude, force amplitude]`` (base frame).

    params = [w, torque (3), force (3)].
    """
    fext[:, :] = 0.0
    tau[:] = 0.0
    s = np.sin(params[0] * t)
    for j in range(6):
        tau[j] = s * params[1 + j]
