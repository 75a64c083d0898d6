"""Figures of a Monte Carlo campaign: percentile envelopes over time
(:func:`plot_envelopes`), the metrics' histograms against the requirements with each
percentile's confidence bound and verdict (:func:`plot_histograms`), the tornado plot of
the sensitivities (:func:`dqspace.scenarios.figures.campaign_sensitivity.plot_sensitivity`),
all written from a campaign directory (:func:`plot_montecarlo`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..campaigns.confidence import MET
from ..campaigns.montecarlo import (
    ENVELOPE_SERIES,
    envelopes,
    load_envelope_series,
    read_summary,
)
from ..campaigns.verdicts import judge_campaign, overall
from ..sim.metrics import DEFAULT_TRANSIENT, METRICS
from ..store.sweep_store import load_sweep
from .campaign_sensitivity import plot_sensitivity
from .common import (
    LIMIT_STYLE,
    VERDICT_COLORS,
    campaign_figure,
    legend,
    log_view,
    plain_ticks,
    save,
)
from .units import NOT_MEASURED, format_number, to_display

__all__ = ["plot_envelopes", "plot_histograms", "plot_montecarlo", "verdict_text"]

_ENVELOPE_LABELS = {
    "base_pos_err_max": "base position error,\nlargest axis",
    "base_att_err_max": "base attitude\nerror angle",
    "ee_max": "end-effector\n|error|",
}


def plot_envelopes(
    env: Mapping, requirements: Mapping, *, name="", n_runs=None, verdicts=(), transient=None
) -> Figure:
    """Percentile bands over time of a campaign
    (:func:`dqspace.scenarios.campaigns.montecarlo.envelopes`): min-max shaded, P50 / P95 /
    P99 as solid / dashed / dash-dot lines, on log axes with the requirements ``{metric:
    Requirement or (op, limit, percentile)}`` dotted; the end-effector panel hatches the
    transient its metric leaves out.  ``verdicts``: the campaign's requirement rows
    (:func:`dqspace.scenarios.campaigns.verdicts.judge_campaign`), stated above their
    panels.  ``transient`` [s]: the campaign's ``metrics.transient`` (default 2 s)."""
    judged = {r["metric"]: r for r in verdicts}
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
            _, limit, pct = tuple(requirements[m])[:3]
            lim = to_display(limit, si, kind=m)[0]
            ax.axhline(
                lim,
                **LIMIT_STYLE,
                gid="requirement",
                label=f"requirement ≤ {format_number(lim)} {unit}\nat P{pct:g}",
            )
            if m in judged:
                parts.append("the runs' maxima " + verdict_text(judged[m], unit, m))
            else:
                parts.append(
                    f"requirement ≤ {format_number(lim)} {unit} at P{pct:g} of the runs' maxima"
                )
            extra.append(lim)
        if m == "ee_max" and len(t):
            tr = DEFAULT_TRANSIENT if transient is None else float(transient)
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
        color = VERDICT_COLORS.get(judged[m]["status"], "k") if m in judged else "k"
        ax.set_title("; ".join(parts), loc="left", fontsize="small", color=color)
        ax.grid(True, alpha=0.3)
        legend(ax)
    axes[-1, 0].set_xlabel("time [s]")
    plain_ticks(fig)
    return fig


def verdict_text(row: Mapping, unit: str, kind: str) -> str:
    """``MET: P99 ≤ 1 mm at 95 % (upper bound 0.82 mm, 299 runs)`` of a requirement row
    (:func:`dqspace.scenarios.campaigns.verdicts.judge_campaign`), in display units."""
    m, op = row["metric"], {"<=": "≤", ">=": "≥"}.get(row["op"], row["op"])
    si = METRICS[m][0]
    limit = format_number(to_display(row["limit"], si, kind=kind)[0])
    head = f"{row['status']}: P{row['percentile']:g} {op} {limit} {unit}"
    head += f" at {100 * row['confidence']:g} %"
    missing = row.get("n_missing") or 0
    runs = f"{row['n']} runs" + (f", {missing} not measured" if missing else "")
    if row.get("bound") is None:
        if missing and row["n"] + missing >= row["min_runs"]:
            return f"{head} ({runs}: the bound falls on a run not measured)"
        return f"{head} ({runs}: too few for a bound, {row['min_runs']} needed)"
    side = "upper" if row["op"] == "<=" else "lower"
    bound = format_number(to_display(row["bound"], si, kind=kind)[0])
    return f"{head} ({side} bound {bound} {unit}, {runs})"


#: panels per row of :func:`plot_histograms` (a capture scenario has a dozen requirements)
HISTOGRAM_COLUMNS = 4


def plot_histograms(rows: Mapping, requirement_rows: Sequence[Mapping], *, name="", n=None):
    """A histogram per required metric (display units) with its limit (dashed, or said to
    be off scale), the sample percentile the requirement is judged at (solid) and its
    confidence bound (dash-dot); the verdict (MET / NOT MET / UNDECIDED, coloured) above
    each panel and the overall one in the title.  ``requirement_rows``: the rows of
    :func:`dqspace.scenarios.campaigns.verdicts.judge_campaign`."""
    req = list(requirement_rows)
    if not req:
        raise ValueError("histograms: no requirements")
    ncols = min(len(req), HISTOGRAM_COLUMNS)  # rows of at most this many panels
    nrows = -(-len(req) // ncols)
    fig = Figure(figsize=(4.6 * ncols, 3.9 * nrows), layout="constrained")
    axes = list(fig.subplots(nrows, ncols, squeeze=False).flat)
    for ax in axes[len(req) :]:  # the last row's empty places
        ax.remove()
    for ax, r in zip(axes, req, strict=False):
        m = r["metric"]
        si = METRICS[m][0]
        raw = np.asarray(rows[m], float)
        values, unit = to_display(raw[np.isfinite(raw)], si, kind=m)
        limit, _ = to_display(r["limit"], si, kind=m)
        value = r["value"]  # NaN, or None from the file: no run measured it
        at = float("nan") if value is None else to_display(float(value), si, kind=m)[0]
        ax.hist(values, bins=min(30, max(5, len(values) // 5)), color="0.7", edgecolor="0.2")
        op = {"<=": "≤", ">=": "≥"}.get(r["op"], r["op"])
        req_label = f"requirement {op} {format_number(limit)} {unit}"
        top = float(values.max()) if values.size else 0.0
        if limit <= 3.0 * top:
            ax.axvline(limit, color="k", ls="--", lw=1.8, label=req_label, gid="requirement")
        else:  # far off: drawing it would squash the histogram
            ax.plot([], [], color="k", ls="--", lw=1.8, label=req_label + " (off scale)")
        pct = f"P{r['percentile']:g}"
        if at == at:
            label = f"{pct} = {format_number(at)} {unit}"
            ax.axvline(at, color="C0", lw=1.8, ls="-", label=label, gid="percentile")
        else:  # not measured in any run: no line at 0
            ax.plot([], [], color="C0", lw=1.8, label=f"{pct}: {NOT_MEASURED} in any run")
        side = "upper" if r["op"] == "<=" else "lower"
        conf = f"{100 * r['confidence']:g} %"
        if r.get("bound") is not None:
            b = to_display(r["bound"], si, kind=m)[0]
            rank = r[f"{side}_rank"]
            ax.axvline(
                b,
                color="C3",
                lw=1.8,
                ls="-.",
                gid="bound",
                label=f"{pct} {side} bound at {conf} = {format_number(b)} {unit}\n"
                f"(run {rank} of {r['n'] + (r.get('n_missing') or 0)} sorted)",
            )
        else:
            missing = r.get("n_missing") or 0
            runs = f"{r['n']} runs" + (f", {missing} not measured" if missing else "")
            ax.plot([], [], color="C3", ls="-.", label=f"no {side} bound at {conf}: {runs}")
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.set_xlabel(f"{m} [{unit}]")
        ax.set_ylabel("runs [-]")
        ax.set_title(
            verdict_text(r, unit, m).replace(" (", "\n(", 1),
            loc="left",
            fontsize="small",
            color=VERDICT_COLORS.get(r["status"], "k"),
            fontweight="bold",
        )
        ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.28), frameon=False)
    status = overall(req)
    fig.suptitle(
        f"{name}: Monte Carlo, {n} runs; requirements {status}"
        + ("" if status == MET else " (at their confidence)"),
        color=VERDICT_COLORS.get(status, "k"),
    )
    plain_ticks(fig)
    return fig


def _requirement_rows(info, rows):
    """The campaign's requirement rows; a campaign stored before the rows carried their
    bounds and verdicts (no ``status``) is judged again from its runs."""
    req = info["requirements"]
    if all("status" in r for r in req):
        return req
    return judge_campaign(rows, {r["metric"]: (r["op"], r["limit"], r["percentile"]) for r in req})


def plot_montecarlo(
    out: str | os.PathLike,
    formats: Sequence[str] = ("png",),
    figures_dir: str | os.PathLike | None = None,
) -> list[Path]:
    """Write ``montecarlo.<fmt>`` (histograms), ``montecarlo_envelopes.<fmt>`` (when the
    runs stored their series) and ``montecarlo_sensitivity.<fmt>`` (when the campaign has
    sensitivities) of a campaign directory (``montecarlo.json``, the stored variants) into
    ``figures_dir`` (default ``out``)."""
    out = Path(out)
    info = read_summary(out)  # checked: ResultError naming the file
    where = Path(figures_dir) if figures_dir is not None else out
    df = load_sweep(out)
    name, n = info.get("scenario", out.name), info.get("n", len(df))
    names = [c for c in df.columns if isinstance(c, str) and c in METRICS]  # capture's too
    rows = {m: df[m].to_numpy(dtype=float) for m in names}
    req = _requirement_rows(info, rows)
    # every file read (and checked) before any figure is written
    _, series = load_envelope_series(out, list(df["variant"]) if len(df) else None)
    paths = save(plot_histograms(rows, req, name=name, n=n), where / "montecarlo", formats)
    if series:
        spec = {r["metric"]: (r["op"], r["limit"], r["percentile"]) for r in req}
        fig = plot_envelopes(
            envelopes(series),
            spec,
            name=name,
            n_runs=n,
            verdicts=req,
            transient=info.get("transient"),
        )
        paths += save(fig, where / "montecarlo_envelopes", formats)
    sens = info.get("sensitivity") or {}
    if any(e.get("parameters") for e in sens.get("metrics", {}).values()):
        fig = plot_sensitivity(sens, name=name, n=n)
        paths += save(fig, where / "montecarlo_sensitivity", formats)
    return paths
