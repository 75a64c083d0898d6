"""Ready-made models: the paper's reference space manipulator (Sec. 5).

Base (Table 3): 27 kg, inertia 0.405 I kg m^2, centre of mass at its origin, a
0.3 m cube.  Arm (Table 5): KUKA iiwa, 7 revolute joints, standard DH.

Choices where the paper is silent (stated in ``docs/reference-system.md``):

* the arm's frame 0 is mounted at the centre of the base's top face,
  ``(0, 0, 0.15)`` m in the base frame, axes aligned with the base;
* the link mass properties of Table 5 are taken in each link's joint frame
  (origin on joint i, z along its axis, moving with link i).  In that frame
  every centre of mass lies along the link, between its joint and the next,
  and the smallest principal moment is about the link's long direction; in
  the standard-DH distal frame they would not be (link 1's centre of mass
  would sit above joint 2).
"""

import numpy as np

from ..dq import dq_identity
from .dh import DHRow, LinkInertia, arm_from_dh
from .model import Body, Joint, JointType

__all__ = [
    "IIWA_DH",
    "IIWA_LINKS",
    "BASE_MASS",
    "BASE_INERTIA",
    "ARM_MOUNT",
    "space_manipulator",
    "iiwa",
]

_D = np.radians
#: Standard DH rows [a, d, alpha, theta0] of the KUKA iiwa (paper Table 5).
IIWA_DH = (
    DHRow(0.0, 0.36, _D(-90.0)),
    DHRow(0.0, 0.0, _D(90.0)),
    DHRow(0.0, 0.42, _D(-90.0)),
    DHRow(0.0, 0.0, _D(90.0)),
    DHRow(0.0, 0.4, _D(-90.0)),
    DHRow(0.0, 0.0, _D(90.0)),
    DHRow(0.0, 0.126, 0.0),
)
#: Link mass [kg], inertia [Ixx, Iyy, Izz, Iyz, Ixz, Ixy] [kg m^2] about the CoM, CoM [m].
IIWA_LINKS = (
    LinkInertia.from_table(4.0, [0.1612, 0.1476, 0.0236, 0.0144, 0, 0], [0, -0.03, 0.12]),
    LinkInertia.from_table(
        4.0, [0.071, 0.0251, 0.0579, -0.0099, -5.04e-5, -7.08e-5], [3.0e-4, 0.059, 0.042]
    ),
    LinkInertia.from_table(3.0, [0.1334, 0.1257, 0.0127, -0.0117, 0, 0], [0, 0.03, 0.13]),
    LinkInertia.from_table(2.7, [0.0452, 0.0131, 0.0411, -0.0062, 0, 0], [0, 0.067, 0.034]),
    LinkInertia.from_table(
        1.7, [0.0306, 0.0278, 0.0057, -0.0027, -1.292e-5, -3.57e-6], [1.0e-4, 0.021, 0.076]
    ),
    LinkInertia.from_table(1.8, [0.0050, 0.0036, 0.0047, -4.32e-7, 0, 0], [0, 6.0e-4, 4.0e-4]),
    LinkInertia.from_table(0.3, [0.0011, 0.0011, 1.0e-3, 0, 0, 0], [0, 0, 0.02]),
)
BASE_MASS = 27.0  # [kg], Table 3
BASE_INERTIA = 0.405 * np.eye(3)  # [kg m^2], Table 3
BASE_SIZE = 0.3  # [m], cube edge
#: Pose of the arm's DH frame 0 in the base frame (a choice: centre of the top face).
# the pure translation (0, 0, BASE_SIZE / 2) written out, r = 1 and d = t r / 2 (importing
# must not run a compiled function: that would start numba's code generator, ~0.5 s)
ARM_MOUNT = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25 * BASE_SIZE])


def space_manipulator(
    *,
    mount=ARM_MOUNT,
    gravity=None,
    base_mass=BASE_MASS,
    payload_mass=0.0,
    payload_com=(0.0, 0.0, 0.05),
):
    """The paper's reference system: floating 27 kg base + KUKA iiwa, frame ``"ee"`` at the flange.

    Bodies: ``base`` (FREE joint), ``link1`` ... ``link7``; nq = 15, nv = 13.

    Parameters
    ----------
    mount : (8,) pose of the arm's DH frame 0 in the base frame
    gravity : (3,) uniform gravity [m/s^2], default none (space)
    base_mass : float [kg], the base's mass; its inertia scales with it (a uniform cube)
    payload_mass : float [kg], optional payload held at the flange: a 0.05 m solid
        sphere rigidly fixed to link 7 (a FIXED-joint body ``payload``), centred at
        ``payload_com`` [m] in the flange frame
    """
    base = Body(
        "base",
        None,
        Joint(JointType.FREE, placement=dq_identity(), name="base"),
        float(base_mass),
        np.zeros(3),
        BASE_INERTIA * (float(base_mass) / BASE_MASS),
    )
    model = arm_from_dh(
        IIWA_DH,
        IIWA_LINKS,
        convention="standard",
        base=base,
        mount=mount,
        flange="ee",
        gravity=gravity,
    )
    if payload_mass > 0.0:
        flange = model.frames[model.frame_index("ee")].placement
        r = 0.05
        payload = Body(
            "payload",
            "link7",
            Joint(JointType.FIXED, placement=flange, name="payload"),
            float(payload_mass),
            np.asarray(payload_com, float),
            0.4 * float(payload_mass) * r * r * np.eye(3),
        )
        model = model.with_bodies([payload])
    return model


def iiwa(*, gravity=None):
    """The iiwa arm alone on a fixed base (joint 1 attached to the inertial frame)."""
    return arm_from_dh(IIWA_DH, IIWA_LINKS, convention="standard", flange="ee", gravity=gravity)
