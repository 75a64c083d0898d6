"""Compiled loops and batches give the same trajectories as the step-by-step Python loop."""

import numpy as np
import pytest
from numba import njit

import dqspace.multibody as mb
from dqspace.multibody import INPUTS_SIG
from dqspace.multibody.models import space_manipulator


@njit(INPUTS_SIG, cache=True)
def damped_base_push(t, t_step, q, v, params, mem, tau, fext):
    """Joint damping params[0] on the arm joints and a sinusoidal force on the base."""
    fext[:, :] = 0.0
    for j in range(tau.shape[0]):
        tau[j] = 0.0
    tau[3] = params[1] * np.sin(t)  # base force along x (generalized force [torque, force])
    for j in range(6, v.shape[0]):
        tau[j] = -params[0] * v[j]
    mem[0] += 1.0  # count the stage evaluations


@njit(INPUTS_SIG, cache=True)
def blow_up(t, t_step, q, v, params, mem, tau, fext):
    fext[:, :] = 0.0
    tau[:] = 0.0
    if t > 0.0105:
        tau[8] = 1e308


@njit(INPUTS_SIG, cache=True)
def stage_offsets(t, t_step, q, v, params, mem, tau, fext):
    """Sum of (t - t_step) over the stages: 0 + dt/2 + dt/2 + dt per step."""
    fext[:, :] = 0.0
    tau[:] = 0.0
    mem[0] += t - t_step
    mem[1] = max(mem[1], t_step)


@pytest.fixture(scope="module")
def robot():
    return space_manipulator()


def python_inputs(model, params):
    def u(t):
        tau = np.zeros(model.nv)
        tau[3] = params[1] * np.sin(t)
        return tau

    return u


def test_compiled_loop_matches_python_loop(robot, rng):
    q0 = robot.random_configuration(rng)
    v0 = 0.3 * rng.normal(size=robot.nv)
    params = np.array([0.0, 2.0])  # no damping: pure open-loop input, same in both paths
    mem = np.zeros(1)
    c = mb.simulate_compiled(
        robot,
        q0,
        v0,
        dt=1e-3,
        n_steps=200,
        inputs=damped_base_push,
        params=params,
        mem=mem,
        record_every=50,
    )
    p = mb.simulate_rk4(robot, q0, v0, dt=1e-3, n_steps=200, inputs=python_inputs(robot, params))
    assert mem[0] == 4 * 200
    assert np.abs(c.q[-1] - p.q[-1]).max() <= 1e-13
    assert np.abs(c.v[-1] - p.v[-1]).max() <= 1e-13
    assert np.allclose(c.t, [0.0, 0.05, 0.1, 0.15, 0.2])


def test_damping_callback_dissipates_energy(robot, rng):
    q0 = robot.random_configuration(rng)
    v0 = np.r_[np.zeros(6), rng.normal(size=7)]
    tr = mb.simulate_compiled(
        robot,
        q0,
        v0,
        dt=1e-3,
        n_steps=500,
        inputs=damped_base_push,
        params=np.array([0.05, 0.0]),
        mem=np.zeros(1),
        record_every=100,
    )
    E = [mb.kinetic_energy(robot, q, v) for q, v in zip(tr.q, tr.v, strict=True)]
    assert all(b < a for a, b in zip(E, E[1:], strict=False))
    p = [mb.momentum(robot, q, v) for q, v in zip(tr.q, tr.v, strict=True)]
    # internal damping torques: momentum conserved (up to RK4's O(dt^4) truncation; the
    # fastest damped mode, link 7, has a time constant of ~20 ms against dt = 1 ms)
    for a, b in ((p[0].linear, p[-1].linear), (p[0].angular, p[-1].angular)):
        assert np.abs(b - a).max() <= 1e-11 * np.abs(a).max()


def test_hook_runs_between_chunks_and_may_change_params(robot):
    seen = []

    def hook(t, q, v, params, mem):
        seen.append(round(t, 9))
        params[1] = 1.0 if t >= 0.01 else 0.0

    params = np.array([0.0, 0.0])
    q0, v0 = robot.neutral_configuration(), np.zeros(robot.nv)
    tr = mb.simulate_compiled(
        robot,
        q0,
        v0,
        dt=1e-3,
        n_steps=30,
        inputs=damped_base_push,
        params=params,
        mem=np.zeros(1),
        hook=hook,
        hook_every=10,
    )
    assert seen == [0.0, 0.01, 0.02]
    assert np.all(tr.v[:11, 3:6] == 0.0) and np.any(tr.v[-1, 3:6] != 0.0)


def test_batch_equals_serial_runs(robot, rng):
    B = 4
    Q0 = np.array([robot.random_configuration(rng) for _ in range(B)])
    V0 = 0.3 * rng.normal(size=(B, robot.nv))
    params = np.array([[0.1 * i, 1.0] for i in range(B)])
    bt = mb.simulate_batch(
        robot,
        Q0,
        V0,
        dt=1e-3,
        n_steps=100,
        inputs=damped_base_push,
        params=params,
        mem=np.zeros((B, 1)),
        record_every=50,
    )
    assert bt.ok.all() and bt.q.shape == (B, 3, robot.nq)
    for i in range(B):
        s = mb.simulate_compiled(
            robot,
            Q0[i],
            V0[i],
            dt=1e-3,
            n_steps=100,
            inputs=damped_base_push,
            params=params[i],
            mem=np.zeros(1),
            record_every=50,
        )
        assert np.array_equal(s.q, bt.q[i]) and np.array_equal(s.v, bt.v[i])


def test_batch_over_parameter_sets(robot, rng):
    heavy = space_manipulator(base_mass=54.0)  # same topology, other parameters
    reals = mb.stack_model_parameters([robot, heavy])
    q0 = robot.neutral_configuration()
    Q0 = np.stack([q0, q0])
    V0 = np.zeros((2, robot.nv))
    bt = mb.simulate_batch(
        robot,
        Q0,
        V0,
        dt=1e-3,
        n_steps=100,
        inputs=damped_base_push,
        params=np.array([0.0, 5.0]),
        mem=np.zeros((2, 1)),
        reals=reals,
    )
    # the same base force accelerates the heavier base less, and each trajectory equals
    # a single run of its own model
    dx = bt.v[:, -1, 3]
    assert 0 < dx[1] < dx[0]
    single = mb.simulate_compiled(
        heavy,
        q0,
        np.zeros(robot.nv),
        dt=1e-3,
        n_steps=100,
        inputs=damped_base_push,
        params=np.array([0.0, 5.0]),
        mem=np.zeros(1),
        record_every=100,
    )
    assert np.array_equal(single.v[-1], bt.v[1, -1])


def test_failure_keeps_the_partial_trajectory(robot):
    q0, v0 = robot.neutral_configuration(), np.zeros(robot.nv)
    with pytest.raises(mb.IntegrationError, match="non-finite") as exc:
        mb.simulate_compiled(robot, q0, v0, dt=1e-3, n_steps=50, inputs=blow_up, record_every=1)
    part = exc.value.partial
    assert len(part.t) >= 10 and np.all(np.isfinite(part.v))


def test_batch_dynamics_match_single_calls(robot, rng):
    B = 16
    Q = np.array([robot.random_configuration(rng) for _ in range(B)])
    V, A = rng.normal(size=(2, B, robot.nv))
    TAU = mb.inverse_dynamics_batch(robot, Q, V, A)
    for i in range(B):
        assert np.array_equal(TAU[i], mb.inverse_dynamics(robot, Q[i], V[i], A[i]))
    A2 = mb.forward_dynamics_batch(robot, Q, V, TAU)
    assert np.abs(A2 - A).max() < 1e-9


def test_callback_sees_the_step_start_time(robot):
    mem = np.zeros(2)
    mb.simulate_compiled(
        robot,
        robot.neutral_configuration(),
        np.zeros(robot.nv),
        dt=0.01,
        n_steps=7,
        inputs=stage_offsets,
        mem=mem,
        t0=1.0,
    )
    assert np.isclose(mem[0], 7 * 2 * 0.01, atol=1e-12)
    assert np.isclose(mem[1], 1.0 + 6 * 0.01, atol=1e-12)  # start of the last step


@pytest.mark.parametrize("B", [0, 1, 3, 17])
def test_batches_of_any_size_cover_every_state(robot, B):
    """The batch kernels split the states into one chunk per thread: sizes that do not
    divide evenly (or are smaller than the thread count) still fill every row."""
    rng = np.random.default_rng(B)
    Q = np.array([robot.random_configuration(rng) for _ in range(B)]).reshape(B, robot.nq)
    V, TAU = rng.normal(size=(2, B, robot.nv))
    A = mb.forward_dynamics_batch(robot, Q, V, TAU)
    T2 = mb.inverse_dynamics_batch(robot, Q, V, A)
    assert A.shape == T2.shape == (B, robot.nv)
    for i in range(B):
        assert np.array_equal(A[i], mb.forward_dynamics(robot, Q[i], V[i], TAU[i]))
    assert np.abs(T2 - TAU).max(initial=0.0) < 1e-9
