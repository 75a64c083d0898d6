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

Gyro model, per sample interval ``dt``: ``w_meas = (1 + s) w + b + n_v``,
``n_v ~ N(0, arw^2 / dt)``, ``b_{k+1} = b_k + N(0, rrw^2 dt)`` (angle random walk ``arw`` in
rad/sqrt(s), rate random walk ``rrw`` in rad/s/sqrt(s)); its Allan deviation is ``arw /
sqrt(tau)`` (slope -1/2) where the white noise dominates and ``rrw sqrt(tau / 3)`` (slope +1/2)
where the random walk does.
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
]

#: one arcsecond [rad]
ARCSEC = math.pi / (180.0 * 3600.0)


def arw_from_deg_per_root_hour(x: float) -> float:
    """Angle random walk deg/sqrt(h) -> rad/sqrt(s)."""
    return math.radians(x) / 60.0


def rrw_from_deg_per_hour_root_hour(x: float) -> float:
    """Rate random walk deg/h/sqrt(h) -> rad/s/sqrt(s)."""
    return math.radians(x) / 3600.0 / 60.0


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
    """Body angular rate with angle random walk, a random-walk bias and a scale-factor error
    (module docstring); ``bias`` is the current bias [rad/s]."""

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
    ) -> None:
        super().__init__(rate, latency, rng)
        self.arw = float(_non_negative(arw, "arw [rad/sqrt(s)]"))
        self.rrw = float(_non_negative(rrw, "rrw [rad/s/sqrt(s)]"))
        self.bias = np.array(initial_bias, dtype=float)
        if self.bias.shape != (3,) or not np.all(np.isfinite(self.bias)):
            raise ValueError(f"initial_bias must be a finite (3,), got {initial_bias!r}")
        self.scale = 1e-6 * float(scale_factor_ppm)

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
