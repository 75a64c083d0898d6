"""The immutable multibody model: tree topology, joints, inertias, named frames.

A model is a tree of ``nb`` rigid bodies.  Body 0 is the root (for a space
robot, the base), joined to the inertial frame by its joint (``FREE`` for a
floating base, paper Table 2); every other body ``k`` has a parent
``parent[k] < k`` and one joint.  Body k's frame is its joint frame after the
joint motion:

    q^_{parent,k} = placement_k o X_J(q_k)

with ``X_J`` the joint's motion (a unit dual quaternion).  Per-step quantities
(poses, twists, forces) live in the arrays the algorithms return, never in
the model; the model's arrays are read-only.

Generalized coordinates (``docs/conventions.md``), joint by joint in body order:

======== ===== ===== =====================================================
joint     nq    nv    q / v
======== ===== ===== =====================================================
FIXED      0     0    -
REVOLUTE   1     1    angle [rad] / rate [rad/s] about ``axis``
PRISMATIC  1     1    displacement [m] / rate [m/s] along ``axis``
SPHERICAL  4     3    unit quaternion / body angular velocity [rad/s]
FREE       8     6    unit dual quaternion / body twist ``[w, v]``
======== ===== ===== =====================================================

The joint motion subspaces ``S`` (paper ``H^``, in body coordinates, twist
order ``[w, v]``) are ``[axis; 0]``, ``[0; axis]``, ``[I; 0]`` and ``I6``.

Building validates every parameter (``ValueError`` naming the body or frame): finite
values, unit axes and placements, physically valid inertias, and sane magnitudes --
placements and centres of mass within :data:`MAX_LENGTH`, masses in
:data:`MASS_RANGE`, principal moments in :data:`INERTIA_RANGE`, gravity within
:data:`MAX_GRAVITY` -- so that no model that builds overflows on plausible states.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import dq_from_quat_translation, dq_identity, dq_unit_error
from ..dq.checks import check_unit_vector
from .kernels.layout import (
    AXIS,
    COM,
    INERTIA_O,
    INTS,
    JOINT_NQ,
    JOINT_NV,
    JOINT_TYPE,
    MASS,
    PARENT,
    PLACEMENT,
    Q_INDEX,
    REALS,
    SPATIAL_INERTIA,
    V_INDEX,
)

__all__ = ["JointType", "Joint", "Body", "Frame", "Model", "dual_inertia_matrix"]

# Sanity limits on the parameters of a model, checked at build (ValueError naming the body,
# frame or quantity).  No robot comes near them -- a 1000 km link, a body of 1e12 kg (a
# 1 km asteroid) or of a nanogram -- and within them the products the algorithms form
# (m r^2, J w^2, ...) stay far from float64 overflow, so that a model that builds never
# turns finite inputs of a plausible size into inf or NaN.
#: Largest joint- or frame-placement translation and centre-of-mass offset [m].
MAX_LENGTH = 1e6
#: Accepted body masses [kg].
MASS_RANGE = (1e-12, 1e12)
#: Accepted principal moments of inertia about the centre of mass [kg m^2].
INERTIA_RANGE = (1e-30, 1e24)
#: Largest accepted magnitude of the uniform gravity [m/s^2].
MAX_GRAVITY = 1e6


class JointType(IntEnum):
    """Joint types; the integer values are what the compiled kernels see."""

    FIXED = 0
    REVOLUTE = 1
    PRISMATIC = 2
    SPHERICAL = 3
    FREE = 4


# The joint table (nq, nv by joint type) and the packed layout of the per-body arrays
# handed to the kernels are declared once, in ``kernels/layout.py``.
NQ = {JointType(t): n for t, n in enumerate(JOINT_NQ)}
NV = {JointType(t): n for t, n in enumerate(JOINT_NV)}
N_REALS = REALS.width


@dataclass(frozen=True)
class Joint:
    """A joint between a body and its parent.

    Attributes
    ----------
    type : JointType
    axis : (3,) unit axis in the joint frame (revolute, prismatic); ignored otherwise
    placement : (8,) unit dual quaternion, pose of the joint frame (at q = 0)
        in the parent body's frame (for the root: in the inertial frame)
    name : str, optional
    """

    type: JointType
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    placement: np.ndarray = field(default_factory=dq_identity)
    name: str = ""


@dataclass(frozen=True)
class Body:
    """A rigid body and the joint that attaches it to its parent.

    Attributes
    ----------
    name : str
    parent : int or str, index or name of the parent body (-1 or None for the root)
    joint : Joint
    mass : float [kg], > 0
    com : (3,) centre of mass in the body frame [m]
    inertia : (3, 3) inertia about the centre of mass, body axes [kg m^2]
    """

    name: str
    parent: object
    joint: Joint
    mass: float
    com: np.ndarray
    inertia: np.ndarray


@dataclass(frozen=True)
class Frame:
    """A named frame rigidly attached to a body (end-effector, sensor, thruster point).

    Attributes
    ----------
    name : str
    body : int, index of the body carrying the frame
    placement : (8,) unit dual quaternion, pose of the frame in the body frame
    """

    name: str
    body: int
    placement: np.ndarray


def _skew(c):
    return np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])


def dual_inertia_matrix(mass: float, com: ArrayLike, inertia_com: ArrayLike) -> NDArray[np.float64]:
    """Dual inertia ``M^`` (6, 6) about the body origin (paper eq. 6).

    ``M^ [w; v] = [p; h]`` with ``p = m (v + w x c)`` and ``h = J_O w + m c x v``:
    ``M^ = [[-m [c]x, m I], [J_O, m [c]x]]``, ``J_O = J_c - m [c]x^2``.
    Its swap ``[[J_O, m [c]x], [-m [c]x, m I]]`` is the symmetric spatial inertia.
    """
    S = mass * _skew(com)
    J_O = np.asarray(inertia_com) - mass * _skew(com) @ _skew(com)
    return np.block([[-S, mass * np.eye(3)], [J_O, S]])


def _check_inertia(name, mass, com, inertia):
    if not np.isfinite(mass) or mass <= 0.0:
        raise ValueError(f"body {name!r}: mass must be positive and finite, got {mass}")
    if not MASS_RANGE[0] <= mass <= MASS_RANGE[1]:
        raise ValueError(
            f"body {name!r}: mass {mass:.6g} kg is outside the accepted range "
            f"[{MASS_RANGE[0]:g}, {MASS_RANGE[1]:g}] kg (a number in the wrong unit?)"
        )
    if com.shape != (3,) or not np.all(np.isfinite(com)):
        raise ValueError(f"body {name!r}: com must be a finite 3-vector, got {com}")
    _check_length(f"body {name!r}: com", com)
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        raise ValueError(f"body {name!r}: inertia must be a finite 3x3 matrix, got {inertia}")
    asym = np.abs(inertia - inertia.T).max()
    if asym > 1e-12 * max(1.0, np.abs(inertia).max()):
        raise ValueError(f"body {name!r}: inertia is not symmetric (max |I - I^T| = {asym:.3g})")
    ev = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    if ev[0] <= 0.0:
        raise ValueError(
            f"body {name!r}: inertia is not positive-definite (principal moments {ev.tolist()})"
        )
    if ev[0] < INERTIA_RANGE[0] or ev[2] > INERTIA_RANGE[1]:
        raise ValueError(
            f"body {name!r}: principal moments of inertia {ev.tolist()} kg m^2 are outside "
            f"the accepted range [{INERTIA_RANGE[0]:g}, {INERTIA_RANGE[1]:g}] kg m^2 "
            "(a number in the wrong unit?)"
        )
    tol = 1e-12 * ev.sum()
    if ev[0] + ev[1] < ev[2] - tol:
        raise ValueError(
            f"body {name!r}: principal moments {ev.tolist()} violate the triangle "
            f"inequality I1 + I2 >= I3 (no rigid body has such an inertia)"
        )


#: numpy dtype kinds of real numbers: signed and unsigned integers, floats.  Strings
#: (which numpy would parse, ``"1_0"`` as 10), complex numbers (whose imaginary part it
#: would drop), booleans and objects are refused.
_REAL_KINDS = "iuf"
_F64 = np.dtype(np.float64)


def _real_array(x, what):
    """x as a float64 array, or a ValueError naming ``what`` if it does not hold real numbers."""
    if type(x) is np.ndarray and x.dtype is _F64:
        return x
    try:
        a = np.asarray(x)
    except ValueError:  # a ragged nesting
        raise ValueError(f"{what} must be an array of numbers of a regular shape") from None
    if a.dtype.kind not in _REAL_KINDS:
        raise ValueError(f"{what} must hold real numbers, got values of type {a.dtype}")
    return a.astype(np.float64, copy=False)


def _shaped(x, shape, what):
    """``x`` as a float array of the given shape, or a ValueError naming ``what``."""
    a = _real_array(x, what)
    if a.shape != shape:
        raise ValueError(f"{what} must have shape {shape}, got {a.shape}")
    return a


def _check_pose(what, x):
    x = np.asarray(x, dtype=float)
    if x.shape != (8,) or not np.all(np.isfinite(x)):
        raise ValueError(f"{what} must be a finite (8,) dual quaternion, got {x}")
    err = dq_unit_error(x)
    if err > 1e-9:
        raise ValueError(f"{what} is not a unit dual quaternion (unit error {err:.3g})")
    _check_length(f"{what} translation", 2.0 * x[4:])  # |r| = 2 |q_d| for a unit q^
    return x


def _norm(x):
    """Euclidean norm of a finite vector, scaled so that it cannot overflow."""
    s = float(np.abs(x).max())
    return s * float(np.linalg.norm(x / s)) if s > 0.0 else 0.0


def _check_length(what, r):
    """A ValueError naming ``what`` if the vector r (3,) or (4,) is longer than MAX_LENGTH [m]."""
    n = _norm(r)
    if n > MAX_LENGTH:
        raise ValueError(
            f"{what} is {n:.6g} m long, beyond the {MAX_LENGTH:g} m a model accepts "
            "(a number in the wrong unit?)"
        )


class Model:
    """An immutable tree of rigid bodies; build it with :meth:`Model.build`.

    Attributes
    ----------
    nb : int, number of bodies
    nq, nv : int, sizes of the configuration and velocity vectors
    body_names, joint_names : tuple of str
    parent : (nb,) int array, -1 for the root
    joint_type : (nb,) int array of :class:`JointType`
    joint_axis : (nb, 3), joint_placement : (nb, 8)
    mass : (nb,) [kg], com : (nb, 3) [m], inertia_com : (nb, 3, 3) [kg m^2]
    dual_inertia : (nb, 6, 6), the paper's ``M^_k`` about each body origin
    q_index, v_index : (nb,) start of each joint's slice of q and v
    frames : tuple of :class:`Frame`
    gravity : (3,) uniform gravity in the inertial frame [m/s^2] (zero in space)
    """

    def __init__(
        self,
        *,
        names: Sequence[str],
        parent: ArrayLike,
        joints: Sequence[Joint],
        mass: ArrayLike,
        com: ArrayLike,
        inertia: ArrayLike,
        frames: Sequence[Frame] = (),
        gravity: ArrayLike | None = None,
    ) -> None:
        nb = len(names)
        self.nb = nb
        self.body_names = tuple(names)
        self.joint_names = tuple(j.name or f"joint_{names[k]}" for k, j in enumerate(joints))
        for what, seq in (
            ("parent", parent),
            ("joints", joints),
            ("mass", mass),
            ("com", com),
            ("inertia", inertia),
        ):
            if len(seq) != nb:
                raise ValueError(f"{what} has {len(seq)} entries for {nb} bodies")
        self.parent = np.asarray(parent, dtype=np.int64)
        self.joint_type = np.array([int(j.type) for j in joints], dtype=np.int64)
        self.joint_axis = np.array(
            [_shaped(j.axis, (3,), f"body {names[k]!r}: joint axis") for k, j in enumerate(joints)]
        ).reshape(nb, 3)
        self.joint_placement = np.array(
            [
                _shaped(j.placement, (8,), f"body {names[k]!r}: joint placement")
                for k, j in enumerate(joints)
            ]
        ).reshape(nb, 8)
        self.mass = np.array(
            [_shaped(m, (), f"body {names[k]!r}: mass") for k, m in enumerate(mass)]
        ).reshape(nb)
        self.com = np.array(
            [_shaped(c, (3,), f"body {names[k]!r}: com") for k, c in enumerate(com)]
        ).reshape(nb, 3)
        self.inertia_com = np.array(
            [_shaped(i, (3, 3), f"body {names[k]!r}: inertia") for k, i in enumerate(inertia)]
        ).reshape(nb, 3, 3)
        self.gravity = np.zeros(3) if gravity is None else _shaped(gravity, (3,), "gravity")
        self._validate()

        nq = np.array([NQ[JointType(t)] for t in self.joint_type])
        nv = np.array([NV[JointType(t)] for t in self.joint_type])
        self.q_index = np.concatenate([[0], np.cumsum(nq)[:-1]]).astype(np.int64)
        self.v_index = np.concatenate([[0], np.cumsum(nv)[:-1]]).astype(np.int64)
        self.joint_nq = nq.astype(np.int64)
        self.joint_nv = nv.astype(np.int64)
        self.nq = int(nq.sum())
        self.nv = int(nv.sum())
        self.dual_inertia = np.array(
            [dual_inertia_matrix(self.mass[k], self.com[k], self.inertia_com[k]) for k in range(nb)]
        ).reshape(nb, 6, 6)

        self.frames = tuple(frames)
        for f in self.frames:
            if not isinstance(f.body, (int, np.integer)) or not 0 <= f.body < nb:
                raise ValueError(f"frame {f.name!r}: body index {f.body} out of range")
            _check_pose(f"frame {f.name!r} placement", f.placement)
        names_f = [f.name for f in self.frames]
        if len(set(names_f)) != len(names_f):
            raise ValueError(f"frame names must be unique, got {names_f}")
        self.frame_body = np.array([f.body for f in self.frames], dtype=np.int64)
        self.frame_placement = np.array([f.placement for f in self.frames], float).reshape(-1, 8)

        # packed arrays for the compiled kernels
        ints = np.empty((nb, INTS.width), dtype=np.int64)
        ints[:, PARENT] = self.parent
        ints[:, JOINT_TYPE] = self.joint_type
        ints[:, Q_INDEX] = self.q_index
        ints[:, V_INDEX] = self.v_index
        reals = np.empty((nb, REALS.width))
        reals[:, AXIS : AXIS + 3] = self.joint_axis
        reals[:, PLACEMENT : PLACEMENT + 8] = self.joint_placement
        reals[:, MASS] = self.mass
        reals[:, COM : COM + 3] = self.com
        J_O = self.inertia_com - self.mass[:, None, None] * np.array(
            [_skew(c) @ _skew(c) for c in self.com]
        ).reshape(nb, 3, 3)
        reals[:, INERTIA_O : INERTIA_O + 9] = J_O.reshape(nb, 9)
        # swap(M^_k) = [[J_O, m [c]x], [-m [c]x, m I]], the symmetric spatial inertia the
        # articulated-body recursion starts from, computed once here
        reals[:, SPATIAL_INERTIA : SPATIAL_INERTIA + 36] = self.dual_inertia[
            :, [3, 4, 5, 0, 1, 2], :
        ].reshape(nb, 36)
        self._ints = ints
        self._reals = reals
        neutral = np.zeros(self.nq)
        for k in range(nb):
            if int(self.joint_type[k]) in (JointType.SPHERICAL, JointType.FREE):
                neutral[self.q_index[k]] = 1.0
        self._neutral = neutral
        self.children = tuple(tuple(np.flatnonzero(self.parent == k).tolist()) for k in range(nb))
        for a in vars(self).values():
            if isinstance(a, np.ndarray):
                a.setflags(write=False)

    # ------------------------------------------------------------ validation
    def _validate(self):
        nb = self.nb
        if nb == 0:
            raise ValueError("a model needs at least one body")
        if len(set(self.body_names)) != nb:
            raise ValueError(f"body names must be unique, got {self.body_names}")
        for k in range(nb):
            name = self.body_names[k]
            p = int(self.parent[k])
            if k == 0 and p != -1:
                raise ValueError(f"body {name!r}: body 0 is the root and must have parent -1")
            if k > 0 and not 0 <= p < k:
                raise ValueError(
                    f"body {name!r}: parent index {p} is not an earlier body "
                    f"(bodies must be ordered parents first; a cycle or a second root?)"
                )
            t = int(self.joint_type[k])
            if t not in NQ:
                raise ValueError(f"body {name!r}: unknown joint type {t}")
            if t == JointType.FREE and k != 0:
                raise ValueError(f"body {name!r}: only the root may have a FREE joint")
            if t in (JointType.REVOLUTE, JointType.PRISMATIC):
                check_unit_vector(self.joint_axis[k], f"body {name!r}: joint axis")
            _check_pose(f"body {name!r}: joint placement", self.joint_placement[k])
            _check_inertia(name, self.mass[k], self.com[k], self.inertia_com[k])
        if not np.all(np.isfinite(self.gravity)):
            raise ValueError(f"gravity must be finite, got {self.gravity}")
        if _norm(self.gravity) > MAX_GRAVITY:
            raise ValueError(
                f"gravity {self.gravity.tolist()} m/s^2 is larger than the {MAX_GRAVITY:g} m/s^2 "
                "a model accepts"
            )

    # -------------------------------------------------------------- builders
    @classmethod
    def build(
        cls, bodies: Sequence[Body], frames: Sequence[Frame] = (), gravity: ArrayLike | None = None
    ) -> Model:
        """Build a model from a sequence of :class:`Body` (root first).

        ``parent`` may be a body name or an index; a frame's ``body`` may be a
        name or an index.
        """
        bodies = list(bodies)
        names = [b.name for b in bodies]
        index = {n: i for i, n in enumerate(names)}
        parent = []
        for i, b in enumerate(bodies):
            p = b.parent
            if p is None:
                p = -1
            elif isinstance(p, str):
                if p not in index:
                    raise ValueError(f"body {b.name!r}: unknown parent {p!r}")
                p = index[p]
            parent.append(int(p))
            if i == 0 and p != -1:
                raise ValueError(f"body {b.name!r}: the first body is the root (parent None)")
        fr = []
        for f in frames:
            if isinstance(f.body, str):
                if f.body not in index:
                    raise ValueError(f"frame {f.name!r}: unknown body {f.body!r}")
                body = index[f.body]
            else:
                body = int(f.body)
            fr.append(
                Frame(f.name, body, _shaped(f.placement, (8,), f"frame {f.name!r} placement"))
            )
        return cls(
            names=names,
            parent=parent,
            joints=[b.joint for b in bodies],
            mass=[b.mass for b in bodies],
            com=[b.com for b in bodies],
            inertia=[b.inertia for b in bodies],
            frames=fr,
            gravity=gravity,
        )

    def bodies(self) -> list[Body]:
        """The model as a list of :class:`Body` (what :meth:`build` takes)."""
        out = []
        for k in range(self.nb):
            p = int(self.parent[k])
            joint = Joint(
                JointType(int(self.joint_type[k])),
                self.joint_axis[k].copy(),
                self.joint_placement[k].copy(),
                self.joint_names[k],
            )
            out.append(
                Body(
                    self.body_names[k],
                    None if p < 0 else p,
                    joint,
                    float(self.mass[k]),
                    self.com[k].copy(),
                    self.inertia_com[k].copy(),
                )
            )
        return out

    def with_bodies(self, bodies: Sequence[Body], frames: Sequence[Frame] = ()) -> Model:
        """A copy of this model with extra bodies (and frames) appended after the existing ones.

        A new body's ``parent`` may name an existing body or an earlier new one.
        """
        return Model.build([*self.bodies(), *bodies], (*self.frames, *frames), gravity=self.gravity)

    def with_frames(self, frames: Sequence[Frame]) -> Model:
        """A copy of this model with extra named frames appended (body by name or index)."""
        frames = [
            Frame(
                f.name, self.body_index(f.body) if isinstance(f.body, str) else f.body, f.placement
            )
            for f in frames
        ]
        return Model.build(self.bodies(), (*self.frames, *frames), gravity=self.gravity)

    def with_gravity(self, gravity: ArrayLike | None) -> Model:
        """A copy of this model with uniform gravity ``gravity`` (3,) [m/s^2]."""
        return Model.build(self.bodies(), self.frames, gravity=gravity)

    # ------------------------------------------------------------- lookups
    @property
    def floating(self) -> bool:
        """True when the root has a FREE joint (a floating base)."""
        return int(self.joint_type[0]) == JointType.FREE

    @property
    def total_mass(self) -> float:
        """Sum of the body masses [kg]."""
        return float(self.mass.sum())

    @property
    def packed(self) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """``(ints, reals)``: the read-only packed arrays the compiled kernels take.

        ``ints`` (nb, 4) int64 and ``reals`` (nb, 60) float64, columns laid out by
        :mod:`dqspace.multibody.kernels.layout` (``INTS``, ``REALS``); the argument pair of
        every kernel of :mod:`dqspace.multibody.kernels`.
        """
        return self._ints, self._reals

    def body_index(self, name: str | int) -> int:
        """Index of a body given its name (or an index, checked)."""
        if isinstance(name, (int, np.integer)):
            if not 0 <= name < self.nb:
                raise ValueError(f"body index {name} out of range 0..{self.nb - 1}")
            return int(name)
        try:
            return self.body_names.index(name)
        except ValueError:
            raise ValueError(f"no body named {name!r}; bodies: {self.body_names}") from None

    def frame_index(self, name: str) -> int:
        """Index of a named frame."""
        for i, f in enumerate(self.frames):
            if f.name == name:
                return i
        raise ValueError(f"no frame named {name!r}; frames: {[f.name for f in self.frames]}")

    def q_slice(self, body: str | int) -> slice:
        """Slice of q holding the joint coordinates of ``body``."""
        k = self.body_index(body)
        return slice(int(self.q_index[k]), int(self.q_index[k] + self.joint_nq[k]))

    def v_slice(self, body: str | int) -> slice:
        """Slice of v holding the joint velocities of ``body``."""
        k = self.body_index(body)
        return slice(int(self.v_index[k]), int(self.v_index[k] + self.joint_nv[k]))

    # ---------------------------------------------------------- configurations
    def neutral_configuration(self) -> NDArray[np.float64]:
        """q with every joint at zero (identity quaternions and poses); a new array."""
        return self._neutral.copy()

    def random_configuration(
        self, rng: np.random.Generator, *, angle: float = np.pi, translation: float = 1.0
    ) -> NDArray[np.float64]:
        """A random q: revolute angles in [-angle, angle], prismatic and base
        translations in [-translation, translation], uniform random rotations."""
        for name, x in (("angle", angle), ("translation", translation)):
            if not np.isfinite(x) or x < 0:
                raise ValueError(f"{name} must be finite and non-negative, got {x}")
        q = self.neutral_configuration()
        for k in range(self.nb):
            t, i = int(self.joint_type[k]), int(self.q_index[k])
            if t == JointType.REVOLUTE:
                q[i] = rng.uniform(-angle, angle)
            elif t == JointType.PRISMATIC:
                q[i] = rng.uniform(-translation, translation)
            elif t == JointType.SPHERICAL:
                u = rng.normal(size=4)
                q[i : i + 4] = u / np.linalg.norm(u)
            elif t == JointType.FREE:
                u = rng.normal(size=4)
                q[i : i + 8] = dq_from_quat_translation(
                    u / np.linalg.norm(u), rng.uniform(-translation, translation, 3)
                )
        return q

    def __repr__(self):
        kinds = ", ".join(JointType(t).name.lower() for t in self.joint_type)
        return (
            f"Model(nb={self.nb}, nq={self.nq}, nv={self.nv}, "
            f"floating={self.floating}, joints=[{kinds}], frames={len(self.frames)})"
        )
