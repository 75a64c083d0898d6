"""A damaged directory someone sent you is one clear error naming the file, never
"unexpected" (issue 25).  For each kind of received directory (a run's result, a sweep, a
Monte Carlo campaign, a tuning) and each kind of damage (a file of the wrong top-level
type, a missing key, a value of the wrong type, nesting 100000 deep, garbage bytes, a
truncated file, sample times that are not finite or not increasing, a series of the wrong
length), every reader: ``dqspace plot``, ``dqspace report``, ``dqspace animate`` where it
applies, and the Python loaders."""

import hashlib
import json
import os
import shutil
import threading

import numpy as np
import pytest

from dqspace.scenarios import Results, load_scenario, run
from dqspace.scenarios.campaigns.montecarlo import load_envelope_series, montecarlo, read_summary
from dqspace.scenarios.campaigns.sweep import sweep
from dqspace.scenarios.cli import main
from dqspace.scenarios.figures.animate import animation_figure
from dqspace.scenarios.figures.campaign_plots import plot_montecarlo
from dqspace.scenarios.figures.campaign_tuning import plot_tuning, read_tuning
from dqspace.scenarios.figures.plots import figures
from dqspace.scenarios.figures.report import build_report
from dqspace.scenarios.store.received import ResultError
from dqspace.scenarios.store.sweep_store import load_sweep, read_sweep_manifest

SHORT = ["scenario.duration=0.2", "outputs.plots=false"]
DEEP = "[" * 100_000 + "]" * 100_000
GARBAGE = bytes(range(256)) * 8


def tuning_doc():
    """A ``tuning.json`` of two candidates, as ``dqspace tune`` writes it."""

    def constraint(metric, source, margin):
        return {"metric": metric, "op": "<=", "limit": 0.001, "percentile": 99.0,
                "confidence": 0.95, "source": source, "estimate": 1e-5, "bound": None,
                "value": 1e-5, "judged_on": "sample", "status": "MET", "margin": margin,
                "reason": "within the limit"}  # fmt: skip

    def candidate(i):
        return {"number": i, "trial": i, "params": {"base_controller.kp_trans": 500.0 + i},
                "overrides": {"base_controller.kp_trans": [500.0 + i] * 3},
                "objective": 0.01 * (i + 1),
                "constraints": [constraint("base_pos_err_max", "requirement", -0.9),
                                constraint("failed_runs", "implicit", 0.0)],
                "feasible": True, "violation": 0.0, "n_runs": 3, "n_failed": 0,
                "runs_run": 3, "runs_reused": 0, "wall_time": 1.0, "directory": None}  # fmt: skip

    return {"settings": {"objective": {"metric": "total_impulse", "stat": "P50"}, "n": 3,
                         "seed": 0},
            "scenario": "station-keeping", "budget": 2, "feasible": True, "best": 0,
            "closest": 0, "notes": [], "candidates": [candidate(0), candidate(1)]}  # fmt: skip


@pytest.fixture(scope="module")
def received(tmp_path_factory):
    """One directory of each kind, as a run, a sweep, a campaign and a tuning write them."""
    root = tmp_path_factory.mktemp("received")
    sc = load_scenario("station-keeping", SHORT)
    run(sc, out=root / "run", progress=False)
    samples = [{"base_controller.kp_trans": [500.0] * 3}, {"base_controller.kp_trans": [800.0] * 3}]
    sweep(sc, samples=samples, out=root / "sweep", scheduler="synchronous", progress=False)
    montecarlo(sc, 3, seed=1, out=root / "mc", scheduler="synchronous", progress=False)
    (root / "tune").mkdir()
    (root / "tune" / "tuning.json").write_text(json.dumps(tuning_doc()))
    return root


# ------------------------------------------------------------------ damages


def _edit(path, change):
    doc = json.loads(path.read_text())
    path.write_text(json.dumps(change(doc) or doc))


def _set(*keys, value):
    """A change of a JSON document: ``doc[k0][k1]... = value``."""

    def change(doc):
        d = doc
        for k in keys[:-1]:
            d = d[k]
        d[keys[-1]] = value

    return change


def _drop(*keys):
    def change(doc):
        d = doc
        for k in keys[:-1]:
            d = d[k]
        del d[keys[-1]]

    return change


def _deep_inside(path):
    doc = json.loads(path.read_text())
    doc["padding"] = "@@"
    path.write_text(json.dumps(doc).replace('"@@"', DEEP))


def _json_damages(required, wrong):
    """The damages of a JSON file: ``required`` a key path it needs, ``wrong`` a change
    giving a value of the wrong type."""
    return {
        "wrong top-level type": lambda p: p.write_text("[1, 2, 3]"),
        "missing key": lambda p: _edit(p, _drop(*required)),
        "wrong value type": lambda p: _edit(p, wrong),
        "deep nesting": lambda p: p.write_text(DEEP),
        "deep nesting inside": _deep_inside,
        "garbage bytes": lambda p: p.write_bytes(GARBAGE),
        "truncated": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    }


def _rewrite_npz(path, change):
    """Rewrite an archive's arrays with ``change``; a result's manifest records the new
    file (a consistent pair: what is damaged is what is read)."""
    with np.load(path) as z:
        data = {k: z[k] for k in z.files}
    data = change(data) or data
    np.savez(path, **data)
    _record(path)


def _record(npz):
    manifest = npz.parent / "manifest.json"
    if npz.name == "result.npz":
        raw = npz.read_bytes()
        digest = hashlib.sha256(raw).hexdigest()
        _edit(manifest, lambda m: m["data"].update(bytes=len(raw), sha256=digest))


def _set_t(i, value=None):
    """Sample i of ``t`` set to ``value`` (None: before the sample before it)."""

    def change(d):
        t = d["t"].copy()
        t[i] = value if value is not None else t[i - 1] - 1.0
        d["t"] = t

    return change


def _shorter(name):
    def change(d):
        d[name] = d[name][:-1]

    return change


def _narrower(name, extra=-1):
    """A result whose series ``name`` has ``extra`` values per sample more than the system
    it recorded, its manifest saying so (a consistent pair: the figures index it)."""

    def damage(path):
        def change(d):
            a = d[name]
            d[name] = np.zeros((a.shape[0], a.shape[1] + extra), a.dtype)

        _rewrite_npz(path, change)
        width = np.load(path)[name].shape[1]
        _edit(path.parent / "manifest.json", _set("series", name, "shape", value=[width]))

    return damage


def _npz_damages(series):
    return {
        "garbage bytes": lambda p: (p.write_bytes(GARBAGE), _record(p)),
        "truncated": lambda p: (p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]), _record(p)),
        "non-finite t": lambda p: _rewrite_npz(p, _set_t(3, np.nan)),
        "infinite t": lambda p: _rewrite_npz(p, _set_t(-1, np.inf)),
        "decreasing t": lambda p: _rewrite_npz(p, _set_t(5)),
        "wrong-length series": lambda p: _rewrite_npz(p, _shorter(series)),
        "Python objects": lambda p: _rewrite_npz(
            p, lambda d: d.update({series: np.array([{}] * len(d["t"]), dtype=object)})
        ),
    }


#: kind of directory -> file -> damage -> what it does to the file
CASES = {
    "run": {
        "manifest.json": {
            **_json_damages(("n_samples",), _set("events", value="boom")),
            "wrong value type in the scenario": lambda p: _edit(
                p, _set("scenario", "scenario", "duration", value="long")
            ),
            "wrong value type in the metrics": lambda p: _edit(p, _set("metrics", value=[1, 2])),
            "unknown status": lambda p: _edit(p, _set("status", value=7)),
            "wrong value type in an event": lambda p: _edit(
                p, _set("events", value=[{"t": "soon", "event": "x"}])
            ),
            "wrong value type in the system": lambda p: _edit(p, _set("system", value="x")),
            "wrong value type in the degradations": lambda p: _edit(
                p, _set("degradations", value=[{"kind": "k", "intervals": [[0.0, [1]]]}])
            ),
            "a scenario section that is not a table": lambda p: _edit(
                p, _set("scenario", "extra", value=5)
            ),
        },
        "result.npz": {
            **_npz_damages("base_pos_err"),
            "a series narrower than its system": _narrower("ee_pos"),
            "a series wider than its system": _narrower("thrust_cmd", extra=1),
        },
    },
    "mc": {
        "montecarlo.json": {
            **_json_damages(("requirements",), _set("n", value="three")),
            "wrong value type in a requirement": lambda p: _edit(
                p, _set("requirements", 0, "metric", value=5)
            ),
            "unknown metric in a requirement": lambda p: _edit(
                p, _set("requirements", 0, "metric", value="no_such_metric")
            ),
            "missing key in a requirement": lambda p: _edit(p, _drop("requirements", 0, "reason")),
            "wrong value type in the percentiles": lambda p: _edit(
                p, _set("percentiles", value=[1])
            ),
            "wrong value type in the sensitivity": lambda p: _edit(
                p, _set("sensitivity", "metrics", value=3)
            ),
        },
        "series.npz": {
            **_npz_damages("ee_max"),
            "no t": lambda p: _rewrite_npz(p, lambda d: {"x": d["ee_max"]}),
            "a 2-D series": lambda p: _rewrite_npz(p, _set("ee_max", value=np.zeros((200, 2)))),
        },
    },
    "sweep": {
        "sweep.json": {
            **_json_damages(("format",), _set("base", value=5)),
            "wrong value type in the base scenario": lambda p: _edit(
                p, _set("base", "scenario", "duration", value="long")
            ),
        },
    },
    "tune": {
        "tuning.json": {
            **_json_damages(("candidates",), _set("candidates", 0, "constraints", value=5)),
            "unknown objective metric": lambda p: _edit(
                p, _set("settings", "objective", "metric", value="nope")
            ),
            "best not a candidate": lambda p: _edit(p, _set("best", value=99)),
        },
    },
}
#: the read commands of each kind of directory
COMMANDS = {
    "run": (["plot"], ["report"], ["animate", "--frames", "3"]),
    "mc": (["plot"], ["report"]),
    "sweep": (["plot"], ["report"]),
    "tune": (["report"],),
}
#: the Python loaders of each file
LOADERS = {
    "manifest.json": (Results.load,),
    "result.npz": (Results.load,),
    "montecarlo.json": (read_summary, plot_montecarlo),
    "series.npz": (load_envelope_series, plot_montecarlo),
    "sweep.json": (load_sweep, read_sweep_manifest),
    "tuning.json": (read_tuning, plot_tuning),
}
PARAMS = [
    pytest.param((kind, file, damage), id=f"{kind}-{file}-{damage}")
    for kind, files in CASES.items()
    for file, damages in files.items()
    for damage in damages
]


def _target(d, file):
    if file == "series.npz":
        return sorted((d / "variants").glob("*/series.npz"))[0]
    return d / file


@pytest.fixture
def damaged(received, tmp_path, request):
    kind, file, damage = request.param
    d = tmp_path / kind
    shutil.copytree(received / kind, d)
    path = _target(d, file)
    CASES[kind][file][damage](path)
    return kind, d, path, damage


@pytest.mark.parametrize("damaged", PARAMS, indirect=True)
def test_every_read_command_names_the_damaged_file_and_exits_2(damaged, capsys, tmp_path):
    kind, d, path, _ = damaged
    for command in COMMANDS[kind]:
        out = tmp_path / f"out-{command[0]}"
        suffix = {"animate": "animation.html", "report": "report.html"}.get(command[0])
        argv = [command[0], str(d), *command[1:], "--out", str(out / suffix if suffix else out)]
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2, (argv, err)
        assert str(path) in err, (argv, err)
        assert "unexpected" not in err and "Traceback" not in err, err
        assert not out.exists() or not any(out.iterdir()), "nothing is written from damage"


def _drawn(draw):
    """A reader of a result that draws it (the loader itself cannot know the shapes its
    recorded system gives the series: the figures and the animation check them)."""

    def read(d):
        return draw(Results.load(d))

    read.__name__ = draw.__name__
    return read


#: the readers of a result whose series do not fit its recorded system
DRAWN = (_drawn(figures), _drawn(build_report), _drawn(animation_figure))


@pytest.mark.parametrize("damaged", PARAMS, indirect=True)
def test_every_python_loader_raises_a_result_error_naming_the_file(damaged, tmp_path):
    kind, d, path, damage = damaged
    loaders = LOADERS[path.name]
    if "than its system" in damage:
        loaders = DRAWN
    for load in loaders:
        args = (d, ("png",), tmp_path / "figures") if load is plot_montecarlo else (d,)
        if load is plot_tuning:
            args = (d, ("png",))
        with pytest.raises(ResultError) as exc:
            load(*args)
        assert str(path) in str(exc.value), (load.__name__, str(exc.value))


RECORD_DAMAGES = _json_damages(("id",), _set("metrics", value="fast"))


@pytest.mark.parametrize("damage", RECORD_DAMAGES)
@pytest.mark.parametrize("kind", ["sweep", "mc"])
def test_a_damaged_variant_record_is_left_out_with_a_warning_naming_it(
    received, tmp_path, capsys, kind, damage
):
    """A campaign's variant records are many: a damaged one is left out of the figures and
    named in a warning (its variant runs again when the campaign is resumed)."""
    d = tmp_path / kind
    shutil.copytree(received / kind, d)
    path = sorted((d / "variants").glob("*/metrics.json"))[0]
    RECORD_DAMAGES[damage](path)
    code = main(["plot", str(d), "--formats", "png", "--out", str(tmp_path / "figures")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert str(path) in err and "damaged" in err
    assert "unexpected" not in err and "Traceback" not in err
    df = load_sweep(d)
    assert len(df) == len(list((d / "variants").iterdir())) - 1
    assert [str(path)] == [e.split(": ")[0] for e in df.attrs["damaged"]]


def test_names_from_a_received_result_are_drawn_as_written(received, tmp_path, capsys):
    """A ``$`` in an event, a thruster's name or a run's message was parsed as TeX by
    matplotlib: ``$\\frac{$`` failed every figure with a bare ``\\frac{``."""
    d = tmp_path / "run"
    shutil.copytree(received / "run", d)
    tex = "$\\frac{$"

    def hostile(m):
        m.update(status="failed", message=tex, degraded=[tex])
        m["events"] = [{"t": 0.1, "event": tex}]
        m["system"]["thrusters"][0]["name"] = tex

    _edit(d / "manifest.json", hostile)
    assert main(["plot", str(d), "--formats", "png"]) == 0, capsys.readouterr().err
    assert main(["report", str(d)]) == 0, capsys.readouterr().err
    assert tex in (d / "report.html").read_text()


def _checkpoint(received, d, rows_of=None):
    """``d`` holding only the checkpoint of a run killed (``.partial/``), made of the
    received run's series (``rows_of`` may change them first)."""
    src = received / "run"
    m = json.loads((src / "manifest.json").read_text())
    with np.load(src / "result.npz") as z:
        data = {k: z[k] for k in z.files}
    if rows_of is not None:
        rows_of(data)
    rowtype = np.dtype([(k, a.dtype, a.shape[1:]) for k, a in data.items()])
    table = np.zeros(len(data["t"]), rowtype)
    for k, a in data.items():
        table[k] = a
    del m["data"]
    m.update(status="running", n_samples=0)
    fields = [[k, a.dtype.str, list(a.shape[1:])] for k, a in data.items()]
    m["rows"] = {"file": "rows.bin", "commits": "commits.bin", "fields": fields}
    p = d / ".partial"
    p.mkdir(parents=True)
    (p / "manifest.json").write_text(json.dumps(m))
    table.tofile(p / "rows.bin")
    (p / "commits.bin").write_bytes(np.int64(len(table)).tobytes())
    return p


def _fifo(path):
    path.unlink()
    os.mkfifo(path)


CHECKPOINT_DAMAGES = {
    "non-finite t": (lambda p: None, "rows.bin", "is not finite"),
    "commits.bin a FIFO": (lambda p: _fifo(p / "commits.bin"), "commits.bin", "not a regular"),
    "rows.bin a FIFO": (lambda p: _fifo(p / "rows.bin"), "rows.bin", "not a regular file"),
    "a negative row count": (
        lambda p: (p / "commits.bin").write_bytes(np.int64(-5).tobytes()),
        "rows.bin",
        "",
    ),
    "Python objects in the rows": (
        lambda p: _edit(p / "manifest.json", _set("rows", "fields", 0, 1, value="|O")),
        "manifest.json",
        "not a series of numbers",
    ),
    "rows beyond the load limit": (
        lambda p: (
            (p / "commits.bin").write_bytes(np.int64(10**6).tobytes()),
            os.truncate(p / "rows.bin", 10**8),  # sparse
        ),
        "rows.bin",
        "load limit of 1 MiB",
    ),
}


@pytest.mark.parametrize("damage", CHECKPOINT_DAMAGES)
def test_a_damaged_checkpoint_is_one_error_naming_the_file(
    received, tmp_path, monkeypatch, capsys, damage
):
    """The checkpoint of a run that was killed is read like a result: within the limits,
    its files regular, its rows numbers, its times finite and increasing."""
    change, file, needle = CHECKPOINT_DAMAGES[damage]
    nan_t = damage == "non-finite t"
    p = _checkpoint(received, tmp_path / "r", _set_t(3, np.nan) if nan_t else None)
    change(p)
    monkeypatch.setenv("DQSPACE_MAX_LOAD_BYTES", "1M")
    box = {}

    def load():
        try:
            box["value"] = Results.load(tmp_path / "r")
        except Exception as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "reading the checkpoint hangs"
    exc = box.get("error")
    if damage == "a negative row count":  # no row committed: no result there
        assert isinstance(exc, ResultError) and "is not a dqspace result" in str(exc)
        return
    assert isinstance(exc, ResultError), box
    assert str(p / file) in str(exc) and needle in str(exc), str(exc)
    if "FIFO" not in damage:
        assert main(["plot", str(tmp_path / "r")]) == 2
        err = capsys.readouterr().err
        assert str(p / file) in err and "unexpected" not in err


def test_a_checkpoint_as_the_run_wrote_it_is_read(received, tmp_path):
    _checkpoint(received, tmp_path / "r")
    res = Results.load(tmp_path / "r")
    assert res.status == "interrupted" and len(res.t) == 21
    assert res.source == tmp_path / "r" / ".partial" / "rows.bin"
