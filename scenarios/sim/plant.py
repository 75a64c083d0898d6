"""Flight software and plant of a closed-loop run, apart (the runner alternates them).

Each control tick::

    measurement = flight.measure(q, v)          # what the flight software sees
    commands = flight.tick(t, measurement, health)
    q, v = plant.advance(q, v, t, commands)      # commands held over the period

* :class:`FlightSoftware`: measurements -> controllers (:class:`~dqspace.control.
  flight_software.StationKeepingLaw`: arm law, base law with the arm-reaction
  feedforward, arm torques) -> thruster allocation and pulse modulation -> VSCMG steering
  -> reaction-wheel distribution and momentum management -> :class:`Commands`.
  Measurements are the plant's true state (perfect knowledge) or, with ``[sensors]
  enabled``, the estimates of :class:`Navigation`.
* :class:`Plant`: the multibody model with the devices as bodies, integrated with compiled
  Lie-group RK4 over the period; the thrusters' pulses (as their valves deliver them), the
  VSCMG servo loops, the joint limiter (arm torque and rate limits; wheel, gimbal and VSCMG
  wheel motor limits and friction) and the optional orbit terms act inside the integration
  (:mod:`dqspace.scenarios._inputs`).

Torque sharing between the devices: the thrusters take the force (``thrusters.mode =
"force"``) or the whole wrench (``"wrench"``); the torque the thrusters do not deliver goes
to the VSCMGs (steering law, P48) and what they cannot deliver to the reaction wheels.  With
wheels and ``"wrench"`` mode the thrusters instead take the force and the momentum-dumping
torque, and the wheels the control torque.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import typeof
from numpy.typing import NDArray

from ..._jit import compiled
from ...control import State
from ...control.flight.actuation import (
    FORCE,
    WRENCH,
    ActuationParams,
    ActuationState,
    actuation_kernel,
    actuation_work,
    demand_kernel,
)
from ...control.flight.law import LawOutput, StationKeepingLaw
from ...control.flight.navigation import (
    NavigationParams,
    NavigationState,
    commanded_force_kernel,
    estimate_arrays,
    navigation_kernel,
)
from ...dq import rotation_matrix_from_dq, translation_from_dq
from ...multibody import simulate_compiled
from . import boundary as _inputs
from .loop import PlantIndex, truth_kernel
from .metrics import ALLOC_STATUS

__all__ = ["FlightSoftware", "Plant", "Commands", "Measurement", "actuation_params"]


@dataclass
class Measurement:
    """What the flight software knows at a tick."""

    state: State  # of the controller model (base + arm)
    gimbal: NDArray[np.float64]  # (K,) [rad]
    gimbal_rate: NDArray[np.float64]  # (K,) [rad/s]
    vscmg_wheel_speed: NDArray[np.float64]  # (K,) [rad/s]
    wheel_speed: NDArray[np.float64]  # (W,) reaction wheels [rad/s]
    base_rate: NDArray[np.float64]  # (3,) base angular velocity, base axes [rad/s]


@dataclass
class Commands:
    """What the flight software sends to the plant for one control period, and why."""

    law: LawOutput
    tau_hold: NDArray[np.float64]  # (nv,) held generalized forces (arm, wheel motors)
    n_on: NDArray[np.float64]  # (S,) dynamics steps on
    on_level: NDArray[np.float64]  # (S,) [N]
    off_level: NDArray[np.float64]  # (S,) [N]
    gimbal_rate_cmd: NDArray[np.float64]  # (K,)
    wheel_accel_cmd: NDArray[np.float64]  # (K,)
    telemetry: dict = field(default_factory=dict)


def actuation_params(system, health=None) -> ActuationParams:
    """The :data:`~dqspace.control.actuation.ActuationParams` of a built system, the thrusters
    as ``health`` says (default: as built)."""
    sy, cfg = system, system.cfg
    period = 1.0 / cfg["control"]["rate"]
    dt = cfg["integrator"]["dt"]
    ts = sy.thrusters
    S = ts.n if ts is not None else 0
    e3, eS = np.zeros((3, 0)), np.zeros(0)
    if S:
        health = ts if health is None else health
        mod = sy.modulator
        schmitt = mod.schmitt if mod is not None else None
        thr = dict(
            mode=FORCE if cfg["thrusters"]["mode"] == "force" else WRENCH,
            H=np.ascontiguousarray(ts.H, dtype=float),
            sigma_min=np.array(ts.sigma_min, dtype=float),
            sigma_max=np.array(ts.sigma_max, dtype=float),
            **_health(health),
            **_allocation(sy.allocator),
            pwm=mod is not None,
            min_impulse_bit=np.array(ts.min_impulse_bit, dtype=float),
            on_fraction=schmitt.on_fraction if schmitt is not None else 0.5,
            off_fraction=schmitt.off_fraction if schmitt is not None else 0.5,
            quantum=mod.quantum if mod is not None else 0.0,
            error_feedback=bool(mod.error_feedback) if mod is not None else False,
        )
    else:
        thr = dict(
            mode=FORCE, H=np.zeros((6, 0)), sigma_min=eS, sigma_max=eS, effectiveness=eS,
            fixed_thrust=eS, command_lower=eS, command_upper=eS, H_rows=np.zeros((3, 0)),
            weights=eS, residual_weights=np.ones(3), alloc_tol=0.0, lp_max_iter=0,
            lsq_max_iter=0, pwm=False, min_impulse_bit=eS, on_fraction=0.5,
            off_fraction=0.5, quantum=0.0, error_feedback=False,
        )  # fmt: skip
    cm = sy.cluster_model
    if cm is not None:
        c = cm.cluster
        cmg = {n: np.ascontiguousarray(getattr(c, n), dtype=float) for n in _CLUSTER_FIELDS}
        cmg["steering"] = sy.steering.kernel_params
    else:
        cmg = {n: (e3 if n.startswith("A_") else eS) for n in _CLUSTER_FIELDS}
        cmg["steering"] = _no_steering()
    wm, mm = sy.wheel_model, sy.momentum_manager
    if wm is not None:
        arr = wm.array
        rw = dict(
            rw_A=np.ascontiguousarray(arr.A, dtype=float),
            rw_I_s=np.ascontiguousarray(arr.I_s, dtype=float),
            rw_max_torque=np.ascontiguousarray(arr.max_torque, dtype=float),
            rw_max_speed=np.ascontiguousarray(arr.max_speed, dtype=float),
        )
    else:
        rw = dict(rw_A=e3, rw_I_s=eS, rw_max_torque=eS, rw_max_speed=eS)
    dump = dict(dumping=mm is not None, dump_gain=0.0, dump_start=1.0, dump_stop=0.0)
    if mm is not None:
        dump.update(dump_gain=mm.gain, dump_start=mm.start_fraction, dump_stop=mm.stop_fraction)
    steps = int(round(period / dt))
    return ActuationParams(period=period, dt=dt, steps=steps, **thr, **cmg, **rw, **dump)


_CLUSTER_FIELDS = ("A_g0", "A_s0", "A_t0", "I_cg", "I_ws", "I_s", "I_t")


def _health(ts):
    """The thrusters' health fields of :data:`ActuationParams` (fresh arrays)."""
    return {
        "effectiveness": np.array(ts.effectiveness, dtype=float),
        "fixed_thrust": np.array(ts.fixed_thrust, dtype=float),
        "command_lower": np.array(ts.command_lower, dtype=float),
        "command_upper": np.array(ts.command_upper, dtype=float),
    }


def _allocation(allocator):
    """The fast allocation's fields of :data:`ActuationParams` (the cvxpy method is not
    compiled: a run with it takes the Python loop)."""
    H = np.ascontiguousarray(allocator.thrusters.H[: allocator.n_rows], dtype=float)
    it = 50 * (H.shape[0] + H.shape[1])
    return dict(
        H_rows=H,
        weights=np.ascontiguousarray(allocator.weights, dtype=float),
        residual_weights=np.ascontiguousarray(allocator.residual_weights, dtype=float),
        alloc_tol=float(allocator.tol),
        lp_max_iter=it,
        lsq_max_iter=it,
    )


def _no_steering():
    from ...actuators import SteeringLaw

    law = SteeringLaw(h_ref=1.0, lambda0=0.0, mu=0.0, gimbal_rate_max=1.0, wheel_accel_max=1.0)
    return law.kernel_params  # never read without VSCMGs (keeps one compiled signature)


class FlightSoftware:
    """The flight software of a built :class:`~dqspace.scenarios.system.System`.

    One tick (:meth:`tick`): the controllers (:class:`~dqspace.control.flight_software.
    StationKeepingLaw`), then the actuator decisions (:func:`~dqspace.control.actuation.
    actuation_kernel`).  With the built-in controllers and no sensors the runner runs the
    same kernels in its compiled loop (:attr:`compiled`)."""

    def __init__(self, system):
        sy = self.sy = system
        cfg = sy.cfg
        self.law = StationKeepingLaw(
            sy.base,
            sy.arm,
            model=sy.controller_model,
            feedforward=cfg["base_controller"]["feedforward"],
        )
        self.period = 1.0 / cfg["control"]["rate"]
        self.dt = cfg["integrator"]["dt"]
        self.steps = int(round(self.period / self.dt))
        self.S = sy.thrusters.n if sy.thrusters is not None else 0
        self.K = sy.cluster_model.cluster.K if sy.cluster_model is not None else 0
        self.W = sy.wheel_model.array.n if sy.wheel_model is not None else 0
        self.nq_c, self.nv_c = sy.controller_model.nq, sy.controller_model.nv
        n = sy.arm_info.n
        self.arm_v = np.arange(6, 6 + n)
        self.params = actuation_params(sy)
        self._health = sy.thrusters
        mm = sy.momentum_manager
        self.state = ActuationState(
            firing=np.zeros(self.S, dtype=np.bool_),
            carry=np.zeros(self.S),
            dump_active=mm.active_state if mm is not None else np.zeros(1),
        )
        self.work = actuation_work(self.S, self.K, self.W)
        cm, wm = sy.cluster_model, sy.wheel_model
        ix = np.zeros(0, dtype=np.int64)
        self.index = PlantIndex(
            self.nq_c,
            self.nv_c,
            self.arm_v.astype(np.int64),
            np.array(cm.index.gimbal_q, dtype=np.int64) if cm is not None else ix,
            np.array(cm.index.gimbal_v, dtype=np.int64) if cm is not None else ix,
            np.array(cm.index.wheel_v, dtype=np.int64) if cm is not None else ix,
            np.array(wm.index.wheel_v, dtype=np.int64) if wm is not None else ix,
        )
        self.nav = Navigation(self) if cfg["sensors"]["enabled"] else None

    @property
    def compiled(self) -> bool:
        """True when a whole tick runs as compiled code: the built-in controllers and the
        fast allocator (or no thrusters), with or without sensors."""
        return self.law.compiled and self._fast_allocation

    @property
    def _fast_allocation(self) -> bool:
        return self.sy.allocator is None or self.sy.allocator.method.value == "fast"

    def set_health(self, health) -> None:
        """The thrusters as they are now (after a fault): the allocation plans with them."""
        self._health = health
        if self.S:
            for name, value in _health(health).items():
                getattr(self.params, name)[:] = value

    def measure(self, q, v, t=None) -> Measurement:
        """The measurement at a tick: the true state (perfect knowledge), or, with
        ``sensors.enabled`` and the tick time ``t``, the navigation's estimates."""
        if self.nav is not None and t is not None:
            return self.nav.estimate(t, q, v)
        m = estimate_arrays(self.nq_c, self.nv_c, self.K, self.W)
        truth_kernel(self.index, _f64(q), _f64(v), m)
        return Measurement(
            State(m.q, m.v), m.gimbal, m.gimbal_rate, m.vscmg_speed, m.rw_speed, m.base_rate
        )

    def tick(self, t: float, m: Measurement, health=None) -> Commands:
        """The commands for the period starting at ``t`` (``health``: the thruster set as
        it is now, faults included, when it changed; the flight software knows its faults)."""
        sy = self.sy
        if health is not None and health is not self._health:
            self.set_health(health)
        ref = sy.trajectory(t)
        base_ref = sy.base_reference(t) if callable(sy.base_reference) else sy.base_reference
        law = self.law(t, m.state, base_ref, ref)
        w = self.work
        wrench = np.ascontiguousarray(law.wrench, dtype=float)
        rw_speed = np.ascontiguousarray(m.wheel_speed, dtype=float)
        demand_kernel(self.params, self.state, wrench, rw_speed, w)
        fast = self._fast_allocation
        if self.S and not fast:  # the reference path: cvxpy, in Python
            res = sy.allocator.allocate(w.demand[: sy.allocator.n_rows], thrusters=self._health)
            w.sigma[:] = res.sigma
            w.alloc_info[:] = (ALLOC_STATUS.index(res.status.value), 0)
        actuation_kernel(
            self.params,
            self.state,
            float(t),
            wrench,
            np.ascontiguousarray(m.gimbal, dtype=float),
            np.ascontiguousarray(m.vscmg_wheel_speed, dtype=float),
            rw_speed,
            np.ascontiguousarray(m.base_rate, dtype=float),
            fast,
            w,
        )
        tau_hold = np.zeros(sy.plant.nv)
        tau_hold[self.arm_v] = law.arm_tau
        tau_hold[self.index.rw_v] = w.rw_cmd
        code = int(w.alloc_info[0])
        info = w.steer_info
        tel = {
            "base_reference": base_ref,
            "arm_reference": ref,
            "dump_torque": w.dump.copy(),
            "sigma": w.sigma.copy(),
            "alloc_code": code,
            "w_thr": w.w_thr.copy(),
            "mean": w.mean.copy(),
            "tau_v": w.tau_v.copy(),
            "steer_err": w.steer_err.copy(),
            "det_G": float(info[1]),
            "det_C": float(info[2]),
            "rw_torque_cmd": w.rw_cmd.copy(),
            "rw_torque_err": w.rw_err.copy(),
        }
        if self.nav is not None:
            self.nav.commanded_force(w.w_thr[:3] + law.reaction[:3])
        return Commands(
            law,
            tau_hold,
            w.n_on.copy(),
            w.on_level.copy(),
            w.off_level.copy(),
            w.gimbal_rate_cmd.copy(),
            w.wheel_accel_cmd.copy(),
            tel,
        )


def _f64(x):
    return np.ascontiguousarray(x, dtype=float)


class Navigation:
    """Sensors and filters of the flight software (``[sensors]``): gyro (sampled every
    tick) and star tracker into the attitude MEKF, relative navigation into the translation
    filter (predicted with the planned force on the base: thrusters and the arm's reaction),
    encoders and tachometers for the joints and devices
    (:func:`~dqspace.control.navigation_tick.navigation_kernel`, which this wraps; the
    runner's compiled loop calls it with :attr:`params` and :attr:`state`).  Each sensor
    draws from its own generator, spawned from ``scenario.seed``.  The filters start at the
    true initial state (after an initial alignment) with the covariance of one star-tracker
    and one navigation sample."""

    def __init__(self, fsw: FlightSoftware):
        from ...control.navigation import AttitudeMEKF, TranslationKF
        from ...control.sensors import (
            ARCSEC,
            Gyro,
            JointEncoders,
            RelativeNavigation,
            StarTracker,
            Tachometer,
            arw_from_deg_per_root_hour,
            bias_instability_from_deg_per_hour,
            rrw_from_deg_per_hour_root_hour,
        )

        self.fsw = fsw
        sy, cfg = fsw.sy, fsw.sy.cfg
        s = cfg["sensors"]
        seed = cfg["scenario"]["seed"]
        rng = [
            np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(15, i))) for i in range(7)
        ]
        arw = arw_from_deg_per_root_hour(s["gyro_arw"])
        rrw = rrw_from_deg_per_hour_root_hour(s["gyro_rrw"])
        b0 = rng[0].normal(0.0, np.radians(s["gyro_bias"]) / 3600.0, 3)
        self.dt = fsw.period
        self.gyro = Gyro(
            rng[1],
            rate=1.0 / self.dt,
            arw=arw,
            rrw=rrw,
            initial_bias=b0,
            bias_instability=bias_instability_from_deg_per_hour(s["gyro_bias_instability"]),
            bias_instability_band=s["gyro_bias_instability_band"],
        )
        st_sigma = np.maximum(np.asarray(s["star_tracker_noise_arcsec"]), 1e-3) * ARCSEC
        self.star = StarTracker(
            rng[2],
            rate=s["star_tracker_rate"],
            noise_arcsec=s["star_tracker_noise_arcsec"],
            latency=s["star_tracker_latency"],
        )
        pn = max(s["relnav_position_noise"], 1e-9)
        vn = max(s["relnav_velocity_noise"], 1e-9)
        self.relnav = RelativeNavigation(
            rng[3], rate=s["relnav_rate"], position_noise=pn, velocity_noise=vn
        )
        self.encoders = JointEncoders(rng[4], quantum=2.0 * np.pi / 2 ** s["encoder_bits"])
        self.joint_tacho = Tachometer(rng[5], noise=s["joint_rate_noise"], quantum=1e-9)
        self.device_tacho = Tachometer(rng[6], noise=s["tachometer_noise"], quantum=1e-9)
        q0, v0 = sy.q0, sy.v0
        P0 = np.diag(list(st_sigma**2) + [(np.radians(s["gyro_bias"]) / 3600.0) ** 2 + 1e-20] * 3)
        self.mekf = AttitudeMEKF(
            q0[:4], np.zeros(3), P0, arw=arw, rrw=rrw, star_tracker_sigma=st_sigma
        )
        r0 = translation_from_dq(q0[:8])
        v0_I = rotation_matrix_from_dq(q0[:8]) @ v0[3:6]
        self.tkf = TranslationKF(
            np.r_[r0, v0_I],
            np.diag([pn**2] * 3 + [vn**2] * 3),
            accel_psd=1e-6,
            position_sigma=pn,
            velocity_sigma=vn,
        )
        self.mass = float(sy.controller_model.mass[0])  # the base with its devices
        enc, jt, dt = self.encoders, self.joint_tacho, self.device_tacho
        #: the kernels' constants (:data:`~dqspace.control.navigation_tick.NavigationParams`)
        self.params = NavigationParams(
            self.dt, self.mass, self.star.params, self.gyro.params, self.relnav.params,
            self.mekf.params, self.tkf.params, enc.quantum, enc.noise, jt.quantum, jt.noise,
            dt.quantum, dt.noise,
        )  # fmt: skip
        #: the sensors', filters' and generators' state (the classes' own arrays)
        self.state = NavigationState(
            self.star.schedule, self.gyro.state, self.relnav.schedule, self.mekf.state,
            self.tkf.state, np.zeros(3), np.zeros(8), self.star.rng, self.gyro.rng,
            self.relnav.rng, enc.rng, jt.rng, dt.rng,
        )  # fmt: skip
        self.out = estimate_arrays(fsw.nq_c, fsw.nv_c, fsw.K, fsw.W)
        self.error = (np.zeros(3), np.zeros(3))  # attitude [rad], position [m] estimate errors
        self._kernel = None  # navigation_kernel's entry point for these argument types

    @property
    def accel(self) -> NDArray[np.float64]:
        """(3,) the acceleration the next prediction plans [m/s^2] (inertial axes)."""
        return self.state.accel.copy()

    def commanded_force(self, f_B):
        """The force on the base this tick plans (thrusters' mean force plus the arm's planned
        reaction, base axes) [N]: the next prediction's acceleration
        (:func:`~dqspace.control.navigation_tick.commanded_force_kernel`)."""
        commanded_force_kernel(self.mass, self.state.pose, _f64(f_B), self.state.accel)

    def estimate(self, t, q, v) -> Measurement:
        """The measurement at the tick ``t`` [s] from the plant's true ``(q, v)``
        (:func:`~dqspace.control.navigation_tick.navigation_kernel`); sets :attr:`error`."""
        o = self.out
        args = (self.params, self.state, self.fsw.index, float(t), _f64(q), _f64(v), o)
        if self._kernel is None:  # typed once: typing the named tuples costs 0.3 ms a call
            self._kernel = navigation_kernel.compile(tuple(typeof(a) for a in args))
        self._kernel(*args)
        self.error = (o.att_err.copy(), o.pos_err.copy())
        return Measurement(
            State(o.q.copy(), o.v.copy()), o.gimbal.copy(), o.gimbal_rate.copy(),
            o.vscmg_speed.copy(), o.rw_speed.copy(), o.base_rate.copy(),
        )  # fmt: skip


class Plant:
    """The plant of a built system: multibody + actuator physics between ticks.

    What it adds to the commands (:mod:`dqspace.scenarios._inputs` does it inside the
    integration): the thrusters' valve timing (``thrusters.open_delay``, ``close_delay``,
    ``min_on_time``; :class:`~dqspace.actuators.thrusters.Valves`, in dynamics steps), the
    joint limiter (arm torque and rate limits; reaction-wheel motor torque, speed and
    friction; VSCMG gimbal and wheel motor torque, rate and friction from ``[vscmg]``),
    and, with ``[orbit] enabled``, the orbit terms on every body.
    """

    def __init__(self, system):
        from ...actuators import Valves

        sy = self.sy = system
        cfg = sy.cfg
        self.dt = cfg["integrator"]["dt"]
        self.steps = int(round(1.0 / cfg["control"]["rate"] / self.dt))
        plant = sy.plant
        S = sy.thrusters.n if sy.thrusters is not None else 0
        cm, wm, info = sy.cluster_model, sy.wheel_model, sy.arm_info
        K = cm.cluster.K if cm is not None else 0
        # the joint limiter: arm joints with a finite torque or rate limit, wheel motors,
        # VSCMG gimbal and wheel motors; `groups` names the limiter's rows of each device
        lim_v, lim_tau, lim_rate, lim_fr, lim_cf = [], [], [], [], []

        def limit(j, torque, rate, viscous=0.0, coulomb=0.0):
            lim_v.append(int(j))
            lim_tau.append(float(torque))
            lim_rate.append(float(rate))
            lim_fr.append(float(viscous))
            lim_cf.append(float(coulomb))
            return len(lim_v) - 1

        groups = {"arm": [], "rw": [], "gimbal": [], "vscmg_wheel": []}
        self._arm_rows = []  # the arm joints (0..n-1) the limiter has, in its order
        for j in range(info.n):
            if np.isfinite(info.torque_limit[j]) or np.isfinite(info.rate_limit[j]):
                groups["arm"].append(limit(6 + j, info.torque_limit[j], info.rate_limit[j]))
                self._arm_rows.append(j)
        if wm is not None:
            arr = wm.array
            for i, j in enumerate(wm.index.wheel_v):
                groups["rw"].append(
                    limit(j, arr.max_torque[i], arr.max_speed[i], arr.wheels[i].friction)
                )
        if cm is not None:
            vc = cfg["vscmg"]
            for j in cm.index.gimbal_v:
                groups["gimbal"].append(
                    limit(
                        j,
                        vc["gimbal_torque_max"],
                        vc["gimbal_rate_max"],
                        vc["gimbal_friction"],
                        vc["gimbal_coulomb"],
                    )
                )
            for j in cm.index.wheel_v:
                groups["vscmg_wheel"].append(
                    limit(
                        j,
                        vc["wheel_torque_max"],
                        vc["wheel_speed_max_rpm"] * np.pi / 30.0,
                        vc["wheel_friction"],
                        vc["wheel_coulomb"],
                    )
                )
        self.groups = {k: np.array(v, dtype=int) for k, v in groups.items()}
        big = np.finfo(float).max
        self.limited = dict(
            limited_v=np.array(lim_v, float),
            max_torque=np.nan_to_num(np.array(lim_tau, float), posinf=big),
            max_rate=np.nan_to_num(np.array(lim_rate, float), posinf=big),
            friction=np.array(lim_fr, float),
            coulomb=np.array(lim_cf, float),
        )
        orbit = cfg["orbit"]
        nb = plant.nb if orbit["enabled"] else 0
        self.layout = _inputs.layout(plant.nv, S, K, len(lim_v), nb)
        self.params = _inputs.pack(
            self.layout,
            dt=self.dt,
            H=sy.thruster_H_true if sy.thrusters is not None else np.zeros((6, 0)),
            k_g=cfg["vscmg"]["servo_bandwidth"],
            cluster_index=cm.index if cm is not None else None,
            cluster=cm.cluster if cm is not None else None,
            orbit_rate=orbit["rate"],
            model=plant,
            **self.limited,
        )
        self.tick_inputs = _inputs.TickInputs(self.layout, self.params)
        # the limiter's report: RK4 stages per limited joint at which it clipped
        self.mem = np.zeros(len(lim_v))
        tc = cfg["thrusters"]
        # the valves' timing in dynamics steps (Valves checks it), their state
        vt = Valves(
            S,
            period=float(self.steps),
            open_delay=tc["open_delay"] / self.dt,
            close_delay=tc["close_delay"] / self.dt,
            min_on_time=tc["min_on_time"] / self.dt,
        )
        self.valves = np.array([vt.open_delay, vt.close_delay, vt.min_on_time])
        self.valve_carry = np.full(S, -np.inf)  # thrust still coming from earlier pulses
        self.tail_level = np.zeros(S)  # thrust of the pulse still delivering [N]

    def apply(
        self, t, tau, n_on, on_level, off_level, gimbal_rate_cmd, wheel_accel_cmd,
        disturbance, *, commit=True,
    ) -> NDArray[np.float64]:  # fmt: skip
        """Write the commands of the period starting at ``t`` into ``params`` (``tau``
        (nv,), the pulses ``n_on`` [steps] and the levels (S,), the VSCMG commands (K,), the
        disturbance (6,) on the base)
        (:func:`~dqspace.scenarios._inputs.apply_commands`, valve timing in); returns (S,)
        the mean thrust [N] each thruster delivers over the period (valve timing and faults
        in; the magnitude errors are in ``thruster_H_true``).  ``commit=False``: the valves'
        state is left as it was."""
        delivered = np.empty(len(self.tail_level))
        _inputs.apply_commands(
            self.params, float(t), self.steps, _f64(tau), _f64(n_on), _f64(on_level),
            _f64(off_level), _f64(disturbance), _f64(gimbal_rate_cmd), _f64(wheel_accel_cmd),
            self.valves, self.valve_carry, self.tail_level, commit, delivered,
        )  # fmt: skip
        return delivered

    def saturation(self) -> dict[str, NDArray[np.bool_]]:
        """Which limited joints the limiter clipped (torque limit) or cut (rate limit) during
        the periods integrated since the last call, per device (:meth:`devices`); then starts
        counting afresh."""
        hit = self.mem > 0.0
        self.mem[:] = 0.0
        return self.devices(hit)

    def devices(self, hit: NDArray[np.bool_]) -> dict[str, NDArray[np.bool_]]:
        """The limiter's rows ``hit`` (..., L) per device: ``"arm"`` (..., n), ``"rw"``
        (..., W), ``"gimbal"`` (..., K), ``"vscmg_wheel"`` (..., K)."""
        hit = np.asarray(hit, dtype=bool)
        out = {k: hit[..., rows] for k, rows in self.groups.items()}
        arm = np.zeros((*hit.shape[:-1], self.sy.arm_info.n), dtype=bool)
        arm[..., self._arm_rows] = out["arm"]
        out["arm"] = arm
        return out

    def advance(self, q, v, t, c: Commands, disturbance):
        """The state one control period after ``t`` with the commands ``c`` held."""
        self.apply(
            t, c.tau_hold, c.n_on, c.on_level, c.off_level, c.gimbal_rate_cmd,
            c.wheel_accel_cmd, disturbance,
        )  # fmt: skip
        return self.integrate(q, v, t)

    def integrate(self, q, v, t):
        """The state one control period after ``t`` with the commands already written into
        ``params`` (:meth:`apply`)."""
        tr = simulate_compiled(
            self.sy.plant,
            q,
            v,
            dt=self.dt,
            n_steps=self.steps,
            t0=t,
            inputs=_inputs.closed_loop_inputs,
            params=self.params,
            mem=self.mem,
            record_every=self.steps,
        )
        return tr.q[-1], tr.v[-1]

    @property
    def inputs(self):
        """The plant boundary's compiled callback (numba's dispatcher)."""
        return compiled(_inputs.closed_loop_inputs)
