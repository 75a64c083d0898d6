"""Monte Carlo throughput: N runs of the default station-keeping campaign on Dask workers.

    python benchmarks/bench_montecarlo.py [-n 200] [--workers 2] [--duration 20]

Runs ``dqspace.scenarios.campaigns.montecarlo`` on the embedded ``station-keeping`` scenario (its
``[dispersions]`` table: mass properties and disturbances; 20 s runs; plots off) with a
local Dask cluster of ``--workers`` processes, storing the campaign in a temporary folder,
and prints the wall time (cluster start-up included), runs per minute, and runs per
minute per core.  For scale it first times one run of the same scenario in this process.
Target (issue 16): 200 runs x 20 s on 2 workers in at most 2 minutes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import machine  # noqa: E402

from dqspace.scenarios import load_scenario, run  # noqa: E402
from dqspace.scenarios.campaigns.montecarlo import montecarlo  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=200, help="runs (default 200)")
    ap.add_argument("--workers", type=int, default=2, help="Dask worker processes (default 2)")
    ap.add_argument("--duration", type=float, default=20.0, help="simulated seconds per run")
    a = ap.parse_args()
    print(machine())
    print(f"load average (1, 5, 15 min) before: {os.getloadavg()}")
    sc = load_scenario(
        "station-keeping", [f"scenario.duration={a.duration}", "outputs.plots=false"]
    )
    run(load_scenario("station-keeping", ["scenario.duration=0.1"]), progress=False)  # warm
    t0 = time.perf_counter()
    run(sc, progress=False)
    one = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        df = montecarlo(sc, a.n, workers=a.workers, out=Path(tmp) / "mc", progress=False)
        wall = time.perf_counter() - t0
    failed = int(df["error"].notna().sum())
    print(f"load average (1, 5, 15 min) after:  {os.getloadavg()}")
    rtf = a.duration / one
    print(f"\none run of {a.duration:g} s in this process: {one:.2f} s ({rtf:.0f}x real time)")
    print(f"{a.n} runs x {a.duration:g} s on {a.workers} workers: {wall:.1f} s wall "
          f"(cluster start-up and storage included), {failed} failed")  # fmt: skip
    rpm = a.n / wall * 60.0
    print(f"throughput: {rpm:.0f} runs per minute, {rpm / a.workers:.0f} runs per minute per core")
    per_run = wall * a.workers / a.n
    print(f"cost per run on a worker: {per_run:.2f} s ({per_run / one:.1f}x the in-process run)")
    target = 120.0 * (a.n / 200) * (2 / a.workers) * (a.duration / 20.0)
    verdict = "PASS" if wall <= target else "FAIL"
    print(f"target: 200 runs x 20 s on 2 workers in <= 2 min (scaled: {target:.0f} s): {verdict}")


if __name__ == "__main__":
    main()
