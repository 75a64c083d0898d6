"""The scenario schema machinery: every kind of bad value is reported with file and key."""

import pytest

from dqspace.scenarios.spec.config import (
    Field,
    ScenarioError,
    Section,
    apply_overrides,
    dumps_toml,
    validate,
)

SCHEMA = {
    "scenario": Section(
        {
            "duration": Field("float", 20.0, "s", min=0.0, min_inclusive=False),
            "seed": Field("int", 0, min=0),
            "name": Field("str"),
        }
    ),
    "gains": Section(
        {
            "kp": Field("vec", [1.0, 1.0, 1.0], "N/m", min=0.0, length=3),
            "law": Field("choice", "pd", choices=("pd", "pid")),
            "ff": Field("bool", True),
        }
    ),
    "faults": Section(
        {
            "time": Field("float", unit="s", min=0.0),
            "kind": Field("choice", choices=("off", "stuck")),
        },
        many=True,
    ),
}


def ok_doc():
    return {"scenario": {"name": "x"}, "faults": [{"time": 1.0, "kind": "off"}]}


def test_defaults_are_filled_and_types_coerced():
    out = validate({"scenario": {"name": "x", "duration": 5}}, SCHEMA, "f.toml")
    assert out["scenario"] == {"duration": 5.0, "seed": 0, "name": "x"}
    assert out["gains"]["kp"] == [1.0, 1.0, 1.0] and out["faults"] == []


@pytest.mark.parametrize(
    "doc, match",
    [
        ({"scenario": {"name": "x", "durtion": 1.0}}, r"f\.toml: scenario\.durtion: unknown key"),
        ({"scenario": {}}, r"f\.toml: scenario\.name: missing value"),
        ({"scenario": {"name": "x"}, "extra": {}}, r"f\.toml: unknown section \[extra\]"),
        (
            {"scenario": {"name": "x", "duration": -1.0}},
            r"scenario\.duration = -1\.0 is out of range: must be > 0\.0 s",
        ),
        ({"scenario": {"name": "x", "duration": 0.0}}, r"out of range"),
        ({"scenario": {"name": "x", "seed": 1.5}}, r"scenario\.seed must be an integer"),
        ({"scenario": {"name": "x", "duration": "long"}}, r"scenario\.duration must be a number"),
        ({"scenario": {"name": "x"}, "gains": {"kp": [1, 2]}}, r"gains\.kp must have 3 numbers"),
        (
            {"scenario": {"name": "x"}, "gains": {"kp": [1, -2, 1]}},
            r"gains\.kp\[1\] = -2\.0 is out of range",
        ),
        ({"scenario": {"name": "x"}, "gains": {"law": "lqr"}}, r"gains\.law = 'lqr' is not one of"),
        ({"scenario": {"name": "x"}, "gains": {"ff": 1}}, r"gains\.ff must be true or false"),
        ({"scenario": {"name": "x"}, "faults": [{"time": 1.0}]}, r"faults\[0\]\.kind: missing"),
    ],
)
def test_bad_values_name_the_file_and_the_key(doc, match):
    with pytest.raises(ScenarioError, match=match):
        validate(doc, SCHEMA, "f.toml")


def test_overrides_parse_toml_values_and_bare_words():
    doc = apply_overrides(
        ok_doc(),
        ["scenario.duration=3", "gains.kp=[2, 2, 2]", "gains.law=pid", "faults[0].time=4.5"],
    )
    out = validate(doc, SCHEMA, "f.toml")
    assert out["scenario"]["duration"] == 3.0 and out["gains"]["kp"] == [2.0, 2.0, 2.0]
    assert out["gains"]["law"] == "pid" and out["faults"][0]["time"] == 4.5
    with pytest.raises(ScenarioError, match="expected key=value"):
        apply_overrides(ok_doc(), ["scenario.duration"])
    with pytest.raises(ScenarioError, match=r"no entry faults\[3\]"):
        apply_overrides(ok_doc(), ["faults[3].time=1"])


def test_dumped_toml_reads_back_identically():
    import tomllib

    out = validate(ok_doc(), SCHEMA, "f.toml")
    text = dumps_toml(out, SCHEMA)
    assert "# [s]" in text
    assert validate(tomllib.loads(text), SCHEMA, "dumped") == out


def test_misspelt_keys_sections_and_choices_get_the_closest_suggestion():
    cases = [
        (
            {"scenario": {"name": "x", "sede": 1}},
            "scenario.sede: unknown key; did you mean 'seed'?",
        ),
        ({"scenario": {"name": "x"}, "gain": {}}, "unknown section [gain]; did you mean 'gains'?"),
        ({"scenario": {"name": "x"}, "gains": {"law": "pdd"}}, "; did you mean 'pd'?"),
    ]
    for doc, needle in cases:
        with pytest.raises(ScenarioError) as exc:
            validate(doc, SCHEMA, "f.toml")
        assert needle in str(exc.value)


def test_a_name_field_takes_plain_names_only():
    schema = {"s": Section({"n": Field("name")})}
    assert validate({"s": {"n": "a-b_c.1"}}, schema, "f.toml") == {"s": {"n": "a-b_c.1"}}
    for bad in ["../a", "a/b", ".a", "", "a" * 101, "a\tb"]:
        with pytest.raises(ScenarioError, match=r"f\.toml: s\.n = .* is not a plain name"):
            validate({"s": {"n": bad}}, schema, "f.toml")


def test_overrides_checked_against_a_schema_name_the_override():
    with pytest.raises(ScenarioError, match=r"--set 'gains\.kpp=1': gains\.kpp: unknown key; did"):
        apply_overrides(ok_doc(), ["gains.kpp=1"], schema=SCHEMA)
    with pytest.raises(ScenarioError, match=r"no entry faults\[1\] \(faults has 1 entry"):
        apply_overrides(ok_doc(), ["faults[1].time=1"], schema=SCHEMA)
    doc = apply_overrides(ok_doc(), ['faults=[{time = 2.0, kind = "stuck"}]'], schema=SCHEMA)
    assert validate(doc, SCHEMA, "f.toml")["faults"] == [{"time": 2.0, "kind": "stuck"}]


def test_strings_with_control_characters_read_back_identically():
    import tomllib

    out = validate(ok_doc(), SCHEMA, "f.toml")
    out["scenario"]["name"] = 'tab\there "q" \\ \x00\x1f\x7f\r\nend'
    text = dumps_toml(out, SCHEMA)
    assert validate(tomllib.loads(text), SCHEMA, "dumped") == out
