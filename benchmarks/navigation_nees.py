"""The navigation filters' consistency in the closed loop: NEES over seeded runs.

Run from the repository root::

    python benchmarks/navigation_nees.py                          # station-keeping, 10 seeds
    python benchmarks/navigation_nees.py -n 20 --set sensors.translation_accel_psd=1e-9
    python benchmarks/navigation_nees.py --gyro-models            # mean_rate and instantaneous

Each run (sensors on, no dispersions) is replayed from what it recorded to get the filters'
covariances (``tests/support/navigation_nees.py``, shared with
``tests/scenarios/test_navigation_consistency.py``).  Prints, per filter, the NEES averaged
over the seeds and the ticks after ``--skip`` seconds, the two-sided 99 % chi-square
interval of the mean of M independent NEES at one tick (``chi2(M d) / M``) and the fraction
of ticks whose seed mean lies inside it.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.navigation_nees import bounds, campaign  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="station-keeping")
    ap.add_argument("-n", type=int, default=10, help="seeds (0 .. n - 1)")
    ap.add_argument("--duration", type=float, default=5.0, help="[s] per run")
    ap.add_argument("--skip", type=float, default=1.0, help="[s] left out at the start")
    ap.add_argument("--set", action="append", default=[], help="a scenario override")
    ap.add_argument(
        "--gyro-models", action="store_true", help="both gyro models (sensors.gyro_model)"
    )
    a = ap.parse_args(argv)
    cases = [[]]
    if a.gyro_models:
        cases = [["sensors.gyro_model=mean_rate"], ["sensors.gyro_model=instantaneous"]]
    print(f"{a.scenario}: {a.n} seeds x {a.duration} s, ticks after {a.skip} s")
    print("| case | filter | dof | mean NEES | 99 % interval | ticks inside |")
    print("|---|---|---|---|---|---|")
    for case in cases:
        att, trans, pos, err = campaign(a.scenario, [*a.set, *case], range(a.n), a.duration)
        skip = int(round(a.skip * (att.shape[1] - 1) / a.duration))  # ticks
        label = " ".join([*a.set, *case]) or "defaults"
        for name, nees, d in (
            ("attitude", att, 3),
            ("translation", trans, 6),
            ("position", pos, 3),
        ):
            lo, hi = bounds(a.n, d)
            per_tick = nees[:, skip:].mean(axis=0)
            inside = np.mean((per_tick >= lo) & (per_tick <= hi))
            print(f"| {label} | {name} | {d} | {per_tick.mean():.2f} | [{lo:.2f}, {hi:.2f}] "
                  f"| {inside:.0%} |")  # fmt: skip
        if err > 1e-12:
            print(f"warning: the replay differs from the runs by {err:.1e}")


if __name__ == "__main__":
    main()
