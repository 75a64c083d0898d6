"""What the figures and the animation need of a built system, as plain data for the manifest.

The runner records :func:`figure_facts` (closed loop) or :func:`open_loop_figure_facts`
(the dynamics check) in ``manifest["system"]``; the figures and the animation read these
facts and never rebuild the system (rebuilding would import the user's controller modules
a result names, and would draw a changed arm file rather than what ran).

Keys (plain JSON: dicts, lists, strings, floats, ints):

``plant_model``
    the plant model (:func:`dqspace.multibody.model_to_dict`): bodies, joints, inertias,
    frames; the animation poses it by forward kinematics at the recorded ``q``.
``scene``
    what the animation draws besides the bodies: ``base_size`` [m] (the base cube's edge),
    ``ee_frame`` (the end-effector frame's name), ``urdf`` (``{"path", "sha256"}`` of a
    URDF arm, for its ``<visual>`` geometry, else None), ``thrusters`` (``position``,
    ``direction`` in base axes [m, -], ``max_thrust`` [N] each), ``vscmgs``
    (``gimbal_body``, ``wheel_body``, ``wheel_v``: indices into the model and ``v``;
    ``position`` [m]) and ``wheels`` (``rotor_body``, ``wheel_v``, ``position`` [m],
    ``max_speed`` [rad/s], None for no limit).
``steering``
    the VSCMG steering law's constants (``h_ref`` [N m s], ``mu``, ``lambda0`` [N² m² s²],
    ``wheel_mu`` [-]) and ``singularity_level``, the δ_C below which the wheel mode's weight
    exceeds 1 % of full (``ln(100) / wheel_mu``); None without VSCMGs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...multibody import JointType, Model, model_to_dict

if TYPE_CHECKING:
    from .system import System

__all__ = ["figure_facts", "open_loop_figure_facts"]

#: the arm sources that are not a URDF file (no visuals to read; "none": no arm)
_BUILT_IN_ARMS = ("iiwa", "dh", "none", "")


def _floats(x) -> list[float]:
    return [float(v) for v in x]


def _scene(model: Model, *, ee_frame, base_size, urdf=None, thrusters=None, cm=None, wm=None):
    scene = {
        "base_size": float(base_size),
        "ee_frame": str(ee_frame),
        "urdf": urdf,
        "thrusters": [],
        "vscmgs": [],
        "wheels": [],
    }
    if thrusters is not None:
        scene["thrusters"] = [
            {"position": _floats(p), "direction": _floats(d), "max_thrust": float(f)}
            for p, d, f in zip(
                thrusters.positions, thrusters.directions, thrusters.sigma_max, strict=True
            )
        ]
    if cm is not None:
        ix = cm.index
        scene["vscmgs"] = [
            {
                "gimbal_body": int(g),
                "wheel_body": int(w),
                "wheel_v": int(v),
                "position": _floats(u.position),
            }
            for g, w, v, u in zip(
                ix.gimbal_body, ix.wheel_body, ix.wheel_v, cm.cluster.units, strict=True
            )
        ]
    if wm is not None:
        movable = [k for k in range(model.nb) if int(model.joint_type[k]) != JointType.FIXED]
        body_of_q = {int(model.q_index[k]): k for k in movable}
        scene["wheels"] = [
            {
                "rotor_body": body_of_q[int(q)],
                "wheel_v": int(v),
                "position": _floats(w.position),
                "max_speed": float(s) if math.isfinite(s) else None,
            }
            for q, v, w, s in zip(
                wm.index.wheel_q, wm.index.wheel_v, wm.array.wheels, wm.array.max_speed, strict=True
            )
        ]
    return scene


def figure_facts(system: System) -> dict:
    """The facts of a built closed-loop system the figures and the animation read.

    Parameters
    ----------
    system : System (:func:`dqspace.scenarios.build.system.build_system`)

    Returns
    -------
    dict with ``plant_model``, ``scene`` and ``steering`` (see the module docstring); plain
    JSON data
    """
    info = system.arm_info
    urdf = None
    if info.source not in _BUILT_IN_ARMS:
        urdf = {"path": str(info.source), "sha256": str(info.sha256)}
    law = system.steering
    steering = None
    if law is not None:
        steering = {
            "h_ref": float(law.h_ref),
            "mu": float(law.mu),
            "lambda0": float(law.lambda0),
            "wheel_mu": float(law.wheel_mu),
            "singularity_level": math.log(100.0) / float(law.wheel_mu),
        }
    scene = _scene(
        system.plant,
        ee_frame=info.ee_frame,
        base_size=system.cfg["base"]["size"],
        urdf=urdf,
        thrusters=system.thrusters,
        cm=system.cluster_model,
        wm=system.wheel_model,
    )
    return {"plant_model": model_to_dict(system.plant), "scene": scene, "steering": steering}


def open_loop_figure_facts(model: Model, config: dict) -> dict:
    """The facts of an open-loop run (the dynamics check) the animation reads.

    Parameters
    ----------
    model : Model, the model the open-loop run integrates (end-effector frame ``"ee"``)
    config : dict, the resolved scenario (its ``base.size`` [m] is the drawn base's edge,
        0.3 m when absent)

    Returns
    -------
    dict with ``plant_model``, ``scene`` (no devices) and ``steering`` (None)
    """
    size = float((config.get("base") or {}).get("size", 0.3))
    scene = _scene(model, ee_frame="ee", base_size=size)
    return {"plant_model": model_to_dict(model), "scene": scene, "steering": None}
