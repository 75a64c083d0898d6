"""The captured target in the animation of a capture run (``scenario.kind = "capture"``).

A capture run records the target's pose ``target_pose`` (8,) at every sample (inertial
frame; from its free motion before the grasp, from the held body after it), its mass
properties and grapple fixture in the stored scenario's ``[target]`` section, and a
``grasp`` event in the manifest.  :func:`target_view` reads them, every value checked (a
result someone sent you is data: a wrong shape, a non-unit pose or a bad table is refused
naming it), and gives what the scene draws:

* the target as a box: ``target.size`` (body axes, centred on the CoM) when the scenario
  sets it, else the uniform box with the target's principal moments of inertia (its edges
  along the principal axes, ``a_i = sqrt(6 (I_j + I_k - I_i) / m)``), shrunk with its
  proportions kept until the fixture lies on its surface when the fixture would be inside
  it (a real spacecraft is not uniform; the fixture is on its outside), to no less than a
  quarter of its size;
* the grapple fixture: its frame's three axes (x red, y green, z blue);
* the target frame's path (the recorded positions) and, from the grasp event's time on,
  the "grasped" state (the box's colour changes and the fixture is labelled).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...dq import dq_normalize, transform_from_dq
from ..sim.capture import target_of
from .common import scenario_section
from .meshes import Mesh, arrow_mesh, box_mesh, z_along
from .units import format_quantity

__all__ = [
    "FIXTURE_COLOR",
    "GRASPED_COLOR",
    "TARGET_BODY",
    "TARGET_COLOR",
    "TargetView",
    "box_colors",
    "fixture_positions",
    "grasp_labels",
    "grasp_time",
    "stored_target",
    "target_box",
    "target_parts",
    "target_view",
]

#: the box's colour before and after the grasp, the fixture marker's
TARGET_COLOR = "#5b7fb5"
GRASPED_COLOR = "#2ca02c"
FIXTURE_COLOR = "#9b2d86"
#: ``Part.body`` of the parts carried by the target (posed by ``target_pose``, not by the
#: plant's forward kinematics)
TARGET_BODY = -1

#: [m] the largest box edge drawn from ``target.size``
MAX_SIZE = 1e4
_AXIS_COLORS = ("#d62728", "#2ca02c", "#1f77b4")  # the fixture frame's x, y, z
_UNIT_TOL = 1e-6  # a recorded pose is unit to ~1e-12


@dataclass
class TargetView:
    """The target as the animation draws it (inertial frame, metres).

    Attributes
    ----------
    T : (n_frames, 4, 4) the target frame's pose at each frame
    path : (n_frames, 3) the target frame's origin at each frame (``target_pose``)
    fixture : (4, 4) the fixture's pose in the target's body frame
    box : (4, 4) the box's placement in the body frame (its centre and edge directions)
    size : (3,) the box's edges [m]
    grasp_time : float or None, the grasp event's time [s]
    grasped : (n_frames,) bool, the frame is at or after the grasp
    """

    T: NDArray[np.float64]
    path: NDArray[np.float64]
    fixture: NDArray[np.float64]
    box: NDArray[np.float64]
    size: NDArray[np.float64]
    grasp_time: float | None
    grasped: NDArray[np.bool_]


def _fail(problem):
    raise ValueError(f"the result's capture target: {problem}")


def _numbers(sec, key, n, default):
    x = sec.get(key, default)
    ok = (
        isinstance(x, list)
        and len(x) == n
        and all(type(v) in (int, float) and math.isfinite(v) for v in x)
    )
    if not ok:
        _fail(f"manifest['scenario']['target'][{key!r}]: expected {n} finite numbers")
    return [float(v) for v in x]


def stored_target(res):
    """The :class:`~dqspace.multibody.Target` of the stored ``[target]`` section (checked)
    and the ``size`` it sets (None: from the inertia)."""
    sec = scenario_section(res, "target")
    if not sec:
        _fail("manifest['scenario']['target']: expected the [target] table the run stored")
    mass = sec.get("mass", 500.0)
    if type(mass) not in (int, float) or not math.isfinite(mass) or mass <= 0:
        _fail("manifest['scenario']['target']['mass']: expected a positive finite number")
    table = {
        "mass": float(mass),
        "inertia": _numbers(sec, "inertia", 6, [300.0, 250.0, 200.0, 0.0, 0.0, 0.0]),
        **{k: _numbers(sec, k, 3, [0.0] * 3) for k in ("com", "fixture_xyz", "fixture_rpy_deg")},
        **{k: [0.0] * 3 for k in ("xyz", "rpy_deg", "rate_deg_s", "velocity")},
    }
    try:
        target = target_of({"target": table})[0]
    except ValueError as exc:  # ScenarioError: not a rigid body's inertia
        _fail(f"manifest['scenario']['target']: {exc}")
    size = sec.get("size")
    if size is not None:
        size = _numbers(sec, "size", 3, None)
        if min(size) < 0 or max(size) > MAX_SIZE:
            _fail(f"manifest['scenario']['target']['size']: expected edges in 0..{MAX_SIZE:g} m")
        size = None if max(size) == 0 else size
    return target, size


def target_box(target, size=None):
    """``(placement (4, 4) in the body frame, edges (3,) [m])`` of the box drawn for
    ``target`` (module docstring): ``size`` (body axes, at the CoM), else the uniform box
    with its principal moments, shrunk so that the fixture is not inside it."""
    T = np.eye(4)
    T[:3, 3] = target.com
    if size is not None:
        return T, np.maximum(np.asarray(size, float), 1e-3)
    moments, axes = np.linalg.eigh(target.inertia)
    if np.linalg.det(axes) < 0:
        axes[:, 2] = -axes[:, 2]
    sq = 6.0 / target.mass * (moments.sum() - 2.0 * moments)  # a_i^2 = 6 (I_j + I_k - I_i) / m
    edges = np.sqrt(np.maximum(sq, 0.0))
    edges = np.maximum(edges, 0.02 * edges.max())
    T[:3, :3] = axes
    p = axes.T @ (transform_from_dq(target.fixture)[:3, 3] - target.com)  # fixture, box axes
    s = float(np.max(np.abs(p) / (0.5 * edges)))
    if s < 1.0:
        edges = edges * max(s, 0.25)
    return T, edges


def target_view(res, idx) -> TargetView | None:
    """The target at the animated samples ``idx`` of a capture run; None for another run
    (no ``target_pose`` series).

    Raises
    ------
    ValueError : a ``target_pose`` that is not (samples, 8), not finite or not a unit dual
        quaternion where the frame is drawn; a stored ``[target]`` section whose values are
        not the numbers it needs, or not a rigid body's; a bad ``target.size``
    """
    if "target_pose" not in res:
        return None
    P = np.asarray(res["target_pose"])
    n = len(np.asarray(res.t))
    if P.ndim != 2 or P.shape != (n, 8) or not np.issubdtype(P.dtype, np.number):
        _fail(f"series 'target_pose' has shape {P.shape}; expected ({n}, 8): damaged, not drawn")
    P = P[idx].astype(float)
    if not np.all(np.isfinite(P)):
        _fail("series 'target_pose' is not finite at a sample with a finite q: damaged")
    norm = np.linalg.norm(P[:, :4], axis=1)
    dual = np.einsum("ij,ij->i", P[:, :4], P[:, 4:])
    if np.any(np.abs(norm - 1.0) > _UNIT_TOL) or np.any(np.abs(dual) > _UNIT_TOL):
        _fail("series 'target_pose' holds a pose that is not a unit dual quaternion: damaged")
    target, size = stored_target(res)
    box, edges = target_box(target, size)
    T = transform_from_dq(dq_normalize(P))
    t = np.asarray(res.t, float)[idx]
    grasp = grasp_time(res)
    grasped = t >= grasp - 1e-9 if grasp is not None else np.zeros(len(t), bool)
    return TargetView(
        T, T[:, :3, 3].copy(), transform_from_dq(target.fixture), box, edges, grasp, grasped
    )


def grasp_time(res):
    """The time [s] of the manifest's first ``grasp`` event (None: no grasp)."""
    events = res.manifest.get("events") or []
    for e in events if isinstance(events, list) else []:
        if isinstance(e, Mapping) and e.get("event") == "grasp":
            t = e.get("t")
            if type(t) in (int, float) and math.isfinite(t):
                return float(t)
    return None


def target_parts(view: TargetView, Part):
    """``{"target": [box], "fixture": [x, y, z arrows]}``: parts carried by
    :data:`TARGET_BODY` (``Part`` the scene's part class)."""
    L = 0.35 * float(np.min(view.size))
    L = min(max(L, 0.08), 0.4)
    F = view.fixture
    arrow = _arrow(0.05 * L, L)
    arrows = [
        Part(TARGET_BODY, F @ z_along(np.eye(3)[i]), arrow, c) for i, c in enumerate(_AXIS_COLORS)
    ]
    return {
        "target": [Part(TARGET_BODY, view.box, box_mesh(view.size))],
        "fixture": arrows,
    }


def _arrow(radius, length):
    """An arrow of ``length`` [m] along z, shaft ``radius`` [m]."""
    m = arrow_mesh(radius)
    return Mesh(m.vertices * np.array([1.0, 1.0, length]), m.faces)


def fixture_positions(view: TargetView) -> NDArray[np.float64]:
    """(n_frames, 3) [m] the fixture's origin at each frame (inertial frame)."""
    return np.einsum("fij,j->fi", view.T[:, :3, :], view.fixture[:, 3])


def box_colors(view: TargetView) -> list[str]:
    """The box's colour at each frame: :data:`GRASPED_COLOR` from the grasp on."""
    return [GRASPED_COLOR if g else TARGET_COLOR for g in view.grasped]


def grasp_labels(view: TargetView) -> list[str]:
    """The fixture's label at each frame: ``grasped at t = 7 s`` from the grasp on."""
    if view.grasp_time is None:
        return [""] * len(view.grasped)
    text = f"grasped at t = {format_quantity(view.grasp_time, 's')}"
    return [text if g else "" for g in view.grasped]
