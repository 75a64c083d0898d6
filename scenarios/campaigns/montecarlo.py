"""Monte Carlo campaigns: N runs of a scenario with its ``[dispersions]`` drawn, on Dask.

:func:`montecarlo` draws N override sets
(:class:`~dqspace.scenarios.spec.dispersions.Dispersions`, sample i reproducible alone), runs
them with :func:`~dqspace.scenarios.campaigns.sweep.sweep` (the same machinery: a local
cluster or a scheduler, resumable, per-run storage under ``out``) and reports every metric's
50th, 95th and 99th percentiles and a requirement table (:func:`scenario_requirements`: the
scenario's ``requirements`` table when it has one, else :data:`DEFAULT_REQUIREMENTS`: base
position <= 1 mm, attitude <= 0.05 deg and end-effector error <= 1 mm, each at the 99th
percentile; both defined in :mod:`dqspace.scenarios.spec.requirements`).

With ``out`` each run also keeps its errors over time, decimated to
:data:`ENVELOPE_SAMPLES` bins (:func:`envelope_series`: the largest value in each bin, so
the series' maximum is the run's metric), in ``<out>/variants/<id>/series.npz``, and the
campaign writes ``montecarlo.json`` (seed, N, dispersions, percentiles, requirements).
The figures, ``montecarlo.png`` (histograms of the required metrics with their limits)
and ``montecarlo_envelopes.png`` (percentile bands over time, :func:`envelopes`), are drawn
from those files by :func:`dqspace.scenarios.figures.campaign_plots.plot_montecarlo`:
``dqspace montecarlo`` does so after the campaign (unless ``--no-plots``) and
``dqspace plot <out>`` redraws them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..sim.metrics import METRICS
from ..spec import requirements as spec_requirements
from ..spec.dispersions import Dispersions, percentiles, requirement_table
from ..spec.requirements import DEFAULT_REQUIREMENTS
from ..store.sweep_store import SERIES_FILE
from .sweep import sweep

__all__ = [
    "montecarlo",
    "DEFAULT_REQUIREMENTS",
    "scenario_requirements",
    "ENVELOPE_SERIES",
    "ENVELOPE_SAMPLES",
    "envelope_series",
    "load_envelope_series",
    "envelopes",
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


# ------------------------------------------------------------------ requirements


def scenario_requirements(config: Mapping | None) -> dict:
    """The requirements ``{metric: (op, limit, percentile)}`` of a resolved scenario:
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
    series file (failed runs) are left out."""
    base = Path(out) / "variants"
    if variants is None:
        variants = sorted(p.parent.name for p in base.glob(f"*/{SERIES_FILE}"))
    ids, series = [], []
    for vid in variants:
        path = base / str(vid) / SERIES_FILE
        if not path.is_file():
            continue
        with np.load(path, allow_pickle=False) as z:
            series.append({k: np.asarray(z[k], float) for k in z.files})
        ids.append(str(vid))
    return ids, series


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
):
    """Run a Monte Carlo campaign; returns the sweep's DataFrame (one row per run) with
    ``df.attrs["montecarlo"]`` = {n, seed, dispersions, percentiles, requirements}.

    Parameters
    ----------
    scenario : Scenario (its ``dispersions`` table is used unless ``dispersions`` is given;
        an explicit empty table varies only each run's ``scenario.seed``: its noise)
    n : number of runs
    seed : root seed of the draws (default: ``scenario.seed``)
    requirements : {metric: (op, limit, percentile)}, default
        :func:`scenario_requirements` of the scenario
    out, workers, scheduler, progress : as :func:`dqspace.scenarios.campaigns.sweep.sweep`;
        with ``out`` every run also stores :func:`envelope_series` and the campaign
        ``montecarlo.json`` (the figures: ``plot_montecarlo(out)``, module docstring)
    """
    table = scenario.dispersions if dispersions is None else dict(dispersions)
    if not table and dispersions is None:
        raise ValueError(
            f"scenario {scenario.name!r} has no [dispersions] table: nothing to disperse"
        )
    disp = Dispersions.from_table(table, scenario.config)
    seed = scenario.config["scenario"]["seed"] if seed is None else int(seed)
    samples = disp.samples(n, seed)
    df = sweep(
        scenario,
        samples=samples,
        out=out,
        workers=workers,
        scheduler=scheduler,
        progress=progress,
        series=envelope_series if out is not None else None,
    )
    rows = {m: df[m].to_numpy(dtype=float) for m in METRICS if m in df}
    if requirements is None:
        requirements = scenario_requirements(scenario.config)
    req = requirement_table(rows, requirements)
    info = {
        "n": int(n),
        "seed": seed,
        "scenario": scenario.name,
        "dispersions": table,
        "percentiles": {m: percentiles(v) for m, v in rows.items()},
        "requirements": req,
        "n_failed": int(df["error"].notna().sum()),
    }
    df.attrs["montecarlo"] = info
    if out is not None:
        out = Path(out)
        tmp = out / "montecarlo.json.tmp"
        tmp.write_text(json.dumps(info, indent=1, default=float), encoding="utf-8")
        os.replace(tmp, out / "montecarlo.json")
    return df
