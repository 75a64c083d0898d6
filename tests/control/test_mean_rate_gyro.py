"""The rate-integrating gyro against analytic attitudes: a constant-rate spin reads its rate,
a sinusoidal rate about a fixed axis reads its mean over each interval (to rounding); its
errors are the rate gyro's (the same draws); its kernel from compiled code gives what the
class gives; and the attitude filter fed with it, propagating over the interval the sample
covers before the star-tracker update, is consistent under rate ripple, where the rate gyro
held over the period and the mean rate a period late are not."""

import math

import numpy as np
import pytest
from numba import njit
from scipy import stats

from dqspace.control.navigation import AttitudeMEKF
from dqspace.control.sensors import (
    ARCSEC,
    Gyro,
    RateIntegratingGyro,
    StarTracker,
    mean_rate,
    mean_rate_gyro_kernel,
)
from dqspace.dq import quat_exp, quat_mul

DT = 0.01
Q0 = quat_exp([0.3, -0.2, 0.5])
AXIS = np.array([2.0, -1.0, 2.0]) / 3.0


def _spin(angle):
    """q_IB after turning by ``angle`` [rad] about the body axis AXIS from Q0."""
    return quat_mul(Q0, quat_exp(0.5 * angle * AXIS))


def _quiet(**kw):
    return dict(rate=1.0 / DT, arw=0.0, rrw=0.0, **kw)


def test_a_constant_rate_spin_reads_its_rate_from_the_first_sample():
    w = np.array([0.4, -1.1, 0.7])  # [rad/s], 0.7 deg per sample
    q = [quat_mul(Q0, quat_exp(0.5 * w * k * DT)) for k in range(-1, 200)]
    g = RateIntegratingGyro(np.random.default_rng(0), previous_attitude=q[0], **_quiet())
    got = np.array([g.measure(k * DT, q[k + 1]) for k in range(200)])
    np.testing.assert_allclose(got, np.broadcast_to(w, got.shape), rtol=0, atol=1e-12)
    # a fast spin too: 2.9 rad per sample, near the half-turn the short way allows
    w = np.array([0.0, 290.0, 0.0])
    out = np.empty(3)
    mean_rate(Q0, quat_mul(Q0, quat_exp(0.5 * w * DT)), DT, out)
    np.testing.assert_allclose(out, w, rtol=1e-13, atol=1e-11)


def test_a_sinusoidal_rate_about_a_fixed_axis_reads_its_mean_over_each_interval():
    a, omega = 0.8, 2.0 * math.pi * 13.0  # [rad/s], [rad/s]: 13 Hz, 7.7 samples a period

    def angle(t):  # the integral of w(t) = a sin(omega t) about AXIS
        return a * (1.0 - math.cos(omega * t)) / omega

    g = RateIntegratingGyro(np.random.default_rng(0), previous_attitude=_spin(angle(-DT)),
                            **_quiet())  # fmt: skip
    for k in range(300):
        t = k * DT
        got = g.measure(t, _spin(angle(t)))
        mean = (angle(t) - angle(t - DT)) / DT  # the mean of the rate over [t - DT, t]
        np.testing.assert_allclose(got, mean * AXIS, rtol=0, atol=1e-12)
        # and not the rate at the sample (they differ by up to 0.3 rad/s here)
    assert abs(a * math.sin(omega * t) - mean) > 1e-2


def test_its_errors_are_the_rate_gyros_the_same_draws():
    kw = dict(rate=1.0 / DT, arw=1e-3, rrw=1e-4, initial_bias=(1e-3, 0.0, -2e-3),
              scale_factor_ppm=300.0, bias_instability=1e-4,
              bias_instability_band=(0.1, 10.0))  # fmt: skip
    w = np.array([0.05, -0.02, 0.03])
    a = RateIntegratingGyro(np.random.default_rng(4), previous_attitude=Q0, **kw)
    b = Gyro(np.random.default_rng(4), **kw)
    for k in range(200):
        q = quat_mul(Q0, quat_exp(0.5 * w * (k + 1) * DT))
        # to rounding: a quaternion's last bit over the period is 2e-14 rad/s
        np.testing.assert_allclose(a.measure(k * DT, q), b.measure(k * DT, w), rtol=0, atol=1e-13)
    np.testing.assert_array_equal(a.bias, b.bias)
    np.testing.assert_array_equal(a.flicker, b.flicker)
    assert a.rng.standard_normal() == b.rng.standard_normal()
    assert a.params.mean_rate and not b.params.mean_rate


@njit
def _series(params, state, rng, dt, q, out):
    for k in range(out.shape[0]):
        mean_rate_gyro_kernel(params, state, rng, k * dt, q[k])
        out[k] = state.schedule.last


def test_the_kernel_from_compiled_code_gives_what_the_class_gives():
    kw = dict(rate=50.0, arw=1e-3, rrw=1e-4, scale_factor_ppm=200.0, bias_instability=1e-4,
              bias_instability_band=(0.5, 50.0), latency=0.05)  # fmt: skip
    q = np.array([quat_mul(Q0, quat_exp([0.01 * k, -0.02 * k, 0.005 * k * k])) for k in range(301)])
    a = RateIntegratingGyro(np.random.default_rng(9), previous_attitude=q[0], **kw)
    b = RateIntegratingGyro(np.random.default_rng(9), previous_attitude=q[0], **kw)
    out = np.empty((300, 3))
    _series(a.params, a.state, a.rng, 0.02, np.ascontiguousarray(q[1:]), out)
    expected = [b.measure(k * 0.02, q[k + 1]) for k in range(300)]
    assert expected[2] is None and expected[3] is not None  # the latency: 2.5 periods
    np.testing.assert_array_equal(out[3:], np.array(expected[3:]))
    np.testing.assert_array_equal(a.state.attitude, b.state.attitude)


def test_bad_arguments_are_refused():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="previous_attitude"):
        RateIntegratingGyro(rng, previous_attitude=[1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="previous_attitude"):
        RateIntegratingGyro(rng, previous_attitude=[2.0, 0.0, 0.0, 0.0])
    g = RateIntegratingGyro(rng, previous_attitude=Q0)
    with pytest.raises(ValueError, match="q_IB"):
        g.measure(0.0, np.zeros(3))


def _mekf_nees(order, runs=12, T=10.0):
    """Mean NEES (6 dof) at the end of ``runs`` seeded runs of the attitude filter with a
    gyro under rate ripple (``order``: "mean_rate" propagates over [t_k-1, t_k] with the
    sample at t_k; "mean_rate_late" with the sample at t_k-1; "rate_held" a rate gyro's
    sample at t_k-1 held), the star tracker at 10 Hz."""
    arw, rrw = 2e-5, 2e-7
    st_sigma = np.array([5.0, 5.0, 40.0]) * ARCSEC
    w0, a, omega = np.array([0.01, -0.02, 0.015]), 0.1, 2.0 * math.pi * 7.3

    def truth(t):  # w(t) = w0 + a sin(omega t) about w0's axis: a fixed axis
        n = w0 / np.linalg.norm(w0)
        return np.linalg.norm(w0) * t + a * (1.0 - math.cos(omega * t)) / omega, n

    nees = []
    for run in range(runs):
        rng = np.random.default_rng(300 + run)
        b0 = rng.normal(0, 1e-4, 3)
        q0 = quat_exp(rng.normal(0, 1, 3))

        def q_at(t, q0=q0):
            th, n = truth(t)
            return quat_mul(q0, quat_exp(0.5 * th * n))

        def w_at(t):
            n = w0 / np.linalg.norm(w0)
            return w0 + a * math.sin(omega * t) * n

        kw = dict(rate=1 / DT, arw=arw, rrw=rrw, initial_bias=b0)
        if order == "rate_held":
            g = Gyro(rng, **kw)
        else:
            g = RateIntegratingGyro(rng, previous_attitude=q_at(-DT), **kw)
        st = StarTracker(rng, rate=10.0, noise_arcsec=st_sigma / ARCSEC)
        P0 = np.diag([1e-8] * 3 + [1e-8] * 3)
        e0 = rng.multivariate_normal(np.zeros(6), P0)
        f = AttitudeMEKF(quat_mul(q0, quat_exp(-0.5 * e0[:3])), b0 - e0[3:], P0, arw=arw,
                         rrw=rrw, star_tracker_sigma=st_sigma)  # fmt: skip
        st.measure(0.0, q0)
        last = g.measure(0.0, w_at(0.0) if order == "rate_held" else q0)
        for k in range(1, int(round(T / DT)) + 1):
            t = k * DT
            now = g.measure(t, w_at(t) if order == "rate_held" else q_at(t))
            f.propagate(now if order == "mean_rate" else last, DT)
            last = now
            if k % 10 == 0:
                f.update(st.measure(t, q_at(t)))
        nees.append(f.nees(q_at(T), g.bias))
    return np.mean(nees), stats.chi2.ppf([0.005, 0.995], 6 * runs) / runs


def test_the_attitude_filter_propagates_over_the_interval_the_mean_rate_covers():
    """Under a 7.3 Hz rate ripple of 0.1 rad/s: the sample at t_k is the mean rate over
    [t_k-1, t_k], so the filter steps to t_k with it, then folds in the star tracker's
    sample taken at t_k (consistent); a rate sample held over the next period, or the mean
    rate used a period late, misses the ripple's rotation (optimistic)."""
    nees, (lo, hi) = _mekf_nees("mean_rate")
    assert lo <= nees <= hi, nees
    for wrong in ("rate_held", "mean_rate_late"):
        nees, (lo, hi) = _mekf_nees(wrong)
        assert nees > 3 * hi, (wrong, nees)
