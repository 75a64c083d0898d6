"""The SI view of a scenario: every schema key in it, each unit converted once (checked
against values known independently), read-only, and errors that name the section and the
closest key."""

import math

import numpy as np
import pytest

from dqspace.scenarios.spec.config import validate
from dqspace.scenarios.spec.scenario import load_scenario
from dqspace.scenarios.spec.schema import SCHEMA
from dqspace.scenarios.spec.si import AS_GIVEN, CONVERSIONS, SI_FIELDS, si_view

DEG = math.pi / 180.0  # [rad] per degree


def _row(section):
    """A table of ``section`` with a value for each required key."""
    out = {}
    for key, f in SCHEMA[section].fields.items():
        if not f.required:
            continue
        out[key] = {
            "float": 1.0,
            "int": 0,
            "vec": [1.0] * (f.length or 1),
            "choice": f.choices[0] if f.choices else "x",
        }.get(f.kind, "x")
    return out


def _every_section():
    """A resolved scenario with one row in each array of tables."""
    doc = {"scenario": {"name": "every-key"}}
    doc.update({name: [_row(name)] for name, sec in SCHEMA.items() if sec.many})
    return validate(doc, SCHEMA, "test")


def test_every_schema_key_is_in_the_view_once():
    cfg = _every_section()
    spec = si_view(cfg)
    for name, sec in SCHEMA.items():
        views = getattr(spec, name)
        views = views if sec.many else (views,)
        assert len(views) == 1
        for view in views:
            # the names of the view map one to one onto the schema's keys
            keys = [SI_FIELDS[name][n].key for n in view]
            assert sorted(keys) == sorted(sec.fields), name
            for n in view:
                f = SI_FIELDS[name][n]
                value = getattr(view, n)
                raw = cfg[name][0][f.key] if sec.many else cfg[name][f.key]
                if f.conversion is None:
                    assert f.si_unit == sec.fields[f.key].unit
                    np.testing.assert_array_equal(value, raw)
                else:
                    assert f.unit in CONVERSIONS and f.si_unit == CONVERSIONS[f.unit].si_unit
    # only the units of the table are converted, and only the joint keys are kept as given
    converted = {(s, f.key) for s, fs in SI_FIELDS.items() for f in fs.values() if f.conversion}
    non_si = {(s, k) for s, sec in SCHEMA.items() for k, f in sec.fields.items()}
    non_si = {(s, k) for s, k in non_si if SCHEMA[s].fields[k].unit in CONVERSIONS}
    assert converted == non_si - AS_GIVEN
    # the joint keys kept as given are those whose unit is the joint's (deg or m)
    joint_unit = {(s, k) for s, sec in SCHEMA.items() for k, f in sec.fields.items()}
    assert {(s, k) for s, k in joint_unit if SCHEMA[s].fields[k].unit == "deg or m"} == AS_GIVEN


def test_each_unit_against_an_independent_value():
    sc = load_scenario(
        "station-keeping",
        [
            "vscmg.wheel_speed_rpm=60",  # one turn per second
            "vscmg.wheel_speed_max_rpm=3000",  # 50 turns per second
            "vscmg.skew_deg=54.735610317245346",  # arccos(1/sqrt 3): the cube's diagonal
            "wheels.initial_speed_rpm=[30, -90]",
            "arm.mount_rpy_deg=[0, -30, 180]",
            "sensors.star_tracker_noise_arcsec=[3600, 1, 0]",  # 1 deg, 1/3600 deg
            "sensors.gyro_bias=3600",  # deg/h: 1 deg/s
            "sensors.gyro_bias_instability=36",  # deg/h: 0.01 deg/s
            "sensors.gyro_arw=60",  # deg/sqrt(h) = 60 deg/sqrt(3600 s): 1 deg/sqrt(s)
            "sensors.gyro_rrw=216000",  # deg/h/sqrt(h): 3600 * 60, so 1 deg/s/sqrt(s)
            "thrusters.misalignment_deg=45",
        ],
    )
    spec = si_view(sc)
    assert spec.vscmg.wheel_speed == pytest.approx(2.0 * math.pi, rel=1e-15)
    assert spec.vscmg.wheel_speed_max == pytest.approx(100.0 * math.pi, rel=1e-15)
    assert spec.vscmg.skew == pytest.approx(math.acos(1.0 / math.sqrt(3.0)), rel=1e-15)
    np.testing.assert_allclose(spec.wheels.initial_speed, [math.pi, -3.0 * math.pi], rtol=1e-15)
    np.testing.assert_allclose(spec.arm.mount_rpy, [0.0, -math.pi / 6.0, math.pi], rtol=1e-15)
    np.testing.assert_allclose(spec.sensors.star_tracker_noise, [DEG, DEG / 3600.0, 0.0])
    assert spec.sensors.gyro_bias == pytest.approx(DEG, rel=1e-15)
    assert spec.sensors.gyro_bias_instability == pytest.approx(0.01 * DEG, rel=1e-15)
    assert spec.sensors.gyro_arw == pytest.approx(DEG, rel=1e-15)
    assert spec.sensors.gyro_rrw == pytest.approx(DEG, rel=1e-15)
    assert spec.thrusters.misalignment == pytest.approx(math.pi / 4.0, rel=1e-15)
    # SI already: as given; the joint keys: as given (deg or m, by joint)
    assert spec.control.rate == sc.config["control"]["rate"]  # Hz
    assert spec.base.mass == sc.config["base"]["mass"] and spec.scenario.name == sc.name
    assert spec.arm.lower_deg.shape == (0,) and spec.faults == ()


def test_the_view_holds_the_numbers_build_and_sim_compute_today_bit_for_bit():
    # the expressions of scenarios/build/system.py and scenarios/sim/plant.py at the time
    # the view was introduced: switching to it must not change a bit
    over = [
        "vscmg.wheel_speed_rpm=3000",
        "vscmg.wheel_speed_max_rpm=6000",
        "wheels.initial_speed_rpm=[1234.5, -777, 6000]",
        "vscmg.initial_gimbal_deg=[12.5, -33, 0.1, 89]",
        "sensors.gyro_bias=1.7",
        "sensors.gyro_bias_instability=0.3",
        "sensors.gyro_arw=0.013",
        "sensors.gyro_rrw=0.021",
        "sensors.star_tracker_noise_arcsec=[5, 7.5, 40]",
        "thrusters.misalignment_deg=0.7",
    ]
    cfg = load_scenario("station-keeping", over).config
    spec = si_view(cfg)
    v, w, s = cfg["vscmg"], cfg["wheels"], cfg["sensors"]
    from dqspace.control.sensors import (
        ARCSEC,
        arw_from_deg_per_root_hour,
        bias_instability_from_deg_per_hour,
        rrw_from_deg_per_hour_root_hour,
    )

    assert spec.vscmg.wheel_speed == v["wheel_speed_rpm"] * np.pi / 30.0
    assert spec.vscmg.wheel_speed_max == v["wheel_speed_max_rpm"] * np.pi / 30.0
    assert spec.vscmg.skew == math.radians(v["skew_deg"])
    np.testing.assert_array_equal(spec.vscmg.initial_gimbal, np.radians(v["initial_gimbal_deg"]))
    np.testing.assert_array_equal(
        spec.wheels.initial_speed, np.asarray(w["initial_speed_rpm"]) * np.pi / 30.0
    )
    assert spec.sensors.gyro_bias == np.radians(s["gyro_bias"]) / 3600.0
    assert spec.sensors.gyro_arw == arw_from_deg_per_root_hour(s["gyro_arw"])
    assert spec.sensors.gyro_rrw == rrw_from_deg_per_hour_root_hour(s["gyro_rrw"])
    assert spec.sensors.gyro_bias_instability == bias_instability_from_deg_per_hour(
        s["gyro_bias_instability"]
    )
    np.testing.assert_array_equal(
        spec.sensors.star_tracker_noise, np.asarray(s["star_tracker_noise_arcsec"]) * ARCSEC
    )
    assert spec.thrusters.misalignment == math.radians(cfg["thrusters"]["misalignment_deg"])


def test_the_view_is_read_only_and_a_copy():
    cfg = load_scenario("station-keeping").config
    spec = si_view(cfg)
    with pytest.raises(AttributeError, match="read-only"):
        spec.vscmg.radius = 1.0
    with pytest.raises(AttributeError, match="read-only"):
        del spec.vscmg.radius
    with pytest.raises(AttributeError, match="read-only"):
        spec.vscmg = None
    with pytest.raises(ValueError, match="read-only"):
        spec.arm.mount_xyz[0] = 1.0
    before = spec.arm.mount_xyz.copy()
    cfg["arm"]["mount_xyz"][0] = 99.0  # the scenario changed afterwards: the view keeps its own
    np.testing.assert_array_equal(spec.arm.mount_xyz, before)


@pytest.mark.parametrize(
    "ask, needle",
    [
        (lambda s: s.vscmg.wheel_sped, "vscmg has no key 'wheel_sped' in the SI view; did you "),
        (lambda s: s.vscmg.wheel_sped, "did you mean 'wheel_speed'?"),
        (lambda s: s.vscmg.wheel_speed_rpm, "vscmg.wheel_speed_rpm [rpm] is vscmg.wheel_speed"),
        (lambda s: s.arm.lower, "arm.lower_deg is kept as given"),
        (lambda s: s.vscmgs, "no section 'vscmgs'; did you mean 'vscmg'?"),
        (lambda s: s.faults[0].tme, "faults[0] has no key 'tme' in the SI view; did you mean"),
    ],
)
def test_an_unknown_name_says_where_and_what_is_closest(ask, needle):
    spec = si_view(
        load_scenario("station-keeping", ["faults=[{time=1.0,thruster=0,kind='failed_off'}]"])
    )
    with pytest.raises(AttributeError) as exc:
        ask(spec)
    assert needle in str(exc.value)
    assert not hasattr(spec.vscmg, "wheel_speed_rpm")  # hasattr sees an AttributeError


def test_only_a_resolved_scenario_has_a_view():
    cfg = load_scenario("station-keeping").config
    with pytest.raises(ValueError, match="no section 'arm'"):
        si_view({k: v for k, v in cfg.items() if k != "arm"})
    with pytest.raises(ValueError, match="vscmg: no key 'radius'"):
        si_view({**cfg, "vscmg": {k: v for k, v in cfg["vscmg"].items() if k != "radius"}})
    with pytest.raises(ValueError, match="unknown section 'dispersions'"):
        si_view({**cfg, "dispersions": {}})
