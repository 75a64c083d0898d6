"""Assembling a scenario's system from its resolved configuration.

:func:`build_system` turns a resolved scenario (see :mod:`.schema`) into

* the plant model: the base, the arm mounted on it (the paper's iiwa, a DH table or a URDF),
  an optional payload, and the momentum devices as real bodies (VSCMG cluster: a gimbal
  and a wheel body per unit; reaction wheels: a rotor body per wheel), in that order, so
  that the first ``nq_c`` / ``nv_c`` coordinates of the plant are those of the controller
  model;
* the actuators (thruster set and allocator, pulse modulator, VSCMG steering law, wheel
  distribution and momentum management) and the joint limits the plant enforces;
* the controllers and the references (end-effector trajectory, base reference);

after checking that the thrusters and the momentum devices can give every wrench direction
``thrusters.mode`` asks of them (:mod:`.controllability`: a ScenarioError otherwise).

The controllers use a *controller model*: the base and the arm, with every momentum device
locked into the base (its mass and inertia at the initial gimbal angles, wheels not
spinning).  The arm's law and the base's arm-reaction feedforward are computed on it: the
devices are actuators, their gyroscopic torque is handled by the steering law (the ``d``
term of ``docs/vscmg.md``) and by the wheel law, not by the feedforward.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...actuators import (
    RPM,
    Allocator,
    ClusterModel,
    MomentumManager,
    PulseModulator,
    SchmittTrigger,
    SteeringLaw,
    ThrusterSet,
)
from ...control import ConstantPose, NoArm
from ...dq import dq_identity
from ...multibody import Body, Model, frame_pose
from ..spec.config import ScenarioError
from . import controllability, controllers, devices
from .arm import ArmInfo, arm, base_body, initial_joints, joint_values, start_pose_keys, true_arm
from .extra_arms import extra_arms

__all__ = ["System", "build_system"]


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
    momentum_manager: Any = None  # actuators.MomentumManager
    description: dict = field(default_factory=dict)  # what the manifest records
    thruster_H_true: NDArray[np.float64] | None = None  # the plant's (6, S), imperfections in
    extra_arms: list = field(default_factory=list)  # [[extra_arm]]: ExtraArm each (arm.py)


# ------------------------------------------------------------------ parts


# ------------------------------------------------------------------ the system


def build_system(cfg, trajectory=None, start=None) -> System:
    """Build the plant, actuators and controllers of a resolved closed-loop scenario.

    For a capture (:mod:`dqspace.scenarios.sim.capture`), optionally: ``trajectory``, a pose
    trajectory (``trajectory(t) -> PoseReference``, the end-effector's in the base frame)
    used instead of the ``[trajectory]`` section's, the arm starting on its pose at t = 0;
    ``start``, the plant's initial ``(q0, v0)`` (devices included) instead of the
    scenario's: the arm's law is seeded with its joints (no IK search) and the base
    reference is built from its base pose."""
    base = base_body(cfg)
    arm_model, info = arm(cfg, base)
    # [[extra_arm]]: mounted after the first arm; info then holds every arm's joints
    arm_model, info, extras, (first_model, first_info) = extra_arms(cfg, arm_model, info, base)
    cluster, wheels = devices.cluster(cfg), devices.wheel_array(cfg)
    cm, wm, plant = devices.attach_devices(true_arm(cfg, arm_model, info), cluster, wheels)
    # a disabled section's per-unit values are not read (an included file may give them)
    K = cluster.K if cluster is not None else 0
    gam0 = np.zeros(0)
    if cluster is not None:
        gam0 = devices.per_unit(cfg["vscmg"]["initial_gimbal_deg"], K, "vscmg.initial_gimbal_deg")
        gam0 = np.radians(gam0)
    W = wheels.n if wheels is not None else 0
    w_speed0 = np.zeros(0)
    if wheels is not None:
        speeds = cfg["wheels"]["initial_speed_rpm"]
        w_speed0 = devices.per_unit(speeds, W, "wheels.initial_speed_rpm") * RPM

    controller_model = arm_model
    steering = None
    if cm is not None or wm is not None:
        # the controllers' model: the devices locked into the base at their initial angles
        alone = Model.build([base])
        cmb, wmb, base_devices = devices.attach_devices(alone, cluster, wheels)
        qb = base_devices.neutral_configuration()
        vb = np.zeros(base_devices.nv)
        if cmb is not None:
            qb, vb = cmb.with_state(qb, vb, gamma=gam0, wheel_speed=np.zeros(K))
        m, c, J = devices.locked_base(base_devices, qb)
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
        w = cfg["wheels"]
        manager = MomentumManager(
            wheels,
            gain=w["desaturation_gain"],
            start_fraction=w["desaturation_start"],
            stop_fraction=w["desaturation_stop"],
        )

    thrusters = allocator = modulator = None
    dt = cfg["integrator"]["dt"]
    period = 1.0 / cfg["control"]["rate"]
    tc = cfg["thrusters"]
    thrusters = devices.thrusters(cfg)
    # every wrench direction the mode asks of them (ScenarioError if one is missing)
    controllability.check_actuators(cfg, thrusters, cluster, wheels)
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

    seed = np.zeros(first_info.n)
    if cfg["arm"]["initial_joints_deg"]:  # deg for a revolute joint, m for a prismatic one
        seed = joint_values(
            cfg["arm"]["initial_joints_deg"], first_info.prismatic, "initial_joints_deg"
        )
    if trajectory is not None and info.n:  # given by the caller
        pass
    elif info.n == 0:  # no arm (arm.model = "none"): no end-effector task, no arm law
        trajectory = ConstantPose(dq_identity())  # what the flight software samples
        joints0 = np.zeros(0)
    elif cfg["trajectory"]["type"] == "initial":
        qa = controller_model.neutral_configuration()
        qa[8 : 8 + first_info.n] = seed
        trajectory = ConstantPose(frame_pose(controller_model, qa, info.ee_frame))
    else:
        trajectory = controllers.trajectory(cfg)
    if start is not None:
        joints0 = np.array(start[0][8 : 8 + info.n], dtype=float)
    elif info.n:
        ik_model, ik_info = (first_model, first_info) if extras else (controller_model, info)
        joints0 = initial_joints(
            ik_model, trajectory(0.0).pose, seed, ik_info, where=start_pose_keys(cfg)
        )
    if extras:
        joints0 = np.r_[joints0, *(controllers.extra_arm_start(cfg, x) for x in extras)]
    base_ctrl = controllers.base_controller(cfg, controller_model, joints0)
    if extras:
        arm_ctrl = controllers.arms_controller(cfg, controller_model, info, joints0, extras)
    elif info.n:
        arm_ctrl = controllers.arm_controller(cfg, controller_model, info, joints0)
    else:
        arm_ctrl = NoArm()

    q0 = plant.neutral_configuration()
    q0[8 : 8 + info.n] = joints0
    v0 = np.zeros(plant.nv)
    if cm is not None:
        q0, v0 = cm.with_state(q0, v0, gamma=gam0, wheel_speed="nominal")
    if wm is not None:
        q0, v0 = wm.with_state(q0, v0, wheel_speed=w_speed0)
    if start is not None:
        q0, v0 = _start_state(plant, *start)
    base_ref = controllers.base_reference(cfg, q0[:8].copy())
    controllers.mpc_preview(cfg, base_ctrl, arm_ctrl, trajectory, base_ref)
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
            (np.asarray(wheels.max_speed) / RPM).tolist() if wheels is not None else []
        ),
        "wheel_max_torque": np.asarray(wheels.max_torque).tolist() if wheels is not None else [],
        "vscmg_limits": _vscmg_limits_described(cfg) if cm is not None else {},
    }
    if extras:  # the first arm's joints, then each extra arm's
        description["arm"]["first_arm_joints"] = first_info.n
        description["extra_arms"] = [
            {
                "name": x.name,
                "source": x.info.source,
                "sha256": x.info.sha256,
                "joints": x.info.names,
                "ee_frame": x.info.ee_frame,
                "task": x.row["task"],
            }
            for x in extras
        ]
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
        devices.true_thruster_matrix(cfg, thrusters),
        extras,
    )


def _start_state(plant, q0, v0):
    """``(q0, v0)`` as float arrays of the plant's sizes (ValueError otherwise)."""
    q0, v0 = np.array(q0, dtype=float), np.array(v0, dtype=float)
    if q0.shape != (plant.nq,) or v0.shape != (plant.nv,):
        raise ValueError(
            f"start: q0 and v0 must have shapes ({plant.nq},) and ({plant.nv},) (the plant's), "
            f"got {q0.shape} and {v0.shape}"
        )
    return q0, v0


def _vscmg_limits_described(cfg) -> dict[str, list[float]]:
    """Each VSCMG unit's motor limits as the manifest records them: the scenario's keys
    and units (``wheel_speed_max_rpm`` in rpm, the others SI)."""
    lim = devices.vscmg_motor_limits(cfg)
    out = {k: v.tolist() for k, v in lim.items() if k != "wheel_speed_max"}
    out["wheel_speed_max_rpm"] = (lim["wheel_speed_max"] / RPM).tolist()
    return out
