"""On/off firing (PWM): impulse within one minimum impulse bit, Schmitt-trigger hysteresis,
pulse timing, bad input."""

import numpy as np
import pytest

from dqspace.actuators.pwm import PulseModulator, SchmittTrigger
from dqspace.actuators.thrusters import Thruster, ThrusterFault, ThrusterSet, paper_thruster_set

PERIOD = 0.1  # [s]


def mixed_set():
    """Thrusters with different strengths and minimum impulse bits (one without)."""
    spec = [(10.0, 0.1), (4.0, 0.02), (1.0, 0.0), (22.0, 0.5)]
    return ThrusterSet(
        [
            Thruster([0.1 * i, 0, 0], [0, 0, 1.0], sigma_max=s, min_impulse_bit=mib)
            for i, (s, mib) in enumerate(spec)
        ]
    )


def random_commands(rng, ts, n):
    """Commands spread over the whole range, many below one impulse bit."""
    full = rng.uniform(0, 1, (n, ts.n)) * ts.sigma_max
    small = rng.uniform(0, 1.5, (n, ts.n)) * ts.min_impulse_bit / PERIOD
    pick = rng.random((n, ts.n)) < 0.5
    out = np.where(pick, full, small)
    out[::7] = 0.0
    return out


@pytest.mark.parametrize("schmitt", [None, SchmittTrigger(), SchmittTrigger(1.0, 0.0)])
def test_delivered_impulse_within_one_minimum_impulse_bit(rng, schmitt):
    ts = mixed_set()
    pwm = PulseModulator(ts, PERIOD, schmitt=schmitt)
    mib = ts.min_impulse_bit
    state = pwm.initial_state()
    n_quantized = 0
    for sigma in random_commands(rng, ts, 400):
        p = pwm.modulate(sigma, state)
        state = p.firing
        commanded = sigma * PERIOD
        np.testing.assert_allclose(p.commanded_impulse, commanded, rtol=1e-15)
        assert np.all(np.abs(p.impulse - commanded) <= mib + 1e-15)
        np.testing.assert_allclose(p.error, p.impulse - commanded, atol=1e-16)
        # exact where the command is at least one bit (or there is no minimum bit)
        exact = commanded >= mib
        np.testing.assert_allclose(p.impulse[exact], commanded[exact], rtol=1e-14, atol=1e-16)
        # every pulse is 0 or at least the minimum on-time, and fits in the period
        t_min = mib / ts.sigma_max
        assert np.all((p.on_time == 0) | (p.on_time >= t_min * (1 - 1e-14)))
        assert np.all((p.on_time >= 0) & (p.on_time <= PERIOD))
        np.testing.assert_allclose(p.impulse, ts.sigma_max * p.on_time, rtol=1e-15)
        np.testing.assert_array_equal(p.firing, p.on_time > 0)
        n_quantized += int(np.sum(~exact & (commanded > 0)))
    assert n_quantized > 200  # the quantized branch was exercised


def test_plain_pwm_rounds_to_the_nearest_bit():
    ts = mixed_set()
    pwm = PulseModulator(ts, PERIOD)
    frac = np.array([0.49, 0.5, 0.2, 0.99])  # of each thruster's minimum impulse bit
    sigma = frac * np.where(ts.min_impulse_bit > 0, ts.min_impulse_bit, 0.01) / PERIOD
    p = pwm.modulate(sigma)
    np.testing.assert_allclose(p.impulse, [0.0, 0.02, sigma[2] * PERIOD, 0.5], rtol=1e-14)
    assert np.all(np.abs(p.error) <= 0.5 * ts.min_impulse_bit + 1e-16)


def test_schmitt_trigger_hysteresis_table():
    """A command hovering below one bit: on at >= 0.75 bit, off below 0.25 bit."""
    ts = paper_thruster_set(min_impulse_bit=0.1)  # 10 N: one bit = 1 N mean over 0.1 s
    frac = [0.5, 0.8, 0.5, 0.3, 0.2, 0.5, 0.74, 0.75, 1.0, 0.0, 0.3]
    fires = [0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0]  # from the definition
    plain = [1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0]  # rounding at half a bit
    schmitt = PulseModulator(ts, PERIOD, schmitt=SchmittTrigger(0.75, 0.25))
    rounding = PulseModulator(ts, PERIOD)
    state = schmitt.initial_state()
    for f, want, want_plain in zip(frac, fires, plain, strict=True):
        sigma = np.full(12, f * 0.1 / PERIOD)
        p = schmitt.modulate(sigma, state)
        state = p.firing
        np.testing.assert_array_equal(p.firing, bool(want))
        np.testing.assert_allclose(p.impulse, want * 0.1 if f < 1 else 0.1, rtol=1e-15)
        np.testing.assert_allclose(p.on_time, p.impulse / 10.0, rtol=1e-15)
        np.testing.assert_array_equal(rounding.modulate(sigma).firing, bool(want_plain))


def test_thrust_profile_integrates_to_the_impulse(rng):
    ts = mixed_set()
    pwm = PulseModulator(ts, PERIOD)
    p = pwm.modulate(rng.uniform(0, 1, ts.n) * ts.sigma_max)
    t = np.linspace(0, PERIOD, 200001)
    F = np.array([p.thrust(tk) for tk in t])
    assert set(np.unique(F / ts.sigma_max)) <= {0.0, 1.0}  # on/off only
    dt = t[1] - t[0]
    integral = F[:-1].sum(axis=0) * dt  # left Riemann sum of a step: error <= sigma_max dt
    assert np.all(np.abs(integral - p.impulse) <= ts.sigma_max * dt * 1.0001)
    np.testing.assert_allclose(p.mean_thrust, p.impulse / PERIOD, rtol=1e-15)
    # leading-edge pulses: on from t = 0 until on_time
    np.testing.assert_array_equal(p.thrust(0.0) > 0, p.on_time > 0)


def test_pulses_feed_the_thruster_model_with_faults():
    """The modulator decides firing; the thruster model (faults included) gives the wrench."""
    ts = paper_thruster_set().with_faults({0: ThrusterFault.failed_off()})
    pwm = PulseModulator(ts, PERIOD)
    sigma = np.zeros(12)
    sigma[[0, 6]] = 5.0
    p = pwm.modulate(sigma)
    np.testing.assert_allclose(p.on_time[[0, 6]], 0.05, rtol=1e-15)
    w_on = ts.wrench(p.thrust(0.01))
    np.testing.assert_allclose(w_on, 10.0 * ts.H[:, 6], atol=1e-14)  # thruster 0 is dead
    np.testing.assert_allclose(ts.wrench(p.thrust(0.06)), 0.0, atol=1e-15)


# -- bad input -------------------------------------------------------------------------------
def test_non_positive_period_is_rejected():
    with pytest.raises(ValueError, match=r"period must be > 0 s, got 0\.0"):
        PulseModulator(mixed_set(), 0.0)


def test_minimum_impulse_bit_longer_than_the_period_is_rejected():
    with pytest.raises(ValueError, match=r"thruster 3 .*min_impulse_bit = 0\.5 N s exceeds"):
        PulseModulator(mixed_set(), 0.02)


def test_bad_schmitt_thresholds_are_rejected():
    with pytest.raises(
        ValueError, match=r"0 <= off_fraction <= on_fraction <= 1.*on_fraction = 0\.2"
    ):
        SchmittTrigger(on_fraction=0.2, off_fraction=0.4)
    with pytest.raises(ValueError, match=r"on_fraction = 1\.5"):
        SchmittTrigger(on_fraction=1.5)


def test_non_schmitt_trigger_object_is_rejected():
    with pytest.raises(ValueError, match="schmitt must be a SchmittTrigger or None"):
        PulseModulator(mixed_set(), PERIOD, schmitt=(0.75, 0.25))


def test_non_thruster_set_is_rejected():
    with pytest.raises(ValueError, match="thrusters must be a ThrusterSet"):
        PulseModulator([1, 2], PERIOD)


def test_nan_command_is_rejected():
    with pytest.raises(ValueError, match=r"sigma must be finite"):
        PulseModulator(mixed_set(), PERIOD).modulate([1.0, np.nan, 0.0, 0.0])


def test_wrong_shape_command_is_rejected():
    with pytest.raises(ValueError, match=r"sigma must have shape \(4,\), got \(3,\)"):
        PulseModulator(mixed_set(), PERIOD).modulate([1.0, 0.0, 0.0])


def test_command_above_sigma_max_is_rejected():
    with pytest.raises(
        ValueError, match=r"sigma\[1\] .* = 4\.5 N is outside \[0, sigma_max = 4\.0\]"
    ):
        PulseModulator(mixed_set(), PERIOD).modulate([1.0, 4.5, 0.0, 0.0])


def test_negative_command_is_rejected():
    with pytest.raises(ValueError, match=r"sigma\[0\] .* = -1\.0 N is outside"):
        PulseModulator(mixed_set(), PERIOD).modulate([-1.0, 0.0, 0.0, 0.0])


def test_bad_firing_state_is_rejected():
    with pytest.raises(ValueError, match=r"firing must be a \(4,\) bool array"):
        PulseModulator(mixed_set(), PERIOD).modulate(np.zeros(4), np.zeros(4))


def test_time_outside_the_period_is_rejected():
    p = PulseModulator(mixed_set(), PERIOD).modulate(np.zeros(4))
    with pytest.raises(ValueError, match=r"t must be in \[0, period = 0\.1\] s, got 0\.2"):
        p.thrust(0.2)


# ---- pulse widths on a clock, and error feedback


def test_quantized_pulses_are_whole_multiples_and_respect_the_minimum_on_time(rng):
    ts = paper_thruster_set(min_impulse_bit=0.015)  # 1.5 ms at 10 N: rounds up to 2 ms
    q = 1e-3
    pwm = PulseModulator(ts, 0.01, quantum=q)
    for _ in range(300):
        sigma = rng.uniform(0.0, 10.0, ts.n) * (rng.random(ts.n) < 0.7)
        tr = pwm.modulate(sigma)
        k = tr.on_time / q
        assert np.allclose(k, np.rint(k), atol=1e-9)
        assert np.all((tr.on_time == 0.0) | (tr.on_time >= 2e-3 - 1e-12))
        # one quantum of impulse (sigma_max q) or one bit, whichever is larger
        assert np.all(np.abs(tr.error) <= max(0.015, 10.0 * q) + 1e-12)


def test_error_feedback_keeps_the_accumulated_impulse_error_bounded(rng):
    ts = paper_thruster_set(min_impulse_bit=0.01)
    T, q = 0.01, 1e-3
    plain = PulseModulator(ts, T, quantum=q)
    fed = PulseModulator(ts, T, quantum=q, error_feedback=True)
    sigma = np.full(ts.n, 0.37)  # 3.7 ms per period: every period rounds to 4 ms
    sigma[:6] = rng.uniform(0.0, 2.0, 6)
    cum_plain = np.zeros(ts.n)
    cum_fed = np.zeros(ts.n)
    carry = None
    for _ in range(1000):
        a = plain.modulate(sigma)
        b = fed.modulate(sigma, carry=carry)
        carry = b.carry
        cum_plain += a.impulse - sigma * T
        cum_fed += b.impulse - sigma * T
        assert np.all(np.abs(cum_fed) <= 0.01 + 1e-9)  # one impulse quantum, for ever
        assert np.all(np.abs(b.impulse - sigma * T) <= 2 * 0.01 + 1e-9)
    assert np.abs(cum_plain[6:]).max() > 2.9  # 1000 x 3 mN s without feedback


def test_quantum_must_divide_the_period():
    ts = paper_thruster_set()
    with pytest.raises(ValueError, match="whole number of quantum"):
        PulseModulator(ts, 0.01, quantum=0.003)
    with pytest.raises(ValueError, match=r"quantum must be in \[0, period"):
        PulseModulator(ts, 0.01, quantum=-1.0)
