"""The second arm: the UR5 of ``scenarios/data/arms/ur5.urdf``.

* the file holds what ``scenarios/data/arms/README.md`` says (names, published values,
  limits, no meshes), read with ElementTree, not with dqspace;
* fixed base, against Pinocchio's own URDF parser (``pin.buildModelFromXML``): mass
  matrix vs ``crba``, inverse dynamics vs ``rnea``, forward dynamics vs ``aba``, every
  link's and the ``ee`` frame's placement and Jacobians, at random states with and
  without gravity, to 1e-10 (the comparison helpers of ``support.pin_compare`` map the
  velocity order and twist convention);
* on a free base (``floating=True``): the same against Pinocchio's free flyer, a
  symmetric positive-definite mass matrix, and a torque-free compiled RK4 run that
  keeps the momentum (relative drift < 1e-10) and moves the centre of mass in a straight
  line at the speed p / m.
"""

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from dqspace.multibody import (
    JointType,
    center_of_mass,
    mass_matrix,
    model_from_urdf,
    momentum,
    simulate_compiled,
)
from support.pin_compare import QUANTITIES, Worst, compare_state, pin_model_from_urdf, rel_err

UR5_URDF = Path(__file__).resolve().parents[2] / "scenarios" / "data" / "arms" / "ur5.urdf"
XML = UR5_URDF.read_text()
G = np.array([0.0, 0.0, -9.81])
TOL = 1e-10

JOINTS = (
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
)
LINKS = (
    "ur5_base",
    "shoulder_link",
    "upper_arm_link",
    "forearm_link",
    "wrist_1_link",
    "wrist_2_link",
    "wrist_3_link",
)
MASSES = (4.0, 3.7, 8.393, 2.275, 1.219, 1.219, 0.1879)  # [kg], base first
EFFORTS = (150.0, 150.0, 150.0, 28.0, 28.0, 28.0)  # [N m]


# ------------------------------------------------------------------------- the file


def test_urdf_holds_the_published_parameters():
    root = ET.fromstring(XML)
    assert root.tag == "robot" and root.get("name") == "ur5"
    links = {el.get("name"): el for el in root.findall("link")}
    assert list(links) == [*LINKS, "ee"]
    assert root.find(".//visual") is None and root.find(".//collision") is None
    assert root.find(".//mesh") is None
    for name, m in zip(LINKS, MASSES, strict=True):
        assert float(links[name].find("inertial/mass").get("value")) == m
    assert links["ee"].find("inertial") is None  # a massless frame
    joints = root.findall("joint")
    assert [j.get("name") for j in joints] == [*JOINTS, "ee_fixed_joint"]
    chain = [*LINKS, "ee"]
    for k, j in enumerate(joints):
        assert (j.find("parent").get("link"), j.find("child").get("link")) == tuple(
            chain[k : k + 2]
        )
    for j, effort in zip(joints[:6], EFFORTS, strict=True):
        assert j.get("type") == "revolute"
        assert j.find("axis").get("xyz") == "0 0 1"
        lim = j.find("limit")
        assert float(lim.get("lower")) == -2 * np.pi and float(lim.get("upper")) == 2 * np.pi
        assert float(lim.get("effort")) == effort and float(lim.get("velocity")) == 3.15
    assert joints[6].get("type") == "fixed"


def test_dqspace_model_of_the_urdf():
    """Bodies are the links, joints the URDF joints, every link and ee a named frame."""
    for floating in (False, True):
        model = model_from_urdf(UR5_URDF, floating=floating)
        assert model.body_names == LINKS
        assert model.joint_names == ("root_joint", *JOINTS)
        assert [f.name for f in model.frames] == [*LINKS, "ee"]
        assert JointType(int(model.joint_type[0])) == (
            JointType.FREE if floating else JointType.FIXED
        )
        assert (model.nq, model.nv) == ((14, 12) if floating else (6, 6))
        assert model.total_mass == pytest.approx(sum(MASSES), rel=1e-15)


# --------------------------------------------------------------- against Pinocchio


def _compare(floating, n_states, rng):
    worst = Worst()
    for gravity in (np.zeros(3), G):
        model = model_from_urdf(XML, floating=floating, gravity=gravity)
        pm = pin_model_from_urdf(XML, floating, gravity)
        pd = pm.createData()
        assert (pm.nv, tuple(pm.names[1 + floating :])) == (model.nv, JOINTS)
        frames = {f.name: pm.getFrameId(f.name, pin.FrameType.BODY) for f in model.frames}
        assert "ee" in frames and len(set(frames.values())) == len(frames)
        for _ in range(n_states):
            q = model.random_configuration(rng, angle=2 * np.pi)
            v, a, tau = (rng.normal(size=model.nv) for _ in range(3))
            worst.update(compare_state(model, pm, pd, frames, q, v, a, tau))
    title = f"UR5 URDF, {'floating' if floating else 'fixed'} base, vs Pinocchio"
    worst.report(title)
    assert worst.count == 2 * n_states and set(worst.err) == set(QUANTITIES)
    bad = {k: e for k, e in worst.err.items() if not e < TOL}
    assert not bad, f"{title}: relative errors above {TOL:g}: {bad}"


def test_fixed_base_ur5_agrees_with_pinocchio(rng):
    """crba, rnea, aba, frame placements and Jacobians at 2 x 150 random states."""
    _compare(False, 150, rng)


def test_floating_base_ur5_agrees_with_pinocchio(rng):
    """The same on Pinocchio's free flyer (2 x 50 states)."""
    _compare(True, 50, rng)


def test_pinocchio_comparison_can_fail(rng):
    """A UR5 with a heavier forearm is told apart (the comparison is not vacuous)."""
    heavier = XML.replace('<mass value="2.275"/>', '<mass value="2.33"/>')
    assert heavier != XML
    model = model_from_urdf(heavier)
    pm = pin_model_from_urdf(XML, False, np.zeros(3))
    q = model.random_configuration(rng)
    M_pin = pin.crba(pm, pm.createData(), q)
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
    assert rel_err(mass_matrix(model, q), M_pin) > 1e-3


# ----------------------------------------------------------------- on a free base


def test_floating_mass_matrix_is_symmetric_positive_definite(rng):
    model = model_from_urdf(UR5_URDF, floating=True)
    for _ in range(50):
        q = model.random_configuration(rng, angle=2 * np.pi, translation=2.0)
        M = mass_matrix(model, q)
        assert M.shape == (12, 12)
        assert np.abs(M - M.T).max() <= 1e-14 * np.abs(M).max()
        np.linalg.cholesky(M)  # raises unless positive definite
        assert np.linalg.eigvalsh(M)[0] > 1e-6
        # the base block is the whole robot's rigid inertia: its force block is m I
        assert np.abs(M[3:6, 3:6] - model.total_mass * np.eye(3)).max() < 1e-12


def test_free_floating_ur5_keeps_its_momentum():
    """No torque, no external force, RK4 dt = 1e-3 s for 2 s (compiled loop): the arm
    swings and the base reacts, linear and angular momentum stay constant to 1e-10
    (relative), and the centre of mass moves at the constant velocity p / m."""
    model = model_from_urdf(UR5_URDF, floating=True)
    rng = np.random.default_rng(55)
    q0 = model.random_configuration(rng, translation=0.5)
    v0 = np.r_[rng.normal(0.0, 0.2, 6), rng.normal(0.0, 1.0, 6)]
    traj = simulate_compiled(model, q0, v0, dt=1e-3, n_steps=2000, record_every=50)
    assert len(traj.t) == 41 and traj.t[-1] == pytest.approx(2.0)
    m0 = momentum(model, q0, v0)
    c0 = center_of_mass(model, q0)
    dp = dh = dc = 0.0
    for t, q, v in zip(traj.t, traj.q, traj.v, strict=True):
        m = momentum(model, q, v)
        dp = max(dp, np.linalg.norm(m.linear - m0.linear) / np.linalg.norm(m0.linear))
        dh = max(dh, np.linalg.norm(m.angular - m0.angular) / np.linalg.norm(m0.angular))
        c_ref = c0 + t * m0.linear / model.total_mass
        dc = max(dc, np.linalg.norm(center_of_mass(model, q) - c_ref))
    print(
        f"\nfree-floating UR5, 2 s: momentum drift linear {dp:.1e}, angular {dh:.1e}; "
        f"centre of mass off its line by {dc:.1e} m"
    )
    assert np.abs(traj.q[-1, 8:] - q0[8:]).max() > 0.5  # the arm moved
    assert np.abs(traj.v[-1, :3] - v0[:3]).max() > 1e-2  # and the base's rate changed
    assert dp < 1e-10 and dh < 1e-10
    assert dc < 1e-10
