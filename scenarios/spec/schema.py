"""The scenario schema: every key a scenario file may hold, with its type, unit, default
and range.  ``dqspace show SCENARIO`` prints a scenario resolved against it."""

from .config import Field as F
from .config import Section
from .requirements import DEFAULT_REQUIREMENTS
from .schema_arms import extra_arm_sections
from .schema_capture import CAPTURE_METRICS, CAPTURE_SECTIONS
from .schema_devices import DEVICE_SECTIONS

__all__ = ["SCHEMA", "MIN_STEP"]

_POS = dict(min=0.0, min_inclusive=False)
#: the smallest integration step [s] a scenario may ask for
MIN_STEP = 1e-9

SCHEMA = {
    "scenario": Section(
        {
            "name": F(
                "name",
                doc="scenario name, also the default output directory runs/<name>: ASCII "
                "letters, digits, '-', '_', '.', not starting with '.', at most 100 characters",
            ),
            "description": F("str", ""),
            "kind": F(
                "choice",
                "closed_loop",
                choices=("closed_loop", "open_loop", "capture"),
                doc="closed_loop: controllers and actuators; open_loop: prescribed base wrench; "
                "capture: a closed loop that grasps the [target] ([capture])",
            ),
            "duration": F("float", 20.0, "s", **_POS),
            "seed": F("int", 0, min=0, doc="root seed of every random draw (noise)"),
            "plausibility_warnings": F(
                "bool",
                True,
                doc="closed loop: warn at load about masses and inertias implausible for "
                "the sizes they imply (a density outside 1 to 20000 kg/m^3, a base's radius "
                "of gyration outside 0.1 to 10 times its cube's); false: no such warnings",
            ),
        }
    ),
    "integrator": Section(
        {
            "method": F("choice", "rk4", choices=("rk4", "adaptive")),
            "dt": F("float", 1e-3, "s", min=MIN_STEP, max=0.1, doc="RK4 step (rk4)"),
            "rtol": F("float", 1e-8, min=0.0, min_inclusive=False, doc="adaptive only"),
            "atol": F("float", 1e-8, min=0.0, min_inclusive=False, doc="adaptive only"),
            "max_step": F("float", 1e-3, "s", min=MIN_STEP, doc="adaptive only"),
        }
    ),
    "control": Section(
        {
            "rate": F("float", 100.0, "Hz", **_POS, doc="controllers' rate (zero-order hold)"),
            "record_rate": F(
                "float",
                100.0,
                "Hz",
                **_POS,
                doc="open-loop runs: output rate (closed loop records every tick)",
            ),
            "computation_delay": F(
                "bool",
                False,
                doc="true: a tick's commands apply from the next tick (one control period of "
                "computation delay); false: at once",
            ),
        }
    ),
    "base": Section(
        {
            "mass": F("float", 27.0, "kg", **_POS, doc="the base alone, without the devices"),
            "com": F("vec", [0.0, 0.0, 0.0], "m", length=3, doc="centre of mass, base frame"),
            "inertia": F(
                "vec",
                [],
                "kg m^2",
                length=6,
                empty=True,
                doc="Ixx, Iyy, Izz, Ixy, Ixz, Iyz about the centre of mass, base axes; "
                "empty: a uniform cube of edge base.size",
            ),
            "size": F(
                "float", 0.3, "m", **_POS, doc="edge of the base's cube (plots, default inertia)"
            ),
            "urdf": F(
                "str",
                "",
                doc="a URDF file (relative to the scenario file) whose link base.link is the "
                "base: its mass, centre of mass and inertia (with the links fixed to it) "
                "replace base.mass, com and inertia, which must then stay unset (empty: none)",
            ),
            "link": F(
                "str",
                "",
                doc="base.urdf: the base's link, whose frame is the base frame (empty: the "
                "file's root link); an arm from the same file has arm.root_link = this link "
                "and is placed by the file's joint origins",
            ),
        }
    ),
    "arm": Section(
        {
            "model": F(
                "str",
                "iiwa",
                doc="'iiwa' (the paper's KUKA LBR iiwa), 'dh' (the [[dh]] table), a URDF file (a "
                "path relative to the scenario file), or 'none' (a base without an arm: "
                "[trajectory], [arm_controller] and the other [arm] keys then stay unset)",
            ),
            "root_link": F(
                "str",
                "",
                doc="URDF: the link fixed to the base's mount; the arm is the file's subtree "
                "from it (a pedestal or 'world' link above it is left out; empty: the "
                "file's root)",
            ),
            "ee_frame": F("str", "ee", doc="end-effector: 'ee' (iiwa, dh) or a URDF link"),
            "mount_xyz": F(
                "vec", [-0.15, 0.0, 0.15], "m", length=3, doc="arm's root frame in the base frame"
            ),
            "mount_rpy_deg": F("vec", [0.0, -30.0, 0.0], "deg", length=3),
            "initial_joints_deg": F(
                "vec",
                [],
                "deg or m",
                empty=True,
                doc="closed loop: IK seed for the initial configuration, one per joint: deg "
                "for a revolute joint, m for a prismatic one (empty: zeros)",
            ),
            "lower_deg": F(
                "vec",
                [],
                "deg or m",
                empty=True,
                doc="joint lower limits, one per joint or one for all: deg for a revolute "
                "joint, m for a prismatic one (empty: from the model)",
            ),
            "upper_deg": F(
                "vec",
                [],
                "deg or m",
                empty=True,
                doc="joint upper limits, as lower_deg (empty: from the model)",
            ),
            "torque_limit": F(
                "vec",
                [],
                "N m",
                min=0.0,
                min_inclusive=False,
                empty=True,
                doc="per joint, or one for all; saturated in the plant (empty: from the model)",
            ),
            "rate_limit": F(
                "vec",
                [],
                "rad/s",
                min=0.0,
                min_inclusive=False,
                empty=True,
                doc="per joint, or one for all: the planned joint rates are clipped "
                "(empty: from the model)",
            ),
            "dh_convention": F("choice", "standard", choices=("standard", "modified")),
            "payload_mass": F(
                "float", 0.0, "kg", min=0.0, doc="held at arm.payload_link (0: none)"
            ),
            "payload_com": F(
                "vec", [0.0, 0.0, 0.05], "m", length=3, doc="in the payload_link's frame"
            ),
            "payload_link": F(
                "str",
                "",
                doc="the arm link (a body or a frame: 'link3' of iiwa/dh, a URDF link) the "
                "payload is fixed to; payload_com and payload_inertia are in its frame "
                "(empty: the end-effector frame)",
            ),
            "payload_inertia": F(
                "vec",
                [],
                "kg m^2",
                length=6,
                empty=True,
                doc="Ixx, Iyy, Izz, Ixy, Ixz, Iyz about its CoM, payload_link's axes (empty: a "
                "0.05 m solid sphere)",
            ),
        }
    ),
    "dh": Section(
        {
            "a": F("float", 0.0, "m"),
            "alpha_deg": F("float", 0.0, "deg"),
            "d": F("float", 0.0, "m"),
            "theta_deg": F("float", 0.0, "deg", doc="joint offset"),
            "joint": F("choice", "revolute", choices=("revolute", "prismatic")),
            "mass": F("float", unit="kg", **_POS),
            "com": F("vec", [0.0, 0.0, 0.0], "m", length=3, doc="in the link's DH frame"),
            "inertia": F("vec", unit="kg m^2", length=6, doc="Ixx..Iyz about the CoM"),
            "lower_deg": F("float", -170.0, "deg or m", doc="deg, or m for a prismatic joint"),
            "upper_deg": F("float", 170.0, "deg or m", doc="deg, or m for a prismatic joint"),
        },
        many=True,
        doc="arm.model = 'dh': one row per joint, base to tip",
    ),
    **DEVICE_SECTIONS,
    **CAPTURE_SECTIONS,
    "base_controller": Section(
        {
            "law": F(
                "str",
                "dual_pd",
                doc="dual_pd (PD on the pose logarithm), dual_pid (with integral action), "
                "dual_pd_dob (with a disturbance observer), mpc (model-predictive, "
                "the mpc_* keys), or module:Class (your own)",
            ),
            "kp_rot": F("vec", [40.0, 40.0, 40.0], "N m/rad", min=0.0, length=3),
            "kd_rot": F("vec", [60.0, 60.0, 60.0], "N m s/rad", min=0.0, length=3),
            "kp_trans": F("vec", [600.0, 600.0, 600.0], "N/m", min=0.0, length=3),
            "kd_trans": F("vec", [500.0, 500.0, 500.0], "N s/m", min=0.0, length=3),
            "feedforward": F("bool", True, doc="the arm's reaction from the inverse dynamics"),
            "translation": F(
                "choice",
                "base",
                choices=("base", "com"),
                doc="what the translational gains hold: base (the base origin) or com (the "
                "system's centre of mass; dual_pd; docs/control.md)",
            ),
            "ki_rot": F("vec", [4.0, 4.0, 4.0], "N m/(rad s)", min=0.0, length=3, doc="dual_pid"),
            "ki_trans": F("vec", [120.0, 120.0, 120.0], "N/(m s)", min=0.0, length=3),
            "integral_limit_force": F(
                "vec", [2.0, 2.0, 2.0], "N", min=0.0, length=3, doc="dual_pid: clamp, per axis"
            ),
            "integral_limit_torque": F("vec", [0.2, 0.2, 0.2], "N m", min=0.0, length=3),
            "observer_bandwidth": F(
                "float", 1.0, "rad/s", **_POS, doc="dual_pd_dob: at most the control rate"
            ),
            "mpc_horizon": F("int", 20, min=2, max=500, doc="mpc: prediction steps"),
            "mpc_period": F("float", 0.05, "s", **_POS, doc="mpc: the prediction's step"),
            "mpc_q_rot": F(
                "vec",
                [1.0e5, 1.0e5, 1.0e5],
                "1/rad^2",
                min=0.0,
                length=3,
                doc="mpc: weight on log e (half the rotation vector)",
            ),
            "mpc_q_trans": F(
                "vec",
                [2.0e4, 2.0e4, 2.0e4],
                "1/m^2",
                min=0.0,
                length=3,
                doc="mpc: weight on log e (half the position error)",
            ),
            "mpc_q_omega": F("vec", [1.0e3, 1.0e3, 1.0e3], "s^2/rad^2", min=0.0, length=3),
            "mpc_q_vel": F("vec", [1.0e3, 1.0e3, 1.0e3], "s^2/m^2", min=0.0, length=3),
            "mpc_terminal": F("float", 10.0, min=0.0, doc="mpc: last state's weight / Q"),
            "mpc_r_impulse": F(
                "float", 1.0, "1/(N s)", min=0.0, doc="mpc: weight of the thrusters' impulse"
            ),
            "mpc_r_thrust": F(
                "float", 1.0e-2, "1/N^2", **_POS, doc="mpc: quadratic weight per thruster"
            ),
            "mpc_r_torque": F(
                "float", 1.0, "1/(N m)^2", min=0.0, doc="mpc: weight of the devices' torque"
            ),
            "mpc_torque_limit": F(
                "vec",
                [1.0, 1.0, 1.0],
                "N m",
                **_POS,
                length=3,
                doc="mpc: the momentum devices' torque, per base axis",
            ),
            "mpc_torque_rate_limit": F(
                "float", 0.0, "N m/s", min=0.0, doc="mpc: devices' torque rate (0: none)"
            ),
            "mpc_tolerance": F("float", 1.0e-4, **_POS, doc="mpc: OSQP eps_abs and eps_rel"),
            "mpc_max_iter": F("int", 200, min=1, doc="mpc: OSQP iteration cap"),
            "mpc_preview": F(
                "bool",
                False,
                doc="mpc: preview the arm's planned reaction over the horizon "
                "(false: the reaction at the tick, held)",
            ),
        }
    ),
    "arm_controller": Section(
        {
            "law": F(
                "str",
                "computed_torque",
                doc="computed_torque (IK + joint computed torque), task_space (dual PD on the "
                "end-effector pose through the Jacobian), reactionless (the task's joint "
                "rates in the null space of the base's angular reaction, then joint "
                "computed torque), or module:Class",
            ),
            "task_gain": F(
                "float",
                5.0,
                "1/s",
                min=0.0,
                doc="reactionless: rate at which the end-effector task error is closed",
            ),
            "reactionless_task": F(
                "choice",
                "position",
                choices=("position", "pose"),
                doc="reactionless: the end-effector's position (3 rows, met by a 7-DOF arm's "
                "4 reactionless DOF) or its whole pose (6 rows, least squares)",
            ),
            "reactionless_base": F(
                "choice",
                "free",
                choices=("free", "held"),
                doc="reactionless: the base floats (its translation takes the linear "
                "reaction) or its translation is held (by the thrusters)",
            ),
            "null_space_damping": F(
                "float", 2.0, "1/s", min=0.0, doc="task_space: damping of the self-motion"
            ),
            "omega_n": F("float", 20.0, "rad/s", **_POS, doc="joint loop natural frequency"),
            "zeta": F("float", 1.0, **_POS),
            "posture_gain": F(
                "float",
                0.0,
                min=0.0,
                max=1.0,
                doc="null-space pull toward the initial posture per tick (0: off)",
            ),
        }
    ),
    "trajectory": Section(
        {
            "type": F(
                "choice",
                "lemniscate",
                choices=("lemniscate", "hold", "waypoints", "initial"),
                doc="hold: the pose center/orientation_rpy_deg; waypoints: the [[waypoint]] "
                "poses joined by ScLERP; initial: hold where arm.initial_joints_deg put it",
            ),
            "r": F("float", 0.1, "m", **_POS),
            "zeta": F("float", 1.0, "rad/s"),
            "theta_m": F("float", 0.0, "rad"),
            "center": F("vec", [0.3, 0.0, 0.7], "m", length=3, doc="x0, y0, z0 (base frame)"),
            "orientation_rpy_deg": F("vec", [0.0, 90.0, 0.0], "deg", length=3),
            "start_time": F("float", 1.0, "s", min=0.0, doc="the arm holds its pose until then"),
            "ramp_time": F(
                "float", 2.0, "s", min=0.0, doc="smooth speed-up from rest to the lemniscate's rate"
            ),
        }
    ),
    "waypoint": Section(
        {
            "time": F("float", unit="s", min=0.0, doc="arrival time (after trajectory.start_time)"),
            "xyz": F("vec", unit="m", length=3, doc="end-effector position, base frame"),
            "rpy_deg": F("vec", unit="deg", length=3, doc="end-effector orientation"),
        },
        many=True,
        doc="trajectory.type = 'waypoints': poses in time order",
    ),
    "base_reference": Section(
        {
            "type": F("choice", "hold", choices=("hold", "slew")),
            "xyz": F(
                "vec", [0.0, 0.0, 0.0], "m", length=3, doc="slew: displacement, initial frame"
            ),
            "rpy_deg": F("vec", [0.0, 0.0, 0.0], "deg", length=3, doc="slew: rotation"),
            "start_time": F("float", 0.0, "s", min=0.0),
            "duration": F("float", 10.0, "s", **_POS),
        }
    ),
    "open_loop": Section(
        {
            "base_force_amplitude": F(
                "vec",
                [1.0, 2.0, 3.0],
                "N",
                length=3,
                doc="base force sin(w t) * amplitude (base frame)",
            ),
            "base_torque_amplitude": F("vec", [1.0, 2.0, 3.0], "N m", length=3),
            "frequency": F("float", 1.0, "rad/s"),
        }
    ),
    "plant": Section(
        {
            "base_mass_error": F(
                "float",
                0.0,
                min=-0.9,
                max=10.0,
                doc="relative: the plant's base is (1 + e) m, and its inertia (1 + e) J (a "
                "denser body of the same shape; base_inertia_error then acts on top)",
            ),
            "base_com_error": F("vec", [0.0, 0.0, 0.0], "m", length=3, doc="added, base frame"),
            "base_inertia_error": F(
                "vec",
                [0.0, 0.0, 0.0],
                min=-0.9,
                max=10.0,
                length=3,
                doc="relative, on the principal moments (a rotated inertia: its eigenvalues)",
            ),
            "link_mass_error": F(
                "float", 0.0, min=-0.9, max=10.0, doc="relative, every arm link (mass and inertia)"
            ),
            "payload_mass_error": F("float", 0.0, "kg", doc="added to arm.payload_mass"),
        },
        doc="the true plant's departures from the nominal values the controllers use",
    ),
    "sensors": Section(
        {
            "enabled": F(
                "bool",
                False,
                doc="the controllers see estimates from sensors and filters (false: the true "
                "state, perfect knowledge)",
            ),
            "star_tracker_rate": F("float", 10.0, "Hz", **_POS),
            "star_tracker_noise_arcsec": F(
                "vec", [5.0, 5.0, 40.0], "arcsec", min=0.0, length=3, doc="1 sigma per body axis"
            ),
            "star_tracker_latency": F("float", 0.0, "s", min=0.0),
            "gyro_model": F(
                "choice",
                "mean_rate",
                choices=("mean_rate", "instantaneous"),
                doc="mean_rate: the mean body rate since the last sample (a rate-integrating "
                "gyro's delta-angle); instantaneous: the rate at the sample",
            ),
            "gyro_arw": F("float", 0.01, "deg/sqrt(h)", min=0.0, doc="angle random walk"),
            "gyro_rrw": F("float", 0.01, "deg/h/sqrt(h)", min=0.0, doc="rate random walk"),
            "gyro_bias": F("float", 1.0, "deg/h", min=0.0, doc="initial bias, 1 sigma per axis"),
            "gyro_bias_instability": F(
                "float",
                0.0,
                "deg/h",
                min=0.0,
                doc="B, the flat floor 0.664 B of the Allan deviation (flicker bias; 0: none)",
            ),
            "gyro_bias_instability_band": F(
                "vec",
                [1.0, 1000.0],
                "s",
                min=0.0,
                min_inclusive=False,
                length=2,
                doc="averaging times (tau_lo, tau_hi) over which the floor is flat",
            ),
            "relnav_rate": F("float", 10.0, "Hz", **_POS),
            "relnav_position_noise": F("float", 1e-3, "m", min=0.0),
            "relnav_velocity_noise": F("float", 1e-3, "m/s", min=0.0),
            "encoder_bits": F("int", 20, min=4, max=40, doc="joint and gimbal angle encoders"),
            "joint_rate_noise": F("float", 1e-4, "rad/s", min=0.0),
            "tachometer_noise": F("float", 0.1, "rad/s", min=0.0, doc="wheel speeds"),
            "attitude_process_noise_scale": F(
                "float", 1.0, **_POS, doc="the attitude filter's process noise over the gyro's"
            ),
            "attitude_measurement_noise_scale": F(
                "float", 1.0, **_POS, doc="the attitude filter's star-tracker variance over its own"
            ),
            "translation_accel_psd": F(
                "float",
                1e-6,
                "(m/s^2)^2/Hz",
                min=0.0,
                doc="the translation filter's white acceleration (what its prediction misses)",
            ),
            "translation_measurement_noise_scale": F(
                "float", 1.0, **_POS, doc="the translation filter's variances over the sensor's"
            ),
        },
        doc="the sensors the flight software reads, and its navigation filters' tuning",
    ),
    "orbit": Section(
        {
            "enabled": F(
                "bool",
                False,
                doc="closed loop: Clohessy-Wiltshire forces and gravity-gradient torques on "
                "every body (the inertial frame is the Hill frame of a circular orbit)",
            ),
            "rate": F(
                "float",
                0.0011313666536110223,
                "rad/s",
                **_POS,
                doc="mean motion n of the circular reference orbit (default: 400 km above the "
                "Earth, a 92.6 min period)",
            ),
        },
        doc="relative motion about a circular reference orbit",
    ),
    "disturbance": Section(
        {
            "force": F("vec", [0.0, 0.0, 0.0], "N", length=3, doc="constant, base frame"),
            "torque": F("vec", [0.0, 0.0, 0.0], "N m", length=3),
            "force_noise_std": F("float", 0.0, "N", min=0.0, doc="white, per control period"),
            "torque_noise_std": F("float", 0.0, "N m", min=0.0),
        }
    ),
    "faults": Section(
        {
            "time": F("float", unit="s", min=0.0),
            "thruster": F("int", min=0),
            "kind": F("choice", choices=("failed_off", "stuck_on", "degraded")),
            "scale": F(
                "float",
                1.0,
                min=0.0,
                max=1.0,
                min_inclusive=False,
                doc="degraded: thrust per unit command, 0 < scale <= 1 (other kinds: 1)",
            ),
        },
        many=True,
    ),
    "outputs": Section(
        {
            "plots": F("bool", True),
            "formats": F("str", "png,pdf", doc="comma-separated: png, pdf"),
            "csv": F("bool", False),
            "checkpoint_every": F("float", 1.0, "s", **_POS, doc="simulated time between saves"),
        }
    ),
    "metrics": Section(
        {
            "transient": F(
                "float",
                2.0,
                "s",
                min=0.0,
                doc="the end-effector metrics (ee_rms, ee_max) are taken over t >= transient "
                "(simulated time); a run that ends before has them not measured (no value, "
                "never 0) and a requirement on them UNDECIDED",
            ),
        },
        doc="how a closed-loop run's metrics are taken (dqspace.scenarios.sim.metrics)",
    ),
    # the metrics of a closed-loop run (dqspace.scenarios.sim.metrics.METRICS; a test
    # keeps the two lists equal): a requirement on each, the defaults on three
    "requirements": Section(
        {
            name: F(
                "requirement",
                DEFAULT_REQUIREMENTS[name].as_dict() if name in DEFAULT_REQUIREMENTS else None,
                doc=f"requirement on the metric {name}: a limit in its SI unit, or "
                "{limit, op, percentile, confidence} (campaigns judge the percentile at the "
                "confidence; a single run its value)",
            )
            for name in (
                "base_pos_err_max",
                "base_att_err_max",
                "ee_rms",
                "ee_max",
                "total_impulse",
                "peak_gimbal_rate",
                "vscmg_effort",
                "min_det_GGt",
                "alloc_not_optimal",
                "alloc_best_effort_ticks",
                "peak_rw_speed",
                "rw_saturated_ticks",
                "arm_saturated_ticks",
                "steering_saturated_ticks",
                "thrust_saturated_ticks",
                "gimbal_limited_ticks",
                "vscmg_spin_limited_ticks",
                "rw_limited_ticks",
                "com_err_max",
                "force_cmd_rms",
                *CAPTURE_METRICS,  # a capture scenario's (scenario.kind = "capture")
            )
        },
        doc="the requirements a run's metrics are judged against "
        "(dqspace.scenarios.spec.requirements)",
    ),
}

# the second and later arms: the keys of [arm] and their own task (schema_arms)
SCHEMA.update(extra_arm_sections(SCHEMA["arm"]))
