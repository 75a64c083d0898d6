"""A metric without a sample is "not measured" (NaN), never 0, and a requirement on it is
not met: a run shorter than the end-effector metrics' window (``metrics.transient``, 2 s by
default), and a campaign of such runs, reported 0 mm and passed whatever the arm did.

Every place a person reads a metric is checked: the console of ``dqspace run``, its exit
status, the manifest (strict JSON: null), the report page, a sweep's metrics.csv, table and
figure, a Monte Carlo campaign's percentiles, verdicts and montecarlo.json, and a tuning's
objective and constraints."""

import csv
import json
import math

import numpy as np
import pandas as pd
import pytest

from dqspace.scenarios import Results, load_scenario, run
from dqspace.scenarios.campaigns.confidence import MET, UNDECIDED
from dqspace.scenarios.campaigns.sweep import sweep
from dqspace.scenarios.campaigns.tuning_goals import Constraint, Objective
from dqspace.scenarios.cli import main
from dqspace.scenarios.figures.units import NOT_MEASURED, format_quantity, format_sweep_table
from dqspace.scenarios.sim.metrics import DEFAULT_TRANSIENT, METRICS, summarize
from dqspace.scenarios.spec.config import ScenarioError
from dqspace.scenarios.spec.dispersions import requirement_table

#: 1.5 s runs: they end before the default 2 s window of ee_rms and ee_max
SHORT = ["scenario.duration=1.5", "outputs.plots=false"]


def _sets(items):
    return [a for s in items for a in ("--set", s)]


def _strict_json(text):
    """json.loads that refuses NaN and Infinity (not JSON)."""
    return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


@pytest.fixture(scope="module")
def short_run():
    return run(load_scenario("station-keeping", SHORT), progress=False)


# ------------------------------------------------------------------ the scenario key


def test_the_window_is_a_scenario_key_with_a_default_of_2_s():
    cfg = load_scenario("station-keeping").config
    assert cfg["metrics"] == {"transient": 2.0} and DEFAULT_TRANSIENT == 2.0
    assert load_scenario("station-keeping", ["metrics.transient=0"]).config["metrics"] == {
        "transient": 0.0
    }


@pytest.mark.parametrize(
    "value, needle",
    [
        ("-1", "metrics.transient = -1.0 is out of range: must be >= 0.0 s"),
        ("nan", "metrics.transient must be finite"),
        ("inf", "metrics.transient must be finite"),
        ("'2'", "metrics.transient must be a number"),
    ],
)
def test_a_bad_window_is_refused_naming_the_key(value, needle):
    with pytest.raises(ScenarioError, match="metrics.transient") as e:
        load_scenario("station-keeping", [f"metrics.transient={value}"])
    assert needle in str(e.value)
    with pytest.raises(ScenarioError, match="did you mean 'transient'"):
        load_scenario("station-keeping", ["metrics.transiet=1"])


def test_the_end_effector_metrics_of_a_short_run_are_not_measured(short_run):
    m = summarize(short_run)
    assert math.isnan(m["ee_max"]) and math.isnan(m["ee_rms"])
    assert m["base_pos_err_max"] > 0.0  # the others are measured
    # with a window the run reaches they are numbers again
    assert summarize(short_run, transient=1.0)["ee_max"] > 0.0
    assert short_run.manifest["metrics"]["ee_max"] != short_run.manifest["metrics"]["ee_max"]


def test_the_scenario_key_sets_the_window_of_the_run():
    sc = load_scenario("station-keeping", [*SHORT, "metrics.transient=1.0"])
    res = run(sc, progress=False)
    m = res.manifest["metrics"]
    assert m["ee_max"] > 0.0 and m["ee_rms"] > 0.0
    assert m == summarize(res) and m["ee_max"] == summarize(res, transient=1.0)["ee_max"]
    late = np.linalg.norm(res["ee_err"][res.t >= 1.0], axis=1)
    assert m["ee_max"] == late.max()


# ------------------------------------------------------------------ one run


def test_run_says_not_measured_writes_null_and_exits_undecided(tmp_path, capsys):
    out = tmp_path / "r"
    code = main(["run", "station-keeping", *_sets(SHORT), "--out", str(out), "-q"])
    text = capsys.readouterr().out
    assert code == 4  # UNDECIDED, not 0 (MET)
    lines = [ln for ln in text.splitlines() if ln.strip().startswith(("ee_max", "ee_rms"))]
    assert len(lines) == 3  # the two metrics and the requirement on ee_max
    assert all(NOT_MEASURED in ln for ln in lines) and not any(" 0 mm" in ln for ln in lines)
    (req,) = [ln for ln in lines if "<=" in ln]
    assert req.rstrip().endswith("UNDECIDED (no value: not a PASS)")
    why = "(ee_rms, ee_max: not measured, the run ended at t = 1.5 s, before their window t >= "
    assert why + "metrics.transient = 2 s)" in text
    assert "MET" not in req.replace("UNDECIDED", "")
    # the manifest is strict JSON: null, not NaN, and reads back as NaN
    doc = _strict_json((out / "manifest.json").read_text())
    assert doc["metrics"]["ee_max"] is None and doc["metrics"]["ee_rms"] is None
    assert doc["metrics"]["base_pos_err_max"] > 0.0
    assert doc["metrics"]["min_det_GGt"] > 0.0  # a number stays a number
    back = Results.load(out)
    assert math.isnan(back.manifest["metrics"]["ee_max"])
    # --no-fail exits 0 but says the same
    argv = ["run", "station-keeping", *_sets(SHORT), "--out", str(out), "-q", "--no-fail"]
    assert main(argv) == 0
    assert "UNDECIDED" in capsys.readouterr().out


def test_the_report_of_a_short_run_says_not_measured_and_undecided(tmp_path):
    out = tmp_path / "r"
    assert main(["run", "station-keeping", *_sets(SHORT), "--out", str(out), "-q"]) == 4
    assert main(["report", str(out), "-q"]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    table = page[page.index('<table id="metrics">') :]
    table = table[: table.index("</table>")]
    (row,) = [r for r in table.split("<tr>") if r.startswith("<td>ee_max</td>")]
    assert NOT_MEASURED in row and "UNDECIDED" in row and ">0 mm<" not in row
    (rms,) = [r for r in table.split("<tr>") if r.startswith("<td>ee_rms</td>")]
    assert NOT_MEASURED in rms
    assert "not measured, never 0" in page


def test_a_value_not_measured_is_never_formatted_as_a_number():
    assert format_quantity(float("nan"), "m", kind="ee_max") == NOT_MEASURED
    assert format_quantity(None, "m") == NOT_MEASURED
    assert format_quantity(0.0, "m") == "0 mm"  # a real 0 stays 0


# ------------------------------------------------------------------ a sweep


@pytest.fixture(scope="module")
def transient_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    sc = load_scenario("station-keeping", SHORT)
    samples = [{"metrics.transient": t} for t in (0.5, 1.0, 2.0, 3.0)]
    df = sweep(sc, samples=samples, out=out, scheduler="synchronous", progress=False)
    return df, out


def test_a_sweep_stores_not_measured_as_an_empty_cell(transient_sweep):
    df, out = transient_sweep
    assert df["error"].isna().all()  # every run completed
    assert np.isfinite(df["ee_max"][:2]).all() and df["ee_max"][0] >= df["ee_max"][1]
    assert np.isnan(df["ee_max"][2:]).all() and np.isnan(df["ee_rms"][2:]).all()
    with open(out / "metrics.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    by_window = {float(r["metrics.transient"]): r for r in rows}
    assert by_window[2.0]["ee_max"] == "" and by_window[3.0]["ee_rms"] == ""  # never 0
    assert float(by_window[0.5]["ee_max"]) > 0.0
    table = format_sweep_table(df, {m: u for m, (u, _) in METRICS.items()}, max_width=200)
    assert "n/a: no value (the run failed, or the metric was not measured)" in table


def test_the_sweep_figure_marks_the_variants_not_measured(transient_sweep):
    from dqspace.scenarios.figures.campaign_sweep import plot_pareto, plot_sweep_tradeoff

    df, _ = transient_sweep
    fig = plot_sweep_tradeoff(df)
    (ax,) = [a for a in fig.axes if a.get_ylabel().startswith("ee_max")]
    (marks,) = [ln for ln in ax.get_lines() if ln.get_gid() == "not_measured"]
    assert list(marks.get_xdata()) == [2.0, 3.0]
    assert "not measured in 2 of 4" in ax.get_title(loc="left")
    (variants,) = [ln for ln in ax.get_lines() if ln.get_gid() == "variants"]
    assert not np.any(np.asarray(variants.get_ydata(), float) == 0.0)  # no 0 drawn
    assert "requirement ≤ 1 mm: " in ax.get_title(loc="left")
    pareto = plot_pareto(df, "ee_max", "total_impulse")
    assert "2 variants not measured (not shown)" in pareto.axes[0].get_title(loc="left")


# ------------------------------------------------------------------ a Monte Carlo campaign


def test_a_campaign_of_short_runs_does_not_pass_the_end_effector(tmp_path, capsys):
    out = tmp_path / "mc"
    code = main(["montecarlo", "station-keeping", "-n", "2", "--scheduler", "synchronous",
                 *_sets(SHORT), "--out", str(out), "-q"])  # fmt: skip
    text = capsys.readouterr().out
    assert code in (3, 4)  # never MET
    line = next(x for x in text.splitlines() if x.strip().startswith("ee_max") and "P99" in x)
    assert "UNDECIDED" in line and "MET" not in line.replace("UNDECIDED", "")
    assert "(2 not measured)" in line
    pct = next(x for x in text.splitlines() if x.startswith("ee_max ") and "P99" not in x)
    assert pct.count(NOT_MEASURED) == 3 and " 0 mm" not in pct  # P50, P95, P99
    info = _strict_json((out / "montecarlo.json").read_text())
    (row,) = [r for r in info["requirements"] if r["metric"] == "ee_max"]
    assert row["status"] == UNDECIDED and row["n"] == 0 and row["n_missing"] == 2
    assert row["value"] is None and info["percentiles"]["ee_max"]["99"] is None
    assert info["verdict"] != MET and info["transient"] == 2.0
    assert any("ee_max: not measured in 2 runs" in w for w in info["warnings"])
    # its report and figures say so too
    assert main(["report", str(out), "-q"]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    req = page[page.index('<table id="requirements">') :]
    (ee,) = [r for r in req[: req.index("</table>")].split("<tr>") if r.startswith("<td>ee_max")]
    assert "UNDECIDED" in ee and NOT_MEASURED in ee and "0 (2 not measured)" in ee
    assert (out / "montecarlo.png").stat().st_size > 10_000


def test_a_campaign_with_some_runs_not_measured_is_never_met_because_of_them(tmp_path):
    from dqspace.scenarios.campaigns.montecarlo import montecarlo

    # windows from 1 s to 2 s: the runs (1.5 s) measure the end-effector in some, not others
    sc = load_scenario(
        "station-keeping",
        [
            *SHORT,
            "metrics.transient=1.0",
            "requirements.ee_max={limit = 1.0, percentile = 50}",  # far above every run
            "requirements.base_pos_err_max={limit = 1.0, percentile = 50}",
            "requirements.base_att_err_max={limit = 180.0, percentile = 50}",
        ],
    )
    disp = {"metrics.transient": {"dist": "uniform", "low": 0.0, "high": 1.0}}
    df = montecarlo(sc, 6, dispersions=disp, seed=3, scheduler="synchronous", progress=False)
    info = df.attrs["montecarlo"]
    measured = np.isfinite(df["ee_max"].to_numpy(float))
    assert 0 < measured.sum() < 6, "the draw should mix both windows"
    rows = {r["metric"]: r for r in info["requirements"]}
    assert rows["base_pos_err_max"]["status"] == MET  # 6 runs decide a median far within
    assert rows["ee_max"]["status"] != MET and info["verdict"] != MET
    assert rows["ee_max"]["n_missing"] == 6 - measured.sum()
    # the sample check of a campaign's table is not ok either
    table = requirement_table({"ee_max": df["ee_max"].to_numpy(float)}, {"ee_max": ("<=", 1.0, 50)})
    assert table[0]["ok"] is False and table[0]["n_missing"] == 6 - measured.sum()


# ------------------------------------------------------------------ a tuning


def test_a_tuning_never_takes_a_metric_not_measured_for_a_good_value():
    obj = Objective("ee_max", "max")
    x = [1e-3, 2e-3, float("nan")]
    assert obj.value(x, completed=[True, True, False]) == 2e-3  # the third run failed
    # the third run completed but did not measure it: not the max of the other two
    assert math.isnan(obj.value(x, completed=[True, True, True]))
    assert math.isnan(obj.value([], completed=[]))
    c = Constraint("ee_max", "<=", 1e-2, 99.0)
    res = c.judge([1e-3, 1e-3, float("nan")])  # 3 runs: judged on the sample
    assert res.judged_on == "sample" and res.status == UNDECIDED and not res.met
    assert res.margin > 0.0 and "not measured in 1 runs" in res.reason
    assert c.judge([1e-3, 1e-3, 1e-3]).status == MET


def test_a_candidate_whose_objective_was_not_measured_ranks_last():
    from dqspace.scenarios.campaigns.tuning_goals import failed_runs_result
    from dqspace.scenarios.campaigns.tuning_results import Candidate

    def cand(number, objective):
        return Candidate(number, number, {}, {}, objective, (failed_runs_result(0, 3),),
                         3, 0, 3, 0, 1.0)  # fmt: skip

    ranked = sorted([cand(0, float("nan")), cand(1, 5.0), cand(2, 1.0)], key=Candidate.rank_key)
    assert [c.number for c in ranked] == [2, 1, 0]


def test_a_grid_tuning_never_chooses_a_variant_that_did_not_measure_its_objective():
    from dqspace.scenarios.campaigns.tuning import tune

    # the smaller the window, the more of the start's transient ee_max takes in; a window
    # past the run's end measures nothing, which must not look like the best (0) value
    sc = load_scenario("station-keeping", SHORT)
    r = tune(
        sc,
        {"metrics.transient": (0.5, 8.0)},
        "ee_max",
        metrics=["ee_max"],
        step=2.0,
        max_batches=3,
        scheduler="synchronous",
        progress=False,
    )
    assert math.isfinite(r.objective) and r.best["metrics.transient"] < 1.5
    hist = pd.DataFrame(r.history) if not isinstance(r.history, pd.DataFrame) else r.history
    unmeasured = hist[hist["ee_max"].isna()]
    assert len(unmeasured) and np.isinf(unmeasured["objective"]).all()
