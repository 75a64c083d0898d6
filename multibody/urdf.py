"""Build a :class:`~dqspace.multibody.Model` from a URDF description.

Supported joints: ``revolute`` and ``continuous`` (both :attr:`JointType.REVOLUTE`;
limits are not used), ``prismatic`` and ``fixed``.  ``floating=True`` joins the
root link to the inertial frame with a 6-DoF ``FREE`` joint (a floating base);
otherwise the root link is attached rigidly (a ``FIXED`` joint at identity).

Bodies, joints and frames
-------------------------
* Body 0 is the root link.  Every other body is a link reached by a moving
  joint; links reached by ``fixed`` joints are merged into the body they hang
  from, as Pinocchio's URDF parser does: their mass properties are added to
  the body's, and their children's joints are placed in that body's frame.
* Bodies are numbered depth-first from the root, a link's child joints taken
  in the byte order of the joint names (urdfdom keeps them in a
  ``std::map``).  This is exactly Pinocchio's order: with
  ``pin.buildModelFromXML`` the joint of body k (k >= 1) is Pinocchio's joint k
  for a fixed base (body 0 is then Pinocchio's ``universe``), and joint k + 1 with
  ``pin.JointModelFreeFlyer()`` (body 0 is its free flyer, joint 1); q and v
  follow the same order (the free flyer's representation aside).
* Every link gets a named :class:`Frame` (its name, identity placement for a
  body's own link), so any link's pose and Jacobian can be asked for by name,
  merged links included.

Geometry and inertia
--------------------
* A joint ``<origin xyz rpy>`` becomes its placement (P4)
  ``q^ = q + eps 1/2 r o q`` with the fixed-axis roll-pitch-yaw rotation
  ``R = Rz(yaw) Ry(pitch) Rx(roll)``.  ``<axis>`` defaults to ``(1, 0, 0)``; it
  must be a unit vector to :data:`dqspace.dq.AXIS_TOL` = 1e-9 (it is then normalised
  to machine precision, as Pinocchio does): write its components with enough digits.
* ``<inertial>``: mass [kg]; ``<inertia>`` [kg m^2] about the centre of mass in
  the axes of the inertial ``<origin>``, whose ``xyz`` is the centre of mass in
  the link frame and whose ``rpy`` rotates the tensor into the link axes:
  ``J_link = R J R^T``.

Validation (``ValueError`` naming the link or joint)
---------------------------------------------------
* Structure: malformed XML, a root element other than ``<robot>``, duplicate
  link or joint names, a joint without ``name``/``type``/``<parent>``/``<child>``,
  a joint type other than the four above (``floating``, ``planar``, ...), a
  joint naming an unknown link, a link that is the child of several joints,
  several root links, no root or links unreachable from the root (a cycle).
* Numbers: anything but plain decimal numbers (``1_0``, ``nan``, ``inf``, ``0x1``
  and non-ASCII digits are refused, though Python's ``float`` reads some of them),
  wrong counts, a non-unit axis, an ``<origin xyz>`` longer than
  :data:`~dqspace.multibody.model.MAX_LENGTH` (1e6 m), and masses and inertias outside
  the sane ranges every :class:`Model` checks (``MASS_RANGE``, ``INERTIA_RANGE``).
* Mass: ``<inertial>`` is optional, as in URDF (a link without it is a
  massless frame); if present it must be complete (``<mass value>``, all six
  ``<inertia>`` attributes), with a positive mass and a physically valid
  tensor (symmetric positive-definite, principal moments satisfying the
  triangle inequality).  Each *body* (the root link or a link with a moving
  joint, plus everything fixed to it) must have a positive total mass, as
  every :class:`Model` body does; this includes a fixed root, although its
  mass never enters the dynamics.
* An extra frame on an unknown link.

Ignored: limits, ``<dynamics>``, ``<mimic>`` (a mimic joint stays an
independent coordinate, as in Pinocchio's default), ``<visual>``,
``<collision>``, transmissions, Gazebo tags.
"""

from __future__ import annotations

import codecs
import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..dq import (
    dq_from_quat_translation,
    dq_identity,
    dq_mul,
    quat_from_axis_angle,
    quat_mul,
    rotation_matrix_from_dq,
    rotation_matrix_from_quat,
    translation_from_dq,
)
from ..dq.checks import check_unit_vector
from .model import (
    Body,
    Frame,
    Joint,
    JointType,
    Model,
    _check_inertia,
    _check_length,
    _shaped,
)

__all__ = ["model_from_urdf"]

_JOINT_TYPES = {
    "revolute": JointType.REVOLUTE,
    "continuous": JointType.REVOLUTE,
    "prismatic": JointType.PRISMATIC,
    "fixed": JointType.FIXED,
}
_UNSUPPORTED = ("floating", "planar")
#: A URDF number: optional sign, ASCII digits with an optional decimal point, optional exponent.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NONFINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
#: What may precede the ``<`` of XML text: a byte-order mark and white space.
_XML_LEAD = "\ufeff \t\r\n"


@dataclass(frozen=True)
class _Inertial:
    mass: float  # [kg]
    com: np.ndarray  # (3,) in the link frame [m]
    inertia: np.ndarray  # (3, 3) about the CoM, link axes [kg m^2]


@dataclass(frozen=True)
class _UJoint:
    name: str
    type: JointType
    parent: str
    child: str
    origin: np.ndarray  # (8,) pose of the joint frame in the parent link frame
    axis: np.ndarray  # (3,) unit


# ------------------------------------------------------------------ parsing helpers


def _floats(text, n, what):
    """n finite floats from a whitespace-separated attribute value.

    Each must be a plain decimal number (``[+-]digits[.digits][e[+-]digits]``, ASCII
    digits): Python's ``float`` also reads ``1_0`` (as 10), ``nan``, ``infinity`` and
    non-ASCII digits, which are not URDF numbers.
    """
    parts = str(text).split()
    if len(parts) == n and any(_NONFINITE.fullmatch(p) for p in parts):
        raise ValueError(f"{what} must be finite, got {text!r}")
    if len(parts) != n or not all(_NUMBER.fullmatch(p) for p in parts):
        raise ValueError(f"{what} must be {n} numbers, got {text!r}")
    vals = [float(p) for p in parts]
    if not all(math.isfinite(x) for x in vals):  # beyond float64: 1e400
        raise ValueError(f"{what} must be finite, got {text!r}")
    return np.array(vals)


def _quat_from_rpy(rpy):
    """Unit quaternion of ``Rz(yaw) Ry(pitch) Rx(roll)`` (URDF fixed-axis x-y-z) [rad]."""
    qx = quat_from_axis_angle([1.0, 0.0, 0.0], rpy[0])
    qy = quat_from_axis_angle([0.0, 1.0, 0.0], rpy[1])
    qz = quat_from_axis_angle([0.0, 0.0, 1.0], rpy[2])
    return quat_mul(qz, quat_mul(qy, qx))


def _origin(el, what):
    """(quaternion (4,), translation (3,)) of an optional ``<origin>`` child of el."""
    o = el.find("origin")
    if o is None:
        return np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3)
    xyz = _floats(o.get("xyz", "0 0 0"), 3, f"{what} <origin xyz>")
    _check_length(f"{what} <origin xyz>", xyz)
    rpy = _floats(o.get("rpy", "0 0 0"), 3, f"{what} <origin rpy>")
    return _quat_from_rpy(rpy), xyz


def _parse_inertial(link_el, name):
    el = link_el.find("inertial")
    if el is None:
        return None
    what = f"link {name!r}"
    q, com = _origin(el, f"{what}: <inertial>")
    m_el = el.find("mass")
    if m_el is None or m_el.get("value") is None:
        raise ValueError(f"{what}: <inertial> needs <mass value=...>")
    mass = float(_floats(m_el.get("value"), 1, f"{what}: <mass value>")[0])
    if mass <= 0.0:
        raise ValueError(
            f"{what}: mass must be positive, got {mass} "
            "(omit <inertial> for a massless link attached by a fixed joint)"
        )
    i_el = el.find("inertia")
    if i_el is None:
        raise ValueError(f"{what}: <inertial> needs <inertia ixx ixy ixz iyy iyz izz>")
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    missing = [k for k in keys if i_el.get(k) is None]
    if missing:
        raise ValueError(f"{what}: <inertia> is missing the attribute(s) {missing}")
    v = {k: float(_floats(i_el.get(k), 1, f"{what}: <inertia {k}>")[0]) for k in keys}
    J = np.array(
        [
            [v["ixx"], v["ixy"], v["ixz"]],
            [v["ixy"], v["iyy"], v["iyz"]],
            [v["ixz"], v["iyz"], v["izz"]],
        ]
    )
    R = rotation_matrix_from_quat(q)
    J = R @ J @ R.T
    J = 0.5 * (J + J.T)
    try:
        _check_inertia(name, mass, com, J)
    except ValueError as e:
        raise ValueError(f"URDF link {name!r}: {e}") from None
    return _Inertial(mass, com, J)


def _parse_joint(el, links):
    name = el.get("name")
    if not name:
        raise ValueError("a <joint> has no name attribute")
    what = f"joint {name!r}"
    kind = el.get("type")
    if kind is None:
        raise ValueError(f"{what} has no type attribute")
    if kind not in _JOINT_TYPES:
        if kind in _UNSUPPORTED:
            raise ValueError(
                f"{what}: joint type {kind!r} is not supported "
                f"(supported: {sorted(_JOINT_TYPES)}; for a floating base use floating=True)"
            )
        raise ValueError(f"{what}: unknown joint type {kind!r} (supported: {sorted(_JOINT_TYPES)})")
    ends = {}
    for tag in ("parent", "child"):
        e = el.find(tag)
        if e is None or not e.get("link"):
            raise ValueError(f"{what} needs <{tag} link=...>")
        if e.get("link") not in links:
            raise ValueError(f"{what}: {tag} link {e.get('link')!r} is not a <link> of the robot")
        ends[tag] = e.get("link")
    q, r = _origin(el, what)
    jt = _JOINT_TYPES[kind]
    axis = np.array([1.0, 0.0, 0.0])
    if jt != JointType.FIXED:
        a_el = el.find("axis")
        if a_el is not None:
            axis = _floats(a_el.get("xyz", "1 0 0"), 3, f"{what} <axis xyz>")
        axis = check_unit_vector(axis, f"{what}: axis")  # then normalised, as Pinocchio does
    return _UJoint(name, jt, ends["parent"], ends["child"], dq_from_quat_translation(q, r), axis)


def _read_root(source):
    text = _xml_text(source)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise ValueError(f"not well-formed URDF XML: {e}") from None
    if root.tag != "robot":
        raise ValueError(f"the URDF root element must be <robot>, got <{root.tag}>")
    return root


def _xml_text(source):
    """The XML of ``path_or_xml_string``: the text itself, or the file's bytes.

    A string is XML text when it starts with ``<`` after an optional byte-order mark and
    white space; bytes (given, or read from the file) are always XML text, their
    encoding chosen by the declaration or a BOM.  A leading BOM (UTF-8 for bytes) and
    white space are dropped: the parser accepts no white space before a declaration.
    """
    if isinstance(source, str) and source.lstrip(_XML_LEAD).startswith("<"):
        return source.lstrip(_XML_LEAD)
    if isinstance(source, bytes):
        return source.removeprefix(codecs.BOM_UTF8).lstrip(b" \t\r\n")
    if not isinstance(source, (str, os.PathLike)):
        raise ValueError(
            f"path_or_xml_string must be a path or a URDF string, got {type(source).__name__}"
        )
    if isinstance(source, str) and "<" in source and not os.path.isfile(source):
        raise ValueError(
            "path_or_xml_string is neither a file nor URDF text (XML text must start with '<', "
            f"after an optional byte-order mark and white space): {source[:40]!r}..."
        )
    with open(source, "rb") as fh:
        return _xml_text(fh.read())


# -------------------------------------------------------------------- the builder


def _merge(parts):
    """Mass, CoM and inertia about the CoM of rigidly joined parts [(m, c, J_c)] (Steiner)."""
    m = sum(p[0] for p in parts)
    c = sum(p[0] * p[1] for p in parts) / m
    J = np.zeros((3, 3))
    for mi, ci, Ji in parts:
        d = ci - c
        J += Ji + mi * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, 0.5 * (J + J.T)


def model_from_urdf(
    path_or_xml_string: str | bytes | os.PathLike,
    *,
    floating: bool = False,
    root_name: str | None = None,
    frames: Sequence[Frame] = (),
    gravity: ArrayLike | None = None,
) -> Model:
    """Build a Model from a URDF file or string (see the module docstring for the rules).

    Parameters
    ----------
    path_or_xml_string : str, bytes or os.PathLike
        A path to a ``.urdf`` file, or the XML itself: bytes, or a string starting with
        ``<`` after an optional byte-order mark and white space.
    floating : bool
        Join the root link to the inertial frame with a FREE joint (floating base);
        otherwise the root is fixed at the inertial origin.
    root_name : str, optional
        Name of the root joint (default ``"root_joint"``, Pinocchio's name).
    frames : sequence of Frame, optional
        Extra named frames; a frame's ``body`` may name any link (merged links
        included), its ``placement`` (8,) is then the pose in that link's frame.
    gravity : (3,) array_like, optional
        Uniform gravity in the inertial frame [m/s^2]; zero (free space) by default.

    Returns
    -------
    Model
        Bodies named after their links, joints after the URDF joints, one frame
        per link named after it, then ``frames``.
    """
    root_el = _read_root(path_or_xml_string)

    links = {}
    order = []
    for el in root_el.findall("link"):
        name = el.get("name")
        if not name:
            raise ValueError("a <link> has no name attribute")
        if name in links:
            raise ValueError(f"link name {name!r} appears more than once")
        links[name] = el
        order.append(name)
    if not links:
        raise ValueError("the URDF has no <link>")
    inertial = {name: _parse_inertial(links[name], name) for name in order}

    joints = []
    seen = set()
    parent_joint = {}
    for el in root_el.findall("joint"):
        j = _parse_joint(el, links)
        if j.name in seen:
            raise ValueError(f"joint name {j.name!r} appears more than once")
        seen.add(j.name)
        if j.child in parent_joint:
            raise ValueError(
                f"link {j.child!r} is the child of several joints "
                f"({parent_joint[j.child].name!r} and {j.name!r}): a URDF must be a tree"
            )
        parent_joint[j.child] = j
        joints.append(j)

    roots = [n for n in order if n not in parent_joint]
    if len(roots) > 1:
        raise ValueError(f"the URDF has several root links {roots}: it must be one tree")
    if not roots:
        raise ValueError(
            "the URDF has no root link (every link has a parent): the joints form a cycle"
        )
    root = roots[0]

    children = {n: [] for n in order}
    for j in joints:
        children[j.parent].append(j)
    for n in children:
        children[n].sort(key=lambda j: j.name.encode())

    # Depth-first pre-order (Pinocchio's): body creation order and link placements.
    body_links = []  # link name of each body
    body_parent = []
    body_joint = []
    link_body = {}  # link -> (body index, pose of the link frame in the body frame)
    stack = [(root, None)]
    while stack:
        link, j = stack.pop()
        if j is None:
            jt = JointType.FREE if floating else JointType.FIXED
            body_joint.append(
                Joint(jt, np.array([1.0, 0.0, 0.0]), dq_identity(), root_name or "root_joint")
            )
            body_parent.append(None)
            link_body[link] = (0, dq_identity())
            body_links.append(link)
        else:
            pb, X_pb = link_body[j.parent]
            place = dq_mul(X_pb, j.origin)
            if j.type == JointType.FIXED:
                link_body[link] = (pb, place)
            else:
                link_body[link] = (len(body_links), dq_identity())
                body_joint.append(Joint(j.type, j.axis, place, j.name))
                body_parent.append(pb)
                body_links.append(link)
        stack.extend((cj.child, cj) for cj in reversed(children[link]))

    unreached = [n for n in order if n not in link_body]
    if unreached:
        raise ValueError(
            f"links {unreached} are not connected to the root {root!r}: their joints form a cycle"
        )

    # Mass properties of each body: its links' inertials, moved into the body frame.
    parts = [[] for _ in body_links]
    for link in order:
        ine = inertial[link]
        if ine is None:
            continue
        b, X = link_body[link]
        R = rotation_matrix_from_dq(X)
        parts[b].append((ine.mass, translation_from_dq(X) + R @ ine.com, R @ ine.inertia @ R.T))

    bodies = []
    for b, link in enumerate(body_links):
        if not parts[b]:
            fixed = [n for n in order if link_body[n][0] == b and n != link]
            raise ValueError(
                f"link {link!r} has no <inertial> and nothing fixed to it has mass "
                f"(fixed links: {fixed}): each moving link and the root need a positive mass"
            )
        m, c, J = _merge(parts[b])
        p = body_parent[b]
        bodies.append(Body(link, None if p is None else body_links[p], body_joint[b], m, c, J))

    # One frame per link (depth-first order, as Pinocchio's BODY frames), then the user's.
    fr = [Frame(n, link_body[n][0], link_body[n][1]) for n in _dfs(root, children)]
    for f in frames:
        if isinstance(f.body, str):
            if f.body not in link_body:
                raise ValueError(f"frame {f.name!r}: no link named {f.body!r}; links: {order}")
            b, X = link_body[f.body]
            place = _shaped(f.placement, (8,), f"frame {f.name!r} placement")
            fr.append(Frame(f.name, b, dq_mul(X, place)))
        else:
            fr.append(f)
    return Model.build(bodies, fr, gravity=gravity)


def _dfs(root, children):
    stack = [root]
    while stack:
        link = stack.pop()
        yield link
        stack.extend(j.child for j in reversed(children[link]))
