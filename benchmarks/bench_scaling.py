"""How the closed loop's cost grows with the arm's joints and with the devices.

    python benchmarks/bench_scaling.py [--duration 5] [--plot docs/figures/scaling-closed-loop.png]

Runs the compiled closed loop (the built-in controllers, the fast allocator, PWM, plots off)
on generated systems, each for ``--duration`` simulated seconds after a warm-up run, and
prints the cost of a control tick (100 Hz: the flight software and 10 RK4 steps of the
plant) and the real-time factor:

* **joints**: a 27 kg base with the paper's 12 thrusters and 4 VSCMGs carrying a DH arm of
  n = 7, 14, 28, 56 revolute joints (1 m long in all, alternating +-90 deg twists, links of
  10/n kg), holding its end-effector where it starts;
* **devices**: the paper's system (the iiwa on the lemniscate) with S = 12, 24, 48
  thrusters (the paper's layout repeated, each copy 3.3 % nearer the centre) and K = 4, 8,
  16 VSCMGs (a ring of pyramid-like units).

The plot (``--plot``) draws both tables.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import machine  # noqa: E402

from dqspace.actuators import paper_thruster_set  # noqa: E402
from dqspace.scenarios import load_scenario, run  # noqa: E402

_COMMON = """
[scenario]
name = "{name}"
kind = "closed_loop"
duration = {T}
[base]
mass = 27.0
size = 0.3
[outputs]
plots = false
"""


def _arm(n):
    L, m = 1.0 / n, 10.0 / n
    rows = []
    for i in range(n):
        inertia = [m * L * L / 12 + 1e-4, m * L * L / 12 + 1e-4, 1e-4, 0.0, 0.0, 0.0]
        rows.append(
            "[[dh]]\n"
            f"a = 0.0\nd = {L:.6g}\nalpha_deg = {90.0 if i % 2 == 0 else -90.0}\n"
            f"mass = {m:.6g}\ncom = [0.0, 0.0, {-L / 2:.6g}]\ninertia = {inertia}\n"
        )
    q0 = [(15.0 if i % 2 == 0 else -15.0) for i in range(n)]
    return (
        '[arm]\nmodel = "dh"\nmount_xyz = [0.0, 0.0, 0.15]\n'
        f'initial_joints_deg = {q0}\n[trajectory]\ntype = "initial"\n' + "\n".join(rows)
    )


def _thrusters(S):
    base = paper_thruster_set()
    rows = []
    for copy in range(S // base.n):
        for th in base.thrusters:
            p = np.asarray(th.position) * (1.0 - 0.033 * copy)
            d = np.asarray(th.direction)
            rows.append(f"[[thruster]]\nposition = {p.tolist()}\ndirection = {d.tolist()}\n")
    return '[thrusters]\nlayout = "table"\n' + "\n".join(rows)


def _vscmgs(K):
    beta = math.acos(1.0 / math.sqrt(3.0))
    rows = []
    for i in range(K):
        a = 2.0 * math.pi * i / K
        n = np.array([math.cos(a), math.sin(a), 0.0])
        g = math.sin(beta) * n + math.cos(beta) * np.array([0.0, 0.0, 1.0])
        s = np.cross([0.0, 0.0, 1.0], n)
        rows.append(
            f"[[vscmg_unit]]\nposition = {(0.3 * n).tolist()}\ngimbal_axis = {g.tolist()}\n"
            f"spin_axis = {s.tolist()}\n"
        )
    return '[vscmg]\nlayout = "table"\n' + "\n".join(rows)


def _cost(text, name, T, tmp):
    f = Path(tmp) / f"{name}.toml"
    f.write_text(_COMMON.format(name=name, T=T) + text)
    run(load_scenario(f, ["scenario.duration=0.2"]), progress=False)  # warm-up
    sc = load_scenario(f)
    t0 = time.perf_counter()
    res = run(sc, progress=False)
    wall = time.perf_counter() - t0
    assert res.status == "complete", (name, res.manifest.get("message"))
    return wall / (len(res.t) - 1), T / wall, res["v"].shape[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--plot", help="write the figure here (png)")
    a = ap.parse_args()
    T = a.duration
    print(machine())
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")
    joints, devices = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (7, 14, 28, 56):
            tick, rtf, nv = _cost(_arm(n), f"dh{n}", T, tmp)
            joints.append((n, nv, tick, rtf))
        for S, K in ((12, 4), (24, 4), (48, 4), (12, 8), (12, 16)):
            text = '[arm]\nmodel = "iiwa"\nmount_xyz = [-0.15, 0.0, 0.15]\n'
            text += 'mount_rpy_deg = [0.0, -30.0, 0.0]\n[trajectory]\ntype = "lemniscate"\n'
            text += "orientation_rpy_deg = [0.0, 90.0, 0.0]\n"
            text += (_thrusters(S) if S != 12 else "") + "\n" + (_vscmgs(K) if K != 4 else "")
            tick, rtf, nv = _cost(text, f"S{S}K{K}", T, tmp)
            devices.append((S, K, nv, tick, rtf))
    print(f"\n{T:g} s simulated per case, compiled closed loop (100 Hz ticks, 1 kHz RK4)")
    print(f"{'arm joints':>10s} {'plant nv':>9s} {'tick [us]':>10s} {'x real time':>12s}")
    for n, nv, tick, rtf in joints:
        print(f"{n:10d} {nv:9d} {tick * 1e6:10.1f} {rtf:12.1f}")
    head = ("thrusters", "VSCMGs", "plant nv", "tick [us]", "x real time")
    print("\n{:>10s} {:>7s} {:>9s} {:>10s} {:>12s}".format(*head))
    for S, K, nv, tick, rtf in devices:
        print(f"{S:10d} {K:7d} {nv:9d} {tick * 1e6:10.1f} {rtf:12.1f}")
    if a.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import NullFormatter, ScalarFormatter

        fig, ax = plt.subplots(1, 2, figsize=(9, 3.6), constrained_layout=True)
        n = [j[0] for j in joints]
        ax[0].loglog(n, [j[2] * 1e6 for j in joints], "o-", color="k", label="tick cost")
        ax[0].loglog(n, [joints[0][2] * 1e6 * x / n[0] for x in n], ":", color="0.5",
                     label="proportional to n")  # fmt: skip
        ax[0].set(xlabel="arm joints n", ylabel="tick cost [µs]", title="joints (DH arm)")
        ax[0].set_xticks(n, [str(x) for x in n])
        lo, hi = min(j[2] for j in joints) * 1e6, joints[0][2] * 1e6 * n[-1] / n[0]
        yt = [
            y
            for y in (50, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000, 3000)
            if lo / 1.5 <= y <= hi * 1.5
        ]
        ax[0].set_yticks(yt, [str(y) for y in yt])
        ax[0].legend(loc="upper left")
        S = [d for d in devices if d[1] == 4]
        K = [d for d in devices if d[0] == 12]
        ax[1].semilogx([d[0] for d in S], [d[3] * 1e6 for d in S], "s-", color="k",
                       label="thrusters S (4 VSCMGs)")  # fmt: skip
        ax[1].semilogx([d[1] for d in K], [d[3] * 1e6 for d in K], "^--", color="0.4",
                       label="VSCMGs K (12 thrusters)")  # fmt: skip
        ticks = sorted({d[0] for d in S} | {d[1] for d in K})
        ax[1].set_xticks(ticks, [str(x) for x in ticks])
        ax[1].set(xlabel="devices (S or K)", ylabel="tick cost [µs]",
                  title="devices (the paper's system)")  # fmt: skip
        ax[1].set_ylim(bottom=0)
        ax[1].legend(loc="lower right")
        for x in ax:
            x.grid(True, which="both", alpha=0.3)
            x.xaxis.set_minor_formatter(NullFormatter())
            x.yaxis.set_minor_formatter(NullFormatter())
            f = ScalarFormatter()
            f.set_useOffset(False)
            x.yaxis.set_major_formatter(f)
        fig.suptitle(f"closed-loop tick cost (100 Hz), {T:g} s runs; load {os.getloadavg()[0]:.1f}")
        fig.savefig(a.plot, dpi=130)
        print(f"\nwrote {a.plot}")


if __name__ == "__main__":
    main()
