"""The devices of a system: the thruster set (nominal, and the plant's true directions and
magnitudes), the VSCMG cluster and the reaction-wheel array as bodies of the plant, the
controller model's base with the devices locked in, and thruster faults."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..._jit import param_array
from ...actuators import (
    VSCMG,
    FaultKind,
    SteeringLaw,
    Thruster,
    ThrusterFault,
    ThrusterSet,
    VSCMGCluster,
    attach_cluster,
    empty_geometry,
    paper_thruster_set,
    pyramid_cluster,
)
from ...actuators import reaction_wheels as rw
from ...control.flight.actuation import (
    FORCE,
    WRENCH,
    ActuationParams,
    AllocationParams,
    PulseParams,
    ThrusterParams,
    VSCMGParams,
    WheelParams,
)
from ...multibody import Model, mass_matrix
from ..spec.config import ScenarioError
from ..spec.si import si_view

__all__ = [
    "actuation_params",
    "cluster",
    "vscmg_motor_limits",
    "wheel_array",
    "thrusters",
    "true_thruster_matrix",
    "thruster_faults",
    "per_unit",
    "attach_devices",
    "locked_base",
]


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


def cluster(cfg) -> VSCMGCluster | None:
    v = cfg["vscmg"]
    if not v["enabled"]:
        return None
    w0 = si_view(cfg).vscmg.wheel_speed
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


#: the VSCMG motors' limits in the plant, as the SI view names them in [vscmg] and in a
#: [[vscmg_unit]] row (:func:`vscmg_motor_limits`)
_VSCMG_LIMITS = ("gimbal_torque_max", "gimbal_rate_max", "wheel_torque_max", "wheel_speed_max")


def vscmg_motor_limits(cfg) -> dict[str, NDArray[np.float64]]:
    """Each VSCMG unit's motor limits in the plant, SI (K,) arrays named as the SI view
    names them (``gimbal_torque_max`` [N m], ``gimbal_rate_max`` [rad/s],
    ``wheel_torque_max`` [N m], ``wheel_speed_max`` [rad/s]): a ``[[vscmg_unit]]`` row's own
    value, or ``[vscmg]``'s where the row gives 0 (every unit of the pyramid has the
    section's)."""
    si = si_view(cfg)
    rows = si.vscmg_unit if cfg["vscmg"]["layout"] == "table" else ()
    K = len(rows) if rows else 4
    out = {}
    for name in _VSCMG_LIMITS:
        default = float(getattr(si.vscmg, name))
        own = [float(getattr(r, name)) for r in rows]
        out[name] = np.array([x if x > 0.0 else default for x in own] or [default] * K)
    return out


def wheel_array(cfg):
    w = cfg["wheels"]
    if not w["enabled"]:
        return None
    si = si_view(cfg)
    common = dict(
        spin_inertia=w["spin_inertia"],
        mass=w["mass"],
        max_torque=w["max_torque"],
        max_speed=si.wheels.max_speed,
        friction=w["friction"],
        coulomb=w["coulomb"],
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
                    max_speed=si.wheel[i].max_speed,
                    friction=r["friction"] if r["friction"] >= 0 else w["friction"],
                    coulomb=r["coulomb"] if r["coulomb"] >= 0 else w["coulomb"],
                    name=f"rw{i + 1}",
                )
            )
        except ValueError as exc:
            raise ScenarioError(f"wheel[{i}]: {exc}") from None
    return rw.WheelArray(out)


def thrusters(cfg) -> ThrusterSet | None:
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


def locked_base(base_with_devices: Model, q: NDArray[np.float64]):
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


def per_unit(values, K, key, scale=1.0):
    if not values:
        return np.zeros(K)
    if len(values) == 1:
        return np.full(K, float(values[0]) * scale)
    if len(values) != K:
        raise ScenarioError(f"{key}: give {K} values (one per unit) or one, got {len(values)}")
    return np.asarray(values, float) * scale


def attach_devices(model: Model, cluster, wheels):
    """``(ClusterModel or None, WheelModel or None, model)``: ``model`` with the VSCMG
    cluster's and the wheel array's bodies attached (the cluster's first)."""
    cm = attach_cluster(model, cluster) if cluster is not None else None
    out = cm.model if cm is not None else model
    wm = rw.attach_wheels(out, wheels) if wheels is not None else None
    return cm, wm, (wm.model if wm is not None else out)


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


# ------------------------------------------------------------------ the flight software's blocks


def actuation_params(system, health=None) -> ActuationParams:
    """The actuation stage's :data:`~dqspace.control.flight.actuation.ActuationParams` of a
    built system, one block per device: the thrusters (nominal: the flight software plans
    with what it was told; their health as ``health`` says, default as built) with their
    allocation and pulse modulation, the VSCMG cluster with its steering law, the reaction
    wheels with the momentum manager."""
    sy, cfg = system, system.cfg
    period = 1.0 / cfg["control"]["rate"]
    dt = cfg["integrator"]["dt"]
    steps = int(round(period / dt))
    thr, alloc, pulses = _thruster_blocks(sy, cfg, sy.thrusters if health is None else health)
    cm = sy.cluster_model
    if cm is not None:
        vscmg = VSCMGParams(cm.cluster.geometry, sy.steering.kernel_params)
    else:  # a steering law never read (keeps one compiled signature)
        law = SteeringLaw(h_ref=1.0, lambda0=0.0, mu=0.0, gimbal_rate_max=1.0, wheel_accel_max=1.0)
        vscmg = VSCMGParams(empty_geometry(), law.kernel_params)
    return ActuationParams(period, dt, steps, thr, alloc, pulses, vscmg, _wheel_block(sy))


def _thruster_blocks(sy, cfg, health):
    """(ThrusterParams, AllocationParams, PulseParams) of a system (fresh arrays)."""
    ts = sy.thrusters
    eS = np.zeros(0)
    if ts is None:
        return (
            ThrusterParams(FORCE, np.zeros((6, 0)), eS, eS, eS, eS, eS, eS),
            AllocationParams(
                param_array(np.zeros((3, 0))),
                param_array(eS),
                param_array(np.ones(3)),
                0.0,
                0,
                0,
            ),
            PulseParams(False, eS, 0.5, 0.5, 0.0, False),
        )
    thr = ThrusterParams(
        mode=FORCE if cfg["thrusters"]["mode"] == "force" else WRENCH,
        H=np.ascontiguousarray(ts.H, dtype=float),
        sigma_min=np.array(ts.sigma_min, dtype=float),
        sigma_max=np.array(ts.sigma_max, dtype=float),
        effectiveness=np.array(health.effectiveness, dtype=float),
        fixed_thrust=np.array(health.fixed_thrust, dtype=float),
        command_lower=np.array(health.command_lower, dtype=float),
        command_upper=np.array(health.command_upper, dtype=float),
    )
    a = sy.allocator
    H = param_array(a.thrusters.H[: a.n_rows])
    it = 50 * (H.shape[0] + H.shape[1])
    alloc = AllocationParams(
        H_rows=H,
        weights=param_array(a.weights),
        residual_weights=param_array(a.residual_weights),
        tol=float(a.tol),
        lp_max_iter=it,
        lsq_max_iter=it,
    )
    mod = sy.modulator
    schmitt = mod.schmitt if mod is not None else None
    pulses = PulseParams(
        pwm=mod is not None,
        min_impulse_bit=np.array(ts.min_impulse_bit, dtype=float),
        on_fraction=schmitt.on_fraction if schmitt is not None else 0.5,
        off_fraction=schmitt.off_fraction if schmitt is not None else 0.5,
        quantum=mod.quantum if mod is not None else 0.0,
        error_feedback=bool(mod.error_feedback) if mod is not None else False,
    )
    return thr, alloc, pulses


def _wheel_block(sy) -> WheelParams:
    wm, mm = sy.wheel_model, sy.momentum_manager
    if wm is None:
        e = param_array(np.zeros(0))
        return WheelParams(param_array(np.zeros((3, 0))), e, e, e, False, 0.0, 1.0, 0.0)
    arr = wm.array
    return WheelParams(
        A=param_array(arr.A),
        I_s=param_array(arr.I_s),
        max_torque=param_array(arr.max_torque),
        max_speed=param_array(arr.max_speed),
        dumping=mm is not None,
        dump_gain=mm.gain if mm is not None else 0.0,
        dump_start=mm.start_fraction if mm is not None else 1.0,
        dump_stop=mm.stop_fraction if mm is not None else 0.0,
    )
