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
    :func:`dqspace.scenarios.sim.metrics.summarize`), ``"degraded"`` (one-line messages,
    one per kind of degradation, empty when all went well), ``"degradations"`` (the same
    kinds as records with their time intervals, see
    :func:`dqspace.scenarios.sim.metrics.degradations`), ``"wall_time"`` [s],
    ``"real_time_factor"``,
    ``"python"``, ``"dependencies"`` (name -> version or None) and ``"machine"``
    (``arch``, ``processor``, ``cpu_count``, ``hostname``, ``platform``).
    Format ``"dqspace-result/1"`` (no ``data``, ``dtype``, ``shape``) is still read.

**One unit.** The manifest names the size and SHA-256 of the data file it describes, and
:meth:`Results.load` checks them and the length of every series against
``n_samples``: a data file and a manifest of different runs are never returned together.
A reader racing a writer retries a few times (see :mod:`dqspace.scenarios.store.storage` for
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

Modules: this one holds :class:`Results` (the series and manifest of a run, ``load``,
``save``, exports); :mod:`.result_files` reads and checks the files of a directory;
:mod:`.result_writer` writes them (:class:`ResultWriter`, the writer of a run).
"""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .lock import OutputError, OutputLocked, describe, writer_active
from .result_files import (
    FORMAT,
    READABLE,
    ResultError,
    SeriesInfo,
    StoredResult,
    load_committed,
    load_complete,
    load_partial,
    read_partial,
)
from .result_writer import (
    SYNC_EVERY,
    ResultWriter,
    check_series,
    commit_result,
    package_version,
    promote_stale_partial,
)
from .storage import MANIFEST, PARTIAL, OutputDir, atomic_write_bytes

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
    "FORMAT",
    "READABLE",
    "atomic_write_bytes",
    "package_version",
]

_WHICH = ("latest", "complete", "partial")


@dataclass
class Results:
    """Time series of a run and its manifest.

    Attributes
    ----------
    data : dict name -> ndarray, first axis time (``data["t"]`` [s])
    info : dict name -> SeriesInfo
    manifest : dict (see module docstring)
    source : Path of the data file :meth:`load` read (None: a result made in memory);
        errors about the series name it
    """

    data: dict
    info: dict
    manifest: dict = field(default_factory=dict)
    source: Path | None = field(default=None, compare=False, repr=False)

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
        check_series(self.data, self.info)
        with OutputDir(directory, "Results.save").open() as d:
            promote_stale_partial(d)
            self.manifest = commit_result(d, self)
        return directory

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
            return cls._of(load_partial(directory))
        if which == "complete":
            return cls._of(load_complete(directory))
        holder = writer_active(directory)
        if holder is None and (directory / PARTIAL / MANIFEST).is_file():
            with contextlib.suppress(FileNotFoundError):  # a writer just took it over
                res = read_partial(directory, None)
                if len(res.t):  # a killed run's checkpoint, newer than the committed result
                    return cls._of(res)
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
        return cls._of(load_committed(directory))

    @classmethod
    def _of(cls, stored: StoredResult) -> Results:
        return cls(stored.data, stored.info, stored.manifest, stored.source)

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
        import pandas as pd  # heavy: loaded only when asked for

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
