"""Where dqspace's compiled kernels are cached, and how the cache stays consistent.

numba caches a compiled function on disk (``cache=True``).  By default it writes
into a ``__pycache__`` folder beside the source, which for an installed package
means inside ``site-packages``: files pip does not know about, that survive an
uninstall and then shadow a later editable install.  dqspace never writes inside
its installed package; its kernels are cached in

1. ``$NUMBA_CACHE_DIR`` when it is set (numba's own setting, honoured as is), else
2. ``$DQSPACE_CACHE_DIR``, else
3. the platform's per-user cache folder (``~/.cache/dqspace`` on Linux, from
   ``platformdirs``),

in one sub-folder per source folder (named like numba's own, a hash of the folder's
path, so two installations never share a cache).

numba invalidates a cached function when *its* file changes, but not when a kernel
it calls in another file changes: the caller would keep running the old code.
:func:`install` fingerprints every dqspace source file that defines compiled code
(by content) and, when the fingerprint differs from the one stamped at the last
import, deletes this installation's cached kernels so that everything recompiles
consistently.

Several processes may import dqspace at once (Dask workers, ``pytest -n``).
numba's cache is not safe for gufuncs compiled concurrently (numba issues #4807 and
#10128: two processes write a kernel's and its wrapper's cache files with different
internal names and every later load crashes).  :func:`build_lock` serialises the
check-and-clear and every gufunc build across processes with a lock file in the
cache folder; a process that waits says for whom, and gives up with a clear error
after ``$DQSPACE_LOCK_TIMEOUT`` seconds (default 900).
"""

import contextlib
import hashlib
import logging
import os
import socket
import sys
import threading
import time
from pathlib import Path

from ._env import env_number

try:
    import fcntl
except ImportError:  # not POSIX: no inter-process lock (numba's own behaviour)
    fcntl = None

__all__ = [
    "build_lock",
    "kernel_lock",
    "cache_dir",
    "cache_report",
    "clear_cache",
    "lock_timeout",
    "caches_are_warm",
    "ensure_consistent_caches",
    "install",
    "BuildLockTimeout",
]

log = logging.getLogger("dqspace")

#: the folders whose compiled code is cached (relative to the installation's root)
PACKAGES = ("dq", "multibody", "actuators", "control", "scenarios")
#: the cache folder's sub-folder of the kernels' lock files (not an installation's kernels)
_LOCKS = "locks"
_LOCK_WAIT_NOTICE = 2.0  # [s] before saying that we wait for another process


class BuildLockTimeout(TimeoutError):
    """Another process held the kernel build lock for longer than the time-out."""


def _package_dirs(root=None):
    """The code folders of this installation (an editable install maps them by name)."""
    dirs = []
    for name in PACKAGES:
        spec = _find_spec(f"dqspace.{name}")
        if spec is not None and spec.submodule_search_locations:
            dirs.append(Path(list(spec.submodule_search_locations)[0]).resolve())
        elif root is not None and (Path(root) / name).is_dir():
            dirs.append(Path(root) / name)
    return dirs


def _find_spec(name):
    import importlib.util

    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def lock_timeout():
    """``$DQSPACE_LOCK_TIMEOUT`` [s] (default 900): how long a process waits for the build
    lock; ValueError naming the variable unless a finite number >= 0."""
    return env_number("DQSPACE_LOCK_TIMEOUT", 900.0, what="a finite number of seconds >= 0")


def cache_dir():
    """The folder under which this user's dqspace kernels are cached (see module doc)."""
    numba_dir = os.environ.get("NUMBA_CACHE_DIR")
    if numba_dir:
        return Path(numba_dir)
    own = os.environ.get("DQSPACE_CACHE_DIR")
    if own:
        return Path(own)
    import platformdirs

    return Path(platformdirs.user_cache_dir("dqspace", appauthor=False))


def _subpath(folder):
    """numba's name for the cache sub-folder of a source folder (``name_<sha1 of path>``)."""
    folder = os.path.abspath(folder)
    return "_".join([os.path.basename(folder), hashlib.sha1(folder.encode()).hexdigest()])


def _kernel_cache_dirs(dirs):
    """Cache folders of every source folder (and sub-folder) in ``dirs``."""
    base = cache_dir()
    out = []
    for d in dirs:
        for sub in [d, *(p for p in d.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
            out.append(base / _subpath(sub))
    return out


def _install_tag(dirs):
    return hashlib.sha1("\0".join(str(d) for d in dirs).encode()).hexdigest()[:12]


def lock_path(dirs=None):
    """The build-lock file of this installation (in the cache folder)."""
    dirs = _package_dirs() if dirs is None else dirs
    return cache_dir() / f"dqspace-{_install_tag(dirs)}.lock"


_held = threading.local()


def _holder(fd):
    with contextlib.suppress(OSError, ValueError):
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, 200).decode(errors="replace").strip() or "an unknown process"
    return "an unknown process"


@contextlib.contextmanager
def build_lock(timeout=None, path=None):
    """Hold an exclusive inter-process lock while numba compiles or loads kernels.

    Re-entrant within a thread; other threads and processes wait.  After 2 s of
    waiting, one line on the ``dqspace`` logger (and stderr) names the holder; after
    ``timeout`` seconds (default ``$DQSPACE_LOCK_TIMEOUT`` or 900) it raises
    :class:`BuildLockTimeout`.
    """
    if fcntl is None or getattr(_held, "depth", 0):
        _held.depth = getattr(_held, "depth", 0) + 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    if timeout is None:
        timeout = lock_timeout()
    path = Path(path) if path is not None else lock_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:  # no writable cache folder: go on unlocked rather than fail the import
        yield
        return
    try:
        _acquire(fd, path, timeout)
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {stamp}".encode(), 0)
        _held.depth = 1
        yield
    finally:
        _held.depth = 0
        os.close(fd)  # closing releases the lock


_held_kernels = threading.local()


@contextlib.contextmanager
def kernel_lock(name):
    """Hold an inter-process lock named for one kernel (and signature) while numba compiles
    it or loads it from the cache.

    numba's cache has no coordination between processes: two processes that need the same
    kernel at once (Dask workers, ``pytest -n``, two notebooks) both compile it, and on two
    cores each waits for the other's compile too.  Under this lock the second process
    waits for the first, then loads the code the first wrote to the cache.  Re-entrant
    within a thread; a kernel whose compile needs another takes that one's lock inside its
    own (callees lock after callers, and there are no cycles, so no deadlock).  Unlike
    :func:`build_lock` a time-out (``$DQSPACE_LOCK_TIMEOUT``) is not an error: the kernel
    is then compiled anyway, and one line on the ``dqspace`` logger says so.
    """
    held = getattr(_held_kernels, "names", None)
    if held is None:
        held = _held_kernels.names = set()
    if fcntl is None or name in held:
        yield
        return
    tag = hashlib.sha1(f"{_install_tag(_package_dirs())}\0{name}".encode()).hexdigest()[:20]
    path = cache_dir() / _LOCKS / f"kernel-{tag}.lock"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:  # no writable cache folder: compile unlocked, as numba does
        yield
        return
    try:
        try:
            _acquire(fd, path, lock_timeout(), what=f"the kernel {name}")
        except BuildLockTimeout as e:
            _say(f"{e}; compiling it here anyway")
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()} since {stamp}".encode(), 0)
        held.add(name)
        yield
    finally:
        held.discard(name)
        os.close(fd)  # closing releases the lock


def _acquire(fd, path, timeout, what="the numba kernels"):
    t0 = time.monotonic()
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if told:
                _say(f"dqspace: got the kernel build lock after {time.monotonic() - t0:.0f} s")
            return
        except BlockingIOError:
            pass
        waited = time.monotonic() - t0
        if waited >= timeout:
            raise BuildLockTimeout(
                f"waited {waited:.0f} s for the lock on {what} {path}, held by "
                f"{_holder(fd)}; if that process is stuck, stop it (the lock is released when "
                f"it exits), or raise DQSPACE_LOCK_TIMEOUT"
            )
        if not told and waited >= _LOCK_WAIT_NOTICE:
            told = True
            _say(
                f"dqspace: waiting for {_holder(fd)}, which is compiling or loading "
                f"{what} (lock {path})"
            )
        time.sleep(0.05)


def _say(msg):
    log.warning(msg)
    if not logging.getLogger().handlers and not log.handlers:  # no logging set up: stderr
        print(msg, file=sys.stderr, flush=True)


def _fingerprint(dirs):
    """Hash of the compiled sources: every file that defines numba functions."""
    h = hashlib.sha1()
    for d in dirs:
        for f in sorted(d.rglob("*.py")):
            text = f.read_bytes()
            if b"njit" in text or b"guvectorize" in text or b"cfunc" in text:
                h.update(str(f.relative_to(d.parent)).encode() + b"\0" + text)
    return h.hexdigest()


def _stamp_path(dirs):
    return cache_dir() / f"dqspace-{_install_tag(dirs)}.stamp"


def ensure_consistent_caches(dirs=None, stamp=None, cache_dirs=None):
    """Delete this installation's cached kernels if a compiled source changed since the last
    import; True when caches were cleared.

    ``dirs`` (source folders), ``stamp`` (the fingerprint file) and ``cache_dirs`` (where
    their kernels are cached) default to the installed package's.
    """
    dirs = _package_dirs() if dirs is None else [Path(d) for d in dirs]
    with build_lock(path=lock_path(dirs)):
        return _ensure_consistent_caches(dirs, stamp, cache_dirs)


def _ensure_consistent_caches(dirs, stamp, cache_dirs):
    try:
        stamp = Path(stamp) if stamp is not None else _stamp_path(dirs)
        cache_dirs = _kernel_cache_dirs(dirs) if cache_dirs is None else cache_dirs
        fp = _fingerprint(dirs)
        if stamp.is_file() and stamp.read_text() == fp:
            return False
        for d in map(Path, cache_dirs):
            for f in [*d.glob("*.nbi"), *d.glob("*.nbc")]:
                with contextlib.suppress(OSError):
                    f.unlink()
        stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp = stamp.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(fp)
        os.replace(tmp, stamp)
        return True
    except OSError:  # read-only cache folder: nothing to clean, nothing to stamp
        return False


def caches_are_warm():
    """True when this installation's kernels are cached and current (no compile ahead).

    Cheap (reads the sources' fingerprint and lists the cache folders; no numba import):
    the CLI asks it to say "compiling" before the first run.
    """
    try:
        dirs = _package_dirs()
        stamp = _stamp_path(dirs)
        if not stamp.is_file() or stamp.read_text() != _fingerprint(dirs):
            return False
        return any(any(d.glob("*.nbi")) for d in _kernel_cache_dirs(dirs) if d.is_dir())
    except OSError:
        return False


def _size(folder):
    files = [f for f in Path(folder).rglob("*") if f.is_file()]
    return len(files), sum(f.stat().st_size for f in files)


def cache_report():
    """What the kernel cache holds (``dqspace cache``): a dict with ``folder`` (the cache
    folder), ``own`` (whether it is dqspace's own, not ``$NUMBA_CACHE_DIR``), ``warm`` (this
    installation's kernels cached and current), ``files`` and ``bytes`` of this
    installation's kernels, and ``others`` (folders of other dqspace installations in an
    own folder: their ``count``, ``files`` and ``bytes``)."""
    base = cache_dir()
    mine = {d.name for d in _kernel_cache_dirs(_package_dirs())}
    report = dict(folder=str(base), own=not os.environ.get("NUMBA_CACHE_DIR"))
    report["warm"] = caches_are_warm()
    files = nbytes = 0
    for name in mine:
        if (base / name).is_dir():
            n, b = _size(base / name)
            files, nbytes = files + n, nbytes + b
    report.update(files=files, bytes=nbytes)
    others = {"count": 0, "files": 0, "bytes": 0}
    if report["own"] and base.is_dir():
        for d in base.iterdir():
            if d.is_dir() and d.name not in mine | {_LOCKS}:
                n, b = _size(d)
                others = {"count": others["count"] + 1, "files": others["files"] + n,
                          "bytes": others["bytes"] + b}  # fmt: skip
    report["others"] = others
    return report


def clear_cache(others=False):
    """Delete this installation's cached kernels (the next run compiles them again) and,
    with ``others``, the folders of other dqspace installations in dqspace's own cache
    folder (never in a ``$NUMBA_CACHE_DIR``, which other projects may share); returns the
    bytes freed.  Under the build lock: a process compiling meanwhile is waited for."""
    import shutil

    dirs = _package_dirs()
    freed = 0
    with build_lock(path=lock_path(dirs)):
        base = cache_dir()
        mine = {d.name for d in _kernel_cache_dirs(dirs)}
        for name in mine:
            d = base / name
            for f in [*d.glob("*.nbi"), *d.glob("*.nbc")]:
                with contextlib.suppress(OSError):
                    size = f.stat().st_size
                    f.unlink()
                    freed += size
        with contextlib.suppress(OSError):
            _stamp_path(dirs).unlink()
        if others and not os.environ.get("NUMBA_CACHE_DIR") and base.is_dir():
            for d in base.iterdir():
                if d.is_dir() and not d.is_symlink() and d.name not in mine | {_LOCKS}:
                    freed += _size(d)[1]
                    shutil.rmtree(d, ignore_errors=True)
    return freed


_installed = False


def install():
    """Send the caches of dqspace's compiled functions to :func:`cache_dir` and check them.

    Called by each code folder's ``__init__`` before any compiled function is defined;
    later calls return at once.
    """
    global _installed
    if _installed:
        return
    _installed = True
    dirs = _package_dirs()
    _register_locator(dirs)
    ensure_consistent_caches(dirs)


def _register_locator(dirs):
    """Put a numba cache locator for dqspace's source folders first in numba's list."""
    from numba.core import caching, config

    roots = tuple(str(d) + os.sep for d in dirs)

    class DqspaceCacheLocator(caching.UserProvidedCacheLocator):
        """numba's NUMBA_CACHE_DIR locator, for dqspace's sources only, under cache_dir()."""

        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            self._cache_path = str(cache_dir() / _subpath(os.path.dirname(py_file)))

        @classmethod
        def from_function(cls, py_func, py_file):
            if config.CACHE_DIR or not os.path.abspath(py_file).startswith(roots):
                return None  # NUMBA_CACHE_DIR set (numba's own locator), or not ours
            return super(caching.UserProvidedCacheLocator, cls).from_function(py_func, py_file)

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    if impl is None or not isinstance(getattr(impl, "_locator_classes", None), list):
        # a numba without the locator list: its own NUMBA_CACHE_DIR setting, for everyone
        if not config.CACHE_DIR:
            config.CACHE_DIR = str(cache_dir())
        return
    if not any(c.__name__ == "DqspaceCacheLocator" for c in impl._locator_classes):
        impl._locator_classes = [DqspaceCacheLocator, *impl._locator_classes]
