"""Serial arms from Denavit-Hartenberg tables (standard and modified/Craig conventions).

Body frames follow :mod:`dqspace.multibody.model`: body i's frame sits on
joint i's axis, z along it, and moves with link i.  That is Craig's frame i
in the modified convention, and the standard convention's frame i-1 turned
(or slid) by joint i.  Link mass properties are taken in these frames by default
(``inertia_frame="body"``); ``inertia_frame="dh"`` takes them in the convention's own
link frame i instead, where published tables usually give them (for the standard
convention the distal frame i, at the far end of link i; for the modified convention
the same frame as ``"body"``).

Standard (distal):  ``T_{i-1,i} = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``; the
constant tail ``Tz(d_i) Tx(a_i) Rx(alpha_i)`` of row i becomes the placement
of joint i+1 in body i, and the tail of the last row the DH frame n.

Modified (proximal, Craig):  ``T_{i-1,i} = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)``;
row i holds ``(a_{i-1}, d_i, alpha_{i-1}, theta_i)`` as in Craig's tables, and the
DH frame n coincides with the last body frame.

In both, ``theta_i = theta0_i + q_i`` for a revolute joint and ``d_i = d_i + q_i`` for
a prismatic one (the row's ``d`` is then the offset at q = 0).  The ``flange`` frame
is DH frame n, or ``tool`` in it.  A standard table is a modified one with a/alpha
shifted down one row: modified row i = ``(a_{i-1}, d_i, alpha_{i-1}, theta0_i)`` with
``a_0 = alpha_0 = 0``, and the last standard row's ``Tx(a_n) Rx(alpha_n)`` as ``tool``;
the two describe the same arm (same joint axes, same flange), their body frames differing
by ``Tz(d_i)`` (Craig's frame i = standard frame i-1 ``o Rz(theta_i) Tz(d_i)``).
"""

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..dq import (
    dq_from_quat_translation,
    dq_identity,
    dq_mul,
    quat_from_axis_angle,
    rotation_matrix_from_dq,
    translation_from_dq,
)
from .model import MAX_LENGTH, Body, Frame, Joint, JointType, Model, _check_pose, _shaped

__all__ = ["DHRow", "LinkInertia", "arm_from_dh"]

CONVENTIONS = ("standard", "modified")
INERTIA_FRAMES = ("body", "dh")


@dataclass(frozen=True)
class DHRow:
    """One row ``[a, d, alpha, theta0]`` [m, m, rad, rad] and the joint's type.

    ``prismatic=False`` (the default) is a revolute joint, ``theta = theta0 + q``;
    ``prismatic=True`` makes d the variable, ``d = d + q`` (theta fixed at theta0).
    """

    a: float
    d: float
    alpha: float
    theta0: float = 0.0
    prismatic: bool = False

    @property
    def joint_type(self) -> JointType:
        """:attr:`JointType.PRISMATIC` or :attr:`JointType.REVOLUTE`."""
        return JointType.PRISMATIC if self.prismatic else JointType.REVOLUTE


@dataclass(frozen=True)
class LinkInertia:
    """Mass [kg], centre of mass (3,) [m] and inertia about it (3, 3) [kg m^2] in the link frame.

    The link frame is chosen by :func:`arm_from_dh`'s ``inertia_frame``.  The values are
    checked when the arm is built (positive mass, symmetric positive-definite inertia
    obeying the triangle inequality; ``ValueError`` naming the body).
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    @classmethod
    def from_table(cls, mass: float, inertia6: ArrayLike, com: ArrayLike) -> "LinkInertia":
        """From ``[Ixx, Iyy, Izz, Iyz, Ixz, Ixy]`` (the paper's Table 5 order)."""
        ixx, iyy, izz, iyz, ixz, ixy = _shaped(inertia6, (6,), "LinkInertia inertia6")
        J = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        mass = float(_shaped(mass, (), "LinkInertia mass"))
        return cls(mass, _shaped(com, (3,), "LinkInertia com"), J)


def _rz(theta):
    return dq_from_quat_translation(quat_from_axis_angle([0, 0, 1.0], theta), [0.0, 0, 0])


def _rx(alpha):
    return dq_from_quat_translation(quat_from_axis_angle([1.0, 0, 0], alpha), [0.0, 0, 0])


def _t(x, y, z):
    return dq_from_quat_translation([1.0, 0, 0, 0], [x, y, z])


def _chain(*dqs):
    out = dq_identity()
    for x in dqs:
        out = dq_mul(out, x)
    return out


_FIELDS = ("a", "d", "alpha", "theta0")


def _choice(value, allowed, what):
    """``value`` if it is one of the strings ``allowed``, else a ValueError naming ``what``."""
    if not isinstance(value, str) or value not in allowed:
        options = " or ".join(repr(x) for x in allowed)
        raise ValueError(f"{what} must be {options}, got {value!r}")
    return value


def _listed(x, what):
    """The entries of an iterable (not a string or a mapping), or a ValueError."""
    bad = ValueError(f"{what} must be a sequence (list or tuple), got {type(x).__name__}")
    if isinstance(x, (str, bytes, Mapping)):
        raise bad
    try:
        return list(x)
    except TypeError:
        raise bad from None


def _names(names, n):
    """The n body names (default ``link1`` ...), checked: one string per row."""
    if names is None:
        return [f"link{i + 1}" for i in range(n)]
    names = _listed(names, "names")
    if len(names) < n:
        raise ValueError(
            f"names has {len(names)} entries for {n} DH rows: DH row {len(names)} has no name"
        )
    if len(names) > n:
        raise ValueError(f"names has {len(names)} entries for {n} DH rows: one name per row")
    for i, x in enumerate(names):
        if not isinstance(x, str) or not x:
            raise ValueError(f"DH row {i}: its name must be a non-empty string, got {x!r}")
    return names


def _row(row, what):
    """A checked DHRow (floats) from a DHRow or ``(a, d, alpha[, theta0[, prismatic]])``."""
    if not isinstance(row, DHRow):
        try:
            vals = tuple(row)
        except TypeError:
            raise ValueError(
                f"{what}: must be a DHRow or (a, d, alpha[, theta0]), got {row!r}"
            ) from None
        if not 3 <= len(vals) <= 5:
            raise ValueError(
                f"{what}: must have 3 or 4 values (a, d, alpha[, theta0]) and optionally "
                f"prismatic, got {len(vals)}: {row!r}"
            )
        row = DHRow(*vals)
    for f in _FIELDS:
        x = getattr(row, f)
        ok = isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))
        if not ok or not np.isfinite(x):
            raise ValueError(f"{what}: {f} must be a finite real number, got {x!r}")
        if f in ("a", "d") and abs(x) > MAX_LENGTH:
            raise ValueError(
                f"{what}: |{f}| = {abs(x):.6g} m is beyond the {MAX_LENGTH:g} m a model accepts"
            )
    if not isinstance(row.prismatic, (bool, np.bool_)):
        raise ValueError(
            f"{what}: prismatic must be True or False (the joint type), got {row.prismatic!r}"
        )
    return DHRow(*(float(getattr(row, f)) for f in _FIELDS), bool(row.prismatic))


def _moved(link, X, what):
    """``link``'s mass properties given in frame F, in frame B; X is F's pose in B."""
    R = rotation_matrix_from_dq(X)
    com = translation_from_dq(X) + R @ _shaped(link.com, (3,), f"{what} com")
    J = R @ _shaped(link.inertia, (3, 3), f"{what} inertia") @ R.T  # asymmetry kept: refused
    return LinkInertia(link.mass, com, J)


def arm_from_dh(
    rows: Sequence[DHRow | Sequence[float]],
    links: Sequence[LinkInertia],
    *,
    convention: str = "standard",
    base: Body | None = None,
    mount: ArrayLike | None = None,
    names: Sequence[str] | None = None,
    flange: str | None = "flange",
    tool: ArrayLike | None = None,
    inertia_frame: str = "body",
    gravity: ArrayLike | None = None,
) -> Model:
    """Build a serial arm, optionally on a base body, from a DH table.

    Parameters
    ----------
    rows : sequence of DHRow (or of ``(a, d, alpha[, theta0[, prismatic]])`` tuples)
        At least one row [m, m, rad, rad], finite real numbers; the row's ``prismatic``
        flag is the joint's type (revolute by default).  In the modified convention
        row i holds ``(a_{i-1}, d_i, alpha_{i-1}, theta0_i)``.
    links : sequence of LinkInertia, one per row
    convention : {"standard", "modified"}
        Standard (distal) Denavit-Hartenberg or modified (proximal, Craig) parameters.
    base : Body, optional
        The root body (e.g. a floating base with a FREE joint).  Without it the
        first joint attaches to the inertial frame at ``mount``.
    mount : (8,) unit dual quaternion, optional
        Pose of the arm's base frame (joint 1's reference frame, "frame 0") in
        the base body (or the inertial frame); identity by default.
    names : sequence of str, optional; body names, one per row (default ``link1`` ...)
    flange : str or None; name of the frame added at the arm's tip (DH frame n, or
        ``tool`` in it)
    tool : (8,) unit dual quaternion, optional
        Pose of the flange frame in DH frame n; identity by default.  For a modified
        table written from a standard one, ``Tx(a_n) Rx(alpha_n)`` of the last standard row.
    inertia_frame : {"body", "dh"}
        Frame of each ``links[i]``: ``"body"``, body i's frame (on joint i's axis, the
        frame the model uses), or ``"dh"``, the convention's link frame i (standard: the
        distal frame i, i.e. body i's frame moved by ``Tz(d_i) Tx(a_i) Rx(alpha_i)``;
        modified: body i's frame).
    gravity : (3,) array_like, optional; uniform gravity [m/s^2] (none by default)

    Returns
    -------
    Model
        Bodies ``names`` (after ``base`` if given) with joints ``joint1`` ... ``jointn``
        about (or along) their z axes, and the ``flange`` frame on the last body.

    Raises
    ------
    ValueError
        for an empty table, a row that is not 3 or 4 finite real numbers (naming the
        row's index and body name) or whose ``prismatic`` is not a bool, mismatched
        lengths of ``rows``, ``links`` and ``names``, an unknown ``convention`` or
        ``inertia_frame``, a ``flange`` that is not a non-empty string or None, a
        ``tool`` without a flange, a ``mount`` or ``tool`` that is not a unit dual
        quaternion, or any invalid model parameter (:meth:`Model.build`, naming the body:
        mass, centre of mass, inertia).
    """
    _choice(convention, CONVENTIONS, "convention")
    _choice(inertia_frame, INERTIA_FRAMES, "inertia_frame")
    rows, links = _listed(rows, "rows"), _listed(links, "links")
    if not rows:
        raise ValueError("the DH table is empty: an arm needs at least one row")
    if len(rows) != len(links):
        raise ValueError(f"{len(rows)} DH rows but {len(links)} link inertias")
    names = _names(names, len(rows))
    rows = [_row(r, f"DH row {i} ({names[i]!r})") for i, r in enumerate(rows)]
    for i, link in enumerate(links):
        if not isinstance(link, LinkInertia):
            raise ValueError(
                f"links[{i}] ({names[i]!r}) must be a LinkInertia, got {type(link).__name__}"
            )
    if base is not None and not isinstance(base, Body):
        raise ValueError(f"base must be a Body, got {type(base).__name__}")
    if flange is not None and (not isinstance(flange, str) or not flange):
        raise ValueError(f"flange must be a non-empty string or None, got {flange!r}")
    if tool is not None:
        if flange is None:
            raise ValueError("tool is the pose of the flange frame: it needs a flange name")
        tool = _check_pose("tool", tool)
    prev = dq_identity() if mount is None else _check_pose("mount", mount)
    bodies = [] if base is None else [base]
    parent = None if base is None else base.name
    for i, (row, link) in enumerate(zip(rows, links, strict=True)):
        if convention == "standard":
            # Tz(q) of a prismatic joint commutes with Tz(d): same split for both types
            place = _chain(prev, _rz(row.theta0))
            tail = _chain(_t(0, 0, row.d), _t(row.a, 0, 0), _rx(row.alpha))
        else:
            place = _chain(prev, _rx(row.alpha), _t(row.a, 0, 0), _t(0, 0, row.d), _rz(row.theta0))
            tail = dq_identity()
        if inertia_frame == "dh" and convention == "standard":
            # the distal frame i is body i's frame o tail
            link = _moved(link, tail, f"links[{i}] ({names[i]!r})")
        joint = Joint(row.joint_type, np.array([0.0, 0.0, 1.0]), place, f"joint{i + 1}")
        bodies.append(Body(names[i], parent, joint, link.mass, link.com, link.inertia))
        parent = names[i]
        prev = tail
    frames = []
    if flange is not None:
        frames.append(Frame(flange, names[-1], prev if tool is None else dq_mul(prev, tool)))
    return Model.build(bodies, frames, gravity=gravity)
