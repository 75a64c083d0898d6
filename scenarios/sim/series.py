"""The series a closed-loop run records, declared once.

Each :class:`Series` names one series of a result: its unit, its shape per sample (a rule
on the system's sizes), its column names, its description and how it is made from the
loop's rows (:data:`~dqspace.scenarios.sim.loop.Record`).  A system without an arm
(``arm.model = "none"``) records its end-effector series (``ee_pos``, ``ee_ref``,
``ee_err``, ``ee_att_err``) as NaN, not measured, and its joint series with 0 columns.
:data:`CLOSED_LOOP` is the table; the runner preallocates from it (:func:`spec`), checks a
run's size with it, fills the result with it (:func:`values`), and the manifest, plots and
reports read the units and descriptions it gives (``Results.info``).
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...dq import dq_conj, dq_log, dq_mul, translation_from_dq
from ...multibody import frame_pose

__all__ = ["Series", "Sizes", "Chunk", "CLOSED_LOOP", "spec", "values", "extra_arm_series"]

#: The sizes a series' shape depends on: the plant's ``nq``, ``nv``, the arm's ``n``
#: joints, ``S`` thrusters, ``K`` VSCMGs, ``W`` reaction wheels.
Sizes = namedtuple("Sizes", ["nq", "nv", "n", "S", "K", "W"])


@dataclass(frozen=True)
class Series:
    """One recorded series: ``name``, ``unit`` (``"-"`` for none), ``shape`` (the shape
    of one sample from the :data:`Sizes`), ``columns`` (names of its components, or
    ``()``), ``doc`` and ``value`` (the series of a chunk from a :class:`Chunk`)."""

    name: str
    unit: str
    shape: Any
    columns: tuple
    doc: str
    value: Any


@dataclass(frozen=True)
class Chunk:
    """What a series is made from: the first ``m`` rows of a chunk's ``R``
    (:data:`~dqspace.scenarios.sim.loop.Record`), its references ``arm_ref``,
    ``base_ref`` (m, 20), and the run's constants: the control ``period`` and the
    dynamics step ``dt`` [s], the arm's ``tau_limit``, ``rate_limit`` (n,), the true
    thruster matrix ``H_true`` (6, S), the thrusters' ``sigma_max`` (S,) [N], the
    joint limiter's rows per device ``limited`` (name -> bool (m, count)) and the arm's
    reaction on the base as the plant applied it, ``applied_reaction`` (m, 6)
    (:mod:`dqspace.scenarios.sim.reaction`) and the system's centre of mass minus its
    reference, ``com_err`` (m, 3) (:func:`~dqspace.control.com_hold.com_errors`)."""

    R: Any
    m: int
    arm_ref: NDArray[np.float64]
    base_ref: NDArray[np.float64]
    period: float
    dt: float
    tau_limit: NDArray[np.float64]
    rate_limit: NDArray[np.float64]
    H_true: NDArray[np.float64]
    sigma_max: NDArray[np.float64]
    limited: dict
    applied_reaction: NDArray[np.float64]
    com_err: NDArray[np.float64]

    def rows(self, name):
        """The chunk's first m rows of the record ``name``."""
        return getattr(self.R, name)[: self.m]


_XYZ = ("x", "y", "z")
_W6 = ("fx", "fy", "fz", "tx", "ty", "tz")


def _no_arm(c):
    """True for a system without an arm (0 joints): its end-effector series are NaN (not
    measured: there is no end-effector)."""
    return c.tau_limit.shape[0] == 0


def _ee_pos(c):
    if _no_arm(c):
        return np.full((c.m, 3), np.nan)
    return translation_from_dq(dq_mul(c.arm_ref[: c.m, :8], c.rows("ee_dq")))  # q^_BD o e^


def _ee_ref(c):
    if _no_arm(c):
        return np.full((c.m, 3), np.nan)
    return translation_from_dq(c.arm_ref[: c.m, :8])


def _ee_att_err(c):
    if _no_arm(c):
        return np.full(c.m, np.nan)
    return 2.0 * np.linalg.norm(c.rows("ee_log")[:, :3], axis=-1)


def _base_pos_err(c):
    return translation_from_dq(c.rows("q")[:, :8]) - translation_from_dq(c.base_ref[: c.m, :8])


def _base_att_err(c):
    bpose = c.base_ref[: c.m, :8]
    return 2.0 * dq_log(dq_mul(dq_conj(bpose), c.rows("q")[:, :8]))[:, :3]


def _arm_saturated(c):
    n = c.tau_limit.shape[0]
    vq = c.rows("v")[:, 6 : 6 + n]
    return (np.abs(c.rows("arm_tau")) >= c.tau_limit) | (np.abs(vq) >= c.rate_limit)


def _series(name, unit, shape, columns, doc, value):
    return Series(name, unit, shape, columns, doc, value)


#: The closed loop's series, in the order of a result.
CLOSED_LOOP = (
    _series("t", "s", lambda z: (), (), "", lambda c: c.rows("t")),
    _series("q", "-", lambda z: (z.nq,), (), "plant configuration", lambda c: c.rows("q")),
    _series("v", "-", lambda z: (z.nv,), (), "plant velocity", lambda c: c.rows("v")),
    _series("base_pos_err", "m", lambda z: (3,), _XYZ,
            "base position minus its initial one, inertial frame", _base_pos_err),
    _series("com_err", "m", lambda z: (3,), _XYZ,
            "system centre of mass (plant) minus its reference (the start's centre of mass "
            "carried by the base reference), inertial frame", lambda c: c.com_err),
    _series("base_att_err", "rad", lambda z: (3,), _XYZ,
            "base attitude error, rotation vector (base frame)", _base_att_err),
    _series("base_twist", "rad/s, m/s", lambda z: (6,), ("wx", "wy", "wz", "vx", "vy", "vz"),
            "base body twist", lambda c: c.rows("v")[:, :6]),
    _series("ee_pos", "m", lambda z: (3,), _XYZ, "end-effector position, base frame", _ee_pos),
    _series("ee_ref", "m", lambda z: (3,), _XYZ, "end-effector reference position, base frame",
            _ee_ref),
    _series("ee_err", "m", lambda z: (3,), _XYZ, "end-effector position error, base frame",
            lambda c: _ee_pos(c) - _ee_ref(c)),
    _series("ee_att_err", "rad", lambda z: (), (), "end-effector attitude error angle",
            _ee_att_err),
    _series("arm_q", "rad", lambda z: (z.n,), (), "arm joint angles",
            lambda c: c.rows("q")[:, 8 : 8 + c.tau_limit.shape[0]]),
    _series("arm_tau", "N m", lambda z: (z.n,), (),
            "arm joint torques (held over the period, limited)",
            lambda c: np.clip(c.rows("arm_tau"), -c.tau_limit, c.tau_limit)),
    _series("arm_saturated", "-", lambda z: (z.n,), (),
            "1 where the joint's torque or rate limit was reached at the tick", _arm_saturated),
    _series("wrench_cmd", "N, N m", lambda z: (6,), _W6, "commanded base wrench, base frame",
            lambda c: c.rows("wrench")),
    _series("wrench_ff", "N, N m", lambda z: (6,), _W6,
            "feedforward part (the arm's reaction, negated)", lambda c: c.rows("feedforward")),
    _series("arm_reaction", "N, N m", lambda z: (6,), _W6,
            "the arm's reaction wrench on the base as the law planned it (its planned joint "
            "accelerations on the controller model; fed forward or not), base frame",
            lambda c: c.rows("reaction")),
    _series("arm_reaction_applied", "N, N m", lambda z: (6,), _W6,
            "the arm's reaction wrench on the base as the plant applied it: what the arm's "
            "first joints transmit to the base at the tick (forward and inverse dynamics of "
            "the plant at the recorded state with the inputs it applied, the thrusters' mean "
            "over the period), base frame about its origin",
            lambda c: c.applied_reaction),
    _series("wrench_thr", "N, N m", lambda z: (6,), _W6,
            "thrusters' mean wrench over the period (nominal)", lambda c: c.rows("w_thr")),
    _series("wrench_thr_true", "N, N m", lambda z: (6,), _W6,
            "the mean wrench the true thrusters delivered over the period (misalignment, "
            "magnitude errors, valve timing in)",
            lambda c: np.einsum("rs,ks->kr", c.H_true, c.rows("delivered"))),
    _series("thrust_cmd", "N", lambda z: (z.S,), (), "allocated thrusts",
            lambda c: c.rows("sigma")),
    _series("thrust_on", "s", lambda z: (z.S,), (), "pulse widths",
            lambda c: c.rows("n_on") * c.dt),
    _series("thrust_impulse", "N s", lambda z: (z.S,), (), "impulse delivered over the period",
            lambda c: c.rows("mean") * c.period),
    _series("thrust_impulse_true", "N s", lambda z: (z.S,), (),
            "impulse the true valves let through over the period (timing and faults in)",
            lambda c: c.rows("delivered") * c.period),
    _series("thrust_saturated", "-", lambda z: (z.S,), (),
            "1 where the allocated thrust is the thruster's max",
            lambda c: c.rows("sigma") >= c.sigma_max * (1.0 - 1e-9)),
    _series("gimbal_limited", "-", lambda z: (z.K,), (),
            "1 where the plant clipped the gimbal motor (torque or rate limit) in the period "
            "before the tick", lambda c: c.limited["gimbal"]),
    _series("vscmg_spin_limited", "-", lambda z: (z.K,), (),
            "1 where the plant clipped the VSCMG wheel motor (torque or speed limit) in the "
            "period before the tick", lambda c: c.limited["vscmg_wheel"]),
    _series("rw_limited", "-", lambda z: (z.W,), (),
            "1 where the plant clipped the reaction-wheel motor (torque or speed limit) in the "
            "period before the tick", lambda c: c.limited["rw"]),
    _series("alloc_status", "-", lambda z: (), (),
            "allocator status code (AllocationStatus order)",
            lambda c: c.rows("alloc_info")[:, 0]),
    _series("vscmg_torque_cmd", "N m", lambda z: (3,), _XYZ, "torque asked of the VSCMGs",
            lambda c: c.rows("tau_v")),
    _series("vscmg_torque_err", "N m", lambda z: (3,), _XYZ,
            "steering torque error (saturation)", lambda c: c.rows("steer_err")),
    _series("gimbal", "rad", lambda z: (z.K,), (), "gimbal angles", lambda c: c.rows("gimbal")),
    _series("gimbal_rate", "rad/s", lambda z: (z.K,), (), "gimbal rates",
            lambda c: c.rows("gimbal_rate")),
    _series("gimbal_rate_cmd", "rad/s", lambda z: (z.K,), (), "commanded gimbal rates",
            lambda c: c.rows("gimbal_rate_cmd")),
    _series("wheel_speed", "rad/s", lambda z: (z.K,), (), "wheel speeds",
            lambda c: c.rows("vscmg_speed")),
    _series("wheel_accel_cmd", "rad/s^2", lambda z: (z.K,), (), "commanded wheel accelerations",
            lambda c: c.rows("wheel_accel_cmd")),
    _series("det_GGt", "-", lambda z: (), (), "det(G G^T)", lambda c: c.rows("steer_info")[:, 1]),
    _series("det_CCt", "-", lambda z: (), (), "det(C C^T), gimbal mode only",
            lambda c: c.rows("steer_info")[:, 2]),
    _series("rw_speed", "rad/s", lambda z: (z.W,), (), "reaction-wheel speeds",
            lambda c: c.rows("rw_speed")),
    _series("rw_torque_cmd", "N m", lambda z: (z.W,), (), "reaction-wheel motor torques commanded",
            lambda c: c.rows("rw_cmd")),
    _series("rw_torque_err", "N m", lambda z: (3,), _XYZ, "wheel torque error (saturation)",
            lambda c: c.rows("rw_err")),
    _series("dump_torque", "N m", lambda z: (3,), _XYZ,
            "momentum-dumping torque asked of the thrusters", lambda c: c.rows("dump")),
    _series("nav_att_err", "rad", lambda z: (3,), _XYZ,
            "attitude estimate error (sensors on; else 0)", lambda c: c.rows("nav_att_err")),
    _series("nav_pos_err", "m", lambda z: (3,), _XYZ,
            "position estimate error (sensors on; else 0)", lambda c: c.rows("nav_pos_err")),
)  # fmt: skip


def spec(table, sizes: Sizes) -> dict:
    """``name -> (shape, unit, columns, description)`` of a table's series for these sizes
    (what the runner preallocates and checks the size of)."""
    return {s.name: (s.shape(sizes), s.unit, s.columns, s.doc) for s in table}


def values(table, chunk: Chunk) -> dict:
    """``name -> (m, ...) array`` of a table's series for the rows of ``chunk``."""
    return {s.name: s.value(chunk) for s in table}


def _extra_pose(c, model, frame, ee):
    """(m, 8) the pose of the end-effector ``frame`` relative to the base at the chunk's
    true states (the controller model's first ``nq`` coordinates, the base at the
    origin), cached in ``ee`` (frame -> (id of the chunk's record, m, poses))."""
    key = (id(c.R), c.m, c.R.t[0] if c.m else 0.0)
    hit = ee.get(frame)
    if hit is not None and hit[0] == key:
        return hit[1]
    q = np.array(c.rows("q")[:, : model.nq])
    q[:, :8] = model.neutral_configuration()[:8]
    poses = np.array([frame_pose(model, qk, frame) for qk in q]).reshape(-1, 8)
    ee[frame] = (key, poses)
    return poses


def extra_arm_series(system) -> tuple:
    """The end-effector series of each extra arm of ``system`` (``[[extra_arm]]``), named
    with its name: ``ee_pos_<name>``, ``ee_ref_<name>``, ``ee_err_<name>`` (m, base frame)
    and ``ee_att_err_<name>`` (rad), as the first arm's ``ee_pos`` ... but measured at the
    plant's true state (the first arm's from the flight software's estimate: the same with
    perfect knowledge, ``sensors.enabled = false``)."""
    model, out, ee = system.controller_model, [], {}
    for k, x in enumerate(system.extra_arms, start=1):
        frame, r = x.info.ee_frame, 20 * k

        def pos(c, frame=frame):
            return translation_from_dq(_extra_pose(c, model, frame, ee))

        def ref(c, r=r):
            return translation_from_dq(c.arm_ref[: c.m, r : r + 8])

        def att(c, frame=frame, r=r):
            e = dq_mul(dq_conj(c.arm_ref[: c.m, r : r + 8]), _extra_pose(c, model, frame, ee))
            return np.linalg.norm(2.0 * dq_log(e)[:, :3], axis=-1)

        name = x.name
        out += [
            _series(f"ee_pos_{name}", "m", lambda z: (3,), _XYZ,
                    f"arm {name}: end-effector position, base frame", pos),
            _series(f"ee_ref_{name}", "m", lambda z: (3,), _XYZ,
                    f"arm {name}: end-effector reference position, base frame", ref),
            _series(f"ee_err_{name}", "m", lambda z: (3,), _XYZ,
                    f"arm {name}: end-effector position error, base frame",
                    lambda c, pos=pos, ref=ref: pos(c) - ref(c)),
            _series(f"ee_att_err_{name}", "rad", lambda z: (), (),
                    f"arm {name}: end-effector attitude error angle", att),
        ]  # fmt: skip
    return tuple(out)
