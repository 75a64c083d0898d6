"""A model as plain data, and back: what a result's manifest records of its plant.

:func:`model_to_dict` writes a :class:`~dqspace.multibody.Model` as JSON-ready data
(dicts, lists, strings, floats, ints); :func:`model_from_dict` builds the model again
from such data.  The round trip is exact: every float is written as the float64 it is
(JSON keeps the 17 significant digits Python prints), so the rebuilt model's arrays, its
forward kinematics and its mass matrix equal the original's bit for bit.

The data describe bodies and frames only -- no code, no file name, no class name -- so a
received description can be read safely.  :func:`model_from_dict` checks every value on
the way in (types, finiteness, sizes, at most :data:`MAX_BODIES` bodies and
:data:`MAX_FRAMES` frames, names as plain strings of at most :data:`MAX_NAME_LENGTH`
characters) before the model's own checks run, and refuses anything else with a
``ValueError`` naming the entry.

Format (``FORMAT``, version 1)::

    {"format": "dqspace.model", "version": 1,
     "gravity": [gx, gy, gz],                                  # [m/s^2]
     "bodies": [{"name": str, "parent": int (-1 for the root),
                 "joint": {"type": "fixed" | "revolute" | "prismatic" | "spherical" | "free",
                           "name": str, "axis": [3], "placement": [8]},
                 "mass": float,                                # [kg]
                 "com": [3],                                   # [m], body frame
                 "inertia": [[3], [3], [3]]},                  # [kg m^2], about the CoM
                ...],
     "frames": [{"name": str, "body": int, "placement": [8]}, ...]}
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .model import Body, Frame, Joint, JointType, Model

__all__ = [
    "FORMAT",
    "MAX_BODIES",
    "MAX_FRAMES",
    "MAX_NAME_LENGTH",
    "model_from_dict",
    "model_to_dict",
]

#: the ``format`` tag of a model description
FORMAT = "dqspace.model"
#: the version of the description's layout this module writes and reads
VERSION = 1
#: most bodies a description may hold (a robot with its devices has tens)
MAX_BODIES = 1000
#: most named frames a description may hold
MAX_FRAMES = 1000
#: longest body, joint or frame name accepted [characters]
MAX_NAME_LENGTH = 200

_JOINT_NAMES = {t.name.lower(): t for t in JointType}
_BODY_KEYS = {"name", "parent", "joint", "mass", "com", "inertia"}
_JOINT_KEYS = {"type", "name", "axis", "placement"}
_FRAME_KEYS = {"name", "body", "placement"}


def model_to_dict(model: Model) -> dict:
    """The model as plain JSON-ready data (see the module docstring for the layout).

    Parameters
    ----------
    model : Model

    Returns
    -------
    dict of lists, strings, floats and ints; ``model_from_dict`` of it rebuilds a model
    whose arrays equal ``model``'s bit for bit
    """
    bodies = []
    for k in range(model.nb):
        bodies.append(
            {
                "name": str(model.body_names[k]),
                "parent": int(model.parent[k]),
                "joint": {
                    "type": JointType(int(model.joint_type[k])).name.lower(),
                    "name": str(model.joint_names[k]),
                    "axis": [float(x) for x in model.joint_axis[k]],
                    "placement": [float(x) for x in model.joint_placement[k]],
                },
                "mass": float(model.mass[k]),
                "com": [float(x) for x in model.com[k]],
                "inertia": [[float(x) for x in row] for row in model.inertia_com[k]],
            }
        )
    frames = [
        {
            "name": str(f.name),
            "body": int(model.frame_body[i]),
            "placement": [float(x) for x in model.frame_placement[i]],
        }
        for i, f in enumerate(model.frames)
    ]
    return {
        "format": FORMAT,
        "version": VERSION,
        "gravity": [float(x) for x in model.gravity],
        "bodies": bodies,
        "frames": frames,
    }


def model_from_dict(d: Mapping) -> Model:
    """The model a description of :func:`model_to_dict` holds, every value checked.

    Parameters
    ----------
    d : mapping, as :func:`model_to_dict` writes it (e.g. read back from JSON)

    Returns
    -------
    Model

    Raises
    ------
    ValueError : a value of the wrong type, shape or size, a non-finite number, an
        unknown key or joint type, more than :data:`MAX_BODIES` bodies or
        :data:`MAX_FRAMES` frames, a name that is not a plain string of at most
        :data:`MAX_NAME_LENGTH` characters, or a model the model's own checks refuse
        (masses, inertias, unit axes and placements, tree order); the message names the
        entry (``model: bodies[3].joint.axis: ...``)
    """
    _mapping(d, "model", {"format", "version", "gravity", "bodies", "frames"}, ("frames",))
    if d.get("format") != FORMAT:
        raise ValueError(f"model: format must be {FORMAT!r}, got {_shown(d.get('format'))}")
    version = d.get("version")
    if type(version) is not int or version != VERSION:
        raise ValueError(f"model: version {_shown(version)} is not the readable {VERSION}")
    gravity = _vector(d.get("gravity"), 3, "model: gravity")
    raw_bodies = _sequence(d.get("bodies"), "model: bodies", MAX_BODIES)
    if not raw_bodies:
        raise ValueError("model: bodies: a model needs at least one body")
    bodies = [_body(b, k) for k, b in enumerate(raw_bodies)]
    raw_frames = _sequence(d.get("frames", []), "model: frames", MAX_FRAMES)
    frames = [_frame(f, i, len(bodies)) for i, f in enumerate(raw_frames)]
    try:
        return Model.build(bodies, frames, gravity=gravity)
    except ValueError as exc:
        raise ValueError(f"model: {exc}") from None


# ------------------------------------------------------------------ checks


def _shown(x) -> str:
    """A short text of a value for a message (never the whole of a huge one)."""
    text = repr(x) if isinstance(x, (str, int, float, bool, type(None))) else type(x).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _mapping(x, what, keys, optional=()):
    if not isinstance(x, Mapping):
        raise ValueError(f"{what}: expected a table (dict), got {_shown(x)}")
    unknown = [k for k in x if k not in keys]
    if unknown:
        raise ValueError(f"{what}: unknown key {_shown(unknown[0])} (known: {sorted(keys)})")
    missing = sorted(k for k in keys if k not in x and k not in optional)
    if missing:
        raise ValueError(f"{what}: missing {missing[0]!r}")


def _sequence(x, what, most):
    if not isinstance(x, (list, tuple)):
        raise ValueError(f"{what}: expected a list, got {_shown(x)}")
    if len(x) > most:
        raise ValueError(f"{what}: {len(x)} entries, more than the {most} accepted")
    return x


def _number(x, what) -> float:
    # bool is an int to Python but not a number here; strings and None are refused
    if type(x) not in (int, float):
        raise ValueError(f"{what}: expected a number, got {_shown(x)}")
    try:
        value = float(x)
    except OverflowError:  # an int beyond float64
        raise ValueError(f"{what}: {_shown(x)} is beyond the float64 range") from None
    if not math.isfinite(value):
        raise ValueError(f"{what}: expected a finite number, got {value}")
    return value


def _vector(x, n, what) -> list[float]:
    if not isinstance(x, (list, tuple)) or len(x) != n:
        size = f"{len(x)} entries" if isinstance(x, (list, tuple)) else _shown(x)
        raise ValueError(f"{what}: expected a list of {n} numbers, got {size}")
    return [_number(v, f"{what}[{i}]") for i, v in enumerate(x)]


def _name(x, what) -> str:
    if type(x) is not str:
        raise ValueError(f"{what}: expected a string, got {_shown(x)}")
    if len(x) > MAX_NAME_LENGTH:
        raise ValueError(f"{what}: {len(x)} characters, more than the {MAX_NAME_LENGTH} accepted")
    if not x.isprintable():
        raise ValueError(f"{what}: {_shown(x)} holds control characters")
    return x


def _index(x, what, lo, hi) -> int:
    if type(x) is not int:
        raise ValueError(f"{what}: expected a whole number, got {_shown(x)}")
    if not lo <= x < hi:
        raise ValueError(f"{what}: {x} is outside {lo}..{hi - 1}")
    return x


def _body(b, k) -> Body:
    what = f"model: bodies[{k}]"
    _mapping(b, what, _BODY_KEYS)
    name = _name(b["name"], f"{what}.name")
    parent = _index(b["parent"], f"{what}.parent", -1, max(k, 0))
    if k == 0 and parent != -1:
        raise ValueError(f"{what}.parent: the first body is the root (parent -1), got {parent}")
    if k > 0 and parent == -1:
        raise ValueError(f"{what}.parent: only the first body is a root (parent -1)")
    joint = b["joint"]
    _mapping(joint, f"{what}.joint", _JOINT_KEYS)
    kind = joint["type"]
    if type(kind) is not str or kind not in _JOINT_NAMES:
        raise ValueError(
            f"{what}.joint.type: expected one of {sorted(_JOINT_NAMES)}, got {_shown(kind)}"
        )
    inertia = b["inertia"]
    if not isinstance(inertia, (list, tuple)) or len(inertia) != 3:
        raise ValueError(f"{what}.inertia: expected 3 rows of 3 numbers, got {_shown(inertia)}")
    rows = [_vector(r, 3, f"{what}.inertia[{i}]") for i, r in enumerate(inertia)]
    return Body(
        name,
        None if parent == -1 else parent,
        Joint(
            _JOINT_NAMES[kind],
            axis=_array(_vector(joint["axis"], 3, f"{what}.joint.axis")),
            placement=_array(_vector(joint["placement"], 8, f"{what}.joint.placement")),
            name=_name(joint["name"], f"{what}.joint.name"),
        ),
        _number(b["mass"], f"{what}.mass"),
        _array(_vector(b["com"], 3, f"{what}.com")),
        _array(rows),
    )


def _frame(f, i, nb) -> Frame:
    what = f"model: frames[{i}]"
    _mapping(f, what, _FRAME_KEYS)
    return Frame(
        _name(f["name"], f"{what}.name"),
        _index(f["body"], f"{what}.body", 0, nb),
        _array(_vector(f["placement"], 8, f"{what}.placement")),
    )


def _array(values):
    return np.array(values, dtype=np.float64)
