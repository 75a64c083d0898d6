"""A 3-D animation of a stored run: one self-contained HTML page (plotly, WebGL, offline).

:func:`animate` draws what the run recorded: the plant model and the devices' placement in
its manifest (``manifest["system"]``, see :mod:`dqspace.scenarios.build.describe`), posed
by forward kinematics at the recorded configurations ``q``; it writes a page that plays
the run with play/pause buttons and a time slider.  It never rebuilds the system from the
scenario, so animating a received result runs no code from it (a URDF arm's ``<visual>``
file is read as data).  plotly.js is embedded in the page: it opens from disk with no
network.

What is drawn (inertial frame, metres):

* the base: a box of the recorded base size centred on the base frame, posed by ``q[:8]``;
* the arm: each link's URDF ``<visual>`` geometry (box, cylinder, sphere, STL or OBJ mesh)
  where the arm is a URDF that has it, else a stick model: a cylinder from each body's
  joint origin to the next one's and to the end-effector frame, and a housing along every
  moving joint's axis;
* thrusters: a nozzle at each position opening along ``-direction``, and a plume from it
  while the thruster fires (an impulse over the frame's interval, ``thrust_impulse`` or
  else ``thrust_on`` times the thrust limit), its length growing with the mean thrust;
* VSCMGs: each wheel as a disc across its spin axis, its gimbal axle, and an arrow along
  the spin axis (the wheel's angular momentum direction) turning with the gimbal angle;
  reaction wheels: a disc and an arrow along the axis, its length the wheel speed over
  its limit (sign included);
* the end-effector (a marker at the EE frame), its path so far (the recorded ``ee_pos``,
  base frame, moved to the inertial frame with the base pose) and its reference path
  (``ee_ref``, dashed); open-loop runs record ``ee_pos_I`` / ``ee_ref_I`` directly.

Frames are recorded samples, evenly spread (at most ``frames`` of them); the page plays
them at ``fps`` frames per second (real time by default, within 1-30 frames/s).  The scene
has equal axis scales and fixed limits around everything it shows.  The title names the
scenario and says when the run failed or was interrupted.

The page opens at frame ``k`` with ``#frame=k`` after its address
(``animation.html#frame=120``): what a screenshot of a given time needs.

``format="gif"`` or ``"mp4"`` draws the same posed scene with matplotlib instead, one
image per frame (:mod:`.video`; mp4 needs an ffmpeg program or the imageio-ffmpeg package).

Each frame stores every drawn vertex (float32, base64): the 20 s station-keeping run's page
of 200 frames is about 7.8 MiB, plotly.js 4.6 MiB of it.  URDF meshes are thinned by vertex
clustering to :data:`MESH_VERTEX_BUDGET` vertices in all.

The scene is built in :mod:`.scene` (from the manifest), posed in :mod:`.posing`; meshes
are in :mod:`.meshes`, URDF visuals in :mod:`.visuals`.
"""

from __future__ import annotations

import base64
import html
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..store.storage import atomic_write_bytes
from .meshes import Mesh, read_mesh, simplify_mesh
from .posing import (
    EYE,
    animation_title,
    face_colors,
    pose_scene,
    time_labels,
    vertex_offsets,
    view_azimuth,
)
from .scene import ARM_COLOR, BASE_COLOR, EE_COLOR, GROUPS, PATH_COLOR, REF_COLOR, scenario_name
from .target_view import TARGET_COLOR, box_colors, fixture_positions, grasp_labels
from .video import write_video
from .visuals import MESH_VERTEX_BUDGET, Visual, urdf_visuals

if TYPE_CHECKING:
    from ..store.results import Results

__all__ = [
    "ARM_COLOR",
    "BASE_COLOR",
    "FORMATS",
    "MAX_FRAMES",
    "MESH_VERTEX_BUDGET",
    "Mesh",
    "Visual",
    "animate",
    "animation_figure",
    "read_mesh",
    "simplify_mesh",
    "typed_array",
    "urdf_visuals",
]

#: default number of frames (a larger number is allowed; the page grows with it)
MAX_FRAMES = 200


def typed_array(a: ArrayLike, dtype: str = "f4") -> dict:
    """A plotly.js typed array ``{"dtype", "bdata"}`` (base64 of little-endian values):
    how the page stores numbers compactly; ``dtype`` ``"f4"``, ``"f8"`` or ``"i4"``."""
    a = np.ascontiguousarray(np.asarray(a).ravel(), dtype=np.dtype(dtype).newbyteorder("<"))
    return {"dtype": dtype, "bdata": base64.b64encode(a.tobytes()).decode("ascii")}


def _xyz(P, dtype="f4"):
    return {k: typed_array(P[:, i], dtype) for i, k in enumerate("xyz")}


def animation_figure(
    results: Results, *, frames: int = MAX_FRAMES, fps: float | None = None
) -> dict:
    """The animated figure of a run (what :func:`animate` writes), as a plotly figure dict.

    Parameters
    ----------
    results : Results of ``dqspace run`` (closed loop) or of the dynamics check
    frames : int >= 1, largest number of frames (evenly spread recorded samples)
    fps : float > 0, playback rate [frames/s]; default real time, within 1-30 frames/s

    Returns
    -------
    dict ``{"data", "layout", "frames"}`` (``plotly.graph_objects.Figure(d)`` makes a graph
    object of it): mesh traces (base, arm links and joints, thrusters, plumes, VSCMG and
    wheel discs and arrows) and scatter traces (end-effector reference path, recorded path,
    reference point and marker).  ``frames[j]`` is named ``str(j)`` and holds the moving
    traces (indices in ``frames[j]["traces"]``); slider step j shows it, its ``value`` the
    sample's time [s] (``repr`` of the float), its ``label`` the time as displayed;
    coordinates are typed arrays (:func:`typed_array`; ``"f4"`` for meshes and paths, the
    end-effector marker ``"f8"``).  Play/pause buttons and a slider whose labels are the
    times [s].

    Raises
    ------
    ValueError : bad ``frames`` or ``fps``; a result without ``q``, without its recorded
        plant (``manifest["system"]``; results written before it was recorded), whose ``q``
        does not fit the recorded plant, or with no finite sample
    """
    pose = pose_scene(results, frames, fps)
    scene, verts, ee = pose.scene, pose.verts, pose.ee
    nF = len(scene.t)

    traces, moving = [], []  # moving: (trace index, function of the frame -> its update)
    for g, parts in scene.parts.items():
        if g not in verts:
            continue
        look = GROUPS[g]
        F = np.concatenate(
            [p.mesh.faces + off for p, off in zip(parts, vertex_offsets(parts), strict=True)]
        )
        fc = face_colors(parts, look.color)
        traces.append(
            {
                "type": "mesh3d",
                **_xyz(verts[g][0]),
                **{k: typed_array(F[:, c], "i4") for c, k in enumerate("ijk")},
                "name": look.name,
                "showlegend": True,
                "flatshading": True,
                "opacity": look.opacity,
                "hoverinfo": "name",
                "lighting": {"ambient": 0.55, "diffuse": 0.75, "specular": 0.15, "roughness": 0.6},
                "lightposition": {"x": 1e3, "y": -5e2, "z": 2e3},
                **({"facecolor": fc} if fc else {"color": look.color}),
            }
        )
        if g == "target":  # its colour changes at the grasp
            colors = box_colors(scene.target)
            traces[-1]["color"] = colors[0]
            moving.append(
                (
                    len(traces) - 1,
                    lambda j, c=colors: {
                        "type": "mesh3d",
                        **_xyz(verts["target"][j]),
                        "color": c[j],
                    },
                )
            )
            continue
        moving.append((len(traces) - 1, lambda j, g=g: {"type": "mesh3d", **_xyz(verts[g][j])}))
    if scene.ref_path is not None:
        traces.append(
            {
                "type": "scatter3d",
                **_xyz(_decimate(scene.ref_path, 2000)),
                "mode": "lines",
                "name": "EE reference path",
                "line": {"color": REF_COLOR, "width": 3, "dash": "dash"},
                "hoverinfo": "skip",
            }
        )
    if scene.ee_path is not None:
        P = scene.ee_path
        traces.append(
            {
                "type": "scatter3d",
                **_xyz(P[:1]),
                "mode": "lines",
                "name": "EE path (recorded)",
                "line": {"color": PATH_COLOR, "width": 5},
                "hoverinfo": "skip",
            }
        )
        moving.append((len(traces) - 1, lambda j: {"type": "scatter3d", **_xyz(P[: j + 1])}))
    if scene.ref_now is not None:
        R = scene.ref_now
        traces.append(
            {
                "type": "scatter3d",
                **_xyz(R[:1]),
                "mode": "markers",
                "name": "EE reference now",
                "marker": {"size": 5, "color": REF_COLOR, "symbol": "circle-open"},
                "hoverinfo": "skip",
            }
        )
        moving.append((len(traces) - 1, lambda j: {"type": "scatter3d", **_xyz(R[j : j + 1])}))
    if scene.target is not None:
        _target_traces(traces, moving, scene.target)
    traces.append(
        {
            "type": "scatter3d",
            **_xyz(ee[:1], "f8"),
            "mode": "markers",
            "name": "end effector",
            "marker": {"size": 5, "color": EE_COLOR, "symbol": "diamond"},
            "hovertemplate": "end effector<br>x %{x:.4f} m<br>y %{y:.4f} m<br>z %{z:.4f} m"
            "<extra></extra>",
        }
    )
    moving.append((len(traces) - 1, lambda j: {"type": "scatter3d", **_xyz(ee[j : j + 1], "f8")}))

    frame_list = [
        {
            "name": str(j),
            "traces": [i for i, _ in moving],
            "data": [update(j) for _, update in moving],
        }
        for j in range(nF)
    ]
    az = view_azimuth(ee, scene.q[:, :8], pose.hi - pose.lo)
    camera = dict(
        eye=dict(x=EYE[0] * math.cos(az), y=EYE[0] * math.sin(az), z=EYE[1]),
        up=dict(x=0, y=0, z=1),
    )
    return {
        "data": traces,
        "layout": _layout(results, scene.t, pose.lo, pose.hi, pose.fps, camera),
        "frames": frame_list,
    }


def _target_traces(traces, moving, view):
    """A capture's target: its frame's path so far (``target_pose``) and the fixture's
    marker, labelled ``grasped at t = ...`` from the grasp on."""
    P = view.path
    traces.append(
        {
            "type": "scatter3d",
            **_xyz(P[:1], "f8"),
            "mode": "lines",
            "name": "target path (recorded)",
            "line": {"color": TARGET_COLOR, "width": 4, "dash": "dot"},
            "hoverinfo": "skip",
        }
    )
    moving.append((len(traces) - 1, lambda j: {"type": "scatter3d", **_xyz(P[: j + 1], "f8")}))
    F, text, colors = fixture_positions(view), grasp_labels(view), box_colors(view)

    def marker(j):
        return {
            "type": "scatter3d",
            **_xyz(F[j : j + 1], "f8"),
            "text": [f"<b>{text[j]}</b>" if text[j] else ""],
            "marker": {"size": 6, "color": colors[j], "symbol": "square"},
        }

    traces.append(
        {
            **marker(0),
            "mode": "markers+text",
            "name": "grapple fixture",
            "textposition": "middle right",
            "textfont": {"size": 16, "color": "#0b4f1c"},
            "hovertemplate": "grapple fixture<br>x %{x:.4f} m<br>y %{y:.4f} m<br>z %{z:.4f} m"
            "<extra></extra>",
        }
    )
    moving.append((len(traces) - 1, marker))


def _decimate(P, n):
    if len(P) <= n:
        return P
    return P[np.unique(np.round(np.linspace(0, len(P) - 1, n)).astype(int))]


def _layout(res, t, lo, hi, fps, camera):
    labels = time_labels(t)
    still = dict(frame=dict(duration=0, redraw=True), mode="immediate", transition=dict(duration=0))
    play = dict(
        frame=dict(duration=1000.0 / fps, redraw=True),
        fromcurrent=True,
        mode="immediate",
        transition=dict(duration=0),
    )
    axis = dict(showbackground=True, backgroundcolor="#f4f6fa", gridcolor="#d0d4dc",
                zerolinecolor="#a0a4ac")  # fmt: skip
    return dict(
        title=dict(text=animation_title(res), x=0.5, xanchor="center", y=0.97),
        margin=dict(l=0, r=0, t=48, b=0),
        paper_bgcolor="white",
        legend=dict(x=0.01, y=0.95, bgcolor="rgba(255,255,255,0.75)", font=dict(size=11)),
        scene=dict(
            xaxis=dict(axis, title="x [m]", range=[lo[0], hi[0]]),
            yaxis=dict(axis, title="y [m]", range=[lo[1], hi[1]]),
            zaxis=dict(axis, title="z [m]", range=[lo[2], hi[2]]),
            aspectmode="cube",
            domain=dict(x=[0.15, 1.0], y=[0.12, 1.0]),  # legend on the left, slider below
            camera=camera,
        ),
        updatemenus=[
            dict(
                type="buttons",
                direction="left",
                x=0.01,
                y=0.02,
                xanchor="left",
                yanchor="bottom",
                pad=dict(r=8, t=8),
                showactive=False,
                buttons=[
                    dict(label="▶ play", method="animate", args=[None, play]),
                    dict(label="❚❚ pause", method="animate", args=[[None], still]),
                ],
            )
        ],
        sliders=[
            dict(
                active=0,
                x=0.17,
                y=0.02,
                len=0.8,
                xanchor="left",
                yanchor="bottom",
                pad=dict(t=4, b=4),
                currentvalue=dict(prefix="t = ", suffix=" s", font=dict(size=13, color="#222")),
                # 200 step labels would overlap: the current time is shown above instead
                ticklen=0,
                minorticklen=0,
                tickcolor="rgba(0,0,0,0)",
                font=dict(size=1, color="rgba(0,0,0,0)"),
                steps=[
                    # value: the sample's time [s] in full; label: as displayed
                    dict(method="animate", label=lab, value=repr(float(x)), args=[[str(j)], still])
                    for j, (lab, x) in enumerate(zip(labels, t, strict=True))
                ],
            )
        ],
    )


# ------------------------------------------------------------------ the page

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>html, body {{ margin: 0; height: 100%; overflow: hidden; background: white; }}
body > div {{ width: 100%; height: 100%; }}</style>
</head>
<body>
{body}
</body>
</html>
"""

# after the plot is drawn: "#frame=k" in the address shows frame k (then body[data-frame])
_JUMP = """
(function () {
  var gd = document.getElementById('{plot_id}');
  var m = /[#&?]frame=(\\d+)/.exec(window.location.hash + '&' + window.location.search);
  function done(k) { document.body.setAttribute('data-frame', String(k)); }
  if (!m) { done(0); return; }
  var k = Math.max(0, Math.min(parseInt(m[1], 10), N_FRAMES - 1));
  Plotly.animate(gd, [String(k)], {mode: 'immediate', frame: {duration: 0, redraw: true},
                                   transition: {duration: 0}}).then(function () { done(k); });
})();
"""


FORMATS = ("html", "mp4", "gif")


def animate(
    results: Results,
    path: str | os.PathLike,
    *,
    frames: int = MAX_FRAMES,
    fps: float | None = None,
    format: str | None = None,
) -> Path:
    """Write the run's 3-D animation: one self-contained HTML page, or a video.

    Parameters
    ----------
    results : Results (``Results.load(run_directory)``)
    path : the file to write (its folder is created)
    frames, fps : see :func:`animation_figure`
    format : ``"html"`` (the interactive page), ``"mp4"`` or ``"gif"`` (the same scene
        drawn by matplotlib, 800 x 600 pixels, from the page's initial view); None: from
        the suffix of ``path`` (``.mp4``, ``.gif``, ``.html``; none: a page); another
        suffix, or one that contradicts ``format``, is refused (nothing written)

    Returns
    -------
    Path of the file.  A page has plotly.js inline, so it opens offline; ``#frame=k``
    after its address opens it at frame k.

    Raises
    ------
    ValueError : see :func:`animation_figure`; an unknown format; mp4 without an ffmpeg
        program or the imageio-ffmpeg package
    OSError : the file cannot be written (nothing is left half-written)
    """
    path = Path(path)
    suffixes = {".mp4": "mp4", ".gif": "gif", ".html": "html", ".htm": "html"}
    suffix = path.suffix.lower()
    if suffix and suffix not in suffixes:
        raise ValueError(
            f"{path.name}: the suffix {path.suffix!r} names no format written here "
            f"(.html, .mp4, .gif)"
        )
    fmt = format or suffixes.get(suffix, "html")
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if suffix and suffixes[suffix] != fmt:
        raise ValueError(f"{path.name}: format {fmt!r} does not match the suffix {path.suffix!r}")
    if fmt != "html":
        return write_video(results, path, fmt, frames, fps)
    import plotly.io as pio  # heavy: loaded when a page is written

    fig = animation_figure(results, frames=frames, fps=fps)
    body = pio.to_html(
        fig,
        include_plotlyjs=True,
        full_html=False,
        auto_play=False,
        div_id="dqspace-animation",
        default_width="100%",
        default_height="100%",
        post_script=_JUMP.replace("N_FRAMES", str(len(fig["frames"]))),
        config=dict(responsive=True, displaylogo=False),
        validate=False,
    )
    title = f"{scenario_name(results, 'run')}: dqspace animation"
    page = _PAGE.format(title=html.escape(title), body=body)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, page.encode("utf-8"))
    return path
