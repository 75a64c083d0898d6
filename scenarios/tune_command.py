"""The ``dqspace tune`` command: robust tuning from the command line (``docs/robust-tuning.md``).

:func:`run_tune_command` is what :func:`dqspace.scenarios.commands.cmd_tune` runs once the
scenario is loaded: it parses ``--param``, calls
:func:`~dqspace.scenarios.campaigns.robust_tuning.robust_tune` with a progress line per
candidate in display units, draws ``tuning_history.png`` and ``tuning_pareto.png`` and prints
the best design (or the closest, without a feasible one: exit status 3 unless
``--no-fail``).  This module loads scipy.stats and Optuna (through the tuning), so the
command line imports it only for ``dqspace tune``.
"""

import logging
import sys
import time
from pathlib import Path

from .._progress import Heartbeat, LineRate, beat_period, left_text
from .campaigns.robust_tuning import robust_tune
from .campaigns.tuning_goals import parse_objective
from .campaigns.tuning_space import parse_param
from .exits import NOT_MET, OK, RUN_FAILED, UserError, fail
from .figures.units import format_quantity
from .sim.metrics import METRICS

__all__ = ["run_tune_command"]

log = logging.getLogger("dqspace")


def _duration(seconds):
    """``42 s``, ``3.5 min``, ``1.2 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def _judged(r):
    """A judged constraint in display units: ``MET  base_pos_err_max P99 (sample) = 0.8 mm
    <= 1 mm``."""
    c = r.constraint
    if c.source == "implicit":
        return f"{r.status:9s} no failed run: {r.reason}"
    unit = METRICS[c.metric][0]
    value = format_quantity(r.value, unit, kind=c.metric)
    limit = format_quantity(c.limit, unit, kind=c.metric)
    how = "bound" if r.judged_on == "bound" else r.judged_on
    return f"{r.status:9s} {c.metric} P{c.percentile:g} ({how}) = {value} {c.op} {limit}"


def _tune_line(p, objective):
    """The progress line of a candidate, in display units."""
    c = p.candidate
    unit = METRICS[objective.metric][0]
    value = format_quantity(c.objective, unit, kind=objective.metric)
    unmet = [r for r in c.constraints if not r.met]
    state = "feasible" if not unmet else "; ".join(" ".join(_judged(r).split()) for r in unmet)
    if p.best is not None:
        shown = format_quantity(p.best.objective, unit, kind=objective.metric)
        best = f"best {shown} (#{p.best.number})"
    else:
        best = "no feasible candidate yet"
    return (
        f"candidate {c.number} [{p.finished}/{p.budget}]: {objective.label} = {value}; {state}; "
        f"{best}; {_duration(p.elapsed)}, ETA {_duration(p.eta)}"
    )


class _TuneLines:
    """The progress of ``dqspace tune``: a line per candidate (:func:`_tune_line`); when
    stderr is not a terminal (a pipe, a CI log), also a line at least every 30 s while a
    candidate runs (:mod:`dqspace._progress`), so that a long candidate is not silence.
    A context manager (the heartbeat's thread stops at its end)."""

    def __init__(self, objective, budget, enabled=True):
        self.objective, self.budget = objective, budget
        self.t0 = time.perf_counter()
        self.last = None  # (TuneProgress, the time it came)
        self.rate = None if not enabled or sys.stderr.isatty() else LineRate()
        self.heartbeat = None

    def __enter__(self):
        if self.rate is not None:
            self.heartbeat = Heartbeat(beat_period(self.rate.max_wall), self.beat).start()
        return self

    def __exit__(self, *exc):
        if self.heartbeat is not None:
            self.heartbeat.stop()

    def candidate(self, p):
        """A candidate finished: its line."""
        self.last = (p, time.perf_counter())
        if self.rate is not None:
            self.rate.mark(p.finished / p.budget)
        log.info("%s", _tune_line(p, self.objective))

    def beat(self):
        """No line for a while: say which candidate runs, the wall time, the time left."""
        p, at = self.last if self.last is not None else (None, self.t0)
        done = p.finished if p is not None else 0
        if not self.rate.due(done / self.budget):
            return
        now = time.perf_counter()
        left = max(0.0, p.eta - (now - at)) if p is not None else None
        log.info(
            "tuning: candidate %d running (%d of %d finished), %s wall, %s",
            done, done, self.budget, _duration(now - self.t0), left_text(left),
        )  # fmt: skip


def run_tune_command(args, sc, *, notice) -> int:
    """``dqspace tune`` on the scenario ``sc`` (loaded with ``--set``): check the
    parameters, run :func:`~dqspace.scenarios.campaigns.robust_tuning.robust_tune` with a
    progress line per candidate, draw the figures, print the best design; returns the exit
    status (``notice(what)``: says, before anything compiles, that kernels compile).

    Raises
    ------
    UserError for a malformed ``--param``; ValueError from the tuning (bad key, range,
    objective, constraint, settings), which the command line reports with status 2.
    """
    params = {}
    for text in args.param:
        try:
            key, spec = parse_param(text)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        if key in params:
            raise UserError(f"--param {key}: given twice")
        params[key] = spec
    objective = parse_objective(args.objective)
    out = Path(args.out) if args.out else Path("runs") / f"{sc.name}-tune"
    where = (
        ("this process (synchronous)" if args.scheduler == "synchronous" else args.scheduler)
        if args.scheduler
        else f"a local Dask cluster of {args.workers or 'up to one worker per CPU'}"
        + (" workers" if args.workers else "")
    )
    log.info(
        "robust tuning of %r: %s, %d candidates x %d runs on %s -> %s",
        sc.name, ", ".join(params), args.budget, args.n, where, out,
    )  # fmt: skip
    notice("the tuning (each worker loads them)")
    lines = _TuneLines(objective, args.budget, enabled=args.verbosity >= 0)
    try:
        with lines:
            result = robust_tune(
                sc,
                params,
                args.n,
                objective=objective,
                constraints=args.constraint,
                requirements=args.requirements,
                budget=args.budget,
                seed=args.seed,
                out=out,
                resume=args.resume,
                workers=args.workers,
                scheduler=args.scheduler,
                progress=lines.candidate if args.verbosity >= 0 else False,
                run_progress=args.verbosity > 0,
            )
    except KeyboardInterrupt:
        return fail(
            f"interrupted: the finished candidates are kept in {out} (history.csv); continue "
            f"with the same command and --resume",
            RUN_FAILED,
        )
    files = list(result.files.values())
    if args.plots and result.candidates:
        from .figures.campaign_tuning import plot_tuning  # matplotlib

        files += plot_tuning(out, formats=("png",))
    _print_tuning(result)
    print("wrote " + ", ".join(str(p) for p in files))
    if result.best is None:
        print(
            "NO FEASIBLE CANDIDATE: no design met every constraint; the closest is in "
            f"{out / 'least_violation.toml'} (widen the ranges, raise the budget or relax a "
            "constraint)"
        )
        return NOT_MET if args.fail else OK
    print(f"run it: dqspace run {out / 'best.toml'}")
    return OK


def _print_tuning(result):
    c = result.closest
    obj = result.objective
    unit = METRICS[obj.metric][0]
    print(
        f"{len(result.candidates)} of {result.budget} candidates, {result.n} runs each "
        f"(seed {result.seed}); {result.n_run} runs made now"
    )
    if c is None:
        return
    what = "best" if result.best is not None else "closest (NOT feasible)"
    value = format_quantity(c.objective, unit, kind=obj.metric)
    print(f"{what}: candidate {c.number}, {obj.label} = {value}")
    for name, v in c.params.items():
        print(f"  {name} = {v:.6g}")
    print("constraints:")
    for r in c.constraints:
        print(f"  {_judged(r)}")
    for note in result.notes:
        print(f"note: {note}")
