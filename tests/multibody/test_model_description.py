"""A model as plain data (``model_to_dict`` / ``model_from_dict``): the round trip through
JSON rebuilds a model whose forward kinematics and mass matrix equal the original's bit for
bit (the paper's models, a URDF arm, random trees), and hostile data -- wrong types,
non-finite numbers, huge sizes, deep nesting -- is refused with a ValueError naming the
entry, quickly."""

import copy
import json
import time
from pathlib import Path

import numpy as np
import pytest

from dqspace.multibody import description as D
from dqspace.multibody import (
    forward_kinematics,
    mass_matrix,
    model_from_dict,
    model_from_urdf,
    model_to_dict,
    models,
)
from support.random_models import random_tree

UR5_URDF = Path(__file__).resolve().parents[2] / "scenarios" / "data" / "arms" / "ur5.urdf"


def _models():
    rng = np.random.default_rng(20240611)
    out = {
        "space_manipulator": models.space_manipulator(),
        "space_manipulator_payload": models.space_manipulator(payload_mass=3.0),
        "iiwa_gravity": models.iiwa(gravity=[0.0, 0.0, -9.81]),
        "ur5_urdf_floating": model_from_urdf(UR5_URDF, floating=True),
        "ur5_urdf_fixed": model_from_urdf(UR5_URDF),
    }
    for k in range(4):
        out[f"random_tree_{k}"] = random_tree(rng, int(rng.integers(2, 12)), floating=k % 2 == 0)
    return out


MODELS = _models()


def _through_json(model):
    return json.loads(json.dumps(model_to_dict(model), allow_nan=False))


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_round_trip_rebuilds_the_model_bit_for_bit(name):
    model = MODELS[name]
    back = model_from_dict(_through_json(model))
    assert back.body_names == model.body_names and back.joint_names == model.joint_names
    assert [f.name for f in back.frames] == [f.name for f in model.frames]
    for a, b in zip(model.packed, back.packed, strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    assert model.gravity.tobytes() == back.gravity.tobytes()
    assert model.frame_placement.tobytes() == back.frame_placement.tobytes()
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = model.random_configuration(rng)
        k0, k1 = forward_kinematics(model, q), forward_kinematics(back, q)
        assert k0.pose.tobytes() == k1.pose.tobytes()
        assert k0.frame_pose.tobytes() == k1.frame_pose.tobytes()
        assert mass_matrix(model, q).tobytes() == mass_matrix(back, q).tobytes()
    # and the description of the rebuilt model is the same data
    assert model_to_dict(back) == model_to_dict(model)


def test_the_description_is_plain_json_data():
    d = model_to_dict(MODELS["space_manipulator_payload"])

    def kinds(x):
        if isinstance(x, dict):
            assert all(type(k) is str for k in x)
            return set().union(*(kinds(v) for v in x.values())) if x else set()
        if isinstance(x, list):
            return set().union(*(kinds(v) for v in x)) if x else set()
        return {type(x)}

    assert kinds(d) <= {str, int, float}
    assert d["format"] == D.FORMAT and d["version"] == 1
    assert d["bodies"][0]["joint"]["type"] == "free" and d["bodies"][0]["parent"] == -1
    assert [f["name"] for f in d["frames"]] == ["ee"]


# ------------------------------------------------------------------ hostile data


def _deep(levels):
    x = [1.0]
    for _ in range(levels):
        x = [x]
    return x


def _set(path, value):
    """A change to a valid description: ``path`` (keys and indices), the value to put."""

    def change(d):
        target = d
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _drop(path):
    def change(d):
        target = d
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


HOSTILE = {
    # wrong types
    "mass as a string": (
        _set(["bodies", 1, "mass"], "4.0"),
        r"bodies\[1\]\.mass: expected a number",
    ),
    "mass as a bool": (_set(["bodies", 1, "mass"], True), r"bodies\[1\]\.mass: expected a number"),
    "axis as a string": (
        _set(["bodies", 2, "joint", "axis"], "0 0 1"),
        r"bodies\[2\]\.joint\.axis: expected a list of 3",
    ),
    "name as a number": (_set(["bodies", 3, "name"], 3), r"bodies\[3\]\.name: expected a string"),
    "parent as a float": (
        _set(["bodies", 2, "parent"], 1.0),
        r"bodies\[2\]\.parent: expected a whole number",
    ),
    "body as a list": (_set(["bodies", 1], [1, 2]), r"bodies\[1\]: expected a table"),
    "bodies as a dict": (_set(["bodies"], {"a": 1}), r"model: bodies: expected a list"),
    "unknown joint type": (
        _set(["bodies", 1, "joint", "type"], "helical"),
        r"bodies\[1\]\.joint\.type: expected one of",
    ),
    "a class name as joint type": (
        _set(["bodies", 1, "joint", "type"], "os.system"),
        r"bodies\[1\]\.joint\.type",
    ),
    "unknown key": (_set(["bodies", 1, "code"], "import os"), r"bodies\[1\]: unknown key 'code'"),
    "missing key": (_drop(["bodies", 1, "com"]), r"bodies\[1\]: missing 'com'"),
    "wrong format": (_set(["format"], "pickle"), r"model: format must be"),
    "wrong version": (_set(["version"], 2), r"model: version 2"),
    "name with a control character": (
        _set(["bodies", 1, "name"], "link\x1b[2J"),
        r"bodies\[1\]\.name: .* control characters",
    ),
    # not finite
    "NaN mass": (
        _set(["bodies", 1, "mass"], float("nan")),
        r"bodies\[1\]\.mass: expected a finite",
    ),
    "infinite com": (
        _set(["bodies", 4, "com", 2], float("inf")),
        r"bodies\[4\]\.com\[2\]: expected a finite",
    ),
    "NaN in a frame": (
        _set(["frames", 0, "placement", 0], float("nan")),
        r"frames\[0\]\.placement\[0\]: expected a finite",
    ),
    "NaN gravity": (_set(["gravity", 1], float("nan")), r"model: gravity\[1\]: expected a finite"),
    # sizes
    "too many bodies": (
        lambda d: d.__setitem__("bodies", [d["bodies"][0]] * (D.MAX_BODIES + 1)),
        rf"model: bodies: {D.MAX_BODIES + 1} entries, more than the {D.MAX_BODIES}",
    ),
    "too many frames": (
        lambda d: d.__setitem__("frames", [d["frames"][0]] * (D.MAX_FRAMES + 1)),
        r"model: frames: .* more than the",
    ),
    "a huge axis": (
        _set(["bodies", 1, "joint", "axis"], [0.0] * 10**6),
        r"joint\.axis: expected a list of 3 numbers, got 1000000 entries",
    ),
    "a huge name": (_set(["bodies", 1, "name"], "x" * 10**6), r"name: 1000000 characters"),
    "a huge integer": (_set(["bodies", 1, "mass"], 10**400), r"mass: .* beyond the float64"),
    "an absurd mass": (_set(["bodies", 1, "mass"], 1e300), r"body 'link1': mass .* outside"),
    "a placement far away": (
        _set(["bodies", 1, "joint", "placement", 7], 1e300),
        r"body 'link1'.*placement",
    ),
    "no bodies": (_set(["bodies"], []), r"model: bodies: a model needs at least one body"),
    # deep nesting
    "deeply nested inertia": (
        _set(["bodies", 1, "inertia"], _deep(100_000)),
        r"bodies\[1\]\.inertia: expected 3 rows",
    ),
    "deeply nested com": (
        _set(["bodies", 1, "com"], [_deep(100_000), 0.0, 0.0]),
        r"bodies\[1\]\.com\[0\]: expected a number",
    ),
    # structure the model refuses
    "parent after the child": (
        _set(["bodies", 2, "parent"], 5),
        r"bodies\[2\]\.parent: 5 is outside -1\.\.1",
    ),
    "a second root": (_set(["bodies", 3, "parent"], -1), r"bodies\[3\]\.parent: only the first"),
    "frame on a missing body": (_set(["frames", 0, "body"], 99), r"frames\[0\]\.body: 99"),
    "negative mass": (_set(["bodies", 2, "mass"], -1.0), r"model: body 'link2': mass must be"),
    "a non-unit revolute axis": (
        _set(["bodies", 2, "joint", "axis"], [0.0, 0.0, 2.0]),
        r"body 'link2': joint axis must be a unit vector",
    ),
    "not a dict at all": (lambda d: None, None),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_data_is_refused_naming_the_entry(case):
    change, match = HOSTILE[case]
    d = model_to_dict(MODELS["space_manipulator"])
    if match is None:
        for bad in (None, "model", 3, ["bodies"], b"{}"):
            with pytest.raises(ValueError, match="model: expected a table"):
                model_from_dict(bad)
        return
    d = copy.deepcopy(d)
    change(d)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        model_from_dict(d)
    assert time.perf_counter() - t0 < 2.0  # refused before any work on the size
