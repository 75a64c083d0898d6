"""Sensor models: what the flight software would measure instead of the true state.

Every sensor samples at its own ``rate`` [Hz] (first sample at t = 0), draws its noise from the
``numpy.random.Generator`` it is given (seeded by the caller: one per sensor, so adding a sensor
does not change another's noise), and delivers each sample ``latency`` seconds after it was
taken.  ``measure(t, truth...)`` is called with the truth at (at least) every sample time; it
returns the newest sample delivered by ``t``, or None before the first one.

Default figures are dqspace's choices from typical data sheets (``docs/sensors.md``):

* :class:`StarTracker`: 5 arcsec (1 sigma) across the boresight (body x, y), 40 arcsec about it
  (z), 10 Hz;
* :class:`Gyro`: angle random walk 0.01 deg/sqrt(h), rate random walk 0.01 deg/h/sqrt(h)
  (a navigation-grade fibre-optic gyro), 100 Hz;
* :class:`RelativeNavigation`: 1 mm and 1 mm/s (1 sigma) per axis, 10 Hz;
* :class:`JointEncoders`: 20-bit (2 pi / 2^20 rad steps);
* :class:`Tachometer`: 0.1 rad/s noise.

Gyro model, per sample interval ``dt``: ``w_meas = (1 + s) w + b + g + n_v``,
``n_v ~ N(0, arw^2 / dt)``, ``b_{k+1} = b_k + N(0, rrw^2 dt)`` (angle random walk ``arw`` in
rad/sqrt(s), rate random walk ``rrw`` in rad/s/sqrt(s)); its Allan deviation is ``arw /
sqrt(tau)`` (slope -1/2) where the white noise dominates and ``rrw sqrt(tau / 3)`` (slope +1/2)
where the random walk does.

Bias instability (off by default): ``g``, the flicker (1/f) part of the bias, whose Allan
deviation is flat at ``sqrt(2 ln 2 / pi) B = 0.664 B`` (IEEE Std 952-1997, Annex C: a rate
PSD ``B^2 / (2 pi f)`` has the Allan variance ``(2 ln 2 / pi) B^2``) over a band of averaging
times ``[tau_lo, tau_hi]``.  It is synthesised as a sum of first-order Gauss-Markov processes
per axis, ``g = sum_i g_i``, with correlation times ``T_i`` spaced by ``r = sqrt(10)`` from
``tau_lo / 30`` to ``10 tau_hi`` (those shorter than ``dt`` dropped) and stationary variances
``q^2 = B^2 ln(r) / pi`` each, sampled exactly:
``g_i,k+1 = phi_i g_i,k + q sqrt(1 - phi_i^2) N(0, 1)``, ``phi_i = exp(-dt / T_i)``.  One
process has the Allan variance ``q^2 f(tau / T_i)``, ``f(x) = (2x - 3 + 4 e^-x - e^-2x) / x^2``,
and ``integral f(x) / x dx = 2 ln 2``, so a bank with ``ln r`` between neighbours sums to
``(2 ln 2 / pi) B^2`` (ripple below 1e-4 for ``r = sqrt(10)``; the bank reaching a factor 30
below and 10 above the band, the variance is at most 3 % short inside it).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import quat_exp, quat_mul

__all__ = [
    "StarTracker",
    "Gyro",
    "RelativeNavigation",
    "JointEncoders",
    "Tachometer",
    "ARCSEC",
    "arw_from_deg_per_root_hour",
    "rrw_from_deg_per_hour_root_hour",
    "bias_instability_from_deg_per_hour",
    "ALLAN_FLICKER_FLOOR",
]

#: the Allan deviation of flicker rate noise over the bias instability B:
#: ``sqrt(2 ln 2 / pi)`` = 0.6643 (IEEE Std 952-1997, Annex C)
ALLAN_FLICKER_FLOOR = math.sqrt(2.0 * math.log(2.0) / math.pi)
#: ratio of neighbouring correlation times of the Gauss-Markov bank
_GM_RATIO = math.sqrt(10.0)

#: one arcsecond [rad]
ARCSEC = math.pi / (180.0 * 3600.0)


def arw_from_deg_per_root_hour(x: float) -> float:
    """Angle random walk deg/sqrt(h) -> rad/sqrt(s)."""
    return math.radians(x) / 60.0


def rrw_from_deg_per_hour_root_hour(x: float) -> float:
    """Rate random walk deg/h/sqrt(h) -> rad/s/sqrt(s)."""
    return math.radians(x) / 3600.0 / 60.0


def bias_instability_from_deg_per_hour(x: float) -> float:
    """Bias instability deg/h -> rad/s."""
    return math.radians(x) / 3600.0


def _positive(x, name):
    x = float(x)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be positive and finite, got {x}")
    return x


def _non_negative(x, name, n=None):
    a = np.asarray(x, dtype=float)
    if n is not None:
        a = np.broadcast_to(a, (n,)).copy() if a.ndim == 0 else a
        if a.shape != (n,):
            raise ValueError(f"{name} must be a number or ({n},), got shape {a.shape}")
    if not (np.all(np.isfinite(a)) and np.all(a >= 0)):
        raise ValueError(f"{name} must be finite and >= 0, got {a}")
    return a


class _Sampled:
    """Sampling schedule and latency buffer shared by the sensors."""

    def __init__(self, rate, latency, rng):
        self.period = 1.0 / _positive(rate, "rate [Hz]")
        self.latency = float(_non_negative(latency, "latency [s]"))
        if not isinstance(rng, np.random.Generator):
            raise ValueError("rng must be a numpy.random.Generator (seeded by the caller)")
        self.rng = rng
        self._k = 0  # next sample index
        self._queue = deque()  # (delivery time, value)
        self._last = None

    def _step(self, t, sample):
        """Take the samples due by t (``sample(t_k)`` makes one), deliver those due."""
        while self._k * self.period <= t + 1e-12:
            tk = self._k * self.period
            self._queue.append((tk + self.latency, sample(tk)))
            self._k += 1
        while self._queue and self._queue[0][0] <= t + 1e-12:
            self._last = self._queue.popleft()[1]
        return self._last


class StarTracker(_Sampled):
    """Attitude ``q_IB`` measured with a small rotation error in the body frame:
    ``q_meas = q_IB o exp(1/2 (bias + n))``, ``n ~ N(0, diag(noise^2))`` [rad]."""

    def __init__(
        self,
        rng: np.random.Generator,
        *,
        rate: float = 10.0,
        noise_arcsec: ArrayLike = (5.0, 5.0, 40.0),
        bias_arcsec: ArrayLike = (0.0, 0.0, 0.0),
        latency: float = 0.0,
    ) -> None:
        super().__init__(rate, latency, rng)
        self.noise = _non_negative(noise_arcsec, "noise_arcsec", 3) * ARCSEC
        self.bias = np.asarray(bias_arcsec, dtype=float) * ARCSEC
        if self.bias.shape != (3,) or not np.all(np.isfinite(self.bias)):
            raise ValueError(f"bias_arcsec must be a finite (3,), got {bias_arcsec!r}")

    def measure(self, t: float, q_IB: ArrayLike) -> NDArray[np.float64] | None:
        q = np.asarray(q_IB, dtype=float)

        def sample(tk):
            e = self.bias + self.noise * self.rng.standard_normal(3)
            return quat_mul(q, quat_exp(0.5 * e))

        return self._step(t, sample)


class Gyro(_Sampled):
    """Body angular rate with angle random walk, a random-walk bias, an optional bias
    instability and a scale-factor error (module docstring); ``bias`` is the current
    random-walk bias [rad/s] (the bias instability part apart: ``flicker``).

    Parameters
    ----------
    rng : numpy.random.Generator
    rate : float, samples per second [Hz]
    arw : float, angle random walk [rad/sqrt(s)]
    rrw : float, rate random walk [rad/s/sqrt(s)]
    initial_bias : (3,) [rad/s]
    scale_factor_ppm : float [ppm]
    latency : float [s]
    bias_instability : float, B [rad/s] (0: none); the Allan deviation's flat floor is
        ``0.664 B`` (:func:`bias_instability_from_deg_per_hour` converts from deg/h)
    bias_instability_band : (2,) [s], the averaging times ``tau_lo < tau_hi`` over which
        the floor is flat
    """

    def __init__(
        self,
        rng: np.random.Generator,
        *,
        rate: float = 100.0,
        arw: float = arw_from_deg_per_root_hour(0.01),
        rrw: float = rrw_from_deg_per_hour_root_hour(0.01),
        initial_bias: ArrayLike = (0.0, 0.0, 0.0),
        scale_factor_ppm: float = 0.0,
        latency: float = 0.0,
        bias_instability: float = 0.0,
        bias_instability_band: ArrayLike = (1.0, 1000.0),
    ) -> None:
        super().__init__(rate, latency, rng)
        self.arw = float(_non_negative(arw, "arw [rad/sqrt(s)]"))
        self.rrw = float(_non_negative(rrw, "rrw [rad/s/sqrt(s)]"))
        self.bias = np.array(initial_bias, dtype=float)
        if self.bias.shape != (3,) or not np.all(np.isfinite(self.bias)):
            raise ValueError(f"initial_bias must be a finite (3,), got {initial_bias!r}")
        self.scale = 1e-6 * float(scale_factor_ppm)
        B = float(_non_negative(bias_instability, "bias_instability [rad/s]"))
        band = np.asarray(bias_instability_band, dtype=float)
        if band.shape != (2,) or not (np.all(np.isfinite(band)) and 0.0 < band[0] < band[1]):
            raise ValueError(
                f"bias_instability_band must be (tau_lo, tau_hi) [s] with 0 < tau_lo < tau_hi, "
                f"got {bias_instability_band!r}"
            )
        self.bias_instability, self.bias_instability_band = B, band
        self._gm = None
        if B > 0.0:  # the Gauss-Markov bank (module docstring); none drawn when B = 0
            k = np.arange(math.ceil(math.log(300.0 * band[1] / band[0], _GM_RATIO)) + 1)
            T = band[0] / 30.0 * _GM_RATIO**k
            T = T[T >= self.period]
            q = B * math.sqrt(math.log(_GM_RATIO) / math.pi)
            phi = np.exp(-self.period / T)[:, None]
            self._gm = (phi, q * np.sqrt(1.0 - phi * phi))
            self.correlation_times = T
            self._g = q * self.rng.standard_normal((T.size, 3))  # stationary from the start

    @property
    def flicker(self) -> NDArray[np.float64]:
        """(3,) the bias instability part of the bias now [rad/s] (zeros when off)."""
        return self._g.sum(axis=0) if self._gm is not None else np.zeros(3)

    def measure(self, t: float, w_true: ArrayLike) -> NDArray[np.float64] | None:
        w = np.asarray(w_true, dtype=float)
        dt = self.period

        def sample(tk):
            out = (
                (1.0 + self.scale) * w
                + self.bias
                + self.arw / math.sqrt(dt) * (self.rng.standard_normal(3))
            )
            self.bias = self.bias + self.rrw * math.sqrt(dt) * self.rng.standard_normal(3)
            if self._gm is not None:
                phi, sigma = self._gm
                out = out + self._g.sum(axis=0)
                self._g = phi * self._g + sigma * self.rng.standard_normal(self._g.shape)
            return out

        return self._step(t, sample)


class RelativeNavigation(_Sampled):
    """Base position and velocity (inertial/target frame) with white noise [m, m/s]."""

    def __init__(
        self,
        rng: np.random.Generator,
        *,
        rate: float = 10.0,
        position_noise: float = 1e-3,
        velocity_noise: float = 1e-3,
        latency: float = 0.0,
    ) -> None:
        super().__init__(rate, latency, rng)
        self.position_noise = float(_non_negative(position_noise, "position_noise [m]"))
        self.velocity_noise = float(_non_negative(velocity_noise, "velocity_noise [m/s]"))

    def measure(
        self, t: float, r: ArrayLike, v: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        r, v = np.asarray(r, dtype=float), np.asarray(v, dtype=float)

        def sample(tk):
            return (
                r + self.position_noise * self.rng.standard_normal(3),
                v + self.velocity_noise * self.rng.standard_normal(3),
            )

        return self._step(t, sample)


class JointEncoders:
    """Joint angles quantised to ``quantum`` [rad] (default 20 bits), after white noise."""

    def __init__(
        self,
        rng: np.random.Generator,
        *,
        quantum: float = 2.0 * math.pi / 2**20,
        noise: float = 0.0,
    ) -> None:
        self.quantum = _positive(quantum, "quantum [rad]")
        self.noise = float(_non_negative(noise, "noise [rad]"))
        self.rng = rng

    def measure(self, q: ArrayLike) -> NDArray[np.float64]:
        q = np.asarray(q, dtype=float)
        if self.noise:
            q = q + self.noise * self.rng.standard_normal(q.shape)
        return self.quantum * np.round(q / self.quantum)


class Tachometer(JointEncoders):
    """Wheel or gimbal rates with white noise [rad/s] and an optional quantum."""

    def __init__(
        self, rng: np.random.Generator, *, noise: float = 0.1, quantum: float = 1e-6
    ) -> None:
        super().__init__(rng, quantum=quantum, noise=noise)
