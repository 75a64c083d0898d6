"""The numba cache guard clears every cached kernel when any source file changes."""

from dqspace.dq._cache import ensure_consistent_caches


def test_caches_are_cleared_when_a_source_changes(tmp_path):
    a, b = tmp_path / "dq", tmp_path / "multibody"
    for d in (a, b):
        (d / "__pycache__").mkdir(parents=True)
    (a / "_kernels.py").write_text("@njit\ndef x(): return 1\n")
    (b / "_kernels.py").write_text("@njit\ndef y(): return 2\n")
    (a / "notes.py").write_text("z = 3\n")  # no compiled code: does not count
    stamp = a / "__pycache__" / "stamp"
    cached = [
        b / "__pycache__" / "_kernels.rnea-1.py311.nbi",
        b / "__pycache__" / "_kernels.rnea-1.py311.1.nbc",
    ]

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


def test_installed_package_is_stamped():
    import dqspace.dq._cache as c

    dirs = c._package_dirs()
    assert {d.name for d in dirs} == {"dq", "multibody", "actuators", "control", "scenarios"}
    stamp = dirs[0] / "__pycache__" / c._STAMP
    assert stamp.read_text() == c._fingerprint(dirs)


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
    import subprocess
    import sys

    from dqspace.dq._cache import build_lock

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
    from dqspace.dq._cache import build_lock

    with build_lock(), build_lock():  # a nested build in the same thread does not deadlock
        pass
