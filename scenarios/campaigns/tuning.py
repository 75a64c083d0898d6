"""Gain tuning: a parallel compass search on log-gains over the sweep runner.

Each tuned key (a gain, scalar or 3-vector) is scaled by a factor,
``value = base value * exp(x)`` with ``x`` in ``[log lo, log hi]``; a vector keeps the
ratios between its axes.  The search (a generalized pattern search, "compass
search") starts at the base scenario (``x = 0``, clipped into the bounds) and polls
the ``2 n`` points ``x +- s e_i`` of the ``n`` keys (``s = log step``) as one batch of
variants, run in parallel by :func:`dqspace.scenarios.campaigns.sweep.sweep`.  The best poll
point replaces the centre if it lowers the objective; otherwise ``s`` is halved.
The search stops when the poll factor ``exp(s)`` falls below ``min_step``
(converged) or after ``max_batches`` batches (not converged: the gains are then the best
found so far, not an optimum; :attr:`TuneResult.converged` and :attr:`TuneResult.reason`
say which, and so does the result's ``repr``).

Why this search: the metrics are not smooth in the gains (thruster pulses are
quantised), which defeats gradient and quasi-Newton methods; Nelder-Mead evaluates
one or two points at a time (no parallel batch); the compass search needs no
gradient, is deterministic, keeps box bounds by clipping, runs a whole batch at
once and never accepts a worse point.  On an objective that is convex and separable
in the log-gains, the last poll that failed (step ``s < 2 log min_step``) brackets
the optimum, so the result is within a factor ``min_step**2`` of it on every axis
(within ``min_step`` for a quadratic).  Gains are rounded to 6 significant digits,
so a point met twice (or stored in ``out`` by an earlier call) is not run again.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..sim.metrics import METRICS
from ..spec.scenario import Scenario, load_scenario
from ..spec.schema_capture import CAPTURE_METRICS
from ..spec.variants import resolved_value, scenario_with, variant_id
from .sweep import connect, sweep

__all__ = ["TuneResult", "tune"]


@dataclass(frozen=True, repr=False)
class TuneResult:
    """Outcome of :func:`tune`; ``repr`` (and :meth:`summary`) state whether it converged.

    Attributes
    ----------
    best : dict key -> value, the tuned gains (overrides of the base scenario)
    factors : dict key -> float, the tuned gains over the base ones
    objective : float, objective of ``best``
    start_objective : float, objective of the starting point (the base gains, clipped)
    metrics : pandas.Series, the sweep row of ``best`` (every metric, run time)
    start : pandas.Series, the sweep row of the starting point
    scenario : Scenario, the base scenario with ``best`` applied
    history : pandas.DataFrame, every evaluation: sweep columns plus ``batch``,
        ``objective`` and one ``factor:<key>`` column per tuned key
    n_batches : int, batches of parallel runs
    n_evaluations : int, distinct variants evaluated (run, or read from ``out``)
    converged : bool, True if the poll factor fell below ``min_step``; False if the
        search stopped on ``max_batches`` (``best`` is then the best point found so far,
        not an optimum: raise ``max_batches`` or ``min_step``, or start closer)
    step : float, the poll factor at the end (below ``min_step`` if converged)
    reason : str, why the search stopped, in words
        (``"poll step x1.19 below min_step x1.2"`` or ``"max_batches = 5 reached with the
        poll step still x2 (min_step x1.2); the last batch still lowered the objective"``)
    """

    best: dict
    factors: dict
    objective: float
    start_objective: float
    metrics: object
    start: object
    scenario: Scenario
    history: object
    n_batches: int
    n_evaluations: int
    converged: bool
    step: float
    reason: str

    def summary(self) -> str:
        """Several lines of text: converged or not and why, the objective from start to
        best, the runs, and each tuned key's value and factor over the base value."""
        status = "converged" if self.converged else "NOT converged"
        lines = [
            f"tune: {status}: {self.reason}",
            f"objective {self.start_objective:.6g} (start) -> {self.objective:.6g} "
            f"({'tuned' if self.converged else 'best so far'}), "
            f"{self.n_evaluations} runs in {self.n_batches} batches",
        ]
        width = max(len(k) for k in self.best)
        for key, value in self.best.items():
            lines.append(f"  {key:<{width}} = {value}  (x{self.factors[key]:.4g})")
        return "\n".join(lines)

    def __repr__(self):
        return self.summary()


def _round(x, digits=6):
    return float(f"{x:.{digits - 1}e}")


def _scaled(base, factor):
    if isinstance(base, list):
        return [_round(b * factor) for b in base]
    return _round(base * factor)


def _check_params(scenario, params):
    if not isinstance(params, dict) or not params:
        raise ValueError("params: give a non-empty dict key -> (lower factor, upper factor)")
    out = {}
    for key, bounds in params.items():
        try:
            base = resolved_value(scenario.config, key)
        except (KeyError, ValueError, IndexError):
            raise ValueError(
                f"params: {key!r} is not a key of the scenario (use section.key)"
            ) from None
        vals = base if isinstance(base, list) else [base]
        if not all(isinstance(b, float) for b in vals):
            raise ValueError(f"params: {key!r} = {base!r} is not a real-valued gain")
        if not all(b > 0 for b in vals):
            raise ValueError(
                f"params: {key!r} = {base!r}: the base value must be > 0 to be scaled "
                f"(set a positive starting value with an override)"
            )
        try:
            lo, hi = (float(b) for b in bounds)
        except (TypeError, ValueError):
            raise ValueError(
                f"params: {key!r}: bounds must be (lower factor, upper factor), got {bounds!r}"
            ) from None
        if not (0 < lo < hi) or not math.isfinite(hi):
            raise ValueError(f"params: {key!r}: need 0 < lower < upper < inf, got ({lo}, {hi})")
        for f in (lo, hi):  # the schema's ranges hold over the whole box
            scenario_with(scenario, {key: _scaled(base, f)}, f"params {key!r} at factor {f}")
        out[key] = (base, math.log(lo), math.log(hi))
    return out


def tune(
    scenario: Scenario | str | os.PathLike,
    params: Mapping[str, object],
    objective: Callable[[Mapping[str, float]], float] | str,
    *,
    metrics: Sequence[str] | None = None,
    step: float = 2.0,
    min_step: float = 1.05,
    max_batches: int = 20,
    out: str | os.PathLike | None = None,
    scheduler: object = None,
    workers: int | None = None,
    progress: bool = True,
) -> TuneResult:
    """Search gains that minimise an objective, in parallel batches of runs.

    Parameters
    ----------
    scenario : Scenario (or a file / embedded name): the base, whose gains are the start
    params : dict key -> (lower, upper): the keys to tune (``"base_controller.kp_trans"``,
        ``"arm_controller.omega_n"``, ...) and the bounds of their factor over the base
        value (``(0.1, 10)``: from a tenth to ten times the base gain)
    objective : str, a metric to minimise (a name from ``metrics``), or a callable
        ``f(row) -> float`` of a sweep row (a pandas Series: ``row["total_impulse"]``, ...)
    metrics : as :func:`~dqspace.scenarios.campaigns.sweep.sweep` (default: every standard metric)
    step : factor of the first poll (2: poll each key at half and twice its gain)
    min_step : the search has converged when the poll factor falls below this (> 1)
    max_batches : at most this many batches of runs
    out : sweep directory: every evaluation is stored there, and a repeated call
        reuses them (nothing is run again)
    scheduler, workers : as :func:`~dqspace.scenarios.campaigns.sweep.sweep`; one cluster serves
        every batch
    progress : one line per batch on stderr

    Returns
    -------
    TuneResult
        ``converged`` and ``reason`` say whether the search converged or stopped on
        ``max_batches``; its ``repr`` starts with that.

    Notes
    -----
    A failed run, or an objective that is NaN, counts as +inf (never chosen).
    """
    import pandas as pd  # heavy: loaded when a search runs

    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    spec = _check_params(scenario, params)
    keys = list(spec)
    if not (step > 1 and math.isfinite(step)):
        raise ValueError(f"step must be a factor > 1, got {step}")
    if not (1 < min_step <= step):
        raise ValueError(f"min_step must be a factor in (1, step = {step}], got {min_step}")
    if isinstance(max_batches, bool) or not isinstance(max_batches, int) or max_batches < 1:
        raise ValueError(f"max_batches must be a positive integer, got {max_batches!r}")
    if metrics is None:  # what sweep measures by default (a capture: its metrics too)
        capture = scenario.config["scenario"]["kind"] == "capture"
        names = [*METRICS, *(CAPTURE_METRICS if capture else ())]
    elif isinstance(metrics, dict):
        names = list(metrics)
    else:
        names = [m if isinstance(m, str) else getattr(m, "__name__", "") for m in metrics]
    if isinstance(objective, str):
        if objective not in names:
            raise ValueError(f"objective {objective!r} is not a metric (metrics: {names})")

        def score(row):
            return row[objective]

    elif callable(objective):
        score = objective
    else:
        raise ValueError(f"objective must be a metric name or a callable, got {objective!r}")

    def overrides(x):
        return {k: _scaled(spec[k][0], math.exp(xi)) for k, xi in zip(keys, x, strict=True)}

    def clip(x):
        return tuple(min(max(xi, spec[k][1]), spec[k][2]) for k, xi in zip(keys, x, strict=True))

    seen = {}  # variant id -> (x, row, J)
    rows = []

    def evaluate(points, batch, client):
        fresh, ids = {}, []
        for x in points:
            ov = overrides(x)
            vid = variant_id(scenario_with(scenario, ov, "tune")[1])
            ids.append(vid)
            if vid not in seen and vid not in fresh:
                fresh[vid] = (x, ov)
        if fresh:
            df = sweep(
                scenario,
                samples=[ov for _, ov in fresh.values()],
                metrics=metrics,
                out=out,
                scheduler=client if client is not None else "synchronous",
                progress=False,
            )
            for _, row in df.iterrows():
                vid = row["variant"]
                x = fresh[vid][0]
                J = float("inf") if isinstance(row["error"], str) else float(score(row))
                J = J if math.isfinite(J) else float("inf")
                seen[vid] = (x, row, J)
                r = row.copy()
                r["batch"] = batch
                r["objective"] = J
                for k, xi in zip(keys, x, strict=True):
                    r[f"factor:{k}"] = math.exp(xi)
                rows.append(r)
        return [seen[v] for v in ids], len(fresh)

    def poll(x, s):
        pts = []
        for i in range(len(keys)):
            for sign in (+1, -1):
                y = list(x)
                y[i] += sign * s
                pts.append(clip(y))
        return [p for p in pts if p != x]

    x = clip([0.0] * len(keys))
    s, s_min = math.log(step), math.log(min_step)
    n_batches = 0
    converged = moved = False
    with connect(scheduler, workers) as client:
        results, n_new = evaluate([x, *poll(x, s)], 1, client)
        n_batches = 1
        centre = results[0]
        start = centre
        while True:
            cand = min(results[1:], key=lambda r: r[2], default=None)
            moved = cand is not None and cand[2] < centre[2]
            if moved:
                x, centre = cand[0], cand
            else:
                s /= 2.0
            if progress:
                print(
                    f"tune: {n_batches} batches, {len(seen)} runs; objective {centre[2]:.6g}; "
                    f"next step x{math.exp(s):.3f}",
                    file=sys.stderr,
                )
            if s < s_min:
                converged = True
                break
            if n_batches >= max_batches:
                break
            pts = poll(x, s)
            results, n_new = evaluate([x, *pts], n_batches + 1, client)
            if n_new:
                n_batches += 1
    reason = _stop_reason(converged, math.exp(s), min_step, max_batches, moved)
    if progress:
        print(f"tune: {'converged' if converged else 'NOT converged'}: {reason}", file=sys.stderr)
    best_x, best_row, best_J = centre
    best = overrides(best_x)
    sc_best, _ = scenario_with(scenario, best, "tune best")
    history = pd.DataFrame(rows).reset_index(drop=True)
    return TuneResult(
        best=best,
        factors={k: math.exp(xi) for k, xi in zip(keys, best_x, strict=True)},
        objective=best_J,
        start_objective=start[2],
        metrics=best_row,
        start=start[1],
        scenario=sc_best,
        history=history,
        n_batches=n_batches,
        n_evaluations=len(seen),
        converged=converged,
        step=math.exp(s),
        reason=reason,
    )


def _stop_reason(converged, step, min_step, max_batches, moved):
    """Why the search stopped, in words (see :attr:`TuneResult.reason`)."""
    if converged:
        return f"poll step x{step:.4g} below min_step x{min_step:.4g}"
    return (
        f"max_batches = {max_batches} reached with the poll step still x{step:.4g} "
        f"(min_step x{min_step:.4g}); the last batch "
        + ("still lowered the objective" if moved else "did not lower the objective")
    )
