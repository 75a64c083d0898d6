"""Start-up times of the command line and of the packages, warm (kernels already cached).

    python benchmarks/bench_startup.py [--repeats 7]

Each case is a fresh interpreter (``subprocess``), as a user starts it; the bare
interpreter (``python -c pass``) is timed alongside as the machine's floor.  Cases are
interleaved round by round (the machine is shared) and the median is reported with the
fastest round.  Target: each case under 1 s warm.  One warm-up round loads (or
compiles) the kernels first; it is not counted.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import machine, table  # noqa: E402

LIMIT = 1.0  # [s]


def _dqspace():
    exe = Path(sys.executable).with_name("dqspace")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dqspace.scenarios.cli"]


def cases():
    py = [sys.executable, "-c"]
    cli = _dqspace()
    return {
        "python -c pass (floor)": [*py, "pass"],
        "dqspace --help": [*cli, "--help"],
        "dqspace --version": [*cli, "--version"],
        "dqspace list": [*cli, "list"],
        "dqspace show station-keeping": [*cli, "show", "station-keeping"],
        "import dqspace.dq": [*py, "import dqspace.dq"],
        "import dqspace.multibody": [*py, "import dqspace.multibody"],
        "import dqspace.scenarios": [*py, "import dqspace.scenarios"],
    }


def wall(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=os.environ)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    todo = cases()
    for cmd in todo.values():  # warm-up round: caches loaded or compiled
        wall(cmd)
    times = {k: [] for k in todo}
    labels = list(todo)
    for r in range(args.repeats):
        for k in labels[r % len(labels) :] + labels[: r % len(labels)]:
            times[k].append(wall(todo[k]))
    load = os.getloadavg()[0]
    print(f"{machine()}; load average {load:.2f}; median of {args.repeats} rounds")
    rows = []
    for k, ts in times.items():
        med = statistics.median(ts)
        ok = "" if k.endswith("(floor)") else ("PASS" if med < LIMIT else "FAIL")
        rows.append((k, f"{med:.3f}", f"{min(ts):.3f}", ok))
    print(table(rows, ("case", "median [s]", "fastest [s]", f"< {LIMIT:g} s")))


if __name__ == "__main__":
    main()
