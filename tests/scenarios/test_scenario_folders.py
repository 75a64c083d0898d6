"""A folder given where a scenario is expected stands for its ``scenario.toml`` (what
``dqspace new`` writes), for every command that takes a scenario, through the one
resolver; what the user typed wins over an embedded scenario of the same name (issue 26)."""

import pytest

from dqspace.scenarios import load_scenario
from dqspace.scenarios.cli import main
from dqspace.scenarios.spec.config import ScenarioError

SK = "station-keeping"


def test_a_folder_stands_for_its_scenario_toml(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["new", "mysat", "-q"]) == 0
    capsys.readouterr()
    assert main(["show", "mysat"]) == 0
    assert capsys.readouterr().out.startswith("# resolved from mysat/scenario.toml\n")
    # every command that takes a scenario resolves it through the same loader: a bad
    # override names the folder's file (and nothing runs)
    extra = {
        "run": [],
        "sweep": ["--samples", "none.json"],
        "montecarlo": ["-n", "1"],
        "tune": ["--param", "arm_controller.omega_n=5:20", "-n", "1"],
    }
    for cmd, args in extra.items():
        assert main([cmd, "mysat", *args, "--set", "scenario.duration=-1"]) == 2, cmd
        err = capsys.readouterr().err
        assert "mysat/scenario.toml (with scenario.duration=-1): scenario.duration" in err, cmd
    # a folder without scenario.toml
    (tmp_path / "empty").mkdir()
    with pytest.raises(ScenarioError, match="^empty: a folder without scenario.toml"):
        load_scenario("empty")


def test_the_folder_the_user_typed_wins_over_an_embedded_scenario(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / SK).mkdir()  # without scenario.toml: the embedded one
    assert load_scenario(SK).config["base"]["mass"] == 27.0
    (tmp_path / SK).rmdir()
    assert main(["new", SK, "-q"]) == 0
    sc = load_scenario(SK)
    assert sc.source == f"{SK}/scenario.toml" and sc.config["base"]["mass"] == 150.0
