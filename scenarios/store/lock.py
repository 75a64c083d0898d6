"""Exclusive lock of an output directory while one writer (a run, a save, a sweep) uses it.

``<dir>/.lock`` is locked with ``fcntl.flock``: the kernel releases the lock when its
process ends, however it ends (``kill -9`` included), so a dead writer never leaves a
stale lock.  While locked, the file holds its holder as JSON: ``{"pid", "host", "since"
(ISO 8601, UTC), "since_epoch" [s], "what"}``; a second writer refuses at once with
:class:`OutputLocked` naming that holder.  The file itself stays (removing lock files
lets two writers lock two different files); it is emptied when released.

Readers never block writers: :func:`writer_active` takes a *shared* lock for an instant
to learn whether a writer holds the directory, and a writer retries its exclusive lock
for a fraction of a second before refusing, so such a look does not make it fail.

``flock`` locks are advisory and local to one machine's kernel (on NFS they may not
exclude writers on other hosts).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import fcntl
import json
import os
import socket
import stat
import time
from pathlib import Path

__all__ = ["LOCK_NAME", "OutputError", "OutputLocked", "DirLock", "writer_active", "pid_alive"]

LOCK_NAME = ".lock"
_RETRY = 0.5  # [s] how long a writer retries an exclusive lock a reader's look may hold


class OutputError(ValueError):
    """An output directory cannot be written (a file, not writable, full, locked)."""

    def __init__(self, path: str | os.PathLike, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class OutputLocked(OutputError):
    """Another writer holds the output directory.

    Attributes
    ----------
    path : Path, the directory
    holder : dict, ``pid``, ``host``, ``since`` (ISO 8601 UTC), ``what`` (may be empty
        if the holder has not written it yet)
    """

    def __init__(self, path: str | os.PathLike, holder: str) -> None:
        self.holder = dict(holder or {})
        super().__init__(
            path,
            f"in use by another writer ({describe(self.holder)}); wait for it to finish "
            f"or choose another output directory",
        )


def describe(holder):
    """``"pid 1234 on host h since 2026-...+00:00 (run of station-keeping)"``."""
    if not holder.get("pid"):
        return "holder unknown"
    text = f"pid {holder['pid']} on host {holder.get('host', '?')}"
    if holder.get("since"):
        text += f" since {holder['since']}"
    if holder.get("what"):
        text += f" ({holder['what']})"
    return text


def pid_alive(pid):
    """True if a process ``pid`` exists on this machine (or might: no permission to ask)."""
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def _live(holder):
    """True if ``holder`` names a process that exists (on another host: assumed alive)."""
    if not holder.get("pid"):
        return False
    return holder.get("host") != socket.gethostname() or pid_alive(holder["pid"])


def _read_holder(fd):
    with contextlib.suppress(OSError, ValueError, RecursionError):
        text = os.pread(fd, 4096, 0)
        doc = json.loads(text) if text.strip() else {}
        return doc if isinstance(doc, dict) else {}
    return {}


class DirLock:
    """The exclusive lock of one directory (see the module docstring).

    Parameters
    ----------
    directory : path of an existing directory
    what : str, who holds it, in words (shown to a refused writer)
    """

    def __init__(self, directory, what):
        self.directory = Path(directory)
        self.what = what
        self.fd = None
        self.since = None  # [s] epoch of the acquisition

    def acquire(self):
        """Lock; raise :class:`OutputLocked` naming the holder, OSError if not possible."""
        path = self.directory / LOCK_NAME
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise OSError(
                errno.EINVAL,
                f"{path} is not a regular file (a link or a special file: an output folder's "
                "lock is never followed); remove it",
                str(path),
            )
        nofollow = getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | nofollow, 0o666)
        try:
            self._lock(fd)
            now = time.time()
            doc = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "since": _dt.datetime.fromtimestamp(now, _dt.UTC).isoformat(timespec="seconds"),
                "since_epoch": now,
                "what": self.what,
            }
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(doc).encode(), 0)
        except BaseException:
            os.close(fd)
            raise
        self.fd, self.since = fd, now
        return self

    def _lock(self, fd):
        deadline = time.monotonic() + _RETRY
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                holder = _read_holder(fd)
                if _live(holder) or time.monotonic() > deadline:
                    raise OutputLocked(self.directory, holder) from None
                time.sleep(0.02)  # a reader's instant look, or a holder still writing its name
            except OSError as exc:  # ENOLCK, EOPNOTSUPP: no locks on this file system
                raise OutputError(
                    self.directory, f"cannot be locked ({exc.strerror or exc}); use a local disk"
                ) from None

    def release(self):
        """Empty the holder record and unlock (idempotent)."""
        fd, self.fd = self.fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)  # closing the last descriptor releases the flock

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


def writer_active(directory):
    """The holder (dict) of ``directory``'s lock if a writer holds it, else None.

    Takes a shared lock for an instant; never creates the lock file.
    """
    try:
        path = Path(directory) / LOCK_NAME
        flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device: not a writer's lock
        os.close(fd)
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd) or {"pid": None}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
