"""The centre-of-mass hold base law (dqspace.control.com_hold, ``base_controller.translation
= "com"``).

References: Pinocchio's ``centerOfMass`` (position, velocity and acceleration) and
``computeCentroidalMomentum``; its ``crba`` and ``rnea`` for the base's acceleration under
the commanded wrench; the physical invariant that internal forces do not move the centre of
mass (the law's force is zero to rounding when the centre of mass is on its reference,
whatever the arm does); a finite difference of the reference along its own motion; and, in
the closed loop, the base-position law on the same run (its force demand is the arm's
reaction).
"""

import numpy as np
import pinocchio as pin
import pytest

from dqspace.control import (
    BaseController,
    CoMHoldController,
    PDGains,
    PoseReference,
    State,
    StationKeepingFeedback,
    linearize,
)
from dqspace.control.com_hold import com_offset
from dqspace.control.flight.law import StationKeepingLaw
from dqspace.dq import dq_mul, dq_screw_exp
from dqspace.multibody import models
from dqspace.scenarios import ScenarioError, load_scenario, run
from support.pin_bridge import q_to_pin, to_pinocchio, v_from_pin, v_to_pin

GAINS = PDGains(kp_rot=40.0, kd_rot=60.0, kp_trans=600.0, kd_trans=500.0)


@pytest.fixture(scope="module")
def robot():
    return models.space_manipulator()


def _pin(model):
    pm = to_pinocchio(model)
    return pm, pm.createData()


def _zero_momentum(model, q, v):
    """``v`` with the base's linear velocity set so that the linear momentum is zero (the
    momentum is linear in it: three unit columns from Pinocchio's centroidal momentum)."""
    pm, pd = _pin(model)

    def p(vv):
        return pin.computeCentroidalMomentum(pm, pd, q_to_pin(model, q), v_to_pin(model, vv))

    v = v.copy()
    v[3:6] = 0.0
    p0 = p(v).linear.copy()
    J = np.array([p(np.r_[np.zeros(3), e, np.zeros(model.nv - 6)]).linear for e in np.eye(3)]).T
    v[3:6] = -np.linalg.solve(J, p0)
    return v


def test_the_centre_of_mass_and_its_velocity_are_pinocchios(robot, rng):
    """At random states: the law's centre of mass and its velocity (linear momentum / total
    mass) equal Pinocchio's ``centerOfMass`` and ``computeCentroidalMomentum / mass``."""
    pm, pd = _pin(robot)
    law = CoMHoldController(robot, GAINS, np.zeros(3))
    mass = pin.computeTotalMass(pm)
    for _ in range(5):
        q = robot.random_configuration(rng, translation=0.5)
        v = rng.normal(size=robot.nv)
        c, c_dot = law.com(State(q, v))
        qp, vp = q_to_pin(robot, q), v_to_pin(robot, v)
        pin.centerOfMass(pm, pd, qp, vp)
        np.testing.assert_allclose(c, pd.com[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(c_dot, pd.vcom[0], rtol=0, atol=1e-12)
        h = pin.computeCentroidalMomentum(pm, pd, qp, vp)
        np.testing.assert_allclose(c_dot, h.linear / mass, rtol=0, atol=1e-12)


def _base_acceleration(model, q, v, wrench, arm_acc):
    """The base's acceleration (6,) [dw, dv] (dqspace order, body axes) under the base
    wrench ``[f, tau]`` while the joints accelerate by ``arm_acc``, and the full
    acceleration (nv,): Pinocchio's ``crba`` and ``rnea`` (base rows ``M_bb a_b + M_bm acc
    + h_b = [f, tau]``)."""
    pm, pd = _pin(model)
    qp, vp = q_to_pin(model, q), v_to_pin(model, v)
    M = pin.crba(pm, pd, qp)
    M = np.triu(M) + np.triu(M, 1).T
    h = pin.rnea(pm, pd, qp, vp, np.zeros(model.nv))
    a = v_to_pin(model, np.r_[np.zeros(6), arm_acc])  # the joints' part
    rhs = np.asarray(wrench, float) - M[:6, 6:] @ a[6:] - h[:6]  # pin's free flyer: [f, tau]
    a[:6] = np.linalg.solve(M[:6, :6], rhs)
    return v_from_pin(model, a)[:6], a


def test_on_its_reference_the_force_is_zero_while_the_base_moves(robot, rng):
    """Perfect knowledge, no disturbance, the centre of mass on its (held) reference with
    zero velocity (zero linear momentum) and the base attitude on its reference, the arm
    moving and accelerating: the commanded force is zero to rounding although the base
    itself moves (internal motion), where the base-position law commands the arm's
    reaction.  Under the commanded wrench Pinocchio's dynamics give the centre of mass no
    acceleration and the base no angular acceleration (the attitude feedforward)."""
    pm, pd = _pin(robot)
    for _ in range(3):
        q = robot.random_configuration(rng, translation=0.5)
        v = rng.normal(size=robot.nv)
        v[:3] = 0.0  # the base does not turn
        v = _zero_momentum(robot, q, v)
        arm_acc = rng.normal(size=robot.nv - 6)
        ref = PoseReference(q[:8].copy(), np.zeros(6), np.zeros(6))
        law = CoMHoldController.from_configuration(robot, GAINS, q)
        cmd = law(0.0, State(q, v), ref, arm_acc=arm_acc)
        pd_cmd = BaseController(robot, GAINS)(0.0, State(q, v), ref, arm_acc=arm_acc)
        reaction = np.linalg.norm(pd_cmd.force)
        assert reaction > 1.0  # [N] the base-position law pushes against the arm
        assert np.linalg.norm(cmd.force) < 1e-12 * reaction  # measured ~3e-14 N
        assert np.linalg.norm(v[3:6]) > 1e-3  # [m/s] the base moves
        a_b, a = _base_acceleration(robot, q, v, cmd.wrench, arm_acc)
        np.testing.assert_allclose(a_b[:3], 0.0, atol=1e-12)  # attitude held
        pin.centerOfMass(pm, pd, q_to_pin(robot, q), v_to_pin(robot, v), a)
        np.testing.assert_allclose(pd.acom[0], 0.0, atol=1e-12)  # the centre of mass stays
        # the base-position law's feedforward holds the base instead: its origin does not
        # accelerate, the centre of mass does
        a_b, a = _base_acceleration(robot, q, v, pd_cmd.feedforward, arm_acc)
        np.testing.assert_allclose(a_b, 0.0, atol=1e-11)
        pin.centerOfMass(pm, pd, q_to_pin(robot, q), v_to_pin(robot, v), a)
        assert np.linalg.norm(pd.acom[0]) > 1e-3


def test_the_force_makes_the_reference_acceleration_of_a_moving_reference(robot, rng):
    """A base reference on a screw motion (constant body twist): the reference's
    acceleration is the second central difference of the reference position along the
    motion; with the centre of mass and its velocity on their references, Pinocchio's
    centre-of-mass acceleration under the commanded wrench is that acceleration."""
    pm, pd = _pin(robot)
    q = robot.random_configuration(rng, translation=0.5)
    law = CoMHoldController(robot, GAINS, rng.normal(size=3) * 0.2)
    xi = np.r_[0.3 * rng.normal(size=3), 0.2 * rng.normal(size=3)]  # body twist [w, v]

    def ref(t):
        return PoseReference(dq_mul(q[:8], dq_screw_exp(0.5 * xi * t)), xi, np.zeros(6))

    h = 1e-4
    c = [law.com_reference(ref(t))[0] for t in (-h, 0.0, h)]
    c_ref, c_dot, c_acc = law.com_reference(ref(0.0))
    np.testing.assert_allclose(c_dot, (c[2] - c[0]) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(c_acc, (c[2] - 2 * c[1] + c[0]) / h**2, atol=1e-5)
    # a state on the reference: the law's own offset at q, velocity on the reference's
    q = q.copy()
    law = CoMHoldController.from_configuration(robot, GAINS, q)
    v = np.r_[xi, rng.normal(size=robot.nv - 6)]
    c_now, c_now_dot = law.com(State(q, v))
    c_ref, c_dot, c_acc = law.com_reference(ref(0.0))
    np.testing.assert_allclose(c_now, c_ref, atol=1e-12)
    # shift the base's linear velocity so that the centre of mass moves as the reference
    R = pin.Quaternion(q[0], q[1], q[2], q[3]).toRotationMatrix()
    mass = pin.computeTotalMass(pm)
    J_lin = mass * R  # d p / d v_lin: the whole mass moves with the base's origin
    v[3:6] += np.linalg.solve(J_lin, mass * (c_dot - c_now_dot))
    np.testing.assert_allclose(law.com(State(q, v))[1], c_dot, atol=1e-12)
    arm_acc = rng.normal(size=robot.nv - 6)
    cmd = law(0.0, State(q, v), ref(0.0), arm_acc=arm_acc)
    _, a = _base_acceleration(robot, q, v, cmd.wrench, arm_acc)
    pin.centerOfMass(pm, pd, q_to_pin(robot, q), v_to_pin(robot, v), a)
    np.testing.assert_allclose(pd.acom[0], c_acc, atol=1e-10)


def test_linear_rates_match_finite_differences(robot, rng):
    """The closed loop with the centre-of-mass hold linearised (central differences of the
    law inside) against the central difference of the nonlinear closed-loop rates along
    random directions, second-order convergence (as the base-position law's test)."""
    from test_linearize import PinRates  # the nonlinear reference rates, Pinocchio's

    from dqspace.control import JointComputedTorque, JointGains

    q, v = robot.random_configuration(rng, translation=0.5), rng.normal(size=robot.nv)
    base = CoMHoldController(robot, GAINS, rng.normal(size=3) * 0.2)
    arm = JointComputedTorque(robot, JointGains.from_natural_frequency(5.0))
    ref = robot.random_configuration(rng, translation=0.5)
    controller = StationKeepingFeedback(base, arm, ref[:8], ref[8:])
    lin = linearize(robot, q, v, controller=controller)
    f = PinRates(robot, q, controller)
    nv = robot.nv
    u0 = np.zeros(nv)
    for _ in range(2):
        d = rng.normal(size=2 * nv)
        d /= np.linalg.norm(d)
        rate = lin.A @ d
        errs = []
        for eps in (1e-2, 1e-3):
            zp, zm = lin.x0 + eps * d, lin.x0 - eps * d
            fd = (f(zp[:nv], zp[nv:], u0) - f(zm[:nv], zm[nv:], u0)) / (2 * eps)
            errs.append(np.abs(fd - rate).max())
        assert errs[1] < errs[0] / 50.0  # O(eps^2)
        assert errs[1] < 1e-6 * np.abs(rate).max()


def test_the_python_tick_records_the_arms_reaction_not_the_feedforward(robot, rng):
    """The law's feedforward is not the arm's reaction: the tick (Python path) records the
    reaction of the inverse dynamics, the base-position law's feedforward negated."""
    from dqspace.control import JointComputedTorque, JointGains

    q, v = robot.random_configuration(rng, translation=0.5), rng.normal(size=robot.nv)
    arm = JointComputedTorque(robot, JointGains.from_natural_frequency(5.0))
    ref = PoseReference(q[:8].copy(), np.zeros(6), np.zeros(6))
    joints = q[8:] + 0.1
    from dqspace.control import JointReference

    jref = JointReference(joints, np.zeros(arm.n), np.zeros(arm.n))
    com = StationKeepingLaw(CoMHoldController.from_configuration(robot, GAINS, q), arm)
    pd_law = StationKeepingLaw(BaseController(robot, GAINS), arm)
    a, b = com(0.0, State(q, v), ref, jref), pd_law(0.0, State(q, v), ref, jref)
    np.testing.assert_allclose(a.reaction, b.reaction, rtol=1e-13, atol=1e-12)
    assert np.abs(a.feedforward[:3] + a.reaction[:3]).max() > 1e-3


def test_bad_offset_and_laws_raise(robot):
    with pytest.raises(ValueError, match=r"com_offset must have shape \(3,\)"):
        CoMHoldController(robot, GAINS, [0.0, 1.0])
    with pytest.raises(ValueError, match=r"com_offset\[1\] is not finite"):
        CoMHoldController(robot, GAINS, [0.0, np.nan, 0.0])
    sets = ["base_controller.translation=com", "base_controller.law=dual_pid"]
    with pytest.raises(ScenarioError, match="translation = 'com' runs with .*'dual_pd'"):
        run(load_scenario("station-keeping", [*sets, "scenario.duration=0.1"]), progress=False)
    with pytest.raises(ScenarioError, match="translation"):
        load_scenario("station-keeping", ["base_controller.translation=centre"])


def test_com_offset_is_the_centre_of_mass_in_base_axes(robot, rng):
    """``com_offset``: the centre of mass relative to the base origin in base axes, from
    Pinocchio's centre of mass and base placement."""
    pm, pd = _pin(robot)
    q = robot.random_configuration(rng, translation=0.5)
    qp = q_to_pin(robot, q)
    c = pin.centerOfMass(pm, pd, qp)
    pin.forwardKinematics(pm, pd, qp)
    base = pd.oMi[1]
    np.testing.assert_allclose(com_offset(robot, q), base.rotation.T @ (c - base.translation),
                               atol=1e-12)  # fmt: skip


# ------------------------------------------------------------------ closed loop

DURATION = 4.0  # [s] the lemniscate starts at 1 s, its 2 s ramp ends at 3 s


@pytest.fixture(scope="module")
def closed_loop():
    out = {}
    for mode in ("com", "base"):
        sets = [f"base_controller.translation={mode}", f"scenario.duration={DURATION}",
                "outputs.plots=false"]  # fmt: skip
        res = run(load_scenario("station-keeping", sets), progress=False)
        assert res.status == "complete"
        out[mode] = res
    return out


def test_closed_loop_holds_the_centre_of_mass_at_noise_level_thrust(closed_loop):
    """The embedded station-keeping run (perfect knowledge, PWM thrusters, VSCMGs), arm on
    its lemniscate, 4 s: the centre-of-mass hold keeps the centre of mass within 1 nm and
    asks the thrusters for a force at rounding level, so they never fire; the base-position
    law's demand is the arm's reaction.  Measured: force demand max 7.5e-13 N against 0.79
    N (the reaction's peak 0.78 N), impulse 0 against 2.61 N s, centre-of-mass error 1.3e-15
    m against 6.6 mm; the base moves 6.6 mm against 0.018 mm, attitude error 0.019 deg
    against 0.018 deg."""
    com, base = closed_loop["com"], closed_loop["base"]
    f_com = np.linalg.norm(np.asarray(com["wrench_cmd"])[:, :3], axis=1)
    f_base = np.linalg.norm(np.asarray(base["wrench_cmd"])[:, :3], axis=1)
    react = np.linalg.norm(np.asarray(base["arm_reaction"])[:, :3], axis=1)
    assert f_base.max() > 0.5 * react.max() > 0.1  # [N] the base law pushes against the arm
    assert f_com.max() < 1e-9 * f_base.max()
    assert np.abs(com["com_err"]).max() < 1e-9  # [m]
    assert np.abs(base["com_err"]).max() > 1e-3  # [m] the base law lets the centre move
    assert float(np.sum(com["thrust_impulse"])) == 0.0  # below the minimum impulse bit
    assert float(np.sum(base["thrust_impulse"])) > 1.0  # [N s]
    # the base itself moves with the arm (internal motion), the attitude is held as well
    assert np.abs(com["base_pos_err"]).max() > 100.0 * np.abs(base["base_pos_err"]).max()
    assert np.abs(com["base_att_err"]).max() < 1.5 * np.abs(base["base_att_err"]).max()
