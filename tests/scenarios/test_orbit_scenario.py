"""``[orbit]`` in the closed-loop plant, against analytic references: the system's centre of
mass follows the Clohessy-Wiltshire solution of a free particle whatever the arm and the
momentum devices do inside; the gravity-gradient torque on the base is the rigid body's
``3 n^2 r_hat x (J r_hat)``; the station-keeping loop still holds its base."""

import numpy as np
import pytest

from dqspace.dq import dq_from_quat_translation, quat_from_rpy_deg, rotation_matrix_from_quat
from dqspace.multibody import center_of_mass
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.sim import boundary as _inputs
from dqspace.scenarios.sim.metrics import summarize
from dqspace.scenarios.sim.plant import Plant
from dqspace.scenarios.spec.config import ScenarioError
from support.orbit import clohessy_wiltshire

SK = "station-keeping"
#: controllers off: no thrust, no torque on the base but the devices' internal ones
OFF = [
    "base_controller.kp_rot=[0, 0, 0]",
    "base_controller.kd_rot=[0, 0, 0]",
    "base_controller.kp_trans=[0, 0, 0]",
    "base_controller.kd_trans=[0, 0, 0]",
    "base_controller.feedforward=false",
    "thrusters.enabled=false",
]


def test_the_centre_of_mass_follows_the_clohessy_wiltshire_solution():
    n = 0.05  # [rad/s] a 2 min orbit: a large drift in a short run
    sc = load_scenario(SK, ["scenario.duration=4", "orbit.enabled=true", f"orbit.rate={n}"] + OFF)
    sy = build_system(sc.config)
    res = run(sc, progress=False)
    com = np.array([center_of_mass(sy.plant, q) for q in res["q"]])
    expected = clohessy_wiltshire(res.t, com[0], np.zeros(3), n)  # everything starts at rest
    drift = np.linalg.norm(expected[-1] - com[0])
    assert drift > 1e-3  # [m] the CW terms moved it
    # the arm tracks its curve from t = 1 s: the base moves, the centre of mass does not care
    assert np.abs(res["base_pos_err"]).max() > 2 * drift
    np.testing.assert_allclose(com, expected, rtol=0, atol=1e-9 * max(drift, 1.0))
    # without the orbit nothing moves it
    res0 = run(load_scenario(SK, ["scenario.duration=4"] + OFF), progress=False)
    com0 = np.array([center_of_mass(sy.plant, q) for q in res0["q"]])
    np.testing.assert_allclose(com0 - com0[0], 0.0, rtol=0, atol=1e-12)


def test_the_gravity_gradient_torque_on_the_base_is_the_rigid_bodys():
    n = 0.01
    J6 = [3.0, 5.0, 7.0, 0.2, -0.1, 0.3]  # Ixx, Iyy, Izz, Ixy, Ixz, Iyz [kg m^2]
    sc = load_scenario(
        SK,
        [
            "orbit.enabled=true",
            f"orbit.rate={n}",
            f"base.inertia={J6}",
            "thrusters.enabled=false",
            "vscmg.enabled=false",
        ],
    )
    sy = build_system(sc.config)
    plant = Plant(sy)
    J = np.array([[3.0, 0.2, -0.1], [0.2, 5.0, 0.3], [-0.1, 0.3, 7.0]])
    tau, fext = np.empty(sy.plant.nv), np.empty((sy.plant.nb, 6))
    v = np.zeros(sy.plant.nv)
    for rpy in ([0, 0, 0], [30, -20, 50], [-100, 45, 170]):
        quat = quat_from_rpy_deg(rpy)
        q = sy.q0.copy()
        q[:8] = dq_from_quat_translation(quat, [0.0, 0.0, 0.0])  # at the Hill origin
        _inputs.closed_loop_inputs(0.0, 0.0, q, v, plant.params, plant.mem, tau, fext)
        R = rotation_matrix_from_quat(quat)
        r_hat = R.T @ [1.0, 0.0, 0.0]
        expected = 3 * n * n * np.cross(r_hat, J @ r_hat)
        np.testing.assert_allclose(fext[0, 3:], expected, rtol=1e-12, atol=1e-18)
        np.testing.assert_allclose(fext[0, :3], 0.0, atol=1e-18)  # its CoM at the origin
    assert np.abs(expected).max() > 1e-4  # [N m]: not an equilibrium attitude


def test_with_the_orbit_on_the_station_keeping_loop_still_holds_its_base():
    n = 0.05  # [rad/s] far faster than any real orbit
    over = ["scenario.duration=4", "orbit.enabled=true", f"orbit.rate={n}"]
    sc = load_scenario(SK, over)
    sy = build_system(sc.config)
    c0 = center_of_mass(sy.plant, sy.q0)
    drift = np.linalg.norm(
        clohessy_wiltshire(np.array([4.0]), c0, np.zeros(3), n)[0] - c0
    )  # left alone
    held = summarize(run(sc, progress=False))
    nominal = summarize(run(load_scenario(SK, over[:1]), progress=False))
    assert drift > 1e-3 and held["base_pos_err_max"] < drift / 10
    # the PD's stiffness (600 N/m) against the CW force on the system's 143 kg with its centre
    # of mass ~6 cm off the Hill origin: M n^2 (3 x, -z) ~ 0.03 N, some 0.05 mm
    assert held["base_pos_err_max"] < nominal["base_pos_err_max"] + 2e-4
    assert held["base_att_err_max"] < 0.05  # [deg]


def test_the_orbit_is_for_closed_loop_runs():
    with pytest.raises(ScenarioError, match="orbit.enabled applies to closed-loop runs"):
        load_scenario("dynamics-check", ["orbit.enabled=true"])
