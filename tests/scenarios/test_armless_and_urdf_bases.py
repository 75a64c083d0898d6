"""Servicers described in a file with no code (issue 26, part C): a base without an arm
(``arm.model = "none"``).

References: the momentum books (the system's momentum changes by exactly the thrusters'
impulse), the base law computed directly by :class:`~dqspace.control.BaseController` (the
compiled flight software's arm-less law against it), strict JSON for the manifest.
"""

import dataclasses
import json
import math
import textwrap

import numpy as np
import pytest

from dqspace.control import BaseController, NoArm, PDGains, State
from dqspace.control.flight.tick import CompiledBaseLaw
from dqspace.multibody import momentum
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.flight import flight_software
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.cli import main
from dqspace.scenarios.figures.plots import figures
from dqspace.scenarios.sim import closed_loop
from dqspace.scenarios.sim.metrics import ARM_METRICS, summarize
from dqspace.scenarios.spec.config import ScenarioError
from support.books import momentum_closes

#: an arm-less servicer: a 30 kg base, 12 thrusters (no PWM), four reaction wheels
ARMLESS = """
[scenario]
name = "armless"
duration = 8.0
[base]
mass = 30.0
size = 0.4
[arm]
model = "none"
[vscmg]
enabled = false
[wheels]
enabled = true
[thrusters]
pwm = false
"""

#: [rad/s, m/s] the base's initial twist (the disturbance the base must stop)
TWIST0 = np.array([0.02, -0.015, 0.01, 0.004, 0.0, -0.003])


def _file(tmp_path, text, name="sat.toml"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(text), encoding="utf-8")
    return f


def _strict_json(text):
    return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


@pytest.fixture(scope="module")
def kicked(tmp_path_factory):
    """The arm-less servicer run from an initial base twist (:data:`TWIST0`)."""
    path = _file(tmp_path_factory.mktemp("armless"), ARMLESS)
    sc = load_scenario(path)
    built = []

    def kicked_system(cfg):
        sy = build_system(cfg)
        sy.v0[:6] = TWIST0
        built.append(sy)
        return sy

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(closed_loop, "build_system", kicked_system)
        res = run(sc, progress=False)
    return sc, built[0], res


def test_an_armless_base_is_the_base_and_its_devices(kicked):
    sc, sy, res = kicked
    assert sc.config["arm"]["model"] == "none"  # a word, not a file next to the scenario
    assert sy.arm_info.n == 0 and sy.arm_info.names == [] and sy.arm_info.ee_frame == ""
    assert isinstance(sy.arm, NoArm)
    # the plant: the base and its four wheel rotors, nothing else
    assert sy.plant.nb == 5 and sy.plant.nv == 6 + 4
    assert sy.controller_model.nb == 1 and sy.controller_model.nv == 6
    assert res["arm_q"].shape == (len(res.t), 0) and res["arm_tau"].shape == (len(res.t), 0)


def test_an_armless_base_stops_an_initial_twist_and_holds_its_pose(kicked):
    _, sy, res = kicked
    np.testing.assert_array_equal(res["v"][0, :6], TWIST0)
    speed = np.linalg.norm(res["v"][:, :6], axis=1)
    assert speed[-1] < 0.05 * speed[0]  # the twist is taken out
    m = summarize(res)
    late = res.t >= 7.0
    att = np.degrees(np.linalg.norm(res["base_att_err"], axis=1))
    print(
        f"peak attitude error {att.max():.4g} deg, after 7 s {att[late].max():.3g} deg; "
        f"position {np.abs(res['base_pos_err']).max():.3g} m, after 7 s "
        f"{np.abs(res['base_pos_err'][late]).max():.3g} m"
    )
    assert m["base_att_err_max"] > 0.02  # [deg] the kick did turn it (the test is not idle)
    assert att[late].max() < 0.2 * att.max()  # and the base turned back
    assert np.abs(res["base_pos_err"][late]).max() < 0.2 * np.abs(res["base_pos_err"]).max()
    assert np.abs(res["rw_speed"][-1]).max() > 1.0  # [rad/s] the wheels took the spin


def test_the_momentum_books_of_an_armless_base_close(kicked):
    _, sy, res = kicked
    momentum_closes(res, sy.plant, rtol=2e-3)
    # the wheels hold the base's spin: the system's angular momentum about the CoM stays
    # that of the kick, changed only by the thrusters' impulse (closed above)
    h0 = momentum(sy.plant, res["q"][0], res["v"][0]).angular
    assert np.linalg.norm(h0) > 0.0


def test_the_arm_metrics_of_an_armless_base_are_not_measured(kicked):
    _, _, res = kicked
    m = summarize(res)
    for name in ARM_METRICS:
        assert math.isnan(m[name]), name
    assert np.isnan(res["ee_err"]).all() and np.isnan(res["ee_pos"]).all()
    assert math.isfinite(m["base_pos_err_max"]) and math.isfinite(m["total_impulse"])
    # no end-effector to draw: the tracking figure is skipped, the others drawn
    figs = figures(res)
    assert "tracking" not in figs and {"disturbance_rejection", "wheels"} <= set(figs)
    # the disturbance figure has the base's errors and no arm reaction panels
    labels = [ax.get_ylabel() for ax in figs["disturbance_rejection"].axes if ax.get_ylabel()]
    assert labels == ["base position\nerror [mm]", "base attitude\nerror [deg]"]


class _PythonBase(BaseController):
    """The built-in base law as a user's class (runs in Python)."""


def test_the_compiled_armless_flight_software_is_the_base_law(kicked):
    """The compiled tick (the base law alone, no IK) against BaseController called on the
    same state with no arm acceleration, at random states."""
    _, sy, _ = kicked
    fsw = flight_software(sy)
    assert fsw.compiled and isinstance(fsw.params.law, CompiledBaseLaw) and fsw.n == 0
    bc = sy.cfg["base_controller"]
    direct = BaseController(
        sy.controller_model,
        PDGains(kp_rot=bc["kp_rot"], kd_rot=bc["kd_rot"], kp_trans=bc["kp_trans"],
                kd_trans=bc["kd_trans"]),
    )  # fmt: skip
    # the same law as a user's class (a subclass runs in Python, through the law stage)
    python = flight_software(
        dataclasses.replace(sy, base=_PythonBase(sy.controller_model, direct.gains))
    )
    assert not python.compiled
    rng = np.random.default_rng(3)
    nq_c = sy.controller_model.nq
    for _ in range(5):
        q, v = sy.q0.copy(), sy.v0.copy()
        v[:6] = rng.normal(0, 0.05, 6)
        q[:8] = q[:8] + np.r_[rng.normal(0, 1e-3, 4), np.zeros(4)]
        q[:4] /= np.linalg.norm(q[:4])
        out = fsw.step(0.0, q, v)
        cmd = direct(0.0, State(q[:nq_c], v[:6]), sy.base_reference, arm_acc=np.zeros(0))
        np.testing.assert_allclose(out.law.wrench, cmd.wrench, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(python.step(0.0, q, v).law.wrench, cmd.wrench, atol=1e-12)
        assert out.law.tau.shape == (0,) and out.commands.arm_tau.shape == (0,)


def test_dqspace_run_of_an_armless_base_exits_0_with_null_arm_metrics(tmp_path, capsys):
    path = _file(tmp_path, ARMLESS)
    out = tmp_path / "r"
    sets = ["--set", "scenario.duration=1.0", "--set", "outputs.formats='png'"]
    assert main(["run", str(path), *sets, "--out", str(out), "-q"]) == 0
    text = capsys.readouterr().out
    assert "ee_rms, ee_max, arm_saturated_ticks: not measured, the system has no arm" in text
    doc = _strict_json((out / "manifest.json").read_text())
    for name in ARM_METRICS:
        assert doc["metrics"][name] is None, name
    assert doc["metrics"]["base_pos_err_max"] is not None
    assert doc["system"]["arm"]["joints"] == [] and doc["system"]["arm"]["source"] == "none"
    assert (out / "disturbance_rejection.png").is_file()
    assert not (out / "tracking.png").exists()


def test_an_armless_scenario_refuses_what_only_an_arm_does(tmp_path):
    path = _file(tmp_path, ARMLESS)
    for override, key in [
        ("trajectory.type='hold'", "trajectory.type"),
        ("arm_controller.law='task_space'", "arm_controller.law"),
        ("arm.payload_mass=1.0", "arm.payload_mass"),
        ("arm.initial_joints_deg=[10.0]", "arm.initial_joints_deg"),
        ("requirements.ee_max=0.01", "requirements.ee_max"),
        ("plant.link_mass_error=0.1", "plant.link_mass_error"),
    ]:
        with pytest.raises(ScenarioError) as e:
            load_scenario(path, [override])
        msg = str(e.value)
        assert msg.startswith(str(path)) and f"{key}" in msg and "arm.model = 'none'" in msg
    # keys left at their defaults ask for nothing: the paper's scenario without its arm
    sc = load_scenario("station-keeping", ["arm.model='none'"])
    assert build_system(sc.config).arm_info.n == 0


def test_the_default_requirements_on_the_arm_do_not_apply_without_one():
    from dqspace.scenarios.campaigns.montecarlo import scenario_requirements

    armless = load_scenario("station-keeping", ["arm.model='none'"]).config
    armed = load_scenario("station-keeping").config
    assert "ee_max" in scenario_requirements(armed)
    req = scenario_requirements(armless)
    assert not set(ARM_METRICS) & set(req) and "base_pos_err_max" in req


# ------------------------------------------------------------------ arm.root_link

#: an arm on a pedestal above a "world" link, a camera on a second branch of the pedestal
PEDESTAL_URDF = """<?xml version="1.0"?>
<robot name="cell">
  <link name="world"/>
  <joint name="world_to_pedestal" type="fixed"><parent link="world"/><child link="pedestal"/>
  </joint>
  <link name="pedestal"><inertial><mass value="20.0"/>
    <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
  <joint name="camera_pan" type="revolute"><parent link="pedestal"/><child link="camera"/>
    <origin xyz="0.2 0 0.5"/><axis xyz="0 0 1"/><limit lower="-1" upper="1"/></joint>
  <link name="camera"><inertial><mass value="1.0"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
  <joint name="pedestal_to_arm" type="fixed"><parent link="pedestal"/><child link="arm_base"/>
    <origin xyz="0 0 1.0"/></joint>
  <link name="arm_base"><inertial><mass value="0.5"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="arm_base"/><child link="l1"/>
    <origin xyz="0 0 0.05"/><axis xyz="0 0 1"/></joint>
  <link name="l1"><inertial><origin xyz="0.1 0 0" rpy="0.3 0 0"/><mass value="1.0"/>
    <inertia ixx="1e-3" ixy="0" ixz="0" iyy="4e-3" iyz="0" izz="4e-3"/></inertial></link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.2 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="5" velocity="1.5"/></joint>
  <link name="l2"><inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
    <inertia ixx="5e-4" ixy="0" ixz="0" iyy="2e-3" iyz="0" izz="2e-3"/></inertial></link>
  <joint name="tip_joint" type="fixed"><parent link="l2"/><child link="tip"/>
    <origin xyz="0.2 0 0"/></joint>
  <link name="tip"/>
</robot>
"""


def _arm_scenario(tmp_path, urdf_name, root_link, extra=""):
    return _file(
        tmp_path,
        f"""
        [scenario]
        name = "cell"
        duration = 0.2
        [arm]
        model = "{urdf_name}"
        root_link = "{root_link}"
        ee_frame = "tip"
        mount_xyz = [0.0, 0.0, 0.2]
        mount_rpy_deg = [0.0, 0.0, 0.0]
        initial_joints_deg = [10.0, 20.0]
        [trajectory]
        type = "initial"
        {extra}
        """,
    )


def test_root_link_picks_the_arm_below_a_pedestal(tmp_path):
    (tmp_path / "cell.urdf").write_text(PEDESTAL_URDF)
    sy = build_system(load_scenario(_arm_scenario(tmp_path, "cell.urdf", "arm_base")).config)
    # the arm is exactly the subtree of arm_base: its joints, its links, its mass
    assert sy.arm_info.names == ["j1", "j2"]
    plant = sy.controller_model
    assert plant.joint_names[1:] == ("root_joint", "j1", "j2")
    assert plant.body_names[1:] == ("arm_base", "l1", "l2")
    assert sum(plant.mass[1:]) == pytest.approx(0.5 + 1.0 + 0.5)  # no pedestal, no camera
    assert sy.arm_info.torque_limit[1] == 5.0 and sy.arm_info.lower[1] == -2.0
    # against the same arm written alone (the subtree by hand): the same mass matrix
    alone = PEDESTAL_URDF.split('<joint name="pedestal_to_arm"')[1].split("</joint>", 1)[1]
    (tmp_path / "alone.urdf").write_text('<robot name="alone">' + alone)
    ref = build_system(load_scenario(_arm_scenario(tmp_path, "alone.urdf", "")).config)
    rng = np.random.default_rng(5)
    from dqspace.multibody import mass_matrix

    for _ in range(3):
        q = ref.controller_model.random_configuration(rng)
        np.testing.assert_array_equal(mass_matrix(plant, q), mass_matrix(ref.controller_model, q))


def test_an_unknown_root_link_is_named_with_the_links_of_the_file(tmp_path):
    (tmp_path / "cell.urdf").write_text(PEDESTAL_URDF)
    sc = load_scenario(_arm_scenario(tmp_path, "cell.urdf", "arm_bse"))
    with pytest.raises(ScenarioError) as e:
        build_system(sc.config)
    msg = str(e.value)
    assert "arm.root_link = 'arm_bse' is not a link of cell.urdf" in msg
    assert "world, pedestal, camera, arm_base, l1, l2, tip" in msg
    assert "did you mean 'arm_base'" in msg
    # without root_link the whole file is the arm, the pedestal's camera joint with it
    whole = load_scenario(_arm_scenario(tmp_path, "cell.urdf", ""), ["arm.initial_joints_deg=[]"])
    assert build_system(whole.config).arm_info.names == ["camera_pan", "j1", "j2"]
    with pytest.raises(ScenarioError, match="applies to a URDF arm"):
        build_system(load_scenario("station-keeping", ["arm.root_link='x'"]).config)


# ------------------------------------------------------------------ the base from a URDF

#: a whole servicer: a base link whose inertial frame is rotated, a deck fixed to it, and a
#: two-joint arm hanging from the base link at a rotated joint origin
SERVICER_URDF = """<?xml version="1.0"?>
<robot name="servicer">
  <link name="base_link"><inertial><origin xyz="0.02 -0.01 0.03" rpy="0.3 -0.2 0.5"/>
    <mass value="40.0"/>
    <inertia ixx="2.0" ixy="0.1" ixz="-0.05" iyy="2.5" iyz="0.08" izz="3.0"/></inertial></link>
  <joint name="deck_joint" type="fixed"><parent link="base_link"/><child link="deck"/>
    <origin xyz="0 0 0.3" rpy="0 0 0.4"/></joint>
  <link name="deck"><inertial><origin xyz="0.05 0 0"/><mass value="5.0"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.25"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base_link"/><child link="upper"/>
    <origin xyz="0.2 0.1 0.35" rpy="0.1 -0.4 0.2"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="50" velocity="2"/></joint>
  <link name="upper"><inertial><origin xyz="0 0 0.15" rpy="0 0.3 0"/><mass value="2.0"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.004"/></inertial></link>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-2.5" upper="2.5" effort="30" velocity="2"/></joint>
  <link name="fore"><inertial><origin xyz="0 0 0.12"/><mass value="1.2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.002"/></inertial></link>
  <joint name="tool_joint" type="fixed"><parent link="fore"/><child link="tool"/>
    <origin xyz="0 0 0.25"/></joint>
  <link name="tool"/>
</robot>
"""

SERVICER = """
[scenario]
name = "servicer"
duration = 0.5
[base]
urdf = "servicer.urdf"
link = "base_link"
size = 0.6
[arm]
model = "servicer.urdf"
root_link = "base_link"
ee_frame = "tool"
initial_joints_deg = [20.0, 40.0]
[trajectory]
type = "initial"
[vscmg]
enabled = false
[thrusters]
pwm = false
mode = "wrench"  # no momentum device: the thrusters take the torque too
"""


def _rpy(r, p, y):
    """Rz(y) Ry(p) Rx(r), by hand."""
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


@pytest.fixture
def servicer(tmp_path):
    (tmp_path / "servicer.urdf").write_text(SERVICER_URDF)
    return _file(tmp_path, SERVICER)


def test_the_base_from_a_urdf_link_is_its_inertial_turned_into_the_base_frame(servicer):
    sy = build_system(load_scenario(servicer).config)
    base = sy.controller_model
    # by hand: the link's inertia in its inertial axes, turned by R I R^T, and the deck
    # (fixed to the link) added by the parallel-axis theorem about the common CoM
    I_link = np.array([[2.0, 0.1, -0.05], [0.1, 2.5, 0.08], [-0.05, 0.08, 3.0]])
    R = _rpy(0.3, -0.2, 0.5)
    c1, J1 = np.array([0.02, -0.01, 0.03]), R @ I_link @ R.T
    Rd = _rpy(0.0, 0.0, 0.4)
    c2 = np.array([0.0, 0.0, 0.3]) + Rd @ np.array([0.05, 0.0, 0.0])
    J2 = Rd @ np.diag([0.1, 0.2, 0.25]) @ Rd.T
    m = 45.0
    c = (40.0 * c1 + 5.0 * c2) / m
    J = np.zeros((3, 3))
    for mi, ci, Ji in ((40.0, c1, J1), (5.0, c2, J2)):
        d = ci - c
        J += Ji + mi * (d @ d * np.eye(3) - np.outer(d, d))
    assert base.body_names[0] == "base" and base.mass[0] == pytest.approx(m, rel=1e-15)
    np.testing.assert_allclose(base.com[0], c, rtol=0, atol=1e-15)
    np.testing.assert_allclose(base.inertia_com[0], J, rtol=0, atol=1e-14)
    # a rotated inertial frame matters: the tensor as written is not the answer
    assert np.abs(J1 - I_link).max() > 0.1
    # the arm from the same file: its joints, limits and placement are the file's
    assert sy.arm_info.names == ["shoulder", "elbow"]
    assert sy.arm_info.torque_limit.tolist() == [50.0, 30.0]
    assert base.body_names[1:] == ("upper", "fore")


def test_a_servicer_from_one_urdf_has_pinocchios_mass_matrix(servicer):
    """The whole model (the base link and deck on a free flyer, the arm) against Pinocchio's
    own parse of the file, at random configurations."""
    from support.pin_compare import compare_state, pin_model_from_urdf

    sy = build_system(load_scenario(servicer).config)
    model = sy.controller_model
    pm = pin_model_from_urdf(SERVICER_URDF, True, np.zeros(3))
    pd = pm.createData()
    assert tuple(pm.names[2:]) == ("shoulder", "elbow")
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(20):
        q = model.random_configuration(rng, angle=np.pi)
        v, a, tau = (rng.normal(size=model.nv) for _ in range(3))
        err = compare_state(model, pm, pd, {}, q, v, a, tau)
        worst = max(worst, err["mass_matrix"], err["inverse_dynamics"])
    print(f"servicer from one URDF vs Pinocchio: worst relative error {worst:.2e}")
    assert worst < 1e-12
    # the run: the base holds, the arm holds its initial pose
    res = run(load_scenario(servicer), progress=False)
    assert res.status == "complete" and summarize(res)["base_pos_err_max"] < 1e-3


def test_a_urdf_base_refuses_the_keys_it_replaces(servicer, tmp_path):
    for override, keys in [
        ("base.mass=30.0", "base.mass"),
        ("base.inertia=[1.0, 1.0, 1.0, 0.0, 0.0, 0.0]", "base.inertia"),
        ("arm.mount_xyz=[0.0, 0.0, 0.1]", "arm.mount_xyz"),
        ("arm.root_link='upper'", "arm.root_link"),
    ]:
        with pytest.raises(ScenarioError) as e:
            load_scenario(servicer, [override])
        assert str(e.value).startswith(str(servicer)) and keys in str(e.value)
    sc = load_scenario(servicer, ["base.link='bse_link'", "arm.root_link='bse_link'"])
    with pytest.raises(ScenarioError) as e:
        build_system(sc.config)
    assert "base.link = 'bse_link' is not a link of servicer.urdf" in str(e.value)
    assert "base_link, deck, upper, fore, tool" in str(e.value)
    assert "did you mean 'base_link'" in str(e.value)


# ------------------------------------------------------------------ a payload on any link

PAYLOAD = ["arm.payload_mass=2.0", "arm.payload_com=[0.01, 0.02, 0.03]",
           "arm.payload_inertia=[0.01, 0.02, 0.015, 0.001, 0.0, 0.002]"]  # fmt: skip


def _merged(model, k, mass, com, inertia):
    """``model`` with the payload merged into body k by the parallel-axis theorem (by hand)."""
    from dqspace.multibody import Body, Model

    bodies = model.bodies()
    b = bodies[k]
    m = b.mass + mass
    c = (b.mass * b.com + mass * com) / m
    J = np.zeros((3, 3))
    for mi, ci, Ji in ((b.mass, b.com, b.inertia), (mass, com, inertia)):
        d = ci - c
        J += Ji + mi * (d @ d * np.eye(3) - np.outer(d, d))
    bodies[k] = Body(b.name, b.parent, b.joint, m, c, J)
    return Model.build(bodies, model.frames)


def _same_mass_matrices(a, b, seed=0, n=5):
    from dqspace.multibody import mass_matrix

    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = a.random_configuration(rng)
        Ma, Mb = mass_matrix(a, q), mass_matrix(b, q)
        np.testing.assert_allclose(Ma, Mb, rtol=0, atol=1e-12 * np.abs(Mb).max())


def test_a_payload_on_link_k_is_that_link_made_heavier():
    from dqspace.scenarios.build.arm import arm, base_body, inertia_matrix

    cfg = load_scenario("station-keeping", [*PAYLOAD, "arm.payload_link='link3'"]).config
    with_payload, _ = arm(cfg, base_body(cfg))
    bare_cfg = load_scenario("station-keeping").config
    bare, _ = arm(bare_cfg, base_body(bare_cfg))
    k = bare.body_index("link3")
    assert with_payload.body_names[-1] == "payload" and int(with_payload.parent[-1]) == k
    J = inertia_matrix([0.01, 0.02, 0.015, 0.001, 0.0, 0.002])
    ref = _merged(bare, k, 2.0, np.array([0.01, 0.02, 0.03]), J)
    _same_mass_matrices(with_payload, ref)
    # on another link it is another system (the comparison can fail)
    other = _merged(bare, k + 1, 2.0, np.array([0.01, 0.02, 0.03]), J)
    from dqspace.multibody import mass_matrix

    q = bare.random_configuration(np.random.default_rng(1))
    assert np.abs(mass_matrix(with_payload, q) - mass_matrix(other, q)).max() > 1e-3
    # the default is the end-effector, as before
    ee_cfg = load_scenario("station-keeping", PAYLOAD).config
    at_ee, _ = arm(ee_cfg, base_body(ee_cfg))
    assert int(at_ee.parent[-1]) == bare.frames[bare.frame_index("ee")].body


def test_a_payload_on_a_urdf_frame_is_placed_in_that_frame(servicer):
    """``tool`` is a frame of the ``fore`` body, 0.25 m along its z: the payload's CoM given
    in ``tool`` is 0.25 m further in ``fore``."""
    from dqspace.scenarios.build.arm import arm, base_body, inertia_matrix

    sc = load_scenario(servicer, [*PAYLOAD, "arm.payload_link='tool'"])
    with_payload, _ = arm(sc.config, base_body(sc.config))
    bare_cfg = load_scenario(servicer).config
    bare, _ = arm(bare_cfg, base_body(bare_cfg))
    k = bare.body_index("fore")
    J = inertia_matrix([0.01, 0.02, 0.015, 0.001, 0.0, 0.002])
    ref = _merged(bare, k, 2.0, np.array([0.01, 0.02, 0.03 + 0.25]), J)
    _same_mass_matrices(with_payload, ref)


def test_an_unknown_payload_link_is_named():
    from dqspace.scenarios.build.arm import arm, base_body

    for link, text in [("link33", "did you mean 'link3'"), ("base", "add the payload to [base]")]:
        cfg = load_scenario("station-keeping", [*PAYLOAD, f"arm.payload_link='{link}'"]).config
        with pytest.raises(ScenarioError, match=f"arm.payload_link = '{link}'") as e:
            arm(cfg, base_body(cfg))
        assert text in str(e.value)
