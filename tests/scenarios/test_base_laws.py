"""The base laws of ``base_controller.law`` in the closed loop of a scenario: ``dual_pd``,
``dual_pid`` (integral action) and ``dual_pd_dob`` (disturbance observer).

A constant wrench on the base of the station-keeping system, near-ideal actuators (the
thrusters deliver the commanded wrench: continuous thrust, ``mode = "wrench"``, no VSCMG),
perfect knowledge, the arm held, no feedforward: the PD leaves the static offset
``[theta n, r] = 2 [tau / kp_rot, f / kp_trans]`` (base axes), the integral and the observer
remove it; the clamp leaves exactly the part of the disturbance beyond it.  The stateful
laws run compiled and, behind a user's subclass, in Python: the same run, bit for bit, and
chunking does not change it (their states live in the flight state between chunks).
"""

import sys
import types

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dqspace.control import BaseDOBController, BasePIDController, IntegralGains
from dqspace.scenarios import ScenarioError, load_scenario, run

FORCE, TORQUE = np.array([0.5, -0.3, 0.2]), np.array([0.02, -0.01, 0.03])
KP_ROT, KP_TRANS = 40.0, 600.0  # the station-keeping scenario's gains
IDEAL = [
    "vscmg.enabled=false", "thrusters.mode=wrench", "thrusters.pwm=false",
    "thrusters.min_impulse_bit=0", "sensors.enabled=false", "trajectory.type=initial",
    "base_controller.feedforward=false", "outputs.plots=false",
    f"disturbance.force={FORCE.tolist()}", f"disturbance.torque={TORQUE.tolist()}",
]  # fmt: skip
#: the PD's static offset: attitude (rotation vector) [rad], position in base axes [m]
ATT_PD, POS_PD = 2.0 * TORQUE / KP_ROT, 2.0 * FORCE / KP_TRANS


def _run(law, extra=(), duration=40.0):
    sets = [*IDEAL, f"base_controller.law={law}", f"scenario.duration={duration}", *extra]
    res = run(load_scenario("station-keeping", sets), progress=False)
    assert res.status == "complete"
    return res


def _end(res):
    """The base's attitude (rotation vector) and its position in base axes at the end."""
    att = np.asarray(res["base_att_err"][-1])
    pos = Rotation.from_rotvec(att).inv().apply(np.asarray(res["base_pos_err"][-1]))
    return att, pos


@pytest.fixture(scope="module")
def runs():
    return {law: _run(law) for law in ("dual_pd", "dual_pid", "dual_pd_dob")}


def test_the_pd_leaves_the_static_offset(runs):
    """After 40 s (the slowest pole, -0.36 1/s, leaves 6e-7 of the transient)."""
    att, pos = _end(runs["dual_pd"])
    np.testing.assert_allclose(att, ATT_PD, rtol=1e-5)
    np.testing.assert_allclose(pos, POS_PD, rtol=1e-5)
    # the commanded wrench balances the disturbance
    np.testing.assert_allclose(runs["dual_pd"]["wrench_cmd"][-1], -np.r_[FORCE, TORQUE], rtol=1e-6)


def test_the_integral_and_the_observer_remove_the_offset(runs):
    """Within 40 s: below 1 % of the PD's offset with the integral (its slowest poles are
    at -0.17 1/s), below 1e-5 with the observer (bandwidth 1 rad/s)."""
    scale = np.abs(np.r_[ATT_PD, POS_PD]).max()
    for law, tol in (("dual_pid", 1e-2), ("dual_pd_dob", 1e-5)):
        att, pos = _end(runs[law])
        assert np.abs(np.r_[att, pos]).max() < tol * scale, law
        # the command balances the disturbance, the PD's share of it going to zero
        np.testing.assert_allclose(
            runs[law]["wrench_cmd"][-1], -np.r_[FORCE, TORQUE], rtol=tol / 10, err_msg=law
        )


def test_with_the_feedforward_the_observer_still_removes_the_offset():
    """With ``feedforward = true`` the arm's torques assume the base accelerates under the
    commanded wrench less the observer's compensation ``-d^``: under a constant
    disturbance the arm is not deflected and feeds no phantom reaction forward, so the
    observer removes the offset as without the feedforward (with the compensation counted
    as acceleration, 8 mrad about y remained: docs/control.md)."""
    res = _run("dual_pd_dob", ["base_controller.feedforward=true"])
    att, pos = _end(res)
    scale = np.abs(np.r_[ATT_PD, POS_PD]).max()
    assert np.abs(np.r_[att, pos]).max() < 1e-5 * scale
    # the arm is not deflected: its planned acceleration, hence its reaction, vanishes
    assert np.abs(np.asarray(res["wrench_ff"][-1])).max() < 1e-6


def test_the_clamp_leaves_the_disturbance_beyond_it():
    """Anti-windup in the loop: the integral stops at its limits (0.2 N, 0.005 N m), the PD
    balances the rest: ``[theta n, r] = 2 (d - limit sign d) / kp`` where ``|d| > limit``
    (to 2e-7), going to zero elsewhere."""
    res = _run(
        "dual_pid",
        ["base_controller.integral_limit_force=[0.2, 0.2, 0.2]",
         "base_controller.integral_limit_torque=[0.005, 0.005, 0.05]"],
    )  # fmt: skip
    att, pos = _end(res)
    clamped = np.r_[True, True, False]  # |d| > limit on x and y; z is integrated away
    want_pos, want_att = 2.0 * np.r_[0.3, -0.1] / KP_TRANS, 2.0 * np.r_[0.015, -0.005] / KP_ROT
    np.testing.assert_allclose(pos[clamped], want_pos, atol=2e-7)
    np.testing.assert_allclose(att[clamped], want_att, atol=2e-7)
    # the free axis as without a clamp: below 1 % of the PD's offset after 40 s
    assert abs(pos[2]) < 1e-2 * POS_PD[2] and abs(att[2]) < 1e-2 * ATT_PD[2]


# ---------------------------------------------------------- compiled and Python: one run

GAINS_PID = IntegralGains(ki_rot=4.0, ki_trans=120.0, limit_force=2.0, limit_torque=0.2)


@pytest.fixture
def user_laws(monkeypatch):
    """A user's module with the built-in stateful laws behind subclasses (not compiled),
    made with the scenario's default settings; each class keeps what it made."""

    class PID(BasePIDController):
        made = []

        def __init__(self, model, gains):
            super().__init__(model, gains, GAINS_PID, period=0.01)
            PID.made.append(self)

    class DOB(BaseDOBController):
        made = []

        def __init__(self, model, gains):
            super().__init__(model, gains, bandwidth=1.0, period=0.01)
            DOB.made.append(self)

    mod = types.ModuleType("my_stateful_laws")
    mod.PID, mod.DOB = PID, DOB
    monkeypatch.setitem(sys.modules, "my_stateful_laws", mod)
    return mod


def _same(a, b):
    for k in a.data:
        np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)


@pytest.mark.parametrize("law, cls", [("dual_pid", "PID"), ("dual_pd_dob", "DOB")])
def test_a_python_law_records_what_the_compiled_law_records(law, cls, user_laws):
    """The default station-keeping loop (pulse-modulated thrusters, VSCMGs, the lemniscate,
    the feedforward) with a disturbance and its noise, 2.5 s: the same numbers."""
    sets = [
        "scenario.duration=2.5", "disturbance.force=[0.5, -0.3, 0.2]",
        "disturbance.torque_noise_std=0.01", "outputs.plots=false",
    ]  # fmt: skip
    user = f"base_controller.law=my_stateful_laws:{cls}"
    fast = run(load_scenario("station-keeping", [*sets, f"base_controller.law={law}"]),
               progress=False)  # fmt: skip
    slow = run(load_scenario("station-keeping", [*sets, user]), progress=False)
    assert fast.status == slow.status == "complete"
    _same(fast, slow)
    assert len(getattr(user_laws, cls).made) == 1


def test_the_observer_in_the_loop_estimates_the_disturbance(user_laws):
    """The ideal loop in Python, 20 s: the observer's estimate is the disturbance (to
    1e-6 N, 1e-7 N m)."""
    _run("my_stateful_laws:DOB", duration=20.0)
    est = user_laws.DOB.made[-1].estimate
    np.testing.assert_allclose(est[:3], FORCE, atol=1e-6)
    np.testing.assert_allclose(est[3:], TORQUE, atol=1e-7)


@pytest.mark.parametrize("law", ["dual_pid", "dual_pd_dob"])
def test_chunking_does_not_change_a_run(law):
    ov = [
        "scenario.duration=1.2", "disturbance.torque_noise_std=0.01",
        "disturbance.force=[0.5, -0.3, 0.2]", f"base_controller.law={law}", "outputs.plots=false",
    ]  # fmt: skip
    one = run(load_scenario("station-keeping", [*ov, "outputs.checkpoint_every=1.0"]),
              progress=False)  # fmt: skip
    many = run(load_scenario("station-keeping", [*ov, "outputs.checkpoint_every=0.03"]),
               progress=False)  # fmt: skip
    _same(one, many)


def test_an_observer_faster_than_the_control_rate_is_refused():
    sc = load_scenario(
        "station-keeping",
        ["base_controller.law=dual_pd_dob", "base_controller.observer_bandwidth=150"],
    )
    with pytest.raises(ScenarioError, match="observer_bandwidth"):
        run(sc, progress=False)
