"""The interface types of one control tick, declared once.

A tick of the flight software reads the plant through its sensors and hands the plant its
commands; in between it knows only its estimate::

    plant state (q, v) --sense--> Measurements --filter--> Estimate
    Estimate + references --laws--> LawWork --actuation--> ActuationWork --> Commands

Each type is a named tuple of NumPy arrays (numba-compatible; a scalar that a kernel
writes is a (1,) array), made by its ``*_arrays`` function:

* :data:`PlantIndex` -- where the flight software's quantities sit in the plant state
  (what a sensor reads);
* :data:`~dqspace.control.flight.navigation.Measurements` -- what the sensors delivered at
  the tick (declared with the sensing stage, which writes it);
* :data:`Estimate` -- what the flight software knows (the state the controllers see);
* :data:`Commands` -- what the plant holds over the next control period.

The laws' and actuation's work arrays (:data:`~dqspace.control.flight.law.LawWork`,
:data:`~dqspace.control.flight.actuation.ActuationWork`) are declared with their stages.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..._jit import param_array

__all__ = [
    "PlantIndex",
    "plant_index",
    "Estimate",
    "estimate_arrays",
    "Commands",
    "command_arrays",
]

#: Where the flight software's quantities sit in the plant state: the controller model's
#: sizes ``nq_c``, ``nv_c`` (the plant's first coordinates: base pose, arm joints); the arm
#: joints in v ``arm_v`` (n,); the VSCMG gimbal angles in q ``gimbal_q`` (K,), their rates
#: ``gimbal_v`` and wheel speeds ``wheel_v`` (K,) in v; the reaction wheels' speeds
#: ``rw_v`` (W,) in v (int64 arrays).
PlantIndex = namedtuple(
    "PlantIndex", ["nq_c", "nv_c", "arm_v", "gimbal_q", "gimbal_v", "wheel_v", "rw_v"]
)


def plant_index(nq_c, nv_c, arm_v=(), gimbal_q=(), gimbal_v=(), wheel_v=(), rw_v=()):
    """A :data:`PlantIndex` (the index arrays as int64)."""
    i = [param_array(np.reshape(x, -1), np.int64) for x in (arm_v, gimbal_q, gimbal_v)]
    j = [param_array(np.reshape(x, -1), np.int64) for x in (wheel_v, rw_v)]
    return PlantIndex(int(nq_c), int(nv_c), *i, *j)


#: What the flight software knows at a tick (:func:`estimate_arrays`): ``q`` (nq_c,), ``v``
#: (nv_c,) the controller model's state (base pose and twist, arm joints); ``gimbal``
#: [rad], ``gimbal_rate`` [rad/s], ``vscmg_speed`` [rad/s] (K,); ``rw_speed`` (W,) [rad/s];
#: ``base_rate`` (3,) [rad/s] base axes; the navigation's ``attitude`` (4,) ``q_IB`` and
#: ``position`` (3,) [m] inertial (with perfect knowledge, left as they are).
Estimate = namedtuple(
    "Estimate",
    ["q", "v", "gimbal", "gimbal_rate", "vscmg_speed", "rw_speed", "base_rate", "attitude",
     "position"],
)  # fmt: skip


def estimate_arrays(nq_c: int, nv_c: int, K: int, W: int) -> Estimate:
    """Zeroed :data:`Estimate` arrays for a controller model of sizes ``nq_c``, ``nv_c``, K
    VSCMGs and W reaction wheels."""
    size = dict(q=nq_c, v=nv_c, gimbal=K, gimbal_rate=K, vscmg_speed=K, rw_speed=W)
    size.update(attitude=4)
    return Estimate(*(np.zeros(size.get(f, 3)) for f in Estimate._fields))


#: What the plant holds over one control period (:func:`command_arrays`): ``arm_tau``
#: (n,) [N m] arm joint torques (forces [N] for prismatic joints), ``rw_torque`` (W,) [N m]
#: reaction-wheel motor torques; the thrusters' pulses ``n_on`` (S,) [dynamics steps on],
#: ``on_level``, ``off_level`` (S,) [N] thrust while on and off; the VSCMGs'
#: ``gimbal_rate_cmd`` [rad/s] and ``wheel_accel_cmd`` [rad/s^2] (K,).
Commands = namedtuple(
    "Commands",
    ["arm_tau", "rw_torque", "n_on", "on_level", "off_level", "gimbal_rate_cmd",
     "wheel_accel_cmd"],
)  # fmt: skip


def command_arrays(n: int, S: int, K: int, W: int) -> Commands:
    """Zeroed :data:`Commands` for n arm joints, S thrusters, K VSCMGs and W wheels."""
    size = dict(arm_tau=n, rw_torque=W, n_on=S, on_level=S, off_level=S)
    return Commands(*(np.zeros(size.get(f, K)) for f in Commands._fields))
