"""Random URDF trees (seeded) for validating the URDF builder and the engine.

Each tree has up to 30 links with revolute, prismatic and fixed joints,
branching (a link's parent is drawn among the earlier links, biased towards
the recent ones so that trees are deep as well as wide), random joint
origins (xyz, rpy), random unit axes and random valid inertias: principal
moments ``(s2 + s3, s1 + s3, s1 + s2)`` from random second moments ``s_i > 0``
(so the triangle inequality holds), rotated by a random rotation, about a
random centre of mass, in an inertial frame with a random ``rpy``.  Some links
attached by fixed joints carry no ``<inertial>`` (massless frames).

Joint names are random so that their byte order (the order in which urdfdom,
and hence Pinocchio, visits a link's children) differs from the declaration
order, and the ``<link>``/``<joint>`` elements are shuffled.  Numbers are
written with ``repr`` (17 significant digits), so every parser reads the same
doubles.
"""

from dataclasses import dataclass

import numpy as np

from support.random import random_unit_quat


@dataclass(frozen=True)
class RandomTree:
    """A random URDF tree.

    Attributes
    ----------
    xml : str, the URDF
    floating : bool, whether it is meant to be loaded with a floating base
    n_links : int
    joint_types : tuple of str, URDF type of each joint in declaration order
    """

    xml: str
    floating: bool
    n_links: int
    joint_types: tuple


def _f(x):
    return repr(float(x))


def _vec(v):
    return " ".join(_f(x) for x in v)


def _rotation(rng):
    from dqspace.dq import rotation_matrix_from_quat

    return rotation_matrix_from_quat(random_unit_quat(rng))


def random_inertia(rng, mass):
    """A valid inertia (3, 3) about the CoM [kg m^2] for a body of size ~0.05-0.3 m."""
    s = mass * rng.uniform(0.05, 0.3, 3) ** 2 / 3.0  # second moments  m <x^2> ...
    moments = np.array([s[1] + s[2], s[0] + s[2], s[0] + s[1]])
    R = _rotation(rng)
    J = R @ np.diag(moments) @ R.T
    return 0.5 * (J + J.T)


def _inertial_xml(rng):
    mass = rng.uniform(0.5, 5.0)
    com = rng.uniform(-0.15, 0.15, 3)
    rpy = rng.uniform(-np.pi, np.pi, 3)
    rpy[1] = rng.uniform(-1.4, 1.4)
    J = random_inertia(rng, mass)
    return (
        f'<inertial><origin xyz="{_vec(com)}" rpy="{_vec(rpy)}"/>'
        f'<mass value="{_f(mass)}"/>'
        f'<inertia ixx="{_f(J[0, 0])}" ixy="{_f(J[0, 1])}" ixz="{_f(J[0, 2])}" '
        f'iyy="{_f(J[1, 1])}" iyz="{_f(J[1, 2])}" izz="{_f(J[2, 2])}"/></inertial>'
    )


def random_urdf(rng, *, n_links=None, floating=False, max_links=30, p_fixed=0.2, p_prismatic=0.25):
    """A random URDF tree; see the module docstring.

    Parameters
    ----------
    rng : numpy.random.Generator
    n_links : int, optional; default uniform in [2, max_links]
    floating : bool, recorded in the result (the URDF itself is the same)
    p_fixed, p_prismatic : probabilities of a fixed / prismatic joint (else revolute);
        the first joint is never fixed, so that every tree has a degree of freedom

    Returns
    -------
    RandomTree
    """
    n = int(rng.integers(2, max_links + 1)) if n_links is None else int(n_links)
    names = [f"link{i}" for i in range(n)]
    links = []
    joints = []
    types = []
    used = set()
    for i in range(n):
        kind = "root"
        if i > 0:
            u = rng.uniform(p_fixed if i == 1 else 0.0, 1.0)  # joint 1 moves: nv > 0
            kind = (
                "fixed" if u < p_fixed else "prismatic" if u < p_fixed + p_prismatic else "revolute"
            )
        massless = kind == "fixed" and rng.uniform() < 0.3
        body = "" if massless else _inertial_xml(rng)
        links.append(f'<link name="{names[i]}">{body}</link>')
        if i == 0:
            continue
        parent = (
            int(rng.integers(max(0, i - 4), i)) if rng.uniform() < 0.7 else int(rng.integers(i))
        )
        while True:
            jname = f"j{int(rng.integers(10**6)):06d}"
            if jname not in used:
                used.add(jname)
                break
        xyz = rng.uniform(-0.4, 0.4, 3)
        rpy = rng.uniform(-np.pi, np.pi, 3)
        axis = random_unit_quat(rng)[1:]
        axis /= np.linalg.norm(axis)
        limit = (
            '<limit effort="100" velocity="10" lower="-3" upper="3"/>' if kind != "fixed" else ""
        )
        joints.append(
            f'<joint name="{jname}" type="{kind}"><parent link="{names[parent]}"/>'
            f'<child link="{names[i]}"/><origin xyz="{_vec(xyz)}" rpy="{_vec(rpy)}"/>'
            f'<axis xyz="{_vec(axis)}"/>{limit}</joint>'
        )
        types.append(kind)
    elements = links + joints
    order = rng.permutation(len(elements))
    xml = '<?xml version="1.0"?>\n<robot name="random_tree">\n'
    xml += "\n".join(elements[k] for k in order) + "\n</robot>\n"
    return RandomTree(xml, bool(floating), n, tuple(types))


def random_trees(seed, count, *, floating_every=2, **kwargs):
    """``count`` random trees from one seed; every ``floating_every``-th is floating."""
    rng = np.random.default_rng(seed)
    return [random_urdf(rng, floating=(i % floating_every == 0), **kwargs) for i in range(count)]
