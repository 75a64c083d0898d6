"""MuJoCo MJCF of a dqspace model, and state conversion both ways (for the benchmarks).

The MJCF describes the same rigid-body system: one MuJoCo body per dqspace
body, placed at the joint placement in its parent (``pos``/``quat``), with the
same joint (``<freejoint/>`` for a FREE root, ``hinge`` / ``slide`` with the
same axis through the body origin, no joint for FIXED), the same mass, centre
of mass and full inertia about the centre of mass (``<inertial pos mass
fullinertia="Ixx Iyy Izz Ixy Ixz Iyz">``), one ``site`` per named frame, and
nothing else: no geoms, contacts disabled (``<flag contact="disable"/>``),
no damping, armature or friction loss, the model's gravity,
``integrator="RK4"``.

Conventions (MuJoCo 3.x/4.x documentation of the free joint, and
``google-deepmind/mujoco`` issue 691): a free joint's ``qpos`` is
``[r (world), quat (w, x, y, z)]`` of the body frame and its ``qvel`` is
``[v, w]`` with ``v`` the velocity of the body frame's origin in **world**
coordinates and ``w`` the angular velocity in the **local** body frame; its
``qacc`` is the time derivative of that ``qvel``.  dqspace's base velocity is
the body twist ``[w, v^B]`` (both in body coordinates), so
``v_mj = R v^B``, and accelerations need the transport term:
``d/dt (R v^B) = R (dv^B/dt + w x v^B)``.
"""

import numpy as np

from dqspace.dq import (
    dq_from_quat_translation,
    rotation_matrix_from_dq,
    translation_from_dq,
)
from dqspace.multibody import JointType

__all__ = ["to_mjcf", "q_to_mujoco", "v_to_mujoco", "q_from_mujoco", "v_from_mujoco"]

_IDENTITY = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])


def _num(x):
    return " ".join(repr(float(c)) for c in np.ravel(x))


def to_mjcf(model, *, timestep=1e-3, integrator="RK4", name="dqspace"):
    """MJCF text (str) of ``model`` (FREE root or fixed base; revolute, prismatic, fixed joints).

    Parameters
    ----------
    model : dqspace.multibody.Model
    timestep : float, MuJoCo's ``timestep`` [s]
    integrator : str, MuJoCo's ``integrator`` (``"RK4"``, ``"Euler"``, ...)
    name : str, the model's name

    Raises
    ------
    ValueError
        for a spherical joint or a FREE root with a non-identity placement
        (not needed by the benchmarks, so not written).
    """
    children = {k: [] for k in range(-1, model.nb)}
    for k in range(model.nb):
        children[int(model.parent[k])].append(k)
    frames_of = {k: [] for k in range(model.nb)}
    for f in model.frames:
        frames_of[int(f.body)].append(f)

    def body(k, indent):
        pad = " " * indent
        t = JointType(int(model.joint_type[k]))
        place = model.joint_placement[k]
        pos, quat = translation_from_dq(place), place[:4]
        lines = [f'{pad}<body name="{model.body_names[k]}" pos="{_num(pos)}" quat="{_num(quat)}">']
        if t == JointType.FREE:
            if not np.allclose(place, _IDENTITY, atol=0.0):
                raise ValueError(
                    f"body {model.body_names[k]!r}: FREE joint with a non-identity placement "
                    f"{place.tolist()} is not supported"
                )
            lines.append(f'{pad}  <freejoint name="{model.joint_names[k]}"/>')
        elif t in (JointType.REVOLUTE, JointType.PRISMATIC):
            kind = "hinge" if t == JointType.REVOLUTE else "slide"
            lines.append(
                f'{pad}  <joint name="{model.joint_names[k]}" type="{kind}" pos="0 0 0" '
                f'axis="{_num(model.joint_axis[k])}" damping="0" armature="0" '
                'frictionloss="0" limited="false"/>'
            )
        elif t != JointType.FIXED:
            raise ValueError(f"body {model.body_names[k]!r}: joint type {t.name} not supported")
        J = model.inertia_com[k]
        full = [J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]]
        lines.append(
            f'{pad}  <inertial pos="{_num(model.com[k])}" mass="{float(model.mass[k])!r}" '
            f'fullinertia="{_num(full)}"/>'
        )
        for f in frames_of[k]:
            fp = np.asarray(f.placement, float)
            lines.append(
                f'{pad}  <site name="{f.name}" pos="{_num(translation_from_dq(fp))}" '
                f'quat="{_num(fp[:4])}"/>'
            )
        for c in children[k]:
            lines += body(c, indent + 2)
        lines.append(f"{pad}</body>")
        return lines

    world = []
    for k in children[-1]:
        world += body(k, 4)
    return "\n".join(
        [
            f'<mujoco model="{name}">',
            '  <compiler angle="radian" inertiafromgeom="false"/>',
            f'  <option timestep="{timestep!r}" integrator="{integrator}" '
            f'gravity="{_num(model.gravity)}">',
            '    <flag contact="disable"/>',
            "  </option>",
            "  <worldbody>",
            *world,
            "  </worldbody>",
            "</mujoco>",
        ]
    )


def _joints(model):
    for k in range(model.nb):
        t = JointType(int(model.joint_type[k]))
        if t != JointType.FIXED:
            yield k, t, int(model.q_index[k]), int(model.v_index[k])


def q_to_mujoco(model, q):
    """dqspace configuration (nq,) -> MuJoCo ``qpos`` (FREE root: 7 numbers, then joints)."""
    out = []
    for _, t, iq, _ in _joints(model):
        if t == JointType.FREE:
            dq = q[iq : iq + 8]
            out += [*translation_from_dq(dq), *dq[:4]]
        else:
            out.append(q[iq])
    return np.array(out)


def q_from_mujoco(model, qpos):
    """MuJoCo ``qpos`` -> dqspace configuration (nq,)."""
    out, i = [], 0
    for _, t, _, _ in _joints(model):
        if t == JointType.FREE:
            quat = qpos[i + 3 : i + 7] / np.linalg.norm(qpos[i + 3 : i + 7])
            out += list(dq_from_quat_translation(quat, qpos[i : i + 3]))
            i += 7
        else:
            out.append(qpos[i])
            i += 1
    return np.array(out)


def _base_rotation(model, q, k):
    iq = int(model.q_index[k])
    return rotation_matrix_from_dq(q[iq : iq + 8])


def v_to_mujoco(model, q, v, a=None):
    """dqspace velocities (nv,) at q -> MuJoCo ``qvel``; with ``a`` given, the accelerations
    ``a`` -> MuJoCo ``qacc`` (the free joint's linear part gets the transport term)."""
    out = np.array(v if a is None else a, dtype=float)
    for k, t, _, iv in _joints(model):
        if t == JointType.FREE:
            R = _base_rotation(model, q, k)
            w, vb = v[iv : iv + 3], v[iv + 3 : iv + 6]
            if a is None:
                lin = R @ vb
                ang = w
            else:
                lin = R @ (a[iv + 3 : iv + 6] + np.cross(w, vb))
                ang = a[iv : iv + 3]
            out[iv : iv + 3], out[iv + 3 : iv + 6] = lin, ang
    return out


def v_from_mujoco(model, q, qvel):
    """MuJoCo ``qvel`` at the dqspace configuration q -> dqspace velocities (nv,)."""
    out = np.array(qvel, dtype=float)
    for k, t, _, iv in _joints(model):
        if t == JointType.FREE:
            R = _base_rotation(model, q, k)
            out[iv : iv + 3] = qvel[iv + 3 : iv + 6]
            out[iv + 3 : iv + 6] = R.T @ qvel[iv : iv + 3]
    return out


if __name__ == "__main__":  # the MJCF of the paper's model on stdout
    from dqspace.multibody import models

    print(to_mjcf(models.space_manipulator()))
