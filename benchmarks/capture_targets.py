"""Captures of random targets: which ones the embedded capture scenario grasps and detumbles.

    python benchmarks/capture_targets.py [--seed 7] [-n 6] [--joints 0,30,0,-60,0,45,0]
                                         [--set KEY=VALUE ...]

Each target is a uniform box of random edges (0.6-1.6 m, scaled with the mass), of random
mass (log-uniform, 50-2000 kg) and small random products of inertia, tumbling at 2-5 deg/s
about a random axis, its grapple fixture at the centre of a face.  It is placed where the
end-effector stands at ``--joints`` (``target.placement = "end_effector"``), so every
target is reachable at the start; the rest is the embedded ``capture`` scenario (the
target's navigation, the aligned trigger, the impedance hold; ``--set`` overrides keys,
e.g. ``capture.approach_duration=2`` for fast tumbles).  Printed per target: its mass and
rate, whether it was grasped and when, the detumble time, the interface peaks, the base's
attitude excursion, the devices' momentum peak, the arm's saturated ticks and the
requirements not met (``dqspace run``'s verdicts); then the count grasped and met.
"""

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import machine  # noqa: E402

from dqspace.scenarios import load_scenario, run  # noqa: E402
from dqspace.scenarios.campaigns.montecarlo import scenario_requirements  # noqa: E402
from dqspace.scenarios.campaigns.verdicts import judge_run  # noqa: E402


def target_keys(rng) -> tuple[list[str], float, float]:
    """``(keys, mass [kg], rate [deg/s])`` of one random target (module docstring)."""
    m = float(np.exp(rng.uniform(np.log(50.0), np.log(2000.0))))
    a, b, c = rng.uniform(0.6, 1.6, 3) * (m / 500.0) ** (1.0 / 3.0)
    inertia = m / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    products = rng.uniform(-0.05, 0.05, 3) * inertia.min()
    w = rng.normal(size=3)
    w *= rng.uniform(2.0, 5.0) / np.linalg.norm(w)
    six = ",".join(f"{x:.6g}" for x in (*inertia, *products))
    keys = [
        f"target.mass={m:.6g}",
        f"target.inertia=[{six}]",
        f"target.rate_deg_s=[{w[0]:.6g},{w[1]:.6g},{w[2]:.6g}]",
        f"target.fixture_xyz=[0.0,0.0,{-c / 2:.6g}]",
    ]
    return keys, m, float(np.linalg.norm(w))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("-n", type=int, default=6)
    ap.add_argument("--joints", default="0,30,0,-60,0,45,0", help="arm.initial_joints_deg")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    a = ap.parse_args()
    print(machine(), f"load {os.getloadavg()[0]:.2f}")
    rng = np.random.default_rng(a.seed)
    placed = [
        "target.placement=end_effector",
        "target.xyz=[0.0,0.0,0.0]",
        "target.rpy_deg=[0.0,0.0,0.0]",
        f"arm.initial_joints_deg=[{a.joints}]",
        "outputs.plots=false",
    ]
    grasped = met = 0
    for i in range(a.n):
        keys, m, w = target_keys(rng)
        sc = load_scenario("capture", [*keys, *placed, *a.set])
        x = run(sc, progress=False).manifest["metrics"]
        fails = [
            r["metric"]
            for r in judge_run(x, scenario_requirements(sc.config))
            if r["status"] != "MET"
        ]
        grasped += x["grasp_missed"] == 0
        met += not fails
        print(
            f"{i}: {m:6.0f} kg at {w:.1f} deg/s: "
            + ("MISSED" if x["grasp_missed"] else f"grasped at {x['grasp_instant']:.2f} s")
            + f", detumbled in {x.get('detumble_time', np.nan):.2f} s, interface peaks "
            f"{x.get('interface_force_peak', np.nan):.1f} N / "
            f"{x.get('interface_torque_peak', np.nan):.1f} N m, excursion "
            f"{x.get('base_attitude_excursion', np.nan):.2f} deg, devices "
            f"{x.get('device_momentum_peak', np.nan):.1f} N m s, arm saturated "
            f"{x['arm_saturated_ticks']:.0f} ticks; not met: {', '.join(fails) or 'none'}",
            flush=True,
        )
    print(f"{grasped} of {a.n} grasped, {met} of {a.n} meet every requirement")


if __name__ == "__main__":
    main()
