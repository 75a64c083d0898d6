"""Sensing and navigation in the compiled closed loop: the compiled loop records what the
runner's Python loop records (sensors on and off), the navigation kernel called from compiled
code gives what :class:`Navigation` gives, and ``[sensors] gyro_bias_instability`` reaches
the gyro."""

import math

import numpy as np
import pytest
from numba import njit

from dqspace.control.flight.navigation import (
    commanded_force_kernel,
    estimate_arrays,
    navigation_kernel,
)
from dqspace.scenarios import ScenarioError, load_scenario, run
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.sim import runner as runner_mod
from dqspace.scenarios.sim.plant import FlightSoftware

SK = "station-keeping"
#: sensors on, with a star-tracker latency of several of its periods' fractions, rates that
#: are not multiples of each other, and the gyro's bias instability
SENSING = [
    "sensors.enabled=true",
    "sensors.star_tracker_rate=3",
    "sensors.star_tracker_latency=0.05",
    "sensors.relnav_rate=7",
    "sensors.gyro_bias_instability=5",
]


def _run_counting_paths(monkeypatch, overrides, python_loop):
    calls = {"_compiled": 0, "_python": 0}
    for name in calls:
        real = getattr(runner_mod._ClosedLoop, name)

        def spy(self, *a, _real=real, _name=name):
            calls[_name] += 1
            return _real(self, *a)

        monkeypatch.setattr(runner_mod._ClosedLoop, name, spy)
    if python_loop:
        monkeypatch.setattr(FlightSoftware, "compiled", property(lambda self: False))
    res = run(load_scenario(SK, ["scenario.duration=1.5", *overrides]), progress=False)
    monkeypatch.undo()
    return res, calls


@pytest.mark.parametrize("overrides", [SENSING, []], ids=["sensors", "truth"])
def test_the_compiled_loop_records_what_the_python_loop_records(monkeypatch, overrides):
    a, ca = _run_counting_paths(monkeypatch, overrides, python_loop=False)
    b, cb = _run_counting_paths(monkeypatch, overrides, python_loop=True)
    assert ca["_compiled"] > 0 and ca["_python"] == 0  # sensors on stay compiled
    assert cb["_python"] > 0 and cb["_compiled"] == 0
    assert a.status == b.status == "complete" and sorted(a.data) == sorted(b.data)
    for name in a.data:
        x, y = np.asarray(a[name], dtype=float), np.asarray(b[name], dtype=float)
        assert x.shape == y.shape, name
        assert np.all(np.abs(x - y) <= 1e-12), (name, np.max(np.abs(x - y)))
    if overrides:  # the estimate errors are recorded, and have the sensors' size
        att, pos = a["nav_att_err"][1:], a["nav_pos_err"][1:]
        assert np.all(np.abs(att).max(axis=0) > 1e-7) and np.all(np.abs(att) < 1e-3)
        assert np.all(np.abs(pos).max(axis=0) > 1e-6) and np.all(np.abs(pos) < 1e-2)
    else:
        assert np.all(a["nav_att_err"] == 0.0) and np.all(a["nav_pos_err"] == 0.0)


@njit
def _navigate(p, s, ix, q, v, dt, f_B, est, out_q, out_err):
    """Ticks of the navigation from compiled code: the estimated q and the errors per tick."""
    for k in range(out_q.shape[0]):
        navigation_kernel(p, s, ix, k * dt, q, v, est)
        commanded_force_kernel(p.mass, s.pose, f_B, s.accel)
        out_q[k] = est.q
        out_err[k, :3] = est.att_err
        out_err[k, 3:] = est.pos_err


def test_the_navigation_kernel_called_from_compiled_code_gives_what_navigation_gives():
    cfg = load_scenario(SK, SENSING).config
    sy = build_system(cfg)
    a, b = FlightSoftware(sy).nav, FlightSoftware(sy).nav  # the same seeds
    rng = np.random.default_rng(3)
    q, v = sy.q0.copy(), sy.v0.copy()
    v[: sy.plant.nv] += rng.normal(0.0, 1e-3, sy.plant.nv)
    f_B = np.array([0.3, -0.2, 0.1])
    n = 120
    out_q, out_err = np.empty((n, a.fsw.nq_c)), np.empty((n, 6))
    est = estimate_arrays(a.fsw.nq_c, a.fsw.nv_c, a.fsw.K, a.fsw.W)
    _navigate(a.params, a.state, a.fsw.index, q, v, a.dt, f_B, est, out_q, out_err)
    for k in range(n):
        m = b.estimate(k * b.dt, q, v)
        b.commanded_force(f_B)
        np.testing.assert_array_equal(out_q[k], m.state.q)
        np.testing.assert_array_equal(out_err[k], np.r_[b.error[0], b.error[1]])
    np.testing.assert_array_equal(est.v, m.state.v)
    np.testing.assert_array_equal(est.gimbal_rate, m.gimbal_rate)
    np.testing.assert_array_equal(a.state.accel, b.state.accel)
    np.testing.assert_array_equal(a.mekf.P, b.mekf.P)
    assert np.any(out_err[-1] != 0.0)


def test_the_gyro_bias_instability_is_a_sensors_key():
    def gyro(overrides):
        cfg = load_scenario(SK, ["sensors.enabled=true", *overrides]).config
        return FlightSoftware(build_system(cfg)).nav.gyro

    g = gyro(["sensors.gyro_bias_instability=2", "sensors.gyro_bias_instability_band=[10, 300]"])
    assert g.bias_instability == pytest.approx(math.radians(2.0) / 3600.0, rel=1e-15)
    np.testing.assert_array_equal(g.bias_instability_band, [10.0, 300.0])
    assert g.params.phi.size == g.correlation_times.size > 0
    off = gyro([])  # the default: no bias instability, nothing extra drawn
    assert off.bias_instability == 0.0 and off.params.phi.size == 0
    with pytest.raises(ScenarioError, match=r"sensors.gyro_bias_instability_band"):
        load_scenario(SK, ["sensors.gyro_bias_instability_band=[300, 10]"])
    with pytest.raises(ScenarioError, match=r"gyro_bias_instability"):
        load_scenario(SK, ["sensors.gyro_bias_instability=-1"])
