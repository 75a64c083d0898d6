"""The commands of the ``dqspace`` command line: run, sweep, montecarlo, tune, plot,
animate, report, list, show, new, demo.

Each ``cmd_<name>(args)`` takes the arguments parsed by
:func:`~dqspace.scenarios.cli.build_parser` and returns the exit status (see
:mod:`dqspace.scenarios.exits`: ``run`` and ``montecarlo`` exit 3 when a requirement is NOT
MET and 4 when one is UNDECIDED, unless ``--no-fail``); a problem with what the user asked
for raises :class:`~dqspace.scenarios.exits.UserError`.  What people read is printed in
display units with the unit named; files stay SI.

Imports: :func:`dqspace.scenarios.cli.main` loads this module once the arguments are
parsed.  The scenario, storage and campaign modules load at its top (numpy only; scipy.stats
loads when a campaign's bounds or sensitivity are computed); the simulation (numba kernels),
matplotlib, plotly, Dask and the robust tuning (Optuna; its command is
:mod:`dqspace.scenarios.tune_command`) load in the command that needs them, so that a
command never pays for another's.
"""

import hashlib
import logging
import re
import time
from importlib import resources
from pathlib import Path

import numpy as np

from .._numba_cache import cache_dir, cache_report, caches_are_warm, clear_cache
from .campaigns.confidence import NOT_MET, UNDECIDED
from .campaigns.montecarlo import montecarlo, scenario_requirements
from .campaigns.sweep import sweep
from .campaigns.verdicts import judge_run, overall, percentile_warnings
from .exits import NOT_MET as EXIT_NOT_MET
from .exits import OK, RUN_FAILED, UserError, fail
from .exits import UNDECIDED as EXIT_UNDECIDED
from .figures.units import format_quantity, format_sweep_table
from .sim.metrics import ARM_METRICS, METRICS, has_arm, run_transient
from .spec.config import embedded_scenarios, is_plain_name
from .spec.scenario import load_scenario
from .spec.schema_capture import CAPTURE_METRICS
from .spec.variants import load_grid_file, load_samples_file, make_variants
from .store.results import Results
from .store.storage import format_bytes
from .store.sweep_store import load_sweep, read_sweep_manifest

__all__ = [
    "cmd_run",
    "cmd_sweep",
    "cmd_montecarlo",
    "cmd_tune",
    "cmd_plot",
    "cmd_animate",
    "cmd_report",
    "cmd_list",
    "cmd_show",
    "cmd_new",
    "cmd_demo",
]

log = logging.getLogger("dqspace")


# ------------------------------------------------------------------ helpers


def _compile_notice(what="the run"):
    """Say, before anything is compiled, that the first run compiles the kernels."""
    if not caches_are_warm():
        log.info(
            "compiling the numba kernels before %s: first run of this installation only, "
            "about a minute on 2 cores (cached in %s)",
            what,
            cache_dir(),
        )


def _load(args):
    return load_scenario(args.scenario, args.set)


def _print_metrics(metrics, res=None):
    """The metrics in display units; a metric without a sample says 'not measured', and
    for the end-effector metrics of a run that ended before their window a line says why."""
    for name, value in metrics.items():
        unit = METRICS.get(name, ("-",))[0]
        print(f"  {name:24s} {format_quantity(value, unit, kind=name)}")
    if res is not None and not has_arm(res):
        print(f"  ({', '.join(ARM_METRICS)}: not measured, the system has no arm)")
        return
    windowed = [  # the first arm's, then each extra arm's (ee_rms_<name> ...)
        m for m in metrics if m.startswith(("ee_rms", "ee_max")) and metrics[m] != metrics[m]
    ]
    if windowed and res is not None and len(res.t) and res.t[-1] < run_transient(res):
        print(
            f"  ({', '.join(windowed)}: not measured, the run ended at t = "
            f"{float(res.t[-1]):g} s, before their window t >= metrics.transient = "
            f"{run_transient(res):g} s)"
        )


def _verdict_exit(status, args) -> int:
    """The exit status of a verdict (:mod:`dqspace.scenarios.exits`): 3 NOT MET, 4
    UNDECIDED, 0 MET or with ``--no-fail``."""
    if args.no_fail:
        return OK
    return {NOT_MET: EXIT_NOT_MET, UNDECIDED: EXIT_UNDECIDED}.get(status, OK)


def _shown(value, metric):
    """A metric's value in display units; no value (None, NaN) is 'not measured'."""
    return format_quantity(value, METRICS[metric][0], kind=metric)


def _print_run_requirements(table):
    """A single run's requirements, each judged on its value."""
    print("requirements (a single run is judged on its values: the percentile and the")
    print("confidence apply to campaigns, `dqspace montecarlo`):")
    for r in table:
        limit = f"{r['op']} {_shown(r['limit'], r['metric'])}"
        why = " (no value: not a PASS)" if r["value"] != r["value"] else ""
        print(f"  {r['metric']:24s} {_shown(r['value'], r['metric']):>14s} {limit:>14s}  ", end="")
        print(f"{r['status']}{why}")


def _print_campaign_requirements(table):
    """A campaign's requirements: the sample percentile, its bound at the requirement's
    confidence, the runs and the verdict."""
    print("requirements (the percentile of the runs and its distribution-free bound at the")
    print("requirement's confidence, from order statistics):")
    rows = [("metric", "requirement", "estimate", "bound", "runs", "verdict")]
    for r in table:
        m = r["metric"]
        limit = _shown(r["limit"], m)
        side = "upper" if r["op"] == "<=" else "lower"
        rows.append(
            (
                m,
                f"P{r['percentile']:g} {r['op']} {limit} at {100 * r['confidence']:g} %",
                _shown(r["value"], m),
                f"{side} {_shown(r['bound'], m)}" if r["bound"] is not None else "none",
                str(r["n"]) + (f" ({r['n_missing']} not measured)" if r.get("n_missing") else ""),
                r["status"],
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        right = zip(row[1:5], widths[1:], strict=True)
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in right]
        print("  " + "  ".join(cells) + "  " + row[5])


def _print_sensitivity(sens, k=3):
    """The k parameters of largest |PRCC| per metric."""
    entries = (sens or {}).get("metrics", {})
    metrics = {m: e for m, e in entries.items() if e["parameters"]}
    if not metrics:
        notes = sorted({e["note"] for e in entries.values() if e["note"]})
        if notes:
            print(f"sensitivity: not computed ({'; '.join(notes)})")
        return
    alpha = sens["significance"]
    print(f"sensitivity (PRCC of the dispersed parameters, * significant at p < {alpha:g}):")
    for m, e in metrics.items():
        top = [
            f"{p['parameter']} {p['prcc']:+.2f}{'*' if p['significant'] else ''}"
            for p in e["parameters"][:k]
        ]
        print(f"  {m:24s} " + ", ".join(top))


def _metric_units():
    units = {name: unit for name, (unit, _) in METRICS.items()}
    return {**units, **{name: unit for name, (unit, _) in CAPTURE_METRICS.items()}}


def _formats(text):
    return [f.strip() for f in text.split(",") if f.strip()]


# ----------------------------------------------------------------- commands


def cmd_list(args) -> int:
    """``dqspace list``: the embedded scenarios and their descriptions."""
    names = embedded_scenarios()
    width = max(map(len, names))
    for name in names:
        sc = load_scenario(name)
        print(f"{name:{width}s}  {sc.config['scenario']['description']}")
    return OK


def cmd_cache(args) -> int:
    """``dqspace cache``: where the compiled kernels are cached, how much, and clearing."""
    if args.clear or args.clear_others:
        freed = clear_cache(others=args.clear_others)
        print(f"freed {freed / 1e6:.1f} MB")
    r = cache_report()
    print(f"kernel cache: {r['folder']}" + ("" if r["own"] else " ($NUMBA_CACHE_DIR)"))
    state = "cached and current" if r["warm"] else "not cached: the next run compiles them"
    print(f"this installation: {r['files']} files, {r['bytes'] / 1e6:.1f} MB ({state})")
    o = r["others"]
    if o["count"]:
        print(
            f"other installations: {o['count']} folders, {o['bytes'] / 1e6:.1f} MB "
            "(`dqspace cache --clear-others` deletes them)"
        )
    return OK


def cmd_show(args) -> int:
    """``dqspace show``: a scenario resolved (every default filled in), as TOML."""
    sc = _load(args)
    print(f"# resolved from {sc.source}")
    print(sc.to_toml())
    return OK


def cmd_run(args) -> int:
    """``dqspace run``: one run, its result, figures and metrics."""
    sc = _load(args)
    out = Path(args.out) if args.out else Path("runs") / sc.name
    cfg = sc.config
    log.info("running %r (%g s simulated) -> %s", sc.name, cfg["scenario"]["duration"], out)
    _compile_notice()
    # the simulation: importing it compiles (or loads) the numba kernels, after the notice
    from .sim.runner import RunInterrupted, run

    t0 = time.perf_counter()
    try:
        res = run(sc, out=out, progress=args.verbosity >= 0)
    except RunInterrupted as exc:
        n = exc.results.manifest.get("n_samples", len(exc.results.t))
        t_end = exc.results.manifest.get("t_end", float("nan"))
        return fail(
            f"interrupted ({exc.reason}) at t = {t_end:.3f} s: {n} samples kept in {out} "
            f"(status 'interrupted'; a previous complete result, if any, is in {out}/previous)",
            RUN_FAILED,
        )
    wall = time.perf_counter() - t0
    files = _write_outputs(res, out, cfg)
    duration = cfg["scenario"]["duration"]
    loop_time = res.manifest.get("loop_time")
    loop = (
        f"; the simulation loop alone {loop_time:.2f} s ({duration / loop_time:.0f}x real time)"
        if loop_time
        else ""
    )
    print(
        f"done: {duration:g} s simulated in {wall:.1f} s wall, the whole command "
        f"({duration / wall:.1f}x real time: start-up, compiling, recording, writing){loop}"
    )
    metrics = res.manifest.get("metrics")
    table = []
    if metrics:
        _print_metrics(metrics, res)
        table = judge_run(metrics, scenario_requirements(cfg))
        _print_run_requirements(table)
    for msg in res.manifest.get("degraded", []):
        print(f"degraded: {msg}")
    print(
        f"wrote {out / 'result.npz'}, {out / 'manifest.json'}"
        + "".join(f", {p.name}" for p in files)
    )
    return _verdict_exit(overall(table), args)


def _write_outputs(res, out, cfg):
    files = []
    if cfg["outputs"]["plots"]:
        from .figures.plots import plot_all  # matplotlib

        formats = _formats(cfg["outputs"]["formats"])
        log.info("writing the figures (%s) into %s", ", ".join(formats), out)
        t0 = time.perf_counter()
        files = list(plot_all(res, out, formats=formats))
        log.debug("%d figure files in %.1f s", len(files), time.perf_counter() - t0)
    if cfg["outputs"]["csv"]:
        log.info("writing %s", out / "result.csv")
        files.append(res.to_csv(out / "result.csv"))
    return files


def cmd_sweep(args) -> int:
    """``dqspace sweep``: variants of a scenario on Dask, their metrics tabulated."""
    sc = _load(args)
    grid = load_grid_file(args.grid) if args.grid else None
    samples = load_samples_file(args.samples) if args.samples else None
    variants = make_variants(sc, grid, samples=samples, where=args.grid or args.samples)
    metrics = _formats(args.metrics) if args.metrics else None
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
        return fail(f"interrupted: the completed variants are kept in {out}", RUN_FAILED)
    info = df.attrs["sweep"]
    print(format_sweep_table(df, _metric_units()))
    for vid, err in zip(df["variant"], df["error"], strict=True):
        if isinstance(err, str):
            print(f"variant {vid} failed: {err}")
    print(
        f"{len(df)} variants: {info['n_run']} run, {info['n_cached']} already stored, "
        f"{info['n_failed']} failed; {info['wall_time']:.1f} s wall"
    )
    print(
        f"wrote {out / 'metrics.csv'} (SI units but base_att_err_max in deg: each metric's unit "
        f"in dqspace.scenarios.sim.metrics.METRICS) and {out / 'variants'}/<id>/"
    )
    return RUN_FAILED if info["n_failed"] else OK


def cmd_montecarlo(args) -> int:
    """``dqspace montecarlo``: N dispersed runs, percentiles, requirements judged with their
    confidence, sensitivity, figures."""
    sc = _load(args)
    if args.n < 1:
        raise UserError(f"-n must be a positive number of runs, got {args.n}")
    if args.batch < 1:
        raise UserError(f"--batch must be a positive number of runs, got {args.batch}")
    out = Path(args.out) if args.out else Path("runs") / f"{sc.name}-montecarlo"
    how = f"batches of {args.batch} until decided, at most {args.n}" if args.until_confident else ""
    log.info("Monte Carlo of %r: %s runs -> %s", sc.name, how or args.n, out)
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
            until_confident=args.until_confident,
            batch=args.batch,
        )
    except KeyboardInterrupt:
        return fail(f"interrupted: the completed runs are kept in {out}", RUN_FAILED)
    figures = []
    if args.plots:
        from .figures.campaign_plots import plot_montecarlo  # matplotlib

        figures = plot_montecarlo(out, formats=("png",))
    info = df.attrs["montecarlo"]
    print(f"{'metric':26s} {'P50':>14s} {'P95':>14s} {'P99':>14s}")
    for m, p in info["percentiles"].items():
        unit = METRICS[m][0]
        cells = [format_quantity(p[q], unit, kind=m) for q in (50, 95, 99)]
        print(f"{m:26s} " + " ".join(f"{c:>14s}" for c in cells))
    _print_campaign_requirements(info["requirements"])
    # the table's percentiles, then the requirements': the same lines as the report's
    for w in percentile_warnings(info["n"] - info["n_failed"]) + info["warnings"]:
        log.warning("warning: %s", w)
    _print_sensitivity(info["sensitivity"])
    stop = info.get("until_confident")
    if stop:
        why = "every verdict decided" if stop["stopped"] == "decided" else "the cap (-n) reached"
        print(f"stopped after {len(df)} runs ({stop['batches']} batches): {why}")
    print(
        f"{len(df)} runs, {info['n_failed']} failed; verdict {info['verdict']}; wrote "
        f"{out / 'metrics.csv'}, {out / 'montecarlo.json'}" + "".join(f", {p}" for p in figures)
    )
    if info["n_failed"]:
        return RUN_FAILED
    return _verdict_exit(info["verdict"], args)


def cmd_tune(args) -> int:
    """``dqspace tune``: robust tuning, each candidate a Monte Carlo campaign
    (:func:`dqspace.scenarios.tune_command.run_tune_command`)."""
    # the tuning's modules load scipy.stats and Optuna: here, not for every command
    from .tune_command import run_tune_command

    return run_tune_command(args, _load(args), notice=_compile_notice)


def _security(args):
    """A ``distributed.Security`` from the --tls-* options (None: the Dask configuration)."""
    files = (args.tls_ca_file, args.tls_cert, args.tls_key)
    if not any(files):
        return None
    if not all(files):
        raise UserError("--tls-ca-file, --tls-cert and --tls-key go together (all three)")
    for f in files:
        if not Path(f).is_file():
            raise UserError(f"{f}: no such file (TLS credentials)")
    from distributed.security import Security  # Dask

    return Security(
        tls_ca_file=args.tls_ca_file,
        tls_client_cert=args.tls_cert,
        tls_client_key=args.tls_key,
        require_encryption=True,
    )


def cmd_new(args) -> int:
    """``dqspace new``: a starting scenario folder (scenario.toml, arm.urdf)."""
    name = args.name
    if not is_plain_name(name):
        raise UserError(
            f"{name!r} is not a plain name: use ASCII letters, digits, '-', '_' or '.', "
            f"not starting with '.'"
        )
    folder = Path(args.dir) / name if args.dir else Path(name)
    if folder.exists():
        raise UserError(f"{folder}: already exists; choose another name or remove it")
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


def cmd_plot(args) -> int:
    """``dqspace plot``: a result's figures, several results overlaid, or a campaign's."""
    formats = _formats(args.formats)
    bad = [f for f in formats if f not in ("png", "pdf", "svg")]
    if bad or not formats:
        raise UserError(f"--formats {args.formats!r}: give png, pdf or svg, comma-separated")
    paths = [Path(r) for r in args.result]
    if len(paths) == 1 and (paths[0] / "sweep.json").is_file():
        files = _plot_campaign(paths[0], args, formats)
    elif len(paths) == 1:
        from .figures.plots import plot_all  # matplotlib

        out = Path(args.out) if args.out else paths[0]
        files = plot_all(Results.load(paths[0]), out, formats=formats)
    else:
        from .figures.campaign_plots import plot_runs, save  # matplotlib

        results = [Results.load(p) for p in paths]
        out = Path(args.out) if args.out else paths[0].parent / _comparison_name(paths)
        fig = plot_runs(results, names=[p.name or str(p) for p in paths])
        files = save(fig, out / "comparison", formats)
    if not files:
        raise UserError(f"{args.result[0]}: nothing to plot in this result")
    print("wrote " + ", ".join(str(p) for p in files))
    return OK


def _comparison_name(paths) -> str:
    """The default folder of a comparison of ``paths``: named after the results compared
    (another set of results never overwrites it), at most 120 characters."""
    names = [re.sub(r"[^A-Za-z0-9._-]+", "_", Path(p).resolve().name) or "result" for p in paths]
    name = "comparison-" + "-vs-".join(names)
    if len(name) > 120:  # many or long names: a digest keeps it unique
        digest = hashlib.sha256("\0".join(map(str, paths)).encode()).hexdigest()[:12]
        name = f"{name[:100]}-{digest}"
    return name


def _plot_campaign(directory, args, formats):
    """The figures of a sweep directory, or of a Monte Carlo one (it has montecarlo.json)."""
    from .figures import campaign_plots as cp  # matplotlib

    out = Path(args.out) if args.out else directory
    if (directory / "montecarlo.json").is_file():
        return cp.plot_montecarlo(directory, formats, figures_dir=out)
    df = load_sweep(directory)
    if df.empty:
        raise UserError(f"{directory}: the sweep has no stored variant yet")
    base = read_sweep_manifest(directory).get("base")
    pareto = _formats(args.pareto)
    if len(pareto) != 2:
        raise UserError(f"--pareto {args.pareto!r}: give two metric names, comma-separated")
    files = cp.save(cp.plot_sweep_tradeoff(df, base), out / "sweep_tradeoff", formats)
    files += cp.save(cp.plot_pareto(df, *pareto, base_config=base), out / "sweep_pareto", formats)
    return files


def cmd_animate(args) -> int:
    """``dqspace animate``: a 3-D animation of a result (an HTML page or a video)."""
    from .figures.animate import animate  # plotly, matplotlib

    res = Results.load(args.result)
    out = Path(args.out) if args.out else Path(args.result) / f"animation.{args.format or 'html'}"
    path = animate(res, out, frames=args.frames, fps=args.fps, format=args.format)
    print(f"wrote {path} ({format_bytes(path.stat().st_size)})")
    return OK


def cmd_report(args) -> int:
    """``dqspace report``: one self-contained HTML page of a result, or of a campaign
    directory (a Monte Carlo campaign, a robust tuning, a sweep)."""
    from .figures import report  # matplotlib (the figures it embeds)
    from .figures.report_campaign import campaign_kind  # loaded with the report (matplotlib)

    out = Path(args.out) if args.out else Path(args.result) / "report.html"
    if campaign_kind(args.result) is not None:
        path = report.write_campaign_report(args.result, out)
    else:
        path = report.write_report(Results.load(args.result), out, source=args.result)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, self-contained: open it offline)")
    return OK


def cmd_demo(args) -> int:
    """``dqspace demo``: a short tour of the dual-quaternion algebra."""
    from ..dq import DualQuaternion, frame_change  # numba (the dual-quaternion kernels)

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
