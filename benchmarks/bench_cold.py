"""Cold start: the first run on an empty kernel cache, its compile split, and warm runs.

    python benchmarks/bench_cold.py [--duration 20] [--profile] [--serial] [--montecarlo]

Each case is a fresh interpreter running ``dqspace run station-keeping`` (plots off) with
its own throw-away kernel cache (``DQSPACE_CACHE_DIR`` in a temporary folder), in order:

1. cold, perfect knowledge (the cache empty);
2. warm, the same run again;
3. sensors on, after 1-2 (what a sensors run adds to a cache that holds the truth run);
4. warm, sensors on;
5. ``ur5-waypoints`` (another arm on another base, the same flight software's structure),
   after 1-4: what a second servicer adds (its loop and stages are those of 1).

``--serial`` adds the cold run compiled in one process (``DQSPACE_COMPILE_PROCESSES=1``,
another empty cache: what the parallel compile saves, in the same session);
``--montecarlo`` a first ``dqspace montecarlo`` (4 runs x 1 s, sensors on, 2 workers) on
its own empty cache, then again warm.

Printed: wall and CPU time of each (CPU: the child's user + system time, which the load of
a shared machine changes less than the wall time), and the cold/warm ratio.  With
``--profile`` a fifth interpreter repeats the cold run on another empty cache with numba's
compile events recorded and prints the exclusive compile time per module (kernel group)
and the 15 most expensive functions.  The machine and its load are printed first.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import machine  # noqa: E402

PROFILE = r"""
import collections, json, sys, time
from numba.core import event

records, stack = [], []


class Recorder(event.Listener):
    def on_start(self, e):
        d = e.data.get("dispatcher")
        f = getattr(d, "py_func", None)
        name = f"{f.__module__}.{f.__qualname__}" if f is not None else "?"
        stack.append((name, time.perf_counter()))

    def on_end(self, e):
        name, t0 = stack.pop()
        records.append((name, time.perf_counter() - t0, len(stack)))


event.register("numba:compile", Recorder())
from dqspace.scenarios import load_scenario, run

run(load_scenario("station-keeping", sys.argv[1:]), progress=False)
excl, pending = collections.defaultdict(float), collections.defaultdict(float)
count = collections.Counter()
for name, dt, depth in records:  # a record's children end before it, one level deeper
    excl[name] += dt - pending.pop(depth + 1, 0.0)
    pending[depth] += dt
    count[name] += 1
print(json.dumps({"excl": excl, "count": count}))
"""


def _run(args, cache, code=None, **extra_env):
    env = dict(os.environ, DQSPACE_CACHE_DIR=str(cache), **extra_env)
    exe = [sys.executable, "-c", code] if code else [sys.executable, "-m", "dqspace.scenarios.cli"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([*exe, *args], env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode not in (0, 3, 4):  # 3, 4: requirements NOT MET / UNDECIDED
        raise SystemExit(f"{' '.join(args)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return wall, cpu, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--profile", action="store_true", help="the compile split per module")
    ap.add_argument(
        "--serial",
        action="store_true",
        help="also the cold run compiled in one process (DQSPACE_COMPILE_PROCESSES=1)",
    )
    ap.add_argument(
        "--montecarlo",
        action="store_true",
        help="also a first Monte Carlo, sensors on (4 runs x 1 s, 2 workers), cold and warm",
    )
    a = ap.parse_args()
    print(machine(), f"load {os.getloadavg()[0]:.2f}")
    sets = ["--set", "outputs.plots=false", "--set", f"scenario.duration={a.duration:g}"]
    sensors = ["--set", "sensors.enabled=true"]
    with tempfile.TemporaryDirectory() as tmp:
        cache, out = Path(tmp) / "cache", Path(tmp) / "out"
        base = ["run", "station-keeping", "-q", "--no-fail", "--out", str(out), *sets]
        cases = [
            ("cold, perfect knowledge", base),
            ("warm, perfect knowledge", base),
            ("sensors on, after the truth run", [*base, *sensors]),
            ("warm, sensors on", [*base, *sensors]),
            ("ur5-waypoints, after the above", ["run", "ur5-waypoints", *base[2:]]),
        ]
        rows = [(label, *_run(args, cache)[:2]) for label, args in cases]
        if a.serial:
            one = Path(tmp) / "cache-serial"
            wall, cpu, _ = _run(base, one, DQSPACE_COMPILE_PROCESSES="1")
            rows.append(("cold, compiled in one process", wall, cpu))
        if a.montecarlo:
            mc_cache = Path(tmp) / "cache-mc"
            mc = [
                "montecarlo", "station-keeping", "-n", "4", "--workers", "2", "-q",
                "--no-fail", "--set", "scenario.duration=1", *sensors,
            ]  # fmt: skip
            for label in ("cold Monte Carlo, sensors on", "warm Monte Carlo, sensors on"):
                wall, cpu, _ = _run([*mc, "--out", str(Path(tmp) / label[:4])], mc_cache)
                rows.append((label, wall, cpu))
        print(f"{'case':34s} {'wall [s]':>9s} {'CPU [s]':>9s}")
        for label, wall, cpu in rows:
            print(f"{label:34s} {wall:9.1f} {cpu:9.1f}")
        print(f"cold / warm (CPU): {rows[0][2] / rows[1][2]:.0f}x")
        if a.profile:
            prof = Path(tmp) / "cache-profile"
            args = ["outputs.plots=false", f"scenario.duration={a.duration:g}"]
            import json

            wall, cpu, stdout = _run(args, prof, PROFILE)
            doc = json.loads(stdout.strip().splitlines()[-1])
            excl, count = doc["excl"], doc["count"]
            groups = {}
            for name, t in excl.items():
                module = name.rsplit(".", 1)[0] if "." in name else name
                module = ".".join(p for p in module.split(".") if not p[:1].isupper())
                groups[module] = groups.get(module, 0.0) + t
            total = sum(excl.values())
            print(f"\ncold run under the profiler: wall {wall:.1f} s, compile events {total:.1f} s")
            print("exclusive compile time per module:")
            for module, t in sorted(groups.items(), key=lambda kv: -kv[1])[:25]:
                print(f"  {t:7.1f} s  {100 * t / total:4.1f} %  {module}")
            print("the 15 most expensive functions (exclusive; x: signatures compiled):")
            for name, t in sorted(excl.items(), key=lambda kv: -kv[1])[:15]:
                print(f"  {t:7.1f} s  x{count[name]}  {name}")


if __name__ == "__main__":
    main()
