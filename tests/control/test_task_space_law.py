"""The task-space dual PD arm law: the designed error dynamics on a fixed base (analytic),
the transpose form's convergence, and its use in the closed loop."""

import numpy as np
import pytest

from dqspace.control import PDGains, PoseReference, State
from dqspace.control.task_space import TaskSpaceController
from dqspace.dq import dq_from_rpy_deg, dq_mul
from dqspace.multibody import frame_pose, kinetic_energy, models, simulate_rk4

Q0 = np.radians([10.0, 40.0, -20.0, -70.0, 15.0, 50.0, 5.0])


def _gains(w, zeta=1.0):
    kp, kd = 2.0 * w * w, 2.0 * zeta * w  # log e is half the error: stiffness kp / 2 = w^2
    return PDGains(kp_rot=kp, kd_rot=kd, kp_trans=kp, kd_trans=kd)


def _close_loop(ctrl, m, ref, q0, T, dt=1e-3):
    def controller(t, q, v):
        return ctrl(t, State(q, v), ref).tau

    return simulate_rk4(m, q0, np.zeros(m.nv), dt=dt, n_steps=int(T / dt), controller=controller)


def test_computed_torque_gives_the_designed_critically_damped_error():
    m = models.iiwa()  # fixed base, no gravity
    w = 8.0
    ctrl = TaskSpaceController(m, _gains(w), frame="ee", null_space_damping=1.0)
    # a reference 2 mm and 0.3 deg away, at rest
    ref_pose = dq_mul(frame_pose(m, Q0, "ee"), dq_from_rpy_deg([0.3, 0.0, 0.0], [0.0, 0.002, 0.0]))
    ref = PoseReference(ref_pose, np.zeros(6), np.zeros(6))
    tr = _close_loop(ctrl, m, ref, Q0, T=1.0)
    d0 = 0.002
    for k in (100, 250, 500, 1000):
        t = tr.t[k]
        err = ctrl.task_error(State(tr.q[k], tr.v[k]), ref)
        expected = d0 * (1.0 + w * t) * np.exp(-w * t)  # x'' + 2 w x' + w^2 x = 0, x'(0) = 0
        assert err.distance == pytest.approx(expected, rel=0.02, abs=2e-7)


def test_the_transpose_form_converges_with_a_decreasing_energy():
    m = models.iiwa()
    # a spring and damper at the wrist: soft enough for the wrist links' small inertias
    gains = PDGains(kp_rot=2.0, kd_rot=0.2, kp_trans=100.0, kd_trans=5.0)
    ctrl = TaskSpaceController(m, gains, computed_torque=False, null_space_damping=0.2)
    assert ctrl.torque is None  # its torques are not recomputed by the runner
    ref_pose = dq_mul(frame_pose(m, Q0, "ee"), dq_from_rpy_deg([2.0, -1.0, 0.0], [0.01, 0.0, 0.0]))
    ref = PoseReference(ref_pose, np.zeros(6), np.zeros(6))
    tr = _close_loop(ctrl, m, ref, Q0, T=6.0)
    V = []
    for q, v in zip(tr.q[::50], tr.v[::50], strict=True):
        e = ctrl.task_error(State(q, v), ref)
        lg = e.log
        # V = 1/4 kp |theta n|^2 ... in the log: kp_rot |lg_r|^2 + kp_trans |lg_t|^2, plus T
        V.append(2.0 * lg[:3] @ lg[:3] + 100.0 * lg[3:] @ lg[3:] + kinetic_energy(m, q, v))
    assert np.all(np.diff(V) <= 1e-12)
    final = ctrl.task_error(State(tr.q[-1], tr.v[-1]), ref)
    assert final.distance < 1e-3 and final.angle < np.radians(0.1)


def test_bad_arguments_are_refused():
    m = models.iiwa()
    g = _gains(5.0)
    with pytest.raises(ValueError, match="gains must be a PDGains"):
        TaskSpaceController(m, object())
    with pytest.raises(ValueError, match="jacobian must be"):
        TaskSpaceController(m, g, jacobian="global")
    with pytest.raises(ValueError, match="needs a floating model"):
        TaskSpaceController(m, g, jacobian="generalized", computed_torque=False)
    with pytest.raises(ValueError, match="null_space_damping"):
        TaskSpaceController(m, g, null_space_damping=-1.0)
    with pytest.raises(ValueError):
        TaskSpaceController(m, g, frame="no_such_frame")


def test_both_arm_laws_track_in_the_closed_loop():
    from dqspace.scenarios import load_scenario, run
    from dqspace.scenarios.sim.metrics import summarize

    out = {}
    for law in ("task_space", "computed_torque"):
        sc = load_scenario("station-keeping", ["scenario.duration=4", f"arm_controller.law={law}"])
        out[law] = summarize(run(sc, progress=False))
    for m in out.values():
        assert m["ee_max"] < 1e-4 and m["base_pos_err_max"] < 1e-3
