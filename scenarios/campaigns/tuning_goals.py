"""What a robust tuning minimises and what it must keep: the objective and the constraints,
judged on the N runs of one candidate's Monte Carlo campaign.

**Objective** ``METRIC[:STAT]``: a run metric (:data:`dqspace.scenarios.sim.metrics.METRICS`)
summarised over the campaign's runs by ``STAT``: ``P50`` (the default), any percentile
``P<q>``, ``mean`` or ``max``; minimised.  Default: ``total_impulse:P50``, the median
thruster impulse.

**Constraints** ``METRIC<=LIMIT[:P<q>]`` (or ``>=``; the limit in the metric's SI unit, the
99th percentile by default), and by default every requirement of the scenario
(:func:`dqspace.scenarios.campaigns.montecarlo.scenario_requirements`); a constraint on a
metric that has a requirement replaces it.  Each is judged with
:func:`dqspace.scenarios.campaigns.confidence.verdict`:

* when N runs are enough for the order-statistics bound at the constraint's confidence
  (``N >= confidence.min_runs``: 299 for P99 at 95 %), the **bound** decides: met when the
  upper bound is within the limit (MET), otherwise not (NOT MET or UNDECIDED: unproven
  counts as not met);
* with fewer runs the **sample** percentile decides (``judged_on = "sample"``: said in every
  output), a screening verdict that carries no confidence.

The margin of a constraint is its relative violation ``(value - limit) / |limit|`` (``<=``;
the other way round for ``>=``; ``value`` the judged one, bound or sample): ``<= 0`` when met.
Failed runs are left out of the percentiles, as in a Monte Carlo campaign, but a candidate
with a failed run is never feasible (the implicit constraint ``failed_runs``, its margin the
failed fraction).  Infeasible candidates rank by their total violation, the sum of the
positive margins.

A metric **not measured** in a run (NaN: no sample in its window, see the scenario key
``metrics.transient``) is never a good value: a constraint on it is not met on those runs'
account (the bound takes them as the worst case; a sample verdict is UNDECIDED, its margin
at least the unmeasured fraction), and an objective not measured in a completed run is NaN
for that candidate, which ranks after every candidate with a value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..sim.metrics import METRICS
from ..spec.config import did_you_mean
from .confidence import DEFAULT_CONFIDENCE, MET, NOT_MET, UNDECIDED, min_runs, verdict
from .montecarlo import scenario_requirements

__all__ = [
    "Objective",
    "Constraint",
    "ConstraintResult",
    "DEFAULT_OBJECTIVE",
    "NO_VALUE_MARGIN",
    "parse_objective",
    "parse_constraint",
    "tuning_constraints",
    "failed_runs_result",
]

#: the objective unless one is given: the median thruster impulse
DEFAULT_OBJECTIVE = "total_impulse:P50"
#: the margin of a constraint whose metric has no finite value in any run
NO_VALUE_MARGIN = 1e3
_CONSTRAINT = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op><=|>=)\s*(?P<limit>[^:]+?)\s*"
    r"(?::\s*[Pp](?P<pct>[0-9.]+))?\s*$"
)


def _check_metric(metric, where):
    if metric not in METRICS:
        raise ValueError(f"{where}: unknown metric {metric!r}{did_you_mean(metric, METRICS)}")


def _finite(values):
    v = np.asarray(values, dtype=float).ravel()
    return v[np.isfinite(v)]


@dataclass(frozen=True)
class Objective:
    """A metric summarised over a campaign's runs, minimised.

    Attributes
    ----------
    metric : str, a run metric (its SI unit: ``METRICS[metric][0]``)
    stat : str, ``"P<q>"`` (a percentile, 0 <= q <= 100), ``"mean"`` or ``"max"``
    """

    metric: str
    stat: str = "P50"

    @property
    def label(self) -> str:
        """``"total_impulse P50"``."""
        return f"{self.metric} {self.stat}"

    def value(self, values, completed=None) -> float:
        """The statistic of the finite values (NaN when there are none).

        ``completed`` (bool per run, optional): the runs that completed.  A completed run
        without a value did not measure the metric (no sample in its window): the objective
        is then NaN, not measured, never the statistic of the runs that did; the runs that
        failed are left out."""
        v = np.asarray(values, dtype=float).ravel()
        if completed is not None and np.isnan(v[np.asarray(completed, bool).ravel()]).any():
            return float("nan")
        v = _finite(v)
        if not v.size:
            return float("nan")
        if self.stat == "mean":
            return float(np.mean(v))
        if self.stat == "max":
            return float(np.max(v))
        return float(np.percentile(v, float(self.stat[1:])))


def parse_objective(text: str | Objective) -> Objective:
    """An :class:`Objective` from ``"METRIC[:STAT]"`` (ValueError naming what is wrong)."""
    if isinstance(text, Objective):
        return text
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"objective {text!r}: expected METRIC[:P50|P95|P99|mean|max]")
    metric, _, stat = (s.strip() for s in text.partition(":"))
    _check_metric(metric, f"objective {text!r}")
    stat = stat or "P50"
    if stat.lower() in ("mean", "max"):
        return Objective(metric, stat.lower())
    if stat[:1] in "pP":
        try:
            q = float(stat[1:])
        except ValueError:
            q = float("nan")
        if 0.0 <= q <= 100.0:
            return Objective(metric, f"P{q:g}")
    raise ValueError(
        f"objective {text!r}: statistic {stat!r}: use P<q> (P50, P95, P99), mean or max"
    )


@dataclass(frozen=True)
class Constraint:
    """A percentile of a metric against a limit, judged at a confidence.

    Attributes
    ----------
    metric : str, a run metric
    op : str, ``"<="`` or ``">="``
    limit : float, in the metric's SI unit
    percentile : float, in percent (99: the 99th percentile of the runs)
    confidence : float in (0, 1), of the order-statistics bound
    source : str, ``"requirement"`` (the scenario's) or ``"constraint"`` (given)
    """

    metric: str
    op: str
    limit: float
    percentile: float = 99.0
    confidence: float = DEFAULT_CONFIDENCE
    source: str = "constraint"

    @property
    def label(self) -> str:
        """``"base_pos_err_max P99 <= 0.001"`` (the implicit one: ``"no failed run"``)."""
        if self.source == "implicit":
            return "no failed run"
        return f"{self.metric} P{self.percentile:g} {self.op} {self.limit:g}"

    def bound_runs(self) -> int:
        """The fewest runs that give its order-statistics bound."""
        p = self.percentile / 100.0
        return min_runs(p if self.op == "<=" else 1.0 - p, self.confidence)

    def judge(self, values) -> ConstraintResult:
        """Judge the constraint on the runs' values (module docstring)."""
        v = verdict(values, self.op, self.limit, self.percentile, self.confidence)
        b = v.bound
        near = b.upper if self.op == "<=" else b.lower
        name = f"P{self.percentile:g}"
        if b.n == 0:
            return ConstraintResult(self, b.estimate, None, float("nan"), "none", UNDECIDED,
                                    NO_VALUE_MARGIN, "no finite value in any run")  # fmt: skip
        if near is not None:
            value, judged_on, status = near, "bound", v.status
            reason = v.reason
        else:
            value, judged_on = b.estimate, "sample"
            ok = value <= self.limit if self.op == "<=" else value >= self.limit
            status = MET if ok else NOT_MET
            reason = (
                f"sample {name} {'within' if ok else 'beyond'} {self.limit:g} ({b.n} runs; "
                f"{self.bound_runs()} give a bound at {100 * self.confidence:g} %)"
            )
            if b.missing and ok:  # the runs that did not measure it could be beyond
                status = UNDECIDED
                reason += f"; not measured in {b.missing} runs"
        scale = abs(self.limit) or 1.0
        margin = (value - self.limit) / scale if self.op == "<=" else (self.limit - value) / scale
        if status == UNDECIDED and b.missing:  # never feasible: the unmeasured fraction
            margin = max(margin, 0.0) + b.missing / (b.n + b.missing)
        return ConstraintResult(self, b.estimate, near, value, judged_on, status, margin, reason)

    def as_dict(self) -> dict:
        """Plain data (JSON)."""
        return {
            "metric": self.metric,
            "op": self.op,
            "limit": self.limit,
            "percentile": self.percentile,
            "confidence": self.confidence,
            "source": self.source,
        }


@dataclass(frozen=True)
class ConstraintResult:
    """A constraint judged on one candidate's runs.

    Attributes
    ----------
    constraint : Constraint
    estimate : float, the sample percentile (SI)
    bound : float or None, the order-statistics bound at the confidence (upper for ``<=``,
        lower for ``>=``; None: too few runs)
    value : float, what was judged: ``bound`` if there is one, else ``estimate``
    judged_on : str, ``"bound"``, ``"sample"`` or ``"none"`` (no finite value)
    status : str, MET, NOT MET or UNDECIDED (:mod:`dqspace.scenarios.campaigns.confidence`)
    margin : float, the relative violation (<= 0: met; module docstring)
    reason : str, one line
    """

    constraint: Constraint
    estimate: float
    bound: float | None
    value: float
    judged_on: str
    status: str
    margin: float
    reason: str

    @property
    def met(self) -> bool:
        return self.status == MET

    def as_dict(self) -> dict:
        """Plain data (JSON): the constraint's fields and the judgement's."""
        return {
            **self.constraint.as_dict(),
            "estimate": self.estimate,
            "bound": self.bound,
            "value": self.value,
            "judged_on": self.judged_on,
            "status": self.status,
            "margin": self.margin,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> ConstraintResult:
        """The inverse of :meth:`as_dict`."""
        c = Constraint(
            d["metric"], d["op"], d["limit"], d["percentile"], d["confidence"], d["source"]
        )
        return cls(c, d["estimate"], d["bound"], d["value"], d["judged_on"], d["status"],
                   d["margin"], d["reason"])  # fmt: skip


def failed_runs_result(n_failed: int, n: int) -> ConstraintResult:
    """The implicit constraint "no run failed" of a candidate (margin: the failed fraction)."""
    c = Constraint("failed_runs", "<=", 0.0, 100.0, DEFAULT_CONFIDENCE, "implicit")
    status = MET if n_failed == 0 else NOT_MET
    reason = "every run completed" if n_failed == 0 else f"{n_failed} of {n} runs failed"
    return ConstraintResult(c, float(n_failed), None, float(n_failed), "sample", status,
                            n_failed / max(n, 1), reason)  # fmt: skip


def parse_constraint(text: str | Constraint) -> Constraint:
    """A :class:`Constraint` from ``"METRIC<=LIMIT[:P<q>]"`` (ValueError naming the text)."""
    if isinstance(text, Constraint):
        return text
    m = _CONSTRAINT.match(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(
            f"constraint {text!r}: expected METRIC<=LIMIT[:P99] (or >=), e.g. "
            f"base_pos_err_max<=1e-3:P99 (the limit in the metric's SI unit)"
        )
    _check_metric(m["metric"], f"constraint {text!r}")
    try:
        limit = float(m["limit"])
    except ValueError:
        limit = float("nan")
    if not math.isfinite(limit):
        raise ValueError(f"constraint {text!r}: limit {m['limit']!r} is not a finite number")
    pct = float(m["pct"]) if m["pct"] else 99.0
    if not 0.0 < pct < 100.0:
        raise ValueError(f"constraint {text!r}: percentile P{m['pct']} must be in (0, 100)")
    return Constraint(m["metric"], m["op"], limit, pct)


def _requirement(metric, spec):
    """A Constraint from a requirement ``(op, limit, percentile[, confidence])`` or a table
    ``{op, limit, percentile[, confidence]}``."""
    if isinstance(spec, Mapping):
        op, limit = spec.get("op", "<="), spec["limit"]
        pct, conf = spec.get("percentile", 99), spec.get("confidence", DEFAULT_CONFIDENCE)
    else:
        op, limit, pct, *rest = spec
        conf = rest[0] if rest else DEFAULT_CONFIDENCE
    return Constraint(metric, op, float(limit), float(pct), float(conf), "requirement")


def tuning_constraints(
    config: Mapping, constraints: Sequence[str | Constraint] = (), *, requirements: bool = True
) -> list[Constraint]:
    """The constraints of a tuning: the scenario's requirements (unless ``requirements`` is
    False) with the given constraints added, a given one replacing the requirement on its
    metric.  ValueError naming a constraint that is malformed or given twice for a metric."""
    out = {}
    if requirements:
        for metric, spec in scenario_requirements(config).items():
            out[metric] = _requirement(metric, spec)
    given = set()
    for text in constraints:
        c = parse_constraint(text)
        if c.metric in given:
            raise ValueError(f"constraint {text!r}: {c.metric} is constrained twice")
        given.add(c.metric)
        out[c.metric] = c
    return list(out.values())
