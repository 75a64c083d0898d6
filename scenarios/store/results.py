"""Simulation results: time series in ``result.npz`` plus a JSON manifest, one atomic unit.

Format (a directory):

``result.npz``
    One array per series, first axis time; ``t`` [s] is always present.
    ``numpy.load(path)`` opens it; :meth:`Results.to_dataframe` flattens it
    for pandas and :meth:`Results.to_csv` writes ``result.csv``.
``manifest.json``
    ``{"format": "dqspace-result/2", "status": "complete" | "running" |
    "interrupted" | "failed", "message", "package_version", "seed", "scenario" (the
    resolved scenario, as a dict), "series": {name: {"unit" (required), "columns",
    "description", "dtype", "shape" (of one sample)}}, "n_samples", "t_end",
    "created", "updated", "events": [...], "data": {"file": "result.npz", "bytes",
    "sha256"}}``.  A run adds ``"metrics"`` (closed loop:
    :func:`dqspace.scenarios.metrics.summarize`), ``"degraded"`` (one-line messages,
    empty when all went well), ``"wall_time"`` [s], ``"real_time_factor"``,
    ``"python"``, ``"dependencies"`` (name -> version or None) and ``"machine"``
    (``arch``, ``processor``, ``cpu_count``, ``hostname``, ``platform``).
    Format ``"dqspace-result/1"`` (no ``data``, ``dtype``, ``shape``) is still read.

**One unit.** The manifest names the size and SHA-256 of the data file it describes, and
:meth:`Results.load` checks them and the length of every series against
``n_samples``: a data file and a manifest of different runs are never returned together.
A reader racing a writer retries a few times (see :mod:`dqspace.scenarios.storage` for
the journaled commit), then raises :class:`ResultError`.

**One writer.** A run (or :meth:`Results.save`) locks its directory; a second writer
refuses at once with :class:`OutputLocked` naming the holder (pid, host, since when).
The directory is checked (a directory, creatable, writable) before anything is simulated.

**Nothing lost.** A run checkpoints into ``<dir>/.partial/`` (rows appended, never
rewritten) and leaves the committed result alone until it stops.  It then commits:

- complete: its result replaces the committed one (and ``previous/``, if any, goes);
- interrupted (Ctrl-C, SIGTERM) or failed: its partial result becomes the committed one,
  and a complete result it replaces is kept in ``<dir>/previous/``;
- killed (SIGKILL, power loss): nothing is committed; ``.partial/`` keeps its last
  checkpoint, which the next writer of the directory commits as ``"interrupted"``.

**What** ``Results.load(dir)`` **returns** (``which="latest"``, the default): the newest
run that stopped: the committed result, or the last checkpoint of a run that was killed
(status ``"interrupted"``, its message says so).  While a run is in progress it returns
the committed result of the run before (never a half-written one).  ``which="complete"``:
the newest complete result (the committed one, else ``previous/``); ``which="partial"``:
the checkpoint of the run in progress (status ``"running"``) or killed.

**Damaged files** (empty or truncated archive, a manifest that is not a JSON object, a
series without a unit, nesting too deep, an archive inflating beyond what the manifest
announces (a zip bomb), a data file of another run) raise :class:`ResultError`, a
ValueError naming the file and the problem; nothing is inflated before its size is
checked against the manifest.

Files get the permissions the umask allows (``0o666 & ~umask``).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import math
import os
import shutil
import socket
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .lock import OutputError, OutputLocked, describe, writer_active
from .storage import (
    COMMITS,
    DATA,
    MANIFEST,
    PARTIAL,
    PREVIOUS,
    ROWS,
    STAGE,
    OutputDir,
    RowLog,
    atomic_write_bytes,
    committed_rows,
    file_digest,
    format_bytes,
    json_default,
    now,
)

if TYPE_CHECKING:
    import pandas

__all__ = [
    "SeriesInfo",
    "Results",
    "ResultError",
    "OutputError",
    "OutputLocked",
    "ResultWriter",
    "SYNC_EVERY",
    "atomic_write_bytes",
    "package_version",
]

log = logging.getLogger("dqspace.results")

FORMAT = "dqspace-result/2"
READABLE = ("dqspace-result/1", FORMAT)
_WHICH = ("latest", "complete", "partial")
_MAX_MANIFEST = 64 << 20  # [bytes] a manifest larger than this is not read
_RETRIES = 6  # reads of a pair that a writer is replacing
_SLACK = 1 << 20  # [bytes] allowance over the announced size of an archive
#: [s] of wall time between checkpoints made durable (fsync'ed) against a system crash
SYNC_EVERY = 10.0


def package_version():
    """Installed dqspace version (``"unknown"`` when not installed)."""
    try:
        return metadata.version("dqspace")
    except metadata.PackageNotFoundError:
        return "unknown"


class ResultError(ValueError):
    """A result (or sweep) file is missing, damaged or inconsistent.

    Attributes
    ----------
    path : Path, the file or directory
    problem : str
    """

    def __init__(self, path: str | os.PathLike, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class _Torn(ResultError):
    """The data file is not the one the manifest describes (maybe a writer in between)."""


@dataclass(frozen=True)
class SeriesInfo:
    """Metadata of one time series: unit (required, e.g. ``"m"``, ``"-"``), column
    names, description."""

    unit: str
    columns: tuple = ()
    description: str = ""


@dataclass
class Results:
    """Time series of a run and its manifest.

    Attributes
    ----------
    data : dict name -> ndarray, first axis time (``data["t"]`` [s])
    info : dict name -> SeriesInfo
    manifest : dict (see module docstring)
    """

    data: dict
    info: dict
    manifest: dict = field(default_factory=dict)

    # ----------------------------------------------------------- access
    @property
    def t(self) -> NDArray[np.float64]:
        """Sample times (N,) [s]."""
        return self.data["t"]

    @property
    def status(self) -> str:
        """``"complete"``, ``"running"``, ``"interrupted"`` or ``"failed"``."""
        return self.manifest.get("status", "unknown")

    def __getitem__(self, name):
        try:
            return self.data[name]
        except KeyError:
            raise KeyError(f"no series {name!r}; series: {sorted(self.data)}") from None

    def __contains__(self, name):
        return name in self.data

    # ------------------------------------------------------------ I/O
    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``result.npz`` and ``manifest.json`` into ``directory`` as one commit.

        Takes the directory's lock (:class:`OutputLocked` if a run writes it) and follows
        the rules of the module docstring (a status other than ``"complete"`` keeps a
        complete result there in ``previous/``).  A manifest without ``status`` is
        saved as ``"complete"``.

        Raises
        ------
        ValueError : a series without a unit, or whose length differs from ``t``'s
        OutputError, OutputLocked : the directory cannot be written
        OSError : writing failed (the directory's committed result is unchanged)
        """
        directory = Path(directory)
        self._check()
        with OutputDir(directory, "Results.save").open() as d:
            _promote_stale_partial(d)
            self.manifest = _commit(d, self)
        return directory

    def _check(self):
        """Validate series lengths and units; returns the number of samples."""
        if "t" not in self.data:
            raise ValueError(f"a result needs a series 't' [s]; series: {sorted(self.data)}")
        n = len(self.data["t"])
        for name, arr in self.data.items():
            if len(arr) != n:
                raise ValueError(f"series {name!r} has {len(arr)} samples, t has {n}")
            info = self.info.get(name)
            if info is None or not isinstance(info.unit, str) or not info.unit:
                raise ValueError(f"series {name!r} has no unit (give it a SeriesInfo)")
        return n

    @classmethod
    def load(cls, directory: str | os.PathLike, which: str = "latest") -> Results:
        """Read a result directory (see the module docstring for ``which``).

        Parameters
        ----------
        directory : path
        which : ``"latest"`` (default), ``"complete"`` or ``"partial"``

        Raises
        ------
        ResultError (a ValueError) naming the file and the problem.
        """
        directory = Path(directory)
        if which not in _WHICH:
            raise ValueError(f"which = {which!r}: expected one of {', '.join(_WHICH)}")
        if not directory.is_dir():
            what = "is not a directory" if directory.exists() else "no such result directory"
            raise ResultError(directory, what)
        if which == "partial":
            return _load_partial(directory)
        if which == "complete":
            return _load_complete(directory)
        holder = writer_active(directory)
        if holder is None and (directory / PARTIAL / MANIFEST).is_file():
            with contextlib.suppress(FileNotFoundError):  # a writer just took it over
                res = _read_partial(directory, None)
                if len(res.t):  # a killed run's checkpoint, newer than the committed result
                    return res
        if not (directory / MANIFEST).is_file():
            if holder is not None:
                raise ResultError(
                    directory,
                    f"holds no finished result yet: a run is in progress ({describe(holder)}); "
                    f"Results.load(..., which='partial') reads its last checkpoint",
                )
            raise ResultError(
                directory, "is not a dqspace result (needs manifest.json and result.npz)"
            )
        return _load_committed(directory)

    # ------------------------------------------------------- exports
    def columns(self) -> list[str]:
        """Flat column names and the matching (N, n_columns) array."""
        names, cols = [], []
        for k, arr in self.data.items():
            arr = np.asarray(arr)
            flat = arr.reshape(len(arr), -1)
            info = self.info.get(k)
            sub = list(info.columns) if info and len(info.columns) == flat.shape[1] else None
            if flat.shape[1] == 1 and arr.ndim == 1:
                names.append(k)
            else:
                names += [f"{k}.{sub[j] if sub else j}" for j in range(flat.shape[1])]
            cols.append(flat.astype(float))
        return names, np.hstack(cols) if cols else np.empty((0, 0))

    def to_dataframe(self) -> pandas.DataFrame:
        """A pandas DataFrame with one column per scalar component (needs pandas)."""
        import pandas as pd

        names, values = self.columns()
        return pd.DataFrame(values, columns=names)

    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write every series as CSV columns (header: ``name.component``), atomically."""
        names, values = self.columns()
        buf = io.StringIO()
        buf.write(",".join(names) + "\n")
        np.savetxt(buf, values, delimiter=",", fmt="%.17g")
        atomic_write_bytes(path, buf.getvalue().encode())
        return Path(path)


# ---------------------------------------------------------------- writing


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


def _commit(d, res):
    """Commit ``res`` into the open OutputDir ``d``; returns the manifest written."""
    n = res._check()
    arrays = {k: np.asarray(v) for k, v in res.data.items()}
    return d.commit(lambda fh: np.savez(fh, **arrays), _disk_manifest(res, n))


def _promote_stale_partial(d):
    """Commit, as ``"interrupted"``, the checkpoint a killed writer left in ``d``."""
    pdir = d.path / PARTIAL
    if not pdir.exists():
        return
    res = None
    try:
        res = _read_partial(d.path, None)
    except (ResultError, OSError) as exc:
        log.warning("%s: discarding the damaged checkpoint of an earlier run (%s)", pdir, exc)
    if res is not None and len(res.t):
        _commit(d, res)
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
            _promote_stale_partial(self.dir)
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
        return json.dumps(m, indent=1, default=json_default).encode()

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
        res.manifest = _commit(self.dir, res)
        if self.log is not None:
            self.log.remove()
            self.log = None
        return res

    def close(self):
        """Release the directory (a checkpoint not finished stays for the next writer)."""
        if self.log is not None:
            self.log.close()
        self.dir.close()


# ---------------------------------------------------------------- reading


def _read_manifest(path, partial=False):
    """A checked manifest (``partial``: of a checkpoint, with ``rows`` instead of ``data``)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > _MAX_MANIFEST:
            raise ResultError(path, f"is {format_bytes(size)}, too large for a result manifest")
        text = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ResultError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        m = json.loads(text)
    except RecursionError:
        raise ResultError(path, "is nested too deeply to be a result manifest") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultError(path, f"is not valid JSON ({exc}); empty or truncated?") from None
    _check_manifest(path, m, partial)
    return m


def _check_manifest(path, m, partial):
    if not isinstance(m, dict):
        raise ResultError(
            path, f"is not a result manifest (a JSON object expected, found {type(m).__name__})"
        )
    fmt = m.get("format")
    if fmt not in READABLE:
        raise ResultError(path, f"unknown format {fmt!r} (readable: {', '.join(READABLE)})")
    series = m.get("series")
    if not isinstance(series, dict) or not series:
        raise ResultError(path, "has no 'series' table")
    strict = fmt == FORMAT
    for k, v in series.items():
        if not isinstance(v, dict):
            raise ResultError(path, f"series {k!r} is not a table")
        if not isinstance(v.get("unit"), str) or not v["unit"]:
            raise ResultError(path, f"series {k!r} has no unit")
        if not isinstance(v.get("columns", []), list):
            raise ResultError(path, f"series {k!r}: 'columns' is not a list")
        if strict and not (
            isinstance(v.get("dtype"), str)
            and isinstance(v.get("shape"), list)
            and all(isinstance(s, int) and s >= 0 for s in v["shape"])
        ):
            raise ResultError(path, f"series {k!r} lacks a valid 'dtype' and 'shape'")
        if strict:
            try:
                np.dtype(v["dtype"])
            except (TypeError, ValueError):
                raise ResultError(path, f"series {k!r}: unknown dtype {v['dtype']!r}") from None
    n = m.get("n_samples")
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ResultError(path, f"n_samples = {n!r} is not a sample count")
    if partial:
        if not isinstance(m.get("rows"), dict):
            raise ResultError(path, "lacks the 'rows' record of a checkpoint")
    elif strict:
        d = m.get("data")
        if not isinstance(d, dict) or not (
            isinstance(d.get("bytes"), int) and isinstance(d.get("sha256"), str)
        ):
            raise ResultError(path, "lacks the 'data' record (size and sha256 of result.npz)")


def _info(m):
    return {
        k: SeriesInfo(v["unit"], tuple(v.get("columns", ())), v.get("description", ""))
        for k, v in m["series"].items()
    }


def _expected_bytes(m):
    """Bytes of the arrays a format-2 manifest announces (None for format 1)."""
    if m["format"] != FORMAT:
        return None
    n = m["n_samples"]
    return sum(
        n * math.prod(v["shape"]) * np.dtype(v["dtype"]).itemsize for v in m["series"].values()
    )


def _read_npz(fh, path, m, archive_bytes):
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        problem = f"is not a readable .npz archive ({exc}); empty or truncated?"
        raise ResultError(path, problem) from None
    with zf:
        infos = {i.filename.removesuffix(".npy"): i for i in zf.infolist()}
        if set(infos) != set(m["series"]):
            missing = sorted(set(m["series"]) - set(infos))
            extra = sorted(set(infos) - set(m["series"]))
            raise ResultError(
                path, f"does not match its manifest: missing series {missing}, unlisted {extra}"
            )
        expected = _expected_bytes(m)
        cap = (expected if expected is not None else 2 * archive_bytes) + _SLACK
        total = sum(i.file_size for i in infos.values())
        if total > cap:
            raise ResultError(
                path,
                f"would inflate to {format_bytes(total)}, more than the {format_bytes(cap)} its "
                f"manifest allows (damaged, or a zip bomb); not read",
            )
        return {name: _read_member(zf, info, path, name) for name, info in infos.items()}


def _read_member(zf, info, path, name):
    fmt = np.lib.format
    try:
        with zf.open(info) as f:
            version = fmt.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = fmt.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = fmt.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy version {version}")
            if dtype.hasobject:
                raise ResultError(path, f"series {name!r} holds Python objects; not read")
            count = math.prod(shape)
            nbytes = count * dtype.itemsize
            if nbytes > info.file_size:
                raise ResultError(
                    path,
                    f"series {name!r} announces {shape} {dtype} ({format_bytes(nbytes)}) in "
                    f"{format_bytes(info.file_size)}; damaged",
                )
            flat = np.empty(count, dtype)
            buf = memoryview(flat.view(np.uint8))
            got = 0
            while got < nbytes:
                k = f.readinto(buf[got:])
                if not k:
                    raise ResultError(path, f"series {name!r} is truncated")
                got += k
            return flat.reshape(shape, order="F" if fortran else "C")
    except ResultError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, OSError, TypeError) as exc:
        raise ResultError(path, f"series {name!r} is damaged ({exc})") from None


def _check_data(path, m, data):
    n = m["n_samples"]
    if "t" not in data:
        raise ResultError(path, "has no series 't'")
    for k, a in data.items():
        if a.ndim == 0 or len(a) != n:
            got = "a scalar" if a.ndim == 0 else f"{len(a)} samples"
            raise ResultError(path, f"series {k!r} has {got}, the manifest says n_samples = {n}")
        spec = m["series"].get(k)
        if m["format"] == FORMAT and (
            np.dtype(spec["dtype"]) != a.dtype or list(a.shape[1:]) != spec["shape"]
        ):
            raise ResultError(
                path,
                f"series {k!r} is {a.dtype} {a.shape[1:]}, the manifest says "
                f"{spec['dtype']} {tuple(spec['shape'])}",
            )


def _read_committed(directory):
    mpath, dpath = directory / MANIFEST, directory / DATA
    m = _read_manifest(mpath)
    try:
        fh = open(dpath, "rb")
    except FileNotFoundError:
        raise ResultError(dpath, "is missing (manifest.json is there)") from None
    with fh:
        size = fh.seek(0, 2)
        fh.seek(0)
        if m["format"] == FORMAT:
            m = _matching_manifest(directory, m, fh, size)
            fh.seek(0)
        data = _read_npz(fh, dpath, m, size)
    _check_data(dpath, m, data)
    return Results(data, _info(m), m)


def _matching_manifest(directory, m, fh, size):
    """``m`` if the open data file is the one it describes, else the journal's manifest."""
    rec = m["data"]
    digest = file_digest(fh) if size == rec["bytes"] else (size, None)
    if digest == (rec["bytes"], rec["sha256"]):
        return m
    journal = directory / STAGE / MANIFEST  # a commit in progress
    with contextlib.suppress(FileNotFoundError, ResultError):
        alt = _read_manifest(journal)
        d = alt.get("data", {})
        if digest[1] is None and size == d.get("bytes"):
            fh.seek(0)
            digest = file_digest(fh)
        if digest == (d.get("bytes"), d.get("sha256")):
            return alt
    raise _Torn(
        directory / DATA,
        f"is not the file manifest.json describes ({size} bytes vs {rec['bytes']}, or a "
        f"different sha256): the two come from different writes",
    )


def _load_committed(directory):
    for attempt in range(_RETRIES):
        try:
            return _read_committed(directory)
        except _Torn as exc:
            last = exc
        except FileNotFoundError as exc:  # replaced while we read: try again
            last = ResultError(directory, f"changed while being read ({exc})")
        time.sleep(0.005 * 2**attempt)
    raise ResultError(last.path, f"{last.problem}; damaged, or written by two processes at once")


def _load_complete(directory):
    newest = None
    for d in (directory, directory / PREVIOUS):
        if (d / MANIFEST).is_file():
            res = _load_committed(d)
            newest = newest or res.status
            if res.status == "complete":
                return res
    note = f" (the committed one is {newest!r})" if newest else ""
    raise ResultError(directory, f"holds no complete result{note}")


def _load_partial(directory):
    last = None
    for attempt in range(_RETRIES):
        holder = writer_active(directory)
        try:
            return _read_partial(directory, holder)
        except FileNotFoundError as exc:
            last = exc
        except ResultError as exc:
            if holder is None:
                raise
            last = exc  # the writer replaced the checkpoint under us
        time.sleep(0.005 * 2**attempt)
    if isinstance(last, ResultError):
        raise last
    raise ResultError(directory, "holds no checkpoint of a run (no .partial/)")


def _read_partial(directory, holder):
    """The checkpoint in ``directory/.partial``; ``holder``: its live writer, or None."""
    pdir = directory / PARTIAL
    mpath = pdir / MANIFEST
    m = _read_manifest(mpath, partial=True)
    rows, writer = m.pop("rows"), m.pop("writer", None) or {}
    try:
        rowtype = np.dtype([(k, np.dtype(dt), tuple(shape)) for k, dt, shape in rows["fields"]])
    except (TypeError, ValueError, KeyError) as exc:
        raise ResultError(mpath, f"has no valid 'rows' record ({exc})") from None
    if "t" not in rowtype.names or rowtype.itemsize == 0:
        raise ResultError(mpath, "its rows have no series 't'")
    path = pdir / ROWS
    committed = committed_rows(pdir)
    n = min(committed, path.stat().st_size // rowtype.itemsize)
    table = np.fromfile(path, dtype=rowtype, count=n)
    bad = np.flatnonzero(np.diff(table["t"]) <= 0)  # a system crash may leave a zero tail
    if bad.size:
        n, table = int(bad[0]) + 1, table[: int(bad[0]) + 1]
    data = {k: np.ascontiguousarray(table[k]) for k in rowtype.names}
    m["n_samples"], m["t_end"] = n, float(data["t"][-1]) if n else 0.0
    if n < committed:
        m["message"] = (
            f"{m.get('message') or ''} {committed - n} of the {committed} committed rows "
            f"were lost (system crash?)"
        ).strip()
    _check_data(path, m, data)
    if holder is None and m.get("status") == "running":
        m["status"] = "interrupted"
        m["message"] = (
            f"the run (pid {writer.get('pid')} on {writer.get('host')}) stopped at "
            f"t = {m['t_end']:.6g} s without saving (killed?); this is its last checkpoint"
        )
    return Results(data, _info(m), m)
