"""The grasp trigger, restitution and misses of a capture (:mod:`dqspace.scenarios.sim.
capture_trigger`).

References independent of the trigger's code: the alignment recomputed at every recorded
tick with ``grasp_impact``'s relative twist (the frame Jacobian of the combined model, not
the frame twists the trigger uses) and ``grasp_misalignment``; for a restitution e > 0 the
relative twist after the contact recomputed from frame twists against ``-e`` times the one
before, the kinetic energies as ``1/2 v^T M v`` (the mass matrix) against the ``(1 - e^2)``
law, the total momentum through the grasp, and the held state against a rigid grasp's.
"""

import numpy as np
import pytest
from test_capture_scenario import _simulate

from dqspace.dq import adjoint_matrix, dq_conj, dq_mul
from dqspace.multibody import (
    frame_pose,
    frame_twist,
    grasp_impact,
    grasp_misalignment,
    mass_matrix,
    momentum,
)
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.campaigns.verdicts import judge_run
from dqspace.scenarios.sim.capture import target_of
from dqspace.scenarios.spec.config import ScenarioError

#: a 50 kg target at 3 deg/s on the embedded servicer (the scenario test's), the approach
#: over 0.5 s; the trigger's rate tolerance tight enough to hold the grasp back for a while
#: after the approach (the relative twist settles), with a 0.2 s dwell and e = 0.5
BASE = [
    "scenario.duration=1.6",
    "capture.approach_duration=0.5",
    "capture.grasp_time=1.4",
    "capture.standoff=[0.0,0.0,-0.05]",
    "capture.hold_omega_n=5.0",
    "target.mass=50.0",
    "target.inertia=[4.0,3.5,3.0,0.2,-0.15,0.1]",
    "target.fixture_xyz=[0.0,0.0,-0.3]",
    "target.xyz=[0.5,0.0,2.05]",
    "target.rate_deg_s=[1.5,2.0,1.5]",
    "target_navigation.enabled=false",  # perfect knowledge: the trigger's logic alone
    "outputs.plots=false",
]
TRIGGER = ["capture.grasp_rate_tolerance=5e-4", "capture.grasp_dwell=0.2"]
E = 0.5


@pytest.fixture(scope="module")
def bounced():
    return _simulate([*BASE, *TRIGGER, f"capture.restitution={E}"])


def _alignment(cap, q, v, k):
    """(distance, angle, |w_rel|, |v_rel|) at tick k from grasp_impact and
    grasp_misalignment (not the trigger's code)."""
    sy = cap.phase1.sy
    ee = sy.arm_info.ee_frame
    pose, twist = cap.motion.q[k], cap.motion.v[k]
    imp = grasp_impact(sy.plant, q, v, cap.target, pose, twist, frame=ee, tol=None)
    g = imp.relative_twist_before
    d, a = grasp_misalignment(sy.plant, q, cap.target, pose, frame=ee)
    return d, a, np.linalg.norm(g[:3]), np.linalg.norm(g[3:])


def test_the_grasp_happens_at_the_first_tick_aligned_for_the_dwell(bounced):
    cap, rows = bounced
    c = cap.cfg["capture"]
    period = cap.period
    k_g = cap.trigger.tick
    assert k_g is not None and cap.t_grasp == pytest.approx(k_g * period, abs=1e-12)
    first = round(c["approach_duration"] / period)
    dwell = round(c["grasp_dwell"] / period)
    # every tick from the approach's end to the grasp: recorded rows, then the state
    # just before the impact
    states = [(rows["q"][k], rows["v"][k]) for k in range(first, k_g)] + [cap.before[:2]]
    ok = []
    for k, (q, v) in zip(range(first, k_g + 1), states, strict=True):
        d, a, w, s = _alignment(cap, q, v, k)
        tol, rtol = c["grasp_tolerance"], c["grasp_rate_tolerance"]
        ok.append(d <= tol and a <= tol and w <= rtol and s <= rtol)
    ok = np.array(ok)
    # the condition really held the grasp back after the approach (the test can fail)
    assert not ok[0]
    # aligned over the last `dwell` + 1 ticks, and no earlier tick had such a streak
    assert ok[-dwell - 1 :].all()
    for j in range(dwell, len(ok) - 1):
        assert not ok[j - dwell : j + 1].all(), f"aligned for the dwell at tick {first + j}"
    # the metrics report the relative twist at the grasp (grasp_impact's, independently)
    m = cap.metrics(rows)
    _, _, w, s = _alignment(cap, *cap.before[:2], k_g)
    assert m["grasp_missed"] == 0.0 and m["grasp_instant"] == pytest.approx(k_g * period)
    assert m["grasp_relative_rate"] == pytest.approx(w, rel=1e-9)
    assert m["grasp_relative_speed"] == pytest.approx(s, rel=1e-9)
    # the series run on regularly through the grasp, to the end
    assert np.allclose(np.diff(rows.t), period, rtol=0.0, atol=1e-9)
    assert rows.t.shape[0] == cap.rows


def _total(model, q, v):
    m = momentum(model, q, v)
    return np.r_[m.linear, m.angular]


def _energy(model, q, v):
    return 0.5 * v @ mass_matrix(model, q) @ v


def test_restitution_bounces_then_latches_momentum_conserved(bounced):
    cap, rows = bounced
    q, v, pose, twist = cap.before
    sy = cap.phase1.sy
    ee = sy.arm_info.ee_frame
    contact, latch = cap.impact, cap.latch
    assert latch is not None
    # the contact's relative twist after is -e times the one before, both from frame
    # twists (the servicer's frame at the fixture, the fixture of the target's twist)
    X = dq_mul(dq_conj(frame_pose(sy.plant, q, ee)), dq_mul(pose, cap.target.fixture))
    Ad_X, Ad_F = adjoint_matrix(X), adjoint_matrix(cap.target.fixture)

    def rel(vs, xi):
        return Ad_F @ xi - Ad_X @ frame_twist(sy.plant, q, vs, ee)

    g0, g1 = rel(v, twist), rel(contact.servicer_v, contact.target_twist)
    assert np.linalg.norm(g0) > 1e-5  # a relative motion to bounce off
    assert np.abs(g1 + E * g0).max() <= 1e-9 * np.abs(g0).max()
    # energies, 1/2 v^T M v of both bodies: the contact dissipates (1 - e^2) of the rigid
    # grasp's loss (less); the latch brings the total to the rigid grasp's
    tm = cap.target.model
    T0 = _energy(sy.plant, q, v) + _energy(tm, pose, twist)
    T1 = _energy(sy.plant, q, contact.servicer_v) + _energy(tm, pose, contact.target_twist)
    rigid = grasp_impact(sy.plant, q, v, cap.target, pose, twist, frame=ee, tol=None)
    T_rigid = _energy(sy.plant, q, rigid.servicer_v) + _energy(tm, pose, rigid.target_twist)
    loss = T0 - T_rigid
    assert loss > 0.0
    assert T0 - T1 == pytest.approx((1.0 - E**2) * loss, rel=1e-6)
    # the held state is the rigid grasp's (momentum and the rigid attachment fix it)
    assert np.allclose(latch.v, rigid.v, rtol=0.0, atol=1e-10 * np.abs(rigid.v).max())
    # total momentum: before the grasp against the recorded row after it (the latch's)
    k = cap.trigger.tick
    before = _total(sy.plant, q, v) + _total(tm, pose, twist)
    after = _total(cap.phase2.sy.plant, rows["q"][k], rows["v"][k])
    assert np.linalg.norm(after - before) <= 1e-10 * np.linalg.norm(before)
    # the metrics: the contact's impulse (1 + e) times the rigid one, the latch's e times
    m = cap.metrics(rows)
    f_rigid = np.linalg.norm(rigid.impulse[:3])
    assert m["grasp_impulse_force"] == pytest.approx((1.0 + E) * f_rigid, rel=1e-8)
    assert m["grasp_latch_impulse_force"] == pytest.approx(E * f_rigid, rel=1e-8)
    assert m["grasp_energy_lost"] == pytest.approx(loss, rel=1e-6)


@pytest.mark.parametrize("trigger", ["aligned", "time"])
def test_a_missed_grasp_is_reported_and_the_run_ends_cleanly(trigger):
    over = [*BASE, "scenario.duration=1.2", "capture.grasp_time=1.0",
            f"capture.trigger={trigger}", "capture.grasp_tolerance=1e-9",
            "requirements.grasp_missed=0.0"]  # fmt: skip
    res = run(load_scenario("capture", over), progress=False)
    m = res.manifest["metrics"]
    # the miss is measured, the grasp's metrics are not (NaN)
    assert m["grasp_missed"] == 1.0 and np.isnan(m["grasp_impulse_force"])
    assert np.isnan(m["detumble_time"]) and np.isnan(m["interface_force_peak"])
    missed = [e for e in res.manifest["events"] if e["event"] == "grasp missed"]
    assert len(missed) == 1 and missed[0]["t"] == pytest.approx(1.0)
    assert not any(e["event"] == "grasp" for e in res.manifest["events"])
    # the approach's series run on to the end, regularly
    assert res.t[-1] == pytest.approx(1.2) and len(res.t) == 121
    assert np.allclose(np.diff(res.t), 0.01, rtol=0.0, atol=1e-9)
    assert np.all(np.isfinite(res["v"]))
    # the target tumbles on freely past the miss (its motion propagated on to the end):
    # its momentum (the library's, on its one-body model) constant over every row
    target = target_of(res.manifest["scenario"])[0]
    P, X = res["target_pose"], res["target_twist"]
    h = np.array([_total(target.model, p, x) for p, x in zip(P, X, strict=True)])
    assert np.abs(h - h[0]).max() <= 1e-10 * np.abs(h[0]).max()
    assert np.abs(np.diff(P, axis=0)).max() < 0.01 * np.abs(X).max() + 1e-12
    assert np.abs(P[-1] - P[100]).max() > 1e-3  # still turning after the timeout (t = 1 s)
    # the requirement on the miss is NOT MET, those on the grasp UNDECIDED (no value)
    req = {"grasp_missed": ("<=", 0.0, 99), "grasp_impulse_force": ("<=", 1.0, 99)}
    rows = {r["metric"]: r["status"] for r in judge_run(m, req)}
    assert rows == {"grasp_missed": "NOT MET", "grasp_impulse_force": "UNDECIDED"}


def test_the_time_trigger_grasps_at_grasp_time_when_aligned_earlier():
    cap, rows = _simulate([*BASE, "capture.trigger=time", "scenario.duration=1.2",
                           "capture.grasp_time=1.0"])  # fmt: skip
    assert cap.trigger.tick == 100 and cap.t_grasp == pytest.approx(1.0)
    # an aligned trigger would have grasped earlier: aligned at the approach's end + dwell
    d, a, w, s = _alignment(cap, rows["q"][60], rows["v"][60], 60)
    assert max(d, a, w, s) < 0.01
    assert cap.latch is None and cap.metrics(rows)["grasp_latch_impulse_force"] == 0.0


@pytest.mark.parametrize(
    "override, named",
    [
        ("capture.trigger=sometimes", "capture.trigger"),
        ("capture.grasp_rate_tolerance=-1.0", "capture.grasp_rate_tolerance"),
        ("capture.grasp_dwell=-0.1", "capture.grasp_dwell"),
        ("capture.grasp_dwell=0.95", "capture.grasp_dwell.*could never fire"),
        ("capture.restitution=1.5", "capture.restitution"),
    ],
)
def test_bad_trigger_keys_are_named(override, named):
    with pytest.raises(ScenarioError, match=named):
        load_scenario("capture", [*BASE, override])
