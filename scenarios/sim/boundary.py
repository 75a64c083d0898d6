"""The plant boundary of a closed-loop run: one compiled callback, evaluated at every RK4 stage.

Within a control period the callback applies, with the commands of the tick held:

* the generalized forces the flight software commands (arm joint torques, reaction-wheel
  motor torques), held over the period;
* the thrusters' wrench on the base: thruster i pushes with ``on_level[i]`` during
  ``[pulse_start[i], pulse_end[i])`` (this period's pulse as its valve delivers it), with
  ``tail_level[i]`` during ``[0, tail_end[i])`` (an earlier pulse still open or closing)
  and with ``off_level[i]`` otherwise (zero, or a stuck-on thruster's thrust); the times
  are in dynamics steps from the tick (:class:`dqspace.actuators.thrusters.Valves` computes
  them).  The thrust is constant over each dynamics step, decided from the step's start
  time ``t_step``: a step partly inside a window gets the window's level times the part of
  the step it covers, so every pulse delivers its exact impulse whatever the valve delays
  (a delay that is not a whole number of steps shifts the pulse's impulse within the step,
  by at most one step);
* a constant disturbance wrench on the base;
* the VSCMG servo loops (continuous-time laws of
  :func:`dqspace.actuators.servo.servo_unit` of each unit, evaluated with the stage's state);
* the joint limiter, after the servos: for each limited joint (arm joints with torque or
  rate limits, wheel motors, VSCMG gimbal and wheel motors), the torque is clipped to
  ``max_torque``, cut to zero when the joint's rate is at ``max_rate`` and the torque would
  push it further, and friction is subtracted: viscous ``friction * v`` and Coulomb
  ``coulomb * sign(v)``.  Each stage at which the limiter clipped or cut joint i adds one
  to ``mem[i]`` (when ``mem`` has at least L entries): what the plant reports as
  saturation over a period;
* with an orbit (``nb > 0``), the Clohessy-Wiltshire forces and the gravity-gradient
  torques on every body (:func:`dqspace.multibody.kernels.orbit.hill_wrenches`), from the
  plant model packed into ``model_ints`` / ``model_reals`` (its ``ints`` and ``reals``
  arrays, row-major, the ints as floats) and the stage's state.

``params`` is cut into the named fields of :func:`layout` (sizes from the system: nv, S
thrusters, K VSCMGs, L limited joints, nb bodies with an orbit, else 0).  Its first
:data:`HEADER` ``.width`` entries are the header: the tick time, the step, the five sizes,
then the offset of every field, so that the compiled callback reads each field by name
(``params[HEADER.tau]`` is where the held torques start) and the offsets are computed once,
here.  The callback signature is numba's fixed ``INPUTS_SIG`` (one float64 vector), so
sizes, offsets and indices are stored as floats; they are small integers, exact in float64.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from ..._jit import lazy_njit
from ...actuators import VSCMGGeometry
from ...actuators.kernels import motor_limit_kernel, servo_unit, valve_plan_kernel
from ...multibody.kernels.layout import INTS, REALS, Layout
from ...multibody.kernels.orbit import hill_wrenches
from ...multibody.simulation import INPUTS_SIG

__all__ = [
    "closed_loop_inputs",
    "open_loop_inputs",
    "pack",
    "TickInputs",
    "layout",
    "Sizes",
    "HEADER",
    "FIELDS",
]

#: the sizes the fields depend on: nv, S thrusters, K VSCMGs, L limited joints, nb bodies
#: (the plant model packed for the orbit terms; 0 without an orbit)
Sizes = namedtuple("Sizes", ["nv", "S", "K", "L", "nb"])

#: the fields after the header, with their sizes as functions of the Sizes n
FIELDS = (
    ("tau", lambda n: n.nv),  # held generalized forces
    ("tail_end", lambda n: n.S),  # [steps] thrust at tail_level during [0, tail_end)
    ("tail_level", lambda n: n.S),  # [N]
    ("pulse_start", lambda n: n.S),  # [steps] thrust at on_level during [pulse_start,
    ("pulse_end", lambda n: n.S),  # pulse_end)
    ("on_level", lambda n: n.S),  # [N]
    ("off_level", lambda n: n.S),  # thrust otherwise [N] (stuck-on thrusters)
    ("H", lambda n: 6 * n.S),  # thruster wrench directions, row-major (6, S)
    ("disturbance", lambda n: 6),  # base wrench [f, tau]
    ("k_g", lambda n: 1),  # gimbal servo bandwidth [1/s]
    ("gimbal_rate_cmd", lambda n: n.K),
    ("wheel_accel_cmd", lambda n: n.K),
    ("gimbal_q", lambda n: n.K),  # indices into q
    ("gimbal_v", lambda n: n.K),  # indices into v
    ("wheel_v", lambda n: n.K),
    # the cluster's geometry, field by field (axes row-major (3, K), moments (K,))
    *(
        (f, (lambda n: 3 * n.K) if f.startswith("A_") else (lambda n: n.K))
        for f in VSCMGGeometry._fields
    ),
    ("limited_v", lambda n: n.L),  # indices into v of the limited joints
    ("max_torque", lambda n: n.L),
    ("max_rate", lambda n: n.L),
    ("friction", lambda n: n.L),  # viscous [N m s/rad]
    ("coulomb", lambda n: n.L),  # Coulomb [N m]
    ("orbit_rate", lambda n: 1),  # [rad/s]
    ("model_ints", lambda n: n.nb * INTS.width),  # the plant's ints, row-major, as floats
    ("model_reals", lambda n: n.nb * REALS.width),
)

#: the header: scalars, sizes, then one offset per field (same names)
HEADER = Layout(
    "plant inputs header",
    [("t_tick", 1), ("dt", 1), ("nv", 1), ("S", 1), ("K", 1), ("L", 1), ("nb", 1)]
    + [(name, 1) for name, _ in FIELDS],
)


def layout(nv, S, K, L=0, nb=0):
    """The :class:`~dqspace.multibody.kernels.layout.Layout` of ``params`` for these sizes
    (``nb``: bodies of the plant model packed for the orbit terms, 0 without an orbit)."""
    n = Sizes(nv, S, K, L, nb)
    sizes = [(name, size(n)) for name, size in FIELDS]
    return Layout("plant inputs", [("header", HEADER.width), *sizes])


def pack(
    lay,
    *,
    dt,
    H,
    k_g=0.0,
    cluster_index=None,
    geometry=None,
    limited_v=None,
    max_torque=None,
    max_rate=None,
    friction=None,
    coulomb=None,
    orbit_rate=0.0,
    model=None,
    out=None,
):
    """Create (or fill) the ``params`` vector of :func:`closed_loop_inputs` (layout ``lay``)
    with what stays the same over a run: the header, the thruster directions, the VSCMG
    geometry, the joint limiter and the orbit (its rate [rad/s] and the plant ``model``,
    when ``lay`` has room for it).  :class:`TickInputs` writes the rest at every tick."""
    nv, S, K = lay.size("tau"), lay.size("pulse_end"), lay.size("gimbal_q")
    L, nb = lay.size("limited_v"), lay.size("model_ints") // INTS.width
    p = np.zeros(lay.width) if out is None else out
    p[HEADER.dt] = dt
    p[HEADER.nv], p[HEADER.S], p[HEADER.K], p[HEADER.L], p[HEADER.nb] = nv, S, K, L, nb

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
        for name, value in zip(VSCMGGeometry._fields, geometry, strict=True):
            put(name, value)
    if L:
        put("limited_v", limited_v)
        put("max_torque", max_torque)
        put("max_rate", max_rate)
        put("friction", friction)
        put("coulomb", np.zeros(L) if coulomb is None else coulomb)
    if nb:
        put("orbit_rate", orbit_rate)
        ints, reals = model.packed
        put("model_ints", np.asarray(ints, float))
        put("model_reals", reals)
    return p


class TickInputs:
    """Writes a tick's commands into ``params`` (:func:`write_tick`), the thrust windows
    given as they are (:func:`apply_commands` plans them from the pulses)."""

    def __init__(self, lay, params):
        self.params = params

    def __call__(
        self,
        t_tick,
        tau_hold,
        windows,
        tail_level,
        on_level,
        off_level,
        disturbance,
        gimbal_rate_cmd,
        wheel_accel_cmd,
    ):
        """``windows``: the thrusters' :class:`~dqspace.actuators.thrusters.ValveWindows`
        in dynamics steps; levels [N]."""
        f = _f64
        write_tick(
            self.params, float(t_tick), f(tau_hold), f(windows.tail_end), f(tail_level),
            f(windows.start), f(windows.end), f(on_level), f(off_level), f(disturbance),
            f(gimbal_rate_cmd), f(wheel_accel_cmd),
        )  # fmt: skip
        return self.params


def _f64(x):
    return np.ascontiguousarray(x, dtype=float)


# the packed model's row widths, as ints numba freezes into the compiled code
_INTS_W, _REALS_W = INTS.width, REALS.width

# the header's indices as a named tuple of ints: numba freezes it into the compiled code
_H = namedtuple("HeaderIndex", [name for name, _ in HEADER.fields])(
    *(HEADER.offsets[name] for name, _ in HEADER.fields)
)


@lazy_njit(INPUTS_SIG, cache=True)
def closed_loop_inputs(t, t_step, q, v, params, mem, tau, fext):
    """Held torques, thruster pulses, disturbance, VSCMG servos, joint limiter, orbit (see
    above)."""
    t_tick, dt = params[_H.t_tick], params[_H.dt]
    nv, S, K, L = int(params[_H.nv]), int(params[_H.S]), int(params[_H.K]), int(params[_H.L])
    o = int(params[_H.tau])
    for j in range(nv):
        tau[j] = params[o + j]
    fext[:, :] = 0.0
    s0 = np.floor((t_step - t_tick) / dt + 0.5)  # the step's index in the period
    o_te, o_tl = int(params[_H.tail_end]), int(params[_H.tail_level])
    o_ps, o_pe = int(params[_H.pulse_start]), int(params[_H.pulse_end])
    o_lv, o_off, o_H = int(params[_H.on_level]), int(params[_H.off_level]), int(params[_H.H])
    for i in range(S):
        # the parts of the step [s0, s0 + 1) inside the pulse and inside the tail
        on = min(params[o_pe + i], s0 + 1.0) - max(params[o_ps + i], s0)
        on = on if on > 0.0 else 0.0
        tail = min(params[o_te + i], s0 + 1.0) - s0
        tail = tail if tail > 0.0 else 0.0
        f = on * params[o_lv + i] + tail * params[o_tl + i] + (1.0 - on - tail) * params[o_off + i]
        if f != 0.0:
            for r in range(6):
                fext[0, r] += f * params[o_H + r * S + i]
    o = int(params[_H.disturbance])
    for r in range(6):
        fext[0, r] += params[o + r]
    if K > 0:
        _vscmg_servos(q, v, params, K, tau)
    o_v, o_tq = int(params[_H.limited_v]), int(params[_H.max_torque])
    o_rt, o_fr, o_cf = int(params[_H.max_rate]), int(params[_H.friction]), int(params[_H.coulomb])
    report = mem.shape[0] >= L
    for i in range(L):
        j = int(params[o_v + i])
        u, limited = motor_limit_kernel(
            tau[j], v[j], params[o_tq + i], params[o_rt + i], params[o_fr + i], params[o_cf + i]
        )
        if report and limited:
            mem[i] += 1.0
        tau[j] = u
    nb = int(params[_H.nb])
    if nb > 0:
        _orbit(q, v, params, nb, fext)


@njit(cache=True)
def _orbit(q, v, params, nb, fext):
    """Add the orbit terms of every body to ``fext`` (the model unpacked from params)."""
    o = int(params[_H.model_ints])
    ints = np.empty((nb, _INTS_W), np.int64)
    for k in range(nb):
        for j in range(_INTS_W):
            ints[k, j] = int(params[o + k * _INTS_W + j])
    o = int(params[_H.model_reals])
    reals = np.empty((nb, _REALS_W))
    for k in range(nb):
        for j in range(_REALS_W):
            reals[k, j] = params[o + k * _REALS_W + j]
    hill_wrenches(ints, reals, q, v, params[int(params[_H.orbit_rate])], fext)


@njit(cache=True)
def _vscmg_servos(q, v, params, K, tau):
    """Add the VSCMG servo torques (gimbal and wheel motors) to ``tau``: each unit's
    :func:`~dqspace.actuators.servo.servo_unit`, read from the state in place (no array is
    made: this runs at every stage of every dynamics step)."""
    k_g = params[int(params[_H.k_g])]
    o_gr, o_wa = int(params[_H.gimbal_rate_cmd]), int(params[_H.wheel_accel_cmd])
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
    no_w_dot = (0.0, 0.0, 0.0)  # no base-acceleration estimate: the rate loop absorbs it
    for i in range(K):
        jg, jw = int(params[o_gv + i]), int(params[o_wv + i])
        # v[0:3]: the base's angular velocity (body 0, FREE), on which the cluster sits
        tg, tw = servo_unit(
            i, q[int(params[o_gq + i])], v[jg], v[jw], v, no_w_dot, A_g0, A_s0, A_t0, I_cg,
            I_ws, I_s, I_t, params[o_gr + i], params[o_wa + i], 0.0, 0.0, False, k_g, 0.0,
        )  # fmt: skip
        tau[jg] += tg
        tau[jw] += tw


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
def apply_commands(
    params, t_tick, steps, tau, n_on, on_level, off_level, disturbance, gimbal_rate_cmd,
    wheel_accel_cmd, valves, valve_carry, tail_level, commit, delivered,
):  # fmt: skip
    """The commands of a tick into ``params`` (what :class:`TickInputs` writes), from
    compiled code as from Python, for a period of ``steps`` dynamics steps starting at
    ``t_tick`` [s]: the pulses ``n_on`` (S,) [steps] become the thrust windows
    the valves deliver (:func:`~dqspace.actuators.kernels.valve_plan_kernel`, ``valves`` =
    ``(open_delay, close_delay, min_on_time)`` in dynamics steps), with the valves' state
    ``valve_carry`` and the thrust of the pulse still delivering ``tail_level`` (S,) [N];
    ``delivered`` (S,) receives each thruster's mean thrust over the period [N].  With
    ``commit`` the valves' state moves on to the next period (else it is left as it was:
    the last tick of a run, recorded but not integrated)."""
    S = n_on.shape[0]
    tail_end, start, end, carry = np.empty(S), np.empty(S), np.empty(S), np.empty(S)
    valve_plan_kernel(
        n_on, float(steps), valves[0], valves[1], valves[2], valve_carry, tail_end, start, end,
        carry,
    )  # fmt: skip
    write_tick(
        params, t_tick, tau, tail_end, tail_level, start, end, on_level, off_level, disturbance,
        gimbal_rate_cmd, wheel_accel_cmd,
    )  # fmt: skip
    for i in range(S):
        on = end[i] - start[i]
        off = steps - on - tail_end[i]
        delivered[i] = (on_level[i] * on + tail_level[i] * tail_end[i] + off_level[i] * off) / (
            steps
        )
        if commit:
            valve_carry[i] = carry[i]
            if end[i] > start[i]:
                tail_level[i] = on_level[i]


@njit(cache=True)
def write_tick(
    params, t_tick, tau, tail_end, tail_level, pulse_start, pulse_end, on_level, off_level,
    disturbance, gimbal_rate_cmd, wheel_accel_cmd,
):  # fmt: skip
    """The tick fields of ``params`` (offsets from its header): the tick time [s], the held
    generalized forces (nv,), the thrust windows [steps] and levels [N] (S,), the
    disturbance (6,) and the VSCMG commands (K,)."""
    params[_H.t_tick] = t_tick
    o = int(params[_H.tau])
    for j in range(tau.shape[0]):
        params[o + j] = tau[j]
    o_te, o_tl = int(params[_H.tail_end]), int(params[_H.tail_level])
    o_ps, o_pe = int(params[_H.pulse_start]), int(params[_H.pulse_end])
    o_lv, o_off = int(params[_H.on_level]), int(params[_H.off_level])
    for i in range(tail_end.shape[0]):
        params[o_te + i] = tail_end[i]
        params[o_tl + i] = tail_level[i]
        params[o_ps + i] = pulse_start[i]
        params[o_pe + i] = pulse_end[i]
        params[o_lv + i] = on_level[i]
        params[o_off + i] = off_level[i]
    o = int(params[_H.disturbance])
    for r in range(6):
        params[o + r] = disturbance[r]
    o_g, o_w = int(params[_H.gimbal_rate_cmd]), int(params[_H.wheel_accel_cmd])
    for i in range(gimbal_rate_cmd.shape[0]):
        params[o_g + i] = gimbal_rate_cmd[i]
        params[o_w + i] = wheel_accel_cmd[i]
