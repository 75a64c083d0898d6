"""Assembling a spacecraft model from parts: an arm mounted on a base, joint limits of a URDF.

:func:`mount_arm` puts a fixed-root arm model (from :func:`~dqspace.multibody.model_from_urdf`
or :func:`~dqspace.multibody.arm_from_dh` without a base) on a body of another model at a
given pose: the arm's root bodies become children of that body, their joint placements
composed with the mount; bodies, joints and frames keep their names.

:func:`urdf_joint_limits` reads the ``<limit>`` of every movable joint of a URDF (the model
builder ignores them): position range, effort and velocity.

:func:`urdf_links` lists a URDF's links; :func:`urdf_subtree` keeps the part of a URDF
below one link (that link as the root), e.g. the arm of a URDF that describes a whole
servicer or a pedestal above the arm.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..dq import dq_identity, dq_mul
from .model import Body, Frame, Joint, JointType, Model
from .urdf import _read_root

__all__ = ["mount_arm", "JointLimits", "urdf_joint_limits", "urdf_links", "urdf_subtree"]


def mount_arm(
    model: Model, arm: Model, mount: ArrayLike | None = None, *, parent: str | int = "base"
) -> Model:
    """``model`` with the bodies and frames of ``arm`` appended, its root fixed to ``parent``.

    Parameters
    ----------
    model : Model, e.g. a floating base alone
    arm : Model with a fixed root (its first body's joint attaches to the inertial frame);
        a floating arm (FREE root joint) is refused
    mount : (8,) unit dual quaternion, the pose of the arm's inertial (root) frame in the
        frame of ``parent``; identity by default
    parent : str or int, the carrying body of ``model``

    Returns
    -------
    Model, with ``model``'s gravity; an arm body or frame whose name the model already has
    is renamed ``arm_<name>``.
    """
    if not isinstance(model, Model) or not isinstance(arm, Model):
        raise ValueError("mount_arm: model and arm must be Model instances")
    p = model.body_index(parent)
    mount = dq_identity() if mount is None else np.asarray(mount, dtype=float)
    if mount.shape != (8,):
        raise ValueError(f"mount_arm: mount must be a (8,) dual quaternion, got {mount.shape}")
    taken = {b.name for b in model.bodies()} | {f.name for f in model.frames}
    # an arm body or frame named like one of the model's (a URDF link called "base") is
    # renamed "arm_<name>"
    names = [b.name if b.name not in taken else f"arm_{b.name}" for b in arm.bodies()]
    bodies = []
    for k, b in enumerate(arm.bodies()):
        j = b.joint
        if b.parent is None or (isinstance(b.parent, int) and b.parent < 0):
            if j.type == JointType.FREE:
                raise ValueError(
                    f"mount_arm: the arm's root joint {j.name!r} is FREE; load the arm with "
                    f"a fixed root (floating=False)"
                )
            j = Joint(j.type, j.axis, dq_mul(mount, j.placement), j.name)
            bodies.append(Body(names[k], p, j, b.mass, b.com, b.inertia))
        else:
            parent = names[b.parent] if not isinstance(b.parent, str) else b.parent
            bodies.append(Body(names[k], parent, j, b.mass, b.com, b.inertia))
    frames = [
        Frame(
            f.name if f.name not in taken else f"arm_{f.name}",
            f.body if isinstance(f.body, str) else names[f.body],
            f.placement,
        )
        for f in arm.frames
    ]
    return model.with_bodies(bodies, frames)


@dataclass(frozen=True)
class JointLimits:
    """Limits of one URDF joint: position [rad or m] (infinite for a continuous joint),
    effort [N m or N] and velocity [rad/s or m/s] (infinite when not given)."""

    lower: float
    upper: float
    effort: float
    velocity: float


def _limit_value(el, key: str, joint: str) -> float | None:
    text = el.get(key) if el is not None else None
    if text is None:
        return None
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"joint {joint!r}: <limit {key}={text!r}> is not a number") from None
    if math.isnan(x):
        raise ValueError(f"joint {joint!r}: <limit {key}> is NaN")
    return x


def urdf_joint_limits(path_or_xml_string: str | bytes | os.PathLike) -> dict[str, JointLimits]:
    """``{joint name: JointLimits}`` for every revolute, continuous and prismatic joint.

    A missing effort or velocity (or a non-positive one, which URDF writers use for "none")
    is infinite; a continuous joint has no position limits, nor does a joint without
    ``lower``/``upper`` or with both 0 (what URDF parsers read from an omitted ``<limit>``).
    ``lower > upper`` raises ValueError.
    """
    root = _read_root(path_or_xml_string)
    out = {}
    for el in root.findall("joint"):
        kind = el.get("type")
        if kind not in ("revolute", "continuous", "prismatic"):
            continue
        name = el.get("name") or ""
        lim = el.find("limit")
        lo = _limit_value(lim, "lower", name)
        hi = _limit_value(lim, "upper", name)
        effort = _limit_value(lim, "effort", name)
        velocity = _limit_value(lim, "velocity", name)
        if kind == "continuous" or (lo is None and hi is None) or lo == hi == 0.0:
            lo, hi = -math.inf, math.inf
        lo = -math.inf if lo is None else lo
        hi = math.inf if hi is None else hi
        if lo > hi:
            raise ValueError(f"joint {name!r}: <limit lower={lo} upper={hi}>: lower > upper")
        effort = math.inf if effort is None or effort <= 0 else effort
        velocity = math.inf if velocity is None or velocity <= 0 else velocity
        out[name] = JointLimits(lo, hi, effort, velocity)
    return out


def urdf_links(path_or_xml_string: str | bytes | os.PathLike) -> list[str]:
    """The names of a URDF's links, in the file's order."""
    root = _read_root(path_or_xml_string)
    return [el.get("name") for el in root.findall("link") if el.get("name")]


def urdf_subtree(path_or_xml_string: str | bytes | os.PathLike, link: str) -> str:
    """The URDF text of the subtree of ``link``: that link (the new root), every link below
    it and the joints between them; the joint above ``link`` and everything not below it
    are left out (other top-level elements, such as materials, are kept).  A URDF whose
    root is ``link`` comes back whole.

    Raises
    ------
    ValueError : no link named ``link`` (the message lists the links)
    """
    root = _read_root(path_or_xml_string)
    names = [el.get("name") for el in root.findall("link")]
    if link not in names:
        raise ValueError(f"no link named {link!r}; links: {names}")
    children: dict = {}
    for j in root.findall("joint"):
        p, c = j.find("parent"), j.find("child")
        if p is not None and c is not None:
            children.setdefault(p.get("link"), []).append(c.get("link"))
    keep, stack = set(), [link]
    while stack:  # every link below `link` (a cycle is the model builder's to report)
        n = stack.pop()
        if n not in keep:
            keep.add(n)
            stack.extend(children.get(n, []))
    out = ET.Element(root.tag, root.attrib)
    for el in root:
        if el.tag == "link":
            if el.get("name") in keep:
                out.append(el)
        elif el.tag == "joint":
            p, c = el.find("parent"), el.find("child")
            ends = (
                p.get("link") if p is not None else None,
                c.get("link") if c is not None else None,
            )
            if ends[0] in keep and ends[1] in keep and ends[1] != link:
                out.append(el)
        else:
            out.append(el)
    return ET.tostring(out, encoding="unicode")
