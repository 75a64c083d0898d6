"""How sure a percentile is: distribution-free confidence bounds from order statistics.

N runs of a campaign are N independent draws of a metric X.  Sort them,
``x_(1) <= ... <= x_(N)``.  Whatever X's distribution (continuous), the number of draws
below its p-quantile ``xi_p`` is Binomial(N, p), so

    P(x_(k) >= xi_p) = P(at most k - 1 draws below xi_p) = F(k - 1; N, p)

with F the binomial CDF.  The **upper bound** at confidence c is ``x_(k)`` for the smallest
rank k with ``F(k - 1; N, p) >= c``: the p-quantile is at most ``x_(k)`` with probability at
least c.  It exists only when ``F(N - 1; N, p) = 1 - p^N >= c``, i.e. ``N >= ln(1 - c) /
ln(p)``: 299 runs for the 99th percentile at 95 % (with no run above the requirement, "P99
<= requirement" holds at 95 %), 59 runs for the 95th.  The **lower bound** is ``x_(k)`` for
the largest k with ``1 - F(k - 1; N, p) >= c`` (``P(x_(k) <= xi_p) >= c``).

A requirement ``P_p(X) <= limit`` is **MET** (at confidence c) when the upper bound is at
or below the limit, **NOT MET** when the lower bound is above it, and **UNDECIDED**
otherwise (more runs decide it); a requirement ``P_p(X) >= limit`` the other way round.
Nothing here depends on how the runs were made.

A run without a value (NaN: the metric was **not measured**, e.g. the run ended before the
metric's window, or the run failed) is not left out of the bounds: it could have been
anything, so the upper bound takes it as larger than every measured run and the lower bound
as smaller.  The bounds are then those of all N runs whatever the unmeasured ones were: a
campaign is never MET (nor NOT MET) because of the runs it did not measure, and one with
every run unmeasured is UNDECIDED.  The sample percentile (the estimate) is that of the
measured runs.

A single run is judged on its value (:func:`value_verdict`): the percentile and the
confidence do not apply to one run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..spec.requirements import DEFAULT_CONFIDENCE

__all__ = [
    "DEFAULT_CONFIDENCE",
    "MET",
    "NOT_MET",
    "UNDECIDED",
    "Bound",
    "Verdict",
    "min_runs",
    "upper_rank",
    "lower_rank",
    "percentile_bounds",
    "verdict",
    "value_verdict",
]

#: the statuses of a verdict
MET, NOT_MET, UNDECIDED = "MET", "NOT MET", "UNDECIDED"


def _check(n, p, c):
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise ValueError(f"n: a number of runs (a non-negative integer), got {n!r}")
    if not 0.0 < p < 1.0:
        raise ValueError(f"p: a quantile level in (0, 1) (the 99th percentile is 0.99), got {p!r}")
    if not 0.0 < c < 1.0:
        raise ValueError(f"confidence: in (0, 1) (95 % is 0.95), got {c!r}")
    return int(n), float(p), float(c)


def min_runs(p: float, confidence: float = DEFAULT_CONFIDENCE) -> int:
    """The fewest runs for which an upper bound on the p-quantile exists at this confidence
    (the largest run is the bound): the smallest N with ``1 - p^N >= confidence``."""
    _, p, c = _check(0, p, confidence)
    n = max(1, math.ceil(math.log1p(-c) / math.log(p)))
    while 1.0 - p**n < c:  # guard the rounding of the logarithms
        n += 1
    while n > 1 and 1.0 - p ** (n - 1) >= c:
        n -= 1
    return n


def upper_rank(n: int, p: float, confidence: float = DEFAULT_CONFIDENCE) -> int | None:
    """The rank k (1-based) of the order statistic that bounds the p-quantile from above
    at this confidence: the smallest k with ``binom.cdf(k - 1, n, p) >= confidence``; None
    when even the largest of n runs is not enough (``n < min_runs(p, confidence)``)."""
    from scipy.stats import binom  # heavy (all of scipy.stats): loaded when a bound is asked

    n, p, c = _check(n, p, confidence)
    ok = np.flatnonzero(binom.cdf(np.arange(n), n, p) >= c)
    return int(ok[0]) + 1 if ok.size else None


def lower_rank(n: int, p: float, confidence: float = DEFAULT_CONFIDENCE) -> int | None:
    """The rank k (1-based) of the order statistic that bounds the p-quantile from below at
    this confidence: the largest k with ``binom.sf(k - 1, n, p) >= confidence``
    (``P(x_(k) <= xi_p)``); None when even the smallest run is not enough."""
    from scipy.stats import binom  # heavy (all of scipy.stats): loaded when a bound is asked

    n, p, c = _check(n, p, confidence)
    ok = np.flatnonzero(binom.sf(np.arange(n), n, p) >= c)
    return int(ok[-1]) + 1 if ok.size else None


@dataclass(frozen=True)
class Bound:
    """A percentile and its confidence bounds from n runs.

    Attributes
    ----------
    percentile : float, the level in percent (99 for P99)
    confidence : float in (0, 1)
    n : int, the runs
    estimate : float, the sample percentile (``numpy.percentile``, linear interpolation)
    upper, lower : float or None, the order-statistics bounds (None: too few runs, or the
        rank falls on a run without a value)
    upper_rank, lower_rank : int or None, the ranks (1-based, among all ``n + missing``
        runs) they are
    missing : int, the runs without a value (not measured: NaN), ranked last for the upper
        bound and first for the lower one (module docstring)
    """

    percentile: float
    confidence: float
    n: int
    estimate: float
    upper: float | None
    lower: float | None
    upper_rank: int | None
    lower_rank: int | None
    missing: int = 0

    def as_dict(self) -> dict:
        """Plain data (JSON)."""
        return {
            "percentile": self.percentile,
            "confidence": self.confidence,
            "n": self.n,
            "estimate": self.estimate,
            "upper": self.upper,
            "lower": self.lower,
            "upper_rank": self.upper_rank,
            "lower_rank": self.lower_rank,
            "missing": self.missing,
        }


def percentile_bounds(values, percentile: float, confidence: float = DEFAULT_CONFIDENCE) -> Bound:
    """The sample percentile of ``values`` (its finite entries) and its distribution-free
    confidence bounds over all the runs (module docstring): a run without a finite value
    (not measured) counts as larger than every other for the upper bound and as smaller for
    the lower one, so a bound that falls on it is None; ``percentile`` in percent."""
    x = np.sort(np.asarray(values, dtype=float).ravel())
    total = x.size
    x = x[np.isfinite(x)]
    p = float(percentile) / 100.0
    n, missing = x.size, total - x.size
    hi = upper_rank(total, p, confidence) if total else None
    lo = lower_rank(total, p, confidence) if total else None
    est = float(np.percentile(x, percentile)) if n else float("nan")
    upper = float(x[hi - 1]) if hi and hi <= n else None  # past n: an unmeasured run
    lower = float(x[lo - 1 - missing]) if lo and lo > missing else None
    return Bound(float(percentile), float(confidence), n, est, upper, lower, hi, lo, missing)


@dataclass(frozen=True)
class Verdict:
    """A requirement judged on n runs: ``status`` (:data:`MET`, :data:`NOT_MET`,
    :data:`UNDECIDED`), the ``bound`` it was judged on (None for a single run judged on its
    value, :func:`value_verdict`), the requirement's ``op`` and ``limit``, and ``reason``
    (one line)."""

    status: str
    bound: Bound | None
    op: str
    limit: float
    reason: str

    @property
    def met(self) -> bool:
        return self.status == MET


def verdict(values, op: str, limit: float, percentile: float,
            confidence: float = DEFAULT_CONFIDENCE) -> Verdict:  # fmt: skip
    """Judge ``P_percentile(values) op limit`` at ``confidence`` (module docstring)."""
    if op not in ("<=", ">="):
        raise ValueError(f"op must be '<=' or '>=', got {op!r}")
    b = percentile_bounds(values, percentile, confidence)
    c = f"{100 * confidence:g} %"
    name = f"P{percentile:g}"
    if b.n == 0:
        why = "no finite value" + (f" (not measured in {b.missing} runs)" if b.missing else "")
        return Verdict(UNDECIDED, b, op, limit, why)
    runs = f"{b.n} runs" + (f", {b.missing} not measured" if b.missing else "")
    near, far = (b.upper, b.lower) if op == "<=" else (b.lower, b.upper)
    ok = (near is not None) and (near <= limit if op == "<=" else near >= limit)
    bad = (far is not None) and (far > limit if op == "<=" else far < limit)
    if ok:
        return Verdict(MET, b, op, limit, f"{name} {op} {limit:g} at {c} ({runs})")
    if bad:
        return Verdict(NOT_MET, b, op, limit, f"{name} beyond {limit:g} at {c} ({runs})")
    need = min_runs(percentile / 100.0 if op == "<=" else 1 - percentile / 100.0, confidence)
    if near is None and b.missing and b.n + b.missing >= need:
        why = (
            f"{name} not decided at {c}: its bound falls on one of the {b.missing} runs "
            f"not measured ({b.n} measured)"
        )
    elif near is None:
        why = f"too few runs for {name} at {c}: {b.n + b.missing} (at least {need} needed)"
        if b.missing:
            why += f"; {b.missing} not measured"
    else:
        why = f"{name} not decided at {c} by {runs}"
    return Verdict(UNDECIDED, b, op, limit, why)


def value_verdict(value: float, op: str, limit: float) -> Verdict:
    """Judge one run's ``value op limit`` (no percentile, no confidence: a single run is
    judged on its value): :data:`MET` or :data:`NOT_MET`, :data:`UNDECIDED` when the value
    is not a finite number (the run has no value for the metric, e.g. it ended before the
    metric's window)."""
    if op not in ("<=", ">="):
        raise ValueError(f"op must be '<=' or '>=', got {op!r}")
    value = float(value)
    if not math.isfinite(value):
        return Verdict(UNDECIDED, None, op, limit, "no value (a single run)")
    ok = value <= limit if op == "<=" else value >= limit
    why = f"value {value:g} {'within' if ok else 'beyond'} {op} {limit:g} (a single run)"
    return Verdict(MET if ok else NOT_MET, None, op, limit, why)
