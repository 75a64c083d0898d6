"""Reaction wheels: the rotors as bodies (momentum), the distribution law against a bounded
least-squares solver, momentum management."""

import numpy as np
import pytest
from scipy.optimize import lsq_linear

from dqspace.actuators.reaction_wheels import (
    ReactionWheel,
    WheelArray,
    attach_wheels,
    motor_torque_limits,
    orthogonal_wheels,
    pyramid_wheels,
)
from dqspace.actuators.wheel_control import MomentumManager, distribute
from dqspace.multibody import Body, Joint, JointType, Model, momentum, simulate_rk4


def _base(mass=20.0, J=(1.0, 1.5, 2.0)):
    return Model.build([Body("base", None, Joint(JointType.FREE), mass, np.zeros(3), np.diag(J))])


def test_the_rotors_spin_up_and_the_base_turns_the_other_way_momentum_conserved():
    arr = orthogonal_wheels(spin_inertia=0.02, radius=0.0)
    wm = attach_wheels(_base(), arr)
    m = wm.model
    q0 = m.neutral_configuration()
    v0 = np.zeros(m.nv)
    u = np.array([0.05, -0.02, 0.03])  # constant motor torques [N m]

    def controller(t, q, v):
        return wm.joint_torques(u)

    tr = simulate_rk4(m, q0, v0, dt=1e-3, n_steps=1000, controller=controller)
    h0 = momentum(m, tr.q[0], tr.v[0])
    for k in (250, 500, 1000):
        h = momentum(m, tr.q[k], tr.v[k])
        np.testing.assert_allclose(h.angular, h0.angular, atol=1e-12)
        np.testing.assert_allclose(h.linear, h0.linear, atol=1e-12)
    # small rotation, rotors on the base's principal axes: J_total w + I_s (Omega + w) = 0 per
    # axis, and I_s (Omega' + w') = u  ->  w(t) = -u t / J_base, Omega(t) = u t / I_s + u t/J
    t = 1.0
    Jb = np.array([1.0, 1.5, 2.0]) + 2 * 0.01  # the two transverse rotor moments on each axis
    w_expected = -u * t / Jb
    np.testing.assert_allclose(tr.v[-1][:3], w_expected, rtol=2e-3)
    np.testing.assert_allclose(wm.state(tr.q[-1], tr.v[-1]), u * t / 0.02 - w_expected, rtol=2e-3)


def test_unsaturated_distribution_is_the_minimum_norm_solution():
    arr = pyramid_wheels()
    rng = np.random.default_rng(1)
    for _ in range(20):
        tau = rng.normal(0, 0.1, 3)
        c = distribute(arr, tau, np.zeros(4))
        np.testing.assert_allclose(c.motor_torque, -np.linalg.pinv(arr.A) @ tau, atol=1e-14)
        np.testing.assert_allclose(c.torque_error, 0.0, atol=1e-14)
        assert not c.saturated.any()


def test_saturated_distribution_meets_the_bounds_and_minimises_the_error_like_lsq_linear():
    arr = pyramid_wheels(max_torque=0.2)
    rng = np.random.default_rng(2)
    for _ in range(40):
        tau = rng.normal(0, 0.4, 3)
        speed = rng.uniform(-700, 700, 4)
        c = distribute(arr, tau, speed)
        lo, hi = -arr.max_torque.copy(), arr.max_torque.copy()
        hi[speed >= arr.max_speed] = 0.0
        lo[speed <= -arr.max_speed] = 0.0
        assert np.all(c.motor_torque <= hi + 1e-15) and np.all(c.motor_torque >= lo - 1e-15)
        ref = lsq_linear(-arr.A, tau, bounds=(lo, hi), tol=1e-14)
        best = np.linalg.norm(-arr.A @ ref.x - tau)
        # the redistribution reaches the least error whenever the demand is reachable
        if best < 1e-9:
            assert np.linalg.norm(c.torque_error) < 1e-9
        assert np.linalg.norm(c.torque_error) <= best + 0.35 * np.linalg.norm(tau)


def test_a_wheel_at_its_speed_limit_is_not_pushed_further():
    arr = orthogonal_wheels()
    speed = np.array([arr.max_speed[0], 0.0, -arr.max_speed[2]])
    c = distribute(arr, np.array([-0.1, 0.0, 0.1]), speed)  # wants +u on wheel 1, -u on wheel 3
    assert c.motor_torque[0] == 0.0 and c.motor_torque[2] == 0.0 and c.saturated[[0, 2]].all()
    np.testing.assert_allclose(c.torque_error, [0.1, 0.0, -0.1])
    u = motor_torque_limits(arr, [1.0, 0.2, -1.0], speed)
    np.testing.assert_array_equal(u, [0.0, 0.2, 0.0])


def test_a_wheel_motor_loses_its_viscous_and_coulomb_friction():
    c, cc = 0.002, 0.01  # [N m s/rad], [N m]
    arr = orthogonal_wheels(friction=c, coulomb=cc)
    assert [(w.friction, w.coulomb) for w in arr.wheels] == [(c, cc)] * 3
    speed = np.array([100.0, 0.0, -50.0])  # [rad/s]
    u = motor_torque_limits(arr, [0.2, 0.2, 2.0], speed)  # the last above its 0.5 N m
    # u - c w - cc sign(w): no Coulomb term on a wheel at rest
    np.testing.assert_allclose(u, [0.2 - 0.2 - 0.01, 0.2, 0.5 + 0.1 + 0.01], rtol=1e-15)


def test_momentum_dumping_has_hysteresis_and_decays_exponentially():
    arr = orthogonal_wheels(spin_inertia=0.02)
    k, dt = 0.5, 0.01
    mgr = MomentumManager(arr, gain=k, start_fraction=0.8, stop_fraction=0.5)
    speed = np.array([0.85, 0.1, -0.2]) * arr.max_speed
    h0 = arr.momentum(speed)
    # the base held: the wheels take the dumping torque, h' = tau_dump (I_s Omega' = A^T tau)
    n, stopped_at = 0, None
    while n < 300:
        tau = mgr(speed)
        if not mgr.active:
            stopped_at = n
            break
        # forward Euler of h' = -k h: exactly (1 - k dt)^n
        np.testing.assert_allclose(arr.momentum(speed), h0 * (1 - k * dt) ** n, rtol=1e-12)
        speed = speed + dt * (arr.A.T @ tau) / arr.I_s
        n += 1
    assert stopped_at is not None  # stopped once every wheel was below half its limit
    assert np.all(np.abs(speed) < 0.5 * arr.max_speed)
    prev = speed / (1 - k * dt)  # ... and not before: one step earlier a wheel was above half
    assert np.max(np.abs(prev) / arr.max_speed) >= 0.5
    # below the start threshold it does not start again
    assert np.allclose(mgr(0.7 * arr.max_speed * np.ones(3)), 0.0) and not mgr.active
    assert np.any(mgr(0.81 * arr.max_speed * np.ones(3)) != 0.0) and mgr.active
    with pytest.raises(ValueError, match="stop_fraction < start_fraction"):
        MomentumManager(arr, gain=1.0, start_fraction=0.5, stop_fraction=0.6)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(axis=[0.0, 0.0, 0.0]), "axis must not be zero"),
        (dict(axis=[1.0, 0.0]), "finite 3-vector"),
        (dict(axis=[1.0, 0.0, 0.0], spin_inertia=-1.0), "spin_inertia"),
        (dict(axis=[1.0, 0.0, 0.0], spin_inertia=1.0, transverse_inertia=0.1), "no rigid rotor"),
        (dict(axis=[1.0, 0.0, 0.0], max_speed=0.0), "max_speed"),
        (dict(axis=[1.0, 0.0, 0.0], friction=-1.0), "friction"),
        (dict(axis=[1.0, 0.0, 0.0], coulomb=-0.1), "coulomb must be >= 0"),
        (dict(axis=[1.0, 0.0, 0.0], coulomb=float("nan")), "coulomb must be >= 0"),
    ],
)
def test_bad_wheels_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ReactionWheel(**kwargs)


def test_bad_arrays_and_arguments_are_refused():
    with pytest.raises(ValueError, match="at least one wheel"):
        WheelArray([])
    arr = orthogonal_wheels()
    with pytest.raises(ValueError, match="wheel_speed must be a finite"):
        distribute(arr, np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="dt must be positive"):
        distribute(arr, np.zeros(3), np.zeros(3), dt=0.0)
