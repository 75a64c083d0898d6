"""The sections of the second and later arms of a servicer (``[[extra_arm]]``, their
way-points ``[[extra_arm_waypoint]]``): each arm has the keys of ``[arm]`` (but
``dh_convention``: an extra arm is ``iiwa`` or a URDF) plus a unique ``name`` and its own
task."""

from .config import Field as F
from .config import Section

#: the metrics each extra arm has, named ``<metric>_<name>`` (``ee_max_left``)
ARM_METRIC_BASES = ("ee_rms", "ee_max")


def arm_metric_names(config) -> list[str]:
    """The metrics of the extra arms of a scenario (resolved, or a parsed file):
    ``ee_rms_<name>``, ``ee_max_<name>`` for each ``[[extra_arm]]``, in order."""
    rows = config.get("extra_arm") if isinstance(config, dict) else None
    names = [r.get("name") for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
    return [f"{m}_{n}" for n in names if isinstance(n, str) and n for m in ARM_METRIC_BASES]


def with_arm_requirements(schema: dict, doc) -> dict:
    """``schema`` whose ``[requirements]`` also takes a requirement on each extra arm's
    metrics (:func:`arm_metric_names` of ``doc``; none by default)."""
    names = arm_metric_names(doc)
    if not names:
        return schema
    req = schema["requirements"]
    fields = dict(req.fields)
    for name in names:
        fields.setdefault(
            name,
            F(
                "requirement",
                None,
                doc=f"requirement on the metric {name} (an extra arm's): a limit in its SI "
                "unit, or {limit, op, percentile, confidence}",
            ),
        )
    return {**schema, "requirements": Section(fields, req.doc, req.many)}


__all__ = ["extra_arm_sections", "ARM_METRIC_BASES", "arm_metric_names", "with_arm_requirements"]


def extra_arm_sections(arm: Section) -> dict:
    """``{"extra_arm": ..., "extra_arm_waypoint": ...}``, the keys of ``arm`` (the ``[arm]``
    section) reused for each extra arm."""
    keys = {k: f for k, f in arm.fields.items() if k not in ("dh_convention",)}
    keys["model"] = F(
        "str",
        "iiwa",
        doc="'iiwa' (the paper's KUKA LBR iiwa) or a URDF file (a path relative to the "
        "scenario file; the base's own file (base.urdf): the arm is its subtree from "
        "root_link, a link below base.link)",
    )
    fields = {
        "name": F(
            "name",
            doc="the arm's name, unique among the arms: its metrics are ee_rms_<name>, "
            "ee_max_<name>, its series ee_err_<name> ..., its links <name>/<link>",
        ),
        **keys,
        "task": F(
            "choice",
            "initial",
            choices=("initial", "hold", "waypoints"),
            doc="initial: hold where initial_joints_deg put it; hold: the pose center / "
            "orientation_rpy_deg (base frame); waypoints: its [[extra_arm_waypoint]] rows "
            "joined by ScLERP",
        ),
        "center": F(
            "vec", [0.3, 0.0, 0.7], "m", length=3, doc="task = 'hold': position, base frame"
        ),
        "orientation_rpy_deg": F("vec", [0.0, 90.0, 0.0], "deg", length=3, doc="task = 'hold'"),
        "start_time": F(
            "float", 1.0, "s", min=0.0, doc="task = 'hold' or 'waypoints': held until then"
        ),
    }
    return {
        "extra_arm": Section(
            fields,
            many=True,
            doc="a second (third ...) arm on the base, run by the [arm_controller] law with its "
            "own task and metrics (the first arm is [arm])",
        ),
        "extra_arm_waypoint": Section(
            {
                "arm": F("str", doc="the extra arm's name (extra_arm.name)"),
                "time": F("float", unit="s", min=0.0, doc="arrival time (after its start_time)"),
                "xyz": F("vec", unit="m", length=3, doc="end-effector position, base frame"),
                "rpy_deg": F("vec", unit="deg", length=3, doc="end-effector orientation"),
            },
            many=True,
            doc="extra_arm.task = 'waypoints': the poses of the arm named 'arm', in time order",
        ),
    }
