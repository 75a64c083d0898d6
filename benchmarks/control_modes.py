"""The control modes on one realistic campaign: each law on the same dispersion samples.

    python benchmarks/control_modes.py -n 100 --workers 2 [--json runs/control-modes.json]

Every mode runs ``station-keeping-realistic`` (the default sensor suite and its filters,
thruster imperfections, the model errors and disturbances of its dispersions) with the
overrides of :data:`MODES`, on ``-n`` runs of the same root seed (``--seed``): run i of
every mode draws the same model errors, disturbances, noise and thruster imperfections
(common random numbers), so that the differences between rows are the laws'.

Printed, one Markdown table: for each mode the P50 and P99 of the base's position and
attitude errors and of the end-effector error after the transient, P99 with its
distribution-free bounds at 95 % confidence from order statistics (``[lower, upper]``;
"-" where ``n`` runs cannot bound it: 299 runs for an upper bound of P99), the median
thruster impulse, the median momentum-device effort (integral of the gimbal rates), and the
compute per control tick (the compiled loop's wall time per tick of one 20 s run in this
process, flight software and plant together, after a warm-up run: the machine's load is
printed first).  With ``--json`` the table is also written as JSON (atomically).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import machine  # noqa: E402

from dqspace.scenarios import load_scenario, run  # noqa: E402
from dqspace.scenarios.campaigns.confidence import percentile_bounds  # noqa: E402
from dqspace.scenarios.campaigns.montecarlo import montecarlo  # noqa: E402

SCENARIO = "station-keeping-realistic"

#: label -> the overrides of the realistic scenario that select the mode
MODES = {
    "dual PD (the paper's)": [],
    "MPC": ["base_controller.law=mpc"],
    "dual PD, centre-of-mass hold": ["base_controller.translation=com"],
    "dual PD, reactionless arm": ["arm_controller.law=reactionless"],
}

#: metric -> (display factor, unit)
ERRORS = {"base_pos_err_max": (1e3, "mm"), "base_att_err_max": (1.0, "deg"), "ee_max": (1e3, "mm")}


def _fmt(x, f):
    return "-" if x is None or not np.isfinite(x) else f"{x * f:.3g}"


def _finite(x):
    """x, or None when it is not a finite number (strict JSON)."""
    return float(x) if x is not None and np.isfinite(x) else None


def percentiles(values) -> dict:
    """P50 and P99 of ``values`` with the P99's bounds at 95 % (None where unbounded or not
    measured)."""
    v = np.asarray(values, dtype=float)
    b = percentile_bounds(v, 99.0)
    return {
        "p50": _finite(np.median(v[np.isfinite(v)])) if np.isfinite(v).any() else None,
        "p99": _finite(b.estimate),
        "p99_lower": None if b.lower is None else float(b.lower),
        "p99_upper": None if b.upper is None else float(b.upper),
    }


def compute_per_tick(overrides, duration) -> float:
    """[s] the compiled loop's wall time per control tick of one run (after a warm-up)."""
    sets = [*overrides, f"scenario.duration={duration:g}", "outputs.plots=false"]
    run(load_scenario(SCENARIO, sets), progress=False)  # compiles, warms the caches
    sc = load_scenario(SCENARIO, sets)
    res = run(sc, progress=False)
    return res.manifest["loop_time"] / round(duration * sc.config["control"]["rate"])


def table(n, seed, workers, duration=20.0, modes=None) -> dict:
    """``{label: {metric: percentiles, "impulse_p50", "vscmg_effort_p50", "tick_s"}}``."""
    out = {}
    for label, sets in (modes or MODES).items():
        sc = load_scenario(SCENARIO, [*sets, f"scenario.duration={duration:g}"])
        df = montecarlo(sc, n, seed=seed, workers=workers, progress=False)
        row = {m: percentiles(df[m]) for m in ERRORS}
        row["impulse_p50"] = _finite(df["total_impulse"].median())
        row["vscmg_effort_p50"] = _finite(df["vscmg_effort"].median())
        row["failed"] = int(df["error"].notna().sum())
        row["tick_s"] = compute_per_tick(sets, duration)
        out[label] = row
    return out


def markdown(rows: dict) -> str:
    head = " | ".join(f"{m} P50 / P99 [95 % bounds] [{u}]" for m, (_, u) in ERRORS.items())
    lines = [
        f"| mode | {head} | impulse P50 [N s] | VSCMG effort P50 [rad] | per tick [us] |",
        "|---|" + "---|" * (len(ERRORS) + 3),
    ]
    for label, r in rows.items():
        cells = []
        for m, (f, _) in ERRORS.items():
            p = r[m]
            lo, hi = _fmt(p["p99_lower"], f), _fmt(p["p99_upper"], f)
            cells.append(f"{_fmt(p['p50'], f)} / {_fmt(p['p99'], f)} [{lo}, {hi}]")
        failed = f" ({r['failed']} runs failed)" if r["failed"] else ""
        lines.append(
            f"| {label}{failed} | {' | '.join(cells)} | {_fmt(r['impulse_p50'], 1.0)} | "
            f"{_fmt(r['vscmg_effort_p50'], 1.0)} | {r['tick_s'] * 1e6:.0f} |"
        )
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=3000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--json", default=None, help="also write the table here (JSON)")
    a = ap.parse_args()
    print(machine())
    t0 = time.perf_counter()
    rows = table(a.n, a.seed, a.workers, a.duration)
    print(f"{a.n} runs per mode of {SCENARIO}, {a.duration:g} s each, root seed {a.seed}; "
          f"wall {time.perf_counter() - t0:.0f} s")  # fmt: skip
    print(markdown(rows))
    if a.json:
        path = Path(a.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump({"n": a.n, "seed": a.seed, "duration": a.duration, "rows": rows}, fh,
                      indent=1, allow_nan=False)  # fmt: skip
        os.replace(tmp, path)


if __name__ == "__main__":
    main()
