"""Orbit terms against their analytic references: the Clohessy-Wiltshire solution of a free
body, the gravity-gradient torque of a body made of point masses under exact gravity; the
compiled wrenches on random trees against a NumPy evaluation from the forward kinematics."""

import numpy as np
import pytest

from dqspace.dq import (
    dq_from_quat_translation,
    rotation_matrix_from_dq,
    rotation_matrix_from_quat,
    translation_from_dq,
)
from dqspace.multibody import (
    Body,
    Joint,
    JointType,
    Model,
    forward_dynamics,
    forward_kinematics,
    integrate,
)
from dqspace.multibody.orbit import gravity_gradient_torque, hill_acceleration, hill_wrenches
from support.orbit import clohessy_wiltshire
from support.random import random_unit_quat
from support.random_models import random_tree

N = 0.00113  # [rad/s] low Earth orbit


def _sphere(mass=10.0, J=0.4):
    return Model.build([Body("sat", None, Joint(JointType.FREE), mass, np.zeros(3), J * np.eye(3))])


def test_a_free_body_follows_the_clohessy_wiltshire_solution_over_an_orbit():
    m = _sphere()
    r0, v0 = np.array([20.0, -5.0, 3.0]), np.array([0.01, -0.02, 0.005])
    q = m.neutral_configuration()
    q[5:8] = 0.5 * r0  # identity attitude: the dual part is r / 2
    v = np.r_[np.zeros(3), v0]
    zero = np.zeros(m.nv)

    def rates(q, v):
        return v, forward_dynamics(m, q, v, zero, f_ext=hill_wrenches(m, q, v, N))

    T = 2 * np.pi / N
    steps = 1200
    dt = T / steps
    for _ in range(steps):  # RK4 on the manifold (the attitude stays the identity here)
        k1 = rates(q, v)
        k2 = rates(integrate(m, q, k1[0], dt / 2), v + dt / 2 * k1[1])
        k3 = rates(integrate(m, q, k2[0], dt / 2), v + dt / 2 * k2[1])
        k4 = rates(integrate(m, q, k3[0], dt), v + dt * k3[1])
        q = integrate(m, q, (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]) / 6, dt)
        v = v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    expected = clohessy_wiltshire(T, r0, v0, N)
    # over one orbit the body drifts ~750 m along-track: 1 um is 1e-9 of the motion
    np.testing.assert_allclose(translation_from_dq(q), expected, rtol=0, atol=1e-6)
    np.testing.assert_allclose(v[:3], 0.0, atol=1e-15)  # an isotropic body does not turn


def test_the_gravity_gradient_torque_is_that_of_point_masses_under_exact_gravity():
    rng = np.random.default_rng(3)
    R0 = 7.0e6  # [m] orbit radius
    mu = N * N * R0**3
    rho = np.array(
        [[sx * 0.6, sy * 0.4, sz * 0.25] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    ) + rng.normal(0, 0.05, (8, 3))
    mass = rng.uniform(1.0, 3.0, 8)
    rho -= (mass[:, None] * rho).sum(0) / mass.sum()  # about the centre of mass
    J = sum(mi * (r @ r * np.eye(3) - np.outer(r, r)) for mi, r in zip(mass, rho, strict=True))
    for _ in range(10):
        R = rotation_matrix_from_quat(random_unit_quat(rng))
        tau_I = np.zeros(3)
        for mi, r in zip(mass, rho, strict=True):
            p = R @ r
            d = p + np.array([R0, 0.0, 0.0])  # from the planet's centre
            tau_I += np.cross(p, -mu * mi * d / np.linalg.norm(d) ** 3)
        np.testing.assert_allclose(
            gravity_gradient_torque(R, J, N), R.T @ tau_I, rtol=1e-5, atol=1e-12
        )
    # principal axes along the Hill axes: an equilibrium
    w, V = np.linalg.eigh(J)
    assert np.allclose(gravity_gradient_torque(V.T, J, N), 0.0, atol=1e-18)


def test_off_by_default_and_checked():
    m = _sphere()
    q, v = m.neutral_configuration(), np.ones(m.nv)
    assert np.all(hill_wrenches(m, q, v, 0.0) == 0.0)
    np.testing.assert_allclose(hill_acceleration([1.0, 0, 0], [0, 0, 0], N), [3 * N * N, 0, 0])
    with pytest.raises(ValueError, match="orbit rate"):
        hill_wrenches(m, q, v, -1.0)


def _numpy_hill_wrenches(model, q, v, n):
    """The wrenches of the module docstring evaluated with NumPy from the forward kinematics
    (poses and twists of every body), the CW acceleration and the GG torque written out."""
    kin = forward_kinematics(model, q, v)
    out = np.zeros((model.nb, 6))
    for k in range(model.nb):
        R = rotation_matrix_from_dq(kin.pose[k])
        c, m = model.com[k], model.mass[k]
        w, vb = kin.twist[k, :3], kin.twist[k, 3:]
        r_c = translation_from_dq(kin.pose[k]) + R @ c
        v_c = R @ (vb + np.cross(w, c))
        a = np.array([3 * n * n * r_c[0] + 2 * n * v_c[1], -2 * n * v_c[0], -n * n * r_c[2]])
        F = m * R.T @ a
        r_hat = R.T @ np.array([1.0, 0.0, 0.0])
        J = model.inertia_com[k]
        out[k] = np.r_[F, np.cross(c, F) + 3 * n * n * np.cross(r_hat, J @ r_hat)]
    return out


@pytest.mark.parametrize("seed", range(3))
def test_the_compiled_wrenches_equal_a_numpy_evaluation_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    m = random_tree(rng, 6, gravity=(0.0, 0.0, 0.0))
    q = m.random_configuration(rng)
    q[:8] = dq_from_quat_translation(q[:4], rng.normal(0.0, 5.0, 3))  # away from the origin
    v = rng.normal(size=m.nv)
    n = 0.05
    f = hill_wrenches(m, q, v, n)
    np.testing.assert_allclose(f, _numpy_hill_wrenches(m, q, v, n), rtol=1e-12, atol=1e-12)
