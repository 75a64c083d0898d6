"""Figures of several runs: overlays of runs, sweep trade-offs, Monte Carlo dispersions.

The conventions of :mod:`dqspace.scenarios.plots` hold (display units named on every
axis, no offset notation, legends outside the axes, line styles and markers as well as
colours, requirements as dotted black lines with the metric's value stated):

- :func:`plot_runs`: runs overlaid, one line per run labelled by what differs between
  their resolved scenarios (:func:`run_labels`: ``base_controller.kp_trans=[2000, 2000,
  2000]``);
- :func:`plot_sweep_tradeoff` and :func:`plot_pareto`: a sweep's metrics against the
  swept parameter, and the Pareto front of two metrics (both minimised);
- :func:`plot_envelopes` and :func:`plot_histograms`: a Monte Carlo campaign's percentile
  bands over time and its metrics' histograms; :func:`plot_montecarlo` writes both from a
  campaign directory.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from ..sim.metrics import METRICS
from .plots import (
    _LIMIT_STYLE,
    _STATUS_COLOR,
    _legend,
    _log_view,
    _plain_ticks,
    _scenario,
    _status_text,
    _transient,
    requirement_limits,
)
from .units import format_number, to_display

__all__ = [
    "run_labels",
    "plot_runs",
    "swept_keys",
    "plot_sweep_tradeoff",
    "pareto_front",
    "plot_pareto",
    "plot_envelopes",
    "plot_histograms",
    "plot_montecarlo",
    "save",
]

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)))
_ENVELOPE_LABELS = {
    "base_pos_err_max": "base position error,\nlargest axis",
    "base_att_err_max": "base attitude\nerror angle",
    "ee_max": "end-effector\n|error|",
}
#: the metrics a trade-off figure shows, when the sweep has them
TRADEOFF_METRICS = ("base_pos_err_max", "base_att_err_max", "ee_max", "total_impulse")


def _run_style(i, n_points):
    """Colour, line style and marker of run i (distinct in greyscale for i < 6)."""
    every = max(1, n_points // 12)
    return {
        "color": f"C{i % 10}",
        "ls": _LINESTYLES[i % len(_LINESTYLES)],
        "marker": _MARKERS[i % len(_MARKERS)],
        "ms": 4.5,
        "markevery": (int(i * every / 6) % every, every),
        "lw": 1.3,
    }


def _figure(rows, title, height=2.2, width=9.5, cols=1, red=False, sharex=False):
    fig = Figure(
        figsize=(width, 1.0 + 0.2 * title.count("\n") + height * rows), layout="constrained"
    )
    axes = fig.subplots(rows, cols, squeeze=False, sharex=sharex)
    fig.suptitle(
        title,
        fontsize="medium",
        color=_STATUS_COLOR if red else "k",
        fontweight="bold" if red else "normal",
    )
    return fig, axes


def save(fig: Figure, path_stem: str | os.PathLike, formats: Sequence[str]) -> list[Path]:
    """Write ``fig`` as ``<path_stem>.<fmt>`` for each format; returns the paths."""
    stem = Path(path_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        p = stem.with_name(f"{stem.name}.{fmt}")
        fig.savefig(p, dpi=150)
        paths.append(p)
    return paths


# ------------------------------------------------------------------ labels


def _flatten(cfg, prefix=""):
    out = {}
    for k, v in cfg.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _value_label(v):
    """A value as a label shows it: numbers in 4 digits, short lists in full."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)):
        return format_number(v)
    if isinstance(v, (list, tuple)):
        if len(v) <= 4 and all(isinstance(x, (int, float)) for x in v):
            return "[" + ", ".join(format_number(x) for x in v) + "]"
        from .units import _compact

        return _compact(list(v), 4)
    if isinstance(v, dict):
        from .units import _compact

        return _compact(v, 4)
    return str(v)


def _differing(flat):
    keys = sorted(set().union(*flat)) if flat else []
    missing = object()
    return [k for k in keys if len({json.dumps(f.get(k, missing), default=str) for f in flat}) > 1]


def _keys_label(f, differing, max_keys):
    parts = [f"{k}={_value_label(f.get(k, '-'))}" for k in differing[:max_keys]]
    if len(differing) > max_keys:
        parts.append(f"+{len(differing) - max_keys} more")
    return "; ".join(parts)


def run_labels(results: Sequence, names: Sequence[str] | None = None, max_keys: int = 3):
    """One label per run naming what differs between their resolved scenarios.

    The scenarios (``manifest["scenario"]``, without ``outputs``) are flattened to dotted
    keys (``base_controller.kp_trans``; a list of tables such as ``faults`` is one key);
    each run is labelled ``key=value; key=value`` over the keys whose values differ
    between the runs (at most ``max_keys``, then ``+n more``).  Runs of different
    scenarios (``scenario.name``) are labelled by that name first, the keys compared
    within each name's runs; runs that differ in nothing (or in more than ``max_keys``
    keys) are told apart by ``names`` (default ``run 1``, ``run 2``, ...).

    Returns
    -------
    (labels, keys): a list of str per run, and the keys that differ between all the runs
    """
    flat = [_flatten({k: v for k, v in _scenario(r).items() if k != "outputs"}) for r in results]
    names = list(names) if names is not None else [f"run {i + 1}" for i in range(len(results))]
    differing = _differing(flat)
    groups = {}
    for i, f in enumerate(flat):
        groups.setdefault(str(f.get("scenario.name", "")), []).append(i)
    labels = [""] * len(flat)
    for group, members in groups.items():
        inner = [k for k in _differing([flat[i] for i in members]) if k != "scenario.name"]
        for i in members:
            parts = [group] if len(groups) > 1 else []
            if inner and len(inner) <= max_keys:
                parts.append(_keys_label(flat[i], inner, max_keys))
            elif len(members) > 1 or not parts:
                parts.append(names[i])
            labels[i] = ": ".join(parts)
    if len(set(labels)) < len(labels):  # equal within max_keys: add the names
        labels = [f"{name}: {lab}" for name, lab in zip(names, labels, strict=True)]
    return labels, differing


# ------------------------------------------------------------------ overlay of runs


def _run_quantities(res):
    """[(panel, y-label, metric or None, t, values in display units)] of one run."""
    t = np.asarray(res.t, float)
    out = []
    pos, pu = to_display(np.asarray(res["base_pos_err"], float), "m")
    out.append(
        (
            "pos",
            f"base position error,\nlargest axis [{pu}]",
            "base_pos_err_max",
            t,
            np.abs(pos).max(axis=1),
        )
    )
    att, au = to_display(np.asarray(res["base_att_err"], float), "rad")
    out.append(
        (
            "att",
            f"base attitude\nerror angle [{au}]",
            "base_att_err_max",
            t,
            np.linalg.norm(att, axis=1),
        )
    )
    if "ee_err" in res:
        ee, eu = to_display(np.asarray(res["ee_err"], float), "m")
        start = float((_scenario(res).get("trajectory") or {}).get("start_time", 0.0))
        norm = np.where(t >= start, np.linalg.norm(ee, axis=1), np.nan)
        out.append(("ee", f"end-effector\n|error| [{eu}]", "ee_max", t, norm))
    if "thrust_impulse" in res and np.ndim(res["thrust_impulse"]) == 2:
        imp = np.asarray(res["thrust_impulse"], float)
        if imp.shape[1]:
            out.append(
                (
                    "imp",
                    "thruster impulse,\ncumulative [N s]",
                    "total_impulse",
                    t,
                    np.cumsum(imp.sum(axis=1)),
                )
            )
    return out


def plot_runs(results: Sequence, names: Sequence[str] | None = None) -> Figure:
    """Several closed-loop runs overlaid: base position and attitude errors and the
    end-effector error on log axes with their requirements, and the cumulative thruster
    impulse; one line per run, labelled by :func:`run_labels`.  Each run's metric is a
    triangle of its colour at its peak; a failed run's label says so and its last sample
    is a red line; each run's events are dash-dot lines of its colour."""
    if len(results) < 1:
        raise ValueError("plot_runs: no runs given")
    labels, keys = run_labels(results, names)
    per_run = [_run_quantities(r) for r in results]
    panels = []
    for q in per_run:
        for panel, ylabel, metric, _, _ in q:
            if panel not in [p[0] for p in panels]:
                panels.append((panel, ylabel, metric))
    scenario_names = sorted(
        {str((_scenario(r).get("scenario") or {}).get("name", "?")) for r in results}
    )
    what = f"{len(results)} runs compared"
    if keys:
        shown = ", ".join(keys[:3]) + (f" and {len(keys) - 3} more keys" if len(keys) > 3 else "")
        what += f"\n(the scenarios differ in {shown})"
    bad = [_status_text(r) for r in results]
    title = f"{' / '.join(scenario_names)}: {what}"
    if any(bad):
        title += "\n" + "; ".join(f"{lab}: {b}" for lab, b in zip(labels, bad, strict=True) if b)
    fig, axes = _figure(len(panels), title, height=2.0, width=11.0, red=any(bad), sharex=True)
    ax_of = {p[0]: axes[k, 0] for k, p in enumerate(panels)}
    limits = {}
    for res in results:
        for m, lim in requirement_limits(res).items():
            limits.setdefault(m, set()).add(lim)
    drawn = {p[0]: [] for p in panels}
    peaks = {p[0]: [] for p in panels}
    for i, (res, q) in enumerate(zip(results, per_run, strict=True)):
        status = res.manifest.get("status", "complete")
        label = textwrap.fill(labels[i], 60) + (
            "" if status == "complete" else f" ({status.upper()})"
        )
        for panel, _, metric, t, y in q:
            ax = ax_of[panel]
            log = panel != "imp"
            shown = np.where(y > 0, y, np.nan) if log else y
            st = _run_style(i, len(t))
            ax.plot(t, shown, **st, label=label if panel == panels[0][0] else "_run", gid=f"run{i}")
            drawn[panel].append(shown)
            value = (res.manifest.get("metrics") or {}).get(metric)
            if value is not None and np.isfinite(value) and np.isfinite(shown).any():
                v = to_display(float(value), METRICS[metric][0], kind=metric)[0]
                k = int(np.nanargmax(shown)) if log else len(t) - 1
                ax.plot(
                    [t[k]],
                    [v],
                    ls="none",
                    marker="v",
                    ms=8,
                    color=st["color"],
                    mec="k",
                    label="_metric",
                    gid="metric",
                )
                peaks[panel].append(v)
            if status != "complete" and len(t):
                ax.axvline(t[-1], color=_STATUS_COLOR, lw=2.0, label="_end", gid="run_end")
            for e in res.manifest.get("events") or []:
                if isinstance(e, dict) and "t" in e and "until" not in e:
                    ax.axvline(
                        float(e["t"]),
                        color=st["color"],
                        ls=(0, (6, 2, 1, 2)),
                        lw=1.0,
                        label="_event",
                        gid="event",
                    )
    for panel, ylabel, metric in panels:
        ax = ax_of[panel]
        unit = ylabel.rsplit("[", 1)[-1].rstrip("]")
        parts = []
        if peaks[panel] and len(peaks[panel]) <= 6:
            parts.append(
                f"{metric} per run: "
                + ", ".join(format_number(v) for v in peaks[panel])
                + f" {unit}"
            )
        extra = []
        for lim in sorted(limits.get(metric, ())):
            d = to_display(lim, METRICS[metric][0], kind=metric)[0]
            ax.axhline(
                d,
                **_LIMIT_STYLE,
                gid="requirement",
                label=f"requirement ≤ {format_number(d)} {unit}",
            )
            parts.append(f"requirement ≤ {format_number(d)} {unit} (dotted)")
            extra.append(d)
        if panel != "imp":
            ax.set_yscale("log")
            allv = (
                np.concatenate([np.ravel(s) for s in drawn[panel]]) if drawn[panel] else np.zeros(0)
            )
            _log_view(ax, allv, extra + peaks[panel])
        ax.set_ylabel(ylabel)
        if parts:
            ax.set_title("; ".join(parts), loc="left", fontsize="small")
        ax.grid(True, alpha=0.3)
        _legend(ax)
    axes[-1, 0].set_xlabel("time [s]")
    _plain_ticks(fig)
    return fig


# ------------------------------------------------------------------ sweeps


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
    cats = list(dict.fromkeys(_value_label(v) for v in values))
    return np.array([cats.index(_value_label(v)) for v in values], float), cats, key


def _scenario_unit(key):
    from ..spec.schema import SCHEMA

    sec, _, name = key.partition(".")
    f = SCHEMA.get(sec).fields.get(name) if sec in SCHEMA else None
    return getattr(f, "unit", "") or "-"


def _failed(df):
    err = df["error"] if "error" in df else [None] * len(df)
    return np.array([isinstance(e, str) and bool(e) for e in err])


def plot_sweep_tradeoff(df, base_config: Mapping | None = None, metrics=TRADEOFF_METRICS) -> Figure:
    """A sweep's metrics against its first swept key (one line per value of the other
    swept keys), in display units, with the requirements (``base_config``'s
    ``requirements`` or the defaults); failed variants are red crosses along the top."""
    from ..campaigns.montecarlo import scenario_requirements

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
            g = _value_label(df[others[0]].iloc[i])
        else:
            g = "; ".join(f"{k}={_value_label(df[k].iloc[i])}" for k in others) or "all variants"
        groups.setdefault(g, []).append(i)
    failed = _failed(df)
    name = (base_config or {}).get("scenario", {}).get("name", "sweep")
    title = f"{name}: sweep trade-off, {len(df)} variants" + (
        f", {int(failed.sum())} FAILED" if failed.any() else ""
    )
    fig, axes = _figure(
        len(metrics), title, height=2.1, width=10.0, red=bool(failed.any()), sharex=True
    )
    for k, m in enumerate(metrics):
        ax = axes[k, 0]
        si = METRICS[m][0]
        y, du = to_display(df[m].to_numpy(dtype=float), si, kind=m)
        for j, (g, rows) in enumerate(groups.items()):
            rows = [r for r in rows if not failed[r]]
            order = sorted(rows, key=lambda r: x[r])
            st = _run_style(j, 12)
            st["markevery"] = 1
            ax.plot(x[order], y[order], **st, label=g if k == 0 else "_g", gid="variants")
        finite = y[np.isfinite(y) & (y > 0)]
        parts = []
        if m in req and req[m][0] == "<=":
            lim = to_display(req[m][1], si, kind=m)[0]
            ax.axhline(
                lim,
                **_LIMIT_STYLE,
                gid="requirement",
                label=f"requirement ≤ {format_number(lim)} {du}",
            )
            n_ok = int(np.sum(y[~failed] <= lim))
            parts.append(f"requirement ≤ {format_number(lim)} {du}: {n_ok} of {len(df)} met")
            finite = np.r_[finite, lim]
        if finite.size and finite.max() / finite.min() > 20.0:
            ax.set_yscale("log")
        if failed.any():
            ax.plot(
                x[failed],
                np.full(int(failed.sum()), 0.97),
                ls="none",
                marker="x",
                ms=8,
                color=_STATUS_COLOR,
                transform=ax.get_xaxis_transform(),
                label="failed variant",
                gid="failed",
            )
        if np.isfinite(y).any():
            best = int(np.nanargmin(y))
            parts.insert(
                0,
                f"best {format_number(y[best])} {du} at {xlabel.split(' ')[0]} = "
                f"{_value_label(df[keys[0]].iloc[best]) if keys else best}",
            )
        ax.set_title("; ".join(parts), loc="left", fontsize="small")
        ax.set_ylabel(f"{m}\n[{du}]")
        ax.grid(True, alpha=0.3)
        _legend(ax, title=others[0] if len(others) == 1 and k == 0 else None)
    for ax in axes[:, 0]:
        if ticks is not None:
            ax.set_xticks(range(len(ticks)), ticks, rotation=20 if len(ticks) > 4 else 0)
        elif x.size and np.all(x > 0) and x.max() / x.min() > 20.0:
            ax.set_xscale("log")
    axes[-1, 0].set_xlabel(f"{xlabel} [{unit}]")
    _plain_ticks(fig)
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
    from ..campaigns.montecarlo import scenario_requirements

    for m in (a, b):
        if m not in df.columns:
            known = [c for c in df.columns if c in METRICS]
            raise ValueError(f"pareto: metric {m!r} not in this sweep (stored: {', '.join(known)})")
    keys = swept_keys(df)
    xa, ua = to_display(df[a].to_numpy(dtype=float), METRICS[a][0], kind=a)
    yb, ub = to_display(df[b].to_numpy(dtype=float), METRICS[b][0], kind=b)
    front = pareto_front(xa, yb)
    name = (base_config or {}).get("scenario", {}).get("name", "sweep")
    fig, axes = _figure(
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
        text = "; ".join(f"{k.rsplit('.', 1)[-1]}={_value_label(df[k].iloc[i])}" for k in keys[:2])
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
                line(lim, **_LIMIT_STYLE, gid="requirement", label=text)
            else:  # far off: drawing it would squash the points into a corner
                notes.append(f"requirement {text} off scale ({met} of {len(v)} meet it)")
    if notes:
        ax.set_title("; ".join(notes), loc="left", fontsize="small")
    for axis, v in (("x", xa), ("y", yb)):
        f = v[np.isfinite(v) & (v > 0)]
        if f.size and f.max() / f.min() > 20.0:
            (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    ax.set_xlabel(f"{a} [{ua}]")
    ax.set_ylabel(f"{b} [{ub}]")
    ax.grid(True, alpha=0.3)
    _legend(ax)
    _plain_ticks(fig)
    return fig


# ------------------------------------------------------------------ Monte Carlo


def plot_envelopes(env: Mapping, requirements: Mapping, *, name="", n_runs=None) -> Figure:
    """Percentile bands over time of a campaign (:func:`dqspace.scenarios.montecarlo.
    envelopes`): min-max shaded, P50 / P95 / P99 as solid / dashed / dash-dot lines, on log
    axes with the requirements ``{metric: (op, limit, percentile)}`` dotted; the
    end-effector panel hatches the transient its metric leaves out."""
    from ..campaigns.montecarlo import ENVELOPE_SERIES

    names = [m for m in ENVELOPE_SERIES if m in env]
    if not names:
        raise ValueError("envelopes: no series to draw")
    runs = int(np.nanmax(env[names[0]]["runs"])) if len(env[names[0]]["runs"]) else 0
    title = (
        f"{name}: Monte Carlo envelopes over {runs} runs"
        + (f" of {n_runs}" if n_runs is not None and n_runs != runs else "")
        + "\n(each run decimated to its largest value per bin)"
    )
    fig, axes = _figure(len(names), title, height=2.3, width=10.0, sharex=True)
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
                **_LIMIT_STYLE,
                gid="requirement",
                label=f"requirement ≤ {format_number(lim)} {unit}\nat P{pct}",
            )
            parts.append(f"requirement ≤ {format_number(lim)} {unit} at P{pct} of the runs' maxima")
            extra.append(lim)
        if m == "ee_max" and len(t):
            tr = _transient()
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
        _log_view(ax, np.concatenate([pos["min"], pos["max"]]), extra, decades=3.0)
        ax.set_ylabel(f"{_ENVELOPE_LABELS.get(m, what)}\n[{unit}]")
        ax.set_title("; ".join(parts), loc="left", fontsize="small")
        ax.grid(True, alpha=0.3)
        _legend(ax)
    axes[-1, 0].set_xlabel("time [s]")
    _plain_ticks(fig)
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
            color="k" if r["ok"] else _STATUS_COLOR,
            fontweight="bold",
        )
        ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.28), frameon=False)
    fig.suptitle(
        f"{name}: Monte Carlo, {n} runs" + (" — a requirement FAILS" if failed else ""),
        color=_STATUS_COLOR if failed else "k",
    )
    _plain_ticks(fig)
    return fig


def plot_montecarlo(
    out: str | os.PathLike,
    formats: Sequence[str] = ("png",),
    figures_dir: str | os.PathLike | None = None,
) -> list[Path]:
    """Write ``montecarlo.<fmt>`` (histograms) and ``montecarlo_envelopes.<fmt>``
    (when the runs stored their series) of a campaign directory (``montecarlo.json``,
    the stored variants) into ``figures_dir`` (default ``out``)."""
    from ..campaigns.montecarlo import envelopes, load_envelope_series
    from ..store.results import ResultError
    from ..store.sweep_store import load_sweep

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
