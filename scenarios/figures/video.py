"""The animation as a video (GIF or MP4): the posed scene of :mod:`.posing` drawn by
matplotlib, one image per frame, from the HTML page's initial view."""

from __future__ import annotations

import math
import os
import re
import shutil

import numpy as np
from numpy.typing import NDArray

from .posing import (
    EYE,
    animation_title,
    face_colors,
    pose_scene,
    time_labels,
    vertex_offsets,
    view_azimuth,
)
from .scene import EE_COLOR, GROUPS, PATH_COLOR, REF_COLOR
from .status import wrap_lines
from .target_view import TARGET_COLOR, box_colors, fixture_positions, grasp_labels

__all__ = ["write_video"]


def _rgba_array(colors) -> NDArray[np.float64]:
    """(n, 4) RGBA in [0, 1] from ``#rrggbb`` or ``rgb(r,g,b)`` strings."""
    out = np.ones((len(colors), 4))
    for i, c in enumerate(colors):
        if c.startswith("rgb("):
            out[i, :3] = [int(x) / 255 for x in c[4:-1].split(",")]
        else:
            out[i, :3] = [int(c[k : k + 2], 16) / 255 for k in (1, 3, 5)]
    return out


def _video_writer(fmt, fps):
    """(matplotlib writer, rcParams it needs)."""
    from matplotlib import animation  # heavy: loaded when a video is written

    if fmt == "gif":
        return animation.PillowWriter(fps=fps), {}
    exe = shutil.which("ffmpeg")
    if exe is None:
        try:
            import imageio_ffmpeg  # optional, heavy: only for an mp4 without ffmpeg

            exe = imageio_ffmpeg.get_ffmpeg_exe()
        except (ImportError, RuntimeError):
            raise ValueError(
                "mp4 needs the ffmpeg program on PATH or the imageio-ffmpeg package "
                "(pip install imageio-ffmpeg); a gif or the HTML page needs neither"
            ) from None
    writer = animation.FFMpegWriter(fps=fps, codec="libx264", extra_args=["-pix_fmt", "yuv420p"])
    return writer, {"animation.ffmpeg_path": exe}


def write_video(results, path, fmt, frames, fps):
    """Write the scene of :func:`dqspace.scenarios.figures.animate.animation_figure` as a
    video: 800 x 600 pixels, ``fmt`` ``"gif"`` or ``"mp4"``, at most ``frames`` frames
    played at ``fps`` [frames/s] (None: real time); returns ``path`` (written atomically).

    Raises
    ------
    ValueError : see :func:`dqspace.scenarios.figures.posing.pose_scene`; mp4 without an
        ffmpeg program or the imageio-ffmpeg package
    """
    # matplotlib's animation, canvas and 3-D drawing: heavy, loaded for a video only
    import matplotlib  # heavy, see above
    from matplotlib import animation  # heavy, see above
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # heavy, see above
    from matplotlib.figure import Figure  # heavy, see above
    from matplotlib.patches import Patch  # heavy, see above

    pose = pose_scene(results, frames, fps)
    writer, rc = _video_writer(fmt, pose.fps)
    scene, verts, ee = pose.scene, pose.verts, pose.ee
    fig = Figure(figsize=(8, 6), dpi=100)
    FigureCanvasAgg(fig)
    # the title wrapped to the frame's width (a degraded run's names every degradation),
    # the scene below its lines
    title = wrap_lines(re.sub(r"</?b>", "", animation_title(results)), 8.0, fontsize=11)
    top = 0.95 - 0.032 * (title.count("\n") + 1)
    ax = fig.add_axes((0.0, 0.0, 1.0, top), projection="3d")
    for set_lim, lo, hi in zip(
        (ax.set_xlim, ax.set_ylim, ax.set_zlim), pose.lo, pose.hi, strict=True
    ):
        set_lim(lo, hi)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x [m]"), ax.set_ylabel("y [m]"), ax.set_zlabel("z [m]")
    az = view_azimuth(ee, scene.q[:, :8], pose.hi - pose.lo)
    ax.view_init(elev=math.degrees(math.atan2(EYE[1], EYE[0])), azim=math.degrees(az))
    fig.suptitle(title, fontsize=11, parse_math=False)  # a message from the result: not TeX
    meshes = []  # (group, faces, colours, opacity)
    for g, parts in scene.parts.items():
        if g in verts:
            look = GROUPS[g]
            F = np.concatenate(
                [p.mesh.faces + o for p, o in zip(parts, vertex_offsets(parts), strict=True)]
            )
            fc = face_colors(parts, look.color) or [look.color] * len(F)
            meshes.append((g, F, _rgba_array(fc), look.opacity))
    handles = [Patch(color=GROUPS[g].color, label=GROUPS[g].name) for g, *_ in meshes]
    if scene.ref_path is not None:
        (ref,) = ax.plot(
            *scene.ref_path.T, color=REF_COLOR, ls="--", lw=1, label="EE reference path"
        )
        handles.append(ref)
    (trail,) = ax.plot([], [], [], color=PATH_COLOR, lw=1.5, label="EE path (recorded)")
    tv = scene.target  # a capture's target: its path, its colour and label at the grasp
    if tv is not None:
        (t_trail,) = ax.plot(
            [], [], [], color=TARGET_COLOR, lw=1.5, ls=":", label="target path (recorded)"
        )
        handles.append(t_trail)
        fix, labels_g = fixture_positions(tv), grasp_labels(tv)
        grasp_rgba = {c: _rgba_array([c])[0] for c in set(box_colors(tv))}
        note = ax.text(*fix[0], "", color="#0b4f1c", fontsize=11, fontweight="bold", zorder=10,
                       bbox={"facecolor": "white", "alpha": 0.75, "lw": 0})  # fmt: skip
    (marker,) = ax.plot([], [], [], "D", color=EE_COLOR, ms=4, label="end effector")
    handles += [trail, marker]
    fig.legend(
        handles=handles, loc="upper left", fontsize=7, frameon=False, bbox_to_anchor=(0, top + 0.01)
    )
    stamp = fig.text(0.98, top + 0.01, "", ha="right", fontsize=10)
    labels = time_labels(scene.t)
    drawn = []

    def draw(j):
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection  # heavy (3-D), as above

        while drawn:
            drawn.pop().remove()
        for g, F, colors, alpha in meshes:
            if g == "target":  # the box's colour changes at the grasp
                colors = np.broadcast_to(grasp_rgba[box_colors(tv)[j]], colors.shape)
            tri = verts[g][j][F]
            keep = (
                np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
                > 1e-12
            )
            if keep.any():
                pc = Poly3DCollection(
                    tri[keep],
                    facecolors=colors[keep],
                    alpha=alpha,
                    shade=True,
                    edgecolors=colors[keep],  # shaded like the faces: no seams
                    linewidths=0.3 if alpha == 1.0 else 0.0,  # (nor diagonals when clear)
                )
                ax.add_collection3d(pc)
                drawn.append(pc)
        if scene.ee_path is not None:
            trail.set_data_3d(*scene.ee_path[: j + 1].T)
        marker.set_data_3d(*ee[j : j + 1].T)
        if tv is not None:
            t_trail.set_data_3d(*tv.path[: j + 1].T)
            note.set_position_3d(fix[j])
            note.set_text(labels_g[j])
        stamp.set_text(f"t = {labels[j]} s")
        return []

    anim = animation.FuncAnimation(
        fig, draw, frames=len(scene.t), interval=1000.0 / pose.fps, blit=False
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.partial{path.suffix}")
    try:
        with matplotlib.rc_context(rc):
            anim.save(tmp, writer=writer, dpi=100)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
