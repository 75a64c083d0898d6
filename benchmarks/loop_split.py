"""Where a closed-loop tick's time goes, measured inside the compiled loop.

    python benchmarks/loop_split.py [--set KEY=VALUE ...]

``bench_scenario.py`` times each part of a tick in a compiled loop of its own; inside the
closed loop the parts run interleaved (the flight software's data and the plant's share the
caches and the branch predictors), so its "rest" mixes that interleaving with the loop's
own work.  This script tells them apart: it runs ``station-keeping`` (20 s, plots off,
twice: the second run is timed) through an instrumented copy of the closed loop's body
(:func:`dqspace.scenarios.sim.loop._closed_loop`: the same calls in the same order; a copy
because numba cannot time a compiled function's callees from outside) that reads the CPU's
cycle counter (``llvm.readcyclecounter``) between its sections, and prints the cycles per
tick of each: the joint limiter's report, the flight software's three stages (knowledge,
laws, actuation) and its commands, the record, the plant's commands (valves), the plant's
integration and the state copy.  The wall time per tick of the whole run against the loop's
cycles shows what is spent outside the compiled loop (set-up, Python per chunk, results).
The copy is compiled without the cache: it says nothing about compile times.
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba import carray, types
from numba.extending import intrinsic

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import machine  # noqa: E402

from dqspace._jit import signature_on_first_call  # noqa: E402
from dqspace.control.flight.tick import _predict  # noqa: E402
from dqspace.scenarios import load_scenario, run  # noqa: E402
from dqspace.scenarios.sim import loop as L  # noqa: E402


@intrinsic
def _cycles(typingctx):
    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic(
            "llvm.readcyclecounter", fnty=ir.FunctionType(ir.IntType(64), [])
        )
        return builder.call(fn, [])

    return types.int64(), codegen


@intrinsic
def _pointer(typingctx, address):
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], ir.IntType(64).as_pointer())

    return types.CPointer(types.int64)(types.int64), codegen


SECTIONS = ("limiter", "know", "laws", "actuate", "predict, commands", "record",
            "plant commands (valves)", "plant integration", "state copy")  # fmt: skip
#: cycles per section, summed over the ticks; the last entry counts the ticks
COUNTS = np.zeros(len(SECTIONS) + 1, dtype=np.int64)
_ADDRESS = COUNTS.ctypes.data


def _instrumented(
    plant, fsw, fsw_state, work, tables, held, fresh, q, v, period, delay, k0, k1, last, rec, out
):  # fmt: skip
    """:func:`dqspace.scenarios.sim.loop._closed_loop` with the cycle counter read between
    its sections (the tick's body written out, so that its three stages are timed apart)."""
    c = carray(_pointer(_ADDRESS), (10,))
    Q, V = np.empty((1, q.shape[0])), np.empty((1, v.shape[0]))
    mem = plant.mem
    out[0] = L.OK
    for k in range(k0, k1):
        t0 = _cycles()
        r = k - k0
        out[3] = k
        t = k * period
        for i in range(mem.shape[0]):
            rec.limited[r, i] = 1.0 if mem[i] > 0.0 else 0.0
            mem[i] = 0.0
        t1 = _cycles()
        p, s, w, cmd = fsw, fsw_state, work, fresh if delay else held
        status = p.stages.know(p.nav, s.nav, p.index, t, q, v, w.meas, w.est)
        t2 = _cycles()
        arm_ref, base_ref = tables.arm_ref[r], tables.base_ref[r]
        status |= p.stages.laws(p.law, s.seed, s.base, t, w.est, arm_ref, base_ref, w.law)
        t3 = _cycles()
        status |= p.stages.actuate(p.act, s.act, p.alloc, t, w.law, w.est, w.act)
        t4 = _cycles()
        if status != L.OK:
            out[0] = status
            return
        _predict(p.nav, s.nav, w.est, w.law, w.act.w_thr)
        cmd.arm_tau[:] = w.law.tau
        cmd.rw_torque[:] = w.act.rw_cmd
        cmd.n_on[:] = w.act.n_on
        cmd.on_level[:] = w.act.on_level
        cmd.off_level[:] = w.act.off_level
        cmd.gimbal_rate_cmd[:] = w.act.gimbal_rate_cmd
        cmd.wheel_accel_cmd[:] = w.act.wheel_accel_cmd
        t5 = _cycles()
        L.record_tick(rec, r, t, q, v, work.law, work.act, work.est)
        L._nav_errors(fsw.nav, work.est, q, rec.nav_att_err[r], rec.nav_pos_err[r])
        out[1] = r + 1
        t6 = _cycles()
        L.generalized_forces(fsw.index, held, plant.tau)
        L.apply_commands(
            plant.params, t, plant.steps, plant.tau, held.n_on, held.on_level, held.off_level,
            tables.dist[r], held.gimbal_rate_cmd, held.wheel_accel_cmd, plant.valves,
            plant.valve_carry, plant.tail_level, k != last, rec.delivered[r],
        )  # fmt: skip
        t7 = _cycles()
        if k == last:
            return
        if delay:
            held.arm_tau[:] = fresh.arm_tau
            held.rw_torque[:] = fresh.rw_torque
            held.n_on[:] = fresh.n_on
            held.on_level[:] = fresh.on_level
            held.off_level[:] = fresh.off_level
            held.gimbal_rate_cmd[:] = fresh.gimbal_rate_cmd
            held.wheel_accel_cmd[:] = fresh.wheel_accel_cmd
        status, n = plant.integrate(
            plant.ints, plant.reals, plant.gravity, q, v, t, plant.dt, plant.steps,
            plant.steps, plant.inputs, plant.params, mem, Q, V,
        )  # fmt: skip
        t8 = _cycles()
        if status != L.OK:
            out[0] = status
            out[2] = n
            return
        q[:] = Q[0]
        v[:] = V[0]
        t9 = _cycles()
        c[0] += t1 - t0
        c[1] += t2 - t1
        c[2] += t3 - t2
        c[3] += t4 - t3
        c[4] += t5 - t4
        c[5] += t6 - t5
        c[6] += t7 - t6
        c[7] += t8 - t7
        c[8] += t9 - t8
        c[9] += 1
    out[3] = k1 - 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    a = ap.parse_args()
    print(machine(), f"load {os.getloadavg()[0]:.2f}")
    L.closed_loop = signature_on_first_call({}, cache=False)(_instrumented)
    scenario = load_scenario("station-keeping", ["outputs.plots=false", *a.set])
    run(scenario, progress=False)  # compiles the copy
    COUNTS[:] = 0
    t0 = time.perf_counter()
    run(scenario, progress=False)
    wall = time.perf_counter() - t0
    ticks = int(COUNTS[-1])
    total = COUNTS[:-1].sum()
    print(f"{ticks} ticks; the whole run (set-up, loop, results) {1e6 * wall / ticks:.1f} us/tick")
    print(f"{'section':26s} {'cycles/tick':>12s} {'share':>7s}")
    for name, n in zip(SECTIONS, COUNTS[:-1], strict=True):
        print(f"{name:26s} {n / ticks:12.0f} {100 * n / total:6.1f} %")
    print(f"{'the compiled loop':26s} {total / ticks:12.0f}")


if __name__ == "__main__":
    main()
