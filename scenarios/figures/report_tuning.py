"""The HTML page of a robust tuning directory (``tuning.json``, ``candidates/<k>/``):
``dqspace report DIR`` (:func:`dqspace.scenarios.figures.report_campaign.build_campaign_report`
says which page a directory gets, and what each holds)."""

from __future__ import annotations

from pathlib import Path

from ..campaigns.montecarlo import read_summary
from ..store.sweep_store import read_variant_records
from .campaign_tuning import read_tuning
from .report_page import (
    campaign_table,
    figures_html,
    kv_table,
    listing,
    number_text,
    page,
    quantity,
    requirement_text,
    requirements_html,
    runs_html,
    short,
    table,
    warning_boxes,
)
from .report_page import escape as _e
from .report_page import status_span as _status

__all__ = ["tuning_page"]


def _is_number(k):
    return isinstance(k, int) and not isinstance(k, bool)


def _constraints_html(cand):
    rows = []
    for c in cand.get("constraints") or []:
        if not isinstance(c, dict):
            continue
        m, op = c.get("metric", ""), c.get("op", "<=")
        if c.get("source") == "implicit":
            what, bound = "no failed run", ""
            est = _e(f"{number_text(c.get('value'), 'g')} failed")
        else:
            what = requirement_text(c)
            est = _e(quantity(c.get("estimate"), m))
            side = "upper" if op == "<=" else "lower"
            b = c.get("bound")
            bound = _e(f"{side} {quantity(b, m)}" if b is not None else "none (too few runs)")
        rows.append(
            f'<tr><td>{_e(m)}</td><td>{_e(what)}</td><td class="num">{est}</td>'
            f'<td class="num">{bound}</td><td>{_e(c.get("judged_on", ""))}</td>'
            f"<td>{_status(c.get('status', ''))}</td><td>{_e(c.get('reason', ''))}</td></tr>"
        )
    head = ("metric", "constraint", "estimate", "bound", "judged on", "verdict", "why")
    return table("constraints", head, rows)


def _candidates_html(cands, metric):
    rows = []
    for c in cands:
        params = ", ".join(f"{k} = {short(v, 40)}" for k, v in (c.get("params") or {}).items())
        rows.append(
            f"<tr><td>{_e(c.get('number'))}</td><td>{_e(short(params))}</td>"
            f'<td class="num">{_e(quantity(c.get("objective"), metric))}</td>'
            f"<td>{'yes' if c.get('feasible') is True else 'no'}</td>"
            f'<td class="num">{_e(number_text(c.get("violation"), ".3g"))}</td>'
            f'<td class="num">{_e(c.get("n_runs"))}</td>'
            f'<td class="num">{_e(c.get("n_failed"))}</td></tr>'
        )
    head = ("candidate", "design", "objective", "feasible", "violation", "runs", "failed")
    return "<h2>Candidates</h2>" + table("candidates", head, rows)


def _candidate_runs(directory, cands):
    """The records and the failed runs of every candidate's campaign, ids ``k/<run>``."""
    records, errors = [], {}
    for c in cands:
        k = c.get("number")
        if not _is_number(k):
            continue
        where = directory / "candidates" / str(k)
        ids, errs = campaign_table(where)
        recs, _ = read_variant_records(where, ids) if ids else ([], [])
        records += [{**r, "id": f"{k}/{r['id']}"} for r in recs]
        errors.update({f"{k}/{v}": e for v, e in errs.items()})
    return records, errors


def tuning_page(directory: Path) -> str:
    """The page of a robust tuning directory (:mod:`.report_campaign`)."""
    doc = read_tuning(directory)  # checked: ResultError naming the file
    cands = [c for c in doc.get("candidates") or [] if isinstance(c, dict)]
    s = doc.get("settings") if isinstance(doc.get("settings"), dict) else {}
    name = doc.get("scenario") or directory.name
    obj = s.get("objective") if isinstance(s.get("objective"), dict) else {}
    metric, label = obj.get("metric", ""), f"{obj.get('metric', '?')} {obj.get('stat', '')}"
    best, closest = doc.get("best"), doc.get("closest")
    number = best if _is_number(best) else closest if _is_number(closest) else None
    chosen = next((c for c in cands if c.get("number") == number), None)
    if chosen is None:
        banner, cls = "no candidate finished yet", "undecided"
    elif _is_number(best):
        value = quantity(chosen.get("objective"), metric)
        banner, cls = f"Best feasible design: candidate {number}, {label} = {value}", "ok"
    else:
        banner, cls = f"NO FEASIBLE CANDIDATE: the closest is candidate {number}", "bad"
    camp = {}
    if chosen is not None and (directory / "candidates" / str(number)).is_dir():
        try:
            camp = read_summary(directory / "candidates" / str(number))
        except ValueError:
            camp = {}
    params = [
        (
            p.get("name"),
            f"{number_text(p.get('low'), 'g')} to {number_text(p.get('high'), 'g')} "
            f"({'log' if p.get('log') else 'linear'} scale)",
        )
        for p in s.get("params") or []
        if isinstance(p, dict)
    ]
    cons = [
        f"{c.get('metric')}: {requirement_text(c)} ({c.get('source')})"
        for c in s.get("constraints") or []
        if isinstance(c, dict)
    ]
    settings = [
        ("objective", f"minimise {label}"),
        ("constraints", "; ".join(cons)),
        ("runs per candidate", s.get("n")),
        ("seed", s.get("seed")),
        ("budget", f"{len(cands)} of {doc.get('budget')} candidates finished"),
        ("sampler", s.get("sampler")),
        ("scenario file", s.get("source")),
        ("dqspace", s.get("package_version")),
        *[(f"tuned: {k}", v) for k, v in params],
    ]
    design = "".join(
        f"<tr><th>{_e(k)}</th><td>{_e(short(v))}</td></tr>"
        for k, v in ((chosen or {}).get("params") or {}).items()
    )
    records, errors = _candidate_runs(directory, cands)
    reqs = camp.get("requirements") or []
    body = [
        f"<h1>{_e(name)}: robust tuning</h1>",
        f'<div class="banner {cls}" id="status">{_e(banner)}</div>',
        warning_boxes(reqs, camp.get("warnings") or []) if reqs else "",
        '<h2>Notes</h2><ul id="notes">' + listing(list(doc.get("notes") or [])) + "</ul>"
        if doc.get("notes")
        else "",
        "<h2>Settings</h2>" + kv_table("settings", settings),
        f'<h2>Candidate {_e(number)}</h2><table id="design">{design}</table>' if chosen else "",
        "<h3>Its constraints</h3>" + _constraints_html(chosen) if chosen else "",
        "<h3>Its campaign's requirements</h3>" + requirements_html(reqs, "candidate-requirements")
        if reqs and all(isinstance(r, dict) for r in reqs)
        else "",
        _candidates_html(cands, metric),
        figures_html(lambda tmp: _plot_tuning(directory, tmp)),
        runs_html(records, errors),
    ]
    return page(f"{name}: dqspace robust tuning report", body)


def _plot_tuning(directory, tmp):
    from .campaign_tuning import plot_tuning  # matplotlib: the tuning's figures

    return plot_tuning(directory, ("png",), figures_dir=tmp)
