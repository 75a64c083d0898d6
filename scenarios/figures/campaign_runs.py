"""Runs overlaid: :func:`plot_runs` draws several closed-loop runs on shared axes, each
line labelled by what differs between their resolved scenarios (:func:`run_labels`)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from ..sim.metrics import METRICS
from .common import (
    LIMIT_STYLE,
    STATUS_COLOR,
    campaign_figure,
    legend,
    log_view,
    plain_ticks,
    requirement_limits,
    run_style,
    scenario_config,
    status_text,
    value_label,
)
from .recorded import check_recorded_series
from .units import format_number, to_display

__all__ = ["run_labels", "plot_runs"]


def _flatten(cfg, prefix=""):
    out = {}
    for k, v in cfg.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _differing(flat):
    keys = sorted(set().union(*flat)) if flat else []
    missing = object()
    return [k for k in keys if len({json.dumps(f.get(k, missing), default=str) for f in flat}) > 1]


def _keys_label(f, differing, max_keys):
    parts = [f"{k}={value_label(f.get(k, '-'))}" for k in differing[:max_keys]]
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
    flat = [
        _flatten({k: v for k, v in scenario_config(r).items() if k != "outputs"}) for r in results
    ]
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
        start = float((scenario_config(res).get("trajectory") or {}).get("start_time", 0.0))
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
    for r in results:  # a damaged result: one error naming its file
        check_recorded_series(r)
    labels, keys = run_labels(results, names)
    per_run = [_run_quantities(r) for r in results]
    panels = []
    for q in per_run:
        for panel, ylabel, metric, _, _ in q:
            if panel not in [p[0] for p in panels]:
                panels.append((panel, ylabel, metric))
    scenario_names = sorted(
        {str((scenario_config(r).get("scenario") or {}).get("name", "?")) for r in results}
    )
    what = f"{len(results)} runs compared"
    if keys:
        shown = ", ".join(keys[:3]) + (f" and {len(keys) - 3} more keys" if len(keys) > 3 else "")
        what += f"\n(the scenarios differ in {shown})"
    bad = [status_text(r) for r in results]
    title = f"{' / '.join(scenario_names)}: {what}"
    if any(bad):
        title += "\n" + "; ".join(f"{lab}: {b}" for lab, b in zip(labels, bad, strict=True) if b)
    fig, axes = campaign_figure(
        len(panels), title, height=2.0, width=11.0, red=any(bad), sharex=True
    )
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
            st = run_style(i, len(t))
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
                ax.axvline(t[-1], color=STATUS_COLOR, lw=2.0, label="_end", gid="run_end")
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
                **LIMIT_STYLE,
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
            log_view(ax, allv, extra + peaks[panel])
        ax.set_ylabel(ylabel)
        if parts:
            ax.set_title("; ".join(parts), loc="left", fontsize="small")
        ax.grid(True, alpha=0.3)
        legend(ax)
    axes[-1, 0].set_xlabel("time [s]")
    plain_ticks(fig)
    return fig
