"""Monte Carlo campaigns: N runs of a scenario with its ``[dispersions]`` drawn, on Dask.

:func:`montecarlo` draws N override sets
(:class:`~dqspace.scenarios.spec.dispersions.Dispersions`, sample i reproducible alone), runs
them with :func:`~dqspace.scenarios.campaigns.sweep.sweep` (the same machinery: a local
cluster or a scheduler, resumable, per-run storage under ``out``) and reports every metric's
50th, 95th and 99th percentiles and the requirements judged with their confidence
(:func:`scenario_requirements`: the scenario's ``[requirements]`` table over
:data:`DEFAULT_REQUIREMENTS`: base position <= 1 mm, attitude <= 0.05 deg and end-effector
error <= 1 mm, each at the 99th percentile and 95 % confidence; both defined in
:mod:`dqspace.scenarios.spec.requirements`).  Each requirement's row
(:func:`~dqspace.scenarios.campaigns.verdicts.judge_campaign`) holds the sample percentile,
its distribution-free bound at the requirement's confidence
(:mod:`~dqspace.scenarios.campaigns.confidence`), the runs, and the verdict MET / NOT MET /
UNDECIDED; a warning says when the runs are too few to bound the percentile, and how many
are needed.  ``until_confident`` runs :data:`BATCH` runs at a time until every verdict is
decided (or ``n``, the cap, is reached).  The sensitivity of each required metric to each
dispersed parameter (:mod:`~dqspace.scenarios.campaigns.sensitivity`: PRCC and p-values) is
computed from the same runs.

With ``out`` each run also keeps its errors over time, decimated to
:data:`ENVELOPE_SAMPLES` bins (:func:`envelope_series`: the largest value in each bin, so
the series' maximum is the run's metric), in ``<out>/variants/<id>/series.npz``, and the
campaign writes ``montecarlo.json``: ``n`` (runs made), ``seed``, ``scenario``,
``transient`` (its ``metrics.transient`` [s]), ``dispersions``, ``percentiles``,
``requirements`` (the rows), ``verdict`` (the overall one), ``warnings``, ``n_failed``,
``sensitivity`` and, with ``until_confident``, ``{cap, batch, batches, stopped}``
(``stopped``: ``"decided"`` or ``"cap"``).  The figures,
``montecarlo.png`` (histograms of the required metrics with their limits, percentiles and
bounds), ``montecarlo_envelopes.png`` (percentile bands over time, :func:`envelopes`) and
``montecarlo_sensitivity.png`` (a tornado plot of the PRCC), are drawn from those files by
:func:`dqspace.scenarios.figures.campaign_plots.plot_montecarlo`: ``dqspace montecarlo``
does so after the campaign (unless ``--no-plots``) and ``dqspace plot <out>`` redraws them.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..sim.metrics import DEFAULT_TRANSIENT, METRICS
from ..spec import requirements as spec_requirements
from ..spec.dispersions import Dispersions, percentiles
from ..spec.requirements import DEFAULT_REQUIREMENTS
from ..spec.schema_capture import CAPTURE_METRICS
from ..store.received import (
    NUMBER,
    Also,
    Choice,
    ListOf,
    LoadBudget,
    MapOf,
    Maybe,
    Obj,
    ResultError,
    check_structure,
    check_time,
    read_json,
    read_npz,
)
from ..store.storage import atomic_write_bytes, json_safe
from ..store.sweep_store import SERIES_FILE
from .confidence import MET, NOT_MET, UNDECIDED
from .sensitivity import campaign_sensitivity
from .sweep import connect, sweep
from .verdicts import campaign_warnings, judge_campaign, overall

__all__ = [
    "montecarlo",
    "BATCH",
    "DEFAULT_REQUIREMENTS",
    "scenario_requirements",
    "ENVELOPE_SERIES",
    "ENVELOPE_SAMPLES",
    "envelope_series",
    "load_envelope_series",
    "envelopes",
    "SUMMARY_FILE",
    "read_summary",
]

#: what each run keeps over time, named after the metric it bounds -> (unit, description);
#: the maximum of a stored series (over t >= the metrics' transient for ``ee_max``) is the
#: run's metric
ENVELOPE_SERIES = {
    "base_pos_err_max": ("m", "base position error, largest axis |error|"),
    "base_att_err_max": ("deg", "base attitude error angle"),
    "ee_max": ("m", "end-effector position error |error|"),
}
#: bins per run of the stored series
ENVELOPE_SAMPLES = 200
#: runs per batch of a campaign that stops once its verdicts are decided (``until_confident``)
BATCH = 50

log = logging.getLogger("dqspace.montecarlo")


# ------------------------------------------------------------------ requirements


def scenario_requirements(config: Mapping | None) -> dict:
    """The requirements ``{metric: Requirement}`` of a resolved scenario:
    :func:`dqspace.scenarios.spec.requirements.scenario_requirements` with the metrics of a
    closed-loop run (:data:`dqspace.scenarios.sim.metrics.METRICS`).

    Raises
    ------
    ValueError naming the entry of the ``requirements`` table that is wrong.
    """
    return spec_requirements.scenario_requirements(config, METRICS)


# ------------------------------------------------------------------ series over time


def _bin_max(t, y, edges):
    """(n,) the largest finite y in each bin ``(edges[i], edges[i+1]]`` (the first bin
    also holds ``edges[0]``); NaN for a bin without samples."""
    n = len(edges) - 1
    idx = np.clip(np.searchsorted(edges, t, side="left") - 1, 0, n - 1)
    out = np.full(n, np.nan)
    keep = np.isfinite(y)
    np.fmax.at(out, idx[keep], y[keep])
    return out


def envelope_series(res, n: int = ENVELOPE_SAMPLES) -> dict:
    """The errors of a closed-loop run over time, decimated for the envelopes.

    Parameters
    ----------
    res : Results of a closed-loop run
    n : bins over ``[0, scenario.duration]``, at most one per control tick (a run that
        stopped early has NaN after its end)

    Returns
    -------
    dict: ``t`` (n,) the bins' ends [s]; per :data:`ENVELOPE_SERIES` name (n,) the largest
    value in the bin, in the metric's SI unit: ``base_pos_err_max`` [m] (largest axis),
    ``base_att_err_max`` [deg] (angle), ``ee_max`` [m] (norm).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    t = np.asarray(res.t, float)
    sc = res.manifest.get("scenario") or {}
    duration = float((sc.get("scenario") or {}).get("duration", t[-1] if len(t) else 1.0))
    rate = (sc.get("control") or {}).get("rate")
    if rate:  # no more bins than control ticks: every bin holds a sample
        n = min(int(n), max(1, int(round(duration * float(rate)))))
    edges = np.linspace(0.0, duration, int(n) + 1)
    values = {
        "base_pos_err_max": np.abs(np.asarray(res["base_pos_err"], float)).max(axis=1),
        "base_att_err_max": np.degrees(np.linalg.norm(res["base_att_err"], axis=1)),
        "ee_max": np.linalg.norm(res["ee_err"], axis=1),
    }
    out = {"t": edges[1:]}
    out.update({k: _bin_max(t, v, edges) for k, v in values.items()})
    return out


def load_envelope_series(out: str | os.PathLike, variants: Sequence[str] | None = None):
    """The stored series of a campaign: ``(ids, [dict name -> array])`` in ``variants``
    order (default: every ``<out>/variants/*/series.npz``, sorted); runs without a
    series file (failed runs) are left out, and so are links and special files.

    Every file is read within one load limit (:mod:`dqspace.scenarios.store.received`:
    ``DQSPACE_MAX_LOAD_BYTES``) and checked: 1-D series of numbers, as many samples as
    ``t``, ``t`` finite and strictly increasing.

    Raises
    ------
    ResultError (a ValueError) naming a damaged file, or one beyond the load limit
    """
    base = Path(out) / "variants"
    if variants is None:
        variants = sorted(p.parent.name for p in base.glob(f"*/{SERIES_FILE}"))
    ids, series, budget = [], [], LoadBudget()
    for vid in variants:
        path = base / str(vid) / SERIES_FILE
        if path.is_symlink() or not path.is_file():  # links and special files: not read
            continue
        try:
            arrays = read_npz(path, budget)
        except FileNotFoundError:  # removed meanwhile
            continue
        series.append(_checked_series(path, arrays))
        ids.append(str(vid))
    return ids, series


def _checked_series(path, arrays):
    if "t" not in arrays:
        raise ResultError(path, "has no series 't'")
    check_time(path, arrays["t"])
    n = len(arrays["t"])
    for k, a in arrays.items():
        if a.ndim != 1 or len(a) != n:
            raise ResultError(
                path, f"series {k!r} has the shape {a.shape}, not ({n},) as 't'; damaged"
            )
    return {k: a.astype(float) for k, a in arrays.items()}


#: a campaign's summary, in its directory
SUMMARY_FILE = "montecarlo.json"
_REQUIREMENT = Obj(
    {
        "metric": Choice(*METRICS, *CAPTURE_METRICS),
        "op": Choice("<=", ">="),
        "limit": NUMBER,
        "percentile": NUMBER,
    }
)
#: a requirement row with its verdict (rows stored without one are judged again)
_JUDGED = Obj(
    {
        "confidence": NUMBER,
        "n": int,
        "value": Maybe(NUMBER),
        "bound": Maybe(NUMBER),
        "min_runs": Maybe(int),
        "status": Choice(MET, NOT_MET, UNDECIDED),
        "reason": str,
    },
    {
        "upper_rank": Maybe(int),
        "lower_rank": Maybe(int),
        "upper": Maybe(NUMBER),
        "lower": Maybe(NUMBER),
    },
)
_PARAMETER = Obj(
    {"parameter": str, "prcc": NUMBER, "significant": bool},
    {"unit": Maybe(str), "p_value": Maybe(NUMBER)},
)
_SUMMARY = Obj(
    {"n": int, "requirements": ListOf(Also(_REQUIREMENT, "status", _JUDGED))},
    {
        "seed": Maybe(int),
        "scenario": str,
        "dispersions": MapOf(dict),
        "percentiles": MapOf(Obj({q: Maybe(NUMBER) for q in ("50", "95", "99")})),
        "verdict": str,
        "warnings": ListOf(str),
        "n_failed": int,
        "sensitivity": Maybe(
            Obj(
                optional={
                    "significance": NUMBER,
                    "metrics": MapOf(
                        Obj(optional={"parameters": ListOf(_PARAMETER), "note": Maybe(str)})
                    ),
                }
            )
        ),
        "until_confident": Obj({"cap": int, "batch": int, "batches": int, "stopped": str}),
        "transient": Maybe(NUMBER),
    },
)


def read_summary(out: str | os.PathLike) -> dict:
    """The checked ``montecarlo.json`` of a campaign directory (module docstring).

    Raises
    ------
    ResultError (a ValueError) naming the file: missing, damaged, or not of this shape
    """
    path = Path(out) / SUMMARY_FILE
    try:
        doc = read_json(path, "Monte Carlo summary")
    except FileNotFoundError:
        raise ResultError(path, "is missing (not a Monte Carlo directory)") from None
    check_structure(path, doc, _SUMMARY, "Monte Carlo summary")
    return doc


def envelopes(series: Sequence[Mapping], q: Sequence[float] = (50, 95, 99)) -> dict:
    """Percentiles over the runs at each time of the stored series.

    Parameters
    ----------
    series : dicts as :func:`envelope_series` returns (runs with other time grids are
        interpolated onto the longest grid, NaN past their end)
    q : percentiles

    Returns
    -------
    dict name -> {``t`` (n,) [s], ``p<q>`` (n,) for each q, ``min``, ``max`` (n,),
    ``runs`` (n,) the number of runs with a value at that time}; the percentiles ignore
    the runs without a value (NaN), as :func:`numpy.nanpercentile`.
    """
    if not series:
        return {}
    grid = max((np.asarray(s["t"], float) for s in series), key=len)
    out = {}
    for name in ENVELOPE_SERIES:
        rows = []
        for s in series:
            if name not in s:
                continue
            t, y = np.asarray(s["t"], float), np.asarray(s[name], float)
            same = t.shape == grid.shape and np.array_equal(t, grid)
            rows.append(y if same else np.interp(grid, t, y, left=np.nan, right=np.nan))
        if not rows:
            continue
        Y = np.vstack(rows)
        have = np.isfinite(Y).any(axis=0)
        env = {"t": grid, "runs": np.isfinite(Y).sum(axis=0)}
        stats = {f"p{p:g}": lambda a, p=p: np.nanpercentile(a, p, axis=0) for p in q}
        stats.update(min=lambda a: np.nanmin(a, axis=0), max=lambda a: np.nanmax(a, axis=0))
        for key, fn in stats.items():
            col = np.full(grid.shape, np.nan)
            col[have] = fn(Y[:, have])
            env[key] = col
        out[name] = env
    return out


# ------------------------------------------------------------------ the campaign


def _judge(df, requirements):
    names = [m for m in METRICS if m in df]  # then each extra arm's (ee_max_<name> ...)
    names += [c for c in df.columns if isinstance(c, str) and c in METRICS and c not in names]
    rows = {m: df[m].to_numpy(dtype=float) for m in names}
    return rows, judge_campaign(rows, requirements)


def _run_batches(scenario, samples, *, batch, requirements, out, workers, scheduler, progress):
    """``--until-confident``: the samples in batches of ``batch`` on one cluster until every
    requirement is decided (or the samples run out); returns (df, batches, reason)."""
    import pandas as pd  # heavy: loaded when a campaign runs

    series = envelope_series if out is not None else None
    if scheduler is None and workers is None:
        workers = max(1, min(os.cpu_count() or 1, batch, len(samples)))
    parts, stats, reason = [], [], "cap"
    with connect(scheduler, workers) as client:
        for start in range(0, len(samples), batch):
            part = sweep(
                scenario,
                samples=samples[start : start + batch],
                out=out,
                scheduler="synchronous" if client is None else client,
                progress=progress,
                series=series,
            )
            parts.append(part)
            stats.append(part.attrs["sweep"])
            df = pd.concat(parts, ignore_index=True)
            table = _judge(df, requirements)[1]
            log.info(
                "until confident: %d runs: %s",
                len(df),
                ", ".join(f"{r['metric']} {r['status']}" for r in table),
            )
            if overall(table) != UNDECIDED:
                reason = "decided"
                break
    df.attrs["sweep"] = {
        "wall_time": sum(a["wall_time"] for a in stats),
        "n_run": sum(a["n_run"] for a in stats),
        "n_cached": sum(a["n_cached"] for a in stats),
        "n_failed": int(df["error"].notna().sum()),
        "out": stats[-1]["out"],
        "damaged": [d for a in stats for d in a["damaged"]],
    }
    if out is not None:  # each batch's sweep wrote its own rows: the campaign's, all of them
        atomic_write_bytes(Path(out) / "metrics.csv", df.to_csv(index=False).encode())
    return df, len(parts), reason


#: the file that names the campaign an output directory holds (its seed and dispersions)
CAMPAIGN_FILE = "campaign.json"


def claim_campaign_dir(out, seed: int, table: Mapping) -> None:
    """Make ``out`` this campaign's (root ``seed``, dispersion ``table``), or check that it
    is: ValueError when it holds another campaign, whose runs would mix with this one's
    (a longer campaign of the same seed and table extends a shorter one: run i is the
    same).  A directory of runs from before this file existed is checked against its
    ``montecarlo.json``."""
    out = Path(out)
    mine = {"seed": int(seed), "dispersions": dict(table)}
    mine = json.loads(json.dumps(json_safe(mine), allow_nan=False))  # as strict JSON has it
    for name in (CAMPAIGN_FILE, "montecarlo.json"):
        path = out / name
        if not path.is_file():
            continue
        try:
            doc = read_json(path, "campaign record")
        except OSError:  # removed meanwhile
            raise ValueError(f"{path}: unreadable; use another out directory") from None
        except ResultError as exc:
            raise ValueError(f"{exc}; use another out directory") from None
        theirs = {k: doc.get(k) for k in ("seed", "dispersions")} if isinstance(doc, dict) else {}
        if theirs != mine:
            what = [k for k in ("seed", "dispersions") if theirs.get(k) != mine[k]]
            raise ValueError(
                f"{out}: holds another Monte Carlo campaign (a different "
                f"{' and '.join(what) or 'file'}); its runs would mix with this one's: use "
                "another out directory"
            )
        break
    out.mkdir(parents=True, exist_ok=True)
    if not (out / CAMPAIGN_FILE).is_file():
        atomic_write_bytes(
            out / CAMPAIGN_FILE, json.dumps(mine, indent=2, allow_nan=False).encode()
        )


def montecarlo(
    scenario,
    n: int,
    *,
    seed: int | None = None,
    dispersions: Mapping | None = None,
    requirements: Mapping | None = None,
    out: str | os.PathLike | None = None,
    workers: int | None = None,
    scheduler: object = None,
    progress: bool = True,
    until_confident: bool = False,
    batch: int = BATCH,
):
    """Run a Monte Carlo campaign; returns the sweep's DataFrame (one row per run) with
    ``df.attrs["montecarlo"]`` (what ``montecarlo.json`` holds: module docstring).

    Parameters
    ----------
    scenario : Scenario (its ``dispersions`` table is used unless ``dispersions`` is given;
        an explicit empty table varies only each run's ``scenario.seed``: its noise)
    n : number of runs (with ``until_confident``: the most runs)
    seed : root seed of the draws (default: ``scenario.seed``)
    requirements : {metric: Requirement or (op, limit, percentile[, confidence])}, default
        :func:`scenario_requirements` of the scenario
    out, workers, scheduler, progress : as :func:`dqspace.scenarios.campaigns.sweep.sweep`;
        with ``out`` every run also stores :func:`envelope_series` and the campaign
        ``montecarlo.json`` (the figures: ``plot_montecarlo(out)``, module docstring)
    until_confident : run ``batch`` runs at a time (on one cluster) and stop once every
        requirement's verdict is MET or NOT MET at its confidence, or after ``n`` runs.
        Run i is the same whatever the batching, so a campaign that stopped at N runs is
        the first N runs of a longer one.  Stopping when the verdict is decided is a
        sequential test: the chance of a wrong verdict is somewhat above the nominal
        ``1 - confidence``.
    batch : runs per batch with ``until_confident`` (:data:`BATCH`)
    """
    table = scenario.dispersions if dispersions is None else dict(dispersions)
    if not table and dispersions is None:
        raise ValueError(
            f"scenario {scenario.name!r} has no [dispersions] table: nothing to disperse"
        )
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be a positive number of runs, got {batch!r}")
    disp = Dispersions.from_table(table, scenario.config)
    seed = scenario.config["scenario"]["seed"] if seed is None else int(seed)
    if requirements is None:
        requirements = scenario_requirements(scenario.config)
    samples = disp.samples(n, seed)
    if out is not None:
        claim_campaign_dir(out, seed, table)
    if until_confident:
        df, batches, reason = _run_batches(
            scenario,
            samples,
            batch=batch,
            requirements=requirements,
            out=out,
            workers=workers,
            scheduler=scheduler,
            progress=progress,
        )
    else:
        df = sweep(
            scenario,
            samples=samples,
            out=out,
            workers=workers,
            scheduler=scheduler,
            progress=progress,
            series=envelope_series if out is not None else None,
        )
    rows, req = _judge(df, requirements)
    info = {
        "n": len(df),
        "seed": seed,
        "scenario": scenario.name,
        "transient": float(scenario.config.get("metrics", {}).get("transient", DEFAULT_TRANSIENT)),
        "dispersions": table,
        "percentiles": {m: percentiles(v) for m, v in rows.items()},
        "requirements": req,
        "verdict": overall(req),
        "warnings": campaign_warnings(req),
        "n_failed": int(df["error"].notna().sum()),
        "sensitivity": campaign_sensitivity(df, list(table), [r["metric"] for r in req]),
    }
    if until_confident:
        info["until_confident"] = {"cap": int(n), "batch": batch, "batches": batches}
        info["until_confident"]["stopped"] = reason
    df.attrs["montecarlo"] = info
    if out is not None:
        out = Path(out)
        tmp = out / "montecarlo.json.tmp"
        text = json.dumps(json_safe(info), indent=1, default=float, allow_nan=False)
        tmp.write_text(text, encoding="utf-8")  # strict JSON: not measured is null
        os.replace(tmp, out / "montecarlo.json")
    return df
