"""A capture target: a free rigid body with a grapple fixture, and its torque-free motion.

A :class:`Target` holds the mass properties of an uncontrolled body (a defunct satellite, a
rocket stage) and the pose of its grapple fixture in the target's body frame.  Its state is
that of a floating base (``docs/conventions.md``): the pose ``q^_{I,T}`` as a unit dual
quaternion (8,) and the body twist ``[w, v]`` (6,) of the target frame's origin, in the
target's axes.  The target *is* a one-body :class:`~dqspace.multibody.Model` with a ``FREE``
root (:attr:`Target.model`), so its motion, momentum and energy come from the floating-base
machinery (:func:`~dqspace.multibody.simulate_rk4`, :func:`~dqspace.multibody.momentum`),
not from integrators of its own.  ``docs/capture.md`` describes the capture.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import dq_from_quat_translation, dq_identity, dq_mul, quat_from_rpy_deg
from .dh import LinkInertia
from .integrators import Trajectory, simulate_rk4
from .model import Body, Frame, Joint, JointType, Model, dual_inertia_matrix
from .urdf import model_from_urdf

__all__ = ["Target", "free_motion"]

#: Keys :meth:`Target.from_dict` accepts.
TABLE_KEYS = ("name", "mass", "com", "inertia", "fixture")
#: Keys of the ``fixture`` entry of a table, when it is not an (8,) pose.
FIXTURE_KEYS = ("position", "rpy_deg")


@dataclass(frozen=True, eq=False)  # arrays: no field-wise ==; compared by identity
class Target:
    """A free rigid body to be captured (no actuators) and its grapple fixture.

    Built and validated at construction: a positive mass, a finite centre of mass, a
    symmetric positive-definite inertia whose principal moments satisfy the triangle
    inequality, a unit-dual-quaternion fixture pose (``ValueError`` naming the quantity).

    Attributes
    ----------
    mass : float [kg]
    com : (3,) centre of mass in the target's body frame [m]
    inertia : (3, 3) inertia about the centre of mass, body axes [kg m^2]
    fixture : (8,) unit dual quaternion, pose of the grapple fixture in the body frame
        (default: the body frame itself)
    name : str, the body's name in :attr:`model` and in a combined model
        (:func:`~dqspace.multibody.attach_target`); its fixture frame is
        ``f"{name}_fixture"``
    model : Model, the one-body floating model (``FREE`` root, frame
        :attr:`fixture_frame`); built from the fields above
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    fixture: np.ndarray = field(default_factory=dq_identity)
    name: str = "target"
    model: Model = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"target name must be a non-empty string, got {self.name!r}")
        what = f"target {self.name!r}"
        mass = _array(self.mass, (), f"{what}: mass")
        com = _array(self.com, (3,), f"{what}: com")
        inertia = _array(self.inertia, (3, 3), f"{what}: inertia")
        fixture = _array(self.fixture, (8,), f"{what}: fixture")
        for key, value in (("mass", float(mass)), ("com", com), ("inertia", inertia)):
            object.__setattr__(self, key, value)
        object.__setattr__(self, "fixture", fixture)
        body = Body(
            self.name, None, Joint(JointType.FREE, name=self.name), float(mass), com, inertia
        )
        # Model.build checks the mass properties and the fixture pose (ValueError naming
        # the body or the frame): the one validation of a body's inertia
        model = Model.build([body], [Frame(self.fixture_frame, 0, fixture)])
        object.__setattr__(self, "model", model)
        for a in (com, inertia, fixture):
            a.setflags(write=False)

    @property
    def fixture_frame(self) -> str:
        """Name of the fixture's frame in :attr:`model` and in a combined model."""
        return f"{self.name}_fixture"

    @property
    def spatial_inertia(self) -> NDArray[np.float64]:
        """The symmetric (6, 6) inertia about the body origin in twist order ``[w, v]``.

        ``swap(M^)`` of the dual inertia: ``[[J_O, m [c]x], [-m [c]x, m I]]``; the kinetic
        energy is ``1/2 xi^T I xi`` for the body twist ``xi``.
        """
        return dual_inertia_matrix(self.mass, self.com, self.inertia)[[3, 4, 5, 0, 1, 2]]

    def twist(
        self, angular_velocity: ArrayLike, com_velocity: ArrayLike = (0.0, 0.0, 0.0)
    ) -> NDArray[np.float64]:
        """The body twist ``[w, v]`` (6,) of a target turning at ``w`` with its CoM at ``v_c``.

        Both in the target's body axes: ``angular_velocity`` [rad/s], ``com_velocity``
        [m/s]; the origin's velocity is ``v = v_c - w x c``.
        """
        w = _array(angular_velocity, (3,), "angular_velocity")
        vc = _array(com_velocity, (3,), "com_velocity")
        return np.concatenate([w, vc - np.cross(w, self.com)])

    # ---------------------------------------------------------------- builders
    @classmethod
    def from_dict(cls, table: Mapping, where: str = "target") -> Target:
        """A target from a table (a dict, e.g. read from TOML or YAML).

        Keys: ``mass`` [kg]; ``inertia`` [kg m^2] about the CoM, a 3x3 matrix or the six
        numbers ``[Ixx, Iyy, Izz, Iyz, Ixz, Ixy]``; optional ``com`` [m] (default the origin),
        ``fixture`` (the fixture's pose in the body frame: an (8,) unit dual quaternion or a
        table ``{position = [x, y, z], rpy_deg = [roll, pitch, yaw]}``, default the body
        frame) and ``name``.  ``where`` names the table in error messages.
        """
        if not isinstance(table, Mapping):
            raise ValueError(f"{where}: expected a table of keys {TABLE_KEYS}, got {table!r}")
        unknown = sorted(set(table) - set(TABLE_KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {unknown}; accepted: {list(TABLE_KEYS)}")
        for key in ("mass", "inertia"):
            if key not in table:
                raise ValueError(f"{where}: missing key {key!r}")
        inertia = _real(table["inertia"], f"{where}.inertia")
        if inertia.shape == (6,):
            inertia = LinkInertia.from_table(1.0, inertia, np.zeros(3)).inertia
        elif inertia.shape != (3, 3):
            raise ValueError(
                f"{where}.inertia must be a 3x3 matrix or [Ixx, Iyy, Izz, Iyz, Ixz, Ixy], "
                f"got shape {inertia.shape}"
            )
        fixture = table.get("fixture")
        if fixture is None:
            fixture = dq_identity()
        elif isinstance(fixture, Mapping):
            fixture = _fixture_from_table(fixture, f"{where}.fixture")
        else:
            fixture = _array(fixture, (8,), f"{where}.fixture")
        return cls(
            mass=_real(table["mass"], f"{where}.mass"),
            com=_real(table.get("com", (0.0, 0.0, 0.0)), f"{where}.com"),
            inertia=inertia,
            fixture=fixture,
            name=table.get("name", "target"),
        )

    @classmethod
    def from_urdf(
        cls,
        path_or_xml_string: str | bytes | PathLike,
        fixture_link: str,
        *,
        offset: ArrayLike | None = None,
        name: str = "target",
    ) -> Target:
        """A target from a URDF whose links are all joined by ``fixed`` joints (one rigid body).

        The links are merged into the root link's body as the URDF parser does
        (:func:`~dqspace.multibody.model_from_urdf`); the target frame is the root link's.
        The fixture is the frame of ``fixture_link``, composed with ``offset`` (8,) (its pose
        in that link's frame, default identity).
        """
        model = model_from_urdf(path_or_xml_string, floating=True)
        if model.nb != 1:
            moving = [model.joint_names[k] for k in range(1, model.nb)]
            raise ValueError(
                f"URDF target: a target is one rigid body, but joints {moving} are not fixed"
            )
        links = [f.name for f in model.frames]
        if fixture_link not in links:
            raise ValueError(f"URDF target: no link named {fixture_link!r}; links: {links}")
        place = model.frames[model.frame_index(fixture_link)].placement
        if offset is not None:
            place = dq_mul(place, _array(offset, (8,), "URDF target: offset"))
        return cls(
            mass=float(model.mass[0]),
            com=model.com[0].copy(),
            inertia=model.inertia_com[0].copy(),
            fixture=np.array(place),
            name=name,
        )


def free_motion(
    target: Target,
    pose: ArrayLike,
    twist: ArrayLike,
    *,
    dt: float,
    n_steps: int,
    record_every: int = 1,
) -> Trajectory:
    """The torque-free motion (tumble) of a target from ``(pose, twist)``.

    Lie-group RK4 (:func:`~dqspace.multibody.simulate_rk4`) on :attr:`Target.model`;
    ``Trajectory.q`` holds the poses (N, 8) and ``Trajectory.v`` the body twists (N, 6).
    """
    return simulate_rk4(
        target.model, pose, twist, dt=dt, n_steps=n_steps, record_every=record_every
    )


# ------------------------------------------------------------------- helpers
def _real(x, what):
    """x as a float array, or a ValueError naming ``what`` (strings, booleans refused)."""
    if isinstance(x, (str, bytes, bool, np.bool_)):
        raise ValueError(f"{what} must be a number or an array of numbers, got {x!r}")
    try:
        a = np.asarray(x)
    except ValueError:  # a ragged nesting
        raise ValueError(f"{what} must be an array of numbers of a regular shape") from None
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{what} must hold real numbers, got {x!r}")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} must be finite, got {x!r}")
    return a


def _array(x, shape, what):
    a = _real(x, what)
    if a.shape != shape:
        raise ValueError(f"{what} must have shape {shape}, got {a.shape}")
    return a.copy()


def _fixture_from_table(table, where):
    unknown = sorted(set(table) - set(FIXTURE_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; accepted: {list(FIXTURE_KEYS)}")
    r = _array(table.get("position", (0.0, 0.0, 0.0)), (3,), f"{where}.position")
    rpy = _array(table.get("rpy_deg", (0.0, 0.0, 0.0)), (3,), f"{where}.rpy_deg")
    return dq_from_quat_translation(quat_from_rpy_deg(rpy), r)
