"""Servicers with more than one arm (issue 26, part E): ``[[extra_arm]]``.

References: Pinocchio's own parse of a dual-arm URDF (mass matrix, forward and inverse
dynamics), a physical invariant (two arms moving in mirror symmetry on a mirror-symmetric
base leave its attitude unchanged: the angular momentum they give it cancels), the
momentum books (no external impulse: the momentum stays zero), the analytic forward
kinematics of the planar arms (their way-points).
"""

import math
import textwrap

import numpy as np
import pytest

from dqspace.control.flight.tick import CompiledArmsLaw
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.flight import flight_software
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.campaigns.montecarlo import montecarlo
from dqspace.scenarios.sim.metrics import METRICS, summarize
from dqspace.scenarios.spec.config import ScenarioError
from support.books import momentum_closes

#: [m] the planar arms' links (shoulder to elbow, elbow to wrist, wrist to tool), the
#: shoulders' height and their distance from the base's mirror plane (y = 0)
L1, L2, L3, H, D = 0.4, 0.3, 0.12, 0.25, 0.3


def _planar_arm(p, y, yaw):
    def inertial(m, c, ixx, izz):
        return (
            f'<inertial><origin xyz="0 0 {c}"/><mass value="{m}"/><inertia ixx="{ixx}" '
            f'iyy="{ixx}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial>'
        )

    lim = '<limit lower="-2.6" upper="2.6" effort="60" velocity="3"/>'
    return f"""
  <joint name="{p}_shoulder" type="revolute"><parent link="base_link"/>
    <child link="{p}_upper"/><origin xyz="0 {y} {H}" rpy="0 0 {yaw}"/><axis xyz="1 0 0"/>
    {lim}</joint>
  <link name="{p}_upper">{inertial(3.0, 0.2, 0.045, 0.004)}</link>
  <joint name="{p}_elbow" type="revolute"><parent link="{p}_upper"/><child link="{p}_fore"/>
    <origin xyz="0 0 {L1}"/><axis xyz="1 0 0"/>{lim}</joint>
  <link name="{p}_fore">{inertial(2.0, 0.15, 0.02, 0.002)}</link>
  <joint name="{p}_wrist" type="revolute"><parent link="{p}_fore"/><child link="{p}_hand"/>
    <origin xyz="0 0 {L2}"/><axis xyz="1 0 0"/>{lim}</joint>
  <link name="{p}_hand">{inertial(0.8, 0.05, 0.002, 0.001)}</link>
  <joint name="{p}_tool_joint" type="fixed"><parent link="{p}_hand"/><child link="{p}_tool"/>
    <origin xyz="0 0 {L3}"/></joint>
  <link name="{p}_tool"/>"""


#: a 60 kg base (its inertia diagonal: mirror-symmetric about y = 0) with two planar arms
#: (joints about x): the left one at y = +D, the right one its mirror image at y = -D
#: (turned half a turn about z)
DUAL_URDF = f"""<robot name="dual_servicer">
  <link name="base_link"><inertial><origin xyz="0 0 0"/><mass value="60"/>
    <inertia ixx="4.0" iyy="5.0" izz="6.0" ixy="0" ixz="0" iyz="0"/></inertial></link>
  {_planar_arm("l", D, 0)}{_planar_arm("r", -D, math.pi)}
</robot>
"""

#: (time after start_time [s], joint angles [deg]) of the left arm's way-points
WAYPOINTS = [(0.0, (-20, -40, -30)), (1.0, (-35, -60, -10)), (2.0, (-10, -30, -50))]


def _tool(angles, side):
    """The tool's position (base frame) and rpy [deg] at the joint angles [deg]: the
    planar arm's forward kinematics (a rotation s about x takes z to (0, -sin s, cos s))."""
    a, b, c = (math.radians(x) for x in angles)
    y = -(L1 * math.sin(a) + L2 * math.sin(a + b) + L3 * math.sin(a + b + c))
    z = H + L1 * math.cos(a) + L2 * math.cos(a + b) + L3 * math.cos(a + b + c)
    if side == "l":
        return [0.0, D + y, z], [float(sum(angles)), 0.0, 0.0]
    return [0.0, -D - y, z], [float(sum(angles)), 0.0, 180.0]


def _rows(section, side, head=""):
    out = []
    for t, angles in WAYPOINTS:
        xyz, rpy = _tool(angles, side)
        out.append(f"[[{section}]]\n{head}time = {t}\nxyz = {xyz!r}\nrpy_deg = {rpy!r}\n")
    return "\n".join(out)


def _scenario(folder, right_task="waypoints", extra="", name="dual.toml"):
    """The dual-arm servicer from one URDF: the base law off (no wrench: the base floats),
    the left arm along its way-points, the right one along their mirror image (or
    ``right_task``)."""
    (folder / "dual.urdf").write_text(DUAL_URDF)
    right_rows = _rows("extra_arm_waypoint", "r", 'arm = "right"\n')
    text = f"""
[scenario]
name = "dual-mirror"
duration = 3.0
[base]
urdf = "dual.urdf"
link = "base_link"
size = 0.6
[base_controller]
kp_rot = [0.0, 0.0, 0.0]
kd_rot = [0.0, 0.0, 0.0]
kp_trans = [0.0, 0.0, 0.0]
kd_trans = [0.0, 0.0, 0.0]
feedforward = false
[thrusters]
pwm = false
[arm]
model = "dual.urdf"
root_link = "base_link"
ee_frame = "l_tool"
initial_joints_deg = [-20.0, -40.0, -30.0]
[trajectory]
type = "waypoints"
start_time = 0.5
{_rows("waypoint", "l")}
[[extra_arm]]
name = "right"
model = "dual.urdf"
root_link = "r_upper"
ee_frame = "r_tool"
initial_joints_deg = [-20.0, -40.0, -30.0]
task = "{right_task}"
start_time = 0.5
{right_rows if right_task == "waypoints" else ""}
{extra}
"""
    f = folder / name
    f.write_text(text, encoding="utf-8")
    return f


@pytest.fixture(scope="module")
def mirrored(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dual")
    path = _scenario(folder)
    sc = load_scenario(path)
    return path, build_system(sc.config), run(sc, progress=False)


@pytest.fixture(scope="module")
def one_moving(tmp_path_factory):
    """The same servicer, the right arm holding where it starts (task = 'initial')."""
    folder = tmp_path_factory.mktemp("dual1")
    sc = load_scenario(_scenario(folder, right_task="initial"))
    return build_system(sc.config), run(sc, progress=False)


# ------------------------------------------------------------------ the model


def test_a_dual_arm_servicer_has_pinocchios_dynamics(mirrored):
    """The model of [arm] + [[extra_arm]] (both from the base's URDF) against Pinocchio's
    own parse of the file: mass matrix, inverse and forward dynamics at random states."""
    from support.pin_compare import compare_state, pin_model_from_urdf

    path, _, _ = mirrored
    alone = ["vscmg.enabled=false", "thrusters.mode=wrench"]  # the URDF's bodies alone
    sy = build_system(load_scenario(path, alone).config)
    model = sy.controller_model
    assert sy.arm_info.names == [
        "l_shoulder", "l_elbow", "l_wrist", "right/r_shoulder", "right/r_elbow", "right/r_wrist",
    ]  # fmt: skip
    assert [x.v0 for x in sy.extra_arms] == [9]  # the right arm's joints after the left's
    pm = pin_model_from_urdf(DUAL_URDF, True, np.zeros(3))
    pd = pm.createData()
    assert tuple(pm.names[2:]) == ("l_shoulder", "l_elbow", "l_wrist", "r_shoulder", "r_elbow",
                                   "r_wrist")  # fmt: skip
    rng = np.random.default_rng(3)
    worst = {"mass_matrix": 0.0, "inverse_dynamics": 0.0, "forward_dynamics": 0.0}
    for _ in range(20):
        q = model.random_configuration(rng, angle=np.pi)
        v, a, tau = (rng.normal(size=model.nv) for _ in range(3))
        err = compare_state(model, pm, pd, {}, q, v, a, tau)
        worst = {k: max(w, err[k]) for k, w in worst.items()}
    print(f"dual-arm servicer vs Pinocchio: worst relative errors {worst}")
    assert max(worst.values()) < 1e-12


def test_two_iiwas_on_a_base_are_two_branches_of_one_tree(tmp_path):
    """Two iiwas mounted on the base: the second's bodies are named <name>/<link> and
    hang from the base; its mass matrix block is the first's at the same joint angles
    when mounted at the same place (the two arms do not couple but through the base)."""
    f = tmp_path / "two.toml"
    f.write_text(
        textwrap.dedent(
            """
            [scenario]
            name = "two-iiwas"
            [[extra_arm]]
            name = "left"
            mount_xyz = [-0.15, 0.0, 0.15]
            mount_rpy_deg = [0.0, -30.0, 0.0]
            """
        )
    )
    sy = build_system(load_scenario(f).config)
    m = sy.controller_model
    assert m.body_names[8:] == tuple(f"left/link{k}" for k in range(1, 8))
    assert m.parent[8] == 0 and [f.name for f in m.frames] == ["ee", "left/ee"]
    from dqspace.multibody import mass_matrix

    q = m.neutral_configuration()
    th = np.random.default_rng(1).uniform(-1, 1, 7)
    q[8:15] = th
    q[15:22] = th
    M = mass_matrix(m, q)
    np.testing.assert_allclose(M[13:20, 13:20], M[6:13, 6:13], rtol=0, atol=1e-12)
    assert np.all(M[6:13, 13:20] == 0.0)  # no inertial coupling between the arms' joints
    # the second arm starts where its task ('initial') puts it: at its initial joints
    np.testing.assert_array_equal(sy.q0[15:22], sy.extra_arms[0].joints0)
    assert isinstance(flight_software(sy).params.law, CompiledArmsLaw)


def test_each_arm_has_its_own_limits_and_payload(tmp_path):
    """An extra arm's joint limits, torque and rate limits and payload are its own (the
    plant's limits cover every joint, first arm first; the payload hangs from its link)."""
    f = tmp_path / "two.toml"
    f.write_text(
        textwrap.dedent(
            """
            [scenario]
            name = "two-iiwas"
            [[extra_arm]]
            name = "left"
            mount_xyz = [-0.15, 0.0, 0.15]
            mount_rpy_deg = [0.0, -30.0, 0.0]
            torque_limit = [50.0]
            rate_limit = [0.5]
            lower_deg = [-100.0]
            upper_deg = [100.0]
            payload_mass = 4.0
            payload_com = [0.0, 0.0, 0.1]
            """
        )
    )
    sy = build_system(load_scenario(f).config)
    info = sy.arm_info
    assert info.n == 14 and info.names[7:] == [f"left/joint{k}" for k in range(1, 8)]
    np.testing.assert_array_equal(info.torque_limit[7:], 50.0)
    np.testing.assert_array_equal(info.rate_limit[7:], 0.5)
    np.testing.assert_allclose(info.lower[7:], math.radians(-100.0))
    np.testing.assert_array_equal(info.torque_limit[:7], [320, 320, 176, 176, 110, 40, 40])
    m = sy.controller_model
    k = m.body_index("left/payload")
    assert m.mass[k] == 4.0 and m.body_names[int(m.parent[k])] == "left/link7"
    assert "payload" not in m.body_names  # the first arm has none
    # the IK of each arm keeps to its own limits: the second arm's lower limit of -100 deg
    P = sy.arm.kernel_params()
    np.testing.assert_allclose(P[1].lo, math.radians(-100.0))
    assert P[1].v0 == 13 and P[1].q0 == 15 and P[0].v0 == 6


# ------------------------------------------------------------------ the closed loop


def test_mirrored_arms_leave_the_base_attitude_unchanged(mirrored, one_moving):
    """The arms move in mirror symmetry about the base's mirror plane: their angular
    momentum cancels, so the floating base does not turn (to round-off) while it moves
    along z; with one arm moving alone, the same motion turns the base."""
    _, sy, res = mirrored
    att = np.degrees(np.linalg.norm(res["base_att_err"], axis=1)).max()
    z = np.abs(res["base_pos_err"][:, 2]).max()
    print(f"mirrored: base attitude {att:.2e} deg, z travel {z:.3e} m")
    assert res.status == "complete"
    assert att < 1e-9 and z > 1e-3
    np.testing.assert_allclose(res["q"][:, 8:11], res["q"][:, 11:14], rtol=0, atol=1e-9)
    _, res1 = one_moving
    att1 = np.degrees(np.linalg.norm(res1["base_att_err"], axis=1)).max()
    print(f"one arm moving: base attitude {att1:.3f} deg")
    assert att1 > 0.1


def test_the_momentum_books_of_a_dual_arm_servicer_close(mirrored, one_moving):
    """No external wrench (the base law off, no disturbance): the momentum of the whole
    tree stays what it was (zero), whichever arms move."""
    _, sy, res = mirrored
    assert np.abs(res["wrench_thr_true"]).max() == 0.0
    momentum_closes(res, sy.plant, rtol=1e-6)
    sy1, res1 = one_moving
    momentum_closes(res1, sy1.plant, rtol=1e-6)


def test_each_arm_tracks_its_own_task(mirrored, one_moving):
    """Each arm's end-effector error is small in its own task: the left along its
    way-points, the right along their mirror image, or holding where it started while
    the base turns under the left one's reaction."""
    _, _, res = mirrored
    m = summarize(res)
    # the references: the analytic forward kinematics of each arm's way-points
    t = res.t
    for tw, angles in WAYPOINTS:
        i = int(np.argmin(np.abs(t - (0.5 + tw))))
        np.testing.assert_allclose(res["ee_ref"][i], _tool(angles, "l")[0], atol=1e-12)
        np.testing.assert_allclose(res["ee_ref_right"][i], _tool(angles, "r")[0], atol=1e-12)
    assert np.ptp(res["ee_ref_right"][:, 1]) > 0.1  # it moves
    print(f"mirrored: ee_max {m['ee_max']:.2e} m, ee_max_right {m['ee_max_right']:.2e} m")
    assert m["ee_max"] < 1e-3 and m["ee_max_right"] < 1e-3
    assert np.abs(res["ee_att_err_right"]).max() < 1e-2
    _, res1 = one_moving
    m1 = summarize(res1)
    assert np.ptp(res1["ee_ref_right"], axis=0).max() == 0.0  # holding
    print(f"one moving: ee_max {m1['ee_max']:.2e} m, ee_max_right {m1['ee_max_right']:.2e} m")
    assert m1["ee_max"] < 1e-3 and m1["ee_max_right"] < 1e-3
    assert np.degrees(np.linalg.norm(res1["base_att_err"], axis=1)).max() > 0.1


def test_the_extra_arms_metrics_are_in_the_manifest_and_requirements(mirrored, tmp_path):
    path, _, res = mirrored
    for name in ("ee_rms_right", "ee_max_right"):
        assert name in res.manifest["metrics"] and name in METRICS
        assert METRICS[name][0] == "m"
    assert res.manifest["metrics"]["ee_max_right"] == summarize(res)["ee_max_right"]
    assert res.manifest["system"]["extra_arms"][0]["name"] == "right"
    # a requirement on it: in [requirements] and through --set
    sc = load_scenario(path, ["requirements.ee_max_right=2e-3"])
    assert sc.config["requirements"]["ee_max_right"]["limit"] == 2e-3
    with pytest.raises(ScenarioError, match="ee_max_left"):
        load_scenario(path, ["requirements.ee_max_left=2e-3"])  # no arm of that name
    # before metrics.transient: not measured (NaN), as the first arm's
    short = summarize(res, transient=10.0)
    assert math.isnan(short["ee_max_right"]) and math.isnan(short["ee_max"])


def test_a_monte_carlo_of_a_dual_arm_servicer_has_each_arms_metrics(tmp_path):
    extra = "[requirements]\nee_max_right = 1e-3\n[metrics]\ntransient = 0.5\n"
    f = _scenario(tmp_path, right_task="initial", extra=extra)
    text = f.read_text().replace("duration = 3.0", "duration = 1.0")
    text += '[dispersions]\n"plant.base_mass_error" = { dist = "uniform", low = -0.1, '
    text += "high = 0.1 }\n"
    f.write_text(text)
    df = montecarlo(load_scenario(f), 2, scheduler="synchronous", progress=False)
    assert {"ee_max_right", "ee_rms_right", "ee_max"} <= set(df.columns)
    assert df["error"].isna().all()
    assert np.all(df["ee_max_right"] < 1e-3)
    req = [r["metric"] for r in df.attrs["montecarlo"]["requirements"]]
    assert "ee_max_right" in req


# ------------------------------------------------------------------ errors


def _two_iiwas(tmp_path, rows):
    f = tmp_path / "bad.toml"
    f.write_text('[scenario]\nname = "bad"\n' + textwrap.dedent(rows))
    return f


def test_a_duplicate_or_missing_name_is_refused_naming_the_file_and_key(tmp_path):
    f = _two_iiwas(tmp_path, '[[extra_arm]]\nname = "a"\n[[extra_arm]]\nname = "a"\n')
    with pytest.raises(ScenarioError) as e:
        load_scenario(f)
    assert "bad.toml" in str(e.value) and "extra_arm[1].name = 'a'" in str(e.value)
    f = _two_iiwas(tmp_path, "[[extra_arm]]\nmount_xyz = [0.0, 0.2, 0.1]\n")
    with pytest.raises(ScenarioError) as e:
        load_scenario(f)
    assert "bad.toml" in str(e.value) and "extra_arm[0]" in str(e.value)
    assert "name" in str(e.value)


def test_waypoint_rows_must_name_an_arm_whose_task_uses_them(tmp_path):
    f = _two_iiwas(
        tmp_path,
        """
        [[extra_arm]]
        name = "left"
        [[extra_arm_waypoint]]
        arm = "lfet"
        time = 0.0
        xyz = [0.3, 0.0, 0.7]
        rpy_deg = [0.0, 90.0, 0.0]
        """,
    )
    with pytest.raises(ScenarioError) as e:
        load_scenario(f)
    msg = str(e.value)
    assert "bad.toml" in msg and "extra_arm_waypoint[0].arm = 'lfet'" in msg
    assert "did you mean 'left'" in msg


def test_an_unknown_root_link_is_refused_naming_the_file_and_key(tmp_path):
    f = _scenario(tmp_path)
    f.write_text(f.read_text().replace('root_link = "r_upper"', 'root_link = "r_uper"'))
    with pytest.raises(ScenarioError) as e:
        run(load_scenario(f), progress=False)
    msg = str(e.value)
    assert "dual.toml" in msg and "extra_arm[0].root_link = 'r_uper'" in msg
    assert "did you mean 'r_upper'" in msg


def test_a_task_the_arm_cannot_reach_is_refused_naming_the_file_and_key(tmp_path):
    f = _two_iiwas(
        tmp_path,
        """
        [[extra_arm]]
        name = "left"
        task = "hold"
        center = [3.0, 0.0, 0.7]
        """,
    )
    with pytest.raises(ScenarioError) as e:
        run(load_scenario(f), progress=False)
    msg = str(e.value)
    assert "bad.toml" in msg and "extra_arm[0].center = [3.0, 0.0, 0.7]" in msg
    assert "not reachable" in msg
    # a later way-point out of reach too, though the first is reachable
    f = _scenario(tmp_path, name="far.toml")
    text = f.read_text()
    last = repr(_tool(WAYPOINTS[-1][1], "r")[0])
    f.write_text(text.replace(last, "[0.0, 2.0, 0.5]"))
    with pytest.raises(ScenarioError) as e:
        run(load_scenario(f), progress=False)
    msg = str(e.value)
    assert "far.toml" in msg and "extra_arm_waypoint[2]" in msg and "not reachable" in msg


def test_several_arms_need_the_built_in_laws(tmp_path):
    f = _two_iiwas(tmp_path, '[[extra_arm]]\nname = "b"\n[arm_controller]\nlaw = "task_space"\n')
    with pytest.raises(ScenarioError, match="arm_controller.law = 'task_space'"):
        run(load_scenario(f), progress=False)


# ------------------------------------------------------------------ figures


def test_each_extra_arm_has_its_tracking_figure_and_is_drawn_in_the_scene(mirrored):
    from dqspace.scenarios.figures.plots import figures
    from dqspace.scenarios.figures.scene import build_scene

    _, _, res = mirrored
    figs = figures(res)
    assert {"tracking", "tracking_right"} <= set(figs)
    fig = figs["tracking_right"]
    assert "arm right" in fig.get_suptitle()
    # its curves are the right arm's series (not blank, not the first arm's)
    y = fig.axes[1].lines[0].get_ydata()
    np.testing.assert_allclose(y, res["ee_pos_right"][:, 1] * 1e3)  # drawn in mm
    assert not np.allclose(y, res["ee_pos"][:, 1] * 1e3)
    # the scene: a link to each arm's tool (the extra arm's end-effector frame too)
    scene = build_scene(res, 3)
    bodies = {p.body for p in scene.parts["arm"]}
    m = scene.model
    assert m.body_index("right/r_hand") in bodies and m.body_index("l_hand") in bodies


def test_an_extra_arm_from_the_base_urdf_is_placed_by_the_file(tmp_path):
    f = _scenario(tmp_path)
    text = f.read_text().replace(
        'root_link = "r_upper"', 'root_link = "r_upper"\nmount_xyz = [0.0, 0.0, 0.1]'
    )
    f.write_text(text)
    with pytest.raises(ScenarioError) as e:
        load_scenario(f)
    assert "dual.toml" in str(e.value) and "extra_arm[0].mount_xyz must then stay unset" in str(
        e.value
    )


def test_the_dual_arm_example_of_the_docs_runs(tmp_path):
    """docs/own-spacecraft.md's dual-arm servicer on a URDF base (with this module's
    URDF): it loads, each arm tracks its task, the requirement on the right arm is met."""
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "own-spacecraft.md").read_text()
    section = doc.split("### A dual-arm servicer on a URDF base", 1)[1]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "dual.urdf").write_text(DUAL_URDF)
    f = tmp_path / "example.toml"
    f.write_text(example)
    sc = load_scenario(f, ["scenario.duration=3.0"])
    res = run(sc, progress=False)
    m = summarize(res)
    assert res.status == "complete"
    assert m["ee_max"] < 1e-3 and m["ee_max_right"] < 1e-3
    assert sc.config["requirements"]["ee_max_right"]["limit"] == 1e-3


def test_dqspace_run_prints_each_arms_metrics_in_its_unit_or_not_measured(
    mirrored, tmp_path, capsys
):
    from dqspace.scenarios.cli import main

    path, _, _ = mirrored
    args = ["run", str(path), "--out", str(tmp_path / "a"), "--no-fail", "-q"]
    assert main([*args, "--set", "requirements.ee_max_right=1e-3"]) == 0
    out = capsys.readouterr().out
    assert "ee_max_right             0.1729 mm" in out  # as the first arm's, in mm
    assert "ee_max_right                  0.1729 mm        <= 1 mm  MET" in out
    args = ["run", str(path), "--out", str(tmp_path / "b"), "--no-fail", "-q"]
    assert main([*args, "--set", "scenario.duration=1.0"]) == 0
    out = capsys.readouterr().out
    assert "ee_max_right             not measured" in out
    assert "ee_rms_right, ee_max_right: not measured, the run ended at t = 1 s" in out
