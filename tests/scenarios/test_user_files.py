"""A user's own spacecraft file (issue 26): what was wrong or silent.

Joint values in the joint's unit (deg or m), a disabled section's included tables left
alone, device axes typed to a few digits normalised with a warning (far-off ones refused,
stating the tolerance), implausible masses and inertias warned about (a key silences it;
an inertia no rigid body has refused naming the key), an unreachable start pose named with
its file.  (A folder standing for its ``scenario.toml``: ``test_scenario_folders.py``;
strict JSON: ``test_strict_json.py``.)
"""

import logging
import math
import textwrap

import numpy as np
import pytest

import dqspace.dq as dq
from dqspace.dq import translation_from_dq
from dqspace.dq.checks import MIN_AXIS_NORM
from dqspace.multibody import frame_pose
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.cli import main
from dqspace.scenarios.spec import physical
from dqspace.scenarios.spec.config import ScenarioError, embedded_scenarios

SK = "station-keeping"


def _file(tmp_path, text, name="sat.toml"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(text), encoding="utf-8")
    return f


@pytest.fixture
def notes():
    """The load-time warnings (logger ``dqspace.scenario``) as they are logged, whatever
    handlers the command line set up (it stops propagation at ``dqspace``)."""
    got = []

    class Catch(logging.Handler):
        def emit(self, record):
            got.append(record.getMessage())

    log = logging.getLogger("dqspace.scenario")
    handler = Catch(logging.WARNING)
    log.addHandler(handler)
    yield got
    log.removeHandler(handler)


# ------------------------------------------------------------------ 1. joint units

URDF_RP = """<?xml version="1.0"?>
<robot name="rp">
  <link name="root"><inertial><mass value="0.5"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
  <joint name="turn" type="revolute"><parent link="root"/><child link="l1"/>
    <origin xyz="0 0 0.05"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="5" velocity="1.5"/></joint>
  <link name="l1"><inertial><origin xyz="0.1 0 0"/><mass value="1.0"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="4e-3" iyz="0" izz="4e-3"/></inertial></link>
  <joint name="slide" type="prismatic"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.2 0 0"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.5" effort="50" velocity="0.2"/></joint>
  <link name="l2"><inertial><origin xyz="0.05 0 0"/><mass value="0.5"/>
    <inertia ixx="5e-4" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
  <joint name="tool" type="fixed"><parent link="l2"/><child link="tip"/>
    <origin xyz="0.1 0 0"/></joint>
  <link name="tip"/>
</robot>
"""


def test_a_prismatic_joint_takes_metres_and_a_revolute_one_degrees(tmp_path):
    (tmp_path / "rp.urdf").write_text(URDF_RP)
    f = _file(
        tmp_path,
        """
        [scenario]
        name = "rp"
        [arm]
        model = "rp.urdf"
        ee_frame = "tip"
        mount_xyz = [0.0, 0.0, 0.15]
        mount_rpy_deg = [0.0, 0.0, 0.0]
        initial_joints_deg = [30.0, 0.1]
        lower_deg = [-90.0, 0.05]
        upper_deg = [90.0, 0.3]
        [trajectory]
        type = "initial"
        """,
    )
    sc = load_scenario(f)
    sy = build_system(sc.config)
    info = sy.arm_info
    assert info.names == ["turn", "slide"] and info.prismatic.tolist() == [False, True]
    # the prismatic joint's values land in the model as given, in metres
    assert info.lower.tolist() == [-math.pi / 2, 0.05]
    assert info.upper.tolist() == [math.pi / 2, 0.3]
    np.testing.assert_allclose(sy.q0[8:10], [math.radians(30.0), 0.1], rtol=0, atol=1e-9)
    # the end-effector where those values put it: 0.2 + 0.1 m slide + 0.1 m tool along the
    # turned x axis, 0.15 + 0.05 m up
    r = translation_from_dq(frame_pose(sy.plant, sy.q0, "tip"))
    want = [0.4 * math.cos(math.radians(30)), 0.4 * math.sin(math.radians(30)), 0.2]
    np.testing.assert_allclose(r, want, rtol=0, atol=1e-9)
    # `dqspace show` states the unit
    shown = sc.to_toml()
    assert "lower_deg = [-90.0, 0.05]  # [deg or m]" in shown
    assert "initial_joints_deg = [30.0, 0.1]  # [deg or m]" in shown


# ------------------------------------------------------------- 2. disabled sections

SAT_WITH_DEVICES = """
[scenario]
name = "sat"
[wheels]
enabled = true
layout = "table"
initial_speed_rpm = [100.0, 200.0, 300.0, 400.0, 500.0]
[[wheel]]
axis = [0.0, 0.0, 0.0]
spin_inertia = 0.01
max_torque = 0.1
max_speed_rpm = 5000.0
[vscmg]
enabled = true
layout = "table"
initial_gimbal_deg = [1.0, 2.0, 3.0]
[[vscmg_unit]]
position = [0.2, 0.0, 0.0]
gimbal_axis = [0.0, 0.0, 3.0]
spin_axis = [0.0, 1.0, 1.0]
[thrusters]
enabled = true
layout = "table"
weights = [1.0, 2.0, 3.0]
[[thruster]]
position = [-0.2, 0.0, 0.0]
direction = [0.0, 0.0, 0.0]
"""


def test_a_disabled_section_over_an_included_system_is_not_checked(tmp_path):
    sat = _file(tmp_path, SAT_WITH_DEVICES)
    # every device table of the included file is wrong for the enabled device
    for on, needle in [
        ("vscmg", "vscmg.initial_gimbal_deg has 3 values: give 1 values"),
        ("wheels", "wheels.initial_speed_rpm has 5 values: give 1 values"),
        ("thrusters", "thruster[0].direction = [0, 0, 0] is zero"),
    ]:
        off = [f"{s}.enabled=false" for s in ("vscmg", "wheels", "thrusters") if s != on]
        with pytest.raises(ScenarioError) as e:
            load_scenario(sat, off)
        assert needle in str(e.value), on
    f = _file(
        tmp_path,
        """
        include = "sat.toml"
        [scenario]
        name = "off"
        [wheels]
        enabled = false
        [vscmg]
        enabled = false
        [thrusters]
        enabled = false
        """,
        "off.toml",
    )
    sy = build_system(load_scenario(f).config)
    assert sy.wheel_model is None and sy.cluster_model is None and sy.thrusters is None
    assert sy.plant.nv == 6 + 7  # the base and the iiwa, no device body


# ------------------------------------------------------------------ 3. device axes


def _quarter_turns(v, i):
    """``v`` turned by ``i`` quarter turns about z (exactly: a permutation and a sign)."""
    for _ in range(i):
        v = [-v[1], v[0], v[2]]
    return v


def _units(g, s):
    """Four VSCMG units: unit 0 with the axes ``g``, ``s``, unit i with them turned by i
    quarter turns about z (a pyramid when ``g`` leans out of the xy plane)."""
    rows = []
    for i in range(4):
        gi, si = _quarter_turns(g, i), _quarter_turns(s, i)
        rows.append(f"[[vscmg_unit]]\nposition = {_quarter_turns([0.2, 0.0, 0.0], i)}\n")
        rows.append(f"gimbal_axis = {gi}\nspin_axis = {si}\n")
    return '[scenario]\nname = "axes"\n[vscmg]\nlayout = "table"\n' + "".join(rows)


def test_vscmg_axes_typed_to_four_digits_are_normalised_with_a_warning(tmp_path, notes):
    g4, s4 = [0.5774, 0.5774, 0.5774], [0.4082, 0.4082, -0.8165]
    sc = load_scenario(_file(tmp_path, _units(g4, s4)))
    assert any("vscmg_unit[0].gimbal_axis" in n and "normalised" in n for n in notes)
    assert any("vscmg_unit[0]: spin_axis" in n and "made orthogonal" in n for n in notes)
    for i, row in enumerate(sc.config["vscmg_unit"]):
        g, s = np.array(row["gimbal_axis"]), np.array(row["spin_axis"])
        assert abs(np.linalg.norm(g) - 1) < 1e-15 and abs(np.linalg.norm(s) - 1) < 1e-15
        assert abs(g @ s) < 1e-15
        # the exact axes the digits stand for, to their rounding
        g_exact = _quarter_turns((np.ones(3) / math.sqrt(3)).tolist(), i)
        s_exact = _quarter_turns((np.array([1, 1, -2]) / math.sqrt(6)).tolist(), i)
        np.testing.assert_allclose(g, g_exact, rtol=0, atol=1e-4)
        np.testing.assert_allclose(s, s_exact, rtol=0, atol=1e-4)
    assert build_system(sc.config).cluster_model.cluster.K == 4
    # axes within the devices' own tolerance are taken as they are, without a word
    notes.clear()
    exact = [0.0, 0.0, 1.0 + 0.5e-9], [1.0, 0.0, 0.0]
    sc = load_scenario(_file(tmp_path, _units(*exact), "exact.toml"))
    assert not notes and sc.config["vscmg_unit"][0]["gimbal_axis"] == exact[0]


@pytest.mark.parametrize(
    "g, s, needle",
    [
        (
            [0.0, 0.0, 1.02],
            [1.0, 0.0, 0.0],
            "vscmg_unit[0].gimbal_axis = [0, 0, 1.02] is not a unit",
        ),
        ([0.0, 0.0, 1.0], [0.9, 0.0, 0.0], "vscmg_unit[0].spin_axis = [0.9, 0, 0] is not a unit"),
        ([0.0, 0.0, 1.0], [0.0, 0.9998, 0.02], "spin_axis [0, 0.9998, 0.02] is not orthogonal"),
    ],
)
def test_axes_far_off_are_refused_stating_the_tolerance(tmp_path, g, s, needle):
    with pytest.raises(ScenarioError) as e:
        load_scenario(_file(tmp_path, _units(g, s)))
    msg = str(e.value)
    assert msg.startswith(str(tmp_path / "sat.toml") + ": ") and needle in msg
    assert "0.01" in msg and "1e-09" in msg  # both tolerances stated


def test_wheel_axes_and_thruster_directions_are_directions_up_to_scale(tmp_path, notes):
    rows = "".join(
        f"[[thruster]]\nposition = {(-0.2 * np.array(d)).tolist()}\ndirection = {d}\n"
        for d in ([2, 0, 0], [-1, 0, 0], [0, 1, 1], [0, -1, -1], [0, 1, -1], [0, -1, 1])
    )
    text = f'[scenario]\nname = "dirs"\n[thrusters]\nlayout = "table"\n{rows}'
    sc = load_scenario(_file(tmp_path, text))
    assert not notes
    d = build_system(sc.config).thrusters.thrusters[2].direction
    np.testing.assert_allclose(d, [0, 1 / math.sqrt(2), 1 / math.sqrt(2)], rtol=0, atol=1e-15)
    bad = text.replace("direction = [0, 1, -1]", "direction = [0, 0, 0]")
    with pytest.raises(ScenarioError, match=r"sat\.toml: thruster\[4\]\.direction = .* is zero"):
        load_scenario(_file(tmp_path, bad))


def test_the_tolerances_are_the_devices_own():
    assert physical.AXIS_WARN == dq.AXIS_TOL and physical.MIN_NORM == MIN_AXIS_NORM


# ------------------------------------------------------------------ 4. plausibility

BASE = """
[scenario]
name = "grams"
{flag}
[base]
mass = {mass}
size = 0.8
inertia = [12.0, 14.0, 10.0, 0.0, 0.0, 0.0]
"""


def test_a_base_mass_in_grams_warns_and_the_key_silences_it(tmp_path, notes):
    load_scenario(_file(tmp_path, BASE.format(flag="", mass=150.0)))
    assert not notes  # 150 kg in a 0.8 m cube: 293 kg/m^3
    load_scenario(_file(tmp_path, BASE.format(flag="", mass=150000.0)))
    density = [n for n in notes if "density" in n]
    # 150000 / 0.8^3 = 292968.75 kg/m^3
    assert len(density) == 1 and "2.93e+05 kg/m^3" in density[0] and "grams" in density[0]
    assert density[0].startswith(str(tmp_path / "sat.toml") + ": ")
    # the radius of gyration: sqrt(36 / 300000) = 0.011 m, 0.0274 times the cube's 0.4 m
    gyration = [n for n in notes if "base.inertia" in n]
    assert len(gyration) == 1 and "0.011 m" in gyration[0] and "0.0274 times" in gyration[0]
    notes.clear()
    quiet = BASE.format(flag="plausibility_warnings = false", mass=150000.0)
    load_scenario(_file(tmp_path, quiet))
    assert not notes


@pytest.mark.parametrize(
    "override, key",
    [
        ("wheels.mass=1000", "wheels.mass = 1000 kg"),
        ("arm.payload_mass=5000", "arm.payload_mass = 5000 kg"),
        ("base.mass=0.02", "base.mass = 0.02 kg"),
    ],
)
def test_device_and_payload_masses_in_the_wrong_unit_warn(override, key, notes):
    load_scenario(SK, ["wheels.enabled=true", override])
    assert any(key in n for n in notes), notes


def test_no_embedded_scenario_or_template_warns(tmp_path, notes, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["new", "mine", "-q"]) == 0
    for name in [*embedded_scenarios(), "mine"]:
        load_scenario(name)
    assert not notes


def test_an_inertia_no_rigid_body_has_is_refused_naming_the_key(tmp_path):
    f = _file(tmp_path, BASE.format(flag="", mass=150.0).replace("12.0, 14.0, 10.0", "1, 1, 3"))
    with pytest.raises(ScenarioError) as e:
        run(load_scenario(f), progress=False)
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'sat.toml'}: base.inertia: ") and "triangle" in msg
    over = ["arm.payload_mass=2", "arm.payload_inertia=[0.001, 0.001, 0.003, 0, 0, 0]"]
    with pytest.raises(ScenarioError, match=r"^arm\.payload_inertia: .*triangle"):
        build_system(load_scenario(SK, over).config)


# ------------------------------------------------------- 5. unreachable start pose


def test_an_unreachable_way_point_names_the_file_and_the_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["new", "far", "-q"]) == 0
    sc = load_scenario("far", ["waypoint[0].xyz=[3.0, 0.0, 1.0]"])
    with pytest.raises(ScenarioError) as e:
        run(sc, progress=False)
    msg = str(e.value)
    assert msg.startswith("far/scenario.toml (with waypoint[0].xyz=[3.0, 0.0, 1.0]): ")
    assert "waypoint[0] (xyz = [3.0, 0.0, 1.0]" in msg and "not reachable" in msg
    assert "position [3, 0, 1] m" in msg
