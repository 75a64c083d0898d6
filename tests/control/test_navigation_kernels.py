"""The sensor and filter kernels against independent references: the draws NumPy makes for
the same seed (bit for bit), a queue model of the sampling schedule and latency buffer, the
textbook Kalman update with an explicit inverse; and the kernels called from compiled code
give what the classes give."""

import math
from collections import deque

import numpy as np
from numba import njit

from dqspace.control.navigation import AttitudeMEKF, TranslationKF
from dqspace.control.sensors import (
    ARCSEC,
    Gyro,
    RelativeNavigation,
    StarTracker,
    Tachometer,
    gyro_kernel,
)
from dqspace.dq import quat_exp, quat_mul


def test_star_tracker_relnav_and_tachometer_draw_what_numpy_draws():
    ref = np.random.default_rng(21)
    noise, bias = np.array([5.0, 6.0, 40.0]), np.array([1.0, -2.0, 3.0])
    st = StarTracker(np.random.default_rng(21), rate=10.0, noise_arcsec=noise, bias_arcsec=bias)
    q = quat_exp([0.3, -0.1, 0.2])
    for k in range(5):
        # the same draws; the quaternion exponential and product of the kernel and of the
        # reference are two implementations (they may differ in the last bit on some CPUs,
        # a wrong draw by ~1e-5)
        e = bias * ARCSEC + noise * ARCSEC * ref.standard_normal(3)
        np.testing.assert_allclose(
            st.measure(0.1 * k, q), quat_mul(q, quat_exp(0.5 * e)), rtol=0, atol=4e-16
        )
    ref = np.random.default_rng(22)
    rn = RelativeNavigation(np.random.default_rng(22), rate=5.0, position_noise=2e-3,
                            velocity_noise=3e-3)  # fmt: skip
    r, v = np.array([1.0, -2.0, 0.5]), np.array([0.01, 0.0, -0.02])
    for k in range(5):
        z_r, z_v = rn.measure(0.2 * k, r, v)
        np.testing.assert_array_equal(z_r, r + 2e-3 * ref.standard_normal(3))
        np.testing.assert_array_equal(z_v, v + 3e-3 * ref.standard_normal(3))
    ref = np.random.default_rng(23)
    tach = Tachometer(np.random.default_rng(23), noise=0.1, quantum=1e-3)
    w = np.linspace(-300.0, 300.0, 7)
    for _ in range(3):
        np.testing.assert_array_equal(
            tach.measure(w), 1e-3 * np.round((w + 0.1 * ref.standard_normal(7)) / 1e-3)
        )


def test_the_latency_buffer_delivers_as_a_queue_model_at_irregular_calls():
    """Many samples in flight (latency 0.93 s at 10 Hz), calls at irregular times, some
    taking several samples at once: every return equals a deque model's."""
    rate, latency, pn, vn = 10.0, 0.93, 1e-3, 2e-3
    sensor = RelativeNavigation(np.random.default_rng(5), rate=rate, position_noise=pn,
                                velocity_noise=vn, latency=latency)  # fmt: skip
    ref, queue, k, last = np.random.default_rng(5), deque(), 0, None
    times = np.cumsum(np.random.default_rng(6).uniform(0.0, 0.37, 200))
    delivered = 0
    for t in times:
        r, v = np.array([t, -t, 2 * t]), np.array([1.0, -1.0, 2.0])
        while k / rate <= t + 1e-12:  # the model: take every sample due, then deliver
            queue.append((k / rate + latency, r + pn * ref.standard_normal(3),
                          v + vn * ref.standard_normal(3)))  # fmt: skip
            k += 1
        while queue and queue[0][0] <= t + 1e-12:
            last = queue.popleft()[1:]
            delivered += 1
        got = sensor.measure(t, r, v)
        if last is None:
            assert got is None
        else:
            np.testing.assert_array_equal(got[0], last[0])
            np.testing.assert_array_equal(got[1], last[1])
    assert delivered > 100 and len(queue) >= 5  # the buffer was exercised


def _textbook_update(x, P, z, R):
    """x, P after a measurement of the first len(z) states, K by an explicit inverse."""
    m = len(z)
    H = np.eye(len(x))[:m]
    S = H @ P @ H.T + R
    K = P @ H.T @ np.linalg.inv(S)
    A = np.eye(len(x)) - K @ H
    y = z - H @ x
    return x + K @ y, A @ P @ A.T + K @ R @ K.T, float(y @ np.linalg.inv(S) @ y)


def test_the_kalman_updates_equal_the_textbook_form():
    rng = np.random.default_rng(8)
    for m in (3, 6):
        G = rng.normal(size=(6, 6))
        P0 = G @ G.T * 1e-4 + 1e-6 * np.eye(6)
        x0 = rng.normal(size=6)
        kf = TranslationKF(x0, P0, accel_psd=1e-3, position_sigma=2e-3, velocity_sigma=3e-3)
        z = x0[:m] + 1e-2 * rng.normal(size=m)
        kf.update(z[:3], z[3:] if m == 6 else None)
        R = np.diag([4e-6] * 3 + [9e-6] * 3)[:m, :m]
        x, P, nis = _textbook_update(x0, P0, z, R)
        np.testing.assert_allclose(kf.x, x, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(kf.P, P, rtol=1e-9, atol=1e-15 * np.abs(P0).max())
        assert math.isclose(kf.nis, nis, rel_tol=1e-10)
    # the MEKF: the attitude correction folded in multiplicatively, the bias added
    q0 = quat_exp([0.1, 0.2, -0.3])
    G = rng.normal(size=(6, 6))
    P0 = G @ G.T * 1e-8 + 1e-10 * np.eye(6)
    sigma = np.array([1e-4, 2e-4, 5e-4])
    f = AttitudeMEKF(q0, [1e-4, 0.0, -1e-4], P0, arw=1e-4, rrw=1e-6, star_tracker_sigma=sigma)
    dz = np.array([2e-4, -1e-4, 3e-4])
    f.update(quat_mul(q0, quat_exp(0.5 * dz)))
    z = 2.0 * quat_mul(np.r_[q0[0], -q0[1:]], quat_mul(q0, quat_exp(0.5 * dz)))[1:]
    dx, P, nis = _textbook_update(np.zeros(6), P0, z, np.diag(sigma**2))
    q = quat_mul(q0, quat_exp(0.5 * dx[:3]))
    np.testing.assert_allclose(f.q, q / np.linalg.norm(q), rtol=0, atol=1e-15)
    b = np.array([1e-4, 0.0, -1e-4]) + dx[3:]  # the correction to 1e-9 of its size
    np.testing.assert_allclose(f.bias, b, rtol=0, atol=1e-9 * np.abs(dx[3:]).max())
    np.testing.assert_allclose(f.P, P, rtol=1e-9, atol=1e-12 * np.abs(P0).max())
    assert math.isclose(f.nis, nis, rel_tol=1e-10)


@njit
def _gyro_series(params, state, rng, dt, w, out):
    """The gyro kernel called from compiled code, once per step."""
    for k in range(out.shape[0]):
        gyro_kernel(params, state, rng, k * dt, w)
        out[k] = state.schedule.last


def test_the_gyro_kernel_called_from_compiled_code_gives_what_the_class_gives():
    kw = dict(
        rate=50.0,
        arw=1e-3,
        rrw=1e-4,
        initial_bias=(1e-3, 0.0, -1e-3),
        scale_factor_ppm=200.0,
        bias_instability=1e-4,
        bias_instability_band=(0.5, 50.0),
    )
    a, b = Gyro(np.random.default_rng(9), **kw), Gyro(np.random.default_rng(9), **kw)
    w = np.array([0.01, -0.02, 0.03])
    out = np.empty((300, 3))
    _gyro_series(a.params, a.state, a.rng, 0.02, w, out)
    expected = np.array([b.measure(k * 0.02, w) for k in range(300)])
    assert a.correlation_times.size > 3  # the bias-instability bank draws too
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(a.bias, b.bias)
    np.testing.assert_array_equal(a.flicker, b.flicker)
    # the generator advanced as the class's did
    assert a.rng.standard_normal() == b.rng.standard_normal()
