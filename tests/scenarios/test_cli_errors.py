"""What the command line says when something goes wrong: one line, never a traceback.

Exit status 2 for what the user asked (a scenario, an override, a path), 1 for a run
that failed or could not write its results; the line names what and where.
"""

import logging
import subprocess
import sys

import pytest

from dqspace.scenarios import commands
from dqspace.scenarios.cli import main
from dqspace.scenarios.store.results import ResultWriter


def _one_error_line(capsys):
    captured = capsys.readouterr()
    err = [ln for ln in captured.err.strip().splitlines() if ln.startswith("dqspace: error: ")]
    assert len(err) == 1, captured.err
    assert "Traceback" not in captured.err
    return err[0]


def test_a_diverging_run_is_one_line_with_time_path_and_likely_cause(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(
        [
            "run",
            "station-keeping",
            "-q",
            "--out",
            str(out),
            "--set",
            "scenario.duration=2",
            "--set",
            "base_controller.kp_trans=[1e12, 1e12, 1e12]",
            "--set",  # the iiwa's torque limits would hold the arm: lift them
            "arm.torque_limit=[1e300]",
        ]
    )
    assert code == 1
    line = _one_error_line(capsys)
    assert line.startswith("dqspace: error: run failed at t = "), line  # not "unexpected"
    assert str(out) in line and "gains too high" in line


def test_an_output_directory_in_use_is_refused_naming_the_holder(tmp_path, capsys):
    with ResultWriter(tmp_path, "another run"):
        code = main(["run", "station-keeping", "-q", "--out", str(tmp_path)])
    assert code == 2
    line = _one_error_line(capsys)
    assert "in use by another writer" in line and "(another run)" in line


def test_an_output_path_that_is_a_file_is_refused_before_simulating(tmp_path, capsys):
    f = tmp_path / "taken"
    f.write_text("not a directory")
    assert main(["run", "station-keeping", "-q", "--out", str(f)]) == 2
    assert str(f) in _one_error_line(capsys)
    assert f.read_text() == "not a directory"


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["show", "statin-keeping"], "did you mean 'station-keeping'"),
        (["show", "station-keeping", "--set", "base_controller.kp_tran=[1,1,1]"], "kp_trans"),
        (["show", "station-keeping", "--set", "faults[-1].time=1"], "faults[-1]"),
        (["run", "station-keeping", "--set", "scenario.name=../escape"], "scenario.name"),
        (["plot", "/no/such/result"], "/no/such/result"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    assert needle in _one_error_line(capsys)


def test_tls_options_go_together(tmp_path, capsys):
    code = main(
        ["sweep", "station-keeping", "--grid", str(tmp_path / "g.toml"), "--tls-cert", "c.pem"]
    )
    assert code == 2
    line = _one_error_line(capsys)
    assert "g.toml" in line or "--tls-ca-file" in line


def test_an_unexpected_error_is_one_line_asking_for_the_traceback(monkeypatch, capsys):
    def broken(args):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(commands, "cmd_list", broken)
    assert main(["list"]) == 1
    line = _one_error_line(capsys)
    assert "unexpected ZeroDivisionError: boom" in line and "-v" in line


def test_the_first_run_says_it_compiles(monkeypatch, caplog):
    monkeypatch.setattr(commands, "caches_are_warm", lambda: False)
    with caplog.at_level(logging.INFO, logger="dqspace"):
        commands._compile_notice()
    assert "compiling the numba kernels" in caplog.text and "first run" in caplog.text
    caplog.clear()
    monkeypatch.setattr(commands, "caches_are_warm", lambda: True)
    with caplog.at_level(logging.INFO, logger="dqspace"):
        commands._compile_notice()
    assert "compiling" not in caplog.text


def test_quiet_prints_no_progress_and_a_pipe_gets_plain_progress_lines(tmp_path):
    args = [
        "run",
        "station-keeping",
        "--set",
        "scenario.duration=0.5",
        "--set",
        "metrics.transient=0.2",  # the end-effector metrics measured: exit 0
        "--set",
        "outputs.plots=false",
    ]
    loud = subprocess.run(
        [sys.executable, "-m", "dqspace.scenarios.cli", *args, "--out", str(tmp_path / "a")],
        capture_output=True,
        text=True,
    )
    assert loud.returncode == 0, loud.stderr
    assert "running 'station-keeping'" in loud.stderr
    assert "\r" not in loud.stderr  # no terminal: lines, not a redrawn bar
    quiet = subprocess.run(
        [sys.executable, "-m", "dqspace.scenarios.cli", *args, "-q", "--out", str(tmp_path / "b")],
        capture_output=True,
        text=True,
    )
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    assert "base_pos_err_max" in quiet.stdout and " mm" in quiet.stdout


_NOTICE_ORDER = """
import sys
import dqspace._numba_cache as nc
seen = []
def cold():
    seen.append("dqspace.scenarios.sim.runner" in sys.modules or "numba" in sys.modules)
    return False
nc.caches_are_warm = cold
from dqspace.scenarios.cli import main
code = main(["run", "station-keeping", "-q", "--out", sys.argv[1],
             "--set", "scenario.duration=0.01", "--set", "metrics.transient=0",
             "--set", "outputs.plots=false"])
print(code, seen)
"""


def test_the_compile_notice_comes_before_anything_is_compiled(tmp_path):
    p = subprocess.run(
        [sys.executable, "-c", _NOTICE_ORDER, str(tmp_path / "r")], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.split()[-2:] == ["0", "[False]"], p.stdout
