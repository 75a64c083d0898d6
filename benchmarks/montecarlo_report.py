"""The station-keeping Monte Carlo report: percentiles with the default sensor suite,
dispersions and thruster imperfections, next to perfect knowledge, and each error source
alone.

    python benchmarks/montecarlo_report.py -n 200 --per-source 20 --workers 2

Prints one table (display units): for each case, the 50th and 99th percentiles of the base
position and attitude errors and of the end-effector error, and the requirement verdicts
(MET / NOT MET / UNDECIDED at each requirement's confidence, with the estimate and the
order-statistics bound).

The sources: the sensors (``[sensors] enabled``: each run's seed draws its noise), the
scenario's ``[dispersions]`` of the plant (mass properties) and of the disturbance, and the
thrusters' imperfections (:data:`THRUSTERS`: each run's seed draws the misalignments and
magnitude errors; the valve timing is fixed).  These values are choices, typical of small
cold-gas thrusters, not the paper's.
"""

import argparse
import time

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.campaigns.montecarlo import montecarlo
from dqspace.scenarios.sim.metrics import summarize

METRICS = (("base_pos_err_max", 1e3, "mm"), ("base_att_err_max", 1.0, "deg"), ("ee_max", 1e3, "mm"))

#: thruster imperfections: 0.5 deg (1 sigma) misalignment, 2 % magnitude error, valves
#: opening 2 ms and closing 2 ms late with a 2 ms minimum on-time, and the pulse modulator's
#: minimum impulse bit raised to match it (2 ms at 10 N)
THRUSTERS = [
    "thrusters.misalignment_deg=0.5",
    "thrusters.magnitude_error=0.02",
    "thrusters.open_delay=0.002",
    "thrusters.close_delay=0.002",
    "thrusters.min_on_time=0.002",
    "thrusters.min_impulse_bit=0.02",
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--per-source", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--duration", type=float, default=20.0)
    a = ap.parse_args()
    T = [f"scenario.duration={a.duration}"]
    sc = load_scenario("station-keeping", T)
    plant = {k: v for k, v in sc.dispersions.items() if k.startswith("plant.")}
    dist = {k: v for k, v in sc.dispersions.items() if k.startswith("disturbance.")}
    noise_seed = {}  # only each run's seed (its sensor noise) varies
    rows = []
    t0 = time.perf_counter()
    truth = summarize(run(sc, progress=False))
    rows.append(
        ("perfect knowledge, nominal (1 run)", {m: (truth[m], truth[m]) for m, *_ in METRICS})
    )
    sensors = load_scenario("station-keeping", [*T, "sensors.enabled=true"])
    thrusters = load_scenario("station-keeping", [*T, *THRUSTERS])
    everything = load_scenario("station-keeping", [*T, "sensors.enabled=true", *THRUSTERS])
    cases = [
        (f"sensors alone ({a.per_source} seeds)", sensors, noise_seed),
        (f"model uncertainty alone ({a.per_source} draws)", sc, plant),
        (f"disturbances alone ({a.per_source} draws)", sc, dist),
        (f"thruster imperfections alone ({a.per_source} seeds)", thrusters, noise_seed),
        (f"all: sensors + dispersions + thrusters ({a.n} runs)", everything, None),
    ]
    for name, s, table in cases:
        n = a.n if table is None else a.per_source
        df = montecarlo(s, n, dispersions=table, workers=a.workers, progress=False)
        p = df.attrs["montecarlo"]["percentiles"]
        rows.append((name, {m: (p[m][50], p[m][99]) for m, *_ in METRICS}))
        if table is None:
            verdicts = df.attrs["montecarlo"]["requirements"]
    print(f"station-keeping, {a.duration:g} s runs; wall {time.perf_counter() - t0:.0f} s")
    head = " | ".join(f"{m} P50 / P99 [{u}]" for m, _, u in METRICS)
    print(f"| case | {head} |")
    print("|---|" + "---|" * len(METRICS))
    for name, vals in rows:
        cells = " | ".join(f"{vals[m][0] * f:.4g} / {vals[m][1] * f:.4g}" for m, f, _ in METRICS)
        print(f"| {name} | {cells} |")
    for r in verdicts:
        side = "upper" if r["op"] == "<=" else "lower"
        bound = f"{r['bound']:.4g}" if r["bound"] is not None else "none"
        print(
            f"requirement {r['metric']} P{r['percentile']:g} {r['op']} {r['limit']} at "
            f"{100 * r['confidence']:g} %: {r['status']} (estimate {r['value']:.4g}, {side} "
            f"bound {bound}, {r['n']} runs)"
        )


if __name__ == "__main__":
    main()
