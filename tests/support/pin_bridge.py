"""Pinocchio as the independent reference: model and state conversion.

Pinocchio's free-flyer configuration is ``[x, y, z, qx, qy, qz, qw]`` and its
velocity the local ``[v, w]``; its spherical joint is ``[qx, qy, qz, qw]``
with the local angular velocity.  dqspace's base is the unit dual quaternion
and the body twist ``[w, v]`` (see docs/conventions.md); generalized forces
of the base are ``[torque, force]`` here and ``[force, torque]`` there.
FIXED joints of a dqspace model are merged into their parent's inertia, as
Pinocchio's URDF parser does.
"""

import numpy as np
import pinocchio as pin

from dqspace.dq import transform_from_dq, translation_from_dq
from dqspace.multibody import JointType


def se3(dq):
    T = transform_from_dq(dq)
    return pin.SE3(T[:3, :3], T[:3, 3].copy())


def to_pinocchio(model):
    """A pin.Model with the same bodies, joints and inertias (gravity copied)."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.asarray(model.gravity, float), np.zeros(3))
    joint_of = {}  # dqspace body -> (pin joint id, pose of body in that joint frame)
    for k in range(model.nb):
        t = JointType(int(model.joint_type[k]))
        p = int(model.parent[k])
        if p < 0:
            pj, X_pj = 0, pin.SE3.Identity()
        else:
            pj, X_pj = joint_of[p]
        place = X_pj * se3(model.joint_placement[k])
        ax = np.asarray(model.joint_axis[k], float)
        if t == JointType.FIXED:
            jid, X = pj, place
        else:
            if t == JointType.FREE:
                jm = pin.JointModelFreeFlyer()
            elif t == JointType.SPHERICAL:
                jm = pin.JointModelSpherical()
            elif t == JointType.REVOLUTE:
                jm = pin.JointModelRevoluteUnaligned(ax)
            else:
                jm = pin.JointModelPrismaticUnaligned(ax)
            jid = pm.addJoint(pj, jm, place, model.joint_names[k])
            X = pin.SE3.Identity()
        inertia = pin.Inertia(
            float(model.mass[k]),
            np.asarray(model.com[k], float),
            np.asarray(model.inertia_com[k], float),
        )
        pm.appendBodyToJoint(jid, inertia, X)
        pm.addBodyFrame(model.body_names[k], jid, X, 0)
        joint_of[k] = (jid, X)
    for f in model.frames:
        jid, X = joint_of[int(f.body)]
        pm.addFrame(pin.Frame(f.name, jid, 0, X * se3(f.placement), pin.FrameType.OP_FRAME))
    return pm


def _perm(model):
    """Index maps between dqspace's v ordering and Pinocchio's (same joint order)."""
    idx = []
    for k in range(model.nb):
        t = JointType(int(model.joint_type[k]))
        i = int(model.v_index[k])
        if t == JointType.FREE:
            idx += [i + 3, i + 4, i + 5, i, i + 1, i + 2]  # pin [v, w] <- ours [w, v]
        else:
            idx += list(range(i, i + int(model.joint_nv[k])))
    return np.array(idx, dtype=int)


def q_to_pin(model, q):
    out = []
    for k in range(model.nb):
        t = JointType(int(model.joint_type[k]))
        s = q[model.q_slice(k)]
        if t == JointType.FREE:
            out += [*translation_from_dq(s), *s[1:4], s[0]]
        elif t == JointType.SPHERICAL:
            out += [*s[1:4], s[0]]
        else:
            out += list(s)
    return np.array(out)


def v_to_pin(model, v):
    """Velocities, accelerations and generalized forces: ours -> Pinocchio's."""
    return np.asarray(v)[_perm(model)]


def v_from_pin(model, v_pin):
    out = np.empty_like(v_pin)
    out[_perm(model)] = v_pin
    return out
