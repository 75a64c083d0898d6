"""The impedance hold after the grasp in capture runs (``capture.hold = "impedance"``).

References independent of the laws: the interface wrench measured from the held target's
motion (:func:`~dqspace.scenarios.sim.capture.interface_wrench`: the target's Newton-Euler
with its recorded twists), the arm's torques and their saturation as the plant recorded
them against the arm's torque limits, and a momentum bound: an interface within
``(f_max, tau_max)`` changes the target's angular momentum about its CoM at most at
``tau_max + |d| f_max`` (``d`` the CoM's distance from the fixture), so no detumble within
the limits is faster than ``(|h_t(0)| - I_max w_res) / (tau_max + |d| f_max)``.

Short runs: the embedded scenario to 2 s after its grasp, the short 50 kg capture of
``test_capture_scenario`` at three limits, the UR5 servicer with a heavier, faster target.
"""

import numpy as np
import pytest
from test_capture_scenario import SHORT, UR5, _Bar, _Rows

from dqspace.dq import translation_from_dq
from dqspace.multibody import center_of_mass, momentum
from dqspace.scenarios import load_scenario
from dqspace.scenarios.sim.capture import Capture, interface_wrench
from dqspace.scenarios.spec.config import ScenarioError


def _simulate(overrides, scenario="capture"):
    cap = Capture(load_scenario(scenario, overrides).config)
    rows = _Rows()
    cap.simulate(rows, lambda: None, _Bar())
    return cap, rows


def _peaks(cap, rows):
    """(force [N], torque [N m]) peaks of the measured interface wrench after the grasp."""
    after = rows.t >= cap.t_grasp - 1e-9
    g = interface_wrench(cap.target, rows["target_pose"][after], rows["target_twist"][after],
                         cap.period)  # fmt: skip
    return np.linalg.norm(g[:, 3:], axis=1).max(), np.linalg.norm(g[:, :3], axis=1).max()


def _limits(cap):
    c = cap.cfg["capture"]
    return c["interface_force_limit"], c["interface_torque_limit"], c["interface_margin"]


def _arm_within_its_torque_limits(cap, rows):
    info = cap.phase2.sy.arm_info
    after = rows.t >= cap.t_grasp - 1e-9
    tau = rows["arm_tau"][after]
    assert np.abs(tau).max() > 0.1  # the arm works: the comparison can fail
    assert np.all(np.abs(tau) <= info.torque_limit * (1 + 1e-9))
    assert not np.any(rows["arm_saturated"][after])


@pytest.fixture(scope="module")
def embedded():
    return _simulate(["scenario.duration=9.0", "outputs.plots=false"])


def test_the_embedded_capture_keeps_the_interface_within_its_limits(embedded):
    cap, rows = embedded
    f_lim, t_lim, eta = _limits(cap)
    assert cap.cfg["capture"]["hold"] == "impedance" and (f_lim, t_lim) == (50.0, 30.0)
    f, t = _peaks(cap, rows)
    assert f <= f_lim and t <= t_lim
    # the limit binds: the hold brakes the target's 2.9 deg/s at the torque the laws aim
    # at (the unlimited impedance puts 56 N m on it at the grasp)
    assert t >= 0.9 * eta * t_lim
    _arm_within_its_torque_limits(cap, rows)
    # the target is braked: its rate 2 s after the grasp well below the 2.9 deg/s
    w = np.degrees(np.linalg.norm(rows["target_twist"][-1, :3]))
    assert w < 1.0


def test_a_heavier_faster_target_on_the_ur5_servicer_stays_within_the_limits():
    heavy = [
        *UR5,
        "scenario.duration=3.0",
        "target.mass=200.0",
        "target.inertia=[8.0,6.0,10.0,-0.3,0.2,0.1]",
        "target.rate_deg_s=[-4.0,6.0,3.0]",  # 7.8 deg/s
        "capture.interface_force_limit=30.0",
        "capture.interface_torque_limit=4.0",
    ]
    cap, rows = _simulate(heavy, "ur5-waypoints")
    f_lim, t_lim, eta = _limits(cap)
    f, t = _peaks(cap, rows)
    assert f <= f_lim and t <= t_lim
    assert t >= 0.9 * eta * t_lim  # binding: 5.9 N m without the limit
    _arm_within_its_torque_limits(cap, rows)


@pytest.fixture(scope="module")
def three_limits():
    """The short capture with the default limits (100 N, 100 N m: not reached) and two
    tight ones."""
    runs = {}
    for f_lim, t_lim in ((100.0, 100.0), (3.0, 1.0), (2.0, 0.5)):
        over = [f"capture.interface_force_limit={f_lim}", f"capture.interface_torque_limit={t_lim}"]
        runs[t_lim] = _simulate([*SHORT, *over])
    return runs


def _momentum_bound(cap, rows):
    """The shortest detumble an interface within the limits allows (module docstring)."""
    f_lim, t_lim, _ = _limits(cap)
    target, tm = cap.target, cap.target.model
    k = int(np.argmin(np.abs(rows.t - cap.t_grasp)))
    pose, twist = rows["target_pose"][k], rows["target_twist"][k]
    h0 = np.linalg.norm(momentum(tm, pose, twist, point=center_of_mass(tm, pose)).angular)
    residual = np.radians(cap.cfg["capture"]["residual_rate_deg_s"])
    d = np.linalg.norm(target.com - translation_from_dq(target.fixture))
    return (h0 - np.linalg.eigvalsh(target.inertia).max() * residual) / (t_lim + d * f_lim)


def test_a_tighter_limit_gives_a_slower_detumble_and_the_peak_follows_it(three_limits):
    loose, mid, tight = three_limits[100.0], three_limits[1.0], three_limits[0.5]
    times, ratios = [], []
    for cap, rows in (loose, mid, tight):
        f_lim, t_lim, eta = _limits(cap)
        f, t = _peaks(cap, rows)
        assert f <= f_lim and t <= t_lim
        ratios.append(t / t_lim)
        out = cap.metrics(rows)
        assert np.isfinite(out["detumble_time"]), out
        assert out["detumble_time"] >= _momentum_bound(cap, rows) > 0.0
        times.append(out["detumble_time"])
        _arm_within_its_torque_limits(cap, rows)
    # loose: far from its limit; tight: at the margin's share of theirs, whichever it is
    assert ratios[0] < 0.1
    assert 0.9 * eta <= ratios[1] <= 1.0 and 0.9 * eta <= ratios[2] <= 1.0
    assert times[0] < times[1] < times[2]


@pytest.mark.parametrize(
    "override, named",
    [
        ("capture.hold=spring", "capture.hold"),
        ("capture.interface_force_limit=0.0", "capture.interface_force_limit"),
        ("capture.interface_torque_limit=-1.0", "capture.interface_torque_limit"),
        ("capture.interface_margin=1.5", "capture.interface_margin"),
        ("capture.hold_zeta=0.0", "capture.hold_zeta"),
    ],
)
def test_bad_hold_keys_are_named(override, named):
    with pytest.raises(ScenarioError, match=named):
        Capture(load_scenario("capture", [*SHORT, override]).config)


def test_a_placed_target_is_held_without_a_spinning_wrist():
    # a 330 kg target placed so that the iiwa starts in its q4 > 0 elbow branch (these
    # joints, the stand-off back from the fixture: target.xyz cancels capture.standoff):
    # there an unweighted joint damping k_n v_m (a torque, not a rate) spun joints 5 and 7
    # up to their rate limits within 0.1 s of the grasp
    keys = [
        "target.mass=329.798",
        "target.inertia=[27.2966,44.5523,49.1665,0.78625,0.465026,0.0337995]",
        "target.rate_deg_s=[-0.357009,1.60224,-2.03369]",
        "target.fixture_xyz=[0.0,0.0,-0.321193]",
        "target.placement=end_effector",
        "target.xyz=[0.0,0.0,0.2]",
        "arm.initial_joints_deg=[1.679520478,-53.67564815,-0.1812242229,101.3012125,"
        "0.1817559994,-32.5439593,-1.715927336]",
        "capture.grasp_time=6.5",
        "scenario.duration=7.0",
        "outputs.plots=false",
    ]
    cap, rows = _simulate(keys)
    assert np.degrees(rows["arm_q"][0, 3]) > 90.0  # that branch: the test can fail
    _arm_within_its_torque_limits(cap, rows)
    f_lim, t_lim, _ = _limits(cap)
    f, t = _peaks(cap, rows)
    assert f <= f_lim and t <= t_lim
    after = rows.t >= cap.t_grasp - 1e-9
    assert np.degrees(np.abs(rows["v"][after, 6:13]).max()) < 30.0  # no joint spins up
