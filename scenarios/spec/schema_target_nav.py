"""The ``[target_navigation]`` section of a capture scenario (``scenario.kind = "capture"``):
the relative navigation of the target (a pose sensor and the filter of its pose and twist,
:mod:`dqspace.control.target_navigation`), and the metrics of its error.
``docs/capture.md`` describes them."""

from .config import Field as F
from .config import ScenarioError, Section

__all__ = ["TARGET_NAV_SECTIONS", "TARGET_NAV_METRICS", "target_nav_checks"]

_NON_NEG = dict(min=0.0)

#: name -> (unit, description) of the metrics of the target's estimate (a capture's)
TARGET_NAV_METRICS = {
    "target_nav_pos_err_at_grasp": ("m", "estimated fixture's position error at the grasp"),
    "target_nav_att_err_at_grasp": ("deg", "estimated target's attitude error at the grasp"),
    "target_nav_rate_err_at_grasp": ("rad/s", "estimated target's rate error at the grasp"),
    "target_nav_vel_err_at_grasp": ("m/s", "estimated fixture's velocity error at the grasp"),
    "target_nav_pos_err_rms": ("m", "fixture's position error, rms while synchronised"),
    "target_nav_att_err_rms": ("deg", "target's attitude error, rms while synchronised"),
}

TARGET_NAV_SECTIONS = {
    "target_navigation": Section(
        {
            "enabled": F(
                "bool",
                True,
                doc="the approach tracks the estimate of the target's motion (false: its true "
                "motion, perfect knowledge)",
            ),
            "rate": F(
                "float",
                10.0,
                "Hz",
                min=0.0,
                min_inclusive=False,
                doc="pose samples per second (a whole number of control periods apart)",
            ),
            "latency": F("float", 0.1, "s", **_NON_NEG, doc="a whole number of control periods"),
            "position_noise": F(
                "float", 2e-3, "m", **_NON_NEG, doc="1 sigma per axis, the target frame's origin"
            ),
            "attitude_noise_deg": F("float", 0.2, "deg", **_NON_NEG, doc="1 sigma per target axis"),
            "initial_position_error": F(
                "float", 3e-3, "m", **_NON_NEG, doc="1 sigma per axis, the target's CoM"
            ),
            "initial_velocity_error": F(
                "float", 1e-3, "m/s", **_NON_NEG, doc="1 sigma per axis, the target's CoM"
            ),
            "initial_attitude_error_deg": F(
                "float", 0.3, "deg", **_NON_NEG, doc="1 sigma per axis"
            ),
            "initial_rate_error_deg_s": F(
                "float", 0.02, "deg/s", **_NON_NEG, doc="1 sigma per axis"
            ),
            "angular_accel_psd": F(
                "float",
                1e-12,
                "(rad/s^2)^2/Hz",
                **_NON_NEG,
                doc="the filter's process noise on the target's rate",
            ),
            "accel_psd": F(
                "float",
                1e-10,
                "(m/s^2)^2/Hz",
                **_NON_NEG,
                doc="the filter's process noise on the CoM's velocity",
            ),
        },
        doc="scenario.kind = 'capture': the relative navigation of the target",
    ),
}


def target_nav_checks(cfg: dict, source: str) -> None:
    """The sensor's period and latency against the control period (ScenarioError naming
    the key): the estimate is tabulated at the ticks, the samples taken at ticks."""
    n, rate = cfg["target_navigation"], cfg["control"]["rate"]
    if not n["enabled"]:
        return
    period = 1.0 / rate
    for key, x in (("rate", 1.0 / n["rate"]), ("latency", n["latency"])):
        ticks = x / period
        if abs(ticks - round(ticks)) > 1e-9 * max(1.0, ticks):
            what = f"a period of {x:g} s" if key == "rate" else f"{x:g} s"
            raise ScenarioError(
                f"{source}: target_navigation.{key} = {n[key]:g}: {what} must be a whole "
                f"number of control periods (control.rate = {rate:g} Hz)"
            )
