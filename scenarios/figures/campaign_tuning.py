"""Figures of a robust tuning (``dqspace tune``), drawn from its ``tuning.json``.

* ``tuning_history.png`` (:func:`plot_tuning_history`): the objective of every candidate
  against its number (feasible filled, infeasible hollow), the best feasible so far as a
  step line; below, each constraint's margin ``(value - limit) / |limit|`` (<= 0: met) with
  the limit at 0.
* ``tuning_pareto.png`` (:func:`plot_tuning_pareto`): the objective against each
  constraint's judged value (the P99 errors by default), one panel per constraint, feasible
  and infeasible candidates apart, the Pareto front of the two (both minimised) marked,
  the limit drawn, the best design starred.

Values in display units (mm, deg, N s); the tuning's files stay SI.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..sim.metrics import METRICS
from ..spec.config import short
from ..spec.schema_capture import CAPTURE_METRICS
from ..store.received import (
    NUMBER,
    Choice,
    ListOf,
    Maybe,
    Obj,
    ResultError,
    check_structure,
    read_json,
)
from .campaign_sweep import pareto_front
from .common import LIMIT_STYLE, campaign_figure, legend, plain_ticks, save
from .units import format_number, to_display

__all__ = ["plot_tuning", "plot_tuning_history", "plot_tuning_pareto", "read_tuning"]


_CONSTRAINT = Obj(
    {
        "metric": str,
        "op": Choice("<=", ">="),
        "limit": NUMBER,
        "percentile": NUMBER,
        "source": str,
        "value": Maybe(NUMBER),
        "margin": NUMBER,
    },
    {"judged_on": Maybe(str)},
)
_CANDIDATE = Obj(
    {
        "number": int,
        "objective": Maybe(NUMBER),
        "feasible": bool,
        "n_failed": int,
        "constraints": ListOf(_CONSTRAINT),
    }
)
#: what the figures read of ``tuning.json``
_TUNING = Obj(
    {"candidates": ListOf(_CANDIDATE)},
    {
        "settings": Obj(
            optional={
                "objective": Obj(
                    optional={"metric": Choice(*METRICS, *CAPTURE_METRICS), "stat": str}
                )
            }
        ),
        "scenario": Maybe(str),
        "best": Maybe(int),
    },
)


def read_tuning(out: str | os.PathLike) -> dict:
    """The ``tuning.json`` of a tuning directory, checked (ValueError when missing,
    unreadable or damaged; a damaged one: ResultError naming the file and the key)."""
    path = Path(out) / "tuning.json"
    try:
        doc = read_json(path, "tuning summary")
    except FileNotFoundError:
        raise ValueError(f"{out}: no tuning.json (not a `dqspace tune` directory)") from None
    check_structure(path, doc, _TUNING, "tuning summary")
    numbers = {c["number"] for c in doc["candidates"]}
    if doc.get("best") is not None and doc["best"] not in numbers:
        raise ResultError(path, f"best: {doc['best']} is not a candidate's number")
    for c in doc["candidates"]:
        for r in c["constraints"]:
            if r["source"] != "implicit" and r["metric"] not in METRICS:
                raise ResultError(
                    path, f"candidate {c['number']}: unknown metric {short(r['metric'], 60)!r}"
                )
    return doc


def _display(values, metric):
    return to_display(np.asarray(values, dtype=float), METRICS[metric][0], kind=metric)


def _title(doc, what):
    s = doc.get("settings", {})
    obj = s.get("objective", {})
    return (
        f"{doc.get('scenario') or 'tuning'}: {what}; {len(doc['candidates'])} candidates x "
        f"{s.get('n', '?')} runs (same samples, seed {s.get('seed', '?')}), minimise "
        f"{obj.get('metric', '?')} {obj.get('stat', '')}"
    )


def _columns(doc):
    """Arrays over the candidates: number, objective, feasible, and per constraint label
    -> (constraint dict, judged value, margin)."""
    cands = doc["candidates"]
    num = np.array([c["number"] for c in cands], dtype=float)
    obj = np.array([c["objective"] for c in cands], dtype=float)
    feas = np.array([bool(c["feasible"]) for c in cands])
    cons = {}
    for i, c in enumerate(cands):
        for r in c["constraints"]:
            if r["source"] == "implicit" and not any(
                x["n_failed"] for x in cands
            ):  # no failed run anywhere: nothing to show
                continue
            key = r["metric"]
            entry = cons.setdefault(
                key, (r, np.full(len(cands), np.nan), np.full(len(cands), np.nan))
            )
            entry[1][i] = np.nan if r["value"] is None else r["value"]
            entry[2][i] = r["margin"]
    return num, obj, feas, cons


def _judged(r):
    return f"P{r['percentile']:g}" + (" bound" if r.get("judged_on") == "bound" else "")


def _feasibility_scatter(ax, x, y, feas):
    """The candidates at ``(x, y)``: feasible ones filled, infeasible ones as red rings."""
    ax.plot(x[feas], y[feas], ls="none", marker="o", ms=6, color="C0", label="feasible",
            gid="feasible")  # fmt: skip
    ax.plot(x[~feas], y[~feas], ls="none", marker="o", ms=6, mfc="none", mec="C3",
            label="infeasible", gid="infeasible")  # fmt: skip


def plot_tuning_history(doc: Mapping) -> Figure:
    """The objective and the constraint margins against the candidate number."""
    num, obj, feas, cons = _columns(doc)
    s = doc.get("settings", {}).get("objective", {})
    metric = s.get("metric", "total_impulse")
    y, unit = _display(obj, metric)
    fig, axes = campaign_figure(
        2, _title(doc, "objective and constraints per candidate"), height=2.8, sharex=True
    )
    ax = axes[0, 0]
    _feasibility_scatter(ax, num, y, feas)
    best = np.where(feas, y, np.nan)
    best_so_far = np.fmin.accumulate(best) if best.size else best
    if np.isfinite(best_so_far).any():
        ax.plot(
            num,
            best_so_far,
            drawstyle="steps-post",
            color="k",
            lw=1.2,
            label="best feasible so far",
            gid="best_so_far",
        )
    if doc.get("best") is not None:
        i = int(np.flatnonzero(num == doc["best"])[0])
        ax.plot(
            num[i],
            y[i],
            ls="none",
            marker="*",
            ms=14,
            mfc="gold",
            mec="k",
            label=f"best: {format_number(y[i])} {unit}",
            gid="best",
        )
    ax.set_ylabel(f"{metric} {s.get('stat', '')} [{unit}]")
    ax.grid(True, alpha=0.3)
    legend(ax)
    ax = axes[1, 0]
    top = 0.0
    for j, (key, (r, _, margin)) in enumerate(cons.items()):
        label = "failed runs (fraction)" if r["source"] == "implicit" else f"{key} {_judged(r)}"
        ax.plot(
            num,
            margin,
            marker="os^Dv"[j % 5],
            ms=5,
            lw=1.0,
            ls="-",
            color=f"C{j}",
            label=label,
            gid=f"margin:{key}",
        )
        if np.isfinite(margin).any():
            top = max(top, float(np.nanmax(np.abs(margin))))
    ax.axhline(0.0, **LIMIT_STYLE, label="limit (margin 0)", gid="limit")
    if top > 20.0:
        ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylabel("margin (value - limit) / |limit|\n(<= 0: met)")
    ax.set_xlabel("candidate")
    ax.grid(True, alpha=0.3)
    legend(ax)
    if len(num):
        ax.set_xticks(num if len(num) <= 25 else ax.get_xticks())
    plain_ticks(fig)
    return fig


def plot_tuning_pareto(doc: Mapping) -> Figure:
    """The objective against each constraint's judged value, the Pareto fronts marked."""
    num, obj, feas, cons = _columns(doc)
    s = doc.get("settings", {}).get("objective", {})
    metric = s.get("metric", "total_impulse")
    x, xunit = _display(obj, metric)
    shown = {k: v for k, v in cons.items() if v[0]["source"] != "implicit" and k != metric}
    rows = max(1, len(shown))
    fig, axes = campaign_figure(
        rows, _title(doc, "objective against the constraints"), height=2.8, width=9.5
    )
    if not shown:
        axes[0, 0].set_axis_off()
        axes[0, 0].text(
            0.5, 0.5, "no constraint on another metric", ha="center", transform=axes[0, 0].transAxes
        )
        return fig
    for ax, (key, (r, value, _)) in zip(axes[:, 0], shown.items(), strict=True):
        y, yunit = _display(value, key)
        sign = 1.0 if r["op"] == "<=" else -1.0
        front = pareto_front(x, sign * y)
        _feasibility_scatter(ax, x, y, feas)
        if front.size:
            ax.plot(
                x[front],
                y[front],
                drawstyle="steps-post",
                color="k",
                lw=1.0,
                marker="o",
                ms=9,
                mfc="none",
                mec="k",
                label="Pareto front",
                gid="pareto",
            )
        for i in front[:12]:
            ax.annotate(
                f"#{int(num[i])}",
                (x[i], y[i]),
                xytext=(5, 4),
                textcoords="offset points",
                fontsize="x-small",
            )
        lim = to_display(float(r["limit"]), METRICS[key][0], kind=key)[0]
        ax.axhline(
            lim, **LIMIT_STYLE, label=f"limit {r['op']} {format_number(lim)} {yunit}", gid="limit"
        )
        if doc.get("best") is not None:
            i = int(np.flatnonzero(num == doc["best"])[0])
            ax.plot(
                x[i],
                y[i],
                ls="none",
                marker="*",
                ms=14,
                mfc="gold",
                mec="k",
                label="best",
                gid="best",
            )
        f = y[np.isfinite(y) & (y > 0)]
        if f.size and max(f.max(), lim) / max(min(f.min(), lim), 1e-300) > 30.0 and lim > 0:
            ax.set_yscale("log")
        ax.set_ylabel(f"{key} {_judged(r)} [{yunit}]")
        ax.grid(True, alpha=0.3)
        legend(ax)
    axes[-1, 0].set_xlabel(f"{metric} {s.get('stat', '')} [{xunit}]")
    plain_ticks(fig)
    return fig


def plot_tuning(
    out: str | os.PathLike,
    formats: Sequence[str] = ("png",),
    *,
    figures_dir: str | os.PathLike | None = None,
) -> list[Path]:
    """Draw ``tuning_history`` and ``tuning_pareto`` of a tuning directory (module
    docstring) into ``figures_dir`` (default: ``out``); returns the files written."""
    doc = read_tuning(out)
    if not doc["candidates"]:
        return []
    where = Path(figures_dir) if figures_dir is not None else Path(out)
    files = save(plot_tuning_history(doc), where / "tuning_history", formats)
    files += save(plot_tuning_pareto(doc), where / "tuning_pareto", formats)
    return files
