"""Singularity-robust VSCMG steering (eq. 42): exactness away from singularities, behaviour at
a singular gimbal set, an independent NumPy evaluation, saturation, bad input."""

import numpy as np
import pytest
from scipy.optimize import minimize

from dqspace.actuators.steering import SteeringCommand, SteeringLaw, steer
from dqspace.actuators.vscmg import pyramid_cluster

CLUSTER = pyramid_cluster()
OMEGA = CLUSTER.nominal_wheel_speed
LAW = SteeringLaw.for_cluster(CLUSTER)
CMG_ONLY = SteeringLaw.for_cluster(CLUSTER, wheel_weight0=0.0)
SINGULAR = np.radians([90.0, 0.0, -90.0, 0.0])


def _mats(gamma, w=None, Omega=OMEGA):
    return CLUSTER.matrices(gamma, Omega * np.ones(4), np.zeros(3) if w is None else w)


def _reference(law, C, E, tau, t):
    """eq. (42) with the weighting, written out independently with plain NumPy."""
    h6 = law.h_ref**6
    dC = np.linalg.det(C @ C.T) / h6
    ww = law.wheel_weight0 * np.exp(-law.wheel_mu * dC)
    W = np.diag(np.r_[np.full(C.shape[1], law.gimbal_weight), np.full(C.shape[1], ww)])
    G = np.hstack([C, E])
    lam = law.lambda0 * np.exp(-law.mu * np.linalg.det(G @ W @ G.T) / (law.gimbal_weight**3 * h6))
    e = [law.epsilon0 * np.sin(law.epsilon_rate * t + p) for p in law.epsilon_phase]
    R = np.array([[1, e[2], e[1]], [e[2], 1, e[0]], [e[1], e[0], 1]])
    x = W @ G.T @ np.linalg.inv(G @ W @ G.T + lam * R) @ tau
    k = C.shape[1]
    s = min(
        1.0,
        law.gimbal_rate_max / np.abs(x[:k]).max(),
        law.wheel_accel_max / max(np.abs(x[k:]).max(), 1e-300),
    )
    return s * x, lam, s


def test_exact_away_from_singularity(rng):
    """lambda is negligible where det(C C^T)/h^6 >= 1: G x = tau to 1e-9 relative."""
    gammas = [np.zeros(4)]
    while len(gammas) < 20:
        g = rng.uniform(-np.pi, np.pi, 4)
        m = _mats(g)
        if np.linalg.det(m.C @ m.C.T) / LAW.h_ref**6 >= 1.0:
            gammas.append(g)
    worst = 0.0
    for g in gammas:
        m = _mats(g, w=rng.normal(size=3) * 0.05)
        tau = rng.normal(size=3) * 2.0
        r = steer(LAW, m.C, m.E, tau, t=rng.uniform(0, 10))
        assert not r.saturated
        assert r.lam < 1e-6 * LAW.lambda0
        assert np.allclose(r.torque, m.C @ r.gimbal_rates + m.E @ r.wheel_accels, rtol=1e-15)
        worst = max(worst, np.linalg.norm(r.torque - tau) / np.linalg.norm(tau))
        assert np.allclose(r.torque_error, tau - r.torque, rtol=1e-15)
    assert worst < 1e-9
    # wheels are used little there (CMG mode)
    m = _mats(np.zeros(4))
    r = steer(LAW, m.C, m.E, np.array([1.0, 2.0, 3.0]))
    assert np.linalg.norm(m.E @ r.wheel_accels) < 1e-3 * np.sqrt(14.0)


def test_equals_independent_numpy_evaluation(rng):
    for law in (LAW, CMG_ONLY, SteeringLaw.for_cluster(CLUSTER, mu=1.0, epsilon0=0.2)):
        for _ in range(10):
            g = rng.uniform(-np.pi, np.pi, 4)
            if rng.uniform() < 0.3:
                g = SINGULAR + rng.normal(size=4) * 1e-3
            m = _mats(g, w=rng.normal(size=3) * 0.1)
            tau = rng.normal(size=3)
            t = rng.uniform(0, 20)
            r = steer(law, m.C, m.E, tau, t=t)
            x_ref, lam_ref, s_ref = _reference(law, m.C, m.E, tau, t)
            x = np.r_[r.gimbal_rates, r.wheel_accels]
            assert np.allclose(x, x_ref, rtol=1e-9, atol=1e-12 * np.abs(x_ref).max())
            assert r.lam == pytest.approx(lam_ref, rel=1e-9, abs=1e-300)
            assert r.scale == pytest.approx(s_ref, rel=1e-12)
            G = np.hstack([m.C, m.E])
            assert r.det_GGt == pytest.approx(np.linalg.det(G @ G.T), rel=1e-12)
            assert r.det_CCt == pytest.approx(np.linalg.det(m.C @ m.C.T), rel=1e-9, abs=1e-9)


def test_cmg_only_at_the_singular_set_stays_finite_and_reports_the_error():
    m = _mats(SINGULAR)
    assert np.linalg.det(m.C @ m.C.T) / LAW.h_ref**6 < 1e-14  # the set is singular
    for tau in ([1.0, 0, 0], [0.3, -0.2, 0.5], [20.0, 0, 0]):
        tau = np.array(tau)
        for t in (0.0, 0.4, 1.3):
            r = steer(CMG_ONLY, m.C, m.E, tau, t=t)
            x = np.r_[r.gimbal_rates, r.wheel_accels]
            assert np.all(np.isfinite(x))
            assert np.abs(r.gimbal_rates).max() <= CMG_ONLY.gimbal_rate_max * (1 + 1e-12)
            assert np.all(r.wheel_accels == 0)
            assert r.lam == pytest.approx(CMG_ONLY.lambda0, rel=1e-12)
            # x (the singular direction) cannot be produced by the gimbals: all of it is error
            assert r.torque_error[0] == pytest.approx(tau[0], rel=1e-12)
            assert np.allclose(r.torque_error, tau - m.C @ r.gimbal_rates, atol=1e-15)
    # along the singular direction the off-diagonal R still moves the gimbals (escape)
    r = steer(CMG_ONLY, m.C, m.E, np.array([1.0, 0, 0]), t=0.3)
    assert np.abs(r.gimbal_rates).max() > 1e-5
    # with R = I (eps0 = 0) the plain SR inverse is stuck: no motion at all
    stuck = SteeringLaw.for_cluster(CLUSTER, wheel_weight0=0.0, epsilon0=0.0)
    r = steer(stuck, m.C, m.E, np.array([1.0, 0, 0]))
    assert np.abs(r.gimbal_rates).max() < 1e-15


def test_wheels_deliver_the_singular_direction():
    m = _mats(SINGULAR)
    for tau in ([1.0, 0, 0], [0.3, -0.2, 0.5]):
        tau = np.array(tau)
        r = steer(LAW, m.C, m.E, tau, t=0.7)
        assert not r.saturated
        assert r.wheel_weight == pytest.approx(LAW.wheel_weight0, rel=1e-12)
        assert np.linalg.norm(r.torque_error) < 1e-9 * np.linalg.norm(tau)
        assert abs((m.E @ r.wheel_accels)[0] - tau[0]) < 1e-9  # x comes from the wheels
        assert np.abs(r.gimbal_rates).max() <= LAW.gimbal_rate_max
        assert np.abs(r.wheel_accels).max() <= LAW.wheel_accel_max


def test_numerically_found_singular_sets(rng):
    """Minimise det(C C^T) from random starts; at the minima the output stays bounded."""
    found = 0
    for _ in range(4):

        def f(g):
            m = _mats(g)
            return np.linalg.det(m.C @ m.C.T) / LAW.h_ref**6

        res = minimize(
            f,
            rng.uniform(-np.pi, np.pi, 4),
            method="Nelder-Mead",
            options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 4000},
        )
        if res.fun > 1e-8:
            continue
        found += 1
        m = _mats(res.x)
        for law in (LAW, CMG_ONLY):
            r = steer(law, m.C, m.E, rng.normal(size=3) * 5)
            assert np.all(np.isfinite(r.gimbal_rates)) and np.all(np.isfinite(r.wheel_accels))
            assert np.abs(r.gimbal_rates).max() <= law.gimbal_rate_max * (1 + 1e-12)
            assert np.abs(r.wheel_accels).max() <= law.wheel_accel_max * (1 + 1e-12)
            assert r.delta_C < 1e-8
    assert found >= 2


def test_saturation_scales_the_whole_vector():
    m = _mats(np.array([0.2, -0.4, 0.7, 0.1]))
    tau = np.array([40.0, -25.0, 30.0])
    free = SteeringLaw.for_cluster(CLUSTER, gimbal_rate_max=1e6, wheel_accel_max=1e6)
    r0 = steer(free, m.C, m.E, tau, t=0.2)
    assert not r0.saturated and r0.scale == 1.0
    r = steer(LAW, m.C, m.E, tau, t=0.2)
    expected = min(
        LAW.gimbal_rate_max / np.abs(r0.gimbal_rates).max(),
        LAW.wheel_accel_max / np.abs(r0.wheel_accels).max(),
    )
    assert r.saturated and r.scale == pytest.approx(expected, rel=1e-12) and r.scale < 1
    assert np.allclose(r.gimbal_rates, expected * r0.gimbal_rates, rtol=1e-12)
    assert np.allclose(r.wheel_accels, expected * r0.wheel_accels, rtol=1e-12)
    # the binding limit is met exactly, the other one respected
    use = max(
        np.abs(r.gimbal_rates).max() / LAW.gimbal_rate_max,
        np.abs(r.wheel_accels).max() / LAW.wheel_accel_max,
    )
    assert use == pytest.approx(1.0, rel=1e-12)
    assert np.allclose(r.torque, expected * r0.torque, rtol=1e-12)
    assert np.allclose(r.torque_error, tau - r.torque, rtol=1e-12)
    # CMG only: the gimbal-rate limit binds
    r0 = steer(
        SteeringLaw.for_cluster(CLUSTER, wheel_weight0=0.0, gimbal_rate_max=1e6),
        m.C,
        m.E,
        tau,
        t=0.2,
    )
    r = steer(CMG_ONLY, m.C, m.E, tau, t=0.2)
    s = CMG_ONLY.gimbal_rate_max / np.abs(r0.gimbal_rates).max()
    assert r.saturated and r.scale == pytest.approx(s, rel=1e-12) and s < 1
    assert np.allclose(r.gimbal_rates, s * r0.gimbal_rates, rtol=1e-12)
    assert np.abs(r.gimbal_rates).max() == pytest.approx(CMG_ONLY.gimbal_rate_max, rel=1e-12)
    # wheel-acceleration limit binding
    tight = SteeringLaw.for_cluster(CLUSTER, wheel_accel_max=1e-6)
    r = steer(tight, m.C, m.E, np.array([1.0, 0, 0]))
    assert r.saturated and np.abs(r.wheel_accels).max() == pytest.approx(1e-6, rel=1e-12)


def test_time_varying_R_and_constants():
    law = SteeringLaw.for_cluster(CLUSTER)
    t = 0.9
    e = 0.01 * np.sin(0.5 * np.pi * t + np.array([0.0, 0.5 * np.pi, np.pi]))
    assert np.allclose(law.epsilon(t), e, rtol=1e-15)
    R = law.R(t)
    assert np.allclose(R, R.T) and np.all(np.diag(R) == 1)
    assert (R[1, 2], R[0, 2], R[0, 1]) == pytest.approx(tuple(e), rel=1e-15)
    const = SteeringLaw.for_cluster(CLUSTER, epsilon_rate=0.0)
    assert np.allclose(const.R(0.0), const.R(123.4))
    # the defaults' scales
    h = CLUSTER.I_ws[0] * OMEGA
    assert law.h_ref == pytest.approx(h) and law.lambda0 == pytest.approx(0.01 * h**2)
    assert law.wheel_weight0 == pytest.approx(OMEGA**2)


def test_result_is_a_dataclass():
    m = _mats(np.zeros(4))
    r = steer(LAW, m.C, m.E, np.ones(3))
    assert isinstance(r, SteeringCommand)
    assert r.gimbal_rates.shape == (4,) and r.wheel_accels.shape == (4,)
    assert r.torque.shape == (3,) and r.torque_error.shape == (3,)


# ------------------------------------------------------------------ bad input


def test_fewer_than_three_columns():
    m = _mats(np.zeros(4))
    with pytest.raises(ValueError, match="K >= 3 .* got K = 2"):
        steer(LAW, m.C[:, :2], m.E[:, :2], np.ones(3))


def test_C_wrong_shape():
    with pytest.raises(ValueError, match=r"C must have shape \(3, K\)"):
        steer(LAW, np.ones((2, 4)), np.ones((2, 4)), np.ones(3))


def test_E_shape_mismatch():
    m = _mats(np.zeros(4))
    with pytest.raises(ValueError, match=r"E must have shape \(3, 4\)"):
        steer(LAW, m.C, m.E[:, :3], np.ones(3))


def test_tau_wrong_shape():
    m = _mats(np.zeros(4))
    with pytest.raises(ValueError, match=r"tau_B must have shape \(3,\)"):
        steer(LAW, m.C, m.E, np.ones(4))


def test_non_finite_input():
    m = _mats(np.zeros(4))
    with pytest.raises(ValueError, match="tau_B has non-finite entries"):
        steer(LAW, m.C, m.E, np.array([1.0, np.nan, 0]))
    C = m.C.copy()
    C[1, 2] = np.inf
    with pytest.raises(ValueError, match="C has non-finite entries"):
        steer(LAW, C, m.E, np.ones(3))


def test_law_must_be_a_steering_law():
    m = _mats(np.zeros(4))
    with pytest.raises(ValueError, match="law must be a SteeringLaw"):
        steer({"lambda0": 1.0}, m.C, m.E, np.ones(3))


def test_negative_lambda0():
    with pytest.raises(ValueError, match="lambda0 must be non-negative"):
        SteeringLaw.for_cluster(CLUSTER, lambda0=-1.0)


def test_non_positive_limits():
    with pytest.raises(ValueError, match="gimbal_rate_max must be positive"):
        SteeringLaw.for_cluster(CLUSTER, gimbal_rate_max=0.0)
    with pytest.raises(ValueError, match="wheel_accel_max must be positive"):
        SteeringLaw.for_cluster(CLUSTER, wheel_accel_max=-1.0)


def test_epsilon0_too_large():
    with pytest.raises(ValueError, match="epsilon0 must be < 0.5"):
        SteeringLaw.for_cluster(CLUSTER, epsilon0=0.6)


def test_bad_phases():
    with pytest.raises(ValueError, match="epsilon_phase must be 3 finite angles"):
        SteeringLaw.for_cluster(CLUSTER, epsilon_phase=(0.0, 1.0))
