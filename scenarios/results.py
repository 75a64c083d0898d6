"""Simulation results: time series in ``result.npz`` plus a JSON manifest, written atomically.

Format (a directory):

``result.npz``
    One array per series, first axis time; ``t`` [s] is always present.
    ``numpy.load(path)`` opens it; :meth:`Results.to_dataframe` flattens it
    for pandas and :meth:`Results.to_csv` writes ``result.csv``.
``manifest.json``
    ``{"format": "dqspace-result/1", "status": "complete" | "running" |
    "interrupted" | "failed", "package_version", "seed", "scenario" (the
    resolved scenario, as a dict), "series": {name: {"unit", "columns",
    "description"}}, "n_samples", "t_end", "message", "created", "updated",
    "events": [...]}``.

Every write goes to a temporary file in the same directory, is flushed and
fsync'ed, then renamed over the old file (``os.replace``): a crash or an
exception in the middle of a write leaves the previous file intact.  The
runner checkpoints during a run, so an interrupted run keeps what it had
computed, marked ``"interrupted"``.
"""

import contextlib
import datetime as _dt
import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np

__all__ = ["SeriesInfo", "Results", "atomic_write_bytes", "package_version"]

FORMAT = "dqspace-result/1"


def package_version():
    """Installed dqspace version (``"unknown"`` when not installed)."""
    try:
        return metadata.version("dqspace")
    except metadata.PackageNotFoundError:
        return "unknown"


def atomic_write_bytes(path, data):
    """Write ``data`` to ``path`` atomically (temp file, flush, fsync, ``os.replace``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename durable
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


@dataclass(frozen=True)
class SeriesInfo:
    """Metadata of one time series: unit, column names, description."""

    unit: str
    columns: tuple = ()
    description: str = ""


def _now():
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


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
    def t(self):
        """Sample times (N,) [s]."""
        return self.data["t"]

    @property
    def status(self):
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
    def save(self, directory):
        """Write ``result.npz`` then ``manifest.json`` into ``directory``, each atomically."""
        directory = Path(directory)
        n = len(self.data["t"]) if "t" in self.data else 0
        for name, arr in self.data.items():
            if len(arr) != n:
                raise ValueError(f"series {name!r} has {len(arr)} samples, t has {n}")
        buf = io.BytesIO()
        np.savez(buf, **{k: np.asarray(v) for k, v in self.data.items()})
        atomic_write_bytes(directory / "result.npz", buf.getvalue())
        m = dict(self.manifest)
        m.setdefault("format", FORMAT)
        m.setdefault("created", _now())
        m["updated"] = _now()
        m.setdefault("package_version", package_version())
        m["n_samples"] = int(n)
        m["t_end"] = float(self.data["t"][-1]) if n else 0.0
        m["series"] = {
            k: {"unit": i.unit, "columns": list(i.columns), "description": i.description}
            for k, i in self.info.items()
        }
        self.manifest = m
        text = json.dumps(m, indent=2, sort_keys=True, default=_json_default)
        atomic_write_bytes(directory / "manifest.json", text.encode())
        return directory

    @classmethod
    def load(cls, directory):
        """Read a result directory written by :meth:`save`."""
        directory = Path(directory)
        mpath, dpath = directory / "manifest.json", directory / "result.npz"
        if not mpath.is_file() or not dpath.is_file():
            raise ValueError(
                f"{directory} is not a dqspace result (needs manifest.json and result.npz)"
            )
        manifest = json.loads(mpath.read_text())
        if manifest.get("format") != FORMAT:
            raise ValueError(f"{mpath}: unknown format {manifest.get('format')!r}")
        with np.load(dpath) as z:
            data = {k: z[k] for k in z.files}
        info = {
            k: SeriesInfo(v["unit"], tuple(v["columns"]), v.get("description", ""))
            for k, v in manifest.get("series", {}).items()
        }
        return cls(data, info, manifest)

    # ------------------------------------------------------- exports
    def columns(self):
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

    def to_dataframe(self):
        """A pandas DataFrame with one column per scalar component (needs pandas)."""
        import pandas as pd

        names, values = self.columns()
        return pd.DataFrame(values, columns=names)

    def to_csv(self, path):
        """Write every series as CSV columns (header: ``name.component``), atomically."""
        names, values = self.columns()
        buf = io.StringIO()
        buf.write(",".join(names) + "\n")
        np.savetxt(buf, values, delimiter=",", fmt="%.17g")
        atomic_write_bytes(path, buf.getvalue().encode())
        return Path(path)


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
