"""The base and the arm of a system: the base body, the arm mounted on it (the paper's iiwa,
a DH table or a URDF) with its joint limits, an optional payload, the plant's errors on
them (``[plant]``), and the arm's initial joint angles."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

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
    if cfg["scenario"]["kind"] == "capture":  # the fixture with the stand-off at t = 0
        t = cfg["target"]
        return (
            f"target.placement = {t['placement']!r}, xyz = {list(t['xyz'])}, rpy_deg = "
            f"{list(t['rpy_deg'])}, fixture_xyz = "
            f"{list(t['fixture_xyz'])}, fixture_rpy_deg = {list(t['fixture_rpy_deg'])} and "
            f"capture.standoff = {list(cfg['capture']['standoff'])}"
        )
    if tr["type"] == "waypoints" and cfg["waypoint"]:
        w = cfg["waypoint"][0]
        return f"waypoint[0] (xyz = {list(w['xyz'])}, rpy_deg = {list(w['rpy_deg'])})"
    if tr["type"] == "initial":
        return f"arm.initial_joints_deg = {list(cfg['arm']['initial_joints_deg'])}"
    where = f"trajectory.center = {list(tr['center'])}"
    where += f", orientation_rpy_deg = {list(tr['orientation_rpy_deg'])}"
    return where + (f", r = {tr['r']}" if tr["type"] == "lemniscate" else "")
