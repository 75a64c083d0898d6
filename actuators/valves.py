"""Thruster valve timing: when a commanded on/off pulse actually delivers thrust.

An opening delay after the command's rising edge, a closing delay after its falling edge,
and a minimum on-time below which a pulse is not executed (:class:`Valves`); the thrust
windows of one control period are a :class:`ValveWindows`.  The pulses come from
:mod:`dqspace.actuators.pwm`; the wrench the thrust produces is
:meth:`dqspace.actuators.thrusters.ThrusterSet.wrench`.
"""

from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ._checks import finite_scalar

__all__ = ["ValveWindows", "Valves", "valve_plan_kernel"]


@dataclass(frozen=True, eq=False)
class ValveWindows:
    """When the thrusters deliver thrust during one control period (times from its start,
    in the :class:`Valves`' time unit, within ``[0, period]``).

    Attributes
    ----------
    tail_end : (S,) array
        Thrust from earlier periods' pulses (still open, or closing) during ``[0, tail_end)``.
    start, end : (S,) arrays
        This period's pulse delivers thrust during ``[start, end)`` (``start == end``: none).
    """

    tail_end: NDArray[np.float64]
    start: NDArray[np.float64]
    end: NDArray[np.float64]

    @property
    def on_duration(self) -> NDArray[np.float64]:
        """(S,) time each thruster delivers thrust during the period."""
        return self.tail_end + (self.end - self.start)


class Valves:
    """The valves of ``n`` thrusters fired by leading-edge pulses, period after period.

    Each period a thruster is commanded on during ``[0, on_time)`` (the pulses of
    :mod:`dqspace.actuators.pwm`).  A commanded pulse ``[t_r, t_f)`` delivers thrust during
    ``[t_r + open_delay, t_f + close_delay)``: the valve opens ``open_delay`` after the
    command's rising edge and closes ``close_delay`` after its falling edge.  A pulse that
    reaches the end of its period and goes on in the next one is one pulse (the valve stays
    open).  **Minimum on-time**: a pulse shorter than ``min_on_time`` that starts while the
    thruster is not delivering thrust is not executed at all (the valve driver ignores it,
    as Basilisk's thruster model does with on-time requests below ``MinOnTime``); while the
    thruster still delivers thrust (a pulse running on, or closing) a short pulse is
    executed and extends the firing.

    Times in any one unit (seconds, or dynamics steps as the scenario's plant uses);
    ``0 <= open_delay < period``, ``0 <= close_delay < period``,
    ``0 <= min_on_time <= period``, so that a pulse's thrust ends within the next period.
    With all three zero the thrust is the commanded pulse exactly.

    :meth:`windows` says when the thrust is on during the coming period, without changing
    the valves' state; :meth:`advance` does the same and moves on to the next period.
    """

    def __init__(
        self,
        n: int,
        *,
        period: float,
        open_delay: float = 0.0,
        close_delay: float = 0.0,
        min_on_time: float = 0.0,
    ) -> None:
        T = finite_scalar(period, "period", "valves")
        if T <= 0.0:
            raise ValueError(f"valves: period must be > 0, got {T}")
        od = finite_scalar(open_delay, "open_delay", "valves")
        cd = finite_scalar(close_delay, "close_delay", "valves")
        mot = finite_scalar(min_on_time, "min_on_time", "valves")
        for name, x, hi in (("open_delay", od, T), ("close_delay", cd, T)):
            if not 0.0 <= x < hi:
                raise ValueError(
                    f"valves: {name} = {x} must be >= 0 and shorter than the control "
                    f"period {T} (the same time unit)"
                )
        if not 0.0 <= mot <= T:
            raise ValueError(
                f"valves: min_on_time = {mot} must be >= 0 and at most the control period {T}"
            )
        self.n, self.period = int(n), T
        self.open_delay, self.close_delay, self.min_on_time = od, cd, mot
        self.ideal = od == cd == mot == 0.0
        # end of the thrust still coming from earlier pulses, from the coming period's start:
        # <= 0 none, +inf a pulse commanded up to the end of the last period
        self._carry = np.full(self.n, -np.inf)

    def _plan(self, on_time):
        u = np.asarray(on_time, dtype=float)
        T = self.period
        if u.shape != (self.n,) or not ((u >= 0.0).all() and (u <= T * (1.0 + 1e-12)).all()):
            raise ValueError(f"valves: on_time must be ({self.n},) within [0, {T}], got {u}")
        w = ValveWindows(np.empty(self.n), np.empty(self.n), np.empty(self.n))
        carry = np.empty(self.n)
        valve_plan_kernel(
            np.ascontiguousarray(u), T, self.open_delay, self.close_delay, self.min_on_time,
            self._carry, w.tail_end, w.start, w.end, carry,
        )  # fmt: skip
        return w, carry

    def windows(self, on_time: ArrayLike) -> ValveWindows:
        """When the thrust is on during the coming period for the pulses ``on_time`` (n,)
        (commanded on during ``[0, on_time)``); the state is not changed."""
        u = np.array(on_time, dtype=float)
        plan = self._plan(u)
        self._last = (u, plan)  # advance() with the same pulses does not plan again
        return plan[0]

    def advance(self, on_time: ArrayLike) -> ValveWindows:
        """:meth:`windows`, then move on to the next period."""
        last = getattr(self, "_last", None)
        if last is not None and np.array_equal(last[0], on_time):
            w, self._carry = last[1]
        else:
            w, self._carry = self._plan(on_time)
        self._last = None
        return w


@njit(cache=True)
def valve_plan_kernel(
    on_time, period, open_delay, close_delay, min_on_time, carry, tail_end, start, end, carry_out
):
    """One period of :class:`Valves` (compiled; the one implementation): when the thrust is
    on during the coming period for the pulses ``on_time`` (n,) commanded on during ``[0,
    on_time)``, given ``carry`` (n,) the end of the thrust still coming from earlier pulses,
    counted from this period's start (<= 0: none; +inf: a pulse commanded up to the end of
    the last period).  Writes ``tail_end``, ``start``, ``end`` (n,) (the
    :class:`ValveWindows`) and ``carry_out`` (n,), the carry of the next period.  Times in
    one unit (e.g. dynamics steps); the delays and ``min_on_time`` as :class:`Valves`
    checks them."""
    T = period
    ideal = open_delay == 0.0 and close_delay == 0.0 and min_on_time == 0.0
    for i in range(on_time.shape[0]):
        u = on_time[i]
        if ideal:  # the thrust is the commanded pulse; nothing carries over
            tail_end[i] = 0.0
            start[i] = 0.0
            end[i] = u
            carry_out[i] = carry[i]
            continue
        c = carry[i]
        running = c == np.inf  # commanded on up to this period's start
        firing = c > 0.0  # delivering thrust at this period's start
        on = u > 0.0
        accepted = on and (running or firing or u >= min_on_time * (1.0 - 1e-12))
        a = 0.0 if running else open_delay
        b = np.inf if u >= T else u + close_delay
        new = accepted and b > a
        if running:
            tail = 0.0 if on else close_delay
        else:
            tail = max(c, 0.0)
        if new:
            tail = min(tail, a)
        tail_end[i] = min(tail, T)
        start[i] = a if new else 0.0
        end[i] = min(b, T) if new else 0.0
        carry_out[i] = (b if new else tail) - T
