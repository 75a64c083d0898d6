"""The animation's scene posed frame by frame: forward kinematics of the recorded plant at
each frame's ``q``, every part's vertices in the inertial frame [m], the view's limits,
playback rate and camera azimuth, and the title."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...dq import transform_from_dq
from ...multibody import forward_kinematics
from .common import status_text
from .recorded import check_recorded_series
from .scene import Scene, base_transforms, build_scene, scenario_name
from .target_view import TARGET_BODY
from .units import format_quantity

__all__ = [
    "EYE",
    "PosedScene",
    "animation_title",
    "face_colors",
    "pose_scene",
    "posed_vertices",
    "scene_bounds",
    "time_labels",
    "vertex_offsets",
    "view_azimuth",
]

_FPS_RANGE = (1.0, 30.0)  # [frames/s] of the default (real-time) playback


def posed_vertices(scene: Scene):
    """``(verts, ee)``: per group the vertices (n_frames, n, 3) [m] of its parts at each
    frame (inertial frame), and the end-effector position (n_frames, 3) [m]."""
    model = scene.model
    fi = (
        model.frame_index(scene.ee_frame)
        if scene.ee_frame in {f.name for f in model.frames}
        else None
    )
    nF = len(scene.q)
    T_all, ee = [], np.empty((nF, 3))
    for j, q in enumerate(scene.q):
        kin = forward_kinematics(model, q)
        T_all.append(transform_from_dq(kin.pose))
        if fi is not None:
            ee[j] = transform_from_dq(kin.frame_pose[fi])[:3, 3]
        elif scene.ee_frame:
            ee[j] = transform_from_dq(kin.pose[model.body_index(scene.ee_frame)])[:3, 3]
        else:  # no end-effector (a system without an arm)
            ee[j] = np.nan
    T_all = np.asarray(T_all)  # (nF, nb, 4, 4)
    out = {}
    for g, parts in scene.parts.items():
        if not parts:
            continue
        chunks = []
        for p in parts:
            V = p.mesh.vertices
            if p.scale is None:
                local = np.broadcast_to(V @ p.T[:3, :3].T + p.T[:3, 3], (nF, *V.shape))
            else:
                local = np.einsum("ij,fnj->fni", p.T[:3, :3], V[None] * p.scale[:, None, :])
                local = local + p.T[:3, 3]
            Tb = scene.target.T if p.body == TARGET_BODY else T_all[:, p.body]
            chunks.append(np.einsum("fij,fnj->fni", Tb[:, :3, :3], local) + Tb[:, None, :3, 3])
        out[g] = np.concatenate(chunks, axis=1)
    return out, ee


def face_colors(parts, default):
    """One colour per face, or None when every part has the group's colour."""
    if all(p.color in (None, default) for p in parts):
        return None
    return [c for p in parts for c in [p.color or default] * len(p.mesh.faces)]


def scene_bounds(verts: dict, extra: list):
    """``(lo, hi)`` (3,) [m]: a cube around every vertex and the points of ``extra``
    (arrays (n, 3) or None), with a margin; non-finite points left out."""
    pts = [v.reshape(-1, 3) for v in verts.values()] + [e for e in extra if e is not None]
    allp = np.concatenate([p[np.all(np.isfinite(p), axis=1)] for p in pts])
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    c = 0.5 * (lo + hi)
    half = 0.5 * float(np.max(hi - lo)) * 1.08 + 1e-3
    return c - half, c + half


def animation_title(res) -> str:
    """``<b>name</b>: complete, 20 s simulated`` or the run's status (``FAILED at ...``)."""
    name = scenario_name(res)
    status = status_text(res)
    t_end = float(res.t[-1]) if len(res.t) else 0.0
    if not status:
        status = f"complete, {format_quantity(t_end, 's')} simulated"
    return f"<b>{name}</b>: {status}"


@dataclass
class PosedScene:
    """A scene posed frame by frame (what the page and the video draw)."""

    scene: Scene
    verts: dict  # group -> (n_frames, n, 3) [m]
    ee: NDArray[np.float64]  # (n_frames, 3) [m]
    lo: NDArray[np.float64]  # (3,) axis limits [m]
    hi: NDArray[np.float64]
    fps: float  # [frames/s]


def pose_scene(results, frames, fps) -> PosedScene:
    """The run's scene (:func:`dqspace.scenarios.figures.scene.build_scene`) posed at
    ``frames`` samples at most, played at ``fps`` [frames/s] (None: real time within
    1-30 frames/s).

    Raises
    ------
    ValueError : bad ``frames`` or ``fps``, no ``q`` series, or see ``build_scene``
    """
    if isinstance(frames, bool) or not isinstance(frames, (int, np.integer)) or frames < 1:
        raise ValueError(f"frames must be a positive whole number, got {frames!r}")
    check_recorded_series(results)  # a damaged result: one error naming its file
    if fps is not None and (
        isinstance(fps, bool)
        or not isinstance(fps, (int, float))
        or not math.isfinite(fps)
        or fps <= 0
    ):
        raise ValueError(f"fps must be a positive number of frames per second, got {fps!r}")
    if "q" not in results:
        raise ValueError("the result has no configuration series 'q' to animate")
    scene = build_scene(results, int(frames))
    verts, ee = posed_vertices(scene)
    target_path = scene.target.path if scene.target is not None else None
    lo, hi = scene_bounds(verts, [ee, scene.ee_path, scene.ref_path, target_path])
    duration = float(scene.t[-1] - scene.t[0])
    if fps is None:
        n = len(scene.t)
        fps = float(np.clip((n - 1) / duration, *_FPS_RANGE)) if duration > 0 else 1.0
    return PosedScene(scene, verts, ee, lo, hi, float(fps))


def vertex_offsets(parts):
    """The index of each part's first vertex in its group's stacked vertices."""
    out, n = [], 0
    for p in parts:
        out.append(n)
        n += len(p.mesh.vertices)
    return out


def time_labels(t) -> list[str]:
    """The times ``t`` [s] with the fewest decimals (0 to 3) that write them all exactly."""
    t = np.asarray(t, float)
    digits = next((d for d in range(3) if np.allclose(np.round(t, d), t, rtol=0, atol=1e-9)), 3)
    return [f"{x:.{digits}f}" for x in t]


#: the camera's horizontal distance and height, in units of the scene's half-size
EYE = (1.85, 0.7)


def view_azimuth(ee, q8, extent) -> float:
    """Azimuth [rad] of the view: 50 deg to the right of the arm's side, i.e. of the
    direction from the base to the end-effector's mean position (where the task is)."""
    d = np.mean(ee, axis=0) - np.mean(base_transforms(q8)[:, :3, 3], axis=0)
    az = math.atan2(d[1], d[0]) if math.hypot(d[0], d[1]) > 0.05 * float(extent[0]) else 0.0
    return az - math.radians(50.0)
