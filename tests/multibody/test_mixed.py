"""The mixed forward/inverse problem (SOA paper, section 3) against the partitioned equations.

Reference: ``M a + C = tau`` partitioned by hand into prescribed (p) and free
(f) degrees of freedom, ``M_ff a_f = tau_f - C_f - M_fp a_p`` and
``tau_p = M_pf a_f + M_pp a_p + C_p``, with ``M`` and ``C`` from Pinocchio's
``rnea`` (an independent engine) and from dqspace's own matrix form.
Agreement 1e-10 relative.
"""

import numpy as np
import pinocchio as pin
import pytest

from dqspace.dq import dq_from_translation
from dqspace.multibody import (
    Body,
    Joint,
    JointType,
    bias_forces,
    inverse_dynamics,
    mass_matrix,
    models,
)
from dqspace.multibody.articulated import forward_dynamics_aba, mixed_dynamics
from support.pin_bridge import q_to_pin, to_pinocchio, v_from_pin, v_to_pin
from support.random_models import pin_external_forces, random_state, random_tree

TOL = 1e-10


def rel(x, ref):
    return np.linalg.norm(np.asarray(x) - ref) / max(np.linalg.norm(ref), 1e-300)


def partitioned(M, C, mask, a_p, tau_f):
    """Solve the partitioned matrix equations; returns full (a, tau)."""
    p, f = mask, ~mask
    a = np.where(p, a_p, 0.0)
    a[f] = np.linalg.solve(M[np.ix_(f, f)], tau_f[f] - C[f] - M[np.ix_(f, p)] @ a_p[p])
    return a, M @ a + C


def pin_M_C(model, q, v, fext):
    """M and C of Pinocchio, in dqspace's velocity order.

    The columns of M are ``rnea(q, 0, e_i) - rnea(q, 0, 0)``: Pinocchio's
    ``crba`` assumes depth-first joint order (each subtree contiguous in v),
    which ``Model.build`` does not require and the random trees do not follow.
    """
    pm = to_pinocchio(model)
    pd = pm.createData()
    qp = q_to_pin(model, q)
    fext = np.zeros((model.nb, 6)) if fext is None else fext
    fp = pin_external_forces(model, pm, fext)
    zero = np.zeros(model.nv)
    C = v_from_pin(model, pin.rnea(pm, pd, qp, v_to_pin(model, v), zero, fp))
    G = pin.rnea(pm, pd, qp, zero, zero).copy()
    M = np.empty((model.nv, model.nv))
    for i in range(model.nv):
        e = np.zeros(model.nv)
        e[i] = 1.0
        M[:, i] = v_from_pin(model, pin.rnea(pm, pd, qp, zero, v_to_pin(model, e)) - G)
    return M, C


def check(model, q, v, fext, mask, a_in, tau_in, ref="pin"):
    res = mixed_dynamics(
        model, q, v, prescribed=mask, a_prescribed=a_in, tau_free=tau_in, f_ext=fext
    )
    M, C = (
        pin_M_C(model, q, v, fext)
        if ref == "pin"
        else (mass_matrix(model, q), bias_forces(model, q, v, fext))
    )
    a_ref, tau_ref = partitioned(M, C, mask, a_in, tau_in)
    np.testing.assert_array_equal(res.a[mask], a_in[mask])  # given values pass through
    np.testing.assert_array_equal(res.tau[~mask], tau_in[~mask])
    return rel(res.a, a_ref), rel(res.tau, tau_ref)


def test_paper_model_free_base_driven_arm(rng):
    """The kinematically driven arm on the free-floating base (zero base wrench)."""
    model = models.space_manipulator(gravity=(0.0, 0.0, -9.81))
    mask = np.zeros(model.nv, dtype=bool)
    mask[6:] = True
    worst = np.zeros(2)
    for ref in ("pin", "dqspace"):
        for _ in range(5):
            q, v, _, fext = random_state(model, rng)
            a_in, tau_in = rng.normal(size=model.nv), np.zeros(model.nv)
            worst = np.maximum(worst, check(model, q, v, fext, mask, a_in, tau_in, ref))
    assert worst.max() < TOL, worst


def test_random_trees_random_masks(rng):
    """Random per-dof masks, also splitting spherical and free joints."""
    worst = np.zeros(2)
    partial = 0
    for i in range(30):
        model = random_tree(rng, int(rng.integers(2, 41)), floating=bool(i % 3))
        if model.nv == 0:
            continue
        q, v, _, fext = random_state(model, rng)
        mask = rng.uniform(size=model.nv) < 0.5
        for k in range(model.nb):
            s = mask[model.v_slice(k)]
            partial += bool(0 < s.sum() < s.size)
        a_in, tau_in = rng.normal(size=model.nv), rng.normal(size=model.nv)
        worst = np.maximum(worst, check(model, q, v, fext, mask, a_in, tau_in))
    assert partial > 5  # multi-dof joints split between prescribed and free
    assert worst.max() < TOL, worst


def test_nothing_prescribed_is_forward_dynamics(rng):
    model = random_tree(rng, 30)
    q, v, tau, fext = random_state(model, rng)
    res = mixed_dynamics(model, q, v, prescribed=np.zeros(model.nv, bool), tau_free=tau, f_ext=fext)
    assert rel(res.a, forward_dynamics_aba(model, q, v, tau, fext)) < TOL
    np.testing.assert_array_equal(res.tau, tau)


def test_everything_prescribed_is_inverse_dynamics(rng):
    model = random_tree(rng, 30, floating=False)
    q, v, _, fext = random_state(model, rng)
    a = rng.normal(size=model.nv)
    everything = np.ones(model.nv, bool)
    res = mixed_dynamics(model, q, v, prescribed=everything, a_prescribed=a, f_ext=fext)
    assert rel(res.tau, inverse_dynamics(model, q, v, a, fext)) < TOL
    np.testing.assert_array_equal(res.a, a)


def vscmg_model():
    """Free base + 4 gimbals (revolute) each carrying a wheel (revolute about its spin axis)."""
    model = models.space_manipulator()
    bodies = []
    for i in range(4):
        c, s = np.cos(i * np.pi / 2), np.sin(i * np.pi / 2)
        g = np.array([c, s, 1.0]) / np.sqrt(2.0)  # pyramid gimbal axes
        spin = np.cross(g, [-s, c, 0.0])
        spin /= np.linalg.norm(spin)
        bodies.append(
            Body(
                f"gimbal{i}",
                "base",
                Joint(JointType.REVOLUTE, g, dq_from_translation([0.1 * c, 0.1 * s, 0.0])),
                2.0,
                np.zeros(3),
                0.01 * np.eye(3),
            )
        )
        bodies.append(
            Body(
                f"wheel{i}",
                f"gimbal{i}",
                Joint(JointType.REVOLUTE, spin),
                5.0,
                np.zeros(3),
                np.diag([0.02, 0.02, 0.02]) + 0.02 * np.outer(spin, spin),
            )
        )
    return model.with_bodies(bodies)


def test_servo_driven_gimbals_and_wheels(rng):
    """VSCMG gimbals and wheels prescribed by name, arm passive, base free: the
    rates the servos need, and zero base wrench in the inverse dynamics."""
    model = vscmg_model()
    servo = [f"gimbal{i}" for i in range(4)] + [f"wheel{i}" for i in range(4)]
    q, v, _, _ = random_state(model, rng)
    for i in range(4):
        v[model.v_slice(f"wheel{i}")] *= 100.0  # spinning wheels
    a_servo = rng.normal(size=8)
    res = mixed_dynamics(model, q, v, prescribed=servo, a_prescribed=a_servo)
    mask = np.zeros(model.nv, bool)
    for b in servo:
        mask[model.v_slice(b)] = True
    a_full = np.zeros(model.nv)
    a_full[mask] = a_servo  # compact (n_prescribed,) input, in v order
    assert max(check(model, q, v, None, mask, a_full, np.zeros(model.nv))) < TOL
    tau_id = inverse_dynamics(model, q, v, res.a)
    assert np.abs(tau_id[~mask]).max() < 1e-10 * np.abs(tau_id).max()
    assert rel(tau_id[mask], res.tau[mask]) < TOL


def test_bodies_by_name_or_index_equal_dof_mask(rng):
    model = random_tree(rng, 10, p_spherical=0.5)
    q, v, tau, _ = random_state(model, rng)
    bodies = [int(k) for k in np.flatnonzero(rng.uniform(size=model.nb) < 0.5)]
    dof_mask = np.zeros(model.nv, bool)
    for k in bodies:
        dof_mask[model.v_slice(k)] = True
    a_in = rng.normal(size=model.nv)
    r1 = mixed_dynamics(model, q, v, prescribed=dof_mask, a_prescribed=a_in, tau_free=tau)
    r2 = mixed_dynamics(model, q, v, prescribed=bodies, a_prescribed=a_in, tau_free=tau)
    names = [model.body_names[k] for k in bodies]
    r3 = mixed_dynamics(
        model, q, v, prescribed=names, a_prescribed=a_in[dof_mask], tau_free=tau[~dof_mask]
    )
    for r in (r2, r3):
        np.testing.assert_array_equal(r.a, r1.a)
        np.testing.assert_array_equal(r.tau, r1.tau)


# ----------------------------------------------------------------- bad input


@pytest.fixture
def paper():
    model = models.space_manipulator()
    return model, model.neutral_configuration(), np.zeros(model.nv)


def test_bad_mask_shape(paper):
    model, q, v = paper
    with pytest.raises(ValueError, match=r"must have shape \(nv,\) = \(13,\), got \(8,\)"):
        mixed_dynamics(model, q, v, prescribed=np.zeros(8, bool))


def test_unknown_body_name(paper):
    model, q, v = paper
    with pytest.raises(ValueError, match="no body named 'elbow'"):
        mixed_dynamics(model, q, v, prescribed=["elbow"])


def test_bad_a_prescribed_length(paper):
    model, q, v = paper
    with pytest.raises(ValueError, match=r"a_prescribed must have shape \(13,\) .* or \(2,\)"):
        mixed_dynamics(model, q, v, prescribed=["link1", "link2"], a_prescribed=[1.0, 2.0, 3.0])


def test_bad_tau_free_length(paper):
    model, q, v = paper
    with pytest.raises(ValueError, match=r"tau_free must have shape \(13,\) .* or \(11,\)"):
        mixed_dynamics(model, q, v, prescribed=["link1", "link2"], tau_free=np.zeros(4))


def test_non_finite_a_prescribed(paper):
    model, q, v = paper
    with pytest.raises(ValueError, match=r"a_prescribed\[6\] is not finite"):
        mixed_dynamics(model, q, v, prescribed=["link1"], a_prescribed=[np.nan])


def test_mixed_non_unit_q(paper):
    model, q, v = paper
    q[1] = 0.5
    with pytest.raises(ValueError, match=r"q\[0:8\] \(base pose of body 'base'\) is not unit"):
        mixed_dynamics(model, q, v, prescribed=["link1"])
