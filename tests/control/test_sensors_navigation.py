"""Sensors and navigation against statistical and second-computation references: Allan
deviation slopes of the gyro, the floor 0.664 B of its bias instability, star-tracker and
encoder statistics and latency, the MEKF's and the translation filter's consistency (NEES/NIS
chi-square bounds), the translation filter without process noise against batch least
squares."""

import math

import numpy as np
import pytest
from scipy import stats

from dqspace.control.navigation import AttitudeMEKF, TranslationKF
from dqspace.control.sensors import (
    ALLAN_FLICKER_FLOOR,
    ARCSEC,
    Gyro,
    JointEncoders,
    RelativeNavigation,
    StarTracker,
    arw_from_deg_per_root_hour,
)
from dqspace.dq import quat_conj, quat_exp, quat_mul


def _allan(rates, dt, ms):
    """Overlapping Allan deviation of a rate series at tau = m dt."""
    theta = np.r_[0.0, np.cumsum(rates) * dt]
    out = []
    for m in ms:
        d = theta[2 * m :] - 2 * theta[m:-m] + theta[: -2 * m]
        out.append(math.sqrt(np.mean(d * d) / (2 * (m * dt) ** 2)))
    return np.array(out)


def _gyro_series(gyro, n):
    w = np.zeros(3)
    return np.array([gyro.measure(k * gyro.period, w)[0] for k in range(n)])


def test_angle_random_walk_has_slope_minus_half_and_its_value_at_one_second():
    arw = 1e-3  # [rad/sqrt(s)]
    g = Gyro(np.random.default_rng(1), rate=100.0, arw=arw, rrw=0.0)
    x = _gyro_series(g, 60_000)
    ms = np.array([1, 2, 4, 8, 16, 32, 64, 100])
    ad = _allan(x, 0.01, ms)
    slope = np.polyfit(np.log(ms * 0.01), np.log(ad), 1)[0]
    assert slope == pytest.approx(-0.5, abs=0.05)
    assert ad[-1] == pytest.approx(arw / math.sqrt(1.0), rel=0.1)  # tau = 1 s


def test_rate_random_walk_has_slope_plus_half():
    rrw = 1e-4  # [rad/s/sqrt(s)]
    g = Gyro(np.random.default_rng(2), rate=100.0, arw=0.0, rrw=rrw)
    x = _gyro_series(g, 100_000)
    ms = np.array([100, 200, 400, 800, 1600])  # tau 1 .. 16 s of 1000 s
    ad = _allan(x, 0.01, ms)
    slope = np.polyfit(np.log(ms * 0.01), np.log(ad), 1)[0]
    assert slope == pytest.approx(0.5, abs=0.1)
    assert ad[0] == pytest.approx(rrw * math.sqrt(1.0 / 3.0), rel=0.35)


def test_the_bias_instability_alone_is_flat_at_0664_b_over_its_band():
    B = 1e-5  # [rad/s] 2 deg/h
    assert ALLAN_FLICKER_FLOOR == pytest.approx(0.6643, abs=1e-4)  # IEEE 952 Annex C
    g = Gyro(
        np.random.default_rng(5),
        rate=1.0,
        arw=0.0,
        rrw=0.0,
        bias_instability=B,
        bias_instability_band=(10.0, 300.0),
    )
    x = _gyro_series(g, 60_000)
    ms = np.array([10, 20, 50, 100, 200, 300])  # tau [s] of 60000 s
    ad = _allan(x, 1.0, ms)
    np.testing.assert_allclose(ad / (0.6643 * B), 1.0, atol=0.1)
    slope = np.polyfit(np.log(ms), np.log(ad), 1)[0]
    assert abs(slope) < 0.05


def test_with_white_noise_and_rate_random_walk_the_allan_minimum_is_near_0664_b():
    B, arw, rrw = 1e-5, 5e-6, 3e-7  # [rad/s], [rad/sqrt(s)], [rad/s/sqrt(s)]
    g = Gyro(
        np.random.default_rng(6),
        rate=1.0,
        arw=arw,
        rrw=rrw,
        bias_instability=B,
        bias_instability_band=(10.0, 1000.0),
    )
    w = np.zeros(3)
    x = np.array([g.measure(float(k), w) for k in range(100_000)])
    ms = np.unique(np.logspace(0, np.log10(2000), 20).astype(int))  # tau 1 .. 2000 s
    # the three axes' Allan variances averaged: three records' worth of statistics
    ad = np.sqrt(np.mean([_allan(x[:, i], 1.0, ms) ** 2 for i in range(3)], axis=0))
    k = int(np.argmin(ad))
    # the floor 0.664 B plus what the white noise and the random walk add at its bottom
    # (some 4 % near tau = 100 s for these figures)
    assert 10 <= ms[k] <= 1000
    assert ad[k] == pytest.approx(0.6643 * B, rel=0.1)
    assert ad[0] > 1.15 * ad[k] and ad[-1] > 1.3 * ad[k]  # the white noise, the random walk


def test_the_default_gyro_draws_what_it_always_drew():
    rng, ref = np.random.default_rng(7), np.random.default_rng(7)
    arw, rrw, dt = 1e-3, 1e-4, 0.01
    g = Gyro(rng, rate=1.0 / dt, arw=arw, rrw=rrw)  # no bias instability: no extra draws
    b = np.zeros(3)
    for k in range(5):
        expected = b + arw / math.sqrt(dt) * ref.standard_normal(3)
        b = b + rrw * math.sqrt(dt) * ref.standard_normal(3)
        np.testing.assert_array_equal(g.measure(k * dt, np.zeros(3)), expected)
    np.testing.assert_array_equal(g.flicker, 0.0)


def test_star_tracker_error_statistics_bias_and_latency():
    rng = np.random.default_rng(3)
    noise, bias = np.array([5.0, 5.0, 40.0]), np.array([2.0, -3.0, 10.0])
    st = StarTracker(rng, rate=10.0, noise_arcsec=noise, bias_arcsec=bias)
    q = quat_exp([0.1, -0.2, 0.3])
    errs = []
    for k in range(4000):
        m = st.measure(0.1 * k, q)
        e = quat_mul(quat_conj(q), m)
        errs.append(2.0 * e[1:] / ARCSEC)
    errs = np.array(errs)
    n = len(errs)
    assert np.all(np.abs(errs.mean(0) - bias) < 4 * noise / math.sqrt(n))
    assert np.allclose(errs.std(0), noise, rtol=0.05)
    # latency: what is delivered at t was taken at t - latency
    st = StarTracker(np.random.default_rng(4), rate=10.0, noise_arcsec=0.0, latency=0.3)
    truth = [quat_exp([0.01 * k, 0.0, 0.0]) for k in range(20)]
    got = [st.measure(0.1 * k, truth[k]) for k in range(20)]
    assert got[2] is None and np.allclose(got[3], truth[0]) and np.allclose(got[12], truth[9])


def test_encoders_quantise_within_half_a_step():
    enc = JointEncoders(np.random.default_rng(5), quantum=1e-3)
    q = np.random.default_rng(6).uniform(-3, 3, 10_000)
    err = enc.measure(q) - q
    assert np.all(np.abs(err) <= 0.5e-3 + 1e-15)
    assert stats.kstest((err + 0.5e-3) / 1e-3, "uniform").pvalue > 1e-3


def test_the_attitude_mekf_is_consistent_nees_and_nis_within_chi_square_bounds():
    N, T, dt = 15, 30.0, 0.01
    arw, rrw = 2e-4, 2e-6
    st_sigma = np.array([5.0, 5.0, 40.0]) * ARCSEC
    w = np.array([0.01, -0.02, 0.015])
    nees, nis = [], []
    for run in range(N):
        rng = np.random.default_rng(100 + run)
        b0 = rng.normal(0, 5e-4, 3)
        g = Gyro(rng, rate=1 / dt, arw=arw, rrw=rrw, initial_bias=b0)
        st = StarTracker(rng, rate=10.0, noise_arcsec=st_sigma / ARCSEC)
        q0 = quat_exp(rng.normal(0, 1, 3))
        P0 = np.diag([1e-4] * 3 + [(5e-4) ** 2] * 3)
        e0 = rng.multivariate_normal(np.zeros(6), P0)
        f = AttitudeMEKF(
            quat_mul(q0, quat_exp(-0.5 * e0[:3])),
            b0 - e0[3:],
            P0,
            arw=arw,
            rrw=rrw,
            star_tracker_sigma=st_sigma,
        )
        st.measure(0.0, q0)
        steps = int(round(T / dt))
        for k in range(steps):
            t = k * dt
            f.propagate(g.measure(t, w), dt)
            if (k + 1) % 10 == 0:
                q_next = quat_mul(q0, quat_exp(0.5 * w * (t + dt)))
                f.update(st.measure(t + dt, q_next))
                nis.append(f.nis)
        q_end = quat_mul(q0, quat_exp(0.5 * w * T))
        nees.append(f.nees(q_end, g.bias))
    lo, hi = stats.chi2.ppf([0.005, 0.995], 6 * N) / N
    assert lo <= np.mean(nees) <= hi, np.mean(nees)
    M = len(nis)
    lo, hi = stats.chi2.ppf([0.005, 0.995], 3 * M) / M
    assert lo <= np.mean(nis) <= hi, np.mean(nis)


def test_the_translation_filter_without_process_noise_is_batch_least_squares():
    rng = np.random.default_rng(7)
    r0, v0 = np.array([0.1, -0.2, 0.05]), np.array([1e-3, 2e-3, -1e-3])
    sensor = RelativeNavigation(rng, rate=10.0, position_noise=1e-3)
    kf = TranslationKF(np.zeros(6), 1e8 * np.eye(6), accel_psd=0.0, position_sigma=1e-3)
    times, zs = [], []
    for k in range(200):
        t = 0.1 * k
        if k:
            kf.predict(np.zeros(3), 0.1)
        z, _ = sensor.measure(t, r0 + v0 * t, v0)
        kf.update(z)
        times.append(t)
        zs.append(z)
    A = np.column_stack([np.ones(len(times)), times])
    coef, *_ = np.linalg.lstsq(A, np.array(zs), rcond=None)
    r_end = coef[0] + coef[1] * times[-1]
    np.testing.assert_allclose(kf.x[:3], r_end, atol=1e-9)
    np.testing.assert_allclose(kf.x[3:], coef[1], atol=1e-9)


def test_bad_arguments_are_refused():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="rate"):
        Gyro(rng, rate=0.0)
    with pytest.raises(ValueError, match="Generator"):
        StarTracker(np.random.RandomState(0))
    with pytest.raises(ValueError, match="bias_instability_band"):
        Gyro(rng, bias_instability=1e-5, bias_instability_band=(100.0, 10.0))
    with pytest.raises(ValueError, match="bias_instability"):
        Gyro(rng, bias_instability=-1.0)
    with pytest.raises(ValueError, match="positive definite"):
        AttitudeMEKF(
            [1, 0, 0, 0], np.zeros(3), -np.eye(6), arw=1.0, rrw=1.0, star_tracker_sigma=1e-5
        )
    assert arw_from_deg_per_root_hour(60.0) == pytest.approx(math.radians(1.0))
