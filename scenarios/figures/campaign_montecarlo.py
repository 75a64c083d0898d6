"""Figures of a Monte Carlo campaign: percentile envelopes over time
(:func:`plot_envelopes`), the metrics' histograms against the requirements
(:func:`plot_histograms`), and both written from a campaign directory
(:func:`plot_montecarlo`)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..campaigns.montecarlo import ENVELOPE_SERIES, envelopes, load_envelope_series
from ..sim.metrics import METRICS
from ..store.results import ResultError
from ..store.sweep_store import load_sweep
from .common import (
    LIMIT_STYLE,
    STATUS_COLOR,
    campaign_figure,
    legend,
    log_view,
    plain_ticks,
    save,
    transient,
)
from .units import format_number, to_display

__all__ = ["plot_envelopes", "plot_histograms", "plot_montecarlo"]

_ENVELOPE_LABELS = {
    "base_pos_err_max": "base position error,\nlargest axis",
    "base_att_err_max": "base attitude\nerror angle",
    "ee_max": "end-effector\n|error|",
}


def plot_envelopes(env: Mapping, requirements: Mapping, *, name="", n_runs=None) -> Figure:
    """Percentile bands over time of a campaign
    (:func:`dqspace.scenarios.campaigns.montecarlo.envelopes`): min-max shaded, P50 / P95 /
    P99 as solid / dashed / dash-dot lines, on log axes with the requirements ``{metric:
    (op, limit, percentile)}`` dotted; the end-effector panel hatches the transient its
    metric leaves out."""
    names = [m for m in ENVELOPE_SERIES if m in env]
    if not names:
        raise ValueError("envelopes: no series to draw")
    runs = int(np.nanmax(env[names[0]]["runs"])) if len(env[names[0]]["runs"]) else 0
    title = (
        f"{name}: Monte Carlo envelopes over {runs} runs"
        + (f" of {n_runs}" if n_runs is not None and n_runs != runs else "")
        + "\n(each run decimated to its largest value per bin)"
    )
    fig, axes = campaign_figure(len(names), title, height=2.3, width=10.0, sharex=True)
    for k, m in enumerate(names):
        ax = axes[k, 0]
        e = env[m]
        si, what = ENVELOPE_SERIES[m]
        t = e["t"]
        conv = {
            key: to_display(np.asarray(e[key], float), si, kind=m)[0]
            for key in e
            if key not in ("t", "runs")
        }
        unit = to_display(1.0, si, kind=m)[1]
        pos = {key: np.where(v > 0, v, np.nan) for key, v in conv.items()}
        ax.fill_between(
            t,
            pos["min"],
            pos["max"],
            step="pre",
            color="0.82",
            lw=0,
            label="min to max",
            gid="band_minmax",
        )
        styles = {"p50": ("-", "k"), "p95": ("--", "C0"), "p99": ("-.", "C3")}
        for key, (ls, color) in styles.items():
            if key in pos:
                ax.plot(
                    t,
                    pos[key],
                    drawstyle="steps-pre",
                    ls=ls,
                    color=color,
                    lw=1.4,
                    label=f"P{key[1:]}",
                    gid=key,
                )
        extra = []
        parts = (
            [f"peak P99 {format_number(np.nanmax(conv['p99']))} {unit}"] if "p99" in conv else []
        )
        if m in requirements and requirements[m][0] == "<=":
            op, limit, pct = requirements[m]
            lim = to_display(limit, si, kind=m)[0]
            ax.axhline(
                lim,
                **LIMIT_STYLE,
                gid="requirement",
                label=f"requirement ≤ {format_number(lim)} {unit}\nat P{pct}",
            )
            parts.append(f"requirement ≤ {format_number(lim)} {unit} at P{pct} of the runs' maxima")
            extra.append(lim)
        if m == "ee_max" and len(t):
            tr = transient()
            ax.axvspan(
                0.0,
                min(tr, float(t[-1])),
                facecolor="0.93",
                lw=0,
                zorder=0,
                label=f"t < {format_number(tr)} s: not in ee_max",
                gid="transient",
            )
        ax.set_yscale("log")
        log_view(ax, np.concatenate([pos["min"], pos["max"]]), extra, decades=3.0)
        ax.set_ylabel(f"{_ENVELOPE_LABELS.get(m, what)}\n[{unit}]")
        ax.set_title("; ".join(parts), loc="left", fontsize="small")
        ax.grid(True, alpha=0.3)
        legend(ax)
    axes[-1, 0].set_xlabel("time [s]")
    plain_ticks(fig)
    return fig


def plot_histograms(rows: Mapping, requirement_rows: Sequence[Mapping], *, name="", n=None):
    """A histogram per required metric (display units) with its limit (dashed, or said to
    be off scale) and the percentile the requirement is judged at; PASS / FAIL above."""
    req = list(requirement_rows)
    if not req:
        raise ValueError("histograms: no requirements")
    fig = Figure(figsize=(4.4 * len(req), 3.6), layout="constrained")
    axes = fig.subplots(1, len(req), squeeze=False)[0]
    failed = any(not r["ok"] for r in req)
    for ax, r in zip(axes, req, strict=True):
        m = r["metric"]
        si = METRICS[m][0]
        raw = np.asarray(rows[m], float)
        values, unit = to_display(raw[np.isfinite(raw)], si, kind=m)
        limit, _ = to_display(r["limit"], si, kind=m)
        at, _ = to_display(r["value"], si, kind=m)
        ax.hist(values, bins=min(30, max(5, len(values) // 5)), color="0.7", edgecolor="0.2")
        op = {"<=": "≤", ">=": "≥"}.get(r["op"], r["op"])
        req_label = f"requirement {op} {format_number(limit)} {unit}"
        top = float(values.max()) if values.size else 0.0
        if limit <= 3.0 * top:
            ax.axvline(limit, color="k", ls="--", lw=1.8, label=req_label, gid="requirement")
        else:  # far off: drawing it would squash the histogram
            ax.plot([], [], color="k", ls="--", lw=1.8, label=req_label + " (off scale)")
        ax.axvline(
            at,
            color="C0",
            lw=1.8,
            ls="-",
            label=f"P{r['percentile']} = {format_number(at)} {unit}",
            gid="percentile",
        )
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel(f"{m} [{unit}]")
        ax.set_ylabel("runs [-]")
        ax.set_title(
            "PASS" if r["ok"] else "FAIL",
            loc="left",
            fontsize="small",
            color="k" if r["ok"] else STATUS_COLOR,
            fontweight="bold",
        )
        ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.28), frameon=False)
    fig.suptitle(
        f"{name}: Monte Carlo, {n} runs" + (" — a requirement FAILS" if failed else ""),
        color=STATUS_COLOR if failed else "k",
    )
    plain_ticks(fig)
    return fig


def plot_montecarlo(
    out: str | os.PathLike,
    formats: Sequence[str] = ("png",),
    figures_dir: str | os.PathLike | None = None,
) -> list[Path]:
    """Write ``montecarlo.<fmt>`` (histograms) and ``montecarlo_envelopes.<fmt>``
    (when the runs stored their series) of a campaign directory (``montecarlo.json``,
    the stored variants) into ``figures_dir`` (default ``out``)."""
    out = Path(out)
    path = out / "montecarlo.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ResultError(path, f"cannot be read as a Monte Carlo summary ({exc})") from None
    where = Path(figures_dir) if figures_dir is not None else out
    df = load_sweep(out)
    name, n = info.get("scenario", out.name), info.get("n", len(df))
    rows = {m: df[m].to_numpy(dtype=float) for m in METRICS if m in df}
    paths = save(
        plot_histograms(rows, info["requirements"], name=name, n=n), where / "montecarlo", formats
    )
    _, series = load_envelope_series(out, list(df["variant"]) if len(df) else None)
    if series:
        req = {r["metric"]: (r["op"], r["limit"], r["percentile"]) for r in info["requirements"]}
        fig = plot_envelopes(envelopes(series), req, name=name, n_runs=n)
        paths += save(fig, where / "montecarlo_envelopes", formats)
    return paths
