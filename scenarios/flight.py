"""Flight software and plant of a closed-loop run, apart (the runner alternates them).

Each control tick::

    measurement = flight.measure(q, v)          # what the flight software sees
    commands = flight.tick(t, measurement, health)
    q, v = plant.advance(q, v, t, commands)      # commands held over the period

* :class:`FlightSoftware`: measurements -> controllers (:class:`~dqspace.control.
  flight_software.StationKeepingLaw`: arm law, base law with the arm-reaction
  feedforward, arm torques) -> thruster allocation and pulse modulation -> VSCMG steering
  -> reaction-wheel distribution and momentum management -> :class:`Commands`.
  Measurements are the plant's true state today (perfect knowledge).
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
from numpy.typing import NDArray

from ..actuators import AllocationStatus, steer
from ..control import State
from ..control.flight_software import LawOutput, StationKeepingLaw
from ..dq import (
    dq_from_quat_translation,
    quat_conj,
    quat_mul,
    rotation_matrix_from_dq,
    translation_from_dq,
)
from ..multibody import simulate_compiled
from . import _inputs
from .metrics import ALLOC_STATUS

__all__ = ["FlightSoftware", "Plant", "Commands", "Measurement"]

_ALLOC_CODE = {s: ALLOC_STATUS.index(s.value) for s in AllocationStatus}


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


class FlightSoftware:
    """The flight software of a built :class:`~dqspace.scenarios.system.System`."""

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
        self.mode = cfg["thrusters"]["mode"]
        self.firing = sy.modulator.initial_state() if sy.modulator is not None else None
        self.carry = None
        n = sy.arm_info.n
        self.arm_v = np.arange(6, 6 + n)
        self.nav = Navigation(self) if cfg["sensors"]["enabled"] else None

    def measure(self, q, v, t=None) -> Measurement:
        """The measurement at a tick: the true state (perfect knowledge), or, with
        ``sensors.enabled`` and the tick time ``t``, the navigation's estimates."""
        if self.nav is not None and t is not None:
            return self.nav.estimate(t, q, v)
        sy = self.sy
        st = State(q[: self.nq_c].copy(), v[: self.nv_c].copy())
        cm, wm = sy.cluster_model, sy.wheel_model
        if cm is not None:
            cs = cm.state(q, v)
            gam, gdot, om = cs.gamma, v[cm.index.gimbal_v], cs.wheel_speed
        else:
            gam = gdot = om = np.zeros(0)
        ws = wm.state(q, v) if wm is not None else np.zeros(0)
        return Measurement(st, gam, gdot, om, ws, np.array(v[:3]))

    def tick(self, t: float, m: Measurement, health) -> Commands:
        """The commands for the period starting at ``t`` (``health``: the thruster set as
        it is now, faults included; the flight software knows its faults)."""
        sy, S, K, W = self.sy, self.S, self.K, self.W
        ref = sy.trajectory(t)
        base_ref = sy.base_reference(t) if callable(sy.base_reference) else sy.base_reference
        law = self.law(t, m.state, base_ref, ref)
        wrench = law.wrench
        tel = {"base_reference": base_ref, "arm_reference": ref}
        # ---- momentum management (reaction wheels): the thrusters dump momentum
        dump = np.zeros(3)
        if W and sy.momentum_manager is not None:
            dump = np.asarray(sy.momentum_manager(m.wheel_speed), dtype=float)
        tel["dump_torque"] = dump
        # ---- thrusters
        sigma, n_on, on_lv, off_lv = np.zeros(S), np.zeros(S), np.zeros(S), np.zeros(S)
        alloc_code, w_thr, mean = -1, np.zeros(6), np.zeros(S)
        if S:
            if self.mode == "force":
                demand = wrench[:3]
            elif W:
                demand = np.r_[wrench[:3], dump]
            else:
                demand = wrench
            res = sy.allocator.allocate(demand, thrusters=health)
            alloc_code = _ALLOC_CODE[res.status]
            sigma = res.sigma
            off_lv = health.delivered_thrust(np.zeros(S))
            if sy.modulator is not None:
                train = sy.modulator.modulate(
                    np.clip(sigma, 0.0, health.sigma_max), self.firing, self.carry
                )
                self.firing, self.carry = train.firing, train.carry
                n_on = np.rint(train.on_time / self.dt)
                on_lv = health.delivered_thrust(train.thrust_level)
            else:  # continuous thrust held over the period
                n_on = np.full(S, float(self.steps))
                on_lv = health.delivered_thrust(sigma)
            mean = (on_lv * n_on + off_lv * (self.steps - n_on)) / self.steps
            w_thr = sy.thrusters.H @ mean
        tel.update(sigma=sigma, alloc_code=alloc_code, w_thr=w_thr, mean=mean)
        # ---- VSCMGs: the torque the thrusters do not deliver
        tau_v = wrench[3:] - w_thr[3:]
        gr = wa = np.zeros(K)
        steer_err = np.zeros(3)
        det_G = det_C = np.nan
        if K:
            cm = sy.cluster_model
            mats = cm.cluster.matrices(m.gimbal, m.vscmg_wheel_speed, m.base_rate)
            sc = steer(sy.steering, mats.C, mats.E, tau_v - mats.d, t=t)
            gr, wa = sc.gimbal_rates, sc.wheel_accels
            steer_err = sc.torque_error
            det_G, det_C = sc.det_GGt, sc.det_CCt
        tel.update(tau_v=tau_v, steer_err=steer_err, det_G=det_G, det_C=det_C)
        # ---- reaction wheels: what the VSCMGs did not deliver (plus the gyroscopic term)
        tau_hold = np.zeros(sy.plant.nv)
        tau_hold[self.arm_v] = law.arm_tau
        rw_cmd, rw_err = np.zeros(W), np.zeros(3)
        if W:
            from ..actuators import reaction_wheels as rw

            arr = sy.wheel_model.array
            wanted = tau_v + steer_err if K else tau_v
            # the wheels' momentum turning with the base: -w x h on the base, compensated
            h = arr.momentum(m.wheel_speed, m.base_rate)
            wanted = wanted + np.cross(m.base_rate, h)
            wc = rw.distribute(arr, wanted, m.wheel_speed, dt=self.period)
            rw_cmd, rw_err = wc.motor_torque, wc.torque_error
            tau_hold[sy.wheel_model.index.wheel_v] = rw_cmd
        tel.update(rw_torque_cmd=rw_cmd, rw_torque_err=rw_err)
        if self.nav is not None:
            self.nav.commanded_force(w_thr[:3] + law.reaction[:3])
        return Commands(law, tau_hold, n_on, on_lv, off_lv, gr, wa, tel)


class Navigation:
    """Sensors and filters of the flight software (``[sensors]``): gyro (sampled every
    tick) and star tracker into the attitude MEKF, relative navigation into the translation
    filter (predicted with the planned force on the base: thrusters and the arm's reaction),
    encoders and tachometers for the
    joints and devices.  Each sensor draws from its own generator, spawned from
    ``scenario.seed``.  The filters start at the true initial state (after an initial
    alignment) with the covariance of one star-tracker and one navigation sample."""

    def __init__(self, fsw: FlightSoftware):
        from ..control.navigation import AttitudeMEKF, TranslationKF
        from ..control.sensors import (
            ARCSEC,
            Gyro,
            JointEncoders,
            RelativeNavigation,
            StarTracker,
            Tachometer,
            arw_from_deg_per_root_hour,
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
        self.gyro = Gyro(rng[1], rate=1.0 / self.dt, arw=arw, rrw=rrw, initial_bias=b0)
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
        self.accel = np.zeros(3)
        self.w_meas = None
        self._star_last = self._relnav_last = None
        self.error = (np.zeros(3), np.zeros(3))  # attitude [rad], position [m] estimate errors

    def commanded_force(self, f_B):
        """The force on the base this tick plans (thrusters' mean force plus the arm's planned
        reaction, base axes): the next prediction's acceleration."""
        R = rotation_matrix_from_dq(self._pose)
        self.accel = R @ np.asarray(f_B, dtype=float) / self.mass

    def estimate(self, t, q, v) -> Measurement:
        fsw, sy = self.fsw, self.fsw.sy
        if self.w_meas is not None:  # propagate over the last period with its gyro sample
            self.mekf.propagate(self.w_meas, self.dt)
            self.tkf.predict(self.accel, self.dt)
        star = self.star.measure(t, q[:4])
        if star is not None and star is not self._star_last:
            self.mekf.update(star)
            self._star_last = star
        R_true = rotation_matrix_from_dq(q[:8])
        nav = self.relnav.measure(t, translation_from_dq(q[:8]), R_true @ v[3:6])
        if nav is not None and nav is not self._relnav_last:
            self.tkf.update(nav[0], nav[1])
            self._relnav_last = nav
        self.w_meas = self.gyro.measure(t, v[:3])
        w_hat = self.w_meas - self.mekf.bias
        q_hat = self.mekf.q
        if q_hat @ q[:4] < 0:
            q_hat = -q_hat
        r_hat, v_hat = self.tkf.x[:3], self.tkf.x[3:]
        self._pose = dq_from_quat_translation(q_hat, r_hat)
        R_hat = rotation_matrix_from_dq(self._pose)
        qs = np.array(q[: fsw.nq_c], dtype=float)
        vs = np.array(v[: fsw.nv_c], dtype=float)
        qs[:8] = self._pose
        qs[8:] = self.encoders.measure(qs[8:])
        vs[:3] = w_hat
        vs[3:6] = R_hat.T @ v_hat
        vs[6:] = self.joint_tacho.measure(vs[6:])
        e = quat_mul(quat_conj(q_hat), q[:4])
        self.error = (2.0 * np.sign(e[0] or 1.0) * e[1:], r_hat - translation_from_dq(q[:8]))
        cm, wm = sy.cluster_model, sy.wheel_model
        if cm is not None:
            cs = cm.state(q, v)
            gam = self.encoders.measure(cs.gamma)
            gdot = self.device_tacho.measure(v[cm.index.gimbal_v])
            om = self.device_tacho.measure(cs.wheel_speed)
        else:
            gam = gdot = om = np.zeros(0)
        ws = self.device_tacho.measure(wm.state(q, v)) if wm is not None else np.zeros(0)
        return Measurement(State(qs, vs), gam, gdot, om, ws, w_hat)


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
        from ..actuators import Valves

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
        self.valves = Valves(
            S,
            period=float(self.steps),
            open_delay=tc["open_delay"] / self.dt,
            close_delay=tc["close_delay"] / self.dt,
            min_on_time=tc["min_on_time"] / self.dt,
        )
        self._tail_level = np.zeros(S)  # thrust of the pulse still delivering [N]
        self._windows = (None, None)

    def thrust_windows(self, c: Commands):
        """The :class:`~dqspace.actuators.thrusters.ValveWindows` (in dynamics steps) of the
        period the commands ``c`` are for: when each thruster delivers thrust."""
        if self._windows[0] is not c:  # computed once per tick (recorder, then advance)
            self._windows = (c, self.valves.windows(c.n_on))
        return self._windows[1]

    def delivered_thrust(self, c: Commands) -> NDArray[np.float64]:
        """(S,) mean thrust [N] each thruster delivers over the period of the commands ``c``
        (valve timing and faults in; the magnitude errors are in ``thruster_H_true``)."""
        w = self.thrust_windows(c)
        on, tail = w.end - w.start, w.tail_end
        off = self.steps - on - tail
        return (c.on_level * on + self._tail_level * tail + c.off_level * off) / self.steps

    def saturation(self) -> dict[str, NDArray[np.bool_]]:
        """Which limited joints the limiter clipped (torque limit) or cut (rate limit) during
        the periods integrated since the last call, per device: ``"arm"`` (n,), ``"rw"``
        (W,), ``"gimbal"`` (K,), ``"vscmg_wheel"`` (K,); then starts counting afresh."""
        hit = self.mem > 0.0
        out = {k: hit[rows] for k, rows in self.groups.items()}
        arm = np.zeros(self.sy.arm_info.n, dtype=bool)
        arm[self._arm_rows] = out["arm"]
        out["arm"] = arm
        self.mem[:] = 0.0
        return out

    def advance(self, q, v, t, c: Commands, disturbance):
        """The state one control period after ``t`` with the commands ``c`` held."""
        sy = self.sy
        self.thrust_windows(c)  # planned once per tick
        w = self.valves.advance(c.n_on)
        self._windows = (None, None)
        self.tick_inputs(
            t,
            c.tau_hold,
            w,
            self._tail_level,
            c.on_level,
            c.off_level,
            disturbance,
            c.gimbal_rate_cmd,
            c.wheel_accel_cmd,
        )
        self._tail_level = np.where(w.end > w.start, c.on_level, self._tail_level)
        tr = simulate_compiled(
            sy.plant,
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
