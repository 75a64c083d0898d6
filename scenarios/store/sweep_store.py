"""Sweep storage: ``<out>/sweep.json``, ``<out>/variants/<id>/metrics.json`` (+ ``result/``,
+ ``series.npz``).

Every file is written atomically by the client as its variant completes, so a sweep
interrupted and restarted with the same ``out`` runs only the variants not yet stored.
One sweep at a time writes an ``out`` (a second one refuses with
:class:`~dqspace.scenarios.store.results.OutputLocked` naming the first).  A stored
``metrics.json`` that is damaged (truncated, not a JSON object, without its ``id``) is
reported (a warning on the ``"dqspace.sweep"`` logger, listing the files) and its variant
run again; :func:`load_sweep` skips and reports such files.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..spec.config import short
from ..spec.variants import override_cell
from .received import (
    NUMBER,
    MapOf,
    Maybe,
    Obj,
    ResultError,
    check_scenario,
    check_structure,
    read_json,
)
from .results import package_version
from .storage import OutputDir, atomic_write_bytes, json_default, json_safe, now

if TYPE_CHECKING:
    import pandas

__all__ = [
    "SWEEP_FORMAT",
    "SERIES_FILE",
    "SweepStore",
    "load_sweep",
    "read_sweep_manifest",
    "read_variant_records",
    "report_damaged",
]

SWEEP_FORMAT = "dqspace-sweep/1"
#: a variant's series over time (``sweep(..., series=f)``), beside its metrics.json
SERIES_FILE = "series.npz"
_MAX_JSON = 64 << 20  # [bytes] a stored JSON file larger than this is damaged
_PLAIN_ID = re.compile(r"[A-Za-z0-9_-]+")
log = logging.getLogger("dqspace.sweep")


# ----------------------------------------------------------------- storage


def _base_doc(scenario):
    """The parts of the base scenario that matter to a sweep's results (not ``outputs``,
    nor the ``requirements`` the results are judged against)."""
    return {k: v for k, v in scenario.config.items() if k not in ("outputs", "requirements")}


def _diff_keys(a, b, prefix=""):
    keys = []
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k), b.get(k)
        if isinstance(x, dict) and isinstance(y, dict):
            keys += _diff_keys(x, y, f"{prefix}{k}.")
        elif x != y:
            keys.append(f"{prefix}{k}")
    return keys


#: a sweep's ``sweep.json`` (its ``base`` is also checked against the scenario schema)
_MANIFEST = Obj(
    {"format": str},
    {"base": dict, "source": Maybe(str), "created": Maybe(str), "package_version": Maybe(str)},
)
#: a variant's ``metrics.json``
_RECORD = Obj(
    {
        "format": str,
        "id": str,
        "overrides": dict,
        "metrics": MapOf(Maybe(NUMBER)),  # null: not measured (earlier versions: NaN)
        "run_time": Maybe(NUMBER),
        "error": Maybe(str),
    },
    {"run_error": Maybe(bool), "traceback": Maybe(str), "created": Maybe(str)},
)


def _read_json(path, what, spec):
    """A stored JSON object of the shape ``spec``; ResultError naming ``path`` if missing
    parts or damaged (:mod:`.received`: bounded, not followed if a link)."""
    path = Path(path)
    doc = read_json(path, what, limit=_MAX_JSON)
    if not isinstance(doc, dict):
        raise ResultError(path, f"is not a {what} (a JSON object expected)")
    if doc.get("format") != SWEEP_FORMAT:
        raise ResultError(path, f"unknown format {short(repr(doc.get('format')), 60)}")
    check_structure(path, doc, spec, what)
    return doc


def _strict_json(doc, indent=2) -> str:
    """``doc`` as strict JSON text (a non-finite number is ``null``: :func:`json_safe`; no
    ``NaN`` or ``Infinity``, which strict parsers refuse)."""
    return json.dumps(json_safe(doc), indent=indent, default=json_default, allow_nan=False)


def _read_record(path):
    """A variant's stored ``metrics.json``, checked; ResultError if damaged.  A metric or
    run time stored as ``null`` (not measured) is read as NaN."""
    rec = _read_json(path, "variant record", _RECORD)
    if rec["id"] != path.parent.name:
        raise ResultError(path, f"holds variant {short(rec['id'], 60)!r}, not {path.parent.name!r}")
    nan = float("nan")
    rec["metrics"] = {k: nan if v is None else v for k, v in rec["metrics"].items()}
    rec["run_time"] = nan if rec["run_time"] is None else rec["run_time"]
    return rec


def read_sweep_manifest(out: str | os.PathLike) -> dict:
    """The checked ``<out>/sweep.json`` of a sweep directory: ``format``, ``created``,
    ``package_version``, ``source``, ``base`` (the base scenario, without ``outputs`` and
    ``requirements``) and ``requirements`` (the base scenario's ``requirements`` table as
    the latest sweep in ``out`` had it; absent from the sweeps of earlier versions).

    Raises
    ------
    FileNotFoundError : no ``sweep.json``
    ResultError (a ValueError) naming the file: damaged, not a JSON object, another format
    """
    path = Path(out) / "sweep.json"
    doc = _read_json(path, "sweep manifest", _MANIFEST)
    if "base" in doc:
        check_scenario(path, doc["base"], "base")
    return doc


def report_damaged(damaged: list, action: str) -> None:
    """Warn (logger ``"dqspace.sweep"``) about the damaged variant files ``damaged`` (their
    ResultErrors) and what is done about them (``action``, e.g. ``"skipped"``); nothing
    when the list is empty."""
    if damaged:
        log.warning(
            "%d damaged variant file%s %s: %s",
            len(damaged),
            "s" * (len(damaged) > 1),
            action,
            "; ".join(str(e) for e in damaged),
        )


class SweepStore:
    """What a sweep keeps in ``out`` (module docstring), locked while it is open.

    Opening (the constructor) locks ``out`` (:class:`OutputLocked` if another sweep
    writes it) and writes ``sweep.json``, or checks that the one there describes the same
    base scenario (ValueError naming where they differ).  Close it with :meth:`close`.

    Parameters
    ----------
    out : path, the sweep directory
    scenario : Scenario, the base scenario

    Attributes
    ----------
    out : Path
    damaged : list of ResultError, the damaged ``metrics.json`` files :meth:`load` met
    """

    def __init__(self, out: str | os.PathLike, scenario) -> None:
        self.out = Path(out)
        self.damaged = []  # ResultError of each damaged metrics.json met
        self.lock = OutputDir(self.out, "sweep").open()
        try:
            self._check_base(scenario)
        except BaseException:
            self.close()
            raise

    def _check_base(self, scenario):
        base = _base_doc(scenario)
        req = json.loads(_strict_json(scenario.config.get("requirements")))
        mpath = self.out / "sweep.json"
        if mpath.exists():
            old = _read_json(mpath, "sweep manifest", _MANIFEST)
            if old.get("base") != json.loads(_strict_json(base)):
                diff = _diff_keys(
                    old.get("base") if isinstance(old.get("base"), dict) else {}, base
                )
                raise ValueError(
                    f"{self.out}: holds a sweep of a different base scenario (differs at "
                    f"{', '.join(diff[:5])}); use another out directory"
                )
            if old.get("requirements") == req:
                return
            doc = {**old, "requirements": req}  # the latest sweep's, which its report judges
        else:
            doc = {
                "format": SWEEP_FORMAT,
                "created": now(),
                "package_version": package_version(),
                "source": scenario.source,
                "base": base,
                "requirements": req,
            }
        atomic_write_bytes(mpath, _strict_json(doc).encode())

    def close(self):
        """Release the sweep directory."""
        self.lock.close()

    def dir(self, vid: str) -> Path:
        """The directory of variant ``vid``: ``<out>/variants/<vid>``."""
        return self.out / "variants" / vid

    def load(self, variant, names, retry_failed, series=False):
        """The stored record of a variant if it answers ``names`` and, with ``series``,
        has its ``series.npz`` (else None: run it)."""
        path = self.dir(variant.id) / "metrics.json"
        try:
            rec = _read_record(path)
        except FileNotFoundError:
            return None
        except ResultError as exc:
            self.damaged.append(exc)
            return None
        if rec.get("run_error"):
            return None if retry_failed else rec
        if rec.get("error") and retry_failed:
            return None
        if not set(names) <= set(rec.get("metrics", {})):
            return None
        if series and not rec.get("run_error") and not (path.parent / SERIES_FILE).is_file():
            return None
        return rec

    def save(self, variant, rec: dict) -> None:
        """Store a finished variant: its ``series.npz`` (if ``rec["series"]``), its full
        result (if ``rec["result"]``), then ``metrics.json`` (each file atomically, the
        record last, so a stored record implies the rest)."""
        doc = {
            "format": SWEEP_FORMAT,
            "id": variant.id,
            "overrides": variant.overrides,
            "metrics": rec["metrics"],
            "run_time": rec["run_time"],
            "error": rec["error"],
            "run_error": rec["error"] is not None and not rec["metrics"],
            "degraded": list(rec.get("degraded") or []),
            "traceback": rec["traceback"],
            "worker": rec.get("worker"),
            "package_version": package_version(),
            "created": now(),
        }
        d = self.dir(variant.id)
        if rec.get("series") is not None:  # before metrics.json: a record implies its series
            buf = io.BytesIO()
            np.savez(buf, **rec["series"])
            atomic_write_bytes(d / SERIES_FILE, buf.getvalue())
        if rec.get("result") is not None:
            rec["result"].save(d / "result")
        atomic_write_bytes(d / "metrics.json", _strict_json(doc).encode())


def read_variant_records(out: str | os.PathLike, ids=None) -> tuple[list, list]:
    """The stored records of a sweep directory's variants: ``(records, damaged)``.

    Parameters
    ----------
    out : the sweep directory
    ids : the variants to read, in this order (default: every stored one, sorted by id);
        a variant without a record is left out

    Returns
    -------
    records : list of dict (``metrics.json`` as :meth:`SweepStore.save` writes it:
        ``id``, ``overrides``, ``metrics``, ``run_time``, ``error``, ``degraded`` (the run's
        degradations, one line each; None in the records of earlier versions, which did
        not keep them), ...)
    damaged : list of str, ``"path: problem"`` of each record skipped (damaged, a link,
        a special file; also reported as :func:`load_sweep` does)
    """
    base = Path(out) / "variants"
    if ids is None:
        paths = sorted(base.glob("*/metrics.json"))
    else:
        # an id is a plain name: one read from a file never leads out of ``variants``
        paths = [base / str(i) / "metrics.json" for i in ids if _PLAIN_ID.fullmatch(str(i))]
    records, damaged = [], []
    for p in paths:
        try:
            rec = _read_record(p)
        except FileNotFoundError:
            continue
        except ResultError as exc:
            damaged.append(exc)
            continue
        degraded = rec.get("degraded")
        ok = isinstance(degraded, list) and all(isinstance(d, str) for d in degraded)
        rec["degraded"] = degraded if ok else None
        records.append(rec)
    report_damaged(damaged, "skipped")
    return records, [str(e) for e in damaged]


def load_sweep(out: str | os.PathLike) -> pandas.DataFrame:
    """Every stored variant of a sweep directory as a DataFrame (no runs).

    Columns: ``variant``, the override keys, the stored metrics, ``run_time``, ``error``.
    Damaged variant files are skipped, listed in a warning (logger ``"dqspace.sweep"``)
    and in ``df.attrs["damaged"]`` (``"path: problem"`` strings).

    Raises
    ------
    ResultError (a ValueError) if ``out`` is not a sweep directory or its
    ``sweep.json`` is damaged.
    """
    import pandas as pd  # heavy: loaded only when a sweep is read

    out = Path(out)
    if not (out / "sweep.json").is_file():
        raise ResultError(out, "not a dqspace sweep directory (no sweep.json)")
    read_sweep_manifest(out)
    records, damaged = read_variant_records(out)
    rows = []
    for rec in records:
        row = {"variant": rec["id"]}
        row.update({k: override_cell(v) for k, v in rec["overrides"].items()})
        row.update(rec["metrics"])
        row.update(run_time=rec["run_time"], error=rec["error"])
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs["damaged"] = damaged
    return df
