"""Assembling a scenario's system from its resolved configuration.

:func:`build_system` turns a resolved scenario (see :mod:`.schema`) into the
plant model (the paper's space manipulator, with the VSCMG cluster as real
bodies), the actuators (thruster set, allocator, pulse modulator, steering
law) and the controllers.

The controllers use a *controller model*: the base and the arm, with the
cluster locked into the base (its mass and inertia at the initial gimbal
angles, wheels not spinning).  The arm's computed-torque law and the base's
arm-reaction feedforward are computed on it: the cluster is an actuator, its
gyroscopic torque is handled by the steering law (the ``d`` term of
``docs/vscmg.md``), not by the feedforward.
"""

from dataclasses import dataclass

import numpy as np

from ..actuators import (
    Allocator,
    FaultKind,
    PulseModulator,
    SchmittTrigger,
    SteeringLaw,
    ThrusterFault,
    attach_cluster,
    paper_thruster_set,
    pyramid_cluster,
)
from ..control import (
    IIWA_JOINT_LIMITS,
    ArmController,
    BaseController,
    ConstantPose,
    JointGains,
    Lemniscate,
    PDGains,
    PoseReference,
    solve_ik,
)
from ..dq import dq_from_quat_translation, dq_from_rpy_deg, quat_from_rpy_deg
from ..multibody import Body, Joint, JointType, mass_matrix, models

__all__ = ["System", "build_system", "TimeWarp"]


@dataclass
class System:
    """Everything a run needs (see :func:`build_system`)."""

    cfg: dict
    plant: object  # Model
    cluster_model: object  # ClusterModel or None
    controller_model: object  # Model (base + arm, cluster locked in the base)
    thrusters: object  # ThrusterSet or None
    allocator: object
    modulator: object
    steering: object
    base: object  # BaseController
    arm: object  # ArmController
    trajectory: object
    q0: np.ndarray
    v0: np.ndarray
    base_reference: object


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
        tau, r, dr = self.clock(float(t))
        ref = self.traj(tau)
        return PoseReference(ref.pose, ref.twist * r, ref.acc * r * r + ref.twist * dr)


def _locked_base(model_with_cluster, base_index=0):
    """Mass, CoM and inertia about the CoM of the base with the cluster locked onto it."""
    # the base rows of M for the base + cluster alone are the composite inertia
    M = mass_matrix(model_with_cluster, model_with_cluster.neutral_configuration())[:6, :6]
    # M maps [w, v] to [h, p]: [[J_O, [h]x], [-[h]x, m I]]
    m = M[3, 3]
    hx = M[:3, 3:]
    h = np.array([hx[2, 1], hx[0, 2], hx[1, 0]])
    c = h / m
    cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    J_c = M[:3, :3] + m * cx @ cx
    return m, c, 0.5 * (J_c + J_c.T)


def build_system(cfg):
    """Build the plant, actuators and controllers of a resolved closed-loop scenario."""
    mcfg = cfg["model"]
    mount = dq_from_rpy_deg(mcfg["arm_mount_rpy_deg"], mcfg["arm_mount_xyz"])
    masses = dict(base_mass=mcfg["base_mass"], payload_mass=mcfg["payload_mass"])
    arm_model = models.space_manipulator(mount=mount, **masses)
    vcfg, tcfg = cfg["vscmg"], cfg["thrusters"]

    cm = None
    plant = arm_model
    steering = None
    controller_model = arm_model
    if vcfg["enabled"]:
        cluster = pyramid_cluster(wheel_speed=vcfg["wheel_speed_rpm"] * np.pi / 30.0)
        cm = attach_cluster(arm_model, cluster)
        plant = cm.model
        # the controllers' model: the cluster locked into the base
        bare = models.space_manipulator(mount=mount, **masses)
        base_only = attach_cluster(_base_only(bare), cluster).model
        gam0 = np.radians(vcfg["initial_gimbal_deg"])
        if np.any(gam0 != 0.0):
            raise ValueError(
                "vscmg.initial_gimbal_deg must be zero in this version "
                "(the controller model locks the cluster at zero gimbal angles)"
            )
        m, c, J = _locked_base(base_only)
        bodies = bare.bodies()
        b0 = bodies[0]
        bodies[0] = Body(b0.name, None, b0.joint, m, c, J)
        from ..multibody import Model

        controller_model = Model.build(bodies, bare.frames)
        steering = SteeringLaw.for_cluster(
            cluster,
            gimbal_rate_max=vcfg["gimbal_rate_limit"],
            wheel_accel_max=vcfg["wheel_accel_limit"],
        )

    thrusters = allocator = modulator = None
    dt = cfg["integrator"]["dt"]
    period = 1.0 / cfg["control"]["rate"]
    if tcfg["enabled"]:
        thrusters = paper_thruster_set(
            sigma_max=tcfg["max_thrust"], min_impulse_bit=tcfg["min_impulse_bit"]
        )
        allocator = Allocator(thrusters, mode=tcfg["mode"], method=tcfg["allocator"])
        if tcfg["pwm"]:
            modulator = PulseModulator(
                thrusters,
                period,
                schmitt=SchmittTrigger() if tcfg["schmitt"] else None,
                quantum=dt,
                error_feedback=tcfg["error_feedback"],
            )
        n_steps = period / dt
        if abs(n_steps - round(n_steps)) > 1e-9:
            raise ValueError(f"control period {period} s must be a multiple of dt = {dt} s")

    bc = cfg["base_controller"]
    base = BaseController(
        controller_model,
        PDGains(
            kp_rot=bc["kp_rot"],
            kd_rot=bc["kd_rot"],
            kp_trans=bc["kp_trans"],
            kd_trans=bc["kd_trans"],
        ),
    )
    ac = cfg["arm_controller"]
    traj_cfg = cfg["trajectory"]
    orient = quat_from_rpy_deg(traj_cfg["orientation_rpy_deg"])
    if traj_cfg["type"] == "lemniscate":
        x0, y0, z0 = traj_cfg["center"]
        curve = Lemniscate(
            r=traj_cfg["r"],
            zeta=traj_cfg["zeta"],
            theta_m=traj_cfg["theta_m"],
            x0=x0,
            y0=y0,
            z0=z0,
            orientation=orient,
        )
    else:
        curve = ConstantPose(dq_from_quat_translation(orient, traj_cfg["center"]))
    trajectory = TimeWarp(curve, traj_cfg["start_time"], traj_cfg["ramp_time"])

    # initial arm configuration: the reference's start pose, the most comfortable IK solution
    joints0 = _initial_joints(
        controller_model, trajectory(0.0).pose, np.radians(mcfg["initial_joints_deg"])
    )
    arm = ArmController(
        controller_model,
        JointGains.from_natural_frequency(ac["omega_n"], ac["zeta"]),
        seed=joints0,
        limits=IIWA_JOINT_LIMITS,
        posture=joints0 if ac["posture_gain"] > 0 else None,
        posture_gain=max(ac["posture_gain"], 1e-12),
    )
    q0 = plant.neutral_configuration()
    q0[8:15] = joints0
    v0 = np.zeros(plant.nv)
    if cm is not None:
        q0, v0 = cm.with_state(
            q0, v0, gamma=np.radians(vcfg["initial_gimbal_deg"]), wheel_speed="nominal"
        )
    base_ref = PoseReference(q0[:8].copy(), np.zeros(6), np.zeros(6))
    return System(
        cfg,
        plant,
        cm,
        controller_model,
        thrusters,
        allocator,
        modulator,
        steering,
        base,
        arm,
        trajectory,
        q0,
        v0,
        base_ref,
    )


def _base_only(model):
    """The base body of a model, alone (for the locked cluster's composite inertia)."""
    from ..multibody import Model

    b = model.bodies()[0]
    return Model.build([Body(b.name, None, Joint(JointType.FREE), b.mass, b.com, b.inertia)])


def _initial_joints(model, target, seed, n_tries=24):
    """The IK solution of ``target`` with the largest joint-limit margin, from ``seed`` and
    a fixed set of pseudo-random seeds (deterministic, independent of the scenario's seed)."""
    L = IIWA_JOINT_LIMITS
    rng = np.random.default_rng(12345)
    seeds = [seed] + [rng.uniform(0.8 * L[:, 0], 0.8 * L[:, 1]) for _ in range(n_tries)]
    best, best_margin = None, -np.inf
    for s in seeds:
        r = solve_ik(model, target, s, limits=L, tol=1e-11, max_iterations=200)
        if not r.success:
            continue
        margin = np.min(np.minimum(r.joints - L[:, 0], L[:, 1] - r.joints))
        if margin > best_margin:
            best, best_margin = r.joints, margin
    if best is None:
        raise ValueError(
            "the trajectory's start pose is not reachable by the arm "
            "(check trajectory.center/orientation and model.arm_mount_*)"
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
