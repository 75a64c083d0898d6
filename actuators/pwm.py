"""On/off thruster firing: pulse-width modulation with a minimum impulse bit.

Real thrusters are either off or on at full thrust.  Over a control period ``T`` a
continuous command ``sigma_i`` (e.g. from :class:`~dqspace.actuators.allocation.Allocator`)
becomes one pulse of width ``t_i`` at thrust ``sigma_max_i`` with the same impulse
(paper, Fig. 12 "thruster PWM firing sequence"):

    I_i = sigma_i T                       commanded impulse [N s]
    t_i = I_i / sigma_max_i               pulse width [s], 0 <= t_i <= T

A valve cannot open for less than its minimum on-time, so a firing delivers at least the
minimum impulse bit ``I_min,i`` (``Thruster.min_impulse_bit``).  Commanded impulses below it
are quantized to 0 or one bit:

* plain PWM: fire one bit if ``I_i >= I_min / 2`` (rounding; error <= ``I_min / 2``);
* with a Schmitt trigger (:class:`SchmittTrigger`, thresholds ``0 <= off <= on <= 1``): a
  thruster that did not fire in the previous period fires one bit if
  ``I_i >= on * I_min``; one that fired keeps firing one bit while
  ``I_i >= off * I_min``.  The hysteresis stops chattering when a small command hovers
  around the threshold; the error is below ``max(on, 1 - off) * I_min <= I_min``.

Either way the delivered impulse ``sigma_max_i t_i`` matches the command to within one
minimum impulse bit per period, and exactly when ``I_i >= I_min`` (or ``I_min = 0``).

Two options for a modulator that drives a simulation or a valve driver with a clock:

* ``quantum`` [s]: pulse widths are whole multiples of it (the dynamics step, or the
  driver's tick); a width is rounded to the nearest multiple, and a non-zero pulse is
  never shorter than the minimum on-time rounded up to a multiple;
* ``error_feedback``: the impulse error of each period (command minus delivered) is
  added to the next period's command (first-order delta-sigma modulation).  The
  accumulated impulse error then stays below one impulse quantum
  ``max(I_min, sigma_max quantum)`` for ever instead of drifting; the error of a single
  period is below twice that.  With it, a thruster firing whole bits delivers on
  average exactly the commanded thrust.

Pulses start at the beginning of the period (leading-edge PWM).  This module decides the
firing; what the base feels is :meth:`ThrusterSet.wrench` of the instantaneous thrusts
:meth:`PulseTrain.thrust` returns (faults included).
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .thrusters import ThrusterSet

__all__ = ["PulseModulator", "PulseTrain", "SchmittTrigger"]


@dataclass(frozen=True)
class SchmittTrigger:
    """Hysteresis for commands below the minimum impulse bit.

    Attributes
    ----------
    on_fraction : float
        A thruster that is off fires one minimum impulse bit when the commanded impulse
        reaches ``on_fraction * I_min``.
    off_fraction : float
        A thruster that fired in the previous period keeps firing one bit while the
        commanded impulse is at least ``off_fraction * I_min``.

    ``0 <= off_fraction <= on_fraction <= 1``; ``on = off = 0.5`` is plain rounding.
    """

    on_fraction: float = 0.75
    off_fraction: float = 0.25

    def __post_init__(self):
        on = float(self.on_fraction)
        off = float(self.off_fraction)
        if not (np.isfinite(on) and np.isfinite(off) and 0.0 <= off <= on <= 1.0):
            raise ValueError(
                "Schmitt trigger needs 0 <= off_fraction <= on_fraction <= 1, got "
                f"on_fraction = {on}, off_fraction = {off}"
            )
        object.__setattr__(self, "on_fraction", on)
        object.__setattr__(self, "off_fraction", off)


@dataclass(frozen=True, eq=False)
class PulseTrain:
    """The firing of every thruster over one control period.

    Attributes
    ----------
    period : float [s]
    on_time : (S,) array [s]
        Pulse width of each thruster, from the start of the period; 0 or at least the
        minimum on-time ``min_impulse_bit / sigma_max``, at most ``period``.
    thrust_level : (S,) array [N]
        Thrust while on (``sigma_max``).
    impulse : (S,) array [N s]
        Delivered impulse ``thrust_level * on_time`` (nominal thrusters).
    commanded_impulse : (S,) array [N s]
        ``sigma * period``.
    error : (S,) array [N s]
        ``impulse - commanded_impulse``; ``|error| <= min_impulse_bit``.
    firing : (S,) bool array
        Which thrusters fired: the state to pass to the next :meth:`PulseModulator.modulate`.
    carry : (S,) array [N s]
        Impulse still owed (command plus the previous carry, minus delivered) when the
        modulator has ``error_feedback``, else zeros: pass it to the next ``modulate``.
    """

    period: float
    on_time: np.ndarray
    thrust_level: np.ndarray
    impulse: np.ndarray
    commanded_impulse: np.ndarray
    error: np.ndarray
    firing: np.ndarray
    carry: np.ndarray = None

    @property
    def mean_thrust(self) -> NDArray[np.float64]:
        """(S,) array [N]: delivered impulse over the period."""
        return self.impulse / self.period

    def thrust(self, t: ArrayLike) -> NDArray[np.float64]:
        """Commanded thrust of every thruster at time ``t`` into the period.

        Parameters
        ----------
        t : float [s], ``0 <= t <= period``

        Returns
        -------
        (S,) array [N]: ``thrust_level`` where ``t < on_time``, else 0.  Feed it to
        ``ThrusterSet.wrench`` to get the wrench on the base.
        """
        t = float(t)
        if not (np.isfinite(t) and 0.0 <= t <= self.period):
            raise ValueError(f"t must be in [0, period = {self.period}] s, got {t}")
        return np.where(t < self.on_time, self.thrust_level, 0.0)


class PulseModulator:
    """Turns continuous thrust commands into on/off pulses, period by period.

    Parameters
    ----------
    thrusters : ThrusterSet
        Supplies ``sigma_max`` (thrust while on) and ``min_impulse_bit`` per thruster.
    period : float [s]
        Control period ``T``; every thruster's ``min_impulse_bit`` must fit in it
        (``min_impulse_bit <= sigma_max * T``).
    schmitt : SchmittTrigger, optional
        Hysteresis for commands below the minimum impulse bit; default plain rounding.
    """

    def __init__(
        self,
        thrusters: ThrusterSet,
        period: float,
        *,
        schmitt: SchmittTrigger | None = None,
        quantum: float = 0.0,
        error_feedback: bool = False,
    ) -> None:
        if not isinstance(thrusters, ThrusterSet):
            raise ValueError(f"thrusters must be a ThrusterSet, got {type(thrusters).__name__}")
        T = float(period)
        if not (np.isfinite(T) and T > 0.0):
            raise ValueError(f"period must be > 0 s, got {T}")
        if schmitt is not None and not isinstance(schmitt, SchmittTrigger):
            raise ValueError(f"schmitt must be a SchmittTrigger or None, got {schmitt!r}")
        full = thrusters.sigma_max * T
        too_big = np.flatnonzero(thrusters.min_impulse_bit > full)
        if too_big.size:
            i = int(too_big[0])
            raise ValueError(
                f"thruster {i} ({thrusters.names[i]!r}): min_impulse_bit = "
                f"{thrusters.min_impulse_bit[i]} N s exceeds sigma_max * period = {full[i]} N s"
            )
        q = float(quantum)
        if not (np.isfinite(q) and 0.0 <= q <= T):
            raise ValueError(f"quantum must be in [0, period = {T}] s, got {quantum}")
        if q > 0.0 and abs(T / q - round(T / q)) > 1e-9:
            raise ValueError(f"period = {T} s must be a whole number of quantum = {q} s")
        self.thrusters = thrusters
        self.period = T
        self.schmitt = schmitt
        self.quantum = q
        self.error_feedback = bool(error_feedback)

    def initial_state(self) -> NDArray[np.bool_]:
        """(S,) bool array: no thruster fired before the first period."""
        return np.zeros(self.thrusters.n, dtype=bool)

    def modulate(
        self,
        sigma: ArrayLike,
        firing: ArrayLike | None = None,
        carry: ArrayLike | None = None,
    ) -> PulseTrain:
        """Pulses for one period.

        Parameters
        ----------
        sigma : (S,) array [N]
            Commanded (mean) thrusts, ``0 <= sigma <= sigma_max`` (violations up to
            ``1e-9 * sigma_max`` are clipped).
        firing : (S,) bool array, optional
            Which thrusters fired in the previous period (``PulseTrain.firing``); only the
            Schmitt trigger reads it.  Default: none.
        carry : (S,) array [N s], optional
            The previous period's ``PulseTrain.carry`` (used with ``error_feedback``).

        Returns
        -------
        PulseTrain
        """
        ts = self.thrusters
        S = ts.n
        s = np.asarray(sigma, dtype=float)
        if s.shape != (S,):
            raise ValueError(f"sigma must have shape ({S},), got {s.shape}")
        if not np.all(np.isfinite(s)):
            raise ValueError(f"sigma must be finite, got {s}")
        smax = ts.sigma_max
        slack = 1e-9 * smax
        bad = np.flatnonzero((s < -slack) | (s > smax + slack))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"sigma[{i}] ({ts.names[i]!r}) = {s[i]} N is outside [0, sigma_max = {smax[i]}] N"
            )
        if firing is None:
            prev = np.zeros(S, dtype=bool)
        else:
            prev = np.asarray(firing)
            if prev.shape != (S,) or prev.dtype != bool:
                raise ValueError(
                    f"firing must be a ({S},) bool array, got {prev.shape} {prev.dtype}"
                )
        s = np.clip(s, 0.0, smax)
        T = self.period
        mib = ts.min_impulse_bit
        commanded = s * T
        owed = commanded.copy()
        if self.error_feedback and carry is not None:
            c = np.asarray(carry, dtype=float)
            if c.shape != (S,) or not np.all(np.isfinite(c)):
                raise ValueError(f"carry must be a finite ({S},) array, got {c}")
            owed = commanded + c  # may be negative (over-delivered) or above sigma_max T
        want = np.clip(owed, 0.0, smax * T)
        small = want < mib  # below one bit (never true when mib == 0)
        if self.schmitt is None:
            fire_bit = small & (want >= 0.5 * mib) & (want > 0.0)
        else:
            frac = np.where(prev, self.schmitt.off_fraction, self.schmitt.on_fraction)
            fire_bit = small & (want >= frac * mib) & (want > 0.0)
        impulse = np.where(small, np.where(fire_bit, mib, 0.0), want)
        on_time = np.minimum(impulse / smax, T)
        q = self.quantum
        if q > 0.0:
            on_time = np.rint(on_time / q) * q
            shortest = np.ceil(mib / smax / q - 1e-9) * q  # minimum on-time, whole quanta
            on_time = np.where((on_time > 0.0) & (on_time < shortest), shortest, on_time)
            on_time = np.where((impulse > 0.0) & (on_time == 0.0) & fire_bit, shortest, on_time)
            on_time = np.minimum(on_time, T)
        impulse = smax * on_time
        return PulseTrain(
            period=T,
            on_time=on_time,
            thrust_level=smax.copy(),
            impulse=impulse,
            commanded_impulse=commanded,
            error=impulse - commanded,
            firing=on_time > 0.0,
            carry=owed - impulse if self.error_feedback else np.zeros(S),
        )
