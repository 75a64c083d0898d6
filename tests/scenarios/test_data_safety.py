"""Results are never mixed and never lost: a result is one unit, one writer at a time, the
previous complete result survives a run that does not complete, every kind of stop keeps
its partial result, damaged files give one clear error, sweeps likewise."""

import functools
import hashlib
import json
import logging
import os
import platform
import shutil
import signal
import socket
import threading
import time
import zipfile
from pathlib import Path

import _fault_helpers as fh
import numpy as np
import pytest

from dqspace.control.flight import python_stage
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.sim import closed_loop as closed_mod
from dqspace.scenarios.sim import open_loop as open_mod
from dqspace.scenarios.sim import runner as runner_mod
from dqspace.scenarios.sim.metrics import summarize
from dqspace.scenarios.sim.runner import RunFailed, RunInterrupted, RunTooLarge
from dqspace.scenarios.store import storage
from dqspace.scenarios.store.results import (
    OutputError,
    OutputLocked,
    ResultError,
    Results,
    ResultWriter,
    SeriesInfo,
)

PERIOD = 0.01  # [s] station-keeping control period (100 Hz): one recorded row per tick


def sample(n, seed=0, status="complete"):
    rng = np.random.default_rng(seed)
    data = {"t": np.arange(n) * 0.1, "x": rng.normal(size=(n, 3))}
    info = {"t": SeriesInfo("s"), "x": SeriesInfo("m", ("a", "b", "c"))}
    return Results(data, info, {"status": status, "seed": seed})


def assert_same(a, b):
    assert set(a.data) == set(b.data)
    for k in a.data:
        assert np.array_equal(a[k], b[k], equal_nan=True), k


def assert_consistent(res):
    """Every series as long as the manifest says, and the run's own duration recorded."""
    n = res.manifest["n_samples"]
    assert all(len(a) == n for a in res.data.values())
    assert np.all(np.diff(res.t) > 0) and res.t[-1] == res.manifest["t_end"]
    if res.status == "complete":
        T = res.manifest["scenario"]["scenario"]["duration"]
        assert n == round(T / PERIOD) + 1


def sk(*overrides):
    return load_scenario("station-keeping", list(overrides))


@pytest.fixture(scope="module")
def short():
    """A complete 0.3 s closed-loop result (in memory)."""
    return run(sk("scenario.duration=0.3"), progress=False)


def _no_simulation(*a, **k):
    raise AssertionError("simulated although the output directory is unusable")


# ------------------------------------------------------- one unit, one writer


def test_the_manifest_names_the_size_and_sha256_of_its_data_file(tmp_path):
    sample(20).save(tmp_path)
    m = json.loads((tmp_path / "manifest.json").read_text())
    raw = (tmp_path / "result.npz").read_bytes()
    assert m["data"] == {
        "file": "result.npz",
        "bytes": len(raw),
        "sha256": hashlib.sha256(raw).hexdigest(),
    }
    assert m["series"]["x"] == {
        "unit": "m",
        "columns": ["a", "b", "c"],
        "description": "",
        "dtype": "<f8",
        "shape": [3],
    }


def test_a_data_file_and_a_manifest_of_different_writes_are_never_returned_together(tmp_path):
    sample(20, 1).save(tmp_path / "a")
    sample(30, 2).save(tmp_path / "b")
    shutil.copy(tmp_path / "b" / "result.npz", tmp_path / "a" / "result.npz")
    with pytest.raises(ResultError, match=r"a/result\.npz: is not the file manifest\.json"):
        Results.load(tmp_path / "a")


def test_readers_racing_a_writer_never_get_a_mixed_pair(tmp_path):
    a, b = sample(50, 1), sample(80, 2)
    a.save(tmp_path)
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            (a if i % 2 else b).save(tmp_path)
            i += 1

    th = threading.Thread(target=writer)
    th.start()
    seen = set()
    try:
        for _ in range(400):
            r = Results.load(tmp_path)
            ref = a if len(r.t) == 50 else b
            assert r.manifest["seed"] == ref.manifest["seed"]
            assert_same(r, ref)
            seen.add(len(r.t))
            if len(seen) == 2:
                break
    finally:
        stop.set()
        th.join()
    assert seen == {50, 80}


def test_a_second_writer_is_refused_at_once_naming_the_holder(tmp_path, monkeypatch):
    with ResultWriter(tmp_path, "run of test"):
        with pytest.raises(OutputLocked) as exc:
            sample(5).save(tmp_path)
        msg = str(exc.value)
        assert f"pid {os.getpid()} on host {socket.gethostname()} since 20" in msg
        assert "(run of test)" in msg and isinstance(exc.value, ValueError)
        assert exc.value.holder["pid"] == os.getpid()
        monkeypatch.setattr(closed_mod, "build_system", _no_simulation)
        with pytest.raises(OutputLocked, match="in use by another writer"):
            run(sk("scenario.duration=0.2"), out=tmp_path, progress=False)
    sample(5).save(tmp_path)  # released
    assert Results.load(tmp_path).manifest["n_samples"] == 5


def test_an_unusable_output_directory_is_refused_before_simulating(tmp_path, monkeypatch):
    monkeypatch.setattr(closed_mod, "build_system", _no_simulation)
    sc = sk("scenario.duration=0.2")
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(OutputError, match="file: exists and is not a directory"):
        run(sc, out=f, progress=False)
    with pytest.raises(OutputError, match="cannot be created: a parent is a file"):
        run(sc, out=f / "sub", progress=False)

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(storage.tempfile, "mkstemp", denied)  # a read-only directory
    with pytest.raises(OutputError, match="ro: is not writable"):
        run(sc, out=tmp_path / "ro", progress=False)


@pytest.mark.parametrize(
    "dies_before",
    [("result.npz", ".commit"), ("manifest.json", ".commit"), ("previous", ".previous.new")],
    ids=lambda d: f"renaming {d[0]}",
)
def test_a_writer_killed_in_the_middle_of_a_commit_loses_nothing(
    tmp_path, monkeypatch, dies_before
):
    a, b = sample(20, 1), sample(30, 2, "interrupted")
    a.save(tmp_path)
    real = os.replace
    name, source = dies_before

    def die(src, dst):
        if Path(dst) == tmp_path / name and source in str(src):
            raise KeyboardInterrupt  # the writer dies here
        return real(src, dst)

    monkeypatch.setattr(storage.os, "replace", die)
    with pytest.raises(KeyboardInterrupt):
        b.save(tmp_path)
    monkeypatch.undo()
    seen = Results.load(tmp_path)  # either pair, whole
    assert_same(seen, a if len(seen.t) == 20 else b)
    with ResultWriter(tmp_path, "next writer"):  # finishes the journaled commit
        pass
    assert not (tmp_path / ".commit").exists()
    assert_same(Results.load(tmp_path), b)
    assert_same(Results.load(tmp_path, which="complete"), a)


def test_a_result_that_is_not_complete_keeps_the_complete_one_in_previous(tmp_path):
    a = sample(20, 1)
    a.save(tmp_path)
    sample(8, 2, "interrupted").save(tmp_path)
    latest = Results.load(tmp_path)
    assert latest.status == "interrupted" and len(latest.t) == 8
    assert_same(Results.load(tmp_path, which="complete"), a)
    assert_same(Results.load(tmp_path / "previous"), a)
    sample(9, 3, "failed").save(tmp_path)  # another partial: the complete one stays
    assert_same(Results.load(tmp_path, which="complete"), a)
    sample(12, 4).save(tmp_path)  # complete: previous/ goes
    assert not (tmp_path / "previous").exists()
    sample(3, 5, "interrupted").save(tmp_path / "only")
    with pytest.raises(ResultError, match="holds no complete result .*'interrupted'"):
        Results.load(tmp_path / "only", which="complete")


@pytest.mark.parametrize("umask", [0o022, 0o027], ids=oct)
def test_result_files_honour_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        sample(5).save(tmp_path / "r")
        run(sk("scenario.duration=0.05"), out=tmp_path / "run", progress=False)
    finally:
        os.umask(old)
    for p in (tmp_path / "r" / "result.npz", tmp_path / "run" / "manifest.json"):
        assert fh.file_mode(p) == 0o666 & ~umask


def test_temporary_files_of_dead_writers_are_removed_on_the_next_write(tmp_path):
    sample(5).save(tmp_path)
    dead = tmp_path / f".result.npz.{fh.dead_pid()}.k2j4h1ab.tmp"
    live = tmp_path / f".result.csv.{os.getpid()}.k2j4h1ab.tmp"
    stale = tmp_path / f".manifest.json.{os.getpid()}.zz93hh1a.tmp"
    for p in (dead, live, stale):
        p.write_bytes(b"half written")
    t = time.time() - 600
    os.utime(stale, (t, t))  # older than the lock holder
    sample(6).save(tmp_path)
    assert not dead.exists() and not stale.exists() and live.exists()


# ------------------------------------------------------------------ damaged


def _old_result(d, n=10):
    """A result in format 1 (as dqspace 0.1 wrote it: no size, no sha256)."""
    d.mkdir(exist_ok=True)
    np.savez(d / "result.npz", t=np.arange(n) * 0.1, x=np.ones((n, 3)))
    m = {
        "format": "dqspace-result/1",
        "status": "complete",
        "n_samples": n,
        "series": {"t": {"unit": "s", "columns": []}, "x": {"unit": "m", "columns": []}},
    }
    (d / "manifest.json").write_text(json.dumps(m))
    return m


def test_a_result_of_format_1_still_loads(tmp_path):
    _old_result(tmp_path)
    back = Results.load(tmp_path)
    assert back.status == "complete" and np.array_equal(back.t, np.arange(10) * 0.1)


def _npz(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, shape, data, nbytes in members:
            fh.write_npy_member(zf, name, shape, data=data, nbytes=nbytes)


def _damage(kind, d):
    m = _old_result(d)
    npz, man = d / "result.npz", d / "manifest.json"
    t10 = (np.arange(10) * 0.1).tobytes()
    if kind == "truncated npz":
        npz.write_bytes(npz.read_bytes()[: npz.stat().st_size // 2])
    elif kind == "empty npz":
        npz.write_bytes(b"")
    elif kind == "npz one row longer":  # what a kill during the old checkpoints left
        np.savez(npz, t=np.arange(11) * 0.1, x=np.ones((11, 3)))
    elif kind == "series missing":
        np.savez(npz, t=np.arange(10) * 0.1)
    elif kind == "Python objects":
        np.savez(npz, t=np.arange(10) * 0.1, x=np.array([{}] * 10, dtype=object))
    elif kind == "zip bomb":  # 64 MiB of zeros in ~64 kB
        _npz(npz, [("t", (10,), t10, 0), ("x", (1 << 23,), b"", 1 << 26)])
    elif kind == "header announcing 24 TB":
        _npz(npz, [("t", (10,), t10, 0), ("x", (10**12, 3), b"", 0)])
    elif kind == "manifest is a list":
        man.write_text("[1, 2]")
    elif kind == "series without a unit":
        del m["series"]["x"]["unit"]
        man.write_text(json.dumps(m))
    elif kind == "deeply nested manifest":
        man.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "truncated manifest":
        man.write_text(json.dumps(m)[:40])


@pytest.mark.parametrize(
    "kind, file, needle",
    [
        ("truncated npz", "result.npz", "is not a readable .npz archive"),
        ("empty npz", "result.npz", "is not a readable .npz archive"),
        (
            "npz one row longer",
            "result.npz",
            "'t' has 11 samples, the manifest says n_samples = 10",
        ),
        ("series missing", "result.npz", "missing series ['x']"),
        ("Python objects", "result.npz", "series 'x' holds Python objects"),
        ("zip bomb", "result.npz", "would inflate to 64 MiB, more than"),
        ("header announcing 24 TB", "result.npz", "series 'x' announces (1000000000000, 3)"),
        ("manifest is a list", "manifest.json", "a JSON object expected, found list"),
        ("series without a unit", "manifest.json", "series 'x' has no unit"),
        ("deeply nested manifest", "manifest.json", "nested too deeply"),
        ("truncated manifest", "manifest.json", "is not valid JSON"),
    ],
)
def test_a_damaged_result_gives_one_clear_error_naming_the_file(tmp_path, kind, file, needle):
    _damage(kind, tmp_path)
    with pytest.raises(ResultError) as exc:
        Results.load(tmp_path)
    assert isinstance(exc.value, ValueError)
    assert str(exc.value).startswith(f"{tmp_path / file}: ") and needle in str(exc.value)


def test_a_zip_bomb_with_a_matching_manifest_is_not_inflated(tmp_path):
    _npz(tmp_path / "result.npz", [("t", (10,), b"\0" * 80, 0), ("x", (1 << 23,), b"", 1 << 26)])
    fh.write_result_manifest(tmp_path, {"x": []})
    with pytest.raises(ResultError, match="would inflate to 64 MiB, more than the 1 MiB"):
        Results.load(tmp_path)


# ------------------------------------------------------------ runs that stop


def _fail_at(n, exc=None, action=None, name="simulate_compiled", module=None):
    """A runner's ``name`` that raises ``exc`` (or runs ``action``) on its n-th call
    (``module``: where the runner calls it; the closed loop's plant is in ``flight``)."""
    real = getattr(open_mod if module is None else module, name)
    calls = {"n": 0}

    def patched(*a, **k):
        calls["n"] += 1
        if calls["n"] == n:
            if action is not None:
                action()
            if exc is not None:
                raise exc
        return real(*a, **k)

    return patched


def _chunk_fail_at(n, exc=None, action=None):
    """The compiled closed loop's chunk (``ClosedLoop._run``) that, on its n-th call,
    runs, then runs ``action`` and raises ``exc``: a signal arriving while compiled code
    ran (Python sees it when the chunk returns)."""
    real = closed_mod.ClosedLoop._run
    calls = {"n": 0}

    def patched(self, *a, **k):
        calls["n"] += 1
        out = real(self, *a, **k)
        if calls["n"] == n:
            if action is not None:
                action()
            if exc is not None:
                raise exc
        return out

    return patched


def test_a_rerun_keeps_the_previous_complete_result_until_it_completes(tmp_path, monkeypatch):
    first = run(sk("scenario.duration=0.3"), out=tmp_path, progress=False)
    during = {}

    def look():
        during["latest"] = Results.load(tmp_path)
        during["partial"] = Results.load(tmp_path, which="partial")

    # chunks of ticks 0-10, 11-20, ... (a checkpoint after each): Ctrl-C in the 5th
    monkeypatch.setattr(closed_mod.ClosedLoop, "_run", _chunk_fail_at(5, KeyboardInterrupt, look))
    sc = sk("scenario.duration=2.0", "outputs.checkpoint_every=0.1")
    with pytest.raises(RunInterrupted) as exc:
        run(sc, out=tmp_path, progress=False)
    # while it ran: the committed result was the first run's, its checkpoint was "running"
    assert during["latest"].status == "complete"
    assert_same(during["latest"], first)
    assert during["partial"].status == "running" and len(during["partial"].t) == 41
    # after: the partial result is the latest (the 5th chunk's rows kept), the complete one
    # is kept in previous/
    back = Results.load(tmp_path)
    assert back.status == "interrupted" and len(back.t) == 51 and exc.value.path == tmp_path
    assert_same(Results.load(tmp_path, which="complete"), first)
    assert_same(Results.load(tmp_path / "previous"), first)
    assert not (tmp_path / ".partial").exists()


def test_ctrl_c_in_an_open_loop_run_keeps_its_partial_result(tmp_path, monkeypatch):
    ov = ["scenario.duration=2.0", "control.record_rate=10", "outputs.checkpoint_every=0.5"]
    full = run(load_scenario("dynamics-check", ov), progress=False)
    ctrl_c = _fail_at(3, KeyboardInterrupt, name="simulate_adaptive")  # its integrator
    monkeypatch.setattr(open_mod, "simulate_adaptive", ctrl_c)
    with pytest.raises(RunInterrupted) as exc:
        run(load_scenario("dynamics-check", ov), out=tmp_path, progress=False)
    back = Results.load(tmp_path)
    assert back.status == "interrupted" and back.manifest["n_samples"] == 11  # 2 chunks of 0.5 s
    assert back.t[-1] == pytest.approx(1.0)
    for k in full.data:  # the rows kept are the uninterrupted run's
        assert np.array_equal(back[k], full[k][:11]), k
    assert_same(back, exc.value.results)


def test_sigterm_is_handled_like_ctrl_c_and_the_old_handler_restored(tmp_path, monkeypatch):
    before = signal.getsignal(signal.SIGTERM)
    term = _chunk_fail_at(3, action=lambda: os.kill(os.getpid(), signal.SIGTERM))
    monkeypatch.setattr(closed_mod.ClosedLoop, "_run", term)
    with pytest.raises(RunInterrupted) as exc:
        run(
            sk("scenario.duration=1.0", "outputs.checkpoint_every=0.1"),
            out=tmp_path,
            progress=False,
        )
    assert exc.value.reason == "SIGTERM"
    back = Results.load(tmp_path)
    assert back.status == "interrupted" and "SIGTERM" in back.manifest["message"]
    assert len(back.t) == 31  # three chunks: ticks 0-10, 11-20, 21-30
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigterm_in_a_python_stage_stops_at_the_tick(tmp_path, monkeypatch):
    # a user's controller class runs in Python inside the compiled loop: SIGTERM arriving
    # while it runs (at its 30th tick) stops the run there, the 29 ticks before kept
    import sys
    import types

    from dqspace.control import BaseController

    mod = types.ModuleType("my_gnc_safety")
    mod.Base = type("Base", (BaseController,), {})
    monkeypatch.setitem(sys.modules, "my_gnc_safety", mod)
    term = _fail_at(
        30, action=lambda: os.kill(os.getpid(), signal.SIGTERM), name="step",
        module=python_stage.LawStage,
    )  # fmt: skip
    monkeypatch.setattr(python_stage.LawStage, "step", term)
    sc = sk("scenario.duration=1.0", "base_controller.law=my_gnc_safety:Base")
    with pytest.raises(RunInterrupted) as exc:
        run(sc, out=tmp_path, progress=False)
    assert exc.value.reason == "SIGTERM"
    back = Results.load(tmp_path)
    assert back.status == "interrupted" and len(back.t) == 29


def test_a_divergence_fails_the_run_keeping_its_partial_and_the_previous_result(tmp_path):
    first = run(sk("scenario.duration=0.3"), out=tmp_path, progress=False)
    sc = sk(
        "scenario.duration=2.0",
        "base_controller.kp_trans=[1e12, 1e12, 1e12]",
        "arm.torque_limit=[1e300]",  # the iiwa's torque limits would hold the arm: lift them
    )
    with pytest.raises(RunFailed) as exc:
        run(sc, out=tmp_path, progress=False)
    e = exc.value
    assert isinstance(e, RuntimeError) and e.path == tmp_path
    assert e.cause.startswith("IntegrationError: state turned non-finite at t = ")
    assert "gains too high" in e.hint and f"run failed at t = {e.t:.3f} s" in str(e)
    back = Results.load(tmp_path)
    assert back.status == "failed" and back.manifest["message"] == e.cause
    assert back.t[-1] == pytest.approx(e.t) and np.all(np.isfinite(back["q"]))
    assert_consistent(back)
    assert_same(Results.load(tmp_path, which="complete"), first)


def test_a_run_too_large_to_record_is_refused_before_anything_is_allocated(
    tmp_path, monkeypatch, short
):
    doc = dict(sk().config)
    doc["scenario"] = {**doc["scenario"], "duration": 1e9}
    with pytest.raises(RunTooLarge, match=r"scenario\.duration = 1e\+09 s recorded at 100 Hz") as e:
        run(doc, out=tmp_path / "o", progress=False)
    row_bytes = sum(a[0].nbytes for a in short.data.values())
    assert e.value.nbytes == (10**11 + 1) * row_bytes and "TiB" in str(e.value)
    assert isinstance(e.value, ValueError)
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [".lock"]  # nothing written
    with pytest.raises(RunTooLarge, match="more than the limit of 1000 B"):
        run(sk("scenario.duration=1"), progress=False, max_bytes=1000)
    monkeypatch.setenv("DQSPACE_MAX_RESULT_BYTES", "1k")
    with pytest.raises(RunTooLarge, match=r"1 KiB \(DQSPACE_MAX_RESULT_BYTES\)"):
        run(sk("scenario.duration=1"), progress=False)


def test_checkpoints_append_each_row_once(tmp_path, monkeypatch):
    appended = []
    real = storage.RowLog.append

    def spy(self, rows, durable=False):
        appended.append(len(rows))
        return real(self, rows, durable)

    monkeypatch.setattr(storage.RowLog, "append", spy)
    sc = sk("scenario.duration=0.5", "outputs.checkpoint_every=0.01")
    res = run(sc, out=tmp_path, progress=False)
    # one checkpoint per tick, each appending only the rows recorded since the last
    assert len(appended) >= 45 and max(appended) <= 2
    assert sum(appended) == len(res.t) - 1  # the last row goes with the final commit


# ------------------------------------------------ child processes: kill, race, full disk


def test_sigkill_during_checkpoints_leaves_a_consistent_partial_and_the_previous_result(
    tmp_path,
):
    first = run(sk("scenario.duration=0.3"), out=tmp_path, progress=False)
    child = fh.spawn_run(tmp_path, ["scenario.duration=30", "outputs.checkpoint_every=0.01"])
    fh.wait_ready(child)
    fh.wait_for(lambda: fh.committed(tmp_path) >= 20, what="20 checkpoints")
    child.kill()
    child.wait()
    back = Results.load(tmp_path)
    assert back.status == "interrupted" and "killed?" in back.manifest["message"]
    assert_consistent(back)
    assert len(back.t) >= 20 and np.allclose(np.diff(back.t), PERIOD)
    assert_same(Results.load(tmp_path, which="complete"), first)
    # the next run finds the directory free, commits the killed run's checkpoint, completes
    again = run(sk("scenario.duration=0.2"), out=tmp_path, progress=False)
    assert_same(Results.load(tmp_path), again)
    assert not (tmp_path / "previous").exists() and not (tmp_path / ".partial").exists()


def test_two_runs_into_one_directory_never_mix(tmp_path):
    run(sk("scenario.duration=0.1"), out=tmp_path, progress=False)
    go = tmp_path.parent / f"{tmp_path.name}.go"
    kids = [
        fh.spawn_run(tmp_path, [f"scenario.duration={T}", "outputs.checkpoint_every=0.01"], go=go)
        for T in (0.6, 0.4)
    ]
    pids = [fh.wait_ready(k) for k in kids]
    go.touch()
    while any(k.poll() is None for k in kids):  # a reader racing both writers
        assert_consistent(Results.load(tmp_path))
        time.sleep(0.005)
    outs = [k.stdout.read() for k in kids]
    codes = [k.returncode for k in kids]
    assert sorted(codes) in ([0, 0], [0, 3]), [k.stderr.read() for k in kids]
    for code, text, other in zip(codes, outs, reversed(pids), strict=True):
        if code == 3:  # refused at once, naming the other run
            assert f"in use by another writer (pid {other} on host {socket.gethostname()}" in text
    final = Results.load(tmp_path)
    assert final.status == "complete"
    assert_consistent(final)
    assert not fh.tmp_files(tmp_path)


def test_a_full_disk_fails_the_run_and_keeps_the_previous_result(tmp_path):
    first = run(sk("scenario.duration=0.3"), out=tmp_path, progress=False)
    digest = fh.sha256(tmp_path / "result.npz")
    child = fh.spawn_run(
        tmp_path, ["scenario.duration=3", "outputs.checkpoint_every=0.05"], fsize=100_000
    )
    out, err = child.communicate(timeout=300)
    assert child.returncode == 4, err
    assert "could not write the checkpoint (OSError: [Errno 27] File too large" in out
    assert f"partial result kept in {tmp_path}" in out
    assert fh.sha256(tmp_path / "result.npz") == digest  # the committed result untouched
    assert_same(Results.load(tmp_path, which="complete"), first)
    back = Results.load(tmp_path)  # the checkpoint, marked failed (never left "running")
    assert back.status == "failed" and "File too large" in back.manifest["message"]
    assert_consistent(back)
    assert not fh.tmp_files(tmp_path)


# ------------------------------------------------------------- the manifest


def test_the_manifest_records_metrics_timing_and_the_environment(tmp_path):
    res = run(sk("scenario.duration=0.5"), out=tmp_path, progress=False)
    m = Results.load(tmp_path).manifest
    back = Results.load(tmp_path)
    assert m["metrics"] == pytest.approx(summarize(back), nan_ok=True)
    assert m["degraded"] == [] and m["wall_time"] > 0
    assert m["real_time_factor"] == pytest.approx(0.5 / m["wall_time"])
    assert m["python"] == platform.python_version()
    assert m["dependencies"]["numpy"] == np.__version__
    assert m["machine"]["cpu_count"] == os.cpu_count()
    assert m["machine"]["hostname"] == socket.gethostname()
    assert all(s["unit"] for s in m["series"].values()) and set(m["series"]) == set(res.data)
    assert m["metric_units"]["base_pos_err_max"] == "m" and set(m["metric_units"]) == set(
        m["metrics"]
    )


def test_steering_saturation_is_reported_as_a_degradation():
    ov = ["scenario.duration=2", "vscmg.gimbal_rate_limit=0.001", "vscmg.wheel_accel_limit=0.01"]
    res = run(sk(*ov), progress=False)
    err = np.linalg.norm(res["vscmg_torque_err"], axis=1)
    big, some = err > 0.1, err > 1e-6  # [N m] nominal steering leaves ~1e-12 N m
    assert big.any() and err.max() > 1.0
    m = res.manifest
    assert big.sum() <= m["metrics"]["steering_saturated_ticks"] <= some.sum()
    assert len(m["degraded"]) == 1 and m["degraded"][0].startswith("VSCMG steering saturated")
    ev = [e for e in m["events"] if e["event"] == "steering saturated"]
    assert res.t[some][0] <= ev[0]["t"] <= res.t[big][0]
    assert f"from t = {ev[0]['t']:.3f} s" in m["degraded"][0]
    assert max(e["torque_error"] for e in ev) == pytest.approx(err.max())


def test_every_thruster_failing_is_reported_as_a_degradation():
    doc = dict(sk("scenario.duration=2").config)
    doc["faults"] = [
        {"time": 0.5, "thruster": i, "kind": "failed_off", "scale": 1.0} for i in range(12)
    ]
    res = run(doc, progress=False)
    m = res.manifest
    asked = (res.t >= 0.5) & (np.abs(res["wrench_cmd"][:, :3]).max(axis=1) > 0)
    assert m["metrics"]["alloc_best_effort_ticks"] == asked.sum() > 0
    assert m["degraded"][0] == "every thruster has failed from t = 0.500 s"
    assert "could not meet the force demand" in m["degraded"][1]


def test_without_a_terminal_progress_is_logged_every_ten_percent(monkeypatch):
    # the lines' rate without its wall-clock bounds (no minimum, no heartbeat): a line at
    # each tenth of the run
    rate = functools.partial(runner_mod.LineRate, min_wall=0.0, max_wall=1e9)
    monkeypatch.setattr(runner_mod, "LineRate", rate)
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("dqspace.run")
    old = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        run(sk("scenario.duration=0.5"), progress=True)  # pytest's stderr is no terminal
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)
    pcts = [r.args[2] for r in records]
    assert pcts == list(range(10, 101, 10)) and all(r.levelno == logging.INFO for r in records)


# -------------------------------------------------------------------- sweeps


def test_damaged_sweep_records_are_reported_and_run_again(tmp_path):
    from dqspace.scenarios.campaigns.sweep import sweep
    from dqspace.scenarios.store.sweep_store import load_sweep

    samples = [{"scenario.seed": s} for s in range(4)]
    base = sk("scenario.duration=0.1", "metrics.transient=0.05")  # ee_rms measured
    kw = dict(samples=samples, metrics=["ee_rms"], out=tmp_path, scheduler="synchronous")
    first = sweep(base, progress=False, **kw)
    files = [tmp_path / "variants" / v / "metrics.json" for v in first["variant"]]
    files[0].write_text(files[0].read_text()[:50])  # truncated
    rec = json.loads(files[1].read_text())
    del rec["id"]
    files[1].write_text(json.dumps(rec))  # no id
    files[2].write_text("[]")  # not an object
    df = load_sweep(tmp_path)
    assert list(df["variant"]) == [first["variant"][3]]
    assert sorted(d.split(":")[0] for d in df.attrs["damaged"]) == sorted(map(str, files[:3]))
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("dqspace.sweep")
    logger.addHandler(handler)
    try:
        again = sweep(base, progress=False, **kw)
    finally:
        logger.removeHandler(handler)
    assert again["cached"].tolist() == [False, False, False, True]
    assert again["ee_rms"].tolist() == first["ee_rms"].tolist()
    assert len(again.attrs["sweep"]["damaged"]) == 3
    text = records[0].getMessage()
    assert "3 damaged variant files found; their variants run again" in text
    assert all(str(p) in text for p in files[:3]) and "has no valid 'id'" in text
    assert not load_sweep(tmp_path).attrs["damaged"]


def test_a_second_sweep_into_the_same_directory_is_refused(tmp_path):
    from dqspace.scenarios.campaigns.sweep import sweep

    with ResultWriter(tmp_path, "sweep"), pytest.raises(OutputLocked, match="in use"):
        sweep(sk("scenario.duration=0.1"), samples=[{}], out=tmp_path, scheduler="synchronous")


def test_a_tls_scheduler_without_credentials_is_one_clear_error():
    from dqspace.scenarios.campaigns.sweep import connect, sweep

    with pytest.raises(ValueError, match=r"uses TLS, but no TLS credentials.*security="):
        with connect("tls://127.0.0.1:8786"):
            pass
    with pytest.raises(ValueError, match="distributed.comm.tls.ca-file"):
        sweep(sk("scenario.duration=0.1"), samples=[{}], scheduler="tls://127.0.0.1:8786")
    with pytest.raises(ValueError, match="security must be a distributed.Security"):
        with connect("tls://127.0.0.1:8786", security="yes"):
            pass
