"""Articulated-body forward dynamics (issue 4) against the matrix form and Pinocchio's ``aba``.

References: ``forward_dynamics(..., method="matrix")`` (CRBA + RNEA + Cholesky,
a different algorithm of the same package) and ``pin.aba`` (an independent
engine), on the paper's model and on 50 random trees built with
``Model.build`` (floating and fixed roots, revolute, prismatic, spherical and
fixed joints, up to 60 bodies, gravity, external wrenches).  Relative
agreement 1e-10.
"""

import copy

import numpy as np
import pinocchio as pin
import pytest

from dqspace.multibody import (
    Body,
    Joint,
    JointType,
    Model,
    forward_dynamics,
    inverse_dynamics,
    models,
)
from dqspace.multibody import kernels as A
from dqspace.multibody.articulated import forward_dynamics_aba
from support.pin_bridge import q_to_pin, to_pinocchio, v_from_pin, v_to_pin
from support.random_models import pin_external_forces, random_state, random_tree

TOL = 1e-10


def rel(x, ref):
    return np.linalg.norm(np.asarray(x) - ref) / max(np.linalg.norm(ref), 1e-300)


def pin_aba(model, pm, pd, q, v, tau, fext):
    a = pin.aba(
        pm,
        pd,
        q_to_pin(model, q),
        v_to_pin(model, v),
        v_to_pin(model, tau),
        pin_external_forces(model, pm, fext),
    )
    return v_from_pin(model, a)


def _random_trees(seed, count=50, max_nb=60):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        nb = int(rng.integers(1, max_nb + 1))
        m = random_tree(rng, nb, floating=bool(rng.uniform() < 0.6))
        if m.nv > 0:
            out.append((m, rng))
    return out


@pytest.mark.parametrize("gravity", [None, (0.0, 0.0, -9.81)])
def test_paper_model_matches_matrix_form_and_pinocchio(rng, gravity):
    model = models.space_manipulator(gravity=gravity)
    pm = to_pinocchio(model)
    pd = pm.createData()
    worst_m = worst_p = 0.0
    for _ in range(20):
        q, v, tau, fext = random_state(model, rng)
        a = forward_dynamics_aba(model, q, v, tau, fext)
        worst_m = max(worst_m, rel(a, forward_dynamics(model, q, v, tau, fext, method="matrix")))
        worst_p = max(worst_p, rel(a, pin_aba(model, pm, pd, q, v, tau, fext)))
    assert worst_m < TOL, worst_m
    assert worst_p < TOL, worst_p


def test_fifty_random_trees_match_matrix_form_and_pinocchio():
    kinds = set()
    worst_m = worst_p = 0.0
    for model, rng in _random_trees(20261122):
        kinds.update(JointType(int(t)) for t in model.joint_type)
        pm = to_pinocchio(model)
        pd = pm.createData()
        q, v, tau, fext = random_state(model, rng)
        a = forward_dynamics_aba(model, q, v, tau, fext)
        worst_m = max(worst_m, rel(a, forward_dynamics(model, q, v, tau, fext, method="matrix")))
        worst_p = max(worst_p, rel(a, pin_aba(model, pm, pd, q, v, tau, fext)))
    assert kinds == set(JointType)  # every joint type was exercised
    assert worst_m < TOL, worst_m
    assert worst_p < TOL, worst_p


def test_inverse_of_inverse_dynamics(rng):
    """FD(ID(a)) == a on floating and fixed random trees (ABA against RNEA)."""
    for floating in (True, False):
        model = random_tree(rng, 25, floating=floating)
        q, v, _, fext = random_state(model, rng)
        a = rng.normal(size=model.nv)
        tau = inverse_dynamics(model, q, v, a, fext)
        assert rel(forward_dynamics_aba(model, q, v, tau, fext), a) < TOL


def test_free_body_closed_form(rng):
    """One free body: ``a = M^-1 (tau - w x M w)`` with the swap (P6)."""
    model = random_tree(rng, 1, floating=True, gravity=(0.0, 0.0, 0.0))
    q, v, tau, _ = random_state(model, rng)
    Ms = np.zeros((6, 6))  # swap(M^): twist -> [torque, force]
    from dqspace.multibody import kernels as K

    K.spatial_inertia(model._reals, 0, Ms)
    w, u = v[:3], v[3:]
    m, c = model.mass[0], model.com[0]
    p = m * (u + np.cross(w, c))
    h = Ms[:3] @ v
    bias = np.concatenate([np.cross(w, h) + np.cross(u, p), np.cross(w, p)])
    a_ref = np.linalg.solve(Ms, tau - bias)
    assert rel(forward_dynamics_aba(model, q, v, tau), a_ref) < 1e-12


def test_fixed_only_model_has_no_accelerations():
    """A body welded to the inertial frame: nv = 0, and its joint carries its weight."""
    model = Model.build(
        [Body("w", None, Joint(JointType.FIXED), 2.0, np.zeros(3), np.eye(3))],
        gravity=[0.0, 0.0, -9.81],
    )
    res = forward_dynamics_aba(model, [], [], [], return_constraint_wrenches=True)
    assert res.a.shape == (0,)
    np.testing.assert_allclose(res.wrenches.wrench[0], [0, 0, 2.0 * 9.81, 0, 0, 0], atol=1e-12)


def test_kernel_matches_public_call_and_accepts_no_wrench_array(rng):
    model = models.space_manipulator(gravity=[0.0, 0.0, -9.81])
    q, v, tau, _ = random_state(model, rng)
    a = np.empty(model.nv)
    ok = A.aba(model._ints, model._reals, model.gravity, q, v, tau, np.zeros((model.nb, 6)), a)
    a0 = np.empty(model.nv)
    ok0 = A.aba(model._ints, model._reals, model.gravity, q, v, tau, np.zeros((0, 6)), a0)
    assert ok and ok0
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(a, forward_dynamics_aba(model, q, v, tau))


def test_inputs_are_not_modified(rng):
    model = random_tree(rng, 12)
    q, v, tau, fext = random_state(model, rng)
    copies = [x.copy() for x in (q, v, tau, fext)]
    forward_dynamics_aba(model, q, v, tau, fext, return_constraint_wrenches=True)
    for x, c in zip((q, v, tau, fext), copies, strict=True):
        np.testing.assert_array_equal(x, c)


def test_lists_and_non_contiguous_inputs(rng):
    model = models.space_manipulator()
    q, v, tau, fext = random_state(model, rng)
    ref = forward_dynamics_aba(model, q, v, tau, fext)
    V = np.stack([v, v], axis=1)  # column views are not contiguous
    out = forward_dynamics_aba(model, list(q), V[:, 0], tuple(tau), fext.tolist())
    np.testing.assert_array_equal(out, ref)


# ----------------------------------------------------------------- bad input


@pytest.fixture
def paper():
    model = models.space_manipulator()
    q = model.neutral_configuration()
    return model, q, np.zeros(model.nv), np.zeros(model.nv)


def test_bad_q_shape(paper):
    model, q, v, tau = paper
    with pytest.raises(ValueError, match=r"q must have shape \(15,\), got \(14,\)"):
        forward_dynamics_aba(model, q[:-1], v, tau)


def test_bad_v_shape(paper):
    model, q, v, tau = paper
    with pytest.raises(ValueError, match=r"v must have shape \(13,\), got \(13, 1\)"):
        forward_dynamics_aba(model, q, v[:, None], tau)


def test_bad_tau_shape(paper):
    model, q, v, tau = paper
    with pytest.raises(ValueError, match=r"tau must have shape \(13,\), got \(12,\)"):
        forward_dynamics_aba(model, q, v, tau[:-1])


def test_bad_f_ext_shape(paper):
    model, q, v, tau = paper
    with pytest.raises(ValueError, match=r"f_ext must have shape \(nb, 6\) = \(8, 6\)"):
        forward_dynamics_aba(model, q, v, tau, np.zeros((8, 3)))


def test_non_finite_v(paper):
    model, q, v, tau = paper
    v[4] = np.nan
    with pytest.raises(ValueError, match=r"v\[4\] is not finite"):
        forward_dynamics_aba(model, q, v, tau)


def test_non_finite_tau(paper):
    model, q, v, tau = paper
    tau[2] = np.inf
    with pytest.raises(ValueError, match=r"tau\[2\] is not finite"):
        forward_dynamics_aba(model, q, v, tau)


def test_non_finite_f_ext(paper):
    model, q, v, tau = paper
    f = np.zeros((model.nb, 6))
    f[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"f_ext for body 3 is not finite"):
        forward_dynamics_aba(model, q, v, tau, f)


def test_non_unit_base_pose(paper):
    model, q, v, tau = paper
    q[0] = 1.1
    with pytest.raises(ValueError, match=r"q\[0:8\] \(base pose of body 'base'\) is not unit"):
        forward_dynamics_aba(model, q, v, tau)


def test_non_positive_definite_articulated_inertia(rng):
    """A (corrupted) massless leaf makes D_k = 0: the kernel says so and the wrapper raises."""
    model = random_tree(rng, 4, p_spherical=0.0, p_prismatic=0.0, p_fixed=0.0)
    bad = copy.copy(model)
    reals = model._reals.copy()
    reals[3, 11:] = 0.0  # mass, centre of mass and inertia of the leaf
    reals.setflags(write=False)  # as the model's (same compiled signature)
    bad._reals = reals
    q, v, tau, _ = random_state(model, rng)
    a = np.empty(model.nv)
    assert not A.aba(bad._ints, reals, bad.gravity, q, v, tau, np.zeros((0, 6)), a)
    with pytest.raises(ValueError, match="articulated inertias are not positive-definite"):
        forward_dynamics_aba(bad, q, v, tau)
