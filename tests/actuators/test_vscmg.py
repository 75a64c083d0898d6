"""VSCMG device and cluster: geometry, pyramid, matrices of eq. (40)-(41), bad input.

References are independent of the code under test: analytic pyramid formulas,
finite differences of the cluster's angular momentum, and the multibody engine's
momentum for the relative momentum h.
"""

import numpy as np
import pytest

from dqspace.actuators.servo import ServoGains
from dqspace.actuators.vscmg import (
    NOMINAL_WHEEL_SPEED,
    PYRAMID_SKEW,
    TABLE4_INERTIA,
    TABLE4_MASS,
    VSCMG,
    VSCMGCluster,
    pyramid_cluster,
)
from dqspace.actuators.vscmg_multibody import attach_cluster
from dqspace.dq import dq_identity
from dqspace.multibody import Body, Joint, JointType, Model, momentum


def _unit(rng):
    x = rng.normal(size=3)
    return x / np.linalg.norm(x)


def _random_cluster(rng, K=5):
    units = []
    for _ in range(K):
        g = _unit(rng)
        s = np.cross(g, _unit(rng))
        s /= np.linalg.norm(s)
        Iws = rng.uniform(0.05, 0.2)
        units.append(
            VSCMG(
                gimbal_axis=g,
                spin_axis=s,
                position=rng.uniform(-0.5, 0.5, 3),
                wheel_mass=rng.uniform(5, 30),
                wheel_inertia=(Iws, rng.uniform(0.6, 1.0) * Iws),
                gimbal_mass=rng.uniform(0.5, 3),
                gimbal_inertia=tuple(rng.uniform(0.01, 0.02, 3)),
                nominal_wheel_speed=rng.uniform(100, 500),
            )
        )
    return VSCMGCluster(units)


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


# ------------------------------------------------------------------ geometry


def test_axes_rotate_about_g_right_handed(rng):
    cl = _random_cluster(rng)
    gamma = rng.uniform(-np.pi, np.pi, cl.K)
    ax = cl.axes(gamma)
    for i in range(cl.K):
        g, s, t = ax.A_g[:, i], ax.A_s[:, i], ax.A_t[:, i]
        R = np.column_stack([s, t, g])
        assert np.allclose(R.T @ R, np.eye(3), atol=1e-14)
        assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-14)
        assert np.allclose(np.cross(s, t), g, atol=1e-14)  # g = s x t
        # s(gamma) is s0 turned by +gamma about g (Rodrigues, independent of the code)
        s0 = cl.A_s0[:, i]
        K = _skew(g)
        Rg = np.eye(3) + np.sin(gamma[i]) * K + (1 - np.cos(gamma[i])) * K @ K
        assert np.allclose(s, Rg @ s0, atol=1e-14)
    # ds/dgamma = t and dt/dgamma = -s (central differences)
    e = 1e-6
    axp, axm = cl.axes(gamma + e), cl.axes(gamma - e)
    assert np.allclose((axp.A_s - axm.A_s) / (2 * e), ax.A_t, atol=1e-9)
    assert np.allclose((axp.A_t - axm.A_t) / (2 * e), -ax.A_s, atol=1e-9)


def test_table4_is_the_rotor_a_steel_cylinder():
    # Table 4 matches a solid cylinder r = h = 0.1 m of steel (7850 kg/m^3) spinning about x:
    # the reason the whole of Table 4 is taken as the wheel (docs/vscmg.md).
    r = h = 0.1
    m = 7850.0 * np.pi * r**2 * h
    assert m == pytest.approx(TABLE4_MASS, rel=2e-4)
    assert 0.5 * TABLE4_MASS * r**2 == pytest.approx(TABLE4_INERTIA[0], rel=1e-12)
    assert TABLE4_MASS * (3 * r**2 + h**2) / 12 == pytest.approx(TABLE4_INERTIA[1], rel=1e-3)


def test_pyramid_geometry_and_nominal_jacobian():
    cl = pyramid_cluster()
    assert cl.K == 4
    assert np.degrees(PYRAMID_SKEW) == pytest.approx(54.7356103, abs=1e-6)
    z = np.array([0.0, 0, 1])
    for i in range(4):
        g, s, p = cl.A_g0[:, i], cl.A_s0[:, i], cl.positions[i]
        # skew angle: g leans beta from the pyramid's axis z, in the plane of z and p
        assert np.degrees(np.arccos(g @ z)) == pytest.approx(54.7356103, abs=1e-6)
        assert g @ np.cross(z, p) == pytest.approx(0.0, abs=1e-14)
        assert g @ p > 0  # leans outward
        assert np.linalg.norm(p) == pytest.approx(0.3)
        assert np.abs(p).max() > 0.15 + 0.12  # housing outside the 0.3 m cube
        assert s @ p == pytest.approx(0.0, abs=1e-14)
    # wheel momenta cancel at gamma = 0
    assert np.allclose(cl.A_s0.sum(axis=1), 0.0, atol=1e-15)
    # C C^T at gamma = 0, w = 0 is h^2 diag(2 cos^2 b, 2 cos^2 b, 4 sin^2 b) (Wie's pyramid)
    h = cl.I_ws[0] * NOMINAL_WHEEL_SPEED
    m = cl.matrices(np.zeros(4), np.full(4, NOMINAL_WHEEL_SPEED), np.zeros(3))
    cb2, sb2 = 1.0 / 3.0, 2.0 / 3.0
    assert np.allclose(m.C @ m.C.T, h**2 * np.diag([2 * cb2, 2 * cb2, 4 * sb2]), rtol=1e-13)
    assert NOMINAL_WHEEL_SPEED * 60 / (2 * np.pi) == pytest.approx(3000.0)


def test_known_singular_set_of_the_pyramid():
    # gamma = (90, 0, -90, 0) deg: every gimbal torque direction lies in the y-z plane
    cl = pyramid_cluster()
    m = cl.matrices(np.radians([90.0, 0, -90, 0]), cl.nominal_wheel_speed, np.zeros(3))
    assert np.abs(m.C[0]).max() < 1e-12 * np.abs(m.C).max()
    assert np.linalg.det(m.C @ m.C.T) / cl.nominal_momentum**6 < 1e-14
    # the wheels still reach x
    assert np.linalg.matrix_rank(m.G) == 3


# ----------------------------------------------------------- relative momentum


def test_momentum_equals_multibody_momentum_of_the_cluster(rng):
    """h = A_g I_cg gamma_dot + A_s I_ws Omega is the cluster's momentum with the base at rest."""
    cl = _random_cluster(rng)
    base = Body(
        "base",
        None,
        Joint(JointType.FREE, placement=dq_identity()),
        27.0,
        np.zeros(3),
        0.405 * np.eye(3),
    )
    cm = attach_cluster(Model.build([base]), cl)
    m = cm.model
    for _ in range(5):
        q = m.random_configuration(rng)
        q[:8] = dq_identity()  # base frame = inertial frame
        v = np.zeros(m.nv)
        gd = rng.normal(size=cl.K)
        Om = rng.normal(size=cl.K) * 300
        q, v = cm.with_state(q, v, gamma_dot=gd, wheel_speed=Om)
        L = momentum(m, q, v).angular
        h = cl.momentum(q[cm.index.gimbal_q], gd, Om)
        assert np.allclose(L, h, rtol=1e-13, atol=1e-13 * np.abs(h).max())


# --------------------------------------------------- the matrices of (40)-(41)


def _locked_inertia(cl, gamma):
    ax = cl.axes(gamma)
    J = np.zeros((3, 3))
    for i in range(cl.K):
        R = np.column_stack([ax.A_s[:, i], ax.A_t[:, i], ax.A_g[:, i]])
        J += R @ np.diag([cl.I_s[i], cl.I_t[i], cl.I_cg[i]]) @ R.T
    return J


def test_torque_is_minus_the_rate_of_the_relative_momentum(rng):
    """B gamma_ddot + C gamma_dot + E Omega_dot + d = -(dJ/dt w + dh/dt|_B + w x h).

    The right side is built from the angular momentum alone, differentiated numerically
    along gamma(t) = g0 + gd t + gdd t^2/2, Omega(t) = O0 + Od t at constant w.
    """
    cl = _random_cluster(rng)
    for _ in range(5):
        g0 = rng.uniform(-np.pi, np.pi, cl.K)
        gd, gdd = rng.normal(size=cl.K), rng.normal(size=cl.K)
        O0, Od = rng.normal(size=cl.K) * 300, rng.normal(size=cl.K) * 5
        w = rng.normal(size=3) * 0.5

        def L(t, g0=g0, gd=gd, gdd=gdd, O0=O0, Od=Od, w=w):
            g = g0 + gd * t + 0.5 * gdd * t * t
            return _locked_inertia(cl, g) @ w + cl.momentum(g, gd + gdd * t, O0 + Od * t)

        e = 1e-4
        Ldot = (8 * (L(e) - L(-e)) - (L(2 * e) - L(-2 * e))) / (12 * e)
        h = cl.momentum(g0, gd, O0)
        expected = -(Ldot + np.cross(w, h))
        tau = cl.base_torque(g0, gd, O0, w, gdd, Od)
        assert np.allclose(tau, expected, rtol=1e-8, atol=1e-8 * np.abs(expected).max())


def test_matrix_shapes_and_paper_terms_at_rest(rng):
    """With w = 0: B = -A_g I_cg, C = -A_t I_ws [Omega]_d, E = -A_s I_ws, d = 0 (paper's
    (40) without the stray 'w', with the sign of a torque ON the base)."""
    cl = _random_cluster(rng, K=4)
    g = rng.uniform(-3, 3, 4)
    Om = rng.normal(size=4) * 200
    m = cl.matrices(g, Om, np.zeros(3))
    assert m.B.shape == m.C.shape == m.E.shape == (3, 4) and m.G.shape == (3, 8)
    ax = cl.axes(g)
    assert np.allclose(m.B, -ax.A_g @ np.diag(cl.I_cg), rtol=1e-15)
    assert np.allclose(m.C, -ax.A_t @ np.diag(cl.I_ws) @ np.diag(Om), rtol=1e-15)
    assert np.allclose(m.E, -ax.A_s @ np.diag(cl.I_ws), rtol=1e-15)
    assert np.allclose(m.G, np.hstack([m.C, m.E]))
    assert np.all(m.d == 0)


# ------------------------------------------------------------------ bad input

_G = np.array([0.0, 0, 1])
_S = np.array([1.0, 0, 0])


def test_non_unit_gimbal_axis():
    with pytest.raises(ValueError, match="gimbal_axis must be a unit vector"):
        VSCMG(gimbal_axis=[0, 0, 1.1], spin_axis=_S)


def test_non_unit_spin_axis():
    with pytest.raises(ValueError, match="spin_axis must be a unit vector"):
        VSCMG(gimbal_axis=_G, spin_axis=[0.9, 0, 0])


def test_non_orthogonal_axes():
    with pytest.raises(ValueError, match="not orthogonal"):
        VSCMG(gimbal_axis=_G, spin_axis=[np.sqrt(0.5), 0, np.sqrt(0.5)])


def test_non_finite_axis():
    with pytest.raises(ValueError, match="gimbal_axis must be a finite 3-vector"):
        VSCMG(gimbal_axis=[0, np.nan, 1], spin_axis=_S)


def test_negative_wheel_inertia():
    with pytest.raises(ValueError, match="wheel_inertia must be two positive moments"):
        VSCMG(gimbal_axis=_G, spin_axis=_S, wheel_inertia=(-0.1, 0.08))


def test_negative_gimbal_inertia():
    with pytest.raises(ValueError, match="gimbal_inertia must be three positive moments"):
        VSCMG(gimbal_axis=_G, spin_axis=_S, gimbal_inertia=(0.01, -0.01, 0.01))


def test_wheel_inertia_triangle_inequality():
    with pytest.raises(ValueError, match="triangle inequality"):
        VSCMG(gimbal_axis=_G, spin_axis=_S, wheel_inertia=(0.2, 0.05))


def test_gimbal_inertia_triangle_inequality():
    with pytest.raises(ValueError, match="triangle inequality"):
        VSCMG(gimbal_axis=_G, spin_axis=_S, gimbal_inertia=(0.01, 0.01, 0.05))


def test_non_positive_mass():
    with pytest.raises(ValueError, match="wheel_mass must be positive"):
        VSCMG(gimbal_axis=_G, spin_axis=_S, wheel_mass=0.0)
    with pytest.raises(ValueError, match="gimbal_mass must be positive"):
        VSCMG(gimbal_axis=_G, spin_axis=_S, gimbal_mass=-1.0)


def test_non_positive_nominal_speed():
    with pytest.raises(ValueError, match="nominal_wheel_speed must be positive"):
        VSCMG(gimbal_axis=_G, spin_axis=_S, nominal_wheel_speed=0.0)


def test_fewer_than_three_units():
    u = pyramid_cluster().units
    with pytest.raises(ValueError, match="K >= 3 .* got K = 2"):
        VSCMGCluster(u[:2])


def test_coplanar_gimbal_axes():
    units = [VSCMG(gimbal_axis=_G, spin_axis=_S) for _ in range(4)]
    with pytest.raises(ValueError, match="do not span 3 dimensions"):
        VSCMGCluster(units)


def test_wrong_state_shapes():
    cl = pyramid_cluster()
    with pytest.raises(ValueError, match=r"gamma must be a finite \(4,\) array"):
        cl.axes(np.zeros(3))
    with pytest.raises(ValueError, match=r"wheel_speed must be a finite \(4,\) array"):
        cl.matrices(np.zeros(4), [1.0, 2, np.inf, 3], np.zeros(3))
    with pytest.raises(ValueError, match="w_IB_B must be a finite 3-vector"):
        cl.matrices(np.zeros(4), np.ones(4), np.zeros(4))


def test_attach_needs_a_cluster():
    base = Body("base", None, Joint(JointType.FREE), 1.0, np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match="cluster must be a VSCMGCluster"):
        attach_cluster(Model.build([base]), [VSCMG(gimbal_axis=_G, spin_axis=_S)])


def test_cluster_units_must_be_vscmgs():
    u = pyramid_cluster().units
    with pytest.raises(ValueError, match=r"units\[3\] must be a VSCMG"):
        VSCMGCluster([*u[:3], "wheel"])


def test_negative_pyramid_radius():
    with pytest.raises(ValueError, match="radius must be non-negative"):
        pyramid_cluster(radius=-0.3)


def test_negative_servo_gain():
    with pytest.raises(ValueError, match="ServoGains.gimbal_rate must be non-negative"):
        ServoGains(gimbal_rate=-1.0)


def test_with_state_bad_wheel_speed_keyword():
    base = Body("base", None, Joint(JointType.FREE), 1.0, np.zeros(3), np.eye(3))
    cm = attach_cluster(Model.build([base]), pyramid_cluster())
    q, v = cm.model.neutral_configuration(), np.zeros(cm.model.nv)
    with pytest.raises(ValueError, match="wheel_speed must be an array or 'nominal'"):
        cm.with_state(q, v, wheel_speed="fast")
    with pytest.raises(ValueError, match=r"gamma must be a finite \(4,\) array"):
        cm.with_state(q, v, gamma=[0.0, 1.0])
