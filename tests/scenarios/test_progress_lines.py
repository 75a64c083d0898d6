"""Progress in a pipe (issue 25): when stderr is not a terminal, ``dqspace run``, ``sweep``
and ``montecarlo`` print plain progress lines (no carriage return) with the work done, the
wall time and the time left; ``-q`` prints none.  The rate itself is tested with a fake
clock in tests/test_progress.py; here ``DQSPACE_PROGRESS_SECONDS=0`` asks for a line at
every update, so that a short run prints several."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.campaigns import ur5_with_dispersions

SHORT = ["--set", "scenario.duration=0.3", "--set", "metrics.transient=0.1"]
SHORT += ["--set", "outputs.plots=false"]


def _exe():
    exe = Path(sys.executable).with_name("dqspace")
    exe = str(exe) if exe.exists() else shutil.which("dqspace")
    assert exe, "the dqspace console script is not installed"
    return exe


def _piped(args, seconds="0"):
    """``dqspace args`` with stdout and stderr pipes; (returncode, stderr bytes)."""
    env = dict(os.environ, DQSPACE_PROGRESS_SECONDS=seconds)
    p = subprocess.run([_exe(), *args], capture_output=True, env=env, timeout=900)
    return p.returncode, p.stderr


def _lines(err, pattern):
    assert b"\r" not in err  # no bar redrawn in place: a pipe keeps every byte
    assert not err or err.endswith(b"\n")  # whole lines only
    return [x for x in err.decode().splitlines() if re.match(pattern, x)]


RUN_LINE = r"t = \d+\.\d\d of 3\.00 s simulated \(\d+%\), \d+\.\d s wall, (\w+ .* left|done)"


def test_a_run_in_a_pipe_prints_progress_lines_and_none_with_quiet(tmp_path):
    args = ["run", "ur5-waypoints", "--out", str(tmp_path / "r"), *SHORT[2:]]
    args += ["--set", "scenario.duration=3"]
    code, err = _piped(args)
    assert code == 0, err.decode()
    lines = _lines(err, RUN_LINE)
    assert len(lines) >= 2, err.decode()
    assert lines[-1].startswith("t = 3.00 of 3.00 s simulated (100%)")
    assert ", done, " in lines[-1] and lines[-1].endswith("x real time")
    code, err = _piped([*args, "-q"])
    assert code == 0 and not _lines(err, r"t = .* simulated"), err.decode()


def test_a_run_in_a_pipe_at_the_default_rate_still_says_where_it_ended(tmp_path):
    # a short warm run takes well under the 2 s between two lines: only the end is said
    args = ["run", "ur5-waypoints", "--out", str(tmp_path / "r"), *SHORT]
    code, err = _piped(args, seconds="")
    assert code == 0, err.decode()
    lines = _lines(err, r"t = .* simulated")
    assert 1 <= len(lines) <= 2 and lines[-1].startswith("t = 0.30 of 0.30 s simulated (100%)")


def test_a_sweep_in_a_pipe_prints_progress_lines_and_none_with_quiet(tmp_path):
    samples = tmp_path / "samples.toml"
    samples.write_text("".join(f"[[samples]]\nscenario.seed = {i}\n" for i in range(3)))
    args = ["sweep", "ur5-waypoints", "--samples", str(samples), "--scheduler", "synchronous"]
    args += ["--out", str(tmp_path / "s"), *SHORT]
    code, err = _piped(args)
    assert code == 0, err.decode()
    pattern = r"sweep: \d/3 variants \(0 stored, 0 failed\), \d+\.\d s wall, "
    lines = _lines(err, pattern)
    assert len(lines) >= 2, err.decode()
    assert lines[0].startswith("sweep: 0/3") and "time left not known yet" in lines[0]
    assert lines[-1].startswith("sweep: 3/3") and lines[-1].endswith(" s wall, done")
    code, err = _piped([*args[:-6], "--out", str(tmp_path / "q"), *SHORT, "-q"])
    assert code == 0 and not _lines(err, r"sweep: "), err.decode()


@pytest.mark.parametrize("quiet", [False, True])
def test_a_monte_carlo_campaign_in_a_pipe_prints_progress_lines(tmp_path, quiet):
    f = ur5_with_dispersions(tmp_path)
    args = ["montecarlo", str(f), "-n", "3", "--scheduler", "synchronous", "--no-plots"]
    args += ["--no-fail", "--out", str(tmp_path / "mc"), *SHORT] + ["-q"] * quiet
    code, err = _piped(args)
    assert code == 0, err.decode()
    lines = _lines(err, r"sweep: \d/3 variants")
    assert (len(lines) == 0) if quiet else (len(lines) >= 2), err.decode()


@pytest.mark.parametrize("quiet", [False, True])
def test_a_tuning_in_a_pipe_prints_a_line_per_candidate(tmp_path, quiet):
    f = ur5_with_dispersions(tmp_path)
    args = ["tune", str(f), "--param", "base_controller.kp_trans=200:2000", "-n", "2"]
    args += ["--budget", "2", "--scheduler", "synchronous", "--no-plots", "--no-fail"]
    args += ["--out", str(tmp_path / "t"), *SHORT] + ["-q"] * quiet
    code, err = _piped(args)
    assert code == 0, err.decode()
    lines = _lines(err, r"candidate \d \[\d/2\]: total_impulse P50 = ")
    assert len(lines) == (0 if quiet else 2), err.decode()
    if not quiet:
        assert "ETA" in lines[-1]
    # while a candidate runs, a line at least every DQSPACE_PROGRESS_SECONDS (here: every
    # beat of the heartbeat, 1 s) says which one, the wall time and the time left
    for x in _lines(err, r"tuning: "):
        assert re.match(r"tuning: candidate \d running \(\d of 2 finished\), \d+ s wall, ", x)
