"""Speed of the main job: the 20 s station-keeping scenario, as a real-time factor.

    /work/venv/bin/python benchmarks/bench_scenario.py [--repeats 3] [--duration 20]

Runs the embedded ``station-keeping`` scenario (no output files) with the fast
allocator (the default) and with the cvxpy allocator, after one short warm-up
run that loads the compiled kernels, and prints the wall time of each run and
the real-time factor (simulated seconds per wall second).  Target (issue 6):
at least 10x real time with the fast allocator path.  Interleaved repeats,
medians reported (the machine is shared).
"""

import argparse
import statistics
import time

from dqspace.scenarios import load_scenario, run


def one(overrides):
    sc = load_scenario("station-keeping", overrides)
    t0 = time.perf_counter()
    run(sc, progress=False)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--duration", type=float, default=20.0)
    args = ap.parse_args()
    T = args.duration
    cases = {
        "fast allocator (default)": [f"scenario.duration={T}"],
        "cvxpy allocator": [f"scenario.duration={T}", "thrusters.allocator=cvxpy"],
    }
    for ov in cases.values():  # warm-up: load (or compile) every kernel and solver once
        one([o.replace(f"={T}", "=0.1") for o in ov])
    times = {k: [] for k in cases}
    for _ in range(args.repeats):
        for k, ov in cases.items():
            times[k].append(one(ov))
    print(f"station-keeping, {T:g} s simulated, median of {args.repeats} runs")
    print(f"{'case':28s} {'wall [s]':>9s} {'x real time':>12s}")
    for k, ts in times.items():
        w = statistics.median(ts)
        print(f"{k:28s} {w:9.2f} {T / w:12.1f}")
    w = statistics.median(times["fast allocator (default)"])
    verdict = "PASS" if T / w >= 10.0 else "FAIL"
    print(f"target: >= 10x real time with the fast allocator: {verdict} ({T / w:.1f}x)")


if __name__ == "__main__":
    main()
