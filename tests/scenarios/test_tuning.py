"""Gain tuning by parallel compass search: a known optimum, bounds, failures, caching,
the chosen gains' metrics against a direct run, converged / not-converged reporting, and bad
input."""

import math

import numpy as np
import pytest

from dqspace.scenarios import load_scenario, run, tune
from dqspace.scenarios.sim.metrics import summarize

TINY = ["scenario.duration=0.1"]


def _known_objective(counter):
    """Quadratic in the log-gains the run used (read back from its manifest); minimum at
    kp_trans = 1500, kd_rot = 20, omega_n = 400 (the last outside the bounds below)."""

    def gain_error(res):
        cfg = res.manifest["scenario"]
        with open(counter, "a") as fh:
            fh.write("x\n")
        return (
            math.log(cfg["base_controller"]["kp_trans"][0] / 1500.0) ** 2
            + math.log(cfg["base_controller"]["kd_rot"][0] / 20.0) ** 2
            + 0.1 * math.log(cfg["arm_controller"]["omega_n"] / 400.0) ** 2
        )

    return gain_error


PARAMS = {
    "base_controller.kp_trans": (0.1, 10.0),  # base 600: optimum factor 2.5
    "base_controller.kd_rot": (0.1, 10.0),  # base 60: optimum factor 1/3
    "arm_controller.omega_n": (0.5, 4.0),  # base 20: optimum factor 20, beyond the bound
}


def test_the_search_finds_a_known_optimum_and_a_rerun_reuses_every_run(client, tmp_path):
    counter = tmp_path / "count.txt"
    sc = load_scenario("station-keeping", TINY)
    kw = dict(metrics=[_known_objective(counter)], scheduler=client, out=tmp_path / "sw")
    r = tune(sc, PARAMS, "gain_error", min_step=1.05, progress=False, **kw)
    assert r.converged and r.step < 1.05
    tol = math.log(1.05)  # quadratic objective: within one final poll factor
    assert abs(math.log(r.best["base_controller.kp_trans"][0] / 1500.0)) < tol
    assert abs(math.log(r.best["base_controller.kd_rot"][0] / 20.0)) < tol
    assert r.best["arm_controller.omega_n"] == pytest.approx(80.0, rel=1e-6)  # at the bound
    assert r.factors["arm_controller.omega_n"] == pytest.approx(4.0, rel=1e-12)
    # vectors keep their axes' ratios; every evaluation stayed inside the bounds
    assert len(set(r.best["base_controller.kp_trans"])) == 1
    for key, (lo, hi) in PARAMS.items():
        f = r.history[f"factor:{key}"]
        assert (f >= lo * (1 - 1e-12)).all() and (f <= hi * (1 + 1e-12)).all()
    # bookkeeping: the best is the history's minimum; the start is the base gains
    assert r.objective == r.history["objective"].min() < r.start_objective
    assert r.start["base_controller.kp_trans"] == (600.0, 600.0, 600.0)
    assert r.n_evaluations == len(r.history) == r.history["variant"].nunique()
    assert r.history["batch"].max() == r.n_batches
    n = len(counter.read_text().splitlines())
    assert n == r.n_evaluations  # each candidate ran once, in batches through the sweep
    assert r.scenario.config["base_controller"]["kd_rot"] == r.best["base_controller.kd_rot"]
    # the same search again: identical answer, nothing run (all read from out)
    again = tune(sc, PARAMS, "gain_error", min_step=1.05, progress=False, **kw)
    assert again.best == r.best and again.objective == r.objective
    assert len(counter.read_text().splitlines()) == n


def test_the_chosen_gains_metrics_are_those_of_a_direct_run(client):
    sc = load_scenario(
        "station-keeping", ["scenario.duration=2", "base_controller.feedforward=false"]
    )
    r = tune(
        sc,
        {"base_controller.kp_trans": (0.5, 8.0), "base_controller.kd_trans": (0.5, 8.0)},
        "base_pos_err_max",
        max_batches=3,
        scheduler=client,
        progress=False,
    )
    assert r.n_batches <= 3 and r.objective <= r.start_objective
    direct = summarize(run(r.scenario, progress=False))
    for name, value in direct.items():
        assert r.metrics[name] == value, name  # bit-identical
    assert r.objective == direct["base_pos_err_max"]
    base = summarize(run(sc, progress=False))
    assert r.start_objective == base["base_pos_err_max"]


def test_failed_candidates_count_as_infinitely_bad(client):
    sc = load_scenario("station-keeping", TINY)

    def pull_up_but_fail_above_2(res):
        kp = res.manifest["scenario"]["base_controller"]["kp_trans"][0]
        if kp > 1200.0 * (1 + 1e-9):
            raise RuntimeError(f"kp_trans = {kp} too high")
        return -kp

    r = tune(
        sc,
        {"base_controller.kp_trans": (0.5, 8.0)},
        "pull_up_but_fail_above_2",
        metrics=[pull_up_but_fail_above_2],
        scheduler=client,
        progress=False,
    )
    failed = r.history[r.history["error"].notna()]
    assert len(failed) >= 1 and np.isinf(failed["objective"]).all()
    assert failed["error"].str.contains("too high").all()
    assert r.best["base_controller.kp_trans"][0] <= 1200.0 * (1 + 1e-9)
    assert r.best["base_controller.kp_trans"][0] > 1200.0 / 1.05 / 1.05


@pytest.mark.parametrize(
    "params, kwargs, needle",
    [
        ({"base_controller.kp": (0.5, 2)}, {}, "'base_controller.kp' is not a key"),
        ({"nosuch.key": (0.5, 2)}, {}, "'nosuch.key' is not a key"),
        ({"thrusters.allocator": (0.5, 2)}, {}, "is not a real-valued gain"),
        ({"scenario.seed": (0.5, 2)}, {}, "is not a real-valued gain"),
        ({"disturbance.force_noise_std": (0.5, 2)}, {}, "the base value must be > 0"),
        ({"arm_controller.zeta": (0.0, 2)}, {}, "need 0 < lower < upper"),
        ({"arm_controller.zeta": (2.0, 2.0)}, {}, "need 0 < lower < upper"),
        ({"arm_controller.zeta": 2.0}, {}, "bounds must be (lower factor, upper factor)"),
        ({"integrator.dt": (0.5, 1000.0)}, {}, "integrator.dt = 1.0 is out of range"),
        ({}, {}, "params: give a non-empty dict"),
        ({"arm_controller.zeta": (0.5, 2)}, {"objective": "ee_rmss"}, "is not a metric"),
        ({"arm_controller.zeta": (0.5, 2)}, {"objective": 3}, "a metric name or a callable"),
        ({"arm_controller.zeta": (0.5, 2)}, {"step": 1.0}, "step must be a factor > 1"),
        ({"arm_controller.zeta": (0.5, 2)}, {"min_step": 3.0}, "min_step must be a factor"),
        ({"arm_controller.zeta": (0.5, 2)}, {"max_batches": 0}, "max_batches must be a positive"),
    ],
)
def test_bad_tuning_arguments_raise_naming_the_culprit(params, kwargs, needle):
    sc = load_scenario("station-keeping", TINY)
    objective = kwargs.pop("objective", "ee_rms")
    with pytest.raises(ValueError) as exc:
        tune(sc, params, objective, scheduler="synchronous", progress=False, **kwargs)
    assert needle in str(exc.value)


def _log_distance_to(target, key="base_controller.kp_trans"):
    """Objective of a sweep row: squared log-distance of its kp_trans to ``target`` (read from
    the row's override column: no metric involved)."""

    def objective(row):
        return math.log(row[key][0] / target) ** 2

    return objective


def test_a_search_whose_step_falls_below_min_step_reports_converged():
    # optimum at twice the base kp_trans (600): batch 1 moves to 1200 (objective 0), batch 2
    # polls 2400 (600 is known) and fails, the step halves to sqrt(2) < min_step = 1.5
    sc = load_scenario("station-keeping", TINY)
    r = tune(
        sc,
        {"base_controller.kp_trans": (0.5, 16.0)},
        _log_distance_to(1200.0),
        step=2.0,
        min_step=1.5,
        max_batches=5,
        scheduler="synchronous",
        progress=False,
    )
    assert r.best["base_controller.kp_trans"] == [1200.0, 1200.0, 1200.0]
    assert r.converged and r.n_batches == 2 and r.n_evaluations == 4
    assert r.step == pytest.approx(math.sqrt(2.0), rel=1e-12)
    assert r.reason == "poll step x1.414 below min_step x1.5"
    text = repr(r)
    assert text.startswith("tune: converged: poll step x1.414 below min_step x1.5")
    assert "NOT" not in text and "(tuned)" in text
    assert "base_controller.kp_trans = [1200.0, 1200.0, 1200.0]  (x2)" in text
    assert r.summary() == text == str(r)


@pytest.mark.parametrize(
    "target, max_batches, step, moved",
    [
        (4800.0, 2, 2.0, "still lowered"),  # 600 -> 1200 -> 2400, still moving when stopped
        (600.0, 1, math.sqrt(2.0), "did not lower"),  # optimum at the start: halved once
    ],
)
def test_a_search_stopped_by_max_batches_reports_not_converged(target, max_batches, step, moved):
    sc = load_scenario("station-keeping", TINY)
    r = tune(
        sc,
        {"base_controller.kp_trans": (0.5, 16.0)},
        _log_distance_to(target),
        step=2.0,
        min_step=1.05,
        max_batches=max_batches,
        scheduler="synchronous",
        progress=False,
    )
    assert not r.converged and r.n_batches == max_batches
    assert r.step == pytest.approx(step, rel=1e-12) and r.step >= 1.05
    assert r.reason == (
        f"max_batches = {max_batches} reached with the poll step still x{step:.4g} "
        f"(min_step x1.05); the last batch {moved} the objective"
    )
    text = repr(r)
    assert text.startswith(f"tune: NOT converged: {r.reason}")
    assert "(best so far)" in text and "(tuned)" not in text
