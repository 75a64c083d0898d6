"""Requirements judged: a campaign's percentiles with their confidence bounds, a single
run's values, the overall verdict and the warnings about too few runs.

A campaign's table (:func:`judge_campaign`) has one row per requirement: the sample
percentile (``value``), the order-statistics bounds at the requirement's confidence
(``upper``, ``lower``; ``bound`` is the one judged against the limit: the upper bound of a
``<=`` requirement, the lower one of a ``>=``), the runs with a value (``n``), the fewest
runs that can bound that percentile (``min_runs``) and the verdict (``status``: MET, NOT
MET or UNDECIDED, with its ``reason``), all from
:func:`dqspace.scenarios.campaigns.confidence.verdict`.  A run without a value of the
metric (failed, or the metric not measured) is left out of the percentile but not of the
verdict: the bounds take it as the worst case, so a requirement is never MET because of
runs that did not measure it (a campaign that measured it in no run is UNDECIDED).  A single run
(:func:`judge_run`) is judged on its values: the percentile and the confidence do not apply
to one run.  :func:`campaign_warnings` and :func:`percentile_warnings` say when the runs are
too few to bound a requirement's percentile, or the percentiles of a campaign's table, at
the confidence (the console and the report print the same lines).

:func:`overall` is NOT MET when a requirement is NOT MET, else UNDECIDED when one is
UNDECIDED, else MET (what the command line's exit status follows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..spec.config import did_you_mean
from ..spec.requirements import parse_requirement
from .confidence import (
    DEFAULT_CONFIDENCE,
    MET,
    NOT_MET,
    UNDECIDED,
    min_runs,
    value_verdict,
    verdict,
)

__all__ = [
    "judge_campaign",
    "judge_run",
    "overall",
    "campaign_warnings",
    "small_sample_warnings",
    "missing_value_warnings",
    "percentile_warnings",
    "TABLE_PERCENTILES",
]

#: the percentiles a campaign reports for every metric (the console's and the report's table)
TABLE_PERCENTILES = (50, 95, 99)


def _requirements(requirements: Mapping, rows: Mapping) -> dict:
    out = {}
    for metric, spec in requirements.items():
        if metric not in rows:
            raise ValueError(
                f"requirement on {metric!r}: no such metric{did_you_mean(metric, rows)}"
            )
        out[metric] = parse_requirement(spec, f"requirement on {metric!r}")
    return out


def judge_campaign(rows: Mapping[str, Sequence[float]], requirements: Mapping) -> list[dict]:
    """Judge each requirement on a campaign's runs.

    Parameters
    ----------
    rows : metric -> (N,) the runs' values (SI; NaN: a failed run or a metric not
        measured: left out of the sample percentile, and taken as the worst case by the
        bounds, :func:`dqspace.scenarios.campaigns.confidence.percentile_bounds`)
    requirements : metric -> Requirement (or what
        :func:`dqspace.scenarios.spec.requirements.parse_requirement` reads: a 3-tuple
        ``(op, limit, percentile)`` is judged at the default confidence)

    Returns
    -------
    list of dict, one per requirement (JSON-ready): ``metric``, ``op``, ``limit``,
    ``percentile``, ``confidence``, ``n`` (runs with a value), ``n_missing`` (runs
    without: not measured), ``value`` (the sample percentile of the measured runs; NaN:
    none), ``upper`` / ``lower`` (the bounds; None: too few runs, or the bound falls on a
    run not measured), ``upper_rank`` / ``lower_rank`` (among all the runs), ``bound``
    (the one judged), ``min_runs`` (the fewest runs with which that bound exists),
    ``status``, ``reason``, ``ok`` (status is MET).
    """
    out = []
    for metric, req in _requirements(requirements, rows).items():
        values = np.asarray(rows[metric], dtype=float)
        v = verdict(values, req.op, req.limit, req.percentile, req.confidence)
        b = v.bound
        p = req.percentile / 100.0
        need = min_runs(p if req.op == "<=" else 1.0 - p, req.confidence)
        out.append(
            {
                "metric": metric,
                "op": req.op,
                "limit": req.limit,
                "percentile": req.percentile,
                "confidence": req.confidence,
                "n": b.n,
                "n_missing": int(values.size - b.n),
                "value": b.estimate,
                "upper": b.upper,
                "lower": b.lower,
                "upper_rank": b.upper_rank,
                "lower_rank": b.lower_rank,
                "bound": b.upper if req.op == "<=" else b.lower,
                "min_runs": need,
                "status": v.status,
                "reason": v.reason,
                "ok": v.met,
            }
        )
    return out


def judge_run(metrics: Mapping[str, float], requirements: Mapping) -> list[dict]:
    """Judge each requirement on one run's metric values (no percentile, no confidence).

    Returns
    -------
    list of dict, one per requirement: ``metric``, ``op``, ``limit``, ``value`` (the run's
    metric; NaN when it has none), ``status`` (MET, NOT MET; UNDECIDED: no value),
    ``reason``, ``ok``.
    """
    out = []
    for metric, req in _requirements(requirements, metrics).items():
        value = float(metrics[metric])
        v = value_verdict(value, req.op, req.limit)
        out.append(
            {
                "metric": metric,
                "op": req.op,
                "limit": req.limit,
                "value": value,
                "status": v.status,
                "reason": v.reason,
                "ok": v.met,
            }
        )
    return out


def overall(table: Sequence[Mapping]) -> str:
    """NOT MET if a row is NOT MET, else UNDECIDED if one is UNDECIDED, else MET (also for
    no requirement)."""
    statuses = {r["status"] for r in table}
    for status in (NOT_MET, UNDECIDED):
        if status in statuses:
            return status
    return MET


def campaign_warnings(table: Sequence[Mapping]) -> list[str]:
    """One line per set of requirements whose percentile the campaign's runs cannot bound
    at their confidence (fewer runs than ``min_runs``), saying how many are needed; and
    one per requirement whose metric some runs have no value for
    (:func:`small_sample_warnings`, then :func:`missing_value_warnings`)."""
    return small_sample_warnings(table) + missing_value_warnings(table)


def small_sample_warnings(table: Sequence[Mapping]) -> list[str]:
    """One line per set of requirements (rows of :func:`judge_campaign`) whose percentile
    the runs cannot bound at their confidence, saying how many runs are needed."""
    short = {}
    for r in table:
        if r["n"] < r["min_runs"]:
            key = (r["n"], r["percentile"], r["confidence"], r["min_runs"])
            short.setdefault(key, []).append(r["metric"])
    return [
        f"{', '.join(metrics)}: {n} runs cannot bound P{pct:g} at {100 * conf:g} % "
        f"confidence: at least {need} runs are needed"
        for (n, pct, conf, need), metrics in short.items()
    ]


def missing_value_warnings(table: Sequence[Mapping]) -> list[str]:
    """One line per requirement (rows of :func:`judge_campaign`) whose metric some runs
    have no value (not measured: left out of its percentile, the worst case in its verdict)."""
    return [
        f"{r['metric']}: not measured in {r['n_missing']} runs (failed, or ended "
        f"before the metric's window): left out of its percentile; its verdict "
        f"holds whatever they were (never MET because of them)"
        for r in table
        if r["n_missing"]
    ]


def percentile_warnings(
    n: int, percentiles=TABLE_PERCENTILES, confidence: float = DEFAULT_CONFIDENCE
) -> list[str]:
    """One line when ``n`` runs are too few to bound some of ``percentiles`` (in percent)
    from above at ``confidence`` (:func:`~dqspace.scenarios.campaigns.confidence.min_runs`):
    those percentiles of a campaign's table are then sample values only, the largest runs
    interpolated, with no statement of how far the true percentile may lie beyond them.
    None when the runs are enough for all (or when there is no run)."""
    short = [(p, min_runs(p / 100.0, confidence)) for p in percentiles]
    short = [(p, need) for p, need in short if n < need]
    if not short or n < 1:
        return []
    c = f"{100 * confidence:g} %"
    if len(short) == 1:
        ((p, need),) = short
        return [
            f"P{p:g} of {n} runs is a sample value only: no run bounds it at {c} confidence "
            f"({need} runs are needed)"
        ]
    names = ", ".join(f"P{p:g}" for p, _ in short[:-1]) + f" and P{short[-1][0]:g}"
    needs = ", ".join(f"{need} for P{p:g}" for p, need in short)
    return [
        f"{names} of {n} runs are sample values only: no run bounds them at {c} confidence "
        f"(runs needed: {needs})"
    ]
