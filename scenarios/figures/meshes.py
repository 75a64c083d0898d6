"""Triangle meshes of the animation: primitives (box, cylinder, cone, sphere, arrow), STL
and OBJ files, and thinning a mesh to a vertex budget.  Lengths in metres."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..store.received import LoadBudget, read_file

__all__ = [
    "MAX_MESH_BYTES",
    "SIDES",
    "Mesh",
    "merge_meshes",
    "box_mesh",
    "cylinder_mesh",
    "cone_mesh",
    "sphere_mesh",
    "arrow_mesh",
    "z_along",
    "read_mesh",
    "simplify_mesh",
]

#: [bytes] the largest mesh file read
MAX_MESH_BYTES = 256 << 20
#: sides of a cylinder or cone, unless a smaller part asks for fewer
SIDES = 12


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


def merge_meshes(meshes: list[Mesh]) -> Mesh:
    """One mesh of several (vertices stacked, face indices shifted)."""
    V, F, n = [], [], 0
    for m in meshes:
        V.append(m.vertices)
        F.append(m.faces + n)
        n += len(m.vertices)
    return Mesh(np.concatenate(V), np.concatenate(F))


def box_mesh(size: ArrayLike) -> Mesh:
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


def cylinder_mesh(radius: float, z0: float, z1: float, sides: int = SIDES) -> Mesh:
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


def cone_mesh(radius: float, z_base: float, z_apex: float, sides: int = SIDES) -> Mesh:
    """Closed cone along z: a disc of ``radius`` at ``z_base``, the apex at ``z_apex``."""
    n = sides
    V = np.vstack([[[0, 0, z_apex]], _ring(radius, z_base, n), [[0, 0, z_base]]])
    i = np.arange(n) + 1
    j = np.arange(1, n + 1) % n + 1
    F = np.vstack(
        [np.column_stack([np.zeros(n, int), i, j]), np.column_stack([np.full(n, n + 1), j, i])]
    )
    return Mesh(V, F)


def sphere_mesh(radius: float, n_lat: int = 6, n_lon: int = SIDES) -> Mesh:
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


def arrow_mesh(radius: float) -> Mesh:
    """Arrow of length 1 along z from the origin (shaft ``radius``, head 2.4 radius wide);
    scaled along z per frame."""
    return merge_meshes(
        [cylinder_mesh(radius, 0.0, 0.72, 6), cone_mesh(2.4 * radius, 0.72, 1.0, 6)]
    )


def z_along(axis: ArrayLike, origin: ArrayLike = (0.0, 0.0, 0.0)) -> NDArray[np.float64]:
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


def read_mesh(path: str | os.PathLike, budget: LoadBudget | None = None) -> Mesh:
    """A triangle mesh from an STL (binary or ASCII) or Wavefront OBJ file, in its units:
    a regular file (a link at its end is not followed, a FIFO or a device is refused) of
    at most :data:`MAX_MESH_BYTES`, counted in ``budget`` when given.

    Raises
    ------
    ValueError : an unknown format, or a file that is not a valid mesh (naming the file);
        beyond ``budget`` (LoadLimitError)
    OSError : the file cannot be read, is not a regular file, or is too large
    """
    path = Path(path)
    data = read_file(path, MAX_MESH_BYTES, budget)
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
