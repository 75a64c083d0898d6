"""The ``<visual>`` geometry of a URDF arm (boxes, cylinders, spheres, STL and OBJ meshes),
read as data for the animation: a file is parsed, never run."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ...dq import quat_from_rpy_deg, rotation_matrix_from_quat
from ..store.received import LoadBudget, read_file
from .meshes import Mesh, box_mesh, cylinder_mesh, read_mesh, simplify_mesh, sphere_mesh

__all__ = ["MAX_URDF_BYTES", "MESH_VERTEX_BUDGET", "Visual", "urdf_visuals"]

#: vertices of all URDF meshes together, after thinning
MESH_VERTEX_BUDGET = 1500
#: [bytes] the largest URDF file read
MAX_URDF_BYTES = 16 << 20


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


def _geometry(child, urdf_dir: Path, budget) -> Mesh:
    """The mesh of a ``<geometry>``'s element (ValueError or OSError if it cannot be)."""
    if child.tag == "box":
        return box_mesh(_numbers(child, "size", 3, None))
    if child.tag == "cylinder":
        r = float(_numbers(child, "radius", 1, None)[0])
        h = float(_numbers(child, "length", 1, None)[0])
        return cylinder_mesh(r, -0.5 * h, 0.5 * h)
    if child.tag == "sphere":
        return sphere_mesh(float(_numbers(child, "radius", 1, None)[0]))
    if child.tag == "mesh":
        fname = child.get("filename", "")
        mesh = read_mesh(_mesh_file(fname, urdf_dir), budget)
        return Mesh(mesh.vertices * _numbers(child, "scale", 3, (1, 1, 1)), mesh.faces)
    raise ValueError(f"unknown geometry <{child.tag}>")


def urdf_visuals(
    path: str | os.PathLike,
    *,
    max_vertices: int = MESH_VERTEX_BUDGET,
    data: bytes | None = None,
    budget: LoadBudget | None = None,
):
    """The ``<visual>`` geometry of every link of a URDF file.

    The file (``data``, its bytes, when already read) is parsed as XML data, a regular
    file of at most :data:`MAX_URDF_BYTES`.  Boxes, cylinders (along z, centred) and
    spheres become meshes; ``<mesh filename scale>`` reads an STL or OBJ file (see
    :func:`read_mesh`; ``package://pkg/rel`` is looked for as ``pkg/rel``, then ``rel``,
    beside the URDF and in each folder above it).  The files read count in ``budget``
    (default: a new :class:`~dqspace.scenarios.store.received.LoadBudget`, the load
    limit ``DQSPACE_MAX_LOAD_BYTES``).  The meshes read from files share
    ``max_vertices`` vertices in proportion to their sizes (:func:`simplify_mesh`).

    Returns
    -------
    (visuals, problems) : list of Visual, and one line per visual that could not be drawn
        (a missing or unreadable mesh file, an unknown geometry, a malformed number),
        naming the file, link and visual -- the animation draws such a link as a stick.

    Raises
    ------
    ValueError : the file is not XML with a ``<robot>`` root
    OSError : the file cannot be read, is not a regular file, or is too large
    """
    path = Path(path)
    budget = LoadBudget() if budget is None else budget
    if data is None:
        data = read_file(path, MAX_URDF_BYTES, budget)
    try:
        root = ET.fromstring(data)
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
                mesh = _geometry(geom[0], path.parent, budget)
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
