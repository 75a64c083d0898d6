"""The arm's reaction on the base as the plant applied it (``arm_reaction_applied``),
against two independent references:

(a) a run with no thruster, no momentum device and the arm moving: the system's momentum
    stays constant, and the base body's momentum changes at the rate of the applied
    reaction (finite differences of the recorded base twist and pose);
(b) at random states, accelerations and velocities, the reaction through the arm's joints
    (inverse dynamics) equals the difference of the base rows of ``M a + C`` between the
    system without the arm and the whole system (composite-rigid-body mass matrices), by
    dqspace's mass matrix and by Pinocchio's.
"""

import numpy as np
import pinocchio as pin
import pytest

from dqspace.dq import rotation_matrix_from_quat, translation_from_dq
from dqspace.multibody import Body, Model, bias_forces, mass_matrix, momentum
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.flight import flight_software
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.sim.plant import Plant
from dqspace.scenarios.sim.reaction import (
    AppliedReaction,
    applied_reaction_kernel,
    arm_reaction_kernel,
    arm_roots,
)
from support.pin_bridge import q_to_pin, to_pinocchio, v_from_pin, v_to_pin

#: the arm alone acts on the base: no thruster, no VSCMG, no wheel, no base law (its
#: wrench is zero, so the arm's law plans for the free base it has); the task starts at once
FREE_FLYING = [
    "scenario.duration=1.5",
    "thrusters.enabled=false",
    "vscmg.enabled=false",
    "trajectory.start_time=0.1",
    "trajectory.ramp_time=0.5",
    *(f"base_controller.{k}=[0, 0, 0]" for k in ("kp_trans", "kd_trans", "kp_rot", "kd_rot")),
    "base_controller.feedforward=false",
]


def _inertial(q, w):
    """A wrench [f, tau] (base frame, about the base origin) in the inertial frame, about
    the inertial origin."""
    R = rotation_matrix_from_quat(q[:4])
    r = translation_from_dq(q[:8])
    f, tau = R @ w[:3], R @ w[3:]
    return np.r_[f, tau + np.cross(r, f)]


def _momenta(model, q, v):
    return np.array([np.r_[m.linear, m.angular] for m in map(momentum, [model] * len(q), q, v)])


@pytest.fixture(scope="module", params=[False, True], ids=["no_delay", "delay"])
def free_flying(request):
    over = [*FREE_FLYING, f"control.computation_delay={str(request.param).lower()}"]
    sc = load_scenario("station-keeping", over)
    return run(sc, progress=False), build_system(sc.config), request.param


def _at_period_ends(res, sy, delay):
    """The reaction at the end of each period, t_k+1 from the left (the state at t_k+1,
    the commands held over period k), from the recorded series: what the run's
    ``arm_reaction_applied`` (the start of each period) does not give."""
    plant = Plant(sy)
    index = flight_software(sy).index
    R = AppliedReaction(sy, plant, index, delay)
    T = float(np.median(np.diff(res.t)))
    cmds = [
        np.asarray(res[n], float)
        for n in ("arm_tau", "rw_torque_cmd", "gimbal_rate_cmd", "wheel_accel_cmd")
    ]
    if delay:  # period k holds tick k - 1's commands (none before the first tick)
        cmds = [np.concatenate([np.zeros_like(c[:1]), c[:-1]]) for c in cmds]
    m = len(res.t) - 1
    out = np.zeros((m, 6))
    c = np.ascontiguousarray
    applied_reaction_kernel(
        R.ints, R.reals, R.gravity, R.inputs, R.params, R.steps, R.arm_v, R.rw_v, R.roots,
        c(res.t[:-1]), c(res["q"][1:]), c(res["v"][1:]), *(c(x[:-1]) for x in cmds),
        c(res["thrust_impulse_true"][:-1] / T), np.zeros((m, 6)), out,
    )  # fmt: skip
    return out


def test_without_external_forces_the_base_momentum_changes_at_the_applied_reaction(free_flying):
    res, sy, delay = free_flying
    plant = sy.plant
    q, v, t = res["q"], res["v"], res.t
    T = float(np.median(np.diff(t)))
    react = res["arm_reaction_applied"]
    assert np.isfinite(react).all() and np.abs(react).max() > 0.05  # the arm moved
    assert np.abs(res["ee_err"]).max() < 1e-3  # and tracked its task (a stable loop)
    # (1) nothing outside: the system's momentum is constant (up to RK4's rounding)
    h = _momenta(plant, q, v)
    assert np.abs(h - h[0]).max() < 1e-12
    # (2) the base body alone: d/dt of its momentum (inertial frame) is the reaction on it
    hb = _momenta(Model.build([plant.bodies()[0]]), q[:, :8], v[:, :6])
    F = np.array([_inertial(a, w) for a, w in zip(q, react, strict=True)])
    F_end = np.array(
        [_inertial(a, w) for a, w in zip(q[1:], _at_period_ends(res, sy, delay), strict=True)]
    )
    dh = np.diff(hb, axis=0)
    # over the period [t_k, t_k+1] the torques are held and the reaction changes with the
    # state alone, by held = F_end - F_k.  The forward difference of the base momentum is
    # T F_k + (T^2 / 2) F' with F' ~ held / T: its error is at most T / 2 times the largest
    # such change (margin 1.5: F' varies inside a period) ...
    held = F_end - F[:-1]
    forward = np.abs(dh - T * F[:-1]).max(axis=0)
    assert (forward <= 1.5 * 0.5 * T * np.abs(held).max(axis=0)).all(), forward
    # ... and the trapezoid's of the period's two ends is (T^3 / 12) F'', F'' ~ the change
    # of held from one period to the next over T^2 (margin 2)
    trapezoid = np.abs(dh - 0.5 * T * (F[:-1] + F_end)).max(axis=0)
    curvature = np.abs(np.diff(held, axis=0)).max(axis=0)
    assert (trapezoid <= 2.0 * T / 12.0 * curvature).all(), trapezoid
    assert (trapezoid < 0.05 * forward).all()  # second order: far below the first
    # the reaction's step at each tick (the torques held change) is much larger than its
    # change within a period: a command one period early or late would break the books
    # by T times the step (the computation delay is in the commands held)
    step = np.abs(F[1:] - F_end).max(axis=0)
    assert (T * step > 20 * forward).all()


# ------------------------------------------------------------------ (b) random states


def _subtree(model, roots):
    out = set(int(r) for r in roots)
    for k in range(model.nb):
        if int(model.parent[k]) in out:
            out.add(k)
    return out


def _without(model, drop):
    """The model without the bodies ``drop`` (a subtree), and the v and q indices of the
    bodies kept, in the model's order."""
    bodies = model.bodies()
    names = model.body_names
    kept = [k for k in range(model.nb) if k not in drop]
    out = [
        Body(b.name, None if b.parent is None else names[b.parent], b.joint, b.mass, b.com,
             b.inertia)
        for k, b in enumerate(bodies)
        if k in kept
    ]  # fmt: skip
    qi = np.concatenate([np.arange(model.nq)[model.q_slice(k)] for k in kept])
    vi = np.concatenate([np.arange(model.nv)[model.v_slice(k)] for k in kept])
    return Model.build(out, gravity=model.gravity), qi, vi


def _pin_m_a_c(pm, pd, model, q, v, a):
    """Pinocchio's ``M a + C`` (its CRBA, upper triangle mirrored, and its non-linear
    effects), in dqspace's order."""
    qp, vp, ap = q_to_pin(model, q), v_to_pin(model, v), v_to_pin(model, a)
    M = pin.crba(pm, pd, qp)
    M = np.triu(M) + np.triu(M, 1).T
    return v_from_pin(model, M @ ap + pin.nonLinearEffects(pm, pd, qp, vp))


def _swap(x):
    return np.r_[x[3:6], x[0:3]]


@pytest.mark.parametrize("scenario", ["station-keeping", "ur5-waypoints"])
def test_the_reaction_through_the_arms_joints_is_the_mass_matrix_routes(scenario):
    sy = build_system(load_scenario(scenario, ["scenario.duration=0.1"]).config)
    plant = sy.plant
    index = flight_software(sy).index
    roots = arm_roots(plant, index)
    arm = _subtree(plant, roots)
    devices = {k for k in range(1, plant.nb) if k not in arm}
    assert roots.size >= 1 and devices  # VSCMG gimbals and wheels / reaction wheels
    assert all(int(plant.parent[k]) == 0 for k in roots)
    rest, qi, vi = _without(plant, arm)
    ints, reals = plant.packed
    pm, rm = to_pinocchio(plant), to_pinocchio(rest)
    pd, rd = pm.createData(), rm.createData()
    rng = np.random.default_rng(7)
    for _ in range(10):
        q = plant.random_configuration(rng, angle=1.5, translation=0.5)
        v = rng.normal(0.0, 0.7, plant.nv)
        a = rng.normal(0.0, 2.0, plant.nv)
        out = np.empty(6)
        arm_reaction_kernel(
            ints, reals, plant.gravity, q, v, a, np.zeros((0, 6)), roots,
            np.empty(plant.nv), np.empty((plant.nb, 6)), out,
        )  # fmt: skip
        # dqspace: M by composite rigid bodies, C by the recursion at a = 0
        full = mass_matrix(plant, q) @ a + bias_forces(plant, q, v)
        qr, vr, ar = q[qi], v[vi], a[vi]
        alone = mass_matrix(rest, qr) @ ar + bias_forces(rest, qr, vr)
        expected = _swap(alone[:6]) - _swap(full[:6])
        np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
        # Pinocchio: its CRBA and non-linear effects (base rows [f, tau], base frame)
        tf = _pin_m_a_c(pm, pd, plant, q, v, a)
        tr = _pin_m_a_c(rm, rd, rest, qr, vr, ar)
        np.testing.assert_allclose(
            out, _swap(tr[:6]) - _swap(tf[:6]), rtol=1e-9, atol=1e-9 * np.abs(expected).max()
        )


# ------------------------------------------------------------------ against the plan


def test_the_applied_reaction_departs_from_the_plan_by_the_thrusters_pulses():
    """Station-keeping: with continuous thrust the arm moves as planned on a base held
    still, and the applied reaction is the planned one within a few percent; pulsed
    thrusters accelerate the base period by period, and the arm's reaction with it."""
    runs = {
        pwm: run(
            load_scenario("station-keeping", ["scenario.duration=3", f"thrusters.pwm={pwm}"]),
            progress=False,
        )
        for pwm in ("false", "true")
    }
    for pwm, res in runs.items():
        a, p = res["arm_reaction_applied"], res["arm_reaction"]
        for part in (slice(0, 3), slice(3, 6)):  # force [N], torque [N m]
            peak = np.abs(p[:, part]).max()
            off = np.abs(a[:, part] - p[:, part]).max()
            assert peak > 0.3
            if pwm == "false":
                assert off < 0.05 * peak, (part, off, peak)
            else:
                assert off > 0.1 * peak, (part, off, peak)
