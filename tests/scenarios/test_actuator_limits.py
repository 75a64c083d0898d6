"""Actuator imperfections in the plant, against analytic references.

* Thruster valves: inside a period the plant's thrust over each dynamics step is the valve
  window's share of the step, so a pulse delivers its exact impulse whatever the delays; in
  the loop the momentum books close with the thrust the valves let through, not with the
  planned one.
* VSCMG motors (the joint limiter of the plant callback, on a device carried by a base too
  heavy to move): a wheel or gimbal driven above its motor's torque limit accelerates at
  exactly limit / inertia; the speed and rate limits hold; viscous friction decays a free
  wheel or gimbal as ``exp(-c t / I)``, Coulomb friction linearly; the callback counts in
  ``mem`` the stages at which it clipped.
* Saturations are recorded and counted in the metrics.
"""

import math

import numpy as np
import pytest

from dqspace.actuators import VSCMG, ValveWindows, VSCMGCluster, attach_cluster
from dqspace.multibody import Body, Joint, JointType, Model, momentum, simulate_compiled
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.sim import boundary as _inputs
from dqspace.scenarios.sim.metrics import summarize
from dqspace.scenarios.sim.plant import Plant
from support.books import expected_momentum_change, momentum_closes

SK = "station-keeping"
VALVES = [
    "thrusters.open_delay=0.0025",
    "thrusters.close_delay=0.0015",
    "thrusters.min_on_time=0.0025",
]
OPEN, CLOSE, MIN_ON = 0.0025, 0.0015, 0.0025  # [s]


# ------------------------------------------------------------------ thruster valves


def test_each_step_gets_the_valve_windows_share_of_the_thrust_exactly():
    sy = build_system(load_scenario(SK, VALVES).config)
    plant = Plant(sy)
    S, steps, dt = sy.thrusters.n, plant.steps, plant.dt
    rng = np.random.default_rng(4)
    # windows with fractional edges (in steps), a tail, levels and a stuck-on level
    start = rng.uniform(0, 4, S)
    end = np.minimum(start + rng.uniform(0, 8, S), steps)
    tail = np.minimum(rng.uniform(0, 3, S), start)
    lv, tl, off = rng.uniform(1, 10, S), rng.uniform(1, 10, S), np.zeros(S)
    off[3] = 2.0
    w = ValveWindows(tail, start, end)
    t0 = 0.37
    params = plant.tick_inputs(
        t0, np.zeros(sy.plant.nv), w, tl, lv, off, np.zeros(6), np.zeros(4), np.zeros(4)
    )
    q, v = sy.q0, sy.v0
    tau, fext = np.empty(sy.plant.nv), np.empty((sy.plant.nb, 6))
    impulse = np.zeros(6)
    for s in range(steps):
        t_step = t0 + s * dt
        for t in (t_step, t_step + dt / 2, t_step + dt / 2, t_step + dt):  # the RK4 stages
            _inputs.closed_loop_inputs(t, t_step, q, v, params, plant.mem, tau, fext)
            impulse += fext[0] * dt / 4  # the stages agree: the thrust is constant in a step
    on = end - start
    expected = sy.thruster_H_true @ ((lv * on + tl * tail + off * (steps - on - tail)) * dt)
    np.testing.assert_allclose(impulse, expected, rtol=1e-13, atol=1e-15)


def test_in_the_loop_the_books_close_with_the_thrust_the_valves_let_through():
    # a steady push makes the PWM fire pulses of 1 to 4 ms
    sc = load_scenario(SK, ["scenario.duration=2", "disturbance.force=[3, -2, 1]"] + VALVES)
    res = run(sc, progress=False)
    sy = build_system(sc.config)
    momentum_closes(res, sy.plant, rtol=2e-3)  # the delivered thrust
    q, v = res["q"], res["v"]
    dp = momentum(sy.plant, q[-1], v[-1]).linear - momentum(sy.plant, q[0], v[0]).linear
    planned, _ = expected_momentum_change(res, "wrench_thr")
    assert np.linalg.norm(dp - planned) > 10 * 2e-3 * np.linalg.norm(planned)
    # per thruster, by whole pulses: each executed pulse of commanded width w lets through
    # (w - open + close) at 10 N; a pulse shorter than the minimum on-time starting while
    # the thruster is not firing is not executed
    widths, T = res["thrust_on"], 0.01
    expected = np.zeros(sy.thrusters.n)
    executed = rejected = 0
    for i in range(sy.thrusters.n):
        end_prev, k = -np.inf, 0
        while k < len(widths):
            if widths[k, i] > 0:
                start, w = k * T, widths[k, i]
                while w >= T - 1e-12 and k + 1 < len(widths) and widths[k + 1, i] > 0:
                    k += 1
                    w = k * T + widths[k, i] - start
                if w >= MIN_ON - 1e-12 or end_prev > start:
                    expected[i] += 10.0 * max(0.0, w - OPEN + CLOSE)
                    end_prev = start + w + CLOSE
                    executed += 1
                else:
                    rejected += 1
            k += 1
    assert executed > 20 and rejected > 20
    got = res["thrust_impulse_true"].sum(0)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    assert summarize(res)["base_pos_err_max"] < 0.02  # the loop still holds the base


def test_valve_timing_longer_than_a_period_is_refused_naming_the_key():
    from dqspace.scenarios.spec.config import ScenarioError

    with pytest.raises(ScenarioError, match="thrusters.close_delay = 0.01 s must be shorter"):
        load_scenario(SK, ["thrusters.close_delay=0.01"])
    with pytest.raises(ScenarioError, match="thrusters.min_on_time"):
        load_scenario(SK, ["thrusters.min_on_time=0.02"])


# ------------------------------------------------------------------ VSCMG motors

DT = 1e-3
W0 = 3000.0 * math.pi / 30.0  # [rad/s]


def _close(actual, expected, **tol):
    """assert_allclose with the expected values broadcast to the actual ones' shape."""
    np.testing.assert_allclose(actual, np.broadcast_to(expected, actual.shape), **tol)


def _device(*, k_g=50.0, torque=(1e3, 1e3), rate=(1e3, 1e3), viscous=(0, 0), coulomb=(0, 0)):
    """Three VSCMGs (the paper's rotor; gimbal axes x, y, z) on a free base of 1e12 kg and
    kg m^2, the plant callback's params with every gimbal and wheel joint in the limiter
    (the pairs: gimbal, wheel)."""
    base = Body("base", None, Joint(JointType.FREE), 1e12, np.zeros(3), 1e12 * np.eye(3))
    e = np.eye(3)
    units = [VSCMG(gimbal_axis=e[i], spin_axis=e[(i + 1) % 3]) for i in range(3)]
    cm = attach_cluster(Model.build([base]), VSCMGCluster(units))
    ix = cm.index
    lay = _inputs.layout(cm.model.nv, 0, 3, 6)
    params = _inputs.pack(
        lay,
        dt=DT,
        H=np.zeros((6, 0)),
        k_g=k_g,
        cluster_index=ix,
        geometry=cm.cluster.geometry,
        limited_v=np.r_[ix.gimbal_v, ix.wheel_v],
        **{
            name: np.repeat(pair, 3)
            for name, pair in (
                ("max_torque", torque),
                ("max_rate", rate),
                ("friction", viscous),
                ("coulomb", coulomb),
            )
        },
    )
    return cm, lay, params


def _spin(cm, lay, params, *, gimbal_rate_cmd, wheel_accel_cmd, gamma_dot0=0.0, T=2.0):
    """(t, gimbal rates (N, 3), wheel speeds (N, 3), mem (6,)) from rest at the nominal
    wheel speed (gimbal rates gamma_dot0), the same commands for the three units."""
    none = ValveWindows(np.zeros(0), np.zeros(0), np.zeros(0))
    z = np.zeros(0)
    _inputs.TickInputs(lay, params)(
        0.0,
        np.zeros(cm.model.nv),
        none,
        z,
        z,
        z,
        np.zeros(6),
        np.full(3, gimbal_rate_cmd),
        np.full(3, wheel_accel_cmd),
    )
    q0, v0 = cm.with_state(
        cm.model.neutral_configuration(),
        np.zeros(cm.model.nv),
        gamma_dot=np.full(3, gamma_dot0),
        wheel_speed=np.full(3, W0),
    )
    mem = np.zeros(6)
    tr = simulate_compiled(
        cm.model, q0, v0, dt=DT, n_steps=int(T / DT), inputs=_inputs.closed_loop_inputs,
        params=params, mem=mem,
    )  # fmt: skip
    ix = cm.index
    return tr.t[:, None], tr.v[:, ix.gimbal_v], tr.v[:, ix.wheel_v], mem


def test_a_wheel_above_its_motor_torque_limit_spins_up_at_exactly_limit_over_inertia():
    cm, lay, params = _device(torque=(1e3, 0.05))
    t, _, om, mem = _spin(cm, lay, params, gimbal_rate_cmd=0.0, wheel_accel_cmd=10.0)
    I_ws = cm.cluster.units[0].wheel_inertia[0]  # 0.1233 kg m^2: 10 rad/s^2 needs 1.23 N m
    _close(om, W0 + 0.05 / I_ws * t, rtol=1e-12)
    assert np.all(mem[3:] == 4 * (len(t) - 1)) and not mem[:3].any()  # every stage, wheels
    # below the limit the wheel follows its command and nothing is clipped
    cm, lay, params = _device(torque=(1e3, 2.0))
    t, _, om, mem = _spin(cm, lay, params, gimbal_rate_cmd=0.0, wheel_accel_cmd=10.0)
    _close(om, W0 + 10.0 * t, rtol=1e-12)
    assert not mem.any()


def test_a_gimbal_above_its_motor_torque_limit_accelerates_at_limit_over_inertia():
    cm, lay, params = _device(torque=(0.02, 1e3))
    t, gd, _, mem = _spin(cm, lay, params, gimbal_rate_cmd=1.0, wheel_accel_cmd=0.0)
    I_cg = cm.cluster.I_cg[0]  # gimbal and wheel about g
    # the gimbals turning the wheels' momentum (38.7 N m s each) turn the 1e12 kg m^2 base
    # by ~1e-11 rad/s, whose gyroscopic torque I_ws Omega (t . w) on the gimbals is ~1e-8
    # of the 0.02 N m
    _close(gd, 0.02 / I_cg * t, rtol=2e-8, atol=1e-15)
    assert mem[:3].all() and not mem[3:].any()


def test_the_speed_and_rate_limits_hold():
    top = W0 + 0.5
    cm, lay, params = _device(torque=(0.05, 0.05), rate=(0.3, top))
    t, gd, om, mem = _spin(cm, lay, params, gimbal_rate_cmd=1.0, wheel_accel_cmd=10.0, T=3.0)
    I_ws, I_cg = cm.cluster.units[0].wheel_inertia[0], cm.cluster.I_cg[0]
    # the motors stop pushing at the limit: at most one step's acceleration beyond it
    assert om.max() <= top + 0.05 / I_ws * DT and np.all(om[-1] >= top)
    assert gd.max() <= 0.3 + 0.05 / I_cg * DT and np.all(gd[-1] >= 0.3)
    reach = (top - W0) / (0.05 / I_ws)  # 1.23 s at the limit acceleration
    k = t[:, 0] < reach - DT
    _close(om[k], W0 + 0.05 / I_ws * t[k], rtol=1e-12)


def test_viscous_friction_decays_a_free_wheel_and_gimbal_as_exp_minus_c_t_over_i():
    cv_w, cv_g = 0.06, 0.03  # [N m s/rad]
    cm, lay, params = _device(k_g=0.0, viscous=(cv_g, cv_w))
    t, gd, om, mem = _spin(
        cm, lay, params, gimbal_rate_cmd=0.0, wheel_accel_cmd=0.0, gamma_dot0=0.5
    )
    I_ws, I_cg = cm.cluster.units[0].wheel_inertia[0], cm.cluster.I_cg[0]
    _close(om, W0 * np.exp(-cv_w * t / I_ws), rtol=1e-9)
    _close(gd, 0.5 * np.exp(-cv_g * t / I_cg), rtol=1e-8)
    assert not mem.any()  # friction is not a saturation


def test_coulomb_friction_slows_a_free_wheel_linearly():
    cc = 0.1233  # [N m]: 1 rad/s^2 on the paper's rotor
    cm, lay, params = _device(k_g=0.0, coulomb=(0.0, cc))
    t, _, om, _ = _spin(cm, lay, params, gimbal_rate_cmd=0.0, wheel_accel_cmd=0.0)
    I_ws = cm.cluster.units[0].wheel_inertia[0]
    _close(om, W0 - cc / I_ws * t, rtol=1e-12)


# ------------------------------------------------------------------ recorded, counted


def test_saturations_are_recorded_and_counted_in_the_metrics():
    over = [
        "scenario.duration=2",
        "vscmg.gimbal_torque_max=0.005",  # the arm's reaction needs up to ~0.06 N m
        "thrusters.max_thrust=1.5",  # two thrusters per direction: 3 N
        "thrusters.min_impulse_bit=0.001",
        "disturbance.force=[3.5, 0, 0]",
    ]
    res = run(load_scenario(SK, over), progress=False)
    m = summarize(res)
    g = res["gimbal_limited"]
    assert g.shape == (len(res.t), 4) and g.any()
    assert m["gimbal_limited_ticks"] == np.any(g > 0, axis=1).sum() > 0
    assert m["vscmg_spin_limited_ticks"] == 0 and m["rw_limited_ticks"] == 0
    at_max = res["thrust_cmd"] >= 1.5 * (1 - 1e-9)
    np.testing.assert_array_equal(res["thrust_saturated"] > 0, at_max)
    assert m["thrust_saturated_ticks"] == at_max.any(axis=1).sum() > 0
    assert m["alloc_best_effort_ticks"] > 0  # a demand beyond 3 N puts thrusters at their max
    (gimbals,) = [d for d in res.manifest["degradations"] if d["kind"] == "gimbal motor limited"]
    assert gimbals["ticks"] == m["gimbal_limited_ticks"]
    assert any(d.startswith(gimbals["label"]) for d in res.manifest["degraded"])
    assert "VSCMG gimbal" in gimbals["label"] and "torque or rate limit" in gimbals["label"]
    # the default limits do not bind in the embedded scenario (its metrics unchanged)
    res = run(load_scenario(SK, ["scenario.duration=2"]), progress=False)
    assert not res["gimbal_limited"].any() and not res["vscmg_spin_limited"].any()


def test_the_plants_vscmg_servos_are_the_servo_laws_of_servo_torques():
    """Inside the integration the plant evaluates each unit's servo law in place, from the
    stage's state (no arrays made); the torques are those of the public
    :func:`~dqspace.actuators.servo.servo_torques` (which has no base-acceleration
    estimate either), number for number, for any state and commands."""
    from dqspace.actuators.servo import ServoGains, servo_torques

    sy = build_system(load_scenario("station-keeping").config)
    plant, cm = Plant(sy), sy.cluster_model
    K, nv = cm.cluster.K, sy.plant.nv
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = np.array(sy.q0, float)
        q[cm.index.gimbal_q] = rng.uniform(-np.pi, np.pi, K)
        v = rng.normal(0.0, 0.3, nv)
        v[cm.index.wheel_v] = rng.uniform(100.0, 600.0, K)
        gr, wa = rng.normal(0.0, 0.5, K), rng.normal(0.0, 20.0, K)
        params = plant.params.copy()
        zeros = np.zeros(int(params[_inputs._H.S]))  # no thruster fires
        _inputs.write_tick(
            params, 0.0, np.zeros(nv), zeros, zeros, zeros, zeros, zeros, zeros, np.zeros(6),
            gr, wa,
        )  # fmt: skip
        tau = np.zeros(nv)
        _inputs._vscmg_servos(q, v, params, K, tau)
        gains = ServoGains(gimbal_rate=float(params[int(params[_inputs._H.k_g])]))
        want = servo_torques(cm, q, v, gr, wa, gains=gains)
        np.testing.assert_array_equal(tau[cm.index.gimbal_v], want.gimbal)
        np.testing.assert_array_equal(tau[cm.index.wheel_v], want.wheel)
        others = np.setdiff1d(np.arange(nv), np.r_[cm.index.gimbal_v, cm.index.wheel_v])
        assert not tau[others].any()
