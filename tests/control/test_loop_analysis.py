"""The base loop broken at the actuation input and its margins (dqspace.control.loop_analysis).

References: a rigid body under the dual PD law, whose loop per axis is
``L(s) = (kd s + kp/2) / (J s^2)`` (crossover and phase margin in closed form, no phase
crossing); python-control's ``stability_margins`` (its own polynomial method) on the same
loops; closing the broken loop again gives the closed loop's poles.
"""

import numpy as np
import pytest

from dqspace.control import (
    BaseController,
    BaseDOBController,
    BasePIDController,
    IntegralGains,
    JointComputedTorque,
    JointGains,
    PDGains,
    PoseReference,
    State,
    StationKeepingFeedback,
    base_loop,
    base_loop_margins,
    linearize,
    loop_at_a_time,
    loop_margins,
    python_control,
)
from dqspace.control.loop_analysis import CHANNELS
from dqspace.dq import swap
from dqspace.multibody import Body, Joint, JointType, Model, models

GAINS = PDGains(kp_rot=[2.0, 3.0, 5.0], kd_rot=[0.3, 0.2, 0.5], kp_trans=[100.0, 150.0, 60.0],
                kd_trans=[5.0, 9.0, 3.0])  # fmt: skip
MASS, J = 27.0, np.array([0.4, 0.5, 0.6])


class PD:
    """A free body's PD as a state feedback."""

    def __init__(self, model, pose):
        self.base = BaseController(model, GAINS)
        self.ref = PoseReference(pose, np.zeros(6), np.zeros(6))

    def __call__(self, t, q, v):
        return swap(self.base(t, State(q, v), self.ref).wrench)


@pytest.fixture(scope="module")
def body():
    return Model.build([Body("body", None, Joint(JointType.FREE), MASS, np.zeros(3), np.diag(J))])


def test_rigid_body_loop_margins_in_closed_form(body, rng):
    """Each channel of a rigid body's PD loop (centre of mass at the origin: decoupled at
    rest) is ``L = (kd s + kp/2) / (J s^2)``: ``|L| = 1`` at ``w_c^2 = (kd^2 + sqrt(kd^4 +
    kp^2 J^2)) / (2 J^2)``, phase margin ``atan2(kd w_c, kp/2)``, no phase crossing."""
    pose = body.random_configuration(rng)
    loop = base_loop(body, pose, controller=PD(body, pose))
    assert loop.input_names == tuple(f"u_{c}" for c in CHANNELS)
    margins = base_loop_margins(loop)
    inertia = np.r_[[MASS] * 3, J]
    kp, kd = np.r_[GAINS.kp_trans, GAINS.kp_rot], np.r_[GAINS.kd_trans, GAINS.kd_rot]
    for k, c in enumerate(CHANNELS):
        w_c = np.sqrt((kd[k] ** 2 + np.sqrt(kd[k] ** 4 + kp[k] ** 2 * inertia[k] ** 2))
                      / (2 * inertia[k] ** 2))  # fmt: skip
        m = margins[c]
        assert m.gain_crossover == pytest.approx(w_c, rel=1e-9)
        assert m.phase_margin == pytest.approx(np.degrees(np.arctan2(kd[k] * w_c, kp[k] / 2)),
                                               rel=1e-9)  # fmt: skip
        assert m.gain_margin == np.inf and m.gain_margins == () and np.isnan(m.phase_crossover)
        # the loop itself at one frequency
        G = loop_at_a_time(loop, c).frequency_response([2.0])[0, 0, 0]
        assert G == pytest.approx((kd[k] * 2j + kp[k] / 2) / (inertia[k] * (2j) ** 2), rel=1e-8)


@pytest.fixture(scope="module")
def held():
    robot = models.space_manipulator()
    q0 = robot.neutral_configuration()
    q0[8:] = np.radians([20.0, 50.0, -10.0, -70.0, 15.0, 40.0, 0.0])
    arm = JointComputedTorque(robot, JointGains.from_natural_frequency(20.0))
    gains = PDGains(kp_rot=40.0, kd_rot=60.0, kp_trans=600.0, kd_trans=500.0)
    laws = {
        "pd": BaseController(robot, gains),
        "pid": BasePIDController(
            robot,
            gains,
            IntegralGains(ki_rot=4.0, ki_trans=120.0, limit_force=2.0, limit_torque=0.2),
            period=0.01,
        ),  # fmt: skip
        "dob": BaseDOBController(robot, gains, bandwidth=1.0, period=0.01),
    }
    return robot, q0, arm, laws


@pytest.mark.parametrize("name", ["pd", "pid", "dob"])
def test_closing_the_broken_loop_gives_the_closed_loop(held, name):
    """``u = -y_L`` on every channel of :func:`base_loop` gives back the poles of the
    closed loop linearised directly (with the law's states)."""
    robot, q0, arm, laws = held
    fb = StationKeepingFeedback(laws[name], arm, q0[:8], q0[8:], feedforward=True)
    loop = base_loop(robot, q0, controller=fb)
    closed = linearize(robot, q0, controller=fb, inputs=[])
    A = loop.A - loop.B @ np.linalg.solve(np.eye(6) + loop.D, loop.C)
    got, want = np.sort_complex(np.linalg.eigvals(A)), np.sort_complex(closed.poles())
    assert np.abs(got - want).max() < 1e-6 * np.abs(want).max()
    assert loop.nx == 26 + (0 if name == "pd" else 6)


@pytest.mark.parametrize("name", ["pd", "pid", "dob"])
def test_margins_agree_with_python_control(held, name):
    """Every channel's margins against python-control's ``stability_margins`` of the same
    SISO loop (its polynomial method): gain and phase margins and their frequencies to
    1e-6 relative; the integral and the observer make the loop conditionally stable (a
    lower gain margin below 1)."""
    ct = python_control()  # a test dependency (dqspace[control]): missing is a failure
    robot, q0, arm, laws = held
    fb = StationKeepingFeedback(laws[name], arm, q0[:8], q0[8:], feedforward=True)
    loop = base_loop(robot, q0, controller=fb)
    for c, m in base_loop_margins(loop).items():
        gm, pm, _, wpc, wgc, _ = ct.stability_margins(loop_at_a_time(loop, c).to_statespace())
        assert m.phase_margin == pytest.approx(pm, rel=1e-6)
        assert m.gain_crossover == pytest.approx(wgc, rel=1e-6)
        if np.isfinite(m.gain_margin):
            assert m.gain_margin == pytest.approx(gm, rel=1e-6)
            assert m.phase_crossover == pytest.approx(wpc, rel=1e-6)
        else:
            # no crossing; python-control counts the rigid body's -180 deg at w = 0 (|L| = inf)
            assert gm < 1e-9 or np.isinf(gm)
        assert 30.0 < m.phase_margin < 95.0  # stable, well damped
        if name != "pd" and c in ("fx", "fy", "fz"):
            assert min(m.gain_margins) < 1.0 < 1.0 / min(m.gain_margins)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda loop: loop_at_a_time(loop, "wx"), "wx"),
        (lambda loop: loop_at_a_time(loop, 6), "channel"),
        (lambda loop: loop_margins(loop), "SISO"),
        (lambda loop: loop_margins(loop_at_a_time(loop, 0), [1.0, 0.5]), "increasing"),
    ],
)
def test_bad_arguments_raise(body, rng, call, match):
    pose = body.random_configuration(rng)
    loop = base_loop(body, pose, controller=PD(body, pose))
    with pytest.raises(ValueError, match=match):
        call(loop)
