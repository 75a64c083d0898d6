"""What the flight software knows at a tick: the sensors, then the filters.

Three stages, each one compiled kernel:

* :func:`sense_kernel` -- the sensor models on the plant's true state (they are what sees
  the truth): the star tracker on the true attitude ``q_IB``, the relative navigation on
  the base's true position and inertial velocity, the gyro on the true attitude (a
  rate-integrating gyro: the mean rate since the last tick) or on the true body rate, the
  encoders on the joint and gimbal angles, the tachometers on the joint, gimbal and wheel
  rates; each draws from its own generator (so the order of the sensors does not change
  a draw).  Writes :data:`Measurements`.
* :func:`filter_kernel` -- the filters on the measurements only.  From the second tick
  on, the attitude MEKF propagates over the last period with the gyro sample that covers
  it: with a rate-integrating gyro (``FilterParams.mean_rate``) this tick's sample, the
  mean rate from the last tick to this one; with a gyro that samples the rate, the last
  tick's sample held over the period.  Then it is updated with a new star-tracker sample
  (taken at this tick), so the estimate is the attitude at this tick.  The translation
  filter predicts over the period with the acceleration the last tick planned
  (:func:`planned_acceleration_kernel`), then is updated with a new relative-navigation
  sample.  Then the estimate: the base pose from ``q^`` (in the hemisphere of the newest
  star-tracker sample) and ``r^``, the base twist ``[w_meas - b^, R(q^)^T v^]``, the
  joints and devices as measured.  Writes
  :data:`~dqspace.control.flight.interfaces.Estimate`.
* :func:`planned_acceleration_kernel` -- after the laws and the actuation: the base's
  acceleration over the next period as the flight software knows it (the thrusters'
  nominal mean force, the law's torque and the arm's planned reaction through the
  controller model's locked inertia), the translation filter's next prediction.

With perfect knowledge (no sensors) :func:`truth_kernel` writes the estimate from the true
state instead.  :func:`read_devices` is the one readout of the momentum devices from the
plant state (both paths use it).  The sensors and filters are those of
:mod:`~dqspace.control.sensors` and :mod:`~dqspace.control.navigation` (their kernels);
the scenario's build step makes the parameter and state tuples.  Kernels trust their
inputs.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ...dq.kernels import dq_from_quat_translation, dq_translation, q_mul, q_to_rotation_matrix
from ...multibody.kernels import crba
from ..navigation import (
    mekf_propagate_kernel,
    mekf_update_kernel,
    translation_predict_kernel,
    translation_update_kernel,
)
from ..sensors import (
    encoder_kernel,
    gyro_kernel,
    mean_rate_gyro_kernel,
    relative_navigation_kernel,
    star_tracker_kernel,
)

__all__ = [
    "Measurements",
    "measurement_arrays",
    "SensorParams",
    "SensorState",
    "FilterParams",
    "FilterState",
    "NavigationParams",
    "NavigationState",
    "sense_kernel",
    "filter_kernel",
    "truth_kernel",
    "read_devices",
    "planned_acceleration_kernel",
    "estimate_error_kernel",
]

#: What the sensors delivered at a tick (:func:`measurement_arrays`): the star tracker's
#: newest attitude ``star`` (4,) and ``star_new`` (1,) the samples it delivered at this
#: tick; the gyro's newest rate ``gyro`` (3,) [rad/s] and ``gyro_valid`` (1,) 1 once it
#: has delivered one; the relative navigation's newest ``relnav`` (6,) (position [m],
#: velocity [m/s], inertial) and ``relnav_new`` (1,); the encoders' joint angles ``joints``
#: (n,) and the joint tachometer's ``joint_rates`` (n,); the device encoders and
#: tachometers: ``gimbal`` [rad], ``gimbal_rate`` [rad/s], ``vscmg_speed`` [rad/s] (K,),
#: ``rw_speed`` (W,) [rad/s].
Measurements = namedtuple(
    "Measurements",
    ["star", "star_new", "gyro", "gyro_valid", "relnav", "relnav_new", "joints",
     "joint_rates", "gimbal", "gimbal_rate", "vscmg_speed", "rw_speed"],
)  # fmt: skip


def measurement_arrays(n: int, K: int, W: int) -> Measurements:
    """Zeroed :data:`Measurements` for n arm joints, K VSCMGs and W reaction wheels."""
    size = dict(star=4, gyro=3, relnav=6, joints=n, joint_rates=n, gimbal=K, gimbal_rate=K)
    size.update(vscmg_speed=K, rw_speed=W)
    return Measurements(*(np.zeros(size.get(f, 1)) for f in Measurements._fields))


#: The sensor suite (:func:`sense_kernel`): ``star``
#: (:data:`~dqspace.control.sensors.StarTrackerParams`), ``gyro``
#: (:data:`~dqspace.control.sensors.GyroParams`), ``relnav``
#: (:data:`~dqspace.control.sensors.RelativeNavigationParams`); the quanta and noises (1
#: sigma) of the encoders [rad], the joint tachometer and the device tachometer [rad/s].
SensorParams = namedtuple(
    "SensorParams",
    ["star", "gyro", "relnav", "encoder_quantum", "encoder_noise", "joint_rate_quantum",
     "joint_rate_noise", "device_rate_quantum", "device_rate_noise"],
)  # fmt: skip

#: The sensors' state: ``star``, ``relnav`` (:data:`~dqspace.control.sensors.Schedule`),
#: ``gyro`` (:data:`~dqspace.control.sensors.GyroState`) and each sensor's
#: ``numpy.random.Generator``: ``star_rng``, ``gyro_rng``, ``relnav_rng``, ``encoder_rng``
#: (joints, then gimbals), ``joint_rate_rng``, ``device_rate_rng``.
SensorState = namedtuple(
    "SensorState",
    ["star", "gyro", "relnav", "star_rng", "gyro_rng", "relnav_rng", "encoder_rng",
     "joint_rate_rng", "device_rate_rng"],
)  # fmt: skip

#: The filters (:func:`filter_kernel`, :func:`planned_acceleration_kernel`): ``dt`` [s]
#: their step (the control period), ``mean_rate`` (bool) the gyro's sample at a tick is the
#: mean rate since the last tick (else the rate at the last tick, held), ``ints``,
#: ``reals`` the controller model's packed arrays (the planned acceleration), ``mekf``
#: (:data:`~dqspace.control.navigation.MEKFParams`), ``translation``
#: (:data:`~dqspace.control.navigation.TranslationKFParams`).
FilterParams = namedtuple(
    "FilterParams", ["dt", "mean_rate", "ints", "reals", "mekf", "translation"]
)

#: The filters' state: ``mekf`` (:data:`~dqspace.control.navigation.MEKFState`),
#: ``translation`` (:data:`~dqspace.control.navigation.TranslationKFState`), ``accel`` (3,)
#: the planned inertial acceleration [m/s^2] of the next prediction, ``pose`` (8,) the
#: estimated base pose, ``rate`` (3,) the last tick's gyro sample [rad/s] and
#: ``rate_valid`` (1,) 1 once there is one (from the second tick on, the filters step).
FilterState = namedtuple(
    "FilterState", ["mekf", "translation", "accel", "pose", "rate", "rate_valid"]
)

#: A navigation: ``sensors`` (:data:`SensorParams`), ``filters`` (:data:`FilterParams`).
NavigationParams = namedtuple("NavigationParams", ["sensors", "filters"])
#: Its state: ``sensors`` (:data:`SensorState`), ``filters`` (:data:`FilterState`).
NavigationState = namedtuple("NavigationState", ["sensors", "filters"])


@njit(cache=True)
def read_devices(ix, q, v, gimbal, gimbal_rate, vscmg_speed, rw_speed):
    """The momentum devices' true state from the plant's ``q``, ``v`` (``ix`` a
    :data:`~dqspace.control.flight.interfaces.PlantIndex`): gimbal angles [rad], gimbal
    rates and VSCMG wheel speeds (K,), reaction-wheel speeds (W,) [rad/s]."""
    for i in range(ix.gimbal_q.shape[0]):
        gimbal[i] = q[ix.gimbal_q[i]]
        gimbal_rate[i] = v[ix.gimbal_v[i]]
        vscmg_speed[i] = v[ix.wheel_v[i]]
    for i in range(ix.rw_v.shape[0]):
        rw_speed[i] = v[ix.rw_v[i]]


@njit(cache=True)
def truth_kernel(ix, q, v, est):
    """Perfect knowledge: the plant's true ``q``, ``v`` as the estimate ``est`` (its
    ``attitude`` and ``position`` left as they are)."""
    est.q[:] = q[: ix.nq_c]
    est.v[:] = v[: ix.nv_c]
    read_devices(ix, q, v, est.gimbal, est.gimbal_rate, est.vscmg_speed, est.rw_speed)
    for j in range(3):
        est.base_rate[j] = v[j]


@njit(cache=True)
def sense_kernel(p, s, ix, t, q, v, m):
    """The sensors at the tick ``t`` [s] on the plant's true ``q`` (nq,), ``v`` (nv,)
    (module docstring): ``p`` a :data:`SensorParams`, ``s`` a :data:`SensorState`
    (advanced), ``ix`` a :data:`~dqspace.control.flight.interfaces.PlantIndex`; writes
    ``m`` (:data:`~dqspace.control.flight.interfaces.Measurements`)."""
    m.star_new[0] = star_tracker_kernel(p.star, s.star, s.star_rng, t, q[:4])
    m.star[:] = s.star.last
    R = np.empty((3, 3))
    r_true = np.empty(3)
    v_true = np.empty(3)
    q_to_rotation_matrix(q[:4], R)
    dq_translation(q[:8], r_true)
    for i in range(3):
        v_true[i] = R[i, 0] * v[3] + R[i, 1] * v[4] + R[i, 2] * v[5]
    m.relnav_new[0] = relative_navigation_kernel(
        p.relnav, s.relnav, s.relnav_rng, t, r_true, v_true
    )
    m.relnav[:] = s.relnav.last
    if p.gyro.mean_rate:
        mean_rate_gyro_kernel(p.gyro, s.gyro, s.gyro_rng, t, q[:4])
    else:
        gyro_kernel(p.gyro, s.gyro, s.gyro_rng, t, v[:3])
    sch = s.gyro.schedule
    m.gyro[:] = sch.last
    m.gyro_valid[0] = 1.0 if sch.delivered[0] > 0 else 0.0
    m.joints[:] = q[8 : ix.nq_c]
    encoder_kernel(p.encoder_quantum, p.encoder_noise, s.encoder_rng, m.joints, m.joints)
    m.joint_rates[:] = v[6 : ix.nv_c]
    encoder_kernel(
        p.joint_rate_quantum, p.joint_rate_noise, s.joint_rate_rng, m.joint_rates, m.joint_rates
    )
    read_devices(ix, q, v, m.gimbal, m.gimbal_rate, m.vscmg_speed, m.rw_speed)
    encoder_kernel(p.encoder_quantum, p.encoder_noise, s.encoder_rng, m.gimbal, m.gimbal)
    for rates in (m.gimbal_rate, m.vscmg_speed, m.rw_speed):
        encoder_kernel(p.device_rate_quantum, p.device_rate_noise, s.device_rate_rng, rates, rates)


@njit(cache=True)
def filter_kernel(p, s, m, est):
    """The filters on the tick's measurements ``m`` (module docstring): ``p`` a
    :data:`FilterParams`, ``s`` a :data:`FilterState` (advanced); writes ``est``
    (:data:`~dqspace.control.flight.interfaces.Estimate`)."""
    if s.rate_valid[0] > 0.0:  # propagate over the last period with its gyro sample:
        if p.mean_rate:  # this tick's, the mean rate since the last tick
            mekf_propagate_kernel(p.mekf, s.mekf, m.gyro, p.dt)
        else:  # the last tick's, held
            mekf_propagate_kernel(p.mekf, s.mekf, s.rate, p.dt)
        translation_predict_kernel(p.translation, s.translation, s.accel, p.dt)
    if m.star_new[0] > 0.0:
        mekf_update_kernel(p.mekf, s.mekf, m.star)
    if m.relnav_new[0] > 0.0:
        translation_update_kernel(p.translation, s.translation, m.relnav)
    s.rate[:] = m.gyro  # held over the next period
    s.rate_valid[0] = m.gyro_valid[0]
    # ---- the estimate
    q_hat = est.attitude
    q_hat[:] = s.mekf.q
    if (
        q_hat[0] * m.star[0] + q_hat[1] * m.star[1] + q_hat[2] * m.star[2] + q_hat[3] * m.star[3]
        < 0
    ):
        for j in range(4):
            q_hat[j] = -q_hat[j]
    x = s.translation.x
    est.position[:] = x[:3]
    dq_from_quat_translation(q_hat, x[:3], s.pose)
    R = np.empty((3, 3))
    q_to_rotation_matrix(q_hat, R)
    est.q[:8] = s.pose
    est.q[8:] = m.joints
    for j in range(3):
        est.base_rate[j] = (m.gyro[j] if m.gyro_valid[0] > 0.0 else 0.0) - s.mekf.bias[j]
        est.v[j] = est.base_rate[j]
        est.v[3 + j] = R[0, j] * x[3] + R[1, j] * x[4] + R[2, j] * x[5]
    est.v[6:] = m.joint_rates
    est.gimbal[:] = m.gimbal
    est.gimbal_rate[:] = m.gimbal_rate
    est.vscmg_speed[:] = m.vscmg_speed
    est.rw_speed[:] = m.rw_speed


@njit(cache=True)
def planned_acceleration_kernel(p, est, wrench, reaction, compensation, w_thr, accel):
    """The base's acceleration over the next period as the flight software knows it: the
    translation filter's next prediction ``accel`` (3,) [m/s^2] (inertial).

    The controller model's dynamics (base, devices locked in, arm) give the base's
    acceleration ``a_b = M_bb^-1 (u - ID(q, v, [0; acc])_b)`` (6,) ``[dw, dv]`` (body
    axes) for a generalized force ``u`` on the base and the arm's planned joint
    accelerations ``acc``; ``M_bb`` (6, 6) is the locked inertia of the whole system about
    the base (at the estimated joints, :func:`~dqspace.multibody.kernels.crba`): a force on
    the base moves the arm's mass too.  The arm's planned ``reaction`` (6,) ``[f, tau]``
    [N, N m] (base axes) is ``-swap(ID(q, v, [0; acc])_b)``, so
    ``a_b = M_bb^-1 swap([f_thr, tau] + reaction)``: the force the thrusters deliver as
    the flight software knows it (their nominal mean wrench ``w_thr``, the pulses it
    commanded) and the torque the law asked for (``wrench``; the momentum devices and the
    thrusters deliver it).  Its origin's inertial acceleration is ``R(q^) (dv + w x v)``
    with the estimated body twist ``[w, v]`` (``est``, the tick's
    :data:`~dqspace.control.flight.interfaces.Estimate`).  ``p`` a :data:`FilterParams`.
    (With the base law's feedforward the reaction also carries the base reference's
    acceleration, ``-M_bb a_ref``, which this prediction then misses: zero for a held
    pose.)  A law that compensates an estimated external wrench (``compensation`` (6,)
    ``[f, tau]``, the law's :data:`~dqspace.control.flight.law.LawWork`; zeros for the PD)
    expects the disturbance to take that part: ``u`` is less it, so the prediction carries
    the law's estimate of the disturbance."""
    nv = est.v.shape[0]
    M = np.empty((nv, nv))
    crba(p.ints, p.reals, est.q, M)
    Mbb = np.empty((6, 6))
    for i in range(6):
        for j in range(6):
            Mbb[i, j] = M[i, j]
    u = np.empty(6)  # [torque, force]
    for j in range(3):
        u[j] = wrench[3 + j] - compensation[3 + j] + reaction[3 + j]
        u[3 + j] = w_thr[j] - compensation[j] + reaction[j]
    a = np.linalg.solve(Mbb, u)
    w, v = est.v[:3], est.v[3:6]
    lin = np.empty(3)
    lin[0] = a[3] + (w[1] * v[2] - w[2] * v[1])
    lin[1] = a[4] + (w[2] * v[0] - w[0] * v[2])
    lin[2] = a[5] + (w[0] * v[1] - w[1] * v[0])
    R = np.empty((3, 3))
    q_to_rotation_matrix(est.q[:4], R)
    for i in range(3):
        accel[i] = R[i, 0] * lin[0] + R[i, 1] * lin[1] + R[i, 2] * lin[2]


@njit(cache=True)
def estimate_error_kernel(est, q, att_err, pos_err):
    """The navigation's errors against the truth (a simulation's diagnostic, not flight
    software): attitude ``2 vec(q^* o q_IB)`` short way [rad] (3,) and position ``r^ - r``
    [m] (3,), ``q`` the plant's true configuration."""
    conj = np.empty(4)
    e = np.empty(4)
    r_true = np.empty(3)
    q_hat = est.attitude
    conj[0] = q_hat[0]
    for j in range(1, 4):
        conj[j] = -q_hat[j]
    q_mul(conj, q[:4], e)
    dq_translation(q[:8], r_true)
    two = -2.0 if e[0] < 0.0 else 2.0
    for j in range(3):
        att_err[j] = two * e[1 + j]
        pos_err[j] = est.position[j] - r_true[j]
