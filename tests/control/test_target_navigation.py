"""Relative navigation of a capture target (:mod:`dqspace.control.target_navigation`).

References independent of the filter: the axisymmetric torque-free motion in closed form
(attitude, body rates) and the straight line of the centre of mass; the forward dynamics
of the target's one-body model (ABA) differenced numerically for the error dynamics'
Jacobian, and perturbed free motions for its transition matrix; the sensor's samples
against the truth at their sample times; chi-square bounds on the normalised errors over
seeded runs (the recipe of the base's MEKF tests).
"""

import numpy as np
import pytest
from scipy import stats

from dqspace.control.target_navigation import (
    TargetNavigationFilter,
    TargetPoseSensor,
    estimate_motion,
    initial_estimate,
    rotation_error_jacobian,
)
from dqspace.dq import (
    dq_from_rpy_deg,
    quat_conj,
    quat_exp,
    quat_mul,
    rotation_matrix_from_quat,
    translation_from_dq,
)
from dqspace.multibody import Target, forward_dynamics, free_motion, simulate_adaptive

J = np.array([[400.0, 20.0, -15.0], [20.0, 350.0, 10.0], [-15.0, 10.0, 300.0]])
TARGET = Target(500.0, np.array([0.05, 0.02, -0.04]), J)
POSE0 = dq_from_rpy_deg([10.0, 20.0, 30.0], [0.5, 0.0, 2.45])
TWIST0 = TARGET.twist(np.radians([1.5, 2.0, 1.5]), [1e-3, -2e-3, 0.5e-3])
SIG_ATT, SIG_POS = np.radians(0.2), 2e-3


def _truth(T, period, target=TARGET, pose=POSE0, twist=TWIST0):
    n = int(round(T / period))
    return free_motion(target, pose, twist, dt=period / 10, n_steps=10 * n, record_every=10)


def _filter(pose, twist, P0r, P0t, target=TARGET, **kw):
    kw = dict(attitude_sigma=SIG_ATT, position_sigma=SIG_POS, **kw)
    return TargetNavigationFilter(target, pose, twist, P0r, P0t, **kw)


P0R = np.diag([np.radians(1.0) ** 2] * 3 + [np.radians(0.05) ** 2] * 3)
P0T = np.diag([1e-4] * 3 + [4e-6] * 3)


def test_the_mean_follows_the_closed_form_tumble_and_the_com_line():
    # an axisymmetric body (I_t, I_t, I_a), CoM off the origin: the filter's mean, propagated
    # 200 steps without a measurement, against R(t) = exp(t [h/I_t]x) R0 exp(-t lam [e3]x)
    It, Ia = 300.0, 200.0
    tg = Target(80.0, np.array([0.1, -0.05, 0.2]), np.diag([It, It, Ia]))
    w0 = np.radians([2.0, -1.0, 4.0])
    pose0 = dq_from_rpy_deg([30.0, -20.0, 45.0], [1.0, 0.5, 2.0])
    vc0 = np.array([0.01, -0.02, 0.005])  # CoM velocity, body axes
    f = _filter(pose0, tg.twist(w0, vc0), P0R, P0T, target=tg)
    R0 = rotation_matrix_from_quat(pose0[:4])
    h = R0 @ (np.diag([It, It, Ia]) @ w0)
    lam = (Ia - It) * w0[2] / It
    c0 = translation_from_dq(pose0) + R0 @ tg.com
    dt, n = 0.05, 200
    for _ in range(n):
        f.propagate(dt, substeps=2)
    t = n * dt
    q_pre = quat_exp(0.5 * t * h / It)
    q_spin = quat_exp(-0.5 * t * lam * np.array([0.0, 0.0, 1.0]))
    R = rotation_matrix_from_quat(quat_mul(quat_mul(q_pre, pose0[:4]), q_spin))
    pose, twist = f.pose, f.twist
    Rf = rotation_matrix_from_quat(pose[:4])
    assert np.abs(Rf - R).max() < 1e-9
    w = rotation_matrix_from_quat(q_spin).T @ w0  # body rates turn about e3 at lam
    assert np.allclose(twist[:3], w, rtol=0.0, atol=1e-11)
    com = translation_from_dq(pose) + Rf @ tg.com
    assert np.allclose(com, c0 + t * R0 @ vc0, rtol=0.0, atol=1e-12)
    assert abs(np.degrees(np.linalg.norm(w0)) * t) > 10.0  # it turned: the test can fail


def test_the_mean_of_a_general_tumble_agrees_with_an_adaptive_integrator():
    # a body tumbling about no principal axis, CoM off the origin: the filter's mean over
    # 10 s (one RK4 step per 20 ms) against scipy's RK45 on the manifold at tight tolerances
    f = _filter(POSE0, TWIST0, P0R, P0T)
    dt, n = 0.02, 500
    for _ in range(n):
        f.propagate(dt)
    ref = simulate_adaptive(TARGET.model, POSE0, TWIST0, (0.0, n * dt), t_eval=[n * dt],
                            rtol=1e-12, atol=1e-12)  # fmt: skip
    assert np.abs(f.pose - ref.q[-1]).max() < 1e-9
    assert np.abs(f.twist - ref.v[-1]).max() < 1e-11
    assert np.abs(ref.v[-1][:3] - TWIST0[:3]).max() > 1e-3  # the rates changed: can fail


def test_the_error_jacobian_is_the_derivative_of_the_torque_free_dynamics():
    # d(w')/dw by central differences of the target model's forward dynamics (ABA)
    w = np.radians([1.5, -2.0, 3.0])
    F = rotation_error_jacobian(TARGET.inertia, w)
    eps = 1e-6
    D = np.empty((3, 3))
    for j in range(3):
        dw = np.zeros(3)
        dw[j] = eps
        a = [forward_dynamics(TARGET.model, POSE0, TARGET.twist(w + s * dw), np.zeros(6))
             for s in (1.0, -1.0)]  # fmt: skip
        D[:, j] = (a[0][:3] - a[1][:3]) / (2 * eps)
    assert np.abs(D).max() > 1e-4  # a real coupling: the comparison can fail
    assert np.allclose(F[3:, 3:], D, rtol=0.0, atol=1e-9 * np.abs(D).max() + 1e-12)


def test_the_covariance_transition_carries_a_perturbation_as_the_free_motion_does():
    # the estimate started off the truth by a small error a0 = [dtheta, dw], both moving
    # freely for 5 s (the filter's mean is the free motion); with the rank-one P0 = a0 a0^T
    # and no process noise, the filter's P is then (Phi a0)(Phi a0)^T: it must be e e^T,
    # e the error between the two free motions (to the linearisation's ~|a0| relative)
    a0 = np.r_[[1e-5, -1e-5, 2e-5], [1e-5, 2e-5, -1e-5]]  # [rad], [rad/s]
    est0 = initial_estimate(TARGET, POSE0, TWIST0, a0, np.zeros(6))
    f = _filter(*est0, np.outer(a0, a0), P0T)
    dt, n = 0.05, 100
    for _ in range(n):
        f.propagate(dt)
    truth = _truth(n * dt, dt)
    e = f.errors(truth.q[-1], truth.v[-1])[0]
    assert np.linalg.norm(e - a0) > np.linalg.norm(a0)  # it evolved: the test can fail
    E = np.outer(e, e)
    assert np.abs(f.rotation.P - E).max() <= 1e-3 * np.abs(E).max()


def test_the_sensor_samples_the_truth_at_its_sample_times_with_its_noise():
    period, T, lat = 0.05, 20.0, 0.05
    truth = _truth(T, period)
    s0 = TargetPoseSensor(np.random.default_rng(1), np.random.default_rng(2), rate=20.0,
                          attitude_noise=0.0, position_noise=0.0, latency=lat)  # fmt: skip
    s1 = TargetPoseSensor(np.random.default_rng(1), np.random.default_rng(2), rate=20.0,
                          attitude_noise=SIG_ATT, position_noise=SIG_POS, latency=lat)  # fmt: skip
    att, pos, seen = [], [], -1
    for k, p in enumerate(truth.q):
        m0, m1 = s0.measure(k * period, p), s1.measure(k * period, p)
        if k * period < lat - 1e-12:
            assert m0 is None and m1 is None
            continue
        assert m1.t == pytest.approx(np.floor((k * period - lat) / 0.05 + 1e-9) * 0.05, abs=1e-12)
        if m1.index == seen:
            continue
        seen = m1.index
        j = int(round(m1.t / period))  # noise-free: exactly the truth at the sample time
        assert np.array_equal(m0.q, truth.q[j][:4])
        assert np.allclose(m0.r, translation_from_dq(truth.q[j]), rtol=0.0, atol=1e-15)
        e = quat_mul(quat_conj(truth.q[j][:4]), m1.q)
        att.append(2.0 * np.sign(e[0]) * e[1:])
        pos.append(m1.r - translation_from_dq(truth.q[j]))
    att, pos = np.array(att), np.array(pos)
    n = len(att)
    assert n == int(round((T - lat) / 0.05)) + 1
    # per-axis sample variances against sigma^2: chi-square bounds, n degrees of freedom
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], n) / n
    for x, s in ((att, SIG_ATT), (pos, SIG_POS)):
        assert np.all(np.abs(x.mean(axis=0)) < 4 * s / np.sqrt(n))
        assert np.all((lo <= (x**2).mean(axis=0) / s**2) & ((x**2).mean(axis=0) / s**2 <= hi))


def test_a_noise_free_sensor_and_a_true_start_give_the_true_motion():
    period, T = 0.01, 1.5
    truth = _truth(T, period)
    sensor = TargetPoseSensor(np.random.default_rng(1), np.random.default_rng(2), rate=10.0,
                              attitude_noise=0.0, position_noise=0.0, latency=0.1)  # fmt: skip
    f = TargetNavigationFilter(TARGET, POSE0, TWIST0, P0R, P0T, attitude_sigma=0.0,
                               position_sigma=0.0)  # fmt: skip
    P, X, _ = estimate_motion(f, sensor, truth.q, period)
    assert np.abs(P - truth.q).max() < 1e-12
    assert np.abs(X - truth.v).max() < 1e-12


def _nees_runs(N, seed, target_model=TARGET, T=4.0, period=0.05):
    truth = _truth(T, period)
    rot, tr = [], []
    for i in range(N):
        rng = np.random.default_rng(seed + i)
        sensor = TargetPoseSensor(
            rng, np.random.default_rng(seed + 10_000 + i), rate=10.0, latency=0.1,
            attitude_noise=SIG_ATT, position_noise=SIG_POS,
        )  # fmt: skip
        a = rng.multivariate_normal(np.zeros(6), P0R)
        b = rng.multivariate_normal(np.zeros(6), P0T)
        est = initial_estimate(TARGET, truth.q[0], truth.v[0], a, b)
        f = _filter(*est, P0R, P0T, target=target_model, angular_accel_psd=1e-14, accel_psd=1e-14)
        _, _, filters = estimate_motion(f, sensor, truth.q, period)
        r, t = filters[-1].nees(truth.q[-1], truth.v[-1])
        rot.append(r)
        tr.append(t)
    return np.mean(rot), np.mean(tr)


def test_the_filter_is_consistent_nees_within_chi_square_bounds():
    N = 50
    rot, tr = _nees_runs(N, 7000)
    lo, hi = stats.chi2.ppf([0.005, 0.995], 6 * N) / N
    assert lo <= rot <= hi, rot
    assert lo <= tr <= hi, tr
    # a filter whose model is wrong (Ixx 30 % off) is caught
    wrong = Target(TARGET.mass, TARGET.com, TARGET.inertia + np.diag([0.3 * J[0, 0], 0.0, 0.0]))
    rot_w, _ = _nees_runs(10, 7000, target_model=wrong)
    assert rot_w > 2 * hi, rot_w


@pytest.mark.parametrize(
    "kw, named",
    [
        (dict(attitude_sigma=-1.0), "attitude_sigma"),
        (dict(accel_psd=np.nan), "accel_psd"),
        (dict(P0_rotation=-np.eye(6)), "P0_rotation"),
        (dict(P0_translation=np.eye(5)), "P0_translation"),
    ],
)
def test_bad_filter_inputs_are_named(kw, named):
    args = dict(P0_rotation=P0R, P0_translation=P0T, attitude_sigma=SIG_ATT, position_sigma=SIG_POS)
    args.update(kw)
    with pytest.raises(ValueError, match=named):
        TargetNavigationFilter(TARGET, POSE0, TWIST0, **args)


def test_a_latency_between_ticks_is_refused():
    sensor = TargetPoseSensor(np.random.default_rng(1), np.random.default_rng(2), latency=0.015)
    f = _filter(POSE0, TWIST0, P0R, P0T)
    with pytest.raises(ValueError, match="latency"):
        estimate_motion(f, sensor, _truth(0.1, 0.01).q, 0.01)
