"""A capture scenario (``scenario.kind = "capture"``): approach, grasp, detumble.

The run has two phases, each an ordinary :class:`~dqspace.scenarios.sim.closed_loop.
ClosedLoop` of the servicer:

1. **Approach and synchronisation** (until the grasp).  The target's motion is
   torque-free, so it is propagated before the run (:func:`~dqspace.multibody.free_motion`),
   and so is its estimate by the relative navigation (``[target_navigation]``,
   :mod:`~dqspace.scenarios.sim.capture_nav`; disabled: perfect knowledge, the true motion);
   the end-effector's reference (:class:`FixtureTrack`, from the estimate) is the fixture's pose
   offset by a stand-off that shrinks to zero over ``capture.approach_duration`` (quintic),
   then the fixture itself: the end-effector's twist is synchronised with the fixture's.
2. **Grasp.**  At the tick the trigger chooses (:mod:`~dqspace.scenarios.sim.
   capture_trigger`: once aligned, or at ``grasp_time``; never by ``grasp_time``: a miss,
   the approach runs on to the end) the plant's state and the target's are handed to
   :func:`~dqspace.multibody.grasp_impact` (the impulse-momentum equations of both bodies;
   a restitution, then a rigid latch); no actuator acts within the instantaneous impact.
3. **Stabilise and detumble** (after the grasp).  A second closed loop whose plant
   carries the target as the arm's payload (``arm.payload_*`` set from the target's mass
   properties where it was grasped), started from the post-impact state: the arm holds
   the end-effector's pose relative to the base (the scenario's arm law), the base law
   holds the base's attitude and position at the grasp (``base_reference`` "hold"), with
   the thrusters and the momentum devices.

The recorded series of both phases are one :class:`~dqspace.scenarios.store.results.
Results` (the grasp's row is the post-impact state), with the target's pose and twist
added (``target_pose``, ``target_twist``).  The metrics (:meth:`Capture.metrics`) are in
``docs/capture.md``.
"""

from __future__ import annotations

import copy

import numpy as np

from ...control.trajectories import PoseReference
from ...dq import (
    adjoint_matrix,
    dq_conj,
    dq_from_quat_translation,
    dq_from_rpy_deg,
    dq_mul,
    quat_from_rpy_deg,
    rotation_matrix_from_dq,
    translation_from_dq,
)
from ...multibody import (
    Target,
    Trajectory,
    center_of_mass,
    forward_dynamics,
    frame_jacobian,
    frame_pose,
    frame_twist,
    free_motion,
    grasp_misalignment,
    inverse_dynamics,
    momentum,
)
from ..build.arm import arm, base_body, joint_values
from ..spec.config import ScenarioError
from ..spec.schema_capture import CAPTURE_METRICS
from .capture_hold import hold_laws
from .capture_nav import (
    navigation_metrics,
    navigation_recorder,
    navigation_series,
    target_estimate,
)
from .capture_trigger import GraspTrigger, grasp
from .closed_loop import ClosedLoop

__all__ = ["Capture", "FixtureTrack", "target_of", "placed", "CAPTURE_METRICS"]

#: RK4 steps of the target's propagation per control period
TARGET_SUBSTEPS = 10


def target_of(cfg) -> tuple[Target, np.ndarray, np.ndarray]:
    """``(target, pose0 (8,), twist0 (6,))`` of the ``[target]`` section (ScenarioError
    naming the section's keys on bad values)."""
    t = cfg["target"]
    ixx, iyy, izz, ixy, ixz, iyz = t["inertia"]
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    fixture = dq_from_quat_translation(quat_from_rpy_deg(t["fixture_rpy_deg"]), t["fixture_xyz"])
    try:
        target = Target(t["mass"], np.asarray(t["com"]), inertia, fixture)
    except ValueError as exc:
        raise ScenarioError(f"[target] (mass, com, inertia): {exc}") from None
    pose0 = dq_from_rpy_deg(t["rpy_deg"], t["xyz"])
    twist0 = target.twist(np.radians(t["rate_deg_s"]), t["velocity"])
    return target, pose0, twist0


def placed(cfg, target: Target, pose0: np.ndarray) -> np.ndarray:
    """The target's initial pose (8,) in the servicer's initial base frame: ``pose0``
    (``target.xyz``, ``rpy_deg``) with ``target.placement = "base"``; with
    ``"end_effector"``, ``F0 = E0 o X`` is the fixture's pose (``E0`` the end-effector's at
    ``arm.initial_joints_deg``, ``X = pose0`` the offset) and the target's ``F0 o P^-1``
    (``P`` the fixture in the target's frame): with a zero offset the fixture starts where
    the end-effector stands at those joints, the arm starts ``capture.standoff`` back from
    it and grasps near the configuration given, on any servicer (ScenarioError naming
    ``arm.initial_joints_deg`` when that configuration is singular)."""
    if cfg["target"]["placement"] == "base":
        return pose0
    model, info = arm(cfg, base_body(cfg))
    q = model.neutral_configuration()
    if cfg["arm"]["initial_joints_deg"]:  # deg for a revolute joint, m for a prismatic one
        q[8 : 8 + info.n] = joint_values(
            cfg["arm"]["initial_joints_deg"], info.prismatic, "arm.initial_joints_deg"
        )
    # the arm must be able to follow the fixture from there: not at a singular configuration
    J = frame_jacobian(model, q, info.ee_frame)[:, 6 : 6 + info.n]
    sv = np.linalg.svd(J, compute_uv=False)
    if sv.size < 6 or sv[-1] <= 1e-6 * sv[0]:
        given = list(cfg["arm"]["initial_joints_deg"]) or "[] (every joint at zero)"
        raise ScenarioError(
            f"target.placement = 'end_effector' places the fixture at the end-effector's pose "
            f"at arm.initial_joints_deg = {given}, a singular configuration of the arm (its "
            "Jacobian's smallest singular value is "
            f"{sv[-1] if sv.size >= 6 else 0.0:.2g}): set arm.initial_joints_deg to a pose "
            "the arm can move from in every direction"
        )
    E0 = frame_pose(model, q, info.ee_frame)
    return dq_mul(dq_mul(E0, pose0), dq_conj(target.fixture))


class FixtureTrack:
    """The end-effector's reference during the approach: the fixture's pose with a
    stand-off, as a pose trajectory (``sample(times)``, the end-effector's relative to the
    base, the base at rest at the identity: ``base_reference`` "hold" from the start).

    ``D(t) = F(t) o S(t)``, ``F`` the fixture's inertial pose and ``S`` the translation
    ``p(t) = d(t) u`` in the fixture's axes, ``d = 1 - s(t / T_a)`` (quintic ``s``), ``u``
    the stand-off.  With ``F``'s body twist ``[w, v]`` and acceleration ``[w', v']``, ``D``'s
    are ``[w, v + w x p + p']`` and ``[w', v' + w' x p + w x p' + p'']`` (the axes of D are
    those of F).  The fixture's twist is the target's through the fixed adjoint; the
    target's acceleration is its torque-free forward dynamics.

    Parameters
    ----------
    target : Target
    poses, twists : (N + 1, 8), (N + 1, 6) the target's pose and body twist at the ticks
        ``k period``
    period : float [s]
    standoff : (3,) [m]; approach : float [s]
    """

    def __init__(self, target, poses, twists, period, standoff, approach):
        self.period = float(period)
        self.u = np.asarray(standoff, dtype=float)
        self.approach = float(approach)
        Ad = adjoint_matrix(target.fixture)
        n = poses.shape[0]
        self.F = np.array([dq_mul(poses[k], target.fixture) for k in range(n)])
        self.xi = twists @ Ad.T
        zero = np.zeros(6)
        model = target.model
        acc = np.array([forward_dynamics(model, poses[k], twists[k], zero) for k in range(n)])
        self.acc = acc @ Ad.T

    def _standoff(self, t):
        """``(p, p', p'')`` (3,) each at t."""
        tau = min(max(t / self.approach, 0.0), 1.0)
        s = tau**3 * (10.0 - 15.0 * tau + 6.0 * tau**2)
        ds = 30.0 * tau**2 * (1.0 - tau) ** 2 / self.approach if 0.0 < tau < 1.0 else 0.0
        dds = (
            60.0 * tau * (1.0 - tau) * (1.0 - 2.0 * tau) / self.approach**2
            if 0.0 < tau < 1.0
            else 0.0
        )
        return (1.0 - s) * self.u, -ds * self.u, -dds * self.u

    def sample(self, times):
        """``(poses (m, 8), twists (m, 6), accelerations (m, 6))`` at ``times`` [s] (ticks;
        past the table, its last row)."""
        times = np.asarray(times, dtype=float).reshape(-1)
        m = times.shape[0]
        P, T, A = np.empty((m, 8)), np.empty((m, 6)), np.empty((m, 6))
        last = self.F.shape[0] - 1
        for i, t in enumerate(times):
            k = min(max(int(round(t / self.period)), 0), last)
            p, dp, ddp = self._standoff(t)
            P[i] = dq_mul(self.F[k], dq_from_quat_translation(np.array([1.0, 0, 0, 0]), p))
            w, v = self.xi[k, :3], self.xi[k, 3:]
            dw, dv = self.acc[k, :3], self.acc[k, 3:]
            T[i] = np.r_[w, v + np.cross(w, p) + dp]
            A[i] = np.r_[dw, dv + np.cross(dw, p) + np.cross(w, dp) + ddp]
        return P, T, A

    def __call__(self, t):
        P, T, A = self.sample(np.array([t]))
        return PoseReference(P[0], T[0], A[0])


class _Phase:
    """A recorder for one phase: times shifted by ``t0``, rows at or after ``t_end``
    dropped, the target's series added (``target(q, v, t) -> (poses, twists)``)."""

    def __init__(self, rec, t0, t_end, target, manifest=None):
        self.rec, self.t0, self.t_end, self.target = rec, t0, t_end, target
        self.manifest = rec.manifest if manifest is None else manifest

    def add_rows(self, m, **blocks):
        t = blocks["t"] + self.t0
        keep = t < self.t_end - 1e-9
        m = int(keep.sum())
        if not m:
            return
        out = {k: x[:m] for k, x in blocks.items()}
        out["t"] = t[:m]
        out["target_pose"], out["target_twist"] = self.target(out["q"], out["v"], out["t"])
        self.rec.add_rows(m, **out)


class _Bar:
    def __init__(self, bar, t0):
        self.bar, self.t0 = bar, t0
        self.enabled = bar.enabled

    def update(self, t):
        self.bar.update(t + self.t0)


class Capture:
    """The run of a capture scenario (module docstring); the runner calls
    :meth:`simulate` with a recorder of :attr:`spec`, then :meth:`metrics`."""

    closed = True

    def __init__(self, cfg):
        self.cfg = cfg
        c = cfg["capture"]
        self.rate = cfg["control"]["rate"]
        self.period = 1.0 / self.rate
        self.duration = T = cfg["scenario"]["duration"]
        self.rows = int(round(T / self.period)) + 1
        self.t_grasp = c["grasp_time"]
        if cfg["base_reference"]["type"] != "hold":
            raise ScenarioError('a capture scenario holds the base: base_reference.type = "hold"')
        self.target, pose0, twist0 = target_of(cfg)
        pose0 = placed(cfg, self.target, pose0)
        n = int(round(self.t_grasp / self.period))  # to the timeout (a miss: _extend)
        motion = free_motion(
            self.target, pose0, twist0, dt=self.period / TARGET_SUBSTEPS,
            n_steps=n * TARGET_SUBSTEPS, record_every=TARGET_SUBSTEPS,
        )  # fmt: skip
        self.motion = motion  # the target's poses and twists at the ticks
        #: their estimate ([target_navigation]; None: perfect knowledge), what the arm tracks
        self.nav = target_estimate(cfg, self.target, motion, self.period)
        known = motion if self.nav is None else self.nav
        self.track = FixtureTrack(
            self.target, known.q, known.v, self.period, c["standoff"], c["approach_duration"]
        )
        self.phase1 = ClosedLoop(cfg, trajectory=self.track)  # stopped by the trigger
        self.phase2 = None
        self.spec = dict(self.phase1.spec)
        self.spec["target_pose"] = ((8,), "-", (), "target's pose q^_{I,T} (unit dual quaternion)")
        self.spec["target_twist"] = (
            (6,), "rad/s, m/s", ("wx", "wy", "wz", "vx", "vy", "vz"), "target's body twist",
        )  # fmt: skip
        self.spec.update(navigation_series(self.nav))  # the estimate's errors, if any
        self.impact = self.latch = self.before = self.misalignment = self.trigger = None
        self.nav_rows = None  # the recorder adding the estimate's errors, if any
        self.held = None  # pose of the target's frame in the end-effector's, after the grasp

    @property
    def t(self):
        if self.phase2 is not None:
            return self.t_grasp + self.phase2.t
        return self.phase1.t

    @property
    def loop_time(self):
        return self.phase1.loop_time + (self.phase2.loop_time if self.phase2 else 0.0)

    def compile(self) -> None:
        """Compile the first phase's kernels (the second's are the same)."""
        self.phase1.compile()

    # ---------------------------------------------------------------- the run
    def _free_target(self, q, v, t):
        k = np.clip(np.round(t / self.period).astype(int), 0, self.motion.q.shape[0] - 1)
        return self.motion.q[k], self.motion.v[k]

    def _held_target(self, q, v, t):
        model, P = self.phase2.sy.plant, self.held
        Ad = adjoint_matrix(P)
        poses = np.array([dq_mul(frame_pose(model, qk, "payload"), P) for qk in q])
        twists = np.array(
            [Ad @ frame_twist(model, qk, vk, "payload") for qk, vk in zip(q, v, strict=True)]
        )
        return poses, twists

    def simulate(self, rec, checkpoint, bar):
        rec = self.nav_rows = navigation_recorder(rec, self.nav, self.period)  # + its errors
        p1, c = self.phase1, self.cfg["capture"]
        ee = p1.sy.arm_info.ee_frame
        p1.stop = trig = self.trigger = GraspTrigger(
            c, self.period, p1.sy.plant, ee, self.target, self.motion, on_miss=self._extend
        )
        p1.simulate(_Phase(rec, 0.0, np.inf, self._free_target), checkpoint, bar)
        if trig.tick is None:  # missed (or stopped): the approach ran on, no grasp
            if trig.missed:
                rec.manifest["events"].append(trig.event(self.period))
            return
        self.t_grasp = trig.tick * self.period
        if self.nav is not None:  # the estimate is not used after the grasp
            self.nav_rows.grasp_tick = trig.tick
        q, v = p1.q.copy(), p1.v.copy()
        pose, twist = self.motion.q[trig.tick], self.motion.v[trig.tick]
        #: the servicer's and the target's states just before the grasp
        self.before = (q.copy(), v.copy(), pose.copy(), twist.copy())
        try:  # the contact (restitution) and, for e > 0, the latch
            self.impact, self.latch = imp, latch = grasp(
                p1.sy.plant, q, v, self.target, pose, twist, ee, c["restitution"],
                c["grasp_tolerance"],
            )  # fmt: skip
        except ValueError as exc:
            raise ScenarioError(f"capture.grasp_tolerance: {exc}") from None
        rec.manifest["events"].append({"t": self.t_grasp, "event": "grasp"})
        self.misalignment = grasp_misalignment(p1.sy.plant, q, self.target, pose, frame=ee)
        ee_pose = frame_pose(p1.sy.plant, q, ee)
        self.held = dq_mul(dq_conj(ee_pose), pose)
        cfg2 = _holding(self.cfg, self.target, self.held, q, p1.sy.arm_info)
        cfg2["scenario"]["duration"] = self.duration - self.t_grasp
        laws = hold_laws(self.cfg, self.target, self.held) if c["hold"] == "impedance" else None
        self.phase2 = p2 = ClosedLoop(cfg2, initial_state=(q, (latch or imp).v), laws=laws)
        part = {"events": rec.manifest["events"]}
        p2.simulate(
            _Phase(rec, self.t_grasp, np.inf, self._held_target, part),
            checkpoint,
            _Bar(bar, self.t_grasp),
        )

    def _extend(self):
        """After a miss: the target's motion, and the fixture track, on to the run's end
        (the approach goes on; the track re-made in place: the flight software holds it)."""
        m, c = self.motion, self.cfg["capture"]
        n, dt = self.rows - m.q.shape[0], self.period / TARGET_SUBSTEPS
        more = free_motion(self.target, m.q[-1], m.v[-1], dt=dt, n_steps=n * TARGET_SUBSTEPS,
                           record_every=TARGET_SUBSTEPS)  # fmt: skip
        q, v = np.vstack([m.q, more.q[1:]]), np.vstack([m.v, more.v[1:]])
        self.motion = m = Trajectory(np.r_[m.t, more.t[1:] + m.t[-1]], q, v)
        if self.nav is not None:  # the estimate of the longer motion (the same up to now)
            self.nav = target_estimate(self.cfg, self.target, m, self.period)
            self.nav_rows.errors = self.nav.errors
        known = m if self.nav is None else self.nav
        FixtureTrack.__init__(self.track, self.target, known.q, known.v, self.period,
                              c["standoff"], c["approach_duration"])  # fmt: skip

    # ---------------------------------------------------------------- metrics
    def metrics(self, res) -> dict:
        """The capture's metrics (:data:`CAPTURE_METRICS`) of the recorded ``res``."""
        imp, trig = self.impact, self.trigger
        if imp is None or self.phase2 is None:  # a miss: grasp_missed = 1
            return trig.metrics(self.period) if trig is not None else {}
        sy = self.phase2.sy
        c = self.cfg["capture"]
        after = res.t >= self.t_grasp - 1e-9
        if not after.any():  # stopped at the grasp (interrupted): nothing to measure
            return {}
        dist, angle = self.misalignment
        out = {
            "grasp_impulse_force": float(np.linalg.norm(imp.impulse[:3])),
            "grasp_impulse_torque": float(np.linalg.norm(imp.impulse[3:])),
            "grasp_distance": dist,
            "grasp_angle": float(np.degrees(angle)),
            "grasp_energy_lost": float(imp.energy_lost)
            + (self.latch.energy_lost if self.latch else 0.0),
            "grasp_latch_impulse_force": float(
                np.linalg.norm(self.latch.impulse[:3]) if self.latch else 0.0
            ),
            **trig.metrics(self.period),
        }
        # the stack's rate: the larger of the base's and the (held) target's
        t, w = res.t[after], np.linalg.norm(res["v"][after, :3], axis=1)
        w = np.maximum(w, np.linalg.norm(res["target_twist"][after, :3], axis=1))
        slow = w < np.radians(c["residual_rate_deg_s"])
        fast = np.flatnonzero(~slow)
        i = 0 if fast.size == 0 else int(fast[-1]) + 1
        reached = i < t.shape[0]
        out["detumble_time"] = float(t[i] - self.t_grasp) if reached else float("nan")
        h0 = stack_momentum(sy, res["q"][after][0], res["v"][after][0])
        h1 = stack_momentum(sy, res["q"][after][i], res["v"][after][i]) if reached else h0
        q0 = res["q"][after][0]
        R = rotation_matrix_from_dq(q0[:8])  # the stack's CoM in the base frame
        com = R.T @ (center_of_mass(sy.plant, q0) - translation_from_dq(q0[:8]))
        tau = max_available_torque(sy, com)
        out["stack_momentum"] = float(np.linalg.norm(h0))
        out["max_available_torque"] = tau
        out["detumble_bound"] = (
            float((np.linalg.norm(h0) - np.linalg.norm(h1)) / tau) if tau > 0 else float("inf")
        )
        out["base_attitude_excursion"] = float(
            np.degrees(np.linalg.norm(res["base_att_err"][after], axis=1)).max()
        )
        g = interface_wrench(self.target, res["target_pose"][after], res["target_twist"][after],
                             self.period)  # fmt: skip
        out["interface_force_peak"] = float(np.linalg.norm(g[:, 3:], axis=1).max())
        out["interface_torque_peak"] = float(np.linalg.norm(g[:, :3], axis=1).max())
        imp_thr = res["thrust_impulse"][after] if "thrust_impulse" in res else np.zeros((1, 0))
        out["capture_thruster_impulse"] = float(imp_thr.sum())
        out["device_momentum_peak"] = float(
            max(np.linalg.norm(device_momentum(sy, qk, vk)) for qk, vk in
                zip(res["q"][after], res["v"][after], strict=True))
        )  # fmt: skip
        out.update(
            navigation_metrics(self.nav, self.period, c["approach_duration"], self.trigger.tick)
        )
        return out


def interface_wrench(target, poses, twists, period):
    """(m, 6) the wrench ``[torque, force]`` the arm applies to the held target, at the
    fixture's origin in its axes, at each of m rows ``period`` apart: the target's inverse
    dynamics (:func:`~dqspace.multibody.inverse_dynamics` on its one-body model) with its
    body acceleration from the twists by central differences (one-sided at the ends), then
    carried to the fixture (``g_F = Ad^-T g_T``, power ``xi_T . g_T = xi_F . g_F``)."""
    acc = np.gradient(twists, period, axis=0) if len(twists) > 1 else np.zeros_like(twists)
    model = target.model
    rows = zip(poses, twists, acc, strict=True)
    g = np.array([inverse_dynamics(model, p, x, a) for p, x, a in rows])
    return np.linalg.solve(adjoint_matrix(target.fixture).T, g.T).T


def _holding(cfg, target, held, q, info):
    """The scenario after the grasp: the target as the arm's payload at the end-effector
    (its mass, CoM and inertia in the end-effector's frame, where it was grasped), the arm
    holding the grasp configuration, the base holding its pose."""
    cfg2 = copy.deepcopy(cfg)
    R = rotation_matrix_from_dq(held)
    com = R @ target.com + translation_from_dq(held)
    J = R @ target.inertia @ R.T
    a = cfg2["arm"]
    a["payload_mass"] = target.mass
    a["payload_com"] = com.tolist()
    a["payload_inertia"] = [J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]]
    a["payload_link"] = ""
    joints = q[8 : 8 + info.n]
    a["initial_joints_deg"] = np.where(info.prismatic, joints, np.degrees(joints)).tolist()
    cfg2["trajectory"]["type"] = "initial"
    cfg2["arm_controller"]["omega_n"] = cfg["capture"]["hold_omega_n"]
    cfg2["scenario"]["duration"] = cfg["scenario"]["duration"] - cfg["capture"]["grasp_time"]
    cfg2["scenario"]["kind"] = "closed_loop"
    return cfg2


def _device_velocities(sy, v):
    """``v`` with the base's and the arm's coordinates zeroed: the devices' rates only."""
    out = np.zeros_like(v)
    nv_c = sy.controller_model.nv
    out[nv_c:] = v[nv_c:]
    return out


def stack_momentum(sy, q, v):
    """(3,) the angular momentum [N m s] of the stack (servicer and held target) about its
    centre of mass, the momentum devices' rates set to zero: what the base's rotation
    carries, what detumbling removes."""
    w = v.copy()
    w[sy.controller_model.nv :] = 0.0
    return _about_com(sy.plant, q, w)


def device_momentum(sy, q, v):
    """(3,) the angular momentum [N m s] the momentum devices' own rates carry."""
    return _about_com(sy.plant, q, _device_velocities(sy, v))


def _about_com(model, q, v):
    return momentum(model, q, v, point=center_of_mass(model, q)).angular


def max_available_torque(sy, com) -> float:
    """An upper bound of the torque [N m] the thrusters and the momentum devices can put
    on the stack about its centre of mass ``com`` (3,) (in the base frame): every thruster
    at its maximum thrust at its full moment arm about ``com``, plus each reaction wheel's
    motor torque, plus each VSCMG's gimbal-rate torque ``I_ws Omega_max gamma'_max`` and its
    wheel motor torque.  Detumbling the stack's momentum ``|h|`` takes at least
    ``|h| / tau_max``."""
    tau = 0.0
    ts = sy.thrusters
    if ts is not None:
        for th in ts.thrusters:
            arm = np.cross(np.asarray(th.position) - com, th.direction)
            tau += th.sigma_max * float(np.linalg.norm(arm))
    tau += float(np.sum(np.abs(sy.description["wheel_max_torque"])))
    if sy.cluster_model is not None:
        lim = sy.description["vscmg_limits"]
        units = sy.cluster_model.cluster.units
        for k, u in enumerate(units):
            h = u.wheel_inertia[0] * lim["wheel_speed_max_rpm"][k] * np.pi / 30.0
            tau += h * lim["gimbal_rate_max"][k] + lim["wheel_torque_max"][k]
    return float(tau)
