"""One self-contained HTML page of a run, for a design review: ``dqspace report RUN``; or
of a Monte Carlo campaign: ``dqspace report CAMPAIGN`` (:func:`build_campaign_report`: the
requirements with their confidence bounds and verdicts, the sensitivities, the figures).

The page holds, in this order: the run's status (a red banner unless it completed
without degradation), its degradations and events; the metrics in display units with
the requirements (the scenario's ``[requirements]``) and each one's verdict on the run's
value (MET, NOT MET; UNDECIDED without a value);
every figure of :func:`dqspace.scenarios.figures.plots.figures`, embedded as base64 PNG;
the resolved scenario as TOML; the versions, the machine and the run's times from the
manifest.

It needs nothing but the file: no script, no font, no stylesheet or image is fetched
(the style sheet is inline, the images are ``data:`` URLs), so it opens offline and can
be attached to a review as is.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import tempfile
from pathlib import Path

from ..campaigns.confidence import MET, NOT_MET, UNDECIDED
from ..campaigns.montecarlo import scenario_requirements
from ..campaigns.verdicts import judge_run
from ..sim.metrics import METRICS
from ..spec.config import dumps_toml
from ..spec.schema import SCHEMA
from ..store.storage import atomic_write_bytes
from .common import degradation_items, run_metrics, scenario_config, status_text
from .plots import figures
from .units import format_number, format_quantity

__all__ = [
    "build_report",
    "write_report",
    "build_campaign_report",
    "write_campaign_report",
    "html_path",
]

_CSS = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #111;
       line-height: 1.4; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #999; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; }
td, th { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left;
         vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.banner { padding: 0.6em 1em; border: 2px solid; font-weight: bold; margin: 1em 0; }
.ok { border-color: #2a6e2a; }
.banner.undecided { border-color: #a85a00; }
.bad { border-color: #b00000; color: #b00000; }
.fail { color: #b00000; font-weight: bold; }
.undecided { color: #a85a00; font-weight: bold; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 0.9em; color: #333; }
pre { background: #f4f4f4; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
"""


_OPS = {"<=": "≤", ">=": "≥"}


def _e(x):
    return html.escape(str(x), quote=True)


def _png(fig, dpi=110):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return base64.b64encode(buf.getvalue()).decode("ascii")


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


def _status_span(status):
    cls = {NOT_MET: "fail", UNDECIDED: "undecided"}.get(status)
    return f'<span class="{cls}">{_e(status)}</span>' if cls else _e(status)


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
        shown = format_quantity(value, unit, kind=name) if value == value else "n/a"
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
        "the result files are SI. A single run is judged on its values (UNDECIDED: the run "
        "has no value of the metric); the percentile and the confidence of a requirement "
        "apply to a Monte Carlo campaign (<code>dqspace montecarlo</code>).</p>"
    )
    return "\n".join(rows)


def _figures_html(res):
    out = ["<h2>Figures</h2>"]
    figs = figures(res)
    if not figs:
        out.append("<p>none</p>")
    for name, fig in figs.items():
        title = fig.get_suptitle().splitlines()[0] if fig.get_suptitle() else name
        out.append(
            f'<figure id="fig-{_e(name)}"><img alt="{_e(title)}" '
            f'src="data:image/png;base64,{_png(fig)}"><figcaption>{_e(name)}: '
            f"{_e(title)}</figcaption></figure>"
        )
    return "\n".join(out)


def _scenario_html(res):
    sc = res.manifest.get("scenario") or {}
    text = dumps_toml(sc, SCHEMA) if sc else "(no scenario in the manifest)"
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
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(name)}: dqspace run report</title><style>{_CSS}</style></head>"
        "<body>\n" + "\n".join(b for b in body if b) + "\n</body></html>\n"
    )


def html_path(path: str | os.PathLike) -> Path:
    """``path`` as the file a report is written to, its folder made: ValueError for a
    directory or a suffix other than ``.html`` / ``.htm`` (a page written under another
    format's name misleads whoever opens it)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path}: is a directory; give the HTML file's path")
    if path.suffix.lower() not in ("", ".html", ".htm"):
        raise ValueError(f"{path.name}: a report is an HTML page; name it .html")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def write_report(res, path: str | os.PathLike, source: str | os.PathLike | None = None) -> Path:
    """Write :func:`build_report` to ``path`` atomically; returns the path."""
    path = html_path(path)
    atomic_write_bytes(path, build_report(res, source).encode("utf-8"))
    return path


# ------------------------------------------------------------------ a Monte Carlo campaign


def _quantity(value, metric):
    if value is None or value != value:
        return "n/a"
    return format_quantity(value, METRICS[metric][0], kind=metric)


def _campaign_requirements_html(req, warnings):
    out = [
        "<h2>Requirements</h2>",
        '<table id="requirements"><tr><th>metric</th><th>requirement</th><th>estimate</th>'
        "<th>bound</th><th>rank</th><th>runs</th><th>verdict</th><th>why</th></tr>",
    ]
    for r in req:
        m = r["metric"]
        what = (
            f"P{r['percentile']:g} {_OPS[r['op']]} {_quantity(r['limit'], m)} "
            f"at {100 * r['confidence']:g} % confidence"
        )
        side = "upper" if r["op"] == "<=" else "lower"
        bound = f"{side} {_quantity(r['bound'], m)}" if r.get("bound") is not None else "none"
        rank = r.get(f"{side}_rank")
        rank = f"{rank} of {r['n']}" if rank else f"({r['min_runs']} runs needed)"
        out.append(
            f"<tr><td>{_e(m)}</td><td>{_e(what)}</td>"
            f'<td class="num">{_e(_quantity(r["value"], m))}</td>'
            f'<td class="num">{_e(bound)}</td><td>{_e(rank)}</td>'
            f'<td class="num">{r["n"]}</td><td>{_status_span(r["status"])}</td>'
            f"<td>{_e(r['reason'])}</td></tr>"
        )
    out.append("</table>")
    out.append(
        "<p>The estimate is the sample percentile of the runs; the bound is the "
        "distribution-free confidence bound of that percentile from order statistics (the "
        "run of that rank, sorted): MET when the upper bound is within the limit, NOT MET "
        "when the lower bound is beyond it, UNDECIDED otherwise.</p>"
    )
    if warnings:
        out.append('<ul id="warnings">')
        out += [f'<li class="undecided">{_e(w)}</li>' for w in warnings]
        out.append("</ul>")
    return "\n".join(out)


def _percentiles_html(percentiles):
    out = [
        "<h2>Percentiles of every metric</h2>",
        '<table id="percentiles"><tr><th>metric</th><th>P50</th><th>P95</th><th>P99</th></tr>',
    ]
    for m, p in percentiles.items():
        if m not in METRICS:
            continue
        cells = "".join(
            f'<td class="num">{_e(_quantity(p[q], m))}</td>' for q in ("50", "95", "99")
        )
        out.append(f"<tr><td>{_e(m)}</td>{cells}</tr>")
    out.append("</table>")
    return "\n".join(out)


def _sensitivity_html(sens):
    metrics = (sens or {}).get("metrics", {})
    if not metrics:
        return ""
    alpha = sens.get("significance", 0.05)
    out = [
        "<h2>Sensitivity</h2>",
        "<p>Which dispersed parameter drives each required metric: the partial rank "
        "correlation coefficient (PRCC, in [-1, 1]: the correlation of the ranks once the "
        "other parameters are accounted for) and its p-value; significant below "
        f"{alpha:g}.</p>",
        '<table id="sensitivity"><tr><th>metric</th><th>parameter</th><th>PRCC</th>'
        "<th>p-value</th><th>significant</th></tr>",
    ]
    for m, e in metrics.items():
        if not e["parameters"]:
            out.append(f"<tr><td>{_e(m)}</td><td colspan=4>{_e(e['note'])}</td></tr>")
        for p in e["parameters"]:
            out.append(
                f"<tr><td>{_e(m)}</td><td>{_e(p['parameter'])} [{_e(p['unit'])}]</td>"
                f'<td class="num">{p["prcc"]:+.3f}</td><td class="num">{p["p_value"]:.3g}</td>'
                f"<td>{'yes' if p['significant'] else ''}</td></tr>"
            )
    out.append("</table>")
    return "\n".join(out)


def _campaign_figures_html(directory):
    from .campaign_plots import plot_montecarlo  # the campaign's figures, drawn here

    out = ["<h2>Figures</h2>"]
    with tempfile.TemporaryDirectory() as tmp:
        for path in plot_montecarlo(directory, ("png",), figures_dir=tmp):
            data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
            out.append(
                f'<figure id="fig-{_e(path.stem)}"><img alt="{_e(path.stem)}" '
                f'src="data:image/png;base64,{data}"><figcaption>{_e(path.name)}</figcaption>'
                "</figure>"
            )
    return "\n".join(out)


def build_campaign_report(directory: str | os.PathLike) -> str:
    """The HTML page of a Monte Carlo campaign directory (``montecarlo.json``, its runs):
    the overall verdict, the requirements with their estimates, confidence bounds, runs and
    verdicts, the warnings, every metric's percentiles, the sensitivities, the figures
    (histograms, envelopes, tornado) embedded, the dispersions; self-contained as
    :func:`build_report`."""
    directory = Path(directory)
    info = json.loads((directory / "montecarlo.json").read_text(encoding="utf-8"))
    req = info.get("requirements", [])
    if req and not all("status" in r for r in req):
        raise ValueError(
            f"{directory}: a campaign stored before requirements had confidence bounds; "
            "run `dqspace montecarlo` on it again (its runs are kept) to judge them"
        )
    name = info.get("scenario", directory.name)
    status = info.get("verdict", "")
    cls = {MET: "ok", NOT_MET: "bad"}.get(status, "undecided")
    stop = info.get("until_confident")
    runs = f"{info['n']} runs ({info.get('n_failed', 0)} failed), seed {info.get('seed')}"
    if stop:
        runs += (
            f"; until confident: batches of {stop['batch']}, {stop['batches']} run, "
            f"stopped: {stop['stopped']} (cap {stop['cap']})"
        )
    disp = "".join(
        f"<tr><td>{_e(k)}</td><td>{_e(', '.join(f'{a} = {b}' for a, b in v.items()))}</td></tr>"
        for k, v in (info.get("dispersions") or {}).items()
    )
    body = [
        f"<h1>{_e(name)}: Monte Carlo campaign</h1>",
        f"<p>{_e(runs)}</p>",
        f'<div class="banner {cls}" id="status">Requirements {_e(status)}</div>',
        _campaign_requirements_html(req, info.get("warnings", [])),
        _sensitivity_html(info.get("sensitivity")),
        _percentiles_html(info.get("percentiles", {})),
        _campaign_figures_html(directory),
        f'<h2>Dispersions</h2><table id="dispersions">{disp}</table>' if disp else "",
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(name)}: dqspace Monte Carlo report</title><style>{_CSS}</style></head>"
        "<body>\n" + "\n".join(b for b in body if b) + "\n</body></html>\n"
    )


def write_campaign_report(directory: str | os.PathLike, path: str | os.PathLike) -> Path:
    """Write :func:`build_campaign_report` to ``path`` atomically; returns the path."""
    path = html_path(path)
    atomic_write_bytes(path, build_campaign_report(directory).encode("utf-8"))
    return path
