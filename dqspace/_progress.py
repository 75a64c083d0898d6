"""Progress on a stream that is not a terminal: plain lines at a bounded rate.

On a terminal the commands redraw one line in place (a carriage return); in a pipe, a CI
log or ``| tee`` those redraws would pile up or show nothing for minutes, so progress is
printed as plain lines instead, no more and no less often than :class:`LineRate` allows:

- a line when the work done passes the next tenth, but no sooner than ``min_wall``
  seconds after the previous line (default 2 s);
- a line at least every ``max_wall`` seconds while the work goes on, even when nothing
  advances (compiling the kernels, a long run of a sweep): :class:`Heartbeat` wakes a
  reporter that has nothing new to say (default 30 s);
- a line when the work is done.

The environment variable ``DQSPACE_PROGRESS_SECONDS`` sets ``max_wall`` (seconds, >= 0);
``min_wall`` is the smaller of 2 s and it (``0``: a line at every update).

This module imports nothing heavy (the command line's start-up stays fast).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from ._env import env_number

__all__ = [
    "DEFAULT_MIN_WALL",
    "DEFAULT_MAX_WALL",
    "progress_seconds",
    "LineRate",
    "Heartbeat",
    "beat_period",
    "left_text",
]

#: [s] the shortest time between two lines at tenths of the work (at most ``max_wall``)
DEFAULT_MIN_WALL = 2.0
#: [s] the longest time without a line while the work goes on
DEFAULT_MAX_WALL = 30.0
#: the environment variable that sets ``max_wall``
ENV = "DQSPACE_PROGRESS_SECONDS"


def progress_seconds() -> float:
    """``max_wall``: ``$DQSPACE_PROGRESS_SECONDS``, else :data:`DEFAULT_MAX_WALL`; ValueError
    naming the variable when it is not a number of seconds >= 0."""
    return env_number(ENV, DEFAULT_MAX_WALL, what="a number of seconds >= 0")


class LineRate:
    """When to print the next plain progress line (module docstring).

    Parameters
    ----------
    min_wall, max_wall : [s] default: from :func:`progress_seconds`
    steps : lines at each 1/steps of the work (default 10: every tenth)
    clock : the time in seconds (default ``time.monotonic``; a test passes a fake one)

    :meth:`due` is safe to call from two threads (a reporter and its heartbeat).
    """

    def __init__(
        self,
        min_wall: float | None = None,
        max_wall: float | None = None,
        *,
        steps: int = 10,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_wall = progress_seconds() if max_wall is None else float(max_wall)
        self.min_wall = min(DEFAULT_MIN_WALL, self.max_wall) if min_wall is None else min_wall
        self.steps, self.clock = steps, clock
        self.last_at = clock()
        self.last_step = 0  # the tenths reported so far
        self.finished = False
        self._lock = threading.Lock()

    def due(self, fraction: float) -> bool:
        """True when a line is due now with ``fraction`` (0 to 1) of the work done; the line
        is then taken as printed.  After the line at 1 (the end), never again."""
        with self._lock:
            if self.finished:
                return False
            now = self.clock()
            since = now - self.last_at
            f = min(max(float(fraction), 0.0), 1.0) if fraction == fraction else 0.0
            step = math.floor(f * self.steps + 1e-9)
            end = f >= 1.0
            tenth = step > self.last_step and since >= self.min_wall
            if not (end or tenth or since >= self.max_wall):
                return False
            self.last_at, self.last_step, self.finished = now, max(step, self.last_step), end
            return True

    def mark(self, fraction: float) -> None:
        """Take a line printed now, with ``fraction`` of the work done, by other means (one
        line per unit of work, say): the next one is due from here."""
        with self._lock:
            f = min(max(float(fraction), 0.0), 1.0) if fraction == fraction else 0.0
            self.last_at = self.clock()
            self.last_step = max(self.last_step, math.floor(f * self.steps + 1e-9))
            self.finished = self.finished or f >= 1.0


class Heartbeat:
    """Call ``beat()`` from a daemon thread every ``period`` seconds until :meth:`stop` (or
    the end of a ``with`` block); ``beat`` decides whether to print (it asks its
    :class:`LineRate`).  An exception in ``beat`` stops the heartbeat, nothing else."""

    def __init__(self, period: float, beat: Callable[[], None]) -> None:
        self.period, self.beat = max(0.01, float(period)), beat
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="dqspace-progress", daemon=True)

    def _loop(self):
        while not self._stop.wait(self.period):
            try:
                self.beat()
            except Exception:  # noqa: BLE001 (progress must never break the work)
                return

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)

    def __enter__(self) -> Heartbeat:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def beat_period(max_wall: float) -> float:
    """How often a heartbeat wakes to ask whether a line is due: a quarter of
    ``max_wall`` (so the lines come at most ``1.25 max_wall`` apart), at least 1 s."""
    return max(1.0, max_wall / 4.0)


def left_text(seconds: float | None) -> str:
    """``about 40 s left``, ``about 3.5 min left``, ``about 1.2 h left``, ``under 1 s left``;
    ``time left not known yet`` for None (nothing measured yet)."""
    if seconds is None or not math.isfinite(seconds):
        return "time left not known yet"
    if seconds < 1:
        return "under 1 s left"
    if seconds < 120:
        return f"about {seconds:.0f} s left"
    if seconds < 7200:
        return f"about {seconds / 60:.1f} min left"
    return f"about {seconds / 3600:.1f} h left"
