"""The capture scenario's sections of the schema (``scenario.kind = "capture"``): the
``[target]`` (a free rigid body with a grapple fixture) and the ``[capture]`` timeline
(approach, synchronise, grasp, detumble).  ``docs/capture.md`` describes them."""

import math

from .config import Field as F
from .config import ScenarioError, Section
from .schema_target_nav import TARGET_NAV_METRICS, TARGET_NAV_SECTIONS, target_nav_checks

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
    "grasp_missed": ("-", "1: not grasped by capture.grasp_time (the trigger never fired)"),
    "grasp_instant": ("s", "when the grasp happened"),
    "grasp_relative_speed": ("m/s", "fixture's speed relative to the end-effector at grasp"),
    "grasp_relative_rate": ("rad/s", "fixture's rate relative to the end-effector at grasp"),
    "grasp_latch_impulse_force": ("N s", "restitution > 0: norm of the latch's impulse force"),
    **TARGET_NAV_METRICS,  # the target's relative navigation ([target_navigation])
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
            "placement": F(
                "choice",
                "base",
                choices=("base", "end_effector"),
                doc="base: xyz and rpy_deg place the target frame in the servicer's initial "
                "base frame; end_effector: they place the grapple fixture relative to the "
                "end-effector at arm.initial_joints_deg (zeros: the fixture where the "
                "end-effector stands at those joints; the arm starts capture.standoff back "
                "from it: a grasp near a configuration you choose, on any arm)",
            ),
            "xyz": F(
                "vec",
                [1.5, 0.0, 0.0],
                "m",
                length=3,
                doc="the target frame's initial position in the servicer's initial base frame "
                "(placement = end_effector: the fixture's offset in the end-effector's axes)",
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
            "size": F(
                "vec",
                [0.0, 0.0, 0.0],
                "m",
                length=3,
                min=0.0,
                doc="the box the animation draws (body axes, at the CoM); 0: the uniform box "
                "with the target's principal moments (drawing only)",
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
            "trigger": F(
                "choice",
                "aligned",
                choices=("aligned", "time"),
                doc="aligned: grasp at the first tick after the approach with the fixture "
                "within grasp_tolerance and the relative twist within grasp_rate_tolerance "
                "for grasp_dwell; time: at grasp_time (within grasp_tolerance)",
            ),
            "grasp_time": F(
                "float",
                8.0,
                "s",
                **_POS,
                doc="trigger time: the grasp instant; aligned: the latest (missed after it)",
            ),
            "grasp_rate_tolerance": F(
                "float",
                0.01,
                "m/s or rad/s",
                min=0.0,
                doc="aligned trigger: largest relative speed [m/s] and rate [rad/s] of the "
                "fixture to the end-effector",
            ),
            "grasp_dwell": F(
                "float", 0.1, "s", min=0.0, doc="aligned trigger: how long the alignment holds"
            ),
            "grasp_tolerance": F(
                "float",
                0.02,
                "m or rad",
                min=0.0,
                doc="largest fixture-to-end-effector distance [m] and angle [rad] at the grasp",
            ),
            "restitution": F(
                "float",
                0.0,
                min=0.0,
                max=1.0,
                doc="the contact's restitution e on the relative twist (0: rigid), then a "
                "rigid latch at the same instant",
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
    **TARGET_NAV_SECTIONS,
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
    dwell = math.ceil(c["grasp_dwell"] / period - 1e-9)  # the trigger's whole ticks
    if c["trigger"] == "aligned" and (
        math.ceil(c["approach_duration"] / period - 1e-9) + dwell > round(ticks)
    ):
        raise ScenarioError(
            f"{source}: capture.grasp_dwell = {c['grasp_dwell']:g} s after "
            f"capture.approach_duration = {c['approach_duration']:g} s ends after "
            f"capture.grasp_time = {c['grasp_time']:g} s: the aligned trigger could never fire"
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
    target_nav_checks(cfg, source)
