"""Robust tuning: controller gains and filter parameters searched against Monte Carlo
objectives, with Optuna, each candidate a campaign on Dask.

:func:`robust_tune` searches the scenario keys of ``params``
(:mod:`~dqspace.scenarios.campaigns.tuning_space`: ``KEY=LO:HI``) for the design that
minimises an objective under constraints (:mod:`~dqspace.scenarios.campaigns.tuning_goals`:
by default the median thruster impulse with every requirement of the scenario met).

* **Each candidate is a Monte Carlo campaign**
  (:func:`~dqspace.scenarios.campaigns.montecarlo.montecarlo`) of the base scenario with the
  candidate's design applied, on **common random numbers**: every candidate runs the same N
  dispersion samples (the same ``seed``: sample i draws the same random numbers for every
  candidate), so two candidates differ by their design, not by their luck.  A dispersed key
  that is also tuned is dispersed about the candidate's value.  One Dask cluster (a local
  one, or ``scheduler``) serves the whole study.
* **The optimiser** is Optuna's TPE sampler (multivariate, with constraints: feasible
  candidates rank by objective, infeasible ones by total violation), the base design
  evaluated first when it lies inside the ranges, the first
  :func:`startup_trials` candidates sampled at random.  The sampler of candidate k is
  seeded from ``(seed, k)``, so a study interrupted and resumed asks for the same
  candidates as one that ran straight through.
* **Resumable**: the study is an Optuna journal, ``<out>/study/journal.log``; candidate k's
  campaign is kept in ``<out>/candidates/<k>/`` (resumable itself).  Interrupted (Ctrl-C,
  a crash), the finished candidates stay; ``resume=True`` continues: the interrupted
  candidate first, reusing its stored runs, then new ones up to ``budget``.  A finished
  candidate is never run again.  ``out`` is locked while a tuning writes it.
* **Outputs** (:mod:`~dqspace.scenarios.campaigns.tuning_results`): ``history.csv``,
  ``tuning.json``, ``best.toml``; the figures are drawn from them by
  :func:`dqspace.scenarios.figures.campaign_tuning.plot_tuning`.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..spec.dispersions import Dispersions
from ..spec.scenario import Scenario, load_scenario
from ..spec.variants import scenario_with
from ..store.result_writer import package_version
from ..store.storage import OutputDir
from .montecarlo import montecarlo
from .sweep import connect
from .tuning_goals import (
    DEFAULT_OBJECTIVE,
    Objective,
    failed_runs_result,
    parse_objective,
    tuning_constraints,
)
from .tuning_results import (
    Candidate,
    RobustTuneResult,
    best_and_closest,
    designed_scenario,
    write_outputs,
)
from .tuning_space import design_overrides, design_values, tuned_params

__all__ = ["robust_tune", "TuneProgress", "startup_trials", "STUDY_NAME", "JOURNAL"]

#: the study's name in its journal
STUDY_NAME = "dqspace-tune"
#: the study's journal, relative to ``out``
JOURNAL = Path("study") / "journal.log"
_RECORD = "dqspace"  # the trial's user attribute holding its Candidate
_CONTINUES = "continues"  # the user attribute of a trial that continues an interrupted one


def startup_trials(budget: int) -> int:
    """Candidates sampled at random before TPE models the results:
    ``min(10, max(3, budget // 3))`` (the base design, evaluated first, is one of them)."""
    return min(10, max(3, budget // 3))


@dataclass(frozen=True)
class TuneProgress:
    """What a progress report receives after each candidate.

    Attributes
    ----------
    candidate : Candidate, the one just finished
    finished : int, candidates finished so far (this one included)
    budget : int
    best : Candidate or None, the best feasible so far
    closest : Candidate, the best so far, or the least violating
    elapsed : float [s], since this call started
    eta : float [s], the remaining candidates at this call's mean time per candidate
    """

    candidate: Candidate
    finished: int
    budget: int
    best: Candidate | None
    closest: Candidate
    elapsed: float
    eta: float

    def line(self, objective_label: str) -> str:
        """One line of plain text in SI units (what ``progress=True`` prints)."""
        c = self.candidate
        failed = [r for r in c.constraints if not r.met]
        state = (
            "feasible"
            if c.feasible
            else f"infeasible ({len(failed)} unmet: "
            + ", ".join(r.constraint.metric for r in failed)
            + ")"
        )
        best = (
            f"best {self.best.objective:.4g} (#{self.best.number})"
            if self.best is not None
            else f"no feasible yet (least violation {self.closest.violation:.3g})"
        )
        return (
            f"tune: candidate {c.number} [{self.finished}/{self.budget}] {objective_label} = "
            f"{c.objective:.4g}, {state}; {best}; {self.elapsed:.0f} s, ETA {self.eta:.0f} s"
        )


def _settings(scenario, space, obj, cons, n, seed, table):
    return {
        "scenario": scenario.config,
        "source": scenario.source,
        "dispersions": table,
        "params": [p.as_dict() for p in space],
        "objective": {"metric": obj.metric, "stat": obj.stat},
        "constraints": [c.as_dict() for c in cons],
        "n": int(n),
        "seed": int(seed),
        "sampler": "optuna TPESampler (multivariate, constrained)",
        "package_version": package_version(),
    }


_SAME = ("scenario", "dispersions", "params", "objective", "constraints", "n", "seed")


def _check_same(stored, settings, where):
    """ValueError naming what differs between a stored study's settings and these."""
    now = json.loads(json.dumps(settings, allow_nan=True))
    diff = [k for k in _SAME if stored.get(k) != now.get(k)]
    if "scenario" in diff:  # name the keys
        keys = _config_diff(stored.get("scenario") or {}, now["scenario"])
        diff[diff.index("scenario")] = "scenario: " + ", ".join(keys[:5])
    if diff:
        raise ValueError(
            f"{where}: holds a tuning with other settings ({', '.join(diff)} differ); "
            f"resume it with the same scenario, --param, -n, --seed, --objective and "
            f"--constraint, or choose another output directory"
        )


def _config_diff(a, b):
    """``section.key`` (or ``section`` for an array of tables) of two resolved scenarios
    where they differ."""
    out = []
    for sec in dict.fromkeys([*a, *b]):
        x, y = a.get(sec), b.get(sec)
        if x == y:
            continue
        if isinstance(x, dict) and isinstance(y, dict):
            out += [f"{sec}.{k}" for k in dict.fromkeys([*x, *y]) if x.get(k) != y.get(k)]
        else:
            out.append(sec)
    return out


def _distributions(optuna, space):
    dist = {}
    for p in space:
        if p.integer:
            dist[p.name] = optuna.distributions.IntDistribution(int(p.low), int(p.high), log=p.log)
        else:
            dist[p.name] = optuna.distributions.FloatDistribution(p.low, p.high, log=p.log)
    return dist


def _sampler(optuna, seed, k, budget):
    """The sampler of candidate k: seeded from (seed, k) (module docstring)."""
    s = int(np.random.SeedSequence([int(seed), int(k)]).generate_state(1)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(
            seed=s, multivariate=True, n_startup_trials=startup_trials(budget)
        )


def _open_study(optuna, out, settings, space, resume):
    """The study (created, or loaded to resume) and whether it was resumed."""
    if out is None:
        storage = optuna.storages.InMemoryStorage()
        exists = False
    else:
        path = Path(out) / JOURNAL
        exists = path.is_file() and path.stat().st_size > 0
        if exists and not resume:
            raise ValueError(
                f"{out}: holds a tuning study already: continue it with --resume "
                f"(resume=True), or choose another output directory"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        backend = optuna.storages.journal.JournalFileBackend(str(path))
        storage = optuna.storages.JournalStorage(backend)
        exists = exists and STUDY_NAME in [s.study_name for s in storage.get_all_studies()]
    study = optuna.create_study(
        storage=storage, study_name=STUDY_NAME, direction="minimize", load_if_exists=True
    )
    if exists:
        _check_same(study.user_attrs.get("settings", {}), settings, out)
        return study, True
    study.set_user_attr("settings", json.loads(json.dumps(settings, allow_nan=True)))
    start = {p.name: p.start() for p in space}
    if all(p.low <= start[p.name] <= p.high for p in space):  # the base design first
        study.enqueue_trial(start, user_attrs={"base_design": True})
    return study, False


def _finished(study):
    """The finished candidates, in order."""
    done = [Candidate.from_dict(t.user_attrs[_RECORD]) for t in study.get_trials(deepcopy=False)
            if _RECORD in t.user_attrs]  # fmt: skip
    return sorted(done, key=lambda c: c.number)


def _requeue_interrupted(optuna, study):
    """Fail the trials a killed process left running, and queue again every interrupted
    trial's design (once): it is continued first, at the same candidate number."""
    state = optuna.trial.TrialState
    for t in study.get_trials(deepcopy=False, states=(state.RUNNING,)):
        study.tell(t.number, state=state.FAIL)
    trials = study.get_trials(deepcopy=False)
    continued = {t.user_attrs.get(_CONTINUES) for t in trials}
    for t in trials:
        interrupted = t.state == state.FAIL and _RECORD not in t.user_attrs
        if interrupted and t.number not in continued and t.params:
            study.enqueue_trial(t.params, user_attrs={_CONTINUES: t.number})


def robust_tune(
    scenario: Scenario | str | os.PathLike,
    params: Mapping[str, object],
    n: int,
    *,
    objective: str = DEFAULT_OBJECTIVE,
    constraints: Sequence[str] = (),
    requirements: bool = True,
    budget: int = 20,
    seed: int | None = None,
    dispersions: Mapping | None = None,
    out: str | os.PathLike | None = None,
    resume: bool = False,
    workers: int | None = None,
    scheduler: object = None,
    progress: bool | Callable[[TuneProgress], None] = True,
    run_progress: bool = False,
    callback: Callable[[TuneProgress], None] | None = None,
) -> RobustTuneResult:
    """Search the design that minimises a Monte Carlo objective under constraints.

    Parameters
    ----------
    scenario : Scenario (or a file / embedded name): the base design and its
        ``[dispersions]``
    params : dict name -> range, e.g. ``"base_controller.kp_trans": "200:2000"``,
        ``"arm_controller.omega_n": (5, 40)``, ``"base_controller.kd_rot[2]": "log:10:200"``
        (:mod:`~dqspace.scenarios.campaigns.tuning_space`)
    n : runs per candidate (the same N dispersion samples for each)
    objective : ``"METRIC[:STAT]"``, minimised (default: ``total_impulse:P50``)
    constraints : ``"METRIC<=LIMIT[:P<q>]"`` strings, added to the scenario's
        requirements (replacing the requirement on the same metric)
    requirements : False: only ``constraints`` (and no failed run)
    budget : candidates to evaluate in all (a resumed tuning counts those finished)
    seed : root seed of the dispersion samples and of the sampler (default:
        ``scenario.seed``)
    dispersions : the dispersion table (default: the scenario's; ``{}`` varies only each
        run's noise seed)
    out : directory of the study, the candidates' campaigns and the outputs (None: keep
        nothing on disk, the study in memory)
    resume : continue the study in ``out`` (refused if its settings differ; without a study
        there, start one)
    workers, scheduler : as :func:`~dqspace.scenarios.campaigns.sweep.sweep`: a local
        cluster of ``workers`` processes (default: one per CPU, at most ``n``), an address,
        a ``distributed.Client``, or ``"synchronous"``; one cluster for the whole study
    progress : True: a line per candidate on stderr; a callable: called with a
        :class:`TuneProgress` instead; False: quiet
    run_progress : also each campaign's progress bar
    callback : called with a :class:`TuneProgress` after each candidate (an exception it
        raises, KeyboardInterrupt included, stops the tuning; the candidate is kept)

    Returns
    -------
    RobustTuneResult
        ``best`` is None when no candidate met every constraint (``closest`` is then the
        least violating one); ``summary()`` says so first.

    Raises
    ------
    ValueError naming the parameter, objective, constraint or setting at fault; a
    scenario without dispersions (and no ``dispersions``); an ``out`` holding another
    tuning (or one to resume without ``resume``).  KeyboardInterrupt passes through: the
    finished candidates are kept, and the outputs are current.
    """
    import optuna  # heavy (SQLAlchemy, Alembic): loaded when a tuning runs

    t_start = time.perf_counter()
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    space = tuned_params(scenario, params)
    obj = parse_objective(objective)
    cons = tuning_constraints(scenario.config, constraints, requirements=requirements)
    for name, v in (("n", n), ("budget", budget)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    table = scenario.dispersions if dispersions is None else dict(dispersions)
    if not table and dispersions is None:
        raise ValueError(
            f"scenario {scenario.name!r} has no [dispersions] table: a robust tuning needs "
            f"dispersed runs (add the table to the scenario file, docs/montecarlo.md; in Python, "
            f"dispersions=)"
        )
    Dispersions.from_table(table, scenario.config)
    seed = int(scenario.config["scenario"]["seed"] if seed is None else seed)
    settings = _settings(scenario, space, obj, cons, n, seed, table)
    if workers is None and scheduler is None:
        workers = max(1, min(os.cpu_count() or 1, int(n)))
    lock = OutputDir(out, "dqspace tune").open() if out is not None else None
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        study, _ = _open_study(optuna, out, settings, space, resume)
        plan = _Plan(scenario, tuple(space), obj, tuple(cons), settings, int(n), int(budget),
                     seed, table, None if out is None else Path(out))  # fmt: skip
        run = _Study(optuna, study, plan, t_start=t_start, report=_reporter(progress, obj),
                     callback=callback, run_progress=run_progress)  # fmt: skip
        try:
            run.run(scheduler, workers)
        finally:
            result = run.result()
            if out is not None:
                files = write_outputs(out, result, settings, final=True)
                result = replace(result, files=files)
    finally:
        optuna.logging.set_verbosity(verbosity)
        if lock is not None:
            lock.close()
    return result


def _reporter(progress, obj):
    if callable(progress):
        return progress
    if progress:
        return lambda p: print(p.line(obj.label), file=sys.stderr, flush=True)
    return None


@dataclass(frozen=True)
class _Plan:
    """What a tuning searches and how each candidate is judged (checked input)."""

    scenario: Scenario  # the base
    space: tuple  # TunedParam
    obj: Objective
    cons: tuple  # Constraint
    settings: dict  # as stored with the study
    n: int  # runs per candidate
    budget: int  # candidates in all
    seed: int  # of the samples and the sampler
    table: dict  # the dispersions
    out: Path | None


class _Study:
    """One call's work on a study: the candidates to finish, one at a time."""

    def __init__(self, optuna, study, plan, *, t_start, report, callback, run_progress):
        self.optuna, self.study = optuna, study
        p = plan
        self.scenario, self.space, self.obj, self.cons = p.scenario, p.space, p.obj, p.cons
        self.settings, self.n, self.budget, self.seed = p.settings, p.n, p.budget, p.seed
        self.table, self.out = p.table, p.out
        self.t_start = t_start
        self.report, self.callback, self.run_progress = report, callback, run_progress
        self.n_run = 0
        self.times = []
        _requeue_interrupted(optuna, study)
        self.done = _finished(study)

    def run(self, scheduler, workers):
        if len(self.done) >= self.budget:
            return
        dist = _distributions(self.optuna, self.space)
        with connect(scheduler, workers) as client:
            while len(self.done) < self.budget:
                k = len(self.done)
                self.study.sampler = _sampler(self.optuna, self.seed, k, self.budget)
                trial = self.study.ask(dist)
                try:
                    cand = self._evaluate(k, trial, client)
                except BaseException:  # interrupted: a resume continues this design
                    self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
                    raise
                self._tell(trial, cand)
                self._after(cand)

    def _evaluate(self, k, trial, client):
        overrides = design_overrides(self.space, trial.params)
        sc, canon = scenario_with(self.scenario, overrides, f"candidate {k}")
        where = None if self.out is None else self.out / "candidates" / str(k)
        t0 = time.perf_counter()
        df = montecarlo(
            sc,
            self.n,
            seed=self.seed,
            dispersions=self.table,
            out=where,
            scheduler=client if client is not None else "synchronous",
            progress=self.run_progress,
        )
        wall = time.perf_counter() - t0
        info = df.attrs.get("sweep", {})
        n_failed = int(df["error"].notna().sum())
        results = [c.judge(df[c.metric].to_numpy(dtype=float)) for c in self.cons]
        results.append(failed_runs_result(n_failed, len(df)))
        self.n_run += int(info.get("n_run", 0))
        return Candidate(
            number=k,
            trial=trial.number,
            params=design_values(self.space, trial.params),
            overrides=canon,
            # NaN when a completed run did not measure it (failed runs: left out)
            objective=self.obj.value(
                df[self.obj.metric].to_numpy(dtype=float), completed=df["error"].isna().to_numpy()
            ),
            constraints=tuple(results),
            n_runs=len(df),
            n_failed=n_failed,
            runs_run=int(info.get("n_run", 0)),
            runs_reused=int(info.get("n_cached", 0)),
            wall_time=wall,
            directory=None if where is None else str(where),
        )

    def _tell(self, trial, cand):
        trial.set_user_attr(_RECORD, json.loads(json.dumps(cand.as_dict(), allow_nan=True)))
        for r in cand.constraints:
            trial.set_constraint(r.constraint.metric, r.margin)
        if math.isfinite(cand.objective):
            self.study.tell(trial, cand.objective)
        else:  # no run gave a value: kept as a candidate, not modelled by the sampler
            self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)

    def _after(self, cand):
        self.done.append(cand)
        self.times.append(cand.wall_time)
        if self.out is not None:
            write_outputs(self.out, self.result(), self.settings)
        if self.report is None and self.callback is None:
            return
        result = self.result()
        eta = float(np.mean(self.times)) * (self.budget - len(self.done))
        p = TuneProgress(cand, len(self.done), self.budget, result.best, result.closest,
                         time.perf_counter() - self.t_start, eta)  # fmt: skip
        if self.report is not None:
            self.report(p)
        if self.callback is not None:
            self.callback(p)

    def result(self):
        done = tuple(self.done)
        best, closest = best_and_closest(done)
        return RobustTuneResult(
            candidates=done,
            best=best,
            closest=closest,
            scenario=designed_scenario(self.settings, best) if best is not None else None,
            params=tuple(self.space),
            objective=self.obj,
            constraints=tuple(self.cons),
            n=self.n,
            seed=self.seed,
            budget=self.budget,
            n_run=self.n_run,
            out=self.out,
            notes=tuple(_notes(self.cons, self.n, done)),
        )


def _notes(cons, n, done):
    """What a reader of the result must know."""
    notes = []
    sample = [c for c in cons if c.bound_runs() > n]
    if sample:
        need = max(c.bound_runs() for c in sample)
        notes.append(
            f"{n} runs per candidate are too few for an order-statistics bound on "
            + ", ".join(f"{c.metric} P{c.percentile:g}" for c in sample)
            + f" (at least {need} needed): judged on the sample percentile, a screening "
            f"without confidence; confirm the design with `dqspace montecarlo` on more runs "
            f"and other seeds"
        )
    failed = sum(c.n_failed for c in done)
    if failed:
        notes.append(f"{failed} runs failed over the candidates (their candidates infeasible)")
    return notes
