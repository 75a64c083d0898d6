"""The scenario runner: ``run(scenario) -> Results``.

Closed loop (``scenario.kind = "closed_loop"``), at every control tick (default
100 Hz, zero-order hold):

1. the arm controller turns the end-effector reference into joint torques
   (IK + computed torque, :class:`dqspace.control.ArmController`);
2. the base controller turns the base pose error and the arm's planned motion
   into a wrench ``[f, tau]`` (PD + arm-reaction feedforward, P47);
3. the allocator turns ``f`` into thrusts (P49), the pulse modulator into
   on/off pulses (switched on dynamics-step boundaries);
4. the steering law turns the remaining torque ``tau - H_t sigma`` (P48), less
   the cluster's gyroscopic term, into gimbal rates and wheel accelerations,
   which the VSCMG servo loops track;
5. the plant (base + arm + cluster as real bodies) is integrated over the
   control period with compiled Lie-group RK4 (default 1 kHz), the inputs
   evaluated by :func:`dqspace.scenarios._inputs.closed_loop_inputs`.

Open loop (``"open_loop"``): the base receives ``sin(w t) [force, torque]``
(the paper's dynamics check, eq. 50), integrated with RK4 or adaptively.

Results are checkpointed atomically every ``outputs.checkpoint_every``
simulated seconds; a run interrupted with Ctrl-C (or failing) keeps what it
had computed, marked ``"interrupted"`` (``"failed"``).
"""

import sys
import time

import numpy as np

from dqspace.actuators import AllocationStatus, steer
from dqspace.control import State
from dqspace.dq import dq_conj, dq_log, dq_mul, translation_from_dq
from dqspace.multibody import (
    frame_pose,
    models,
    simulate_adaptive,
    simulate_compiled,
)

from . import _inputs
from .results import Results, SeriesInfo, package_version
from .system import build_system, thruster_faults

__all__ = ["run", "RunInterrupted"]

_ALLOC_CODE = {s: i for i, s in enumerate(AllocationStatus)}


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run; ``results`` holds what was computed (also saved if ``out``)."""

    def __init__(self, results):
        super().__init__("run interrupted")
        self.results = results


class _Progress:
    """A one-line progress bar on stderr (only on a terminal)."""

    def __init__(self, total, enabled):
        self.total, self.enabled = total, enabled and sys.stderr.isatty()
        self.t0 = time.perf_counter()
        self.last = -1

    def update(self, t):
        if not self.enabled:
            return
        pct = int(100 * t / self.total)
        if pct != self.last:
            self.last = pct
            el = time.perf_counter() - self.t0
            bar = "#" * (pct // 4) + "." * (25 - pct // 4)
            sys.stderr.write(f"\r[{bar}] {pct:3d}%  t = {t:6.2f} s  ({el:5.1f} s wall)")
            sys.stderr.flush()

    def close(self):
        if self.enabled:
            sys.stderr.write("\n")


class _Recorder:
    """Preallocated time series; ``results()`` gives a Results of the rows written."""

    def __init__(self, n, spec, manifest):
        self.n = 0
        self.info = {k: SeriesInfo(*v[1:]) for k, v in spec.items()}
        self.data = {k: np.zeros((n, *v[0])) for k, v in spec.items()}
        self.manifest = manifest

    def add(self, **values):
        i = self.n
        for k, x in values.items():
            self.data[k][i] = x
        self.n += 1

    def results(self, status, message=""):
        data = {k: v[: self.n].copy() for k, v in self.data.items()}
        m = dict(self.manifest, status=status, message=message)
        return Results(data, self.info, m)


def _checkpoint(rec, out, status="running", message=""):
    res = rec.results(status, message)
    if out is not None:
        res.save(out)
    return res


def run(scenario, out=None, *, progress=True):
    """Run a resolved scenario (see :func:`dqspace.scenarios.load_scenario`).

    Parameters
    ----------
    scenario : Scenario (or its resolved dict)
    out : directory for ``result.npz`` + ``manifest.json`` (and plots); None: in memory
    progress : show a progress bar on a terminal

    Returns
    -------
    Results
    """
    cfg = scenario.config if hasattr(scenario, "config") else scenario
    manifest = {
        "scenario": cfg,
        "seed": cfg["scenario"]["seed"],
        "package_version": package_version(),
        "source": getattr(scenario, "source", None),
    }
    if cfg["scenario"]["kind"] == "open_loop":
        return _run_open_loop(cfg, out, manifest, progress)
    return _run_closed_loop(cfg, out, manifest, progress)


# ----------------------------------------------------------------- open loop


def _run_open_loop(cfg, out, manifest, progress):
    model = models.space_manipulator()
    ol = cfg["open_loop"]
    T = cfg["scenario"]["duration"]
    rate = cfg["control"]["record_rate"]
    n = int(round(T * rate))
    t_eval = np.linspace(0.0, T, n + 1)
    q0, v0 = model.neutral_configuration(), np.zeros(model.nv)
    params = np.array(
        [ol["frequency"], *ol["base_torque_amplitude"], *ol["base_force_amplitude"]], float
    )
    integ = cfg["integrator"]
    if integ["method"] == "adaptive":

        def u(t):
            tau = np.zeros(model.nv)
            tau[:6] = np.sin(params[0] * t) * params[1:]
            return tau

        tr = simulate_adaptive(
            model,
            q0,
            v0,
            (0.0, T),
            inputs=u,
            t_eval=t_eval,
            rtol=integ["rtol"],
            atol=integ["atol"],
            max_step=integ["max_step"],
        )
    else:
        dt = integ["dt"]
        every = int(round(1.0 / (rate * dt)))
        tr = simulate_compiled(
            model,
            q0,
            v0,
            dt=dt,
            n_steps=every * n,
            inputs=_inputs.open_loop_inputs,
            params=params,
            record_every=every,
        )
    ee = np.array([translation_from_dq(frame_pose(model, q, "ee")) for q in tr.q])
    spec = {
        "t": ((), "s"),
        "q": ((model.nq,), "-", (), "configuration (base pose, joint angles [rad])"),
        "v": ((model.nv,), "-", (), "velocity (base twist [rad/s, m/s], joint rates)"),
        "ee_pos_I": ((3,), "m", ("x", "y", "z"), "end-effector position, inertial frame"),
        "base_pos_I": ((3,), "m", ("x", "y", "z"), "base position, inertial frame"),
    }
    rec = _Recorder(len(tr.t), spec, manifest)
    for i in range(len(tr.t)):
        rec.add(
            t=tr.t[i],
            q=tr.q[i],
            v=tr.v[i],
            ee_pos_I=ee[i],
            base_pos_I=translation_from_dq(tr.q[i, :8]),
        )
    return _checkpoint(rec, out, "complete")


# --------------------------------------------------------------- closed loop


def _series(sys_, K, S):
    nq, nv = sys_.plant.nq, sys_.plant.nv
    xyz = ("x", "y", "z")
    w6 = ("fx", "fy", "fz", "tx", "ty", "tz")
    return {
        "t": ((), "s"),
        "q": ((nq,), "-", (), "plant configuration"),
        "v": ((nv,), "-", (), "plant velocity"),
        "base_pos_err": ((3,), "m", xyz, "base position minus its initial one, inertial frame"),
        "base_att_err": ((3,), "rad", xyz, "base attitude error, rotation vector (base frame)"),
        "base_twist": ((6,), "rad/s, m/s", ("wx", "wy", "wz", "vx", "vy", "vz"), "base body twist"),
        "ee_pos": ((3,), "m", xyz, "end-effector position, base frame"),
        "ee_ref": ((3,), "m", xyz, "end-effector reference position, base frame"),
        "ee_err": ((3,), "m", xyz, "end-effector position error, base frame"),
        "ee_att_err": ((), "rad", (), "end-effector attitude error angle"),
        "arm_q": ((7,), "rad", (), "arm joint angles"),
        "arm_tau": ((7,), "N m", (), "arm joint torques (held over the period)"),
        "wrench_cmd": ((6,), "N, N m", w6, "commanded base wrench, base frame"),
        "wrench_ff": ((6,), "N, N m", w6, "feedforward part (the arm's reaction, negated)"),
        "arm_reaction": ((6,), "N, N m", w6, "the arm's reaction wrench on the base (-ff)"),
        "wrench_thr": ((6,), "N, N m", w6, "thrusters' mean wrench over the period"),
        "thrust_cmd": ((S,), "N", (), "allocated thrusts"),
        "thrust_on": ((S,), "s", (), "pulse widths"),
        "thrust_impulse": ((S,), "N s", (), "impulse delivered over the period"),
        "alloc_status": ((), "-", (), "allocator status code (AllocationStatus order)"),
        "vscmg_torque_cmd": ((3,), "N m", xyz, "torque asked of the VSCMGs"),
        "vscmg_torque_err": ((3,), "N m", xyz, "steering torque error (saturation)"),
        "gimbal": ((K,), "rad", (), "gimbal angles"),
        "gimbal_rate": ((K,), "rad/s", (), "gimbal rates"),
        "gimbal_rate_cmd": ((K,), "rad/s", (), "commanded gimbal rates"),
        "wheel_speed": ((K,), "rad/s", (), "wheel speeds"),
        "wheel_accel_cmd": ((K,), "rad/s^2", (), "commanded wheel accelerations"),
        "det_GGt": ((), "-", (), "det(G G^T)"),
        "det_CCt": ((), "-", (), "det(C C^T), gimbal mode only"),
    }


def _run_closed_loop(cfg, out, manifest, progress):
    sy = build_system(cfg)
    plant, cm, ts = sy.plant, sy.cluster_model, sy.thrusters
    K = cm.cluster.K if cm is not None else 0
    S = ts.n if ts is not None else 0
    dt = cfg["integrator"]["dt"]
    period = 1.0 / cfg["control"]["rate"]
    steps = int(round(period / dt))
    T = cfg["scenario"]["duration"]
    n_ticks = int(round(T / period))
    layout = _inputs.Layout(plant.nv, S, K)
    params = np.zeros(layout.size)
    rng = np.random.default_rng(np.random.SeedSequence(cfg["scenario"]["seed"]))
    dist = cfg["disturbance"]
    faults = sorted(cfg["faults"], key=lambda f: f["time"])
    health = ts
    firing = sy.modulator.initial_state() if sy.modulator is not None else None
    carry = None
    k_g = cfg["vscmg"]["servo_bandwidth"]
    rec = _Recorder(n_ticks + 1, _series(sy, K, S), manifest)
    rec.manifest = dict(manifest, events=[])
    every = max(1, int(round(cfg["outputs"]["checkpoint_every"] / period)))
    bar = _Progress(T, progress)
    q, v = sy.q0.copy(), sy.v0.copy()
    dq_I0 = q[:8].copy()
    r_I0 = translation_from_dq(dq_I0)
    nq_c, nv_c = sy.controller_model.nq, sy.controller_model.nv
    status, message = "complete", ""
    use_ff = cfg["base_controller"]["feedforward"]
    try:
        for tick in range(n_ticks + 1):
            t = tick * period
            # ---- measurements and controllers (controller model: base + arm)
            st = State(q[:nq_c].copy(), v[:nv_c].copy())
            ref = sy.trajectory(t)
            arm_cmd = sy.arm(t, st, ref)
            base_cmd = sy.base(t, st, sy.base_reference, arm_acc=arm_cmd.acc if use_ff else None)
            # computed torque with the base acceleration the commanded base wrench causes
            # (zero when the base holds; essential for a light or uncontrolled base)
            arm_tau, _ = sy.arm.torque(st, arm_cmd.acc, base_force=base_cmd.generalized_force)
            wrench = base_cmd.wrench
            # ---- thrusters (faults take effect from the first tick at or after their time)
            while faults and faults[0]["time"] <= t + 1e-9:
                f = faults.pop(0)
                health = thruster_faults(health, f)
                rec.manifest["events"].append({"t": t, "event": "thruster fault", **f})
            sigma, n_on, on_lv, off_lv = np.zeros(S), np.zeros(S), np.zeros(S), np.zeros(S)
            alloc_code = -1
            w_thr = np.zeros(6)
            mean = np.zeros(S)
            if ts is not None:
                demand = wrench[:3] if cfg["thrusters"]["mode"] == "force" else wrench
                res = sy.allocator.allocate(demand, thrusters=health)
                alloc_code = _ALLOC_CODE[res.status]
                sigma = res.sigma
                off_lv = health.delivered_thrust(np.zeros(S))
                if sy.modulator is not None:
                    train = sy.modulator.modulate(
                        np.clip(sigma, 0.0, health.sigma_max), firing, carry
                    )
                    firing, carry = train.firing, train.carry
                    n_on = np.rint(train.on_time / dt)
                    on_lv = health.delivered_thrust(train.thrust_level)
                else:  # continuous thrust held over the period
                    n_on = np.full(S, float(steps))
                    on_lv = health.delivered_thrust(sigma)
                mean = (on_lv * n_on + off_lv * (steps - n_on)) / steps
                w_thr = ts.H @ mean
            # ---- VSCMGs
            gr = wa = np.zeros(K)
            tau_v = wrench[3:] - w_thr[3:]
            steer_err = np.zeros(3)
            det_G = det_C = np.nan
            if cm is not None:
                cs = cm.state(q, v)
                mats = cm.cluster.matrices(cs.gamma, cs.wheel_speed, cs.w_IB_B)
                sc = steer(sy.steering, mats.C, mats.E, tau_v - mats.d, t=t)
                gr, wa = sc.gimbal_rates, sc.wheel_accels
                steer_err = sc.torque_error
                det_G, det_C = sc.det_GGt, sc.det_CCt
            # ---- disturbance
            d6 = np.r_[dist["force"], dist["torque"]]
            if dist["force_noise_std"] > 0 or dist["torque_noise_std"] > 0:
                d6 = (
                    d6
                    + np.r_[
                        rng.normal(0, dist["force_noise_std"], 3),
                        rng.normal(0, dist["torque_noise_std"], 3),
                    ]
                )
            tau_hold = np.zeros(plant.nv)
            tau_hold[6:13] = arm_tau
            # ---- record (state at t and the commands held over [t, t + period))
            e_ee = arm_cmd.task_error  # end-effector vs reference, in the base frame
            ee_pos = translation_from_dq(dq_mul(ref.pose, e_ee.dq))  # q^_BE = q^_BD o e^
            ref_pos = translation_from_dq(ref.pose)
            att = 2.0 * dq_log(dq_mul(dq_conj(dq_I0), q[:8]))[:3]
            rec.add(
                t=t,
                q=q,
                v=v,
                base_pos_err=translation_from_dq(q[:8]) - r_I0,
                base_att_err=att,
                base_twist=v[:6],
                ee_pos=ee_pos,
                ee_ref=ref_pos,
                ee_err=ee_pos - ref_pos,
                ee_att_err=e_ee.angle,
                arm_q=q[8:15],
                arm_tau=arm_tau,
                wrench_cmd=wrench,
                wrench_ff=base_cmd.feedforward,
                arm_reaction=-base_cmd.feedforward,
                wrench_thr=w_thr,
                thrust_cmd=sigma,
                thrust_impulse=mean * period,
                thrust_on=n_on * dt,
                alloc_status=alloc_code,
                vscmg_torque_cmd=tau_v,
                vscmg_torque_err=steer_err,
                gimbal=q[cm.index.gimbal_q] if cm else np.zeros(0),
                gimbal_rate=v[cm.index.gimbal_v] if cm else np.zeros(0),
                gimbal_rate_cmd=gr,
                wheel_speed=v[cm.index.wheel_v] if cm else np.zeros(0),
                wheel_accel_cmd=wa,
                det_GGt=det_G,
                det_CCt=det_C,
            )
            bar.update(t)
            if tick == n_ticks:
                break
            if tick % every == 0 and tick and out is not None:
                _checkpoint(rec, out)
            # ---- integrate over the period
            _inputs.pack(
                layout,
                t_tick=t,
                dt=dt,
                tau_hold=tau_hold,
                n_on=n_on,
                on_level=on_lv,
                off_level=off_lv,
                H=ts.H if ts is not None else np.zeros((6, 0)),
                disturbance=d6,
                k_g=k_g,
                gimbal_rate_cmd=gr,
                wheel_accel_cmd=wa,
                cluster_index=cm.index if cm else None,
                cluster=cm.cluster if cm else None,
                out=params,
            )
            tr = simulate_compiled(
                plant,
                q,
                v,
                dt=dt,
                n_steps=steps,
                t0=t,
                inputs=_inputs.closed_loop_inputs,
                params=params,
                record_every=steps,
            )
            q, v = tr.q[-1], tr.v[-1]
    except KeyboardInterrupt:
        bar.close()
        res = _checkpoint(rec, out, "interrupted", "interrupted by the user (Ctrl-C)")
        raise RunInterrupted(res) from None
    except Exception as exc:
        bar.close()
        _checkpoint(rec, out, "failed", f"{type(exc).__name__}: {exc}")
        raise
    bar.close()
    return _checkpoint(rec, out, status, message)
