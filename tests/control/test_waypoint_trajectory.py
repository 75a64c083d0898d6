"""Way-point trajectories (ScLERP + quintic): way-points hit, the twist and acceleration are
the derivatives of the pose (finite differences), the shorter screw, bad input."""

import numpy as np
import pytest

from dqspace.control.waypoints import BaseSlew, Waypoints
from dqspace.dq import dq_conj, dq_from_rpy_deg, dq_mul, sclerp

POSES = np.array(
    [
        dq_from_rpy_deg([0, 90, 0], [0.4, 0.0, 0.7]),
        dq_from_rpy_deg([10, 80, 30], [0.5, 0.2, 0.6]),
        dq_from_rpy_deg([-20, 100, -40], [0.3, -0.1, 0.8]),
    ]
)
TIMES = [1.0, 3.0, 4.5]


def _body_twist_fd(traj, t, h=1e-6):
    """2 q* dq/dt (vector parts) by central differences: d/dt q = 1/2 q o w (body twist)."""
    q = traj(t).pose
    dq = (traj(t + h).pose - traj(t - h).pose) / (2 * h)
    w = 2.0 * dq_mul(dq_conj(q), dq)
    return np.r_[w[1:4], w[5:8]]


def test_the_way_points_are_hit_at_their_times_at_rest():
    tr = Waypoints(POSES, TIMES)
    for p, t in zip(POSES, TIMES, strict=True):
        ref = tr(t)
        np.testing.assert_allclose(ref.pose, p, atol=1e-12)
        np.testing.assert_allclose(ref.twist, 0.0, atol=1e-12)
    np.testing.assert_allclose(tr(0.0).pose, POSES[0])  # held before
    np.testing.assert_allclose(tr(9.0).pose, POSES[-1])  # and after


def test_twist_and_acceleration_are_the_derivatives_of_the_pose():
    tr = Waypoints(POSES, TIMES)
    for t in np.linspace(1.05, 4.45, 23):
        np.testing.assert_allclose(tr(t).twist, _body_twist_fd(tr, t), atol=2e-7)
        h = 1e-5
        acc_fd = (tr(t + h).twist - tr(t - h).twist) / (2 * h)
        np.testing.assert_allclose(tr(t).acc, acc_fd, atol=2e-6)


def test_the_midpoint_is_sclerps_and_the_shorter_screw_is_taken():
    tr = Waypoints([POSES[0], -POSES[1]], [0.0, 2.0])  # the same pose with the other sign
    mid = tr(1.0).pose  # quintic s(1/2) = 1/2
    ref = sclerp(POSES[0], POSES[1], 0.5)
    assert np.allclose(mid, ref, atol=1e-12) or np.allclose(mid, -ref, atol=1e-12)
    slew = BaseSlew(POSES[0], POSES[1], 2.0, 2.0)
    np.testing.assert_allclose(slew(3.0).pose, tr(1.0).pose, atol=1e-12)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="increase strictly"):
        Waypoints(POSES, [0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"\(N, 8\) with N >= 2"):
        Waypoints(POSES[:1], [0.0])
    with pytest.raises(ValueError, match="one per pose"):
        Waypoints(POSES, [0.0, 1.0])
    with pytest.raises(ValueError, match="poses"):
        Waypoints(POSES * 2.0, TIMES)
    with pytest.raises(ValueError, match="duration"):
        BaseSlew(POSES[0], POSES[1], 0.0, 0.0)
