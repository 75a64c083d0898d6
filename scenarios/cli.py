"""The ``dqspace`` command line: the argument parser, :func:`main` and the exit status.

Commands: run, sweep, montecarlo, tune, plot, animate, report, list, show, new, demo (their
implementations: :mod:`dqspace.scenarios.commands`).

Exit status (:mod:`dqspace.scenarios.exits`):

- 0: success (for ``run`` and ``montecarlo``: every requirement MET);
- 1: a run that failed (diverged, could not write its results) or was interrupted
  (Ctrl-C or SIGTERM; its partial results are kept), or a sweep or a campaign with failed
  runs (before 3 and 4);
- 2: bad input: a scenario, an override, a path, a result directory (one line on
  stderr says what and where; never a traceback);
- 3: ``run`` or ``montecarlo``: a requirement is NOT MET (a single run: its value beyond
  the limit; a campaign: the bound of the percentile beyond it at the requirement's
  confidence); ``tune``: no feasible candidate;
- 4: ``run`` or ``montecarlo``: none NOT MET but one UNDECIDED (a campaign whose runs do
  not decide it at its confidence, or too few to bound the percentile; a single run without
  a value of the metric, e.g. shorter than the metric's window).

``--no-fail`` makes 3 and 4 exit 0; the console prints MET / NOT MET / UNDECIDED per
requirement either way.

Output: what people read is in display units with the unit named (mm, deg, deg/s, N,
N m, rpm); files stay SI.  Progress goes to stderr: a bar on a terminal; otherwise (a pipe,
a CI log) plain lines at a bounded rate, with the work done, the wall time and the time left,
also while the kernels compile (:mod:`dqspace._progress`; ``DQSPACE_PROGRESS_SECONDS``).
``-q`` keeps only errors, ``-v`` adds details (and the traceback of an unexpected error).

Startup stays fast: this module imports nothing heavy; ``--help`` and ``--version`` do not
load the commands (numpy, the scenario modules), and each command loads the heavy
libraries it needs itself.
"""

import argparse
import logging
import sys
from importlib import metadata

from .. import __version__
from .._numba_cache import BuildLockTimeout
from .exits import RUN_FAILED, USER_ERROR, UserError, fail

#: runs per batch of ``--until-confident`` (the value of
#: :data:`dqspace.scenarios.campaigns.montecarlo.BATCH`; a test keeps them equal: this module
#: imports nothing heavy)
BATCH = 50

__all__ = ["main", "build_parser"]

log = logging.getLogger("dqspace")


def _first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _versions():
    parts = [f"dqspace {__version__}", f"Python {sys.version.split()[0]}"]
    for dist in ("numpy", "numba", "scipy", "cvxpy"):
        try:
            parts.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist} (not installed)")
    return ", ".join(parts)


def _setup_logging(verbosity):
    """CLI logging: INFO lines on stderr (``-q``: warnings only, ``-v``: debug)."""
    level = {-1: logging.WARNING, 0: logging.INFO}.get(verbosity, logging.DEBUG)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.handlers[:] = [handler]
    log.setLevel(level)
    log.propagate = False


# ------------------------------------------------------------------- parser


class _VersionAction(argparse.Action):
    """``--version``: the versions are looked up only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kw):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        print(_versions())
        parser.exit()


def _add_common(p):
    g = p.add_argument_group("output")
    g.add_argument(
        "-q",
        "--quiet",
        dest="verbosity",
        action="store_const",
        const=-1,
        default=0,
        help="print only results and errors (no progress)",
    )
    g.add_argument(
        "-v",
        "--verbose",
        dest="verbosity",
        action="store_const",
        const=1,
        help="more detail (and the traceback of an unexpected error)",
    )


#: the exit statuses, in ``dqspace --help`` and the help of the commands that judge
EXIT_STATUS = """exit status:
  0  success (run, montecarlo: every requirement MET)
  1  a run failed or was interrupted; a sweep or campaign with failed runs
  2  bad input (a scenario, an override, a path)
  3  run, montecarlo: a requirement NOT MET
  4  run, montecarlo: none NOT MET, one UNDECIDED (too few runs for the percentile at its
     confidence, or a run without a value of the metric)
  --no-fail turns 3 and 4 into 0."""


class _Formatter(argparse.HelpFormatter):
    """argparse's help, with :data:`EXIT_STATUS` kept as written (a table)."""

    def _fill_text(self, text, width, indent):
        if text == EXIT_STATUS:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def _add_no_fail(p):
    p.add_argument(
        "--no-fail",
        action="store_true",
        help="exit 0 whatever the requirements' verdicts (they are still printed)",
    )


def _add_overrides(p):
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a value, e.g. --set scenario.duration=5 (repeatable; TOML values)",
    )


def _add_tune(sub):
    """The ``tune`` command's parser (robust tuning: ``docs/robust-tuning.md``)."""
    tu = sub.add_parser(
        "tune",
        help="search gains and filter parameters against Monte Carlo objectives (Optuna)",
        description=(
            "Robust tuning: every candidate design is a Monte Carlo campaign of N runs on the "
            "same dispersion samples (common random numbers), on one Dask cluster; Optuna's "
            "TPE sampler searches the --param ranges for the lowest objective with every "
            "constraint met (default: the scenario's requirements). Writes <out>/history.csv, "
            "<out>/tuning.json, <out>/best.toml (a scenario file `dqspace run` reads), "
            "<out>/tuning_history.png and <out>/tuning_pareto.png; the study "
            "(<out>/study) and each candidate's campaign (<out>/candidates/<k>) are kept, so "
            "an interrupted tuning continues with --resume."
        ),
        epilog=(
            "Exit status: 0 a feasible design found, 1 runs failed or interrupted (the "
            "finished candidates are kept), 2 bad input, 3 no feasible candidate "
            "(least_violation.toml written instead of best.toml; --no-fail: exit 0)."
        ),
    )
    tu.add_argument("scenario", help="a .toml file or an embedded name (see `dqspace list`)")
    tu.add_argument(
        "--param",
        action="append",
        required=True,
        metavar="KEY=LO:HI",
        help="a scenario number to tune and its range (repeatable): log scale when LO > 0 and "
        "HI/LO >= 10, or say log:LO:HI / lin:LO:HI; a vector key is scaled as one (the range "
        "of its largest component), KEY[i] tunes component i",
    )
    tu.add_argument("-n", type=int, required=True, help="runs per candidate (the same samples)")
    tu.add_argument(
        "--objective",
        default="total_impulse:P50",
        metavar="METRIC[:STAT]",
        help="minimised; STAT: P50, P95, P99 (any P<q>), mean, max (default: %(default)s)",
    )
    tu.add_argument(
        "--constraint",
        action="append",
        default=[],
        metavar="METRIC<=LIMIT[:P99]",
        help="a constraint in SI units (repeatable; >= too), added to the scenario's "
        "requirements (replacing the one on the same metric)",
    )
    tu.add_argument(
        "--no-requirements",
        dest="requirements",
        action="store_false",
        help="constrain only with --constraint (and no failed run), not the requirements",
    )
    tu.add_argument(
        "--budget", type=int, default=20, metavar="EVALS", help="candidates in all (default 20)"
    )
    tu.add_argument(
        "--seed", type=int, help="root seed of the samples and the sampler (default: scenario.seed)"
    )
    tu.add_argument("--out", help="output directory (default runs/<scenario name>-tune)")
    tu.add_argument(
        "--resume", action="store_true", help="continue the tuning in --out (same settings)"
    )
    ex = tu.add_mutually_exclusive_group()
    ex.add_argument(
        "--workers", type=int, help="processes of the local cluster (default: one per CPU, <= n)"
    )
    ex.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="an existing Dask scheduler (tcp://host:port), or 'synchronous' (no cluster)",
    )
    tu.add_argument(
        "--no-plots",
        dest="plots",
        action="store_false",
        help="do not draw tuning_history.png and tuning_pareto.png",
    )
    tu.add_argument(
        "--no-fail",
        dest="fail",
        action="store_false",
        help="exit 0 even when no candidate is feasible",
    )
    _add_overrides(tu)
    _add_common(tu)
    tu.set_defaults(command="tune")


def build_parser() -> argparse.ArgumentParser:
    """The parser of the command line; a command's arguments carry ``command`` (its name:
    :func:`main` runs ``dqspace.scenarios.commands.cmd_<command>``) and ``verbosity``."""
    p = argparse.ArgumentParser(
        prog="dqspace",
        description="Dual-quaternion modelling, simulation and control of space robots.",
        epilog=EXIT_STATUS,
        formatter_class=_Formatter,
    )
    p.add_argument("--version", action=_VersionAction, help="print the versions and exit")
    g = p.add_argument_group("output (before or after the command)")
    g.add_argument("-q", "--quiet", dest="global_verbosity", action="store_const", const=-1,
                   default=0, help="print only results and errors (no progress)")  # fmt: skip
    g.add_argument("-v", "--verbose", dest="global_verbosity", action="store_const", const=1,
                   help="more detail (and the traceback of an unexpected error)")  # fmt: skip
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser(
        "run",
        help="run a scenario (file or embedded name)",
        description=(
            "Run a scenario and write result.npz, manifest.json and its figures; print the "
            "metrics and each requirement judged on the run's value (MET / NOT MET, "
            "UNDECIDED without a value: a single run has no percentile or confidence, "
            "`dqspace montecarlo` has)."
        ),
        epilog=EXIT_STATUS,
        formatter_class=_Formatter,
    )
    r.add_argument("scenario", help="a .toml file or an embedded name (see `dqspace list`)")
    r.add_argument("--out", help="output directory (default runs/<scenario name>)")
    _add_no_fail(r)
    _add_overrides(r)
    _add_common(r)
    r.set_defaults(command="run")

    sw = sub.add_parser(
        "sweep",
        help="run many variants of a scenario (on Dask) and tabulate their metrics",
        description=(
            "Run variants of a scenario on a Dask cluster (a local one by default) and "
            "write <out>/metrics.csv plus <out>/variants/<id>/metrics.json per variant. "
            "A sweep restarted with the same --out runs only the variants not stored yet."
        ),
    )
    sw.add_argument("scenario", help="a .toml file or an embedded name (see `dqspace list`)")
    src = sw.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--grid",
        metavar="FILE",
        help="TOML or JSON mapping section.key to lists of values (Cartesian product)",
    )
    src.add_argument(
        "--samples",
        metavar="FILE",
        help="TOML ([[samples]] tables) or JSON (list of objects): explicit variants",
    )
    sw.add_argument("--out", help="output directory (default runs/<scenario name>-sweep)")
    sw.add_argument(
        "--workers", type=int, help="processes of the local cluster (default: one per CPU)"
    )
    sw.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="an existing Dask scheduler (tcp://host:port), or 'synchronous' (no cluster)",
    )
    _add_overrides(sw)
    sw.add_argument(
        "--metrics", help="comma-separated metric names (default: all; see `dqspace run`)"
    )
    sw.add_argument(
        "--keep-results", action="store_true", help="also store each variant's full result"
    )
    sw.add_argument("--retry-failed", action="store_true", help="rerun stored variants that failed")
    tls = sw.add_argument_group(
        "TLS (a tls:// scheduler; without these, the Dask configuration's credentials)"
    )
    tls.add_argument("--tls-ca-file", metavar="FILE", help="certificate authority (PEM)")
    tls.add_argument("--tls-cert", metavar="FILE", help="this client's certificate (PEM)")
    tls.add_argument("--tls-key", metavar="FILE", help="this client's private key (PEM)")
    _add_common(sw)
    sw.set_defaults(command="sweep")

    mc = sub.add_parser(
        "montecarlo",
        help="N runs with the scenario's [dispersions] drawn: percentiles, requirements",
        description=(
            "Draw N override sets from the scenario's [dispersions] table (run i reproducible "
            "alone), run them on Dask like a sweep (resumable), and report the 50/95/99th "
            "percentiles of every metric, each requirement's percentile with its "
            "distribution-free bound at the requirement's confidence and its verdict (MET, "
            "NOT MET, UNDECIDED), and which dispersed parameters drive the required metrics "
            "(PRCC); writes <out>/metrics.csv, <out>/montecarlo.json, <out>/montecarlo.png "
            "(histograms), <out>/montecarlo_envelopes.png (percentile bands of the errors "
            "over time) and <out>/montecarlo_sensitivity.png (tornado plot)."
        ),
        epilog=EXIT_STATUS,
        formatter_class=_Formatter,
    )
    mc.add_argument("scenario", help="a .toml file or an embedded name (see `dqspace list`)")
    mc.add_argument(
        "-n", type=int, required=True, help="number of runs (with --until-confident: the most)"
    )
    mc.add_argument(
        "--until-confident",
        action="store_true",
        help="run --batch runs at a time and stop once every requirement is MET or NOT MET "
        "at its confidence (a sequential test), or after -n runs",
    )
    mc.add_argument(
        "--batch",
        type=int,
        default=BATCH,
        help="runs per batch with --until-confident (default %(default)s)",
    )
    _add_no_fail(mc)
    mc.add_argument("--seed", type=int, help="root seed of the draws (default: scenario.seed)")
    mc.add_argument("--out", help="output directory (default runs/<scenario name>-montecarlo)")
    mc.add_argument(
        "--workers", type=int, help="processes of the local cluster (default: one per CPU)"
    )
    mc.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="an existing Dask scheduler (tcp://host:port), or 'synchronous' (no cluster)",
    )
    mc.add_argument(
        "--no-plots",
        dest="plots",
        action="store_false",
        help="do not draw montecarlo.png and montecarlo_envelopes.png (`dqspace plot <out>` "
        "draws them later)",
    )
    _add_overrides(mc)
    _add_common(mc)
    mc.set_defaults(command="montecarlo")

    _add_tune(sub)

    pl = sub.add_parser(
        "plot",
        help="plot a result, several results overlaid, a sweep or a Monte Carlo campaign",
        description=(
            "One result directory: its standard figures. Several: comparison.png, the runs "
            "overlaid and labelled by what differs between their scenarios (written to "
            "--out, default <parent of the first>/comparison-<first>-vs-<second>...: one "
            "folder per set of results compared). A sweep directory: "
            "sweep_tradeoff.png (metrics vs the swept parameter) and sweep_pareto.png. A "
            "Monte Carlo directory: montecarlo.png (histograms) and montecarlo_envelopes.png "
            "(percentile bands over time)."
        ),
    )
    pl.add_argument(
        "result",
        nargs="+",
        help="result directories (result.npz + manifest.json), or one "
        "sweep or Monte Carlo directory",
    )
    pl.add_argument("--out", help="where to write the figures (default: the directory plotted)")
    pl.add_argument("--formats", default="png,pdf", help="comma-separated: png, pdf, svg")
    pl.add_argument(
        "--pareto",
        default="base_pos_err_max,total_impulse",
        metavar="A,B",
        help="sweeps: the two metrics of the Pareto front (default: %(default)s)",
    )
    _add_common(pl)
    pl.set_defaults(command="plot")

    an = sub.add_parser(
        "animate",
        help="write a 3-D animation of a result directory (one HTML page)",
        description="Write a self-contained HTML page (WebGL, opens offline) that plays the "
        "run in 3-D: base, arm, thrusters and their plumes, VSCMGs or wheels, the "
        "end-effector's path and reference.",
    )
    an.add_argument("result", help="directory holding result.npz and manifest.json")
    an.add_argument("--out", help="the file to write (default: <result>/animation.<format>)")
    an.add_argument("--frames", type=int, default=200, help="most frames (default 200)")
    an.add_argument("--fps", type=float, help="playback rate [frames/s] (default: real time, 1-30)")
    an.add_argument(
        "--format",
        choices=("html", "mp4", "gif"),
        help="html (interactive; the default) or a video drawn by matplotlib (mp4 needs "
        "ffmpeg or imageio-ffmpeg); default: from --out's suffix",
    )
    _add_common(an)
    an.set_defaults(command="animate")

    rp = sub.add_parser(
        "report",
        help="write one self-contained HTML page of a result, a sweep, a Monte Carlo "
        "campaign or a tuning",
        description=(
            "Write an HTML page a reviewer can open offline. Of a result: the run's status, "
            "degradations and events, the metrics in display units against the requirements, "
            "every figure (embedded), the resolved scenario as TOML, the versions and the "
            "machine. Of a Monte Carlo directory: the settings, the requirements with each "
            "percentile's estimate, confidence bound, runs and verdict, a small-sample "
            "warning when the runs cannot bound a percentile, the sensitivities (PRCC), "
            "every metric's percentiles, the figures, the failed and degraded runs. Of a "
            "tuning directory: the best design, its constraints and campaign, every "
            "candidate, the figures. Of a sweep directory: each variant judged against the "
            "requirements, the swept values, the figures, the failed and degraded variants."
        ),
    )
    rp.add_argument(
        "result",
        help="directory holding result.npz and manifest.json, or a sweep, Monte Carlo or "
        "tuning directory",
    )
    rp.add_argument("--out", help="the HTML file (default: <result>/report.html)")
    _add_common(rp)
    rp.set_defaults(command="report")

    ls = sub.add_parser(
        "list",
        help="list the embedded scenarios",
        description="List the scenarios shipped with dqspace.",
    )
    _add_common(ls)
    ls.set_defaults(command="list")

    sh = sub.add_parser(
        "show",
        help="print a scenario resolved (defaults filled in)",
        description="Print a scenario with every default filled in, as TOML.",
    )
    sh.add_argument("scenario")
    _add_overrides(sh)
    _add_common(sh)
    sh.set_defaults(command="show")

    nw = sub.add_parser(
        "new",
        help="write a starting scenario for your own spacecraft",
        description="Write NAME/scenario.toml (commented: base, a URDF arm, a thruster table, "
        "reaction wheels, a way-point task) and NAME/arm.urdf; it runs as written.",
    )
    nw.add_argument("name", help="scenario name, also the folder's")
    nw.add_argument("--dir", help="where to create the folder (default: here)")
    _add_common(nw)
    nw.set_defaults(command="new")

    ca = sub.add_parser(
        "cache",
        help="where the compiled kernels are cached, how big, and clear it",
        description="Show the folder of numba's compiled kernels for this installation "
        "(and of other dqspace installations), their size, and whether they are current; "
        "clear them (the next run compiles again).",
    )
    ca.add_argument("--clear", action="store_true", help="delete this installation's kernels")
    ca.add_argument(
        "--clear-others",
        action="store_true",
        help="also delete the folders other dqspace installations left in the cache",
    )
    _add_common(ca)
    ca.set_defaults(command="cache")

    d = sub.add_parser(
        "demo",
        help="a short tour of the dual-quaternion algebra",
        description="Print a few dual-quaternion computations.",
    )
    _add_common(d)
    d.set_defaults(command="demo")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # `dqspace` alone: the help, not an error
        parser.print_help()
        return 0
    # -q / -v given before the command (a command's own option wins)
    args.verbosity = getattr(args, "verbosity", 0) or args.global_verbosity
    _setup_logging(args.verbosity)
    try:
        # the commands load numpy and the scenario modules: not needed by --help, --version
        from . import commands

        return getattr(commands, f"cmd_{args.command}")(args)
    except KeyboardInterrupt:  # Ctrl-C outside a run (start-up, loading, figures): no traceback
        return fail("interrupted (Ctrl-C)", RUN_FAILED)
    except Exception as exc:  # noqa: BLE001 - every error becomes one line and a status
        code, msg = _classify(exc)
        if args.verbosity > 0 and code != USER_ERROR:
            log.exception("traceback:")
        return fail(msg, code)


def _classify(exc):
    """(exit status, one-line message) of an exception escaping a command."""
    if isinstance(exc, UserError):
        return USER_ERROR, _first_line(exc)
    if isinstance(exc, BuildLockTimeout):
        return RUN_FAILED, _first_line(exc)
    failed = _run_failure(exc)
    if failed is not None:
        return RUN_FAILED, failed
    if isinstance(exc, (ValueError, FileNotFoundError, IsADirectoryError, NotADirectoryError)):
        return USER_ERROR, _first_line(exc)
    if isinstance(exc, PermissionError):
        return USER_ERROR, f"{exc.filename or ''}: permission denied".lstrip(": ")
    if isinstance(exc, OSError):  # disk full, file too large, I/O error while writing
        where = f"{exc.filename}: " if exc.filename else ""
        return RUN_FAILED, f"{where}{exc.strerror or _first_line(exc)} (while writing results)"
    return RUN_FAILED, (
        f"unexpected {type(exc).__name__}: {_first_line(exc)} "
        f"(a bug? rerun with -v for the traceback and report it)"
    )


def _run_failure(exc):
    """The one-line report of a run that failed, or None for other exceptions."""
    runner = sys.modules.get(f"{__package__}.sim.runner")  # not loaded: not a run failure
    failed = getattr(runner, "RunFailed", None)
    if failed is None or not isinstance(exc, failed):
        return None
    where = f"; partial result kept in {exc.path}" if exc.path else ""
    hint = f"; likely: {exc.hint}" if exc.hint else ""
    return f"run failed at t = {exc.t:.3f} s: {exc.cause}{where}{hint}"


if __name__ == "__main__":
    # ``python -m dqspace.scenarios.cli`` runs this file as ``__main__``, a second copy:
    # run the package's module, whose UserError and exit codes the commands use
    from . import cli

    sys.exit(cli.main())
