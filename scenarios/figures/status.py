"""A run's status on its figures: the title's status line (every degradation, wrapped to
the figure's width) and the events marked on every panel (instants as dash-dot lines,
the degradations' intervals as hatched spans under the curves).

:mod:`dqspace.scenarios.figures.common` gathers these names with the rest of the figure
machinery; figures import them from there.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.colors import to_rgba
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Patch

from ..sim.metrics import KINDS, NO_THRUSTER
from .units import format_number, format_quantity

__all__ = [
    "EVENT_STYLE",
    "STATUS_COLOR",
    "status_text",
    "DegradationItem",
    "degradation_items",
    "wrap_lines",
    "event_name",
    "run_events",
    "SPAN_HATCHES",
    "SPAN_COLORS",
    "SPAN_ZORDER",
    "DEGRADATION_LEGEND",
    "span_style",
    "mark_events",
]

#: an event instant (a thruster fault): a dash-dot grey vertical line
EVENT_STYLE = {"color": "0.25", "ls": (0, (6, 2, 1, 2)), "lw": 1.0}
#: the colour of a title, a line or a mark saying that a run did not complete or failed
STATUS_COLOR = "#b00000"


# ------------------------------------------------------------------ the status line


def status_text(res) -> str:
    """'' for a complete run, else what went wrong (``FAILED at t = 3.2 s: ...``,
    ``interrupted at t = ...``, ``degraded: <every degradation, with how long it held>``;
    one line, however long: figures wrap it, :func:`title_text`)."""
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
    items = degradation_items(res)
    if items:
        return "degraded: " + ", ".join(d.text for d in items)
    return ""


@dataclass(frozen=True)
class DegradationItem:
    """One kind of degradation of a run as figures show it: ``kind`` (the key of its
    hatch), ``label`` (what it is, naming the units), ``duration`` [s] (None when the
    manifest does not say), ``intervals`` ``[(t0, t1), ...]`` [s] (where it held) and
    ``episodes`` (how many intervals there were, also those not listed)."""

    kind: str
    label: str
    duration: float | None
    intervals: tuple
    episodes: int = 0

    @property
    def text(self) -> str:
        """``arm joint 2 at its torque limit (1.2 s)`` (the duration unbroken in a wrap)."""
        if self.duration is None:
            return self.label
        return f"{self.label} ({format_number(self.duration, 2)}{_NBSP}s)"


_NBSP = "\u00a0"  # a space a title is not wrapped at


def degradation_items(res) -> list[DegradationItem]:
    """The run's degradations, every kind: ``manifest["degradations"]`` (a run's record,
    with durations and intervals); for a result without it, its ``manifest["degraded"]``
    lines with the intervals of the events with an ``until`` named as in the lines' order
    (their kinds)."""
    m = res.manifest
    table = m.get("degradations")
    if isinstance(table, list) and table:
        out = []
        for d in table:
            if not isinstance(d, dict) or "kind" not in d:
                continue
            iv = tuple((float(a), float(b)) for a, b in d.get("intervals") or ())
            dur = d.get("duration")
            out.append(
                DegradationItem(
                    str(d["kind"]),
                    str(d.get("label") or d["kind"]),
                    float(dur) if dur is not None else None,
                    iv,
                    int(d.get("episodes", len(iv))),
                )
            )
        return out
    return [DegradationItem(str(x), str(x), None, ()) for x in m.get("degraded") or []]


#: [in] what a figure's title leaves free on each side (constrained layout's pad and a
#: margin for the font's rounding)
_TITLE_MARGIN = 0.25
_MEASURE = None


def _text_width(text, prop) -> float:
    """The width [pt] of one line of text in the font ``prop``."""
    global _MEASURE
    if _MEASURE is None:
        _MEASURE = RendererAgg(10, 10, 720)  # 10 pixels per point: sub-point widths
    w, _, _ = _MEASURE.get_text_width_height_descent(text, prop, False)
    return w / 10.0


def wrap_lines(text, width, *, fontsize="medium", bold=False) -> str:
    """``text`` with every line wrapped at spaces (not at no-break spaces) so that each
    fits ``width`` [in] less a margin in the font of a figure's title; a word longer than
    the width (a long scenario name) is broken after a ``-``, ``_`` or ``.``, or else
    between two characters (:func:`_split_word`)."""
    prop = FontProperties(size=fontsize, weight="bold" if bold else "normal")
    room = 72.0 * max(width - 2 * _TITLE_MARGIN, 1.0)
    out = []
    for line in text.split("\n"):
        words = [p for w in line.split(" ") for p in _split_word(w, prop, room)]
        cur = words[0]
        for w in words[1:]:
            glue = "" if cur.endswith(_BROKEN) else " "
            trial = f"{cur}{glue}{w}"
            if _text_width(trial.replace(_BROKEN, ""), prop) <= room:
                cur = trial
            else:
                out.append(cur)
                cur = w
        out.append(cur)
    return "\n".join(out).replace(_BROKEN, "")


#: marks the end of a piece of a word :func:`_split_word` broke (removed once wrapped)
_BROKEN = "\x00"


def _split_word(word, prop, room) -> list[str]:
    """``word`` in pieces each of which fits ``room`` [pt] (the word itself when it fits):
    broken after the last ``-``, ``_`` or ``.`` that fits, else after the last character
    that fits; every piece but the last ends in :data:`_BROKEN` (joined without a space)."""
    pieces = []
    while _text_width(word, prop) > room and len(word) > 1:
        n = 1
        while n < len(word) and _text_width(word[: n + 1], prop) <= room:
            n += 1
        cut = max(word.rfind(c, 0, n) for c in "-_.") + 1
        cut = cut if cut > 0 else n
        pieces.append(word[:cut] + _BROKEN)
        word = word[cut:]
    return [*pieces, word]


# ------------------------------------------------------------------ events and degradations


def event_name(e):
    """``thruster fault: thruster 1 stuck_on`` (a kind by its value, a unit scale omitted)."""
    parts = []
    for k, v in e.items():
        if k in ("t", "event", "time", "until", "ticks") or (k == "scale" and v == 1.0):
            continue
        if isinstance(v, float):
            v = format_number(v)
        parts.append(str(v) if k == "kind" else f"{k} {v}")
    return f"{e['event']}: {' '.join(parts)}" if parts else str(e["event"])


def run_events(res):
    """``(instants, spans)``: instants ``[(t, label)]`` (faults and other events), spans
    ``{kind: (label, [(t0, t1), ...])}``: the degradations' intervals (a run's
    ``manifest["degradations"]``; for a result without it, the events with an ``until``,
    each ending one control period after its ``until``, the last tick's period)."""
    instants, spans = [], {}
    items = [d for d in degradation_items(res) if d.intervals]
    kinds = {d.kind for d in items}
    for d in items:
        n = max(d.episodes, len(d.intervals))
        dur = f", {format_number(d.duration, 2)} s" if d.duration is not None else ""
        spans[d.kind] = (f"{d.label} ({n} episode{'s' * (n > 1)}{dur})", list(d.intervals))
    period = float(np.median(np.diff(res.t))) if len(res.t) > 1 else 0.0
    episodes = {}
    for e in res.manifest.get("events") or []:
        if not isinstance(e, dict) or "t" not in e or "event" not in e:
            continue
        name = str(e["event"])
        if kinds and (name in kinds or name.split(":")[0] in kinds):
            continue  # drawn from the degradations' own intervals
        t = float(e["t"])
        if "until" in e:
            episodes.setdefault(name, []).append((t, float(e["until"]) + period))
        else:
            instants.append((t, f"{event_name(e)}\nat t = {format_quantity(t, 's')}"))
    for name, eps in episodes.items():
        spans[name] = (f"{name} ({len(eps)} episode{'s' * (len(eps) > 1)})", eps)
    return instants, spans


#: the hatch of each kind of degradation (:data:`dqspace.scenarios.sim.metrics.KINDS`,
#: then every thruster failed), all different; kinds not listed take the patterns after
SPAN_HATCHES = (
    "///",
    "\\\\\\",
    "xxx",
    "...",
    "|||",
    "---",
    "+++",
    "oo",
    "//..",
    "\\\\..",
    "**",
    "OO",
    "||--",
)
#: their colours (a degradation's hatch and light fill), as many as the patterns
SPAN_COLORS = (
    "#6a3d9a", "#b15928", "#1f78b4", "#33a02c", "#e31a1c", "#ff7f00",
    "#a6761d", "#666666", "#e7298a", "#1b9e77", "#7570b3", "#d95f02", "#66a61e",
)  # fmt: skip
#: spans lie under everything else (grid, lines, markers: zorder >= 1)
SPAN_ZORDER = 0.3
_SPAN_ALPHA, _SPAN_FILL_ALPHA, _SPAN_HATCH_LW = 0.4, 0.06, 0.6
#: the gid of the figure legend naming the degradations
DEGRADATION_LEGEND = "degradations"


def span_style(kinds):
    """``{kind: style}`` for :meth:`~matplotlib.axes.Axes.axvspan`: a hatch and a colour
    per kind, distinct; the known kinds always get the same one, the others the ones
    left in order."""
    known = [k.kind for k in KINDS] + [NO_THRUSTER]
    fixed = {k: known.index(k) for k in kinds if k in known}
    free = iter(i for i in range(10**6) if i >= len(known) or i not in fixed.values())
    out = {}
    for k in kinds:
        i = fixed[k] if k in fixed else next(free)
        color = to_rgba(SPAN_COLORS[i % len(SPAN_COLORS)])
        hatch = SPAN_HATCHES[i % len(SPAN_HATCHES)]
        if i >= len(SPAN_HATCHES):  # beyond the table: denser, still distinct
            hatch = hatch + hatch[0] * (i // len(SPAN_HATCHES))
        out[k] = {
            "facecolor": (*color[:3], _SPAN_FILL_ALPHA),
            "edgecolor": "none",
            "hatch": hatch,
            "hatchcolor": (*color[:3], _SPAN_ALPHA),
            "lw": 0.0,
            "zorder": SPAN_ZORDER,
        }
    return out


def mark_events(res, axes, label_ax=None):
    """Events on every axes: instants as dash-dot lines, named in the legend of
    ``label_ax`` (default the first); degradations as hatched spans under the curves, a
    hatch and a colour per kind, each kind in a band of its own (the first kind at the
    top, the bands sharing each axes' height: kinds never overlap; not on an axes showing
    an image), named in one legend under the figure (:data:`DEGRADATION_LEGEND`)."""
    label_ax = axes[0] if label_ax is None else label_ax
    instants, spans = run_events(res)
    styles = span_style(list(spans))
    n = len(spans)
    for ax in axes:
        first = ax is label_ax
        for t, label in instants:
            ax.axvline(t, **EVENT_STYLE, label=label if first else "_event", gid="event")
        if ax.images:  # an image fills the axes: a span under it is hidden, over it covers it
            continue
        for j, (kind, (_, episodes)) in enumerate(spans.items()):
            for t0, t1 in episodes:
                patch = ax.axvspan(
                    t0,
                    t1,
                    ymin=1.0 - (j + 1) / n,
                    ymax=1.0 - j / n,
                    **styles[kind],
                    label="_episode",
                    gid="episode",
                )
                patch.set_hatch_linewidth(_SPAN_HATCH_LW)
    if spans and axes:
        fig = axes[0].get_figure(root=True)
        handles = []
        for kind, (label, _) in spans.items():
            h = Patch(**styles[kind], label=textwrap.fill(label, 60))
            h.set_hatch_linewidth(_SPAN_HATCH_LW)
            handles.append(h)
        leg = fig.legend(
            handles=handles,
            loc="outside lower center",
            ncols=1 if n == 1 else 2,
            fontsize="small",
            title="degraded: one hatched band per kind, top to bottom" if n > 1 else "degraded",
            title_fontsize="small",
            frameon=False,
        )
        leg.set_gid(DEGRADATION_LEGEND)
    status = res.manifest.get("status", "complete")
    if status != "complete" and len(res.t):
        t_end = float(res.t[-1])
        label = f"run {'FAILED' if status == 'failed' else status} at t = {format_number(t_end)} s"
        for ax in axes:
            ax.axvline(
                t_end,
                color=STATUS_COLOR,
                lw=2.0,
                label=label if ax is label_ax else "_end",
                gid="run_end",
            )
