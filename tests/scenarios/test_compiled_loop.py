"""The closed loop with the built-in stages against the same loop with stages in Python (a
user's controller class, the cvxpy allocator), and the loop's options (chunking, faults,
computation delay).

Every run takes the one compiled loop; a user's controller class (here the built-in one
subclassed, so the flight software cannot compile it) enters the tick as a Python stage
(:mod:`dqspace.control.flight.python_stage`).  Both must record the same run.
"""

import sys
import types

import numpy as np
import pytest

from dqspace.control import BaseController
from dqspace.control.flight import python_stage
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.flight import flight_software
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.sim import closed_loop
from dqspace.scenarios.sim.closed_loop import ClosedLoop


@pytest.fixture
def user_base(monkeypatch):
    """``base_controller.law`` naming a user's class: the built-in law, not compiled."""
    mod = types.ModuleType("my_gnc_loop")
    mod.Base = type("Base", (BaseController,), {})
    monkeypatch.setitem(sys.modules, "my_gnc_loop", mod)
    return "base_controller.law=my_gnc_loop:Base"


def _paths(monkeypatch):
    """How many ticks of the next runs ran their laws and their allocation in Python."""
    taken = {"law": 0, "allocation": 0}
    real_law, real_alloc = python_stage.LawStage.step, python_stage.AllocationStage.step

    def law(self, *a):
        taken["law"] += 1
        return real_law(self, *a)

    def allocation(self, *a):
        taken["allocation"] += 1
        return real_alloc(self, *a)

    monkeypatch.setattr(python_stage.LawStage, "step", law)
    monkeypatch.setattr(python_stage.AllocationStage, "step", allocation)
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
def test_a_python_law_records_what_the_compiled_law_records(name, extra, user_base, monkeypatch):
    taken = _paths(monkeypatch)
    fast = run(load_scenario(name, extra), progress=False)
    assert taken == {"law": 0, "allocation": 0}
    slow = run(load_scenario(name, [*extra, user_base]), progress=False)
    assert taken["law"] == len(slow.t) and taken["allocation"] == 0  # every tick in Python
    assert fast.status == slow.status == "complete"
    # the same kernels in the same order: the same numbers
    _same(fast, slow)


def test_a_thruster_fault_is_taken_at_its_tick_with_compiled_and_python_laws(user_base):
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


def _chunks(monkeypatch):
    """The compiled calls of the runs that follow, each as (first tick, end tick)."""
    calls = []
    real = ClosedLoop._run

    def counted(self, k0, k1, *args):
        calls.append((k0, k1))
        return real(self, k0, k1, *args)

    monkeypatch.setattr(ClosedLoop, "_run", counted)
    return calls


def test_chunking_does_not_change_a_run(monkeypatch, tmp_path):
    ov = ["scenario.duration=1.2", "disturbance.torque_noise_std=0.01"]
    calls = _chunks(monkeypatch)
    one = run(load_scenario("station-keeping", ov), progress=False)
    assert len(calls) <= 2  # the first call (1 s), then the rest at the loop's speed
    del calls[:]
    # a checkpoint every 3 ticks (saved: an output directory)
    saved = run(
        load_scenario("station-keeping", [*ov, "outputs.checkpoint_every=0.03"]),
        progress=False,
        out=tmp_path / "saved",
    )
    assert len(calls) >= 40 and all(k1 - k0 <= 4 for k0, k1 in calls)
    del calls[:]
    # calls of 7 ticks at most, not saved
    monkeypatch.setattr(closed_loop, "CHUNK_SECONDS", 0.07)
    monkeypatch.setattr(closed_loop, "FIRST_CHUNK_SECONDS", 0.07)
    short = run(load_scenario("station-keeping", ov), progress=False)
    assert len(calls) >= 18 and all(k1 - k0 <= 7 for k0, k1 in calls)
    _same(one, saved)
    _same(one, short)


def test_a_run_not_saved_is_not_cut_at_its_checkpoints(monkeypatch):
    """Without an output directory nothing is saved, so chunks need not end at checkpoints:
    fewer compiled calls (each costs its Python work)."""
    calls = _chunks(monkeypatch)
    ov = ["scenario.duration=1.2", "outputs.checkpoint_every=0.03"]
    run(load_scenario("station-keeping", ov), progress=False)
    assert len(calls) <= 2
    assert calls[0] == (0, 100)  # the first call: FIRST_CHUNK_SECONDS at 100 Hz


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
    # with the laws in Python the delay is the same
    slow = run(load_scenario("station-keeping", [*ov, user_base]), progress=False)
    _same(res, slow)


def test_the_cvxpy_reference_allocator_gives_the_same_trajectory():
    # the cvxpy allocator (a Python stage) against the fast allocation (compiled).  With
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


def test_the_flight_software_compiles_every_stage_it_can(user_base):
    cases = {
        (): True,
        ("thrusters.allocator=cvxpy",): False,
        (user_base,): False,
        ("arm_controller.law=task_space",): False,
    }
    for ov, compiled in cases.items():
        sy = build_system(load_scenario("station-keeping", list(ov)).config)
        assert flight_software(sy).compiled is compiled, ov
