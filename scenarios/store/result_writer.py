"""Writing results: a result committed as one unit, and the writer of a run (its lock, its
append-only checkpoints, its final commit).  The rules are in
:mod:`dqspace.scenarios.store.results`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import socket
import time
from importlib import metadata
from pathlib import Path

import numpy as np

from .result_files import FORMAT, ResultError, read_partial
from .storage import (
    COMMITS,
    PARTIAL,
    ROWS,
    OutputDir,
    RowLog,
    json_default,
    json_safe,
    now,
)

__all__ = [
    "ResultWriter",
    "SYNC_EVERY",
    "check_series",
    "commit_result",
    "promote_stale_partial",
    "package_version",
]

log = logging.getLogger("dqspace.results")

#: [s] of wall time between checkpoints made durable (fsync'ed) against a system crash
SYNC_EVERY = 10.0


def package_version():
    """Installed dqspace version (``"unknown"`` when not installed)."""
    try:
        return metadata.version("dqspace")
    except metadata.PackageNotFoundError:
        return "unknown"


def check_series(data: dict, info: dict) -> int:
    """Check that the series of a result can be written; returns the number of samples.

    Parameters
    ----------
    data : dict name -> array, first axis time; ``data["t"]`` [s] is required
    info : dict name -> SeriesInfo (every series needs a unit)

    Raises
    ------
    ValueError : no ``t``, a series whose length differs from ``t``'s, or one without a unit
    """
    if "t" not in data:
        raise ValueError(f"a result needs a series 't' [s]; series: {sorted(data)}")
    n = len(data["t"])
    for name, arr in data.items():
        if len(arr) != n:
            raise ValueError(f"series {name!r} has {len(arr)} samples, t has {n}")
        s = info.get(name)
        if s is None or not isinstance(s.unit, str) or not s.unit:
            raise ValueError(f"series {name!r} has no unit (give it a SeriesInfo)")
    return n


def _series_table(data, info):
    return {
        k: {
            "unit": info[k].unit,
            "columns": list(info[k].columns),
            "description": info[k].description,
            "dtype": np.asarray(a).dtype.str,
            "shape": list(np.shape(a)[1:]),
        }
        for k, a in data.items()
    }


def _disk_manifest(res, n):
    m = dict(res.manifest)
    m["format"] = FORMAT
    m.setdefault("created", now())
    m["updated"] = now()
    m.setdefault("package_version", package_version())
    m.setdefault("status", "complete")
    m["n_samples"] = int(n)
    m["t_end"] = float(res.data["t"][n - 1]) if n else 0.0
    m["series"] = _series_table(res.data, res.info)
    return m


def commit_result(d: OutputDir, res) -> dict:
    """Commit ``res`` (a ``Results`` or a ``StoredResult``: ``data``, ``info``, ``manifest``)
    into the open output directory ``d``; returns the manifest written.

    Raises
    ------
    ValueError : the series cannot be written (:func:`check_series`)
    OSError : writing failed (the directory's committed result is unchanged)
    """
    n = check_series(res.data, res.info)
    arrays = {k: np.asarray(v) for k, v in res.data.items()}
    return d.commit(lambda fh: np.savez(fh, **arrays), _disk_manifest(res, n))


def promote_stale_partial(d: OutputDir) -> None:
    """Commit, as ``"interrupted"``, the checkpoint a killed writer left in the open output
    directory ``d`` (a damaged checkpoint is discarded with a warning)."""
    pdir = d.path / PARTIAL
    if not pdir.exists():
        return
    res = None
    try:
        res = read_partial(d.path, None)
    except (ResultError, OSError) as exc:
        log.warning("%s: discarding the damaged checkpoint of an earlier run (%s)", pdir, exc)
    if res is not None and len(res.t):
        commit_result(d, res)
        log.warning(
            "%s: committed the checkpoint of a run that stopped without saving (%s)",
            d.path,
            res.manifest["message"],
        )
    shutil.rmtree(pdir, ignore_errors=True)


class ResultWriter:
    """Writes one run into a directory: lock, append-only checkpoints, final commit.

    Opening (the constructor) checks and locks the directory before anything is
    simulated (:class:`OutputError`, :class:`OutputLocked`) and commits the checkpoint
    a killed run left there.  Use as a context manager (closing releases the lock).

    Parameters
    ----------
    directory : path
    what : str, the writer in words (``"run of station-keeping"``)
    """

    def __init__(self, directory: str | os.PathLike, what: str) -> None:
        self.path = Path(directory)
        self.dir = OutputDir(directory, what).open()
        self.log = None
        try:
            promote_stale_partial(self.dir)
        except BaseException:
            self.dir.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def check_space(self, nbytes, what):
        """OutputError if the file system has less than ``nbytes`` free."""
        self.dir.check_space(nbytes, what)

    def start(self, data, info, manifest):
        """Begin the checkpoint of ``data`` (name -> preallocated array, rows first)."""
        self.data = data
        self.rowtype = np.dtype([(k, a.dtype, a.shape[1:]) for k, a in data.items()])
        self.fixed = {
            "format": FORMAT,
            "created": now(),
            "series": _series_table({k: a[:0] for k, a in data.items()}, info),
            "rows": {
                "file": ROWS,
                "commits": COMMITS,
                "fields": [[k, a.dtype.str, list(a.shape[1:])] for k, a in data.items()],
                "row_bytes": self.rowtype.itemsize,
            },
            "writer": {"pid": os.getpid(), "host": socket.gethostname()},
        }
        self.n_events = len(manifest.get("events", []))
        self.log = RowLog(self.path / PARTIAL, self._manifest(manifest, "running", ""))
        self.synced_at = time.monotonic()

    def _manifest(self, manifest, status, message):
        m = dict(manifest, status=status, message=message, updated=now(), **self.fixed)
        m["n_samples"] = self.log.n if self.log is not None else 0
        return json.dumps(json_safe(m), indent=1, default=json_default, allow_nan=False).encode()

    def checkpoint(self, n, manifest):
        """Append rows ``[committed, n)`` and commit them (the manifest only if it changed).

        Cheap (no fsync, no rename) but for one in every :data:`SYNC_EVERY` seconds of
        wall time, made durable.
        """
        a = self.log.n
        rows = np.empty(n - a, self.rowtype)
        for k in self.rowtype.names:
            rows[k] = self.data[k][a:n]
        durable = time.monotonic() - self.synced_at >= SYNC_EVERY
        self.log.append(rows, durable=durable)
        if durable:
            self.synced_at = time.monotonic()
        if len(manifest.get("events", [])) != self.n_events:
            self.n_events = len(manifest["events"])
            self.log.set_manifest(self._manifest(manifest, "running", ""))

    def mark(self, manifest, status, message):
        """Best effort, after a failed write: set the checkpoint's status (no new rows)."""
        if self.log is not None:
            with contextlib.suppress(OSError):
                self.log.set_manifest(self._manifest(manifest, status, message))

    def finish(self, res):
        """Commit ``res`` (its status decides, see the module docstring), drop the checkpoint."""
        res.manifest = commit_result(self.dir, res)
        if self.log is not None:
            self.log.remove()
            self.log = None
        return res

    def close(self):
        """Release the directory (a checkpoint not finished stays for the next writer)."""
        if self.log is not None:
            self.log.close()
        self.dir.close()
