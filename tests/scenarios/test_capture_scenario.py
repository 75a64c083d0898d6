"""The capture scenario (``scenario.kind = "capture"``, :mod:`dqspace.scenarios.sim.capture`).

References independent of the run: the total momentum of servicer plus target (the
library's ``momentum`` on the servicer's plant, on the target's one-body model and on the
plant after the grasp) conserved through the grasp; the rigid grasp's kinematic condition
(the end-effector's twist equal to the fixture's after the impact); the torque-free
propagation of the target against the kinematics of the held target; the detumble time
against the bound ``|dh| / tau_max`` (no torque can remove momentum faster).

Short runs: the grasp at 1 s, at most 3 s simulated.
"""

import numpy as np
import pytest

from dqspace.dq import adjoint_matrix, dq_mul, rotation_matrix_from_dq, translation_from_dq
from dqspace.multibody import (
    center_of_mass,
    frame_pose,
    frame_twist,
    grasp_impact,
    momentum,
)
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.sim.capture import Capture, interface_wrench, stack_momentum
from dqspace.scenarios.spec.config import ScenarioError

#: a short capture of a 50 kg target at 3 deg/s on the embedded servicer: the fixture at
#: the embedded one's place, grasped at 1 s
SHORT = [
    "scenario.duration=3.0",
    "capture.approach_duration=0.5",
    "capture.grasp_time=1.0",
    "capture.standoff=[0.0,0.0,-0.05]",
    "capture.hold_omega_n=5.0",
    "target.mass=50.0",
    "target.inertia=[4.0,3.5,3.0,0.2,-0.15,0.1]",
    "target.fixture_xyz=[0.0,0.0,-0.3]",
    "target.xyz=[0.5,0.0,2.05]",
    "target.rate_deg_s=[1.5,2.0,1.5]",
    "target_navigation.enabled=false",  # perfect knowledge (test_capture_navigation.py: on)
    "capture.trigger=time",  # at grasp_time (the trigger's own tests: test_capture_trigger)
    "outputs.plots=false",
]

#: a second servicer (the UR5 on a 150 kg base) and another target: 30 kg, other inertia,
#: 4 deg/s about another axis, the fixture below the UR5's start pose
UR5 = [
    "scenario.kind=capture",
    "scenario.duration=2.0",
    "capture.approach_duration=0.5",
    "capture.grasp_time=1.0",
    "capture.standoff=[0.0,0.0,-0.05]",
    "thrusters.mode=force",
    "target.mass=30.0",
    "target.com=[0.02,0.0,-0.01]",
    "target.inertia=[1.2,0.9,1.5,-0.05,0.03,0.02]",
    "target.fixture_xyz=[0.0,0.0,-0.3]",
    "target.xyz=[-0.487,-0.109,0.382]",
    "target.rpy_deg=[180.0,0.0,90.0]",
    "target.rate_deg_s=[-2.0,3.0,1.0]",
    "outputs.plots=false",
]


class _Rows:
    """The smallest recorder a run writes to (rows appended per chunk), read back as
    ``rows.t`` and ``rows[name]`` like a Results."""

    def __init__(self):
        self.manifest = {"events": []}
        self.blocks = []

    def add_rows(self, m, **blocks):
        self.blocks.append({k: np.array(v[:m]) for k, v in blocks.items()})

    def __getitem__(self, name):
        return np.concatenate([b[name] for b in self.blocks])

    def __contains__(self, name):
        return name in self.blocks[0]

    @property
    def t(self):
        return self["t"]


class _Bar:
    enabled = False

    def update(self, t):
        pass


def _simulate(overrides, scenario="capture"):
    cap = Capture(load_scenario(scenario, overrides).config)
    rows = _Rows()
    cap.simulate(rows, lambda: None, _Bar())
    return cap, rows


@pytest.fixture(scope="module")
def short():
    return _simulate(SHORT)


def _total(model, q, v):
    m = momentum(model, q, v)
    return np.r_[m.linear, m.angular]


def test_momentum_of_servicer_and_target_is_conserved_through_the_grasp(short):
    cap, rows = short
    q, v, pose, twist = cap.before
    before = _total(cap.phase1.sy.plant, q, v) + _total(cap.target.model, pose, twist)
    k = int(np.argmin(np.abs(rows.t - cap.t_grasp)))
    after = _total(cap.phase2.sy.plant, rows["q"][k], rows["v"][k])  # the recorded row
    assert np.linalg.norm(after - before) <= 1e-10 * np.linalg.norm(before)
    assert np.linalg.norm(before[3:]) > 0.1  # a real tumble: the test can fail
    # the positions do not jump: the grasp's row is the state before, velocities changed
    assert np.array_equal(rows["q"][k], q)
    assert np.abs(rows["v"][k] - v).max() > 1e-6


def test_the_phase_after_the_grasp_starts_from_grasp_impact(short):
    cap, rows = short
    q, v, pose, twist = cap.before
    sy = cap.phase1.sy
    ee = sy.arm_info.ee_frame
    imp = grasp_impact(sy.plant, q, v, cap.target, pose, twist, frame=ee, tol=None)
    k = int(np.argmin(np.abs(rows.t - cap.t_grasp)))
    assert np.allclose(rows["v"][k], imp.v, rtol=0.0, atol=1e-12)
    # a rigid grasp: after it, the servicer's frame at the fixture (the end-effector's
    # twist carried to the fixture's pose) moves as the fixture of the target's twist
    held = cap.held  # the target's pose in the end-effector's frame
    X = dq_mul(held, cap.target.fixture)  # the fixture's pose in the end-effector's frame
    servicer_side = adjoint_matrix(X) @ frame_twist(sy.plant, q, rows["v"][k], ee)
    target_side = adjoint_matrix(cap.target.fixture) @ rows["target_twist"][k]
    scale = np.abs(target_side).max()
    assert scale > 1e-3  # the fixture moves: the comparison can fail
    assert np.allclose(servicer_side, target_side, rtol=0.0, atol=1e-10 * scale)
    # the recorded target twist is the impact's, and the held target is where it was
    assert np.allclose(rows["target_twist"][k], imp.target_twist, rtol=0.0, atol=1e-10 * scale)
    assert np.allclose(dq_mul(frame_pose(sy.plant, q, ee), held), pose, atol=1e-12)


def test_the_series_run_on_through_the_grasp(short):
    cap, rows = short
    t = rows.t
    assert t[0] == 0.0 and abs(t[-1] - 3.0) < 1e-9
    assert np.allclose(np.diff(t), cap.period, rtol=0.0, atol=1e-9)  # no gap, no repeat
    assert t.shape[0] == cap.rows
    k = int(np.argmin(np.abs(t - cap.t_grasp)))
    # the configuration is continuous: a step of at most |v| dt across the grasp
    dq = np.abs(rows["q"][k] - rows["q"][k - 1]).max()
    assert dq < 10 * cap.period * (np.abs(rows["v"][k - 1]).max() + 1e-3)
    # the target's series: from the free motion before, from the held body's kinematics
    # after; at the grasp both give the same pose
    assert np.allclose(rows["target_pose"][k], cap.motion.q[k], atol=1e-12)
    step = np.abs(rows["target_pose"][k + 1] - rows["target_pose"][k]).max()
    assert step < 10 * cap.period * np.abs(rows["target_twist"][k]).max()


def test_the_approach_brings_the_end_effector_onto_the_fixture(short):
    cap, rows = short
    # the fixture at the grasp relative to the end-effector: mm and mrad (perfect knowledge)
    out = cap.metrics(rows)
    assert out["grasp_distance"] < 1e-3
    assert out["grasp_angle"] < 0.1  # deg
    # synchronised: the impulse is small against the target's momentum (3 deg/s, 50 kg)
    h = np.linalg.norm(cap.target.spatial_inertia @ cap.before[3])
    assert out["grasp_impulse_torque"] < 1e-2 * h


def test_detumble_time_is_not_below_the_momentum_bound(short):
    cap, rows = short
    out = cap.metrics(rows)
    assert np.isfinite(out["detumble_time"]), out
    # the bound: the stack's momentum removed over the most torque the actuators give
    assert out["max_available_torque"] > 0.0 and out["stack_momentum"] > 0.0
    assert out["detumble_time"] >= out["detumble_bound"] > 0.0
    # tau_max bounds the torque on the stack: the stack's momentum (servicer and held
    # target about their CoM, the devices' own rates left out; the library's momentum)
    # never changes faster than it from tick to tick
    after = np.flatnonzero(rows.t >= cap.t_grasp - 1e-9)
    sy = cap.phase2.sy
    h = np.array([stack_momentum(sy, rows["q"][i], rows["v"][i]) for i in after])
    rate = np.linalg.norm(np.diff(h, axis=0), axis=1) / cap.period
    assert 0.0 < rate.max() <= out["max_available_torque"]
    # the residual is met from the detumble time on
    t = rows.t
    late = t >= cap.t_grasp + out["detumble_time"] - 1e-9
    for w in (rows["v"][late, :3], rows["target_twist"][late, :3]):
        rate = np.degrees(np.linalg.norm(w, axis=1))
        assert rate.max() < cap.cfg["capture"]["residual_rate_deg_s"]


def test_the_interface_wrench_is_the_held_targets_momentum_rate():
    # the wrench on the held target at the fixture (inverse dynamics of the target's model)
    # against the rates of its linear momentum and of its angular momentum about its CoM
    # (the library's momentum, differenced as the twists are), carried to inertial axes.
    # The joint hold: its smooth start keeps the two differencings within 1e-4 (the
    # impedance's saturated start, ticks of a piecewise constant torque, gives 1.3e-4
    # on the first rows: the same O(dt^2) of a faster transient)
    cap, rows = _simulate([*SHORT, "capture.hold=joint"])
    after = rows.t >= cap.t_grasp - 1e-9
    P, X = rows["target_pose"][after], rows["target_twist"][after]
    g = interface_wrench(cap.target, P, X, cap.period)
    tm = cap.target.model
    c = np.array([center_of_mass(tm, p) for p in P])
    p = np.array([momentum(tm, a, b).linear for a, b in zip(P, X, strict=True)])
    h = np.array([momentum(tm, a, b, point=cc).angular for a, b, cc in zip(P, X, c, strict=True)])
    F = np.array([dq_mul(a, cap.target.fixture) for a in P])
    R = np.array([rotation_matrix_from_dq(f) for f in F])
    r = np.array([translation_from_dq(f) for f in F])
    f_I = np.einsum("kij,kj->ki", R, g[:, 3:])
    t_I = np.einsum("kij,kj->ki", R, g[:, :3]) + np.cross(r - c, f_I)
    inner = slice(1, -1)  # central differences on both sides
    for got, want in ((f_I, np.gradient(p, cap.period, axis=0)),
                      (t_I, np.gradient(h, cap.period, axis=0))):  # fmt: skip
        peak = np.abs(want[inner]).max()
        assert peak > 1e-2  # the hold works on the target: the comparison can fail
        assert np.abs(got - want)[inner].max() <= 1e-4 * peak


def test_a_second_servicer_and_target_run_and_keep_the_momentum():
    cap, rows = _simulate(UR5, "ur5-waypoints")
    q, v, pose, twist = cap.before
    before = _total(cap.phase1.sy.plant, q, v) + _total(cap.target.model, pose, twist)
    k = int(np.argmin(np.abs(rows.t - cap.t_grasp)))
    after = _total(cap.phase2.sy.plant, rows["q"][k], rows["v"][k])
    assert np.linalg.norm(after - before) <= 1e-10 * np.linalg.norm(before)
    # the reference takes the base as held at rest: the light base's drift under the
    # arm's reaction stays in the end-effector's error (mm), inside the grasp tolerance
    assert cap.metrics(rows)["grasp_distance"] < 1e-2
    assert np.all(np.isfinite(rows["v"]))


def test_run_writes_the_capture_metrics_to_the_manifest():
    res = run(load_scenario("capture", SHORT), progress=False)
    m = res.manifest["metrics"]
    for name in ("grasp_impulse_force", "detumble_time", "detumble_bound", "stack_momentum"):
        assert name in m and name in res.manifest["metric_units"]
    assert "target_pose" in res and res["target_pose"].shape == (len(res.t), 8)
    assert any(e["event"] == "grasp" for e in res.manifest["events"])


@pytest.mark.parametrize(
    "override, named",
    [
        ("target.mass=-1.0", "target.mass"),
        ("capture.grasp_time=30.0", "capture.grasp_time"),
        ("capture.grasp_time=0.2", "capture.grasp_time"),
        ("capture.grasp_time=1.005", "capture.grasp_time"),
        ("target.inertia=[1.0,1.0,5.0,0.0,0.0,0.0]", "[target]"),
        ("capture.restitution=1.5", "capture.restitution"),
        ("capture.standoff=[0.0,0.0]", "capture.standoff"),
        ("arm.payload_mass=2.0", "arm.payload_mass"),
        ("orbit.enabled=true", "orbit.enabled"),
    ],
)
def test_bad_capture_keys_are_named(override, named):
    with pytest.raises(ScenarioError, match=named.replace("[", r"\[").replace("]", r"\]")):
        Capture(load_scenario("capture", [*SHORT, override]).config)


def test_a_fixture_out_of_reach_is_an_error_naming_the_target_keys():
    named = r"target\.placement = 'base', xyz = \[5\.0.*not reachable"
    with pytest.raises(ScenarioError, match=named):
        Capture(load_scenario("capture", [*SHORT, "target.xyz=[5.0,0.0,0.0]"]).config)


def test_an_unknown_capture_key_is_named():
    with pytest.raises(ScenarioError, match="capture.tolerance"):
        load_scenario("capture", [*SHORT, "capture.tolerance=0.1"])


@pytest.mark.parametrize("override", ["target.mass=100", "capture.grasp_time=3"])
def test_capture_keys_in_another_kind_of_scenario_are_refused_not_ignored(override):
    with pytest.raises(ScenarioError, match=override.split("=")[0] + ".*capture scenario only"):
        load_scenario("station-keeping", [override])
