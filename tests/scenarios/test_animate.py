"""`dqspace animate`: the drawn bodies sit where forward kinematics puts them (checked with
pytransform3d and with the run's own records), frames and slider follow the samples,
thrust plumes follow the recorded impulses, VSCMG spin arrows the gimbal angles, URDF
visuals are drawn where the link is; bad input is one line and exit 2; and a real browser
(headless Chromium, no network) shows the scene and shows the arm move.
"""

import asyncio
import base64
import colorsys
import contextlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
import pytransform3d.rotations as pr
import pytransform3d.transformations as pt

from dqspace.multibody import frame_pose, model_from_dict
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.cli import main
from dqspace.scenarios.figures import animate as A
from dqspace.scenarios.figures import video
from dqspace.scenarios.figures.meshes import sphere_mesh
from dqspace.scenarios.figures.visuals import MAX_URDF_BYTES
from dqspace.scenarios.store.results import Results, SeriesInfo

# the arm moves from t = 0.1 s on (no 2 s ramp), so that 2 s show it travel
SK = [
    "scenario.duration=2",
    "trajectory.start_time=0.1",
    "trajectory.ramp_time=0.2",
    "outputs.plots=false",
]
F32 = 2e-6  # [m] float32 coordinates of a scene of ~1 m


@pytest.fixture(scope="module")
def sk_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sk") / "run"
    run(load_scenario("station-keeping", SK), out=out, progress=False)
    return out


@pytest.fixture(scope="module")
def sk(sk_dir):
    return Results.load(sk_dir)


@pytest.fixture(scope="module")
def sk_fig(sk):
    return A.animation_figure(sk, frames=40)


@pytest.fixture(scope="module")
def ur5():
    return run(
        load_scenario("ur5-waypoints", ["scenario.duration=2", "outputs.plots=false"]),
        progress=False,
    )


def _arr(spec):
    """A plotly typed array decoded independently (base64 little-endian)."""
    dt = {"f4": "<f4", "f8": "<f8", "i4": "<i4"}[spec["dtype"]]
    return np.frombuffer(base64.b64decode(spec["bdata"]), dtype=dt).astype(float)


def _points(trace):
    return np.column_stack([_arr(trace[k]) for k in "xyz"])


def _trace(fig, name):
    (i,) = [k for k, tr in enumerate(fig["data"]) if tr["name"] == name]
    return i


def _in_frame(fig, j, name):
    """Points of trace ``name`` as frame j draws them."""
    i = _trace(fig, name)
    f = fig["frames"][j]
    return _points(f["data"][f["traces"].index(i)])


def _times(fig):
    """[s] of the frames, from the slider's step values (full precision)."""
    steps = fig["layout"]["sliders"][0]["steps"]
    assert [s["args"][0] for s in steps] == [[f["name"]] for f in fig["frames"]]
    return np.array([float(s["value"]) for s in steps])


def _sample(res, fig, j):
    """Index of the recorded sample frame j shows."""
    (k,) = np.flatnonzero(res.t == _times(fig)[j])
    return k


def _T(dq):
    """4x4 pose from a dual quaternion, by pytransform3d (same convention: q + eps 1/2 t q)."""
    return pt.transform_from_dual_quaternion(np.asarray(dq, float))


# ------------------------------------------------------------------ geometry


def test_end_effector_marker_is_forward_kinematics_and_the_recorded_position(sk, sk_fig):
    plant = build_system(sk.manifest["scenario"]).plant
    for j in (0, 13, 27, len(sk_fig["frames"]) - 1):
        k = _sample(sk, sk_fig, j)
        drawn = _in_frame(sk_fig, j, "end effector")[0]
        fk = _T(frame_pose(plant, sk["q"][k], "ee"))[:3, 3]
        assert np.allclose(drawn, fk, atol=1e-12, rtol=0)
        # the controller's record, in the base frame, moved by the base pose (pytransform3d)
        recorded = (_T(sk["q"][k][:8]) @ np.r_[sk["ee_pos"][k], 1.0])[:3]
        assert np.allclose(drawn, recorded, atol=1e-9, rtol=0)
        # and the trail ends there
        assert np.allclose(_in_frame(sk_fig, j, "EE path (recorded)")[-1], recorded, atol=F32)


def test_base_box_is_posed_by_the_base_dual_quaternion(sk, sk_fig):
    h = 0.5 * sk.manifest["scenario"]["base"]["size"]
    corners = np.array([[x, y, z, 1.0] for x in (-h, h) for y in (-h, h) for z in (-h, h)])
    for j in (0, len(sk_fig["frames"]) - 1):
        k = _sample(sk, sk_fig, j)
        want = (corners @ _T(sk["q"][k][:8]).T)[:, :3]
        drawn = _in_frame(sk_fig, j, "base")
        assert len(drawn) == 8
        assert np.allclose(np.sort(drawn, axis=0), np.sort(want, axis=0), atol=F32)


def test_frames_are_spread_samples_and_the_slider_says_their_times(sk, sk_fig):
    frames = sk_fig["frames"]
    assert len(frames) == 40
    t = _times(sk_fig)
    assert t[0] == sk.t[0] and t[-1] == sk.t[-1]
    assert np.all(np.diff(t) > 0)
    assert np.ptp(np.diff(t)) <= 1.5 * np.min(np.diff(sk.t))  # evenly spread samples
    (slider,) = sk_fig["layout"]["sliders"]
    steps = slider["steps"]
    assert [float(s["label"]) for s in steps] == pytest.approx(t, abs=1e-9, rel=0)  # exact
    assert slider["currentvalue"]["suffix"] == " s"
    # never more frames than samples; one frame is allowed
    assert len(A.animation_figure(sk, frames=10**6)["frames"]) == len(sk.t)
    assert len(A.animation_figure(sk, frames=1)["frames"]) == 1


def test_axes_are_equal_and_in_metres(sk_fig):
    scene = sk_fig["layout"]["scene"]
    spans = [np.diff(scene[a]["range"])[0] for a in ("xaxis", "yaxis", "zaxis")]
    assert spans == pytest.approx([spans[0]] * 3)
    assert scene["aspectmode"] == "cube"
    assert [scene[a]["title"] for a in ("xaxis", "yaxis", "zaxis")] == ["x [m]", "y [m]", "z [m]"]
    # everything drawn is inside the ranges
    for f in sk_fig["frames"]:
        for d in f["data"]:
            P = _points(d)
            for c, a in enumerate(("xaxis", "yaxis", "zaxis")):
                lo, hi = scene[a]["range"]
                assert lo <= P[:, c].min() and P[:, c].max() <= hi


def test_plumes_are_drawn_exactly_when_the_thruster_fired(sk, sk_fig):
    S = sk["thrust_impulse"].shape[1]
    names = [f["name"] for f in sk_fig["frames"]]
    fired_any = 0
    for j in range(1, len(names)):
        k0, k1 = _sample(sk, sk_fig, j - 1), _sample(sk, sk_fig, j)
        impulse = sk["thrust_impulse"][k0:k1].sum(axis=0)  # the periods since the last frame
        cones = _in_frame(sk_fig, j, "thruster plumes (firing)").reshape(S, -1, 3)
        length = np.max(np.linalg.norm(cones - cones[:, :1], axis=2), axis=1)
        assert np.all((length > 1e-3) == (impulse > 1e-12)), (j, length, impulse)
        fired_any += int(np.any(impulse > 0))
    assert fired_any > 5  # the test saw firing frames


def test_vscmg_spin_arrows_turn_with_the_recorded_gimbal_angles(sk, sk_fig):
    cluster = build_system(sk.manifest["scenario"]).cluster_model.cluster
    K = cluster.K
    for j in (0, len(sk_fig["frames"]) - 1):
        k = _sample(sk, sk_fig, j)
        T_IB = _T(sk["q"][k][:8])
        arrows = _in_frame(sk_fig, j, "VSCMG spin axes").reshape(K, -1, 3)
        for i, u in enumerate(cluster.units):
            s0, t0 = u.frame_rotation[:, 0], u.frame_rotation[:, 1]
            g = sk["gimbal"][k, i]
            s = np.cos(g) * s0 + np.sin(g) * t0  # the spin axis at gimbal angle g (base frame)
            s_I = T_IB[:3, :3] @ s * np.sign(sk["wheel_speed"][k, i])
            p_I = (T_IB @ np.r_[u.position, 1.0])[:3]
            axis = arrows[i].mean(axis=0) - p_I  # an arrow is symmetric about its axis
            assert np.allclose(axis / np.linalg.norm(axis), s_I, atol=1e-5)
    # the gimbals did turn: the spin axes differ between the first and last frames
    assert np.ptp(sk["gimbal"], axis=0).max() > np.radians(0.5)


def test_reaction_wheel_arrows_grow_with_wheel_speed(ur5):
    fig = A.animation_figure(ur5, frames=20)
    wheels = build_system(ur5.manifest["scenario"]).wheel_model.array
    W = wheels.n
    tips, ratios = [], []  # the arrow's signed length is one constant times speed / limit
    for j in range(1, 20):
        k = _sample(ur5, fig, j)
        T_IB = _T(ur5["q"][k][:8])
        arrows = _in_frame(fig, j, "wheel speeds (arrow: speed / limit)").reshape(W, -1, 3)
        ratio = ur5["rw_speed"][k] / wheels.max_speed
        for i, w in enumerate(wheels.wheels):
            a_I = T_IB[:3, :3] @ w.axis
            along = (arrows[i] - (T_IB @ np.r_[w.position, 1.0])[:3]) @ a_I
            tip = along[np.argmax(np.abs(along))]  # signed: the arrow points with the speed
            if ratio[i] == 0.0:
                assert abs(tip) < F32  # a wheel at rest: no arrow
                continue
            tips.append(tip)
            ratios.append(ratio[i])
    tips, ratios = np.array(tips), np.array(ratios)
    c = tips @ ratios / (ratios @ ratios)
    assert c > 0 and len(tips) > 20
    assert np.allclose(tips, c * ratios, atol=F32, rtol=0)  # float32 coordinates
    go.Figure(fig)  # plotly's own schema accepts the figure


def test_an_open_loop_run_is_drawn_at_its_recorded_positions(tmp_path):
    res = run(
        load_scenario(
            "dynamics-check",
            ["scenario.duration=0.5", "integrator.method='rk4'", "outputs.plots=false"],
        ),
        progress=False,
    )
    fig = A.animation_figure(res, frames=6)
    for j in range(6):
        k = _sample(res, fig, j)
        assert np.allclose(_in_frame(fig, j, "end effector")[0], res["ee_pos_I"][k], atol=1e-12)
    assert "thruster plumes (firing)" not in [d["name"] for d in fig["data"]]


# ------------------------------------------------------------------ what the run recorded


def test_the_recorded_plant_is_the_runs_plant_bit_for_bit(sk, ur5):
    for res in (sk, ur5):
        recorded = model_from_dict(res.manifest["system"]["plant_model"])
        plant = build_system(res.manifest["scenario"]).plant
        for a, b in zip(recorded.packed, plant.packed, strict=True):
            assert a.tobytes() == b.tobytes()
        assert recorded.body_names == plant.body_names
        assert [f.name for f in recorded.frames] == [f.name for f in plant.frames]


def test_animating_imports_nothing_a_result_names(sk, tmp_path, monkeypatch):
    """A received result may name any controller module: animating it runs none of it."""
    marker = tmp_path / "imported"
    (tmp_path / "dqspace_probe_law.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nclass Law:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sc = dict(sk.manifest["scenario"])
    sc["base_controller"] = dict(sc["base_controller"], law="dqspace_probe_law:Law")
    sc["arm_controller"] = dict(sc["arm_controller"], law="dqspace_probe_law:Law")
    res = Results(sk.data, sk.info, dict(sk.manifest, scenario=sc))
    fig = A.animation_figure(res, frames=3)
    assert len(fig["frames"]) == 3
    assert not marker.exists() and "dqspace_probe_law" not in sys.modules


def test_a_result_without_its_recorded_plant_is_refused_clearly(sk, tmp_path, capsys):
    system = {k: v for k, v in sk.manifest["system"].items() if k != "plant_model"}
    old = Results(sk.data, sk.info, dict(sk.manifest, system=system))
    with pytest.raises(ValueError, match=r"does not record its plant .*run the scenario again"):
        A.animation_figure(old, frames=2)
    old.save(tmp_path / "old")
    assert main(["animate", str(tmp_path / "old")]) == 2
    assert "does not record its plant" in _error_line(capsys)


def _hostile(sk, path, value):
    system = json.loads(json.dumps(sk.manifest["system"]))
    target = system
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return Results(sk.data, sk.info, dict(sk.manifest, system=system))


@pytest.mark.parametrize(
    "path, value, match",
    [
        (["scene", "thrusters", 0, "position", 1], float("nan"), r"thrusters\[0\]\.position\[1\]"),
        (["scene", "vscmgs", 2, "gimbal_body"], 10**6, r"vscmgs\[2\]\.gimbal_body"),
        (["scene", "vscmgs", 0, "wheel_v"], "14", r"vscmgs\[0\]\.wheel_v"),
        (["scene", "ee_frame"], "no_such_frame", r"ee_frame: 'no_such_frame' is not a frame"),
        (["scene", "base_size"], -0.3, r"base_size: expected a positive finite"),
        (["scene", "thrusters"], [{}] * 10**4, r"thrusters: expected a list of at most"),
        (["scene", "urdf"], {"path": ["/etc/passwd"], "sha256": ""}, r"urdf: expected None"),
        (["plant_model", "bodies", 1, "mass"], float("inf"), r"plant_model.*bodies\[1\]\.mass"),
        (["plant_model", "bodies", 1, "joint", "type"], "os.system", r"joint\.type"),
        (["scene"], "drawn by a script", r"scene: expected a table"),
    ],
)
def test_hostile_recorded_data_is_refused_naming_the_entry(sk, path, value, match):
    with pytest.raises(ValueError, match=match):
        A.animation_figure(_hostile(sk, path, value), frames=2)


# ------------------------------------------------------------------ URDF visuals


def _tetra_stl_binary(path, scale):
    tris = scale * np.array(
        [[[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 0], [0, 0, 1], [1, 0, 0]],
         [[0, 0, 0], [0, 1, 0], [0, 0, 1]], [[1, 0, 0], [0, 0, 1], [0, 1, 0]]], float
    )  # fmt: skip
    rec = np.zeros(4, dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    rec["v"] = tris
    path.write_bytes(b"solid-looking header".ljust(80) + np.uint32(4).tobytes() + rec.tobytes())
    return np.unique(tris.reshape(-1, 3), axis=0)


def _write_ascii_stl(path, tris):
    lines = ["solid t"]
    for tri in tris:
        lines += ["facet normal 0 0 0", "outer loop"]
        lines += [f"vertex {x} {y} {z}" for x, y, z in tri] + ["endloop", "endfacet"]
    path.write_text("\n".join(lines + ["endsolid t"]))


def _visual(link, geometry, origin=None, color=None, material=None):
    v = ET.SubElement(link, "visual")
    if origin is not None:
        ET.SubElement(v, "origin", origin)
    g = ET.SubElement(v, "geometry")
    ET.SubElement(g, geometry[0], geometry[1])
    if color is not None:
        ET.SubElement(ET.SubElement(v, "material", {"name": "c"}), "color", {"rgba": color})
    if material is not None:
        ET.SubElement(v, "material", {"name": material})


@pytest.fixture(scope="module")
def visual_run(tmp_path_factory):
    """The `dqspace new` arm with visuals: box, cylinder, sphere, STL meshes (binary via
    package://, ASCII via a relative path), a missing mesh, a box without its size."""
    root = tmp_path_factory.mktemp("visual")
    assert main(["new", "vis", "--dir", str(root), "-q"]) == 0
    folder = root / "vis"
    (root / "testarm" / "meshes").mkdir(parents=True)
    tetra = _tetra_stl_binary(root / "testarm" / "meshes" / "w1.stl", 40.0)  # mm
    (folder / "meshes").mkdir()
    tris = np.array(
        [[[0, 0, 0], [0.03, 0, 0], [0, 0.03, 0]], [[0, 0, 0], [0, 0, 0.03], [0.03, 0, 0]]]
    )
    _write_ascii_stl(folder / "meshes" / "w2.stl", tris)
    tree = ET.parse(folder / "arm.urdf")
    robot = tree.getroot()
    ET.SubElement(
        ET.SubElement(robot, "material", {"name": "grey"}), "color", {"rgba": "0.5 0.5 0.5 1"}
    )  # noqa: E501
    links = {el.get("name"): el for el in robot.findall("link")}
    _visual(links["upper_arm"], ("box", {"size": "0.06 0.05 0.3"}),
            {"xyz": "0.01 0 0.15", "rpy": "0.1 0.2 0.3"}, color="0 0 1 1")  # fmt: skip
    _visual(links["forearm"], ("cylinder", {"radius": "0.03", "length": "0.3"}),
            {"xyz": "0 0 0.15"}, material="grey")  # fmt: skip
    _visual(links["upper_base"], ("sphere", {"radius": "0.05"}))
    _visual(links["wrist1"], ("mesh", {"filename": "package://testarm/meshes/w1.stl",
                                       "scale": "0.001 0.001 0.001"}))  # fmt: skip
    _visual(links["wrist2"], ("mesh", {"filename": "meshes/w2.stl"}))
    _visual(links["flange"], ("mesh", {"filename": "meshes/missing.stl"}))
    _visual(links["arm_base"], ("box", {}))  # no size: reported, drawn as a stick
    tree.write(folder / "arm.urdf")
    res = run(
        load_scenario(folder / "scenario.toml", ["scenario.duration=0.3", "outputs.plots=false"]),
        progress=False,
    )
    return res, tetra


def test_urdf_visuals_are_drawn_on_their_links(visual_run, caplog):
    res, tetra = visual_run
    with caplog.at_level(logging.WARNING, logger="dqspace"):
        fig = A.animation_figure(res, frames=4)
    assert "missing.stl" in caplog.text and "stick" in caplog.text
    assert "link 'arm_base' visual 0: <box> needs size=" in caplog.text
    plant = build_system(res.manifest["scenario"]).plant
    arm = fig["data"][_trace(fig, "arm links")]
    colors = set(arm["facecolor"])
    assert {"rgb(0,0,255)", "rgb(128,128,128)"} <= colors
    R = pr.matrix_from_euler([0.1, 0.2, 0.3], 0, 1, 2, True)  # URDF rpy: extrinsic x-y-z
    T_box = pt.transform_from(R, [0.01, 0.0, 0.15])
    h = 0.5 * np.array([0.06, 0.05, 0.3])
    box = (
        np.array([[x, y, z, 1.0] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * np.r_[h, 1]
    )
    for j in (0, 3):
        q = res["q"][_sample(res, fig, j)]
        drawn = _in_frame(fig, j, "arm links")

        def present(points, drawn=drawn):
            d = np.linalg.norm(drawn[None] - points[:, None], axis=2)
            return np.all(d.min(axis=1) < F32)

        assert present((box @ (_T(frame_pose(plant, q, "upper_arm")) @ T_box).T)[:, :3])
        w1 = 0.001 * tetra
        assert present((np.c_[w1, np.ones(4)] @ _T(frame_pose(plant, q, "wrist1")).T)[:, :3])
        w2 = np.unique(np.array([[0, 0, 0], [0.03, 0, 0], [0, 0.03, 0], [0, 0, 0.03]]), axis=0)
        assert present((np.c_[w2, np.ones(4)] @ _T(frame_pose(plant, q, "wrist2")).T)[:, :3])


def test_a_urdf_that_is_gone_is_drawn_as_sticks(visual_run, caplog):
    res, _ = visual_run
    system = json.loads(json.dumps(res.manifest["system"]))
    system["scene"]["urdf"]["path"] = "/nonexistent/arm.urdf"
    gone = Results(res.data, res.info, dict(res.manifest, system=system))
    with caplog.at_level(logging.WARNING, logger="dqspace"):
        fig = A.animation_figure(gone, frames=2)
    assert "/nonexistent/arm.urdf cannot be read" in caplog.text and "sticks" in caplog.text
    arm = fig["data"][_trace(fig, "arm links")]
    assert "facecolor" not in arm and len(_points(arm)) > 0  # sticks, in the arm's colour


@pytest.mark.parametrize("kind", ["fifo", "device", "relative", "too large", "link", "a mesh fifo"])
def test_the_urdf_a_manifest_names_is_read_only_as_a_bounded_regular_file(
    visual_run, tmp_path, caplog, kind
):
    """The URDF path comes from the manifest, someone else's: a FIFO there blocked the
    animation forever, /dev/zero filled the memory.  Only a regular file (no link at its
    end), at an absolute path, of at most MAX_URDF_BYTES is read; else the arm is sticks."""
    res, _ = visual_run
    urdf = Path(res.manifest["system"]["scene"]["urdf"]["path"])
    path = tmp_path / "arm.urdf"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/zero")
    elif kind == "relative":
        path = Path(os.path.relpath(urdf))
    elif kind == "too large":
        with open(path, "wb") as f:
            f.truncate(MAX_URDF_BYTES + 1)  # sparse: no disk used
    elif kind == "link":
        path.symlink_to(urdf)
    else:  # a mesh that is a FIFO, named by a URDF that is a regular file
        shutil.copytree(urdf.parent, tmp_path / "vis")
        path = tmp_path / "vis" / urdf.name
        (tmp_path / "vis" / "meshes" / "w2.stl").unlink()
        os.mkfifo(tmp_path / "vis" / "meshes" / "w2.stl")
    system = json.loads(json.dumps(res.manifest["system"]))
    system["scene"]["urdf"] = {"path": str(path), "sha256": ""}
    got = Results(res.data, res.info, dict(res.manifest, system=system))
    box = {}
    worker = threading.Thread(
        target=lambda: box.update(fig=A.animation_figure(got, frames=2)), daemon=True
    )
    with caplog.at_level(logging.WARNING, logger="dqspace"):
        worker.start()
        worker.join(60)
    assert not worker.is_alive(), f"the animation hangs on a {kind}"
    arm = box["fig"]["data"][_trace(box["fig"], "arm links")]
    if kind == "a mesh fifo":  # that link drawn as a stick, the others from the URDF
        assert "w2.stl" in caplog.text and "not a regular file" in caplog.text
        assert "facecolor" in arm
    else:
        assert "sticks" in caplog.text and "facecolor" not in arm, caplog.text


def test_stl_readers_agree_and_meshes_thin_to_a_budget(tmp_path):
    tris = np.random.default_rng(3).normal(size=(50, 3, 3))
    rec = np.zeros(50, dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    rec["v"] = tris
    (tmp_path / "b.stl").write_bytes(bytes(80) + np.uint32(50).tobytes() + rec.tobytes())
    _write_ascii_stl(tmp_path / "a.stl", tris.astype(np.float32))
    b, a = A.read_mesh(tmp_path / "b.stl"), A.read_mesh(tmp_path / "a.stl")
    assert len(b.faces) == len(a.faces) == 50 and len(b.vertices) == 150
    assert np.allclose(b.vertices[b.faces], a.vertices[a.faces], atol=1e-6)
    assert np.allclose(b.vertices[b.faces], tris, atol=1e-6)
    # a fine sphere thinned: fewer vertices, same size
    s = sphere_mesh(1.0, 40, 80)
    thin = A.simplify_mesh(s, 300)
    assert len(thin.vertices) <= 300 < len(s.vertices)
    assert np.allclose(np.ptp(thin.vertices, axis=0), 2.0, atol=0.15)
    assert A.simplify_mesh(thin, 10**6) is thin
    (tmp_path / "x.dae").write_text("<COLLADA/>")
    with pytest.raises(ValueError, match=r"x\.dae: unsupported mesh format"):
        A.read_mesh(tmp_path / "x.dae")
    (tmp_path / "bad.stl").write_bytes(b"garbage that is no STL at all")
    with pytest.raises(ValueError, match=r"bad\.stl"):
        A.read_mesh(tmp_path / "bad.stl")


# ------------------------------------------------------------------ status, errors, CLI


def test_a_failed_run_says_so_and_its_non_finite_samples_are_left_out(sk):
    q = sk["q"].copy()
    q[-5:] = np.nan
    data = dict(sk.data, q=q)
    manifest = dict(sk.manifest, status="failed", message="state not finite")
    res = Results(data, sk.info, manifest)
    fig = A.animation_figure(res, frames=10**6)
    assert "FAILED at t = " in fig["layout"]["title"]["text"]
    assert "station-keeping" in fig["layout"]["title"]["text"]
    assert len(fig["frames"]) == len(sk.t) - 5
    interrupted = Results(sk.data, sk.info, dict(sk.manifest, status="interrupted"))
    assert "interrupted" in A.animation_figure(interrupted, frames=2)["layout"]["title"]["text"]


@pytest.mark.parametrize(
    "kw, match",
    [({"frames": 0}, "frames must be"), ({"frames": 2.5}, "frames must be"),
     ({"fps": -1.0}, "fps must be"), ({"fps": float("nan")}, "fps must be")],
)  # fmt: skip
def test_bad_options_are_named(sk, kw, match):
    with pytest.raises(ValueError, match=match):
        A.animation_figure(sk, **kw)


def _error_line(capsys):
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("dqspace: error: ")]
    assert len(err) == 1
    return err[0]


def test_a_directory_that_is_not_a_result_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("not a run")
    assert main(["animate", str(tmp_path)]) == 2
    assert str(tmp_path) in _error_line(capsys)
    assert main(["animate", str(tmp_path / "nowhere")]) == 2
    assert "no such result directory" in _error_line(capsys)
    # a result without a configuration series
    res = Results({"t": np.arange(3.0)}, {"t": SeriesInfo("s")}, {"scenario": {}})
    res.save(tmp_path / "no-q")
    assert main(["animate", str(tmp_path / "no-q")]) == 2
    assert "'q'" in _error_line(capsys)


def test_cli_writes_a_page_that_needs_no_network(sk_dir, tmp_path, capsys):
    out = tmp_path / "a.html"
    assert main(["animate", str(sk_dir), "--out", str(out), "--frames", "12", "-q"]) == 0
    assert str(out) in capsys.readouterr().out
    html = out.read_text()
    assert "Plotly.newPlot" in html or "Plotly.react" in html
    assert not re.search(r"<(script|link|img)[^>]+(src|href)\s*=", html, re.IGNORECASE)
    assert main(["animate", str(sk_dir), "--frames", "0"]) == 2
    assert "frames must be" in _error_line(capsys)


# ------------------------------------------------------------------ videos


def test_a_gif_shows_the_scene_and_the_arm_moving(sk_dir, tmp_path):
    from PIL import Image

    out = tmp_path / "sk.gif"
    assert main(["animate", str(sk_dir), "--out", str(out), "--frames", "4", "-q"]) == 0
    with Image.open(out) as im:
        assert im.n_frames == 4 and im.size == (800, 600)
        frames = []
        for k in (0, 3):
            im.seek(k)
            frames.append(np.asarray(im.convert("RGB")))
    first, last = frames
    for img in frames:
        assert len(np.unique(img.reshape(-1, 3), axis=0)) > 50
        assert _arm_pixels(img).sum() > 1000
    moved = np.any(np.abs(first.astype(int) - last.astype(int)) > 30, axis=2)
    assert (moved & (_arm_pixels(first) | _arm_pixels(last))).sum() > 100


def test_mp4_without_ffmpeg_is_a_clear_error_and_leaves_nothing(
    sk_dir, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(video.shutil, "which", lambda name: None)
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # import fails
    assert main(["animate", str(sk_dir), "--format", "mp4", "--out", str(tmp_path / "a.mp4")]) == 2
    assert "imageio-ffmpeg" in _error_line(capsys)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="format 'avi'"):  # no such format
        A.animate(Results.load(sk_dir), tmp_path / "a", format="avi")


def test_mp4_when_ffmpeg_is_there(sk, tmp_path):
    if shutil.which("ffmpeg") is None:
        pytest.importorskip("imageio_ffmpeg", reason="no ffmpeg program, no imageio-ffmpeg")
    out = A.animate(sk, tmp_path / "a.mp4", frames=3)
    assert out.stat().st_size > 1000
    assert out.read_bytes()[4:8] == b"ftyp"  # an MP4 container


# ------------------------------------------------------------------ a real browser


def _chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        reason = "chromium is not installed (Debian: apt-get install chromium)"
        if os.environ.get("DQSPACE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"DQSPACE_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    return exe


def _screenshot(exe, page, frame, png, tmp_path):
    profile = tmp_path / f"profile-{frame}"
    cmd = [
        exe, "--headless", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader",
        "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-extensions",
        # no network: every host name fails and any connection goes to a closed port
        "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
        f"--user-data-dir={profile}", "--window-size=1000,800", "--virtual-time-budget=8000",
        f"--screenshot={png}", f"{page.as_uri()}#frame={frame}",
    ]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=180)
    from PIL import Image

    return np.asarray(Image.open(png).convert("RGB"))


def _arm_pixels(img):
    """Pixels of the arm links' hue (the scene's only orange), saturated enough."""
    from PIL import Image

    hsv = np.asarray(Image.fromarray(img).convert("HSV")).astype(int)
    h0 = colorsys.rgb_to_hsv(*(int(A.ARM_COLOR[i : i + 2], 16) / 255 for i in (1, 3, 5)))[0]
    return (np.abs(hsv[..., 0] - 255 * h0) <= 6) & (hsv[..., 1] > 100)


def test_a_browser_shows_the_scene_and_the_arm_moving(sk, tmp_path):
    exe = _chromium()
    page = A.animate(sk, tmp_path / "sk.html", frames=40)
    first = _screenshot(exe, page, 0, tmp_path / "first.png", tmp_path)
    last = _screenshot(exe, page, 39, tmp_path / "last.png", tmp_path)
    for img in (first, last):
        assert len(np.unique(img.reshape(-1, 3), axis=0)) > 500  # not blank, shaded
        assert _arm_pixels(img).sum() > 2000  # WebGL drew the arm (no "WebGL not supported")
    moved = np.any(np.abs(first.astype(int) - last.astype(int)) > 30, axis=2)
    where_arm = moved & (_arm_pixels(first) | _arm_pixels(last))
    assert where_arm.sum() > 300, (moved.sum(), where_arm.sum())


@contextlib.contextmanager
def _devtools(exe, tmp_path, url):
    """Headless Chromium on ``url``, driven through the DevTools protocol (tornado's
    websocket client): yields ``evaluate(js) -> value``."""
    websocket = pytest.importorskip("tornado.websocket")
    profile = tmp_path / "devtools-profile"
    proc = subprocess.Popen(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader",
         "--no-first-run", "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
         f"--user-data-dir={profile}", "--window-size=1000,800", "--remote-debugging-port=0",
         url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    loop = asyncio.new_event_loop()
    try:
        port_file = profile / "DevToolsActivePort"
        for _ in range(600):
            if port_file.exists() and len(port_file.read_text().split()) == 2:
                break
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json") as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]

        async def connect():  # inside the loop: tornado binds to the running one
            return await websocket.websocket_connect(pages[0]["webSocketDebuggerUrl"])

        ws = loop.run_until_complete(connect())
        ids = iter(range(1, 10**6))

        async def call(expression):
            i = next(ids)
            params = {"expression": expression, "returnByValue": True}
            await ws.write_message(
                json.dumps({"id": i, "method": "Runtime.evaluate", "params": params})
            )  # noqa: E501
            while True:
                msg = json.loads(await ws.read_message())
                if msg.get("id") == i:
                    return msg["result"]["result"].get("value")

        yield lambda js: loop.run_until_complete(call(js))
        ws.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        loop.close()


def test_the_play_button_plays_in_a_browser(sk, tmp_path):
    exe = _chromium()
    page = A.animate(sk, tmp_path / "sk.html", frames=20, fps=10.0)
    with _devtools(exe, tmp_path, page.as_uri()) as run_js:
        _play_to_the_end(run_js)


def _play_to_the_end(run_js):
    active = "document.getElementById('dqspace-animation')._fullLayout.sliders[0].active"
    for _ in range(600):  # the page is drawn (a slow machine may take a while)
        if run_js("document.body.getAttribute('data-frame')") == "0":
            break
        time.sleep(0.1)
    assert run_js(active) == 0
    run_js("document.querySelector('.updatemenu-button').dispatchEvent("
           "new MouseEvent('click', {bubbles: true}))")  # fmt: skip
    seen = {0}
    for _ in range(1200):  # until the last frame (not a timing test: it waits as needed)
        seen.add(run_js(active))
        if 19 in seen:
            break
        time.sleep(0.05)
    assert 19 in seen and len(seen) > 3  # it went through the frames to the end


@pytest.mark.parametrize(
    "name, fmt, message",
    [
        ("x.avi", None, r"suffix '\.avi' names no format"),
        ("x.mov", "mp4", r"suffix '\.mov' names no format"),
        ("x.html", "gif", r"format 'gif' does not match the suffix '\.html'"),
        ("x.gif", "html", r"format 'html' does not match the suffix '\.gif'"),
    ],
)
def test_a_file_name_that_contradicts_the_format_is_refused(sk, tmp_path, name, fmt, message):
    """``--out x.avi`` wrote an HTML page under a video's name."""
    with pytest.raises(ValueError, match=message):
        A.animate(sk, tmp_path / name, format=fmt)
    assert not any(tmp_path.iterdir())
