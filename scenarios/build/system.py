"""Assembling a scenario's system from its resolved configuration.

:func:`build_system` turns a resolved scenario (see :mod:`.schema`) into

* the plant model: the base, the arm mounted on it (the paper's iiwa, a DH table or a URDF),
  an optional payload, and the momentum devices as real bodies (VSCMG cluster: a gimbal
  and a wheel body per unit; reaction wheels: a rotor body per wheel), in that order, so
  that the first ``nq_c`` / ``nv_c`` coordinates of the plant are those of the controller
  model;
* the actuators (thruster set and allocator, pulse modulator, VSCMG steering law, wheel
  distribution and momentum management) and the joint limits the plant enforces;
* the controllers and the references (end-effector trajectory, base reference).

The controllers use a *controller model*: the base and the arm, with every momentum device
locked into the base (its mass and inertia at the initial gimbal angles, wheels not
spinning).  The arm's law and the base's arm-reaction feedforward are computed on it: the
devices are actuators, their gyroscopic torque is handled by the steering law (the ``d``
term of ``docs/vscmg.md``) and by the wheel law, not by the feedforward.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...actuators import (
    VSCMG,
    Allocator,
    ClusterModel,
    FaultKind,
    PulseModulator,
    SchmittTrigger,
    SteeringLaw,
    Thruster,
    ThrusterFault,
    ThrusterSet,
    VSCMGCluster,
    attach_cluster,
    paper_thruster_set,
    pyramid_cluster,
)
from ...control import (
    IIWA_JOINT_LIMITS,
    ArmController,
    BaseController,
    ConstantPose,
    JointGains,
    Lemniscate,
    PDGains,
    PoseReference,
    sample_trajectory,
    solve_ik,
)
from ...dq import dq_from_quat_translation, dq_from_rpy_deg, dq_mul, quat_from_rpy_deg
from ...multibody import (
    Body,
    DHRow,
    Joint,
    JointType,
    LinkInertia,
    Model,
    arm_from_dh,
    frame_pose,
    mass_matrix,
    model_from_urdf,
    models,
)
from ...multibody.assembly import mount_arm, urdf_joint_limits
from ..spec.config import ScenarioError, did_you_mean

__all__ = ["System", "ArmInfo", "build_system", "TimeWarp", "IIWA_TORQUE_LIMITS"]

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

    @property
    def n(self) -> int:
        return len(self.names)

    @property
    def limits(self) -> NDArray[np.float64]:
        """(n, 2) ``[[lower, upper], ...]``."""
        return np.column_stack([self.lower, self.upper])


@dataclass
class System:
    """Everything a run needs (see :func:`build_system`)."""

    cfg: dict
    plant: Model
    cluster_model: ClusterModel | None
    controller_model: Model  # base + arm, devices locked in the base
    thrusters: ThrusterSet | None
    allocator: Allocator | None
    modulator: PulseModulator | None
    steering: SteeringLaw | None
    base: Any  # BaseController or a user's controller
    arm: Any  # ArmController, TaskSpaceController or a user's controller
    trajectory: Any
    q0: NDArray[np.float64]
    v0: NDArray[np.float64]
    base_reference: Any
    arm_info: ArmInfo | None = None
    wheel_model: Any = None  # actuators.wheels.WheelModel
    momentum_manager: Any = None  # actuators.wheels.MomentumManager
    description: dict = field(default_factory=dict)  # what the manifest records
    thruster_H_true: NDArray[np.float64] | None = None  # the plant's (6, S), imperfections in


def true_thruster_matrix(cfg, thrusters) -> NDArray[np.float64] | None:
    """The plant's thruster matrix (6, S) ``[d_i; r_i x d_i] (1 + e_i)``: each direction
    tilted by a normal angle of ``thrusters.misalignment_deg`` (1 sigma) about a random axis
    across it, each magnitude off by ``e_i ~ N(0, magnitude_error)``; drawn from
    ``scenario.seed`` (its own stream)."""
    if thrusters is None:
        return None
    t = cfg["thrusters"]
    H = np.array(thrusters.H, dtype=float)
    if t["misalignment_deg"] == 0.0 and t["magnitude_error"] == 0.0:
        return H
    rng = np.random.default_rng(np.random.SeedSequence(cfg["scenario"]["seed"], spawn_key=(16,)))
    out = np.empty_like(H)
    for i, th in enumerate(thrusters.thrusters):
        d = th.direction
        axis = np.cross(d, rng.normal(size=3))
        axis /= np.linalg.norm(axis)
        angle = math.radians(t["misalignment_deg"]) * rng.standard_normal()
        # Rodrigues: d tilted by angle about an axis across it
        d_true = d * math.cos(angle) + np.cross(axis, d) * math.sin(angle)
        scale = 1.0 + t["magnitude_error"] * rng.standard_normal()
        out[:3, i] = scale * d_true
        out[3:, i] = scale * np.cross(th.position, d_true)
    return out


class TimeWarp:
    """A pose trajectory run on a smooth clock: hold until ``start``, then speed up
    over ``ramp`` seconds (quintic blend of the rate from 0 to 1), then run at rate 1.

    ``tau(t)`` is the warped time: the reference is ``traj(tau)`` with its twist
    scaled by ``tau'`` and its acceleration ``acc tau'^2 + twist tau''`` (body frame).
    """

    def __init__(self, traj, start, ramp):
        self.traj, self.start, self.ramp = traj, float(start), float(ramp)

    def clock(self, t):
        """(tau, tau', tau'')."""
        s = t - self.start
        if s <= 0.0:
            return 0.0, 0.0, 0.0
        T = self.ramp
        if T > 0.0 and s < T:
            x = s / T
            rate = x**3 * (10 - 15 * x + 6 * x**2)  # quintic 0 -> 1 with zero slopes
            drate = (30 * x**2 - 60 * x**3 + 30 * x**4) / T
            tau = T * (x**4 * (10 / 4 - 15 / 5 * x + 6 / 6 * x**2))  # integral of the rate
            return tau, rate, drate
        tau0 = T * (10 / 4 - 3 + 1) if T > 0.0 else 0.0
        return tau0 + (s - T if T > 0.0 else s), 1.0, 0.0

    def __call__(self, t):
        P, T, A = self.sample(np.array([float(t)]))
        return PoseReference(P[0], T[0], A[0])

    def sample(self, times):
        """``(poses, twists, accs)`` at the times (m,) [s] (vectorised :meth:`clock`)."""
        t = np.asarray(times, dtype=float).reshape(-1)
        clock = np.array([self.clock(float(x)) for x in t]).reshape(-1, 3)
        tau, r, dr = clock[:, 0], clock[:, 1:2], clock[:, 2:3]
        P, T, A = sample_trajectory(self.traj, tau)
        return P, T * r, A * r * r + T * dr


# ------------------------------------------------------------------ parts


def inertia_matrix(six) -> NDArray[np.float64]:
    """(3, 3) from ``[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]``."""
    ixx, iyy, izz, ixy, ixz, iyz = (float(x) for x in six)
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _base_body(cfg) -> Body:
    b = cfg["base"]
    if b["inertia"]:
        J = inertia_matrix(b["inertia"])
    else:
        J = b["mass"] * b["size"] ** 2 / 6.0 * np.eye(3)  # a uniform cube
    joint = Joint(JointType.FREE, name="base")
    return Body("base", None, joint, b["mass"], np.asarray(b["com"], float), J)


def _per_joint(values, n, default, key):
    """A per-joint vector from a list of n values, one value for all, or the default."""
    if not values:
        return np.asarray(default, float)
    if len(values) == 1:
        return np.full(n, float(values[0]))
    if len(values) != n:
        raise ScenarioError(f"arm.{key}: give {n} values (one per joint) or one, got {len(values)}")
    return np.asarray(values, float)


def _arm(cfg, base: Body) -> tuple[Model, ArmInfo]:
    a = cfg["arm"]
    mount = dq_from_rpy_deg(a["mount_rpy_deg"], a["mount_xyz"])
    src = a["model"]
    sha = ""
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
            raise ScenarioError(f"arm.model = {src!r}: no such URDF file (or 'iiwa', 'dh')")
        data = path.read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        try:
            arm_model = model_from_urdf(data)
            lim = urdf_joint_limits(data)
        except ValueError as exc:
            raise ScenarioError(f"arm.model = {src!r}: {exc}") from None
        base_model = Model.build([base])
        try:
            model = mount_arm(base_model, arm_model, mount)
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
    lower = _per_joint(a["lower_deg"], n, lower, "lower_deg")
    upper = _per_joint(a["upper_deg"], n, upper, "upper_deg")
    if a["lower_deg"]:
        lower = np.radians(lower)
    if a["upper_deg"]:
        upper = np.radians(upper)
    if np.any(lower >= upper):
        i = int(np.argmax(lower >= upper))
        raise ScenarioError(f"arm: joint {i + 1}'s lower limit is not below its upper limit")
    torque = _per_joint(a["torque_limit"], n, torque, "torque_limit")
    rate = _per_joint(a["rate_limit"], n, rate, "rate_limit")
    model = _with_payload(model, a, ee)
    info = ArmInfo(names, lower, upper, torque, rate, ee, src, sha)
    return model, info


def _with_payload(model: Model, a, ee: str) -> Model:
    if a["payload_mass"] <= 0.0:
        return model
    m = float(a["payload_mass"])
    if ee in {f.name for f in model.frames}:
        f = model.frames[model.frame_index(ee)]
        body, placement = f.body, f.placement
    else:
        body, placement = model.body_index(ee), None
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
    return model.with_bodies([Body("payload", body, joint, m, np.asarray(a["payload_com"]), J)])


def _cluster(cfg) -> VSCMGCluster | None:
    v = cfg["vscmg"]
    if not v["enabled"]:
        return None
    w0 = v["wheel_speed_rpm"] * np.pi / 30.0
    if v["layout"] == "pyramid":
        return pyramid_cluster(skew=math.radians(v["skew_deg"]), radius=v["radius"], wheel_speed=w0)
    rows = cfg["vscmg_unit"]
    if not rows:
        raise ScenarioError("vscmg.layout = 'table' needs [[vscmg_unit]] rows")
    units = []
    for i, r in enumerate(rows):
        g = np.asarray(r["gimbal_axis"], float)
        s = np.asarray(r["spin_axis"], float)
        try:
            units.append(
                VSCMG(
                    gimbal_axis=g / np.linalg.norm(g),
                    spin_axis=s / np.linalg.norm(s),
                    position=r["position"],
                    wheel_mass=r["wheel_mass"],
                    wheel_inertia=tuple(r["wheel_inertia"]),
                    gimbal_mass=r["gimbal_mass"],
                    gimbal_inertia=tuple(r["gimbal_inertia"]),
                    nominal_wheel_speed=w0,
                )
            )
        except (ValueError, ZeroDivisionError, FloatingPointError) as exc:
            raise ScenarioError(f"vscmg_unit[{i}]: {exc}") from None
    return VSCMGCluster(units)


def _wheel_array(cfg):
    w = cfg["wheels"]
    if not w["enabled"]:
        return None
    from ...actuators import reaction_wheels as rw

    rpm = np.pi / 30.0
    common = dict(
        spin_inertia=w["spin_inertia"],
        mass=w["mass"],
        max_torque=w["max_torque"],
        max_speed=w["max_speed_rpm"] * rpm,
    )
    if w["layout"] == "pyramid":
        return rw.pyramid_wheels(**common)
    if w["layout"] == "orthogonal":
        return rw.orthogonal_wheels(**common)
    rows = cfg["wheel"]
    if not rows:
        raise ScenarioError("wheels.layout = 'table' needs [[wheel]] rows")
    out = []
    for i, r in enumerate(rows):
        a = np.asarray(r["axis"], float)
        n = np.linalg.norm(a)
        if not n > 0:
            raise ScenarioError(f"wheel[{i}].axis is zero")
        try:
            out.append(
                rw.ReactionWheel(
                    axis=a / n,
                    position=np.asarray(r["position"], float),
                    spin_inertia=r["spin_inertia"],
                    transverse_inertia=r["transverse_inertia"] or 0.5 * r["spin_inertia"],
                    mass=r["mass"],
                    max_torque=r["max_torque"],
                    max_speed=r["max_speed_rpm"] * rpm,
                    name=f"rw{i + 1}",
                )
            )
        except ValueError as exc:
            raise ScenarioError(f"wheel[{i}]: {exc}") from None
    return rw.WheelArray(out)


def _thrusters(cfg) -> ThrusterSet | None:
    t = cfg["thrusters"]
    if not t["enabled"]:
        return None
    if t["layout"] == "paper":
        return paper_thruster_set(
            half_size=0.5 * cfg["base"]["size"],
            sigma_max=t["max_thrust"],
            min_impulse_bit=t["min_impulse_bit"],
        )
    rows = cfg["thruster"]
    if not rows:
        raise ScenarioError("thrusters.layout = 'table' needs [[thruster]] rows")
    out = []
    for i, r in enumerate(rows):
        d = np.asarray(r["direction"], float)
        n = np.linalg.norm(d)
        if not n > 0:
            raise ScenarioError(f"thruster[{i}].direction is zero")
        try:
            out.append(
                Thruster(
                    np.asarray(r["position"], float),
                    d / n,
                    r["max_thrust"] or t["max_thrust"],
                    min_impulse_bit=(
                        r["min_impulse_bit"] if r["min_impulse_bit"] >= 0 else t["min_impulse_bit"]
                    ),
                    name=r["name"] or f"T{i + 1}",
                )
            )
        except ValueError as exc:
            raise ScenarioError(f"thruster[{i}]: {exc}") from None
    try:
        return ThrusterSet(out)
    except ValueError as exc:
        raise ScenarioError(f"[[thruster]]: {exc}") from None


def load_class(spec: str, what: str):
    """The class named by ``module:Class`` (ScenarioError if it cannot be imported)."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ScenarioError(f"{what} = {spec!r}: expected a built-in law or module:Class")
    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        raise ScenarioError(f"{what} = {spec!r}: cannot import {module!r} ({exc})") from None
    try:
        for part in name.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise ScenarioError(f"{what} = {spec!r}: {module!r} has no {name!r}") from None
    if not callable(obj):
        raise ScenarioError(f"{what} = {spec!r} is not callable")
    return obj


# ------------------------------------------------------------------ the system


def _locked_base(base_with_devices: Model, q: NDArray[np.float64]):
    """Mass, CoM and inertia about the CoM of the base with its devices locked onto it
    (at the configuration ``q``)."""
    M = mass_matrix(base_with_devices, q)[:6, :6]
    # M maps [w, v] to [h, p]: [[J_O, [h]x], [-[h]x, m I]]
    m = M[3, 3]
    hx = M[:3, 3:]
    h = np.array([hx[2, 1], hx[0, 2], hx[1, 0]])
    c = h / m
    cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    J_c = M[:3, :3] + m * cx @ cx
    return m, c, 0.5 * (J_c + J_c.T)


def _per_unit(values, K, key, scale=1.0):
    if not values:
        return np.zeros(K)
    if len(values) == 1:
        return np.full(K, float(values[0]) * scale)
    if len(values) != K:
        raise ScenarioError(f"{key}: give {K} values (one per unit) or one, got {len(values)}")
    return np.asarray(values, float) * scale


def _attach_devices(model: Model, cluster, wheels):
    if wheels is not None:
        from ...actuators import reaction_wheels as rw
    cm = attach_cluster(model, cluster) if cluster is not None else None
    out = cm.model if cm is not None else model
    wm = rw.attach_wheels(out, wheels) if wheels is not None else None
    return cm, wm, (wm.model if wm is not None else out)


def _true_arm(cfg, arm_model: Model, info: ArmInfo) -> Model:
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


def build_system(cfg) -> System:
    """Build the plant, actuators and controllers of a resolved closed-loop scenario."""
    base = _base_body(cfg)
    arm_model, info = _arm(cfg, base)
    cluster, wheels = _cluster(cfg), _wheel_array(cfg)
    cm, wm, plant = _attach_devices(_true_arm(cfg, arm_model, info), cluster, wheels)
    K = cluster.K if cluster is not None else 0
    gam0 = _per_unit(cfg["vscmg"]["initial_gimbal_deg"], K, "vscmg.initial_gimbal_deg", 1.0)
    gam0 = np.radians(gam0)
    W = wheels.n if wheels is not None else 0
    w_speed0 = _per_unit(cfg["wheels"]["initial_speed_rpm"], W, "wheels.initial_speed_rpm")
    w_speed0 = w_speed0 * np.pi / 30.0

    controller_model = arm_model
    steering = None
    if cm is not None or wm is not None:
        # the controllers' model: the devices locked into the base at their initial angles
        alone = Model.build([base])
        cmb, wmb, base_devices = _attach_devices(alone, cluster, wheels)
        qb = base_devices.neutral_configuration()
        vb = np.zeros(base_devices.nv)
        if cmb is not None:
            qb, vb = cmb.with_state(qb, vb, gamma=gam0, wheel_speed=np.zeros(K))
        m, c, J = _locked_base(base_devices, qb)
        bodies = arm_model.bodies()
        bodies[0] = Body(base.name, None, base.joint, m, c, J)
        controller_model = Model.build(bodies, arm_model.frames)
    if cm is not None:
        v = cfg["vscmg"]
        steering = SteeringLaw.for_cluster(
            cluster, gimbal_rate_max=v["gimbal_rate_limit"], wheel_accel_max=v["wheel_accel_limit"]
        )
    manager = None
    if wm is not None and cfg["wheels"]["desaturation_gain"] > 0:
        from ...actuators import reaction_wheels as rw

        w = cfg["wheels"]
        manager = rw.MomentumManager(
            wheels,
            gain=w["desaturation_gain"],
            start_fraction=w["desaturation_start"],
            stop_fraction=w["desaturation_stop"],
        )

    thrusters = allocator = modulator = None
    dt = cfg["integrator"]["dt"]
    period = 1.0 / cfg["control"]["rate"]
    tc = cfg["thrusters"]
    thrusters = _thrusters(cfg)
    if thrusters is not None:
        w = tc["weights"]
        if w and len(w) != thrusters.n:
            raise ScenarioError(
                f"thrusters.weights has {len(w)} entries but there are {thrusters.n} thrusters"
            )
        allocator = Allocator(
            thrusters, mode=tc["mode"], method=tc["allocator"], weights=w if w else None
        )
        if tc["pwm"]:
            modulator = PulseModulator(
                thrusters,
                period,
                schmitt=SchmittTrigger() if tc["schmitt"] else None,
                quantum=dt,
                error_feedback=tc["error_feedback"],
            )

    seed = _per_joint(
        cfg["arm"]["initial_joints_deg"], info.n, np.zeros(info.n), "initial_joints_deg"
    )
    if cfg["arm"]["initial_joints_deg"]:
        seed = np.radians(seed)
    if cfg["trajectory"]["type"] == "initial":
        qa = controller_model.neutral_configuration()
        qa[8 : 8 + info.n] = seed
        trajectory = ConstantPose(frame_pose(controller_model, qa, info.ee_frame))
    else:
        trajectory = _trajectory(cfg)
    joints0 = _initial_joints(controller_model, trajectory(0.0).pose, seed, info)
    base_ctrl = _base_controller(cfg, controller_model)
    arm_ctrl = _arm_controller(cfg, controller_model, info, joints0)

    q0 = plant.neutral_configuration()
    q0[8 : 8 + info.n] = joints0
    v0 = np.zeros(plant.nv)
    if cm is not None:
        q0, v0 = cm.with_state(q0, v0, gamma=gam0, wheel_speed="nominal")
    if wm is not None:
        q0, v0 = wm.with_state(q0, v0, wheel_speed=w_speed0)
    base_ref = _base_reference(cfg, q0[:8].copy())
    description = {
        "plant": {"nq": plant.nq, "nv": plant.nv, "bodies": list(plant.body_names)},
        "arm": {
            "source": info.source,
            "sha256": info.sha256,
            "joints": info.names,
            "lower_rad": info.lower.tolist(),
            "upper_rad": info.upper.tolist(),
            "torque_limit": info.torque_limit.tolist(),
            "rate_limit": info.rate_limit.tolist(),
            "ee_frame": info.ee_frame,
        },
        "thrusters": (
            [
                {
                    "name": th.name,
                    "position": th.position.tolist(),
                    "direction": th.direction.tolist(),
                    "max_thrust": th.sigma_max,
                    "min_impulse_bit": th.min_impulse_bit,
                }
                for th in thrusters.thrusters
            ]
            if thrusters is not None
            else []
        ),
        "vscmg_units": K,
        "wheels": W,
        "wheel_max_speed_rpm": (
            (np.asarray(wheels.max_speed) * 30.0 / np.pi).tolist() if wheels is not None else []
        ),
    }
    return System(
        cfg,
        plant,
        cm,
        controller_model,
        thrusters,
        allocator,
        modulator,
        steering,
        base_ctrl,
        arm_ctrl,
        trajectory,
        q0,
        v0,
        base_ref,
        info,
        wm,
        manager,
        description,
        true_thruster_matrix(cfg, thrusters),
    )


def _trajectory(cfg):
    tr = cfg["trajectory"]
    orient = quat_from_rpy_deg(tr["orientation_rpy_deg"])
    if tr["type"] == "lemniscate":
        x0, y0, z0 = tr["center"]
        curve = Lemniscate(
            r=tr["r"],
            zeta=tr["zeta"],
            theta_m=tr["theta_m"],
            x0=x0,
            y0=y0,
            z0=z0,
            orientation=orient,
        )
        return TimeWarp(curve, tr["start_time"], tr["ramp_time"])
    if tr["type"] == "hold":
        return TimeWarp(
            ConstantPose(dq_from_quat_translation(orient, tr["center"])), tr["start_time"], 0.0
        )
    from ...control import waypoints

    rows = cfg["waypoint"]
    if len(rows) < 2:
        raise ScenarioError("trajectory.type = 'waypoints' needs at least two [[waypoint]] rows")
    times = [tr["start_time"] + r["time"] for r in rows]
    if any(b <= a for a, b in itertools.pairwise(times)):
        raise ScenarioError("[[waypoint]]: times must increase strictly")
    poses = [dq_from_rpy_deg(r["rpy_deg"], r["xyz"]) for r in rows]
    return waypoints.Waypoints(np.array(poses), np.array(times))


def _base_reference(cfg, pose0):
    b = cfg["base_reference"]
    hold = PoseReference(pose0, np.zeros(6), np.zeros(6))
    if b["type"] == "hold":
        return hold
    from ...control import waypoints

    target = dq_mul(pose0, dq_from_rpy_deg(b["rpy_deg"], b["xyz"]))
    return waypoints.BaseSlew(pose0, target, b["start_time"], b["duration"])


def _base_controller(cfg, model):
    bc = cfg["base_controller"]
    gains = PDGains(
        kp_rot=bc["kp_rot"], kd_rot=bc["kd_rot"], kp_trans=bc["kp_trans"], kd_trans=bc["kd_trans"]
    )
    if bc["law"] == "dual_pd":
        return BaseController(model, gains)
    cls = load_class(bc["law"], "base_controller.law")
    return cls(model, gains)


def _arm_controller(cfg, model, info: ArmInfo, joints0):
    ac = cfg["arm_controller"]
    law = ac["law"]
    if law == "computed_torque":
        return ArmController(
            model,
            JointGains.from_natural_frequency(ac["omega_n"], ac["zeta"]),
            seed=joints0,
            frame=info.ee_frame,
            limits=info.limits,
            posture=joints0 if ac["posture_gain"] > 0 else None,
            posture_gain=max(ac["posture_gain"], 1e-12),
        )
    # task space: e'' + kd e' + (kp / 2) e = 0 (log e is half the error): kp = 2 w^2
    w, z = ac["omega_n"], ac["zeta"]
    kp, kd = [2.0 * w * w] * 3, [2.0 * z * w] * 3
    gains = PDGains(kp_rot=kp, kd_rot=kd, kp_trans=kp, kd_trans=kd)
    if law == "task_space":
        from ...control import task_space

        return task_space.TaskSpaceController(
            model,
            gains,
            frame=info.ee_frame,
            jacobian="local",
            null_space_damping=ac["null_space_damping"],
            computed_torque=True,
            limits=info.limits,
        )
    cls = load_class(law, "arm_controller.law")
    return cls(model, gains)


def _initial_joints(model, target, seed, info: ArmInfo, n_tries=24):
    """The IK solution of ``target`` with the largest joint-limit margin, from ``seed`` and
    a fixed set of pseudo-random seeds (deterministic, independent of the scenario's seed)."""
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
        raise ValueError(
            "the trajectory's start pose is not reachable by the arm "
            "(check trajectory.center/orientation, [[waypoint]] and arm.mount_*)"
        )
    return best


def thruster_faults(ts, fault_cfg):
    """A ThrusterSet with one configured fault applied."""
    kind = FaultKind(fault_cfg["kind"])
    i = fault_cfg["thruster"]
    if i >= ts.n:
        raise ValueError(f"faults: thruster index {i} out of range (0..{ts.n - 1})")
    if kind is FaultKind.DEGRADED:
        fault = ThrusterFault.degraded(fault_cfg["scale"])
    elif kind is FaultKind.STUCK_ON:
        fault = ThrusterFault.stuck_on()
    else:
        fault = ThrusterFault.failed_off()
    return ts.with_faults({i: fault})
