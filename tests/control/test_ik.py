"""Inverse kinematics on the floating space manipulator (target in the base frame).

References: Pinocchio's forward kinematics of the solution (an independent
engine), the joint limits themselves, and a target constructed so that it is
reachable only beyond a limit.
"""

import numpy as np
import pinocchio as pin
import pytest

from dqspace.control import (
    IIWA_JOINT_LIMITS,
    IIWA_LEMNISCATE_SEED,
    IKStatus,
    Lemniscate,
    ik,
    solve_ik,
)
from dqspace.dq import dq_from_quat_translation, dq_mul
from dqspace.multibody import frame_pose, models
from support.pin_bridge import se3, to_pinocchio

LIMITS = IIWA_JOINT_LIMITS


@pytest.fixture(scope="module")
def robot():
    return models.space_manipulator()


def _pin_ee_in_base(model, joints, pm=None):
    """EE pose relative to the base by Pinocchio (free-flyer at the identity)."""
    pm = to_pinocchio(model) if pm is None else pm
    data = pm.createData()
    q = np.concatenate([[0, 0, 0, 0, 0, 0, 1.0], joints])
    pin.framesForwardKinematics(pm, data, q)
    return data.oMf[pm.getFrameId("ee")]


def test_reachable_poses_converge_to_1e_9_within_limits(robot, rng):
    worst = 0.0
    for _ in range(25):
        theta = rng.uniform(0.95 * LIMITS[:, 0], 0.95 * LIMITS[:, 1])
        q = robot.neutral_configuration()
        q[8:] = theta
        target = frame_pose(robot, q, "ee")
        seed = np.clip(theta + rng.normal(0.0, 0.4, 7), LIMITS[:, 0], LIMITS[:, 1])
        res = solve_ik(robot, target, seed, limits=LIMITS)
        assert res.success, (res.status, res.residual_norm)
        assert np.all(res.joints >= LIMITS[:, 0]) and np.all(res.joints <= LIMITS[:, 1])
        # independent check of the pose reached
        M = _pin_ee_in_base(robot, res.joints)
        gap = se3(target).actInv(M)
        worst = max(worst, np.abs(pin.log6(gap).vector).max())
    assert worst < 1e-9


def test_target_is_relative_to_the_base_whatever_the_base_pose(robot, rng):
    """The base pose in q does not enter: the solution reaches the target in the base frame."""
    theta = rng.uniform(0.5 * LIMITS[:, 0], 0.5 * LIMITS[:, 1])
    q = robot.neutral_configuration()
    q[8:] = theta
    target = frame_pose(robot, q, "ee")
    res = solve_ik(robot, target, np.zeros(7), limits=LIMITS)
    assert res.success
    q_moved = robot.random_configuration(rng)
    q_moved[8:] = res.joints
    base = q_moved[:8]
    np.testing.assert_allclose(frame_pose(robot, q_moved, "ee"), dq_mul(base, target), atol=1e-9)


def test_limits_clamp_and_an_out_of_limit_target_is_reported(robot):
    """Only joint 1 may move, within +-0.2 rad: a target made with joint 1 = 0.15 converges,
    one made with 0.5 stalls on the limit with a clear status (no exception)."""
    theta = np.radians([0.0, 40.0, 10.0, -70.0, 20.0, 50.0, 10.0])
    limits = np.column_stack([theta, theta])
    limits[0] = [-0.2, 0.2]
    q = robot.neutral_configuration()
    q[8:] = theta
    q[8] = 0.15
    ok = solve_ik(robot, frame_pose(robot, q, "ee"), theta, limits=limits)
    assert ok.success and ok.joints[0] == pytest.approx(0.15, abs=1e-9)
    q[8] = 0.5
    bad = solve_ik(robot, frame_pose(robot, q, "ee"), theta, limits=limits)
    assert bad.status is IKStatus.STALLED and not bad.success
    assert bad.joints[0] == 0.2 and bad.at_limit[0]
    assert bad.residual_norm > 0.05


def test_seed_outside_the_limits_is_clipped(robot, rng):
    theta = rng.uniform(0.5 * LIMITS[:, 0], 0.5 * LIMITS[:, 1])
    theta[1] = 1.9  # close to joint 2's limit (2.094 rad) ...
    q = robot.neutral_configuration()
    q[8:] = theta
    seed = theta + rng.normal(0.0, 0.05, 7)
    seed[1] = 2.6  # ... and the seed beyond it
    res = solve_ik(robot, frame_pose(robot, q, "ee"), seed, limits=LIMITS)
    assert res.success
    assert np.all(res.joints >= LIMITS[:, 0]) and np.all(res.joints <= LIMITS[:, 1])


def test_unreachable_pose_fails_cleanly(robot):
    far = dq_from_quat_translation([1.0, 0, 0, 0], [2.5, 0.0, 0.5])  # reach is ~1.3 m
    res = solve_ik(robot, far, np.zeros(7), limits=LIMITS, max_iterations=200)
    assert not res.success
    assert res.status in (IKStatus.STALLED, IKStatus.MAX_ITERATIONS)
    assert res.residual_norm > 1.0
    assert np.all(np.isfinite(res.joints))
    assert np.all(res.joints >= LIMITS[:, 0]) and np.all(res.joints <= LIMITS[:, 1])


def test_paper_lemniscate_is_reachable_within_the_limits(robot):
    """From IIWA_LEMNISCATE_SEED the default lemniscate (P51) is tracked by warm-started IK
    over a whole period, every pose to 1e-10, inside the iiwa's limits."""
    lem = Lemniscate()
    theta = IIWA_LEMNISCATE_SEED
    pm = to_pinocchio(robot)
    worst = 0.0
    for t in np.arange(0.0, 4 * np.pi, 0.05):
        ref = lem(t)
        res = solve_ik(robot, ref.pose, theta, limits=LIMITS)
        assert res.success, (t, res.status, res.residual_norm)
        theta = res.joints
        assert np.all(theta >= LIMITS[:, 0]) and np.all(theta <= LIMITS[:, 1])
        gap = se3(ref.pose).actInv(_pin_ee_in_base(robot, theta, pm))
        worst = max(worst, np.abs(pin.log6(gap).vector).max())
    assert worst < 1e-9


def test_fixed_base_arm(rng):
    arm = models.iiwa()
    theta = rng.uniform(0.5 * LIMITS[:, 0], 0.5 * LIMITS[:, 1])
    target = frame_pose(arm, theta, "ee")
    res = solve_ik(arm, target, np.zeros(7), limits=LIMITS)
    assert res.success
    np.testing.assert_allclose(frame_pose(arm, res.joints, "ee"), target, atol=1e-9)


def test_seed_shape_is_checked(robot):
    with pytest.raises(ValueError, match=r"seed must be a finite \(7,\) vector"):
        solve_ik(robot, np.eye(8)[0], np.zeros(6))


def test_limits_shape_is_checked(robot):
    with pytest.raises(ValueError, match=r"limits must have shape \(7, 2\)"):
        solve_ik(robot, np.eye(8)[0], np.zeros(7), limits=np.zeros((7, 3)))


def test_limits_order_is_checked(robot):
    with pytest.raises(ValueError, match="lower <= upper"):
        solve_ik(robot, np.eye(8)[0], np.zeros(7), limits=LIMITS[:, ::-1])


def test_joint_limits_and_status_codes_are_public():
    lo, hi = ik.joint_limits(LIMITS, 7)
    np.testing.assert_array_equal(lo, LIMITS[:, 0])
    np.testing.assert_array_equal(hi, LIMITS[:, 1])
    assert lo.flags.writeable and not np.shares_memory(lo, LIMITS)
    lo, hi = ik.joint_limits(None, 3)
    assert np.all(lo == -np.inf) and np.all(hi == np.inf) and lo.shape == (3,)
    with pytest.raises(ValueError, match="lower <= upper"):
        ik.joint_limits([[0.0, np.nan]], 1)
    codes = (ik.IK_CONVERGED, ik.IK_STALLED, ik.IK_MAX_ITERATIONS)
    assert [ik.IK_STATUSES[c] for c in codes] == list(IKStatus)


def test_posture_pulls_in_the_null_space_only(robot, rng):
    """With a posture the task is still met, and the redundant joint moves toward the posture."""
    theta = rng.uniform(0.5 * LIMITS[:, 0], 0.5 * LIMITS[:, 1])
    q = robot.neutral_configuration()
    q[8:] = theta
    target = frame_pose(robot, q, "ee")
    posture = theta + 0.3  # a different point, generally not on the self-motion manifold
    plain = solve_ik(robot, target, theta, limits=LIMITS)
    pulled = solve_ik(robot, target, theta, limits=LIMITS, posture=posture)
    assert plain.success and pulled.success
    assert np.abs(pulled.residual).max() < 1e-9
    # the plain solve from an exact seed does not move; the pulled one gets closer
    assert np.linalg.norm(plain.joints - theta) < 1e-9
    assert np.linalg.norm(pulled.joints - posture) < np.linalg.norm(theta - posture)
    M = _pin_ee_in_base(robot, pulled.joints)
    assert np.abs(pin.log6(se3(target).actInv(M)).vector).max() < 1e-9


def test_posture_arguments_are_checked(robot):
    target = frame_pose(robot, robot.neutral_configuration(), "ee")
    with pytest.raises(ValueError, match="posture must be a finite"):
        solve_ik(robot, target, np.zeros(7), posture=np.zeros(6))
    with pytest.raises(ValueError, match=r"posture_gain must be in \(0, 1\]"):
        solve_ik(robot, target, np.zeros(7), posture=np.zeros(7), posture_gain=2.0)


def test_damped_step_matches_the_dls_formula_and_locks_joints_on_their_limits(rng):
    """The compiled step against the formula it implements, solved independently (LU of
    numpy): free joints ``d_f = -J_f^T (J_f J_f^T + lam2 I)^-1 (e + J_l d_l)``, locked
    joints exactly on their bounds; and a finite step when damping vanishes on a
    rank-deficient task (two free joints for six residuals)."""
    from dqspace.control.ik import _step

    def dls(J, r, lam2):
        return -J.T @ np.linalg.solve(J @ J.T + lam2 * np.eye(6), r)

    n = 7
    for _ in range(200):
        J, e = rng.normal(size=(6, n)), rng.normal(size=6)
        theta, lam2 = rng.uniform(-1.0, 1.0, n), 10 ** rng.uniform(-4, 0)
        wide = _step(J, e, lam2, theta, theta - 1e6, theta + 1e6)  # no limit reached
        np.testing.assert_allclose(wide, dls(J, e, lam2), rtol=1e-9, atol=1e-12)
        lo, hi = theta - rng.uniform(0, 0.05, n), theta + rng.uniform(0, 0.05, n)
        d = _step(J, e, lam2, theta, lo, hi)
        at = np.isclose(theta + d, lo, rtol=0, atol=1e-15) | np.isclose(
            theta + d, hi, rtol=0, atol=1e-15
        )
        assert np.all((theta + d >= lo - 1e-15) & (theta + d <= hi + 1e-15))
        free = ~at
        if free.any():
            ref = dls(J[:, free], e + J[:, at] @ d[at], lam2)
            np.testing.assert_allclose(d[free], ref, rtol=1e-8, atol=1e-12)
    J, e = rng.normal(size=(6, n)), rng.normal(size=6)
    lo, hi = np.full(n, -1e-3), np.full(n, 1e-3)
    lo[:2], hi[:2] = -10.0, 10.0
    d = _step(J, e, 0.0, np.zeros(n), lo, hi)
    assert np.all(np.isfinite(d)) and np.all((d >= lo) & (d <= hi))
    r = e + J[:, 2:] @ d[2:]
    np.testing.assert_allclose(d[:2], -np.linalg.pinv(J[:, :2]) @ r, rtol=1e-9)


def test_right_inverse_is_the_minimum_norm_solution_and_freezes_pushed_joints(rng):
    """Against numpy: ``J_f^T (J_f J_f^T + 1e-12 I)^-1 x`` while the free joints span the
    task, the least-squares solution (``lstsq``) once they cannot; a joint on a limit
    that the solution pushes further out ends frozen at zero."""
    from dqspace.control.ik import right_inverse

    n = 7
    for _ in range(300):
        J, x = rng.normal(size=(6, n)), rng.normal(size=6)
        side = rng.choice([-1.0, 0.0, 1.0], size=n, p=[0.2, 0.6, 0.2])
        free = np.ones(n, bool)
        y = right_inverse(J, x, side, free)
        assert np.all(y[~free] == 0.0) and not np.any(free & (side * y > 0.0))
        Jf = J[:, free]
        if free.sum() >= 6:
            ref = Jf.T @ np.linalg.solve(Jf @ Jf.T + 1e-12 * np.eye(6), x)
        else:
            ref = np.linalg.lstsq(Jf, x, rcond=None)[0]
        np.testing.assert_allclose(y[free], ref, rtol=1e-7, atol=1e-10 * np.abs(ref).max())
