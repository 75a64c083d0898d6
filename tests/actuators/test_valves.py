"""Thruster valve timing (:class:`~dqspace.actuators.valves.Valves`): opening and closing
delays and the minimum on-time, against analytic thrust times and a reference that follows
whole pulses in absolute time."""

import numpy as np
import pytest

from dqspace.actuators.valves import Valves


def _delivered_by_runs(U, T, od, cd, mot):
    """Reference for :class:`Valves`, by whole pulses in absolute time: (P, S) time on per
    period.  A pulse is a run of commanded on-time (a period's pulse reaching its end goes on
    into the next); it is executed if it lasts at least ``mot`` or starts while the thrust
    of an earlier pulse is still on, and then delivers during ``[start + od, end + cd)``."""
    P, S = U.shape
    out = np.zeros((P, S))
    for i in range(S):
        runs, k = [], 0
        while k < P:
            if U[k, i] > 0:
                start, end = k * T, k * T + U[k, i]
                while U[k, i] >= T and k + 1 < P and U[k + 1, i] > 0:
                    k += 1
                    end = k * T + U[k, i]
                runs.append((start, end))
            k += 1
        delivered, last_end = [], -np.inf
        for start, end in runs:
            if end - start >= mot or last_end > start:
                if end + cd > start + od:
                    delivered.append((start + od, end + cd))
                    last_end = end + cd
        union = []  # the thrust is on on the union of the deliveries (they may overlap)
        for a, b in delivered:
            if union and a <= union[-1][1]:
                union[-1][1] = max(union[-1][1], b)
            else:
                union.append([a, b])
        for a, b in union:
            for k in range(P):
                out[k, i] += max(0.0, min(b, (k + 1) * T) - max(a, k * T))
    return out


def test_valve_delays_and_minimum_on_time_deliver_the_analytic_thrust_times():
    # period 10, opening 2, closing 3, minimum on-time 4 (any one unit); one thruster each
    U = np.array(
        [
            # A   B   C   D   E   F   H
            [6, 8, 3, 10, 8, 10, 9],
            [0, 0, 0, 10, 3, 0, 9],
            [0, 0, 0, 5, 0, 0, 0],
            [0, 0, 0, 0, 0, 0, 0],
        ],
        float,
    )
    v = Valves(7, period=10.0, open_delay=2.0, close_delay=3.0, min_on_time=4.0)
    got = np.array([v.advance(u).on_duration for u in U])
    expected = np.array(
        [
            # A: [2, 9); B: [2, 11); C: 3 < 4 from rest, not executed; D: one pulse of 25
            # from [2, 28); E: [2, 11) then a short pulse while still firing, [12, 16);
            # F: a full period then closing, [2, 13); H: two pulses of 9 as one, [2, 22)
            [7, 8, 0, 8, 8, 8, 8],
            [0, 1, 0, 10, 5, 3, 10],
            [0, 0, 0, 8, 0, 0, 2],
            [0, 0, 0, 0, 0, 0, 0],
        ],
        float,
    )
    np.testing.assert_array_equal(got, expected)
    # each executed pulse of commanded length L lets through L - open + close
    np.testing.assert_array_equal(got.sum(0), [7, 9, 0, 26, 13, 11, 20])
    # a closing delay shorter than the opening delay eats a short pulse whole
    w = Valves(2, period=10.0, open_delay=5.0, close_delay=1.0)
    np.testing.assert_allclose(w.advance([3.0, 4.5]).on_duration, [0.0, 0.5])


@pytest.mark.parametrize("seed", range(4))
def test_valves_agree_with_whole_pulses_in_absolute_time_on_random_trains(seed):
    rng = np.random.default_rng(seed)
    T = 10.0
    od, cd = rng.uniform(0, T, 2) * [0.5, 0.9]
    mot = rng.uniform(0, T)
    P, S = 40, 6
    U = np.where(rng.uniform(size=(P, S)) < 0.5, 0.0, rng.uniform(0, T, (P, S)))
    U[rng.uniform(size=(P, S)) < 0.25] = T  # pulses running on into the next period
    v = Valves(S, period=T, open_delay=od, close_delay=cd, min_on_time=mot)
    got = []
    for u in U:
        peek = v.windows(u)
        w = v.advance(u)
        np.testing.assert_array_equal(peek.on_duration, w.on_duration)  # windows: no change
        assert np.all(w.tail_end >= 0) and np.all((w.end == w.start) | (w.tail_end <= w.start))
        assert np.all((w.start <= w.end) & (w.end <= T))
        got.append(w.on_duration)
    np.testing.assert_allclose(got, _delivered_by_runs(U, T, od, cd, mot), rtol=0, atol=1e-12)


def test_valve_timing_outside_a_period_is_refused():
    with pytest.raises(ValueError, match="open_delay"):
        Valves(1, period=0.01, open_delay=0.01)
    with pytest.raises(ValueError, match="close_delay"):
        Valves(1, period=0.01, close_delay=-1e-3)
    with pytest.raises(ValueError, match="min_on_time"):
        Valves(1, period=0.01, min_on_time=0.02)
    with pytest.raises(ValueError, match="on_time"):
        Valves(2, period=0.01).advance([0.02, 0.0])
