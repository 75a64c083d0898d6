"""A floating arm with a spherical wrist, and the same arm with the wrist as a Z-Y-X chain.

``spherical_arm()``: base (FREE) - link1 (revolute) - wrist (SPHERICAL) - hand
(revolute), frame ``"tool"`` on the hand.  ``zyx_chain_arm()``: the wrist's
spherical joint replaced by three revolute joints about z, y, x (in that order,
all at the wrist centre), with two intermediate bodies ``t1``, ``t2``.

Since inverse dynamics and the mass matrix are linear in the inertial
parameters, the chain with *massless* intermediate bodies (which Model cannot
hold) is the difference of two valid chains: one with the outer bodies' mass
and inertia doubled (``outer_scale=2``) minus one with them as given: the
intermediate bodies' share cancels exactly.
"""

import numpy as np

from dqspace.dq import dq_from_quat_translation, dq_from_translation, quat_from_axis_angle
from dqspace.multibody import Body, Frame, Joint, JointType, Model
from support.random_trees import random_inertia

Z, Y, X = np.eye(3)[2], np.eye(3)[1], np.eye(3)[0]
_rng = np.random.default_rng(7)
_J_WRIST = random_inertia(_rng, 2.0)
_J_HAND = random_inertia(_rng, 1.0)
_J_T1 = random_inertia(_rng, 1.3)
_J_T2 = random_inertia(_rng, 0.7)
_WRIST_PLACE = dq_from_quat_translation(
    quat_from_axis_angle([0.3, -0.5, 0.8], 0.7), [0.05, 0.02, 0.36]
)
_HAND_AXIS = np.array([0.48, 0.6, 0.64])  # unit


def _outer(scale):
    """(base, link1, wrist-less hand) bodies' mass and inertia scaled by ``scale``."""
    base = Body(
        "base",
        None,
        Joint(JointType.FREE, name="base"),
        27.0 * scale,
        np.zeros(3),
        0.405 * scale * np.eye(3),
    )
    J1 = np.array([[0.1612, 0, 0], [0, 0.1476, 0.0144], [0, 0.0144, 0.0236]])
    link1 = Body(
        "link1",
        "base",
        Joint(JointType.REVOLUTE, Z, dq_from_translation([0, 0, 0.15]), "j1"),
        4.0 * scale,
        np.array([0.0, -0.03, 0.12]),
        scale * J1,
    )
    return base, link1


def _hand(parent, scale):
    return Body(
        "hand",
        parent,
        Joint(JointType.REVOLUTE, _HAND_AXIS, dq_from_translation([0.01, -0.02, 0.2]), "jh"),
        1.0 * scale,
        np.array([0.02, 0.0, 0.05]),
        scale * _J_HAND,
    )


_TOOL = [Frame("tool", "hand", dq_from_translation([0.0, 0.03, 0.1]))]


def spherical_arm(gravity=None):
    base, link1 = _outer(1.0)
    wrist = Body(
        "wrist",
        "link1",
        Joint(JointType.SPHERICAL, placement=_WRIST_PLACE, name="js"),
        2.0,
        np.array([0.01, 0.02, 0.08]),
        _J_WRIST,
    )
    return Model.build([base, link1, wrist, _hand("wrist", 1.0)], _TOOL, gravity=gravity)


def zyx_chain_arm(gravity=None, outer_scale=1.0):
    s = outer_scale
    base, link1 = _outer(s)
    t1 = Body(
        "t1",
        "link1",
        Joint(JointType.REVOLUTE, Z, _WRIST_PLACE, "jz"),
        1.3,
        np.array([0.03, -0.01, 0.02]),
        _J_T1,
    )
    t2 = Body(
        "t2",
        "t1",
        Joint(JointType.REVOLUTE, Y, name="jy"),
        0.7,
        np.array([-0.02, 0.01, 0.04]),
        _J_T2,
    )
    wrist = Body(
        "wrist",
        "t2",
        Joint(JointType.REVOLUTE, X, name="jx"),
        2.0 * s,
        np.array([0.01, 0.02, 0.08]),
        s * _J_WRIST,
    )
    return Model.build([base, link1, t1, t2, wrist, _hand("wrist", s)], _TOOL, gravity=gravity)


def _rot(axis, angle):
    from dqspace.dq import rotation_matrix_from_quat

    return rotation_matrix_from_quat(quat_from_axis_angle(axis, angle))


def _skew(a):
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def euler_rate_matrix(phi):
    """T (3, 3): body angular velocity of ``Rz(phi1) Ry(phi2) Rx(phi3)`` is ``T phi_dot``."""
    Ry, Rx = _rot(Y, phi[1]), _rot(X, phi[2])
    return np.column_stack([Rx.T @ Ry.T @ Z, Rx.T @ Y, X])


def euler_rate_matrix_dot(phi, phi_dot):
    """``(dT/dt) phi_dot`` along phi_dot, analytically (d/da R_a(a)^T = -[a]x R_a(a)^T)."""
    Ry, Rx = _rot(Y, phi[1]), _rot(X, phi[2])
    c1, c2 = Rx.T @ Ry.T @ Z, Rx.T @ Y
    dc1 = -Rx.T @ _skew(Y) @ Ry.T @ Z * phi_dot[1] - _skew(X) @ c1 * phi_dot[2]
    dc2 = -_skew(X) @ c2 * phi_dot[2]
    return dc1 * phi_dot[0] + dc2 * phi_dot[1]


def chain_to_spherical(q_c, v_c, a_c):
    """Map a chain state to the spherical arm's: (q_s, v_s, a_s, Tf), ``v_s = Tf v_c`` (11, 11)."""
    from scipy.spatial.transform import Rotation

    phi, phi_dot = q_c[9:12], v_c[7:10]
    xyzw = Rotation.from_euler("ZYX", phi).as_quat()  # intrinsic Z-Y-X = Rz Ry Rx
    q_s = np.r_[q_c[:9], xyzw[3], xyzw[:3], q_c[12:]]
    Tf = np.eye(len(v_c))
    Tf[7:10, 7:10] = euler_rate_matrix(phi)
    a_s = Tf @ a_c
    a_s[7:10] += euler_rate_matrix_dot(phi, phi_dot)
    return q_s, Tf @ v_c, a_s, Tf
