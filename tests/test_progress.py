"""Progress on a stream that is not a terminal (dqspace._progress): when a plain line is
due (a fake clock), the heartbeat, the time left in words, and the line that says compiling
goes on."""

import logging
import threading
import time

import pytest

from dqspace import _precompile
from dqspace._progress import (
    DEFAULT_MAX_WALL,
    Heartbeat,
    LineRate,
    beat_period,
    left_text,
    progress_seconds,
)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_line_at_each_tenth_but_no_closer_than_min_wall():
    clock = Clock()
    rate = LineRate(2.0, 30.0, clock=clock)
    lines = []
    # 640 updates over 10 s (exact binary times): the tenths come every second, faster
    # than min_wall allows
    for i in range(1, 641):
        clock.now = 100.0 + i / 64
        if rate.due(i / 640):
            lines.append(clock.now - 100.0)
    # a line 2 s after the start (the 2nd tenth), then every 2 s, and the end
    assert lines == [2.0, 4.0, 6.0, 8.0, 10.0]


def test_slow_work_gives_a_line_per_tenth_and_a_heartbeat_when_nothing_advances():
    clock = Clock()
    rate = LineRate(2.0, 30.0, clock=clock)
    assert not rate.due(0.05)  # nothing yet: no tenth passed, not 30 s
    clock.now += 5
    assert rate.due(0.1)  # the first tenth, 5 s after the start
    clock.now += 5
    assert not rate.due(0.15)  # same tenth
    clock.now += 25  # 30 s since the last line, still in the same tenth: the heartbeat
    assert rate.due(0.15)
    clock.now += 29.9
    assert not rate.due(0.15)
    clock.now += 0.1
    assert rate.due(0.15)
    clock.now += 0.5  # the end is always said, once, however soon
    assert rate.due(1.0)
    clock.now += 100
    assert not rate.due(1.0)


def test_the_lines_are_bounded_whatever_the_updates():
    clock = Clock()
    rate = LineRate(2.0, 30.0, clock=clock)
    n = 0
    for i in range(1, 100_001):  # 100 000 updates over 1000 s of wall time
        clock.now = 100.0 + i * 0.01
        n += rate.due(i / 100_000)
    # at most one line per 2 s, and with the tenths every 100 s: the heartbeats (one per
    # 30 s) between them and the tenths themselves
    assert 10 <= n <= 1000 / 30 + 11


def test_the_environment_sets_max_wall_and_a_bad_value_is_named(monkeypatch):
    monkeypatch.delenv("DQSPACE_PROGRESS_SECONDS", raising=False)
    assert progress_seconds() == DEFAULT_MAX_WALL
    monkeypatch.setenv("DQSPACE_PROGRESS_SECONDS", "10")
    rate = LineRate()
    assert (rate.min_wall, rate.max_wall) == (2.0, 10.0)
    monkeypatch.setenv("DQSPACE_PROGRESS_SECONDS", "0")
    rate = LineRate()
    assert (rate.min_wall, rate.max_wall) == (0.0, 0.0) and rate.due(0.0)
    for bad in ("-1", "soon", "nan", "inf"):
        monkeypatch.setenv("DQSPACE_PROGRESS_SECONDS", bad)
        with pytest.raises(
            ValueError, match="DQSPACE_PROGRESS_SECONDS = .*: expected a number of seconds >= 0"
        ):
            LineRate()


def test_the_time_left_in_words():
    assert left_text(None) == "time left not known yet"
    assert left_text(float("inf")) == "time left not known yet"
    assert left_text(42.4) == "about 42 s left"
    assert left_text(0.4) == left_text(-3) == "under 1 s left"
    assert left_text(210) == "about 3.5 min left"
    assert left_text(3 * 3600) == "about 3.0 h left"
    assert beat_period(30.0) == 7.5 and beat_period(0.0) == 1.0


def test_the_heartbeat_beats_until_stopped_and_survives_nothing_else():
    beats = []
    with Heartbeat(0.02, lambda: beats.append(1)):
        time.sleep(0.2)
    n = len(beats)
    assert n >= 3
    time.sleep(0.1)
    assert len(beats) == n  # stopped
    hb = Heartbeat(0.01, lambda: 1 / 0).start()  # a failing beat ends its own thread only
    time.sleep(0.1)
    assert not hb._thread.is_alive()
    hb.stop()
    assert not any(t.name == "dqspace-progress" for t in threading.enumerate())


def test_compiling_says_it_goes_on_when_stderr_is_not_a_terminal(monkeypatch, caplog):
    monkeypatch.setenv("DQSPACE_PROGRESS_SECONDS", "0")  # a line at every beat (1 s)
    monkeypatch.setattr(_precompile, "_terminal", lambda: False)
    monkeypatch.setattr(_precompile.Compiling, "_wait", lambda self: time.sleep(2.5))
    with caplog.at_level(logging.INFO, logger="dqspace"):
        _precompile.Compiling([], [], [], "closed_loop, rk4_loop").wait()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) >= 2, lines
    assert all(x.startswith("still compiling closed_loop, rk4_loop: ") for x in lines)
    assert lines[0].endswith("s so far (once per installation)")
    caplog.clear()
    monkeypatch.setattr(_precompile, "_terminal", lambda: True)  # a terminal: as before
    with caplog.at_level(logging.INFO, logger="dqspace"):
        _precompile.Compiling([], [], [], "closed_loop").wait()
        _precompile.Compiling([], [], [], "").wait()  # nothing to compile: nothing said
    assert not caplog.records
