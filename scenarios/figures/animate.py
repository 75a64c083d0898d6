"""A 3-D animation of a stored run: one self-contained HTML page (plotly, WebGL, offline).

:func:`animate` rebuilds the run's system from the resolved scenario in the manifest
(:func:`dqspace.scenarios.system.build_system`; the dynamics check's model for an open-loop
run), poses every body by forward kinematics at the recorded configurations ``q`` and
writes a page that plays the run with play/pause buttons and a time slider.  plotly.js is
embedded in the page: it opens from disk with no network.

What is drawn (inertial frame, metres):

* the base: a box of side ``[base] size`` centred on the base frame, posed by ``q[:8]``;
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
image per frame (mp4 needs an ffmpeg program or the imageio-ffmpeg package).

Each frame stores every drawn vertex (float32, base64): the 20 s station-keeping run's page
of 200 frames is about 7.8 MiB, plotly.js 4.6 MiB of it.  URDF meshes are thinned by vertex
clustering to :data:`MESH_VERTEX_BUDGET` vertices in all.
"""

from __future__ import annotations

import base64
import hashlib
import html
import logging
import math
import os
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ...dq import dq_normalize, quat_from_rpy_deg, rotation_matrix_from_quat, transform_from_dq
from ...multibody import JointType, Model, forward_kinematics
from .units import format_quantity

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

log = logging.getLogger("dqspace.animate")

#: default number of frames (a larger number is allowed; the page grows with it)
MAX_FRAMES = 200
#: vertices of all URDF meshes together, after thinning
MESH_VERTEX_BUDGET = 1500
#: colours of the scene (hex RGB); the arm's hue is unique in the scene
ARM_COLOR = "#f28e2b"
BASE_COLOR = "#c8b44a"
HOUSING_COLOR = "#50505c"
NOZZLE_COLOR = "#3a3a3a"
PLUME_COLOR = "#4dabf7"
VSCMG_COLOR = "#7b52ab"
WHEEL_COLOR = "#2a9d8f"
EE_COLOR = "#111111"
PATH_COLOR = "#d62728"
REF_COLOR = "#555555"
_FPS_RANGE = (1.0, 30.0)  # [frames/s] of the default (real-time) playback
_SIDES = 12  # of a cylinder or cone, unless a smaller part asks for fewer


# ------------------------------------------------------------------ meshes


@dataclass(frozen=True)
class Mesh:
    """A triangle mesh.

    Attributes
    ----------
    vertices : (n, 3) float array [m]
    faces : (m, 3) int array, vertex indices of each triangle
    """

    vertices: NDArray[np.float64]
    faces: NDArray[np.int64]


def _merge(meshes: list[Mesh]) -> Mesh:
    V, F, n = [], [], 0
    for m in meshes:
        V.append(m.vertices)
        F.append(m.faces + n)
        n += len(m.vertices)
    return Mesh(np.concatenate(V), np.concatenate(F))


def _box(size: ArrayLike) -> Mesh:
    """Box of edge lengths ``size`` (3,) [m], centred on the origin."""
    h = 0.5 * np.asarray(size, float)
    s = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    faces = [
        (0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5),  # -x, +x
        (0, 4, 5), (0, 5, 1), (2, 3, 7), (2, 7, 6),  # -y, +y
        (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3),  # -z, +z
    ]  # fmt: skip
    return Mesh(s * h, np.array(faces))


def _ring(radius, z, sides):
    a = 2.0 * np.pi * np.arange(sides) / sides
    return np.column_stack([radius * np.cos(a), radius * np.sin(a), np.full(sides, z)])


def _cylinder(radius: float, z0: float, z1: float, sides: int = _SIDES) -> Mesh:
    """Closed cylinder along z from ``z0`` to ``z1`` [m]."""
    n = sides
    V = np.vstack([_ring(radius, z0, n), _ring(radius, z1, n), [[0, 0, z0], [0, 0, z1]]])
    i = np.arange(n)
    j = (i + 1) % n
    c0, c1 = 2 * n, 2 * n + 1
    F = np.vstack(
        [
            np.column_stack([i, j, n + j]),
            np.column_stack([i, n + j, n + i]),
            np.column_stack([np.full(n, c0), j, i]),
            np.column_stack([np.full(n, c1), n + i, n + j]),
        ]
    )
    return Mesh(V, F)


def _cone(radius: float, z_base: float, z_apex: float, sides: int = _SIDES) -> Mesh:
    """Closed cone along z: a disc of ``radius`` at ``z_base``, the apex at ``z_apex``."""
    n = sides
    V = np.vstack([[[0, 0, z_apex]], _ring(radius, z_base, n), [[0, 0, z_base]]])
    i = np.arange(n) + 1
    j = np.arange(1, n + 1) % n + 1
    F = np.vstack(
        [np.column_stack([np.zeros(n, int), i, j]), np.column_stack([np.full(n, n + 1), j, i])]
    )
    return Mesh(V, F)


def _sphere(radius: float, n_lat: int = 6, n_lon: int = _SIDES) -> Mesh:
    """UV sphere centred on the origin."""
    V = [[0.0, 0.0, radius]]
    for k in range(1, n_lat):
        th = np.pi * k / n_lat
        V.extend(_ring(radius * np.sin(th), radius * np.cos(th), n_lon))
    V.append([0.0, 0.0, -radius])
    F = []
    for i in range(n_lon):
        F.append((0, 1 + i, 1 + (i + 1) % n_lon))
    for k in range(n_lat - 2):
        a, b = 1 + k * n_lon, 1 + (k + 1) * n_lon
        for i in range(n_lon):
            i2 = (i + 1) % n_lon
            F.extend([(a + i, b + i, b + i2), (a + i, b + i2, a + i2)])
    last, south = 1 + (n_lat - 2) * n_lon, len(V) - 1
    for i in range(n_lon):
        F.append((south, last + (i + 1) % n_lon, last + i))
    return Mesh(np.asarray(V, float), np.asarray(F))


def _arrow(radius: float) -> Mesh:
    """Arrow of length 1 along z from the origin (shaft ``radius``, head 2.4 radius wide);
    scaled along z per frame."""
    return _merge([_cylinder(radius, 0.0, 0.72, 6), _cone(2.4 * radius, 0.72, 1.0, 6)])


def _z_along(axis: ArrayLike, origin: ArrayLike = (0.0, 0.0, 0.0)) -> NDArray[np.float64]:
    """(4, 4) transform whose z axis is ``axis`` (3,) and whose origin is ``origin``."""
    z = np.asarray(axis, float)
    z = z / np.linalg.norm(z)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    T = np.eye(4)
    T[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    T[:3, 3] = origin
    return T


# ------------------------------------------------------------------ mesh files


def read_mesh(path: str | os.PathLike) -> Mesh:
    """A triangle mesh from an STL (binary or ASCII) or Wavefront OBJ file, in its units.

    Raises
    ------
    ValueError : an unknown format, or a file that is not a valid mesh (naming the file)
    OSError : the file cannot be read
    """
    path = Path(path)
    data = path.read_bytes()
    suffix = path.suffix.lower()
    try:
        if suffix == ".stl":
            tris = _stl_triangles(data)
            V, inv = np.unique(tris.reshape(-1, 3), axis=0, return_inverse=True)
            mesh = Mesh(V, inv.reshape(-1, 3))
        elif suffix == ".obj":
            mesh = _obj_mesh(data.decode("utf-8", "replace"))
        else:
            raise ValueError(f"unsupported mesh format {suffix!r} (STL and OBJ are read)")
    except (ValueError, IndexError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    if len(mesh.faces) == 0 or not np.all(np.isfinite(mesh.vertices)):
        raise ValueError(f"{path}: no triangles, or non-finite vertices")
    return mesh


def _stl_triangles(data: bytes) -> NDArray[np.float64]:
    """(m, 3, 3) triangle corners of an STL file."""
    if len(data) >= 84:
        n = int(np.frombuffer(data, "<u4", 1, 80)[0])
        if len(data) == 84 + 50 * n:  # binary (it may still begin with "solid")
            rec = np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")])
            return np.frombuffer(data, rec, n, 84)["v"].astype(float)
    text = data.decode("ascii", "replace")
    if not text.lstrip().lower().startswith("solid"):
        raise ValueError("neither a binary STL (size mismatch) nor an ASCII one")
    nums = re.findall(r"^\s*vertex\s+(\S+)\s+(\S+)\s+(\S+)", text, re.MULTILINE | re.IGNORECASE)
    if not nums or len(nums) % 3:
        raise ValueError(f"an ASCII STL needs 3 vertices per facet, found {len(nums)} vertices")
    return np.array(nums, float).reshape(-1, 3, 3)


def _obj_mesh(text: str) -> Mesh:
    V, F = [], []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "v":
            V.append([float(x) for x in parts[1:4]])
        elif parts[0] == "f":
            idx = [int(p.split("/")[0]) for p in parts[1:]]
            idx = [i - 1 if i > 0 else len(V) + i for i in idx]
            F.extend((idx[0], idx[k], idx[k + 1]) for k in range(1, len(idx) - 1))
    F = np.asarray(F, int).reshape(-1, 3)
    if len(V) == 0 or F.size and (F.min() < 0 or F.max() >= len(V)):
        raise ValueError("an OBJ face refers to a missing vertex")
    return Mesh(np.asarray(V, float), F)


def simplify_mesh(mesh: Mesh, max_vertices: int) -> Mesh:
    """The mesh thinned to at most ``max_vertices`` vertices by vertex clustering: vertices
    in one cell of a cubic grid merge into their mean, and triangles that collapse go.
    The grid coarsens until the count fits; a mesh that already fits is returned as is."""
    if len(mesh.vertices) <= max_vertices:
        return mesh
    V, F = mesh.vertices, mesh.faces
    lo = V.min(axis=0)
    extent = float(np.max(V.max(axis=0) - lo)) or 1.0
    cells = max(2, int(2 * math.sqrt(max_vertices)))
    while True:
        key = np.floor((V - lo) / (extent / cells) * (1 - 1e-9)).astype(np.int64)
        _, cluster = np.unique(key, axis=0, return_inverse=True)
        cluster = cluster.ravel()
        n = int(cluster.max()) + 1
        if n <= max_vertices or cells <= 2:
            break
        cells = max(2, int(cells * 0.8))
    counts = np.bincount(cluster, minlength=n)
    Vn = np.column_stack([np.bincount(cluster, V[:, k], n) for k in range(3)]) / counts[:, None]
    Fn = cluster[F]
    keep = (Fn[:, 0] != Fn[:, 1]) & (Fn[:, 1] != Fn[:, 2]) & (Fn[:, 0] != Fn[:, 2])
    Fn = np.unique(Fn[keep], axis=0)
    return Mesh(Vn, Fn)


# ------------------------------------------------------------------ URDF visuals


@dataclass(frozen=True)
class Visual:
    """One ``<visual>`` of a URDF link.

    Attributes
    ----------
    link : str, the link's name
    placement : (4, 4) transform of the geometry in the link frame (``<origin>``)
    mesh : Mesh in the geometry's own frame [m] (mesh ``scale`` applied)
    color : str or None, ``rgb(...)`` from the visual's ``<material><color rgba>``
    """

    link: str
    placement: NDArray[np.float64]
    mesh: Mesh
    color: str | None


def _numbers(el, key, n, default):
    """n finite numbers of attribute ``key`` of ``el`` (``default`` when it is absent;
    None: required)."""
    text = el.get(key) if el is not None else None
    if text is None:
        if default is None:
            raise ValueError(f"<{el.tag}> needs {key}=")
        return np.asarray(default, float)
    try:
        vals = np.array([float(x) for x in text.split()])
    except ValueError:
        vals = np.array([])
    if vals.shape != (n,) or not np.all(np.isfinite(vals)):
        raise ValueError(f"<{el.tag} {key}={text!r}>: expected {n} finite numbers")
    return vals


def _origin_transform(el):
    T = np.eye(4)
    xyz = _numbers(el, "xyz", 3, (0, 0, 0))
    rpy = _numbers(el, "rpy", 3, (0, 0, 0))
    T[:3, :3] = rotation_matrix_from_quat(quat_from_rpy_deg(np.degrees(rpy)))
    T[:3, 3] = xyz
    return T


def _rgba(el):
    rgba = _numbers(el, "rgba", 4, (0.6, 0.6, 0.6, 1.0))
    r, g, b = (int(round(255 * float(np.clip(c, 0, 1)))) for c in rgba[:3])
    return f"rgb({r},{g},{b})"


def _mesh_file(filename: str, urdf_dir: Path) -> Path:
    """Where a ``<mesh filename>`` is: ``package://pkg/rel`` is looked for as ``pkg/rel``
    (then ``rel``) beside the URDF and in each folder above it; ``file://`` paths and plain
    ones are taken as they are, a relative one from the URDF's folder."""
    if filename.startswith("file://"):
        return Path(filename[len("file://") :])
    if filename.startswith("package://"):
        rel = filename[len("package://") :]
        tail = rel.split("/", 1)[1] if "/" in rel else rel
        for folder in [urdf_dir, *urdf_dir.parents]:
            for cand in (folder / rel, folder / tail):
                if cand.is_file():
                    return cand
        return urdf_dir / rel
    p = Path(filename)
    return p if p.is_absolute() else urdf_dir / p


def _geometry(child, urdf_dir: Path) -> Mesh:
    """The mesh of a ``<geometry>``'s element (ValueError or OSError if it cannot be)."""
    if child.tag == "box":
        return _box(_numbers(child, "size", 3, None))
    if child.tag == "cylinder":
        r = float(_numbers(child, "radius", 1, None)[0])
        h = float(_numbers(child, "length", 1, None)[0])
        return _cylinder(r, -0.5 * h, 0.5 * h)
    if child.tag == "sphere":
        return _sphere(float(_numbers(child, "radius", 1, None)[0]))
    if child.tag == "mesh":
        fname = child.get("filename", "")
        mesh = read_mesh(_mesh_file(fname, urdf_dir))
        return Mesh(mesh.vertices * _numbers(child, "scale", 3, (1, 1, 1)), mesh.faces)
    raise ValueError(f"unknown geometry <{child.tag}>")


def urdf_visuals(path: str | os.PathLike, *, max_vertices: int = MESH_VERTEX_BUDGET):
    """The ``<visual>`` geometry of every link of a URDF file.

    Boxes, cylinders (along z, centred) and spheres become meshes; ``<mesh filename
    scale>`` reads an STL or OBJ file (see :func:`read_mesh`; ``package://pkg/rel`` is
    looked for as ``pkg/rel``, then ``rel``, beside the URDF and in each folder above it).
    The meshes read from files share ``max_vertices`` vertices in proportion to their
    sizes (:func:`simplify_mesh`).

    Returns
    -------
    (visuals, problems) : list of Visual, and one line per visual that could not be drawn
        (a missing or unreadable mesh file, an unknown geometry, a malformed number),
        naming the file, link and visual -- :func:`animate` draws such a link as a stick.

    Raises
    ------
    ValueError : the file is not XML with a ``<robot>`` root
    """
    path = Path(path)
    try:
        root = ET.fromstring(path.read_bytes())
    except ET.ParseError as exc:
        raise ValueError(f"{path}: not valid XML ({exc})") from None
    if root.tag != "robot":
        raise ValueError(f"{path}: the root element is <{root.tag}>, not <robot>")
    materials = {}
    for m in root.findall("material"):
        c = m.find("color")
        if m.get("name") and c is not None:
            try:
                materials[m.get("name")] = _rgba(c)
            except ValueError:
                pass  # a visual using it keeps the arm's colour
    out, problems, from_files = [], [], []
    for link in root.findall("link"):
        name = link.get("name", "")
        for k, vis in enumerate(link.findall("visual")):
            what = f"{path.name}: link {name!r} visual {k}"
            geom = vis.find("geometry")
            if geom is None or len(geom) == 0:
                problems.append(f"{what}: no <geometry>")
                continue
            try:
                mesh = _geometry(geom[0], path.parent)
                placement = _origin_transform(vis.find("origin"))
                mat = vis.find("material")
                color = None
                if mat is not None:
                    c = mat.find("color")
                    color = _rgba(c) if c is not None else materials.get(mat.get("name"))
            except (OSError, ValueError) as exc:
                problems.append(f"{what}: {exc}")
                continue
            if geom[0].tag == "mesh":
                from_files.append(len(out))
            out.append(Visual(name, placement, mesh, color))
    total = sum(len(out[i].mesh.vertices) for i in from_files)
    if total > max_vertices:
        for i in from_files:
            v = out[i]
            share = max(24, int(max_vertices * len(v.mesh.vertices) / total))
            out[i] = Visual(v.link, v.placement, simplify_mesh(v.mesh, share), v.color)
    return out, problems


# ------------------------------------------------------------------ the scene


@dataclass
class _Part:
    """Geometry carried by one body: ``mesh`` placed by ``T`` (4, 4) in the body frame;
    ``scale`` (n_frames, 3), optional, stretches the mesh's own axes frame by frame."""

    body: int
    T: NDArray[np.float64]
    mesh: Mesh
    color: str | None = None
    scale: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class _Group:
    """One mesh trace: its legend name, colour and look."""

    name: str
    color: str
    opacity: float = 1.0


_GROUPS = {
    "base": _Group("base", BASE_COLOR, 0.55),
    "arm": _Group("arm links", ARM_COLOR),
    "housing": _Group("arm joints", HOUSING_COLOR),
    "nozzle": _Group("thrusters", NOZZLE_COLOR),
    "plume": _Group("thruster plumes (firing)", PLUME_COLOR, 0.75),
    "vscmg": _Group("VSCMG wheels, gimbal axles", VSCMG_COLOR),
    "vscmg_h": _Group("VSCMG spin axes", VSCMG_COLOR),
    "wheel": _Group("reaction wheels", WHEEL_COLOR),
    "wheel_h": _Group("wheel speeds (arrow: speed / limit)", WHEEL_COLOR),
}


@dataclass
class _Scene:
    model: Model
    q: NDArray[np.float64]  # (n_frames, nq)
    t: NDArray[np.float64]  # (n_frames,)
    parts: dict  # group -> list of _Part
    ee_frame: str
    ee_path: NDArray[np.float64] | None  # (n_frames, 3) inertial, recorded
    ref_path: NDArray[np.float64] | None  # (n_ref, 3) inertial, whole run
    ref_now: NDArray[np.float64] | None  # (n_frames, 3)


def _scenario_config(res) -> dict:
    cfg = res.manifest.get("scenario")
    if not isinstance(cfg, dict) or not isinstance(cfg.get("scenario"), dict):
        raise ValueError(
            "the result's manifest has no resolved scenario (manifest['scenario']): "
            "cannot rebuild the system to animate it"
        )
    return cfg


def _build(cfg):
    """(plant model, System or None, end-effector frame) of a resolved scenario."""
    if cfg["scenario"].get("kind", "closed_loop") == "open_loop":
        from ..build.dynamics_check import open_loop_model

        return open_loop_model(cfg), None, "ee"
    from ..build.system import build_system

    sy = build_system(cfg)
    return sy.plant, sy, sy.arm_info.ee_frame


def _frame_samples(res, nq, frames):
    """Indices of the animated samples: finite ``q`` rows, evenly spread, at most
    ``frames`` of them."""
    q = np.asarray(res["q"], float)
    if q.ndim != 2 or q.shape[1] != nq:
        raise ValueError(
            f"the result's q has shape {q.shape}, the rebuilt system has nq = {nq} "
            f"(was the arm's file changed since the run?)"
        )
    good = np.flatnonzero(np.all(np.isfinite(q), axis=1))
    if good.size == 0:
        raise ValueError("the result has no sample with a finite configuration q to animate")
    pick = np.unique(np.round(np.linspace(0, good.size - 1, min(frames, good.size))).astype(int))
    return good[pick]


def _base_transforms(q8: NDArray[np.float64]) -> NDArray[np.float64]:
    """(n, 4, 4) from base poses (n, 8) (projected onto unit dual quaternions first: a
    recorded pose is unit to ~1e-12)."""
    return transform_from_dq(dq_normalize(q8))


def _to_inertial(T_IB, p_B):
    return np.einsum("nij,nj->ni", T_IB[:, :3, :3], p_B) + T_IB[:, :3, 3]


def _ee_paths(res, q_all, idx):
    """Recorded end-effector path at the frames and the whole reference path (inertial)."""
    if "ee_pos_I" in res:  # open loop: inertial already
        ee = np.asarray(res["ee_pos_I"], float)[idx]
        ref = np.asarray(res["ee_ref_I"], float) if "ee_ref_I" in res else None
        return ee, ref, (ref[idx] if ref is not None else None)
    if "ee_pos" not in res:
        return None, None, None
    ok = np.all(np.isfinite(q_all), axis=1)
    T = _base_transforms(np.where(ok[:, None], q_all, q_all[idx[0]])[:, :8])
    ee = _to_inertial(T, np.asarray(res["ee_pos"], float))
    ref = _to_inertial(T, np.asarray(res["ee_ref"], float)) if "ee_ref" in res else None
    keep = ok & (np.all(np.isfinite(ref), axis=1) if ref is not None else ok)
    return (
        ee[idx],
        (ref[keep] if ref is not None else None),
        (ref[idx] if ref is not None else None),
    )


def _arm_bodies(model: Model, device_bodies: set) -> list[int]:
    return [k for k in range(1, model.nb) if k not in device_bodies]


def _stick_arm(model, arm, ee_frame, skip):
    """Stick model of the arm bodies not in ``skip``: link cylinders from each body's origin
    to its children's joints (where they are at zero joint position: a prismatic joint
    slides from there) and to the end-effector frame, housings along the moving joints'
    axes."""
    fb = model.frame_body
    ee_i = model.frame_index(ee_frame) if ee_frame in {f.name for f in model.frames} else None
    segs = []  # (body that carries it, start in its frame, end in its frame)
    for k in arm:
        p = int(model.parent[k])
        if p == 0 or k in skip:
            continue  # the mount (inside the base) or a link drawn from its visuals
        segs.append((p, np.zeros(3), transform_from_dq(model.joint_placement[k])[:3, 3]))
    if ee_i is not None and int(fb[ee_i]) not in skip:
        b = int(fb[ee_i])
        segs.append((b, np.zeros(3), transform_from_dq(model.frame_placement[ee_i])[:3, 3]))
    segs = [s for s in segs if np.linalg.norm(s[2] - s[1]) > 1e-6]
    reach = sum(float(np.linalg.norm(e - s)) for _, s, e in segs)
    r = float(np.clip(0.035 * reach, 0.01, 0.08)) if reach > 0 else 0.03
    parts = {"arm": [], "housing": []}
    for b, s, e in segs:
        L = float(np.linalg.norm(e - s))
        parts["arm"].append(_Part(b, _z_along(e - s, s), _cylinder(r, 0.0, L)))
    for k in arm:
        if k in skip:
            continue
        jt = JointType(int(model.joint_type[k]))
        if jt in (JointType.REVOLUTE, JointType.PRISMATIC):
            axis = model.joint_axis[k]
            h = 1.3 * r
            parts["housing"].append(_Part(k, _z_along(axis), _cylinder(h, -1.3 * r, 1.3 * r, 10)))
        elif jt == JointType.FIXED and int(model.parent[k]) == 0:
            parts["housing"].append(  # an arm's root on the base: a mounting flange
                _Part(k, np.eye(4), _cylinder(1.5 * r, 0.0, 1.2 * r))
            )
    return parts, r


def _visual_arm(model, urdf_path, arm):
    """Parts of the URDF's visuals; the set of bodies that have some."""
    visuals, problems = urdf_visuals(urdf_path)
    for p in problems:
        log.warning("animate: %s; that link is drawn as a stick", p)
    frames = {f.name: i for i, f in enumerate(model.frames)}
    parts, bodies = [], set()
    for v in visuals:
        name = v.link if v.link in frames else f"arm_{v.link}"  # renamed by mount_arm
        if name not in frames:
            continue
        i = frames[name]
        b = int(model.frame_body[i])
        if b not in arm:
            continue
        T = transform_from_dq(model.frame_placement[i]) @ v.placement
        parts.append(_Part(b, T, v.mesh, v.color or ARM_COLOR))
        bodies.add(b)
    return parts, bodies


def _wheel_speeds(res, v_index, idx):
    v = np.asarray(res["v"], float) if "v" in res else None
    if v is None or v.ndim != 2 or v.shape[1] <= max(v_index, default=-1):
        return np.zeros((len(idx), len(v_index)))
    return np.nan_to_num(v[idx][:, v_index])


def _devices(model, sy, res, idx, size):
    """Parts of the VSCMG cluster and the reaction wheels."""
    parts = {"vscmg": [], "vscmg_h": [], "wheel": [], "wheel_h": []}
    devices = set()
    n = len(idx)
    cm = getattr(sy, "cluster_model", None)
    if cm is not None:
        gb, wb = cm.index.gimbal_body, cm.index.wheel_body
        devices |= set(gb.tolist()) | set(wb.tolist())
        pos = np.array([u.position for u in cm.cluster.units])
        rho = _device_radius(pos, size)
        om = _wheel_speeds(res, cm.index.wheel_v.tolist(), idx)
        om_max = float(np.max(np.abs(om))) or 1.0
        for i, (g, w) in enumerate(zip(gb, wb, strict=True)):
            # the wheel spins about x of the gimbal frame; the gimbal turns about z
            disc = _cylinder(rho, -0.18 * rho, 0.18 * rho)
            axle = _cylinder(0.08 * rho, -1.3 * rho, 1.3 * rho, 6)
            parts["vscmg"].append(_Part(int(w), _z_along([1, 0, 0]), disc))
            parts["vscmg"].append(_Part(int(g), np.eye(4), axle))
            s = np.ones((n, 3))
            s[:, 2] = 2.2 * rho * om[:, i] / om_max
            parts["vscmg_h"].append(_Part(int(g), _z_along([1, 0, 0]), _arrow(0.07 * rho), scale=s))
    wm = getattr(sy, "wheel_model", None)
    if wm is not None:
        movable = [
            k for k in range(model.nb) if JointType(int(model.joint_type[k])) != JointType.FIXED
        ]
        body_of_q = {int(model.q_index[k]): k for k in movable}
        bodies = [body_of_q[int(i)] for i in wm.index.wheel_q]  # wheel i's rotor
        devices |= set(bodies)
        pos = np.array([w.position for w in wm.array.wheels])
        rho = _device_radius(pos, size)
        om = _wheel_speeds(res, wm.index.wheel_v.tolist(), idx)
        om_max = np.asarray(wm.array.max_speed, float)
        for i, k in enumerate(bodies):
            axis = model.joint_axis[k]
            parts["wheel"].append(_Part(k, _z_along(axis), _cylinder(rho, -0.18 * rho, 0.18 * rho)))
            s = np.ones((n, 3))
            lim = om_max[i] if np.isfinite(om_max[i]) and om_max[i] > 0 else 1.0
            s[:, 2] = 2.5 * rho * np.clip(om[:, i] / lim, -1.0, 1.0)
            parts["wheel_h"].append(_Part(k, _z_along(axis), _arrow(0.07 * rho), scale=s))
    return parts, devices


def _device_radius(pos, size):
    """Disc radius [m] of momentum devices at ``pos`` (n, 3) on a base of edge ``size``."""
    rho = 0.2 * size
    if len(pos) > 1:
        d = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
        dmin = float(np.min(d[np.triu_indices(len(pos), 1)]))
        if dmin > 1e-6:
            rho = min(rho, 0.3 * dmin)
    return max(rho, 0.01)


def _thrusters(sy, res, idx, size):
    """Parts of the thrusters: nozzles, and plumes whose length follows the thrust."""
    ts = getattr(sy, "thrusters", None)
    parts = {"nozzle": [], "plume": []}
    if ts is None:
        return parts
    P, D = np.asarray(ts.positions, float), np.asarray(ts.directions, float)
    S = len(P)
    fmax = np.asarray(ts.sigma_max, float)
    # mean thrust over each frame's interval: the periods recorded from the previous
    # frame's sample up to this one's (frame 0: its own sample's period) [N]
    t = np.asarray(res.t, float)
    if "thrust_impulse" in res:
        J = np.nan_to_num(np.asarray(res["thrust_impulse"], float))
    elif "thrust_on" in res:
        J = np.nan_to_num(np.asarray(res["thrust_on"], float)) * fmax
    else:
        J = np.zeros((len(t), S))
    cum = np.vstack([np.zeros((1, S)), np.cumsum(J, axis=0)])
    start, stop = np.r_[idx[0], idx[:-1]], np.r_[idx[0] + 1, idx[1:]]
    impulse = cum[stop] - cum[start]  # [N s]
    period = float(np.median(np.diff(t))) if len(t) > 1 else 1.0  # [s] of one record
    F = impulse / ((stop - start) * period)[:, None]
    L = size * np.where(impulse > 1e-12, 0.35 + 0.65 * np.clip(F / fmax, 0, 1), 0.0)
    r_n, l_n = 0.035 * size, 0.08 * size
    for s in range(S):
        e = -D[s]  # the exhaust leaves along -direction
        parts["nozzle"].append(_Part(0, _z_along(e, P[s]), _cone(r_n, l_n, -0.3 * l_n, 8)))
        parts["plume"].append(
            _Part(
                0,
                _z_along(e, P[s] + l_n * e),
                _cone(0.3, 1.0, 0.0, 8),
                scale=np.repeat(L[:, s : s + 1], 3, axis=1),
            )
        )
    return parts


def _scene(res, frames) -> _Scene:
    cfg = _scenario_config(res)
    model, sy, ee_frame = _build(cfg)
    idx = _frame_samples(res, model.nq, frames)
    q_all = np.asarray(res["q"], float)
    q = q_all[idx]
    size = float(cfg.get("base", {}).get("size", 0.3))
    dev_parts, devices = _devices(model, sy, res, idx, size)
    arm = _arm_bodies(model, devices)
    visual_parts, with_visuals = [], set()
    src = (cfg.get("arm") or {}).get("model", "")
    if sy is not None and src not in ("iiwa", "dh", ""):
        _check_urdf_unchanged(src, res)
        visual_parts, with_visuals = _visual_arm(model, src, arm)
    parts, _ = _stick_arm(model, arm, ee_frame, with_visuals)
    parts["arm"] = visual_parts + parts["arm"]
    parts["base"] = [_Part(0, np.eye(4), _box([size] * 3))]
    parts.update(_thrusters(sy, res, idx, size))
    parts.update(dev_parts)
    ee, ref, ref_now = _ee_paths(res, q_all, idx)
    return _Scene(model, q, np.asarray(res.t, float)[idx], parts, ee_frame, ee, ref, ref_now)


def _check_urdf_unchanged(src, res):
    want = ((res.manifest.get("system") or {}).get("arm") or {}).get("sha256")
    try:
        have = hashlib.sha256(Path(src).read_bytes()).hexdigest()
    except OSError:
        return  # build_system has read it: it is there
    if want and want != have:
        log.warning("animate: %s changed since the run (SHA-256 differs); drawn as it is now", src)


# ------------------------------------------------------------------ per frame


def _posed(scene: _Scene):
    """Per frame: vertices (n_frames, n, 3) of each mesh group, and the EE position."""
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
        ee[j] = (
            transform_from_dq(kin.frame_pose[fi])[:3, 3]
            if fi is not None
            else transform_from_dq(kin.pose[model.body_index(scene.ee_frame)])[:3, 3]
        )
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
            Tb = T_all[:, p.body]
            chunks.append(np.einsum("fij,fnj->fni", Tb[:, :3, :3], local) + Tb[:, None, :3, 3])
        out[g] = np.concatenate(chunks, axis=1)
    return out, ee


def _face_colors(parts, default):
    """One colour per face, or None when every part has the group's colour."""
    if all(p.color in (None, default) for p in parts):
        return None
    return [c for p in parts for c in [p.color or default] * len(p.mesh.faces)]


def _bounds(verts: dict, extra: list):
    pts = [v.reshape(-1, 3) for v in verts.values()] + [e for e in extra if e is not None]
    allp = np.concatenate([p[np.all(np.isfinite(p), axis=1)] for p in pts])
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    c = 0.5 * (lo + hi)
    half = 0.5 * float(np.max(hi - lo)) * 1.08 + 1e-3
    return c - half, c + half


# ------------------------------------------------------------------ the figure


def _title(res, cfg):
    from .plots import _status_text

    name = cfg["scenario"].get("name", "unnamed scenario")
    status = _status_text(res)
    t_end = float(res.t[-1]) if len(res.t) else 0.0
    if not status:
        status = f"complete, {format_quantity(t_end, 's')} simulated"
    return f"<b>{name}</b>: {status}"


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
    ValueError : bad ``frames`` or ``fps``; a result without a resolved scenario, without
        ``q``, whose ``q`` does not fit the rebuilt system, or with no finite sample
    """
    pose = _prepare(results, frames, fps)
    scene, verts, ee = pose.scene, pose.verts, pose.ee
    nF = len(scene.t)

    traces, moving = [], []  # moving: (trace index, function of the frame -> its update)
    for g, parts in scene.parts.items():
        if g not in verts:
            continue
        look = _GROUPS[g]
        F = np.concatenate(
            [p.mesh.faces + off for p, off in zip(parts, _offsets(parts), strict=True)]
        )
        fc = _face_colors(parts, look.color)
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
    az = _view_azimuth(ee, scene.q[:, :8], pose.hi - pose.lo)
    camera = dict(
        eye=dict(x=_EYE[0] * math.cos(az), y=_EYE[0] * math.sin(az), z=_EYE[1]),
        up=dict(x=0, y=0, z=1),
    )
    return {
        "data": traces,
        "layout": _layout(results, pose.cfg, scene.t, pose.lo, pose.hi, pose.fps, camera),
        "frames": frame_list,
    }


@dataclass
class _Posed:
    """A scene posed frame by frame (what the page and the video draw)."""

    cfg: dict
    scene: _Scene
    verts: dict  # group -> (n_frames, n, 3) [m]
    ee: NDArray[np.float64]  # (n_frames, 3) [m]
    lo: NDArray[np.float64]  # (3,) axis limits [m]
    hi: NDArray[np.float64]
    fps: float  # [frames/s]


def _prepare(results, frames, fps) -> _Posed:
    if isinstance(frames, bool) or not isinstance(frames, (int, np.integer)) or frames < 1:
        raise ValueError(f"frames must be a positive whole number, got {frames!r}")
    if fps is not None and (
        isinstance(fps, bool)
        or not isinstance(fps, (int, float))
        or not math.isfinite(fps)
        or fps <= 0
    ):
        raise ValueError(f"fps must be a positive number of frames per second, got {fps!r}")
    if "q" not in results:
        raise ValueError("the result has no configuration series 'q' to animate")
    cfg = _scenario_config(results)
    scene = _scene(results, int(frames))
    verts, ee = _posed(scene)
    lo, hi = _bounds(verts, [ee, scene.ee_path, scene.ref_path])
    duration = float(scene.t[-1] - scene.t[0])
    if fps is None:
        n = len(scene.t)
        fps = float(np.clip((n - 1) / duration, *_FPS_RANGE)) if duration > 0 else 1.0
    return _Posed(cfg, scene, verts, ee, lo, hi, float(fps))


def _offsets(parts):
    out, n = [], 0
    for p in parts:
        out.append(n)
        n += len(p.mesh.vertices)
    return out


def _decimate(P, n):
    if len(P) <= n:
        return P
    return P[np.unique(np.round(np.linspace(0, len(P) - 1, n)).astype(int))]


def _time_labels(t) -> list[str]:
    """The times ``t`` [s] with the fewest decimals (0 to 3) that write them all exactly."""
    t = np.asarray(t, float)
    digits = next((d for d in range(3) if np.allclose(np.round(t, d), t, rtol=0, atol=1e-9)), 3)
    return [f"{x:.{digits}f}" for x in t]


#: the camera's horizontal distance and height, in units of the scene's half-size
_EYE = (1.85, 0.7)


def _view_azimuth(ee, q8, extent) -> float:
    """Azimuth [rad] of the view: 50 deg to the right of the arm's side, i.e. of the
    direction from the base to the end-effector's mean position (where the task is)."""
    d = np.mean(ee, axis=0) - np.mean(_base_transforms(q8)[:, :3, 3], axis=0)
    az = math.atan2(d[1], d[0]) if math.hypot(d[0], d[1]) > 0.05 * float(extent[0]) else 0.0
    return az - math.radians(50.0)


def _layout(res, cfg, t, lo, hi, fps, camera):
    labels = _time_labels(t)
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
        title=dict(text=_title(res, cfg), x=0.5, xanchor="center", y=0.97),
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
        the suffix of ``path`` (``.mp4``, ``.gif``; anything else is a page)

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
    fmt = format or {".mp4": "mp4", ".gif": "gif"}.get(path.suffix.lower(), "html")
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if fmt != "html":
        return _write_video(results, path, fmt, frames, fps)
    import plotly.io as pio

    from ..store.storage import atomic_write_bytes

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
    cfg = _scenario_config(results)
    title = f"{cfg['scenario'].get('name', 'run')}: dqspace animation"
    page = _PAGE.format(title=html.escape(title), body=body)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, page.encode("utf-8"))
    return path


# ------------------------------------------------------------------ video


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
    from matplotlib import animation

    if fmt == "gif":
        return animation.PillowWriter(fps=fps), {}
    exe = shutil.which("ffmpeg")
    if exe is None:
        try:
            import imageio_ffmpeg

            exe = imageio_ffmpeg.get_ffmpeg_exe()
        except (ImportError, RuntimeError):
            raise ValueError(
                "mp4 needs the ffmpeg program on PATH or the imageio-ffmpeg package "
                "(pip install imageio-ffmpeg); a gif or the HTML page needs neither"
            ) from None
    writer = animation.FFMpegWriter(fps=fps, codec="libx264", extra_args=["-pix_fmt", "yuv420p"])
    return writer, {"animation.ffmpeg_path": exe}


def _write_video(results, path, fmt, frames, fps):
    """The scene of :func:`animation_figure` drawn by matplotlib, one image per frame."""
    import matplotlib
    from matplotlib import animation
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    pose = _prepare(results, frames, fps)
    writer, rc = _video_writer(fmt, pose.fps)
    scene, verts, ee = pose.scene, pose.verts, pose.ee
    fig = Figure(figsize=(8, 6), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 0.92), projection="3d")
    for set_lim, lo, hi in zip(
        (ax.set_xlim, ax.set_ylim, ax.set_zlim), pose.lo, pose.hi, strict=True
    ):
        set_lim(lo, hi)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x [m]"), ax.set_ylabel("y [m]"), ax.set_zlabel("z [m]")
    az = _view_azimuth(ee, scene.q[:, :8], pose.hi - pose.lo)
    ax.view_init(elev=math.degrees(math.atan2(_EYE[1], _EYE[0])), azim=math.degrees(az))
    fig.suptitle(re.sub(r"</?b>", "", _title(results, pose.cfg)), fontsize=11)
    meshes = []  # (group, faces, colours, opacity)
    for g, parts in scene.parts.items():
        if g in verts:
            look = _GROUPS[g]
            F = np.concatenate(
                [p.mesh.faces + o for p, o in zip(parts, _offsets(parts), strict=True)]
            )
            fc = _face_colors(parts, look.color) or [look.color] * len(F)
            meshes.append((g, F, _rgba_array(fc), look.opacity))
    handles = [Patch(color=_GROUPS[g].color, label=_GROUPS[g].name) for g, *_ in meshes]
    if scene.ref_path is not None:
        (ref,) = ax.plot(
            *scene.ref_path.T, color=REF_COLOR, ls="--", lw=1, label="EE reference path"
        )
        handles.append(ref)
    (trail,) = ax.plot([], [], [], color=PATH_COLOR, lw=1.5, label="EE path (recorded)")
    (marker,) = ax.plot([], [], [], "D", color=EE_COLOR, ms=4, label="end effector")
    handles += [trail, marker]
    fig.legend(
        handles=handles, loc="upper left", fontsize=7, frameon=False, bbox_to_anchor=(0, 0.93)
    )
    stamp = fig.text(0.98, 0.93, "", ha="right", fontsize=10)
    labels = _time_labels(scene.t)
    drawn = []

    def draw(j):
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection

        while drawn:
            drawn.pop().remove()
        for g, F, colors, alpha in meshes:
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
