"""Median time per thrust allocation for the paper's 12-thruster layout.

Times a whole ``Allocator.allocate`` call (validation, solve, re-check, result), cvxpy path
and fast path in one run, on the same random demands, plus scipy's ``linprog`` (HiGHS) on
the bare LP for comparison.  Targets: fast path < 100 us, cvxpy path < 2 ms.

    python benchmarks/bench_allocation.py [--solves 400] [--seed 0]
"""

import argparse
import time

import numpy as np
from scipy.optimize import linprog

from dqspace.actuators.allocation import Allocator
from dqspace.actuators.thrusters import paper_thruster_set


def median_time(fn, demands, repeats):
    """Median wall time of fn(d) [s] over ``repeats`` passes through ``demands``."""
    for d in demands[:20]:  # warm-up: numba compilation, cvxpy's DPP canonicalization
        fn(d)
    times = []
    for _ in range(repeats):
        for d in demands:
            t0 = time.perf_counter()
            fn(d)
            times.append(time.perf_counter() - t0)
    return float(np.median(times)), len(times)


def demands_for(ts, m, rng, n, feasible):
    if feasible:
        return [ts.H[:m] @ rng.uniform(0, 10, ts.n) for _ in range(n)]
    scale = np.array([30.0, 30.0, 30.0, 4.0, 4.0, 4.0])[:m]
    out = []
    while len(out) < n:
        d = rng.normal(size=m) * scale
        if linprog(np.ones(ts.n), A_eq=ts.H[:m], b_eq=d, bounds=(0, 10)).status == 2:
            out.append(d)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solves", type=int, default=400, help="solves per case")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    ts = paper_thruster_set()
    n_dem = 100
    repeats = max(1, args.solves // n_dem)
    print(f"paper layout: {ts.n} thrusters, sigma in [0, 10] N; {n_dem * repeats} solves per case")
    print(f"{'method':34s} {'median/solve':>13s} {'vs fast':>8s}  agreement with fast")
    for mode, m in (("force", 3), ("wrench", 6)):
        for feasible in (True, False):
            demands = demands_for(ts, m, rng, n_dem, feasible)
            fast = Allocator(ts, mode=mode, method="fast")
            t_fast, _ = median_time(fast.allocate, demands, repeats)
            name = "fast (numba simplex" + (")" if feasible else " + BVLS)")
            rows = [(name, t_fast, "")]
            for solver in ("CLARABEL", "HIGHS"):
                slow = Allocator(ts, mode=mode, method="cvxpy", solver=solver)
                t, _ = median_time(slow.allocate, demands, repeats)
                if feasible:  # objective [N]; the LP optimum need not be unique
                    worst = max(
                        abs(slow.allocate(d).objective - fast.allocate(d).objective)
                        for d in demands
                    )
                    agree = f"objective {worst:.1e} N"
                else:  # achieved wrench: a projection, unique
                    worst = max(
                        np.abs(slow.allocate(d).achieved - fast.allocate(d).achieved).max()
                        for d in demands
                    )
                    agree = f"achieved {worst:.1e}"
                default = " (default)" if solver == "CLARABEL" else ""
                rows.append((f"cvxpy + {solver}{default}", t, agree))
            if feasible:

                def bare(d, m=m):
                    return linprog(np.ones(ts.n), A_eq=ts.H[:m], b_eq=d, bounds=(0, 10))

                rows.append(("scipy linprog HiGHS (bare LP)", median_time(bare, demands, 1)[0], ""))
            print(f"{mode} mode, {'feasible demands' if feasible else 'infeasible demands'}:")
            for name, t, agree in rows:
                print(f"  {name:32s} {t * 1e6:10.1f} us {t / t_fast:7.1f}x  {agree}")


if __name__ == "__main__":
    main()
