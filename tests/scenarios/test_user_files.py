"""A user's own spacecraft file (issue 26): what was wrong or silent.

Joint values in the joint's unit (deg or m), an unreachable start pose named with its file.
"""

import math
import textwrap

import numpy as np
import pytest

from dqspace.dq import translation_from_dq
from dqspace.multibody import frame_pose
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.cli import main
from dqspace.scenarios.spec.config import ScenarioError


def _file(tmp_path, text, name="sat.toml"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(text), encoding="utf-8")
    return f


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
