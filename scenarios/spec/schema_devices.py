"""The devices' sections of the scenario schema: control moment gyros, reaction wheels and
thrusters, each as a layout section and a per-unit table (``many=True``)."""

from .config import Field as F
from .config import Section

__all__ = ["DEVICE_SECTIONS"]

_POS = dict(min=0.0, min_inclusive=False)

DEVICE_SECTIONS = {
    "vscmg": Section(
        {
            "enabled": F("bool", True),
            "layout": F(
                "choice",
                "pyramid",
                choices=("pyramid", "table"),
                doc="pyramid: four units (Wie's pyramid); table: the [[vscmg_unit]] rows",
            ),
            "skew_deg": F("float", 54.7356103172453, "deg", min=0.0, max=90.0, doc="pyramid"),
            "radius": F("float", 0.3, "m", min=0.0, doc="pyramid: mounting radius"),
            "wheel_speed_rpm": F("float", 3000.0, "rpm", **_POS),
            "initial_gimbal_deg": F(
                "vec", [], "deg", empty=True, doc="one per unit (empty: zeros)"
            ),
            "gimbal_rate_limit": F(
                "float", 1.0, "rad/s", **_POS, doc="steering law: largest gimbal rate it commands"
            ),
            "wheel_accel_limit": F(
                "float",
                10.0,
                "rad/s^2",
                **_POS,
                doc="steering law: largest wheel acceleration it commands",
            ),
            "servo_bandwidth": F("float", 50.0, "1/s", **_POS),
            "gimbal_torque_max": F(
                "float",
                10.0,
                "N m",
                **_POS,
                doc="plant: gimbal motor torque limit, every unit (clipped in the plant)",
            ),
            "gimbal_rate_max": F(
                "float",
                3.0,
                "rad/s",
                **_POS,
                doc="plant: gimbal rate limit (the motor stops pushing beyond it)",
            ),
            "gimbal_friction": F(
                "float", 0.0, "N m s/rad", min=0.0, doc="plant: viscous friction on the gimbal"
            ),
            "gimbal_coulomb": F(
                "float", 0.0, "N m", min=0.0, doc="plant: Coulomb friction on the gimbal"
            ),
            "wheel_torque_max": F(
                "float", 2.0, "N m", **_POS, doc="plant: wheel (spin) motor torque limit"
            ),
            "wheel_speed_max_rpm": F(
                "float",
                6000.0,
                "rpm",
                **_POS,
                doc="plant: wheel speed limit (the motor stops pushing beyond it)",
            ),
            "wheel_friction": F(
                "float", 0.0, "N m s/rad", min=0.0, doc="plant: viscous friction on the wheel"
            ),
            "wheel_coulomb": F(
                "float", 0.0, "N m", min=0.0, doc="plant: Coulomb friction on the wheel"
            ),
        }
    ),
    "vscmg_unit": Section(
        {
            "position": F("vec", unit="m", length=3, doc="base frame"),
            "gimbal_axis": F("vec", length=3, doc="normalised"),
            "spin_axis": F("vec", length=3, doc="at zero gimbal angle, orthogonal to the gimbal"),
            "wheel_mass": F("float", 4.0, "kg", **_POS),
            "wheel_inertia": F("vec", [0.02, 0.01], "kg m^2", length=2, doc="spin, transverse"),
            "gimbal_mass": F("float", 2.0, "kg", **_POS),
            "gimbal_inertia": F("vec", [0.01, 0.01, 0.01], "kg m^2", length=3, doc="about s, t, g"),
            "gimbal_torque_max": F(
                "float", 0.0, "N m", min=0.0, doc="plant: this unit's (0: vscmg.gimbal_torque_max)"
            ),
            "gimbal_rate_max": F(
                "float", 0.0, "rad/s", min=0.0, doc="plant: this unit's (0: vscmg.gimbal_rate_max)"
            ),
            "wheel_torque_max": F(
                "float", 0.0, "N m", min=0.0, doc="plant: this unit's (0: vscmg.wheel_torque_max)"
            ),
            "wheel_speed_max_rpm": F(
                "float",
                0.0,
                "rpm",
                min=0.0,
                doc="plant: this unit's wheel speed limit (0: vscmg.wheel_speed_max_rpm)",
            ),
        },
        many=True,
        doc="vscmg.layout = 'table': one row per unit",
    ),
    "wheels": Section(
        {
            "enabled": F("bool", False),
            "layout": F(
                "choice",
                "pyramid",
                choices=("pyramid", "orthogonal", "table"),
                doc="pyramid: 4 wheels; orthogonal: 3 on the base axes; table: [[wheel]] rows",
            ),
            "spin_inertia": F("float", 0.01, "kg m^2", **_POS),
            "mass": F("float", 1.0, "kg", **_POS),
            "max_torque": F("float", 0.5, "N m", **_POS),
            "max_speed_rpm": F("float", 6000.0, "rpm", **_POS),
            "friction": F(
                "float",
                0.0,
                "N m s/rad",
                min=0.0,
                doc="plant: viscous friction on each wheel (the motor loses friction x speed)",
            ),
            "coulomb": F(
                "float",
                0.0,
                "N m",
                min=0.0,
                doc="plant: Coulomb friction on each wheel (against the spin, while it turns)",
            ),
            "initial_speed_rpm": F(
                "vec", [], "rpm", empty=True, doc="one per wheel, or one for all (empty: 0)"
            ),
            "desaturation_gain": F(
                "float", 0.1, "1/s", min=0.0, doc="momentum dumping by thrusters (0: off)"
            ),
            "desaturation_start": F(
                "float", 0.8, min=0.0, max=1.0, doc="fraction of max speed that starts dumping"
            ),
            "desaturation_stop": F(
                "float", 0.5, min=0.0, max=1.0, doc="fraction of max speed that ends it"
            ),
        }
    ),
    "wheel": Section(
        {
            "axis": F("vec", length=3, doc="spin axis, base frame (normalised)"),
            "position": F("vec", [0.0, 0.0, 0.0], "m", length=3),
            "spin_inertia": F("float", unit="kg m^2", **_POS),
            "transverse_inertia": F("float", 0.0, "kg m^2", min=0.0, doc="0: half the spin"),
            "mass": F("float", 1.0, "kg", **_POS),
            "max_torque": F("float", unit="N m", **_POS),
            "max_speed_rpm": F("float", unit="rpm", **_POS),
            "friction": F(
                "float", -1.0, "N m s/rad", doc="viscous, this wheel's (negative: wheels.friction)"
            ),
            "coulomb": F("float", -1.0, "N m", doc="this wheel's (negative: wheels.coulomb)"),
        },
        many=True,
        doc="wheels.layout = 'table': one row per wheel",
    ),
    "thrusters": Section(
        {
            "enabled": F("bool", True),
            "layout": F(
                "choice",
                "paper",
                choices=("paper", "table"),
                doc="paper: 12 thrusters on the corners of the base cube; table: [[thruster]]",
            ),
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
            "weights": F(
                "vec",
                [],
                "-",
                empty=True,
                doc="cost weight of each thruster in the allocation (min sum w_i sigma_i, P49); "
                "empty: all 1 (the paper's)",
            ),
            "mode": F("choice", "force", choices=("force", "wrench")),
            "misalignment_deg": F(
                "float",
                0.0,
                "deg",
                min=0.0,
                max=45.0,
                doc="1 sigma tilt of each true thruster's direction (seeded by scenario.seed); "
                "the allocator plans with the nominal ones",
            ),
            "magnitude_error": F(
                "float", 0.0, min=0.0, max=0.5, doc="1 sigma relative error of each true thrust"
            ),
            "open_delay": F(
                "float",
                0.0,
                "s",
                min=0.0,
                doc="valve: thrust starts this long after a commanded pulse's start (shorter "
                "than the control period; the PWM plans without it)",
            ),
            "close_delay": F(
                "float",
                0.0,
                "s",
                min=0.0,
                doc="valve: thrust stops this long after a commanded pulse's end (shorter "
                "than the control period)",
            ),
            "min_on_time": F(
                "float",
                0.0,
                "s",
                min=0.0,
                doc="valve: a pulse shorter than this, commanded while the thruster is not "
                "firing, is not executed (at most the control period)",
            ),
        }
    ),
    "thruster": Section(
        {
            "name": F("str", ""),
            "position": F("vec", unit="m", length=3, doc="base frame"),
            "direction": F("vec", length=3, doc="of the force on the base (normalised)"),
            "max_thrust": F("float", 0.0, "N", min=0.0, doc="0: thrusters.max_thrust"),
            "min_impulse_bit": F("float", -1.0, "N s", doc="negative: thrusters.min_impulse_bit"),
        },
        many=True,
        doc="thrusters.layout = 'table': one row per thruster",
    ),
}
