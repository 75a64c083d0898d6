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

Pulses start at the beginning of the period (leading-edge PWM).  The computation is the
compiled :func:`modulate_kernel` (callable from compiled flight software);
:meth:`PulseModulator.modulate` checks its arguments and wraps it.  This module decides the
firing; what the base feels is :meth:`ThrusterSet.wrench` of the instantaneous thrusts
:meth:`PulseTrain.thrust` returns (faults included).
"""

import math
from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .thrusters import ThrusterSet

__all__ = ["PulseModulator", "PulseTrain", "SchmittTrigger", "modulate_kernel"]


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
        PulseTrain (computed by :func:`modulate_kernel`)
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
        carry_in = np.zeros(S)
        if self.error_feedback and carry is not None:
            c = np.asarray(carry, dtype=float)
            if c.shape != (S,) or not np.all(np.isfinite(c)):
                raise ValueError(f"carry must be a finite ({S},) array, got {c}")
            carry_in[:] = c
        T = self.period
        on_time, impulse, carry_out = np.empty(S), np.empty(S), np.empty(S)
        fired = np.empty(S, dtype=bool)
        sch = self.schmitt
        on, off = (0.5, 0.5) if sch is None else (sch.on_fraction, sch.off_fraction)
        modulate_kernel(
            np.ascontiguousarray(s), smax, ts.min_impulse_bit, T, on, off, self.quantum,
            self.error_feedback, np.ascontiguousarray(prev), carry_in,
            on_time, impulse, fired, carry_out,
        )  # fmt: skip
        commanded = np.clip(s, 0.0, smax) * T
        return PulseTrain(
            period=T,
            on_time=on_time,
            thrust_level=smax.copy(),
            impulse=impulse,
            commanded_impulse=commanded,
            error=impulse - commanded,
            firing=fired,
            carry=carry_out,
        )


@njit(cache=True)
def modulate_kernel(
    sigma: NDArray[np.float64],
    sigma_max: NDArray[np.float64],
    min_impulse_bit: NDArray[np.float64],
    period: float,
    on_fraction: float,
    off_fraction: float,
    quantum: float,
    error_feedback: bool,
    firing_prev: NDArray[np.bool_],
    carry_in: NDArray[np.float64],
    on_time: NDArray[np.float64],
    impulse: NDArray[np.float64],
    firing: NDArray[np.bool_],
    carry: NDArray[np.float64],
) -> None:
    """One period of pulse modulation (compiled; the one implementation, module docstring).

    Per thruster, with ``T = period``, ``I_min = min_impulse_bit`` and ``q = quantum``::

        owed = clip(sigma, 0, sigma_max) T  (+ carry_in with error feedback)
        want = clip(owed, 0, sigma_max T)
        want <  I_min: fire one bit if want > 0 and want >= f I_min, f = off_fraction if
                       the thruster fired in the previous period else on_fraction
                       (plain rounding: on_fraction = off_fraction = 0.5)
        want >= I_min: deliver want
        on_time = min(impulse / sigma_max, T), then with q > 0 rounded to whole quanta
                  (half to even), at least the minimum on-time rounded up to a quantum
        impulse = sigma_max on_time,  carry = owed - impulse (0 without error feedback)

    Parameters
    ----------
    sigma : (S,) commanded thrusts [N] (clipped to ``[0, sigma_max]`` here)
    sigma_max : (S,) thrust while on [N]
    min_impulse_bit : (S,) [N s], each at most ``sigma_max period``
    period : float, T [s]
    on_fraction, off_fraction : float, Schmitt-trigger thresholds (0.5, 0.5 for rounding)
    quantum : float, pulse-width quantum [s] (0: none); ``period`` a whole number of them
    error_feedback : bool, add ``carry_in`` to the command and write the new ``carry``
    firing_prev : (S,) bool, which thrusters fired in the previous period
    carry_in : (S,) impulse still owed from the previous period [N s]
    on_time : (S,) written, pulse widths from the start of the period [s]
    impulse : (S,) written, delivered impulse ``sigma_max on_time`` [N s]
    firing : (S,) bool written, ``on_time > 0``
    carry : (S,) written, impulse still owed [N s] (zeros without error feedback)
    """
    T = period
    q = quantum
    for i in range(sigma.shape[0]):
        smax = sigma_max[i]
        mib = min_impulse_bit[i]
        owed = min(max(sigma[i], 0.0), smax) * T
        if error_feedback:
            owed += carry_in[i]  # may be negative (over-delivered) or above sigma_max T
        want = min(max(owed, 0.0), smax * T)
        small = want < mib  # below one bit (never true when mib == 0)
        frac = off_fraction if firing_prev[i] else on_fraction
        fire_bit = small and want >= frac * mib and want > 0.0
        imp = (mib if fire_bit else 0.0) if small else want
        t_on = min(imp / smax, T)
        if q > 0.0:
            t_on = np.rint(t_on / q) * q
            shortest = math.ceil(mib / smax / q - 1e-9) * q  # minimum on-time, whole quanta
            if t_on > 0.0 and t_on < shortest:
                t_on = shortest
            if imp > 0.0 and t_on == 0.0 and fire_bit:
                t_on = shortest
            t_on = min(t_on, T)
        on_time[i] = t_on
        impulse[i] = smax * t_on
        firing[i] = t_on > 0.0
        carry[i] = owed - impulse[i] if error_feedback else 0.0
