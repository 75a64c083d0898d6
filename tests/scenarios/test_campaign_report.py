"""``dqspace report DIR`` on a campaign directory (issue 25): a Monte Carlo campaign, a sweep
and a robust tuning each get one self-contained page with the settings, the requirements
(a campaign's percentiles with their order-statistics bounds, recomputed here from the raw
metric values), a small-sample warning when the runs are too few (and none when they are
enough), the figures embedded, the failed and degraded runs; every string from the
directory escaped."""

import base64
import hashlib
import html
import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom

from dqspace.scenarios import load_scenario
from dqspace.scenarios.campaigns import sweep as sweep_module
from dqspace.scenarios.campaigns.montecarlo import montecarlo
from dqspace.scenarios.campaigns.robust_tuning import robust_tune
from dqspace.scenarios.campaigns.sweep import sweep
from dqspace.scenarios.cli import main
from dqspace.scenarios.figures.units import format_quantity
from dqspace.scenarios.sim.metrics import METRICS
from support.campaigns import ur5_with_dispersions

HOSTILE = "<script>alert(1)</script>"
SHORT = ["scenario.duration=0.3", "metrics.transient=0.1", "outputs.plots=false"]
DEGRADED = "VSCMG steering saturated on 3 of 101 control ticks"


# ------------------------------------------------------------------ the directories


#: the seeds of the fake runs that fail, and of those degraded (set by the fixtures)
FAILING, DEGRADING = set(), set()


def _fake_evaluate(config, source, custom, keep_result, series=None):
    """A run without simulating: metrics drawn from the run's configuration (the same
    configuration, the same numbers); the runs of :data:`FAILING` seeds fail, those of
    :data:`DEGRADING` seeds are degraded."""
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    rec = {"run_time": 0.01, "error": None, "traceback": None, "result": None, "series": None}
    rec.update(worker="test", degraded=[])
    seed = config["scenario"]["seed"]
    if seed in FAILING:
        rec.update(metrics={}, error=f"RunFailed: diverged {HOSTILE}")
        return rec
    rec["metrics"] = {m: float(rng.lognormal(np.log(2e-4), 0.4)) for m in METRICS}
    if seed in DEGRADING:
        rec["degraded"] = [DEGRADED]
    return rec


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("campaigns")


@pytest.fixture(scope="module")
def mc4(folder):
    """A real campaign of 4 runs, then a hostile name and error planted in its files."""
    sc = load_scenario(ur5_with_dispersions(folder), SHORT)
    out = folder / "mc4"
    montecarlo(sc, 4, out=out, scheduler="synchronous", progress=False)
    info = json.loads((out / "montecarlo.json").read_text())
    info["scenario"] = HOSTILE
    (out / "montecarlo.json").write_text(json.dumps(info))
    df = pd.read_csv(out / "metrics.csv", dtype={"variant": str})
    df["error"] = df["error"].astype(object)
    df.loc[0, "error"] = f"ValueError: {HOSTILE}"
    df.to_csv(out / "metrics.csv", index=False)
    return out


def _seeds(n):
    """The run seeds of a station-keeping campaign of ``n`` runs."""
    from dqspace.scenarios.spec.dispersions import Dispersions

    sc = load_scenario("station-keeping", SHORT)
    samples = Dispersions.from_table(sc.dispersions, sc.config).samples(n, 0)
    return [s["scenario.seed"] for s in samples]


@pytest.fixture(scope="module")
def mc300(folder):
    """300 runs made by the fake run (no simulation), run 3 failed and runs 7 and 8
    degraded: 299 runs with values, just enough for P99 at 95 %."""
    out = folder / "mc300"
    seeds = _seeds(300)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sweep_module, "_evaluate", _fake_evaluate)
        FAILING.add(seeds[3])
        DEGRADING.update(seeds[7:9])
        try:
            montecarlo(load_scenario("station-keeping", SHORT), 300, out=out,
                       scheduler="synchronous", progress=False)  # fmt: skip
        finally:
            FAILING.clear()
            DEGRADING.clear()
    return out


@pytest.fixture(scope="module")
def swept(folder):
    """A real sweep: three variants, one describing itself with a script tag."""
    req = "requirements.ee_max={limit = 1e-5, percentile = 99}"
    sc = load_scenario("ur5-waypoints", [*SHORT, req])
    samples = [{"scenario.seed": 1}, {"scenario.seed": 2}, {"scenario.description": HOSTILE}]
    out = folder / "sweep"
    sweep(sc, samples=samples, out=out, scheduler="synchronous", progress=False)
    rec_path = sorted((out / "variants").glob("*/metrics.json"))[0]
    rec = json.loads(rec_path.read_text())
    rec["degraded"] = [f"{DEGRADED} {HOSTILE}"]
    rec_path.write_text(json.dumps(rec))
    return out


@pytest.fixture(scope="module")
def tuned(folder):
    sc = load_scenario(ur5_with_dispersions(folder), SHORT)
    out = folder / "tune"
    robust_tune(sc, {"base_controller.kp_trans": "200:2000"}, 3, budget=2, out=out,
                scheduler="synchronous", progress=False)  # fmt: skip
    doc = json.loads((out / "tuning.json").read_text())
    doc["notes"].append(HOSTILE)
    (out / "tuning.json").write_text(json.dumps(doc))
    return out


def _page(directory):
    assert main(["report", str(directory), "-q"]) == 0
    return (directory / "report.html").read_text(encoding="utf-8")


def _table(page, table_id):
    text = page[page.index(f'<table id="{table_id}">') :]
    return text[: text.index("</table>")]


def _rows(table):
    """The cells (unescaped text) of each row after the header."""
    rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)[1:]
    cells = [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r, flags=re.S) for r in rows]
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in row] for row in cells]


# ------------------------------------------------------------------ every kind


@pytest.mark.parametrize("kind", ["mc4", "mc300", "swept", "tuned"])
def test_every_campaign_directory_gets_a_self_contained_page(kind, request):
    directory = request.getfixturevalue(kind)
    page = _page(directory)
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page, flags=re.I)
    assert refs and all(r.startswith("data:image/png;base64,") for r in refs)
    assert not re.search(r"<script|<link|url\(|@import|https?://", page, flags=re.I)
    for b64 in re.findall(r'src="data:image/png;base64,([^"]+)"', page):
        assert base64.b64decode(b64, validate=True)[:8] == b"\x89PNG\r\n\x1a\n"
    assert '<table id="settings">' in page
    table = "candidate-requirements" if kind == "tuned" else "requirements"
    assert f'<table id="{table}">' in page
    assert 'id="runs"' in page  # the failed and degraded runs, even when there are none


@pytest.mark.parametrize("kind", ["mc4", "swept", "tuned"])
def test_a_hostile_string_in_the_data_is_shown_as_text(kind, request):
    page = _page(request.getfixturevalue(kind))
    assert "<script" not in page.lower()
    assert html.escape(HOSTILE) in page


# ------------------------------------------------------------------ Monte Carlo


def _order_statistics(values, percentile, confidence):
    """The sample percentile of the runs with a value and its bounds, straight from the
    binomial distribution over all the runs, a run without a value taken as the worst case
    (above every other for the upper bound, below for the lower):
    ``(estimate, (upper, rank) or None, (lower, rank) or None, n with a value, n without)``."""
    finite = values[np.isfinite(values)]
    N, p = len(values), percentile / 100
    high = np.sort(np.where(np.isfinite(values), values, np.inf))
    low = np.sort(np.where(np.isfinite(values), values, -np.inf))
    up = [k for k in range(1, N + 1) if binom.cdf(k - 1, N, p) >= confidence]
    lo = [k for k in range(1, N + 1) if 1 - binom.cdf(k - 1, N, p) >= confidence]
    upper = (high[up[0] - 1], up[0]) if up and np.isfinite(high[up[0] - 1]) else None
    lower = (low[lo[-1] - 1], lo[-1]) if lo and np.isfinite(low[lo[-1] - 1]) else None
    return np.percentile(finite, percentile), upper, lower, len(finite), N - len(finite)


def _check_requirement_rows(page, directory, table_id="requirements"):
    info = json.loads((directory / "montecarlo.json").read_text())
    df = pd.read_csv(directory / "metrics.csv")
    rows = {r[0]: r for r in _rows(_table(page, table_id))}
    assert len(rows) == len(info["requirements"]) == 3
    for req in info["requirements"]:
        m = req["metric"]
        unit = METRICS[m][0]
        est, upper, lower, n, missing = _order_statistics(
            df[m].to_numpy(float), req["percentile"], req["confidence"]
        )
        row = rows[m]
        assert row[2] == format_quantity(est, unit, kind=m)
        for cell, bound in ((row[3], upper), (row[4], lower)):
            if bound is None:
                assert cell.startswith("none")
            else:
                rank = f"rank {bound[1]} of {n + missing}"
                assert cell == f"{format_quantity(bound[0], unit, kind=m)} ({rank})"
        assert row[5] == (f"{n} ({missing} not measured)" if missing else str(n))
        assert row[6] == req["status"]
    return rows


def test_the_requirements_hold_each_percentile_and_its_bounds_from_order_statistics(mc4, mc300):
    rows = _check_requirement_rows(_page(mc4), mc4)
    assert all(r[3] == "none (299 runs needed)" for r in rows.values())  # 4 runs: no upper
    rows = _check_requirement_rows(_page(mc300), mc300)
    # 299 runs with a value and one failed: the upper bound of P99 (rank 300 of 300) is the
    # failed run, ranked above them all, so no requirement is MET because of it
    for r in rows.values():
        assert r[3] == "none (rank 300 of 300 is a run not measured)", r
        assert r[5] == "299 (1 not measured)" and r[6] == "UNDECIDED"


def test_a_small_sample_is_warned_on_the_page_and_enough_runs_are_not(mc4, mc300):
    page = _page(mc4)
    box = page[page.index('id="small-sample"') :]
    box = html.unescape(box[: box.index("</div>")])
    assert "P50, P95 and P99 of 4 runs are sample values only" in box
    assert "4 runs cannot bound P99 at 95 % confidence: at least 299 runs are needed" in box
    assert "small-sample" not in _page(mc300)
    assert "sample values only" not in _page(mc300)


@pytest.mark.parametrize("n, warned", [(4, True), (300, False)])
def test_the_console_prints_the_same_small_sample_warning(tmp_path, monkeypatch, capsys, n,
                                                          warned):  # fmt: skip
    monkeypatch.setattr(sweep_module, "_evaluate", _fake_evaluate)
    argv = ["montecarlo", "station-keeping", "-n", str(n), "--scheduler", "synchronous"]
    argv += ["--no-plots", "--no-fail", "--out", str(tmp_path), "-q"]
    main([*argv, *[a for s in SHORT for a in ("--set", s)]])
    err = capsys.readouterr().err
    if warned:
        assert "warning: P50, P95 and P99 of 4 runs are sample values only" in err
        assert "at least 299 runs are needed" in err
    else:
        assert "sample values only" not in err and "runs are needed" not in err
    page = _page(tmp_path)
    assert ("sample values only" in page) == warned


def test_the_failed_and_degraded_runs_are_listed(mc300, mc4):
    page = _page(mc300)
    df = pd.read_csv(mc300 / "metrics.csv", dtype={"variant": str})
    failed = df.loc[df["error"].notna(), "variant"].tolist()
    assert len(failed) == 1
    items = _table_list(page, "failed")
    assert len(items) == len(failed)
    assert items[0].startswith(f"run {failed[0]}: RunFailed: diverged {HOSTILE} (")
    assert "plant.base_mass_error = " in items[0]  # the run's draws
    degraded = _table_list(page, "degraded")
    assert len(degraded) == 2
    assert all(f": {DEGRADED} (plant.base_mass_error = " in x for x in degraded)
    # the runs of the 4-run campaign: the one its table says failed (a name planted)
    assert any(f"ValueError: {HOSTILE}" in x for x in _table_list(_page(mc4), "failed"))


def _table_list(page, list_id):
    text = page[page.index(f'<ul id="{list_id}">') :]
    text = text[: text.index("</ul>")]
    return [html.unescape(x) for x in re.findall(r"<li>(.*?)</li>", text, flags=re.S)]


# ------------------------------------------------------------------ sweep


def test_a_sweep_page_judges_each_variant_against_the_stored_requirements(swept):
    page = _page(swept)
    manifest = json.loads((swept / "sweep.json").read_text())
    assert manifest["requirements"]["ee_max"]["limit"] == 1e-5  # the base scenario's
    table = _table(page, "requirements")
    header = [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", table)]
    assert "ee_max (≤ 0.01 mm)" in header and "base_pos_err_max (≤ 1 mm)" in header
    rows = {r[0]: r for r in _rows(table)}
    recs = [json.loads(p.read_text()) for p in (swept / "variants").glob("*/metrics.json")]
    assert len(rows) == len(recs) == 3
    met = 0
    for rec in recs:
        row = rows[rec["id"]]
        verdicts = []
        for m, limit in (("base_pos_err_max", 1e-3), ("base_att_err_max", 0.05), ("ee_max", 1e-5)):
            i = header.index(next(h for h in header if h.startswith(f"{m} (")))
            value = rec["metrics"][m]
            assert row[i] == format_quantity(value, METRICS[m][0], kind=m)
            verdicts.append("MET" if value <= limit else "NOT MET")
            assert row[i + 1] == verdicts[-1]
        assert row[-1] == ("MET" if verdicts == ["MET"] * 3 else "NOT MET")
        met += row[-1] == "MET"
    assert f"{met} of 3 variants meet every requirement (0 failed)" in page
    assert "no percentile or confidence is claimed" in page
    assert 'id="fig-sweep_tradeoff"' in page and "small-sample" not in page
    degraded = _table_list(page, "degraded")
    assert len(degraded) == 1 and f": {DEGRADED} {HOSTILE}" in degraded[0]


# ------------------------------------------------------------------ tuning


def test_a_tuning_page_shows_the_design_its_campaign_and_every_candidate(tuned):
    page = _page(tuned)
    doc = json.loads((tuned / "tuning.json").read_text())
    k = doc["best"] if doc["best"] is not None else doc["closest"]
    assert f"candidate {k}" in page
    _check_requirement_rows(page, tuned / "candidates" / str(k), "candidate-requirements")
    assert len(_rows(_table(page, "candidates"))) == len(doc["candidates"]) == 2
    constraints = {r[0]: r for r in _rows(_table(page, "constraints"))}
    assert set(constraints) == {"base_pos_err_max", "base_att_err_max", "ee_max", "failed_runs"}
    assert constraints["ee_max"][3] == "none (too few runs)"
    assert constraints["ee_max"][4] == "sample"
    box = html.unescape(page[page.index('id="small-sample"') :])
    assert "3 runs cannot bound P99 at 95 % confidence: at least 299 runs are needed" in box
    assert 'id="fig-tuning_history"' in page and 'id="fig-tuning_pareto"' in page


# ------------------------------------------------------------------ the file


@pytest.mark.parametrize("name", ["report.pdf", "r.html.txt"])
def test_a_campaign_report_named_as_another_format_is_refused(mc4, tmp_path, capsys, name):
    assert main(["report", str(mc4), "--out", str(tmp_path / name), "-q"]) == 2
    assert "a report is an HTML page; name it .html" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_a_directory_that_is_no_campaign_nor_result_is_one_line(tmp_path, capsys):
    (tmp_path / "campaign.json").write_text("{}")
    (tmp_path / "sweep.json").write_text("{}")
    assert main(["report", str(tmp_path), "-q"]) == 2
    assert "has not finished (no montecarlo.json)" in capsys.readouterr().err
