"""The shared figure machinery: styles, titles and status, events, legends, tick format,
requirement and limit lines, the run's metrics.

Every figure module of :mod:`dqspace.scenarios.figures` draws through these names, so that
the conventions of :mod:`dqspace.scenarios.figures.plots` hold everywhere: values in
display units with the unit on every axis, no offset or multiplier notation, legends
outside the axes on the right, lines that differ in style as well as colour, a red title
for a run that did not complete, requirements and limits as dotted black lines with the
metric's value stated.

The run's status on its figures (the title's status line, the events and degradations
marked on every panel) is in :mod:`dqspace.scenarios.figures.status`, gathered here.

Requirements come from one table (:func:`requirement_limits`): the scenario's
``[requirements]`` over :data:`dqspace.scenarios.spec.requirements.DEFAULT_REQUIREMENTS`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.axis import Axis
from matplotlib.category import StrCategoryFormatter
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter, FuncFormatter, ScalarFormatter

from ..campaigns.confidence import MET, NOT_MET, UNDECIDED
from ..campaigns.montecarlo import scenario_requirements
from ..sim.metrics import DEFAULT_TRANSIENT, METRICS, run_transient, summarize
from ..spec.requirements import DEFAULT_REQUIREMENTS
from ..spec.schema import SCHEMA
from .status import (
    DEGRADATION_LEGEND,
    EVENT_STYLE,
    SPAN_HATCHES,
    SPAN_ZORDER,
    STATUS_COLOR,
    DegradationItem,
    degradation_items,
    event_name,
    mark_events,
    run_events,
    span_style,
    status_text,
    wrap_lines,
)
from .units import NOT_MEASURED, format_compact, format_number, to_display

__all__ = [
    "REQUIREMENTS",
    "XYZ",
    "LINE_STYLES",
    "EVENT_STYLE",
    "LIMIT_STYLE",
    "STATUS_COLOR",
    "VERDICT_COLORS",
    "component_style",
    "scenario_config",
    "scenario_section",
    "status_text",
    "DegradationItem",
    "degradation_items",
    "wrap_lines",
    "SPAN_HATCHES",
    "SPAN_ZORDER",
    "span_style",
    "DEGRADATION_LEGEND",
    "value_text",
    "settings_text",
    "base_gains_text",
    "arm_gains_text",
    "title_text",
    "new_figure",
    "event_name",
    "run_events",
    "mark_events",
    "legend",
    "plain_ticks",
    "finish_figure",
    "display_series",
    "reference_markers",
    "superscript",
    "run_metrics",
    "transient",
    "requirement_limits",
    "magnitude",
    "limit_line",
    "metric_mark",
    "log_view",
    "verdict",
    "required_magnitude",
    "metric_unit",
    "device_limit",
    "run_style",
    "campaign_figure",
    "save",
    "literal_text",
    "value_label",
]


#: the default requirements (metric -> limit in the metric's SI unit), read from
#: :data:`dqspace.scenarios.spec.requirements.DEFAULT_REQUIREMENTS` (one table for
#: figures, reports and campaigns)
REQUIREMENTS = {m: r.limit for m, r in DEFAULT_REQUIREMENTS.items() if r.op == "<="}

#: the names of a vector's components
XYZ = ("x", "y", "z")
#: line styles of a vector's components, in order (solid, dashed, dotted, dash-dot, ...)
LINE_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)))
#: a requirement or a device limit: a dotted black line
LIMIT_STYLE = {"color": "k", "ls": (0, (1, 1.2)), "lw": 1.6}
#: the colour of a requirement's verdict: MET black, NOT MET red, UNDECIDED dark orange
VERDICT_COLORS = {MET: "k", NOT_MET: STATUS_COLOR, UNDECIDED: "#a85a00"}


# ------------------------------------------------------------------ titles and status


def component_style(i, lw=1.3):
    """Colour and line style of component i (distinct in greyscale for i < 6)."""
    return {"color": f"C{i % 10}", "ls": LINE_STYLES[i % len(LINE_STYLES)], "lw": lw}


def scenario_config(res) -> dict:
    """The run's resolved scenario (``manifest["scenario"]``; ``{}`` when absent)."""
    sc = res.manifest.get("scenario") or {}
    return sc if isinstance(sc, dict) else {}


def scenario_section(res, name) -> dict:
    """A section of the run's resolved scenario (``{}`` when absent)."""
    sec = scenario_config(res).get(name)
    return sec if isinstance(sec, dict) else {}


#: a space a title is not wrapped at (inside a setting: its key, value and unit)
_NBSP = "\u00a0"


def value_text(v) -> str:
    """A setting's value as a title shows it: ``on``/``off``, 4 digits, a vector with equal
    components as one number."""
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, (int, float)):
        return format_number(v)
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, (int, float)) for x in v):
        if len(set(v)) == 1:
            return format_number(v[0])
        return "[" + ", ".join(format_number(x) for x in v) + "]"
    return str(v)


def settings_text(res, section, keys, prefix=None, per_unit=None, per="per unit"):
    """``base: kp_trans 600 N/m, ...``: the values of ``keys`` of a scenario section with
    their schema units (a vector with equal components as one number); '' when none is
    set.  ``per_unit``: ``{key: values}``, the value each unit of a device has (given, they
    replace the section's): one number when they agree, else their range and ``per``
    (``max_thrust 5–8 N (per thruster)``)."""
    sec = dict(scenario_section(res, section))
    shown = {}
    for k, values in (per_unit or {}).items():
        values = [float(x) for x in values]
        if values:
            lo, hi = format_number(min(values)), format_number(max(values))
            sec[k] = min(values)
            if lo != hi:
                shown[k] = f"{lo}–{hi}"
    fields = SCHEMA[section].fields if section in SCHEMA else {}
    parts = []
    for k in keys:
        if k not in sec:
            continue
        unit = getattr(fields.get(k), "unit", "") or ""
        unit = "" if isinstance(sec[k], bool) or unit == "-" else unit
        # a setting stays on one line when a title is wrapped (no-break spaces)
        unit = unit.replace(" ", _NBSP)
        text = f"{k}{_NBSP}{shown.get(k, value_text(sec[k]))}" + (f"{_NBSP}{unit}" if unit else "")
        parts.append(text + (f"{_NBSP}({per})" if k in shown else ""))
    return f"{prefix or section}: " + ", ".join(parts) if parts else ""


def base_gains_text(res, which=("trans", "rot")) -> str:
    """The base controller's law and gains (``which``: translation, rotation) as a line."""
    keys = [f"k{g}_{w}" for w in which for g in "pd"] + ["feedforward"]
    law = scenario_section(res, "base_controller").get("law", "dual_pd")
    return settings_text(res, "base_controller", keys, prefix=f"base {law}")


def arm_gains_text(res) -> str:
    """The arm controller's law and gains as a line."""
    law = scenario_section(res, "arm_controller").get("law", "computed_torque")
    keys = {
        "computed_torque": ("omega_n", "zeta"),
        "reactionless": ("omega_n", "zeta", "task_gain", "reactionless_task", "reactionless_base"),
    }.get(law, ("null_space_damping",))
    return settings_text(res, "arm_controller", keys, prefix=f"arm {law}")


def capture_hold_text(res) -> str:
    """A capture run's arm law after the grasp (``capture.hold``: the impedance with its
    natural frequency, damping and interface limits, or the joint hold's
    ``hold_omega_n``); '' otherwise."""
    if (scenario_config(res).get("scenario") or {}).get("kind") != "capture":
        return ""
    if scenario_section(res, "capture").get("hold", "joint") == "impedance":
        keys = ("hold_omega_n", "hold_zeta", "interface_force_limit", "interface_torque_limit")
        return settings_text(res, "capture", keys, prefix="after the grasp: arm impedance")
    prefix = "after the grasp: arm joint hold"
    return settings_text(res, "capture", ("hold_omega_n",), prefix=prefix)


def title_text(res, what, settings=(), width=None, bold=None) -> str:
    """``<scenario name>: <what>``, the run's status (when not complete) and the settings
    lines, one per line; with ``width`` [in], every line wrapped to fit a figure that wide
    (:func:`wrap_lines`; ``bold``: measured in bold, default when the status says
    something)."""
    name = (scenario_config(res).get("scenario") or {}).get("name", "unnamed scenario")
    lines = [f"{name}: {what}"]
    status = status_text(res)
    if status:
        lines.append(status)
    lines += [s for s in settings if s]
    text = "\n".join(lines)
    if width is not None:
        text = wrap_lines(text, width, bold=bool(status) if bold is None else bold)
    return text


def new_figure(rows, res, what, settings=(), height=2.0, width=9.0, cols=1, sharey=False):
    """A bare Figure (no pyplot: no backend is chosen or changed) with constrained layout
    (it keeps the outside legends and every label inside the canvas) and its title; the
    title is red when the run did not complete or was degraded, and every line of it is
    wrapped to the figure's width (a degraded run's title names every degradation).

    Returns ``(fig, axes)``: axes (rows,) for one column, else (rows, cols); ``height``
    and ``width`` [in] per row and of the figure."""
    bad = bool(status_text(res))
    title = title_text(res, what, settings, width=width, bold=bad)
    lines = title.count("\n") + 1
    fig = Figure(figsize=(width, 0.9 + 0.2 * lines + height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, sharex=True, sharey=sharey, squeeze=False)
    fig.suptitle(
        title,
        fontsize="medium",
        color=STATUS_COLOR if bad else "k",
        fontweight="bold" if bad else "normal",
    )
    return fig, (axes[:, 0] if cols == 1 else axes)


def legend(ax, **kw):
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


def plain_ticks(fig):
    """No offset (``+3e3``) and no multiplier (``1e-5``) on any linear axis."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            fmt = axis.get_major_formatter()
            if isinstance(fmt, ScalarFormatter):
                fmt.set_useOffset(False)
                fmt.set_scientific(False)


def finish_figure(fig, axes, res, legends=True, label_ax=None):
    """The common end of a run's figure: events marked (named in ``label_ax``'s legend),
    grids, outside legends, ``time [s]`` under the bottom row, plain ticks; returns fig."""
    axes = list(np.ravel(axes))
    mark_events(res, axes, label_ax)
    for ax in axes:
        ax.grid(True, alpha=0.3)
        if legends:
            legend(ax)
        if ax.get_subplotspec().is_last_row():
            ax.set_xlabel("time [s]")
    plain_ticks(fig)
    return fig


def display_series(res, name, si_unit, kind=None):
    """``(values, unit)``: the recorded series ``name`` in display units
    (:func:`dqspace.scenarios.figures.units.to_display`)."""
    return to_display(np.asarray(res[name], float), si_unit, kind)


def reference_markers(ax, t, y, label):
    """A reference as ~40 open black circles over the actual line (both stay visible)."""
    every = max(1, len(t) // 40)
    ax.plot(t, y, ls="none", marker="o", ms=4, mfc="none", mec="k", markevery=every, label=label)


def superscript(n) -> str:
    """An integer in superscript digits (``-3`` -> ``⁻³``)."""
    return str(n).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def run_metrics(res):
    """The run's metrics (SI): the manifest's, else computed; {} when series are missing."""
    m = res.manifest.get("metrics")
    if m:
        return m
    try:
        return summarize(res)
    except (KeyError, ValueError, IndexError):
        return {}


def transient(res=None):
    """[s] the start of the window of the end-effector metrics: the run's
    ``metrics.transient`` (:func:`dqspace.scenarios.sim.metrics.run_transient`), or the
    default without a run."""
    return run_transient(res) if res is not None else DEFAULT_TRANSIENT


def requirement_limits(res) -> dict:
    """``{metric: limit}`` (the metric's SI unit) of the ``<=`` requirements of a run: its
    scenario's ``requirements`` table, else the defaults (see
    :func:`dqspace.scenarios.campaigns.montecarlo.scenario_requirements`)."""
    req = scenario_requirements(scenario_config(res))
    return {m: r.limit for m, r in req.items() if r.op == "<="}


# ------------------------------------------------- magnitudes against their limits


def magnitude(ax, t, y, *, label, style=None, mask=None):
    """``y`` (>= 0) on a log axis; zeros and ``~mask`` not drawn (a series that is 0
    wherever it is considered is said so in the panel: nothing could be drawn). Returns what
    is drawn."""
    y = np.asarray(y, float)
    keep = y > 0 if mask is None else (y > 0) & mask
    shown = np.where(keep, y, np.nan)
    ax.plot(t, shown, **(style or {"color": "C0", "lw": 1.3}), label=label)
    ax.set_yscale("log")
    considered = y if mask is None else y[np.asarray(mask, bool)]
    if considered.size and np.all(considered == 0.0):  # a log axis cannot show it: say so
        ax.text(
            0.5, 0.5, f"{label}: 0 throughout", transform=ax.transAxes, ha="center",
            va="center", color="0.3", gid="all-zero",
        )  # fmt: skip
        t = np.asarray(t, float)
        if t.size > 1 and t[-1] > t[0]:  # nothing drawn sets the time axis: the run's span
            ax.set_xlim(t[0], t[-1])
    return shown


def limit_line(ax, value, label, gid="requirement"):
    """A requirement or limit at ``value`` (display units): a dotted black line."""
    ax.axhline(value, **LIMIT_STYLE, label=label, gid=gid)


def metric_mark(ax, t, shown, value, label):
    """A black triangle at (t of the drawn peak, the metric's value)."""
    if not np.isfinite(shown).any():
        return
    k = int(np.nanargmax(shown))
    ax.plot(
        [t[k]], [value], ls="none", marker="v", ms=8, mfc="k", mec="w", label=label, gid="metric"
    )


def log_view(ax, shown, extra=(), decades=3.0):
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


def verdict(value, limit) -> str:
    """``MET (margin ×30)``, ``NOT MET (×2 over)`` or ``no value`` of a ``<=`` requirement
    (value and limit in one unit)."""
    if not np.isfinite(value):
        return "no value"
    if value <= limit:
        margin = f"margin ×{format_number(limit / value, 3)}" if value > 0 else "0"
        return f"MET ({margin})"
    return f"NOT MET (×{format_number(value / limit, 3)} over)"


def required_magnitude(
    ax, t, y, *, res, metric, what, unit, kind=None, mask=None, style=None, window=None
):
    """Draw a metric's quantity over time (display units, log axis) with its requirement
    and the metric's value; the verdict above the panel.  ``y`` in display units;
    ``window`` (bool, like ``t``): where the metric is taken (default everywhere)."""
    si = metric_unit(metric)
    shown = magnitude(ax, t, y, label=what, style=style, mask=mask)
    limit = requirement_limits(res).get(metric)
    value = run_metrics(res).get(metric)
    parts, extra = [], []
    unmeasured = (window is not None and not np.any(window)) or (
        value is not None and not np.isfinite(value)
    )
    if unmeasured:  # never drawn or judged as 0
        parts.append(f"the run ended before the window of {metric}: {NOT_MEASURED}")
    elif value is not None and np.isfinite(value):
        v = to_display(float(value), si, kind)[0]
        inside = shown if window is None else np.where(window, shown, np.nan)
        metric_mark(ax, t, inside, v, f"{metric} = {format_number(v)} {unit}")
        parts.append(f"max {format_number(v)} {unit} ({metric})")
        extra.append(v)
    if limit is not None:
        lim = to_display(float(limit), si, kind)[0]
        limit_line(ax, lim, f"requirement ≤ {format_number(lim)} {unit}")
        judged = verdict(v, lim) if extra else ("UNDECIDED" if unmeasured else "")
        parts.append(
            f"requirement ≤ {format_number(lim)} {unit}" + (f": {judged}" if judged else "")
        )
        extra.append(lim)
    log_view(ax, shown, extra)
    if parts:
        ax.set_title("; ".join(parts), loc="left", fontsize="small")
    return shown


def metric_unit(metric) -> str:
    """The SI unit a metric is recorded in (:data:`dqspace.scenarios.sim.metrics.METRICS`)."""
    return METRICS[metric][0]


def device_limit(ax, t, y, *, limits, value=None, value_text="", what, unit):
    """A device quantity's magnitude (log axis) with its limits ``[(level, label)]``."""
    shown = magnitude(ax, t, y, label=what)
    extra = []
    for level, label in limits:
        limit_line(ax, level, label, gid="limit")
        extra.append(level)
    if value is not None:
        metric_mark(ax, t, shown, value, value_text)
        extra.append(value)
    log_view(ax, shown, extra)
    return shown


# ------------------------------------------------------------------ figures of several runs

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)))


def run_style(i, n_points):
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


def campaign_figure(rows, title, height=2.2, width=9.5, cols=1, red=False, sharex=False):
    """A bare Figure of several runs with its title (red and bold when ``red``; every line
    wrapped to the figure's width); returns ``(fig, axes)``, axes (rows, cols)."""
    title = wrap_lines(title, width, bold=red)
    fig = Figure(
        figsize=(width, 1.0 + 0.2 * title.count("\n") + height * rows), layout="constrained"
    )
    axes = fig.subplots(rows, cols, squeeze=False, sharex=sharex)
    fig.suptitle(
        title,
        fontsize="medium",
        color=STATUS_COLOR if red else "k",
        fontweight="bold" if red else "normal",
    )
    return fig, axes


#: the formatters of tick labels given as text (``set_yticks(pos, names)``)
_TEXT_FORMATTERS = (FixedFormatter, FuncFormatter, StrCategoryFormatter)


def _literal_formatter(fmt):
    """``fmt`` with every ``$`` of its labels escaped (drawn as a dollar, not TeX)."""
    new = FuncFormatter(lambda x, pos=None: re.sub(r"(?<!\\)\$", r"\\$", str(fmt(x, pos))))
    new.literal = True
    return new


def literal_text(fig: Figure) -> Figure:
    """``fig`` with its titles, labels, legends and notes drawn as written: names and
    messages read from a result (an event, a thruster, a run's message) are not TeX (a
    ``$\\frac{$`` in a received manifest failed the figure).  Tick labels keep matplotlib's
    own notation (``10⁻³`` on a log axis); tick labels given as text have their ``$``
    escaped."""
    ticks = set()
    for axis in fig.findobj(Axis):
        ticks |= {id(t) for t in axis.findobj(Text) if t is not axis.label}
        for get, put in (
            (axis.get_major_formatter, axis.set_major_formatter),
            (axis.get_minor_formatter, axis.set_minor_formatter),
        ):
            fmt = get()
            if isinstance(fmt, _TEXT_FORMATTERS) and not getattr(fmt, "literal", False):
                put(_literal_formatter(fmt))  # labels given as text (thruster names)
    for t in fig.findobj(Text):
        if id(t) not in ticks:
            t.set_parse_math(False)
    return fig


def save(fig: Figure, path_stem: str | os.PathLike, formats: Sequence[str]) -> list[Path]:
    """Write ``fig`` as ``<path_stem>.<fmt>`` for each format (its text as written,
    :func:`literal_text`); returns the paths."""
    literal_text(fig)
    stem = Path(path_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        p = stem.with_name(f"{stem.name}.{fmt}")
        fig.savefig(p, dpi=150)
        paths.append(p)
    return paths


def value_label(v):
    """A value as a label shows it: numbers in 4 digits, short lists in full."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)):
        return format_number(v)
    if isinstance(v, (list, tuple)):
        if len(v) <= 4 and all(isinstance(x, (int, float)) for x in v):
            return "[" + ", ".join(format_number(x) for x in v) + "]"
        return format_compact(list(v), 4)
    if isinstance(v, dict):
        return format_compact(v, 4)
    return str(v)
