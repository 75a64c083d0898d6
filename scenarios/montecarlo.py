"""Monte Carlo campaigns: N runs of a scenario with its ``[dispersions]`` drawn, on Dask.

:func:`montecarlo` draws N override sets (:class:`~dqspace.scenarios.dispersions.Dispersions`,
sample i reproducible alone), runs them with :func:`~dqspace.scenarios.sweep` (the same
machinery: a local cluster or a scheduler, resumable, per-run storage under ``out``) and
reports every metric's 50th, 95th and 99th percentiles and a requirement table (default: base
position <= 1 mm, attitude <= 0.05 deg and end-effector error <= 1 mm, each at the 99th
percentile).  With ``out`` it also writes ``montecarlo.json`` (the campaign: seed, N,
dispersions, percentiles, requirements) and ``montecarlo.png`` (histograms of the required
metrics with their limits).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .dispersions import Dispersions, percentiles, requirement_table
from .metrics import METRICS

__all__ = ["montecarlo", "DEFAULT_REQUIREMENTS"]

#: metric -> (op, limit in the metric's SI unit, percentile)
DEFAULT_REQUIREMENTS = {
    "base_pos_err_max": ("<=", 1e-3, 99),
    "base_att_err_max": ("<=", 0.05, 99),
    "ee_max": ("<=", 1e-3, 99),
}


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
    requirements : {metric: (op, limit, percentile)}, default :data:`DEFAULT_REQUIREMENTS`
    out, workers, scheduler, progress : as :func:`dqspace.scenarios.sweep`
    """
    from .sweep import sweep

    table = scenario.dispersions if dispersions is None else dict(dispersions)
    if not table and dispersions is None:
        raise ValueError(
            f"scenario {scenario.name!r} has no [dispersions] table: nothing to disperse"
        )
    disp = Dispersions.from_table(table, scenario.config)
    seed = scenario.config["scenario"]["seed"] if seed is None else int(seed)
    samples = disp.samples(n, seed)
    df = sweep(
        scenario, samples=samples, out=out, workers=workers, scheduler=scheduler, progress=progress
    )
    rows = {m: df[m].to_numpy(dtype=float) for m in METRICS if m in df}
    req = requirement_table(rows, DEFAULT_REQUIREMENTS if requirements is None else requirements)
    info = {
        "n": int(n),
        "seed": seed,
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
        _histograms(rows, req, out / "montecarlo.png", scenario.name, n)
    return df


def _histograms(rows, req, path, name, n):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .units import format_number, to_display

    fig, axes = plt.subplots(1, len(req), figsize=(4.2 * len(req), 3.4), constrained_layout=True)
    for ax, r in zip(np.atleast_1d(axes), req, strict=True):
        m = r["metric"]
        si = METRICS[m][0]
        values, unit = to_display(rows[m][np.isfinite(rows[m])], si, kind=m)
        limit, _ = to_display(r["limit"], si, kind=m)
        at, _ = to_display(r["value"], si, kind=m)
        ax.hist(values, bins=min(30, max(5, len(values) // 5)), color="0.6", edgecolor="0.2")
        req_label = f"requirement {format_number(limit)} {unit}"
        top = float(values.max()) if values.size else 0.0
        if limit <= 3.0 * top:
            ax.axvline(limit, color="C3", ls="--", lw=1.8, label=req_label)
        else:  # far off: drawing it would squash the histogram
            ax.plot([], [], color="C3", ls="--", lw=1.8, label=req_label + " (off scale)")
        label = f"P{r['percentile']} = {format_number(at)} {unit}"
        ax.axvline(at, color="C0", lw=1.8, label=label)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel(f"{m} [{unit}]")
        ax.set_ylabel("runs")
        ax.set_title("PASS" if r["ok"] else "FAIL", loc="left", fontsize="small")
        ax.legend(fontsize="small", loc="upper right")
    fig.suptitle(f"{name}: Monte Carlo, {n} runs")
    fig.savefig(path, dpi=130)
    plt.close(fig)
