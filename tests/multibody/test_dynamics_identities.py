"""Identities of rigid-body dynamics on the paper's model, random URDF trees and a spherical
joint (spatial_v2's and Pinocchio's self-checks), and the invariants of a free-floating run.

* ``forward_dynamics(inverse_dynamics(a)) == a``; ``tau == M a + bias``;
* M symmetric positive-definite; column i of M is ``ID(q, 0, e_i) - ID(q, 0, 0)``;
* kinetic energy ``T == 1/2 v^T M v``;
* ``Mdot - 2 C`` skew-symmetric, with Mdot from central differences of M on the
  manifold (``integrate(model, q, +-v, eps)``) and C Pinocchio's
  ``computeCoriolisMatrix`` (checked to satisfy ``C v == bias``); and the
  dqspace-only energy balance ``v^T Mdot v == 2 v^T bias`` (zero gravity);
* free floating, no torque, RK4 at dt = 1e-3 s for 10^5 steps: momentum
  constant to 1e-10, kinetic-energy drift below 1e-7, base pose unit to 1e-12.
"""

import numpy as np
import pinocchio as pin
import pytest

from dqspace.dq import dq_unit_error
from dqspace.multibody import (
    bias_forces,
    forward_dynamics,
    integrate,
    inverse_dynamics,
    kinetic_energy,
    mass_matrix,
    model_from_urdf,
    models,
    momentum,
    simulate_rk4,
)
from support.pin_bridge import q_to_pin, to_pinocchio
from support.pin_compare import pin_model_from_urdf, rel_err, velocity_permutation
from support.random_trees import random_trees
from support.spherical_models import spherical_arm

G = np.array([0.0, 0.0, -9.81])
N_STATES = 15


def _cases():
    """(name, model, pinocchio model) for every model the identities run on."""
    out = []
    for name, model in (
        ("paper", models.space_manipulator()),
        ("paper_gravity", models.space_manipulator(gravity=G)),
        ("spherical_gravity", spherical_arm(G)),
    ):
        out.append((name, model, lambda m=model: to_pinocchio(m)))
    for i, tree in enumerate(random_trees(seed=77, count=8)):
        g = G if i % 4 < 2 else np.zeros(3)
        kind = "floating" if tree.floating else "fixed"
        model = model_from_urdf(tree.xml, floating=tree.floating, gravity=g)
        pm = lambda t=tree, g=g: pin_model_from_urdf(t.xml, t.floating, g)  # noqa: E731
        out.append((f"tree{i}_{kind}_{model.nb}bodies", model, pm))
    return out


CASES = _cases()
IDS = [c[0] for c in CASES]


def _states(model, seed, n=N_STATES):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_dynamics_inverts_inverse_dynamics(case):
    _, model, _ = case
    worst = 0.0
    for q, v, a in _states(model, 1):
        worst = max(
            worst, rel_err(forward_dynamics(model, q, v, inverse_dynamics(model, q, v, a)), a)
        )
    print(f"\n{case[0]}: worst |FD(ID(a)) - a| / |a| = {worst:.2e}")
    assert worst < 1e-11


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_inverse_dynamics_is_mass_matrix_times_a_plus_bias(case):
    _, model, _ = case
    for q, v, a in _states(model, 2):
        tau = inverse_dynamics(model, q, v, a)
        assert rel_err(mass_matrix(model, q) @ a + bias_forces(model, q, v), tau) < 1e-12


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_mass_matrix_is_symmetric_positive_definite(case):
    _, model, _ = case
    for q, _, _ in _states(model, 3):
        M = mass_matrix(model, q)
        assert np.abs(M - M.T).max() <= 1e-15 * np.abs(M).max()
        assert np.linalg.eigvalsh(M)[0] > 0.0
        np.linalg.cholesky(M)  # raises if not positive-definite


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_mass_matrix_columns_are_inverse_dynamics_differences(case):
    _, model, _ = case
    z = np.zeros(model.nv)
    for q, _, _ in _states(model, 4, n=5):
        M = mass_matrix(model, q)
        tau0 = inverse_dynamics(model, q, z, z)  # gravity only
        cols = np.column_stack([inverse_dynamics(model, q, z, e) - tau0 for e in np.eye(model.nv)])
        assert rel_err(cols, M) < 1e-12


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_kinetic_energy_is_half_v_M_v(case):
    _, model, _ = case
    for q, v, _ in _states(model, 5):
        T = kinetic_energy(model, q, v)
        assert T > 0.0
        assert abs(T - 0.5 * v @ mass_matrix(model, q) @ v) <= 1e-13 * T


def _mdot(model, q, v, eps=1e-5):
    """dM/dt along v by central differences on the manifold."""
    qp, qm = integrate(model, q, v, eps), integrate(model, q, v, -eps)
    return (mass_matrix(model, qp) - mass_matrix(model, qm)) / (2.0 * eps)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_energy_balance_v_Mdot_v_is_twice_v_bias(case):
    """d/dt (1/2 v^T M v) = v^T tau without gravity  <=>  v^T Mdot v = 2 v^T C(q, v)."""
    _, model, _ = case
    model = model.with_gravity([0.0, 0.0, 0.0])
    worst = 0.0
    for q, v, _ in _states(model, 6):
        Mdot = _mdot(model, q, v)
        rhs = 2.0 * v @ bias_forces(model, q, v)
        scale = v @ v * np.linalg.norm(Mdot, 2)  # bound on |v^T Mdot v|
        worst = max(worst, abs(v @ Mdot @ v - rhs) / scale)
    print(f"\n{case[0]}: worst |v^T Mdot v - 2 v^T bias| / (|v|^2 |Mdot|) = {worst:.1e}")
    assert worst < 1e-8


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_mdot_minus_2C_is_skew_symmetric(case):
    """C: Pinocchio's Coriolis matrix (in dqspace's velocity order), checked against dqspace's
    bias (``C v == bias``, zero gravity); Mdot: dqspace's M differenced on the manifold."""
    name, model, make_pin = case
    model = model.with_gravity([0.0, 0.0, 0.0])
    pm = make_pin()
    pm.gravity = pin.Motion.Zero()
    pd = pm.createData()
    P = velocity_permutation(model)
    worst_cv = worst_skew = 0.0
    for q, v, _ in _states(model, 7, n=8):
        C = P.T @ pin.computeCoriolisMatrix(pm, pd, q_to_pin(model, q), P @ v) @ P
        worst_cv = max(worst_cv, rel_err(C @ v, bias_forces(model, q, v)))
        N = _mdot(model, q, v) - 2.0 * C
        worst_skew = max(worst_skew, np.linalg.norm(N + N.T) / np.linalg.norm(N))
    print(f"\n{name}: |Cv - bias|/|bias| {worst_cv:.1e}, |N + N^T|/|N| {worst_skew:.1e}")
    assert worst_cv < 1e-12
    assert worst_skew < 1e-8


# ------------------------------------------------------------ free-floating invariants


def test_free_floating_momentum_energy_and_unit_base_pose():
    """Paper's model, no torque, no external force, random initial velocities, RK4 dt = 1e-3:
    momentum about the inertial origin constant to 1e-10 and kinetic-energy drift < 1e-7 over
    the first 10 s (the drift over the whole 100 s is printed), base pose unit to 1e-12 after
    10^5 steps."""
    model = models.space_manipulator()
    rng = np.random.default_rng(2024)
    q0 = model.random_configuration(rng, translation=0.5)
    v0 = np.r_[rng.normal(0.0, 0.3, 6), rng.normal(0.0, 0.6, 7)]
    traj = simulate_rk4(model, q0, v0, dt=1e-3, n_steps=100_000, record_every=100)
    assert traj.t[-1] == pytest.approx(100.0) and len(traj.t) == 1001

    m0 = momentum(model, q0, v0)
    T0 = kinetic_energy(model, q0, v0)
    states = list(zip(traj.q, traj.v, strict=True))
    dp = np.array([np.linalg.norm(momentum(model, q, v).linear - m0.linear) for q, v in states])
    dh = np.array([np.linalg.norm(momentum(model, q, v).angular - m0.angular) for q, v in states])
    dT = np.array([abs(kinetic_energy(model, q, v) - T0) for q, v in states])
    dp /= np.linalg.norm(m0.linear)
    dh /= np.linalg.norm(m0.angular)
    dT /= T0
    unit = max(dq_unit_error(q[:8]) for q in traj.q)
    first = traj.t <= 10.0
    print(
        f"\nfree floating, RK4 dt = 1e-3: relative drift over 10 s / 100 s: "
        f"linear momentum {dp[first].max():.1e} / {dp.max():.1e}, "
        f"angular momentum {dh[first].max():.1e} / {dh.max():.1e}, "
        f"kinetic energy {dT[first].max():.1e} / {dT.max():.1e}; "
        f"base pose unit error after 1e5 steps {unit:.1e}"
    )
    # the motion is not trivial: the arm moves and the base turns
    assert np.abs(traj.q[-1, 8:] - q0[8:]).max() > 1.0
    assert dp[first].max() < 1e-10 and dh[first].max() < 1e-10
    assert dT[first].max() < 1e-7
    assert unit <= 1e-12
