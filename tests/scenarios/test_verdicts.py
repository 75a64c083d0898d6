"""Requirements with their confidence: the scenario's [requirements] table, campaigns judged
with order-statistics bounds (in the console, montecarlo.json, the figures and the report),
a warning when the runs are too few, exit codes that follow the verdict, and campaigns that
stop once the verdict is decided."""

import base64
import json
import re
import tomllib

import numpy as np
import pytest

from dqspace.scenarios import load_scenario
from dqspace.scenarios.campaigns import montecarlo as mc
from dqspace.scenarios.campaigns.confidence import (
    MET,
    NOT_MET,
    UNDECIDED,
    min_runs,
    percentile_bounds,
    upper_rank,
    value_verdict,
)
from dqspace.scenarios.campaigns.verdicts import (
    campaign_warnings,
    judge_campaign,
    judge_run,
    overall,
)
from dqspace.scenarios.cli import BATCH, main
from dqspace.scenarios.sim.metrics import METRICS
from dqspace.scenarios.spec.config import ScenarioError
from dqspace.scenarios.spec.requirements import Requirement
from dqspace.scenarios.spec.schema import SCHEMA
from dqspace.scenarios.spec.schema_capture import CAPTURE_METRICS

#: 0.2 s runs whose end-effector metrics are measured (from t = 0.1 s, metrics.transient)
SHORT = ["scenario.duration=0.2", "metrics.transient=0.1"]
#: every default requirement judged at the median: 5 runs decide it at 95 %
MEDIAN = [f"requirements.{m}={{limit = 1.0, percentile = 50}}" for m in mc.DEFAULT_REQUIREMENTS]


def _sets(items):
    return [a for s in items for a in ("--set", s)]


# ------------------------------------------------------------------ the scenario's table


def test_the_schema_holds_a_requirement_per_metric_and_the_defaults():
    # the closed loop's metrics, then a capture's (scenario.kind = "capture")
    assert list(SCHEMA["requirements"].fields) == [*METRICS, *CAPTURE_METRICS]
    cfg = load_scenario("station-keeping").config
    assert cfg["requirements"]["ee_max"] == {
        "op": "<=",
        "limit": 1e-3,
        "percentile": 99,
        "confidence": 0.95,
    }
    assert cfg["requirements"]["total_impulse"] is None
    assert mc.scenario_requirements(cfg) == mc.DEFAULT_REQUIREMENTS


def test_set_changes_a_requirement_and_show_prints_a_file_that_reads_back(tmp_path, capsys):
    sets = [
        "requirements.ee_max=5e-4",
        "requirements.total_impulse={limit = 30.0, percentile = 90, confidence = 0.9}",
    ]
    sc = load_scenario("station-keeping", sets)
    req = mc.scenario_requirements(sc.config)
    assert req["ee_max"] == Requirement("<=", 5e-4, 99, 0.95)
    assert req["total_impulse"] == Requirement("<=", 30.0, 90, 0.9)
    assert main(["show", "station-keeping", *_sets(sets)]) == 0
    text = capsys.readouterr().out
    assert "[requirements]" in text
    f = tmp_path / "s.toml"
    f.write_text(text, encoding="utf-8")
    tomllib.loads(text)
    assert load_scenario(f).config == sc.config
    for bad, needle in (
        ("requirements.ee_max=nan", "limit nan is not a finite number"),
        ("requirements.ee_max={limit = 1.0, confidence = 1.5}", "confidence must be in (0, 1)"),
        ("requirements.ee_mx=1.0", "did you mean 'ee_max'?"),
    ):
        with pytest.raises(ScenarioError, match=re.escape(needle)):
            load_scenario("station-keeping", [bad])


# ------------------------------------------------------------------ judging


def test_a_campaign_row_holds_the_estimate_the_bound_the_runs_and_the_verdict():
    rng = np.random.default_rng(0)
    x = rng.uniform(0.0, 0.9e-3, 400)
    (row,) = judge_campaign({"base_pos_err_max": x}, {"base_pos_err_max": ("<=", 1e-3, 99)})
    b = percentile_bounds(x, 99, 0.95)  # the row is confidence's bound, at 95 % by default
    assert row["status"] == MET and row["ok"] and row["confidence"] == 0.95
    assert row["value"] == b.estimate == pytest.approx(np.percentile(x, 99))
    assert row["bound"] == row["upper"] == b.upper == np.sort(x)[b.upper_rank - 1]
    assert row["n"] == 400 and row["min_runs"] == min_runs(0.99, 0.95) == 299
    # the requirement's own confidence: 99 % needs more runs than 400 allow for ... P99.9
    (strict,) = judge_campaign({"m": x}, {"m": Requirement("<=", 1e-3, 99.9, 0.99)})
    assert strict["status"] == UNDECIDED and strict["min_runs"] == min_runs(0.999, 0.99) > 400
    assert campaign_warnings([strict]) == [
        f"m: 400 runs cannot bound P99.9 at 99 % confidence: at least {strict['min_runs']} runs "
        "are needed"
    ]
    over = judge_campaign({"m": x + 2e-3}, {"m": ("<=", 1e-3, 99)})
    assert over[0]["status"] == NOT_MET and over[0]["lower"] > 1e-3
    assert overall(over + [row]) == NOT_MET and overall([strict, row]) == UNDECIDED
    assert overall([row]) == MET == overall([])


def test_runs_not_measured_never_make_a_requirement_met():
    # 300 runs far within the limit and 2 that did not measure the metric (NaN): the
    # bound of P99 at 95 % over 302 runs is the largest run, one of the two: not MET
    x = np.r_[np.full(300, 1e-4), np.nan, np.nan]
    (row,) = judge_campaign({"m": x}, {"m": ("<=", 1e-3, 99)})
    assert row["n"] == 300 and row["n_missing"] == 2 and row["status"] == UNDECIDED
    assert row["value"] == 1e-4 and row["bound"] is None  # the estimate: the measured runs
    assert "not measured" in row["reason"]
    assert "m: not measured in 2 runs" in campaign_warnings([row])[0]
    # taken as the worst case whatever the op: a >= requirement is not met either
    (ge,) = judge_campaign({"m": x}, {"m": (">=", 1e-5, 1)})
    assert ge["status"] == UNDECIDED and ge["bound"] is None
    # with runs enough that the bound is a measured run whatever the unmeasured ones
    # were, the verdict stands (rank k of N: at most N - k runs may be unmeasured)
    k = upper_rank(1000, 0.99, 0.95)
    spare = 1000 - k
    assert spare >= 1
    ok = np.r_[np.full(1000 - spare, 1e-4), np.full(spare, np.nan)]
    assert judge_campaign({"m": ok}, {"m": ("<=", 1e-3, 99)})[0]["status"] == MET
    one_more = np.r_[np.full(999 - spare, 1e-4), np.full(spare + 1, np.nan)]
    assert judge_campaign({"m": one_more}, {"m": ("<=", 1e-3, 99)})[0]["status"] == UNDECIDED
    # a clear failure among the measured runs is still NOT MET; none measured: UNDECIDED
    bad = np.r_[np.full(5, 1.0), np.nan]
    assert judge_campaign({"m": bad}, {"m": ("<=", 1e-3, 99)})[0]["status"] == NOT_MET
    (none,) = judge_campaign({"m": np.full(3, np.nan)}, {"m": ("<=", 1e-3, 99)})
    assert none["status"] == UNDECIDED and none["n"] == 0 and none["n_missing"] == 3
    assert np.isnan(none["value"]) and "not measured in 3 runs" in none["reason"]


def test_a_single_run_is_judged_on_its_value():
    table = judge_run(
        {"base_pos_err_max": 2e-3, "ee_max": 5e-4, "min_det_GGt": float("nan")},
        {
            "base_pos_err_max": Requirement("<=", 1e-3),
            "ee_max": ("<=", 1e-3, 99),
            "min_det_GGt": (">=", 1.0, 1),
        },
    )
    assert [r["status"] for r in table] == [NOT_MET, MET, UNDECIDED]
    assert "percentile" not in table[0]  # the percentile does not apply to one run
    assert value_verdict(1.0, ">=", 1.0).status == MET
    assert value_verdict(float("nan"), "<=", 1.0).reason.startswith("no value")


# ------------------------------------------------------------------ exit codes


def test_dqspace_run_exits_3_when_a_requirement_is_not_met_and_0_with_no_fail(tmp_path, capsys):
    base = ["run", "station-keeping", "-q", *_sets(SHORT), "--set", "outputs.plots=false"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    text = capsys.readouterr().out
    assert "a single run is judged on its values" in text
    assert text.count(" MET") >= 3 and "NOT MET" not in text
    tight = ["--set", "requirements.min_det_GGt={op = '>=', limit = 1e30}"]
    assert main([*base, *tight, "--out", str(tmp_path / "b")]) == 3
    line = [ln for ln in capsys.readouterr().out.splitlines() if "min_det_GGt" in ln][-1]
    assert line.rstrip().endswith("NOT MET") and ">=" in line
    assert main([*base, *tight, "--no-fail", "--out", str(tmp_path / "c")]) == 0


def test_dqspace_montecarlo_exits_with_the_verdict(tmp_path, capsys):
    base = ["montecarlo", "station-keeping", "--scheduler", "synchronous", "-q", "--no-plots"]
    base += _sets(SHORT)
    # 5 runs decide medians far from the limits: MET, exit 0
    assert main([*base, "-n", "5", "--out", str(tmp_path / "met"), *_sets(MEDIAN)]) == 0
    out = capsys.readouterr().out
    assert "verdict MET" in out and "upper " in out
    info = json.loads((tmp_path / "met" / "montecarlo.json").read_text())
    row = info["requirements"][0]
    assert info["verdict"] == MET and row["status"] == MET and info["warnings"] == []
    x = np.sort([json.loads(p.read_text())["metrics"][row["metric"]] for p in
                 (tmp_path / "met" / "variants").glob("*/metrics.json")])  # fmt: skip
    assert row["bound"] == row["upper"] == x[row["upper_rank"] - 1]  # an order statistic
    # a limit below every run: NOT MET (one run above it decides a P99 from below), exit 3
    tight = ["requirements.base_pos_err_max=1e-12"]
    code = main([*base, "-n", "2", "--out", str(tmp_path / "bad"), *_sets(tight)])
    assert code == 3 and "NOT MET" in capsys.readouterr().out
    assert main([*base, "-n", "2", "--out", str(tmp_path / "bad"), *_sets(tight), "--no-fail"]) == 0


# ------------------------------------------------------------------ until confident


def test_until_confident_stops_when_decided_and_is_the_prefix_of_a_longer_campaign(tmp_path):
    assert BATCH == mc.BATCH
    sc = load_scenario("station-keeping", [*SHORT, *MEDIAN])
    kw = dict(scheduler="synchronous", progress=False)
    early = mc.montecarlo(sc, 12, until_confident=True, batch=5, out=tmp_path / "a", **kw)
    info = early.attrs["montecarlo"]
    assert len(early) == 5 and info["n"] == 5 and info["verdict"] == MET
    assert info["until_confident"] == {"cap": 12, "batch": 5, "batches": 1, "stopped": "decided"}
    full = mc.montecarlo(sc, 8, **kw)
    assert list(early["variant"]) == list(full["variant"][:5])
    for m in METRICS:
        np.testing.assert_array_equal(early[m].to_numpy(), full[m].to_numpy()[:5], err_msg=m)
    # an undecidable P99 at 95 % runs to the cap, in batches; metrics.csv holds every run
    sc99 = load_scenario("station-keeping", SHORT)
    capped = mc.montecarlo(sc99, 7, until_confident=True, batch=3, out=tmp_path / "b", **kw)
    stop = capped.attrs["montecarlo"]["until_confident"]
    assert len(capped) == 7 and stop["stopped"] == "cap" and stop["batches"] == 3
    csv = (tmp_path / "b" / "metrics.csv").read_text().strip().splitlines()
    assert len(csv) == 1 + 7
    np.testing.assert_array_equal(capped["base_pos_err_max"], full["base_pos_err_max"][:7])


def test_the_cli_stops_early_and_says_why(tmp_path, capsys):
    argv = ["montecarlo", "station-keeping", "-n", "50", "--until-confident", "--batch", "5"]
    argv += ["--scheduler", "synchronous", "-q", "--no-plots", "--out", str(tmp_path)]
    assert main([*argv, *_sets([*SHORT, *MEDIAN])]) == 0
    out = capsys.readouterr().out
    assert "stopped after 5 runs (1 batches): every verdict decided" in out


# ------------------------------------------------------------------ figures and report


def test_the_figures_and_the_report_state_the_bound_and_the_verdict(tmp_path, capsys):
    out = tmp_path / "mc"
    argv = ["montecarlo", "station-keeping", "-n", "6", "--scheduler", "synchronous", "-q"]
    assert main([*argv, "--out", str(out), *_sets(SHORT), *_sets(MEDIAN)]) == 0
    info = json.loads((out / "montecarlo.json").read_text())
    from dqspace.scenarios.figures.campaign_montecarlo import plot_histograms
    from dqspace.scenarios.store.sweep_store import load_sweep

    df = load_sweep(out)
    rows = {m: df[m].to_numpy(float) for m in METRICS if m in df}
    fig = plot_histograms(rows, info["requirements"], name="x", n=6)
    ax = fig.axes[0]
    r = info["requirements"][0]
    (bound,) = [ln for ln in ax.get_lines() if ln.get_gid() == "bound"]
    assert bound.get_xdata()[0] == pytest.approx(1e3 * r["upper"])  # mm
    assert ax.get_title(loc="left").startswith("MET: P50 ≤ 1000 mm at 95 %")
    assert "requirements MET" in fig.get_suptitle()
    assert (out / "montecarlo.png").stat().st_size > 10_000
    assert main(["report", str(out), "-q"]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    table = page[page.index('<table id="requirements">') :]
    table = table[: table.index("</table>")]
    assert table.count("<tr>") == 1 + 3 and "MET" in table and "upper " in table
    assert f"{r['upper_rank']} of 6" in table
    assert '<table id="sensitivity">' in page and "Requirements MET" in page
    for b64 in re.findall(r'src="data:image/png;base64,([^"]+)"', page):
        assert base64.b64decode(b64)[:4] == b"\x89PNG"
