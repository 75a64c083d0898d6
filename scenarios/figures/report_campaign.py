"""One self-contained HTML page of a campaign directory, for a design review:
``dqspace report DIR`` on a Monte Carlo campaign (``montecarlo.json``), a robust tuning
(``tuning.json``) or a sweep (``sweep.json``): :func:`build_campaign_report`.

Every page holds the campaign's settings, its requirements, the warnings, the campaign's
figures (drawn again from the data, embedded as PNG) and the runs that failed or were
degraded, with the verdicts and numbers the console printed (from the same functions):

- **Monte Carlo**: the overall verdict; a small-sample warning when the runs are too few to
  bound a requirement's percentile at its confidence, or the table's P50 / P95 / P99
  (:func:`~dqspace.scenarios.campaigns.verdicts.campaign_warnings`,
  :func:`~dqspace.scenarios.campaigns.verdicts.percentile_warnings`); the runs, the seed, the
  dispersions and the base scenario; each requirement's sample percentile with its
  distribution-free bound from order statistics (the run of that rank), the runs and the
  verdict (:mod:`~dqspace.scenarios.campaigns.confidence`); the sensitivities (PRCC); every
  metric's percentiles; the histograms, envelopes and tornado plot.
- **Robust tuning**: the best design (or the closest, without a feasible one), its
  constraints with their estimate, bound and verdict, and its campaign's requirements table
  as above; the tuning's notes (too few runs for a bound, failed runs); the parameters and
  ranges, objective, constraints and settings; every candidate; the history and Pareto
  figures.
- **Sweep**: the variants are chosen, not drawn at random, so no percentile or confidence
  is claimed: each variant is judged on its own values against the base scenario's
  requirements (MET / NOT MET, as ``dqspace run`` judges a run); the swept keys and their
  values, the base scenario; the trade-off and Pareto figures.

Safety as every report (:mod:`.report_page`): everything read from the directory is escaped,
the files are read without following links (a received directory), nothing is fetched.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..campaigns.confidence import MET, NOT_MET, UNDECIDED
from ..campaigns.montecarlo import read_summary, scenario_requirements
from ..campaigns.verdicts import judge_run, overall, percentile_warnings
from ..spec.config import dumps_toml
from ..spec.schema import SCHEMA
from ..store.sweep_store import load_sweep, read_sweep_manifest, read_variant_records
from .report_page import (
    OPS,
    campaign_table,
    figures_html,
    html_path,
    kv_table,
    number_text,
    page,
    quantity,
    requirements_html,
    runs_html,
    short,
    table,
    warning_boxes,
    write_page,
)
from .report_page import escape as _e
from .report_page import status_span as _status
from .report_tuning import tuning_page

__all__ = ["build_campaign_report", "write_campaign_report", "campaign_kind"]


def campaign_kind(directory: str | os.PathLike) -> str | None:
    """``"montecarlo"``, ``"tuning"``, ``"sweep"`` or None (not a campaign directory)."""
    d = Path(directory)
    for name, kind in (("montecarlo", "montecarlo"), ("tuning", "tuning"), ("sweep", "sweep")):
        if (d / f"{name}.json").is_file():
            return kind
    return None


def _scenario_text(config):
    try:
        return dumps_toml(config, SCHEMA)
    except Exception:  # noqa: BLE001 (a damaged or hand-made file: shown as it is)
        return json.dumps(config, indent=1, default=str)


def _base_html(manifest):
    base = manifest.get("base")
    if not isinstance(base, dict):
        return ""
    return (
        "<details><summary>Base scenario (resolved; without outputs and requirements)"
        f'</summary><pre id="scenario">{_e(_scenario_text(base))}</pre></details>'
    )


# ------------------------------------------------------------------ Monte Carlo


def _percentiles_html(percentiles, n):
    rows = []
    for m, p in percentiles.items():
        if not isinstance(p, dict):
            continue
        cells = "".join(
            f'<td class="num">{_e(quantity(p.get(q), m))}</td>' for q in "50 95 99".split()
        )
        rows.append(f"<tr><td>{_e(m)}</td>{cells}</tr>")
    note = percentile_warnings(n)
    return (
        "<h2>Percentiles of every metric</h2>"
        + table("percentiles", ("metric", "P50", "P95", "P99"), rows)
        + "".join(f'<p class="undecided">{_e(w)}</p>' for w in note)
    )


def _sensitivity_html(sens):
    metrics = (sens or {}).get("metrics", {}) if isinstance(sens, dict) else {}
    if not metrics:
        return ""
    rows = []
    for m, e in metrics.items():
        params = e.get("parameters") or []
        if not params:
            rows.append(f"<tr><td>{_e(m)}</td><td colspan=4>{_e(e.get('note', ''))}</td></tr>")
        for p in params:
            rows.append(
                f"<tr><td>{_e(m)}</td><td>{_e(p.get('parameter'))} [{_e(p.get('unit'))}]</td>"
                f'<td class="num">{_e(number_text(p.get("prcc"), "+.3f"))}</td>'
                f'<td class="num">{_e(number_text(p.get("p_value"), ".3g"))}</td>'
                f"<td>{'yes' if p.get('significant') else ''}</td></tr>"
            )
    return (
        "<h2>Sensitivity</h2><p>Which dispersed parameter drives each required metric: the "
        "partial rank correlation coefficient (PRCC, in [-1, 1]: the correlation of the ranks "
        "once the other parameters are accounted for) and its p-value; significant below "
        f"{_e(sens.get('significance', 0.05))}.</p>"
        + table("sensitivity", ("metric", "parameter", "PRCC", "p-value", "significant"), rows)
    )


def _montecarlo_page(directory):
    info = read_summary(directory)  # checked: ResultError naming the file
    req = info.get("requirements") or []
    if req and not all(isinstance(r, dict) and "status" in r for r in req):
        raise ValueError(
            f"{directory}: a campaign stored before requirements had confidence bounds; "
            "run `dqspace montecarlo` on it again (its runs are kept) to judge them"
        )
    manifest = _sweep_manifest(directory)
    name = info.get("scenario") or directory.name
    status = info.get("verdict", "")
    cls = {MET: "ok", NOT_MET: "bad"}.get(status, "undecided")
    n, n_failed = int(info.get("n") or 0), int(info.get("n_failed") or 0)
    ids, errors = campaign_table(directory)
    records, _ = read_variant_records(directory, ids) if ids else ([], [])
    stop = info.get("until_confident")
    settings = [
        ("runs", f"{n} ({n_failed} failed)"),
        ("seed", info.get("seed")),
        ("scenario file", manifest.get("source")),
        ("dqspace", manifest.get("package_version")),
        ("created", manifest.get("created")),
    ]
    if isinstance(stop, dict):
        settings.append(
            ("until confident", f"batches of {stop.get('batch')}, {stop.get('batches')} run, "
             f"stopped: {stop.get('stopped')} (cap {stop.get('cap')})")
        )  # fmt: skip
    disp = [
        (k, ", ".join(f"{a} = {b}" for a, b in v.items()) if isinstance(v, dict) else v)
        for k, v in (info.get("dispersions") or {}).items()
    ]
    body = [
        f"<h1>{_e(name)}: Monte Carlo campaign</h1>",
        f'<div class="banner {cls}" id="status">Requirements {_e(status)}</div>',
        warning_boxes(req, info.get("warnings") or [], percentile_warnings(n - n_failed)),
        "<h2>Settings</h2>" + kv_table("settings", settings),
        "<h3>Dispersions</h3>" + kv_table("dispersions", disp) if disp else "",
        _base_html(manifest),
        "<h2>Requirements</h2>" + requirements_html(req),
        _sensitivity_html(info.get("sensitivity")),
        _percentiles_html(info.get("percentiles") or {}, n - n_failed),
        figures_html(lambda tmp: _plot_montecarlo(directory, tmp)),
        runs_html(records, errors),
    ]
    return page(f"{name}: dqspace Monte Carlo report", body)


def _plot_montecarlo(directory, tmp):
    from .campaign_plots import plot_montecarlo  # matplotlib: the campaign's figures

    return plot_montecarlo(directory, ("png",), figures_dir=tmp)


def _sweep_manifest(directory):
    try:
        return read_sweep_manifest(directory)
    except (OSError, ValueError):  # the page says what it can without it
        return {}


# ------------------------------------------------------------------ sweep


def _sweep_page(directory):
    manifest = read_sweep_manifest(directory)
    base = manifest.get("base") if isinstance(manifest.get("base"), dict) else {}
    name = (base.get("scenario") or {}).get("name") or directory.name
    ids, errors = campaign_table(directory)
    records, damaged = read_variant_records(directory, ids or None)
    keys = list(dict.fromkeys(k for r in records for k in r["overrides"]))
    values = {k: list(dict.fromkeys(short(r["overrides"].get(k, "(base)"), 80) for r in records))
              for k in keys}  # fmt: skip
    stored = manifest.get("requirements")
    try:
        req = scenario_requirements({"requirements": stored} if isinstance(stored, dict) else {})
    except ValueError as exc:
        raise ValueError(f"{directory / 'sweep.json'}: {exc}") from None
    rows, n_ok = [], 0
    for r in records:
        metrics = {
            m: v for m, v in r["metrics"].items() if m in req and isinstance(v, (int, float))
        }
        judged = {j["metric"]: j for j in judge_run(metrics, {m: req[m] for m in metrics})}
        verdict = overall(judged.values()) if len(judged) == len(req) else UNDECIDED
        ok = not r.get("error") and verdict == MET
        n_ok += ok
        cells = "".join(f"<td>{_e(short(r['overrides'].get(k, '(base)'), 80))}</td>" for k in keys)
        for m in req:
            j = judged.get(m)
            shown = quantity(j["value"], m) if j else "n/a"
            cells += f'<td class="num">{_e(shown)}</td><td>{_status(j["status"]) if j else ""}</td>'
        state = _status(verdict) if not r.get("error") else '<span class="fail">failed</span>'
        rows.append(f"<tr><td>{_e(r['id'])}</td>{cells}<td>{state}</td></tr>")
    head = ["variant", *keys]
    for m, q in req.items():
        head += [f"{m} ({OPS.get(q.op, q.op)} {quantity(q.limit, m)})", "verdict"]
    head.append("every requirement")
    n, n_failed = len(records), sum(bool(r.get("error")) for r in records)
    cls = "ok" if n and n_ok == n else "bad" if n_ok == 0 else "undecided"
    settings = [
        ("variants stored", f"{n} ({n_failed} failed)"),
        ("scenario file", manifest.get("source")),
        ("dqspace", manifest.get("package_version")),
        ("created", manifest.get("created")),
        *[(f"swept: {k}", ", ".join(v)) for k, v in values.items()],
    ]
    if damaged:
        settings.append(("damaged records (skipped)", "; ".join(damaged)))
    whose = "the base scenario's" if isinstance(stored, dict) else "the default"
    body = [
        f"<h1>{_e(name)}: sweep</h1>",
        f'<div class="banner {cls}" id="status">{n_ok} of {n} variants meet every requirement'
        f" ({n_failed} failed)</div>",
        "<h2>Settings</h2>" + kv_table("settings", settings),
        _base_html(manifest),
        "<h2>Requirements</h2><p>Each variant judged on its own values against "
        f"{whose} requirements (MET, NOT MET; as <code>dqspace run</code> judges a run). The "
        "variants of a sweep are chosen, not drawn at random: their spread is no sample of "
        "a population, so no percentile or confidence is claimed over them (a Monte Carlo "
        "campaign, <code>dqspace montecarlo</code>, does that).</p>",
        table("requirements", head, rows),
        figures_html(lambda tmp: _plot_sweep(directory, base, tmp)),
        runs_html(records, errors, what="variant"),
    ]
    return page(f"{name}: dqspace sweep report", body)


def _plot_sweep(directory, base, tmp):
    from . import campaign_plots as cp  # matplotlib: the sweep's figures

    df = load_sweep(directory)
    if df.empty:
        return []
    files = cp.save(cp.plot_sweep_tradeoff(df, base), tmp / "sweep_tradeoff", ("png",))
    a, b = "base_pos_err_max", "total_impulse"
    if a in df and b in df:
        files += cp.save(cp.plot_pareto(df, a, b, base_config=base), tmp / "sweep_pareto", ("png",))
    return files


# ------------------------------------------------------------------ build and write


def build_campaign_report(directory: str | os.PathLike) -> str:
    """The HTML page of a campaign directory (module docstring) as a string: a Monte Carlo
    campaign, a robust tuning or a sweep, told apart by their summary file.

    Raises
    ------
    ValueError : not a campaign directory, or its summary cannot be read
    """
    directory = Path(directory)
    kind = campaign_kind(directory)
    if kind == "montecarlo":
        return _montecarlo_page(directory)
    if kind == "tuning":
        return tuning_page(directory)
    if kind == "sweep":
        if (directory / "campaign.json").is_file():
            raise ValueError(
                f"{directory}: a Monte Carlo campaign that has not finished (no "
                "montecarlo.json); run the same `dqspace montecarlo` again (its runs are "
                "kept) to judge it"
            )
        return _sweep_page(directory)
    raise ValueError(
        f"{directory}: not a campaign directory (no montecarlo.json, tuning.json or sweep.json)"
    )


def write_campaign_report(directory: str | os.PathLike, path: str | os.PathLike) -> Path:
    """Write :func:`build_campaign_report` to ``path`` (``.html``; checked before the page
    is built) atomically; returns the path."""
    html_path(path)
    return write_page(path, build_campaign_report(directory))
