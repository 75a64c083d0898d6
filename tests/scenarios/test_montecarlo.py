"""Monte Carlo campaigns: the same runs serially and on Dask, each run reproducible alone,
the CLI's table, files and figure."""

import json

import numpy as np
import pytest

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.cli import main
from dqspace.scenarios.config import ScenarioError
from dqspace.scenarios.metrics import METRICS, summarize
from dqspace.scenarios.montecarlo import montecarlo

SHORT = ["scenario.duration=0.5"]


def test_serial_and_dask_campaigns_give_identical_metrics_and_run_i_reruns_alone(tmp_path):
    sc = load_scenario("station-keeping", SHORT)
    serial = montecarlo(sc, 4, scheduler="synchronous", progress=False)
    dask = montecarlo(sc, 4, workers=2, out=tmp_path / "mc", progress=False)
    for m in METRICS:
        np.testing.assert_array_equal(serial[m].to_numpy(), dask[m].to_numpy(), err_msg=m)
    # run 2 alone: its overrides drawn by themselves (sample 2 of a 3-run draw is the same)
    from dqspace.scenarios.dispersions import Dispersions

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
    assert code == 0
    text = capsys.readouterr().out
    assert "P99" in text and "requirements:" in text and " mm" in text
    assert (out / "metrics.csv").is_file() and (out / "montecarlo.png").stat().st_size > 10_000


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
