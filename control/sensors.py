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
where the random walk does.  ``w`` is the true body rate at the sample (:class:`Gyro`) or,
for a rate-integrating gyro (:class:`RateIntegratingGyro`, which outputs delta-angles), the
mean rate over the sample interval: the body-frame rotation vector of ``q_prev* o q`` over
``dt``, ``q_prev`` and ``q`` the true attitudes at the previous sample and at this one
(:func:`mean_rate`).  The integral of the body rate over the interval differs from that
rotation vector by the coning term (second order in the interval); the rotation vector is
what a gyro with coning compensation reports, and what the attitude filter's step
``q o exp(1/2 w dt)`` takes.

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

Compiled kernels (the one implementation; the classes are their checked wrappers and
other compiled code, e.g. :func:`~dqspace.control.flight.navigation.sense_kernel`, calls
them directly).  Each draws from the ``numpy.random.Generator`` it is passed (numba runs
NumPy's own algorithms on the generator's bit generator, so a kernel draws exactly the
numbers the NumPy calls would, and the generator's state advances as theirs would).
Kernels trust their inputs (float64, C-contiguous; validated by the classes).

* :func:`star_tracker_kernel`, :func:`gyro_kernel`, :func:`relative_navigation_kernel`
  ``(params, state, rng, t, truth...) -> int``: take the samples due by ``t`` [s] (with
  the truth given), deliver those due; return how many samples this call delivered (the
  newest in ``state.last``, or ``state.schedule.last`` for the gyro).  ``params`` a
  :data:`StarTrackerParams`, :data:`GyroParams`, :data:`RelativeNavigationParams`;
  ``state`` a :data:`Schedule` (a :data:`GyroState` for the gyro);
  :func:`mean_rate_gyro_kernel` likewise, with the true attitude ``q_IB`` (4,) as its truth;
* :func:`mean_rate` ``(q_prev, q, dt, out)``: the mean body rate between two attitudes;
* :func:`encoder_kernel` ``(quantum, noise, rng, x, out)``: quantised, noisy ``x`` (n,)
  into ``out`` (n,) (may be ``x``): joint encoders and tachometers.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..dq.kernels import q_exp, q_log, q_mul

__all__ = [
    "StarTracker",
    "Gyro",
    "RateIntegratingGyro",
    "RelativeNavigation",
    "JointEncoders",
    "Tachometer",
    "ARCSEC",
    "arw_from_deg_per_root_hour",
    "rrw_from_deg_per_hour_root_hour",
    "bias_instability_from_deg_per_hour",
    "ALLAN_FLICKER_FLOOR",
    "Schedule",
    "schedule",
    "StarTrackerParams",
    "GyroParams",
    "GyroState",
    "RelativeNavigationParams",
    "star_tracker_kernel",
    "gyro_kernel",
    "mean_rate",
    "mean_rate_gyro_kernel",
    "relative_navigation_kernel",
    "encoder_kernel",
]

#: the Allan deviation of flicker rate noise over the bias instability B:
#: ``sqrt(2 ln 2 / pi)`` = 0.6643 (IEEE Std 952-1997, Annex C)
ALLAN_FLICKER_FLOOR = math.sqrt(2.0 * math.log(2.0) / math.pi)
#: ratio of neighbouring correlation times of the Gauss-Markov bank
_GM_RATIO = math.sqrt(10.0)
#: [s] a sample (or a delivery) is due at t when its time is at most t + _DUE
_DUE = 1e-12

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


# ------------------------------------------------------------------ sampling schedule

#: A sampled sensor's schedule and latency buffer (:func:`schedule` makes one): ``next``
#: (1,) int64 the index k of the next sample (taken at ``k period``); a ring of the samples
#: taken and not yet delivered: ``head``, ``count`` (1,) int64, ``due`` (C,) [s] their
#: delivery times, ``values`` (C, m) the samples; ``last`` (m,) the newest sample delivered
#: and ``delivered`` (1,) int64 how many have been (0: none yet, ``last`` meaningless).
Schedule = namedtuple("Schedule", ["next", "head", "count", "due", "values", "last", "delivered"])


def schedule(period: float, latency: float, m: int) -> Schedule:
    """A fresh :data:`Schedule` of samples of m values every ``period`` [s] delivered
    ``latency`` [s] later; its ring holds the samples in flight (at most ``latency /
    period + 2``, as the kernels deliver after every sample they take)."""
    C = int(latency / period) + 3
    k, head, count, delivered = (np.zeros(1, dtype=np.int64) for _ in range(4))
    return Schedule(k, head, count, np.zeros(C), np.zeros((C, m)), np.zeros(m), delivered)


@njit(cache=True)
def _deliver(s, t):
    """Deliver the samples of the :data:`Schedule` s due by t [s] (into ``s.last``); how many."""
    C = s.due.shape[0]
    n = 0
    while s.count[0] > 0 and s.due[s.head[0]] <= t + _DUE:
        s.last[:] = s.values[s.head[0]]
        s.head[0] = (s.head[0] + 1) % C
        s.count[0] -= 1
        n += 1
    s.delivered[0] += n
    return n


@njit(cache=True)
def _take(s, period, latency, t):
    """The ring row of the next sample if it is due by t [s] (its delivery time written, the
    caller writes its value), else -1."""
    tk = s.next[0] * period
    if tk > t + _DUE:
        return -1
    i = (s.head[0] + s.count[0]) % s.due.shape[0]
    s.due[i] = tk + latency
    s.count[0] += 1
    s.next[0] += 1
    return i


class _Sampled:
    """Sampling schedule and latency buffer shared by the sensors (:data:`Schedule`)."""

    def __init__(self, rate, latency, rng, m):
        self.period = 1.0 / _positive(rate, "rate [Hz]")
        self.latency = float(_non_negative(latency, "latency [s]"))
        if not isinstance(rng, np.random.Generator):
            raise ValueError("rng must be a numpy.random.Generator (seeded by the caller)")
        self.rng = rng
        self.schedule = schedule(self.period, self.latency, m)
        self._last, self._seen = None, 0

    def _newest(self, value):
        """What ``measure`` returns: the newest sample delivered (the same object until a
        newer one arrives), or None before the first."""
        seen = int(self.schedule.delivered[0])
        if seen != self._seen:
            self._last, self._seen = value(self.schedule.last.copy()), seen
        return self._last


# ------------------------------------------------------------------ star tracker

#: :func:`star_tracker_kernel`'s parameters: ``period``, ``latency`` [s], ``noise`` (3,)
#: 1 sigma per body axis [rad], ``bias`` (3,) [rad].
StarTrackerParams = namedtuple("StarTrackerParams", ["period", "latency", "noise", "bias"])


@njit(cache=True)
def star_tracker_kernel(p, s, rng, t, q_IB):
    """The star tracker at ``t`` [s] (:class:`StarTracker`): every sample due is
    ``q_IB o exp(1/2 (bias + noise n))``, ``n ~ N(0, I3)`` (three draws), with the attitude
    ``q_IB`` (4,) given; ``p`` a :data:`StarTrackerParams`, ``s`` a :data:`Schedule` (m = 4).
    Returns the number of samples delivered (the newest in ``s.last``)."""
    n = _deliver(s, t)
    half = np.empty(3)
    dq = np.empty(4)
    i = _take(s, p.period, p.latency, t)
    while i >= 0:
        for j in range(3):
            half[j] = 0.5 * (p.bias[j] + p.noise[j] * rng.standard_normal())
        q_exp(half, dq)
        q_mul(q_IB, dq, s.values[i])
        n += _deliver(s, t)
        i = _take(s, p.period, p.latency, t)
    return n


class StarTracker(_Sampled):
    """Attitude ``q_IB`` measured with a small rotation error in the body frame:
    ``q_meas = q_IB o exp(1/2 (bias + n))``, ``n ~ N(0, diag(noise^2))`` [rad]
    (:func:`star_tracker_kernel`)."""

    def __init__(
        self,
        rng: np.random.Generator,
        *,
        rate: float = 10.0,
        noise_arcsec: ArrayLike = (5.0, 5.0, 40.0),
        bias_arcsec: ArrayLike = (0.0, 0.0, 0.0),
        latency: float = 0.0,
    ) -> None:
        super().__init__(rate, latency, rng, 4)
        self.noise = _non_negative(noise_arcsec, "noise_arcsec", 3) * ARCSEC
        self.bias = np.asarray(bias_arcsec, dtype=float) * ARCSEC
        if self.bias.shape != (3,) or not np.all(np.isfinite(self.bias)):
            raise ValueError(f"bias_arcsec must be a finite (3,), got {bias_arcsec!r}")
        self.params = StarTrackerParams(self.period, self.latency, self.noise, self.bias)

    def measure(self, t: float, q_IB: ArrayLike) -> NDArray[np.float64] | None:
        q = np.ascontiguousarray(q_IB, dtype=float)
        star_tracker_kernel(self.params, self.schedule, self.rng, float(t), q)
        return self._newest(lambda x: x)


# ------------------------------------------------------------------ gyro

#: :func:`gyro_kernel`'s parameters: ``period``, ``latency`` [s], ``scale`` the scale-factor
#: error [-], ``arw`` [rad/sqrt(s)], ``rrw`` [rad/s/sqrt(s)], and the bias-instability bank
#: (module docstring): ``phi`` (G,) ``exp(-period / T_i)``, ``sigma`` (G,)
#: ``q sqrt(1 - phi^2)`` [rad/s] (G = 0: no bias instability); ``mean_rate`` (bool) the
#: gyro reports the mean rate over its sample interval (:func:`mean_rate_gyro_kernel`,
#: :class:`RateIntegratingGyro`), else the rate at the sample (:func:`gyro_kernel`).
GyroParams = namedtuple(
    "GyroParams", ["period", "latency", "scale", "arw", "rrw", "phi", "sigma", "mean_rate"]
)

#: What a gyro carries from sample to sample: ``schedule`` (:data:`Schedule`, m = 3),
#: ``bias`` (3,) the random-walk bias [rad/s], ``flicker`` (G, 3) the Gauss-Markov
#: processes of the bias instability [rad/s], ``attitude`` (4,) the true attitude
#: ``q_IB`` at the last sample taken (a rate-integrating gyro's start of the next
#: interval; unused by :func:`gyro_kernel`).
GyroState = namedtuple("GyroState", ["schedule", "bias", "flicker", "attitude"])


@njit(cache=True)
def _gyro_sample(p, s, rng, w, out):
    """One gyro sample of the true rate ``w`` (3,) [rad/s] into ``out`` (3,) (the errors
    of :func:`gyro_kernel`), and the bias steps."""
    g = s.flicker
    G = p.phi.shape[0]
    sq = math.sqrt(p.period)
    for j in range(3):
        out[j] = (1.0 + p.scale) * w[j] + s.bias[j] + p.arw / sq * rng.standard_normal()
    for j in range(3):
        s.bias[j] = s.bias[j] + p.rrw * sq * rng.standard_normal()
    if G > 0:
        for j in range(3):
            total = g[0, j]
            for k in range(1, G):
                total += g[k, j]
            out[j] = out[j] + total
        for k in range(G):
            for j in range(3):
                g[k, j] = p.phi[k] * g[k, j] + p.sigma[k] * rng.standard_normal()


@njit(cache=True)
def gyro_kernel(p, s, rng, t, w_IB_B):
    """The gyro at ``t`` [s] (:class:`Gyro`, module docstring): every sample due is
    ``(1 + scale) w + b + arw / sqrt(dt) n_v`` (three draws), then ``b += rrw sqrt(dt) n_u``
    (three draws), then, with a bias instability, the sum of the Gauss-Markov processes is
    added and each process steps (3 G draws, row by row); ``w_IB_B`` (3,) [rad/s] the true
    rate, ``p`` a :data:`GyroParams`, ``s`` a :data:`GyroState`.  Returns the number of
    samples delivered (the newest in ``s.schedule.last``)."""
    sch = s.schedule
    n = _deliver(sch, t)
    i = _take(sch, p.period, p.latency, t)
    while i >= 0:
        _gyro_sample(p, s, rng, w_IB_B, sch.values[i])
        n += _deliver(sch, t)
        i = _take(sch, p.period, p.latency, t)
    return n


@njit(cache=True)
def mean_rate(q_prev, q, dt, out):
    """The mean body rate ``out`` (3,) [rad/s] that turns ``q_prev`` into ``q`` (4,) (q_IB)
    in ``dt`` [s]: the rotation vector of ``q_prev* o q`` (body frame, the short way) over
    ``dt``; exact for a constant rate, and for a rate about a fixed axis it is the rate's
    mean over the interval."""
    conj = np.empty(4)
    conj[0] = q_prev[0]
    for j in range(1, 4):
        conj[j] = -q_prev[j]
    e = np.empty(4)
    q_mul(conj, q, e)
    if e[0] < 0.0:
        for j in range(4):
            e[j] = -e[j]
    q_log(e, out)  # half the rotation vector
    for j in range(3):
        out[j] = 2.0 * out[j] / dt


@njit(cache=True)
def mean_rate_gyro_kernel(p, s, rng, t, q_IB):
    """A rate-integrating gyro at ``t`` [s] (:class:`RateIntegratingGyro`): every sample due
    is the error model of :func:`gyro_kernel` (the same draws) applied to the mean rate over
    the sample interval, :func:`mean_rate` from ``s.attitude`` (the true attitude at the
    previous sample) to ``q_IB`` (4,) (the true attitude now, given at every sample time),
    which then becomes ``s.attitude``.  Returns the number of samples delivered."""
    sch = s.schedule
    w = np.empty(3)
    n = _deliver(sch, t)
    i = _take(sch, p.period, p.latency, t)
    while i >= 0:
        mean_rate(s.attitude, q_IB, p.period, w)
        _gyro_sample(p, s, rng, w, sch.values[i])
        s.attitude[:] = q_IB
        n += _deliver(sch, t)
        i = _take(sch, p.period, p.latency, t)
    return n


class Gyro(_Sampled):
    """Body angular rate at the sample time with angle random walk, a random-walk bias, an
    optional bias instability and a scale-factor error (module docstring,
    :func:`gyro_kernel`); ``bias`` is the current random-walk bias [rad/s] (the bias
    instability part apart: ``flicker``).

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

    _mean_rate = False

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
        super().__init__(rate, latency, rng, 3)
        self.arw = float(_non_negative(arw, "arw [rad/sqrt(s)]"))
        self.rrw = float(_non_negative(rrw, "rrw [rad/s/sqrt(s)]"))
        bias = np.array(initial_bias, dtype=float)
        if bias.shape != (3,) or not np.all(np.isfinite(bias)):
            raise ValueError(f"initial_bias must be a finite (3,), got {initial_bias!r}")
        scale = float(scale_factor_ppm)
        if not math.isfinite(scale):
            raise ValueError(f"scale_factor_ppm must be finite, got {scale_factor_ppm!r}")
        self.scale = 1e-6 * scale
        B = float(_non_negative(bias_instability, "bias_instability [rad/s]"))
        band = np.asarray(bias_instability_band, dtype=float)
        if band.shape != (2,) or not (np.all(np.isfinite(band)) and 0.0 < band[0] < band[1]):
            raise ValueError(
                f"bias_instability_band must be (tau_lo, tau_hi) [s] with 0 < tau_lo < tau_hi, "
                f"got {bias_instability_band!r}"
            )
        self.bias_instability, self.bias_instability_band = B, band
        T = np.zeros(0)
        phi = sigma = np.zeros(0)
        g = np.zeros((0, 3))
        if B > 0.0:  # the Gauss-Markov bank (module docstring); none drawn when B = 0
            k = np.arange(math.ceil(math.log(300.0 * band[1] / band[0], _GM_RATIO)) + 1)
            T = band[0] / 30.0 * _GM_RATIO**k
            T = T[T >= self.period]
            q = B * math.sqrt(math.log(_GM_RATIO) / math.pi)
            phi = np.exp(-self.period / T)
            sigma = q * np.sqrt(1.0 - phi * phi)
            g = q * self.rng.standard_normal((T.size, 3))  # stationary from the start
        self.correlation_times = T
        self.params = GyroParams(self.period, self.latency, self.scale, self.arw, self.rrw,
                                 phi, sigma, self._mean_rate)  # fmt: skip
        self.state = GyroState(self.schedule, bias, g, np.array([1.0, 0.0, 0.0, 0.0]))

    @property
    def bias(self) -> NDArray[np.float64]:
        """(3,) the random-walk part of the bias now [rad/s] (a copy)."""
        return self.state.bias.copy()

    @property
    def flicker(self) -> NDArray[np.float64]:
        """(3,) the bias instability part of the bias now [rad/s] (zeros when off)."""
        return self.state.flicker.sum(axis=0) if self.state.flicker.size else np.zeros(3)

    def measure(self, t: float, w_true: ArrayLike) -> NDArray[np.float64] | None:
        w = np.ascontiguousarray(w_true, dtype=float)
        gyro_kernel(self.params, self.state, self.rng, float(t), w)
        return self._newest(lambda x: x)


class RateIntegratingGyro(Gyro):
    """A gyro that reports the mean body rate over each sample interval, as rate-integrating
    gyros do (their delta-angle over the interval): the rotation vector of ``q_prev* o q``
    over the period, ``q_prev`` and ``q`` the true attitudes at the previous sample and at
    this one, with the errors of :class:`Gyro` (the same draws;
    :func:`mean_rate_gyro_kernel`).  ``measure(t, q_IB)`` takes the true attitude and must
    be called at every sample time.

    Parameters
    ----------
    rng : numpy.random.Generator
    previous_attitude : (4,) the true attitude ``q_IB`` one sample period before the first
        sample (at ``t = -1 / rate``): the first sample is the mean rate over
        ``[-1 / rate, 0]``
    **kwargs : the parameters of :class:`Gyro`
    """

    _mean_rate = True

    def __init__(
        self, rng: np.random.Generator, *, previous_attitude: ArrayLike, **kwargs: Any
    ) -> None:
        super().__init__(rng, **kwargs)
        q = np.array(previous_attitude, dtype=float)
        if q.shape != (4,) or not np.all(np.isfinite(q)) or abs(np.linalg.norm(q) - 1) > 1e-9:
            raise ValueError(
                f"previous_attitude must be a unit quaternion (4,), got {previous_attitude!r}"
            )
        self.state.attitude[:] = q

    def measure(self, t: float, q_IB: ArrayLike) -> NDArray[np.float64] | None:
        q = np.ascontiguousarray(q_IB, dtype=float)
        if q.shape != (4,):
            raise ValueError(f"q_IB must be (4,), got shape {q.shape}")
        mean_rate_gyro_kernel(self.params, self.state, self.rng, float(t), q)
        return self._newest(lambda x: x)


# ------------------------------------------------------------------ relative navigation

#: :func:`relative_navigation_kernel`'s parameters: ``period``, ``latency`` [s],
#: ``position_noise`` [m], ``velocity_noise`` [m/s] (1 sigma per axis).
RelativeNavigationParams = namedtuple(
    "RelativeNavigationParams", ["period", "latency", "position_noise", "velocity_noise"]
)


@njit(cache=True)
def relative_navigation_kernel(p, s, rng, t, r, v):
    """Relative navigation at ``t`` [s] (:class:`RelativeNavigation`): every sample due is
    ``[r + position_noise n_r, v + velocity_noise n_v]`` (6,) (three draws, then three) with
    the truth ``r`` [m], ``v`` [m/s] (3,) given; ``p`` a :data:`RelativeNavigationParams`,
    ``s`` a :data:`Schedule` (m = 6).  Returns the number of samples delivered."""
    n = _deliver(s, t)
    i = _take(s, p.period, p.latency, t)
    while i >= 0:
        out = s.values[i]
        for j in range(3):
            out[j] = r[j] + p.position_noise * rng.standard_normal()
        for j in range(3):
            out[3 + j] = v[j] + p.velocity_noise * rng.standard_normal()
        n += _deliver(s, t)
        i = _take(s, p.period, p.latency, t)
    return n


class RelativeNavigation(_Sampled):
    """Base position and velocity (inertial/target frame) with white noise [m, m/s]
    (:func:`relative_navigation_kernel`)."""

    def __init__(
        self,
        rng: np.random.Generator,
        *,
        rate: float = 10.0,
        position_noise: float = 1e-3,
        velocity_noise: float = 1e-3,
        latency: float = 0.0,
    ) -> None:
        super().__init__(rate, latency, rng, 6)
        self.position_noise = float(_non_negative(position_noise, "position_noise [m]"))
        self.velocity_noise = float(_non_negative(velocity_noise, "velocity_noise [m/s]"))
        self.params = RelativeNavigationParams(
            self.period, self.latency, self.position_noise, self.velocity_noise
        )

    def measure(
        self, t: float, r: ArrayLike, v: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        r, v = np.ascontiguousarray(r, dtype=float), np.ascontiguousarray(v, dtype=float)
        relative_navigation_kernel(self.params, self.schedule, self.rng, float(t), r, v)
        return self._newest(lambda x: (x[:3], x[3:]))


# ------------------------------------------------------------------ encoders, tachometers


@njit(cache=True)
def encoder_kernel(quantum, noise, rng, x, out):
    """``out = quantum round((x + noise n) / quantum)`` (n,) (rounding half to even; one
    draw per entry, in order, only when ``noise`` is not 0); ``out`` may be ``x``."""
    for i in range(x.shape[0]):
        y = x[i]
        if noise != 0.0:
            y = y + noise * rng.standard_normal()
        out[i] = quantum * np.round(y / quantum)


class JointEncoders:
    """Joint angles quantised to ``quantum`` [rad] (default 20 bits), after white noise
    (:func:`encoder_kernel`)."""

    def __init__(
        self,
        rng: np.random.Generator,
        *,
        quantum: float = 2.0 * math.pi / 2**20,
        noise: float = 0.0,
    ) -> None:
        self.quantum = _positive(quantum, "quantum [rad]")
        self.noise = float(_non_negative(noise, "noise [rad]"))
        if not isinstance(rng, np.random.Generator):
            raise ValueError("rng must be a numpy.random.Generator (seeded by the caller)")
        self.rng = rng

    def measure(self, q: ArrayLike) -> NDArray[np.float64]:
        """The measurement of ``q`` (any shape; the draws in C order) [rad]."""
        q = np.asarray(q, dtype=float)
        out = np.array(q, dtype=float, order="C").reshape(-1)
        encoder_kernel(self.quantum, self.noise, self.rng, out, out)
        return out.reshape(q.shape)


class Tachometer(JointEncoders):
    """Wheel or gimbal rates with white noise [rad/s] and an optional quantum."""

    def __init__(
        self, rng: np.random.Generator, *, noise: float = 0.1, quantum: float = 1e-6
    ) -> None:
        super().__init__(rng, quantum=quantum, noise=noise)
