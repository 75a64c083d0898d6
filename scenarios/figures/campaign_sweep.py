"""Figures of a sweep: its metrics against the swept parameter
(:func:`plot_sweep_tradeoff`) and the Pareto front of two metrics (:func:`plot_pareto`)."""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from ..campaigns.montecarlo import scenario_requirements
from ..sim.metrics import METRICS
from ..spec.schema import SCHEMA
from .common import (
    LIMIT_STYLE,
    STATUS_COLOR,
    campaign_figure,
    legend,
    plain_ticks,
    run_style,
    value_label,
)
from .units import format_number, to_display

__all__ = ["TRADEOFF_METRICS", "swept_keys", "plot_sweep_tradeoff", "pareto_front", "plot_pareto"]

#: the metrics a trade-off figure shows, when the sweep has them
TRADEOFF_METRICS = ("base_pos_err_max", "base_att_err_max", "ee_max", "total_impulse")


def _numeric(v):
    """A float for a scalar, or a vector whose components are equal; else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float, np.integer, np.floating)):
        return float(v)
    if (
        isinstance(v, (list, tuple))
        and v
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
    ):
        return float(v[0]) if len(set(v)) == 1 else None
    return None


def swept_keys(df) -> list[str]:
    """The override columns of a sweep DataFrame whose values vary, in column order."""
    skip = {"variant", "run_time", "error", "cached", *METRICS}
    keys = []
    for c in df.columns:
        if c in skip or not ("." in c or "[" in c or c == "faults"):
            continue
        if len({json.dumps(v, default=str) for v in df[c]}) > 1:
            keys.append(c)
    return keys


def _axis_values(df, key):
    """(x positions, tick labels or None, axis label) of a swept key."""
    values = list(df[key])
    nums = [_numeric(v) for v in values]
    if all(n is not None for n in nums):
        vec = next((v for v in values if isinstance(v, (list, tuple))), None)
        label = key + (f" (×{len(vec)}, equal components)" if vec is not None else "")
        return np.array(nums, float), None, label
    cats = list(dict.fromkeys(value_label(v) for v in values))
    return np.array([cats.index(value_label(v)) for v in values], float), cats, key


def _order(v):
    """A sort key of a swept value: numbers (and vectors of equal components) by value,
    before anything else, which is ordered by its label."""
    n = _numeric(v)
    return (0, n, "") if n is not None else (1, 0.0, value_label(v))


def _scenario_unit(key):

    sec, _, name = key.partition(".")
    f = SCHEMA.get(sec).fields.get(name) if sec in SCHEMA else None
    return getattr(f, "unit", "") or "-"


def _failed(df):
    err = df["error"] if "error" in df else [None] * len(df)
    return np.array([isinstance(e, str) and bool(e) for e in err])


def plot_sweep_tradeoff(df, base_config: Mapping | None = None, metrics=TRADEOFF_METRICS) -> Figure:
    """A sweep's metrics against its first swept key (one line per value of the other
    swept keys), in display units, with the requirements (``base_config``'s
    ``requirements`` or the defaults); failed variants are red crosses along the top, and
    variants that did not measure a metric (no sample in its window) grey circles along
    the bottom, counted in the panel's title (a value not measured is never drawn as 0)."""
    keys = swept_keys(df)
    metrics = [m for m in metrics if m in df.columns]
    if not metrics:
        raise ValueError("sweep: none of the metrics " + ", ".join(TRADEOFF_METRICS) + " stored")
    req = scenario_requirements(base_config or {})
    if keys:
        x, ticks, xlabel = _axis_values(df, keys[0])
        unit = _scenario_unit(keys[0]) if ticks is None else "-"
    else:
        x, ticks, xlabel, unit = np.arange(len(df), dtype=float), None, "variant (row)", "-"
    others = keys[1:]
    groups = {}
    for i in range(len(df)):
        if len(others) == 1:
            g = value_label(df[others[0]].iloc[i])
        else:
            g = "; ".join(f"{k}={value_label(df[k].iloc[i])}" for k in others) or "all variants"
        groups.setdefault(g, []).append(i)
    # one line per value of the other keys, in the values' order (numbers by value: 30, 60,
    # 120, not the order the rows came in)
    groups = dict(
        sorted(groups.items(), key=lambda kv: [_order(df[k].iloc[kv[1][0]]) for k in others])
    )
    failed = _failed(df)
    name = (base_config or {}).get("scenario", {}).get("name", "sweep")
    title = f"{name}: sweep trade-off, {len(df)} variants" + (
        f", {int(failed.sum())} FAILED" if failed.any() else ""
    )
    fig, axes = campaign_figure(
        len(metrics), title, height=2.1, width=10.0, red=bool(failed.any()), sharex=True
    )
    for k, m in enumerate(metrics):
        ax = axes[k, 0]
        si = METRICS[m][0]
        y, du = to_display(df[m].to_numpy(dtype=float), si, kind=m)
        for j, (g, rows) in enumerate(groups.items()):
            rows = [r for r in rows if not failed[r]]
            order = sorted(rows, key=lambda r: x[r])
            st = run_style(j, 12)
            st["markevery"] = 1
            ax.plot(x[order], y[order], **st, label=g if k == 0 else "_g", gid="variants")
        finite = y[np.isfinite(y) & (y > 0)]
        parts = []
        if m in req and req[m][0] == "<=":
            lim = to_display(req[m][1], si, kind=m)[0]
            ax.axhline(
                lim,
                **LIMIT_STYLE,
                gid="requirement",
                label=f"requirement ≤ {format_number(lim)} {du}",
            )
            n_ok = int(np.sum(y[~failed] <= lim))
            parts.append(f"requirement ≤ {format_number(lim)} {du}: {n_ok} of {len(df)} met")
            finite = np.r_[finite, lim]
        if finite.size and finite.max() / finite.min() > 20.0:
            ax.set_yscale("log")
        unmeasured = ~failed & ~np.isfinite(y)  # completed, but no value: not measured
        if unmeasured.any():
            ax.plot(
                x[unmeasured],
                np.full(int(unmeasured.sum()), 0.03),
                ls="none",
                marker="o",
                mfc="none",
                mec="0.45",
                ms=7,
                transform=ax.get_xaxis_transform(),
                label="not measured",
                gid="not_measured",
            )
            parts.append(f"not measured in {int(unmeasured.sum())} of {len(df)}")
        if failed.any():
            ax.plot(
                x[failed],
                np.full(int(failed.sum()), 0.97),
                ls="none",
                marker="x",
                ms=8,
                color=STATUS_COLOR,
                transform=ax.get_xaxis_transform(),
                label="failed variant",
                gid="failed",
            )
        if np.isfinite(y).any():
            best = int(np.nanargmin(y))
            at = (
                ", ".join(f"{k} = {value_label(df[k].iloc[best])}" for k in keys)
                if keys
                else f"row {best}"
            )  # every swept key: the best variant, not the best value of the first key
            parts.insert(0, f"best {format_number(y[best])} {du} at {at}")
        ax.set_title("; ".join(parts), loc="left", fontsize="small")
        ax.set_ylabel(f"{m}\n[{du}]")
        ax.grid(True, alpha=0.3)
        legend(ax, title=others[0] if len(others) == 1 and k == 0 else None)
    for ax in axes[:, 0]:
        if ticks is not None:
            ax.set_xticks(range(len(ticks)), ticks, rotation=20 if len(ticks) > 4 else 0)
        elif x.size and np.all(x > 0) and x.max() / x.min() > 20.0:
            ax.set_xscale("log")
    axes[-1, 0].set_xlabel(f"{xlabel} [{unit}]")
    plain_ticks(fig)
    return fig


def pareto_front(a, b) -> np.ndarray:
    """Indices of the points not dominated when minimising both ``a`` and ``b`` (NaN
    points left out), sorted by ``a``."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = np.flatnonzero(np.isfinite(a) & np.isfinite(b))
    front = []
    for i in ok:
        dominated = np.any((a[ok] <= a[i]) & (b[ok] <= b[i]) & ((a[ok] < a[i]) | (b[ok] < b[i])))
        if not dominated:
            front.append(i)
    return np.array(sorted(front, key=lambda i: (a[i], b[i])), dtype=int)


def plot_pareto(
    df, a: str = "base_pos_err_max", b: str = "total_impulse", base_config: Mapping | None = None
) -> Figure:
    """Two metrics of a sweep against each other (display units), the Pareto front
    (both minimised) as filled markers joined by a step line, its points labelled by the
    swept keys' values, and the requirements on either metric."""
    for m in (a, b):
        if m not in df.columns:
            known = [c for c in df.columns if c in METRICS]
            raise ValueError(f"pareto: metric {m!r} not in this sweep (stored: {', '.join(known)})")
    keys = swept_keys(df)
    xa, ua = to_display(df[a].to_numpy(dtype=float), METRICS[a][0], kind=a)
    yb, ub = to_display(df[b].to_numpy(dtype=float), METRICS[b][0], kind=b)
    front = pareto_front(xa, yb)
    name = (base_config or {}).get("scenario", {}).get("name", "sweep")
    fig, axes = campaign_figure(
        1,
        f"{name}: Pareto front of {a} and {b} (both minimised), {len(df)} variants",
        height=5.0,
        width=10.0,
    )
    ax = axes[0, 0]
    ax.plot(
        xa, yb, ls="none", marker="o", mfc="none", mec="0.4", ms=6, label="variant", gid="variants"
    )
    ax.plot(
        xa[front],
        yb[front],
        ls="-",
        drawstyle="steps-post",
        color="k",
        lw=1.0,
        marker="o",
        ms=7,
        mfc="C0",
        mec="k",
        label="Pareto front",
        gid="pareto",
    )
    for n, i in enumerate(front[:12]):
        text = "; ".join(f"{k.rsplit('.', 1)[-1]}={value_label(df[k].iloc[i])}" for k in keys[:2])
        ax.annotate(
            text or f"row {i}",
            (xa[i], yb[i]),
            xytext=(6, 6 + 9 * (n % 2)),
            textcoords="offset points",
            fontsize="x-small",
        )
    req = scenario_requirements(base_config or {})
    notes = []
    for m, u, v, horizontal in ((a, ua, xa, False), (b, ub, yb, True)):
        if m in req and req[m][0] == "<=":
            lim = to_display(req[m][1], METRICS[m][0], kind=m)[0]
            top = float(np.nanmax(v)) if np.isfinite(v).any() else 0.0
            met = int(np.sum(v <= lim))
            text = f"{m} ≤ {format_number(lim)} {u}"
            if lim <= 3.0 * top:  # near the data: drawn
                line = ax.axhline if horizontal else ax.axvline
                line(lim, **LIMIT_STYLE, gid="requirement", label=text)
            else:  # far off: drawing it would squash the points into a corner
                notes.append(f"requirement {text} off scale ({met} of {len(v)} meet it)")
    unmeasured = int(np.sum(~_failed(df) & ~(np.isfinite(xa) & np.isfinite(yb))))
    if unmeasured:
        notes.append(f"{unmeasured} variants not measured (not shown)")
    if notes:
        ax.set_title("; ".join(notes), loc="left", fontsize="small")
    for axis, v in (("x", xa), ("y", yb)):
        f = v[np.isfinite(v) & (v > 0)]
        if f.size and f.max() / f.min() > 20.0:
            (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    ax.set_xlabel(f"{a} [{ua}]")
    ax.set_ylabel(f"{b} [{ub}]")
    ax.grid(True, alpha=0.3)
    legend(ax)
    plain_ticks(fig)
    return fig
