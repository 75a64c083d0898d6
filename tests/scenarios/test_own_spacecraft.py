"""Bring your own spacecraft: any base, arm, thrusters and momentum devices from a file.

References: momentum bookkeeping (the system's momentum changes by exactly the external
impulse: thrusters and disturbance), the base holding its pose, and the flight software's
commands against the linearisation's state feedback built from the same composition.
"""

import copy
import math
import textwrap

import numpy as np
import pytest

from dqspace.control import JointReference, StationKeepingFeedback
from dqspace.dq import dq_from_rpy_deg
from dqspace.multibody import momentum
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.flight import flight_software
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.cli import main
from dqspace.scenarios.sim.metrics import summarize
from dqspace.scenarios.spec.config import ScenarioError
from support.books import expected_momentum_change as _expected_momentum_change
from support.books import momentum_closes as _momentum_closes
from support.scenario_rows import schema_row, wheel_row

SK = "station-keeping"


def _scenario(tmp_path, text, name="own.toml", overrides=()):
    f = tmp_path / name
    f.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_scenario(f, list(overrides))


# ------------------------------------------------------------------ the file format


URDF_2LINK = """<?xml version="1.0"?>
<robot name="two">
  <link name="root"><inertial><mass value="0.5"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="root"/><child link="l1"/>
    <origin xyz="0 0 0.05"/><axis xyz="0 0 1"/></joint>
  <link name="l1"><inertial><origin xyz="0.1 0 0"/><mass value="1.0"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="4e-3" iyz="0" izz="4e-3"/></inertial></link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.2 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="5" velocity="1.5"/></joint>
  <link name="l2"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
    <inertia ixx="5e-4" ixy="0" ixz="0" iyy="2e-3" iyz="0" izz="2e-3"/></inertial></link>
  <joint name="tip" type="fixed"><parent link="l2"/><child link="tip"/>
    <origin xyz="0.2 0 0"/></joint>
  <link name="tip"/>
</robot>
"""


def test_a_urdf_arm_and_a_vscmg_table_are_read_relative_to_the_file(tmp_path):
    (tmp_path / "arms").mkdir()
    (tmp_path / "arms" / "two.urdf").write_text(URDF_2LINK)
    sc = _scenario(
        tmp_path,
        """
        [scenario]
        name = "two-link"
        duration = 0.5
        [arm]
        model = "arms/two.urdf"
        ee_frame = "tip"
        mount_xyz = [0.0, 0.0, 0.15]
        mount_rpy_deg = [0.0, 0.0, 0.0]
        initial_joints_deg = [10.0, 20.0]
        [trajectory]
        type = "initial"
        [vscmg]
        layout = "table"
        initial_gimbal_deg = [5.0, -5.0, 10.0]
        [[vscmg_unit]]
        position = [0.2, 0.0, 0.0]
        gimbal_axis = [1.0, 0.0, 0.0]
        spin_axis = [0.0, 1.0, 0.0]
        [[vscmg_unit]]
        position = [0.0, 0.2, 0.0]
        gimbal_axis = [0.0, 1.0, 0.0]
        spin_axis = [0.0, 0.0, 1.0]
        [[vscmg_unit]]
        position = [0.0, 0.0, -0.2]
        gimbal_axis = [0.0, 0.0, 1.0]
        spin_axis = [1.0, 0.0, 0.0]
        [disturbance]
        torque = [0.02, -0.01, 0.01]
        """,
    )
    assert sc.config["arm"]["model"] == str((tmp_path / "arms" / "two.urdf").resolve())
    sy = build_system(sc.config)
    assert sy.arm_info.names == ["j1", "j2"]
    assert np.isinf(sy.arm_info.torque_limit[0]) and sy.arm_info.torque_limit[1] == 5.0
    assert sy.cluster_model.cluster.K == 3
    res = run(sc, progress=False)
    np.testing.assert_allclose(res["gimbal"][0], np.radians([5.0, -5.0, 10.0]), atol=1e-12)
    assert res.manifest["system"]["arm"]["joints"] == ["j1", "j2"]
    m = summarize(res)
    assert m["base_att_err_max"] < 0.05  # [deg] the VSCMGs hold against the disturbance
    _momentum_closes(res, sy.plant, rtol=2e-3)


def test_include_merges_a_system_file_under_the_scenario(tmp_path):
    (tmp_path / "sat.toml").write_text(
        "[base]\nmass = 40.0\nsize = 0.4\n[thrusters]\nmax_thrust = 8.0\n", encoding="utf-8"
    )
    sc = _scenario(
        tmp_path,
        """
        include = "sat.toml"
        [scenario]
        name = "inc"
        [thrusters]
        max_thrust = 12.0
        """,
    )
    assert sc.config["base"]["mass"] == 40.0 and sc.config["base"]["size"] == 0.4
    assert sc.config["thrusters"]["max_thrust"] == 12.0  # the including file wins
    with pytest.raises(ScenarioError, match="no such file"):
        _scenario(tmp_path, 'include = "missing.toml"\n', name="bad.toml")
    (tmp_path / "loop.toml").write_text('include = "loop.toml"\n')
    with pytest.raises(ScenarioError, match="includes itself"):
        load_scenario(tmp_path / "loop.toml")


def test_bad_system_descriptions_name_the_key(tmp_path):
    bad = [
        ("arm.model=nothing.urdf", "no such URDF file"),
        ("thrusters.layout=table", "needs [[thruster]] rows"),
        ("vscmg.layout=table", "needs [[vscmg_unit]] rows"),
        ("arm.model=dh", "needs a [[dh]] table"),
        ("trajectory.type=waypoints", "at least two [[waypoint]]"),
        ("faults=[{time = 1.0, thruster = 12, kind = 'failed_off'}]", "out of range"),
        ("thruster=[{position = [0, 0, 0], direction = [1, 0, 0]}]", "not used: they need"),
        ("waypoint=[{time = 0, xyz = [0, 0, 1], rpy_deg = [0, 0, 0]}]", "not used: they need"),
    ]
    for override, text in bad:
        with pytest.raises(ScenarioError, match=text.replace("[", r"\[")):
            sc = load_scenario(SK, [override])
            build_system(sc.config)
    with pytest.raises(ScenarioError, match="arm.ee_frame = 'tipp'.*did you mean 'tip'"):
        (tmp_path / "two.urdf").write_text(URDF_2LINK)
        build_system(
            load_scenario(SK, [f"arm.model={tmp_path / 'two.urdf'}", "arm.ee_frame=tipp"]).config
        )


def test_a_thruster_table_is_recorded_in_the_manifest(tmp_path):
    rows = []
    for i, d in enumerate(np.vstack([np.eye(3), -np.eye(3)])):
        rows.append(
            f'[[thruster]]\nname = "t{i}"\nposition = {(-0.15 * d).tolist()}\n'
            f"direction = {d.tolist()}\n"
        )
    sc = _scenario(
        tmp_path,
        '[scenario]\nname = "six"\nduration = 0.3\n[thrusters]\nlayout = "table"\n'
        "max_thrust = 6.0\n" + "\n".join(rows),
    )
    res = run(sc, progress=False)
    table = res.manifest["system"]["thrusters"]
    assert [t["name"] for t in table] == [f"t{i}" for i in range(6)]
    assert table[3]["direction"] == [-1.0, 0.0, 0.0] and table[0]["max_thrust"] == 6.0
    assert res["thrust_cmd"].shape == (len(res.t), 6)


# ------------------------------------------------------------------ random small systems


def _random_dh_rows(rng, n):
    rows = []
    for _ in range(n):
        m = float(rng.uniform(0.3, 2.0))
        s = m * rng.uniform(0.03, 0.1, 3) ** 2
        rows.append(
            {
                "a": float(rng.uniform(0.0, 0.25)),
                "alpha_deg": float(rng.choice([-90.0, 0.0, 90.0])),
                "d": float(rng.uniform(0.0, 0.2)),
                "theta_deg": float(rng.uniform(-30, 30)),
                "joint": "revolute",
                "mass": m,
                "com": rng.uniform(-0.05, 0.05, 3).tolist(),
                "inertia": [s[1] + s[2], s[0] + s[2], s[0] + s[1], 0.0, 0.0, 0.0],
                "lower_deg": -170.0,
                "upper_deg": 170.0,
            }
        )
    return rows


def _random_thrusters(rng, S):
    """S thrusters (4..16) on the faces of a 0.4 m cube whose directions positively span
    3-D (a tetrahedron first), pointing through the centre (force only)."""
    tet = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], float) / math.sqrt(3)
    dirs = list(tet) + [d / np.linalg.norm(d) for d in rng.normal(size=(S - 4, 3))]
    return [
        {
            "name": f"t{i}",
            "position": (-0.2 * d).tolist(),
            "direction": d.tolist(),
            "max_thrust": 0.0,
            "min_impulse_bit": -1.0,
        }
        for i, d in enumerate(dirs)
    ]


def _random_vscmg_units(rng, K):
    units = []
    for i in range(K):
        phi = 2 * math.pi * i / K
        n = np.array([math.cos(phi), math.sin(phi), 0.0])
        g = math.sin(0.9) * n + math.cos(0.9) * np.array([0.0, 0.0, 1.0])
        s = np.cross([0.0, 0.0, 1.0], n)
        units.append(
            schema_row(
                "vscmg_unit",
                {
                    "position": (0.25 * n).tolist(),
                    "gimbal_axis": g.tolist(),
                    "spin_axis": s.tolist(),
                    "wheel_mass": 2.0,
                    "wheel_inertia": [0.01, 0.006],
                    "gimbal_mass": 1.0,
                    "gimbal_inertia": [0.005, 0.005, 0.005],
                },
            )
        )
    return units


@pytest.mark.parametrize("seed", range(4))
def test_random_small_systems_hold_the_base_and_close_the_momentum_books(seed):
    """Random DH arms, thruster tables and VSCMG clusters; seeds 2 and 3 add a table of
    reaction wheels to the cluster (a mixed device set: the torque the VSCMGs do not
    deliver goes to the wheels)."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 7))
    S = int(rng.integers(4, 17))
    K = int(rng.integers(3, 7))
    cfg = copy.deepcopy(load_scenario(SK).config)
    cfg["scenario"].update(duration=1.0, name=f"random{seed}")
    cfg["base"].update(mass=float(rng.uniform(20, 80)), size=0.4)
    cfg["arm"].update(
        model="dh",
        mount_xyz=[0.0, 0.0, 0.2],
        mount_rpy_deg=[0.0, 0.0, 0.0],
        initial_joints_deg=rng.uniform(-40, 40, n).tolist(),
    )
    cfg["dh"] = _random_dh_rows(rng, n)
    cfg["trajectory"]["type"] = "initial"
    cfg["thrusters"].update(layout="table", pwm=False, max_thrust=20.0)
    cfg["thruster"] = _random_thrusters(rng, S)
    cfg["vscmg"].update(layout="table", initial_gimbal_deg=rng.uniform(-20, 20, K).tolist())
    cfg["vscmg_unit"] = _random_vscmg_units(rng, K)
    cfg["disturbance"].update(
        force=rng.uniform(-0.5, 0.5, 3).tolist(), torque=rng.uniform(-0.05, 0.05, 3).tolist()
    )
    W = 0
    if seed >= 2:  # drawn after the rest: seeds 0 and 1 are the systems they were
        W = int(rng.integers(3, 6))
        cfg["wheels"].update(
            enabled=True, layout="table", initial_speed_rpm=rng.uniform(-300, 300, W).tolist()
        )
        cfg["wheel"] = _random_wheels(rng, W)
    sy = build_system(cfg)
    assert sy.arm_info.n == n and sy.thrusters.n == S and sy.cluster_model.cluster.K == K
    assert (sy.wheel_model.array.n if W else 0) == W and (sy.wheel_model is None) == (W == 0)
    res = run(cfg, progress=False)
    m = summarize(res)
    assert m["base_pos_err_max"] < 2e-3  # [m] the thrusters hold it against the disturbance
    assert m["base_att_err_max"] < 0.2  # [deg]
    _momentum_closes(res, sy.plant, rtol=2e-3)


def _random_devices_and_disturbance(cfg, rng, *, vscmg):
    """A random VSCMG table (``vscmg``) or a pyramid of wheels, then a random constant
    disturbance on the base, drawn from ``rng`` in that order."""
    if vscmg:
        K = int(rng.integers(3, 7))
        cfg["vscmg"].update(layout="table", initial_gimbal_deg=rng.uniform(-20, 20, K).tolist())
        cfg["vscmg_unit"] = _random_vscmg_units(rng, K)
    else:
        cfg["vscmg"]["enabled"] = False
        cfg["wheels"].update(enabled=True, layout="pyramid")
    cfg["disturbance"].update(
        force=rng.uniform(-0.5, 0.5, 3).tolist(), torque=rng.uniform(-0.05, 0.05, 3).tolist()
    )


def _random_servicer_urdf(rng, n):
    """A URDF of a whole servicer: a base link (rotated inertial frame) and an n-joint arm
    hanging from it at random joint origins."""

    def inertial(m, size):
        s = m * size**2
        ixx, iyy, izz = s[1] + s[2], s[0] + s[2], s[0] + s[1]
        xyz = " ".join(f"{x:.6f}" for x in rng.uniform(-0.03, 0.03, 3))
        rpy = " ".join(f"{x:.6f}" for x in rng.uniform(-0.5, 0.5, 3))
        return (
            f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{m:.6f}"/>'
            f'<inertia ixx="{ixx:.6e}" ixy="0" ixz="0" iyy="{iyy:.6e}" iyz="0" izz="{izz:.6e}"/>'
            "</inertial>"
        )

    parts = [f'<link name="bus">{inertial(rng.uniform(20, 80), rng.uniform(0.3, 0.5, 3))}</link>']
    parent = "bus"
    for i in range(n):
        axis = ["1 0 0", "0 1 0", "0 0 1"][int(rng.integers(3))]
        xyz = "0.1 0 0.25" if i == 0 else f"{rng.uniform(0.05, 0.2):.4f} 0 0"
        rpy = " ".join(f"{x:.4f}" for x in rng.uniform(-0.4, 0.4, 3))
        parts.append(
            f'<joint name="q{i}" type="revolute"><parent link="{parent}"/>'
            f'<child link="l{i}"/><origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            '<limit lower="-3" upper="3" effort="100" velocity="3"/></joint>'
        )
        m = rng.uniform(0.3, 2.0)
        parts.append(f'<link name="l{i}">{inertial(m, rng.uniform(0.03, 0.1, 3))}</link>')
        parent = f"l{i}"
    parts.append(
        f'<joint name="tool_joint" type="fixed"><parent link="{parent}"/><child link="tool"/>'
        '<origin xyz="0.1 0 0"/></joint><link name="tool"/>'
    )
    return '<?xml version="1.0"?><robot name="servicer">' + "".join(parts) + "</robot>"


@pytest.mark.parametrize("seed", range(4))
def test_random_armless_and_urdf_based_systems_hold_the_base_and_close_the_books(seed, tmp_path):
    """Seeds 0, 1: bases without an arm (VSCMGs, then reaction wheels); 2, 3: a whole
    servicer from one URDF (the base's link and an arm below it)."""
    rng = np.random.default_rng(200 + seed)
    S = int(rng.integers(4, 17))
    cfg = copy.deepcopy(load_scenario(SK, ["arm.model='none'"]).config)
    cfg["scenario"].update(duration=1.0, name=f"random-bus{seed}")
    cfg["metrics"]["transient"] = 0.5
    cfg["thrusters"].update(layout="table", pwm=False, max_thrust=20.0)
    cfg["thruster"] = _random_thrusters(rng, S)
    if seed < 2:
        n = 0
        m = float(rng.uniform(20, 80))
        s = m * rng.uniform(0.2, 0.4, 3) ** 2 / 12
        cfg["base"].update(
            mass=m, size=0.4, com=rng.uniform(-0.02, 0.02, 3).tolist(),
            inertia=[s[1] + s[2], s[0] + s[2], s[0] + s[1], 0.0, 0.0, 0.0],
        )  # fmt: skip
    else:
        n = int(rng.integers(1, 6))
        urdf = tmp_path / "servicer.urdf"
        urdf.write_text(_random_servicer_urdf(rng, n))
        cfg["base"].update(urdf=str(urdf), link="bus", size=0.4)
        cfg["arm"].update(
            model=str(urdf),
            root_link="bus",
            ee_frame="tool",
            initial_joints_deg=rng.uniform(-40, 40, n).tolist(),
        )
        cfg["trajectory"]["type"] = "initial"
    _random_devices_and_disturbance(cfg, rng, vscmg=seed % 2 == 0)
    sy = build_system(cfg)
    assert sy.arm_info.n == n and sy.thrusters.n == S
    res = run(cfg, progress=False)
    m = summarize(res)
    assert m["base_pos_err_max"] < 2e-3  # [m] the thrusters hold it against the disturbance
    assert m["base_att_err_max"] < 0.2  # [deg]
    assert math.isnan(m["ee_max"]) == (n == 0)  # measured exactly when there is an arm
    _momentum_closes(res, sy.plant, rtol=2e-3)


def _random_chain(rng, parent, prefix, n, origin):
    """URDF text of an n-joint chain named <prefix>0.. hanging from ``parent`` at
    ``origin`` (xyz), random axes and link masses, ending in the frame <prefix>tool."""
    parts = []
    for i in range(n):
        axis = ["1 0 0", "0 1 0", "0 0 1"][int(rng.integers(3))]
        xyz = origin if i == 0 else f"{rng.uniform(0.05, 0.2):.4f} 0 0"
        rpy = " ".join(f"{x:.4f}" for x in rng.uniform(-0.4, 0.4, 3))
        m = rng.uniform(0.3, 2.0)
        s = m * rng.uniform(0.03, 0.1, 3) ** 2
        parts.append(
            f'<joint name="{prefix}{i}" type="revolute"><parent link="{parent}"/>'
            f'<child link="{prefix}l{i}"/><origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            '<limit lower="-3" upper="3" effort="100" velocity="3"/></joint>'
            f'<link name="{prefix}l{i}"><inertial><origin xyz="0.02 0 0"/>'
            f'<mass value="{m:.6f}"/><inertia ixx="{s[1] + s[2]:.6e}" ixy="0" ixz="0" '
            f'iyy="{s[0] + s[2]:.6e}" iyz="0" izz="{s[0] + s[1]:.6e}"/></inertial></link>'
        )
        parent = f"{prefix}l{i}"
    parts.append(
        f'<joint name="{prefix}tool_joint" type="fixed"><parent link="{parent}"/>'
        f'<child link="{prefix}tool"/><origin xyz="0.1 0 0"/></joint><link name="{prefix}tool"/>'
    )
    return "".join(parts)


@pytest.mark.parametrize("seed", range(4))
def test_random_two_arm_systems_hold_the_base_and_close_the_books(seed, tmp_path):
    """Two arms on a random base ([arm] and one [[extra_arm]], issue 26 E).  Seeds 0, 1: a
    DH arm and a URDF arm mounted at random places (VSCMGs, then reaction wheels); 2, 3:
    a servicer from one URDF, the base's link carrying both arms (the extra one from its
    root_link).  Each arm holds its initial pose (task 'initial')."""
    rng = np.random.default_rng(300 + seed)
    S = int(rng.integers(4, 17))
    n1, n2 = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    cfg = copy.deepcopy(load_scenario(SK).config)
    cfg["scenario"].update(duration=1.0, name=f"random-two{seed}")
    cfg["metrics"]["transient"] = 0.5
    cfg["thrusters"].update(layout="table", pwm=False, max_thrust=20.0)
    cfg["thruster"] = _random_thrusters(rng, S)
    cfg["trajectory"]["type"] = "initial"
    extra = {"name": "second", "initial_joints_deg": rng.uniform(-40, 40, n2).tolist()}
    if seed < 2:
        cfg["base"].update(mass=float(rng.uniform(20, 80)), size=0.4)
        cfg["arm"].update(
            model="dh", mount_xyz=[0.0, 0.15, 0.2], mount_rpy_deg=[0.0, 0.0, 0.0],
            initial_joints_deg=rng.uniform(-40, 40, n1).tolist(),
        )  # fmt: skip
        cfg["dh"] = _random_dh_rows(rng, n1)
        urdf = tmp_path / "arm.urdf"
        chain = _random_chain(rng, "root", "b", n2, "0 0 0.05")
        root = '<link name="root"><inertial><mass value="0.5"/><inertia ixx="1e-3" ixy="0" '
        root += 'ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>'
        urdf.write_text(f'<robot name="arm">{root}{chain}</robot>')
        extra.update(
            model=str(urdf), ee_frame="btool", mount_xyz=rng.uniform(-0.2, 0.2, 3).tolist(),
            mount_rpy_deg=rng.uniform(-40, 40, 3).tolist(),
        )  # fmt: skip
    else:
        urdf = tmp_path / "servicer.urdf"
        m = rng.uniform(20, 80)
        s = m * rng.uniform(0.3, 0.5, 3) ** 2 / 12
        bus = (
            f'<link name="bus"><inertial><origin xyz="0 0 0"/><mass value="{m:.6f}"/>'
            f'<inertia ixx="{s[1] + s[2]:.6e}" ixy="0" ixz="0" iyy="{s[0] + s[2]:.6e}" '
            f'iyz="0" izz="{s[0] + s[1]:.6e}"/></inertial></link>'
        )
        chains = _random_chain(rng, "bus", "a", n1, "0.1 0.15 0.25")
        chains += _random_chain(rng, "bus", "b", n2, "0.1 -0.15 0.25")
        urdf.write_text(f'<robot name="servicer">{bus}{chains}</robot>')
        cfg["base"].update(urdf=str(urdf), link="bus", size=0.4)
        cfg["arm"].update(
            model=str(urdf), root_link="bus", ee_frame="atool",
            initial_joints_deg=rng.uniform(-40, 40, n1).tolist(),
        )  # fmt: skip
        extra.update(model=str(urdf), root_link="bl0", ee_frame="btool")
    cfg["extra_arm"] = [schema_row("extra_arm", extra)]
    _random_devices_and_disturbance(cfg, rng, vscmg=seed % 2 == 0)
    sy = build_system(cfg)
    assert sy.arm_info.n == n1 + n2 and sy.extra_arms[0].info.n == n2
    assert sy.extra_arms[0].v0 == 6 + n1  # the second arm's joints after the first's
    res = run(cfg, progress=False)
    m = summarize(res)
    print(
        f"seed {seed}: n = {n1} + {n2}, S = {S}: {m['base_pos_err_max']:.2e} m, "
        f"{m['base_att_err_max']:.2e} deg, ee {m['ee_max']:.2e}, {m['ee_max_second']:.2e} m"
    )
    assert m["base_pos_err_max"] < 2e-3  # [m] the thrusters hold it against the disturbance
    assert m["base_att_err_max"] < 0.2  # [deg]
    assert m["ee_max"] < 1e-3 and m["ee_max_second"] < 1e-3  # each arm holds its pose
    _momentum_closes(res, sy.plant, rtol=2e-3)


# ------------------------------------------------------------------ controllers


def test_the_linearisation_feedback_gives_the_runners_commands_at_random_states():
    sc = load_scenario(SK, ["vscmg.enabled=false", "thrusters.enabled=false"])
    sy = build_system(sc.config)
    fsw = flight_software(sy)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = sy.q0.copy()
        q[8:15] += rng.normal(0, 0.05, 7)
        q[:8] = dq_from_rpy_deg(rng.normal(0, 2, 3), rng.normal(0, 0.01, 3))
        v = rng.normal(0, 0.05, sy.plant.nv)
        out = fsw.step(0.0, q, v)
        assert out.status == 0
        # the same composition as a state feedback: the arm's joint reference of this tick
        jref = JointReference(out.law.q_r, out.law.v_r, out.law.a_r)
        fb = StationKeepingFeedback(sy.base, sy.arm.law, sy.base_reference, jref)
        u = fb(0.0, q, v)
        np.testing.assert_allclose(u[:3], out.law.wrench[3:], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(u[3:6], out.law.wrench[:3], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(u[6:], out.law.tau, rtol=1e-10, atol=1e-10)
        np.testing.assert_array_equal(out.estimate.q, q[: sy.controller_model.nq])


class _HoldNothingArm:
    """A user's arm controller: zero torque (the protocol's minimum: ``tau``)."""

    def __init__(self, model, gains):
        self.n = model.nv - 6

    def __call__(self, t, state, reference, *, base_force=None):
        class C:
            tau = np.zeros(self.n)

        return C()


def test_a_users_controller_class_runs_in_the_same_loop(monkeypatch):
    import sys
    import types

    mod = types.ModuleType("my_gnc")
    mod.HoldNothingArm = _HoldNothingArm
    monkeypatch.setitem(sys.modules, "my_gnc", mod)
    sc = load_scenario(SK, ["scenario.duration=0.3", "arm_controller.law=my_gnc:HoldNothingArm"])
    res = run(sc, progress=False)
    assert np.all(res["arm_tau"] == 0.0) and res.status == "complete"
    with pytest.raises(ScenarioError, match="cannot import 'no_such_module'"):
        build_system(load_scenario(SK, ["arm_controller.law=no_such_module:X"]).config)
    with pytest.raises(ScenarioError, match="has no 'Nope'"):
        build_system(load_scenario(SK, ["arm_controller.law=my_gnc:Nope"]).config)


def test_dqspace_new_writes_a_scenario_that_runs_as_written(tmp_path, capsys):
    assert main(["new", "mysat", "--dir", str(tmp_path)]) == 0
    f = tmp_path / "mysat" / "scenario.toml"
    assert f.is_file() and (tmp_path / "mysat" / "arm.urdf").is_file()
    sc = load_scenario(f, ["scenario.duration=1.5", "metrics.transient=1.0"])
    assert sc.name == "mysat"
    res = run(sc, progress=False)
    m = summarize(res)
    assert res.status == "complete"
    assert m["base_pos_err_max"] < 1e-3 and m["base_att_err_max"] < 0.05
    assert m["ee_max"] < 5e-3
    assert main(["new", "mysat", "--dir", str(tmp_path)]) == 2  # refuses to overwrite
    assert "already exists" in capsys.readouterr().err


def _random_wheels(rng, W):
    """W wheels (3..6): the three base axes, then random axes."""
    axes = list(np.eye(3)) + [a / np.linalg.norm(a) for a in rng.normal(size=(W - 3, 3))]
    return [wheel_row(a, 0.15 * a) for a in axes]


@pytest.mark.parametrize("seed", range(3))
def test_random_systems_with_wheel_tables_hold_the_base_and_close_the_books(seed):
    rng = np.random.default_rng(200 + seed)
    n, S, W = int(rng.integers(1, 7)), int(rng.integers(4, 17)), int(rng.integers(3, 7))
    cfg = copy.deepcopy(load_scenario(SK).config)
    cfg["scenario"].update(duration=1.0, name=f"rw{seed}")
    cfg["base"].update(mass=float(rng.uniform(20, 80)), size=0.4)
    cfg["arm"].update(
        model="dh",
        mount_xyz=[0.0, 0.0, 0.2],
        mount_rpy_deg=[0.0, 0.0, 0.0],
        initial_joints_deg=rng.uniform(-40, 40, n).tolist(),
    )
    cfg["dh"] = _random_dh_rows(rng, n)
    cfg["trajectory"]["type"] = "initial"
    cfg["thrusters"].update(layout="table", pwm=False, max_thrust=20.0)
    cfg["thruster"] = _random_thrusters(rng, S)
    cfg["vscmg"]["enabled"] = False
    cfg["wheels"].update(
        enabled=True, layout="table", initial_speed_rpm=rng.uniform(-500, 500, W).tolist()
    )
    cfg["wheel"] = _random_wheels(rng, W)
    cfg["disturbance"].update(
        force=rng.uniform(-0.5, 0.5, 3).tolist(), torque=rng.uniform(-0.05, 0.05, 3).tolist()
    )
    sy = build_system(cfg)
    assert sy.wheel_model.array.n == W and sy.arm_info.n == n and sy.thrusters.n == S
    res = run(cfg, progress=False)
    m = summarize(res)
    np.testing.assert_allclose(
        res["rw_speed"][0],
        np.radians(6.0) * np.asarray(cfg["wheels"]["initial_speed_rpm"]),
        rtol=1e-12,
    )  # rpm -> rad/s is pi/30 = 6 deg
    assert m["base_pos_err_max"] < 2e-3 and m["base_att_err_max"] < 0.2
    assert m["rw_saturated_ticks"] == 0
    _momentum_closes(res, sy.plant, rtol=2e-3)


def test_momentum_dumping_slows_the_wheels_while_the_base_holds():
    # the paper's 12 thrusters in wrench mode give torque authority; the wheels start fast
    sc = load_scenario(
        SK,
        [
            "scenario.duration=4",
            "vscmg.enabled=false",
            "wheels.enabled=true",
            "wheels.layout=orthogonal",
            "wheels.initial_speed_rpm=[5200, -5000, 5100]",
            "wheels.desaturation_gain=0.05",
            "thrusters.mode=wrench",
            "thrusters.pwm=false",
            "trajectory.type=initial",
        ],
    )
    res = run(sc, progress=False)
    # orthogonal wheels: |h| = I_s |Omega|; dumping asks h' = -k h of the thrusters, which the
    # wheels take (within their 0.5 N m): |h| decays as exp(-k t)
    h = np.linalg.norm(res["rw_speed"], axis=1)
    t = res.t
    np.testing.assert_allclose(h / h[0], np.exp(-0.05 * t), rtol=0.01)
    assert np.all(np.abs(res["dump_torque"][1:]) > 0.0)
    m = summarize(res)
    assert m["base_att_err_max"] < 0.05 and m["base_pos_err_max"] < 1e-3
    _momentum_closes(res, build_system(sc.config).plant, rtol=2e-3)


def test_an_arm_link_named_like_the_base_is_renamed_and_a_floating_urdf_refused(tmp_path):
    from dqspace.multibody import model_from_urdf
    from dqspace.multibody.assembly import mount_arm

    urdf = URDF_2LINK.replace('"root"', '"base"')  # a massive link called "base"
    (tmp_path / "two.urdf").write_text(urdf)
    sy = build_system(
        load_scenario(
            SK,
            [f"arm.model={tmp_path / 'two.urdf'}", "arm.ee_frame=tip", "trajectory.type=initial"],
        ).config
    )
    assert "arm_base" in sy.plant.body_names and sy.arm_info.names == ["j1", "j2"]
    with pytest.raises(ValueError, match="FREE"):
        mount_arm(sy.controller_model, model_from_urdf(urdf, floating=True))


def test_plant_errors_reach_the_plant_only_and_the_loop_still_holds():
    over = [
        "scenario.duration=3",
        "arm.payload_mass=2",
        "plant.base_mass_error=0.1",
        "plant.base_com_error=[0.01, -0.01, 0.005]",
        "plant.base_inertia_error=[0.1, -0.05, 0.0]",
        "plant.link_mass_error=-0.05",
        "plant.payload_mass_error=0.5",
    ]
    nominal = build_system(load_scenario(SK, over[:2]).config)
    sy = build_system(load_scenario(SK, over).config)
    arm_nominal = sum(nominal.plant.mass[1:8])
    expected = nominal.plant.total_mass + 0.1 * 27.0 - 0.05 * arm_nominal + 0.5
    assert sy.plant.total_mass == pytest.approx(expected)
    np.testing.assert_allclose(sy.plant.com[0], nominal.plant.com[0] + [0.01, -0.01, 0.005])
    # the controllers keep the nominal model
    assert sy.controller_model.total_mass == pytest.approx(nominal.controller_model.total_mass)
    res = run(load_scenario(SK, over), progress=False)
    m = summarize(res)
    assert m["base_pos_err_max"] < 1e-3 and m["ee_max"] < 1e-3
    _momentum_closes(res, sy.plant, rtol=2e-3)
    with pytest.raises(ScenarioError, match="needs a payload"):
        build_system(load_scenario(SK, ["plant.payload_mass_error=1"]).config)


def test_misaligned_thrusters_deliver_what_the_momentum_books_say_not_what_was_planned():
    over = [
        "scenario.duration=2",
        "thrusters.pwm=false",
        "thrusters.misalignment_deg=3",
        "thrusters.magnitude_error=0.1",
        "disturbance.force=[0.3, -0.2, 0.1]",
    ]
    sc = load_scenario(SK, over)
    sy = build_system(sc.config)
    H, Ht = sy.thrusters.H, sy.thruster_H_true
    tilt = np.degrees(
        np.arccos(np.clip(np.sum(H[:3] * Ht[:3], 0) / np.linalg.norm(Ht[:3], axis=0), -1, 1))
    )
    assert 0.1 < np.median(tilt) < 10.0  # degrees of the drawn misalignments
    res = run(sc, progress=False)
    _momentum_closes(res, sy.plant, rtol=2e-3)  # the true thrusters' impulse
    q, v = res["q"], res["v"]
    dp = momentum(sy.plant, q[-1], v[-1]).linear - momentum(sy.plant, q[0], v[0]).linear
    J_planned, _ = _expected_momentum_change(res, "wrench_thr")
    assert np.linalg.norm(dp - J_planned) > 10 * 2e-3 * np.linalg.norm(J_planned)
    assert summarize(res)["base_pos_err_max"] < 2e-3  # the feedback absorbs the errors
