"""Where the compiled kernels are cached, the guard that clears them when a source changes,
and the inter-process build lock."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dqspace import _numba_cache as nc
from dqspace._numba_cache import BuildLockTimeout, build_lock


def test_caches_are_cleared_when_a_source_changes(tmp_path):
    a, b = tmp_path / "dq", tmp_path / "multibody"
    for d in (a, b):
        d.mkdir(parents=True)
    (a / "_kernels.py").write_text("@njit\ndef x(): return 1\n")
    (b / "_kernels.py").write_text("@njit\ndef y(): return 2\n")
    (a / "notes.py").write_text("z = 3\n")  # no compiled code: does not count
    cache = tmp_path / "cache" / "multibody_abc"
    cache.mkdir(parents=True)
    stamp = tmp_path / "cache" / "stamp"
    cached = [cache / "_kernels.rnea-1.py311.nbi", cache / "_kernels.rnea-1.py311.1.nbc"]

    def ensure_consistent_caches(dirs, stamp):
        return nc.ensure_consistent_caches(dirs, stamp, cache_dirs=[cache])

    assert ensure_consistent_caches([a, b], stamp)  # first import: nothing stamped yet
    for f in cached:
        f.write_bytes(b"compiled")
    assert not ensure_consistent_caches([a, b], stamp)  # unchanged: caches kept
    assert all(f.exists() for f in cached)

    # a file without compiled code changes: caches kept
    (a / "notes.py").write_text("z = 4\n")
    assert not ensure_consistent_caches([a, b], stamp)
    # a kernel in *another* file changes (numba would not notice for the callers)
    (a / "_kernels.py").write_text("@njit\ndef x(): return 10\n")
    assert ensure_consistent_caches([a, b], stamp)
    assert not any(f.exists() for f in cached)
    assert not ensure_consistent_caches([a, b], stamp)


def test_installed_package_is_stamped_and_cached_outside_the_package():
    import dqspace.multibody  # noqa: F401  (installs the locator, stamps the sources)

    dirs = nc._package_dirs()
    assert {d.name for d in dirs} == {"dq", "multibody", "actuators", "control", "scenarios"}
    assert nc._stamp_path(dirs).read_text() == nc._fingerprint(dirs)
    assert nc.caches_are_warm()
    for d in dirs:  # numba writes nothing beside the sources
        assert not list(d.rglob("*.nbi")), d


_BUILDER = """
import sys
from dqspace.dq import _ufuncs
print("imported", flush=True)
sys.stdin.readline()
_ufuncs.dq_mul  # build (or load) one gufunc: must wait for the lock
print("built", flush=True)
"""


def test_gufunc_builds_wait_for_the_interprocess_lock():
    """numba's gufunc caches break when two processes write them at once (numba #10128):
    a process that builds a gufunc waits while another holds the build lock."""
    import select

    p = subprocess.Popen(
        [sys.executable, "-c", _BUILDER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout.readline().strip() == "imported"
        with build_lock():
            p.stdin.write("go\n")
            p.stdin.flush()
            ready, _, _ = select.select([p.stdout], [], [], 2.0)
            assert not ready, "the gufunc was built while another process held the lock"
        ready, _, _ = select.select([p.stdout], [], [], 120.0)
        assert ready and p.stdout.readline().strip() == "built"
    finally:
        p.kill()
        p.wait()


def test_build_lock_is_reentrant():
    with build_lock(), build_lock():  # a nested build in the same thread does not deadlock
        pass


def test_the_cache_folder_honours_numba_then_dqspace_settings(monkeypatch, tmp_path):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("DQSPACE_CACHE_DIR", str(tmp_path / "own"))
    assert nc.cache_dir() == tmp_path / "own"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert nc.cache_dir() == tmp_path / "numba"
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.delenv("DQSPACE_CACHE_DIR")
    home = Path(nc.cache_dir())
    assert home.name == "dqspace" and not str(home).startswith(str(Path(nc.__file__).parent))


_HOLDER = """
import sys, time
from dqspace._numba_cache import build_lock
with build_lock(path=sys.argv[1]):
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _hold(path, seconds):
    p = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert p.stdout.readline().strip() == "holding"
    return p


def test_a_waiting_process_names_the_holder_and_times_out(tmp_path, caplog):
    lock = tmp_path / "build.lock"
    p = _hold(lock, 30)
    try:
        t0 = time.monotonic()
        with (
            pytest.raises(BuildLockTimeout, match=f"held by pid {p.pid} on"),
            build_lock(timeout=2.5, path=lock),
        ):
            pass
        assert time.monotonic() - t0 >= 2.5
        assert f"waiting for pid {p.pid}" in caplog.text
    finally:
        p.kill()
        p.wait()
    with build_lock(timeout=1.0, path=lock):  # the holder is gone: the lock is free
        assert lock.read_text().startswith(f"pid {os.getpid()} on ")


def _fake_cache(base):
    """This installation's cache folders with two kernel files each, and another
    installation's folder; returns (own files, other folder)."""
    own = []
    for d in nc._kernel_cache_dirs(nc._package_dirs())[:3]:
        d = base / d.name
        d.mkdir(parents=True)
        for f in (d / "k.rnea-1.py311.nbi", d / "k.rnea-1.py311.1.nbc"):
            f.write_bytes(b"x" * 100)
            own.append(f)
    other = base / "multibody_0123456789abcdef"
    other.mkdir()
    (other / "k.nbi").write_bytes(b"y" * 50)
    with nc.kernel_lock("k(float64)"):  # the kernels' lock files: no installation's
        pass
    assert any((base / nc._LOCKS).iterdir())
    return own, other


def test_the_cache_report_counts_this_installation_and_the_others(monkeypatch, tmp_path):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("DQSPACE_CACHE_DIR", str(tmp_path))
    own, other = _fake_cache(tmp_path)
    r = nc.cache_report()
    assert r["folder"] == str(tmp_path) and r["own"]
    assert (r["files"], r["bytes"]) == (len(own), 100 * len(own))
    assert r["others"] == {"count": 1, "files": 1, "bytes": 50}
    assert not r["warm"]  # no stamp of the current sources in this folder


def test_clearing_deletes_this_installations_kernels_and_others_only_when_asked(
    monkeypatch, tmp_path
):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("DQSPACE_CACHE_DIR", str(tmp_path))
    own, other = _fake_cache(tmp_path)
    assert nc.clear_cache() == 100 * len(own)
    assert not any(f.exists() for f in own) and other.is_dir()
    assert nc.clear_cache(others=True) == 50
    assert not other.exists() and (tmp_path / nc._LOCKS).is_dir()


def test_a_shared_numba_cache_folder_is_never_swept(monkeypatch, tmp_path):
    """``$NUMBA_CACHE_DIR`` may hold other projects' kernels: only dqspace's own go."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    own, other = _fake_cache(tmp_path)
    assert nc.cache_report()["others"]["count"] == 0
    nc.clear_cache(others=True)
    assert not any(f.exists() for f in own)
    assert (other / "k.nbi").exists()


def test_the_cache_command_prints_the_folder_and_clears(monkeypatch, tmp_path, capsys):
    from dqspace.scenarios.cli import main

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("DQSPACE_CACHE_DIR", str(tmp_path))
    own, other = _fake_cache(tmp_path)
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path) in out and f"{len(own)} files" in out and "other installations: 1" in out
    assert main(["cache", "--clear"]) == 0
    assert "0 files" in capsys.readouterr().out and other.is_dir()


@pytest.mark.parametrize("text", ["nan", "abc", "-1", "inf", "1e400"])
def test_a_bad_lock_timeout_is_refused_naming_the_variable(monkeypatch, tmp_path, text):
    """``nan`` would wait forever, ``abc`` failed without naming the variable."""
    monkeypatch.setenv("DQSPACE_LOCK_TIMEOUT", text)
    with pytest.raises(ValueError, match=r"DQSPACE_LOCK_TIMEOUT = .*finite number of seconds"):
        with build_lock(path=tmp_path / "lock"):
            pass


def test_a_good_lock_timeout_is_used(monkeypatch):
    monkeypatch.setenv("DQSPACE_LOCK_TIMEOUT", " 2.5 ")
    assert nc.lock_timeout() == 2.5
    monkeypatch.delenv("DQSPACE_LOCK_TIMEOUT")
    assert nc.lock_timeout() == 900.0
