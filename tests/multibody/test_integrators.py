"""Integration on the configuration manifold: the exponential map, local-coordinate rates,
RK4 order, closed-form rigid-body motions, the divergence guard and the adaptive wrapper."""

import numpy as np
import pytest

import dqspace.multibody as mb
from dqspace.dq import dq_conj, dq_mul, dq_screw_exp, dq_unit_error
from dqspace.multibody import kernels as K
from dqspace.multibody.models import space_manipulator


@pytest.fixture(scope="module")
def robot():
    return space_manipulator()


def single_body(inertia=(0.4, 0.5, 0.6), com=(0.0, 0.0, 0.0), mass=10.0):
    body = mb.Body("b", None, mb.Joint(mb.JointType.FREE), mass, np.array(com), np.diag(inertia))
    return mb.Model.build([body])


def sphere_chain():
    """A free base carrying a spherical joint and a revolute joint (all tangent maps used)."""
    J = np.diag([0.02, 0.03, 0.04])
    bodies = [
        mb.Body("base", None, mb.Joint(mb.JointType.FREE), 5.0, np.zeros(3), np.eye(3) * 0.1),
        mb.Body(
            "ball",
            "base",
            mb.Joint(mb.JointType.SPHERICAL, placement=np.r_[1.0, 0, 0, 0, 0, 0, 0, 0.1]),
            1.0,
            np.array([0.0, 0.1, 0.2]),
            J,
        ),
        mb.Body(
            "arm",
            "ball",
            mb.Joint(
                mb.JointType.REVOLUTE, np.array([0.0, 1.0, 0.0]), np.r_[1.0, 0, 0, 0, 0, 0.1, 0, 0]
            ),
            0.5,
            np.array([0.1, 0.0, 0.0]),
            J,
        ),
    ]
    return mb.Model.build(bodies)


def test_integrate_difference_round_trip(robot, rng):
    for model in (robot, sphere_chain()):
        q0 = model.random_configuration(rng)
        v = rng.normal(size=model.nv)
        q1 = mb.integrate(model, q0, v, 0.3)
        assert np.allclose(mb.difference(model, q0, q1), 0.3 * v, atol=1e-12)


def test_local_coordinate_rates_match_finite_differences(rng):
    """dexpinv is exact: q0 (+) theta(t) moves with body velocity v, dexpinv(theta, v) = theta'."""
    model = sphere_chain()
    q0 = model.random_configuration(rng)
    th = 0.9 * rng.normal(size=model.nv)
    th_dot = rng.normal(size=model.nv)
    h = 1e-5

    def q_at(t):
        return mb.integrate(model, q0, th + t * th_dot, 1.0)

    qp, qm, qc = q_at(h), q_at(-h), q_at(0.0)
    # body velocities from the configuration rates, joint by joint
    qd = (qp - qm) / (2 * h)
    v = np.empty(model.nv)
    nu = 2 * dq_mul(dq_conj(qc[:8]), qd[:8])
    v[:6] = nu[[1, 2, 3, 5, 6, 7]]
    sq = qc[8:12]
    w = 2 * dq_mul(np.r_[sq[0], -sq[1:], 0, 0, 0, 0], np.r_[qd[8:12], 0, 0, 0, 0])[:4]
    v[6:9] = w[1:]
    v[9] = qd[12]
    out = np.empty(model.nv)
    K.dexpinv(model._ints, th, v, out)
    assert np.abs(out - th_dot).max() < 1e-8


def test_rk4_is_fourth_order(robot, rng):
    q0 = robot.random_configuration(rng)
    v0 = 0.5 * rng.normal(size=robot.nv)
    ref = mb.simulate_rk4(robot, q0, v0, dt=1e-3, n_steps=500)
    errs = []
    for dt in (0.025, 0.0125):
        tr = mb.simulate_rk4(robot, q0, v0, dt=dt, n_steps=int(round(0.5 / dt)))
        errs.append(np.abs(mb.difference(robot, ref.q[-1], tr.q[-1])).max())
    ratio = errs[0] / errs[1]
    assert 12.0 < ratio < 20.0, errs


def test_spherical_body_moves_on_its_screw_exactly():
    """Isotropic inertia, CoM at the origin, v parallel to w: f = m (v' + w x v) = 0 keeps the
    body twist constant, so q(t) = q0 o exp(1/2 xi t) exactly."""
    model = single_body(inertia=(0.5, 0.5, 0.5))
    w = np.array([0.3, -1.2, 0.7])
    xi = np.r_[w, 0.4 * w]
    q0 = model.neutral_configuration()
    tr = mb.simulate_rk4(model, q0, xi, dt=0.01, n_steps=300)
    exact = dq_mul(q0[:8], dq_screw_exp(0.5 * xi * 3.0))
    assert np.abs(tr.q[-1] - exact).max() < 1e-13
    assert np.abs(tr.v[-1] - xi).max() < 1e-13


def test_torque_free_axisymmetric_body_precesses_as_the_closed_form():
    """Euler's equations for I1 = I2: w3 constant, (w1, w2) turns at lambda = (I3 - I1)/I1 w3:
    w1' = -lambda w2, w2' = lambda w1."""
    I1, I3 = 0.4, 0.7
    model = single_body(inertia=(I1, I1, I3))
    w0 = np.array([0.3, -0.2, 2.0])
    v0 = np.r_[w0, 0.5, 0.0, 0.0]
    T = 2.0
    tr = mb.simulate_rk4(model, model.neutral_configuration(), v0, dt=1e-3, n_steps=2000)
    lam = (I3 - I1) / I1 * w0[2]
    c, s = np.cos(lam * T), np.sin(lam * T)
    w_exact = np.array([c * w0[0] - s * w0[1], s * w0[0] + c * w0[1], w0[2]])
    assert np.abs(tr.v[-1, :3] - w_exact).max() < 1e-11
    # the CoM (at the origin) moves with constant inertial velocity: R(t) v_body = R(0) v_body(0)
    from dqspace.dq import translation_from_dq

    assert np.allclose(translation_from_dq(tr.q[-1, :8]), [0.5 * T, 0, 0], atol=1e-11)
    assert dq_unit_error(tr.q[-1, :8]) < 1e-15


def test_divergence_stops_with_time_and_component(robot):
    q0 = robot.neutral_configuration()
    huge = np.zeros(robot.nv)
    huge[8] = 1e307
    with pytest.raises(mb.IntegrationError, match=r"non-finite at t = 0\.01 s: [qv]\["):
        mb.simulate_rk4(robot, q0, np.zeros(robot.nv), dt=0.01, n_steps=5, inputs=huge)


def test_adaptive_agrees_with_fine_rk4(robot, rng):
    q0 = robot.random_configuration(rng)
    v0 = 0.3 * rng.normal(size=robot.nv)

    def u(t):
        tau = np.zeros(robot.nv)
        tau[:6] = np.sin(t) * np.array([1.0, 2, 3, 1, 2, 3])
        return tau

    ad = mb.simulate_adaptive(
        robot, q0, v0, (0.0, 1.0), inputs=u, t_eval=[0.0, 0.5, 1.0], rtol=1e-11, atol=1e-11
    )
    rk = mb.simulate_rk4(robot, q0, v0, dt=1e-3, n_steps=1000, inputs=u)
    assert np.abs(mb.difference(robot, rk.q[-1], ad.q[-1])).max() < 1e-9
    assert np.abs(rk.v[-1] - ad.v[-1]).max() < 1e-9
    assert dq_unit_error(ad.q[-1, :8]) < 1e-14


def test_zero_order_hold_controller_is_called_at_its_rate(robot):
    calls = []

    def ctrl(t, q, v):
        calls.append(t)
        return np.zeros(robot.nv)

    mb.simulate_rk4(
        robot,
        robot.neutral_configuration(),
        np.zeros(robot.nv),
        dt=1e-3,
        n_steps=20,
        controller=ctrl,
        control_every=10,
    )
    assert np.allclose(calls, [0.0, 0.01])


def test_bad_integration_arguments(robot):
    q0 = robot.neutral_configuration()
    with pytest.raises(ValueError, match="dt must be positive"):
        mb.simulate_rk4(robot, q0, np.zeros(robot.nv), dt=0.0, n_steps=1)
    bad = q0.copy()
    bad[0] = 2.0
    with pytest.raises(ValueError, match=r"q0\[0:8\] \(base pose of body 'base'\) is not unit"):
        mb.simulate_rk4(robot, bad, np.zeros(robot.nv), dt=1e-3, n_steps=1)
