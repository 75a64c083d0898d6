"""What every ``dqspace report`` page shares: the style sheet, escaping, the page's frame,
figures embedded, values in display units and the file the page is written to.

The safety rules of every page (a run's, :mod:`.report`; a campaign's,
:mod:`.report_campaign`):

- every string read from a result or campaign directory is escaped (:func:`escape`), so
  text in the data (a scenario's name, an override, an error message) shows as text, never
  as markup;
- the page holds no script and fetches nothing: the style sheet is inline and the images
  are ``data:`` URLs of PNG files that dqspace drew itself from the data (never a file of
  the directory copied as it is), so it opens offline;
- no link into the directory and none followed while reading it (the readers refuse
  symbolic links and special files: :func:`dqspace.scenarios.store.storage.open_regular`).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..campaigns.confidence import NOT_MET, UNDECIDED
from ..campaigns.verdicts import missing_value_warnings, small_sample_warnings
from ..sim.metrics import METRICS
from ..store.received import ResultError
from ..store.received import read_json as read_bounded_json
from ..store.storage import MAX_JSON_BYTES, atomic_write_bytes, read_regular
from .units import format_number, format_quantity

__all__ = [
    "CSS",
    "OPS",
    "escape",
    "status_span",
    "quantity",
    "png_base64",
    "figure_html",
    "embed_png_files",
    "page",
    "html_path",
    "write_page",
    "listing",
    "CELL",
    "read_json",
    "short",
    "compact",
    "number_text",
    "requirement_text",
    "table",
    "kv_table",
    "small_sample_html",
    "warning_boxes",
    "figures_html",
    "runs_html",
    "requirements_html",
    "campaign_table",
]

#: the longest text of one value shown (an override, an error); the rest is cut
CELL = 300

CSS = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #111;
       line-height: 1.4; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; border-bottom: 1px solid #999; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0; }
td, th { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left;
         vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.judged { font-weight: bold; }
.banner { padding: 0.6em 1em; border: 2px solid; font-weight: bold; margin: 1em 0; }
.ok { border-color: #2a6e2a; }
.banner.undecided { border-color: #a85a00; }
.bad { border-color: #b00000; color: #b00000; }
.fail { color: #b00000; font-weight: bold; }
.undecided { color: #a85a00; font-weight: bold; }
.warning { border: 2px solid #a85a00; background: #fff6e8; padding: 0.4em 1em; margin: 1em 0; }
.warning h2 { border: none; margin-top: 0.3em; color: #a85a00; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 0.9em; color: #333; }
pre { background: #f4f4f4; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
details summary { cursor: pointer; }
"""

#: the comparison operators as shown
OPS = {"<=": "≤", ">=": "≥"}


def escape(x) -> str:
    """``x`` as text that cannot be markup (quotes escaped too: safe in attributes)."""
    return html.escape(str(x), quote=True)


def status_span(status) -> str:
    """A verdict (MET, NOT MET, UNDECIDED), coloured when it is not MET."""
    cls = {NOT_MET: "fail", UNDECIDED: "undecided"}.get(status)
    return f'<span class="{cls}">{escape(status)}</span>' if cls else escape(status)


def quantity(value, metric) -> str:
    """A metric's SI value in display units with its unit (``0.0331 mm``); ``not measured``
    for no value (None, NaN: a metric without a sample), ``n/a`` for a value that is not a
    number; a number without unit for a metric dqspace does not know (a sweep's own metric)."""
    if value is None:
        return "not measured"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return "n/a"
    if math.isnan(v):
        return "not measured"
    if not math.isfinite(v):
        return "n/a"
    if metric in METRICS:
        return format_quantity(v, METRICS[metric][0], kind=metric)
    return format_number(v)


def png_base64(fig, dpi=110) -> str:
    """A matplotlib figure as base64 PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def figure_html(name, caption, b64) -> str:
    """An embedded PNG figure (``id="fig-<name>"``) with its caption."""
    return (
        f'<figure id="fig-{escape(name)}"><img alt="{escape(caption)}" '
        f'src="data:image/png;base64,{b64}"><figcaption>{escape(caption)}</figcaption>'
        "</figure>"
    )


def embed_png_files(paths: Iterable[os.PathLike]) -> list[str]:
    """:func:`figure_html` of each PNG file dqspace has just drawn (``paths``)."""
    out = []
    for path in paths:
        path = Path(path)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        out.append(figure_html(path.stem, path.name, data))
    return out


def listing(items: Sequence[str], limit: int = 50) -> str:
    """``<li>`` items, escaped, at most ``limit`` of them, then a line saying how many more."""
    out = [f"<li>{escape(x)}</li>" for x in items[:limit]]
    if len(items) > limit:
        out.append(f"<li>… and {len(items) - limit} more</li>")
    return "\n".join(out)


def page(title: str, body: Iterable[str]) -> str:
    """The whole HTML page: ``title`` (escaped here) and the ``body`` parts (HTML already
    escaped; empty parts left out)."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>"
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


def write_page(path: str | os.PathLike, text: str) -> Path:
    """Write a page to ``path`` (:func:`html_path`) atomically; returns the path."""
    path = html_path(path)
    atomic_write_bytes(path, text.encode("utf-8"))
    return path


# ------------------------------------------------------------------ campaign pages' parts


def read_json(path, what):
    """The JSON object in the regular file ``path`` (no link followed, bounded in size and
    nesting: :func:`dqspace.scenarios.store.received.read_json`); ValueError naming the
    file and ``what`` it should be when it is missing, unreadable or not an object."""
    try:
        doc = read_bounded_json(path, what)
    except FileNotFoundError:
        raise ValueError(f"{path}: missing ({what})") from None
    except ResultError:
        raise
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot be read as {what} ({exc})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not {what} (a JSON object expected)")
    return doc


def short(value, n=CELL):
    """``value`` as text (JSON unless a string), at most ``n`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= n else text[: n - 1] + "…"


def compact(value) -> str:
    """An override's value, short: numbers to 4 significant digits (lists of them too),
    anything else as :func:`short` text of at most 60 characters."""
    if isinstance(value, bool) or value is None:
        return short(value, 60)
    if isinstance(value, (int, float)):
        return format_number(value)
    if isinstance(value, list) and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in value
    ):
        return short("[" + ", ".join(format_number(x) for x in value) + "]", 60)
    return short(value, 60)


def table(table_id, header, rows):
    """A table: the ``header`` cells escaped here, the ``rows`` (``<tr>`` HTML) as given."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    return f'<table id="{table_id}"><tr>{head}</tr>' + "".join(rows) + "</table>"


def kv_table(table_id, items):
    """A two-column table of (name, text); both escaped."""
    rows = [
        f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>"
        for k, v in items
        if v not in ("", None)
    ]
    return f'<table id="{table_id}">' + "".join(rows) + "</table>"


def small_sample_html(lines, title="Small sample", box_id="small-sample"):
    """A warning box (default: the small-sample one, ``id="small-sample"``), its lines
    escaped; nothing without a line."""
    if not lines:
        return ""
    return (
        f'<div class="warning" id="{box_id}"><h2>{escape(title)}</h2><ul>'
        + listing(list(lines))
        + "</ul></div>"
    )


def warning_boxes(req, stored=(), first=()) -> str:
    """The warnings of a campaign's requirement rows (``req``), as the console prints them:
    the small-sample box (``first``, then
    :func:`~dqspace.scenarios.campaigns.verdicts.small_sample_warnings`), then a box of the
    requirements whose metric some runs have no value for.  Rows that cannot be read again
    (a damaged summary): its ``stored`` warnings, as they are."""
    try:
        small, missing = small_sample_warnings(req), missing_value_warnings(req)
    except (KeyError, TypeError, ValueError):
        small, missing = [], list(stored)
    return small_sample_html([*first, *small]) + small_sample_html(
        missing, "Runs without a value", "missing-values"
    )


def figures_html(draw):
    """The figures ``draw(folder)`` writes (PNG), embedded; a figure that cannot be drawn
    from this directory's data is named with the reason.  A file of the directory that is
    damaged or beyond the load limits (ResultError) is no figure's problem: the error,
    naming the file, stops the page (as it stops ``dqspace plot``)."""
    out = ["<h2>Figures</h2>"]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            paths = [p for p in draw(Path(tmp)) if Path(p).suffix == ".png"]
        except ResultError:
            raise
        except Exception as exc:  # noqa: BLE001 (the page is written; it says what is missing)
            out.append(f"<p>not drawn: {escape(short(f'{type(exc).__name__}: {exc}'))}</p>")
            return "\n".join(out)
        out += embed_png_files(paths) or ["<p>none</p>"]
    return "\n".join(out)


def runs_html(records, errors=None, what="run"):
    """The failed and the degraded runs of ``records`` (``errors``: id -> error of runs the
    campaign's table says failed, for those without a record)."""
    failed = {r["id"]: r["error"] for r in records if r.get("error")}
    for vid, err in (errors or {}).items():
        failed.setdefault(vid, err)
    by_id = {r["id"]: r for r in records}

    def where(vid):
        over = (by_id.get(vid) or {}).get("overrides") or {}
        keys = ", ".join(f"{k} = {compact(v)}" for k, v in over.items())
        return f" ({short(keys)})" if keys else ""

    out = [f'<h2 id="runs">Failed and degraded {what}s</h2>']
    items = [f"{what} {vid}: {short(err)}{where(vid)}" for vid, err in failed.items()]
    out.append(f"<p>{len(failed)} failed</p>")
    if items:
        out.append(f'<ul id="failed">{listing(items)}</ul>')
    degraded = [r for r in records if r.get("degraded")]
    out.append(f"<p>{len(degraded)} degraded (completed, with a degradation)</p>")
    if degraded:
        items = [
            f"{what} {r['id']}: {short('; '.join(r['degraded']))}{where(r['id'])}" for r in degraded
        ]
        out.append(f'<ul id="degraded">{listing(items)}</ul>')
    old = sum(r.get("degraded") is None for r in records)
    if old:
        out.append(
            f"<p>{old} {what}s were stored by an earlier version of dqspace, which did not "
            "keep their degradations.</p>"
        )
    return "\n".join(out)


def requirements_html(req, table_id="requirements"):
    """A campaign's requirement rows (``montecarlo.json``'s, from
    :func:`~dqspace.scenarios.campaigns.verdicts.judge_campaign`) as a table."""
    rows = []
    for r in req:
        m = r.get("metric", "")
        op = r.get("op", "<=")
        judged = "upper" if op == "<=" else "lower"
        missing = r.get("n_missing") or 0
        runs = (r.get("n") or 0) + missing  # the bounds rank the unmeasured runs as worst
        runs_cell = f"{r.get('n')}" + (f" ({missing} not measured)" if missing else "")
        cells = ""
        for side in ("upper", "lower"):
            rank, value = r.get(f"{side}_rank"), r.get(side)
            if value is not None and rank:
                text = f"{quantity(value, m)} (rank {rank} of {runs})"
            elif side == judged and rank:
                text = f"none (rank {rank} of {runs} is a run not measured)"
            elif side == judged:
                text = f"none ({r.get('min_runs')} runs needed)"
            else:
                text = "none"
            cls = "num judged" if side == judged else "num"
            cells += f'<td class="{cls}">{escape(text)}</td>'
        rows.append(
            f"<tr><td>{escape(m)}</td><td>{escape(requirement_text(r))}</td>"
            f'<td class="num">{escape(quantity(r.get("value"), m))}</td>{cells}'
            f'<td class="num">{escape(runs_cell)}</td><td>{status_span(r.get("status", ""))}</td>'
            f"<td>{escape(r.get('reason', ''))}</td></tr>"
        )
    head = ("metric", "requirement", "estimate", "upper bound", "lower bound", "runs", "verdict")
    return (
        table(table_id, (*head, "why"), rows)
        + "<p>The estimate is the sample percentile of the runs; the bounds are the "
        "distribution-free confidence bounds of that percentile at the requirement's "
        "confidence, from order statistics (the run of that rank, the runs sorted). A "
        "requirement ≤ is MET when the upper bound is within the limit, NOT MET when the "
        "lower bound is beyond it, UNDECIDED otherwise (≥ the other way round); the bound "
        "that proves it MET is in bold. A run that did not measure the metric (failed, or "
        "ended before its window) is left out of the estimate and taken as the worst case "
        "by the bounds: a requirement is never MET because of it.</p>"
    )


def requirement_text(r) -> str:
    """``P99 ≤ 1 mm at 95 % confidence`` of a requirement's row (or a constraint's)."""
    op, m = r.get("op", "<="), r.get("metric", "")
    try:
        conf = format(100 * float(r.get("confidence")), "g")
    except (TypeError, ValueError):
        conf = "?"
    return (
        f"P{number_text(r.get('percentile'), 'g')} {OPS.get(op, op)} "
        f"{quantity(r.get('limit'), m)} at {conf} % confidence"
    )


def number_text(x, fmt):
    """``x`` formatted (``format(x, fmt)``), ``n/a`` when it is not a number."""
    try:
        return format(float(x), fmt)
    except (TypeError, ValueError):
        return "n/a"


def campaign_table(directory):
    """``metrics.csv`` of a campaign: (ids, id -> error of the failed runs)."""
    import pandas as pd  # heavy: loaded when a campaign's page is built

    path = Path(directory) / "metrics.csv"
    try:
        df = pd.read_csv(io.BytesIO(read_regular(path, MAX_JSON_BYTES)), dtype={"variant": str})
    except FileNotFoundError:
        return [], {}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot be read ({exc})") from None
    if "variant" not in df:
        return [], {}
    ids = [str(v) for v in df["variant"]]
    errors = df["error"] if "error" in df else [None] * len(ids)
    return ids, {v: str(e) for v, e in zip(ids, errors, strict=True) if isinstance(e, str)}
