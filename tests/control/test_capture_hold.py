"""The capture's hold laws (:mod:`dqspace.control.capture_hold`) against Pinocchio.

* the impedance's joint torques against ``J^T w - k_n v_m`` with ``J`` Pinocchio's LOCAL
  frame Jacobian of the end-effector (the base at the identity: poses relative to it), at
  random states of a servicer holding a random target;
* its wrench saturated at the limits, keeping its direction, and the unsaturated one left
  as the plain transpose law gives it;
* the held target's inertia about the end-effector against Pinocchio's inertia carried by
  ``se3Action``; the gains against the natural frequency they are built for;
* the interface map ``G`` against Pinocchio: the stack locked (joint accelerations zero)
  under a base wrench, the base's acceleration from Pinocchio's CRBA, the target's from its
  frame acceleration, its momentum rate from Pinocchio's inertia, carried to the fixture;
* the limited base law: its wrench the dual PD's scaled so that the predicted interface
  wrench meets the binding limit.
"""

import numpy as np
import pinocchio as pin
import pytest

from dqspace.control import BaseController, PDGains, PoseReference, State
from dqspace.control.capture_hold import (
    InterfaceLimitedBase,
    held_inertia,
    impedance_hold,
    interface_map,
)
from dqspace.control.task_space import TaskSpaceController
from dqspace.dq import dq_from_rpy_deg, dq_mul, rotation_matrix_from_dq, swap
from dqspace.multibody import Target, attach_target, frame_pose, models
from support.pin_bridge import q_to_pin, se3, to_pinocchio, v_to_pin

RNG = np.random.default_rng(2028)


def _target(rng):
    R = rotation_matrix_from_dq(dq_from_rpy_deg(rng.uniform(-90, 90, 3), np.zeros(3)))
    moments = rng.uniform(20.0, 300.0) * rng.uniform(1.0, 1.6, 3)  # a rigid body's
    J = R @ np.diag(moments) @ R.T
    return Target(
        mass=rng.uniform(30.0, 600.0),
        com=rng.uniform(-0.2, 0.2, 3),
        inertia=J,
        fixture=dq_from_rpy_deg(rng.uniform(-30, 30, 3), rng.uniform(-0.5, 0.5, 3)),
    )


def _state(model, rng):
    q = model.neutral_configuration()
    q[:8] = dq_from_rpy_deg(rng.uniform(-40, 40, 3), rng.uniform(-1, 1, 3))
    q[8:] = rng.uniform(-1.5, 1.5, model.nq - 8)
    v = rng.normal(scale=0.3, size=model.nv)
    return q, v


def _case(rng):
    """A servicer (the paper's space manipulator) holding a random target at the flange
    (the stack: the servicer with the target attached), a state, a reference near the
    end-effector's pose."""
    servicer = models.space_manipulator(base_mass=800.0)
    target = _target(rng)
    held = dq_from_rpy_deg(rng.uniform(-5, 5, 3), rng.uniform(-0.01, 0.01, 3))
    # the target attached where it is held: the fixture at held o fixture in the flange
    stack = attach_target(servicer, target, "ee", offset=dq_mul(held, target.fixture))
    q, v = _state(stack, rng)
    qa = q.copy()
    qa[:8] = (1.0, 0, 0, 0, 0, 0, 0, 0)
    step = dq_from_rpy_deg(rng.uniform(-3, 3, 3), rng.uniform(-0.02, 0.02, 3))
    ref = dq_mul(frame_pose(stack, qa, "ee"), step)
    return stack, target, held, q, v, PoseReference(ref, np.zeros(6), np.zeros(6))


def _pin_local_jacobian(model, q, frame):
    """Pinocchio's LOCAL Jacobian (6, nv) of ``frame``, rows ``[v, w]``, the base at the
    identity; arm columns only (the base's six first in Pinocchio's order)."""
    pm = to_pinocchio(model)
    pd = pm.createData()
    qa = q.copy()
    qa[:8] = (1.0, 0, 0, 0, 0, 0, 0, 0)
    qp = q_to_pin(model, qa)
    fid = pm.getFrameId(frame)
    J = pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL)
    return J[:, 6:]


@pytest.mark.parametrize("k", range(4))
def test_the_impedance_torque_is_J_transpose_w_by_pinocchio(k):
    rng = np.random.default_rng(100 + k)
    stack, target, held, q, v, ref = _case(rng)
    limit = (rng.uniform(5.0, 50.0), rng.uniform(5.0, 50.0))
    hold = impedance_hold(stack, target, held, omega_n=rng.uniform(0.5, 3.0), zeta=0.9,
                          wrench_limit=limit, null_space_damping=1.5)  # fmt: skip
    cmd = hold(0.0, State(q, v), ref)
    w = cmd.wrench  # [f, tau] at the end-effector, its axes
    J = _pin_local_jacobian(stack, q, "ee")  # rows [v, w]: pairs with [f, tau] directly
    # the joint damping, weighted by the arm's inertia (Pinocchio's CRBA, the arm's block),
    # kept to the null space: J^T's range removed (least squares)
    pm = to_pinocchio(stack)
    M = pin.crba(pm, pm.createData(), q_to_pin(stack, q))
    M = np.triu(M) + np.triu(M, 1).T
    d = M[6:, 6:] @ (1.5 * v[6:])
    d -= J.T @ np.linalg.lstsq(J.T, d, rcond=None)[0]
    expected = J.T @ w - d
    assert np.abs(d).max() > 1e-3  # a 7-joint arm: a self-motion to damp
    assert np.abs(w).max() > 1.0  # a real wrench: the comparison can fail
    assert np.allclose(cmd.tau, expected, rtol=0.0, atol=1e-10 * np.abs(expected).max())


def test_the_planned_acceleration_is_the_held_bases_by_pinocchio():
    # the arm's acceleration fed forward to the base law: the base held (a_b = 0), so that
    # Pinocchio's RNEA of [0, a_m] gives the joint torques back in the arm's rows
    rng = np.random.default_rng(150)
    stack, target, held, q, v, ref = _case(rng)
    hold = impedance_hold(stack, target, held, omega_n=1.0, null_space_damping=0.5)
    cmd = hold(0.0, State(q, v), ref)
    pm = to_pinocchio(stack)
    tau = pin.rnea(pm, pm.createData(), q_to_pin(stack, q), v_to_pin(stack, v),
                   np.r_[np.zeros(6), cmd.acc])  # fmt: skip
    assert np.abs(cmd.tau).max() > 1e-2
    assert np.allclose(tau[6:], cmd.tau, rtol=0.0, atol=1e-9 * np.abs(cmd.tau).max())


@pytest.mark.parametrize("k", range(4))
def test_the_impedance_wrench_is_the_transpose_laws_saturated(k):
    rng = np.random.default_rng(200 + k)
    stack, target, held, q, v, ref = _case(rng)
    plain = impedance_hold(stack, target, held, omega_n=2.0)
    w0 = plain(0.0, State(q, v), ref).wrench
    f0, t0 = np.linalg.norm(w0[:3]), np.linalg.norm(w0[3:])
    # limits below (force) and above (torque) the plain wrench, then the other way
    for limit, bound in (((0.5 * f0, 2.0 * t0), (True, False)),
                         ((2.0 * f0, 0.3 * t0), (False, True))):  # fmt: skip
        hold = impedance_hold(stack, target, held, omega_n=2.0, wrench_limit=limit)
        w = hold(0.0, State(q, v), ref).wrench
        for part, cap, cut, norm0 in ((slice(0, 3), limit[0], bound[0], f0),
                                      (slice(3, 6), limit[1], bound[1], t0)):  # fmt: skip
            if cut:  # the limit's norm, the plain wrench's direction
                assert np.linalg.norm(w[part]) == pytest.approx(cap, rel=1e-12)
                assert np.allclose(w[part] / cap, w0[part] / norm0, atol=1e-12)
            else:
                assert np.array_equal(w[part], w0[part])
    # the gains: a spring and damper that give the held target omega_n, zeta per axis
    mass, J = held_inertia(target, held)
    g = plain.gains
    assert np.allclose(g.kp_rot, 2.0 * 4.0 * np.diag(J)) and np.allclose(g.kd_rot, 4.0 * np.diag(J))
    assert np.allclose(g.kp_trans, 8.0 * mass) and np.allclose(g.kd_trans, 4.0 * mass)


def test_a_wrench_limit_needs_the_transpose_form():
    m = models.space_manipulator()
    gains = PDGains(kp_rot=1.0, kd_rot=1.0, kp_trans=1.0, kd_trans=1.0)
    with pytest.raises(ValueError, match="wrench_limit"):
        TaskSpaceController(m, gains, computed_torque=True, wrench_limit=(1.0, 1.0))
    with pytest.raises(ValueError, match="wrench_limit"):
        TaskSpaceController(m, gains, computed_torque=False, wrench_limit=(1.0, -1.0))


@pytest.mark.parametrize("k", range(3))
def test_the_held_inertia_against_pinocchio(k):
    rng = np.random.default_rng(300 + k)
    target = _target(rng)
    held = dq_from_rpy_deg(rng.uniform(-90, 90, 3), rng.uniform(-0.5, 0.5, 3))
    I_T = pin.Inertia(target.mass, target.com, target.inertia)  # about the CoM, target axes
    I_E = se3(held).act(I_T)  # the same body seen from the end-effector's frame
    mass, J = held_inertia(target, held)
    assert mass == target.mass
    M = I_E.matrix()  # [v, w] order, about the end-effector's origin
    assert np.allclose(J, M[3:, 3:], rtol=0.0, atol=1e-12 * np.abs(M).max())


@pytest.mark.parametrize("k", range(3))
def test_the_interface_map_against_pinocchio(k):
    rng = np.random.default_rng(400 + k)
    stack, target, held, q, _, _ = _case(rng)
    G = interface_map(stack, q, target, held, "ee")
    pm = to_pinocchio(stack)
    pd = pm.createData()
    qa = q.copy()
    qa[:8] = (1.0, 0, 0, 0, 0, 0, 0, 0)
    qp = q_to_pin(stack, qa)
    M = pin.crba(pm, pd, qp)
    M = np.triu(M) + np.triu(M, 1).T
    for _ in range(3):
        u = rng.normal(size=6) * [5, 5, 5, 20, 20, 20]  # [tau, f] on the base
        a_b = np.linalg.solve(M[:6, :6], np.r_[u[3:], u[:3]])  # Pinocchio's [v, w] order
        a = np.zeros(pm.nv)
        a[:6] = a_b
        pin.forwardKinematics(pm, pd, qp, np.zeros(pm.nv), a)
        pin.updateFramePlacements(pm, pd)
        fid = pm.getFrameId(target.name)
        a_T = pin.getFrameAcceleration(pm, pd, fid, pin.LOCAL)  # the target's body frame
        f_T = pin.Inertia(target.mass, target.com, target.inertia) * a_T  # momentum rate
        f_F = se3(target.fixture).actInv(f_T)  # at the fixture, its axes
        g = G @ u
        assert np.abs(f_F.linear).max() > 1e-3
        assert np.allclose(g[3:], f_F.linear, rtol=0.0, atol=1e-10 * np.abs(f_F.linear).max())
        assert np.allclose(g[:3], f_F.angular, rtol=0.0,
                           atol=1e-10 * np.abs(f_F.angular).max())  # fmt: skip


def test_the_limited_base_law_scales_the_dual_pd_to_the_binding_limit():
    rng = np.random.default_rng(500)
    stack, target, held, q, v, _ = _case(rng)
    gains = PDGains(kp_rot=300.0, kd_rot=1500.0, kp_trans=400.0, kd_trans=1500.0)
    G = interface_map(stack, q, target, held, "ee")
    ref = PoseReference(dq_from_rpy_deg([1.0, -2.0, 0.5], [0.01, 0.0, 0.02]), np.zeros(6),
                        np.zeros(6))  # fmt: skip
    arm_acc = rng.normal(size=stack.nv - 6)
    plain = BaseController(stack, gains)(0.0, State(q, v), ref, arm_acc=arm_acc)
    g0 = G @ swap(plain.wrench)
    f0, t0 = np.linalg.norm(g0[3:]), np.linalg.norm(g0[:3])
    for limits, s in (((2 * f0, 2 * t0), 1.0), ((0.5 * f0, 2 * t0), 0.5),
                      ((2 * f0, 0.25 * t0), 0.25), ((0.5 * f0, 0.1 * t0), 0.1)):  # fmt: skip
        cmd = InterfaceLimitedBase(stack, gains, G, limits)(0.0, State(q, v), ref,
                                                           arm_acc=arm_acc)  # fmt: skip
        for got, want in ((cmd.wrench, plain.wrench), (cmd.feedback, plain.feedback),
                          (cmd.feedforward, plain.feedforward)):  # fmt: skip
            assert np.allclose(got, s * want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
        g = G @ swap(cmd.wrench)
        assert np.linalg.norm(g[3:]) <= limits[0] * (1 + 1e-12)
        assert np.linalg.norm(g[:3]) <= limits[1] * (1 + 1e-12)
    with pytest.raises(ValueError, match="limits"):
        InterfaceLimitedBase(stack, gains, G, (1.0, 0.0))
