"""The animation's scene, built from what a run recorded: the plant model and the devices'
placement in ``manifest["system"]`` (see :mod:`dqspace.scenarios.build.describe`), the
configurations ``q`` and the recorded series.  Nothing is rebuilt from the scenario and no
module a result names is imported: animating a received result runs no code from it.

A scene is a set of :class:`Part` (a mesh carried by a body of the model) in named
groups (:data:`GROUPS`: base, arm links and joints, thrusters and plumes, VSCMGs,
reaction wheels), the frames' samples and the end-effector paths; :mod:`.posing` poses it
frame by frame.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ...dq import dq_normalize, transform_from_dq
from ...multibody import JointType, Model, model_from_dict
from ..store.received import LoadBudget, read_file
from .common import scenario_config
from .meshes import Mesh, arrow_mesh, box_mesh, cone_mesh, cylinder_mesh, z_along
from .target_view import FIXTURE_COLOR, TARGET_COLOR, TargetView, target_parts, target_view
from .visuals import MAX_URDF_BYTES, urdf_visuals

__all__ = [
    "ARM_COLOR",
    "BASE_COLOR",
    "HOUSING_COLOR",
    "NOZZLE_COLOR",
    "PLUME_COLOR",
    "VSCMG_COLOR",
    "WHEEL_COLOR",
    "EE_COLOR",
    "PATH_COLOR",
    "REF_COLOR",
    "GROUPS",
    "Group",
    "Part",
    "RecordedPlant",
    "Scene",
    "base_transforms",
    "build_scene",
    "recorded_plant",
    "scenario_name",
]

log = logging.getLogger("dqspace.animate")

#: colours of the scene (hex RGB); the arm's hue is unique in the scene
ARM_COLOR = "#f28e2b"
BASE_COLOR = "#c8b44a"
HOUSING_COLOR = "#50505c"
NOZZLE_COLOR = "#3a3a3a"
PLUME_COLOR = "#4dabf7"
VSCMG_COLOR = "#7b52ab"
WHEEL_COLOR = "#2a9d8f"
EE_COLOR = "#111111"
PATH_COLOR = "#d62728"
REF_COLOR = "#555555"


@dataclass
class Part:
    """Geometry carried by one body: ``mesh`` placed by ``T`` (4, 4) in the body frame;
    ``scale`` (n_frames, 3), optional, stretches the mesh's own axes frame by frame."""

    body: int
    T: NDArray[np.float64]
    mesh: Mesh
    color: str | None = None
    scale: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class Group:
    """One mesh trace: its legend name, colour and look."""

    name: str
    color: str
    opacity: float = 1.0


GROUPS = {
    "base": Group("base", BASE_COLOR, 0.55),
    "arm": Group("arm links", ARM_COLOR),
    "housing": Group("arm joints", HOUSING_COLOR),
    "nozzle": Group("thrusters", NOZZLE_COLOR),
    "plume": Group("thruster plumes (firing)", PLUME_COLOR, 0.75),
    "vscmg": Group("VSCMG wheels, gimbal axles", VSCMG_COLOR),
    "vscmg_h": Group("VSCMG spin axes", VSCMG_COLOR),
    "wheel": Group("reaction wheels", WHEEL_COLOR),
    "wheel_h": Group("wheel speeds (arrow: speed / limit)", WHEEL_COLOR),
    "target": Group("target (green once grasped)", TARGET_COLOR, 0.5),
    "fixture": Group("grapple fixture axes (x red, y green, z blue)", FIXTURE_COLOR),
}


@dataclass
class Scene:
    """What the animation draws: the model, the frames' configurations and times, the parts
    by group, the end-effector frame and paths (inertial frame, metres)."""

    model: Model
    q: NDArray[np.float64]  # (n_frames, nq)
    t: NDArray[np.float64]  # (n_frames,)
    parts: dict  # group -> list of Part
    ee_frame: str
    ee_path: NDArray[np.float64] | None  # (n_frames, 3) inertial, recorded
    ref_path: NDArray[np.float64] | None  # (n_ref, 3) inertial, whole run
    ref_now: NDArray[np.float64] | None  # (n_frames, 3)
    target: TargetView | None = None  # a capture run's target (posed by target_pose)


#: most thrusters, VSCMGs or wheels a recorded scene may list
MAX_DEVICES = 1000


@dataclass(frozen=True)
class RecordedPlant:
    """What a run recorded of its plant for the animation (``manifest["system"]``), checked.

    Attributes
    ----------
    model : Model, the plant (``plant_model``)
    ee_frame : str, a frame or body of the model ("": none, a system without an arm)
    base_size : float [m], the base cube's edge
    urdf : dict or None, ``{"path", "sha256"}`` of a URDF arm
    thrusters : list of dict, ``position``, ``direction`` (3,) [m, -], ``max_thrust`` [N]
    vscmgs : list of dict, ``gimbal_body``, ``wheel_body``, ``wheel_v``, ``position`` [m]
    wheels : list of dict, ``rotor_body``, ``wheel_v``, ``position`` [m], ``max_speed``
        [rad/s] or None
    """

    model: Model
    ee_frame: str
    base_size: float
    urdf: dict | None
    thrusters: list
    vscmgs: list
    wheels: list


def scenario_name(res, default: str = "unnamed scenario") -> str:
    """The run's scenario name (``manifest["scenario"]["scenario"]["name"]``)."""
    name = (scenario_config(res).get("scenario") or {}).get("name")
    return str(name) if name is not None else default


def _fail(what, problem):
    raise ValueError(f"the result's manifest['system']['scene']: {what}: {problem}")


def _finite(x, what, positive=False) -> float:
    if type(x) not in (int, float) or not math.isfinite(x) or (positive and x <= 0):
        _fail(what, f"expected a {'positive ' if positive else ''}finite number, got {x!r:.60}")
    return float(x)


def _vec3(x, what) -> list[float]:
    if not isinstance(x, list) or len(x) != 3:
        _fail(what, "expected a list of 3 numbers")
    return [_finite(v, f"{what}[{i}]") for i, v in enumerate(x)]


def _whole(x, what, hi) -> int:
    if type(x) is not int or not 0 <= x < hi:
        _fail(what, f"expected a whole number in 0..{hi - 1}, got {x!r:.60}")
    return x


def _entries(scene, key, fields):
    rows = scene.get(key, [])
    if not isinstance(rows, list) or len(rows) > MAX_DEVICES:
        _fail(key, f"expected a list of at most {MAX_DEVICES} tables")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or set(row) != set(fields):
            _fail(f"{key}[{i}]", f"expected a table of {sorted(fields)}")
        out.append({k: check(row[k], f"{key}[{i}].{k}") for k, check in fields.items()})
    return out


def recorded_plant(res) -> RecordedPlant:
    """The plant and the devices' placement a run recorded (``manifest["system"]``'s
    ``plant_model`` and ``scene``), every value checked.

    Raises
    ------
    ValueError : a result that does not record them (written before they were recorded:
        run it again to animate it; the animation never rebuilds the system), or a value
        of the wrong type, size or range (naming it)
    """
    system = res.manifest.get("system")
    if not isinstance(system, Mapping) or "plant_model" not in system:
        raise ValueError(
            "the result's manifest does not record its plant (manifest['system']"
            "['plant_model']; results written before it was recorded): the animation draws "
            "what a run recorded and does not rebuild the system -- run the scenario again"
        )
    try:
        model = model_from_dict(system["plant_model"])
    except ValueError as exc:
        raise ValueError(f"the result's manifest['system']['plant_model']: {exc}") from None
    scene = system.get("scene")
    if not isinstance(scene, Mapping):
        _fail("scene", "expected a table")
    ee = scene.get("ee_frame")
    names = {f.name for f in model.frames} | set(model.body_names)
    if type(ee) is not str or (ee not in names and ee != ""):  # "": no arm, no end-effector
        _fail("ee_frame", f"{ee!r:.60} is not a frame or body of the recorded plant")
    urdf = scene.get("urdf")
    if urdf is not None and not (
        isinstance(urdf, Mapping)
        and set(urdf) == {"path", "sha256"}
        and all(type(urdf[k]) is str and len(urdf[k]) <= 4096 for k in urdf)
    ):
        _fail("urdf", "expected None or a table of the strings path and sha256")
    nb, nv = model.nb, model.nv

    def body(x, what):
        return _whole(x, what, nb)

    def v_index(x, what):
        return _whole(x, what, nv)

    def speed(x, what):
        return None if x is None else _finite(x, what, positive=True)

    return RecordedPlant(
        model,
        ee,
        _finite(scene.get("base_size"), "base_size", positive=True),
        dict(urdf) if urdf is not None else None,
        _entries(
            scene,
            "thrusters",
            {
                "position": _vec3,
                "direction": _vec3,
                "max_thrust": lambda x, w: _finite(x, w, positive=True),
            },
        ),
        _entries(
            scene,
            "vscmgs",
            {"gimbal_body": body, "wheel_body": body, "wheel_v": v_index, "position": _vec3},
        ),
        _entries(
            scene,
            "wheels",
            {"rotor_body": body, "wheel_v": v_index, "position": _vec3, "max_speed": speed},
        ),
    )


def _frame_samples(res, nq, frames):
    """Indices of the animated samples: finite ``q`` rows, evenly spread, at most
    ``frames`` of them."""
    q = np.asarray(res["q"], float)
    if q.ndim != 2 or q.shape[1] != nq:
        raise ValueError(
            f"the result's q has shape {q.shape}, its recorded plant model has nq = {nq}"
        )
    good = np.flatnonzero(np.all(np.isfinite(q), axis=1))
    if good.size == 0:
        raise ValueError("the result has no sample with a finite configuration q to animate")
    pick = np.unique(np.round(np.linspace(0, good.size - 1, min(frames, good.size))).astype(int))
    return good[pick]


def base_transforms(q8: NDArray[np.float64]) -> NDArray[np.float64]:
    """(n, 4, 4) from base poses (n, 8) (projected onto unit dual quaternions first: a
    recorded pose is unit to ~1e-12)."""
    return transform_from_dq(dq_normalize(q8))


def _to_inertial(T_IB, p_B):
    return np.einsum("nij,nj->ni", T_IB[:, :3, :3], p_B) + T_IB[:, :3, 3]


def _ee_paths(res, q_all, idx):
    """Recorded end-effector path at the frames and the whole reference path (inertial)."""
    if "ee_pos_I" in res:  # open loop: inertial already
        ee = np.asarray(res["ee_pos_I"], float)[idx]
        ref = np.asarray(res["ee_ref_I"], float) if "ee_ref_I" in res else None
        return ee, ref, (ref[idx] if ref is not None else None)
    if "ee_pos" not in res or not np.isfinite(np.asarray(res["ee_pos"], float)).any():
        return None, None, None  # no end-effector recorded (a system without an arm)
    ok = np.all(np.isfinite(q_all), axis=1)
    T = base_transforms(np.where(ok[:, None], q_all, q_all[idx[0]])[:, :8])
    ee = _to_inertial(T, np.asarray(res["ee_pos"], float))
    ref = _to_inertial(T, np.asarray(res["ee_ref"], float)) if "ee_ref" in res else None
    keep = ok & (np.all(np.isfinite(ref), axis=1) if ref is not None else ok)
    return (
        ee[idx],
        (ref[keep] if ref is not None else None),
        (ref[idx] if ref is not None else None),
    )


def _arm_bodies(model: Model, device_bodies: set) -> list[int]:
    return [k for k in range(1, model.nb) if k not in device_bodies]


def _stick_arm(model, arm, ee_frame, skip, extra_ee=()):
    """Stick model of the arm bodies not in ``skip``: link cylinders from each body's origin
    to its children's joints (where they are at zero joint position: a prismatic joint
    slides from there) and to the end-effector frame (and the extra arms' ``extra_ee``),
    housings along the moving joints' axes."""
    fb = model.frame_body
    named = {f.name for f in model.frames}
    ee_all = [model.frame_index(e) for e in (ee_frame, *extra_ee) if e in named]
    segs = []  # (body that carries it, start in its frame, end in its frame)
    for k in arm:
        p = int(model.parent[k])
        if p == 0 or k in skip:
            continue  # the mount (inside the base) or a link drawn from its visuals
        segs.append((p, np.zeros(3), transform_from_dq(model.joint_placement[k])[:3, 3]))
    for ee_i in ee_all:
        if int(fb[ee_i]) not in skip:
            b = int(fb[ee_i])
            segs.append((b, np.zeros(3), transform_from_dq(model.frame_placement[ee_i])[:3, 3]))
    segs = [s for s in segs if np.linalg.norm(s[2] - s[1]) > 1e-6]
    reach = sum(float(np.linalg.norm(e - s)) for _, s, e in segs)
    r = float(np.clip(0.035 * reach, 0.01, 0.08)) if reach > 0 else 0.03
    parts = {"arm": [], "housing": []}
    for b, s, e in segs:
        L = float(np.linalg.norm(e - s))
        parts["arm"].append(Part(b, z_along(e - s, s), cylinder_mesh(r, 0.0, L)))
    for k in arm:
        if k in skip:
            continue
        jt = JointType(int(model.joint_type[k]))
        if jt in (JointType.REVOLUTE, JointType.PRISMATIC):
            axis = model.joint_axis[k]
            h = 1.3 * r
            parts["housing"].append(Part(k, z_along(axis), cylinder_mesh(h, -1.3 * r, 1.3 * r, 10)))
        elif jt == JointType.FIXED and int(model.parent[k]) == 0:
            parts["housing"].append(  # an arm's root on the base: a mounting flange
                Part(k, np.eye(4), cylinder_mesh(1.5 * r, 0.0, 1.2 * r))
            )
    return parts, r


def _visual_arm(model, urdf, arm):
    """Parts of the URDF's visuals; the set of bodies that have some.  The URDF file the run
    read is read again, as data: only at the absolute path the run recorded, only a
    regular file (a link at its end is not followed) of at most ``MAX_URDF_BYTES``, its
    mesh files too (within the load limit); missing, unreadable or refused, the arm is
    drawn as sticks."""
    path = urdf["path"]
    budget = LoadBudget()
    try:
        if not Path(path).is_absolute():
            raise ValueError("not an absolute path (a run records one); not read")
        data = read_file(path, MAX_URDF_BYTES, budget)
        have = hashlib.sha256(data).hexdigest()
        visuals, problems = urdf_visuals(path, data=data, budget=budget)
    except (OSError, ValueError) as exc:
        log.warning("animate: %s cannot be read (%s); the arm is drawn as sticks", path, exc)
        return [], set()
    if urdf["sha256"] and urdf["sha256"] != have:
        log.warning("animate: %s changed since the run (SHA-256 differs); drawn as it is now", path)
    for p in problems:
        log.warning("animate: %s; that link is drawn as a stick", p)
    frames = {f.name: i for i, f in enumerate(model.frames)}
    parts, bodies = [], set()
    for v in visuals:
        name = v.link if v.link in frames else f"arm_{v.link}"  # renamed by mount_arm
        if name not in frames:
            continue
        i = frames[name]
        b = int(model.frame_body[i])
        if b not in arm:
            continue
        T = transform_from_dq(model.frame_placement[i]) @ v.placement
        parts.append(Part(b, T, v.mesh, v.color or ARM_COLOR))
        bodies.add(b)
    return parts, bodies


def _wheel_speeds(res, v_index, idx):
    v = np.asarray(res["v"], float) if "v" in res else None
    if v is None or v.ndim != 2 or v.shape[1] <= max(v_index, default=-1):
        return np.zeros((len(idx), len(v_index)))
    return np.nan_to_num(v[idx][:, v_index])


def _devices(plant: RecordedPlant, res, idx, size):
    """Parts of the VSCMG cluster and the reaction wheels."""
    model = plant.model
    parts = {"vscmg": [], "vscmg_h": [], "wheel": [], "wheel_h": []}
    devices = set()
    n = len(idx)
    units = plant.vscmgs
    if units:
        gb, wb = [u["gimbal_body"] for u in units], [u["wheel_body"] for u in units]
        devices |= set(gb) | set(wb)
        pos = np.array([u["position"] for u in units], float)
        rho = _device_radius(pos, size)
        om = _wheel_speeds(res, [u["wheel_v"] for u in units], idx)
        om_max = float(np.max(np.abs(om))) or 1.0
        for i, (g, w) in enumerate(zip(gb, wb, strict=True)):
            # the wheel spins about x of the gimbal frame; the gimbal turns about z
            disc = cylinder_mesh(rho, -0.18 * rho, 0.18 * rho)
            axle = cylinder_mesh(0.08 * rho, -1.3 * rho, 1.3 * rho, 6)
            parts["vscmg"].append(Part(int(w), z_along([1, 0, 0]), disc))
            parts["vscmg"].append(Part(int(g), np.eye(4), axle))
            s = np.ones((n, 3))
            s[:, 2] = 2.2 * rho * om[:, i] / om_max
            parts["vscmg_h"].append(
                Part(int(g), z_along([1, 0, 0]), arrow_mesh(0.07 * rho), scale=s)
            )
    wheels = plant.wheels
    if wheels:
        bodies = [w["rotor_body"] for w in wheels]  # wheel i's rotor
        devices |= set(bodies)
        pos = np.array([w["position"] for w in wheels], float)
        rho = _device_radius(pos, size)
        om = _wheel_speeds(res, [w["wheel_v"] for w in wheels], idx)
        om_max = np.array([np.nan if w["max_speed"] is None else w["max_speed"] for w in wheels])
        for i, k in enumerate(bodies):
            axis = model.joint_axis[k]
            parts["wheel"].append(
                Part(k, z_along(axis), cylinder_mesh(rho, -0.18 * rho, 0.18 * rho))
            )
            s = np.ones((n, 3))
            lim = om_max[i] if np.isfinite(om_max[i]) and om_max[i] > 0 else 1.0
            s[:, 2] = 2.5 * rho * np.clip(om[:, i] / lim, -1.0, 1.0)
            parts["wheel_h"].append(Part(k, z_along(axis), arrow_mesh(0.07 * rho), scale=s))
    return parts, devices


def _device_radius(pos, size):
    """Disc radius [m] of momentum devices at ``pos`` (n, 3) on a base of edge ``size``."""
    rho = 0.2 * size
    if len(pos) > 1:
        d = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
        dmin = float(np.min(d[np.triu_indices(len(pos), 1)]))
        if dmin > 1e-6:
            rho = min(rho, 0.3 * dmin)
    return max(rho, 0.01)


def _thrusters(plant: RecordedPlant, res, idx, size):
    """Parts of the thrusters: nozzles, and plumes whose length follows the thrust."""
    ts = plant.thrusters
    parts = {"nozzle": [], "plume": []}
    if not ts:
        return parts
    P = np.array([th["position"] for th in ts], float)
    D = np.array([th["direction"] for th in ts], float)
    S = len(P)
    fmax = np.array([th["max_thrust"] for th in ts], float)
    # mean thrust over each frame's interval: the periods recorded from the previous
    # frame's sample up to this one's (frame 0: its own sample's period) [N]
    t = np.asarray(res.t, float)
    if "thrust_impulse" in res:
        J = np.nan_to_num(np.asarray(res["thrust_impulse"], float))
    elif "thrust_on" in res:
        J = np.nan_to_num(np.asarray(res["thrust_on"], float)) * fmax
    else:
        J = np.zeros((len(t), S))
    cum = np.vstack([np.zeros((1, S)), np.cumsum(J, axis=0)])
    start, stop = np.r_[idx[0], idx[:-1]], np.r_[idx[0] + 1, idx[1:]]
    impulse = cum[stop] - cum[start]  # [N s]
    period = float(np.median(np.diff(t))) if len(t) > 1 else 1.0  # [s] of one record
    F = impulse / ((stop - start) * period)[:, None]
    L = size * np.where(impulse > 1e-12, 0.35 + 0.65 * np.clip(F / fmax, 0, 1), 0.0)
    r_n, l_n = 0.035 * size, 0.08 * size
    for s in range(S):
        e = -D[s]  # the exhaust leaves along -direction
        parts["nozzle"].append(Part(0, z_along(e, P[s]), cone_mesh(r_n, l_n, -0.3 * l_n, 8)))
        parts["plume"].append(
            Part(
                0,
                z_along(e, P[s] + l_n * e),
                cone_mesh(0.3, 1.0, 0.0, 8),
                scale=np.repeat(L[:, s : s + 1], 3, axis=1),
            )
        )
    return parts


def build_scene(res, frames) -> Scene:
    """The scene of a run (:class:`Scene`) at ``frames`` evenly spread finite samples at
    most, from what it recorded (:func:`recorded_plant`).

    Raises
    ------
    ValueError : see :func:`recorded_plant`; a ``q`` that does not fit the recorded plant,
        or no finite sample
    """
    plant = recorded_plant(res)
    model, ee_frame = plant.model, plant.ee_frame
    idx = _frame_samples(res, model.nq, frames)
    q_all = np.asarray(res["q"], float)
    q = q_all[idx]
    size = plant.base_size
    dev_parts, devices = _devices(plant, res, idx, size)
    arm = _arm_bodies(model, devices)
    visual_parts, with_visuals = [], set()
    if plant.urdf is not None:
        visual_parts, with_visuals = _visual_arm(model, plant.urdf, arm)
    extras = res.manifest.get("system", {}).get("extra_arms") or []  # [[extra_arm]]
    extra_ee = [x.get("ee_frame") for x in extras if isinstance(x, Mapping)]
    extra_ee = [e for e in extra_ee if isinstance(e, str)]
    parts, _ = _stick_arm(model, arm, ee_frame, with_visuals, extra_ee)
    parts["arm"] = visual_parts + parts["arm"]
    parts["base"] = [Part(0, np.eye(4), box_mesh([size] * 3))]
    parts.update(_thrusters(plant, res, idx, size))
    parts.update(dev_parts)
    ee, ref, ref_now = _ee_paths(res, q_all, idx)
    target = target_view(res, idx)  # a capture run: the target and its fixture
    if target is not None:
        parts.update(target_parts(target, Part))
    t = np.asarray(res.t, float)[idx]
    return Scene(model, q, t, parts, ee_frame, ee, ref, ref_now, target)
