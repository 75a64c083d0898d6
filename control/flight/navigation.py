"""The navigation of one control tick, composed and compiled: sensors -> filters -> the state
the controllers see.

:func:`navigation_kernel`, at a tick t with the plant's true state ``(q, v)``:

1. propagates the attitude MEKF over the last period with the last gyro sample, and the
   translation filter with the last planned acceleration (:func:`commanded_force_kernel`)
   (neither before the first gyro sample);
2. runs the star tracker on the true ``q_IB``; a sample newly delivered updates the MEKF;
3. runs the relative navigation on the base's true position and inertial velocity; a sample
   newly delivered updates the translation filter (position and velocity);
4. takes the gyro's sample of the true body rate (it is held over the next period);
5. writes the estimates: the base pose from ``q^`` (the sign of the true attitude's
   hemisphere) and ``r^``; the base twist ``[w_meas - b^, R^T v^]``; the joint angles through
   the encoders and the joint rates through the joint tachometer; the gimbal angles
   (encoders), gimbal rates, VSCMG wheel speeds and reaction-wheel speeds (the device
   tachometer); and the estimate errors (attitude ``2 vec(q^* o q)`` short way [rad],
   position ``r^ - r`` [m]).

:func:`commanded_force_kernel` turns the force the tick plans on the base (base axes) into
the inertial acceleration of the next prediction.  The sensors and filters are those of
:mod:`~dqspace.control.sensors` and :mod:`~dqspace.control.navigation` (their kernels);
:class:`~dqspace.scenarios.flight.Navigation` builds the arrays from a scenario's
``[sensors]`` and wraps the kernels, and the scenario runner's compiled loop calls them.
Kernels trust their inputs.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ...dq.kernels import dq_from_quat_translation, dq_translation, q_mul, q_to_rotation_matrix
from ..navigation import (
    mekf_propagate_kernel,
    mekf_update_kernel,
    translation_predict_kernel,
    translation_update_kernel,
)
from ..sensors import encoder_kernel, gyro_kernel, relative_navigation_kernel, star_tracker_kernel

__all__ = [
    "NavigationParams",
    "NavigationState",
    "Estimate",
    "estimate_arrays",
    "navigation_kernel",
    "commanded_force_kernel",
]

#: What :func:`navigation_kernel` reads: ``dt`` [s] the control period (the filters'
#: step), ``mass`` [kg] of the base with its devices (the planned acceleration); the sensors'
#: ``star`` (:data:`~dqspace.control.sensors.StarTrackerParams`), ``gyro``
#: (:data:`~dqspace.control.sensors.GyroParams`), ``relnav``
#: (:data:`~dqspace.control.sensors.RelativeNavigationParams`); the filters' ``mekf``
#: (:data:`~dqspace.control.navigation.MEKFParams`), ``translation``
#: (:data:`~dqspace.control.navigation.TranslationKFParams`); the quanta and noises (1 sigma)
#: of the encoders [rad], the joint tachometer and the device tachometer [rad/s].
NavigationParams = namedtuple(
    "NavigationParams",
    [
        "dt", "mass", "star", "gyro", "relnav", "mekf", "translation",
        "encoder_quantum", "encoder_noise", "joint_rate_quantum", "joint_rate_noise",
        "device_rate_quantum", "device_rate_noise",
    ],
)  # fmt: skip

#: What carries over from tick to tick: the sensors' ``star``, ``relnav``
#: (:data:`~dqspace.control.sensors.Schedule`) and ``gyro``
#: (:data:`~dqspace.control.sensors.GyroState`); the filters' ``mekf``
#: (:data:`~dqspace.control.navigation.MEKFState`), ``translation``
#: (:data:`~dqspace.control.navigation.TranslationKFState`); ``accel`` (3,) the planned
#: inertial acceleration [m/s^2]; ``pose`` (8,) the estimated base pose; and each sensor's
#: ``numpy.random.Generator``: ``star_rng``, ``gyro_rng``, ``relnav_rng``, ``encoder_rng``,
#: ``joint_rate_rng``, ``device_rate_rng``.
NavigationState = namedtuple(
    "NavigationState",
    [
        "star", "gyro", "relnav", "mekf", "translation", "accel", "pose",
        "star_rng", "gyro_rng", "relnav_rng", "encoder_rng", "joint_rate_rng", "device_rate_rng",
    ],
)  # fmt: skip

#: What the flight software knows at a tick (:func:`estimate_arrays` makes the arrays): ``q``
#: (nq_c,), ``v`` (nv_c,) the controller model's state; ``gimbal`` [rad], ``gimbal_rate``
#: [rad/s], ``vscmg_speed`` [rad/s] (K,); ``rw_speed`` (W,) [rad/s]; ``base_rate`` (3,)
#: [rad/s] base axes; the estimate errors ``att_err`` [rad] and ``pos_err`` [m] (3,).
Estimate = namedtuple(
    "Estimate",
    ["q", "v", "gimbal", "gimbal_rate", "vscmg_speed", "rw_speed", "base_rate", "att_err",
     "pos_err"],
)  # fmt: skip


def estimate_arrays(nq_c: int, nv_c: int, K: int, W: int) -> Estimate:
    """Zeroed :data:`Estimate` arrays for a controller model of sizes ``nq_c``, ``nv_c``, K
    VSCMGs and W reaction wheels."""
    size = dict(q=nq_c, v=nv_c, gimbal=K, gimbal_rate=K, vscmg_speed=K, rw_speed=W)
    return Estimate(*(np.zeros(size.get(f, 3)) for f in Estimate._fields))


@njit(cache=True)
def navigation_kernel(p, s, ix, t, q, v, out):
    """One tick's navigation (module docstring).

    Parameters
    ----------
    p : NavigationParams
    s : NavigationState, advanced (sensors, filters, generators)
    ix : the plant index (:data:`~dqspace.scenarios._loop.PlantIndex`): ``nq_c``, ``nv_c``
        the controller model's sizes, ``gimbal_q`` (K,) in q, ``gimbal_v``, ``wheel_v`` (K,)
        and ``rw_v`` (W,) in v (int64)
    t : float, the tick's time [s]
    q, v : (nq,), (nv,) the plant's true state (base pose first, then the arm joints)
    out : Estimate, written
    """
    sch = s.gyro.schedule
    if sch.delivered[0] > 0:  # propagate over the last period with its gyro sample
        mekf_propagate_kernel(p.mekf, s.mekf, sch.last, p.dt)
        translation_predict_kernel(p.translation, s.translation, s.accel, p.dt)
    if star_tracker_kernel(p.star, s.star, s.star_rng, t, q[:4]) > 0:
        mekf_update_kernel(p.mekf, s.mekf, s.star.last)
    R = np.empty((3, 3))
    r_true = np.empty(3)
    v_true = np.empty(3)
    q_to_rotation_matrix(q[:4], R)
    dq_translation(q[:8], r_true)
    for i in range(3):
        v_true[i] = R[i, 0] * v[3] + R[i, 1] * v[4] + R[i, 2] * v[5]
    if relative_navigation_kernel(p.relnav, s.relnav, s.relnav_rng, t, r_true, v_true) > 0:
        translation_update_kernel(p.translation, s.translation, s.relnav.last)
    gyro_kernel(p.gyro, s.gyro, s.gyro_rng, t, v[:3])
    # ---- the estimates
    q_hat = s.mekf.q.copy()
    if q_hat[0] * q[0] + q_hat[1] * q[1] + q_hat[2] * q[2] + q_hat[3] * q[3] < 0.0:
        for j in range(4):
            q_hat[j] = -q_hat[j]
    x = s.translation.x
    dq_from_quat_translation(q_hat, x[:3], s.pose)
    q_to_rotation_matrix(q_hat, R)
    nq_c, nv_c = ix.nq_c, ix.nv_c
    out.q[:8] = s.pose
    out.q[8:] = q[8:nq_c]
    encoder_kernel(p.encoder_quantum, p.encoder_noise, s.encoder_rng, out.q[8:], out.q[8:])
    has_rate = sch.delivered[0] > 0
    for j in range(3):
        out.base_rate[j] = (sch.last[j] if has_rate else 0.0) - s.mekf.bias[j]
        out.v[j] = out.base_rate[j]
        out.v[3 + j] = R[0, j] * x[3] + R[1, j] * x[4] + R[2, j] * x[5]
    out.v[6:] = v[6:nv_c]
    encoder_kernel(p.joint_rate_quantum, p.joint_rate_noise, s.joint_rate_rng, out.v[6:], out.v[6:])
    conj = np.empty(4)
    e = np.empty(4)
    conj[0] = q_hat[0]
    for j in range(1, 4):
        conj[j] = -q_hat[j]
    q_mul(conj, q[:4], e)
    two = -2.0 if e[0] < 0.0 else 2.0
    for j in range(3):
        out.att_err[j] = two * e[1 + j]
        out.pos_err[j] = x[j] - r_true[j]
    # ---- the devices
    for i in range(ix.gimbal_q.shape[0]):
        out.gimbal[i] = q[ix.gimbal_q[i]]
        out.gimbal_rate[i] = v[ix.gimbal_v[i]]
        out.vscmg_speed[i] = v[ix.wheel_v[i]]
    for i in range(ix.rw_v.shape[0]):
        out.rw_speed[i] = v[ix.rw_v[i]]
    encoder_kernel(p.encoder_quantum, p.encoder_noise, s.encoder_rng, out.gimbal, out.gimbal)
    for rates in (out.gimbal_rate, out.vscmg_speed, out.rw_speed):
        encoder_kernel(p.device_rate_quantum, p.device_rate_noise, s.device_rate_rng, rates, rates)


@njit(cache=True)
def commanded_force_kernel(mass, pose, f_B, accel):
    """The force ``f_B`` (3,) [N] the tick plans on the base (base axes: the thrusters' mean
    force plus the arm's planned reaction) as the next prediction's inertial acceleration
    ``accel = R(q^) f_B / mass`` (3,) [m/s^2]; ``mass`` [kg] (``NavigationParams.mass``),
    ``pose`` (8,) the estimated base pose and ``accel`` the planned acceleration of the
    :data:`NavigationState` (after :func:`navigation_kernel`)."""
    R = np.empty((3, 3))
    q_to_rotation_matrix(pose[:4], R)
    for i in range(3):
        accel[i] = (R[i, 0] * f_B[0] + R[i, 1] * f_B[1] + R[i, 2] * f_B[2]) / mass
