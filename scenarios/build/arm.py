"""The base and the arm of a system: the base body, the arm mounted on it (the paper's iiwa,
a DH table or a URDF) with its joint limits, an optional payload, the plant's errors on
them (``[plant]``), and the arm's initial joint angles."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...control import IIWA_JOINT_LIMITS, solve_ik
from ...dq import dq_from_rpy_deg, translation_from_dq
from ...multibody import (
    Body,
    DHRow,
    Joint,
    JointType,
    LinkInertia,
    Model,
    arm_from_dh,
    model_from_urdf,
    models,
)
from ...multibody.assembly import mount_arm, urdf_joint_limits, urdf_links, urdf_subtree
from ..spec.config import ScenarioError, did_you_mean
from ..spec.schema import SCHEMA

__all__ = [
    "ArmInfo",
    "IIWA_TORQUE_LIMITS",
    "IIWA_RATE_LIMITS_DEG",
    "inertia_matrix",
    "urdf_base_model",
    "base_body",
    "per_joint",
    "joint_values",
    "arm",
    "no_arm",
    "urdf_arm",
    "with_payload",
    "true_arm",
    "initial_joints",
    "start_pose_keys",
    "ExtraArm",
    "extra_arms",
]


#: KUKA LBR iiwa 14 R820 maximum joint torques [N m] (KUKA's data sheet)
IIWA_TORQUE_LIMITS = (320.0, 320.0, 176.0, 176.0, 110.0, 40.0, 40.0)


#: KUKA LBR iiwa 14 R820 maximum joint speeds [deg/s] (KUKA's data sheet)
IIWA_RATE_LIMITS_DEG = (85.0, 85.0, 100.0, 75.0, 130.0, 135.0, 135.0)


@dataclass
class ArmInfo:
    """The arm of a system: joint names and limits (n joints), end-effector frame."""

    names: list[str]
    lower: NDArray[np.float64]  # [rad or m]
    upper: NDArray[np.float64]
    torque_limit: NDArray[np.float64]  # [N m or N], inf: none
    rate_limit: NDArray[np.float64]  # [rad/s or m/s], inf: none
    ee_frame: str
    source: str  # 'iiwa', 'dh', or the URDF's path
    sha256: str = ""  # of the URDF file
    prismatic: NDArray[np.bool_] | None = None  # (n,) a prismatic joint (m), else revolute

    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def limits(self) -> NDArray[np.float64]:
        """(n, 2) ``[[lower, upper], ...]``."""
        return np.column_stack([self.lower, self.upper])


def inertia_matrix(six) -> NDArray[np.float64]:
    """(3, 3) from ``[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]``."""
    ixx, iyy, izz, ixy, ixz, iyz = (float(x) for x in six)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _body_error(exc, keys) -> ScenarioError:
    """``exc``, a model's check of one body (``body 'x': mass ...``, ``com ...``, else the
    inertia), as a ScenarioError naming the scenario key of what it is about (``keys``:
    ``mass``, ``com``, ``inertia`` -> key)."""
    text = str(exc)
    what = text.split(": ", 1)[1] if text.startswith("body ") and ": " in text else text
    return ScenarioError(f"{keys.get(what.split(' ', 1)[0], keys['inertia'])}: {text}")


def urdf_base_model(cfg) -> Model:
    """``base.urdf``: the file's subtree from ``base.link`` (the file's root when empty) on a
    free joint.  Its body 0 is the base (the link and every link fixed to it, merged as the
    URDF builder and Pinocchio do); its other bodies are the arm when the arm comes from the
    same file.  An unknown link is a ScenarioError naming the file's links."""
    b = cfg["base"]
    path = Path(b["urdf"])
    if not path.is_file():
        raise ScenarioError(f"base.urdf = {b['urdf']!r}: no such URDF file")
    data = path.read_bytes()
    try:
        links = urdf_links(data)
        link = b["link"] or (links[0] if links else "")
        if link and link not in links:
            raise ScenarioError(
                f"base.link = {link!r} is not a link of {path.name} (its links: "
                f"{', '.join(links)}){did_you_mean(link, links)}"
            )
        return model_from_urdf(urdf_subtree(data, link) if b["link"] else data, floating=True)
    except ScenarioError:
        raise
    except ValueError as exc:
        raise ScenarioError(f"base.urdf = {b['urdf']!r}: {exc}") from None


def base_body(cfg) -> Body:
    """The base as a body; its mass, centre of mass and inertia checked as the model checks
    them (positive, an inertia a rigid body has: the triangle inequality), a ScenarioError
    naming the key."""
    b = cfg["base"]
    joint = Joint(JointType.FREE, name="base")
    if b.get("urdf"):  # the mass properties of a URDF link (and the links fixed to it)
        m = urdf_base_model(cfg)
        return Body("base", None, joint, float(m.mass[0]), m.com[0].copy(), m.inertia_com[0])
    if b["inertia"]:
        J = inertia_matrix(b["inertia"])
    else:
        J = b["mass"] * b["size"] ** 2 / 6.0 * np.eye(3)  # a uniform cube
    body = Body("base", None, joint, b["mass"], np.asarray(b["com"], float), J)
    try:
        Model.build([body])
    except ValueError as exc:
        inertia = "base.inertia" if b["inertia"] else "base.size (the cube's inertia)"
        keys = {"mass": "base.mass", "com": "base.com", "inertia": inertia}
        raise _body_error(exc, keys) from None
    return body


def per_joint(values, n, default, key):
    """A per-joint vector from a list of n values, one value for all, or the default."""
    if not values:
        return np.asarray(default, float)
    if len(values) == 1:
        return np.full(n, float(values[0]))
    if len(values) != n:
        raise ScenarioError(f"arm.{key}: give {n} values (one per joint) or one, got {len(values)}")
    return np.asarray(values, float)


def urdf_arm(data: bytes, root_link: str, file_name: str):
    """The URDF of the arm: the whole file, or with ``arm.root_link`` the subtree from that
    link (the link fixed to the base's mount; a pedestal or a "world" link above it is left
    out).  An unknown link is a ScenarioError naming it and listing the file's links."""
    if not root_link:
        return data
    links = urdf_links(data)
    if root_link not in links:
        raise ScenarioError(
            f"arm.root_link = {root_link!r} is not a link of {file_name} (its links: "
            f"{', '.join(links)}){did_you_mean(root_link, links)}"
        )
    return urdf_subtree(data, root_link)


def no_arm(base: Body) -> tuple[Model, ArmInfo]:
    """``arm.model = "none"``: the base alone, an :class:`ArmInfo` of 0 joints (no
    end-effector frame: ``ee_frame`` is empty)."""
    empty = np.zeros(0)
    return Model.build([base]), ArmInfo([], empty, empty, empty, empty, "", "none")


def arm(cfg, base: Body) -> tuple[Model, ArmInfo]:
    a = cfg["arm"]
    if a["model"] == "none":
        return no_arm(base)
    mount = dq_from_rpy_deg(a["mount_rpy_deg"], a["mount_xyz"])
    src = a["model"]
    sha = ""
    if a["root_link"] and src in ("iiwa", "dh"):
        raise ScenarioError(
            f"arm.root_link = {a['root_link']!r} applies to a URDF arm (arm.model = {src!r})"
        )
    if src == "iiwa":
        model = arm_from_dh(models.IIWA_DH, models.IIWA_LINKS, base=base, mount=mount, flange="ee")
        lower, upper = IIWA_JOINT_LIMITS[:, 0], IIWA_JOINT_LIMITS[:, 1]
        torque, rate = np.array(IIWA_TORQUE_LIMITS), np.radians(IIWA_RATE_LIMITS_DEG)
        ee = "ee"
    elif src == "dh":
        rows = cfg["dh"]
        if not rows:
            raise ScenarioError("arm.model = 'dh' needs a [[dh]] table (one row per joint)")
        dh = [
            DHRow(
                r["a"],
                r["d"],
                math.radians(r["alpha_deg"]),
                math.radians(r["theta_deg"]),
                prismatic=r["joint"] == "prismatic",
            )
            for r in rows
        ]
        links = [
            LinkInertia(r["mass"], np.asarray(r["com"]), inertia_matrix(r["inertia"])) for r in rows
        ]
        try:
            model = arm_from_dh(
                dh, links, convention=a["dh_convention"], base=base, mount=mount, flange="ee"
            )
        except ValueError as exc:
            raise ScenarioError(f"[[dh]]: {exc}") from None
        scale = [1.0 if r["joint"] == "prismatic" else math.pi / 180 for r in rows]
        lower = np.array([r["lower_deg"] * s for r, s in zip(rows, scale, strict=True)])
        upper = np.array([r["upper_deg"] * s for r, s in zip(rows, scale, strict=True)])
        torque = rate = np.full(len(rows), np.inf)
        ee = "ee"
    else:
        path = Path(src)
        if not path.is_file():
            raise ScenarioError(f"arm.model = {src!r}: no such URDF file (or 'iiwa', 'dh', 'none')")
        data = path.read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        try:
            arm_model = model_from_urdf(urdf_arm(data, a["root_link"], path.name))
            lim = urdf_joint_limits(data)
        except ScenarioError:
            raise
        except ValueError as exc:
            raise ScenarioError(f"arm.model = {src!r}: {exc}") from None
        base_model = Model.build([base])
        try:
            if src == cfg["base"].get("urdf"):  # the base's file: the arm hangs from its link
                whole = urdf_base_model(cfg)
                model = Model.build([base, *whole.bodies()[1:]], whole.frames)
            else:
                model = mount_arm(base_model, arm_model, mount)
        except ScenarioError:
            raise
        except ValueError as exc:
            raise ScenarioError(f"arm.model = {src!r}: {exc}") from None
        movable = [
            j
            for j, t in zip(model.joint_names[1:], model.joint_type[1:], strict=True)
            if JointType(int(t)) in (JointType.REVOLUTE, JointType.PRISMATIC)
        ]
        if len(movable) != model.nv - 6:
            raise ScenarioError(
                f"arm.model = {src!r}: only revolute, continuous, prismatic and fixed joints "
                f"are supported in an arm"
            )
        lim_of = [lim.get(j) for j in movable]
        inf = math.inf
        lower = np.array([x.lower if x else -inf for x in lim_of])
        upper = np.array([x.upper if x else inf for x in lim_of])
        torque = np.array([x.effort if x else inf for x in lim_of])
        rate = np.array([x.velocity if x else inf for x in lim_of])
        ee = a["ee_frame"]
        frames = {f.name for f in model.frames} | set(model.body_names)
        if ee not in frames:
            raise ScenarioError(
                f"arm.ee_frame = {ee!r} is not a link of {path.name}{did_you_mean(ee, frames)}"
            )
        names = [str(j) for j in movable]
    n = model.nv - 6
    if n < 1:
        raise ScenarioError(f"arm.model = {src!r}: the arm has no movable joint")
    if src in ("iiwa", "dh"):
        names = [f"joint{i + 1}" for i in range(n)]
    prismatic = np.array(
        [
            JointType(int(t)) == JointType.PRISMATIC
            for t in model.joint_type[1:]
            if JointType(int(t)) in (JointType.REVOLUTE, JointType.PRISMATIC)
        ],
        dtype=bool,
    )
    if a["lower_deg"]:
        lower = joint_values(a["lower_deg"], prismatic, "lower_deg")
    if a["upper_deg"]:
        upper = joint_values(a["upper_deg"], prismatic, "upper_deg")
    if np.any(lower >= upper):
        i = int(np.argmax(lower >= upper))
        raise ScenarioError(f"arm: joint {i + 1}'s lower limit is not below its upper limit")
    torque = per_joint(a["torque_limit"], n, torque, "torque_limit")
    rate = per_joint(a["rate_limit"], n, rate, "rate_limit")
    model = with_payload(model, a, ee)
    info = ArmInfo(names, lower, upper, torque, rate, ee, src, sha, prismatic)
    return model, info


def joint_values(values, prismatic, key):
    """The joint values of ``arm.<key>`` (``lower_deg``, ``upper_deg``,
    ``initial_joints_deg``: n values or one for all) in SI: degrees to radians for a
    revolute joint, metres kept for a prismatic one (``prismatic``: (n,) bool)."""
    v = per_joint(values, len(prismatic), None, key)
    return np.where(prismatic, v, np.radians(v))


def with_payload(model: Model, a, ee: str) -> Model:
    """The model with the payload (``arm.payload_mass`` > 0) fixed to ``arm.payload_link``
    (a body or a frame of the arm; empty: the end-effector frame ``ee``), its centre of mass
    and inertia given in that link's frame."""
    if a["payload_mass"] <= 0.0:
        return model
    m = float(a["payload_mass"])
    link = a.get("payload_link") or ee
    frames = {f.name for f in model.frames}
    on_base = {f.name for f in model.frames if int(f.body) == 0} | {model.body_names[0]}
    arm_links = (frames | set(model.body_names[1:])) - on_base
    if link not in arm_links:
        why = " (it is the base's: add the payload to [base])" if link in on_base else ""
        raise ScenarioError(
            f"arm.payload_link = {link!r} is not a link of the arm{why}"
            f"{did_you_mean(link, sorted(arm_links))}"
        )
    if link in frames:
        f = model.frames[model.frame_index(link)]
        body, placement = f.body, f.placement
    else:
        body, placement = model.body_index(link), None
    J = (
        inertia_matrix(a["payload_inertia"])
        if a["payload_inertia"]
        else 0.4 * m * 0.05**2 * np.eye(3)
    )
    joint = (
        Joint(JointType.FIXED, placement=placement, name="payload")
        if placement is not None
        else Joint(JointType.FIXED, name="payload")
    )
    payload = Body("payload", body, joint, m, np.asarray(a["payload_com"]), J)
    try:
        return model.with_bodies([payload])
    except ValueError as exc:
        inertia = "arm.payload_inertia" if a["payload_inertia"] else "arm.payload_mass"
        keys = {"mass": "arm.payload_mass", "com": "arm.payload_com", "inertia": inertia}
        raise _body_error(exc, keys) from None


def true_arm(cfg, arm_model: Model, info: ArmInfo) -> Model:
    """The plant's base and arm: the nominal ones with the ``[plant]`` errors applied (the
    controllers keep the nominal model)."""
    e = cfg["plant"]
    if not (
        e["base_mass_error"]
        or any(e["base_com_error"])
        or any(e["base_inertia_error"])
        or e["link_mass_error"]
        or e["payload_mass_error"]
    ):
        return arm_model
    bodies = arm_model.bodies()
    b = bodies[0]
    w, V = np.linalg.eigh(b.inertia)
    J = V @ np.diag(w * (1.0 + np.asarray(e["base_inertia_error"]))) @ V.T
    bodies[0] = Body(
        b.name,
        b.parent,
        b.joint,
        b.mass * (1.0 + e["base_mass_error"]),
        b.com + np.asarray(e["base_com_error"]),
        J * (1.0 + e["base_mass_error"]),
    )
    s = 1.0 + e["link_mass_error"]
    for k in range(1, len(bodies)):
        b = bodies[k]
        mass, inertia = b.mass * s, b.inertia * s
        if b.name == "payload":
            extra = e["payload_mass_error"]
            mass, inertia = b.mass + extra, b.inertia * (1.0 + extra / b.mass)
        bodies[k] = Body(b.name, b.parent, b.joint, mass, b.com, inertia)
    if e["payload_mass_error"] and "payload" not in arm_model.body_names:
        raise ScenarioError(
            "plant.payload_mass_error needs a payload (arm.payload_mass > 0): it is the "
            "error on the payload's mass"
        )
    try:
        return Model.build(bodies, arm_model.frames, gravity=arm_model.gravity)
    except ValueError as exc:
        raise ScenarioError(f"[plant]: {exc}") from None


def initial_joints(model, target, seed, info: ArmInfo, n_tries=24, where=""):
    """The IK solution of ``target`` with the largest joint-limit margin, from ``seed`` and
    a fixed set of pseudo-random seeds (deterministic, independent of the scenario's seed).

    Raises ScenarioError when no seed reaches ``target``, naming ``where`` (the keys that
    set the start pose, :func:`start_pose_keys`) and the pose's position."""
    L = info.limits
    lo = np.where(np.isfinite(L[:, 0]), L[:, 0], -np.pi)
    hi = np.where(np.isfinite(L[:, 1]), L[:, 1], np.pi)
    rng = np.random.default_rng(12345)
    seeds = [seed] + [rng.uniform(0.8 * lo, 0.8 * hi) for _ in range(n_tries)]
    best, best_margin = None, -np.inf
    for s in seeds:
        r = solve_ik(model, target, s, frame=info.ee_frame, limits=L, tol=1e-11, max_iterations=200)
        if not r.success:
            continue
        margin = np.min(np.minimum(r.joints - lo, hi - r.joints))
        if margin > best_margin:
            best, best_margin = r.joints, margin
    if best is None:
        xyz = ", ".join(f"{x:.4g}" for x in translation_from_dq(target))
        keys = where or "trajectory.center, orientation_rpy_deg, [[waypoint]]"
        raise ScenarioError(
            f"{keys}: the trajectory's start pose (position [{xyz}] m, base frame) is not "
            "reachable by the arm within its joint limits (check it, arm.mount_xyz, "
            "arm.mount_rpy_deg and arm.lower_deg / upper_deg)"
        )
    return best


def start_pose_keys(cfg) -> str:
    """The keys that set the start pose of the end-effector's trajectory, with their values
    (what an unreachable start pose's message names)."""
    tr = cfg["trajectory"]
    if tr["type"] == "waypoints" and cfg["waypoint"]:
        w = cfg["waypoint"][0]
        return f"waypoint[0] (xyz = {list(w['xyz'])}, rpy_deg = {list(w['rpy_deg'])})"
    if tr["type"] == "initial":
        return f"arm.initial_joints_deg = {list(cfg['arm']['initial_joints_deg'])}"
    where = f"trajectory.center = {list(tr['center'])}"
    where += f", orientation_rpy_deg = {list(tr['orientation_rpy_deg'])}"
    return where + (f", r = {tr['r']}" if tr["type"] == "lemniscate" else "")


# ------------------------------------------------------------------ more than one arm


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
