"""Requirements: the limits a run's metrics are judged against, from a scenario or the defaults.

A requirement is ``{metric: (op, limit, percentile)}``: ``op`` is ``"<="`` or ``">="``,
``limit`` is in the metric's SI unit and ``percentile`` is where a campaign judges it
(the 99th percentile of the runs' metrics by default; a single run is judged on its
value).  :data:`DEFAULT_REQUIREMENTS` holds base position <= 1 mm, attitude <= 0.05 deg and
end-effector error <= 1 mm, each at the 99th percentile; a scenario's ``requirements``
table (in a manifest or a config dict) overrides entries by name
(:func:`scenario_requirements`).

The metric names are the run's (:data:`dqspace.scenarios.sim.metrics.METRICS`); this module
does not import the simulation, so the caller passes the names it knows.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np

__all__ = ["DEFAULT_REQUIREMENTS", "scenario_requirements"]

#: metric -> (op, limit in the metric's SI unit, percentile): the requirements of every
#: figure, report and campaign unless a scenario's ``requirements`` table overrides them
DEFAULT_REQUIREMENTS = {
    "base_pos_err_max": ("<=", 1e-3, 99),
    "base_att_err_max": ("<=", 0.05, 99),
    "ee_max": ("<=", 1e-3, 99),
}


def scenario_requirements(config: Mapping | None, metrics: Collection[str]) -> dict:
    """The requirements ``{metric: (op, limit, percentile)}`` of a resolved scenario.

    :data:`DEFAULT_REQUIREMENTS`, updated by name from the scenario's ``requirements``
    table when it has one.  An entry of that table is a limit in the metric's SI unit
    (``base_pos_err_max = 5e-4``: ``<=``, 99th percentile), a table
    ``{limit = ..., op = "<=", percentile = 99}`` or a list ``[op, limit, percentile]``.

    Parameters
    ----------
    config : mapping, a resolved scenario (or None: the defaults)
    metrics : the metric names a requirement may name (a run's:
        :data:`dqspace.scenarios.sim.metrics.METRICS`)

    Raises
    ------
    ValueError naming the entry: an unknown metric, a non-finite limit, an op other than
    ``<=`` / ``>=``, a percentile outside [0, 100].
    """
    req = dict(DEFAULT_REQUIREMENTS)
    table = config.get("requirements") if isinstance(config, Mapping) else None
    if not table:
        return req
    if not isinstance(table, Mapping):
        raise ValueError(f"requirements must be a table of metric = limit, got {table!r}")
    for metric, spec in table.items():
        where = f"requirements.{metric}"
        if metric not in metrics:
            raise ValueError(f"{where}: no such metric (known: {', '.join(metrics)})")
        if isinstance(spec, Mapping):
            unknown = set(spec) - {"limit", "op", "percentile"}
            if unknown or "limit" not in spec:
                raise ValueError(f"{where}: expected {{limit = ..., op = ..., percentile = ...}}")
            op, limit, pct = spec.get("op", "<="), spec["limit"], spec.get("percentile", 99)
        elif isinstance(spec, (list, tuple)) and len(spec) == 3:
            op, limit, pct = spec
        else:
            op, limit, pct = "<=", spec, 99
        ok = isinstance(limit, (int, float)) and not isinstance(limit, bool)
        if not ok or not np.isfinite(limit):
            raise ValueError(f"{where}: limit {limit!r} is not a finite number")
        if op not in ("<=", ">="):
            raise ValueError(f"{where}: op must be '<=' or '>=', got {op!r}")
        if isinstance(pct, bool) or not isinstance(pct, (int, float)) or not 0 <= pct <= 100:
            raise ValueError(f"{where}: percentile must be in [0, 100], got {pct!r}")
        req[metric] = (op, float(limit), int(pct))
    return req
