"""The plant boundary of a closed-loop run: one compiled callback, evaluated at every RK4 stage.

Within a control period the callback applies, with the commands of the tick held:

* the generalized forces the flight software commands (arm joint torques, reaction-wheel
  motor torques), held over the period;
* the thrusters' wrench on the base: thruster i pushes with ``on_level[i]``
  during the first ``n_on[i]`` dynamics steps of the period and with
  ``off_level[i]`` afterwards (zero, or a stuck-on thruster's thrust); pulses
  switch on step boundaries, decided from the step's start time ``t_step``;
* a constant disturbance wrench on the base;
* the VSCMG servo loops (continuous-time laws of
  :func:`dqspace.actuators.servo.servo_kernel`, evaluated with the stage's state);
* the joint limiter, last: for each limited joint (arm joints with torque or rate limits,
  wheel motors), the torque is clipped to ``max_torque``, cut to zero when the joint's
  rate is at ``max_rate`` and the torque would push it further, and reduced by viscous
  friction ``friction * v``.

``params`` is cut into the named fields of :func:`layout` (sizes from the system: nv, S
thrusters, K VSCMGs, L limited joints).  Its first :data:`HEADER` ``.width`` entries are
the header: the tick time, the step, the four sizes, then the offset of every field, so
that the compiled callback reads each field by name (``params[HEADER.tau]`` is where the
held torques start) and the offsets are computed once, here.  The callback signature is
numba's fixed ``INPUTS_SIG`` (one float64 vector), so sizes, offsets and joint indices are
stored as floats; they are small integers, exact in float64.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from .._jit import lazy_njit
from ..actuators.servo import servo_kernel
from ..multibody.kernels.layout import Layout
from ..multibody.simulation import INPUTS_SIG

__all__ = [
    "closed_loop_inputs",
    "open_loop_inputs",
    "pack",
    "TickInputs",
    "layout",
    "HEADER",
    "FIELDS",
]

#: the fields after the header, with their sizes as functions of (nv, S, K, L)
FIELDS = (
    ("tau", lambda nv, S, K, L: nv),  # held generalized forces
    ("n_on", lambda nv, S, K, L: S),  # dynamics steps each thruster is on
    ("on_level", lambda nv, S, K, L: S),  # thrust while on [N]
    ("off_level", lambda nv, S, K, L: S),  # thrust while off [N] (stuck-on thrusters)
    ("H", lambda nv, S, K, L: 6 * S),  # thruster wrench directions, row-major (6, S)
    ("disturbance", lambda nv, S, K, L: 6),  # base wrench [f, tau]
    ("k_g", lambda nv, S, K, L: 1),  # gimbal servo bandwidth [1/s]
    ("gimbal_rate_cmd", lambda nv, S, K, L: K),
    ("wheel_accel_cmd", lambda nv, S, K, L: K),
    ("gimbal_q", lambda nv, S, K, L: K),  # indices into q
    ("gimbal_v", lambda nv, S, K, L: K),  # indices into v
    ("wheel_v", lambda nv, S, K, L: K),
    ("A_g0", lambda nv, S, K, L: 3 * K),  # row-major (3, K)
    ("A_s0", lambda nv, S, K, L: 3 * K),
    ("A_t0", lambda nv, S, K, L: 3 * K),
    ("I_cg", lambda nv, S, K, L: K),
    ("I_ws", lambda nv, S, K, L: K),
    ("I_s", lambda nv, S, K, L: K),
    ("I_t", lambda nv, S, K, L: K),
    ("limited_v", lambda nv, S, K, L: L),  # indices into v of the limited joints
    ("max_torque", lambda nv, S, K, L: L),
    ("max_rate", lambda nv, S, K, L: L),
    ("friction", lambda nv, S, K, L: L),  # viscous [N m s/rad]
)

#: the header: scalars, sizes, then one offset per field (same names)
HEADER = Layout(
    "plant inputs header",
    [("t_tick", 1), ("dt", 1), ("nv", 1), ("S", 1), ("K", 1), ("L", 1)]
    + [(name, 1) for name, _ in FIELDS],
)


def layout(nv, S, K, L=0):
    """The :class:`~dqspace.multibody.kernels.layout.Layout` of ``params`` for these sizes."""
    sizes = [(name, size(nv, S, K, L)) for name, size in FIELDS]
    return Layout("plant inputs", [("header", HEADER.width), *sizes])


def pack(
    lay,
    *,
    dt,
    H,
    k_g=0.0,
    cluster_index=None,
    cluster=None,
    limited_v=None,
    max_torque=None,
    max_rate=None,
    friction=None,
    out=None,
):
    """Create (or fill) the ``params`` vector of :func:`closed_loop_inputs` (layout ``lay``)
    with what stays the same over a run: the header, the thruster directions, the VSCMG
    geometry and the joint limiter.  :class:`TickInputs` writes the rest at every tick."""
    nv, S, K, L = lay.size("tau"), lay.size("n_on"), lay.size("gimbal_q"), lay.size("limited_v")
    p = np.zeros(lay.width) if out is None else out
    p[HEADER.dt] = dt
    p[HEADER.nv], p[HEADER.S], p[HEADER.K], p[HEADER.L] = nv, S, K, L

    def put(name, value):
        o = lay.offsets[name]
        p[o : o + lay.size(name)] = np.ravel(value)

    for name, _ in FIELDS:
        p[getattr(HEADER, name)] = lay.offsets[name]
    if S:
        put("H", np.asarray(H, float))
    put("k_g", k_g)
    if K:
        put("gimbal_q", cluster_index.gimbal_q)
        put("gimbal_v", cluster_index.gimbal_v)
        put("wheel_v", cluster_index.wheel_v)
        for name in ("A_g0", "A_s0", "A_t0", "I_cg", "I_ws", "I_s", "I_t"):
            put(name, getattr(cluster, name))
    if L:
        put("limited_v", limited_v)
        put("max_torque", max_torque)
        put("max_rate", max_rate)
        put("friction", friction)
    return p


class TickInputs:
    """Writes a tick's commands into ``params`` (views of the fields, made once)."""

    def __init__(self, lay, params):
        self.params = params

        def view(name):
            o = lay.offsets[name]
            return params[o : o + lay.size(name)]

        self.tau = view("tau")
        self.n_on, self.on_level, self.off_level = view("n_on"), view("on_level"), view("off_level")
        self.disturbance = view("disturbance")
        self.gimbal_rate_cmd, self.wheel_accel_cmd = (
            view("gimbal_rate_cmd"),
            view("wheel_accel_cmd"),
        )

    def __call__(
        self,
        t_tick,
        tau_hold,
        n_on,
        on_level,
        off_level,
        disturbance,
        gimbal_rate_cmd,
        wheel_accel_cmd,
    ):
        self.params[HEADER.t_tick] = t_tick
        self.tau[:] = tau_hold
        self.n_on[:] = n_on
        self.on_level[:] = on_level
        self.off_level[:] = off_level
        self.disturbance[:] = disturbance
        self.gimbal_rate_cmd[:] = gimbal_rate_cmd
        self.wheel_accel_cmd[:] = wheel_accel_cmd
        return self.params


# the header's indices as a named tuple of ints: numba freezes it into the compiled code
_H = namedtuple("HeaderIndex", [name for name, _ in HEADER.fields])(
    *(HEADER.offsets[name] for name, _ in HEADER.fields)
)


@lazy_njit(INPUTS_SIG, cache=True)
def closed_loop_inputs(t, t_step, q, v, params, mem, tau, fext):
    """Held torques, thruster pulses, disturbance, VSCMG servos, joint limiter (see above)."""
    t_tick, dt = params[_H.t_tick], params[_H.dt]
    nv, S, K, L = int(params[_H.nv]), int(params[_H.S]), int(params[_H.K]), int(params[_H.L])
    o = int(params[_H.tau])
    for j in range(nv):
        tau[j] = params[o + j]
    fext[:, :] = 0.0
    step = int(np.floor((t_step - t_tick) / dt + 0.5))
    o_on, o_lv = int(params[_H.n_on]), int(params[_H.on_level])
    o_off, o_H = int(params[_H.off_level]), int(params[_H.H])
    for i in range(S):
        f = params[o_lv + i] if step < params[o_on + i] else params[o_off + i]
        if f != 0.0:
            for r in range(6):
                fext[0, r] += f * params[o_H + r * S + i]
    o = int(params[_H.disturbance])
    for r in range(6):
        fext[0, r] += params[o + r]
    if K > 0:
        _vscmg_servos(q, v, params, K, tau)
    o_v, o_tq = int(params[_H.limited_v]), int(params[_H.max_torque])
    o_rt, o_fr = int(params[_H.max_rate]), int(params[_H.friction])
    for i in range(L):
        j = int(params[o_v + i])
        u = min(max(tau[j], -params[o_tq + i]), params[o_tq + i])
        w = v[j]
        if (w >= params[o_rt + i] and u > 0.0) or (w <= -params[o_rt + i] and u < 0.0):
            u = 0.0
        tau[j] = u - params[o_fr + i] * w


@njit(cache=True)
def _vscmg_servos(q, v, params, K, tau):
    """Add the VSCMG servo torques (gimbal and wheel motors) to ``tau``."""
    k_g = params[int(params[_H.k_g])]
    o = int(params[_H.gimbal_rate_cmd])
    gr = params[o : o + K]
    o = int(params[_H.wheel_accel_cmd])
    wa = params[o : o + K]
    o_gq, o_gv, o_wv = int(params[_H.gimbal_q]), int(params[_H.gimbal_v]), int(params[_H.wheel_v])
    o = int(params[_H.A_g0])
    A_g0 = params[o : o + 3 * K].reshape((3, K))
    o = int(params[_H.A_s0])
    A_s0 = params[o : o + 3 * K].reshape((3, K))
    o = int(params[_H.A_t0])
    A_t0 = params[o : o + 3 * K].reshape((3, K))
    o = int(params[_H.I_cg])
    I_cg = params[o : o + K]
    o = int(params[_H.I_ws])
    I_ws = params[o : o + K]
    o = int(params[_H.I_s])
    I_s = params[o : o + K]
    o = int(params[_H.I_t])
    I_t = params[o : o + K]
    gamma = np.empty(K)
    gamma_dot = np.empty(K)
    om = np.empty(K)
    for i in range(K):
        gamma[i] = q[int(params[o_gq + i])]
        gamma_dot[i] = v[int(params[o_gv + i])]
        om[i] = v[int(params[o_wv + i])]
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
        tau[int(params[o_gv + i])] += tg[i]
        tau[int(params[o_wv + i])] += tw[i]


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


@njit(cache=True)
def write_commands(
    params, t_tick, tau, n_on, on_level, off_level, disturbance, gimbal_rate_cmd, wheel_accel_cmd
):
    """What :class:`TickInputs` writes, from compiled code: the tick time and the commands
    held over the period into their fields of ``params`` (offsets from its header)."""
    params[_H.t_tick] = t_tick
    o = int(params[_H.tau])
    for j in range(tau.shape[0]):
        params[o + j] = tau[j]
    o_on, o_lv, o_off = int(params[_H.n_on]), int(params[_H.on_level]), int(params[_H.off_level])
    for i in range(n_on.shape[0]):
        params[o_on + i] = n_on[i]
        params[o_lv + i] = on_level[i]
        params[o_off + i] = off_level[i]
    o = int(params[_H.disturbance])
    for r in range(6):
        params[o + r] = disturbance[r]
    o_g, o_w = int(params[_H.gimbal_rate_cmd]), int(params[_H.wheel_accel_cmd])
    for i in range(gimbal_rate_cmd.shape[0]):
        params[o_g + i] = gimbal_rate_cmd[i]
        params[o_w + i] = wheel_accel_cmd[i]
