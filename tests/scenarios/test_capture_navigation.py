"""The relative navigation of the target in a capture scenario (``[target_navigation]``,
:mod:`dqspace.scenarios.sim.capture_nav`).

References independent of the filter: the true motion of the target (the run's own
``free_motion`` table) and the plant's end-effector at the grasp (``grasp_misalignment``
of the library); a single pose sample's error from the sensor's sigmas (the filter must do
at least as well); the seeding rule (same seed, same estimate).

Short runs: the scenario tests' ``SHORT`` capture, grasped at 2 s, 2.1 s simulated.
"""

from types import SimpleNamespace

import numpy as np
import pytest
from test_capture_scenario import SHORT, _simulate

from dqspace.dq import dq_mul, translation_from_dq
from dqspace.multibody import grasp_misalignment
from dqspace.scenarios import load_scenario
from dqspace.scenarios.sim.capture import Capture
from dqspace.scenarios.sim.capture_nav import target_estimate
from dqspace.scenarios.spec.config import ScenarioError

#: the scenario tests' short capture, its approach on the estimate (the embedded keys), the
#: grasp at 2 s (20 samples: the estimate's corrections have become small against its error)
NAV = [
    *SHORT,
    "target_navigation.enabled=true",
    "capture.grasp_time=2.0",
    "scenario.duration=2.1",
]


@pytest.fixture(scope="module")
def navigated():
    return _simulate(NAV)


def test_the_approach_tracks_the_estimate_and_the_grasp_shows_its_error(navigated):
    cap, rows = navigated
    nav, fixture = cap.nav, cap.target.fixture
    # the end-effector's reference is built from the estimate, not from the true motion
    F_est = np.array([dq_mul(p, fixture) for p in nav.q])
    assert np.array_equal(cap.track.F, F_est)
    out = cap.metrics(rows)
    assert out["target_nav_pos_err_at_grasp"] > 1e-4  # the estimate is off: can fail
    # the arm follows the estimated fixture, not the true one: over the second before the
    # grasp (synchronised) the end-effector is nearer the estimate
    sy, ee = cap.phase1.sy, cap.phase1.sy.arm_info.ee_frame
    k = np.flatnonzero((rows.t >= cap.t_grasp - 1.0) & (rows.t < cap.t_grasp))
    d_est, d_true = [], []
    for i in k:
        d_est.append(grasp_misalignment(sy.plant, rows["q"][i], cap.target, nav.q[i], frame=ee)[0])
        d_true.append(
            grasp_misalignment(sy.plant, rows["q"][i], cap.target, cap.motion.q[i], frame=ee)[0]
        )
    rms_est, rms_true = np.sqrt(np.mean(np.square(d_est))), np.sqrt(np.mean(np.square(d_true)))
    assert rms_est < 0.5 * rms_true, (rms_est, rms_true)
    # and the grasp's misalignment is the true fixture's distance, the estimate's error in it
    q = cap.before[0]
    on_truth, _ = grasp_misalignment(sy.plant, q, cap.target, cap.motion.q[-1], frame=ee)
    assert on_truth == out["grasp_distance"] > 1e-4


def test_the_recorded_errors_are_the_estimates_against_the_recorded_target(navigated):
    cap, rows = navigated
    before = rows.t <= cap.t_grasp + 1e-9  # through the grasp's row
    e = rows["target_nav_error"]
    assert np.all(np.isnan(e[~before])) and not np.any(np.isnan(e[before]))
    fixture = cap.target.fixture
    true_F = [dq_mul(p, fixture) for p in rows["target_pose"][before]]
    est_F = [dq_mul(p, fixture) for p in cap.nav.q]
    d = [np.linalg.norm(translation_from_dq(a) - translation_from_dq(b))
         for a, b in zip(est_F, true_F, strict=True)]  # fmt: skip
    assert np.max(d) > 1e-4
    assert np.allclose(e[before, 0], d, rtol=0.0, atol=1e-12)
    out = cap.metrics(rows)
    assert out["target_nav_pos_err_at_grasp"] == e[before, 0][-1]


def test_the_estimate_at_the_grasp_beats_one_sample_of_the_sensor(navigated):
    cap, rows = navigated
    n = cap.cfg["target_navigation"]
    s_pos, s_att = n["position_noise"], np.radians(n["attitude_noise_deg"])
    d = np.linalg.norm(cap.cfg["target"]["fixture_xyz"])  # the fixture's lever arm
    # one sample's fixture position error per axis: the position's noise and the
    # attitude's at the fixture's lever arm; the norm of 3 such is < 3.4 sigma at 99 %
    sigma = np.sqrt(s_pos**2 + (s_att * d) ** 2)
    out = cap.metrics(rows)
    assert out["target_nav_pos_err_at_grasp"] < 3.4 * sigma
    assert np.radians(out["target_nav_att_err_at_grasp"]) < 3.4 * s_att
    # the rate from two samples the whole approach apart
    t = cap.t_grasp - n["latency"]
    assert out["target_nav_rate_err_at_grasp"] < 3.4 * np.sqrt(2.0) * s_att / t
    # the errors recorded are the estimate's against the true motion
    e = cap.nav.q[-1][:4] @ cap.motion.q[-1][:4]
    angle = 2.0 * np.arccos(min(1.0, abs(e)))
    assert np.degrees(angle) == pytest.approx(out["target_nav_att_err_at_grasp"], abs=1e-6)


def test_perfect_knowledge_when_disabled_and_the_estimate_seeded():
    cfg = load_scenario("capture", SHORT).config  # enabled = false
    cap = Capture(cfg)
    assert cap.nav is None
    F_true = np.array([dq_mul(p, cap.target.fixture) for p in cap.motion.q])
    assert np.array_equal(cap.track.F, F_true)  # the true motion, as before the section
    cfg["target_navigation"]["enabled"] = True
    a = target_estimate(cfg, cap.target, cap.motion, cap.period)
    b = target_estimate(cfg, cap.target, cap.motion, cap.period)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)  # reproducible
    cfg["scenario"]["seed"] = 1
    c = target_estimate(cfg, cap.target, cap.motion, cap.period)
    assert np.abs(c.q - a.q).max() > 1e-5  # another seed, other draws


def test_a_requirement_may_name_the_navigation_metrics():
    sc = load_scenario("capture", [*SHORT, "requirements.target_nav_att_err_rms=0.5"])
    assert "target_nav_att_err_rms" in sc.config["requirements"]


@pytest.mark.parametrize(
    "override, named",
    [
        ("target_navigation.rate=30.0", "target_navigation.rate"),
        ("target_navigation.rate=400.0", "target_navigation.rate"),
        ("target_navigation.latency=0.015", "target_navigation.latency"),
        ("target_navigation.position_noise=-1.0", "target_navigation.position_noise"),
        ("target_navigation.cadence=5.0", "target_navigation.cadence"),
    ],
)
def test_bad_navigation_keys_are_named(override, named):
    with pytest.raises(ScenarioError, match=named):
        load_scenario("capture", [*NAV, override])


def test_navigation_keys_in_another_kind_of_scenario_are_refused():
    with pytest.raises(ScenarioError, match="target_navigation.rate.*capture scenario only"):
        load_scenario("station-keeping", ["target_navigation.rate=5.0"])


def test_a_noise_free_sensor_from_a_true_start_reproduces_perfect_knowledge():
    # the filter's model is exact (torque-free, the inertia known): with no noise and no
    # initial error its estimate is the true motion to rounding, and so is the whole run
    exact = [
        "target_navigation.position_noise=0.0",
        "target_navigation.attitude_noise_deg=0.0",
        "target_navigation.initial_position_error=0.0",
        "target_navigation.initial_velocity_error=0.0",
        "target_navigation.initial_attitude_error_deg=0.0",
        "target_navigation.initial_rate_error_deg_s=0.0",
        "scenario.duration=1.2",
    ]
    cap0, rows0 = _simulate([*SHORT, "scenario.duration=1.2"])  # enabled = false
    cap1, rows1 = _simulate([*SHORT, "target_navigation.enabled=true", *exact])
    assert cap0.nav is None and cap1.nav is not None
    assert np.abs(cap1.nav.q - cap0.motion.q).max() < 1e-12
    assert np.abs(cap1.nav.v - cap0.motion.v).max() < 1e-12
    assert np.abs(rows1["q"] - rows0["q"]).max() < 1e-9
    m0, m1 = cap0.metrics(rows0), cap1.metrics(rows1)
    assert m1["grasp_distance"] == pytest.approx(m0["grasp_distance"], rel=0.0, abs=1e-9)
    assert m1["target_nav_pos_err_at_grasp"] < 1e-12


def test_an_aligned_grasp_and_a_miss_keep_the_estimate_in_step():
    # aligned trigger: the grasp earlier than the timeout; the metrics at the grasp's tick
    cap, rows = _simulate([*NAV, "capture.trigger=aligned", "capture.grasp_dwell=0.2"])
    k = int(round(cap.t_grasp / cap.period))
    assert cap.t_grasp < 2.0 - 1e-9 and len(cap.nav.q) > k + 1  # the table goes on
    out = cap.metrics(rows)
    e = rows["target_nav_error"]
    assert out["target_nav_pos_err_at_grasp"] == cap.nav.errors[k, 0]
    assert np.all(np.isnan(e[rows.t > cap.t_grasp + 1e-9]))
    # a miss: the approach runs on to the end, still on the estimate, recorded to the end
    cap, rows = _simulate([*NAV, "capture.trigger=aligned", "capture.grasp_tolerance=1e-7"])
    assert cap.impact is None and cap.trigger.missed
    n = cap.rows
    assert cap.nav.q.shape[0] == n and cap.motion.q.shape[0] == n
    F_est = np.array([dq_mul(p, cap.target.fixture) for p in cap.nav.q])
    assert np.array_equal(cap.track.F, F_est)  # the track is the extended estimate's
    assert not np.any(np.isnan(rows["target_nav_error"]))
    assert rows.t[-1] == pytest.approx(cap.duration)
    # the estimate of the longer motion is the first one's continuation (causal, same draws)
    m = int(round(2.0 / cap.period)) + 1  # the table up to the timeout, before the miss
    first = SimpleNamespace(q=cap.motion.q[:m], v=cap.motion.v[:m])
    short = target_estimate(cap.cfg, cap.target, first, cap.period)
    assert np.array_equal(short.q, cap.nav.q[:m]) and np.array_equal(short.v, cap.nav.v[:m])
