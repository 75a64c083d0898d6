"""``target.placement = "end_effector"``: the target placed from where the arm stands.

References independent of the placement: the plant's end-effector pose at the run's first
row (the library's ``frame_pose``) against the recorded target pose carried to its fixture
and the stand-off; the momentum of servicer plus target through the grasp (the library's
``momentum`` on the servicer's plant and on the target's one-body model) for targets and
servicers the embedded scenario does not have.
"""

import numpy as np
import pytest
from test_capture_scenario import _simulate

from dqspace.dq import dq_from_quat_translation, dq_mul, translation_from_dq
from dqspace.multibody import frame_pose, momentum
from dqspace.scenarios import load_scenario
from dqspace.scenarios.sim.capture import Capture
from dqspace.scenarios.spec.config import ScenarioError

#: a short capture placed at the end-effector: approach 0.5 s, grasp at 1 s, 1.5 s
PLACED = [
    "target.placement=end_effector",
    "target.xyz=[0.0,0.0,0.0]",
    "target.rpy_deg=[0.0,0.0,0.0]",
    "scenario.duration=1.5",
    "capture.approach_duration=0.5",
    "capture.grasp_time=1.0",
    "capture.trigger=time",
    "capture.standoff=[0.0,0.0,-0.05]",
    "target_navigation.enabled=false",
    "outputs.plots=false",
]

#: servicers and targets the embedded scenario does not have: the UR5 servicer (a 150 kg
#: base, reaction wheels) with a 40 kg target at 4 deg/s, and the iiwa with a heavier,
#: faster 2000 kg target at 5 deg/s about a non-principal axis
CASES = {
    "ur5": (
        "ur5-waypoints",
        [
            "scenario.kind=capture",
            "thrusters.mode=force",
            "target.mass=40.0",
            "target.inertia=[2.0,1.6,2.4,0.1,-0.05,0.08]",
            "target.fixture_xyz=[0.0,0.0,-0.3]",
            "target.rate_deg_s=[-2.0,3.0,1.5]",
        ],
    ),
    "iiwa-heavy": (
        "capture",
        [
            "target.mass=2000.0",
            "target.inertia=[1800.0,1500.0,1200.0,80.0,-60.0,40.0]",
            "target.fixture_xyz=[0.0,0.0,-1.0]",
            "target.rate_deg_s=[3.0,-3.5,2.0]",
            "arm.initial_joints_deg=[0.0,30.0,0.0,-60.0,0.0,45.0,0.0]",
        ],
    ),
}


def _total(model, q, v):
    m = momentum(model, q, v)
    return np.r_[m.linear, m.angular]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_placed_target_starts_at_the_arm_and_is_grasped_with_momentum_kept(case):
    scenario, keys = CASES[case]
    cap, rows = _simulate([*keys, *PLACED], scenario)
    sy, ee = cap.phase1.sy, cap.phase1.sy.arm_info.ee_frame
    # the fixture starts where the end-effector stands at arm.initial_joints_deg (the
    # library's frame_pose on the plant at those joints against the recorded target pose
    # carried to its fixture), and the arm starts the stand-off back from it
    q0 = rows["q"][0]
    seed = np.radians(cap.cfg["arm"]["initial_joints_deg"])
    qs = q0.copy()
    qs[8 : 8 + sy.arm_info.n] = seed
    qs[:8] = [1.0, 0, 0, 0, 0, 0, 0, 0]
    F0 = dq_mul(rows["target_pose"][0], cap.target.fixture)
    E_seed = frame_pose(sy.plant, qs, ee)
    assert np.linalg.norm(translation_from_dq(E_seed) - translation_from_dq(F0)) < 1e-12
    assert abs(abs(E_seed[:4] @ F0[:4]) - 1.0) < 1e-12
    E0 = frame_pose(sy.plant, q0, ee)
    S0 = dq_from_quat_translation(np.array([1.0, 0, 0, 0]), [0.0, 0.0, -0.05])
    D0 = dq_mul(F0, S0)
    assert np.linalg.norm(translation_from_dq(E0) - translation_from_dq(D0)) < 1e-9
    assert abs(abs(E0[:4] @ D0[:4]) - 1.0) < 1e-12
    # the grasp happened, and momentum of servicer plus target is kept through it
    assert cap.impact is not None
    q, v, pose, twist = cap.before
    tm = cap.target.model
    before = _total(sy.plant, q, v) + _total(tm, pose, twist)
    after = _total(cap.phase2.sy.plant, q, cap.impact.v)
    assert np.linalg.norm(after - before) <= 1e-10 * np.linalg.norm(before)
    # the end-effector met the fixture within the grasp tolerance
    assert cap.misalignment[0] < cap.cfg["capture"]["grasp_tolerance"]


def test_placement_needs_a_known_choice():
    with pytest.raises(ScenarioError, match="target.placement"):
        load_scenario("capture", ["target.placement=somewhere"])


def test_the_base_placement_is_the_table_as_before():
    cfg = load_scenario("capture", ["target.placement=base"]).config
    a = Capture(cfg)
    b = Capture(load_scenario("capture").config)
    assert np.array_equal(a.motion.q, b.motion.q)


def test_placement_from_a_singular_arm_is_refused_naming_the_joints():
    # the iiwa with every joint at zero stands straight up: it cannot follow the fixture
    keys = [k for k in PLACED if not k.startswith("arm.")] + ["arm.initial_joints_deg=[]"]
    with pytest.raises(ScenarioError, match=r"arm\.initial_joints_deg = .*singular"):
        Capture(load_scenario("capture", keys).config)
