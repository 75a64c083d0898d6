"""The ``dqspace`` command line: run, sweep, plot, list and show scenarios.

Exit status 0 on success, 1 on a run that failed or was interrupted (its
partial results are kept) or a sweep with failed variants, 2 on bad input
(one line on stderr says why).
"""

import argparse
import sys
import time
from pathlib import Path

__all__ = ["main"]


def _fail(msg, code=2):
    print(f"dqspace: error: {msg}", file=sys.stderr)
    return code


def _cmd_list(args):
    from .config import embedded_scenarios
    from .scenario import load_scenario

    for name in embedded_scenarios():
        sc = load_scenario(name)
        print(f"{name:20s} {sc.config['scenario']['description']}")
    return 0


def _cmd_show(args):
    from .scenario import load_scenario

    sc = load_scenario(args.scenario, args.set)
    print(f"# resolved from {sc.source}")
    print(sc.to_toml())
    return 0


def _cmd_run(args):
    from .metrics import METRICS, summarize
    from .plots import plot_all
    from .runner import RunInterrupted, run
    from .scenario import load_scenario

    sc = load_scenario(args.scenario, args.set)
    out = Path(args.out) if args.out else Path("runs") / sc.name
    cfg = sc.config
    print(f"running {sc.name!r} ({cfg['scenario']['duration']:g} s) -> {out}")
    t0 = time.perf_counter()
    try:
        res = run(sc, out=out, progress=not args.quiet)
    except RunInterrupted as exc:
        n = exc.results.manifest.get("n_samples", len(exc.results.t))
        print(f"interrupted: {n} samples kept in {out}", file=sys.stderr)
        return 1
    wall = time.perf_counter() - t0
    fmts = [f.strip() for f in cfg["outputs"]["formats"].split(",") if f.strip()]
    files = []
    if cfg["outputs"]["plots"] and cfg["scenario"]["kind"] == "closed_loop":
        files = plot_all(res, out, formats=fmts)
    if cfg["outputs"]["csv"]:
        files.append(res.to_csv(out / "result.csv"))
    print(f"done in {wall:.1f} s wall ({cfg['scenario']['duration'] / wall:.1f}x real time)")
    if cfg["scenario"]["kind"] == "closed_loop":
        for k, v in summarize(res).items():
            unit, _ = METRICS[k]
            if unit == "m":
                print(f"  {k:18s} {1e3 * v:12.6g} mm")
            else:
                print(f"  {k:18s} {v:12.6g} {unit}")
    print(
        f"wrote {out / 'result.npz'}, {out / 'manifest.json'}"
        + "".join(f", {p.name}" for p in files)
    )
    return 0


def _cmd_sweep(args):
    import pandas as pd

    from .scenario import load_scenario
    from .sweep import load_grid_file, load_samples_file, make_variants, sweep

    sc = load_scenario(args.scenario, args.set)
    grid = load_grid_file(args.grid) if args.grid else None
    samples = load_samples_file(args.samples) if args.samples else None
    make_variants(sc, grid, samples=samples, where=args.grid or args.samples)  # errors name it
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    out = Path(args.out) if args.out else Path("runs") / f"{sc.name}-sweep"
    if args.scheduler:
        where = args.scheduler
    else:
        where = f"a local cluster ({args.workers or 'one per CPU'} workers)"
    T = sc.config["scenario"]["duration"]
    print(f"sweep of {sc.name!r} ({T:g} s per variant) on {where} -> {out}")
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
            progress=not args.quiet,
        )
    except KeyboardInterrupt:
        print(f"interrupted: the completed variants are kept in {out}", file=sys.stderr)
        return 1
    info = df.attrs["sweep"]
    shown = df.drop(columns=["cached", "error"])
    with pd.option_context("display.width", 250, "display.max_columns", 50):
        print(shown.to_string(index=False, max_colwidth=48))
    for vid, err in zip(df["variant"], df["error"], strict=True):
        if isinstance(err, str):
            print(f"variant {vid} failed: {err}")
    print(
        f"{len(df)} variants: {info['n_run']} run, {info['n_cached']} already stored, "
        f"{info['n_failed']} failed; {info['wall_time']:.1f} s wall"
    )
    print(f"wrote {out / 'metrics.csv'} and {out / 'variants'}/<id>/metrics.json")
    return 1 if info["n_failed"] else 0


def _cmd_plot(args):
    from .plots import plot_all
    from .results import Results

    res = Results.load(args.result)
    out = Path(args.out) if args.out else Path(args.result)
    files = plot_all(res, out, formats=args.formats.split(","))
    if not files:
        return _fail(f"{args.result}: no closed-loop series to plot")
    print("wrote " + ", ".join(str(p) for p in files))
    return 0


def _cmd_demo(args):
    """A short tour of the dual-quaternion algebra."""
    import numpy as np

    from dqspace.dq import DualQuaternion, frame_change

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
    return 0


def build_parser():
    p = argparse.ArgumentParser(
        prog="dqspace",
        description="Dual-quaternion modelling, simulation and control of space robots.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    r = sub.add_parser(
        "run",
        help="run a scenario (file or embedded name)",
        description="Run a scenario and write result.npz, manifest.json, plots.",
    )
    r.add_argument("scenario", help="a .toml file or an embedded name (see `dqspace list`)")
    r.add_argument("--out", help="output directory (default runs/<scenario name>)")
    r.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a value, e.g. --set scenario.duration=5 (repeatable)",
    )
    r.add_argument("--quiet", action="store_true", help="no progress bar")
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
    sw.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a value of the base scenario (repeatable)",
    )
    sw.add_argument(
        "--metrics", help="comma-separated metric names (default: all; see `dqspace run`)"
    )
    sw.add_argument(
        "--keep-results", action="store_true", help="also store each variant's full result"
    )
    sw.add_argument("--retry-failed", action="store_true", help="rerun stored variants that failed")
    sw.add_argument("--quiet", action="store_true", help="no progress line")
    sw.set_defaults(func=_cmd_sweep)

    pl = sub.add_parser(
        "plot",
        help="plot a result directory",
        description="Write the standard figures of a closed-loop result.",
    )
    pl.add_argument("result", help="directory holding result.npz and manifest.json")
    pl.add_argument("--out", help="where to write the figures (default: the result dir)")
    pl.add_argument("--formats", default="png,pdf", help="comma-separated: png, pdf")
    pl.set_defaults(func=_cmd_plot)

    ls = sub.add_parser(
        "list",
        help="list the embedded scenarios",
        description="List the scenarios shipped with dqspace.",
    )
    ls.set_defaults(func=_cmd_list)

    sh = sub.add_parser(
        "show",
        help="print a scenario resolved (defaults filled in)",
        description="Print a scenario with every default filled in, as TOML.",
    )
    sh.add_argument("scenario")
    sh.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    sh.set_defaults(func=_cmd_show)

    d = sub.add_parser(
        "demo",
        help="a short tour of the dual-quaternion algebra",
        description="Print a few dual-quaternion computations.",
    )
    d.set_defaults(func=_cmd_demo)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:  # bad scenario, bad result directory, bad values
        return _fail(str(exc).splitlines()[0])
    except FileNotFoundError as exc:
        return _fail(str(exc))


if __name__ == "__main__":
    sys.exit(main())
