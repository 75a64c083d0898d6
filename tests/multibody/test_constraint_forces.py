"""Joint constraint (reaction) wrenches (issue 4) against Pinocchio and closed forms.

References:

* Pinocchio's ``data.f`` after ``pin.rnea``: the spatial force each joint
  transmits to its subtree, in the joint frame, ``[f, tau]`` (linear first),
  which is dqspace's body frame for every non-FIXED joint;
* an independent Newton-Euler sum built on Pinocchio's kinematics and spatial
  algebra: ``f_k = sum over the subtree of k of X^* (I_b (a_b - g_b) + v_b x* I_b v_b
  - fext_b)``, which also covers FIXED joints (merged away by Pinocchio);
* a planar pendulum in closed form.

Agreement 1e-10 relative.
"""

import numpy as np
import pinocchio as pin
import pytest

from dqspace.multibody import Body, Joint, JointType, Model, inverse_dynamics, models
from dqspace.multibody.articulated import constraint_wrenches, forward_dynamics_aba
from support.pin_bridge import q_to_pin, to_pinocchio, v_to_pin
from support.random_models import pin_body_frame, pin_external_forces, random_state, random_tree

TOL = 1e-10


def rel(x, ref):
    return np.linalg.norm(np.asarray(x) - ref) / max(np.linalg.norm(ref), 1e-300)


def pin_joint_forces(model, pm, pd, q, v, a, fext):
    """Pinocchio's transmitted wrenches [f, tau] for the bodies with a non-FIXED joint."""
    pin.rnea(
        pm,
        pd,
        q_to_pin(model, q),
        v_to_pin(model, v),
        v_to_pin(model, a),
        pin_external_forces(model, pm, fext),
    )
    out = {}
    for k in range(model.nb):
        if model.joint_type[k] != JointType.FIXED:
            jid, X = pin_body_frame(model, pm, k)
            assert X.isIdentity()
            out[k] = pd.f[jid].vector.copy()
    return out


def subtree_newton_euler(model, pm, pd, q, v, a, fext):
    """Every joint's wrench (nb, 6) from Pinocchio's frame kinematics and spatial algebra."""
    pin.forwardKinematics(pm, pd, q_to_pin(model, q), v_to_pin(model, v), v_to_pin(model, a))
    pin.updateFramePlacements(pm, pd)
    fid = [pm.getFrameId(n) for n in model.body_names]
    g = np.asarray(model.gravity, float)
    own = []
    for k in range(model.nb):
        vb = pin.getFrameVelocity(pm, pd, fid[k], pin.ReferenceFrame.LOCAL)
        ab = pin.getFrameAcceleration(pm, pd, fid[k], pin.ReferenceFrame.LOCAL)
        gb = pin.Motion(pd.oMf[fid[k]].rotation.T @ g, np.zeros(3))
        Ib = pin.Inertia(float(model.mass[k]), model.com[k].copy(), model.inertia_com[k].copy())
        f = Ib * (ab - gb) + vb.cross(Ib * vb) - pin.Force(fext[k, :3], fext[k, 3:])
        own.append(f)
    out = np.zeros((model.nb, 6))
    for k in range(model.nb):
        for b in range(model.nb):
            j = b
            while j >= 0 and j != k:
                j = int(model.parent[j])
            if j == k:  # b is in the subtree of k
                kMb = pd.oMf[fid[k]].actInv(pd.oMf[fid[b]])
                out[k] += kMb.act(own[b]).vector
    return out


def _s_columns(model, k):
    """S_k (6, nk) in twist order [w, v]."""
    t = JointType(int(model.joint_type[k]))
    n = model.joint_axis[k]
    if t == JointType.REVOLUTE:
        return np.concatenate([n, np.zeros(3)])[:, None]
    if t == JointType.PRISMATIC:
        return np.concatenate([np.zeros(3), n])[:, None]
    if t == JointType.SPHERICAL:
        return np.eye(6)[:, :3]
    if t == JointType.FREE:
        return np.eye(6)
    return np.zeros((6, 0))


def check_split(model, w):
    """wrench = actuation + constraint; S^T constraint^s = 0; actuation = swap(S tau)."""
    scale = np.abs(w.wrench).max()
    np.testing.assert_allclose(w.actuation + w.constraint, w.wrench, rtol=0, atol=1e-15 * scale)
    for k in range(model.nb):
        S = _s_columns(model, k)
        swap = lambda x: np.concatenate([x[3:], x[:3]])  # noqa: E731
        assert np.all(np.abs(S.T @ swap(w.constraint[k])) <= 1e-13 * scale)
        tau_k = w.tau[model.v_slice(k)]
        np.testing.assert_allclose(swap(w.actuation[k]), S @ tau_k, rtol=0, atol=1e-13 * scale)


def test_paper_model_against_pinocchio(rng):
    model = models.space_manipulator(gravity=(0.0, 0.0, -9.81))
    pm = to_pinocchio(model)
    pd = pm.createData()
    worst = 0.0
    for _ in range(10):
        q, v, _, fext = random_state(model, rng)
        a = rng.normal(size=model.nv)
        w = constraint_wrenches(model, q, v, a, fext)
        for k, f in pin_joint_forces(model, pm, pd, q, v, a, fext).items():
            worst = max(worst, rel(w.wrench[k], f))
        assert rel(w.tau, inverse_dynamics(model, q, v, a, fext)) < TOL
        check_split(model, w)
    assert worst < TOL, worst


def test_random_trees_against_pinocchio():
    """50 random trees: the recursion's wrenches against ``data.f`` and the subtree sums,
    for given accelerations and from the forward dynamics."""
    rng = np.random.default_rng(4)
    worst = np.zeros(3)
    fixed_seen = 0
    for i in range(50):
        model = random_tree(rng, int(rng.integers(1, 41)), floating=bool(i % 2))
        pm = to_pinocchio(model)
        pd = pm.createData()
        q, v, tau, fext = random_state(model, rng)
        a = rng.normal(size=model.nv)
        w = constraint_wrenches(model, q, v, a, fext)
        ref = subtree_newton_euler(model, pm, pd, q, v, a, fext)
        worst[0] = max(worst[0], rel(w.wrench, ref))
        fixed_seen += int(np.sum(model.joint_type == JointType.FIXED))
        res = forward_dynamics_aba(model, q, v, tau, fext, return_constraint_wrenches=True)
        for k, f in pin_joint_forces(model, pm, pd, q, v, res.a, fext).items():
            worst[1] = max(worst[1], rel(res.wrenches.wrench[k], f))
        worst[2] = max(worst[2], rel(res.wrenches.tau, tau))
        check_split(model, res.wrenches)
    assert fixed_seen > 10
    assert worst.max() < TOL, worst


def test_forward_dynamics_wrenches_equal_inverse_dynamics_wrenches(rng):
    model = random_tree(rng, 30, floating=False)
    q, v, tau, fext = random_state(model, rng)
    res = forward_dynamics_aba(model, q, v, tau, fext, return_constraint_wrenches=True)
    w = constraint_wrenches(model, q, v, res.a, fext)
    for name in ("wrench", "actuation", "constraint"):
        assert rel(getattr(res.wrenches, name), getattr(w, name)) < TOL


def test_free_floating_base_carries_no_wrench(rng):
    """Free-floating (zero base force): the base's joint transmits nothing."""
    model = models.space_manipulator()
    q, v, tau, _ = random_state(model, rng)
    tau[:6] = 0.0
    res = forward_dynamics_aba(model, q, v, tau, return_constraint_wrenches=True)
    assert np.abs(res.wrenches.wrench[0]).max() < 1e-12 * np.abs(res.wrenches.wrench).max()


def test_pendulum_closed_form():
    """Planar pendulum about z, gravity along -y: reaction force m (a_c - g), no moment."""
    m, ell, g0 = 2.0, 0.5, 9.81
    J = np.diag([0.01, 0.02, 0.03])
    model = Model.build(
        [Body("p", None, Joint(JointType.REVOLUTE, [0.0, 0.0, 1.0]), m, [ell, 0.0, 0.0], J)],
        gravity=[0.0, -g0, 0.0],
    )
    for th, om in [(0.3, 0.0), (-1.2, 2.5), (2.9, -4.0)]:
        res = forward_dynamics_aba(model, [th], [om], [0.0], return_constraint_wrenches=True)
        thdd = -m * g0 * ell * np.cos(th) / (J[2, 2] + m * ell**2)
        assert abs(res.a[0] - thdd) < 1e-12
        c, s = np.cos(th), np.sin(th)
        a_c = ell * (thdd * np.array([-s, c, 0.0]) - om**2 * np.array([c, s, 0.0]))
        F = m * (a_c - np.array([0.0, -g0, 0.0]))
        R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        expected = np.concatenate([R.T @ F, np.zeros(3)])
        np.testing.assert_allclose(res.wrenches.constraint[0], expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.wrenches.actuation[0], 0.0, atol=1e-12)


# ----------------------------------------------------------------- bad input


def test_constraint_wrenches_bad_a_shape():
    model = models.space_manipulator()
    q = model.neutral_configuration()
    with pytest.raises(ValueError, match=r"a must have shape \(13,\), got \(7,\)"):
        constraint_wrenches(model, q, np.zeros(13), np.zeros(7))


def test_constraint_wrenches_non_finite_a():
    model = models.space_manipulator()
    q = model.neutral_configuration()
    a = np.zeros(13)
    a[9] = np.nan
    with pytest.raises(ValueError, match=r"a\[9\] is not finite"):
        constraint_wrenches(model, q, np.zeros(13), a)
