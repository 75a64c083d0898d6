"""Record, or compare against, the recorded series of the embedded closed-loop scenarios.

    python benchmarks/golden_runs.py save DIR      # before a change
    python benchmarks/golden_runs.py compare DIR   # after it: every series, bit for bit

Eight runs: ``station-keeping`` (20 s) and ``ur5-waypoints`` (15 s), each with sensors off
and on, each through the compiled loop (the built-in controllers) and through the Python
loop (the built-in base law behind a user's class, which the runner cannot compile).  A
refactoring that moves code without changing arithmetic must leave every recorded number
unchanged; ``compare`` prints, per run, the largest absolute and relative difference of each
series that differs (a series the reference lacks is listed as new, not compared) and exits 1
if any differs by more than ``--rtol`` (default 0: bit for
bit).  ``--duration`` shortens every run (a quicker check).
"""

from __future__ import annotations

import argparse
import sys
import types
from pathlib import Path

import numpy as np

from dqspace.control import BaseController
from dqspace.scenarios import load_scenario, run

RUNS = {
    f"{name}-{sensors}-{loop}": (name, sensors, loop)
    for name in ("station-keeping", "ur5-waypoints")
    for sensors in ("truth", "sensors")
    for loop in ("compiled", "python")
}


def _user_module():
    mod = types.ModuleType("golden_user_base")
    mod.Base = type("Base", (BaseController,), {})
    sys.modules["golden_user_base"] = mod


def _run(name, sensors, loop, duration):
    sets = [f"sensors.enabled={'true' if sensors == 'sensors' else 'false'}"]
    if loop == "python":
        sets.append("base_controller.law=golden_user_base:Base")
    if duration is not None:
        sets.append(f"scenario.duration={duration}")
    res = run(load_scenario(name, sets), progress=False)
    assert res.status == "complete", (name, res.status)
    return {k: np.asarray(v) for k, v in res.data.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("save", "compare"))
    ap.add_argument("folder", type=Path)
    ap.add_argument("--rtol", type=float, default=0.0)
    ap.add_argument("--duration", type=float, default=None)
    ap.add_argument("--only", default=None, help="run only the runs whose name contains this")
    a = ap.parse_args(argv)
    _user_module()
    a.folder.mkdir(parents=True, exist_ok=True)
    worst = 0.0
    for label, (name, sensors, loop) in RUNS.items():
        if a.only and a.only not in label:
            continue
        data = _run(name, sensors, loop, a.duration)
        path = a.folder / f"{label}.npz"
        if a.action == "save":
            np.savez(path, **data)
            print(f"saved {label}: {len(data)} series, {len(data['t'])} rows")
            continue
        ref = dict(np.load(path))
        keys = sorted(set(ref) | set(data))
        diffs = []
        added = [k for k in keys if k not in ref]
        if added:  # a new series changes no recorded number: said, not a difference
            print(f"{label}: new series {', '.join(added)}")
        for k in keys:
            if k not in data:
                diffs.append(f"  {k}: only in the reference")
                worst = np.inf
                continue
            if k not in ref:
                continue
            x, y = np.asarray(data[k], float), np.asarray(ref[k], float)
            if x.shape != y.shape:
                diffs.append(f"  {k}: shape {x.shape} against {y.shape}")
                worst = np.inf
                continue
            same = (x == y) | (np.isnan(x) & np.isnan(y))
            if same.all():
                continue
            d = np.nanmax(np.abs(x - y))
            scale = np.nanmax(np.abs(y)) or 1.0
            worst = max(worst, d / scale)
            diffs.append(f"  {k}: max |diff| {d:.3g} ({d / scale:.3g} of its largest value)")
        print(f"{label}: " + ("identical" if not diffs else "differs"))
        print("\n".join(diffs)) if diffs else None
    if a.action == "compare":
        print(f"largest relative difference: {worst:.3g}")
        return 1 if worst > a.rtol else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
