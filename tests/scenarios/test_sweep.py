"""Parameter sweeps on Dask: same metrics as serial runs, restart, failures, errors, CLI."""

import json
import math
import threading

import numpy as np
import pandas as pd
import pytest

from dqspace.scenarios import Results, load_scenario, load_sweep, run, sweep
from dqspace.scenarios.cli import main
from dqspace.scenarios.sim.metrics import METRICS, summarize
from dqspace.scenarios.spec.variants import (
    grid_product,
    load_grid_file,
    load_samples_file,
    make_variants,
    scenario_with,
)

BASE = ["scenario.duration=2.0"]
NOISY = BASE + ["disturbance.force_noise_std=0.3", "disturbance.torque_noise_std=0.05"]


@pytest.fixture(scope="module")
def base():
    return load_scenario("station-keeping", BASE)


def _base():
    return load_scenario("station-keeping", BASE)


def _toml(v):
    return json.dumps(v)  # lists of numbers and integers read the same in TOML


def _counting_metric(path):
    """A metric that appends one line to ``path`` per evaluation (counts runs on workers)."""

    def runs(res):
        with open(path, "a") as fh:
            fh.write("x\n")
        return 0.0

    return runs


def _count(path):
    return len(path.read_text().splitlines()) if path.exists() else 0


# ------------------------------------------------------------------ variants


def test_grid_is_the_cartesian_product_last_key_fastest():
    grid = {"a.x": [1, 2, 3], "b.y": ["p", "q"]}
    combos = grid_product(grid)
    assert combos == [
        {"a.x": 1, "b.y": "p"},
        {"a.x": 1, "b.y": "q"},
        {"a.x": 2, "b.y": "p"},
        {"a.x": 2, "b.y": "q"},
        {"a.x": 3, "b.y": "p"},
        {"a.x": 3, "b.y": "q"},
    ]


def test_variant_ids_depend_only_on_the_canonical_overrides(base):
    a = make_variants(
        base, samples=[{"base_controller.kp_trans": [600, 600, 600], "scenario.seed": 1}]
    )[0]
    b = make_variants(
        base,
        samples=[{"scenario.seed": 1, "base_controller.kp_trans": np.array([600.0, 600.0, 600.0])}],
    )[0]
    c = make_variants(base, samples=[{"base_controller.kp_trans": (600.0, 600.0, 600.0)}])[0]
    d = make_variants(base, samples=[{"base_controller.kp_trans": [600, 600, 601]}])[0]
    assert a.id == b.id  # int vs float, list vs array, key order
    assert len({a.id, c.id, d.id}) == 3
    assert len(a.id) == 16 and int(a.id, 16) >= 0
    # a fault list given with and without its default 'scale' is the same variant
    f1 = {"faults": [{"time": 1.0, "thruster": 3, "kind": "failed_off"}]}
    f2 = {"faults": [{"time": 1.0, "thruster": 3, "kind": "failed_off", "scale": 1.0}]}
    assert make_variants(base, samples=[f1])[0].id == make_variants(base, samples=[f2])[0].id


def test_overrides_mean_what_set_means(base, tmp_path):
    ov = {
        "base_controller.kp_trans": [1000, 1100, 1200],
        "thrusters.allocator": "cvxpy",
        "vscmg.enabled": False,
        "scenario.seed": 4,
    }
    sc, canon = scenario_with(base, ov)
    sets = BASE + [f"{k}={_toml(v)}" for k, v in ov.items() if k != "thrusters.allocator"]
    ref = load_scenario("station-keeping", sets + ["thrusters.allocator=cvxpy"])
    assert sc.config == ref.config
    assert canon["base_controller.kp_trans"] == [1000.0, 1100.0, 1200.0]
    # the fault list is replaced as a whole; faults[0].time addresses its entry
    f = {"time": 1.5, "thruster": 2, "kind": "degraded", "scale": 0.5}
    sc2, _ = scenario_with(base, {"faults": [f]})
    sc3, _ = scenario_with(sc2, {"faults[0].time": 0.5})
    assert sc2.config["faults"] == [f]
    assert sc3.config["faults"] == [{**f, "time": 0.5}]


# ------------------------------------------------------- runs on the cluster


def test_sweep_on_two_workers_equals_serial_runs_exactly(client, tmp_path):
    base = load_scenario("station-keeping", NOISY)

    def base_x_final(res):
        return float(res["base_pos_err"][-1, 0])

    grid = {
        "base_controller.kp_trans": [[600, 600, 600], [2000, 2000, 2000]],
        "scenario.seed": [0, 1],
    }
    df = sweep(
        base, grid, metrics=[*METRICS, base_x_final], scheduler=client, out=tmp_path, progress=False
    )
    assert len(df) == 4 and df["error"].isna().all() and not df["cached"].any()
    for (kp, seed), (_, row) in zip(
        [(kp, s) for kp in grid["base_controller.kp_trans"] for s in grid["scenario.seed"]],
        df.iterrows(),
        strict=True,
    ):
        assert row["base_controller.kp_trans"] == tuple(float(k) for k in kp)
        assert row["scenario.seed"] == seed
        ref = run(
            load_scenario(
                "station-keeping",
                NOISY + [f"base_controller.kp_trans={_toml(kp)}", f"scenario.seed={seed}"],
            ),
            progress=False,
        )
        expected = summarize(ref)
        for name in METRICS:
            assert row[name] == expected[name], (kp, seed, name)  # bit-identical
        assert row["base_x_final"] == ref["base_pos_err"][-1, 0]
        assert row["run_time"] > 0
    # the seeds really differ (noise) and the variants ran on both worker processes
    assert df["base_pos_err_max"].nunique() == 4
    workers = {
        json.loads((tmp_path / "variants" / v / "metrics.json").read_text())["worker"]
        for v in df["variant"]
    }
    assert len(workers) == 2
    # the CSV and load_sweep give the same table back
    back = load_sweep(tmp_path).set_index("variant").loc[df["variant"]]
    for name in METRICS:
        assert np.array_equal(back[name].to_numpy(), df[name].to_numpy())
    csv = pd.read_csv(tmp_path / "metrics.csv")
    assert list(csv["variant"]) == list(df["variant"])
    assert np.array_equal(csv["ee_rms"].to_numpy(), df["ee_rms"].to_numpy())


def test_a_restarted_sweep_runs_only_what_is_missing(client, tmp_path, capsys):
    counter = tmp_path / "count.txt"
    runs = _counting_metric(counter)
    samples = [{"arm_controller.omega_n": w} for w in (10.0, 15.0, 20.0)]
    out = tmp_path / "sw"
    first = sweep(_base(), samples=samples, metrics=["ee_rms", runs], out=out, scheduler=client)
    assert _count(counter) == 3
    files = [out / "variants" / v / "metrics.json" for v in first["variant"]]
    stamps = [p.stat().st_mtime_ns for p in files]
    capsys.readouterr()
    again = sweep(_base(), samples=samples, metrics=["ee_rms", runs], out=out, scheduler=client)
    assert _count(counter) == 3  # nothing ran
    assert again["cached"].all() and again.attrs["sweep"]["n_run"] == 0
    assert [p.stat().st_mtime_ns for p in files] == stamps
    assert again["ee_rms"].tolist() == first["ee_rms"].tolist()
    assert "3/3 variants (3 stored, 0 failed)" in capsys.readouterr().err  # progress shown
    # an interrupted sweep: one variant never stored, plus one new variant
    files[1].unlink()
    more = sweep(
        _base(),
        samples=[*samples, {"arm_controller.omega_n": 25.0}],
        metrics=["ee_rms", runs],
        out=out,
        scheduler=client,
        progress=False,
    )
    assert _count(counter) == 5
    assert more["cached"].tolist() == [True, False, True, False]
    assert more["ee_rms"].iloc[1] == first["ee_rms"].iloc[1]

    # a metric the stored variants lack makes them run again
    def ee_final(res):
        return float(np.linalg.norm(res["ee_err"][-1]))

    extra = sweep(_base(), samples=samples, metrics=["ee_rms", ee_final], out=out, scheduler=client)
    assert not extra["cached"].any() and extra["ee_final"].notna().all()


def test_a_failing_variant_is_recorded_and_the_others_complete(client, tmp_path):
    samples = [
        {"arm_controller.omega_n": 15.0},
        {"trajectory.center": [3.0, 0.0, 0.7]},  # unreachable: the run raises
        {"arm_controller.omega_n": 25.0},
    ]
    out = tmp_path / "sw"
    df = sweep(_base(), samples=samples, out=out, scheduler=client, progress=False)
    assert df["error"].isna().tolist() == [True, False, True]
    err = df.loc[1, "error"]  # an unreachable start pose: bad input, naming its file and key
    assert err.startswith("ScenarioError: ") and "not reachable" in err
    assert df.loc[1, list(METRICS)].isna().all()
    assert df.loc[[0, 2], list(METRICS)].notna().all().all()
    assert df.attrs["sweep"]["n_failed"] == 1
    stored = out / "variants" / df.loc[1, "variant"] / "metrics.json"
    rec = json.loads(stored.read_text())
    assert "not reachable" in rec["error"] and "Traceback" in rec["traceback"]
    stamp = stored.stat().st_mtime_ns
    # a restart reports the stored failure without running it; retry_failed runs it again
    again = sweep(_base(), samples=samples, out=out, scheduler=client, progress=False)
    assert again["cached"].all() and again.loc[1, "error"] == df.loc[1, "error"]
    assert stored.stat().st_mtime_ns == stamp
    retry = sweep(
        _base(), samples=samples, out=out, scheduler=client, retry_failed=True, progress=False
    )
    assert retry["cached"].tolist() == [True, False, True]
    assert stored.stat().st_mtime_ns != stamp


def _exit_on_25(res):
    """A metric whose worker process dies (as one killed for its memory would) for the
    variant with ``arm_controller.omega_n = 25``."""
    import os

    if res.manifest["scenario"]["arm_controller"]["omega_n"] == 25.0:
        os._exit(3)
    return 0.0


def test_a_run_whose_worker_dies_is_reported_not_stored_and_run_again(tmp_path):
    """The cluster's failure is not the run's: the campaign goes on, reports it, and does
    not store it, so the next call runs it again."""
    from dask import config as dask_config

    from dqspace.scenarios.campaigns.sweep import connect

    samples = [{"arm_controller.omega_n": 15.0}, {"arm_controller.omega_n": 25.0}]
    out = tmp_path / "sw"
    # the scheduler (started by connect) gives up on a task at its first dead worker
    with dask_config.set({"distributed.scheduler.allowed-failures": 0}), connect(None, 1) as c:
        df = sweep(
            _base(), samples=samples, metrics=["ee_rms", _exit_on_25], out=out, scheduler=c,
            progress=False,
        )  # fmt: skip
    assert df.loc[0, "error"] is None or pd.isna(df.loc[0, "error"])
    assert df.loc[1, "error"].startswith("KilledWorker")
    assert df.loc[0, "ee_rms"] > 0 and math.isnan(df.loc[1, "ee_rms"])
    stored = {p.parent.name for p in (out / "variants").glob("*/metrics.json")}
    assert stored == {df.loc[0, "variant"]}


def test_a_failing_metric_is_recorded_and_the_others_kept(tmp_path):
    def broken(res):
        raise ZeroDivisionError("no")

    df = sweep(
        _base(),
        samples=[{}],
        metrics=["ee_rms", broken],
        scheduler="synchronous",
        progress=False,
    )
    assert df.loc[0, "error"] == "metric 'broken': ZeroDivisionError: no"
    assert math.isnan(df.loc[0, "broken"]) and df.loc[0, "ee_rms"] > 0


def test_kept_results_equal_a_direct_run(client, tmp_path):
    df = sweep(
        _base(),
        samples=[{"base_controller.kd_rot": [80, 80, 80]}],
        out=tmp_path,
        scheduler=client,
        keep_results=True,
        progress=False,
    )
    kept = Results.load(tmp_path / "variants" / df.loc[0, "variant"] / "result")
    ref = run(
        load_scenario("station-keeping", BASE + ["base_controller.kd_rot=[80, 80, 80]"]),
        progress=False,
    )
    assert kept.status == "complete"
    for k in ref.data:
        assert np.array_equal(kept[k], ref[k], equal_nan=True), k


# ------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        (dict(grid={"scenario.seed": [0]}, samples=[{}]), "exactly one of grid"),
        (dict(), "exactly one of grid"),
        (dict(grid={"scenario.seed": 3}), "'scenario.seed' must map to a non-empty list"),
        (dict(grid={"scenario.seed": []}), "'scenario.seed' must map to a non-empty list"),
        (dict(grid={}), "grid: must be a non-empty mapping"),
        (dict(samples=[]), "samples: is empty"),
        (dict(grid={"base_controller.kp_tran": [[1, 1, 1]]}), "base_controller.kp_tran: unknown"),
        (dict(grid={"scenario.duration": [1.0, -2.0]}), "variant 1: scenario.duration = -2.0"),
        (dict(grid={"base_controller.kp_rot": [5.0]}), "base_controller.kp_rot must be a list"),
        (dict(samples=[{"scenario.seed": 1}, {"scenario.seed": 1}]), "repeats variant 0"),
        (dict(samples=[{"faults": {"time": 1}}]), "faults must be a list of tables"),
        (dict(samples=[{}], metrics=["ee_rmss"]), "unknown metric 'ee_rmss'"),
        (dict(samples=[{}], metrics=[lambda r: 0.0]), "no usable name '<lambda>'"),
        (dict(samples=[{}], metrics=["ee_rms", "ee_rms"]), "'ee_rms' requested twice"),
        (dict(samples=[{}], workers=0), "workers must be >= 1, got 0"),
        (dict(samples=[{}], workers=2.5), "workers must be a positive integer"),
        (dict(samples=[{}], workers=2, scheduler="tcp://127.0.0.1:1"), "local cluster only"),
        (dict(samples=[{}], scheduler="localhost"), "expected an address"),
        (dict(samples=[{}], keep_results=True), "keep_results=True needs an out"),
    ],
)
def test_bad_sweep_arguments_raise_naming_the_culprit(base, kwargs, needle):
    if "workers" not in kwargs:
        kwargs.setdefault("scheduler", "synchronous")
    with pytest.raises(ValueError) as exc:
        sweep(base, progress=False, **kwargs)
    assert needle in str(exc.value)


def test_a_metric_that_cannot_reach_the_workers_is_refused_before_any_run(tmp_path):
    lock = threading.Lock()

    def locked(res):
        with lock:
            return 1.0

    with pytest.raises(ValueError, match="metrics: 'locked' cannot be sent to the workers"):
        sweep(_base(), samples=[{}], metrics=[locked], out=tmp_path, workers=1)
    assert not (tmp_path / "variants").exists()


def test_grid_and_samples_files_with_faults(tmp_path):
    g = tmp_path / "g.toml"
    g.write_text(
        'faults = [[], [{time = 2.0, thruster = 0, kind = "failed_off"}]]\n'
        "[scenario]\nseed = [0, 1]\n"
    )
    assert grid_product(load_grid_file(g)) == [
        {"faults": [], "scenario.seed": 0},
        {"faults": [], "scenario.seed": 1},
        {"faults": [{"time": 2.0, "thruster": 0, "kind": "failed_off"}], "scenario.seed": 0},
        {"faults": [{"time": 2.0, "thruster": 0, "kind": "failed_off"}], "scenario.seed": 1},
    ]
    s = tmp_path / "s.toml"
    s.write_text(
        "[[samples]]\nbase_controller.kp_rot = [20, 20, 20]\n"
        '[[samples]]\nfaults = [{time = 1.0, thruster = 5, kind = "degraded", scale = 0.5}]\n'
    )
    samples = load_samples_file(s)
    assert samples == [
        {"base_controller.kp_rot": [20, 20, 20]},
        {"faults": [{"time": 1.0, "thruster": 5, "kind": "degraded", "scale": 0.5}]},
    ]
    v = make_variants(_base(), samples=samples)
    assert v[1].scenario.config["faults"][0]["thruster"] == 5


def test_standard_metrics_need_a_closed_loop_scenario():
    ol = load_scenario("dynamics-check", ["scenario.duration=0.1"])
    with pytest.raises(ValueError, match="'ee_rms' needs a closed-loop scenario"):
        sweep(ol, samples=[{}], metrics=["ee_rms"], scheduler="synchronous")
    with pytest.raises(ValueError, match="open-loop scenario has no standard metrics"):
        sweep(ol, samples=[{}], scheduler="synchronous")


def test_an_out_directory_of_another_base_scenario_is_refused(tmp_path):
    sweep(_base(), samples=[{}], out=tmp_path, scheduler="synchronous", progress=False)
    other = load_scenario("station-keeping", BASE + ["base_controller.kd_rot=[1, 1, 1]"])
    with pytest.raises(ValueError, match=r"different base scenario \(differs at base_controller"):
        sweep(other, samples=[{}], out=tmp_path, scheduler="synchronous")


# ------------------------------------------------------------------- CLI


def test_cli_sweep_with_a_toml_grid_and_json_samples(client, tmp_path, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text(  # a quoted dotted key and a table: both forms
        '"scenario.seed" = [0, 1]\n'
        "[base_controller]\nkp_trans = [[600, 600, 600], [2000, 2000, 2000]]\n"
    )
    assert load_grid_file(grid) == {
        "base_controller.kp_trans": [[600, 600, 600], [2000, 2000, 2000]],
        "scenario.seed": [0, 1],
    }
    out = tmp_path / "out"
    argv = ["sweep", "station-keeping", "--grid", str(grid), "--out", str(out)]
    argv += ["--set", "scenario.duration=2", "--scheduler", client.scheduler.address, "--quiet"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "4 variants: 4 run, 0 already stored, 0 failed" in text
    csv = pd.read_csv(out / "metrics.csv")
    assert len(csv) == 4 and set(METRICS) <= set(csv.columns)
    # the same sweep again: nothing runs
    assert main(argv) == 0
    assert "4 variants: 0 run, 4 already stored, 0 failed" in capsys.readouterr().out
    # JSON samples, one failing: exit 1, the table still written
    samples = tmp_path / "s.json"
    samples.write_text(json.dumps([{"trajectory.center": [3, 0, 0.7]}, {"scenario": {"seed": 2}}]))
    argv = ["sweep", "station-keeping", "--samples", str(samples), "--out", str(tmp_path / "o2")]
    argv += ["--set", "scenario.duration=2", "--scheduler", "synchronous", "--quiet"]
    argv += ["--metrics", "ee_rms,total_impulse"]
    assert main(argv) == 1
    text = capsys.readouterr().out
    assert "not reachable" in text and "2 variants: 2 run, 0 already stored, 1 failed" in text
    csv = pd.read_csv(tmp_path / "o2" / "metrics.csv")
    assert list(csv.columns[-5:]) == ["ee_rms", "total_impulse", "run_time", "error", "cached"]


@pytest.mark.parametrize(
    "name, body, flag, needle",
    [
        ("missing.toml", None, "--grid", "no such grid file"),
        ("g.toml", "[scenario\nseed = [0]", "--grid", "invalid TOML"),
        ("g.json", '{"scenario.seed": [0,', "--grid", "invalid JSON"),
        ("g.yaml", "scenario.seed: [0]", "--grid", "unknown grid file type '.yaml'"),
        ("g.toml", "[scenario]\nseed = 3\n", "--grid", "'scenario.seed' must map to a non-empty"),
        ("g.json", '{"seed": [0, 1]}', "--grid", "key 'seed' must be section.key"),
        ("g.json", "[1, 2]", "--grid", "a grid file must map section.key"),
        ("g.toml", "[scenario]\nsede = [0, 1]\n", "--grid", "scenario.sede: unknown key"),
        ("s.json", '{"scenario.seed": 1}', "--samples", "one array of tables 'samples'"),
        ("s.toml", "samples = 3\n", "--samples", "must be a non-empty list of override tables"),
    ],
)
def test_cli_bad_grid_files_give_one_line_and_exit_2(tmp_path, capsys, name, body, flag, needle):
    path = tmp_path / name
    if body is not None:
        path.write_text(body)
    argv = ["sweep", "station-keeping", flag, str(path), "--out", str(tmp_path / "o")]
    argv += ["--scheduler", "synchronous", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dqspace: error: ")
    assert needle in err[0] and name in err[0]
    assert not (tmp_path / "o" / "variants").exists()  # nothing ran


def test_cli_sweep_help_exits_zero(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["sweep", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "usage: dqspace sweep" in out and "--scheduler ADDR" in out


def test_cli_sweep_bad_options_exit_2(capsys, tmp_path):
    grid = tmp_path / "g.json"
    grid.write_text('{"scenario.seed": [0]}')
    assert main(["sweep", "station-keeping", "--grid", str(grid), "--workers", "0"]) == 2
    assert "workers must be >= 1, got 0" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # argparse: exactly one of --grid / --samples
        main(["sweep", "station-keeping"])
    assert exc.value.code == 2


def test_an_interrupted_sweep_keeps_what_completed(tmp_path):
    samples = [{"arm_controller.omega_n": w} for w in (10.0, 15.0, 20.0)]

    def ctrl_c_at_15(res):
        if res.manifest["scenario"]["arm_controller"]["omega_n"] == 15.0:
            raise KeyboardInterrupt
        return 1.0

    with pytest.raises(KeyboardInterrupt):
        sweep(
            _base(),
            samples=samples,
            metrics={"m": ctrl_c_at_15},
            out=tmp_path,
            scheduler="synchronous",
            progress=False,
        )
    stored = sorted(p.parent.name for p in (tmp_path / "variants").glob("*/metrics.json"))
    ids = [v.id for v in make_variants(_base(), samples=samples)]
    assert stored == [ids[0]]

    def one(res):
        return 1.0

    df = sweep(
        _base(),
        samples=samples,
        metrics={"m": one},
        out=tmp_path,
        scheduler="synchronous",
        progress=False,
    )
    assert df["cached"].tolist() == [True, False, False]


def test_the_local_cluster_workers_run_without_the_profiler():
    """The cluster a campaign starts runs its workers with LOCAL_CLUSTER_CONFIG (no
    statistical profiler, slower monitors); the caller's Dask configuration is left as it
    was."""
    import dask

    from dqspace.scenarios.campaigns.sweep import LOCAL_CLUSTER_CONFIG, connect

    before = dask.config.get("distributed.worker.profile.enabled")
    with connect(workers=1) as client:
        got = client.run(lambda: {k: dask.config.get(k) for k in LOCAL_CLUSTER_CONFIG})
    (worker,) = got.values()
    assert worker == LOCAL_CLUSTER_CONFIG
    assert dask.config.get("distributed.worker.profile.enabled") == before
