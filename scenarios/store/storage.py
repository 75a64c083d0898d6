"""Output directories written safely: atomic files, one writer, a journaled commit, append-only
checkpoints.  The result format itself is in :mod:`dqspace.scenarios.store.results`.

Layout of an output directory ``<dir>``:

``manifest.json``, ``result.npz``
    the committed result (the newest run that stopped);
``previous/``
    the newest *complete* result, kept while the committed one is not complete;
``.partial/``: ``manifest.json``, ``rows.bin``, ``commits.bin``
    the checkpoint of a run in progress (or of one that was killed): ``rows.bin``
    only grows, one fixed-size row per sample, and ``commits.bin`` only grows, one
    record per checkpoint naming how many rows are committed (rows past that count,
    from a write cut short, are ignored), see :class:`RowLog`;
``.commit/``
    a commit in progress (its journal);
``.lock``
    the writers' lock (:mod:`dqspace.scenarios.store.lock`).

Every file is written by :func:`atomic_write`: a temporary file ``.<name>.<pid>.<random>.tmp``
in the same directory, flushed, fsync'ed, given the permissions the umask allows (like any
new file) and renamed over the old one; the directory is fsync'ed after the rename.

A **commit** (:meth:`OutputDir.commit`, under the lock) writes the new pair into
``.commit/`` (data first, then the manifest naming the data's size and SHA-256), then
renames the data and the manifest into place and removes ``.commit/``.  A writer killed at
any point leaves either the old pair, or a complete journal that the next writer rolls
forward, and a reader that meets a data file newer than its manifest finds that manifest
in the journal (or retries).  Before a result that is not complete replaces a complete one,
the complete one is hard-linked (copied where links are not supported) into ``previous/``;
a complete commit removes ``previous/``.

Opening a directory for writing (:meth:`OutputDir.open`) checks, before any simulation,
that it is a directory that can be created and written, takes the lock, rolls a journal
forward and removes the temporary files of writers that died.
"""

import contextlib
import datetime as _dt
import errno
import hashlib
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import numpy as np

from .lock import DirLock, OutputError, OutputLocked, pid_alive

__all__ = [
    "MANIFEST",
    "DATA",
    "PARTIAL",
    "PREVIOUS",
    "STAGE",
    "ROWS",
    "COMMITS",
    "OutputDir",
    "OutputError",
    "OutputLocked",
    "RowLog",
    "atomic_write",
    "atomic_write_bytes",
    "clean_orphans",
    "committed_rows",
    "current_umask",
    "file_digest",
    "format_bytes",
    "json_safe",
    "MAX_JSON_BYTES",
    "open_regular",
    "read_regular",
    "read_upto",
    "to_json",
]

MANIFEST, DATA = "manifest.json", "result.npz"
PARTIAL, PREVIOUS, STAGE = ".partial", "previous", ".commit"
ROWS, COMMITS = "rows.bin", "commits.bin"
_PREV_NEW, _PREV_OLD = ".previous.new", ".previous.old"
_STALE_LIVE = 60.0  # [s] a live writer's temporary file this much older than the lock is orphaned


def now():
    """The current time, ISO 8601 UTC, to the second."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def format_bytes(n):
    """``"745 GiB"``, ``"2.3 MiB"``: a byte count in binary units, 2-3 significant digits."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    raise AssertionError  # pragma: no cover


def json_default(o):
    """JSON encoding of NumPy scalars and arrays and of paths."""
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def json_safe(doc):
    """``doc`` with every non-finite number (NaN: a metric not measured; inf) replaced by
    None, so that it is strict JSON (``null``); NumPy scalars and arrays become plain
    numbers and lists (:func:`json_default`)."""
    if isinstance(doc, dict):
        return {k: json_safe(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [json_safe(v) for v in doc]
    if isinstance(doc, np.ndarray):
        return json_safe(doc.tolist())
    if isinstance(doc, (float, np.floating)):
        return float(doc) if np.isfinite(doc) else None
    return doc


def to_json(doc):
    """``doc`` as indented, key-sorted, strict JSON bytes (a non-finite number is ``null``:
    :func:`json_safe`)."""
    return json.dumps(
        json_safe(doc), indent=2, sort_keys=True, default=json_default, allow_nan=False
    ).encode()


# ------------------------------------------------------------------ files


def current_umask():
    """The process umask (from ``/proc``; elsewhere by setting and restoring it)."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    old = os.umask(0o022)
    os.umask(old)
    return old


#: the largest JSON document (a campaign's or a tuning's summary) read from a directory
MAX_JSON_BYTES = 64 << 20


def open_regular(path):
    """A binary file object reading ``path`` only if it is a regular file reached without
    following a symbolic link: a FIFO (which blocks its reader forever), a device, a
    directory or a link inside a directory someone sent you raise OSError saying what it
    is; FileNotFoundError as usual."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno and os.path.islink(path)):
            raise OSError(exc.errno, "is a symbolic link (not followed)", str(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "is not a regular file", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path, limit):
    """The bytes of the regular file ``path`` (:func:`open_regular`), at most ``limit``
    bytes (OSError beyond, before reading it)."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            too_big = f"is {format_bytes(size)}, more than the {format_bytes(limit)} allowed"
            raise OSError(errno.EFBIG, too_big, str(path))
        return read_upto(fh, limit)


def read_upto(fh, limit, chunk=1 << 20):
    """At most ``limit`` bytes from ``fh`` to its end, read a chunk at a time (a read of
    ``limit`` bytes at once would reserve them all, however small the file)."""
    data = bytearray()
    while len(data) < limit and (block := fh.read(min(chunk, limit - len(data)))):
        data += block
    return bytes(data)


def fsync_dir(path):
    """Make renames in ``path`` durable (best effort: not every file system allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path, write, *, durable=True):
    """Write ``path`` atomically: ``write(fh)`` fills a temporary file, then rename.

    The file gets the permissions ``0o666 & ~umask`` (a plain new file's), not the
    temporary file's 0600.  On any exception the temporary file is removed and the old
    ``path`` (if any) is left as it was.  ``durable``: fsync the file before the rename
    and the directory after it (survives a power loss); without, the write survives the
    writer's death but an operating-system crash may bring back the old file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent
    )
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fchmod(fh.fileno(), 0o666 & ~current_umask())
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)
    return path


def atomic_write_bytes(path, data, *, durable=True):
    """Write ``data`` to ``path`` atomically (see :func:`atomic_write`)."""
    return atomic_write(path, lambda fh: fh.write(data), durable=durable)


def file_digest(path_or_fh, chunk=1 << 20):
    """``(size [bytes], sha256 hex)`` of a file (a path, or a binary file object from 0)."""
    h, size = hashlib.sha256(), 0
    with contextlib.ExitStack() as stack:
        fh = path_or_fh
        if isinstance(path_or_fh, (str, os.PathLike)):
            fh = stack.enter_context(open_regular(path_or_fh))
        while block := fh.read(chunk):
            h.update(block)
            size += len(block)
    return size, h.hexdigest()


def _tmp_pid(name):
    """The writer pid in a temporary file's name ``.<name>.<pid>.<random>.tmp``, or None."""
    parts = name[: -len(".tmp")].rsplit(".", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def clean_orphans(directory, since):
    """Remove the temporary files that writers killed mid-write left in ``directory``.

    Call it holding the directory's lock, acquired at epoch ``since`` [s].  A file goes
    if the process named in it no longer exists, or if it is more than a minute older
    than the lock (every result write happens under the lock, and none takes that long).

    Returns the list of removed paths.
    """
    removed = []
    for p in Path(directory).glob(".*.tmp"):
        pid = _tmp_pid(p.name)
        try:
            mtime = p.lstat().st_mtime
        except FileNotFoundError:
            continue
        if (pid is not None and not pid_alive(pid)) or mtime < since - _STALE_LIVE:
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
            removed.append(p)
    return removed


def _rmtree(path):
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _status(manifest_path):
    """The ``status`` a manifest file records, or None."""
    with contextlib.suppress(OSError, ValueError, RecursionError, AttributeError):
        return json.loads(read_regular(manifest_path, MAX_JSON_BYTES)).get("status")
    return None


def _recorded_digest(manifest_path):
    """``(bytes, sha256)`` a manifest records for its data file, or None."""
    damaged = (OSError, ValueError, RecursionError, TypeError, AttributeError, KeyError)
    with contextlib.suppress(*damaged):
        d = json.loads(read_regular(manifest_path, MAX_JSON_BYTES))["data"]
        return int(d["bytes"]), str(d["sha256"])
    return None


# -------------------------------------------------------------- directory


class OutputDir:
    """An output directory opened for writing (see the module docstring).

    Parameters
    ----------
    path : directory (created with its parents if missing)
    what : str, the writer in words (a refused writer reads it)
    """

    def __init__(self, path, what):
        self.path = Path(path)
        self.what = what
        self.lock = None

    # ------------------------------------------------------------ open
    def open(self):
        """Check, create and lock the directory; recover what a killed writer left.

        Raises
        ------
        OutputLocked : another writer holds it (names pid, host, since when)
        OutputError : it is a file, cannot be created, or is not writable
        """
        p = self.path
        if p.exists() and not p.is_dir():
            raise OutputError(p, "exists and is not a directory")
        try:
            p.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise OutputError(p, "cannot be created: a parent is a file") from None
        except OSError as exc:
            raise OutputError(p, f"cannot be created ({exc.strerror or exc})") from None
        lock = DirLock(p, self.what)
        try:
            lock.acquire()
        except OutputError:
            raise
        except OSError as exc:
            raise OutputError(p, f"is not writable ({exc.strerror or exc})") from None
        self.lock = lock
        try:
            self._probe()
            self.recover()
            for d in (p, p / PARTIAL, p / STAGE):
                if d.is_dir():
                    clean_orphans(d, lock.since)
        except BaseException:
            self.close()
            raise
        return self

    def _probe(self):
        try:
            fd, tmp = tempfile.mkstemp(
                prefix=f".probe.{os.getpid()}.", suffix=".tmp", dir=self.path
            )
        except OSError as exc:
            raise OutputError(self.path, f"is not writable ({exc.strerror or exc})") from None
        os.close(fd)
        os.unlink(tmp)

    def close(self):
        """Release the lock (idempotent)."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def check_space(self, nbytes, what):
        """Raise OutputError if the file system has less than ``nbytes`` free."""
        free = shutil.disk_usage(self.path).free
        if nbytes > free:
            raise OutputError(
                self.path,
                f"{what} needs about {format_bytes(nbytes)} of disk space, "
                f"{format_bytes(free)} free",
            )

    # --------------------------------------------------------- recovery
    def recover(self):
        """Finish or undo what a killed writer left: ``previous/`` half replaced, a commit
        journal complete (rolled forward) or not (discarded)."""
        p = self.path
        _rmtree(p / _PREV_NEW)
        old = p / _PREV_OLD
        if old.exists():
            if not (p / PREVIOUS).exists():
                os.replace(old, p / PREVIOUS)
            else:
                _rmtree(old)
        stage, sm = p / STAGE, p / STAGE / MANIFEST
        if sm.is_file():  # the journal is complete: finish its commit
            rec = _recorded_digest(sm)
            src = stage / DATA if (stage / DATA).is_file() else p / DATA
            if rec is not None and src.is_file() and file_digest(src) == rec:
                self._swap(src, sm)
        _rmtree(stage)

    # ----------------------------------------------------------- commit
    def committed_status(self):
        """The ``status`` of the committed manifest, or None."""
        return _status(self.path / MANIFEST)

    def commit(self, write_data, manifest):
        """Replace the committed pair: ``write_data(fh)`` writes ``result.npz``.

        ``manifest`` (a dict) gets ``"data": {"file", "bytes", "sha256"}``; returns it.
        A complete commit removes ``previous/``; one that is not complete first keeps a
        complete committed result there.
        """
        stage = self.path / STAGE
        _rmtree(stage)
        stage.mkdir()
        try:
            atomic_write(stage / DATA, write_data)
            size, sha = file_digest(stage / DATA)
            manifest = {**manifest, "data": {"file": DATA, "bytes": size, "sha256": sha}}
            atomic_write_bytes(stage / MANIFEST, to_json(manifest))
            fsync_dir(stage)
        except BaseException:
            _rmtree(stage)
            raise
        self._swap(stage / DATA, stage / MANIFEST)
        _rmtree(stage)
        return manifest

    def _swap(self, data, manifest):
        """Put a journal's pair in place (``data`` may already be: the top data file)."""
        p = self.path
        complete = _status(manifest) == "complete"
        if data != p / DATA:
            if not complete and self.committed_status() == "complete":
                self._keep_previous()
            os.replace(data, p / DATA)
        os.replace(manifest, p / MANIFEST)
        fsync_dir(p)
        if complete:
            self._drop_previous()

    def _keep_previous(self):
        p = self.path
        new, old, prev = p / _PREV_NEW, p / _PREV_OLD, p / PREVIOUS
        _rmtree(new)
        new.mkdir()
        for name in (DATA, MANIFEST):
            try:
                os.link(p / name, new / name)
            except OSError:  # no hard links here: copy
                shutil.copy2(p / name, new / name)
        fsync_dir(new)
        if prev.exists() or prev.is_symlink():
            _rmtree(old)
            os.replace(prev, old)
        os.replace(new, prev)
        _rmtree(old)
        fsync_dir(p)

    def _drop_previous(self):
        p = self.path
        if (p / PREVIOUS).is_dir():
            _rmtree(p / _PREV_OLD)
            os.replace(p / PREVIOUS, p / _PREV_OLD)
            _rmtree(p / _PREV_OLD)


# ------------------------------------------------------------ checkpoints


class RowLog:
    """The append-only checkpoint of a run, in a directory (``.partial``).

    ``rows.bin`` receives fixed-size rows (a NumPy structured dtype) and ``commits.bin``
    one int64 per checkpoint: the number of rows committed.  Both only grow, so a
    checkpoint costs the rows added since the last one (no rewrite, no rename).
    ``manifest.json`` (written atomically) describes the rows and the run; it is
    rewritten only when it changes.  A checkpoint survives the writer's death; a
    ``durable`` one (rows fsync'ed before their commit record) also survives an
    operating-system crash.  Readers take the last whole commit record
    (:func:`committed_rows`) and ignore rows past it.

    Parameters
    ----------
    directory : the checkpoint directory (emptied and created)
    manifest_bytes : its first manifest
    """

    def __init__(self, directory, manifest_bytes):
        self.dir = Path(directory)
        _rmtree(self.dir)
        self.dir.mkdir()
        self.set_manifest(manifest_bytes)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
        self.fd = os.open(self.dir / ROWS, flags, 0o666)
        self.cfd = os.open(self.dir / COMMITS, flags, 0o666)
        self.n = 0  # committed rows
        self.size = 0  # [bytes] of committed rows
        self.k = 0  # commit records
        self.torn = False  # an append failed part-way: cut both files back first

    def set_manifest(self, manifest_bytes):
        """Replace the checkpoint's manifest (atomically, durably)."""
        atomic_write_bytes(self.dir / MANIFEST, manifest_bytes)

    def append(self, rows, durable=False):
        """Append ``rows`` (structured array), then the record committing them."""
        if self.torn:
            os.ftruncate(self.fd, self.size)
            os.ftruncate(self.cfd, 8 * self.k)
        self.torn = True
        _write_all(self.fd, rows.tobytes())
        if durable:
            os.fsync(self.fd)
        _write_all(self.cfd, np.int64(self.n + len(rows)).tobytes())
        if durable:
            os.fsync(self.cfd)
        self.n += len(rows)
        self.size += rows.nbytes
        self.k += 1
        self.torn = False

    def close(self):
        """Close the files (idempotent)."""
        for name in ("fd", "cfd"):
            fd = getattr(self, name)
            setattr(self, name, None)
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)

    def remove(self):
        """Close and delete the checkpoint."""
        self.close()
        _rmtree(self.dir)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def committed_rows(directory):
    """Rows committed in a checkpoint directory (its last whole commit record)."""
    with open_regular(Path(directory) / COMMITS) as fh:
        size = fh.seek(0, 2)
        if size < 8:
            return 0
        fh.seek(size - size % 8 - 8)
        return int(np.frombuffer(fh.read(8), np.int64)[0])
