"""The ``dqspace`` command line: run, sweep, plot, report, animate, list and show scenarios.

Exit status:

- 0: success;
- 1: a run that failed (diverged, could not write its results) or was interrupted
  (Ctrl-C or SIGTERM; its partial results are kept), or a sweep with failed variants;
- 2: bad input: a scenario, an override, a path, a result directory (one line on
  stderr says what and where; never a traceback).

Output: what people read is in display units with the unit named (mm, deg, deg/s, N,
N m, rpm); files stay SI.  Progress goes to stderr: a bar on a terminal, plain lines
through Python ``logging`` otherwise.  ``-q`` keeps only errors, ``-v`` adds details
(and the traceback of an unexpected error).

Startup stays fast: this module imports nothing heavy at import time; each command
imports what it needs.
"""

import argparse
import logging
import sys
import time
from pathlib import Path

__all__ = ["main", "build_parser"]

log = logging.getLogger("dqspace")

#: exit codes
OK, RUN_FAILED, USER_ERROR = 0, 1, 2


class _UserError(Exception):
    """A problem with what the user asked for: one line, exit 2."""


def _fail(msg, code=USER_ERROR):
    print(f"dqspace: error: {msg}", file=sys.stderr)
    return code


def _first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# ------------------------------------------------------------------ helpers


def _versions():
    from importlib import metadata

    import dqspace

    parts = [f"dqspace {dqspace.__version__}", f"Python {sys.version.split()[0]}"]
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


def _compile_notice(what="the run"):
    """Say, before anything is compiled, that the first run compiles the kernels."""
    from .._numba_cache import cache_dir, caches_are_warm

    if not caches_are_warm():
        log.info(
            "compiling the numba kernels before %s: first run of this installation only, "
            "about two minutes on 2 cores (cached in %s)",
            what,
            cache_dir(),
        )


def _load(args):
    from .spec.scenario import load_scenario

    return load_scenario(args.scenario, args.set)


def _print_metrics(metrics):
    from .figures.units import format_quantity
    from .sim.metrics import METRICS

    for name, value in metrics.items():
        unit = METRICS.get(name, ("-",))[0]
        print(f"  {name:24s} {format_quantity(value, unit, kind=name)}")


# ----------------------------------------------------------------- commands


def _cmd_list(args):
    from .spec.config import embedded_scenarios
    from .spec.scenario import load_scenario

    for name in embedded_scenarios():
        sc = load_scenario(name)
        print(f"{name:20s} {sc.config['scenario']['description']}")
    return OK


def _cmd_show(args):
    sc = _load(args)
    print(f"# resolved from {sc.source}")
    print(sc.to_toml())
    return OK


def _cmd_run(args):
    sc = _load(args)
    out = Path(args.out) if args.out else Path("runs") / sc.name
    cfg = sc.config
    log.info("running %r (%g s simulated) -> %s", sc.name, cfg["scenario"]["duration"], out)
    _compile_notice()  # before the runner's import, which compiles (or loads) the kernels
    from .sim.runner import RunInterrupted, run

    t0 = time.perf_counter()
    try:
        res = run(sc, out=out, progress=args.verbosity >= 0)
    except RunInterrupted as exc:
        n = exc.results.manifest.get("n_samples", len(exc.results.t))
        t_end = exc.results.manifest.get("t_end", float("nan"))
        return _fail(
            f"interrupted ({exc.reason}) at t = {t_end:.3f} s: {n} samples kept in {out} "
            f"(status 'interrupted'; a previous complete result, if any, is in {out}/previous)",
            RUN_FAILED,
        )
    wall = time.perf_counter() - t0
    files = _write_outputs(res, out, cfg)
    duration = cfg["scenario"]["duration"]
    print(f"done: {duration:g} s simulated in {wall:.1f} s wall ({duration / wall:.1f}x real time)")
    metrics = res.manifest.get("metrics")
    if metrics:
        _print_metrics(metrics)
    for msg in res.manifest.get("degraded", []):
        print(f"degraded: {msg}")
    print(
        f"wrote {out / 'result.npz'}, {out / 'manifest.json'}"
        + "".join(f", {p.name}" for p in files)
    )
    return OK


def _write_outputs(res, out, cfg):
    files = []
    if cfg["outputs"]["plots"]:
        from .figures.plots import plot_all

        fmts = [f.strip() for f in cfg["outputs"]["formats"].split(",") if f.strip()]
        files = list(plot_all(res, out, formats=fmts))
    if cfg["outputs"]["csv"]:
        files.append(res.to_csv(out / "result.csv"))
    return files


def _cmd_sweep(args):
    from .campaigns.sweep import sweep
    from .figures.units import format_sweep_table
    from .spec.variants import load_grid_file, load_samples_file, make_variants

    sc = _load(args)
    grid = load_grid_file(args.grid) if args.grid else None
    samples = load_samples_file(args.samples) if args.samples else None
    variants = make_variants(sc, grid, samples=samples, where=args.grid or args.samples)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    out = Path(args.out) if args.out else Path("runs") / f"{sc.name}-sweep"
    if args.scheduler:
        where = f"the Dask scheduler {args.scheduler}"
    else:
        where = f"a local Dask cluster of {args.workers or 'one worker per CPU'}" + (
            " workers" if args.workers else ""
        )
    T = sc.config["scenario"]["duration"]
    log.info("sweep of %r: %d variants of %g s on %s -> %s", sc.name, len(variants), T, where, out)
    if not args.scheduler:
        log.info("starting the cluster (its workers load the compiled kernels on first use)")
    _compile_notice("the sweep (each worker loads them)")
    try:
        df = sweep(
            sc,
            grid,
            samples=samples,
            metrics=metrics,
            out=out,
            workers=args.workers,
            scheduler=args.scheduler,
            keep_results=args.keep_results,
            retry_failed=args.retry_failed,
            progress=args.verbosity >= 0,
            security=_security(args),
        )
    except KeyboardInterrupt:
        return _fail(f"interrupted: the completed variants are kept in {out}", RUN_FAILED)
    info = df.attrs["sweep"]
    print(format_sweep_table(df, _metric_units()))
    for vid, err in zip(df["variant"], df["error"], strict=True):
        if isinstance(err, str):
            print(f"variant {vid} failed: {err}")
    print(
        f"{len(df)} variants: {info['n_run']} run, {info['n_cached']} already stored, "
        f"{info['n_failed']} failed; {info['wall_time']:.1f} s wall"
    )
    print(f"wrote {out / 'metrics.csv'} (every column, SI units) and {out / 'variants'}/<id>/")
    return RUN_FAILED if info["n_failed"] else OK


def _cmd_montecarlo(args):
    from .campaigns.montecarlo import montecarlo
    from .figures.units import format_quantity
    from .sim.metrics import METRICS

    sc = _load(args)
    if args.n < 1:
        raise _UserError(f"-n must be a positive number of runs, got {args.n}")
    out = Path(args.out) if args.out else Path("runs") / f"{sc.name}-montecarlo"
    log.info("Monte Carlo of %r: %d runs -> %s", sc.name, args.n, out)
    _compile_notice("the campaign (each worker loads them)")
    try:
        df = montecarlo(
            sc,
            args.n,
            seed=args.seed,
            out=out,
            workers=args.workers,
            scheduler=args.scheduler,
            progress=args.verbosity >= 0,
        )
    except KeyboardInterrupt:
        return _fail(f"interrupted: the completed runs are kept in {out}", RUN_FAILED)
    info = df.attrs["montecarlo"]
    print(f"{'metric':26s} {'P50':>14s} {'P95':>14s} {'P99':>14s}")
    for m, p in info["percentiles"].items():
        unit = METRICS[m][0]
        cells = [format_quantity(p[q], unit, kind=m) for q in (50, 95, 99)]
        print(f"{m:26s} " + " ".join(f"{c:>14s}" for c in cells))
    print("requirements:")
    for r in info["requirements"]:
        unit = METRICS[r["metric"]][0]
        value = format_quantity(r["value"], unit, kind=r["metric"])
        limit = format_quantity(r["limit"], unit, kind=r["metric"])
        verdict = "PASS" if r["ok"] else "FAIL"
        print(f"  {r['metric']} P{r['percentile']} = {value} {r['op']} {limit}: {verdict}")
    figures = [p for p in ("montecarlo.png", "montecarlo_envelopes.png") if (out / p).is_file()]
    print(
        f"{len(df)} runs, {info['n_failed']} failed; wrote {out / 'metrics.csv'}, "
        f"{out / 'montecarlo.json'}, " + ", ".join(str(out / p) for p in figures)
    )
    return RUN_FAILED if info["n_failed"] else OK


def _security(args):
    """A ``distributed.Security`` from the --tls-* options (None: the Dask configuration)."""
    files = (args.tls_ca_file, args.tls_cert, args.tls_key)
    if not any(files):
        return None
    if not all(files):
        raise _UserError("--tls-ca-file, --tls-cert and --tls-key go together (all three)")
    for f in files:
        if not Path(f).is_file():
            raise _UserError(f"{f}: no such file (TLS credentials)")
    from distributed.security import Security

    return Security(
        tls_ca_file=args.tls_ca_file,
        tls_client_cert=args.tls_cert,
        tls_client_key=args.tls_key,
        require_encryption=True,
    )


def _metric_units():
    from .sim.metrics import METRICS

    return {name: unit for name, (unit, _) in METRICS.items()}


def _cmd_new(args):
    from importlib import resources

    from .spec.config import _NAME, NAME_MAX_LENGTH

    name = args.name
    if not (1 <= len(name) <= NAME_MAX_LENGTH and _NAME.fullmatch(name)):
        raise _UserError(
            f"{name!r} is not a plain name: use ASCII letters, digits, '-', '_' or '.', "
            f"not starting with '.'"
        )
    folder = Path(args.dir) / name if args.dir else Path(name)
    if folder.exists():
        raise _UserError(f"{folder}: already exists; choose another name or remove it")
    templates = resources.files("dqspace.scenarios") / "data" / "templates"
    text = (templates / "scenario.toml").read_text(encoding="utf-8")
    folder.mkdir(parents=True)
    (folder / "scenario.toml").write_text(
        text.replace('name = "NAME"', f'name = "{name}"'), encoding="utf-8"
    )
    (folder / "arm.urdf").write_text((templates / "arm.urdf").read_text(encoding="utf-8"))
    print(f"wrote {folder / 'scenario.toml'} and {folder / 'arm.urdf'}")
    print(f"run it:      dqspace run {folder / 'scenario.toml'}")
    print(f"every key:   dqspace show {folder / 'scenario.toml'}")
    return OK


def _cmd_plot(args):
    from .store.results import Results

    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    bad = [f for f in formats if f not in ("png", "pdf", "svg")]
    if bad or not formats:
        raise _UserError(f"--formats {args.formats!r}: give png, pdf or svg, comma-separated")
    paths = [Path(r) for r in args.result]
    if len(paths) == 1 and (paths[0] / "sweep.json").is_file():
        files = _plot_campaign(paths[0], args, formats)
    elif len(paths) == 1:
        from .figures.plots import plot_all

        out = Path(args.out) if args.out else paths[0]
        files = plot_all(Results.load(paths[0]), out, formats=formats)
    else:
        from .figures.campaign_plots import plot_runs, save

        results = [Results.load(p) for p in paths]
        out = Path(args.out) if args.out else paths[0].parent / "comparison"
        fig = plot_runs(results, names=[p.name or str(p) for p in paths])
        files = save(fig, out / "comparison", formats)
    if not files:
        raise _UserError(f"{args.result[0]}: nothing to plot in this result")
    print("wrote " + ", ".join(str(p) for p in files))
    return OK


def _cmd_animate(args):
    from .figures.animate import animate
    from .store.results import Results
    from .store.storage import format_bytes

    res = Results.load(args.result)
    out = Path(args.out) if args.out else Path(args.result) / f"animation.{args.format or 'html'}"
    path = animate(res, out, frames=args.frames, fps=args.fps, format=args.format)
    print(f"wrote {path} ({format_bytes(path.stat().st_size)})")
    return OK


def _plot_campaign(directory, args, formats):
    """The figures of a sweep directory, or of a Monte Carlo one (it has montecarlo.json)."""
    from .figures.campaign_plots import plot_montecarlo, plot_pareto, plot_sweep_tradeoff, save
    from .store.sweep_store import _read_json, load_sweep

    out = Path(args.out) if args.out else directory
    if (directory / "montecarlo.json").is_file():
        return plot_montecarlo(directory, formats, figures_dir=out)
    df = load_sweep(directory)
    if df.empty:
        raise _UserError(f"{directory}: the sweep has no stored variant yet")
    base = _read_json(directory / "sweep.json", "sweep manifest").get("base")
    pareto = [m.strip() for m in args.pareto.split(",") if m.strip()]
    if len(pareto) != 2:
        raise _UserError(f"--pareto {args.pareto!r}: give two metric names, comma-separated")
    files = save(plot_sweep_tradeoff(df, base), out / "sweep_tradeoff", formats)
    files += save(plot_pareto(df, *pareto, base_config=base), out / "sweep_pareto", formats)
    return files


def _cmd_report(args):
    from .figures.report import write_report
    from .store.results import Results

    res = Results.load(args.result)
    out = Path(args.out) if args.out else Path(args.result) / "report.html"
    path = write_report(res, out, source=args.result)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, self-contained: open it offline)")
    return OK


def _cmd_demo(args):
    """A short tour of the dual-quaternion algebra."""
    import numpy as np

    from ..dq import DualQuaternion, frame_change

    np.set_printoptions(precision=4, suppress=True)
    T_IB = DualQuaternion.from_rpy_deg([0.0, 0.0, 90.0], [1.0, 0.0, 0.0])
    T_BE = DualQuaternion.from_rpy_deg([0.0, 30.0, 0.0], [0.0, 0.0, 0.5])
    T_IE = T_IB * T_BE
    print("pose of B in I:        ", T_IB)
    print("pose of E in I:        ", T_IE)
    print("E origin in I [m]:     ", T_IE.translation)
    print("E rpy in I [deg]:      ", T_IE.rpy_deg())
    print("log(T_IE) (Table 1):   ", T_IE.log())
    print("ScLERP halfway [m]:    ", T_IB.sclerp(T_IE, 0.5).translation)
    print("twist seen at E (in E):", frame_change(T_IE.array, [0.0, 0.0, 1.0, 0.1, 0.0, 0.0]))
    return OK


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


def _add_overrides(p):
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a value, e.g. --set scenario.duration=5 (repeatable; TOML values)",
    )


def build_parser():
    p = argparse.ArgumentParser(
        prog="dqspace",
        description="Dual-quaternion modelling, simulation and control of space robots.",
        epilog="Exit status: 0 success, 1 run failed or interrupted, 2 bad input.",
    )
    p.add_argument("--version", action=_VersionAction, help="print the versions and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    r = sub.add_parser(
        "run",
        help="run a scenario (file or embedded name)",
        description="Run a scenario and write result.npz, manifest.json and its figures.",
    )
    r.add_argument("scenario", help="a .toml file or an embedded name (see `dqspace list`)")
    r.add_argument("--out", help="output directory (default runs/<scenario name>)")
    _add_overrides(r)
    _add_common(r)
    r.set_defaults(func=_cmd_run)

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
    sw.set_defaults(func=_cmd_sweep)

    mc = sub.add_parser(
        "montecarlo",
        help="N runs with the scenario's [dispersions] drawn: percentiles, requirements",
        description=(
            "Draw N override sets from the scenario's [dispersions] table (run i reproducible "
            "alone), run them on Dask like a sweep (resumable), and report the 50/95/99th "
            "percentiles of every metric and a requirement table; writes <out>/metrics.csv, "
            "<out>/montecarlo.json, <out>/montecarlo.png (histograms) and "
            "<out>/montecarlo_envelopes.png (percentile bands of the errors over time)."
        ),
    )
    mc.add_argument("scenario", help="a .toml file or an embedded name (see `dqspace list`)")
    mc.add_argument("-n", type=int, required=True, help="number of runs")
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
    _add_overrides(mc)
    _add_common(mc)
    mc.set_defaults(func=_cmd_montecarlo)

    pl = sub.add_parser(
        "plot",
        help="plot a result, several results overlaid, a sweep or a Monte Carlo campaign",
        description=(
            "One result directory: its standard figures. Several: comparison.png, the runs "
            "overlaid and labelled by what differs between their scenarios (written to "
            "--out, default <parent of the first>/comparison). A sweep directory: "
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
    pl.set_defaults(func=_cmd_plot)

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
    an.set_defaults(func=_cmd_animate)

    rp = sub.add_parser(
        "report",
        help="write one self-contained HTML page of a result (figures, metrics, scenario)",
        description=(
            "Write an HTML page a reviewer can open offline: the run's status, degradations "
            "and events, the metrics in display units against the requirements, every figure "
            "(embedded), the resolved scenario as TOML, the versions and the machine."
        ),
    )
    rp.add_argument("result", help="directory holding result.npz and manifest.json")
    rp.add_argument("--out", help="the HTML file (default: <result>/report.html)")
    _add_common(rp)
    rp.set_defaults(func=_cmd_report)

    ls = sub.add_parser(
        "list",
        help="list the embedded scenarios",
        description="List the scenarios shipped with dqspace.",
    )
    _add_common(ls)
    ls.set_defaults(func=_cmd_list)

    sh = sub.add_parser(
        "show",
        help="print a scenario resolved (defaults filled in)",
        description="Print a scenario with every default filled in, as TOML.",
    )
    sh.add_argument("scenario")
    _add_overrides(sh)
    _add_common(sh)
    sh.set_defaults(func=_cmd_show)

    nw = sub.add_parser(
        "new",
        help="write a starting scenario for your own spacecraft",
        description="Write NAME/scenario.toml (commented: base, a URDF arm, a thruster table, "
        "reaction wheels, a way-point task) and NAME/arm.urdf; it runs as written.",
    )
    nw.add_argument("name", help="scenario name, also the folder's")
    nw.add_argument("--dir", help="where to create the folder (default: here)")
    _add_common(nw)
    nw.set_defaults(func=_cmd_new)

    d = sub.add_parser(
        "demo",
        help="a short tour of the dual-quaternion algebra",
        description="Print a few dual-quaternion computations.",
    )
    _add_common(d)
    d.set_defaults(func=_cmd_demo)
    return p


def main(argv=None):
    """Run the command line; returns the exit status (see the module docstring)."""
    args = build_parser().parse_args(argv)
    _setup_logging(args.verbosity)
    try:
        return args.func(args)
    except Exception as exc:  # noqa: BLE001 - every error becomes one line and a status
        code, msg = _classify(exc)
        if args.verbosity > 0 and code != USER_ERROR:
            log.exception("traceback:")
        return _fail(msg, code)


def _classify(exc):
    """(exit status, one-line message) of an exception escaping a command."""
    from .._numba_cache import BuildLockTimeout

    if isinstance(exc, _UserError):
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
    runner = sys.modules.get(f"{__package__}.runner")  # not loaded: not a run failure
    failed = getattr(runner, "RunFailed", None)
    if failed is None or not isinstance(exc, failed):
        return None
    where = f"; partial result kept in {exc.path}" if exc.path else ""
    hint = f"; likely: {exc.hint}" if exc.hint else ""
    return f"run failed at t = {exc.t:.3f} s: {exc.cause}{where}{hint}"


if __name__ == "__main__":
    sys.exit(main())
