"""The scenario schema: every key a scenario file may hold, with its type, unit, default
and range.  ``dqspace show SCENARIO`` prints a scenario resolved against it."""

from .config import Field as F
from .config import Section

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
                choices=("closed_loop", "open_loop"),
                doc="closed_loop: controllers and actuators; open_loop: prescribed base wrench",
            ),
            "duration": F("float", 20.0, "s", **_POS),
            "seed": F("int", 0, min=0, doc="root seed of every random draw (noise)"),
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
        }
    ),
    "model": Section(
        {
            "base_mass": F(
                "float",
                27.0,
                "kg",
                min=0.0,
                min_inclusive=False,
                doc="the base alone (Table 3); its inertia scales with it",
            ),
            "payload_mass": F(
                "float", 0.0, "kg", min=0.0, doc="a payload held at the flange (0: none)"
            ),
            "arm_mount_xyz": F(
                "vec", [-0.15, 0.0, 0.15], "m", length=3, doc="arm's DH frame 0 in the base frame"
            ),
            "arm_mount_rpy_deg": F("vec", [0.0, -30.0, 0.0], "deg", length=3),
            "initial_joints_deg": F(
                "vec",
                [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                "deg",
                length=7,
                doc="closed loop: IK seed for the initial configuration",
            ),
        }
    ),
    "vscmg": Section(
        {
            "enabled": F("bool", True),
            "wheel_speed_rpm": F("float", 3000.0, "rpm", **_POS),
            "initial_gimbal_deg": F("vec", [0.0, 0.0, 0.0, 0.0], "deg", length=4),
            "gimbal_rate_limit": F("float", 1.0, "rad/s", **_POS),
            "wheel_accel_limit": F("float", 10.0, "rad/s^2", **_POS),
            "servo_bandwidth": F("float", 50.0, "1/s", **_POS),
        }
    ),
    "thrusters": Section(
        {
            "enabled": F("bool", True),
            "max_thrust": F("float", 10.0, "N", **_POS),
            "min_impulse_bit": F(
                "float", 0.01, "N s", min=0.0, doc="0: continuous thrust (no PWM quantisation)"
            ),
            "pwm": F("bool", True, doc="on/off firing; pulses quantised to the dynamics step"),
            "schmitt": F("bool", False),
            "error_feedback": F(
                "bool", True, doc="carry each period's impulse error into the next (delta-sigma)"
            ),
            "allocator": F("choice", "fast", choices=("fast", "cvxpy")),
            "mode": F("choice", "force", choices=("force", "wrench")),
        }
    ),
    "base_controller": Section(
        {
            "kp_rot": F("vec", [40.0, 40.0, 40.0], "N m/rad", min=0.0, length=3),
            "kd_rot": F("vec", [60.0, 60.0, 60.0], "N m s/rad", min=0.0, length=3),
            "kp_trans": F("vec", [600.0, 600.0, 600.0], "N/m", min=0.0, length=3),
            "kd_trans": F("vec", [500.0, 500.0, 500.0], "N s/m", min=0.0, length=3),
            "feedforward": F("bool", True, doc="the arm's reaction from the inverse dynamics"),
        }
    ),
    "arm_controller": Section(
        {
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
            "type": F("choice", "lemniscate", choices=("lemniscate", "hold")),
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
}
