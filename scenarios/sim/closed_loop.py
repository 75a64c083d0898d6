"""The closed loop of a scenario, simulated in chunks of ticks.

At every control tick (default 100 Hz, zero-order hold) the flight software
(:mod:`dqspace.control.flight`) estimates its state, runs the arm and base laws and decides
the actuators' commands; the plant (:class:`~dqspace.scenarios.sim.plant.Plant`) is
integrated over the period with them held.  :class:`ClosedLoop` runs the ticks in chunks of
the compiled loop (:func:`~dqspace.scenarios.sim.loop.closed_loop`).  A chunk ends at the
next checkpoint (when the run is saved), at the next thruster fault, after a tenth of the
run (when progress is shown), and otherwise once it has run about :data:`CHUNK_WALL` of
wall time (Ctrl-C and SIGTERM are taken between chunks) or :data:`CHUNK_SECONDS` of
simulated time (its record's rows).  The rows a chunk recorded are kept whatever stops it
(Ctrl-C, an error), and how a run is cut into chunks changes none of its numbers.  Thruster
faults take effect between chunks, at the first tick at or after their time.  The series a
result holds are those of :data:`~dqspace.scenarios.sim.series.CLOSED_LOOP`; after each
chunk, the arm's reaction on the base as the plant applied it is computed from the chunk's
rows (:mod:`dqspace.scenarios.sim.reaction`, outside the compiled loop).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..._jit import TypedCall
from ..._precompile import precompile, start
from ...control.com_hold import com_errors
from ...control.flight.interfaces import command_arrays
from ...multibody import IntegrationError
from ..build.describe import figure_facts
from ..build.devices import thruster_faults
from ..build.flight import flight_software
from ..build.system import build_system
from . import loop
from .metrics import NO_THRUSTER
from .plant import Plant
from .plant import kernel_jobs as plant_kernels
from .reaction import AppliedReaction
from .series import CLOSED_LOOP, Chunk, Sizes, extra_arm_series, spec, values

__all__ = ["ClosedLoop", "NO_THRUSTER", "off_level"]

#: [s] simulated time of one compiled call at most (its record arrays' rows); the first call
#: of a run simulates :data:`FIRST_CHUNK_SECONDS` at most
CHUNK_SECONDS = 10.0
FIRST_CHUNK_SECONDS = 1.0
#: [s] wall time a compiled call aims at (after the first, from the loop's measured speed):
#: Ctrl-C and SIGTERM wait for the call to end.  Each call also costs its Python work
#: (typing the arguments, the series of its rows: about 2 ms), which longer calls amortise.
CHUNK_WALL = 0.25


def off_level(ts):
    """(S,) thrust [N] each thruster delivers when commanded off (stuck-on ones: not 0)."""
    return ts.delivered_thrust(np.zeros(ts.n))


class ClosedLoop:
    """The closed loop of a resolved scenario ``cfg`` (module docstring); the runner calls
    :meth:`simulate` with a recorder of :attr:`spec`.

    ``trajectory`` (optional): the end-effector's reference instead of the scenario's;
    ``initial_state`` (optional): the plant's initial ``(q0, v0)`` instead of the
    scenario's (devices included: gimbal angles and wheel speeds are coordinates of the
    plant), the arm's law seeded with its joints, the navigation started from it and the
    base reference (``base_reference.type = "hold"``) holding its base pose (both passed
    to :func:`~dqspace.scenarios.build.system.build_system`).  The flight software's own
    state (filters, integrators, held commands) starts afresh.  A capture
    (:mod:`dqspace.scenarios.sim.capture`) runs its phase after the grasp so.
    ``laws`` (optional): called with the built system, before its flight software is
    built, to set its controllers (a capture's hold after the grasp)."""

    closed = True

    def __init__(self, cfg, *, trajectory=None, initial_state=None, laws=None):
        self.cfg = cfg
        # on a cold kernel cache, the plant's kernels compile in other processes while the
        # system is built here and while the loop and the tick's stages compile
        # (:meth:`compile` waits for them)
        self._early = early = start(plant_kernels())
        try:
            if trajectory is None and initial_state is None:
                self.sy = sy = build_system(cfg)
            else:  # a capture's phase (scenarios.sim.capture)
                self.sy = sy = build_system(cfg, trajectory=trajectory, start=initial_state)
            if laws is not None:
                laws(sy)
            self.flight = flight_software(sy)
            self.plant = Plant(sy)
            self.reaction = AppliedReaction(
                sy, self.plant, self.flight.index, cfg["control"]["computation_delay"]
            )
        except BaseException:
            early.cancel()
            raise
        self.K, self.S, self.W = self.flight.K, self.flight.S, self.flight.W
        self.rate = cfg["control"]["rate"]
        self.period = 1.0 / self.rate
        self.duration = T = cfg["scenario"]["duration"]
        self.n_ticks = int(round(T / self.period))
        self.rows = self.n_ticks + 1
        self.sizes = Sizes(sy.plant.nq, sy.plant.nv, sy.arm_info.n, self.S, self.K, self.W)
        # [[extra_arm]]: each extra arm's end-effector series after the table's
        self.table = CLOSED_LOOP + extra_arm_series(sy) if sy.extra_arms else CLOSED_LOOP
        self.spec = spec(self.table, self.sizes)
        self._kernel = None
        self.t = 0.0
        #: [s] wall time spent in the compiled loop (the simulation itself: no start-up,
        #: compiling, recording or writing)
        self.loop_time = 0.0
        self.loop_ticks = 0  # the ticks those calls ran
        #: optional stop rule (a capture's grasp trigger): ``stop.chunk_end(k, k1)`` bounds
        #: a chunk from tick k, ``stop.check(k, q, v)`` (the state at tick k, between
        #: chunks) True ends the run before tick k; None: every tick to the end
        self.stop = None

    def simulate(self, rec, checkpoint, bar):
        cfg, sy, period = self.cfg, self.sy, self.period
        rec.manifest["system"] = {**sy.description, **figure_facts(sy)}
        rng = np.random.default_rng(np.random.SeedSequence(cfg["scenario"]["seed"]))
        faults = sorted(cfg["faults"], key=lambda f: f["time"])
        flight, N = self.flight, self.n_ticks
        # chunks end at checkpoints only when they are saved, at tenths of the run only
        # when progress is shown (else a chunk is as long as _span allows)
        every = N + 1
        if checkpoint is not None:
            every = max(1, int(round(cfg["outputs"]["checkpoint_every"] / period)))
        tenth = math.ceil(N / 10) if bar.enabled else N + 1
        self.compile()
        k = 0
        while k <= N:
            t = self.t = k * period
            if self.stop is not None and self.stop.check(k, self.q, self.v):
                break
            # ---- thruster faults take effect from the first tick at or after their time
            while faults and faults[0]["time"] <= t + 1e-9:
                f = faults.pop(0)
                self.health = thruster_faults(self.health, f)
                flight.set_health(self.health)
                rec.manifest["events"].append({"t": t, "event": "thruster fault", **f})
                if not np.any(
                    self.health.delivered_thrust(self.health.sigma_max) > off_level(self.health)
                ):
                    rec.manifest["events"].append({"t": t, "event": NO_THRUSTER})
            # ---- a chunk: up to the next checkpoint, fault, or progress report (after
            # every tick c > 0 a multiple of `every`, and every tick a multiple of `tenth`)
            c = max(every, math.ceil(k / every) * every)
            p = max(tenth, math.ceil(k / tenth) * tenth)
            k1 = min(N + 1, c + 1, p + 1, k + self._span(period))
            if faults:
                k1 = min(k1, max(k + 1, math.ceil((faults[0]["time"] - 1e-9) / period)))
            if self.stop is not None:
                k1 = max(k + 1, min(k1, self.stop.chunk_end(k, k1)))
            self._chunk(rec, k, k1, rng)
            bar.update(self.t)
            k = k1
            if checkpoint is not None and (k - 1) % every == 0 and 0 < k - 1 < N:
                checkpoint()

    def _span(self, period) -> int:
        """Ticks the next compiled call may run: about :data:`CHUNK_WALL` of wall time at the
        loop's speed so far, within :data:`CHUNK_SECONDS` simulated (the first call:
        :data:`FIRST_CHUNK_SECONDS`)."""
        most = max(1, int(round(CHUNK_SECONDS / period)))
        if self.loop_ticks == 0 or self.loop_time <= 0.0:
            return min(most, max(1, int(round(FIRST_CHUNK_SECONDS / period))))
        per_tick = self.loop_time / self.loop_ticks
        return max(1, min(most, int(CHUNK_WALL / per_tick)))

    def _prepare(self):
        """The run's state: the plant's, the commands held, the plant block."""
        sy = self.sy
        self.q, self.v = sy.q0.copy(), sy.v0.copy()
        n, S, K, W = sy.arm_info.n, self.S, self.K, self.W
        # the commands the plant holds before the first tick decides any (with a
        # computation delay): no torque, thrusters off
        self.held = command_arrays(n, S, K, W)
        if S:
            self.held.off_level[:] = off_level(sy.thrusters)
        self.fresh = command_arrays(n, S, K, W)
        self.health = sy.thrusters
        self.block = self.plant.block()
        self.reaction.reset()
        # the loop, its arguments' tuples typed once per run (not at every chunk)
        self._kernel = TypedCall(loop.closed_loop)
        self._R = None  # the chunks' record, reused (zeroed) from chunk to chunk

    def _record(self, m):
        """Zeroed record arrays of at least m rows (:data:`~dqspace.scenarios.sim.loop.
        Record`): one object for the run, so that it is typed once, grown when a chunk is
        longer than any before it."""
        R = self._R
        if R is None or R.t.shape[0] < m:
            sy = self.sy
            R = self._R = loop.record_arrays(
                m, sy.plant.nq, sy.plant.nv, sy.arm_info.n, self.S, self.K, self.W,
                len(self.plant.mem),
            )  # fmt: skip
        else:
            for x in R:
                x.fill(0.0)
        return R

    def compile(self) -> None:
        """Compile (or load from the kernel cache) what :meth:`simulate` runs, without
        simulating: on a cold cache, in parallel processes (a campaign does this once in
        its client before its workers run)."""
        try:
            self._prepare()
            jobs = self.kernel_jobs()  # the loop first: this process compiles it
            precompile(jobs)
        except BaseException:
            self._early.cancel()
            raise
        self._early.wait()
        loop.closed_loop.compile(jobs[0][1])

    def _tables(self, k0, k1, rng):
        """Per tick of ``k0 .. k1 - 1``: the references and the disturbance wrench on the
        base (:data:`~dqspace.scenarios.sim.loop.Tables`)."""
        dist, m = self.cfg["disturbance"], k1 - k0
        arm_ref, base_ref = self.flight.references(np.arange(k0, k1) * self.period)
        d6 = np.tile(np.r_[dist["force"], dist["torque"]], (m, 1))
        if dist["force_noise_std"] > 0 or dist["torque_noise_std"] > 0:
            for r in range(m):  # one tick after the other: the same draws in any chunking
                d6[r] += np.r_[
                    rng.normal(0, dist["force_noise_std"], 3),
                    rng.normal(0, dist["torque_noise_std"], 3),
                ]
        return loop.Tables(arm_ref, base_ref, d6)

    def _chunk(self, rec, k0, k1, rng):
        """Ticks ``k0 .. k1 - 1``: simulate, then append their series to ``rec``."""
        tables = self._tables(k0, k1, rng)
        R = self._record(k1 - k0)
        # (status, rows recorded, dynamics steps done at a failure, tick reached)
        out = np.zeros(4, dtype=np.int64)
        error = None
        try:
            error = self._run(k0, k1, tables, R, out)
        finally:  # what was computed is kept, also on Ctrl-C or an error
            done = int(out[1])
            if done:
                rec.add_rows(done, **self._series(R, done, tables))
        if error is not None:
            raise error

    def _loop_arguments(self, k0, k1, tables, R, out):
        fl = self.flight
        return (
            self.block, fl.params, fl.state, fl.work, tables, self.held, self.fresh, self.q,
            self.v, self.period, self.cfg["control"]["computation_delay"], k0, k1,
            self.n_ticks, R, out,
        )  # fmt: skip

    def kernel_jobs(self) -> list:
        """``(kernel, signature)`` of the run's independent kernels: the tick's stages and
        the loop (what :func:`~dqspace._precompile.precompile` compiles in parallel); once
        the run is set up (:meth:`simulate`, :meth:`compile`)."""
        R = self._record(1)
        tables = loop.Tables(np.zeros((1, 20)), np.zeros((1, 20)), np.zeros((1, 6)))
        args = self._loop_arguments(0, 1, tables, R, np.zeros(4, dtype=np.int64))
        return [
            (loop.closed_loop, self._kernel.signature(*args)),
            *self.flight.kernel_jobs(),
            self.reaction.kernel_job(R, tables.dist),
        ]

    def _run(self, k0, k1, tables, R, out):
        """The chunk in one compiled call; returns the error that stopped it, or None."""
        fl, pl = self.flight, self.plant
        args = self._loop_arguments(k0, k1, tables, R, out)
        t0 = time.perf_counter()
        try:
            self._kernel(*args)
        finally:
            self.loop_time += time.perf_counter() - t0
            self.loop_ticks += k1 - k0
            self.t = int(out[3]) * self.period
        status = int(out[0])
        if status == loop.OK:
            return None
        error = fl.stage_error(status, self.t)
        if error is not None:
            return error
        if status in (loop.WRENCH_NONFINITE, loop.TORQUE_NONFINITE):
            what = "base wrench" if status == loop.WRENCH_NONFINITE else "arm torque"
            return IntegrationError(f"the {what} turned non-finite at t = {self.t:.6g} s")
        t_fail = self.t + int(out[2]) * pl.dt
        if status == loop.SINGULAR:
            return IntegrationError(f"mass matrix not positive-definite at t = {t_fail:.6g} s")
        return IntegrationError(f"state turned non-finite at t = {t_fail:.6g} s")

    def _series(self, R, m, tables):
        """The recorded series (:data:`~dqspace.scenarios.sim.series.CLOSED_LOOP`) of the
        first m rows of a chunk."""
        sy, info = self.sy, self.sy.arm_info
        chunk = Chunk(
            R=R,
            m=m,
            arm_ref=tables.arm_ref,
            base_ref=tables.base_ref,
            period=self.period,
            dt=self.plant.dt,
            tau_limit=info.torque_limit,
            rate_limit=info.rate_limit,
            H_true=sy.thruster_H_true if sy.thrusters is not None else np.zeros((6, 0)),
            sigma_max=sy.thrusters.sigma_max if sy.thrusters is not None else np.zeros(0),
            limited=self.plant.devices(R.limited[:m] > 0.0),
            applied_reaction=self.reaction(R, m, tables.dist),
            com_err=com_errors(sy.plant, sy.q0, R.q[:m], tables.base_ref[:m]),
        )
        return values(self.table, chunk)
