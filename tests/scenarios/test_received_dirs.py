"""A directory someone sent you never harms you: links inside it are not followed and its
special files (a FIFO named like a result file, which blocked every reader forever) are not
read.  Each reader and writer of a result or campaign directory, on one member of the class
each: the output lock, a run's manifest and data, a sweep's records, a campaign's summary
and series, a tuning's summary; and nothing a received directory names is imported."""

import json
import os
import shutil
import sys
import threading

import pytest

from dqspace.scenarios import Results, load_scenario, run
from dqspace.scenarios.campaigns.montecarlo import load_envelope_series, montecarlo
from dqspace.scenarios.cli import main
from dqspace.scenarios.figures.campaign_tuning import read_tuning
from dqspace.scenarios.store.lock import OutputError
from dqspace.scenarios.store.results import ResultError
from dqspace.scenarios.store.storage import open_regular, read_regular

SHORT = ["scenario.duration=0.05", "outputs.plots=false"]


def _no_hang(fn, *args, timeout=30.0):
    """``fn(*args)`` in a thread: the exception it raised, or a failure if it hangs."""
    box = {}

    def target():
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), f"{fn.__name__} hangs on a special file"
    return box


def test_a_symlinked_lock_is_not_followed_and_its_target_survives(tmp_path, capsys):
    """`ln -s ../v d/.lock; dqspace run ... --out d` emptied v."""
    precious = tmp_path / "v"
    precious.write_text("precious")
    out = tmp_path / "d"
    out.mkdir()
    (out / ".lock").symlink_to(precious)
    code = main(["run", "station-keeping", *[a for s in SHORT for a in ("--set", s)],
                 "--out", str(out), "-q"])  # fmt: skip
    assert code != 0
    assert "not a regular file" in capsys.readouterr().err
    assert precious.read_text() == "precious"
    with pytest.raises(OutputError, match="not a regular file"):
        run(load_scenario("station-keeping", SHORT), out=out, progress=False)
    assert precious.read_text() == "precious"


def test_the_regular_file_readers_refuse_links_and_fifos(tmp_path):
    target = tmp_path / "t.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="symbolic link"):
        open_regular(link)
    box = _no_hang(read_regular, fifo, 100)
    assert isinstance(box.get("error"), OSError) and "not a regular file" in str(box["error"])
    with pytest.raises(OSError, match="more than"):
        read_regular(target, 1)
    assert read_regular(target, 100) == b"{}"


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    out = tmp_path_factory.mktemp("r") / "run"
    run(load_scenario("station-keeping", SHORT), out=out, progress=False)
    return out


@pytest.mark.parametrize("name", ["result.npz", "manifest.json"])
def test_a_result_whose_file_is_a_fifo_or_a_link_is_refused_not_waited_on(stored, tmp_path, name):
    for kind in ("fifo", "link"):
        copy = tmp_path / kind
        copy.mkdir()
        for f in stored.iterdir():
            if f.is_file():
                (copy / f.name).write_bytes(f.read_bytes())
        (copy / name).unlink()
        if kind == "fifo":
            os.mkfifo(copy / name)
        else:
            (copy / name).symlink_to(stored / name)
        box = _no_hang(Results.load, copy)
        assert isinstance(box.get("error"), (ResultError, OSError)), (kind, box)


def test_campaign_and_tuning_summaries_that_are_fifos_are_refused(tmp_path):
    sc = load_scenario("station-keeping", ["scenario.duration=0.2"])
    out = tmp_path / "mc"
    montecarlo(sc, 2, seed=1, out=out, scheduler="synchronous", progress=False)
    ids, series = load_envelope_series(out)
    assert len(series) == 2
    series_file = next((out / "variants").glob("*/series.npz"))
    series_file.unlink()
    os.mkfifo(series_file)
    box = _no_hang(load_envelope_series, out)
    assert "error" not in box and len(box["value"][1]) == 1  # the special file left out
    (tmp_path / "tune").mkdir()
    os.mkfifo(tmp_path / "tune" / "tuning.json")
    box = _no_hang(read_tuning, tmp_path / "tune")
    assert isinstance(box.get("error"), ValueError)
    doc = json.loads((out / "montecarlo.json").read_text())
    assert doc["n"] == 2


# a module that says when it is imported (its class would be the controller a scenario names)
_MARKER_MODULE = """
import pathlib
pathlib.Path({marker!r}).write_text("imported")


class Evil:
    def __init__(self, *args, **kwargs):
        pathlib.Path({marker!r}).write_text("constructed")
"""


def test_nothing_a_received_result_or_campaign_names_is_imported(
    stored, tmp_path, monkeypatch, capsys
):
    """`dqspace animate` rebuilt the system from a result's manifest and imported the
    controller module it named: animating a received result ran code.  Loading, plotting,
    reporting and animating read what the run recorded; the module a manifest names (on
    the import path, beside the result, or named by its file) is never imported, and the
    animation is still drawn."""
    marker = tmp_path / "imported"
    code = _MARKER_MODULE.format(marker=str(marker))
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "evil_ctrl.py").write_text(code)
    monkeypatch.syspath_prepend(str(lib))
    got = tmp_path / "got"
    shutil.copytree(stored, got)
    (got / "evil_ctrl.py").write_text(code)
    m = json.loads((got / "manifest.json").read_text())
    m["scenario"]["base_controller"]["law"] = "evil_ctrl:Evil"
    m["scenario"]["arm_controller"]["law"] = f"{got / 'evil_ctrl.py'}:Evil"
    m["scenario"]["arm"]["model"] = str(got / "evil_ctrl.py")
    m["system"]["scene"]["urdf"] = {"path": str(got / "evil_ctrl.py"), "sha256": ""}
    (got / "manifest.json").write_text(json.dumps(m))

    res = Results.load(got)
    assert res.manifest["scenario"]["base_controller"]["law"] == "evil_ctrl:Evil"
    assert main(["animate", str(got), "--frames", "5", "-q"]) == 0
    assert main(["plot", str(got), "--formats", "png", "-q"]) == 0
    assert main(["report", str(got), "-q"]) == 0
    err = capsys.readouterr().err
    assert "not valid XML" in err  # the file named as the arm's URDF: read as data, refused
    page = (got / "animation.html").read_text()
    assert "arm links" in page and "end effector" in page  # the arm drawn from the record

    sc = load_scenario("station-keeping", ["scenario.duration=0.05", "outputs.plots=false"])
    mc = tmp_path / "mc"
    montecarlo(sc, 2, seed=3, out=mc, scheduler="synchronous", progress=False)
    doc = json.loads((mc / "sweep.json").read_text())
    doc["base"]["base_controller"]["law"] = "evil_ctrl:Evil"
    (mc / "sweep.json").write_text(json.dumps(doc))
    assert main(["plot", str(mc), "--formats", "png", "-q"]) == 0
    assert main(["report", str(mc), "-q"]) == 0

    assert not marker.exists()
    assert "evil_ctrl" not in sys.modules
