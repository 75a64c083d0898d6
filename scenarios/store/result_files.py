"""Reading a result directory: its manifest and data file checked against each other.

The format and the rules (which result a reader gets, what counts as damaged) are in
:mod:`dqspace.scenarios.store.results`; this module reads the files, checks them and hands
back plain :class:`StoredResult` records (``Results.load`` makes them ``Results``).
Nothing is inflated before its size is checked against the manifest.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .lock import writer_active
from .storage import (
    DATA,
    MANIFEST,
    PARTIAL,
    PREVIOUS,
    ROWS,
    STAGE,
    committed_rows,
    file_digest,
    format_bytes,
    open_regular,
    read_regular,
)

__all__ = [
    "FORMAT",
    "READABLE",
    "ResultError",
    "SeriesInfo",
    "StoredResult",
    "load_committed",
    "load_complete",
    "load_partial",
    "read_partial",
]

FORMAT = "dqspace-result/2"
READABLE = ("dqspace-result/1", FORMAT)
_MAX_MANIFEST = 64 << 20  # [bytes] a manifest larger than this is not read
_RETRIES = 6  # reads of a pair that a writer is replacing
_SLACK = 1 << 20  # [bytes] allowance over the announced size of an archive


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
class StoredResult:
    """A result as read from disk, its series checked against its manifest.

    Attributes
    ----------
    data : dict name -> ndarray, first axis time (``data["t"]`` [s])
    info : dict name -> SeriesInfo
    manifest : dict (see :mod:`dqspace.scenarios.store.results`)
    """

    data: dict
    info: dict
    manifest: dict

    @property
    def t(self) -> np.ndarray:
        """Sample times (N,) [s]."""
        return self.data["t"]

    @property
    def status(self) -> str:
        """``"complete"``, ``"running"``, ``"interrupted"`` or ``"failed"``."""
        return self.manifest.get("status", "unknown")


# ---------------------------------------------------------------- reading


def _read_manifest(path, partial=False):
    """A checked manifest (``partial``: of a checkpoint, with ``rows`` instead of ``data``)."""
    path = Path(path)
    try:
        text = read_regular(path, _MAX_MANIFEST)
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
    metrics = m.get("metrics")
    if isinstance(metrics, dict):  # written as null: a metric not measured is NaN again
        m["metrics"] = {k: float("nan") if v is None else v for k, v in metrics.items()}
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
        fh = open_regular(dpath)
    except FileNotFoundError:
        raise ResultError(dpath, "is missing (manifest.json is there)") from None
    except OSError as exc:
        raise ResultError(dpath, f"cannot be read ({exc.strerror or exc})") from None
    with fh:
        size = fh.seek(0, 2)
        fh.seek(0)
        if m["format"] == FORMAT:
            m = _matching_manifest(directory, m, fh, size)
            fh.seek(0)
        data = _read_npz(fh, dpath, m, size)
    _check_data(dpath, m, data)
    return StoredResult(data, _info(m), m)


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


def load_committed(directory: Path) -> StoredResult:
    """The committed result of ``directory`` (a reader racing a writer retries a few times).

    Raises
    ------
    ResultError : damaged, or a data file and a manifest of different writes
    FileNotFoundError : no manifest
    """
    for attempt in range(_RETRIES):
        try:
            return _read_committed(directory)
        except _Torn as exc:
            last = exc
        except FileNotFoundError as exc:  # replaced while we read: try again
            last = ResultError(directory, f"changed while being read ({exc})")
        time.sleep(0.005 * 2**attempt)
    raise ResultError(last.path, f"{last.problem}; damaged, or written by two processes at once")


def load_complete(directory: Path) -> StoredResult:
    """The newest complete result of ``directory``: the committed one, else ``previous/``.

    Raises ResultError if neither is complete.
    """
    newest = None
    for d in (directory, directory / PREVIOUS):
        if (d / MANIFEST).is_file():
            res = load_committed(d)
            newest = newest or res.status
            if res.status == "complete":
                return res
    note = f" (the committed one is {newest!r})" if newest else ""
    raise ResultError(directory, f"holds no complete result{note}")


def load_partial(directory: Path) -> StoredResult:
    """The checkpoint of the run in progress in ``directory`` (or of one that was killed).

    Raises ResultError if there is none or it is damaged.
    """
    last = None
    for attempt in range(_RETRIES):
        holder = writer_active(directory)
        try:
            return read_partial(directory, holder)
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


def read_partial(directory: Path, holder: dict | None) -> StoredResult:
    """The checkpoint in ``directory/.partial`` (status ``"interrupted"`` when ``holder``,
    its live writer, is None and the checkpoint says ``"running"``).

    Raises
    ------
    ResultError : damaged
    FileNotFoundError : no checkpoint (or a writer removed it meanwhile)
    """
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
    return StoredResult(data, _info(m), m)
