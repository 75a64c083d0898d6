"""The numba cache guard clears every cached kernel when any source file changes."""

import os

from dqspace.dq._cache import ensure_consistent_caches


def test_caches_are_cleared_when_a_source_changes(tmp_path):
    a, b = tmp_path / "dq", tmp_path / "multibody"
    for d in (a, b):
        (d / "__pycache__").mkdir(parents=True)
    (a / "_kernels.py").write_text("x = 1\n")
    (b / "_kernels.py").write_text("y = 2\n")
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

    # a kernel in *another* file changes (numba would not notice for the callers)
    st = (a / "_kernels.py").stat()
    os.utime(a / "_kernels.py", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert ensure_consistent_caches([a, b], stamp)
    assert not any(f.exists() for f in cached)
    assert not ensure_consistent_caches([a, b], stamp)


def test_installed_package_is_stamped():
    import dqspace.dq._cache as c

    dirs = c._package_dirs()
    assert {d.name for d in dirs} == {"dq", "multibody", "actuators", "control", "scenarios"}
    stamp = dirs[0] / "__pycache__" / c._STAMP
    assert stamp.read_text() == c._fingerprint(dirs)
