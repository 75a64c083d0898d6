"""Random multibody trees built programmatically (``Model.build``), and Pinocchio force helpers.

:func:`random_tree` draws a tree of ``nb`` bodies: a floating (FREE) or a
fixed root (a revolute, prismatic, spherical or fixed joint to the inertial
frame), then bodies whose parent is the previous body (deep chains) or any
earlier one (branches), attached by revolute, prismatic, spherical or fixed
joints with random unit axes and random placements (rotation uniform,
translation up to 0.4 m per axis).  Masses are uniform in [0.5, 5] kg,
centres of mass within 0.15 m of the body origin, inertias valid (principal
moments ``(s2 + s3, s1 + s3, s1 + s2)`` from random second moments, rotated
at random), as in ``random_trees.py``'s URDF trees.

Pinocchio merges a FIXED body into its parent joint (``pin_bridge``), so its
forces live per joint: :func:`pin_external_forces` sums the bodies' external
wrenches into Pinocchio's per-joint ``pin.Force`` list, and
:func:`pin_body_frame` gives each body's frame (joint id and placement in it).
"""

import numpy as np
import pinocchio as pin

from dqspace.multibody import Body, Joint, JointType, Model
from support.random import random_pose, random_unit_quat

ROOT_FIXED_BASE = (JointType.REVOLUTE, JointType.PRISMATIC, JointType.SPHERICAL, JointType.FIXED)


def random_inertia(rng, mass):
    """A valid inertia (3, 3) about the centre of mass [kg m^2], body size ~0.05-0.3 m."""
    s = mass * rng.uniform(0.05, 0.3, 3) ** 2 / 3.0  # second moments m <x_i^2>
    q = random_unit_quat(rng)
    w, x, y, z = q
    R = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )
    J = R @ np.diag([s[1] + s[2], s[0] + s[2], s[0] + s[1]]) @ R.T
    return 0.5 * (J + J.T)


def _unit(rng):
    u = rng.normal(size=3)
    return u / np.linalg.norm(u)


def random_tree(
    rng,
    nb,
    *,
    floating=True,
    p_spherical=0.15,
    p_prismatic=0.2,
    p_fixed=0.1,
    gravity=(0.0, 0.0, -9.81),
):
    """A random tree Model of ``nb`` bodies (see the module docstring).

    Parameters
    ----------
    rng : numpy.random.Generator
    nb : int, number of bodies (>= 1)
    floating : bool, FREE root if True, else a root joint drawn from ROOT_FIXED_BASE
    p_spherical, p_prismatic, p_fixed : probabilities of each joint type for the
        non-root bodies (the rest are revolute)
    gravity : (3,) [m/s^2]
    """
    bodies = []
    for k in range(nb):
        if k == 0:
            jt = JointType.FREE if floating else ROOT_FIXED_BASE[int(rng.integers(4))]
            parent = None
        else:
            u = rng.uniform()
            jt = (
                JointType.SPHERICAL
                if u < p_spherical
                else JointType.PRISMATIC
                if u < p_spherical + p_prismatic
                else JointType.FIXED
                if u < p_spherical + p_prismatic + p_fixed
                else JointType.REVOLUTE
            )
            parent = k - 1 if rng.uniform() < 0.5 else int(rng.integers(k))
        place = random_pose(rng, scale=0.25)
        mass = rng.uniform(0.5, 5.0)
        bodies.append(
            Body(
                f"b{k}",
                parent,
                Joint(jt, axis=_unit(rng), placement=place, name=f"j{k}"),
                mass,
                rng.uniform(-0.15, 0.15, 3),
                random_inertia(rng, mass),
            )
        )
    return Model.build(bodies, gravity=gravity)


def random_chain(rng, nb, *, floating=True, gravity=(0.0, 0.0, -9.81)):
    """A serial chain of ``nb`` bodies with revolute joints (FREE or revolute root)."""
    bodies = []
    for k in range(nb):
        jt = JointType.FREE if (k == 0 and floating) else JointType.REVOLUTE
        mass = rng.uniform(0.5, 5.0)
        bodies.append(
            Body(
                f"b{k}",
                None if k == 0 else k - 1,
                Joint(jt, axis=_unit(rng), placement=random_pose(rng, scale=0.25)),
                mass,
                rng.uniform(-0.15, 0.15, 3),
                random_inertia(rng, mass),
            )
        )
    return Model.build(bodies, gravity=gravity)


def random_state(model, rng):
    """(q, v, tau, f_ext): random configuration, N(0, 1) velocities and forces, N(0, 1) wrenches."""
    return (
        model.random_configuration(rng),
        rng.normal(size=model.nv),
        rng.normal(size=model.nv),
        rng.normal(size=(model.nb, 6)),
    )


def pin_body_frame(model, pm, k):
    """(joint id, placement ``pin.SE3`` of body k's frame in that joint's frame) in Pinocchio."""
    f = pm.frames[pm.getFrameId(model.body_names[k])]
    return f.parentJoint, f.placement


def pin_external_forces(model, pm, fext):
    """Body wrenches ``[f, tau]`` (nb, 6) as Pinocchio's per-joint ``pin.Force`` list."""
    out = [pin.Force.Zero() for _ in range(pm.njoints)]
    for k in range(model.nb):
        jid, X = pin_body_frame(model, pm, k)
        out[jid] = out[jid] + X.act(pin.Force(fext[k, :3], fext[k, 3:]))
    return pin.StdVec_Force(out)


__all__ = [
    "random_inertia",
    "random_tree",
    "random_chain",
    "random_state",
    "pin_body_frame",
    "pin_external_forces",
]
