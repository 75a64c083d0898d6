"""The dqspace command line: help, list, show, run, plot, and one-line errors with exit 2."""

import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dqspace.scenarios.cli import main
from dqspace.scenarios.spec.scenario import load_scenario


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["run", "--help"],
        ["plot", "--help"],
        ["list", "--help"],
        ["show", "--help"],
        ["demo", "--help"],
    ],
)
def test_help_exits_zero(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    assert "usage: dqspace" in capsys.readouterr().out


def test_list_names_the_embedded_scenarios(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "station-keeping" in out and "dynamics-check" in out


def test_show_prints_a_resolved_file_that_loads_back_identically(tmp_path, capsys):
    assert main(["show", "station-keeping", "--set", "scenario.duration=3"]) == 0
    text = capsys.readouterr().out
    f = tmp_path / "resolved.toml"
    f.write_text(text)
    a = load_scenario("station-keeping", ["scenario.duration=3"]).config
    assert load_scenario(f).config == a


def _bad(tmp_path, body):
    f = tmp_path / "bad.toml"
    f.write_text('[scenario]\nname = "x"\n' + body)
    return str(f)


@pytest.mark.parametrize(
    "body, needle",
    [
        ("durashun = 3\n", "scenario.durashun: unknown key"),
        ("duration = -1\n", "scenario.duration = -1.0 is out of range"),
        ('[thrusters]\nallocator = "magic"\n', "thrusters.allocator = 'magic' is not one of"),
        ("[integrator]\ndt = 0.003\n", "whole number of integrator.dt"),
        ("[[faults]]\ntime = 1.0\n", "faults[0].thruster: missing value"),
        (
            '[[faults]]\ntime = 1.0\nthruster = 40\nkind = "failed_off"\n',
            "faults[0].thruster = 40 is out of range",
        ),
        ("[base_controller]\nkp_rot = [1, 2]\n", "base_controller.kp_rot must have 3 numbers"),
        ("this is not toml", "invalid TOML"),
    ],
)
def test_bad_scenario_files_give_one_line_naming_file_and_key(tmp_path, capsys, body, needle):
    path = _bad(tmp_path, body)
    assert main(["run", path, "--quiet", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dqspace: error: ")
    assert needle in err[0] and "bad.toml" in err[0]


def test_unknown_scenario_and_bad_override(capsys):
    assert main(["show", "no-such-scenario"]) == 2
    assert "embedded: capture, dynamics-check, station-keeping" in capsys.readouterr().err
    assert main(["show", "station-keeping", "--set", "control.rate=-5"]) == 2
    assert "control.rate = -5.0 is out of range" in capsys.readouterr().err


def test_plot_rejects_a_directory_that_is_not_a_result(tmp_path, capsys):
    assert main(["plot", str(tmp_path)]) == 2
    assert "not a dqspace result" in capsys.readouterr().err


def test_installed_command_runs_a_short_scenario(tmp_path):
    # the console script installed next to this interpreter (a venv's bin/)
    exe = Path(sys.executable).with_name("dqspace")
    exe = str(exe) if exe.exists() else shutil.which("dqspace")
    assert exe, "the dqspace console script is not installed"
    out = tmp_path / "run"
    p = subprocess.run(
        [
            exe,
            "run",
            "station-keeping",
            "--quiet",
            "--out",
            str(out),
            "--set",
            "scenario.duration=0.5",
            "--set",
            "metrics.transient=0.2",  # the end-effector metrics measured (exit 0)
            "--set",
            "outputs.formats=png",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    assert "base_pos_err_max" in p.stdout
    for name in ("result.npz", "manifest.json", "tracking.png", "disturbance_rejection.png"):
        assert (out / name).is_file()
    assert not list(out.glob("*.pdf"))
    p = subprocess.run(
        [exe, "plot", str(out), "--formats", "pdf"], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0 and (out / "tracking.pdf").is_file()


_LOADED = """
import sys
from dqspace.scenarios.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(m for m in ("numpy", "dqspace.scenarios.commands") if m in sys.modules))
"""


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["run", "--help"]])
def test_help_and_version_load_neither_numpy_nor_the_commands(argv):
    p = subprocess.run([sys.executable, "-c", _LOADED, *argv], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "[]"


def test_python_dash_m_gives_a_user_error_exit_2_in_one_line(tmp_path):
    # run as __main__, the module must still recognise the commands' UserError
    p = subprocess.run(
        [sys.executable, "-m", "dqspace.scenarios.cli", "new", ".hidden", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("dqspace: error: '.hidden' is not a plain name"), p.stderr
    assert not list(tmp_path.iterdir())


def test_dqspace_alone_prints_the_help(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: dqspace") and "COMMAND" in out and "exit status" in out


@pytest.mark.parametrize(
    "argv, level",
    [
        (["-q", "list"], logging.WARNING),
        (["list", "-q"], logging.WARNING),
        (["-v", "list"], logging.DEBUG),
        (["list"], logging.INFO),
        (["-q", "list", "-v"], logging.DEBUG),  # the command's own option wins
    ],
)
def test_quiet_and_verbose_work_before_or_after_the_command(argv, level, capsys):
    assert main(argv) == 0
    assert logging.getLogger("dqspace").level == level
    assert "station-keeping" in capsys.readouterr().out


def test_run_says_when_it_writes_the_figures_and_how_long_with_verbose(tmp_path, capsys):
    """The seconds of figure writing were silent, and -v added nothing to `run`."""
    argv = ["run", "station-keeping", "--set", "scenario.duration=0.05", "--set",
            "outputs.formats=png", "--no-fail", "--out", str(tmp_path / "r")]  # fmt: skip
    assert main([*argv, "-v"]) == 0
    err = capsys.readouterr().err
    assert "writing the figures (png)" in err and "figure files in" in err
    assert main([*argv, "-q"]) == 0
    assert "writing the figures" not in capsys.readouterr().err


def test_ctrl_c_outside_a_run_is_one_line_not_a_traceback(monkeypatch, capsys):
    """Ctrl-C during start-up (loading the modules, a scenario) printed a traceback."""
    from dqspace.scenarios import commands

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "cmd_list", interrupted)
    assert main(["list"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "dqspace: error: interrupted (Ctrl-C)" and "Traceback" not in err


def test_run_prints_the_real_time_factor_of_the_command_and_of_the_loop(tmp_path, capsys):
    """The console printed one real-time factor for the whole call (start-up, compiling,
    writing) against the README's for the loop: both are printed, named, and the manifest
    keeps both (the loop's is the larger: it is part of the call)."""
    from dqspace.scenarios.store.results import Results

    out = tmp_path / "r"
    argv = ["run", "station-keeping", "--set", "scenario.duration=0.5", "--set",
            "outputs.plots=false", "--no-fail", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "the whole command" in text and "the simulation loop alone" in text
    m = Results.load(out).manifest
    assert 0 < m["loop_time"] < m["wall_time"]
    assert m["loop_real_time_factor"] > m["real_time_factor"] > 0
    assert abs(m["loop_real_time_factor"] * m["loop_time"] - 0.5) < 1e-9
