"""Keep numba's on-disk caches consistent with the sources of the whole package.

numba caches each compiled function next to its source and invalidates the
cache when *that* file changes, but not when a kernel it calls from another
file changes: a caller would keep running the old code (or crash on a changed
signature).  At the first import of dqspace this module fingerprints the
compiled source files of the five packages; when the
fingerprint differs from the one stamped at the last import, it deletes the
package's cached ``*.nbi``/``*.nbc`` files so that everything recompiles
consistently.  Only files that define numba functions count, by content (an
edit elsewhere, or a touch, changes nothing).  Installed releases never
change, so this costs reading a few dozen small files (a few milliseconds).

Several processes may import dqspace at once (Dask workers of a sweep,
``pytest -n``).  numba's cache is not safe for gufuncs compiled concurrently:
two processes can write the kernel's and the gufunc wrapper's cache files
with different internal names, and every later load of that pair crashes
(numba issues #4807 and #10128).  :func:`build_lock` serialises, across
processes, the check-and-clear of this module and every gufunc build (compile
or cache load), so one process writes a consistent pair and the others load it.
"""

import contextlib
import hashlib
import os
import tempfile
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: no inter-process lock (numba's own behaviour)
    fcntl = None

_PACKAGES = ("dq", "multibody", "actuators", "control", "scenarios")
_STAMP = "dqspace-sources.stamp"


def lock_path():
    """The lock file of this installation (one per package location, in the temp folder)."""
    here = str(Path(__file__).resolve().parent).encode()
    return Path(tempfile.gettempdir()) / f"dqspace-numba-{hashlib.sha1(here).hexdigest()[:12]}.lock"


_held = threading.local()


@contextlib.contextmanager
def build_lock():
    """Hold an exclusive inter-process lock (blocking) while numba compiles or loads caches.

    Re-entrant within a thread; other threads and processes wait.
    """
    if fcntl is None or getattr(_held, "depth", 0):
        _held.depth = getattr(_held, "depth", 0) + 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    try:
        fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:  # no writable temp folder: go on unlocked rather than fail the import
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held.depth = 1
        yield
    finally:
        _held.depth = 0
        os.close(fd)  # closing releases the lock


def _package_dirs():
    here = Path(__file__).resolve().parent  # .../dq (or .../dqspace/dq when installed)
    root = here.parent
    return [root / p for p in _PACKAGES if (root / p).is_dir()]


def _fingerprint(dirs):
    """Hash of the compiled sources: every file that defines numba functions."""
    h = hashlib.sha1()
    for d in dirs:
        for f in sorted(d.rglob("*.py")):
            text = f.read_bytes()
            if b"njit" in text or b"guvectorize" in text:
                h.update(str(f.relative_to(d.parent)).encode() + b"\0" + text)
    return h.hexdigest()


def ensure_consistent_caches(dirs=None, stamp=None):
    """Delete stale numba caches of the package if any source changed since the last import.

    ``dirs`` (source folders) and ``stamp`` (the fingerprint file) default to the
    installed package's; returns True when caches were cleared.
    """
    with build_lock():
        return _ensure_consistent_caches(dirs, stamp)


def _ensure_consistent_caches(dirs, stamp):
    try:
        dirs = _package_dirs() if dirs is None else [Path(d) for d in dirs]
        if stamp is None:
            stamp = Path(__file__).resolve().parent / "__pycache__" / _STAMP
        stamp = Path(stamp)
        fp = _fingerprint(dirs)
        if stamp.is_file() and stamp.read_text() == fp:
            return False
        for d in dirs:
            for f in list(d.rglob("*.nbi")) + list(d.rglob("*.nbc")):
                with contextlib.suppress(OSError):
                    f.unlink()
        stamp.parent.mkdir(exist_ok=True)
        tmp = stamp.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(fp)
        os.replace(tmp, stamp)
        return True
    except OSError:  # read-only install: nothing to clean, nothing to stamp
        return False
