"""The capture scenario's sections of the schema (``scenario.kind = "capture"``): the
``[target]`` (a free rigid body with a grapple fixture) and the ``[capture]`` timeline
(approach, synchronise, grasp, detumble).  ``docs/capture.md`` describes them."""

from .config import Field as F
from .config import ScenarioError, Section

__all__ = ["CAPTURE_SECTIONS", "CAPTURE_METRICS", "capture_checks"]

_POS = dict(min=0.0, min_inclusive=False)

#: name -> (unit, description) of the metrics a capture adds to the manifest
#: (:meth:`dqspace.scenarios.sim.capture.Capture.metrics`); a requirement may name them
CAPTURE_METRICS = {
    "grasp_impulse_force": ("N s", "norm of the grasp impulse's force"),
    "grasp_impulse_torque": ("N m s", "norm of the grasp impulse's torque (fixture origin)"),
    "grasp_distance": ("m", "fixture to end-effector distance at the grasp"),
    "grasp_angle": ("deg", "fixture to end-effector angle at the grasp"),
    "grasp_energy_lost": ("J", "kinetic energy the grasp dissipated"),
    "detumble_time": (
        "s",
        "from the grasp until the base's and the target's rates stay below the residual",
    ),
    "detumble_bound": ("s", "lower bound: |h_stack| drop over the most torque available"),
    "stack_momentum": ("N m s", "stack's angular momentum about its CoM after the grasp"),
    "max_available_torque": ("N m", "thrusters' and momentum devices' torque, upper bound"),
    "interface_force_peak": ("N", "largest force the arm applies to the held target"),
    "interface_torque_peak": ("N m", "largest torque on the held target, fixture origin"),
    "base_attitude_excursion": ("deg", "largest base attitude error after the grasp"),
    "capture_thruster_impulse": ("N s", "thrusters' impulse after the grasp"),
    "device_momentum_peak": ("N m s", "largest momentum the devices hold after the grasp"),
}


CAPTURE_SECTIONS = {
    "target": Section(
        {
            "mass": F("float", 500.0, "kg", **_POS),
            "com": F("vec", [0.0, 0.0, 0.0], "m", length=3, doc="in the target's body frame"),
            "inertia": F(
                "vec",
                [300.0, 250.0, 200.0, 0.0, 0.0, 0.0],
                "kg m^2",
                length=6,
                doc="Ixx, Iyy, Izz, Ixy, Ixz, Iyz about the CoM, body axes",
            ),
            "fixture_xyz": F(
                "vec", [0.0, 0.0, 0.0], "m", length=3, doc="grapple fixture, body frame"
            ),
            "fixture_rpy_deg": F(
                "vec", [0.0, 0.0, 0.0], "deg", length=3, doc="grapple fixture, body frame"
            ),
            "xyz": F(
                "vec",
                [1.5, 0.0, 0.0],
                "m",
                length=3,
                doc="the target frame's initial position in the servicer's initial base frame",
            ),
            "rpy_deg": F(
                "vec", [0.0, 0.0, 0.0], "deg", length=3, doc="its initial orientation, same frame"
            ),
            "rate_deg_s": F(
                "vec", [0.0, 0.0, 0.0], "deg/s", length=3, doc="initial body rate, body axes"
            ),
            "velocity": F(
                "vec", [0.0, 0.0, 0.0], "m/s", length=3, doc="initial CoM velocity, body axes"
            ),
        },
        doc="scenario.kind = 'capture': the body to capture (no actuators)",
    ),
    "capture": Section(
        {
            "approach_duration": F(
                "float",
                5.0,
                "s",
                **_POS,
                doc="the stand-off shrinks to zero from t = 0 to this time (quintic)",
            ),
            "standoff": F(
                "vec",
                [0.0, 0.0, -0.3],
                "m",
                length=3,
                doc="the end-effector's offset from the fixture at t = 0, fixture axes",
            ),
            "grasp_time": F(
                "float", 8.0, "s", **_POS, doc="the grasp instant (after approach_duration)"
            ),
            "grasp_tolerance": F(
                "float",
                0.02,
                "m or rad",
                min=0.0,
                doc="largest fixture-to-end-effector distance [m] and angle [rad] at the grasp",
            ),
            "restitution": F(
                "float", 0.0, min=0.0, max=0.0, doc="0: a rigid grasp (the only one modelled)"
            ),
            "hold": F(
                "choice",
                "impedance",
                choices=("impedance", "joint"),
                doc="after the grasp: a task-space impedance about the end-effector's pose, "
                "its wrench and the base law limited by the interface limits; or the joint "
                "law of arm_controller (no limit)",
            ),
            "hold_omega_n": F(
                "float",
                1.0,
                "rad/s",
                **_POS,
                doc="after the grasp: the held target's natural frequency (impedance), or the "
                "arm law's (joint: arm_controller.omega_n before)",
            ),
            "hold_zeta": F("float", 1.0, **_POS, doc="impedance: the held target's damping ratio"),
            "interface_force_limit": F(
                "float", 100.0, "N", **_POS, doc="impedance: largest force on the held target"
            ),
            "interface_torque_limit": F(
                "float", 100.0, "N m", **_POS, doc="impedance: largest torque, fixture origin"
            ),
            "interface_margin": F(
                "float",
                0.8,
                min=0.0,
                min_inclusive=False,
                max=1.0,
                doc="impedance: the laws aim at this fraction of the interface limits",
            ),
            "residual_rate_deg_s": F(
                "float",
                0.05,
                "deg/s",
                **_POS,
                doc="detumbled: the base's and the target's rates stay below this from then on",
            ),
        },
        doc="scenario.kind = 'capture': the timeline and the grasp",
    ),
}


def capture_checks(cfg: dict, source: str) -> None:
    """A capture scenario's keys checked together (ScenarioError naming them); another kind
    of scenario that sets them is refused, naming them (they would be ignored)."""
    if cfg["scenario"]["kind"] != "capture":
        given = [
            f"{name}.{key}"
            for name, section in CAPTURE_SECTIONS.items()
            for key, field in section.fields.items()
            if cfg[name][key] != field.default
        ]
        if given:
            raise ScenarioError(
                f"{source}: {', '.join(given)}: the [target] and [capture] keys are read by a "
                f'capture scenario only (scenario.kind = "capture", this one is '
                f"{cfg['scenario']['kind']!r})"
            )
        return
    c, T = cfg["capture"], cfg["scenario"]["duration"]
    if not c["approach_duration"] <= c["grasp_time"] < T:
        raise ScenarioError(
            f"{source}: capture.grasp_time = {c['grasp_time']:g} s must be at or after "
            f"capture.approach_duration = {c['approach_duration']:g} s and before "
            f"scenario.duration = {T:g} s"
        )
    period = 1.0 / cfg["control"]["rate"]
    ticks = c["grasp_time"] / period
    if abs(ticks - round(ticks)) > 1e-9 * max(1.0, ticks):
        raise ScenarioError(
            f"{source}: capture.grasp_time = {c['grasp_time']:g} s must be a whole number of "
            f"control periods (control.rate = {cfg['control']['rate']:g} Hz)"
        )
    if cfg["arm"]["model"] == "none":
        raise ScenarioError(f'{source}: scenario.kind = "capture" needs an arm (arm.model)')
    if cfg["arm"]["payload_mass"] > 0.0:
        raise ScenarioError(
            f"{source}: arm.payload_mass = {cfg['arm']['payload_mass']:g} kg: a capture "
            "scenario holds the [target] as the arm's payload after the grasp; set it to 0"
        )
    if cfg["orbit"]["enabled"]:
        raise ScenarioError(
            f"{source}: orbit.enabled: a capture scenario propagates the target free of "
            "orbital effects; set it to false"
        )
    if cfg.get("extra_arm"):
        raise ScenarioError(f"{source}: [[extra_arm]]: a capture scenario has one arm")
