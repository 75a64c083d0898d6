"""The flight software of a built system: its blocks made once from the system's devices,
sensors and controllers (:class:`~dqspace.control.flight.software.FlightSoftware`).

* :func:`navigation` -- the sensor suite and the filters of ``[sensors]``
  (:data:`~dqspace.control.flight.navigation.NavigationParams` and its state): gyro
  (sampled every tick; ``gyro_model``: the mean rate since the last tick, or the rate at
  the tick) and star tracker into the attitude MEKF, relative navigation into the
  translation filter (predicted with the planned wrench on the base, thrusters and the
  arm's reaction, through the controller model's inertia), encoders and tachometers for
  the joints and devices.  Each sensor draws from its own generator, spawned from
  ``scenario.seed``.  The filters start at the true initial state (after an initial
  alignment) with the covariance of one star-tracker and one navigation sample; their
  noise models are the sensors' own, scaled by the tuning keys
  (``attitude_process_noise_scale`` on the gyro's ARW^2 and RRW^2,
  ``attitude_measurement_noise_scale`` on the star tracker's variance,
  ``translation_accel_psd``, ``translation_measurement_noise_scale`` on the relative
  navigation's variances);
* :func:`flight_software` -- all of it, with the controllers and the references.
"""

from __future__ import annotations

import numpy as np

from ...control.flight.interfaces import plant_index
from ...control.flight.law import StationKeepingLaw
from ...control.flight.navigation import (
    FilterParams,
    FilterState,
    NavigationParams,
    NavigationState,
    SensorParams,
    SensorState,
)
from ...control.flight.software import FlightSoftware
from ...control.navigation import AttitudeMEKF, TranslationKF
from ...control.sensors import (
    ARCSEC,
    Gyro,
    JointEncoders,
    RateIntegratingGyro,
    RelativeNavigation,
    StarTracker,
    Tachometer,
    arw_from_deg_per_root_hour,
    bias_instability_from_deg_per_hour,
    rrw_from_deg_per_hour_root_hour,
)
from ...dq import quat_exp, quat_mul, rotation_matrix_from_dq, translation_from_dq
from .devices import actuation_params

__all__ = ["flight_software", "navigation", "plant_index_of"]


def flight_software(system) -> FlightSoftware:
    """The :class:`~dqspace.control.flight.software.FlightSoftware` of a built
    :class:`~dqspace.scenarios.build.system.System`."""
    sy, cfg = system, system.cfg
    law = StationKeepingLaw(
        sy.base,
        sy.arm,
        model=sy.controller_model,
        feedforward=cfg["base_controller"]["feedforward"],
    )
    mm = sy.momentum_manager
    python_alloc = sy.allocator is not None and sy.allocator.method.value != "fast"
    return FlightSoftware(
        index=plant_index_of(sy),
        law=law,
        actuation=actuation_params(sy),
        dump_active=mm.active_state if mm is not None else np.zeros(1),
        trajectory=(
            (sy.trajectory, *(x.trajectory for x in sy.extra_arms))
            if sy.extra_arms
            else sy.trajectory
        ),
        base_reference=sy.base_reference,
        ee_frame=sy.arm_info.ee_frame,
        navigation=navigation(sy) if cfg["sensors"]["enabled"] else None,
        allocator=sy.allocator if python_alloc else None,
        thrusters=sy.thrusters,
    )


def plant_index_of(system):
    """The :data:`~dqspace.control.flight.interfaces.PlantIndex` of a built system."""
    sy = system
    cm, wm, n = sy.cluster_model, sy.wheel_model, sy.arm_info.n
    return plant_index(
        sy.controller_model.nq,
        sy.controller_model.nv,
        arm_v=np.arange(6, 6 + n),
        gimbal_q=cm.index.gimbal_q if cm is not None else (),
        gimbal_v=cm.index.gimbal_v if cm is not None else (),
        wheel_v=cm.index.wheel_v if cm is not None else (),
        rw_v=wm.index.wheel_v if wm is not None else (),
    )


def navigation(system):
    """``(NavigationParams, NavigationState)`` of a built system's ``[sensors]`` (module
    docstring)."""
    sy, cfg = system, system.cfg
    s = cfg["sensors"]
    seed = cfg["scenario"]["seed"]
    rng = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(15, i))) for i in range(7)]
    arw = arw_from_deg_per_root_hour(s["gyro_arw"])
    rrw = rrw_from_deg_per_hour_root_hour(s["gyro_rrw"])
    b0 = rng[0].normal(0.0, np.radians(s["gyro_bias"]) / 3600.0, 3)
    dt = 1.0 / cfg["control"]["rate"]
    q0, v0 = sy.q0, sy.v0
    gyro_kw = dict(
        rate=1.0 / dt,
        arw=arw,
        rrw=rrw,
        initial_bias=b0,
        bias_instability=bias_instability_from_deg_per_hour(s["gyro_bias_instability"]),
        bias_instability_band=s["gyro_bias_instability_band"],
    )
    mean_rate = s["gyro_model"] == "mean_rate"
    if mean_rate:  # the attitude a period before the start, at the initial rate
        gyro = RateIntegratingGyro(
            rng[1], previous_attitude=quat_mul(q0[:4], quat_exp(-0.5 * dt * v0[:3])), **gyro_kw
        )
    else:
        gyro = Gyro(rng[1], **gyro_kw)
    st_sigma = np.maximum(np.asarray(s["star_tracker_noise_arcsec"]), 1e-3) * ARCSEC
    star = StarTracker(
        rng[2],
        rate=s["star_tracker_rate"],
        noise_arcsec=s["star_tracker_noise_arcsec"],
        latency=s["star_tracker_latency"],
    )
    pn = max(s["relnav_position_noise"], 1e-9)
    vn = max(s["relnav_velocity_noise"], 1e-9)
    relnav = RelativeNavigation(rng[3], rate=s["relnav_rate"], position_noise=pn, velocity_noise=vn)
    enc = JointEncoders(rng[4], quantum=2.0 * np.pi / 2 ** s["encoder_bits"])
    jt = Tachometer(rng[5], noise=s["joint_rate_noise"], quantum=1e-9)
    dt_ = Tachometer(rng[6], noise=s["tachometer_noise"], quantum=1e-9)
    P0 = np.diag(list(st_sigma**2) + [(np.radians(s["gyro_bias"]) / 3600.0) ** 2 + 1e-20] * 3)
    qs, rs = s["attitude_process_noise_scale"], s["attitude_measurement_noise_scale"]
    mekf = AttitudeMEKF(
        q0[:4], np.zeros(3), P0, arw=arw * qs**0.5, rrw=rrw * qs**0.5,
        star_tracker_sigma=st_sigma * rs**0.5,
    )  # fmt: skip
    r0 = translation_from_dq(q0[:8])
    v0_I = rotation_matrix_from_dq(q0[:8]) @ v0[3:6]
    ts = s["translation_measurement_noise_scale"] ** 0.5
    tkf = TranslationKF(
        np.r_[r0, v0_I],
        np.diag([pn**2] * 3 + [vn**2] * 3),
        accel_psd=s["translation_accel_psd"],
        position_sigma=pn * ts,
        velocity_sigma=vn * ts,
    )
    ints, reals = sy.controller_model.packed
    sensors = SensorParams(
        star.params, gyro.params, relnav.params, enc.quantum, enc.noise, jt.quantum, jt.noise,
        dt_.quantum, dt_.noise,
    )  # fmt: skip
    sensor_state = SensorState(
        star.schedule, gyro.state, relnav.schedule, star.rng, gyro.rng, relnav.rng, enc.rng,
        jt.rng, dt_.rng,
    )  # fmt: skip
    filters = FilterParams(dt, mean_rate, ints, reals, mekf.params, tkf.params)
    filter_state = FilterState(
        mekf.state, tkf.state, np.zeros(3), np.zeros(8), np.zeros(3), np.zeros(1)
    )
    return NavigationParams(sensors, filters), NavigationState(sensor_state, filter_state)
