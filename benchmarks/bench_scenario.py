"""Speed of the closed loop against the bare plant, and where a control tick's time goes.

    python benchmarks/bench_scenario.py [--repeats 3] [--duration 20] [--quick]

Prints, measured in one run on this machine (interleaved repeats, medians; the machine's
load is printed first):

1. **The yardstick**: the paper's torque-free 13-DOF model (27 kg base + iiwa) integrated
   for ``--duration`` seconds by ``simulate_compiled`` (Lie-group RK4, 1 kHz), and 20 s of
   the embedded ``station-keeping`` scenario (``dqspace.scenarios.run``, no files, plots
   off) with the compiled closed loop.  Targets (issue 16): the closed loop costs at most
   6x the bare plant, and runs at least 40x real time.
2. The other paths of the same scenario: the cvxpy allocator (the reference path, a Python
   loop) and a user's Python controller class (the built-in controllers behind a class
   the runner cannot compile), as real-time factors.
3. **The per-tick split** of the compiled loop, each part timed in its own compiled loop
   over the ticks of a recorded run: the plant (10 RK4 steps of the 21-DOF plant, the
   plant boundary included), the station-keeping law (IK, computed torque, base PD +
   feedforward), the thrusters' allocation, the pulse modulation, the VSCMG steering
   (matrices + steering law), and the rest (loop, recording, commands).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import machine  # noqa: E402

from dqspace.actuators.kernels import (  # noqa: E402
    ALLOC_INFO_SIZE,
    allocate_kernel,
    modulate_kernel,
    steer_kernel,
    vscmg_matrices,
)
from dqspace.control.flight.law import law_work, station_keeping_kernel  # noqa: E402
from dqspace.multibody import models, simulate_compiled  # noqa: E402
from dqspace.multibody.kernels import sim  # noqa: E402
from dqspace.scenarios import load_scenario, run  # noqa: E402
from dqspace.scenarios.sim import closed_loop  # noqa: E402
from dqspace.scenarios.sim.boundary import apply_commands  # noqa: E402
from dqspace.scenarios.sim.closed_loop import ClosedLoop  # noqa: E402

USER_CONTROLLER = "bench_scenario_user:Base"


def _bare_plant(T):
    model = models.space_manipulator()
    q, v = model.neutral_configuration(), np.zeros(model.nv)
    v[6:] = 0.1  # torque-free, the arm moving
    n = int(round(T / 1e-3))
    t0 = time.perf_counter()
    simulate_compiled(model, q, v, dt=1e-3, n_steps=n, record_every=n)
    return time.perf_counter() - t0


def _scenario(T, extra=(), call_seconds=None):
    """Wall time of a run; ``call_seconds``: every compiled call of the loop that long
    (simulated), instead of as long as :data:`~dqspace.scenarios.sim.closed_loop.CHUNK_WALL`
    allows (what each call's Python work costs)."""
    sc = load_scenario("station-keeping", [f"scenario.duration={T}", "outputs.plots=false", *extra])
    saved = closed_loop.CHUNK_SECONDS, closed_loop.FIRST_CHUNK_SECONDS
    if call_seconds is not None:
        closed_loop.CHUNK_SECONDS = closed_loop.FIRST_CHUNK_SECONDS = call_seconds
    try:
        t0 = time.perf_counter()
        run(sc, progress=False)
        return time.perf_counter() - t0
    finally:
        closed_loop.CHUNK_SECONDS, closed_loop.FIRST_CHUNK_SECONDS = saved


# ------------------------------------------------------------------ the per-tick split


@njit(cache=True)
def _time_law(A, seed, B, ff, Q, V, nq_c, nv_c, arm_ref, base_ref, w):
    for k in range(Q.shape[0]):
        station_keeping_kernel(
            A, seed, B, None, ff, 0.01 * k, Q[k, :nq_c], V[k, :nv_c], arm_ref[k, :8],
            arm_ref[k, 8:14],
            arm_ref[k, 14:], base_ref[k, :8], base_ref[k, 8:14], base_ref[k, 14:], w,
        )  # fmt: skip


@njit(cache=True)
def _time_allocation(P, demand, sigma):
    info = np.empty(ALLOC_INFO_SIZE)
    T, A = P.thrusters, P.allocation
    m = A.H_rows.shape[0]
    for k in range(demand.shape[0]):
        allocate_kernel(
            A.H_rows, T.effectiveness, T.fixed_thrust, demand[k, :m], T.command_lower,
            T.command_upper, A.weights, A.residual_weights, A.tol, A.lp_max_iter,
            A.lsq_max_iter, sigma, info,
        )  # fmt: skip


@njit(cache=True)
def _time_pwm(P, sigma):
    S = sigma.shape[1]
    firing, carry = np.zeros(S, dtype=np.bool_), np.zeros(S)
    on, imp, f2, c2 = np.empty(S), np.empty(S), np.empty(S, dtype=np.bool_), np.empty(S)
    for k in range(sigma.shape[0]):
        M = P.pulses
        modulate_kernel(
            sigma[k], P.thrusters.sigma_max, M.min_impulse_bit, P.period, M.on_fraction,
            M.off_fraction, M.quantum, M.error_feedback, firing, carry, on, imp, f2, c2,
        )  # fmt: skip
        firing[:] = f2
        carry[:] = c2


@njit(cache=True)
def _time_steering(P, gimbal, speed, rate, tau, t):
    K = gimbal.shape[1]
    Bm, C, E, d = np.empty((3, K)), np.empty((3, K)), np.empty((3, K)), np.empty(3)
    gr, wa, err = np.empty(K), np.empty(K), np.empty(3)
    for k in range(gimbal.shape[0]):
        g = P.vscmg.geometry
        vscmg_matrices(
            g.A_g0, g.A_s0, g.A_t0, g.I_cg, g.I_ws, g.I_s, g.I_t, gimbal[k], speed[k],
            rate[k], Bm, C, E, d,
        )  # fmt: skip
        steer_kernel(P.vscmg.steering, C, E, tau[k] - d, t[k], gr, wa, err)


@njit(cache=True)
def _time_plant(ints, reals, g, inputs, params, mem, steps, valves, Q, V, tau, n_on, on_lv,
                off_lv, dist, gr, wa):  # fmt: skip
    S = n_on.shape[1]
    carry, tail, delivered = np.full(S, -np.inf), np.zeros(S), np.empty(S)
    Qb, Vb = np.empty((1, Q.shape[1])), np.empty((1, V.shape[1]))
    dt = 1e-3
    for k in range(Q.shape[0]):
        t = k * steps * dt
        apply_commands(
            params, t, steps, tau[k], n_on[k], on_lv[k], off_lv[k], dist[k], gr[k], wa[k],
            valves, carry, tail, True, delivered,
        )  # fmt: skip
        sim.rk4_loop(ints, reals, g, Q[k], V[k], t, dt, steps, steps, inputs, params, mem, Qb, Vb)


def _split(T):
    """Per-tick cost [s] of each part, over the ticks of a T-second run."""
    cfg = load_scenario("station-keeping", [f"scenario.duration={T}"]).config
    cl = ClosedLoop(cfg)
    N = cl.n_ticks
    recorded = {}

    class _Rec:
        manifest = {"events": []}

        def add_rows(self, m, **blocks):
            for k, x in blocks.items():
                recorded.setdefault(k, []).append(np.array(x))

    keep = []
    orig = cl._series

    def series(R, m, tables):
        # a copy: the run reuses its record arrays from chunk to chunk
        keep.append((R._make(x[:m].copy() for x in R), m, tables.arm_ref, tables.base_ref))
        return orig(R, m, tables)

    class _NoBar:
        enabled = False

        def update(self, t):
            pass

    cl._series = series
    cl.simulate(_Rec(), lambda: None, _NoBar())
    R = {f: np.concatenate([getattr(r[0], f)[: r[1]] for r in keep]) for f in keep[0][0]._fields}
    arm_ref = np.concatenate([r[2][: r[1]] for r in keep])
    base_ref = np.concatenate([r[3][: r[1]] for r in keep])
    sy, fl, pl = cl.sy, cl.flight, cl.plant
    law = fl.params.law
    P = fl.params.act
    out = {}
    n = N  # ticks with a plant step after them

    def timed(name, fn, *args):
        fn(*args)  # compile / load
        best = []
        for _ in range(3):
            t0 = time.perf_counter()
            fn(*args)
            best.append(time.perf_counter() - t0)
        out[name] = min(best) / args_len(name)

    def args_len(name):
        return n if name == "plant" else N + 1

    seed0 = np.array(sy.arm.seed)

    def law_run():
        _time_law(
            law.arm, seed0.copy(), law.base, law.feedforward,
            R["q"], R["v"], fl.index.nq_c, fl.index.nv_c, arm_ref, base_ref,
            law_work(sy.arm_info.n),
        )  # fmt: skip

    timed("station-keeping law (IK, computed torque, base PD + feedforward)", law_run)
    demand = np.ascontiguousarray(R["wrench"])
    timed("thrust allocation", _time_allocation, P, demand, np.empty(fl.S))
    timed("pulse modulation", _time_pwm, P, np.ascontiguousarray(R["sigma"]))
    t = np.arange(N + 1) * cl.period
    tau_v = np.ascontiguousarray(R["tau_v"])
    timed(
        "VSCMG steering (matrices + steering law)", _time_steering, P,
        np.ascontiguousarray(R["gimbal"]), np.ascontiguousarray(R["vscmg_speed"]),
        np.ascontiguousarray(R["v"][:, :3]), tau_v, t,
    )  # fmt: skip
    ints, reals = sy.plant.packed
    tau = np.zeros((N + 1, sy.plant.nv))
    tau[:, 6 : 6 + sy.arm_info.n] = R["arm_tau"]
    timed(
        "plant (10 RK4 steps, 21 DOF, plant boundary)", _time_plant, ints, reals,
        sy.plant.gravity, pl.block().inputs, pl.params, pl.mem, pl.steps, pl.valves,
        np.ascontiguousarray(R["q"][:n]), np.ascontiguousarray(R["v"][:n]), tau[:n],
        np.ascontiguousarray(R["n_on"][:n]), np.ascontiguousarray(R["on_level"][:n]),
        np.ascontiguousarray(R["off_level"][:n]), np.zeros((n, 6)),
        np.ascontiguousarray(R["gimbal_rate_cmd"][:n]),
        np.ascontiguousarray(R["wheel_accel_cmd"][:n]),
    )  # fmt: skip
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--duration", type=float, default=20.0)
    ap.add_argument("--quick", action="store_true", help="one repeat, 5 s for the slow paths")
    a = ap.parse_args()
    T = a.duration
    reps = 1 if a.quick else a.repeats
    T_slow = min(T, 5.0) if a.quick else T
    print(machine())
    print(f"load average (1, 5, 15 min): {os.getloadavg()}")
    os.environ["PYTHONPATH"] = str(Path(__file__).resolve().parent)
    # warm-up: load (or compile) every kernel and solver once
    _bare_plant(0.1)
    _scenario(0.1)
    _scenario(0.1, ["thrusters.allocator=cvxpy"])
    _scenario(0.1, [f"base_controller.law={USER_CONTROLLER}"])
    bare, loop, short = [], [], []
    for _ in range(reps):  # interleaved
        bare.append(_bare_plant(T))
        loop.append(_scenario(T))
        short.append(_scenario(T, call_seconds=1.0))
    b, c = statistics.median(bare), statistics.median(loop)
    cvx = _scenario(T_slow, ["thrusters.allocator=cvxpy"])
    user = _scenario(T_slow, [f"base_controller.law={USER_CONTROLLER}"])
    print(f"\n{T:g} s simulated, median of {reps} interleaved runs")
    print(f"{'case':58s} {'wall [s]':>9s} {'x real time':>12s} {'/ bare plant':>13s}")
    rows = [
        ("bare plant: 13-DOF torque-free, simulate_compiled", b, T),
        ("station-keeping, compiled closed loop (fast allocator)", c, T),
        ("the same in compiled calls of 1 s simulated each", statistics.median(short), T),
        (f"station-keeping, cvxpy allocator (a Python stage, {T_slow:g} s)", cvx, T_slow),
        (f"station-keeping, a user's Python controller ({T_slow:g} s)", user, T_slow),
    ]
    for name, w, dur in rows:
        ratio = (w / dur) / (b / T)
        print(f"{name:58s} {w:9.3f} {dur / w:12.1f} {ratio:13.1f}")
    ok1, ok2 = c / b <= 6.0, T / c >= 40.0
    print(f"target: closed loop <= 6x the bare plant: {'PASS' if ok1 else 'FAIL'} ({c / b:.1f}x)")
    print(f"target: >= 40x real time: {'PASS' if ok2 else 'FAIL'} ({T / c:.1f}x)")
    split = _split(T)
    per_tick = c / (T * 100.0)
    print(f"\nper control tick (100 Hz), each part in its own compiled loop over a {T:g} s run:")
    fsw = 0.0
    for name, s in split.items():
        print(f"  {name:66s} {s * 1e6:8.1f} us")
        if not name.startswith("plant"):
            fsw += s
    print(f"  {'flight software (the parts above but the plant)':66s} {fsw * 1e6:8.1f} us")
    rest = per_tick - sum(split.values())
    print(f"  {'the rest (loop, recording, wheels, commands, Python per chunk)':66s} "
          f"{rest * 1e6:8.1f} us")  # fmt: skip
    print(f"  {'whole tick in the closed loop (wall / ticks)':66s} {per_tick * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
