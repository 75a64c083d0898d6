"""The compiled closed loop against the runner's Python loop over the same kernels, and the
loop's options (chunking, faults, computation delay, the cvxpy reference allocator).

A run takes the compiled loop (:mod:`dqspace.scenarios.sim.loop`) with the built-in controllers
and the fast allocator; a user's controller class (here the built-in one subclassed, so the
runner cannot compile it) or the cvxpy allocator takes the Python loop.  Both must record the
same run.
"""

import sys
import types

import numpy as np
import pytest

from dqspace.control import BaseController
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.sim import runner as runner_mod
from dqspace.scenarios.sim.plant import FlightSoftware


@pytest.fixture
def user_base(monkeypatch):
    """``base_controller.law`` naming a user's class: the built-in law, not compiled."""
    mod = types.ModuleType("my_gnc_loop")
    mod.Base = type("Base", (BaseController,), {})
    monkeypatch.setitem(sys.modules, "my_gnc_loop", mod)
    return "base_controller.law=my_gnc_loop:Base"


def _paths(monkeypatch):
    """Which loop each chunk of the next runs takes."""
    taken = []
    real_c, real_p = runner_mod._ClosedLoop._compiled, runner_mod._ClosedLoop._python

    def compiled(self, *a):
        taken.append("compiled")
        return real_c(self, *a)

    def python(self, *a):
        taken.append("python")
        return real_p(self, *a)

    monkeypatch.setattr(runner_mod._ClosedLoop, "_compiled", compiled)
    monkeypatch.setattr(runner_mod._ClosedLoop, "_python", python)
    return taken


def _same(a, b, keys=None, rtol=0.0):
    for k in keys or a.data:
        x, y = np.asarray(a[k], float), np.asarray(b[k], float)
        assert x.shape == y.shape, k
        scale = np.nanmax(np.abs(y)) if y.size and np.any(np.isfinite(y)) else 0.0
        np.testing.assert_allclose(x, y, rtol=0, atol=rtol * scale, err_msg=k, equal_nan=True)


@pytest.mark.parametrize(
    "name, extra",
    [
        ("station-keeping", ["scenario.duration=2.5"]),
        # a fault (a chunk ends at it), noise on the disturbance, wheels and way-points
        (
            "ur5-waypoints",
            ["scenario.duration=2.0", "disturbance.force_noise_std=0.05"],
        ),
    ],
)
def test_the_compiled_loop_records_what_the_python_loop_records(
    name, extra, user_base, monkeypatch
):
    taken = _paths(monkeypatch)
    fast = run(load_scenario(name, extra), progress=False)
    assert set(taken) == {"compiled"}
    taken.clear()
    slow = run(load_scenario(name, [*extra, user_base]), progress=False)
    assert set(taken) == {"python"}
    assert fast.status == slow.status == "complete"
    # the same kernels in the same order: the same numbers
    _same(fast, slow)


def test_a_thruster_fault_is_taken_at_its_tick_in_both_loops(user_base):
    fault = ["faults=[{time = 0.735, thruster = 2, kind = 'failed_off'}]", "scenario.duration=1.5"]
    fast = run(load_scenario("station-keeping", fault), progress=False)
    slow = run(load_scenario("station-keeping", [*fault, user_base]), progress=False)
    _same(fast, slow)
    events = [e for e in fast.manifest["events"] if e["event"] == "thruster fault"]
    assert [e["t"] for e in events] == [pytest.approx(0.74)]  # the first tick at or after
    k = int(round(0.74 / 0.01))
    assert np.all(fast["thrust_impulse_true"][k:, 2] == 0.0)
    assert np.any(fast["thrust_impulse_true"][:k, 2] > 0.0) or np.all(
        fast["thrust_cmd"][:k, 2] == 0
    )


def test_chunking_does_not_change_a_run():
    ov = ["scenario.duration=1.2", "disturbance.torque_noise_std=0.01"]
    one = run(
        load_scenario("station-keeping", [*ov, "outputs.checkpoint_every=1.0"]), progress=False
    )
    many = run(
        load_scenario("station-keeping", [*ov, "outputs.checkpoint_every=0.03"]), progress=False
    )
    _same(one, many)


def test_a_computation_delay_applies_each_ticks_commands_one_period_later(user_base):
    ov = ["scenario.duration=2.0", "control.computation_delay=true"]
    res = run(load_scenario("station-keeping", ov), progress=False)
    now = run(load_scenario("station-keeping", ["scenario.duration=2.0"]), progress=False)
    # the plant delivers at tick k the pulses planned at tick k - 1 (ideal valves), nothing
    # before the first decision
    np.testing.assert_array_equal(res["thrust_impulse_true"][0], 0.0)
    np.testing.assert_allclose(
        res["thrust_impulse_true"][1:], res["thrust_impulse"][:-1], rtol=0, atol=1e-15
    )
    np.testing.assert_allclose(now["thrust_impulse_true"], now["thrust_impulse"], atol=1e-15)
    # the delay costs something but the loop holds the base
    m, m0 = res.manifest["metrics"], now.manifest["metrics"]
    assert m["base_pos_err_max"] != m0["base_pos_err_max"]
    assert m["base_pos_err_max"] < 1e-3 and m["base_att_err_max"] < 0.05
    # the Python loop delays the same way
    slow = run(load_scenario("station-keeping", [*ov, user_base]), progress=False)
    _same(res, slow)


def test_the_cvxpy_reference_allocator_gives_the_same_trajectory():
    # the Python loop with cvxpy against the compiled loop with the fast allocation.  With
    # the paper's equal weights the LP optimum is not unique (two thrusters pushing the
    # same way): the simplex picks a vertex, the interior-point solver the face's middle.
    # Distinct weights make it unique; continuous thrust keeps the runs comparable (PWM
    # rounding would turn a 1e-10 N difference into a 1 ms pulse)
    w = "thrusters.weights=[" + ", ".join(f"{1.0 + 0.05 * i:g}" for i in range(12)) + "]"
    ov = ["scenario.duration=1.5", "thrusters.pwm=false", w]
    fast = run(load_scenario("station-keeping", ov), progress=False)
    ref = run(load_scenario("station-keeping", [*ov, "thrusters.allocator=cvxpy"]), progress=False)
    assert np.all(ref["alloc_status"] == 0) and np.all(fast["alloc_status"] == 0)
    # the allocation to the solvers' tolerance (1e-9 relative), the runs to that
    _same(fast, ref, ["thrust_cmd"], rtol=1e-8)
    _same(fast, ref, ["base_pos_err", "base_att_err", "ee_err", "wrench_cmd", "q"], rtol=1e-8)


def test_thruster_weights_are_checked():
    with pytest.raises(ValueError, match="thrusters.weights has 2 entries but there are 12"):
        build_system(load_scenario("station-keeping", ["thrusters.weights=[1, 2]"]).config)


def test_the_runner_compiles_only_what_it_can(user_base):
    cases = {
        (): True,
        ("thrusters.allocator=cvxpy",): False,
        (user_base,): False,
        ("arm_controller.law=task_space",): False,
    }
    for ov, compiled in cases.items():
        sy = build_system(load_scenario("station-keeping", list(ov)).config)
        assert FlightSoftware(sy).compiled is compiled, ov
