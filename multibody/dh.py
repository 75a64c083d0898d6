"""Serial arms from Denavit-Hartenberg tables (standard and modified/Craig conventions).

Body frames follow :mod:`dqspace.multibody.model`: body i's frame sits on
joint i's axis, z along it, and moves with link i.  That is Craig's frame i
in the modified convention, and the standard convention's frame i-1 turned
(or slid) by joint i.  Link mass properties are taken in these frames.

Standard:  ``T_{i-1,i} = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``; the
constant tail ``Tz(d_i) Tx(a_i) Rx(alpha_i)`` of row i becomes the placement
of joint i+1 in body i, and the tail of the last row the ``flange`` frame.

Modified:  ``T_{i-1,i} = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)``;
row i holds ``(a_{i-1}, d_i, alpha_{i-1}, theta_i)`` as in Craig's tables,
and the flange frame coincides with the last body frame.
"""

import numbers
from dataclasses import dataclass

import numpy as np

from ..dq import dq_from_quat_translation, dq_identity, dq_mul, quat_from_axis_angle
from .model import MAX_LENGTH, Body, Frame, Joint, JointType, Model, _check_pose, _shaped

__all__ = ["DHRow", "LinkInertia", "arm_from_dh"]


@dataclass(frozen=True)
class DHRow:
    """One row ``[a, d, alpha, theta0]`` [m, m, rad, rad]; ``prismatic`` makes d the variable."""

    a: float
    d: float
    alpha: float
    theta0: float = 0.0
    prismatic: bool = False


@dataclass(frozen=True)
class LinkInertia:
    """Mass [kg], centre of mass (3,) [m] and inertia about it (3, 3) [kg m^2] in the body frame."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    @classmethod
    def from_table(cls, mass, inertia6, com):
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


def _names(names, n):
    """The n body names (default ``link1`` ...), checked: one string per row."""
    if names is None:
        return [f"link{i + 1}" for i in range(n)]
    names = list(names)
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
        raise ValueError(f"{what}: prismatic must be True or False, got {row.prismatic!r}")
    return DHRow(*(float(getattr(row, f)) for f in _FIELDS), bool(row.prismatic))


def arm_from_dh(
    rows,
    links,
    *,
    convention="standard",
    base=None,
    mount=None,
    names=None,
    flange="flange",
    gravity=None,
):
    """Build a serial arm, optionally on a base body, from a DH table.

    Parameters
    ----------
    rows : sequence of DHRow (or of ``(a, d, alpha[, theta0])`` tuples), at least one
        [m, m, rad, rad]; finite real numbers
    links : sequence of LinkInertia, one per row
    convention : {"standard", "modified"}
    base : Body, optional
        The root body (e.g. a floating base with a FREE joint).  Without it the
        first joint attaches to the inertial frame at ``mount``.
    mount : (8,) unit dual quaternion, optional
        Pose of the arm's base frame (joint 1's reference frame, "frame 0") in
        the base body (or the inertial frame); identity by default.
    names : sequence of str, optional; body names, one per row (default ``link1`` ...)
    flange : str or None; name of the frame added at the arm's tip

    Raises
    ------
    ValueError
        for an empty table, a row that is not 3 or 4 finite real numbers (naming the
        row's index and body name), mismatched lengths of ``rows``, ``links`` and
        ``names``, or any invalid model parameter (:meth:`Model.build`).
    """
    if convention not in ("standard", "modified"):
        raise ValueError(f"convention must be 'standard' or 'modified', got {convention!r}")
    rows, links = list(rows), list(links)
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
        jt = JointType.PRISMATIC if row.prismatic else JointType.REVOLUTE
        joint = Joint(jt, np.array([0.0, 0.0, 1.0]), place, f"joint{i + 1}")
        bodies.append(Body(names[i], parent, joint, link.mass, link.com, link.inertia))
        parent = names[i]
        prev = tail
    frames = [] if flange is None else [Frame(flange, names[-1], prev)]
    return Model.build(bodies, frames, gravity=gravity)
