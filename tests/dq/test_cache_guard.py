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
