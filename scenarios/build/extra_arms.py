"""More than one arm (``[[extra_arm]]``): each extra arm built as the first one is
(:func:`~.arm.arm`, or from the base's own URDF through its ``root_link``) and mounted on
the base after the first arm, its bodies, joints and frames named ``<name>/<link>``."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...multibody import Body, Joint, JointType, Model
from ...multibody.assembly import urdf_joint_limits
from ..spec.config import ScenarioError, did_you_mean
from ..spec.schema import SCHEMA
from .arm import ArmInfo, arm, joint_values, per_joint, urdf_base_model, with_payload

__all__ = ["ExtraArm", "extra_arms"]


@dataclass
class ExtraArm:
    """A second (third ...) arm of a system (``[[extra_arm]]``): its ``name``, its row
    (``row``), its joints and limits (``info``: names, links and ``ee_frame`` prefixed
    ``<name>/``), its first joint's column in the controller model's v (``v0``), and the
    system of the base and this arm alone (``alone``, ``alone_info``: what its inverse
    kinematics is solved on; the end-effector's pose relative to the base is the same)."""

    name: str
    row: dict
    info: ArmInfo
    v0: int
    alone: Model
    alone_info: ArmInfo
    trajectory: Any = None  # its end-effector reference (set by build_system)
    joints0: Any = None  # (n,) its initial joints


def _renamed(exc: ScenarioError, i: int) -> ScenarioError:
    """A message about ``arm.<key>`` (from :func:`arm`) about ``extra_arm[i].<key>`` (the
    keys of ``[arm]`` only: a file named ``arm.urdf`` is left as it is)."""
    keys = "|".join(sorted(SCHEMA["arm"].fields, key=len, reverse=True))
    text = re.sub(rf"(?<![\w/.\-])arm\.({keys})\b", rf"extra_arm[{i}].\1", str(exc))
    return ScenarioError(re.sub(r"^arm:", f"extra_arm[{i}]:", text))


def _same_file_arm(cfg, row, i, base) -> tuple[Model, ArmInfo]:
    """An extra arm from the base's own URDF: the subtree of ``root_link`` (a link moved
    by a joint below ``base.link``) where the file's joint origins put it."""
    whole = urdf_base_model(cfg)
    names = list(whole.body_names)
    link = row["root_link"]
    if link not in names[1:]:
        raise ScenarioError(
            f"extra_arm[{i}].root_link = {link!r} is not a link moved by a joint below "
            f"base.link in {Path(row['model']).name} (its links: {', '.join(names[1:])})"
            f"{did_you_mean(link, names[1:])}"
        )
    keep = _subtree(whole, names.index(link))
    bodies = whole.bodies()
    sub = [bodies[0]] + [bodies[k] for k in keep]
    frames = [f for f in whole.frames if int(f.body) in keep]
    names[0] = base.name
    sub = [base] + [_by_name(b, names) for b in sub[1:]]
    frames = [type(f)(f.name, names[int(f.body)], f.placement) for f in frames]
    return Model.build(sub, frames), None


def _subtree(model: Model, k: int) -> list[int]:
    """The bodies of ``model`` at and below body ``k``, in order."""
    out = []
    for j in range(model.nb):
        p = j
        while p > 0 and p != k:
            p = int(model.parent[p])
        if p == k:
            out.append(j)
    return out


def _arm_cfg(cfg, row) -> dict:
    """A configuration whose ``[arm]`` is the extra arm's ``row``."""
    a = {**cfg["arm"], **{k: v for k, v in row.items() if k in cfg["arm"]}}
    return {**cfg, "arm": a}


def extra_arms(cfg, model: Model, info: ArmInfo, base: Body):
    """``(model, info, extras, first)``: the system's model with every ``[[extra_arm]]``
    mounted on the base after the first arm (its bodies, joints and frames named
    ``<name>/<link>``), the joints and limits of all the arms (first arm first), the
    :class:`ExtraArm` of each, and ``(model, info)`` of the base with the first arm alone.
    Without extra arms: ``model``, ``info``, ``[]``, ``(model, info)`` unchanged.  Errors
    name ``extra_arm[i].<key>``."""
    extras = []
    rows = cfg.get("extra_arm", [])
    first = model, info
    for i, row in enumerate(rows):
        sub = _arm_cfg(cfg, row)
        same = bool(cfg["base"].get("urdf")) and row["model"] == cfg["base"].get("urdf")
        try:
            if same:
                alone, _ = _same_file_arm(cfg, row, i, base)
                # the first arm (the whole file below base.link) leaves this subtree out
                taken = set(alone.body_names[1:])
                kept = [b for b in model.bodies() if b.name not in taken]
                if len(kept) != len(model.bodies()):
                    kept_names = {b.name for b in kept}
                    model = Model.build(
                        [kept[0]] + [_by_name(b, model.body_names) for b in kept[1:]],
                        [
                            type(f)(f.name, model.body_names[int(f.body)], f.placement)
                            for f in model.frames
                            if model.body_names[int(f.body)] in kept_names
                        ],
                        gravity=model.gravity,
                    )
                    info = _without(info, model)
                    first = model, info
                alone, alone_info = _urdf_arm_info(sub, alone, row, i)
            else:
                alone, alone_info = arm(sub, base)
        except ScenarioError as exc:
            raise _renamed(exc, i) from None
        prefix = f"{row['name']}/"
        bodies = []
        for b in alone.bodies()[1:]:
            p = b.parent if isinstance(b.parent, str) else alone.body_names[b.parent]
            parent = model.body_names[0] if p == alone.body_names[0] else prefix + p
            j = Joint(b.joint.type, b.joint.axis, b.joint.placement, prefix + b.joint.name)
            bodies.append(Body(prefix + b.name, parent, j, b.mass, b.com, b.inertia))
        frames = [
            type(f)(
                prefix + f.name,
                model.body_names[0] if int(f.body) == 0 else prefix + alone.body_names[int(f.body)],
                f.placement,
            )
            for f in alone.frames
        ]
        v0 = model.nv
        model = model.with_bodies(bodies, frames)
        ai = alone_info
        mine = ArmInfo(
            [prefix + n for n in ai.names], ai.lower, ai.upper, ai.torque_limit, ai.rate_limit,
            prefix + ai.ee_frame, ai.source, ai.sha256, ai.prismatic,
        )  # fmt: skip
        extras.append(ExtraArm(row["name"], row, mine, v0, alone, ai))
        if info.n + ai.n + 6 != model.nv:  # the first arm's joints, then each extra arm's
            raise ScenarioError(f"extra_arm[{i}]: its joints are not after the other arms'")
        info = ArmInfo(
            info.names + mine.names,
            np.r_[info.lower, ai.lower],
            np.r_[info.upper, ai.upper],
            np.r_[info.torque_limit, ai.torque_limit],
            np.r_[info.rate_limit, ai.rate_limit],
            info.ee_frame, info.source, info.sha256,
            np.r_[info.prismatic, ai.prismatic],
        )  # fmt: skip
    return model, info, extras, first


def _by_name(b: Body, names) -> Body:
    """``b`` with its parent named (``names``: the bodies' names by index)."""
    p = b.parent if isinstance(b.parent, str) or b.parent is None else names[b.parent]
    return Body(b.name, p, b.joint, b.mass, b.com, b.inertia)


def _without(info: ArmInfo, model: Model) -> ArmInfo:
    """The first arm's ``info`` keeping the joints ``model`` still has."""
    kept = set(model.joint_names)
    m = np.array([n in kept for n in info.names], dtype=bool)
    return ArmInfo(
        [n for n, k in zip(info.names, m, strict=True) if k], info.lower[m], info.upper[m],
        info.torque_limit[m], info.rate_limit[m], info.ee_frame, info.source, info.sha256,
        info.prismatic[m],
    )  # fmt: skip


def _urdf_arm_info(sub, alone: Model, row, i) -> tuple[Model, ArmInfo]:
    """The limits, payload and end-effector of an extra arm from the base's URDF
    (``alone``: the base and the arm's subtree)."""
    a = sub["arm"]
    data = Path(a["model"]).read_bytes()
    lim = urdf_joint_limits(data)
    movable = [
        j
        for j, t in zip(alone.joint_names[1:], alone.joint_type[1:], strict=True)
        if JointType(int(t)) in (JointType.REVOLUTE, JointType.PRISMATIC)
    ]
    lim_of = [lim.get(j) for j in movable]
    inf = math.inf
    prismatic = np.array(
        [
            JointType(int(t)) == JointType.PRISMATIC
            for t in alone.joint_type[1:]
            if JointType(int(t)) in (JointType.REVOLUTE, JointType.PRISMATIC)
        ],
        dtype=bool,
    )
    n = len(movable)
    lower = np.array([x.lower if x else -inf for x in lim_of])
    upper = np.array([x.upper if x else inf for x in lim_of])
    if a["lower_deg"]:
        lower = joint_values(a["lower_deg"], prismatic, "lower_deg")
    if a["upper_deg"]:
        upper = joint_values(a["upper_deg"], prismatic, "upper_deg")
    effort = [x.effort if x else inf for x in lim_of]
    torque = per_joint(a["torque_limit"], n, effort, "torque_limit")
    rate = per_joint(a["rate_limit"], n, [x.velocity if x else inf for x in lim_of], "rate_limit")
    ee = a["ee_frame"]
    frames = {f.name for f in alone.frames} | set(alone.body_names[1:])
    if ee not in frames:
        raise ScenarioError(
            f"arm.ee_frame = {ee!r} is not a link of the arm below root_link"
            f"{did_you_mean(ee, frames)}"
        )
    alone = with_payload(alone, a, ee)
    sha = hashlib.sha256(data).hexdigest()
    return alone, ArmInfo([str(j) for j in movable], lower, upper, torque, rate, ee, a["model"],
                          sha, prismatic)  # fmt: skip
