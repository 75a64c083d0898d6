"""Figures of a run, readable on a printed page and in greyscale.

Each ``plot_*`` function takes :class:`dqspace.scenarios.results.Results` and returns a
matplotlib Figure (no pyplot: headless and notebook alike); :func:`plot_all` writes the
figures of a result (closed loop: up to seven; open loop: the dynamics check).  Figures of
several runs (overlays, sweeps, Monte Carlo) are in :mod:`dqspace.scenarios.campaign_plots`.

Conventions (:mod:`dqspace.scenarios.units`): values in display units (mm, deg,
deg/s, rpm, N, N m) with the unit in brackets on every axis; no offset or
multiplier notation on any axis; legends outside the axes, on the right; lines differ
in line style (and markers) as well as colour.  Each title names the scenario, the
settings that matter for the figure (gains, limits) and, unless the run completed, its
status (``FAILED at t = 3.2 s``, ``interrupted``, ``degraded``), in red; the last sample of
a run that did not complete is a red vertical line.  The manifest's events are marked on
every panel: thruster faults and other instants as dash-dot vertical lines, degradation
episodes (``{"t", "until"}``) as hatched spans, each kind named once in the first panel's
legend.

Requirements and limits: a quantity with a requirement (:func:`requirement_limits`: the
scenario's ``requirements`` table, else
:data:`dqspace.scenarios.montecarlo.DEFAULT_REQUIREMENTS`) or a device limit is drawn as
its magnitude on a log axis, so that the limit (a dotted black line) and the data are
both in view however far apart; the metric's value is a black triangle at its peak and is
stated, with the verdict, above the panel.

Series used (see :mod:`dqspace.scenarios.runner`; SI): closed loop ``base_pos_err``
[m], ``base_att_err`` [rad], ``arm_reaction`` [N, N m], ``wrench_thr_true`` (else
``wrench_thr``) [N, N m], ``vscmg_torque_cmd``/``vscmg_torque_err`` [N m],
``rw_torque_err`` [N m], ``ee_pos``/``ee_ref``/``ee_err`` [m], ``thrust_cmd`` [N],
``thrust_on`` [s], ``gimbal_rate`` [rad/s], ``wheel_speed`` [rad/s], ``det_CCt``,
``det_GGt``, ``rw_speed`` [rad/s], ``rw_torque_cmd`` [N m], ``dump_torque`` [N m];
open loop ``ee_pos_I`` [m] and, when recorded, ``ee_ref_I`` [m] (else recomputed by
:func:`dqspace.scenarios.dynamics_check.reference_ee_positions`).
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import ScalarFormatter

from .units import format_number, format_quantity, to_display

if TYPE_CHECKING:
    from ..store.results import Results

__all__ = [
    "REQUIREMENTS",
    "requirement_limits",
    "plot_disturbance_rejection",
    "plot_wrench_balance",
    "plot_tracking",
    "plot_thrusters",
    "plot_vscmg",
    "plot_singularity",
    "plot_wheels",
    "plot_dynamics_check",
    "plot_all",
    "figures",
    "actuator_wrenches",
]


def _default_limits():
    from ..campaigns.montecarlo import DEFAULT_REQUIREMENTS

    return {m: limit for m, (op, limit, _) in DEFAULT_REQUIREMENTS.items() if op == "<="}


#: the default requirements (metric -> limit in the metric's SI unit), read from
#: :data:`dqspace.scenarios.montecarlo.DEFAULT_REQUIREMENTS` (one table for figures,
#: reports and campaigns)
REQUIREMENTS = _default_limits()

_XYZ = ("x", "y", "z")
_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)))
_EVENT_STYLE = {"color": "0.25", "ls": (0, (6, 2, 1, 2)), "lw": 1.0}
_LIMIT_STYLE = {"color": "k", "ls": (0, (1, 1.2)), "lw": 1.6}
_STATUS_COLOR = "#b00000"


# ------------------------------------------------------------------ helpers


def _style(i, lw=1.3):
    """Colour and line style of component i (distinct in greyscale for i < 6)."""
    return {"color": f"C{i % 10}", "ls": _STYLES[i % len(_STYLES)], "lw": lw}


def _scenario(res):
    sc = res.manifest.get("scenario") or {}
    return sc if isinstance(sc, dict) else {}


def _section(res, name):
    sec = _scenario(res).get(name)
    return sec if isinstance(sec, dict) else {}


def _status_text(res):
    """'' for a complete run, else what went wrong (``FAILED at t = 3.2 s: ...``)."""
    m = res.manifest
    status = m.get("status", "complete")
    t_end = float(res.t[-1]) if len(res.t) else 0.0
    at = f"at t = {format_quantity(t_end, 's')}"
    message = " ".join(str(m.get("message") or "").split())
    if len(message) > 70:
        message = message[:69] + "…"
    if status == "failed":
        return f"FAILED {at}" + (f": {message}" if message else "")
    if status == "interrupted":
        return f"interrupted {at}"
    if status == "running":
        return f"incomplete (running, {at})"
    if status != "complete":
        return f"status {status!r} {at}"
    degraded = m.get("degraded") or []
    if degraded:
        return f"degraded: {degraded[0]}" + (
            f" (+{len(degraded) - 1} more)" if len(degraded) > 1 else ""
        )
    return ""


def _value_text(v):
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, (int, float)):
        return format_number(v)
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, (int, float)) for x in v):
        if len(set(v)) == 1:
            return format_number(v[0])
        return "[" + ", ".join(format_number(x) for x in v) + "]"
    return str(v)


def _settings(res, section, keys, prefix=None):
    """``base: kp_trans 600 N/m, ...``: the values of ``keys`` of a scenario section with
    their schema units (a vector with equal components as one number)."""
    from ..spec.schema import SCHEMA

    sec = _section(res, section)
    fields = SCHEMA[section].fields if section in SCHEMA else {}
    parts = []
    for k in keys:
        if k not in sec:
            continue
        unit = getattr(fields.get(k), "unit", "") or ""
        unit = "" if isinstance(sec[k], bool) or unit == "-" else unit
        parts.append(f"{k} {_value_text(sec[k])}" + (f" {unit}" if unit else ""))
    return f"{prefix or section}: " + ", ".join(parts) if parts else ""


def _base_gains(res, which=("trans", "rot")):
    keys = [f"k{g}_{w}" for w in which for g in "pd"] + ["feedforward"]
    law = _section(res, "base_controller").get("law", "dual_pd")
    return _settings(res, "base_controller", keys, prefix=f"base {law}")


def _arm_gains(res):
    law = _section(res, "arm_controller").get("law", "computed_torque")
    keys = ("omega_n", "zeta") if law == "computed_torque" else ("null_space_damping",)
    return _settings(res, "arm_controller", keys, prefix=f"arm {law}")


def _title(res, what, settings=()):
    name = (_scenario(res).get("scenario") or {}).get("name", "unnamed scenario")
    lines = [f"{name}: {what}"]
    status = _status_text(res)
    if status:
        lines.append(status)
    lines += [s for s in settings if s]
    return "\n".join(lines)


def _fig(rows, res, what, settings=(), height=2.0, width=9.0, cols=1, sharey=False):
    """A bare Figure (no pyplot: no backend is chosen or changed) with constrained layout
    (it keeps the outside legends and every label inside the canvas) and its title; the
    title is red when the run did not complete or was degraded."""
    fig = Figure(figsize=(width, 1.1 + 0.2 * len(settings) + height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, sharex=True, sharey=sharey, squeeze=False)
    bad = bool(_status_text(res))
    fig.suptitle(
        _title(res, what, settings),
        fontsize="medium",
        color=_STATUS_COLOR if bad else "k",
        fontweight="bold" if bad else "normal",
    )
    return fig, (axes[:, 0] if cols == 1 else axes)


def _event_name(e):
    """``thruster fault: thruster 1 stuck_on`` (a kind by its value, a unit scale omitted)."""
    parts = []
    for k, v in e.items():
        if k in ("t", "event", "time", "until", "ticks") or (k == "scale" and v == 1.0):
            continue
        if isinstance(v, float):
            v = format_number(v)
        parts.append(str(v) if k == "kind" else f"{k} {v}")
    return f"{e['event']}: {' '.join(parts)}" if parts else str(e["event"])


def _events(res):
    """``(instants, spans)``: instants ``[(t, label)]`` (faults and other events), spans
    ``{event: [(t0, t1), ...]}`` (degradation episodes: events with an ``until``)."""
    instants, spans = [], {}
    for e in res.manifest.get("events") or []:
        if not isinstance(e, dict) or "t" not in e or "event" not in e:
            continue
        t = float(e["t"])
        if "until" in e:
            spans.setdefault(str(e["event"]), []).append((t, float(e["until"])))
        else:
            instants.append((t, f"{_event_name(e)}\nat t = {format_quantity(t, 's')}"))
    return instants, spans


def _mark_events(res, axes, label_ax=None):
    """Events on every axes, named in the legend of ``label_ax`` (default the first)."""
    label_ax = axes[0] if label_ax is None else label_ax
    instants, spans = _events(res)
    period = float(np.median(np.diff(res.t))) if len(res.t) > 1 else 0.0
    for ax in axes:
        first = ax is label_ax
        for t, label in instants:
            ax.axvline(t, **_EVENT_STYLE, label=label if first else "_event", gid="event")
        for j, (name, episodes) in enumerate(spans.items()):
            for n, (t0, t1) in enumerate(episodes):
                label = f"{name} ({len(episodes)} episode{'s' * (len(episodes) > 1)})"
                ax.axvspan(
                    t0,
                    t1 + period,
                    facecolor="none",
                    edgecolor="0.45",
                    hatch="////" if j % 2 == 0 else "\\\\\\\\",
                    lw=0.0,
                    label=label if first and n == 0 else "_episode",
                    gid="episode",
                )
    status = res.manifest.get("status", "complete")
    if status != "complete" and len(res.t):
        t_end = float(res.t[-1])
        label = f"run {'FAILED' if status == 'failed' else status} at t = {format_number(t_end)} s"
        for ax in axes:
            ax.axvline(
                t_end,
                color=_STATUS_COLOR,
                lw=2.0,
                label=label if ax is label_ax else "_end",
                gid="run_end",
            )


def _legend(ax, **kw):
    """A legend outside the axes, on the right (never over the data)."""
    handles = ax.get_lines() + ax.collections + ax.patches
    if any(not h.get_label().startswith("_") for h in handles):
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            borderaxespad=0.0,
            fontsize="small",
            **kw,
        )


def _plain_ticks(fig):
    """No offset (``+3e3``) and no multiplier (``1e-5``) on any linear axis."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            fmt = axis.get_major_formatter()
            if isinstance(fmt, ScalarFormatter):
                fmt.set_useOffset(False)
                fmt.set_scientific(False)


def _finish(fig, axes, res, legends=True, label_ax=None):
    axes = list(np.ravel(axes))
    _mark_events(res, axes, label_ax)
    for ax in axes:
        ax.grid(True, alpha=0.3)
        if legends:
            _legend(ax)
        if ax.get_subplotspec().is_last_row():
            ax.set_xlabel("time [s]")
    _plain_ticks(fig)
    return fig


def _display(res, name, si_unit, kind=None):
    return to_display(np.asarray(res[name], float), si_unit, kind)


def _reference_markers(ax, t, y, label):
    """A reference as ~40 open black circles over the actual line (both stay visible)."""
    every = max(1, len(t) // 40)
    ax.plot(t, y, ls="none", marker="o", ms=4, mfc="none", mec="k", markevery=every, label=label)


def _superscript(n):
    return str(n).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _metrics(res):
    """The run's metrics (SI): the manifest's, else computed; {} when series are missing."""
    from ..sim.metrics import summarize

    m = res.manifest.get("metrics")
    if m:
        return m
    try:
        return summarize(res)
    except (KeyError, ValueError, IndexError):
        return {}


def _transient():
    """[s] the start of the window of the end-effector metrics (``summarize``'s default)."""
    from ..sim.metrics import summarize

    return float(inspect.signature(summarize).parameters["transient"].default)


def requirement_limits(res) -> dict:
    """``{metric: limit}`` (the metric's SI unit) of the ``<=`` requirements of a run: its
    scenario's ``requirements`` table, else the defaults (see
    :func:`dqspace.scenarios.montecarlo.scenario_requirements`)."""
    from ..campaigns.montecarlo import scenario_requirements

    req = scenario_requirements(_scenario(res))
    return {m: limit for m, (op, limit, _) in req.items() if op == "<="}


# ------------------------------------------------- magnitudes against their limits


def _magnitude(ax, t, y, *, label, style=None, mask=None):
    """``y`` (>= 0) on a log axis; zeros and ``~mask`` not drawn. Returns what is drawn."""
    y = np.asarray(y, float)
    keep = y > 0 if mask is None else (y > 0) & mask
    shown = np.where(keep, y, np.nan)
    ax.plot(t, shown, **(style or {"color": "C0", "lw": 1.3}), label=label)
    ax.set_yscale("log")
    return shown


def _limit_line(ax, value, label, gid="requirement"):
    ax.axhline(value, **_LIMIT_STYLE, label=label, gid=gid)


def _metric_mark(ax, t, shown, value, label):
    """A black triangle at (t of the drawn peak, the metric's value)."""
    if not np.isfinite(shown).any():
        return
    k = int(np.nanargmax(shown))
    ax.plot(
        [t[k]], [value], ls="none", marker="v", ms=8, mfc="k", mec="w", label=label, gid="metric"
    )


def _log_view(ax, shown, extra=(), decades=3.0):
    """Log y-limits: from ``decades`` below the drawn peak (or the smallest value) to above
    the peak and the limits in ``extra``."""
    v = shown[np.isfinite(shown) & (shown > 0)]
    levels = [float(x) for x in extra if x is not None and np.isfinite(x) and x > 0]
    if not v.size and not levels:
        return
    peak = float(v.max()) if v.size else max(levels)
    low = max(float(v.min()), peak * 10.0**-decades) if v.size else peak / 10.0
    low = min([low, *levels])
    ax.set_ylim(low / 2.0, max([peak, *levels]) * 2.5)


def _verdict(value, limit):
    if not np.isfinite(value):
        return "no value"
    if value <= limit:
        margin = f"margin ×{format_number(limit / value, 3)}" if value > 0 else "0"
        return f"MET ({margin})"
    return f"NOT MET (×{format_number(value / limit, 3)} over)"


def _required_magnitude(
    ax, t, y, *, res, metric, what, unit, kind=None, mask=None, style=None, window=None
):
    """Draw a metric's quantity over time (display units, log axis) with its requirement
    and the metric's value; the verdict above the panel.  ``y`` in display units;
    ``window`` (bool, like ``t``): where the metric is taken (default everywhere)."""
    si = _metric_unit(metric)
    shown = _magnitude(ax, t, y, label=what, style=style, mask=mask)
    limit = requirement_limits(res).get(metric)
    value = _metrics(res).get(metric)
    parts, extra = [], []
    if window is not None and not np.any(window):
        parts.append(f"the run ended before the window of {metric}: no value")
    elif value is not None and np.isfinite(value):
        v = to_display(float(value), si, kind)[0]
        inside = shown if window is None else np.where(window, shown, np.nan)
        _metric_mark(ax, t, inside, v, f"{metric} = {format_number(v)} {unit}")
        parts.append(f"max {format_number(v)} {unit} ({metric})")
        extra.append(v)
    if limit is not None:
        lim = to_display(float(limit), si, kind)[0]
        _limit_line(ax, lim, f"requirement ≤ {format_number(lim)} {unit}")
        verdict = _verdict(v, lim) if extra else ""
        parts.append(
            f"requirement ≤ {format_number(lim)} {unit}" + (f": {verdict}" if verdict else "")
        )
        extra.append(lim)
    _log_view(ax, shown, extra)
    if parts:
        ax.set_title("; ".join(parts), loc="left", fontsize="small")
    return shown


def _metric_unit(metric):
    from ..sim.metrics import METRICS

    return METRICS[metric][0]


def _device_limit(ax, t, y, *, limits, value=None, value_text="", what, unit):
    """A device quantity's magnitude (log axis) with its limits ``[(level, label)]``."""
    shown = _magnitude(ax, t, y, label=what)
    extra = []
    for level, label in limits:
        _limit_line(ax, level, label, gid="limit")
        extra.append(level)
    if value is not None:
        _metric_mark(ax, t, shown, value, value_text)
        extra.append(value)
    _log_view(ax, shown, extra)
    return shown


# ------------------------------------------------------------------ closed loop


def plot_disturbance_rejection(res):
    """The base's errors against their requirements, and the arm's reaction on the base.

    Panels: the largest axis |position error| [mm] and the attitude error angle [deg] on
    log axes with the requirements (``base_pos_err_max``, ``base_att_err_max``) and the
    metrics' values; the arm's reaction force [N] and torque [N m] on the base.
    """
    t = res.t
    fig, ax = _fig(4, res, "base disturbance rejection", [_base_gains(res)], height=1.9)
    pos, pu = _display(res, "base_pos_err", "m")
    att, au = _display(res, "base_att_err", "rad")
    react = np.asarray(res["arm_reaction"], float)
    _required_magnitude(
        ax[0],
        t,
        np.abs(pos).max(axis=1),
        res=res,
        metric="base_pos_err_max",
        what="largest axis |error|",
        unit=pu,
    )
    _required_magnitude(
        ax[1],
        t,
        np.linalg.norm(att, axis=1),
        res=res,
        metric="base_att_err_max",
        what="error angle",
        unit=au,
    )
    for i, c in enumerate(_XYZ):
        ax[2].plot(t, react[:, i], **_style(i), label=f"f{c}")
        ax[3].plot(t, react[:, 3 + i], **_style(i), label=f"τ{c}")
    ax[0].set_ylabel(f"base position\nerror [{pu}]")
    ax[1].set_ylabel(f"base attitude\nerror [{au}]")
    ax[2].set_ylabel("arm reaction\nforce [N]")
    ax[3].set_ylabel("arm reaction\ntorque [N m]")
    return _finish(fig, ax, res)


def _moving_mean(x, n):
    """Centred mean over ``n`` samples along axis 0 (fewer at the ends)."""
    if n <= 1 or len(x) < 2:
        return np.asarray(x, float)
    k = np.ones(n)
    x = np.asarray(x, float)
    num = np.apply_along_axis(lambda c: np.convolve(c, k, mode="same"), 0, x)
    den = np.convolve(np.ones(len(x)), k, mode="same")
    return num / (den[:, None] if x.ndim == 2 else den)


def _pad_torque(tau):
    tau = np.asarray(tau, float)
    return np.hstack([np.zeros_like(tau), tau])


def _columns(res, name):
    return np.asarray(res[name]).shape[1] if name in res and np.ndim(res[name]) == 2 else 0


def actuator_wrenches(res):
    """The wrenches [f, τ] (N, 6) [N, N m] on the base, base axes, other than the arm's.

    Returns a list of ``(label, wrench)``: thrusters (the delivered mean over each period,
    ``wrench_thr_true``, else ``wrench_thr``), VSCMGs (``vscmg_torque_cmd −
    vscmg_torque_err``: asked minus what the steering could not deliver), reaction wheels
    (what the flight software asked of them, ``vscmg_torque_cmd`` — plus
    ``vscmg_torque_err`` when a VSCMG cluster is present — minus ``rw_torque_err``) and
    the scenario's constant disturbance when not zero.  Devices absent from the run are
    left out.
    """
    out = []
    n = len(res.t)
    if _columns(res, "thrust_cmd"):
        name = "wrench_thr_true" if "wrench_thr_true" in res else "wrench_thr"
        out.append(("thrusters (delivered)", np.asarray(res[name], float)))
    K, W = _columns(res, "gimbal_rate"), _columns(res, "rw_speed")
    if K or W:
        asked = np.asarray(res["vscmg_torque_cmd"], float)
        err = np.asarray(res["vscmg_torque_err"], float)
        if K:
            out.append(("VSCMGs (asked − steering error)", _pad_torque(asked - err)))
        if W:
            # flight.FlightSoftware.tick asks the wheels for this torque
            wanted = asked + err if K else asked
            out.append(("wheels (asked − shortfall)", _pad_torque(wanted - res["rw_torque_err"])))
    dist = _section(res, "disturbance")
    d6 = np.r_[dist.get("force", [0.0] * 3), dist.get("torque", [0.0] * 3)].astype(float)
    if np.any(d6 != 0.0):
        out.append(("disturbance (constant)", np.tile(d6, (n, 1))))
    return out


def plot_wrench_balance(res):
    """Rejection shown directly: the arm's reaction on the base against what the actuators
    delivered, the residual the base felt, and the base's error, per axis.

    Rows: force [N], torque [N m] (the reaction, each actuator's wrench and the residual
    ``reaction + actuators``, averaged over 0.1 s since pulsed thrusters deliver their
    force in impulses; the residual per control tick in light grey), the base position
    error [mm] and attitude error [deg] (rotation vector).  Columns: x, y, z (base axes).
    """
    t = res.t
    period = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
    n = max(1, int(round(0.2 / period)) | 1)
    window = f"{n} ticks ({format_number(n * period)} s)"
    react = np.asarray(res["arm_reaction"], float)
    parts = actuator_wrenches(res)
    residual = react + sum((w for _, w in parts), np.zeros_like(react))
    dist = _section(res, "disturbance")
    noise = dist.get("force_noise_std", 0.0) or dist.get("torque_noise_std", 0.0)
    settings = [
        _base_gains(res),
        f"actuator lines and residual: mean over {window}; residual = arm reaction + "
        "actuators" + ("; disturbance noise not recorded, not included" if noise else ""),
    ]
    fig, ax = _fig(
        4,
        res,
        "wrench balance on the base: arm reaction vs actuators",
        settings,
        height=2.0,
        width=13.0,
        cols=3,
        sharey="row",
    )
    pos, pu = _display(res, "base_pos_err", "m")
    att, au = _display(res, "base_att_err", "rad")
    styles = [  # thrusters: solid with squares (a dashed line on a stepped signal smears)
        {"color": "C0", "ls": "-", "lw": 1.2, "marker": "s", "ms": 3.5},
        {"color": "C1", "ls": "-.", "lw": 1.4},
        {"color": "C2", "ls": (0, (5, 1, 1, 1, 1, 1)), "lw": 1.4},
        {"color": "C4", "ls": (0, (8, 2)), "lw": 1.4},
    ]
    every = max(1, len(t) // 30)
    for j, c in enumerate(_XYZ):
        last = j == 2
        for row, off in ((0, 0), (1, 3)):
            a = ax[row, j]
            a.plot(
                t,
                residual[:, off + j],
                color="0.85",
                lw=0.6,
                label="residual per tick\n(pulsed thrust)" if last else "_r",
            )
            a.plot(
                t,
                react[:, off + j],
                color="k",
                lw=2.0,
                label="arm reaction (planned)" if last else "_a",
            )
            for (label, w), st in zip(parts, styles, strict=False):
                if "marker" in st:
                    st = dict(st, markevery=(every // 2, every))
                a.plot(t, _moving_mean(w[:, off + j], n), **st, label=label if last else "_p")
            a.plot(
                t,
                _moving_mean(residual[:, off + j], n),
                color="C3",
                lw=1.3,
                marker="o",
                ms=3.5,
                markevery=every,
                label=f"residual, mean over\n{window}" if last else "_m",
            )
        ax[0, j].set_title(f"{c} (base axes)", fontsize="medium")
        ax[2, j].plot(t, pos[:, j], color="C0", lw=1.3, label="position error" if last else "_e")
        ax[3, j].plot(
            t, att[:, j], color="C1", ls="--", lw=1.3, label="attitude error" if last else "_e"
        )
    limits = requirement_limits(res)
    for row, metric, unit, data in (
        (2, "base_pos_err_max", pu, pos),
        (3, "base_att_err_max", au, att),
    ):
        if metric not in limits:
            continue
        lim = to_display(limits[metric], _metric_unit(metric))[0]
        peak = float(np.nanmax(np.abs(data))) if data.size else 0.0
        if peak >= lim / 3.0:
            for j in range(3):
                for sign in (1.0, -1.0):
                    ax[row, j].axhline(
                        sign * lim,
                        **_LIMIT_STYLE,
                        gid="requirement",
                        label=f"requirement ±{format_number(lim)} {unit}"
                        if j == 2 and sign > 0
                        else "_q",
                    )
            note = f"requirement ±{format_number(lim)} {unit} (dotted)"
        else:
            note = (
                f"requirement ±{format_number(lim)} {unit}: off scale, the peak "
                f"{format_number(peak)} {unit} is {format_number(100 * peak / lim, 2)} % of it"
            )
        ax[row, 0].set_title(note, loc="left", fontsize="small")
    ax[0, 0].set_ylabel("force [N]")
    ax[1, 0].set_ylabel("torque [N m]")
    ax[2, 0].set_ylabel(f"base position\nerror [{pu}]")
    ax[3, 0].set_ylabel(f"base attitude\nerror [{au}]")
    _finish(fig, ax, res, legends=False, label_ax=ax[0, 2])
    for row in (0, 2, 3):  # the torque row draws its lines as the force row does
        _legend(ax[row, 2])
    return fig


def _task_start(res):
    return float(_section(res, "trajectory").get("start_time", 0.0))


def plot_tracking(res):
    """End-effector position and its reference (base frame), the error per axis, and its
    magnitude on a log axis with the requirement (``ee_max``) and the metrics; the
    transient the metrics leave out is hatched."""
    t = res.t
    fig, ax = _fig(5, res, "end-effector tracking (base frame)", [_arm_gains(res)], height=1.7)
    pos, u = _display(res, "ee_pos", "m")
    ref, _ = _display(res, "ee_ref", "m")
    err, _ = _display(res, "ee_err", "m")
    for i, c in enumerate(_XYZ):
        ax[i].plot(t, pos[:, i], **_style(i), label="actual")
        _reference_markers(ax[i], t, ref[:, i], "reference")
        ax[i].set_ylabel(f"{c} [{u}]")
        ax[3].plot(t, err[:, i], **_style(i), label=c)
    ax[3].set_ylabel(f"error [{u}]")
    t0, t_tr = _task_start(res), _transient()
    norm = np.linalg.norm(err, axis=1)
    _required_magnitude(
        ax[4],
        t,
        norm,
        res=res,
        metric="ee_max",
        what="|error|",
        unit=u,
        mask=t >= t0,
        style={"color": "k", "lw": 1.2},
        window=t >= t_tr,
    )
    m = _metrics(res)
    if "ee_rms" in m and np.any(t >= t_tr):
        ax[4].set_title(
            ax[4].get_title(loc="left") + f"; RMS {format_quantity(m['ee_rms'], 'm')} (ee_rms)",
            loc="left",
            fontsize="small",
        )
    if len(t) and t[0] < t_tr:
        ax[4].axvspan(
            t[0],
            min(t_tr, t[-1]),
            facecolor="0.9",
            lw=0.0,
            zorder=0,
            label=f"t < {format_number(t_tr)} s: not in\nee_max, ee_rms",
            gid="transient",
        )
    ax[4].set_ylabel(f"|error| [{u}]")
    for k, a in enumerate(ax):
        line = a.axvline(t0, color="0.5", lw=1.0, ls=":", label="task start" if k == 0 else None)
        line.set_gid("task_start")
    return _finish(fig, ax, res)


def _thruster_names(res, S):
    rows = (res.manifest.get("system") or {}).get("thrusters") or []
    names = [str(r.get("name", "")) if isinstance(r, dict) else "" for r in rows]
    if len(names) != S:
        names = [""] * S
    return [f"{i} {n}".strip() for i, n in enumerate(names)]


def _thruster_settings(res):
    thr = _section(res, "thrusters")
    keys = ("allocator", "mode", "max_thrust", "min_impulse_bit", "pwm")
    return _settings(res, "thrusters", [k for k in keys if k in thr])


def plot_thrusters(res):
    """Thruster commands [N] (every thruster labelled with its index and name) and the
    firing sequence."""
    t = res.t
    cmd, on = np.asarray(res["thrust_cmd"], float), np.asarray(res["thrust_on"], float)
    S = cmd.shape[1]
    fig, ax = _fig(
        2,
        res,
        "thrusters",
        [_thruster_settings(res), _base_gains(res, ("trans",))],
        height=max(2.6, 0.24 * S),
    )
    t_last = t[-1] if len(t) > 1 and t[-1] > t[0] else (t[0] if len(t) else 0.0) + 1.0
    im = ax[0].imshow(
        cmd.T,
        aspect="auto",
        origin="lower",
        interpolation="nearest",
        extent=(t[0] if len(t) else 0.0, t_last, -0.5, S - 0.5),
        cmap="viridis",  # lightness increases monotonically: reads in greyscale
    )
    fig.colorbar(
        im,
        ax=ax[0],
        location="top",
        label="allocated thrust command [N]",
        fraction=0.08,
        pad=0.02,
        aspect=50,
    )
    period = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
    peak = float(on.max()) if on.size else 0.0
    for i in range(S):
        fired = on[:, i] > 0
        h = 0.45 * on[fired, i] / peak if peak > 0 else np.zeros(0)
        ax[1].vlines(t[fired], i - h, i + h, lw=0.8, color="k")
    ax[1].set_ylim(-0.5, S - 0.5)
    ax[1].set_title(
        "firing: one bar per control period with a pulse; bar height ∝ on-time, "
        f"full height = {format_number(1e3 * peak)} ms on in a {format_number(1e3 * period)} ms "
        f"period ({format_number(100 * peak / period, 3)} % duty)"
        if peak > 0
        else "firing: no pulse",
        loc="left",
        fontsize="small",
    )
    _mark_faulty_thrusters(res, ax, S)
    names = _thruster_names(res, S)
    for a, what in zip(ax, ("command", "pulses"), strict=True):
        a.set_yticks(range(S), names, fontsize="small" if S > 8 else None)
        a.set_ylabel(f"thruster ({what}) [-]")
    return _finish(fig, ax, res)


def _mark_faulty_thrusters(res, axes, S):
    """A red dash-dot line along the row of each faulted thruster, from its fault on."""
    t_end = float(res.t[-1]) if len(res.t) else 0.0
    label = "faulted thruster"
    for e in res.manifest.get("events") or []:
        row = e.get("thruster") if isinstance(e, dict) and "t" in e else None
        if not isinstance(row, (int, np.integer)) or not 0 <= row < S:
            continue
        for k, ax in enumerate(axes):
            style = {"colors": "C3", "linestyles": "-.", "lw": 2.0, "gid": "fault_row"}
            ax.hlines(row, float(e["t"]), t_end, **style, label=label if k == 0 else "_fault")
        label = "_fault"


def plot_vscmg(res):
    """Gimbal rates [deg/s], their largest magnitude against the gimbal-rate limit
    (``vscmg.gimbal_rate_limit``, log axis, metric ``peak_gimbal_rate``), and wheel speeds
    [rpm] around their nominal speed."""
    t = res.t
    v = _section(res, "vscmg")
    settings = [
        _settings(res, "vscmg", ("gimbal_rate_limit", "wheel_accel_limit", "wheel_speed_rpm")),
        _base_gains(res, ("rot",)),
    ]
    fig, ax = _fig(3, res, "VSCMG cluster", settings, height=2.0)
    rate, ru = _display(res, "gimbal_rate", "rad/s", kind="gimbal_rate")
    speed, su = _display(res, "wheel_speed", "rad/s", kind="wheel_speed")
    for i in range(rate.shape[1]):
        ax[0].plot(t, rate[:, i], **_style(i), label=f"gimbal {i + 1}")
        ax[2].plot(t, speed[:, i], **_style(i), label=f"wheel {i + 1}")
    limits = []
    if "gimbal_rate_limit" in v:
        lim = to_display(float(v["gimbal_rate_limit"]), "rad/s", "gimbal_rate")[0]
        limits.append((lim, f"limit {format_number(lim)} {ru}"))
    peak = _metrics(res).get("peak_gimbal_rate")
    peak = to_display(float(peak), "rad/s", "gimbal_rate")[0] if peak is not None else None
    _device_limit(
        ax[1],
        t,
        np.abs(rate).max(axis=1) if rate.size else np.zeros(len(t)),
        limits=limits,
        value=peak,
        value_text=f"peak_gimbal_rate = {format_number(peak or 0)} {ru}",
        what="largest |gimbal rate|",
        unit=ru,
    )
    if limits and peak is not None:
        ax[1].set_title(
            f"peak {format_number(peak)} {ru} (peak_gimbal_rate) = "
            f"{format_number(100 * peak / limits[0][0], 3)} % of the limit {limits[0][1][6:]}",
            loc="left",
            fontsize="small",
        )
    if "wheel_speed_rpm" in v:
        ax[2].axhline(
            float(v["wheel_speed_rpm"]),
            color="0.3",
            ls=(0, (8, 2)),
            lw=1.0,
            label=f"nominal {format_number(v['wheel_speed_rpm'])} {su}",
            gid="nominal",
        )
    ax[0].set_ylabel(f"gimbal rate [{ru}]")
    ax[1].set_ylabel(f"|gimbal rate| [{ru}]")
    ax[2].set_ylabel(f"wheel speed [{su}]")
    return _finish(fig, ax, res)


def plot_wheels(res):
    """Reaction-wheel speeds [rpm]; their largest magnitude (log axis) against the speed
    limit and the momentum-dumping thresholds (metric ``peak_rw_speed``); motor torques
    [N m] with their limit; the momentum-dumping torque asked of the thrusters when any."""
    t = res.t
    w = _section(res, "wheels")
    dump = np.asarray(res["dump_torque"], float) if "dump_torque" in res else None
    rows = 4 if dump is not None and np.any(dump != 0.0) else 3
    settings = [
        _settings(res, "wheels", ("max_speed_rpm", "max_torque", "desaturation_gain")),
        _base_gains(res, ("rot",)),
    ]
    fig, ax = _fig(rows, res, "reaction wheels", settings, height=2.0)
    speed, su = _display(res, "rw_speed", "rad/s", kind="wheel_speed")
    torque = np.asarray(res["rw_torque_cmd"], float)
    for i in range(speed.shape[1]):
        ax[0].plot(t, speed[:, i], **_style(i), label=f"wheel {i + 1}")
        ax[2].plot(t, torque[:, i], **_style(i), label=f"wheel {i + 1}")
    sys_limits = (res.manifest.get("system") or {}).get("wheel_max_speed_rpm") or []
    limit = min(sys_limits) if sys_limits else w.get("max_speed_rpm")
    limits = []
    if limit:
        limits.append((float(limit), f"speed limit {format_number(limit)} {su}"))
        if w.get("desaturation_gain", 0.0) > 0:
            for key, what in (
                ("desaturation_start", "dumping starts"),
                ("desaturation_stop", "stops"),
            ):
                if key in w:
                    level = float(w[key]) * float(limit)
                    limits.append((level, f"{what} {format_number(level)} {su}"))
    peak = _metrics(res).get("peak_rw_speed")
    peak = to_display(float(peak), "rad/s", "wheel_speed")[0] if peak is not None else None
    shown = _device_limit(
        ax[1],
        t,
        np.abs(speed).max(axis=1) if speed.size else np.zeros(len(t)),
        limits=limits,
        value=peak,
        value_text=f"peak_rw_speed = {format_number(peak or 0)} {su}",
        what="largest |wheel speed|",
        unit=su,
    )
    # the dumping thresholds reuse the limit's dotted style: tell them apart by their level
    for ln in ax[1].get_lines():
        if ln.get_gid() == "limit" and not ln.get_label().startswith("speed limit"):
            ln.set_linestyle((0, (4, 2)))
            ln.set_color("0.4")
    if limit and peak is not None:
        ax[1].set_title(
            f"peak {format_number(peak)} {su} (peak_rw_speed) = "
            f"{format_number(100 * peak / float(limit), 3)} % of the limit",
            loc="left",
            fontsize="small",
        )
    del shown
    max_torque = w.get("max_torque")
    if max_torque:
        tpeak = float(np.abs(torque).max()) if torque.size else 0.0
        if tpeak >= max_torque / 3.0:
            for sign in (1.0, -1.0):
                ax[2].axhline(
                    sign * max_torque,
                    **_LIMIT_STYLE,
                    gid="limit",
                    label=f"limit ±{format_number(max_torque)} N m" if sign > 0 else "_l",
                )
        else:
            ax[2].set_title(
                f"limit ±{format_number(max_torque)} N m: off scale (peak "
                f"{format_number(100 * tpeak / max_torque, 3)} % of it)",
                loc="left",
                fontsize="small",
            )
    ax[0].set_ylabel(f"wheel speed [{su}]")
    ax[1].set_ylabel(f"|wheel speed| [{su}]")
    ax[2].set_ylabel("motor torque [N m]")
    if rows == 4:
        for i, c in enumerate(_XYZ):
            ax[3].plot(t, dump[:, i], **_style(i), label=f"τ{c}")
        ax[3].set_ylabel("dumping torque\n[N m]")
    return _finish(fig, ax, res)


def _steering_law(res):
    """The run's VSCMG steering law rebuilt from its scenario (None if it cannot be)."""
    from ...actuators.steering import SteeringLaw
    from ..build.devices import cluster as _cluster
    from ..spec.config import ScenarioError

    cfg, v = _scenario(res), _section(res, "vscmg")
    try:
        cluster = _cluster(cfg)
        if cluster is None:
            return None
        return SteeringLaw.for_cluster(
            cluster, gimbal_rate_max=v["gimbal_rate_limit"], wheel_accel_max=v["wheel_accel_limit"]
        )
    except (KeyError, TypeError, ValueError, ScenarioError):
        return None


def plot_singularity(res):
    """The CMG singularity measure δ_C = det(C Cᵀ) / h_ref⁶ [-] (0: singular) with the
    level below which the steering law brings in the wheel mode (its weight at 1 % of
    full, δ_C = ln(100) / μ_w); the metric ``min_det_GGt`` in the title.

    When the steering law cannot be rebuilt from the scenario, det(C Cᵀ) itself on a
    linear axis in a power of 10 named in its label.
    """
    t = res.t
    law = _steering_law(res)
    settings = [
        f"steering: h_ref {format_number(law.h_ref)} N m s, μ_w {format_number(law.wheel_mu)}, "
        f"λ0 {format_number(law.lambda0)}, μ {format_number(law.mu)}"
        if law is not None
        else ""
    ]
    fig, ax = _fig(1, res, "VSCMG singularity measure", settings, height=2.8)
    det_c = np.asarray(res["det_CCt"] if "det_CCt" in res else res["det_GGt"], float)
    which = "det(C Cᵀ)" if "det_CCt" in res else "det(G Gᵀ)"
    finite = det_c[np.isfinite(det_c)]
    if law is not None:
        delta = det_c / law.h_ref**6
        ax[0].plot(t, delta, **_style(0), label=f"δ_C = {which} / h_ref⁶")
        level = math.log(100.0) / law.wheel_mu
        _limit_line(
            ax[0],
            level,
            f"δ_C = {format_number(level, 3)}: below it the\nsteering weighs in the"
            "\nwheel mode (≥ 1 %)",
            "limit",
        )
        ax[0].axhline(0.0, color="k", lw=0.8)
        top = max(float(np.nanmax(delta)) if finite.size else 1.0, 2.0 * level)
        ax[0].set_ylim(-0.03 * top, 1.15 * top)
        ax[0].set_ylabel("singularity measure\nδ_C [-]")
        shown, label = delta, "δ_C"
    else:
        top = float(np.abs(finite).max()) if finite.size else 1.0
        exp3 = 3 * int(np.floor(np.log10(top) / 3)) if top > 0 else 0
        shown = det_c / 10.0**exp3
        ax[0].plot(t, shown, **_style(0), label=which)
        power = "" if exp3 == 0 else f"10{_superscript(exp3)} "
        ax[0].set_ylabel(f"{which}\n[{power}(N m s)⁶]")
        label = which
    parts = []
    if finite.size:
        k = int(np.nanargmin(shown))
        lo, hi = format_number(np.nanmin(shown), 6), format_number(np.nanmax(shown), 6)
        parts.append(
            f"min {label} = {format_number(shown[k])} at t = {format_number(t[k])} s "
            f"(0 = singular; range {lo} to {hi})"
        )
    m = _metrics(res).get("min_det_GGt")
    if m is not None and np.isfinite(m):
        parts.append(f"min det(G Gᵀ) = {format_number(m)} (min_det_GGt)")
    ax[0].set_title("; ".join(parts), loc="left", fontsize="small")
    return _finish(fig, ax, res)


# ------------------------------------------------------------------ open loop


def _open_loop_input(res):
    ol = _section(res, "open_loop")
    if not ol:
        return ""
    f = ", ".join(format_number(x) for x in ol.get("base_force_amplitude", ()))
    tq = ", ".join(format_number(x) for x in ol.get("base_torque_amplitude", ()))
    w = format_number(ol.get("frequency", float("nan")))
    return f"base force sin({w} t)·[{f}] N, torque sin({w} t)·[{tq}] N m"


def _integrator_text(res):
    integ = _section(res, "integrator")
    if integ.get("method") == "adaptive":
        return (
            f"ABA, adaptive RK45 (rtol {format_number(integ.get('rtol'))}, "
            f"max step {format_number(1e3 * integ.get('max_step', np.nan))} ms)"
        )
    if integ.get("method") == "rk4":
        return f"ABA, Lie-group RK4 (dt = {format_number(1e3 * integ.get('dt', np.nan))} ms)"
    return "ABA"


def plot_dynamics_check(res):
    """End-effector path of an open-loop run and its distance to the independent reference.

    The reference is ``res["ee_ref_I"]`` when recorded, else recomputed from the
    manifest's scenario by :func:`dqspace.scenarios.dynamics_check.reference_ee_positions`.
    """
    from ..build.dynamics_check import REFERENCE_METHOD, reference_ee_positions

    t = res.t
    ee = np.asarray(res["ee_pos_I"], float)
    if "ee_ref_I" in res:
        ref = np.asarray(res["ee_ref_I"], float)
    else:
        if not _scenario(res):
            raise ValueError("result: no ee_ref_I series and no scenario in its manifest")
        ref = reference_ee_positions(_scenario(res), t)
    fig, ax = _fig(2, res, "end-effector vs an independent reference (paper eq. 50)", height=2.8)
    r0 = ee[0] if len(ee) else np.zeros(3)
    d_run, u = to_display(ee - r0, "m")
    d_ref, _ = to_display(ref - r0, "m")
    for i, c in enumerate(_XYZ):
        ax[0].plot(t, d_run[:, i], **_style(i), label=f"{c}, run")
    for i in range(3):
        _reference_markers(ax[0], t, d_ref[:, i], "reference (x, y, z)" if i == 0 else None)
    start = ", ".join(format_number(x) for x in np.round(to_display(r0, "m")[0], 3))
    ax[0].set_ylabel(f"displacement from\nr(0) = ({start}) [{u}]")
    err = to_display(np.linalg.norm(ee - ref, axis=1), "m")[0]
    shown = err > 0
    ax[1].semilogy(
        t, np.where(shown, err, np.nan), color="k", lw=1.2, label="|r_run − r_reference|"
    )
    ax[1].set_ylabel(f"distance to the\nreference [{u}]")
    # float64 resolves the position itself only to ~1 ulp: below 10 ulp is rounding
    level = 10.0 * float(np.spacing(np.abs(to_display(ee, "m")[0]).max())) if len(ee) else 0.0
    ax[1].axhline(level, color="0.4", lw=1.0, ls=":", label="10 ulp of |r| (rounding)")
    ax[1].set_ylim(bottom=level / 10.0 if level > 0 else None)
    if shown.any():
        k = int(np.argmax(err))
        ax[1].set_title(
            f"largest: {format_number(err[k])} {u} at t = {format_number(t[k])} s",
            loc="left",
            fontsize="small",
        )
    ax[0].set_title(
        f"{_open_loop_input(res)}\nrun: {_integrator_text(res)}; reference: {REFERENCE_METHOD}",
        loc="left",
        fontsize="small",
    )
    return _finish(fig, ax, res)


# ------------------------------------------------------------------ all figures

_CLOSED_LOOP = {
    "disturbance_rejection": (plot_disturbance_rejection, ("base_pos_err", "arm_reaction")),
    "wrench_balance": (plot_wrench_balance, ("base_pos_err", "arm_reaction")),
    "tracking": (plot_tracking, ("ee_pos", "ee_ref", "ee_err")),
    "thrusters": (plot_thrusters, ("thrust_cmd", "thrust_on")),
    "vscmg": (plot_vscmg, ("gimbal_rate", "wheel_speed")),
    "singularity": (plot_singularity, ("det_GGt",)),
    "wheels": (plot_wheels, ("rw_speed", "rw_torque_cmd")),
}
_OPEN_LOOP = {"dynamics_check": (plot_dynamics_check, ("ee_pos_I",))}


def _has(res, name):
    """A series with at least one sample and one column (zero VSCMGs or thrusters: absent)."""
    if name not in res:
        return False
    x = np.asarray(res[name], float)
    return x.shape[0] > 0 and (x.ndim == 1 or x.shape[1] > 0) and bool(np.isfinite(x).any())


def figures(res: Results) -> dict:
    """``{name: Figure}`` of a result: what :func:`plot_all` writes, not saved."""
    kind = (_scenario(res).get("scenario") or {}).get("kind", "closed_loop")
    table = _OPEN_LOOP if kind == "open_loop" else _CLOSED_LOOP
    return {
        name: fn(res) for name, (fn, needs) in table.items() if all(_has(res, k) for k in needs)
    }


def plot_all(
    res: Results, directory: str | os.PathLike, formats: Sequence[str] = ("png", "pdf")
) -> list[Path]:
    """Write the figures of a result as ``<directory>/<name>.<fmt>``.

    Chooses by ``manifest["scenario"]["scenario"]["kind"]``: ``"closed_loop"`` (the
    default) writes the closed-loop figures whose series are present (VSCMG and wheel
    figures only with those devices), ``"open_loop"`` the dynamics-check figure.

    Returns
    -------
    list of Path, the files written (empty: nothing to plot)
    """
    directory = Path(directory)
    paths = []
    for name, fig in figures(res).items():
        directory.mkdir(parents=True, exist_ok=True)
        for fmt in formats:
            p = directory / f"{name}.{fmt}"
            fig.savefig(p, dpi=150)
            paths.append(p)
    return paths
