"""Monte Carlo campaigns: the same runs serially and on Dask, each run reproducible alone,
the CLI's table, files and figures; each run's decimated errors kept for the envelopes."""

import json
import re

import numpy as np
import pytest

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.campaigns.montecarlo import (
    ENVELOPE_SAMPLES,
    envelopes,
    load_envelope_series,
    montecarlo,
    scenario_requirements,
)
from dqspace.scenarios.cli import main
from dqspace.scenarios.sim.metrics import METRICS, summarize
from dqspace.scenarios.spec import requirements
from dqspace.scenarios.spec.config import ScenarioError

SHORT = ["scenario.duration=0.5"]


def test_serial_and_dask_campaigns_give_identical_metrics_and_run_i_reruns_alone(tmp_path):
    sc = load_scenario("station-keeping", SHORT)
    serial = montecarlo(sc, 4, scheduler="synchronous", out=tmp_path / "serial", progress=False)
    dask = montecarlo(sc, 4, workers=2, out=tmp_path / "mc", progress=False)
    for m in METRICS:
        np.testing.assert_array_equal(serial[m].to_numpy(), dask[m].to_numpy(), err_msg=m)
    # the runs' series over time, too, bit for bit
    ids_s, series_s = load_envelope_series(tmp_path / "serial", serial["variant"])
    ids_d, series_d = load_envelope_series(tmp_path / "mc", dask["variant"])
    assert ids_s == ids_d == list(serial["variant"]) and len(series_s) == 4
    for a, b in zip(series_s, series_d, strict=True):
        assert a.keys() == b.keys() == {"t", "base_pos_err_max", "base_att_err_max", "ee_max"}
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    # run 2 alone: its overrides drawn by themselves (sample 2 of a 3-run draw is the same)
    from dqspace.scenarios.spec.dispersions import Dispersions

    row = serial.iloc[2]
    sample = Dispersions.from_table(sc.dispersions, sc.config).samples(3, 0)[2]
    over = [f"{k}={json.dumps(v)}" for k, v in sample.items()]
    alone = summarize(run(load_scenario("station-keeping", SHORT + over), progress=False))
    for m in METRICS:
        assert alone[m] == pytest.approx(row[m], rel=0, abs=0) or (
            np.isnan(alone[m]) and np.isnan(row[m])
        ), m
    info = json.loads((tmp_path / "mc" / "montecarlo.json").read_text())
    assert info["n"] == 4 and {r["metric"] for r in info["requirements"]} == {
        "base_pos_err_max",
        "base_att_err_max",
        "ee_max",
    }
    p99 = info["percentiles"]["base_pos_err_max"]["99"]
    assert p99 == pytest.approx(np.percentile(dask["base_pos_err_max"], 99))


def test_the_cli_prints_percentiles_and_requirements_and_writes_the_files(tmp_path, capsys):
    out = tmp_path / "cli"
    code = main(
        [
            "montecarlo",
            "station-keeping",
            "-n",
            "3",
            "--scheduler",
            "synchronous",
            "--out",
            str(out),
            "-q",
            "--set",
            "scenario.duration=0.3",
        ]
    )
    assert code == 4  # 3 runs cannot bound a 99th percentile: UNDECIDED
    captured = capsys.readouterr()
    text = captured.out
    assert "P99" in text and "requirements (" in text and " mm" in text
    assert text.count("UNDECIDED") >= 3 and "verdict UNDECIDED" in text
    assert "at least 299 runs are needed" in captured.err  # the warning, even with -q
    assert (out / "metrics.csv").is_file() and (out / "montecarlo.png").stat().st_size > 10_000
    assert str(out / "montecarlo_envelopes.png") in text  # the figures the command drew


def test_a_scenario_without_dispersions_and_a_bad_table_are_refused(tmp_path):
    f = tmp_path / "nodisp.toml"
    f.write_text('[scenario]\nname = "nodisp"\n')
    with pytest.raises(ValueError, match="no \\[dispersions\\] table"):
        montecarlo(load_scenario(f), 2, scheduler="synchronous", progress=False)
    f.write_text(
        '[scenario]\nname = "bad"\n[dispersions]\n"base.mas" = {dist = "normal", sigma = 1}\n'
    )
    with pytest.raises(ScenarioError, match="did you mean 'mass'"):
        load_scenario(f)


def test_each_run_keeps_its_errors_decimated_with_its_metrics_as_maxima(tmp_path):
    out = tmp_path / "mc"
    sc = load_scenario("station-keeping", SHORT)
    df = montecarlo(sc, 3, scheduler="synchronous", out=out, progress=False)
    ids, series = load_envelope_series(out, df["variant"])
    for (_, row), s in zip(df.iterrows(), series, strict=True):
        # 0.5 s at 100 Hz: 50 ticks, so 50 bins (at most ENVELOPE_SAMPLES), each with a sample
        assert ENVELOPE_SAMPLES > 50 and s["t"].shape == (50,)
        np.testing.assert_allclose(s["t"], np.arange(1, 51) * 0.01)
        # the largest value of a bin: the series' maximum is the run's metric, exactly
        for m in ("base_pos_err_max", "base_att_err_max"):
            assert np.nanmax(s[m]) == row[m], m
        assert np.isfinite(s["base_pos_err_max"]).all()
        assert (out / "variants" / row["variant"] / "series.npz").stat().st_size < 20_000
    # the rerun of a run from its overrides gives the same series (independent: a single run)
    sample = {k: row[k] for k in df.columns if "." in k}
    over = [f"{k}={json.dumps(list(v) if isinstance(v, tuple) else v)}" for k, v in sample.items()]
    from dqspace.scenarios.campaigns.montecarlo import envelope_series

    alone = envelope_series(run(load_scenario("station-keeping", SHORT + over), progress=False))
    for k in alone:
        np.testing.assert_array_equal(alone[k], series[-1][k], err_msg=k)


def test_envelope_bands_are_the_percentiles_of_the_stored_series(tmp_path):
    out = tmp_path / "mc"
    sc = load_scenario("station-keeping", SHORT)
    df = montecarlo(sc, 4, scheduler="synchronous", out=out, progress=False)
    # read the stored files directly (not through the code under test)
    stack = {}
    for vid in df["variant"]:
        with np.load(out / "variants" / vid / "series.npz") as z:
            for k in z.files:
                stack.setdefault(k, []).append(z[k])
    env = envelopes(load_envelope_series(out)[1])
    for m in ("base_pos_err_max", "base_att_err_max"):
        Y = np.vstack(stack[m])
        keep = np.isfinite(Y).all(axis=0)  # bins every run has: all of them here
        assert keep.all()
        for q in (50, 95, 99):
            np.testing.assert_allclose(
                env[m][f"p{q}"][keep], np.percentile(Y[:, keep], q, axis=0), rtol=0, atol=0
            )
        np.testing.assert_array_equal(env[m]["min"][keep], Y[:, keep].min(axis=0))
        np.testing.assert_array_equal(env[m]["max"][keep], Y[:, keep].max(axis=0))
        assert (env[m]["runs"] == 4).all()
    # and the figure draws those values in display units
    import matplotlib.image

    from dqspace.scenarios.figures.campaign_plots import plot_montecarlo

    plot_montecarlo(out, formats=("png",))
    img = matplotlib.image.imread(out / "montecarlo_envelopes.png")
    assert img.shape[0] > 500 and img[..., :3].std() > 0.05
    from dqspace.scenarios.figures.campaign_plots import plot_envelopes

    req = {m: (r.op, r.limit, r.percentile) for m, r in scenario_requirements(sc.config).items()}
    fig = plot_envelopes(env, req, name="x", n_runs=4)
    ax = fig.axes[0]
    (p99,) = [ln for ln in ax.get_lines() if ln.get_gid() == "p99"]
    np.testing.assert_allclose(
        np.asarray(p99.get_ydata())[keep],
        1e3 * np.percentile(np.vstack(stack["base_pos_err_max"])[:, keep], 99, axis=0),
    )
    (req_line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "requirement"]
    assert req_line.get_ydata()[0] == pytest.approx(1.0)  # 1 mm
    assert ax.get_yaxis().get_major_formatter().get_offset() == ""


def test_a_restarted_campaign_runs_only_what_is_missing_series_included(tmp_path):
    out = tmp_path / "mc"
    sc = load_scenario("station-keeping", ["scenario.duration=0.2"])
    first = montecarlo(sc, 3, scheduler="synchronous", out=out, progress=False)
    (out / "variants" / first["variant"][1] / "series.npz").unlink()
    again = montecarlo(sc, 3, scheduler="synchronous", out=out, progress=False)
    assert list(again["cached"]) == [True, False, True]  # the run without its series reran
    for m in METRICS:
        np.testing.assert_array_equal(first[m].to_numpy(), again[m].to_numpy(), err_msg=m)
    assert len(load_envelope_series(out)[1]) == 3
    # the campaign draws nothing: the figures are its caller's (the CLI, dqspace plot)
    assert (out / "montecarlo.json").is_file() and not list(out.glob("*.png"))


def test_dqspace_plot_draws_the_figures_of_a_campaign_run_without_them(tmp_path, capsys):
    out = tmp_path / "mc"
    argv = ["montecarlo", "station-keeping", "-n", "2", "--scheduler", "synchronous"]
    argv += ["--out", str(out), "-q", "--no-plots", "--no-fail", "--set", "scenario.duration=0.2"]
    assert main(argv) == 0  # UNDECIDED (2 runs), but --no-fail
    assert "montecarlo.png" not in capsys.readouterr().out and not list(out.glob("*.png"))
    assert main(["plot", str(out), "--formats", "png", "--out", str(tmp_path / "figs")]) == 0
    assert "montecarlo_envelopes.png" in capsys.readouterr().out
    for f in ("montecarlo.png", "montecarlo_envelopes.png"):
        assert (tmp_path / "figs" / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_requirements_come_from_the_scenario_table_else_the_defaults():
    assert scenario_requirements({}) == {
        "base_pos_err_max": ("<=", 1e-3, 99, 0.95),
        "base_att_err_max": ("<=", 0.05, 99, 0.95),
        "ee_max": ("<=", 1e-3, 99, 0.95),
    }
    req = scenario_requirements(
        {
            "requirements": {
                "base_pos_err_max": 5e-4,
                "ee_rms": {"limit": 2e-4, "percentile": 95, "confidence": 0.9},
                "total_impulse": ["<=", 20.0, 50],
                "min_det_GGt": [">=", 1e3, 1, 0.99],
                "peak_rw_speed": None,  # nothing (a resolved scenario's default)
            }
        }
    )
    assert req["base_pos_err_max"] == ("<=", 5e-4, 99, 0.95)
    assert req["ee_rms"] == ("<=", 2e-4, 95, 0.9) and req["total_impulse"] == ("<=", 20.0, 50, 0.95)
    assert req["min_det_GGt"].op == ">=" and req["min_det_GGt"].confidence == 0.99
    assert req["base_att_err_max"] == ("<=", 0.05, 99, 0.95) and "peak_rw_speed" not in req
    assert req["ee_rms"].text() == "P95 <= 0.0002 at 90 %"
    for table, match in (
        ({"base_pos": 1.0}, "requirements.base_pos: no such metric"),
        ({"ee_max": float("nan")}, "requirements.ee_max: limit nan is not a finite number"),
        ({"ee_max": ["<", 1.0, 99]}, "op must be '<=' or '>='"),
        ({"ee_max": {"limit": 1.0, "percentile": 120}}, "percentile must be in (0, 100)"),
        ({"ee_max": {"limit": 1.0, "percentile": 100}}, "percentile must be in (0, 100)"),
        ({"ee_max": {"limit": 1.0, "confidence": 95}}, "confidence must be in (0, 1)"),
        ({"ee_max": {"lim": 1.0}}, "expected {limit = ..."),
        ({"ee_max": "1 mm"}, "expected a limit, a table"),
    ):
        with pytest.raises(ValueError, match=re.escape(match)):
            scenario_requirements({"requirements": table})


def test_the_specification_judges_requirements_against_the_metrics_it_is_given():
    # the campaigns' names are the specification's, with the run's metrics bound
    from dqspace.scenarios.campaigns import montecarlo as mc

    assert mc.DEFAULT_REQUIREMENTS is requirements.DEFAULT_REQUIREMENTS
    table = {"requirements": {"settling_time": {"limit": 3.0, "op": "<=", "percentile": 90}}}
    assert requirements.scenario_requirements(table, {"settling_time"})["settling_time"] == (
        "<=",
        3.0,
        90,
        requirements.DEFAULT_CONFIDENCE,
    )
    with pytest.raises(ValueError, match="requirements.settling_time: no such metric"):
        requirements.scenario_requirements(table, METRICS)  # not a metric of a run
    assert requirements.scenario_requirements(None, METRICS) == mc.scenario_requirements({})


def test_a_second_campaign_into_the_same_directory_is_refused_a_longer_one_extends(tmp_path):
    """Another seed (or dispersion table) into the same ``out`` was accepted and its runs
    mixed with the first campaign's (6 variants, `dqspace plot` showed both)."""
    sc = load_scenario("station-keeping", ["scenario.duration=0.2"])
    out = tmp_path / "mc"
    first = montecarlo(sc, 3, seed=1, out=out, scheduler="synchronous", progress=False)
    with pytest.raises(ValueError, match="holds another Monte Carlo campaign .a different seed"):
        montecarlo(sc, 3, seed=2, out=out, scheduler="synchronous", progress=False)
    other = {"disturbance.force": {"dist": "uniform", "low": -0.2, "high": 0.2}}
    with pytest.raises(ValueError, match="a different dispersions"):
        montecarlo(sc, 3, seed=1, dispersions=other, out=out, scheduler="synchronous",
                   progress=False)  # fmt: skip
    longer = montecarlo(sc, 4, seed=1, out=out, scheduler="synchronous", progress=False)
    assert len(longer) == 4 and len(list((out / "variants").iterdir())) == 4
    key = ["variant", "base_pos_err_max"]
    assert longer[key].iloc[:3].equals(first[key].reset_index(drop=True))
