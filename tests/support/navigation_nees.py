"""The navigation filters' consistency in the closed loop: NEES from a replay of a run.

A closed-loop run records the plant's true state at every tick (``q``, ``v``) and what the
tick planned on the base (``arm_reaction``, ``wrench_thr``).  The navigation is a
deterministic function of those and of its seeded generators, so :func:`replay` rebuilds
the run's navigation blocks from its scenario and steps them through the same kernels the
tick calls (sense, filter, then the planned acceleration from the recorded ``wrench_cmd``,
``arm_reaction``, ``wrench_thr``), tick by tick: it reproduces the
run's estimate (the recorded ``nav_att_err``, ``nav_pos_err``, to rounding) and gives the
filters' covariances, which a run does not record.

The normalised estimation error squared at a tick: ``e^T P^-1 e`` for the attitude error
``2 vec(q^* o q)`` (3 dof, against the MEKF's attitude block) and the translation filter's
``[r^ - r, v^ - v]`` (6 dof) or its position part (3 dof).  For a consistent filter it is
chi-square with d dof at each tick, and the mean over M independent runs at one tick is
``chi2(M d) / M``: :func:`bounds`.  Shared by ``tests/scenarios/test_navigation_consistency.py``
and ``benchmarks/navigation_nees.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from dqspace.control.flight.interfaces import estimate_arrays
from dqspace.control.flight.navigation import (
    estimate_error_kernel,
    filter_kernel,
    measurement_arrays,
    planned_acceleration_kernel,
    sense_kernel,
)
from dqspace.dq import rotation_matrix_from_dq, translation_from_dq
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.flight import navigation, plant_index_of
from dqspace.scenarios.build.system import build_system


@dataclass(frozen=True)
class NEES:
    """Per tick (K,) of one run: ``attitude`` (3 dof), ``translation`` (6 dof),
    ``position`` (3 dof); ``replay_error`` the largest difference between the replayed
    and the recorded estimate errors [rad or m]."""

    attitude: np.ndarray
    translation: np.ndarray
    position: np.ndarray
    replay_error: float


def replay(scenario, result) -> NEES:
    """The NEES of a closed-loop run with sensors on (``result`` of ``run(scenario)``)."""
    sy = build_system(scenario.config)
    p, s = navigation(sy)
    ix = plant_index_of(sy)
    K = ix.gimbal_q.shape[0]
    W = ix.rw_v.shape[0]
    m = measurement_arrays(sy.arm_info.n, K, W)
    est = estimate_arrays(ix.nq_c, ix.nv_c, K, W)
    Q, V = np.asarray(result["q"]), np.asarray(result["v"])
    wrench, reaction = np.asarray(result["wrench_cmd"]), np.asarray(result["arm_reaction"])
    w_thr = np.asarray(result["wrench_thr"])
    rec_att, rec_pos = np.asarray(result["nav_att_err"]), np.asarray(result["nav_pos_err"])
    att, pos = np.empty(3), np.empty(3)
    n = len(Q)
    out = np.empty((3, n))
    worst = 0.0
    f = s.filters
    for k in range(n):
        sense_kernel(p.sensors, s.sensors, ix, k * p.filters.dt, Q[k], V[k], m)
        filter_kernel(p.filters, f, m, est)
        estimate_error_kernel(est, Q[k], att, pos)
        worst = max(worst, np.abs(att - rec_att[k]).max(), np.abs(pos - rec_pos[k]).max())
        P = f.mekf.P
        out[0, k] = att @ np.linalg.solve(P[:3, :3], att)
        x_true = np.r_[translation_from_dq(Q[k, :8]), rotation_matrix_from_dq(Q[k, :8]) @ V[k, 3:6]]
        e = f.translation.x - x_true
        P = f.translation.P
        out[1, k] = e @ np.linalg.solve(P, e)
        out[2, k] = e[:3] @ np.linalg.solve(P[:3, :3], e[:3])
        planned_acceleration_kernel(
            p.filters, est, wrench[k], reaction[k], np.zeros(6), w_thr[k], f.accel
        )
    return NEES(out[0], out[1], out[2], float(worst))


def campaign(name, overrides, seeds, duration):
    """``(attitude, translation, position, replay_error)``: the NEES (M, K) of M runs of
    scenario ``name`` with sensors on, one per seed, and the replays' largest error."""
    runs = []
    for seed in seeds:
        sets = [f"scenario.duration={duration}", "sensors.enabled=true", f"scenario.seed={seed}"]
        sc = load_scenario(name, [*sets, *overrides])
        res = run(sc, progress=False)
        assert res.status == "complete", res.status
        runs.append(replay(sc, res))
    stack = [
        np.array([getattr(r, f) for r in runs]) for f in ("attitude", "translation", "position")
    ]
    return (*stack, max(r.replay_error for r in runs))


def bounds(M: int, d: int, p: float = 0.99):
    """The two-sided ``p`` interval of the mean of M independent chi-square(d) NEES:
    ``chi2(M d) / M``."""
    a = (1.0 - p) / 2.0
    return stats.chi2.ppf([a, 1.0 - a], M * d) / M
