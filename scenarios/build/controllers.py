"""The controllers and references of a system: the base and arm laws (built-in, or a user's
class named ``module:Class``), the end-effector trajectory and the base reference."""

from __future__ import annotations

import importlib
import itertools

import numpy as np

from ...control import (
    ArmController,
    BaseController,
    BaseDOBController,
    BasePIDController,
    CoMHoldController,
    ConstantPose,
    IntegralGains,
    JointGains,
    Lemniscate,
    PDGains,
    PoseReference,
    sample_trajectory,
    task_space,
    waypoints,
)
from ...control.flight.python_stage import code_location
from ...control.mpc import MPCBaseController, MPCWeights, nominal_reaction_table
from ...control.multi_arm import MultiArmController
from ...control.reactionless import ReactionlessArmController
from ...dq import dq_from_quat_translation, dq_from_rpy_deg, dq_mul, quat_from_rpy_deg
from ...multibody import frame_pose
from ..spec.config import ScenarioError
from . import devices
from .arm import ArmInfo, initial_joints, joint_values

__all__ = [
    "load_class",
    "construct",
    "TimeWarp",
    "trajectory",
    "base_reference",
    "base_controller",
    "arm_controller",
    "extra_arm_start",
    "arms_controller",
]


def load_class(spec: str, what: str):
    """The class named by ``module:Class`` (ScenarioError if it cannot be imported)."""
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ScenarioError(f"{what} = {spec!r}: expected a built-in law or module:Class")
    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        raise ScenarioError(f"{what} = {spec!r}: cannot import {module!r} ({exc})") from None
    except SystemExit as exc:  # the module ended the interpreter at import
        raise ScenarioError(
            f"{what} = {spec!r}: the module {module!r} called sys.exit({exc.code!r}) when imported"
        ) from None
    except Exception as exc:  # noqa: BLE001 - the user's module: say it failed, and where
        raise ScenarioError(
            f"{what} = {spec!r}: the module {module!r} failed when imported: "
            f"{type(exc).__name__}: {exc} ({code_location(exc)})"
        ) from None
    try:
        for part in name.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise ScenarioError(f"{what} = {spec!r}: {module!r} has no {name!r}") from None
    if not callable(obj):
        raise ScenarioError(f"{what} = {spec!r} is not callable")
    return obj


def construct(cls, spec: str, what: str, *args):
    """``cls(*args)``, a user's class: an exception becomes a ScenarioError saying that its
    constructor failed, and where."""
    try:
        return cls(*args)
    except Exception as exc:  # noqa: BLE001 - the user's code
        raise ScenarioError(
            f"{what} = {spec!r}: {getattr(cls, '__name__', cls)!s}(...) raised "
            f"{type(exc).__name__}: {exc} ({code_location(exc)})"
        ) from None


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


def trajectory(cfg):
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
    rows = cfg["waypoint"]
    if len(rows) < 2:
        raise ScenarioError("trajectory.type = 'waypoints' needs at least two [[waypoint]] rows")
    times = [tr["start_time"] + r["time"] for r in rows]
    if any(b <= a for a, b in itertools.pairwise(times)):
        raise ScenarioError("[[waypoint]]: times must increase strictly")
    poses = [dq_from_rpy_deg(r["rpy_deg"], r["xyz"]) for r in rows]
    return waypoints.Waypoints(np.array(poses), np.array(times))


def base_reference(cfg, pose0):
    b = cfg["base_reference"]
    hold = PoseReference(pose0, np.zeros(6), np.zeros(6))
    if b["type"] == "hold":
        return hold
    target = dq_mul(pose0, dq_from_rpy_deg(b["rpy_deg"], b["xyz"]))
    return waypoints.BaseSlew(pose0, target, b["start_time"], b["duration"])


def base_controller(cfg, model, joints0=None):
    """The base law of ``base_controller.law``: built-in (``dual_pd``, ``dual_pid``,
    ``dual_pd_dob``, ``mpc``; the stateful ones advance once per control period) or a
    user's class called as ``cls(model, gains)``.  ``base_controller.translation = "com"``
    (``dual_pd``): the centre-of-mass hold, its reference the centre of mass of ``model``
    with the arm at ``joints0`` (the start; default zeros), relative to the base reference."""
    bc = cfg["base_controller"]
    gains = PDGains(
        kp_rot=bc["kp_rot"], kd_rot=bc["kd_rot"], kp_trans=bc["kp_trans"], kd_trans=bc["kd_trans"]
    )
    period = 1.0 / cfg["control"]["rate"]
    if bc["translation"] == "com":
        if bc["law"] != "dual_pd":
            raise ScenarioError(
                f"base_controller.translation = 'com' runs with base_controller.law = "
                f"'dual_pd', got law = {bc['law']!r} (use translation = 'base')"
            )
        q = model.neutral_configuration()
        if joints0 is not None:
            q[8 : 8 + len(joints0)] = joints0
        return CoMHoldController.from_configuration(model, gains, q)
    if bc["law"] == "dual_pd":
        return BaseController(model, gains)
    if bc["law"] == "dual_pid":
        integral = IntegralGains(
            ki_rot=bc["ki_rot"], ki_trans=bc["ki_trans"],
            limit_force=bc["integral_limit_force"], limit_torque=bc["integral_limit_torque"],
        )  # fmt: skip
        return BasePIDController(model, gains, integral, period=period)
    if bc["law"] == "dual_pd_dob":
        try:
            return BaseDOBController(
                model, gains, bandwidth=bc["observer_bandwidth"], period=period
            )
        except ValueError as exc:
            raise ScenarioError(f"base_controller.observer_bandwidth: {exc}") from None
    if bc["law"] == "mpc":
        return mpc_controller(cfg, model)
    cls = load_class(bc["law"], "base_controller.law")
    return construct(cls, bc["law"], "base_controller.law", model, gains)


def mpc_controller(cfg, model):
    """The model-predictive base law (``base_controller.law = "mpc"``) from the
    ``base_controller.mpc_*`` keys, on the thrusters of ``[thrusters]`` (their moments in
    the torque in ``wrench`` mode); a ScenarioError naming the key for a bad value."""
    bc = cfg["base_controller"]
    ts = devices.thrusters(cfg)
    if ts is None:
        raise ScenarioError(
            "base_controller.law = 'mpc' plans the thrusters' forces: it needs "
            "thrusters.enabled = true"
        )
    rate = bc["mpc_torque_rate_limit"]
    keys = {
        "horizon": "mpc_horizon", "period": "mpc_period", "q_rot": "mpc_q_rot",
        "q_trans": "mpc_q_trans", "q_omega": "mpc_q_omega", "q_vel": "mpc_q_vel",
        "terminal": "mpc_terminal", "r_impulse": "mpc_r_impulse", "r_thrust": "mpc_r_thrust",
        "r_torque": "mpc_r_torque", "torque_limit": "mpc_torque_limit",
        "eps": "mpc_tolerance", "max_iter": "mpc_max_iter",
    }  # fmt: skip
    values = {name: bc[key] for name, key in keys.items()}
    values["torque_rate_limit"] = rate if rate > 0 else np.inf
    try:
        weights = MPCWeights(**values)
    except ValueError as exc:
        name = str(exc).split(" ", 1)[0]
        key = "mpc_torque_rate_limit" if name == "torque_rate_limit" else keys.get(name, name)
        raise ScenarioError(f"base_controller.{key}: {exc}") from None
    return MPCBaseController(
        model, ts, weights, torque_from_thrusters=cfg["thrusters"]["mode"] == "wrench"
    )


def mpc_preview(cfg, base_ctrl, arm_ctrl, trajectory, base_ref) -> None:
    """With ``base_controller.law = "mpc"`` and ``mpc_preview`` (and an arm, a single
    one), give the law the arm's planned reaction along its task
    (:func:`~dqspace.control.mpc.nominal_reaction_table`, on a copy of ``arm_ctrl``)."""
    bc = cfg["base_controller"]
    if not (isinstance(base_ctrl, MPCBaseController) and bc["mpc_preview"]):
        return
    # no arm, several ([[extra_arm]]: refused with the mpc law when the flight software is
    # built), or a law without an IK: the reaction held
    if isinstance(arm_ctrl, MultiArmController) or not hasattr(arm_ctrl, "joint_reference"):
        return
    duration = cfg["scenario"]["duration"]
    base_ctrl.preview = nominal_reaction_table(base_ctrl, arm_ctrl, trajectory, base_ref, duration)


def arm_controller(cfg, model, info: ArmInfo, joints0):
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
    if law == "reactionless":
        try:
            return ReactionlessArmController(
                model,
                JointGains.from_natural_frequency(ac["omega_n"], ac["zeta"]),
                seed=joints0,
                frame=info.ee_frame,
                limits=info.limits,
                task_gain=ac["task_gain"],
                task=ac["reactionless_task"],
                base=ac["reactionless_base"],
            )
        except ValueError as exc:
            raise ScenarioError(f"arm_controller.law = 'reactionless': {exc}") from None
    # task space: e'' + kd e' + (kp / 2) e = 0 (log e is half the error): kp = 2 w^2
    w, z = ac["omega_n"], ac["zeta"]
    kp, kd = [2.0 * w * w] * 3, [2.0 * z * w] * 3
    gains = PDGains(kp_rot=kp, kd_rot=kd, kp_trans=kp, kd_trans=kd)
    if law == "task_space":
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
    return construct(cls, law, "arm_controller.law", model, gains)


def extra_arm_start(cfg, x) -> np.ndarray:
    """An extra arm's (``x``, an :class:`~.arm.ExtraArm`) end-effector reference (set as
    ``x.trajectory``: its task, ``initial``, ``hold`` or ``waypoints`` as the first arm's)
    and its initial joints (returned): the inverse kinematics of its start pose from
    ``initial_joints_deg``.  A pose of its task the arm cannot reach is a ScenarioError
    naming the keys."""
    r, i = x.row, [a["name"] for a in cfg["extra_arm"]].index(x.name)
    ai = x.alone_info
    seed = np.zeros(ai.n)
    if r["initial_joints_deg"]:
        try:
            seed = joint_values(r["initial_joints_deg"], ai.prismatic, "initial_joints_deg")
        except ScenarioError as exc:
            raise ScenarioError(str(exc).replace("arm.", f"extra_arm[{i}].", 1)) from None
    rows = [w for w in cfg["extra_arm_waypoint"] if w["arm"] == x.name]
    if r["task"] == "initial":
        qa = x.alone.neutral_configuration()
        qa[8 : 8 + ai.n] = seed
        x.trajectory = ConstantPose(frame_pose(x.alone, qa, ai.ee_frame))
        poses = [(x.trajectory.pose, f"extra_arm[{i}].initial_joints_deg")]
    else:
        tr = {**cfg["trajectory"], "type": r["task"], "center": r["center"], "ramp_time": 0.0}
        tr.update(orientation_rpy_deg=r["orientation_rpy_deg"], start_time=r["start_time"])
        x.trajectory = trajectory({"trajectory": tr, "waypoint": rows})
        if r["task"] == "hold":
            where = f"extra_arm[{i}].center = {list(r['center'])}, orientation_rpy_deg = "
            poses = [(x.trajectory(0.0).pose, where + f"{list(r['orientation_rpy_deg'])}")]
        else:
            k = [j for j, w in enumerate(cfg["extra_arm_waypoint"]) if w["arm"] == x.name]
            poses = [
                (dq_from_rpy_deg(w["rpy_deg"], w["xyz"]),
                 f"extra_arm_waypoint[{j}] (xyz = {list(w['xyz'])}, rpy_deg = "
                 f"{list(w['rpy_deg'])})")
                for j, w in zip(k, rows, strict=True)
            ]  # fmt: skip
    joints0 = None
    for pose, where in poses:  # every pose of its task within reach (the first: its start)
        try:
            q = initial_joints(x.alone, pose, seed if joints0 is None else joints0, ai, where=where)
        except ScenarioError as exc:
            text = str(exc).replace("the trajectory's start pose", f"arm {x.name!r}'s pose")
            raise ScenarioError(text.replace(" arm.", f" extra_arm[{i}].")) from None
        joints0 = q if joints0 is None else joints0
    x.joints0 = joints0
    return joints0


def arms_controller(cfg, model, info: ArmInfo, joints0, extras):
    """The arm law of a servicer with ``[[extra_arm]]``: ``arm_controller.law =
    computed_torque`` for each arm (its own end-effector frame and joints, the same gains),
    as one :class:`~dqspace.control.multi_arm.MultiArmController`; another law (task_space,
    a user's class) or a user's base law is a ScenarioError (the arms run in the compiled
    flight software only)."""
    law, base_law = cfg["arm_controller"]["law"], cfg["base_controller"]["law"]
    if law != "computed_torque":
        raise ScenarioError(
            f"arm_controller.law = {law!r}: a servicer with [[extra_arm]] runs the built-in "
            "computed_torque law on every arm (task_space, reactionless and a user's class "
            "run one arm)"
        )
    if base_law not in ("dual_pd", "dual_pid", "dual_pd_dob"):
        raise ScenarioError(
            f"base_controller.law = {base_law!r}: a servicer with [[extra_arm]] runs a "
            "compiled base law (dual_pd, dual_pid, dual_pd_dob; not mpc or a user's class)"
        )
    first = controllers_of(cfg, model, info, joints0, info.ee_frame)
    arms = [first] + [controllers_of(cfg, model, info, joints0, x.info.ee_frame) for x in extras]
    n1 = info.n - sum(x.info.n for x in extras)
    offsets = [0] + [x.v0 - 6 for x in extras]
    sizes = [n1] + [x.info.n for x in extras]
    return MultiArmController(arms, offsets, sizes)


def controllers_of(cfg, model, info: ArmInfo, joints0, frame):
    """The built-in computed-torque :class:`ArmController` on all the joints of ``model``
    with ``frame`` as its end-effector (each arm's law uses its own joints of it)."""
    ac = cfg["arm_controller"]
    return ArmController(
        model,
        JointGains.from_natural_frequency(ac["omega_n"], ac["zeta"]),
        seed=joints0,
        frame=frame,
        limits=info.limits,
        posture=joints0 if ac["posture_gain"] > 0 else None,
        posture_gain=max(ac["posture_gain"], 1e-12),
    )
