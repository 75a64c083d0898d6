"""Robust tuning (``dqspace tune``, ``robust_tune``): the search space and its errors, the
objective and the constraints judged against independent computations (numpy percentiles,
the order statistic from scipy.stats.binom), common random numbers across candidates, one
cluster for the study, resuming after an interruption (the same candidates as a study run
straight through, no candidate run twice), ``best.toml`` run by ``dqspace run``, no
feasible candidate (exit 3), and the figures."""

import json
import math
import re
import tomllib

import numpy as np
import optuna
import pandas as pd
import pytest
from scipy.stats import binom

from dqspace.scenarios import RobustTuneResult, load_scenario, robust_tune
from dqspace.scenarios.campaigns import robust_tuning
from dqspace.scenarios.campaigns.confidence import MET, NOT_MET, UNDECIDED
from dqspace.scenarios.campaigns.robust_tuning import JOURNAL, STUDY_NAME
from dqspace.scenarios.campaigns.tuning_goals import (
    Constraint,
    parse_constraint,
    parse_objective,
    tuning_constraints,
)
from dqspace.scenarios.campaigns.tuning_space import (
    design_overrides,
    design_values,
    parse_param,
    tuned_params,
)
from dqspace.scenarios.cli import main
from dqspace.scenarios.spec.dispersions import Dispersions

SHORT = ["scenario.duration=0.5", "outputs.plots=false"]
#: ur5-waypoints has no [dispersions] table: these are passed to the tuning
UR5_DISPERSIONS = {
    "disturbance.force": {"dist": "uniform", "low": -0.5, "high": 0.5},
    "plant.base_mass_error": {"dist": "normal", "sigma": 0.05},
}
UR5_PARAMS = {"base_controller.kp_trans": "100:2000", "base_controller.kd_trans[0]": "lin:100:1000"}


def _ur5():
    return load_scenario("ur5-waypoints", SHORT)


# ------------------------------------------------------------------ the search space


def test_ranges_are_log_scaled_when_wide_and_positive_or_when_asked():
    sc = load_scenario("station-keeping")
    p = {
        q.name: q
        for q in tuned_params(
            sc,
            {
                "base_controller.kp_trans": "100:2000",  # ratio 20: log
                "arm_controller.omega_n": (5, 40),  # ratio 8: linear
                "arm_controller.zeta": "log:0.5:2",
                "base_controller.kd_rot": "lin:10:1000",
                "disturbance.force[0]": "-1:1",  # through zero: linear
            },
        )
    }
    assert [p[k].log for k in p] == [True, False, True, False, False]
    assert p["base_controller.kp_trans"].vector and p["base_controller.kp_trans"].start() == 600.0
    assert p["disturbance.force[0]"].index == 0 and not p["disturbance.force[0]"].vector


def test_a_vector_keeps_its_ratios_and_a_component_is_set_alone():
    sc = load_scenario("station-keeping", ["base_controller.kp_trans=[600.0, 300.0, 150.0]"])
    space = tuned_params(
        sc, {"base_controller.kp_trans": "100:2000", "base_controller.kd_rot[2]": "1:100"}
    )
    ov = design_overrides(
        space, {"base_controller.kp_trans": 1200.0, "base_controller.kd_rot[2]": 7.5}
    )
    assert ov == {"base_controller.kp_trans": [1200.0, 600.0, 300.0],
                  "base_controller.kd_rot": [60.0, 60.0, 7.5]}  # fmt: skip
    # values are applied rounded to 6 significant digits (what best.toml holds)
    raw = {"base_controller.kp_trans": 1234.56789, "base_controller.kd_rot[2]": 1 / 3}
    applied = {"base_controller.kp_trans": 1234.57, "base_controller.kd_rot[2]": 0.333333}
    assert design_values(space, raw) == applied


def test_an_integer_key_is_searched_over_integers():
    sc = load_scenario("station-keeping")
    (p,) = tuned_params(sc, {"sensors.encoder_bits": "8:24"})
    assert p.integer and not p.log
    assert design_overrides([p], {"sensors.encoder_bits": 11.6}) == {"sensors.encoder_bits": 12}
    dist = robust_tuning._distributions(optuna, [p])["sensors.encoder_bits"]
    assert isinstance(dist, optuna.distributions.IntDistribution) and (dist.low, dist.high) == (
        8,
        24,
    )
    with pytest.raises(ValueError, match="sensors.encoder_bits.*integer bounds"):
        tuned_params(sc, {"sensors.encoder_bits": "8.5:24"})


@pytest.mark.parametrize(
    "param, message",
    [
        ("base_controller.kp_tran=1:10", r"kp_tran.*not a key.*did you mean 'kp_trans'"),
        ("base_controller.kp_trans=10:1", r"kp_trans: low 10 must be below high 1"),
        ("base_controller.kp_trans=5:5", r"kp_trans: low 5 must be below high 5"),
        ("base_controller.kp_trans=a:10", r"kp_trans: low 'a' is not a number"),
        ("base_controller.kp_trans=1:nan", r"kp_trans: high 'nan' is not a finite number"),
        ("base_controller.kp_trans=1:2:3", r"kp_trans: range '1:2:3'"),
        ("base_controller.kp_trans", r"expected KEY=LO:HI"),
        ("base_controller.kp_trans=log:0:10", r"kp_trans: a log scale needs low > 0"),
        ("thrusters.layout=1:2", r"thrusters.layout = 'paper' is not a number"),
        ("base_controller.kp_trans[3]=1:2", r"kp_trans\[3\]: .* 3 components"),
        ("arm_controller.omega_n[0]=1:2", r"omega_n\[0\]: .* not a vector"),
        ("base_controller.kp_trans=-5:10", r"kp_trans: a whole vector .*\(low >= 0\)"),
        ("integrator.dt=0:0.01", r"integrator.dt = 0: .*out of range"),
    ],
)
def test_bad_param_input_is_refused_naming_the_key(param, message, tmp_path, capsys):
    argv = ["tune", "station-keeping", "--param", param, "-n", "2", "--out", str(tmp_path / "t")]
    assert main(argv + ["-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dqspace: error:") and len(err.strip().splitlines()) == 1
    assert re.search(message, err), err
    assert not (tmp_path / "t").exists()  # refused before anything is written


def test_a_key_tuned_whole_and_by_component_or_twice_is_refused():
    sc = load_scenario("station-keeping")
    with pytest.raises(ValueError, match="tuned as a whole too"):
        tuned_params(
            sc, {"base_controller.kp_trans": "1:10", "base_controller.kp_trans[1]": "1:10"}
        )
    with pytest.raises(ValueError, match="zero: scaling it keeps it zero"):
        tuned_params(sc, {"disturbance.force": "0:1"})
    assert parse_param(" base_controller.kp_rot = log:1:10 ") == (
        "base_controller.kp_rot",
        "log:1:10",
    )


# ------------------------------------------------------------- objective and constraints


def test_the_objective_is_the_statistic_of_the_finite_runs():
    x = np.array([3.0, 1.0, np.nan, 2.0, 10.0])
    f = x[np.isfinite(x)]
    assert parse_objective("total_impulse").value(x) == np.percentile(f, 50)
    assert parse_objective("total_impulse:p95").value(x) == np.percentile(f, 95)
    assert parse_objective("total_impulse:mean").value(x) == np.mean(f)
    assert parse_objective("total_impulse:max").value(x) == 10.0
    assert math.isnan(parse_objective("total_impulse").value([np.nan]))
    for bad, msg in (("nope", "unknown metric"), ("total_impulse:P200", "statistic"),
                     ("total_impulse:median", "statistic")):  # fmt: skip
        with pytest.raises(ValueError, match=msg):
            parse_objective(bad)


def test_a_constraint_is_judged_on_the_order_statistic_bound_when_n_allows():
    """299 runs: the P99 upper bound at 95 % is the largest run (rank from scipy.stats.binom,
    computed here independently), and MET iff it is within the limit."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0.0, 1.0, 299)
    k = next(k for k in range(1, 300) if binom.cdf(k - 1, 299, 0.99) >= 0.95)
    bound = np.sort(x)[k - 1]
    c = parse_constraint(f"base_pos_err_max<={bound}:P99")
    r = c.judge(x)
    assert r.judged_on == "bound" and r.bound == bound == r.value and r.status == MET
    assert r.estimate == np.percentile(x, 99) and r.margin == 0.0
    below = Constraint("base_pos_err_max", "<=", bound * 0.999).judge(x)
    assert below.status in (NOT_MET, UNDECIDED) and below.margin > 0 and not below.met
    # 50 runs: too few for P99 at 95 %: the sample percentile decides, and says so
    s = parse_constraint("base_pos_err_max<=0.99").judge(x[:50])
    assert s.judged_on == "sample" and s.bound is None
    assert s.value == np.percentile(x[:50], 99) and s.met == (s.value <= 0.99)
    assert "299 give a bound at 95 %" in s.reason
    # >=: the lower bound, the margin the other way round
    g = Constraint("min_det_GGt", ">=", 0.5, 50.0).judge(x)
    assert g.judged_on == "bound" and g.value == g.bound <= np.percentile(x, 50)
    assert g.margin == pytest.approx((0.5 - g.value) / 0.5)


def test_the_constraints_are_the_requirements_with_the_given_ones_replacing_by_metric():
    cfg = load_scenario("station-keeping").config
    cons = {c.metric: c for c in tuning_constraints(cfg, ["ee_max<=2e-3:P95", "total_impulse<=5"])}
    assert set(cons) == {"base_pos_err_max", "base_att_err_max", "ee_max", "total_impulse"}
    assert cons["ee_max"].limit == 2e-3 and cons["ee_max"].percentile == 95
    assert (
        cons["base_pos_err_max"].source == "requirement" and cons["base_pos_err_max"].limit == 1e-3
    )
    only = tuning_constraints(cfg, ["total_impulse<=5"], requirements=False)
    assert [c.metric for c in only] == ["total_impulse"]
    with pytest.raises(ValueError, match="constrained twice"):
        tuning_constraints(cfg, ["ee_max<=1", "ee_max<=2"])
    for bad in ("ee_max<1", "ee_max<=x", "nope<=1", "ee_max<=1:P100"):
        with pytest.raises(ValueError, match="constraint"):
            parse_constraint(bad)


# ------------------------------------------------------------------ tuning runs


def test_every_candidate_runs_the_same_samples_on_one_cluster(tmp_path, monkeypatch):
    import distributed

    started = []

    class Counted(distributed.LocalCluster):
        def __init__(self, *a, **k):
            started.append(1)
            super().__init__(*a, **k)

    monkeypatch.setattr(distributed, "LocalCluster", Counted)
    out = tmp_path / "t"
    kw = dict(dispersions=UR5_DISPERSIONS, constraints=["base_pos_err_max<=2e-4"], out=out)
    r = robust_tune(_ur5(), UR5_PARAMS, 4, budget=5, workers=1, progress=False, **kw)
    assert isinstance(r, RobustTuneResult) and len(r.candidates) == 5
    assert len(started) == 1  # one cluster for the study, not one per candidate
    # common random numbers: each candidate's campaign holds the same N sample overrides,
    # the samples of the dispersions drawn from the seed; the design is in its base scenario
    samples = Dispersions.from_table(UR5_DISPERSIONS, _ur5().config).samples(4, 0)
    want = sorted(json.dumps(s, sort_keys=True) for s in samples)
    for c in r.candidates:
        d = out / "candidates" / str(c.number)
        stored = [json.loads(p.read_text())["overrides"] for p in d.glob("variants/*/metrics.json")]
        assert sorted(json.dumps(s, sort_keys=True) for s in stored) == want
        base = json.loads((d / "sweep.json").read_text())["base"]
        assert base["base_controller"]["kp_trans"] == c.overrides["base_controller.kp_trans"]
        assert base["base_controller"]["kd_trans"][0] == c.params["base_controller.kd_trans[0]"]
        # the objective and the judged constraints from the campaign's own runs
        runs = pd.read_csv(d / "metrics.csv")
        assert c.objective == np.percentile(runs["total_impulse"], 50)
        pos = next(x for x in c.constraints if x.constraint.metric == "base_pos_err_max")
        assert pos.value == np.percentile(runs["base_pos_err_max"], 99)
        assert pos.met == (pos.value <= 2e-4) and pos.judged_on == "sample"
    # the base design first; every design inside its range
    assert r.candidates[0].params == {"base_controller.kp_trans": 400.0,
                                      "base_controller.kd_trans[0]": 500.0}  # fmt: skip
    h = r.history
    assert h["base_controller.kp_trans"].between(100, 2000).all()
    assert h["base_controller.kd_trans[0]"].between(100, 1000).all()
    # the best is the feasible minimum, else the least violating
    feas = h[h["feasible"]]
    if len(feas):
        assert r.best.objective == feas["total_impulse:P50"].min()
    else:
        assert r.best is None and r.closest.violation == h["violation"].min()
    assert pd.read_csv(out / "history.csv")["candidate"].tolist() == [0, 1, 2, 3, 4]


def _interrupting_montecarlo(orig, when, partial):
    """montecarlo that, on call ``when``, runs the first ``partial`` samples of the
    campaign into its directory and is then interrupted (Ctrl-C mid-candidate)."""
    calls = []

    def mc(sc, n, **kw):
        calls.append(1)
        if len(calls) == when:
            orig(sc, partial, **kw)
            raise KeyboardInterrupt
        return orig(sc, n, **kw)

    return mc


def test_an_interrupted_tuning_resumes_to_the_budget_without_running_a_candidate_twice(
    tmp_path, monkeypatch
):
    kw = dict(dispersions=UR5_DISPERSIONS, scheduler="synchronous", progress=False,
              constraints=["base_pos_err_max<=2e-4"])  # fmt: skip
    straight = robust_tune(_ur5(), UR5_PARAMS, 4, budget=6, out=tmp_path / "straight", **kw)
    out = tmp_path / "t"

    def stop_after_two(p):
        if p.finished == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # Ctrl-C between candidates
        robust_tune(_ur5(), UR5_PARAMS, 4, budget=6, out=out, callback=stop_after_two, **kw)
    assert len(pd.read_csv(out / "history.csv")) == 2  # the outputs are current
    orig = robust_tuning.montecarlo
    monkeypatch.setattr(robust_tuning, "montecarlo", _interrupting_montecarlo(orig, 2, 2))
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C in candidate 3, two of its runs stored
        robust_tune(_ur5(), UR5_PARAMS, 4, budget=6, out=out, resume=True, **kw)
    monkeypatch.setattr(robust_tuning, "montecarlo", orig)
    r = robust_tune(_ur5(), UR5_PARAMS, 4, budget=6, out=out, resume=True, **kw)
    assert [c.number for c in r.candidates] == list(range(6))
    # the same candidates as the tuning that ran straight through
    assert [c.params for c in r.candidates] == [c.params for c in straight.candidates]
    assert [c.objective for c in r.candidates] == [c.objective for c in straight.candidates]
    # no candidate run twice: candidate 3 continued from its two stored runs
    by = {c.number: c for c in r.candidates}
    assert (by[3].runs_run, by[3].runs_reused) == (2, 2)
    assert all((c.runs_run, c.runs_reused) == (4, 0) for n, c in by.items() if n != 3)
    assert sum(len(list((out / "candidates" / str(n)).glob("variants/*"))) for n in by) == 24
    assert r.n_run == 2 + 4 + 4  # this call: the rest of candidate 3, then 4 and 5
    # finished: a resume with the same budget runs nothing
    again = robust_tune(_ur5(), UR5_PARAMS, 4, budget=6, out=out, resume=True, **kw)
    assert again.n_run == 0 and [c.params for c in again.candidates] == [
        c.params for c in r.candidates
    ]

    # a process killed mid-candidate leaves its trial running: a resume continues its design
    storage = optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(out / JOURNAL))
    )
    study = optuna.load_study(study_name=STUDY_NAME, storage=storage)
    killed = study.ask(robust_tuning._distributions(optuna, r.params))
    more = robust_tune(_ur5(), UR5_PARAMS, 4, budget=7, out=out, resume=True, **kw)
    assert len(more.candidates) == 7 and more.n_run == 4
    assert more.candidates[6].params == design_values(list(r.params), killed.params)


def test_a_study_is_resumed_only_when_asked_and_with_the_same_settings(tmp_path):
    kw = dict(dispersions=UR5_DISPERSIONS, scheduler="synchronous", progress=False)
    out = tmp_path / "t"
    robust_tune(_ur5(), UR5_PARAMS, 2, budget=1, out=out, **kw)
    with pytest.raises(ValueError, match="holds a tuning study already: continue it with --resume"):
        robust_tune(_ur5(), UR5_PARAMS, 2, budget=2, out=out, **kw)
    with pytest.raises(ValueError, match=r"other settings \(n differ\)"):
        robust_tune(_ur5(), UR5_PARAMS, 3, budget=2, out=out, resume=True, **kw)
    with pytest.raises(ValueError, match=r"other settings \(seed differ\)"):
        robust_tune(_ur5(), UR5_PARAMS, 2, budget=2, out=out, resume=True, seed=5, **kw)
    other = load_scenario("ur5-waypoints", ["scenario.duration=0.4", "outputs.plots=false"])
    with pytest.raises(ValueError, match=r"other settings \(scenario: scenario.duration differ"):
        robust_tune(other, UR5_PARAMS, 2, budget=2, out=out, resume=True, **kw)
    with pytest.raises(ValueError, match="no .dispersions. table"):
        robust_tune(_ur5(), UR5_PARAMS, 2, out=tmp_path / "u", scheduler="synchronous")
    r = robust_tune(_ur5(), UR5_PARAMS, 2, budget=2, out=out, resume=True, **kw)
    assert len(r.candidates) == 2 and r.n_run == 2


def test_the_cli_writes_a_best_toml_that_dqspace_run_reads_and_the_figures(tmp_path, capsys):
    from PIL import Image

    out = tmp_path / "tune"
    argv = ["tune", "station-keeping", "--param", "base_controller.kp_trans=200:2000",
            "--param", "arm_controller.omega_n=lin:10:30", "-n", "3", "--budget", "3",
            "--scheduler", "synchronous", "--out", str(out), "--set", "scenario.duration=0.3",
            "--set", "metrics.transient=0.1",  # ee_max measured: its requirement can be met
            "--set", "outputs.plots=false"]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "best: candidate" in text and "MET" in text and " mm" in text
    assert "too few for an order-statistics bound" in text  # 3 runs: a sample judgement
    doc = json.loads((out / "tuning.json").read_text())
    best = doc["candidates"][doc["best"]]
    cfg = tomllib.loads((out / "best.toml").read_text())
    assert cfg["scenario"]["name"] == "station-keeping-tuned"
    assert cfg["base_controller"]["kp_trans"] == [best["params"]["base_controller.kp_trans"]] * 3
    assert cfg["arm_controller"]["omega_n"] == best["params"]["arm_controller.omega_n"]
    assert cfg["dispersions"] == load_scenario("station-keeping").dispersions
    header = (out / "best.toml").read_text().split("[scenario]")[0]
    assert "Tuned by `dqspace tune`" in header and "the best feasible design" in header
    assert f"candidate {doc['best']} of 3" in header
    for name in ("tuning_history.png", "tuning_pareto.png"):
        img = np.asarray(Image.open(out / name).convert("L"), dtype=float)
        assert img.shape[0] > 500 and img.std() > 10, name  # drawn, not blank
    assert main(["run", str(out / "best.toml"), "--out", str(tmp_path / "run"), "-q"]) == 0
    run_text = capsys.readouterr().out
    assert "base_pos_err_max" in run_text


def test_an_impossible_constraint_gives_no_feasible_candidate_and_exit_3(tmp_path, capsys):
    out = tmp_path / "tune"
    argv = ["tune", "station-keeping", "--param", "base_controller.kp_trans=200:2000", "-n",
            "2", "--budget", "2", "--scheduler", "synchronous", "--out", str(out), "--set",
            "scenario.duration=0.3", "--constraint", "base_pos_err_max<=1e-12",
            "--no-plots"]  # fmt: skip
    assert main(argv) == 3
    text = capsys.readouterr().out
    assert "NO FEASIBLE CANDIDATE" in text and "closest (NOT feasible)" in text
    assert "NOT MET   base_pos_err_max P99 (sample)" in text
    assert (out / "least_violation.toml").is_file() and not (out / "best.toml").exists()
    header = (out / "least_violation.toml").read_text().split("[scenario]")[0]
    assert "NOT FEASIBLE" in header
    h = pd.read_csv(out / "history.csv")
    assert not h["feasible"].any() and (h["base_pos_err_max:verdict"] == "NOT MET").all()
    # --no-fail: the same (finished) tuning exits 0, nothing run again
    assert main(argv + ["--resume", "--no-fail", "-q"]) == 0
    assert "NO FEASIBLE CANDIDATE" in capsys.readouterr().out
    # in Python: best None, the closest is the least violation
    r = robust_tune(load_scenario("station-keeping", ["scenario.duration=0.3"]),
                    {"base_controller.kp_trans": "200:2000"}, 2, budget=2, out=out, resume=True,
                    constraints=["base_pos_err_max<=1e-12"], scheduler="synchronous",
                    progress=False)  # fmt: skip
    assert not r.feasible and r.best is None and r.scenario is None
    assert r.closest.violation == min(c.violation for c in r.candidates) > 0
    assert repr(r).splitlines()[1].startswith("NO FEASIBLE CANDIDATE")
