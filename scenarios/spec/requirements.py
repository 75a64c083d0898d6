"""Requirements: the limits a run's metrics are judged against, from a scenario or the defaults.

A requirement on a metric is a :class:`Requirement`: ``op`` (``"<="`` or ``">="``),
``limit`` in the metric's SI unit, ``percentile`` (where a campaign judges it: the 99th
percentile of the runs' metrics by default) and ``confidence`` (how sure a campaign must be:
:data:`DEFAULT_CONFIDENCE`, 95 %).  A campaign states ``P99 <= limit`` as MET only when a
distribution-free upper bound of the 99th percentile at that confidence is within the limit
(:mod:`dqspace.scenarios.campaigns.confidence`); a single run is judged on its value (the
percentile and the confidence do not apply to one run).

:data:`DEFAULT_REQUIREMENTS` holds base position <= 1 mm, attitude <= 0.05 deg and
end-effector error <= 1 mm, each at the 99th percentile and 95 % confidence.  A scenario's
``[requirements]`` table overrides entries by metric name (:func:`scenario_requirements`);
an entry is a limit (``ee_max = 5e-4``), a table (``ee_max = {limit = 5e-4, percentile = 95,
confidence = 0.9}``) or a list (``["<=", 5e-4, 99]``, ``["<=", 5e-4, 99, 0.9]``), and
``--set requirements.ee_max=5e-4`` works as for any key.

The metric names are the run's (:data:`dqspace.scenarios.sim.metrics.METRICS`); this module
does not import the simulation, so the caller passes the names it knows.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import NamedTuple

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_PERCENTILE",
    "DEFAULT_REQUIREMENTS",
    "ARM_METRICS",
    "Requirement",
    "parse_requirement",
    "requirement_entry",
    "scenario_requirements",
]

#: the confidence of a percentile claim unless a requirement says otherwise (the same value
#: as :data:`dqspace.scenarios.campaigns.confidence.DEFAULT_CONFIDENCE`, which reads it here)
DEFAULT_CONFIDENCE = 0.95
#: where a campaign judges a requirement unless it says otherwise [percent]
DEFAULT_PERCENTILE = 99


class Requirement(NamedTuple):
    """A requirement on one metric.

    Attributes
    ----------
    op : str, ``"<="`` (the metric must stay at or below the limit) or ``">="``
    limit : float, in the metric's SI unit
    percentile : int or float in (0, 100), where a campaign judges it (99: the 99th
        percentile of the runs' metrics)
    confidence : float in (0, 1), how sure a campaign must be (0.95)
    """

    op: str
    limit: float
    percentile: int | float = DEFAULT_PERCENTILE
    confidence: float = DEFAULT_CONFIDENCE

    def as_dict(self) -> dict:
        """Plain data (JSON, TOML): ``{op, limit, percentile, confidence}``."""
        return self._asdict()

    def text(self) -> str:
        """``P99 <= 0.001 at 95 %`` (SI units)."""
        return f"P{self.percentile:g} {self.op} {self.limit:g} at {100 * self.confidence:g} %"


#: metric -> Requirement: the requirements of every figure, report and campaign unless a
#: scenario's ``[requirements]`` table overrides them
DEFAULT_REQUIREMENTS = {
    "base_pos_err_max": Requirement("<=", 1e-3),
    "base_att_err_max": Requirement("<=", 0.05),
    "ee_max": Requirement("<=", 1e-3),
}

#: the metrics of a closed-loop run that need an arm: a system without one
#: (``arm.model = "none"``) has them not measured, and the default requirements on them
#: do not apply to it (:func:`scenario_requirements`)
ARM_METRICS = ("ee_rms", "ee_max", "arm_saturated_ticks")

_KEYS = ("op", "limit", "percentile", "confidence")


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def parse_requirement(spec, where: str = "requirement") -> Requirement:
    """One entry of a ``requirements`` table as a :class:`Requirement`.

    Parameters
    ----------
    spec : a limit (a number: ``<=``, 99th percentile, 95 %), a table
        ``{limit = ..., op = "<=", percentile = 99, confidence = 0.95}`` (only ``limit``
        needed), a list ``[op, limit, percentile]`` or ``[op, limit, percentile,
        confidence]``, or a :class:`Requirement`
    where : named in the error messages (``requirements.ee_max``)

    Raises
    ------
    ValueError naming ``where``: a non-finite limit, an op other than ``<=`` / ``>=``, a
    percentile outside (0, 100), a confidence outside (0, 1), an unknown key.
    """
    if isinstance(spec, Mapping):
        unknown = set(spec) - set(_KEYS)
        if unknown or "limit" not in spec:
            extra = f" (unknown key {sorted(map(str, unknown))[0]!r})" if unknown else ""
            raise ValueError(
                f"{where}: expected {{limit = ..., op = ..., percentile = ..., "
                f"confidence = ...}}{extra}"
            )
        op, limit = spec.get("op", "<="), spec["limit"]
        pct = spec.get("percentile", DEFAULT_PERCENTILE)
        conf = spec.get("confidence", DEFAULT_CONFIDENCE)
    elif isinstance(spec, (list, tuple)) and len(spec) in (3, 4):
        op, limit, pct = spec[:3]
        conf = spec[3] if len(spec) == 4 else DEFAULT_CONFIDENCE
    elif _number(spec):
        op, limit, pct, conf = "<=", spec, DEFAULT_PERCENTILE, DEFAULT_CONFIDENCE
    else:
        raise ValueError(
            f"{where}: expected a limit, a table {{limit = ..., op = ..., percentile = ..., "
            f"confidence = ...}} or a list [op, limit, percentile(, confidence)], got {spec!r}"
        )
    if not _number(limit) or not math.isfinite(limit):
        raise ValueError(f"{where}: limit {limit!r} is not a finite number")
    if op not in ("<=", ">="):
        raise ValueError(f"{where}: op must be '<=' or '>=', got {op!r}")
    if not _number(pct) or not 0 < pct < 100:
        raise ValueError(
            f"{where}: percentile must be in (0, 100) (99: the 99th percentile), got {pct!r}"
        )
    if not _number(conf) or not 0 < conf < 1:
        raise ValueError(f"{where}: confidence must be in (0, 1) (0.95: 95 %), got {conf!r}")
    pct = int(pct) if float(pct).is_integer() else float(pct)
    return Requirement(op, float(limit), pct, float(conf))


def requirement_entry(spec, where: str = "requirement") -> dict:
    """An entry of a scenario's ``[requirements]`` table as the resolved scenario keeps
    it: :func:`parse_requirement`'s result as a table ``{op, limit, percentile,
    confidence}`` (what ``dqspace show`` prints)."""
    return parse_requirement(spec, where).as_dict()


def scenario_requirements(config: Mapping | None, metrics: Collection[str]) -> dict:
    """The requirements ``{metric: Requirement}`` of a resolved scenario.

    :data:`DEFAULT_REQUIREMENTS`, updated by name from the scenario's ``requirements``
    table when it has one (entries as :func:`parse_requirement` reads them; a None entry
    keeps the default, or sets nothing).  A system without an arm (``arm.model =
    "none"``) has no requirement on the metrics of :data:`ARM_METRICS` (not measured):
    the defaults on them are dropped, and a scenario that sets one is refused when it is
    loaded (:func:`~dqspace.scenarios.spec.scenario.cross_checks`).

    Parameters
    ----------
    config : mapping, a resolved scenario or a run's manifest scenario (or None: the
        defaults)
    metrics : the metric names a requirement may name (a run's:
        :data:`dqspace.scenarios.sim.metrics.METRICS`)

    Raises
    ------
    ValueError naming the entry: an unknown metric or a value :func:`parse_requirement`
    refuses.
    """
    req = dict(DEFAULT_REQUIREMENTS)
    arm = config.get("arm") if isinstance(config, Mapping) else None
    armless = isinstance(arm, Mapping) and arm.get("model") == "none"
    if armless:
        req = {k: r for k, r in req.items() if k not in ARM_METRICS}
    table = config.get("requirements") if isinstance(config, Mapping) else None
    if not table:
        return req
    if not isinstance(table, Mapping):
        raise ValueError(f"requirements must be a table of metric = limit, got {table!r}")
    for metric, spec in table.items():
        where = f"requirements.{metric}"
        if metric not in metrics:
            raise ValueError(f"{where}: no such metric (known: {', '.join(metrics)})")
        if spec is not None and not (armless and metric in ARM_METRICS):
            req[metric] = parse_requirement(spec, where)
    return req
