"""The navigation filters are consistent in the closed loop, and their prediction is the
controller model's dynamics.

Consistency (``tests/support/navigation_nees.py``): station-keeping with sensors on, no
dispersions (and again with an unknown constant force on the base), M = 10 seeds of 5 s
each; each run's navigation is replayed from what it recorded (reproducing its estimate)
to get the filters' covariances, and the NEES of the attitude MEKF (3 dof) and of the
translation filter's position (3 dof) are averaged over the seeds and over the ticks after
the first second (the filters start at the truth with one sample's covariance).  The mean
over M independent runs at one tick is ``chi2(M d) / M``; the time average of such means,
identically distributed and positively correlated, is less spread than any one of them,
so the per-tick 99 % interval bounds it conservatively.  It must lie inside; and at least
90 % of the ticks' seed means too (99 % expected for a consistent filter; neighbouring
ticks are correlated, so whole stretches move together).

A filter told a measurement noise 100 times too small or too large, a translation filter
whose process noise is 100 times too small for the unknown force, or the rate gyro
sampled at the tick and held over the period (the gyro before the rate-integrating one:
attitude NEES ~17 against [1.38, 5.37]) fails the same test.
"""

from functools import cache

import numpy as np
import pytest

from dqspace.control.flight.interfaces import estimate_arrays
from dqspace.control.flight.navigation import planned_acceleration_kernel
from dqspace.dq import rotation_matrix_from_dq, swap
from dqspace.multibody import forward_dynamics_aba, integrate, inverse_dynamics, rk4_step
from dqspace.scenarios import load_scenario
from dqspace.scenarios.build.flight import navigation
from dqspace.scenarios.build.system import build_system
from support.navigation_nees import bounds, campaign

SK = "station-keeping"
M, DURATION, SKIP = 10, 5.0, 100  # seeds, [s], ticks left out (1 s)
#: a constant force on the base the flight software does not know of [N] (the dispersed
#: disturbance's size), covered by the translation filter's default process noise
FORCE = "disturbance.force=[0.1, -0.08, 0.05]"
FILTERS = {"attitude": 0, "position": 2}


@cache
def _campaign(*overrides):
    return campaign(SK, list(overrides), range(M), DURATION)


def _verdict(nees, d=3):
    """(grand mean, fraction of ticks whose seed mean is inside, (lo, hi))."""
    lo, hi = bounds(nees.shape[0], d)
    per_tick = nees[:, SKIP:].mean(axis=0)
    return per_tick.mean(), np.mean((per_tick >= lo) & (per_tick <= hi)), (lo, hi)


def test_the_replay_reproduces_each_runs_estimate():
    assert _campaign()[3] <= 1e-15  # [rad, m]: the recorded estimate errors, to rounding


@pytest.mark.parametrize("which", FILTERS)
@pytest.mark.parametrize("overrides", [(), (FORCE,)], ids=["nominal", "unknown-force"])
def test_both_filters_nees_lie_within_the_chi_square_bounds(overrides, which):
    mean, inside, (lo, hi) = _verdict(_campaign(*overrides)[FILTERS[which]])
    assert lo <= mean <= hi, (mean, lo, hi)
    assert inside >= 0.9, inside


@pytest.mark.parametrize(
    "overrides,which,side",
    [
        (("sensors.attitude_measurement_noise_scale=0.01",), "attitude", "high"),
        (("sensors.gyro_model=instantaneous",), "attitude", "high"),
        (("sensors.translation_measurement_noise_scale=0.01",), "position", "high"),
        (("sensors.translation_measurement_noise_scale=100",), "position", "low"),
        ((FORCE, "sensors.translation_accel_psd=1e-8"), "position", "high"),
    ],
    ids=["star-tracker-trusted", "rate-gyro-held", "relnav-trusted", "relnav-distrusted",
         "process-noise-too-small"],
)  # fmt: skip
def test_a_mis_tuned_filter_fails_the_same_test(overrides, which, side):
    mean, inside, (lo, hi) = _verdict(_campaign(*overrides)[FILTERS[which]])
    assert (mean > hi) if side == "high" else (mean < lo), (mean, lo, hi)
    assert inside < 0.5, inside


@pytest.fixture(scope="module")
def system():
    return build_system(load_scenario(SK, ["sensors.enabled=true"]).config)


def _state(system, seed):
    """A controller-model state away from rest: turned, moving, the arm bent."""
    cm = system.controller_model
    rng = np.random.default_rng(seed)
    q = integrate(cm, system.q0[: cm.nq], rng.normal(0.0, 0.5, cm.nv))
    return cm, q, rng.normal(0.0, 0.5, cm.nv), rng


def _predict(system, q, v, wrench, reaction, w_thr):
    p, _ = navigation(system)
    cm = system.controller_model
    est = estimate_arrays(cm.nq, cm.nv, 0, 0)
    est.q[:] = q
    est.v[:] = v
    accel = np.empty(3)
    planned_acceleration_kernel(p.filters, est, wrench, reaction, np.zeros(6), w_thr, accel)
    return accel


def _reaction(cm, q, v, a):
    """The arm's reaction on a base held still while its joints accelerate by a[6:]."""
    return -swap(inverse_dynamics(cm, q, v, np.r_[np.zeros(6), a[6:]])[:6])


def test_the_prediction_is_the_base_acceleration_the_dynamics_give(system):
    """Base and arm accelerations a chosen, the generalized forces they need by RNEA: the
    prediction from the thrusters' force, the law's torque and the arm's reaction is the
    base origin's inertial acceleration ``R (dv + w x v)``, and ABA (a second algorithm)
    gives the same a from those forces."""
    for seed in range(3):
        cm, q, v, rng = _state(system, seed)
        a = rng.normal(0.0, 1.0, cm.nv)
        tau = inverse_dynamics(cm, q, v, a)
        np.testing.assert_allclose(forward_dynamics_aba(cm, q, v, tau), a, atol=1e-9)
        u = swap(tau[:6])  # [f, tau] the base needs: the thrusters' force, the law's torque
        wrench = np.r_[rng.normal(0.0, 1.0, 3), u[3:]]  # its force is not used
        w_thr = np.r_[u[:3], rng.normal(0.0, 1.0, 3)]  # nor the thrusters' torque
        got = _predict(system, q, v, wrench, _reaction(cm, q, v, a), w_thr)
        R = rotation_matrix_from_dq(q[:8])
        np.testing.assert_allclose(got, R @ (a[3:6] + np.cross(v[:3], v[3:6])), atol=1e-10)


def test_the_prediction_is_what_the_integrated_motion_does(system):
    """The convention checked on the motion itself: the inertial velocity of the base's
    origin, ``R v[3:6]``, integrated (RK4) under constant generalized forces, changes at
    the rate predicted at the middle of two steps (central difference, step 1e-5 s)."""
    cm, q, v, rng = _state(system, 7)
    tau = rng.normal(0.0, 5.0, cm.nv)
    h = 1e-5
    s0 = (q, v)
    s1 = rk4_step(cm, *s0, h, lambda t: tau)
    s2 = rk4_step(cm, *s1, h, lambda t: tau)
    a = forward_dynamics_aba(cm, *s1, tau)
    u = swap(tau[:6])
    got = _predict(system, *s1, u, _reaction(cm, *s1, a), u)

    def v_inertial(s):
        return rotation_matrix_from_dq(s[0][:8]) @ s[1][3:6]

    fd = (v_inertial(s2) - v_inertial(s0)) / (2 * h)
    w_x_v = rotation_matrix_from_dq(s1[0][:8]) @ np.cross(s1[1][:3], s1[1][3:6])
    assert np.linalg.norm(w_x_v) > 0.1 * np.linalg.norm(got)  # the rotation term matters
    np.testing.assert_allclose(got, fd, rtol=0, atol=1e-7 * np.linalg.norm(got))
