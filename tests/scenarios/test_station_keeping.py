"""The closed-loop station-keeping scenario: the paper's claim, faults, saturation,
determinism, interruption, and the results' round trip."""

import json

import numpy as np
import pytest

from dqspace.scenarios import RunInterrupted, load_scenario, plot_all, run
from dqspace.scenarios.sim.metrics import summarize
from dqspace.scenarios.store.results import Results

SHORT = ["scenario.duration=5.0"]


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sk")
    res = run(load_scenario("station-keeping", SHORT), out=out, progress=False)
    return res, out


def test_base_holds_and_the_end_effector_tracks(short_run):
    res, _ = short_run
    m = summarize(res)
    assert res.status == "complete"
    assert m["base_pos_err_max"] < 1e-3  # [m] the paper's mm-level hold, beaten
    assert m["base_att_err_max"] < 0.05  # [deg]
    assert m["ee_rms"] < 1e-3  # [m] after the 2 s transient
    # the arm really moved the base's load: its reaction is not negligible
    assert np.abs(res["arm_reaction"][:, :3]).max() > 0.1  # [N]
    assert m["total_impulse"] > 0.5  # [N s] the thrusters worked for it


def test_feedforward_is_what_keeps_the_base_still(short_run):
    sc = load_scenario("station-keeping", SHORT + ["base_controller.feedforward=false"])
    without = summarize(run(sc, progress=False))["base_pos_err_max"]
    with_ff = summarize(short_run[0])["base_pos_err_max"]
    assert without > 10 * with_ff  # the PD alone lets the arm push the base about


def test_result_round_trips_exactly_and_plots(short_run, tmp_path):
    res, out = short_run
    back = Results.load(out)
    assert back.status == "complete"
    for k in res.data:
        assert np.array_equal(back[k], res[k], equal_nan=True)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["scenario"]["scenario"]["name"] == "station-keeping"
    assert manifest["seed"] == 0 and manifest["package_version"]
    files = plot_all(back, tmp_path, formats=("png",))
    names = {p.name for p in files}
    assert {
        "disturbance_rejection.png",
        "tracking.png",
        "thrusters.png",
        "vscmg.png",
        "singularity.png",
    } <= names
    for p in files:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000


def test_same_file_and_seed_give_bit_identical_results():
    ov = [
        "scenario.duration=1.0",
        "disturbance.force_noise_std=0.2",
        "disturbance.torque_noise_std=0.05",
        "scenario.seed=7",
    ]
    a = run(load_scenario("station-keeping", ov), progress=False)
    b = run(load_scenario("station-keeping", ov), progress=False)
    c = run(load_scenario("station-keeping", ov[:-1] + ["scenario.seed=8"]), progress=False)
    for k in a.data:
        assert np.array_equal(a[k], b[k], equal_nan=True), k
    assert not np.array_equal(a["q"], c["q"])


def test_a_thruster_failure_mid_run_is_survived():
    # thruster 4 works hard in this scenario (see the firing plot); fail it at 2 s
    sc = load_scenario("station-keeping", [])
    doc = dict(sc.config)
    doc["faults"] = [{"time": 2.0, "thruster": 4, "kind": "failed_off", "scale": 1.0}]
    doc["scenario"] = dict(doc["scenario"], duration=5.0)
    res = run(doc, progress=False)
    after = res.t >= 2.0
    assert np.all(res["thrust_impulse"][after, 4] == 0.0)  # the allocator planned without it
    assert np.any(res["thrust_impulse"][~after, 4] > 0.0)  # and it had been used before
    assert summarize(res)["base_pos_err_max"] < 1e-3  # the base still holds
    ev = res.manifest["events"]
    assert ev and ev[0]["event"] == "thruster fault" and ev[0]["thruster"] == 4


def test_an_infeasible_demand_saturates_without_crashing():
    # 0.05 N thrusters cannot answer the arm's ~0.6 N reaction: best effort, no crash
    sc = load_scenario(
        "station-keeping",
        ["scenario.duration=3.0", "thrusters.max_thrust=0.05", "thrusters.min_impulse_bit=0.00005"],
    )
    res = run(sc, progress=False)
    assert res.status == "complete" and len(res.t) == 301
    assert np.any(res["alloc_status"] > 0)  # reported as not optimal (best effort)
    assert np.all(res["thrust_cmd"] <= 0.05 + 1e-12)


def test_ctrl_c_keeps_the_partial_results(tmp_path, monkeypatch):
    from dqspace.scenarios.sim import closed_loop as runner_mod

    real = runner_mod.ClosedLoop._run  # one compiled chunk of ticks
    calls = {"n": 0}

    def interrupt_in_3rd(self, *a, **k):  # Ctrl-C while the 3rd chunk runs
        calls["n"] += 1
        out = real(self, *a, **k)
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return out

    sc = load_scenario("station-keeping", ["scenario.duration=2.0", "outputs.checkpoint_every=0.2"])
    full = run(sc, progress=False)
    monkeypatch.setattr(runner_mod.ClosedLoop, "_run", interrupt_in_3rd)
    with pytest.raises(RunInterrupted) as exc:
        run(sc, out=tmp_path, progress=False)
    assert exc.value.results.status == "interrupted"
    back = Results.load(tmp_path)
    assert back.status == "interrupted"
    # chunks of ticks 0-20, 21-40, 41-60: what the 3rd computed is kept
    assert len(back.t) == 61 and back.t[-1] == pytest.approx(0.60)
    assert np.array_equal(back["q"], exc.value.results["q"])
    assert np.array_equal(back["q"], full["q"][:61])


def test_ctrl_c_in_a_python_stage_keeps_the_partial_results(tmp_path, monkeypatch):
    import sys
    import types

    from dqspace.control import BaseController
    from dqspace.control.flight.python_stage import LawStage

    mod = types.ModuleType("my_gnc_sk")
    mod.Base = type("Base", (BaseController,), {})  # a user's class: a Python stage
    monkeypatch.setitem(sys.modules, "my_gnc_sk", mod)
    real = LawStage.step  # the laws in Python, once a tick
    calls = {"n": 0}

    def interrupt_at_tick_60(*a, **k):  # Ctrl-C while the user's law runs
        calls["n"] += 1
        if calls["n"] == 61:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(LawStage, "step", interrupt_at_tick_60)
    ov = [
        "scenario.duration=2.0",
        "outputs.checkpoint_every=0.2",
        "base_controller.law=my_gnc_sk:Base",
    ]
    with pytest.raises(RunInterrupted) as exc:
        run(load_scenario("station-keeping", ov), out=tmp_path, progress=False)
    back = Results.load(tmp_path)
    assert back.status == "interrupted"
    assert len(back.t) == 60 and back.t[-1] == pytest.approx(0.59)
    assert np.array_equal(back["q"], exc.value.results["q"])


def test_dynamics_check_scenario_matches_pinocchio():
    from dqspace.dq import translation_from_dq
    from dqspace.multibody import frame_pose, models
    from support.dynamics_check import run_pinocchio

    sc = load_scenario("dynamics-check", ["scenario.duration=2.0", "control.record_rate=10"])
    res = run(sc, progress=False)
    ee_pin, _ = run_pinocchio(models.space_manipulator(), res.t)
    assert np.abs(res["ee_pos_I"] - ee_pin).max() < 1e-6
    m = models.space_manipulator()
    assert np.allclose(res["ee_pos_I"][-1], translation_from_dq(frame_pose(m, res["q"][-1], "ee")))


def test_masses_are_scenario_keys():
    from dqspace.scenarios.build.system import build_system

    base = build_system(load_scenario("station-keeping", []).config)
    heavy = build_system(
        load_scenario("station-keeping", ["base.mass=40", "arm.payload_mass=5"]).config
    )
    assert heavy.plant.total_mass == pytest.approx(base.plant.total_mass + 13.0 + 5.0)
    assert heavy.controller_model.total_mass == pytest.approx(heavy.plant.total_mass)
    assert "payload" in heavy.plant.body_names
    res = run(
        load_scenario("station-keeping", ["scenario.duration=3.0", "arm.payload_mass=5"]),
        progress=False,
    )
    assert summarize(res)["base_pos_err_max"] < 1e-3


def test_the_arms_reaction_is_recorded_with_the_feedforward_off():
    """The disturbance-rejection figure shows the arm's reaction also when it is not fed
    forward (it showed zeros): the arm makes the same motion, so the reaction has the size of
    the run's with it (not equal: the base, and so the computed torque, moves differently)."""
    from dqspace.scenarios import load_scenario, run

    on = run(load_scenario("station-keeping", ["scenario.duration=3"]), progress=False)
    off = run(
        load_scenario(
            "station-keeping", ["scenario.duration=3", "base_controller.feedforward=false"]
        ),
        progress=False,
    )
    assert np.all(off["wrench_ff"] == 0.0)
    scale = np.abs(on["arm_reaction"]).max()
    assert scale > 0.1 and 0.5 * scale < np.abs(off["arm_reaction"]).max() < 2.0 * scale
