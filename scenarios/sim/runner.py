"""The scenario runner: ``run(scenario) -> Results``.

A closed-loop scenario (``scenario.kind = "closed_loop"``) runs the flight software's
ticks and the plant between them (:mod:`dqspace.scenarios.sim.closed_loop`); an open-loop
one (``"open_loop"``) the paper's dynamics check, a prescribed wrench on the base
(:mod:`dqspace.scenarios.sim.open_loop`); a capture (``"capture"``) two closed loops, before
and after grasping a tumbling target (:mod:`dqspace.scenarios.sim.capture`).  The runner
owns what is common: the output, its size and lock, checkpoints, progress, signals, and how
a run ends.

**Before simulating**, :func:`run` checks and locks ``out`` (:class:`OutputError`,
:class:`OutputLocked`), and estimates the bytes the run will record (rows = duration x
recording rate, times the series' sizes): above the limit (``max_bytes``, else the
environment variable ``DQSPACE_MAX_RESULT_BYTES``, else min(8 GiB, half the physical
memory)) it raises :class:`RunTooLarge`; with ``out``, it also needs twice that on disk.

**During the run**, every ``outputs.checkpoint_every`` simulated seconds, the rows
recorded since the last checkpoint are appended to ``<out>/.partial/`` (linear in the
run's length); the committed result in ``out`` is not touched until the run stops (see
:mod:`dqspace.scenarios.results` for what is kept where).  Progress: a bar on a
terminal; otherwise plain INFO lines through :mod:`logging` (logger ``"dqspace.run"``):
the simulated and the wall time and an estimate of the time left, every 10 % of the run
(at most one per 2 s of wall time, at least one per 30 s: :mod:`dqspace._progress`).

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

The manifest also records the metrics (closed loop), ``degraded`` (one line per kind of
degradation: every thruster failed, VSCMG steering saturation, thrust allocation falling
short, thrusters at their maximum, wheel, gimbal and arm motors at their limits; see
:mod:`dqspace.scenarios.sim.metrics`), ``degradations`` (the same kinds as records:
``kind``, ``label``, ``units``, ``ticks``, ``duration`` [s], ``first`` [s], ``episodes``,
``intervals`` ``[[t0, t1], ...]`` [s]; events mark each episode), ``wall_time`` [s] and
``real_time_factor`` (the whole call: start-up, compiling, recording, writing),
``loop_time`` [s] and ``loop_real_time_factor`` (the closed loop's compiled calls alone),
``python``, ``dependencies`` and ``machine``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import platform
import signal
import socket
import sys
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..._env import env_bytes
from ..._progress import LineRate, left_text
from ...control.flight.python_stage import ControllerError
from ...control.flight.software import FlightSoftwareError
from ...multibody import IntegrationError
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
from .capture import Capture
from .closed_loop import NO_THRUSTER, ClosedLoop
from .metrics import METRICS, degradations, summarize
from .open_loop import OpenLoop

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
_DIVERGED_HINT = (
    "gains too high for the control rate or the integrator step, integrator.dt too large, "
    "or actuator limits (thrust, gimbal rate, wheel acceleration) too tight"
)
_USER_CODE_HINT = "the error is in the controller's code named by the scenario, not dqspace's"
_WRITE_HINT = (
    "the disk is full, a quota or file-size limit was reached, or the output directory "
    "stopped being writable"
)
#: exceptions that mean the simulation diverged (not a bug in the code)
_NUMERIC = (
    IntegrationError, FloatingPointError, OverflowError, np.linalg.LinAlgError,
    FlightSoftwareError,
)  # fmt: skip


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
    """A one-line bar on a terminal, else plain INFO lines through ``logging``
    ("dqspace.run") at the rate of :class:`dqspace._progress.LineRate`: the simulated
    time, the wall time and the time left (measured from the first chunk on, so that
    compiling does not count)."""

    def __init__(self, total, enabled):
        self.total, self.enabled = total, enabled
        self.tty = enabled and sys.stderr.isatty()
        self.rate = LineRate() if enabled and not self.tty else None
        self.t0 = time.perf_counter()
        self.last = -1
        self.first = None  # (simulated, wall) at the first update

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
        if self.first is None:
            self.first = (t, now)
        if not self.rate.due(t / self.total if self.total > 0 else 1.0):
            return
        t1, w1 = self.first
        speed = (t - t1) / (now - w1) if t > t1 and now > w1 else None
        left = "done" if t >= self.total else left_text((self.total - t) / speed if speed else None)
        shown = f", {speed:.1f}x real time" if speed else ""
        log.info(
            "t = %.2f of %.2f s simulated (%d%%), %.1f s wall, %s%s",
            t, self.total, pct, el, left, shown,
        )  # fmt: skip

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


def _limit(max_bytes):
    """``(limit [bytes], where it comes from)``."""
    if max_bytes is not None:
        return int(max_bytes), "max_bytes"
    env = env_bytes(_ENV_MAX, None)  # ValueError naming the variable when not a byte count
    if env is not None:
        return env, _ENV_MAX
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
            kind = cfg["scenario"]["kind"]
            if kind == "capture":  # approach, grasp, detumble: two closed loops
                sim = Capture(cfg)
            else:
                sim = OpenLoop(cfg) if kind == "open_loop" else ClosedLoop(cfg)
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
            # no output: nothing to save, and no chunk need end at a checkpoint
            sim.simulate(rec, checkpoint if writer is not None else None, bar)
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
    except ControllerError as exc:
        bar.close()
        cause = str(exc)
        res, path = _end(sim, rec, writer, "failed", cause, t_wall)
        raise RunFailed(sim.t, cause, path=path, hint=_USER_CODE_HINT, results=res) from exc
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


def _no_thruster(t, t_dead):
    """The ``manifest["degradations"]`` entry of every thruster failed from ``t_dead``."""
    period = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    end = float(t[-1]) + period
    return {
        "kind": NO_THRUSTER,
        "label": "every thruster has failed",
        "units": [],
        "ticks": int(np.sum(t >= t_dead - 1e-9)),
        "duration": end - t_dead,
        "first": float(t_dead),
        "episodes": 1,
        "intervals": [[float(t_dead), end]],
    }


def _annotate(sim, res, t_wall):
    """Add metrics, degradations, timing and the environment to ``res.manifest``."""
    m = res.manifest
    n = len(res.t)
    m["metrics"], m["metric_units"], m["degraded"], m["degradations"] = {}, {}, [], []
    if sim.closed and n:
        m["metrics"] = summarize(res)
        if hasattr(sim, "metrics"):  # a capture's own (CAPTURE_METRICS, in METRICS)
            m["metrics"].update(sim.metrics(res))
        m["metric_units"] = {k: METRICS[k][0] for k in m["metrics"] if k in METRICS}
        messages, events, table = degradations(res)
        dead = [e["t"] for e in m["events"] if e["event"] == NO_THRUSTER]
        if dead:
            messages.insert(0, f"every thruster has failed from t = {dead[0]:.3f} s")
            table.insert(0, _no_thruster(res.t, dead[0]))
        m["degraded"], m["degradations"] = messages, table
        m["events"] = sorted(m["events"] + events, key=lambda e: e["t"])
    wall = time.perf_counter() - t_wall
    t_end = float(res.t[-1]) if n else 0.0
    m["wall_time"] = wall
    m["real_time_factor"] = t_end / wall if wall > 0 else None
    loop_time = getattr(sim, "loop_time", None)  # the closed loop's compiled calls only
    if loop_time is not None:
        m["loop_time"] = loop_time
        m["loop_real_time_factor"] = t_end / loop_time if loop_time > 0 else None
    m.update(_environment())
    return res
