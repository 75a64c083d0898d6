"""dqspace's multibody engine against Pinocchio, the independent reference (issue 3).

Quantities: ``mass_matrix`` vs ``pin.crba`` (upper triangle symmetrized),
``inverse_dynamics`` vs ``pin.rnea``, ``forward_dynamics`` vs ``pin.aba``, frame
poses vs ``data.oMf`` and ``frame_jacobian`` with the three ``Reference`` values
vs ``pin.getFrameJacobian`` (LOCAL / WORLD / LOCAL_WORLD_ALIGNED, rows ``[v, w]``
reordered to ``[w, v]``).  All to 1e-10 relative to the reference's norm.
Run with ``-s`` to see the worst error per quantity.

Models: the paper's space manipulator (through the bridge ``to_pinocchio``);
50 random URDF trees, loaded by dqspace's ``model_from_urdf`` and,
independently, by Pinocchio's own ``pin.buildModelFromXML``; an arm with a
spherical joint.  Part of every comparison runs with gravity.
"""

import numpy as np
import pinocchio as pin
import pytest

from dqspace.multibody import (
    frame_jacobian,
    frame_pose,
    inverse_dynamics,
    mass_matrix,
    model_from_urdf,
    models,
)
from support.pin_bridge import to_pinocchio
from support.pin_compare import (
    QUANTITIES,
    Worst,
    compare_state,
    pin_model_from_urdf,
    random_state,
    rel_err,
)
from support.random_trees import random_trees
from support.spherical_models import chain_to_spherical, spherical_arm, zyx_chain_arm

TOL = 1e-10
G = np.array([0.0, 0.0, -9.81])


def _check(worst, title):
    worst.report(title)
    assert worst.count > 0 and set(worst.err) == set(QUANTITIES)
    bad = {k: e for k, e in worst.err.items() if not e < TOL}
    assert not bad, f"{title}: relative errors above {TOL:g}: {bad}"


def _bridge_frames(model, pm):
    return {
        name: pm.getFrameId(name) for name in (*model.body_names, *(f.name for f in model.frames))
    }


def test_paper_model_agrees_with_pinocchio_at_1000_states(rng):
    worst = Worst()
    for gravity in (None, G):  # 500 states in free space, 500 under gravity
        model = models.space_manipulator(gravity=gravity)
        pm = to_pinocchio(model)
        pd = pm.createData()
        frames = _bridge_frames(model, pm)
        assert "ee" in frames
        for _ in range(500):
            worst.update(compare_state(model, pm, pd, frames, *random_state(model, rng)))
    assert worst.count == 1000
    _check(worst, "paper's space manipulator vs Pinocchio (bridge)")


@pytest.mark.slow
def test_random_urdf_trees_agree_with_pinocchio():
    """50 random trees (25 floating, 25 fixed; half of each under gravity), 20 states each."""
    trees = random_trees(seed=31, count=50)
    rng = np.random.default_rng(32)
    worst = {True: Worst(), False: Worst()}
    n_bodies = []
    for i, tree in enumerate(trees):
        gravity = G if (i // 2) % 2 == 0 else np.zeros(3)
        model = model_from_urdf(tree.xml, floating=tree.floating, gravity=gravity)
        pm = pin_model_from_urdf(tree.xml, tree.floating, gravity)
        pd = pm.createData()
        assert (model.nv, model.floating) == (pm.nv, tree.floating)
        link_names = [f.name for f in model.frames]
        assert len(link_names) == tree.n_links
        frames = {n: pm.getFrameId(n, pin.FrameType.BODY) for n in link_names}
        n_bodies.append(model.nb)
        for _ in range(20):
            worst[tree.floating].update(
                compare_state(model, pm, pd, frames, *random_state(model, rng))
            )
    assert max(n_bodies) >= 25 and sum(t.floating for t in trees) == 25
    assert {"fixed", "revolute", "prismatic"} <= {k for t in trees for k in t.joint_types}
    print(f"\nrandom trees: {len(trees)}, bodies per tree {min(n_bodies)}..{max(n_bodies)}")
    _check(worst[True], "random URDF trees, floating base, vs Pinocchio's URDF parser")
    _check(worst[False], "random URDF trees, fixed base, vs Pinocchio's URDF parser")


def test_spherical_joint_agrees_with_pinocchio(rng):
    """The spherical joint against Pinocchio's JointModelSpherical ([x, y, z, w], local w)."""
    worst = Worst()
    for gravity in (None, G):
        model = spherical_arm(gravity)
        pm = to_pinocchio(model)
        pd = pm.createData()
        assert any(j.shortname() == "JointModelSpherical" for j in pm.joints)
        frames = _bridge_frames(model, pm)
        for _ in range(100):
            worst.update(compare_state(model, pm, pd, frames, *random_state(model, rng)))
    _check(worst, "arm with a spherical wrist vs Pinocchio")


def test_spherical_joint_equals_zyx_revolute_chain(rng):
    """A spherical joint is three revolute joints z, y, x through one point with massless links.

    With the chain's Euler angles phi and the body rate map ``w = T(phi) phi_dot``
    (``v_s = Tf v_c``, ``a_s = Tf a_c + Tf_dot v_c``), virtual power gives
    ``tau_c = Tf^T tau_s``, ``M_c = Tf^T M_s Tf``, frame Jacobians ``J_c = J_s Tf``
    and equal poses.  The massless intermediate links are obtained exactly by
    linearity in the inertias: chain(outer bodies x2) - chain(outer bodies x1).
    Pitch is kept within +-1.2 rad, away from the Z-Y-X singularity (T singular).
    """
    errs = dict.fromkeys(("pose", "jacobian", "mass_matrix", "inverse_dynamics"), 0.0)
    for gravity in (None, G):
        sph = spherical_arm(gravity)
        c1 = zyx_chain_arm(gravity)
        c2 = zyx_chain_arm(gravity, outer_scale=2.0)
        for _ in range(100):
            q_c = c1.random_configuration(rng)
            q_c[10] = rng.uniform(-1.2, 1.2)  # pitch
            v_c, a_c = rng.normal(size=c1.nv), rng.normal(size=c1.nv)
            q_s, v_s, a_s, Tf = chain_to_spherical(q_c, v_c, a_c)
            for name in ("wrist", "hand", "tool"):
                errs["pose"] = max(
                    errs["pose"], rel_err(frame_pose(c1, q_c, name), frame_pose(sph, q_s, name))
                )
                errs["jacobian"] = max(
                    errs["jacobian"],
                    rel_err(frame_jacobian(c1, q_c, name), frame_jacobian(sph, q_s, name) @ Tf),
                )
            M_c = mass_matrix(c2, q_c) - mass_matrix(c1, q_c)
            errs["mass_matrix"] = max(
                errs["mass_matrix"], rel_err(M_c, Tf.T @ mass_matrix(sph, q_s) @ Tf)
            )
            tau_c = inverse_dynamics(c2, q_c, v_c, a_c) - inverse_dynamics(c1, q_c, v_c, a_c)
            errs["inverse_dynamics"] = max(
                errs["inverse_dynamics"],
                rel_err(tau_c, Tf.T @ inverse_dynamics(sph, q_s, v_s, a_s)),
            )
    print("\nspherical joint vs Z-Y-X revolute chain, worst relative error:")
    for k, e in errs.items():
        print(f"  {k:<30s} {e:.2e}")
    assert max(errs.values()) < TOL, errs
