"""What a robust tuning keeps: its candidates, its result, and the files it writes.

Files of a tuning in ``out`` (:func:`write_outputs`; each written atomically after every
candidate, so they are current after an interruption):

* ``history.csv``: one row per candidate: ``candidate`` (its number, 0, 1, ...), ``trial``
  (the study's trial number), one column per tuned parameter (the value applied), the
  objective (``total_impulse:P50``), per constraint ``<metric>:P<q>`` (the sample
  percentile), ``<metric>:P<q>_bound`` (the order-statistics bound, empty with too few
  runs), ``<metric>:judged_on`` (``bound`` or ``sample``), ``<metric>:verdict`` (MET, NOT
  MET, UNDECIDED) and ``<metric>:margin`` (the relative violation, <= 0 met); then
  ``failed_runs``, ``feasible``, ``violation`` (the sum of the positive margins), ``runs``,
  ``runs_run`` and ``runs_reused`` (run now, or read from the candidate's campaign
  directory), ``wall_time`` [s].  Values in SI units.
* ``tuning.json``: the settings (scenario, parameters and their ranges, objective,
  constraints, N, seed, budget, sampler), every candidate, the best.
* ``best.toml``: the base scenario with the best feasible design applied, a complete
  scenario file (its ``[dispersions]`` included) that ``dqspace run`` and ``dqspace
  montecarlo`` read; its name is the base's with ``-tuned``, and a header comment says how
  it was found.  Without a feasible candidate there is no ``best.toml`` but a
  ``least_violation.toml`` (the candidate closest to feasible, labelled so).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..spec.scenario import Scenario
from ..spec.variants import scenario_with
from ..store.storage import atomic_write_bytes, json_default, json_safe
from .tuning_goals import ConstraintResult, Objective
from .tuning_space import TunedParam

__all__ = [
    "Candidate",
    "RobustTuneResult",
    "history_rows",
    "write_outputs",
    "best_and_closest",
    "designed_scenario",
    "HISTORY_FILE",
    "SUMMARY_FILE",
    "BEST_FILE",
    "LEAST_VIOLATION_FILE",
]

HISTORY_FILE, SUMMARY_FILE = "history.csv", "tuning.json"
BEST_FILE, LEAST_VIOLATION_FILE = "best.toml", "least_violation.toml"


@dataclass(frozen=True)
class Candidate:
    """One design of a robust tuning, judged on its Monte Carlo campaign.

    Attributes
    ----------
    number : int, its place in the tuning (0, 1, ...; the campaign is in
        ``<out>/candidates/<number>``)
    trial : int, the study's trial number (an interrupted trial is continued by a later one)
    params : dict parameter name -> value applied
    overrides : dict scenario key -> value (what the design changes in the base scenario)
    objective : float, the objective's value (SI; NaN: not measured in a completed run,
        or no run has a value; ranked after every candidate with one)
    constraints : tuple of ConstraintResult, the constraints', then ``failed_runs``
    n_runs, n_failed : int, the campaign's runs and those that failed
    runs_run, runs_reused : int, runs made for it in the session that finished it, and
        runs read from its campaign directory (an interrupted candidate continued)
    wall_time : float [s], of its campaign in the session that finished it
    directory : str or None, its campaign directory
    """

    number: int
    trial: int
    params: dict
    overrides: dict
    objective: float
    constraints: tuple
    n_runs: int
    n_failed: int
    runs_run: int
    runs_reused: int
    wall_time: float
    directory: str | None = None

    @property
    def feasible(self) -> bool:
        """Every constraint MET and no run failed."""
        return all(c.met for c in self.constraints)

    @property
    def violation(self) -> float:
        """The total violation: the sum of the positive margins (0 when feasible)."""
        return float(sum(max(0.0, c.margin) for c in self.constraints))

    def rank_key(self) -> tuple:
        """Sort key, best first: feasible by objective, then infeasible by violation."""
        obj = self.objective if math.isfinite(self.objective) else math.inf
        return (0, obj, self.number) if self.feasible else (1, self.violation, self.number)

    def as_dict(self) -> dict:
        """Plain data (JSON); :meth:`from_dict` reads it back."""
        return {
            "number": self.number,
            "trial": self.trial,
            "params": dict(self.params),
            "overrides": dict(self.overrides),
            "objective": self.objective,
            "constraints": [c.as_dict() for c in self.constraints],
            "feasible": self.feasible,
            "violation": self.violation,
            "n_runs": self.n_runs,
            "n_failed": self.n_failed,
            "runs_run": self.runs_run,
            "runs_reused": self.runs_reused,
            "wall_time": self.wall_time,
            "directory": self.directory,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> Candidate:
        """The inverse of :meth:`as_dict`."""
        cons = tuple(ConstraintResult.from_dict(c) for c in d["constraints"])
        return cls(
            int(d["number"]), int(d["trial"]), dict(d["params"]), dict(d["overrides"]),
            float(d["objective"]), cons, int(d["n_runs"]), int(d["n_failed"]),
            int(d["runs_run"]), int(d["runs_reused"]), float(d["wall_time"]), d["directory"],
        )  # fmt: skip


def best_and_closest(candidates: Sequence[Candidate]) -> tuple:
    """``(best, closest)``: the feasible candidate of lowest objective (or None) and the
    first by :meth:`Candidate.rank_key` (the best, else the least violating; None when
    there is no candidate)."""
    if not candidates:
        return None, None
    first = min(candidates, key=Candidate.rank_key)
    return (first if first.feasible else None), first


@dataclass(frozen=True, repr=False)
class RobustTuneResult:
    """Outcome of :func:`dqspace.scenarios.campaigns.robust_tuning.robust_tune`.

    Attributes
    ----------
    candidates : tuple of Candidate, every finished candidate in order
    best : Candidate or None, the feasible candidate with the lowest objective (None: no
        candidate met every constraint)
    closest : Candidate, ``best``, or without a feasible one the candidate of least
        total violation
    scenario : Scenario or None, the base scenario with ``best`` applied (what
        ``best.toml`` holds)
    params : tuple of TunedParam
    objective : Objective
    constraints : tuple of Constraint (``failed_runs`` is implicit)
    n : int, runs per candidate (the same N dispersion samples for every candidate)
    seed : int, root seed of the samples (and of the sampler)
    budget : int, candidates asked for
    n_run : int, simulation runs made by this call (a resumed tuning reuses the rest)
    out : Path or None
    files : dict name -> Path, the files written
    notes : tuple of str, what a reader must know (a sample judgement, failed runs, ...)
    """

    candidates: tuple
    best: Candidate | None
    closest: Candidate | None
    scenario: Scenario | None
    params: tuple
    objective: Objective
    constraints: tuple
    n: int
    seed: int
    budget: int
    n_run: int
    out: Path | None
    files: dict = field(default_factory=dict)
    notes: tuple = ()

    @property
    def feasible(self) -> bool:
        """A candidate met every constraint."""
        return self.best is not None

    @property
    def history(self) -> object:
        """pandas.DataFrame of ``history.csv``'s rows (module docstring)."""
        import pandas as pd  # heavy: loaded when the history is asked for

        return pd.DataFrame(history_rows(self.candidates, self.params, self.objective))

    def summary(self) -> str:
        """A few lines: feasible or not, the best (or closest) design and its constraints."""
        c = self.closest
        lines = [
            f"robust tune: {len(self.candidates)} of {self.budget} candidates, {self.n} runs "
            f"each (seed {self.seed}); {self.n_run} runs made now"
        ]
        if c is None:
            return lines[0] + "; no candidate finished"
        if self.best is None:
            lines.append(
                f"NO FEASIBLE CANDIDATE: the closest, candidate {c.number}, violates the "
                f"constraints by {c.violation:.4g} in total"
            )
        else:
            lines.append(f"best: candidate {c.number}, {self.objective.label} = {c.objective:.6g}")
        for name, value in c.params.items():
            lines.append(f"  {name} = {value:.6g}")
        for r in c.constraints:
            lines.append(f"  {r.status:9s} {r.constraint.label}: {r.reason}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self):
        return self.summary()


def _num(x):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else repr(float(x))


def history_rows(
    candidates: Sequence[Candidate], params: Sequence[TunedParam], objective: Objective
) -> list[dict]:
    """The rows of ``history.csv`` (module docstring), one dict per candidate."""
    rows = []
    for c in candidates:
        row = {"candidate": c.number, "trial": c.trial}
        row.update({p.name: c.params.get(p.name) for p in params})
        row[f"{objective.metric}:{objective.stat}"] = c.objective
        for r in c.constraints:
            k = r.constraint
            if k.source == "implicit":
                continue
            q = f"P{k.percentile:g}"
            row[f"{k.metric}:{q}"] = r.estimate
            row[f"{k.metric}:{q}_bound"] = r.bound
            row[f"{k.metric}:judged_on"] = r.judged_on
            row[f"{k.metric}:verdict"] = r.status
            row[f"{k.metric}:margin"] = r.margin
        row.update(
            failed_runs=c.n_failed,
            feasible=c.feasible,
            violation=c.violation,
            runs=c.n_runs,
            runs_run=c.runs_run,
            runs_reused=c.runs_reused,
            wall_time=c.wall_time,
        )
        rows.append(row)
    return rows


def _history_csv(rows):
    buf = io.StringIO()
    names = list(dict.fromkeys(k for r in rows for k in r))
    w = csv.DictWriter(buf, fieldnames=names, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: (_num(v) if isinstance(v, float) or v is None else v) for k, v in r.items()})
    return buf.getvalue().encode()


def _header(result, settings, chosen, feasible):
    obj = result.objective
    judged = sorted({r.judged_on for r in chosen.constraints if r.constraint.source != "implicit"})
    lines = [
        f"Tuned by `dqspace tune` (dqspace {settings.get('package_version', '?')}): "
        + (
            "the best feasible design"
            if feasible
            else "NOT FEASIBLE: no candidate met every constraint; the one of least violation"
        ),
        f"candidate {chosen.number} of {len(result.candidates)} (budget {result.budget}), "
        f"each judged on the same {result.n} dispersion samples (seed {result.seed}, the "
        f"[dispersions] below)",
        f"objective: minimise {obj.label} = {chosen.objective:.6g} (SI units)",
        "constraints"
        + (
            " (judged on the "
            + " / ".join("order-statistics bound" if j == "bound" else j for j in judged)
            + ")"
            if judged
            else ""
        )
        + ":",
    ]
    for r in chosen.constraints:
        lines.append(f"  {r.status}: {r.constraint.label}: {r.reason}")
    lines.append("tuned:")
    lines += [f"  {p.describe()}" for p in result.params]
    lines.append(f"base scenario: {settings.get('source', '?')}")
    return "".join(f"# {line}\n" for line in lines) + "\n"


def write_outputs(
    out: str | os.PathLike, result: RobustTuneResult, settings: Mapping, *, final: bool = False
) -> dict:
    """Write ``history.csv`` and ``tuning.json``; with ``final``, also ``best.toml`` (or
    ``least_violation.toml``), from the base scenario in ``settings``.  Returns the
    files written, name -> Path."""
    out = Path(out)
    rows = history_rows(result.candidates, result.params, result.objective)
    files = {
        HISTORY_FILE: atomic_write_bytes(out / HISTORY_FILE, _history_csv(rows)),
    }
    doc = {
        "settings": {k: v for k, v in settings.items() if k != "scenario"},
        "scenario": settings.get("scenario", {}).get("scenario", {}).get("name"),
        "budget": result.budget,
        "feasible": result.feasible,
        "best": None if result.best is None else result.best.number,
        "closest": None if result.closest is None else result.closest.number,
        "notes": list(result.notes),
        "candidates": [c.as_dict() for c in result.candidates],
    }
    # strict JSON: a value not measured (NaN) is null
    text = json.dumps(json_safe(doc), indent=1, default=json_default, allow_nan=False)
    files[SUMMARY_FILE] = atomic_write_bytes(out / SUMMARY_FILE, text.encode())
    if final and result.closest is not None:
        feasible = result.best is not None
        name, stale = (
            (BEST_FILE, LEAST_VIOLATION_FILE) if feasible else (LEAST_VIOLATION_FILE, BEST_FILE)
        )
        sc = designed_scenario(settings, result.closest)
        text = _header(result, settings, result.closest, feasible) + sc.to_toml()
        files[name] = atomic_write_bytes(out / name, text.encode())
        (out / stale).unlink(missing_ok=True)
    return files


def designed_scenario(settings: Mapping, candidate: Candidate) -> Scenario:
    """The base scenario of ``settings`` with a candidate's design applied, renamed
    ``<name>-tuned``, its dispersions kept."""
    base = Scenario(settings["scenario"], settings.get("source", "tuning"))
    name = f"{base.name}-tuned"[:100]
    overrides = {**candidate.overrides, "scenario.name": name}
    sc, _ = scenario_with(base, overrides, f"candidate {candidate.number}")
    return Scenario(sc.config, sc.source, dict(settings.get("dispersions", {})))
