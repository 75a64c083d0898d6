"""The scenario runner: ``run(scenario) -> Results``.

Closed loop (``scenario.kind = "closed_loop"``), at every control tick (default
100 Hz, zero-order hold):

1. the arm controller turns the end-effector reference into joint torques
   (IK + computed torque, :class:`dqspace.control.ArmController`);
2. the base controller turns the base pose error and the arm's planned motion
   into a wrench ``[f, tau]`` (PD + arm-reaction feedforward, P47);
3. the allocator turns ``f`` into thrusts (P49), the pulse modulator into
   on/off pulses (switched on dynamics-step boundaries);
4. the steering law turns the remaining torque ``tau - H_t sigma`` (P48), less
   the cluster's gyroscopic term, into gimbal rates and wheel accelerations,
   which the VSCMG servo loops track;
5. the plant (base + arm + cluster as real bodies) is integrated over the
   control period with compiled Lie-group RK4 (default 1 kHz), the inputs
   evaluated by :func:`dqspace.scenarios._inputs.closed_loop_inputs`.

Open loop (``"open_loop"``): the base receives ``sin(w t) [force, torque]``
(the paper's dynamics check, eq. 50), integrated with RK4 or adaptively, in chunks of
``outputs.checkpoint_every`` simulated seconds.

**Before simulating**, :func:`run` checks and locks ``out`` (:class:`OutputError`,
:class:`OutputLocked`), and estimates the bytes the run will record (rows = duration x
recording rate, times the series' sizes): above the limit (``max_bytes``, else the
environment variable ``DQSPACE_MAX_RESULT_BYTES``, else min(8 GiB, half the physical
memory)) it raises :class:`RunTooLarge`; with ``out``, it also needs twice that on disk.

**During the run**, every ``outputs.checkpoint_every`` simulated seconds, the rows
recorded since the last checkpoint are appended to ``<out>/.partial/`` (linear in the
run's length); the committed result in ``out`` is not touched until the run stops (see
:mod:`dqspace.scenarios.results` for what is kept where).  Progress: a bar on a
terminal; otherwise INFO lines through :mod:`logging` (logger ``"dqspace.run"``) every
10 % of the run (at most one per 2 s of wall time, at least one per 30 s).

**How a run ends**:

- complete: the result is committed (status ``"complete"``);
- Ctrl-C, or SIGTERM (handled like Ctrl-C while :func:`run` runs in the main thread;
  the previous handler is restored after): :class:`RunInterrupted`, the partial result
  committed as ``"interrupted"``;
- divergence (the integration or a controller output turns non-finite, a singular
  matrix): :class:`RunFailed` with the time, the cause and likely reasons, the partial
  result committed as ``"failed"``;
- the results cannot be written (disk full, quota, file-size limit): :class:`RunFailed`;
  the committed result of the run before stays as it was;
- any other exception: the partial result committed as ``"failed"``, the exception
  re-raised unchanged.

The manifest also records the metrics (closed loop), ``degraded`` (one line per
degradation: VSCMG steering saturation, thrust allocation falling short; events mark when
each began), ``wall_time`` [s], ``real_time_factor``, ``python``, ``dependencies`` and
``machine``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import platform
import re
import signal
import socket
import sys
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...control import IKStatus, pose_error, sample_trajectory
from ...control.flight.law import law_work
from ...dq import dq_conj, dq_log, dq_mul, translation_from_dq
from ...multibody import (
    IntegrationError,
    frame_pose,
    simulate_adaptive,
    simulate_compiled,
)
from ..build.describe import figure_facts, open_loop_figure_facts
from ..build.dynamics_check import REFERENCE_METHOD, open_loop_model, reference_ee_positions
from ..build.system import build_system, thruster_faults
from ..spec.config import ScenarioError
from ..store.results import (
    OutputError,
    OutputLocked,
    Results,
    ResultWriter,
    SeriesInfo,
    package_version,
)
from ..store.storage import MANIFEST, PARTIAL, format_bytes
from . import boundary as _inputs
from . import loop
from .loop import Commands, record_arrays, record_tick
from .metrics import METRICS, degradations, summarize
from .plant import FlightSoftware, Navigation, Plant

if TYPE_CHECKING:
    from ..spec.scenario import Scenario

__all__ = [
    "run",
    "RunInterrupted",
    "RunFailed",
    "RunTooLarge",
    "OutputError",
    "OutputLocked",
    "DEFAULT_MAX_BYTES",
]

log = logging.getLogger("dqspace.run")


#: [bytes] the default cap on what a run records (also at most half the physical memory)
DEFAULT_MAX_BYTES = 8 << 30
_ENV_MAX = "DQSPACE_MAX_RESULT_BYTES"
_DEPENDENCIES = ("numpy", "numba", "scipy", "cvxpy")
_LOG_STEP, _LOG_MIN_WALL, _LOG_MAX_WALL = 10, 2.0, 30.0  # [%], [s], [s]
_DIVERGED_HINT = (
    "gains too high for the control rate or the integrator step, integrator.dt too large, "
    "or actuator limits (thrust, gimbal rate, wheel acceleration) too tight"
)
_WRITE_HINT = (
    "the disk is full, a quota or file-size limit was reached, or the output directory "
    "stopped being writable"
)
_NO_THRUSTER = "no working thruster"
#: exceptions that mean the simulation diverged (not a bug in the code)
_NUMERIC = (IntegrationError, FloatingPointError, OverflowError, np.linalg.LinAlgError)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a run.

    Attributes
    ----------
    results : Results, what was computed (status ``"interrupted"``)
    path : Path or None, the directory it was saved in
    reason : ``"Ctrl-C"`` or ``"SIGTERM"``
    """

    def __init__(self, results: Results, path: Path | None = None, reason: str = "Ctrl-C") -> None:
        super().__init__(f"run interrupted ({reason})")
        self.results, self.path, self.reason = results, path, reason


class RunFailed(RuntimeError):
    """A run that could not go on: the simulation diverged, or its results could not be
    written.

    Attributes
    ----------
    t : float, simulated time [s] of the last control tick (or record) reached
    cause : str, the original error (``"IntegrationError: state turned non-finite ..."``)
    path : Path or None, where the partial result is (``Results.load(path)``)
    hint : str, likely causes
    results : Results or None, what was computed (status ``"failed"``)
    """

    def __init__(
        self,
        t: float,
        cause: str,
        *,
        path: Path | None = None,
        hint: str = "",
        results: Results | None = None,
    ) -> None:
        self.t, self.cause, self.path, self.hint, self.results = (
            float(t),
            cause,
            path,
            hint,
            results,
        )
        text = f"run failed at t = {self.t:.3f} s: {cause}"
        if path is not None:
            text += f"; partial result kept in {path}"
        if hint:
            text += f"; likely: {hint}"
        super().__init__(text)


class RunTooLarge(ValueError):
    """A run would record more than the limit; nothing was simulated or allocated.

    Attributes
    ----------
    nbytes : int, the estimate [bytes]
    limit : int [bytes]
    """

    def __init__(self, message: str, nbytes: int, limit: int) -> None:
        super().__init__(message)
        self.nbytes, self.limit = nbytes, limit


class _Terminated(KeyboardInterrupt):
    """SIGTERM received during :func:`run`."""


class _WriteFailed(Exception):
    """A checkpoint could not be written (its OSError is the ``__cause__``)."""


# ------------------------------------------------------------------ helpers


class _Progress:
    """A one-line bar on a terminal, else INFO lines through ``logging`` ("dqspace.run")."""

    def __init__(self, total, enabled):
        self.total, self.enabled = total, enabled
        self.tty = enabled and sys.stderr.isatty()
        self.t0 = self.logged_at = time.perf_counter()
        self.last, self.logged_pct = -1, 0

    def update(self, t):
        if not self.enabled:
            return
        pct = min(100, int(100 * t / self.total)) if self.total > 0 else 100
        now = time.perf_counter()
        el = now - self.t0
        if self.tty:
            if pct != self.last:
                self.last = pct
                bar = "#" * (pct // 4) + "." * (25 - pct // 4)
                sys.stderr.write(f"\r[{bar}] {pct:3d}%  t = {t:6.2f} s  ({el:5.1f} s wall)")
                sys.stderr.flush()
            return
        since = now - self.logged_at
        step = pct >= self.logged_pct + _LOG_STEP and since >= _LOG_MIN_WALL
        if step or since >= _LOG_MAX_WALL:
            self.logged_pct, self.logged_at = pct - pct % _LOG_STEP, now
            rate = f", {t / el:.1f}x real time" if el > 0 else ""
            log.info(
                "t = %.2f of %.2f s simulated (%d%%), %.1f s wall%s", t, self.total, pct, el, rate
            )

    def close(self):
        if self.tty:
            sys.stderr.write("\n")
            self.tty = False


class _Recorder:
    """Preallocated time series; ``results()`` gives a Results of the rows written."""

    def __init__(self, n, spec, manifest):
        self.n = 0
        self.info = {k: SeriesInfo(*v[1:]) for k, v in spec.items()}
        self.data = {k: np.zeros((n, *v[0])) for k, v in spec.items()}
        self.manifest = manifest

    def add(self, **values):
        i = self.n
        for k, x in values.items():
            self.data[k][i] = x
        self.n += 1

    def add_rows(self, m, **blocks):
        i = self.n
        for k, x in blocks.items():
            self.data[k][i : i + m] = x
        self.n += m

    def results(self, status, message=""):
        data = {k: v[: self.n] for k, v in self.data.items()}
        m = dict(self.manifest, status=status, message=message)
        m["events"] = list(m.get("events", []))
        return Results(data, self.info, m)


def _parse_bytes(text):
    m = re.fullmatch(r"\s*([0-9.]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]?)(?:i?B)?\s*", text)
    if not m:
        raise ValueError(
            f"{_ENV_MAX} = {text!r}: expected a number of bytes, e.g. 4000000000, 512M, 16G"
        )
    return int(float(m[1]) * 1024 ** "_KMGT".index((m[2] or "_").upper()))


def _limit(max_bytes):
    """``(limit [bytes], where it comes from)``."""
    if max_bytes is not None:
        return int(max_bytes), "max_bytes"
    env = os.environ.get(_ENV_MAX, "").strip()
    if env:
        return _parse_bytes(env), _ENV_MAX
    with contextlib.suppress(ValueError, OSError, AttributeError):
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        if phys > 0 and phys // 2 < DEFAULT_MAX_BYTES:
            return phys // 2, "half the physical memory"
    return DEFAULT_MAX_BYTES, "the default"


def _check_size(cfg, rows, spec, rate, max_bytes):
    """The bytes a run records; RunTooLarge above the limit."""
    row_bytes = 8 * sum(math.prod(v[0]) for v in spec.values())
    nbytes = rows * row_bytes
    limit, where = _limit(max_bytes)
    if nbytes > limit:
        T = cfg["scenario"]["duration"]
        raise RunTooLarge(
            f"scenario.duration = {T:g} s recorded at {rate:g} Hz is {rows:,} samples of "
            f"{row_bytes} bytes, about {format_bytes(nbytes)}: more than the limit of "
            f"{format_bytes(limit)} ({where}); shorten scenario.duration, record less often, "
            f"or raise the limit (run(..., max_bytes=...) or {_ENV_MAX})",
            nbytes,
            limit,
        )
    return nbytes


@functools.lru_cache(maxsize=1)
def _environment():
    deps = {}
    for name in _DEPENDENCIES:
        try:
            deps[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            deps[name] = None
    return {
        "python": platform.python_version(),
        "dependencies": deps,
        "machine": {
            "arch": platform.machine(),
            "processor": _cpu_model(),
            "cpu_count": os.cpu_count(),
            "hostname": socket.gethostname(),
            "platform": platform.platform(),
        },
    }


def _cpu_model():
    with contextlib.suppress(OSError, UnicodeDecodeError):
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    return platform.processor() or None


@contextlib.contextmanager
def _sigterm_interrupts():
    """Handle SIGTERM like Ctrl-C while inside (main thread only; elsewhere a no-op).

    Yields a dict whose ``"armed"`` entry, while True, makes SIGTERM raise
    :class:`_Terminated` (once).  A SIGTERM while disarmed (the result being saved) is
    held and delivered to the previous handler on exit, unless one already interrupted
    the run.
    """
    state = {"armed": False, "fired": False, "pending": False}
    if threading.current_thread() is not threading.main_thread():
        yield state
        return

    def handler(signum, frame):
        if state["armed"]:
            state["armed"], state["fired"] = False, True
            raise _Terminated
        state["pending"] = not state["fired"]

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield state
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if old is None else old)
        if state["pending"]:
            signal.raise_signal(signal.SIGTERM)


# ------------------------------------------------------------------ run


def run(
    scenario: Scenario | dict,
    out: str | os.PathLike | None = None,
    *,
    progress: bool = True,
    max_bytes: int | None = None,
) -> Results:
    """Run a resolved scenario (see :func:`dqspace.scenarios.load_scenario`).

    Parameters
    ----------
    scenario : Scenario (or its resolved dict)
    out : directory for ``result.npz`` + ``manifest.json`` (and plots); None: in memory
    progress : show progress (a bar on a terminal, else log lines)
    max_bytes : int, optional, the most a run may record [bytes] (see the module
        docstring for the default)

    Returns
    -------
    Results (status ``"complete"``)

    Raises
    ------
    OutputError, OutputLocked : ``out`` cannot be written, or another run writes it
        (before anything is simulated)
    RunTooLarge : the run would record more than the limit (before anything is simulated)
    RunInterrupted : Ctrl-C or SIGTERM; the partial result is kept
    RunFailed : divergence, or the results could not be written
    """
    t_wall = time.perf_counter()
    cfg = scenario.config if hasattr(scenario, "config") else scenario
    manifest = {
        "scenario": cfg,
        "seed": cfg["scenario"]["seed"],
        "package_version": package_version(),
        "source": getattr(scenario, "source", None),
        "events": [],
    }
    with contextlib.ExitStack() as stack:
        writer = None
        if out is not None:
            writer = stack.enter_context(ResultWriter(out, f"run of {cfg['scenario']['name']}"))
        try:
            sim = _OpenLoop(cfg) if cfg["scenario"]["kind"] == "open_loop" else _ClosedLoop(cfg)
        except ScenarioError as exc:  # the system description: name the file
            src = getattr(scenario, "source", None)
            raise ScenarioError(f"{src}: {exc}" if src else str(exc)) from None
        nbytes = _check_size(cfg, sim.rows, sim.spec, sim.rate, max_bytes)
        if writer is not None:
            writer.check_space(2 * nbytes, f"this run ({sim.rows:,} samples)")
        rec = _Recorder(sim.rows, sim.spec, manifest)
        if writer is not None:
            writer.start(rec.data, rec.info, rec.manifest)
        sigterm = stack.enter_context(_sigterm_interrupts())
        return _drive(sim, rec, writer, progress, t_wall, sigterm)


def _drive(sim, rec, writer, progress, t_wall, sigterm):
    bar = _Progress(sim.duration, progress)

    def checkpoint():
        if writer is not None:
            try:
                writer.checkpoint(rec.n, rec.manifest)
            except OSError as exc:
                raise _WriteFailed from exc

    try:
        sigterm["armed"] = True
        try:
            sim.simulate(rec, checkpoint, bar)
        finally:
            sigterm["armed"] = False
    except KeyboardInterrupt as exc:
        bar.close()
        reason = "SIGTERM" if isinstance(exc, _Terminated) else "Ctrl-C"
        res, path = _end(sim, rec, writer, "interrupted", f"interrupted ({reason})", t_wall)
        raise RunInterrupted(res, path, reason) from None
    except _WriteFailed as exc:
        bar.close()
        err = exc.__cause__
        cause = f"could not write the checkpoint ({type(err).__name__}: {err})"
        res = _annotate(sim, rec.results("failed", cause), t_wall)
        writer.mark(rec.manifest, "failed", cause)
        raise RunFailed(
            sim.t, cause, path=_partial_path(writer), hint=_WRITE_HINT, results=res
        ) from err
    except _NUMERIC as exc:
        bar.close()
        cause = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        res, path = _end(sim, rec, writer, "failed", cause, t_wall)
        raise RunFailed(sim.t, cause, path=path, hint=_DIVERGED_HINT, results=res) from exc
    except Exception as exc:
        bar.close()
        _end(sim, rec, writer, "failed", f"{type(exc).__name__}: {exc}", t_wall)
        raise
    bar.close()
    return _end(sim, rec, writer, "complete", "", t_wall)[0]


def _partial_path(writer):
    """``out`` if its checkpoint is there to be loaded (``Results.load(out)``), else None."""
    if writer is not None and (writer.path / PARTIAL / MANIFEST).is_file():
        return writer.path
    return None


def _end(sim, rec, writer, status, message, t_wall):
    """Commit the run's result; returns ``(Results, path or None)``."""
    res = _annotate(sim, rec.results(status, message), t_wall)
    if writer is None:
        return res, None
    try:
        writer.finish(res)
    except OSError as exc:
        note = f"the result could not be saved ({type(exc).__name__}: {exc})"
        writer.mark(res.manifest, "failed", f"{message}; {note}" if message else note)
        raise RunFailed(
            sim.t, note, path=_partial_path(writer), hint=_WRITE_HINT, results=res
        ) from exc
    return res, writer.path


def _annotate(sim, res, t_wall):
    """Add metrics, degradations, timing and the environment to ``res.manifest``."""
    m = res.manifest
    n = len(res.t)
    m["metrics"], m["metric_units"], m["degraded"] = {}, {}, []
    if sim.closed and n:
        m["metrics"] = summarize(res)
        m["metric_units"] = {k: METRICS[k][0] for k in m["metrics"] if k in METRICS}
        messages, events = degradations(res)
        dead = [e["t"] for e in m["events"] if e["event"] == _NO_THRUSTER]
        if dead:
            messages.insert(0, f"every thruster has failed from t = {dead[0]:.3f} s")
        m["degraded"] = messages
        m["events"] = sorted(m["events"] + events, key=lambda e: e["t"])
    wall = time.perf_counter() - t_wall
    t_end = float(res.t[-1]) if n else 0.0
    m["wall_time"] = wall
    m["real_time_factor"] = t_end / wall if wall > 0 else None
    m.update(_environment())
    return res


# ----------------------------------------------------------------- open loop

#: open-loop runs up to this duration [s] record the independent reference of the
#: dynamics check (``ee_ref_I``); longer ones leave it to the figure
REFERENCE_MAX_DURATION = 100.0


class _OpenLoop:
    """The dynamics check: ``sin(w t) [force, torque]`` on the base, simulated in chunks."""

    closed = False

    def __init__(self, cfg):
        model = self.model = open_loop_model(cfg)
        ol = cfg["open_loop"]
        self.cfg = cfg
        self.duration = T = cfg["scenario"]["duration"]
        self.rate = rate = cfg["control"]["record_rate"]
        self.n = int(round(T * rate))
        self.rows = self.n + 1
        self.t = 0.0
        self.params = np.array(
            [ol["frequency"], *ol["base_torque_amplitude"], *ol["base_force_amplitude"]], float
        )
        self.chunk = max(1, int(round(cfg["outputs"]["checkpoint_every"] * rate)))
        self.spec = {
            "t": ((), "s"),
            "q": ((model.nq,), "-", (), "configuration (base pose, joint angles [rad])"),
            "v": ((model.nv,), "-", (), "velocity (base twist [rad/s, m/s], joint rates)"),
            "ee_pos_I": ((3,), "m", ("x", "y", "z"), "end-effector position, inertial frame"),
            "base_pos_I": ((3,), "m", ("x", "y", "z"), "base position, inertial frame"),
        }
        self.ee_ref = None
        if T <= REFERENCE_MAX_DURATION:  # longer: the figure computes it when drawn
            self.spec["ee_ref_I"] = (
                (3,),
                "m",
                ("x", "y", "z"),
                f"end-effector position, independent reference ({REFERENCE_METHOD})",
            )

    def _add(self, rec, t, Q, V):
        ee = np.array([translation_from_dq(frame_pose(self.model, q, "ee")) for q in Q])
        base = np.array([translation_from_dq(q[:8]) for q in Q])
        extra = {}
        if "ee_ref_I" in self.spec:
            if self.ee_ref is None:  # once, on the whole record grid (~0.05 s per s simulated)
                grid = np.linspace(0.0, self.duration, self.n + 1)
                self.ee_ref = reference_ee_positions(self.cfg, grid)
            k = rec.n
            extra["ee_ref_I"] = self.ee_ref[k : k + len(t)]
        rec.add_rows(len(t), t=t, q=Q, v=V, ee_pos_I=ee, base_pos_I=base, **extra)

    def _segment(self, q, v, k, m):
        """States at records ``k + 1 .. k + m`` from the state ``(q, v)`` at record ``k``."""
        model, integ, rate = self.model, self.cfg["integrator"], self.rate
        if integ["method"] == "adaptive":
            params = self.params

            def u(t):
                tau = np.zeros(model.nv)
                tau[:6] = np.sin(params[0] * t) * params[1:]
                return tau

            t_eval = np.linspace(0.0, self.duration, self.n + 1)[k : k + m + 1]
            tr = simulate_adaptive(
                model,
                q,
                v,
                (t_eval[0], t_eval[-1]),
                inputs=u,
                t_eval=t_eval,
                rtol=integ["rtol"],
                atol=integ["atol"],
                max_step=integ["max_step"],
            )
            return tr.t[1:], tr.q[1:], tr.v[1:]
        dt = integ["dt"]
        every = int(round(1.0 / (rate * dt)))
        tr = simulate_compiled(
            model,
            q,
            v,
            dt=dt,
            n_steps=every * m,
            t0=(k * every) * dt,
            inputs=_inputs.open_loop_inputs,
            params=self.params,
            record_every=every,
        )
        return np.arange(k + 1, k + m + 1) * every * dt, tr.q[1:], tr.v[1:]

    def simulate(self, rec, checkpoint, bar):
        rec.manifest["system"] = open_loop_figure_facts(self.model, self.cfg)
        q, v = self.model.neutral_configuration(), np.zeros(self.model.nv)
        self._add(rec, np.zeros(1), q[None], v[None])
        k = 0
        while k < self.n:
            m = min(self.chunk, self.n - k)
            t, Q, V = self._segment(q, v, k, m)
            self._add(rec, t, Q, V)
            q, v, k = Q[-1], V[-1], k + m
            self.t = float(t[-1])
            bar.update(self.t)
            if k < self.n:
                checkpoint()


# --------------------------------------------------------------- closed loop


def _series(sys_, K, S, W=0):
    nq, nv = sys_.plant.nq, sys_.plant.nv
    n = sys_.arm_info.n
    xyz = ("x", "y", "z")
    w6 = ("fx", "fy", "fz", "tx", "ty", "tz")
    return {
        "t": ((), "s"),
        "q": ((nq,), "-", (), "plant configuration"),
        "v": ((nv,), "-", (), "plant velocity"),
        "base_pos_err": ((3,), "m", xyz, "base position minus its initial one, inertial frame"),
        "base_att_err": ((3,), "rad", xyz, "base attitude error, rotation vector (base frame)"),
        "base_twist": ((6,), "rad/s, m/s", ("wx", "wy", "wz", "vx", "vy", "vz"), "base body twist"),
        "ee_pos": ((3,), "m", xyz, "end-effector position, base frame"),
        "ee_ref": ((3,), "m", xyz, "end-effector reference position, base frame"),
        "ee_err": ((3,), "m", xyz, "end-effector position error, base frame"),
        "ee_att_err": ((), "rad", (), "end-effector attitude error angle"),
        "arm_q": ((n,), "rad", (), "arm joint angles"),
        "arm_tau": ((n,), "N m", (), "arm joint torques (held over the period, limited)"),
        "arm_saturated": (
            (n,),
            "-",
            (),
            "1 where the joint's torque or rate limit was reached at the tick",
        ),
        "wrench_cmd": ((6,), "N, N m", w6, "commanded base wrench, base frame"),
        "wrench_ff": ((6,), "N, N m", w6, "feedforward part (the arm's reaction, negated)"),
        "arm_reaction": (
            (6,),
            "N, N m",
            w6,
            "the arm's reaction wrench on the base (planned; fed forward or not)",
        ),
        "wrench_thr": ((6,), "N, N m", w6, "thrusters' mean wrench over the period (nominal)"),
        "wrench_thr_true": (
            (6,),
            "N, N m",
            w6,
            "the mean wrench the true thrusters delivered over the period (misalignment, "
            "magnitude errors, valve timing in)",
        ),
        "thrust_cmd": ((S,), "N", (), "allocated thrusts"),
        "thrust_on": ((S,), "s", (), "pulse widths"),
        "thrust_impulse": ((S,), "N s", (), "impulse delivered over the period"),
        "thrust_impulse_true": (
            (S,),
            "N s",
            (),
            "impulse the true valves let through over the period (timing and faults in)",
        ),
        "thrust_saturated": ((S,), "-", (), "1 where the allocated thrust is the thruster's max"),
        "gimbal_limited": (
            (K,),
            "-",
            (),
            "1 where the plant clipped the gimbal motor (torque or rate limit) in the period "
            "before the tick",
        ),
        "vscmg_spin_limited": (
            (K,),
            "-",
            (),
            "1 where the plant clipped the VSCMG wheel motor (torque or speed limit) in the "
            "period before the tick",
        ),
        "rw_limited": (
            (W,),
            "-",
            (),
            "1 where the plant clipped the reaction-wheel motor (torque or speed limit) in the "
            "period before the tick",
        ),
        "alloc_status": ((), "-", (), "allocator status code (AllocationStatus order)"),
        "vscmg_torque_cmd": ((3,), "N m", xyz, "torque asked of the VSCMGs"),
        "vscmg_torque_err": ((3,), "N m", xyz, "steering torque error (saturation)"),
        "gimbal": ((K,), "rad", (), "gimbal angles"),
        "gimbal_rate": ((K,), "rad/s", (), "gimbal rates"),
        "gimbal_rate_cmd": ((K,), "rad/s", (), "commanded gimbal rates"),
        "wheel_speed": ((K,), "rad/s", (), "wheel speeds"),
        "wheel_accel_cmd": ((K,), "rad/s^2", (), "commanded wheel accelerations"),
        "det_GGt": ((), "-", (), "det(G G^T)"),
        "det_CCt": ((), "-", (), "det(C C^T), gimbal mode only"),
        "rw_speed": ((W,), "rad/s", (), "reaction-wheel speeds"),
        "rw_torque_cmd": ((W,), "N m", (), "reaction-wheel motor torques commanded"),
        "rw_torque_err": ((3,), "N m", xyz, "wheel torque error (saturation)"),
        "dump_torque": ((3,), "N m", xyz, "momentum-dumping torque asked of the thrusters"),
        "nav_att_err": ((3,), "rad", xyz, "attitude estimate error (sensors on; else 0)"),
        "nav_pos_err": ((3,), "m", xyz, "position estimate error (sensors on; else 0)"),
    }


class _ClosedLoop:
    """The closed loop of the module docstring, in chunks of ticks: compiled
    (:mod:`dqspace.scenarios._loop`) with the built-in controllers (sensors on or off),
    else a Python loop over the same kernels."""

    closed = True

    def __init__(self, cfg):
        self.cfg = cfg
        self.sy = sy = build_system(cfg)
        self.flight = FlightSoftware(sy)
        self.plant = Plant(sy)
        self.K, self.S, self.W = self.flight.K, self.flight.S, self.flight.W
        self.rate = cfg["control"]["rate"]
        self.period = 1.0 / self.rate
        self.duration = T = cfg["scenario"]["duration"]
        self.n_ticks = int(round(T / self.period))
        self.rows = self.n_ticks + 1
        self.spec = _series(sy, self.K, self.S, self.W)
        self.law_work = law_work(sy.arm_info.n)
        self._kernel = self._nav = None
        self.t = 0.0

    def simulate(self, rec, checkpoint, bar):
        cfg, sy, period = self.cfg, self.sy, self.period
        rec.manifest["system"] = {**sy.description, **figure_facts(sy)}
        rng = np.random.default_rng(np.random.SeedSequence(cfg["scenario"]["seed"]))
        faults = sorted(cfg["faults"], key=lambda f: f["time"])
        flight, N = self.flight, self.n_ticks
        every = max(1, int(round(cfg["outputs"]["checkpoint_every"] / period)))
        # ticks per compiled call at most: 1 s simulated, and a tenth of the run (progress)
        span = max(1, min(int(round(_CHUNK_SECONDS / period)), math.ceil(N / 10)))
        self.q, self.v = sy.q0.copy(), sy.v0.copy()
        self.held = self._idle_commands()
        self.health = sy.thrusters
        k = 0
        while k <= N:
            t = self.t = k * period
            # ---- thruster faults take effect from the first tick at or after their time
            while faults and faults[0]["time"] <= t + 1e-9:
                f = faults.pop(0)
                self.health = thruster_faults(self.health, f)
                flight.set_health(self.health)
                rec.manifest["events"].append({"t": t, "event": "thruster fault", **f})
                if not np.any(
                    self.health.delivered_thrust(self.health.sigma_max) > off_level(self.health)
                ):
                    rec.manifest["events"].append({"t": t, "event": _NO_THRUSTER})
            # ---- a chunk: up to the next checkpoint, fault, or progress report (after
            # every tick c > 0 a multiple of `every`, and every tick a multiple of `span`)
            c = max(every, math.ceil(k / every) * every)
            p = max(span, math.ceil(k / span) * span)
            k1 = min(N + 1, c + 1, p + 1)
            if faults:
                k1 = min(k1, max(k + 1, math.ceil((faults[0]["time"] - 1e-9) / period)))
            self._chunk(rec, k, k1, rng)
            bar.update(self.t)
            k = k1
            if (k - 1) % every == 0 and 0 < k - 1 < N:
                checkpoint()

    def _idle_commands(self):
        """The commands the plant holds before the first tick decides any (with a
        computation delay): no torque, thrusters off."""
        S, K = self.S, self.K
        off = off_level(self.sy.thrusters) if S else np.zeros(0)
        return Commands(np.zeros(self.sy.plant.nv), np.zeros(S), np.zeros(S), off.copy(),
                        np.zeros(K), np.zeros(K))  # fmt: skip

    def _tables(self, k0, k1, rng):
        """Per tick of ``k0 .. k1 - 1``: the end-effector and base references (pose,
        twist, acceleration: (m, 20)) and the disturbance wrench on the base (m, 6)."""
        sy, dist, m = self.sy, self.cfg["disturbance"], k1 - k0
        times = np.arange(k0, k1) * self.period
        arm_ref = np.concatenate(sample_trajectory(sy.trajectory, times), axis=1)
        b = sy.base_reference
        if callable(b):
            base_ref = np.concatenate(sample_trajectory(b, times), axis=1)
        else:
            base_ref = np.tile(np.r_[b.pose, b.twist, b.acc], (m, 1))
        d6 = np.tile(np.r_[dist["force"], dist["torque"]], (m, 1))
        if dist["force_noise_std"] > 0 or dist["torque_noise_std"] > 0:
            for r in range(m):  # one tick after the other: the same draws in any chunking
                d6[r] += np.r_[
                    rng.normal(0, dist["force_noise_std"], 3),
                    rng.normal(0, dist["torque_noise_std"], 3),
                ]
        return np.ascontiguousarray(arm_ref), np.ascontiguousarray(base_ref), d6

    def _chunk(self, rec, k0, k1, rng):
        """Ticks ``k0 .. k1 - 1``: simulate, then append their series to ``rec``."""
        sy, fl = self.sy, self.flight
        arm_ref, base_ref, d6 = self._tables(k0, k1, rng)
        R = record_arrays(
            k1 - k0, sy.plant.nq, sy.plant.nv, sy.arm_info.n, self.S, self.K, self.W,
            len(self.plant.mem),
        )  # fmt: skip
        # (status, rows recorded, dynamics steps done at a failure, tick reached)
        out = np.zeros(4, dtype=np.int64)
        error = None
        try:
            if fl.compiled:
                error = self._compiled(k0, k1, arm_ref, base_ref, d6, R, out)
            else:
                self._python(k0, k1, arm_ref, base_ref, d6, R, out)
        finally:  # what was computed is kept, also on Ctrl-C or an error
            done = int(out[1])
            if done:
                rec.add_rows(done, **self._series(R, done, arm_ref, base_ref))
        if error is not None:
            raise error

    def _compiled(self, k0, k1, arm_ref, base_ref, d6, R, out):
        """The chunk in one compiled call (:func:`~dqspace.scenarios._loop.closed_loop`);
        returns the error that stopped it, or None."""
        sy, fl, pl = self.sy, self.flight, self.plant
        ints, reals = sy.plant.packed
        law = fl.law
        if self._nav is None:  # without sensors, a navigation of the same types, never run
            self._nav = fl.nav if fl.nav is not None else Navigation(fl)
        nav = self._nav
        args = (
            ints, reals, sy.plant.gravity, pl.inputs, pl.params, pl.mem,
            law.arm.kernel_params(), law.arm.seed, law.base.kernel_params(), law.feedforward,
            fl.params, fl.state, fl.index, fl.nav is not None, nav.params, nav.state, arm_ref,
            base_ref, d6, self.q, self.v,
            self.period, pl.dt, pl.steps, pl.valves, pl.valve_carry, pl.tail_level,
            self.cfg["control"]["computation_delay"], self.held, k0, k1, self.n_ticks,
            self.law_work, fl.work, R, out,
        )  # fmt: skip
        if self._kernel is None:  # typed once a run (the arguments keep their types)
            self._kernel = loop.closed_loop.dispatcher(*args)
        self._kernel(*args)
        status = int(out[0])
        self.t = int(out[3]) * self.period
        if status == loop.OK:
            return None
        if status in (loop.WRENCH_NONFINITE, loop.TORQUE_NONFINITE):
            what = "base wrench" if status == loop.WRENCH_NONFINITE else "arm torque"
            return IntegrationError(f"the {what} turned non-finite at t = {self.t:.6g} s")
        t_fail = self.t + int(out[2]) * pl.dt
        if status == loop.SINGULAR:
            return IntegrationError(f"mass matrix not positive-definite at t = {t_fail:.6g} s")
        return IntegrationError(f"state turned non-finite at t = {t_fail:.6g} s")

    def _python(self, k0, k1, arm_ref, base_ref, d6, R, out):
        """The chunk tick by tick in Python (a user's controllers, the cvxpy allocator),
        with ``out`` as :meth:`_compiled` fills it (the rows recorded; the last tick reached
        is ``self.t``)."""
        sy, fl, pl, info = self.sy, self.flight, self.plant, self.sy.arm_info
        delay = self.cfg["control"]["computation_delay"]
        held = self.held
        for r in range(k1 - k0):
            k = k0 + r
            t = self.t = k * self.period
            q, v = self.q, self.v
            R.limited[r] = pl.mem > 0.0  # what the plant clipped in the last period
            pl.mem[:] = 0.0
            meas = fl.measure(q, v, t)
            c = fl.tick(t, meas, self.health)
            law = c.law
            _finite(t, base_wrench=law.wrench, arm_torque=law.arm_tau)
            e_ee = getattr(law.arm_command, "task_error", None)
            if e_ee is None:
                ref = c.telemetry["arm_reference"]
                e_ee = pose_error(
                    frame_pose(sy.controller_model, _at_base(meas.state.q), info.ee_frame),
                    ref.pose,
                )
            w = self.law_work
            _fill_law_work(w, law, e_ee)
            record_tick(
                R, r, t, q, v, w, fl.work, _f(meas.gimbal), _f(meas.gimbal_rate),
                _f(meas.vscmg_wheel_speed), _f(meas.wheel_speed),
            )  # fmt: skip
            if fl.nav is not None:
                R.nav_att_err[r], R.nav_pos_err[r] = fl.nav.error
            out[1] = r + 1
            now = Commands(c.tau_hold, c.n_on, c.on_level, c.off_level, c.gimbal_rate_cmd,
                           c.wheel_accel_cmd)  # fmt: skip
            held = held if delay else now
            last = k == self.n_ticks
            R.delivered[r] = pl.apply(t, *held, d6[r], commit=not last)
            if last:
                break
            if delay:  # this tick's commands apply from the next tick
                self.held = held = Commands(*(np.array(x) for x in now))
            self.q, self.v = pl.integrate(q, v, t)

    def _series(self, R, m, arm_ref, base_ref):
        """The recorded series (:func:`_series`) of the first m rows of a chunk."""
        sy, info = self.sy, self.sy.arm_info
        n = info.n
        q, v = R.q[:m], R.v[:m]
        apose, bpose = arm_ref[:m, :8], base_ref[:m, :8]
        ee_pos = translation_from_dq(dq_mul(apose, R.ee_dq[:m]))  # q^_BE = q^_BD o e^
        ref_pos = translation_from_dq(apose)
        arm_tau, vq = R.arm_tau[:m], v[:, 6 : 6 + n]
        tau_lim, rate_lim = info.torque_limit, info.rate_limit
        H_true = sy.thruster_H_true if sy.thrusters is not None else np.zeros((6, 0))
        smax = sy.thrusters.sigma_max if sy.thrusters is not None else np.zeros(0)
        limited = self.plant.devices(R.limited[:m] > 0.0)
        return dict(
            t=R.t[:m],
            q=q,
            v=v,
            base_pos_err=translation_from_dq(q[:, :8]) - translation_from_dq(bpose),
            base_att_err=2.0 * dq_log(dq_mul(dq_conj(bpose), q[:, :8]))[:, :3],
            base_twist=v[:, :6],
            ee_pos=ee_pos,
            ee_ref=ref_pos,
            ee_err=ee_pos - ref_pos,
            ee_att_err=2.0 * np.linalg.norm(R.ee_log[:m, :3], axis=-1),
            arm_q=q[:, 8 : 8 + n],
            arm_tau=np.clip(arm_tau, -tau_lim, tau_lim),
            arm_saturated=(np.abs(arm_tau) >= tau_lim) | (np.abs(vq) >= rate_lim),
            wrench_cmd=R.wrench[:m],
            wrench_ff=R.feedforward[:m],
            arm_reaction=R.reaction[:m],
            wrench_thr=R.w_thr[:m],
            wrench_thr_true=np.einsum("rs,ks->kr", H_true, R.delivered[:m]),
            thrust_cmd=R.sigma[:m],
            thrust_impulse=R.mean[:m] * self.period,
            thrust_impulse_true=R.delivered[:m] * self.period,
            thrust_saturated=R.sigma[:m] >= smax * (1.0 - 1e-9),
            gimbal_limited=limited["gimbal"],
            vscmg_spin_limited=limited["vscmg_wheel"],
            rw_limited=limited["rw"],
            thrust_on=R.n_on[:m] * self.plant.dt,
            alloc_status=R.alloc_info[:m, 0],
            vscmg_torque_cmd=R.tau_v[:m],
            vscmg_torque_err=R.steer_err[:m],
            gimbal=R.gimbal[:m],
            gimbal_rate=R.gimbal_rate[:m],
            gimbal_rate_cmd=R.gimbal_rate_cmd[:m],
            wheel_speed=R.vscmg_speed[:m],
            wheel_accel_cmd=R.wheel_accel_cmd[:m],
            det_GGt=R.steer_info[:m, 1],
            det_CCt=R.steer_info[:m, 2],
            rw_speed=R.rw_speed[:m],
            rw_torque_cmd=R.rw_cmd[:m],
            rw_torque_err=R.rw_err[:m],
            dump_torque=R.dump[:m],
            nav_att_err=R.nav_att_err[:m],
            nav_pos_err=R.nav_pos_err[:m],
        )


#: [s] simulated time of one compiled call at most (progress and Ctrl-C between calls)
_CHUNK_SECONDS = 1.0


def _f(x):
    return np.ascontiguousarray(x, dtype=float)


_IK_CODE = {s: i for i, s in enumerate((IKStatus.CONVERGED, IKStatus.STALLED,
                                         IKStatus.MAX_ITERATIONS))}  # fmt: skip


def _fill_law_work(w, law, e_ee):
    """What :func:`~dqspace.scenarios._loop.record_tick` reads of a Python tick's law, into
    the ``LawWork`` ``w``."""
    w.wrench[:] = law.wrench
    w.feedforward[:] = law.feedforward
    w.reaction[:] = law.reaction
    w.tau[:] = law.arm_tau
    w.ee_dq[:] = e_ee.dq
    w.ee_log[:] = e_ee.log
    ik = getattr(law.arm_command, "ik", None)
    w.ik_info[:] = (0.0, 0.0) if ik is None else (_IK_CODE[ik.status], ik.iterations)


def _at_base(q):
    """The controller state's configuration with the base at the origin (poses relative to
    the base body)."""
    qa = np.array(q, dtype=float)
    qa[:8] = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return qa


def off_level(ts):
    """(S,) thrust [N] each thruster delivers when commanded off (stuck-on ones: not 0)."""
    return ts.delivered_thrust(np.zeros(ts.n))


def _finite(t, **values):
    """IntegrationError if a controller output is not finite (the loop diverged)."""
    for name, x in values.items():
        if not np.all(np.isfinite(x)):
            raise IntegrationError(
                f"the {name.replace('_', ' ')} turned non-finite at t = {t:.6g} s"
            )
