"""Reading a result directory: its manifest and data file checked against each other.

The format and the rules (which result a reader gets, what counts as damaged) are in
:mod:`dqspace.scenarios.store.results`; this module reads the files, checks them and hands
back plain :class:`StoredResult` records (``Results.load`` makes them ``Results``).
Every file is read through :mod:`.received`: nothing is inflated before its size is
checked against the manifest and against the absolute load limit
(``DQSPACE_MAX_LOAD_BYTES``), and the manifest's structure, the series' types and shapes
and the sample times (finite, strictly increasing) are checked before a result is returned.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .lock import writer_active
from .received import (
    ANY,
    MAX_NDIM,
    NUMBER,
    Choice,
    ListOf,
    LoadBudget,
    MapOf,
    Maybe,
    Obj,
    ResultError,
    check_scenario,
    check_structure,
    check_time,
    npz_arrays,
    read_json,
)
from .storage import (
    DATA,
    MANIFEST,
    PARTIAL,
    PREVIOUS,
    ROWS,
    STAGE,
    committed_rows,
    file_digest,
    open_regular,
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
_STATUS = ("complete", "running", "interrupted", "failed")
#: the manifest's keys the readers use, besides those :func:`_check_manifest` checks
#: itself (``format``, ``series``, ``n_samples``, ``data``, ``rows``, ``scenario``)
_MANIFEST = Obj(
    optional={
        "status": Choice(*_STATUS),
        "message": Maybe(str),
        "events": ListOf(
            Obj({"t": NUMBER, "event": str}, {"until": Maybe(NUMBER), "ticks": Maybe(int)})
        ),
        "degraded": ListOf(str),
        "degradations": ListOf(
            Obj(
                {"kind": str},
                {
                    "label": Maybe(str),
                    "duration": Maybe(NUMBER),
                    "episodes": int,
                    "intervals": ListOf(ListOf(NUMBER, length=2)),
                },
            )
        ),
        "metrics": MapOf(NUMBER),
        "metric_units": MapOf(str),
        "system": Maybe(
            Obj(
                optional={
                    "thrusters": Maybe(
                        ListOf(
                            Obj(
                                optional={
                                    "name": Maybe(str),
                                    "max_thrust": NUMBER,
                                    "min_impulse_bit": NUMBER,
                                }
                            )
                        )
                    ),
                    "wheel_max_speed_rpm": Maybe(ListOf(NUMBER)),
                    "wheel_max_torque": Maybe(ListOf(NUMBER)),
                    "vscmg_limits": Maybe(MapOf(ListOf(NUMBER))),
                    **dict.fromkeys(
                        ("steering", "scene", "plant_model", "arm", "plant"), Maybe(dict)
                    ),
                }
            )
        ),
        "machine": MapOf(ANY),
        "dependencies": MapOf(Maybe(str)),
        "writer": Maybe(dict),
        **dict.fromkeys(
            ("t_end", "wall_time", "loop_time", "real_time_factor", "loop_real_time_factor"),
            Maybe(NUMBER),
        ),
        **dict.fromkeys(("source", "created", "updated", "package_version", "python"), Maybe(str)),
        "seed": Maybe(int),
    }
)
_RETRIES = 6  # reads of a pair that a writer is replacing
_SLACK = 1 << 20  # [bytes] allowance over the announced size of an archive


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
    source : Path of the data file read (``result.npz``, or a checkpoint's ``rows.bin``)
    """

    data: dict
    info: dict
    manifest: dict
    source: Path | None = None

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
    m = read_json(path, "result manifest", limit=_MAX_MANIFEST)
    metrics = m.get("metrics") if isinstance(m, dict) else None
    if isinstance(metrics, dict):  # written as null: a metric not measured is NaN again
        m["metrics"] = {k: float("nan") if v is None else v for k, v in metrics.items()}
    _check_manifest(Path(path), m, partial)
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
                dt = np.dtype(v["dtype"])
            except (TypeError, ValueError, SyntaxError):
                raise ResultError(path, f"series {k!r}: unknown dtype {v['dtype']!r}") from None
            if dt.kind not in "biuf" or dt.subdtype is not None or len(v["shape"]) >= MAX_NDIM:
                raise ResultError(path, f"series {k!r}: not a series of numbers ({dt})")
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
    check_structure(path, m, _MANIFEST, "result manifest")
    if "scenario" in m:
        check_scenario(path, m["scenario"], "scenario")


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
    def check_members(names):
        if names != set(m["series"]):
            missing = sorted(set(m["series"]) - names)
            extra = sorted(names - set(m["series"]))
            raise ResultError(
                path, f"does not match its manifest: missing series {missing}, unlisted {extra}"
            )

    expected = _expected_bytes(m)
    cap = (expected if expected is not None else 2 * archive_bytes) + _SLACK
    return npz_arrays(
        fh, path, LoadBudget(), check_members=check_members, cap=(cap, "its manifest allows")
    )


def _check_data(path, m, data):
    n = m["n_samples"]
    if "t" not in data:
        raise ResultError(path, "has no series 't'")
    check_time(path, data["t"])
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
    return StoredResult(data, _info(m), m, dpath)


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


def _rowtype(mpath, rows):
    """The checkpoint's row type (its ``rows`` record), checked: numbers only, ``t`` in."""
    try:
        fields = [(k, np.dtype(dt), tuple(shape)) for k, dt, shape in rows["fields"]]
        for k, dt, shape in fields:
            if dt.kind not in "biuf" or dt.subdtype is not None or len(shape) >= MAX_NDIM:
                raise ValueError(f"series {k!r} is {dt} {shape}, not a series of numbers")
        rowtype = np.dtype(fields)
    except (TypeError, ValueError, KeyError, SyntaxError) as exc:
        raise ResultError(mpath, f"has no valid 'rows' record ({exc})") from None
    if "t" not in rowtype.names or rowtype.itemsize == 0:
        raise ResultError(mpath, "its rows have no series 't'")
    return rowtype


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
    rowtype = _rowtype(mpath, rows)
    path = pdir / ROWS
    try:
        committed = committed_rows(pdir)
        fh = open_regular(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        where = exc.filename or path
        raise ResultError(where, f"cannot be read ({exc.strerror or exc})") from None
    with fh:
        n = max(0, min(committed, os.fstat(fh.fileno()).st_size // rowtype.itemsize))
        LoadBudget().check(n * rowtype.itemsize, path, "would read")
        table = np.fromfile(fh, dtype=rowtype, count=n)
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
    return StoredResult(data, _info(m), m, path)
