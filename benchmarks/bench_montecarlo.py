"""Monte Carlo throughput: N runs of the default station-keeping campaign on Dask workers.

    python benchmarks/bench_montecarlo.py [-n 200] [--workers 2] [--duration 20]

Runs ``dqspace.scenarios.campaigns.montecarlo`` on the embedded ``station-keeping`` scenario (its
``[dispersions]`` table: mass properties and disturbances; 20 s runs; plots off) with a
local Dask cluster of ``--workers`` processes, storing the campaign in a temporary folder,
and prints the wall time (cluster start-up included), runs per minute, and runs per
minute per core.  For scale it first times one run of the same scenario in this process.
Targets: 200 runs x 20 s on 2 workers in at most 2 minutes; a campaign's runs per minute
per core within 10 % of a single warm run's rate.

Where a campaign's time goes, printed after the totals:

- the run time the workers measured themselves (``run_time``: building the system and
  simulating), against the in-process run;
- the machine's own rate with every core busy: ``--workers`` plain processes (no Dask)
  each running the same scenario ``--repeats`` times at once; two processes on two cores
  share caches and memory bandwidth, which no scheduler can avoid;
- what is left: cluster start-up, scheduling, pickling, storage.

``--dask-defaults`` starts the cluster with Dask's own worker settings instead of
``LOCAL_CLUSTER_CONFIG`` (statistical profiler on, faster monitors): run it alternately with
and without to see what those settings cost.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import machine  # noqa: E402

from dqspace.scenarios import load_scenario, run  # noqa: E402
from dqspace.scenarios.campaigns import sweep as sweep_module  # noqa: E402
from dqspace.scenarios.campaigns.montecarlo import montecarlo  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=200, help="runs (default 200)")
    ap.add_argument("--workers", type=int, default=2, help="Dask worker processes (default 2)")
    ap.add_argument("--duration", type=float, default=20.0, help="simulated seconds per run")
    ap.add_argument(
        "--repeats", type=int, default=8, help="runs per plain process (the machine's rate)"
    )
    ap.add_argument(
        "--dask-defaults",
        action="store_true",
        help="the cluster's workers with Dask's own settings, not LOCAL_CLUSTER_CONFIG",
    )
    a = ap.parse_args()
    if a.dask_defaults:
        sweep_module.LOCAL_CLUSTER_CONFIG = {}
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
    worker = float(df["run_time"].mean())
    busy = _all_cores_busy(a.workers, a.repeats, a.duration)
    print("\nwhere a worker's time goes, per run:")
    rows = [
        ("in this process, alone", one, ""),
        (f"plain processes, {a.workers} at once (the machine)", busy, f"{busy / one:.2f}x alone"),
        ("on a Dask worker, as the worker timed it", worker, f"{worker / busy:.2f}x the machine"),
        (
            "on a Dask worker, wall per run",
            per_run,
            f"{per_run / busy:.2f}x the machine; cluster, scheduling, storage: "
            f"{per_run - worker:.3f} s",
        ),
    ]
    for label, value, note in rows:
        print(f"  {label:48s} {value:.3f} s" + (f" ({note})" if note else ""))
    print(f"campaign rate against the machine's: {busy / per_run:.0%} (goal: at least 90 %)")


PLAIN = """
import sys, time
from dqspace.scenarios import load_scenario, run
sc = load_scenario("station-keeping", ["scenario.duration=" + sys.argv[1], "outputs.plots=false"])
run(load_scenario("station-keeping", ["scenario.duration=0.1"]), progress=False)  # warm
t0 = time.perf_counter()
for _ in range(int(sys.argv[2])):
    run(sc, progress=False)
print((time.perf_counter() - t0) / int(sys.argv[2]))
"""


def _all_cores_busy(processes, repeats, duration):
    """Mean seconds per run of ``processes`` plain interpreters each running the scenario
    ``repeats`` times at once (after a warm-up run each)."""
    cmd = [sys.executable, "-c", PLAIN, f"{duration:g}", str(repeats)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(processes)]
    times = [float(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    return sum(times) / len(times)


if __name__ == "__main__":
    main()
