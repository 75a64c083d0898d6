"""Every JSON file a run, a sweep, a Monte Carlo campaign or a tuning writes is strict JSON
(no ``NaN`` or ``Infinity``): read here with a parser that refuses them (issue 26)."""

import json

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.campaigns.montecarlo import montecarlo
from dqspace.scenarios.campaigns.robust_tuning import robust_tune
from dqspace.scenarios.campaigns.sweep import sweep
from dqspace.scenarios.store.sweep_store import load_sweep

SK = "station-keeping"


def _strict(path):
    def refuse(name):
        raise ValueError(f"{path}: {name} is not JSON")

    return json.loads(path.read_text(), parse_constant=refuse)


def test_every_json_file_of_a_run_sweep_campaign_and_tuning_is_strict(tmp_path):
    # 0.05 s: shorter than metrics.transient, so the end-effector metrics are not measured
    # (NaN) in every run: what strict JSON must carry as null
    sc = load_scenario(SK, ["scenario.duration=0.05", "outputs.plots=false"])
    run(sc, out=tmp_path / "run", progress=False)
    kw = dict(scheduler="synchronous", progress=False)
    samples = [{"arm_controller.omega_n": 15.0}, {"arm_controller.omega_n": 25.0}]
    df = sweep(sc, samples=samples, out=tmp_path / "sweep", **kw)
    assert df["ee_rms"].isna().all()
    montecarlo(sc, 2, out=tmp_path / "mc", **kw)
    params = {"arm_controller.omega_n": "15:25"}
    robust_tune(sc, params, 2, budget=2, out=tmp_path / "tune", **kw)
    files = sorted(tmp_path.rglob("*.json"))
    kinds = {f.relative_to(tmp_path).parts[0] + "/" + f.name for f in files}
    want = {"run/manifest.json", "sweep/sweep.json", "sweep/metrics.json"}
    want |= {"mc/montecarlo.json", "tune/tuning.json"}
    assert want <= kinds, kinds
    for f in files:
        _strict(f)
    # a record's metric not measured is null, and reads back as NaN
    rec = _strict(next((tmp_path / "sweep" / "variants").glob("*/metrics.json")))
    assert rec["metrics"]["ee_rms"] is None
    assert load_sweep(tmp_path / "sweep")["ee_rms"].isna().all()
