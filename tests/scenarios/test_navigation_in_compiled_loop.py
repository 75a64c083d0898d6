"""Sensing and navigation in the closed loop: a run with its laws in Python records what the
compiled laws record (sensors on and off), the sensing and filtering kernels called tick by
tick from compiled code give what they give called from Python, and ``[sensors]
gyro_bias_instability`` reaches the gyro."""

import math
import sys
import types

import numpy as np
import pytest
from numba import njit

from dqspace.control import BaseController
from dqspace.control.flight.interfaces import estimate_arrays
from dqspace.control.flight.navigation import (
    estimate_error_kernel,
    filter_kernel,
    measurement_arrays,
    planned_acceleration_kernel,
    sense_kernel,
)
from dqspace.control.sensors import Gyro
from dqspace.scenarios import ScenarioError, load_scenario, run
from dqspace.scenarios.build.flight import navigation, plant_index_of
from dqspace.scenarios.build.system import build_system

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


@pytest.fixture
def user_base(monkeypatch):
    mod = types.ModuleType("my_gnc_nav")
    mod.Base = type("Base", (BaseController,), {})
    monkeypatch.setitem(sys.modules, "my_gnc_nav", mod)
    return "base_controller.law=my_gnc_nav:Base"


@pytest.mark.parametrize("overrides", [SENSING, []], ids=["sensors", "truth"])
def test_a_python_law_records_what_the_compiled_law_records(user_base, overrides):
    a = run(load_scenario(SK, ["scenario.duration=1.5", *overrides]), progress=False)
    b = run(load_scenario(SK, ["scenario.duration=1.5", *overrides, user_base]), progress=False)
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
def _navigate(p, s, ix, q, v, dt, wrench, reaction, w_thr, m, est, out_q, out_err):
    """Ticks of the navigation from compiled code: the estimated q and the errors per tick."""
    att, pos = np.empty(3), np.empty(3)
    for k in range(out_q.shape[0]):
        sense_kernel(p.sensors, s.sensors, ix, k * dt, q, v, m)
        filter_kernel(p.filters, s.filters, m, est)
        planned_acceleration_kernel(
            p.filters, est, wrench, reaction, np.zeros(6), w_thr, s.filters.accel
        )
        estimate_error_kernel(est, q, att, pos)
        out_q[k] = est.q
        out_err[k, :3] = att
        out_err[k, 3:] = pos


def test_the_navigation_kernels_from_compiled_code_give_what_they_give_from_python():
    cfg = load_scenario(SK, SENSING).config
    sy = build_system(cfg)
    (pa, sa), (pb, sb) = navigation(sy), navigation(sy)  # the same seeds
    ix = plant_index_of(sy)
    rng = np.random.default_rng(3)
    q, v = sy.q0.copy(), sy.v0.copy()
    v[: sy.plant.nv] += rng.normal(0.0, 1e-3, sy.plant.nv)
    wrench = np.array([0.3, -0.2, 0.1, 0.02, -0.01, 0.03])
    reaction = np.array([-0.1, 0.2, 0.05, 0.01, 0.02, -0.02])
    w_thr = np.array([0.25, -0.1, 0.2, 0.0, 0.0, 0.0])
    n, K, W = sy.arm_info.n, 4, 0
    out_q, out_err = np.empty((120, ix.nq_c)), np.empty((120, 6))
    ma, ea = measurement_arrays(n, K, W), estimate_arrays(ix.nq_c, ix.nv_c, K, W)
    _navigate(pa, sa, ix, q, v, pa.filters.dt, wrench, reaction, w_thr, ma, ea, out_q, out_err)
    mb, eb = measurement_arrays(n, K, W), estimate_arrays(ix.nq_c, ix.nv_c, K, W)
    att, pos = np.empty(3), np.empty(3)
    for k in range(120):
        sense_kernel(pb.sensors, sb.sensors, ix, k * pb.filters.dt, q, v, mb)
        filter_kernel(pb.filters, sb.filters, mb, eb)
        planned_acceleration_kernel(
            pb.filters, eb, wrench, reaction, np.zeros(6), w_thr, sb.filters.accel
        )
        estimate_error_kernel(eb, q, att, pos)
        np.testing.assert_array_equal(out_q[k], eb.q)
        np.testing.assert_array_equal(out_err[k], np.r_[att, pos])
    np.testing.assert_array_equal(ea.v, eb.v)
    np.testing.assert_array_equal(ea.gimbal_rate, eb.gimbal_rate)
    np.testing.assert_array_equal(sa.filters.accel, sb.filters.accel)
    np.testing.assert_array_equal(sa.filters.mekf.P, sb.filters.mekf.P)
    assert np.any(out_err[-1] != 0.0)


def test_the_gyro_bias_instability_is_a_sensors_key():
    def gyro(overrides):
        cfg = load_scenario(SK, ["sensors.enabled=true", *overrides]).config
        return navigation(build_system(cfg))[0].sensors.gyro

    g = gyro(["sensors.gyro_bias_instability=2", "sensors.gyro_bias_instability_band=[10, 300]"])
    # the same gyro made by hand: its Gauss-Markov bank
    ref = Gyro(
        np.random.default_rng(0), rate=100.0, bias_instability=math.radians(2.0) / 3600.0,
        bias_instability_band=[10.0, 300.0],
    )  # fmt: skip
    assert g.phi.size == ref.params.phi.size > 0
    np.testing.assert_allclose(g.phi, ref.params.phi, rtol=1e-15)
    np.testing.assert_allclose(g.sigma, ref.params.sigma, rtol=1e-15)
    off = gyro([])  # the default: no bias instability, nothing extra drawn
    assert off.phi.size == 0
    with pytest.raises(ScenarioError, match=r"sensors.gyro_bias_instability_band"):
        load_scenario(SK, ["sensors.gyro_bias_instability_band=[300, 10]"])
    with pytest.raises(ScenarioError, match=r"gyro_bias_instability"):
        load_scenario(SK, ["sensors.gyro_bias_instability=-1"])
