"""Bad scenario input is refused up front, on one line naming the file and the key.

Each case comes from a bad-input campaign: what used to write outside ``runs/``,
report a run of zero ticks as complete, overflow, edit the wrong fault, fail
mid-run or print TOML that does not read back.
"""

import copy
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dqspace.scenarios.spec.config import (
    ScenarioError,
    apply_overrides,
    dumps_toml,
    embedded_scenarios,
)
from dqspace.scenarios.spec.scenario import (
    MAX_SAMPLES,
    MAX_STEPS_PER_PERIOD,
    Scenario,
    load_scenario,
)
from dqspace.scenarios.spec.variants import scenario_with

SK = "station-keeping"  # closed loop
DC = "dynamics-check"  # open loop


def _error(name_or_path, overrides=(), where=None):
    """The message of the ScenarioError that loading raises; one line naming the file."""
    with pytest.raises(ScenarioError) as exc:
        load_scenario(name_or_path, overrides)
    msg = str(exc.value)
    assert "\n" not in msg and "\r" not in msg
    where = where or f"{Path(str(name_or_path)).stem}.toml"
    assert where in msg
    return msg


def _file(tmp_path, body, name="bad.toml"):
    f = tmp_path / name
    f.write_text('[scenario]\nname = "x"\n' + body, encoding="utf-8")
    return f


def _fault(kind="failed_off", **kw):
    fields = {"time": 1.0, "thruster": 0, "kind": kind, **kw}
    return "faults=[{" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in fields.items()) + "}]"


# ------------------------------------------------- 1. scenario.name is a plain name


@pytest.mark.parametrize(
    "name",
    ["../x", "/tmp/x", "a/b", "a\\b", ".hidden", ".", "..", "", "a" * 101, "a b", "a\x01b",
     "a\nb", "x\x7f", "caf\u00e9", "a:b"],
)  # fmt: skip
def test_a_name_that_is_not_a_plain_file_name_is_refused(name):
    msg = _error(SK, [f"scenario.name={json.dumps(name)}"])
    assert "scenario.name = " in msg and "is not a plain name" in msg


@pytest.mark.parametrize("name", ["a", "run-1_x.v2", "a" * 100, "-x", "x..y", "0"])
def test_plain_names_are_accepted(name):
    assert load_scenario(SK, [f"scenario.name={json.dumps(name)}"]).name == name


def test_the_name_is_checked_in_files_and_in_sweep_variants(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('[scenario]\nname = "../../etc"\n')
    assert "scenario.name = '../../etc' is not a plain name" in _error(f)
    with pytest.raises(ScenarioError, match="variant: scenario.name = '../x' is not a plain"):
        scenario_with(load_scenario(SK), {"scenario.name": "../x"})


# ------------------------------------------- 2. at least one control tick / interval


@pytest.mark.parametrize(
    "overrides",
    [
        ["control.rate=1e-12"],
        ["control.rate=5e-324"],  # a period that overflows to inf
        ["scenario.duration=0.005"],  # half of the 0.01 s period
        ["scenario.duration=0.01", "control.rate=99.9"],
    ],
)
def test_a_closed_loop_run_without_a_control_tick_is_refused(overrides):
    msg = _error(SK, overrides)
    assert "is shorter than one control period" in msg and "no control tick" in msg


def test_one_control_period_is_the_shortest_closed_loop_run():
    cfg = load_scenario(SK, ["scenario.duration=0.01"]).config
    assert cfg["scenario"]["duration"] * cfg["control"]["rate"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    "overrides",
    [
        ["control.record_rate=1e-12"],
        ["scenario.duration=0.001"],  # a tenth of the 0.01 s recording period
        ["integrator.method=rk4", "scenario.duration=0.005"],
    ],
)
def test_an_open_loop_run_without_a_recorded_interval_is_refused(overrides):
    msg = _error(DC, overrides)
    assert "is shorter than one recording period" in msg and "no recorded interval" in msg


def test_open_loop_timing_checks_the_recording_rate_not_the_control_rate():
    # the open-loop run has no controller: control.rate plays no part in it
    assert load_scenario(DC, ["control.rate=1e-12"]).config["control"]["rate"] == 1e-12
    msg = _error(DC, ["scenario.duration=0.015"])
    assert "must be a whole number of recording periods (0.01 s)" in msg
    msg = _error(DC, ["integrator.method=rk4", "control.record_rate=300"])
    assert "control.record_rate = 300.0 Hz" in msg and "whole number of integrator.dt" in msg


@pytest.mark.parametrize(
    "name, overrides, needle",
    [
        (SK, ["scenario.duration=1e300"], "control ticks, more than the"),
        (SK, ["control.rate=1e300"], "control ticks, more than the"),
        (DC, ["control.record_rate=1e9"], "recorded intervals, more than the"),
    ],
)
def test_runs_that_would_record_too_many_samples_are_refused(name, overrides, needle):
    msg = _error(name, overrides)
    assert needle in msg and str(MAX_SAMPLES) in msg


# --------------------------------------------------- 3. tiny steps and huge step counts


@pytest.mark.parametrize(
    "overrides, needle",
    [
        (["integrator.dt=1e-320"], "integrator.dt = 1e-320 is out of range: must be >= 1e-09 s"),
        (["integrator.dt=0.0"], "integrator.dt = 0.0 is out of range"),
        (["integrator.dt=1e-9"], "would take 1e+07 steps of integrator.dt = 1e-09 s"),
        (["control.rate=1e-6", "scenario.duration=1e6"], "steps of integrator.dt"),
    ],
)
def test_tiny_steps_are_refused_without_overflow(overrides, needle):
    assert needle in _error(SK, overrides)


def test_the_step_count_limit_is_inclusive():
    # 0.01 s / 1e-8 s = 1e6 steps per control period: the limit itself is allowed
    sc = load_scenario(SK, ["integrator.dt=1e-8"])
    assert round(1.0 / (sc.config["control"]["rate"] * 1e-8)) == MAX_STEPS_PER_PERIOD


def test_adaptive_max_step_has_the_same_lower_bound():
    msg = _error(DC, ["integrator.max_step=1e-320"])
    assert "integrator.max_step = 1e-320 is out of range: must be >= 1e-09 s" in msg


def test_the_closed_loop_refuses_the_adaptive_integrator_it_would_ignore():
    assert "integrator.method = 'adaptive' applies to open-loop runs" in _error(
        SK, ["integrator.method=adaptive"]
    )


# ------------------------------------------------------------- 4. override syntax


@pytest.mark.parametrize(
    "overrides, needle",
    [
        (["faults[-1].time=1"], "index '-1' of faults must be a non-negative integer"),
        ([_fault(), "faults[-1].time=1"], "index '-1' of faults must be a non-negative integer"),
        (["faults[+1].time=1"], "index '+1' of faults must be a non-negative integer"),
        (["faults[1.5].time=1"], "index '1.5' of faults must be a non-negative integer"),
        (["faults[x].time=1"], "index 'x' of faults"),
        (["faults[0].time=1"], "no entry faults[0] (faults has no entries)"),
        ([_fault(), "faults[1].time=1"], "no entry faults[1] (faults has 1 entry, faults[0])"),
        ([_fault(), "faults[0].time.x=1"], "has too many dots"),
        (["faults[0]=1"], "malformed key 'faults[0]'"),
        (["faults[0.time=1"], "malformed key"),
        (["faults.time=1"], "address an entry, faults[i].time"),
        (["scenario[0].name=x"], "[scenario] is a single table"),
        (["scenario.name.x=1"], "key 'scenario.name.x' has too many dots"),
        (["=1"], "empty key"),
        ([" =1"], "empty key"),
        ([".duration=1"], "has an empty part"),
        (["scenario.=1"], "has an empty part"),
        (["scenario.description="], "no value after '='"),
        (["scenario.description= \t "], "no value after '='"),
        (["scenario.duration"], "expected key=value"),
        (["duration=5"], "expected section.key; did you mean 'scenario.duration'?"),
        (["scenario.duration=5\nscenario.seed = 3"], "is not a single value"),
        (["base_controller.kp_rot=[1, NaN, 1]"], "invalid TOML value"),
        (["scenario.seed=" + "9" * 5000], "invalid value"),
    ],
)
def test_malformed_overrides_are_refused_naming_the_override(overrides, needle):
    msg = _error(SK, overrides)
    assert needle in msg and "--set" in msg


def test_fault_entries_are_addressed_only_when_they_exist():
    sc = load_scenario(SK, [_fault(), "faults[0].time=3", "faults[0].thruster=5"])
    assert sc.config["faults"] == [{"time": 3.0, "thruster": 5, "kind": "failed_off", "scale": 1.0}]
    doc = {"faults": [{"time": 1.0}]}
    assert apply_overrides(doc, ["faults[0].time=2"]) == {"faults": [{"time": 2}]}
    assert doc == {"faults": [{"time": 1.0}]}  # the input is left as it was


def test_overrides_must_be_a_list_of_strings():
    with pytest.raises(ScenarioError, match="got the string 'scenario.duration=3'"):
        load_scenario(SK, "scenario.duration=3")


# ------------------------------------------------------------- 5. faults up front


def test_fault_scales_are_accepted_exactly_when_the_thruster_model_accepts_them():
    from dqspace.actuators import FaultKind, ThrusterFault

    for kind in ("failed_off", "stuck_on", "degraded"):
        for scale in (-0.5, 0, 5e-324, 0.25, 1, 1.0000001, 2):
            try:
                ThrusterFault(FaultKind(kind), scale=scale)
                expected = True
            except ValueError:
                expected = False
            try:
                load_scenario(SK, [_fault(kind, scale=scale)])
                accepted = True
            except ScenarioError as exc:
                assert "faults[0].scale" in str(exc)
                accepted = False
            assert accepted == expected, (kind, scale)


@pytest.mark.parametrize(
    "name, overrides, needle",
    [
        (SK, [_fault("degraded", scale=0)], "faults[0].scale = 0.0 is out of range: must be > 0"),
        (SK, [_fault("stuck_on", scale=0.5)], "applies to degraded faults only"),
        (SK, [_fault(thruster=12)], "faults[0].thruster = 12 is out of range"),
        (SK, [_fault(thruster=-1)], "faults[0].thruster = -1 is out of range"),
        (SK, [_fault(time=-1.0)], "faults[0].time = -1.0 is out of range"),
        (SK, [_fault(kind="broken")], "faults[0].kind = 'broken' is not one of"),
        (SK, [_fault(), "thrusters.enabled=false"], "thruster faults need thrusters"),
        (DC, [_fault()], "thruster faults apply to closed-loop runs only"),
    ],
)
def test_faults_a_run_cannot_apply_are_refused_before_it_starts(name, overrides, needle):
    assert needle in _error(name, overrides)


def test_other_build_time_failures_are_refused_up_front():
    msg = _error(SK, ["vscmg.initial_gimbal_deg=[1, 0, 0]"])  # the pyramid has 4 units
    assert "vscmg.initial_gimbal_deg" in msg and "4 values" in msg
    # with the cluster disabled the gimbal angles play no part
    load_scenario(SK, ["vscmg.enabled=false", "vscmg.initial_gimbal_deg=[1, 0, 0]"])
    assert "outputs.formats is empty" in _error(SK, ['outputs.formats=" , "'])
    assert load_scenario(SK, ['outputs.formats=""', "outputs.plots=false"])


# --------------------------------------------------------- 6. show -> run round trip


def _reload(cfg):
    """``load_scenario(file)`` of ``dumps_toml(cfg)`` written as UTF-8, like `show > f`."""
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "shown.toml"
        f.write_text(Scenario(cfg, "test").to_toml(), encoding="utf-8")
        return load_scenario(f).config


@pytest.mark.parametrize(
    "name, overrides",
    [(SK, []), (DC, []), (SK, [_fault("degraded", scale=0.25), 'scenario.description="a\\u0001"'])],
)
def test_embedded_scenarios_read_back_identically(name, overrides):
    cfg = load_scenario(name, overrides).config
    assert _reload(cfg) == cfg


@pytest.mark.parametrize("name", embedded_scenarios())
def test_every_embedded_scenario_reads_back_identically(name):
    cfg = load_scenario(name).config
    assert _reload(cfg) == cfg


def test_strings_are_escaped_as_toml_requires():
    import tomllib

    s = 'a\x00\x01\x08\t\n\x0c\r\x1b\x1f\x7f"\\\u00e9\u2028\U0001f600z'
    text = dumps_toml({"t": {"s": s}})
    assert tomllib.loads(text) == {"t": {"s": s}}
    for raw in [chr(c) for c in range(0x20) if c != 0x0A] + ["\x7f"]:
        assert raw not in text  # no raw control character (the lines end in \n)
    body = text.split("\n")[1]  # (not splitlines: U+2028 is a line break to Python)
    assert (
        body
        == 's = "a\\u0000\\u0001\\b\\t\\n\\f\\r\\u001B\\u001F\\u007F\\"\\\\\u00e9\u2028\U0001f600z"'
    )


@settings(max_examples=60)
@given(
    description=st.text(),
    name=st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}", fullmatch=True),
    base_mass=st.floats(min_value=0.0, exclude_min=True, allow_infinity=False),
    zeta=st.floats(allow_nan=False, allow_infinity=False),
)
def test_any_valid_strings_and_floats_read_back_identically(description, name, base_mass, zeta):
    cfg = copy.deepcopy(load_scenario(SK).config)
    cfg["scenario"].update(description=description, name=name)
    cfg["base"]["mass"] = base_mass
    cfg["trajectory"]["zeta"] = zeta
    assert _reload(cfg) == cfg


def test_show_prints_toml_that_run_reads_back(tmp_path, capsys):
    from dqspace.scenarios.cli import main

    # a TOML multi-line string: the override holds a real newline
    sets = ['scenario.description="""tab\\there\nline two \\u0001"""', "scenario.duration=3"]
    assert main(["show", SK, *[a for s in sets for a in ("--set", s)]]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# resolved from ")  # a comment: the override's newline escaped
    f = tmp_path / "shown.toml"
    f.write_text(text, encoding="utf-8")
    cfg = load_scenario(f).config
    assert cfg == load_scenario(SK, sets).config
    assert cfg["scenario"]["description"] == "tab\there\nline two \x01"


def test_lone_surrogates_are_refused_as_text():
    msg = _error(SK, ["scenario.description=a\ud800b"])
    assert "scenario.description = 'a\\ud800b' is not valid Unicode text" in msg


# --------------------------------------------------------------- 7. suggestions


@pytest.mark.parametrize(
    "body, needle",
    [
        ("[base_controller]\nkp_trns = [1, 1, 1]\n", "base_controller.kp_trns: unknown key; did "
         "you mean 'kp_trans'?"),
        ("[base_controler]\nkp_trans = [1, 1, 1]\n", "unknown section [base_controler]; did you "
         "mean 'base_controller'?"),
        ('[thrusters]\nallocator = "cvxp"\n', "is not one of ['fast', 'cvxpy']; did you mean "
         "'cvxpy'?"),
        ('[outputs]\nformats = "png,pfd"\n', "unknown format 'pfd'; did you mean 'pdf'?"),
        ('[[faults]]\ntime = 1.0\nthruster = 0\nkind = "stuck_of"\n', "did you mean 'stuck_on'?"),
    ],
)  # fmt: skip
def test_misspellings_in_files_get_a_suggestion(tmp_path, body, needle):
    assert needle in _error(_file(tmp_path, body))


@pytest.mark.parametrize(
    "overrides, needle",
    [
        (["base_controller.kp_trns=[1, 1, 1]"], "unknown key; did you mean 'kp_trans'?"),
        (["base_controler.kp_trans=[1, 1, 1]"], "did you mean 'base_controller'?"),
        (["thrusters.allocator=cvxp"], "did you mean 'cvxpy'?"),
        (["scenario.kind=open_lop"], "did you mean 'open_loop'?"),
    ],
)
def test_misspellings_in_overrides_get_a_suggestion(overrides, needle):
    assert needle in _error(SK, overrides)


def test_misspelt_embedded_names_get_a_suggestion():
    msg = _error("station-keepin", where="station-keepin")
    assert "did you mean 'station-keeping'?" in msg and "embedded: capture, dynamics-check" in msg
    msg = _error("dynamics-check.toml")
    assert "no such scenario file; did you mean 'dynamics-check'?" in msg


def test_nothing_is_suggested_when_nothing_is_close(tmp_path):
    msg = _error(_file(tmp_path, "[base_controller]\nzzzzzz = 1\n"))
    assert "unknown key" in msg and "did you mean" not in msg
    assert "did you mean" not in _error("qqqqqq", where="qqqqqq")


# ------------------------------------------------------- 8. more kinds of bad value


@pytest.mark.parametrize(
    "body, needle",
    [
        ("[base_controller]\nkp_rot = [1, nan, 1]\n", "base_controller.kp_rot[1] must be finite"),
        ('[base_controller]\nkp_rot = ["nan", 1]\n', "base_controller.kp_rot must have 3 numbers"),
        ('[base_controller]\nkp_rot = ["nan", 1, 1]\n', "kp_rot[0] must be a number (without "
         "quotes), got the string 'nan'"),
        ('[base_controller]\nkp_rot = "1, 1, 1"\n', "must be a list of 3 numbers (a TOML array"),
        ("duration = 1" + "0" * 400 + "\n", "scenario.duration is too large: an integer of 401 "
         "digits"),
        ("duration = 1e400\n", "scenario.duration must be finite, got inf"),
        ("seed = " + "9" * 5000 + "\n", "invalid TOML"),
        ('[vscmg]\nenabled = "true"\n', "vscmg.enabled must be true or false (lowercase, without "
         "quotes), got the string 'true'"),
        ("[vscmg]\nenabled = 1\n", "vscmg.enabled must be true or false, got 1"),
        ('duration = "5"\n', "scenario.duration must be a number (without quotes)"),
        ('seed = "5"\n', "scenario.seed must be an integer (without quotes)"),
        ("[[base]]\n", "write [base], not [[base]]"),
        ('[faults]\ntime = 1.0\n', "faults must be an array of tables [[faults]]"),
        ("[thrusters]\nallocator = [1]\n", "thrusters.allocator = [1] is not one of"),
    ],
)  # fmt: skip
def test_bad_values_in_files_are_named(tmp_path, body, needle):
    assert needle in _error(_file(tmp_path, body))


def test_a_key_outside_any_section_says_where_it_belongs(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('duration = 5.0\n[scenario]\nname = "x"\n')
    assert "duration = 5.0 is outside any [section]; it belongs in [scenario]" in _error(f)


@pytest.mark.parametrize(
    "overrides, needle",
    [
        (["vscmg.enabled=True"], "must be true or false (lowercase, without quotes)"),
        (["vscmg.enabled=yes"], "must be true or false"),
        (["base_controller.kp_rot=1,2,3"], "must be a list of 3 numbers (a TOML array"),
        (["base_controller.kp_rot=[1, 2, nan]"], "base_controller.kp_rot[2] must be finite"),
        (["scenario.duration=1" + "0" * 400], "is too large: an integer of 401 digits"),
    ],
)
def test_bad_values_in_overrides_are_named(overrides, needle):
    assert needle in _error(SK, overrides)


def test_unreadable_files_are_named(tmp_path):
    f = tmp_path / "bin.toml"
    f.write_bytes(b"[scenario]\nname = '\xff\xfe'\n")
    assert "not a text file" in _error(f)
    d = tmp_path / "dir.toml"
    d.mkdir()
    assert "cannot read" in _error(d)


def test_long_overrides_are_shortened_in_messages():
    msg = _error(SK, ["scenario.duration=1" + "0" * 400])
    assert len(msg) < 300
