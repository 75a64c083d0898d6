"""One self-contained HTML page of a run, for a design review: ``dqspace report RUN``; of a
sweep, a Monte Carlo campaign or a robust tuning: ``dqspace report DIR``
(:mod:`.report_campaign`: :func:`build_campaign_report`).

The page of a run holds, in this order: the run's status (a red banner unless it completed
without degradation), its degradations and events; the metrics in display units with
the requirements (the scenario's ``[requirements]``) and each one's verdict on the run's
value (MET, NOT MET; UNDECIDED without a value);
every figure of :func:`dqspace.scenarios.figures.plots.figures`, embedded as base64 PNG;
the resolved scenario as TOML; the versions, the machine and the run's times from the
manifest.

It needs nothing but the file: no script, no font, no stylesheet or image is fetched
(the style sheet is inline, the images are ``data:`` URLs), so it opens offline and can
be attached to a review as is; every string from the result is escaped
(:mod:`.report_page`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..campaigns.montecarlo import scenario_requirements
from ..campaigns.verdicts import judge_run
from ..sim.metrics import METRICS
from ..spec.config import dumps_toml
from ..spec.schema import SCHEMA
from ..store.storage import atomic_write_bytes
from .common import degradation_items, run_metrics, scenario_config, status_text
from .plots import figures
from .report_campaign import build_campaign_report, write_campaign_report
from .report_page import OPS as _OPS
from .report_page import escape as _e
from .report_page import figure_html, html_path, page, png_base64
from .report_page import status_span as _status_span
from .units import format_number, format_quantity

__all__ = [
    "build_report",
    "write_report",
    "build_campaign_report",
    "write_campaign_report",
    "html_path",
]


def _status_html(res):
    m = res.manifest
    text = status_text(res)
    t_end = float(res.t[-1]) if len(res.t) else 0.0
    duration = ((m.get("scenario") or {}).get("scenario") or {}).get("duration")
    if text:
        head = f"Run {text}"
        cls = "bad"
    else:
        head = "Run complete, no degradation"
        cls = "ok"
    span = f"simulated to t = {format_number(t_end)} s" + (
        f" of {format_number(duration)} s" if duration is not None else ""
    )
    out = [f'<div class="banner {cls}" id="status">{_e(head)} ({_e(span)})</div>']
    out += _degradations_html(res)
    events = [e for e in m.get("events") or [] if isinstance(e, dict)]
    out.append("<h2>Events</h2>")
    if events:
        out.append("<table><tr><th>t [s]</th><th>event</th><th>details</th></tr>")
        for e in events:
            details = ", ".join(f"{k} = {v}" for k, v in e.items() if k not in ("t", "event"))
            t = format_number(e["t"]) if "t" in e else ""
            out.append(
                f'<tr><td class="num">{_e(t)}</td><td>{_e(e.get("event", ""))}</td>'
                f"<td>{_e(details)}</td></tr>"
            )
        out.append("</table>")
    else:
        out.append("<p>none</p>")
    return "\n".join(out)


_INTERVALS_SHOWN = 8  # a degradation's intervals listed in the report's table


def _degradations_html(res):
    """The degradations: a table of every kind (what, how long, episodes, when) from
    ``manifest["degradations"]``, then the manifest's one-line messages."""
    m = res.manifest
    degraded = m.get("degraded") or []
    items = [d for d in degradation_items(res) if d.duration is not None]
    if not degraded and not items:
        return []
    out = ["<h2>Degradations</h2>"]
    if items:
        out.append(
            '<table id="degradations"><tr><th>degradation</th><th>time [s]</th>'
            "<th>episodes</th><th>intervals [s]</th></tr>"
        )
        for d in items:
            shown = ", ".join(
                f"{format_number(a)}–{format_number(b)}" for a, b in d.intervals[:_INTERVALS_SHOWN]
            )
            n = max(d.episodes, len(d.intervals))
            more = n - _INTERVALS_SHOWN
            if more > 0:
                shown += f", … ({more} more)"
            out.append(
                f'<tr><td>{_e(d.label)}</td><td class="num">{_e(format_number(d.duration))}'
                f'</td><td class="num">{n}</td><td>{_e(shown)}</td></tr>'
            )
        out.append("</table>")
    if degraded:
        out.append("<ul>")
        out += [f"<li>{_e(d)}</li>" for d in degraded]
        out.append("</ul>")
    return out


def _metrics_html(res):
    metrics = run_metrics(res)
    if not metrics:
        return "<h2>Metrics</h2><p>none (not a closed-loop run)</p>"
    req = scenario_requirements(scenario_config(res))
    judged = judge_run(metrics, {m: r for m, r in req.items() if m in metrics})
    judged = {r["metric"]: r for r in judged}
    rows = [
        "<h2>Metrics</h2>",
        '<table id="metrics"><tr><th>metric</th><th>value</th><th>requirement</th>'
        "<th>verdict</th><th>meaning</th></tr>",
    ]
    order = [m for m in METRICS if m in metrics] + [m for m in metrics if m not in METRICS]
    for name in order:
        value = metrics[name]
        unit, meaning = METRICS.get(name, ("-", ""))
        shown = format_quantity(value, unit, kind=name)  # NaN, None: not measured
        req = verdict = ""
        if name in judged:
            r = judged[name]
            req = f"{_OPS[r['op']]} " + format_quantity(r["limit"], unit, kind=name)
            verdict = _status_span(r["status"])
        rows.append(
            f'<tr><td>{_e(name)}</td><td class="num">{_e(shown)}</td><td>{_e(req)}</td>'
            f"<td>{verdict}</td><td>{_e(meaning)}</td></tr>"
        )
    rows.append("</table>")
    rows.append(
        "<p>Values in display units (lengths in mm, angles in deg, wheel speeds in rpm); "
        "the result files are SI. A single run is judged on its values; a metric without a "
        "sample (the end-effector metrics of a run that ends before metrics.transient) is "
        "not measured, never 0, and a requirement on it is UNDECIDED, not met; the "
        "percentile and the confidence of a requirement apply to a Monte Carlo campaign "
        "(<code>dqspace montecarlo</code>).</p>"
    )
    return "\n".join(rows)


def _figures_html(res):
    out = ["<h2>Figures</h2>"]
    figs = figures(res)
    if not figs:
        out.append("<p>none</p>")
    for name, fig in figs.items():
        title = fig.get_suptitle().splitlines()[0] if fig.get_suptitle() else name
        out.append(figure_html(name, f"{name}: {title}", png_base64(fig)))
    return "\n".join(out)


def _scenario_html(res):
    sc = res.manifest.get("scenario") or {}
    try:
        text = dumps_toml(sc, SCHEMA) if sc else "(no scenario in the manifest)"
    except TypeError:  # a value TOML cannot hold (a null, in keys of another version)
        text = json.dumps(sc, indent=1)
    return f'<h2>Scenario (resolved)</h2><pre id="scenario">{_e(text)}</pre>'


def _machine_html(res, source):
    m = res.manifest
    rows = [
        ("result", source or ""),
        ("scenario file", m.get("source", "")),
        ("dqspace", m.get("package_version", "")),
        ("Python", m.get("python", "")),
        ("dependencies", ", ".join(f"{k} {v}" for k, v in (m.get("dependencies") or {}).items())),
        ("machine", ", ".join(f"{k} {v}" for k, v in (m.get("machine") or {}).items())),
        ("seed", m.get("seed", "")),
        ("created", m.get("created", "")),
        ("updated", m.get("updated", "")),
    ]
    wall = m.get("wall_time")
    if wall is not None:
        rtf = m.get("real_time_factor")
        rows.append(
            (
                "wall time",
                f"{format_number(wall)} s"
                + (f" ({format_number(rtf, 3)}x real time)" if rtf is not None else ""),
            )
        )
    cells = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f'<h2>Versions and machine</h2><table id="machine">{cells}</table>'


def build_report(res, source: str | os.PathLike | None = None) -> str:
    """The HTML page of a result (see the module docstring) as a string.

    Parameters
    ----------
    res : Results (closed or open loop)
    source : the result's directory, named on the page
    """
    sc = res.manifest.get("scenario") or {}
    name = (sc.get("scenario") or {}).get("name", "unnamed scenario")
    desc = (sc.get("scenario") or {}).get("description", "")
    body = [
        f"<h1>{_e(name)}</h1>",
        f"<p>{_e(desc)}</p>" if desc else "",
        _status_html(res),
        _metrics_html(res),
        _figures_html(res),
        _scenario_html(res),
        _machine_html(res, None if source is None else str(source)),
    ]
    return page(f"{name}: dqspace run report", body)


def write_report(res, path: str | os.PathLike, source: str | os.PathLike | None = None) -> Path:
    """Write :func:`build_report` to ``path`` atomically; returns the path."""
    path = html_path(path)
    atomic_write_bytes(path, build_report(res, source).encode("utf-8"))
    return path
