"""One value per default: the actuators' named defaults and the scenario schema's agree.

The schema (``dqspace.scenarios.spec.schema``) writes its defaults as numbers, so that
reading a scenario does not import the compiled actuators; these tests tie each number to
the named constant the actuator classes use."""

import inspect
import math
import re
from pathlib import Path

import pytest

from dqspace.actuators import (
    MIN_IMPULSE_BIT,
    NOMINAL_WHEEL_SPEED,
    PYRAMID_SKEW,
    RPM,
    MomentumManager,
    ReactionWheel,
    SchmittTrigger,
    Thruster,
    Valves,
    paper_thruster_set,
    pyramid_wheels,
    steering,
    vscmg,
    wheel_control,
)
from dqspace.actuators import reaction_wheels as rw
from dqspace.scenarios.spec.schema import SCHEMA


def _default(section, key):
    return SCHEMA[section].fields[key].default


def _kw(fn, name):
    return inspect.signature(fn).parameters[name].default


def test_minimum_impulse_bit_has_one_default():
    assert MIN_IMPULSE_BIT == 0.01  # the value the embedded scenarios run with [N s]
    assert _default("thrusters", "min_impulse_bit") == MIN_IMPULSE_BIT
    assert Thruster([0.0, 0, 0], [1.0, 0, 0], 1.0).min_impulse_bit == MIN_IMPULSE_BIT
    assert set(paper_thruster_set().min_impulse_bit) == {MIN_IMPULSE_BIT}


def test_thrust_bounds_and_valve_timing_defaults_agree():
    assert _default("thrusters", "max_thrust") == _kw(paper_thruster_set, "sigma_max") == 10.0
    assert _kw(paper_thruster_set, "sigma_min") == 0.0
    for key in ("open_delay", "close_delay", "min_on_time"):
        assert _default("thrusters", key) == _kw(Valves.__init__, key) == 0.0, key
    # the scenario's Schmitt trigger is SchmittTrigger(): its fractions have no schema key
    assert (SchmittTrigger().on_fraction, SchmittTrigger().off_fraction) == (0.75, 0.25)


def test_wheel_defaults_agree():
    assert (
        _default("wheels", "spin_inertia") == rw.SPIN_INERTIA == _kw(pyramid_wheels, "spin_inertia")
    )
    assert _default("wheels", "mass") == rw.WHEEL_MASS == _default("wheel", "mass")
    assert _default("wheels", "max_torque") == rw.MAX_TORQUE
    assert _default("wheels", "max_speed_rpm") * RPM == rw.MAX_SPEED
    assert _default("wheel", "transverse_inertia") == _kw(ReactionWheel, "transverse_inertia")
    for key in ("friction", "coulomb"):  # none unless given
        assert _default("wheels", key) == _kw(ReactionWheel, key) == 0.0, key
        assert _kw(pyramid_wheels, key) == _kw(rw.orthogonal_wheels, key) == 0.0, key
    start = _kw(MomentumManager.__init__, "start_fraction")
    stop = _kw(MomentumManager.__init__, "stop_fraction")
    assert (start, stop) == (wheel_control.DUMP_START_FRACTION, wheel_control.DUMP_STOP_FRACTION)
    assert _default("wheels", "desaturation_start") == start
    assert _default("wheels", "desaturation_stop") == stop


def test_vscmg_defaults_agree():
    assert _default("vscmg", "wheel_speed_rpm") * RPM == NOMINAL_WHEEL_SPEED
    assert _default("vscmg", "radius") == vscmg.MOUNT_RADIUS
    # the schema writes the skew in degrees: the same angle to rounding
    assert math.radians(_default("vscmg", "skew_deg")) == pytest.approx(PYRAMID_SKEW, abs=1e-15)
    assert _default("vscmg", "gimbal_rate_limit") == steering.GIMBAL_RATE_MAX
    assert _default("vscmg", "wheel_accel_limit") == steering.WHEEL_ACCEL_MAX


def test_one_rpm_conversion():
    assert RPM == math.pi / 30.0
    assert NOMINAL_WHEEL_SPEED == 3000.0 * RPM and rw.MAX_SPEED == 6000.0 * RPM
    # written once, where the wheel speeds are (no inline pi / 30 or 2 pi / 60 elsewhere)
    inline = re.compile(r"pi\s*/\s*30|2(\.0)?\s*\*\s*(np\.|math\.)?pi\s*/\s*60")
    folder = Path(rw.__file__).parent
    found = {p.name: n for p in folder.glob("*.py") if (n := len(inline.findall(p.read_text())))}
    assert found == {"reaction_wheels.py": 1}, found
