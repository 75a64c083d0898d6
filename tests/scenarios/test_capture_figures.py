"""What a person sees of a capture run: the animation's target and grasp, the capture
figures (:mod:`dqspace.scenarios.figures.run_capture`).

References independent of the drawing code: the recorded ``target_pose`` converted by
pytransform3d; the box's own geometry (its corners' second moments give a uniform box's
inertia, compared with the target's; the fixture on its surface); the base's rate from
finite differences of its recorded attitude; the interface force from the second
differences of the target's recorded CoM positions (Newton: ``f = m a``); the stack's
momentum against the run's own metric (computed on the combined plant model, not the
servicer plus the free target); the configured stand-off and limits.

One short run (the embedded servicer and target, grasp at 1.5 s, 2.5 s simulated) shared by
all tests, and one on the UR5 servicer with another target.
"""

import colorsys
import json

import numpy as np
import pytest
import pytransform3d.transformations as pt
from matplotlib.backends.backend_agg import FigureCanvasAgg
from test_animate import _chromium, _screenshot

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.cli import main
from dqspace.scenarios.figures import animate as A
from dqspace.scenarios.figures.plots import figures
from dqspace.scenarios.figures.run_capture import (
    plot_capture_interface,
    plot_capture_momentum,
    stack_momentum_split,
)
from dqspace.scenarios.figures.target_view import GRASPED_COLOR, TARGET_COLOR
from dqspace.scenarios.store.results import Results

SHORT = [
    "scenario.duration=2.5",
    "capture.approach_duration=1.0",
    "capture.grasp_time=1.5",
    "capture.residual_rate_deg_s=1.0",  # reached within the second after the grasp
    "target_navigation.enabled=false",  # the approach starts exactly at the stand-off
    "outputs.plots=false",
]
#: the UR5 servicer of ``ur5-waypoints`` with a 30 kg target (tests/scenarios/
#: test_capture_scenario.py's second servicer), 1.5 s
UR5 = [
    "scenario.kind=capture",
    "scenario.duration=1.5",
    "capture.approach_duration=0.5",
    "capture.grasp_time=1.0",
    "capture.standoff=[0.0,0.0,-0.05]",
    "thrusters.mode=force",
    "target.mass=30.0",
    "target.com=[0.02,0.0,-0.01]",
    "target.inertia=[1.2,0.9,1.5,-0.05,0.03,0.02]",
    "target.fixture_xyz=[0.0,0.0,-0.3]",
    "target.xyz=[-0.487,-0.109,0.382]",
    "target.rpy_deg=[180.0,0.0,90.0]",
    "target.rate_deg_s=[-2.0,3.0,1.0]",
    "outputs.plots=false",
]
F32 = 5e-6  # [m] float32 coordinates of a scene of a few metres
BOX = "target (green once grasped)"


@pytest.fixture(scope="module")
def cap_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("capture") / "run"
    run(load_scenario("capture", SHORT), out=out, progress=False)
    return out


@pytest.fixture(scope="module")
def cap(cap_dir):
    return Results.load(cap_dir)


@pytest.fixture(scope="module")
def anim(cap):
    return A.animation_figure(cap, frames=30)


@pytest.fixture(scope="module")
def figs(cap):
    out = figures(cap)
    for f in out.values():
        FigureCanvasAgg(f).draw()
    return out


@pytest.fixture(scope="module")
def ur5():
    return run(load_scenario("ur5-waypoints", UR5), progress=False)


def _arr(spec):
    import base64  # the page's typed arrays, decoded independently

    dt = {"f4": "<f4", "f8": "<f8", "i4": "<i4"}[spec["dtype"]]
    return np.frombuffer(base64.b64decode(spec["bdata"]), dtype=dt).astype(float)


def _trace(fig, name):
    (i,) = [k for k, tr in enumerate(fig["data"]) if tr["name"] == name]
    return i


def _in_frame(fig, j, name):
    i = _trace(fig, name)
    f = fig["frames"][j]
    d = f["data"][f["traces"].index(i)]
    return np.column_stack([_arr(d[k]) for k in "xyz"]), d


def _sample(res, fig, j):
    t = float(fig["layout"]["sliders"][0]["steps"][j]["value"])
    (k,) = np.flatnonzero(res.t == t)
    return k


def _T(dq):
    return pt.transform_from_dual_quaternion(np.asarray(dq, float))


def _grasp(res):
    (t,) = [e["t"] for e in res.manifest["events"] if e["event"] == "grasp"]
    return t


def _with_scenario(res, **sections):
    sc = json.loads(json.dumps(res.manifest["scenario"]))
    for name, changes in sections.items():
        sc[name] = dict(sc[name], **changes)
    return Results(res.data, res.info, dict(res.manifest, scenario=sc))


# ------------------------------------------------------------------ the animation


def _box_in_body(res, fig, j):
    """The drawn box's 8 corners in the target's body frame (pytransform3d's pose)."""
    k = _sample(res, fig, j)
    drawn, _ = _in_frame(fig, j, BOX)
    assert drawn.shape == (8, 3)
    T = _T(res["target_pose"][k])
    return (np.c_[drawn, np.ones(8)] @ np.linalg.inv(T).T)[:, :3]


def test_the_target_box_has_the_targets_inertia_and_is_posed_by_target_pose(cap, anim):
    t = cap.manifest["scenario"]["target"]
    ixx, iyy, izz, ixy, ixz, iyz = t["inertia"]
    J = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    for j in (0, 11, len(anim["frames"]) - 1):
        B = _box_in_body(cap, anim, j)
        c = B.mean(axis=0)
        assert np.allclose(c, t["com"], atol=F32)  # centred on the CoM
        # a box's corners: second moment (a_i / 2)^2 along its axes; a uniform solid box
        # has a_i^2 / 12 per unit mass, i.e. a third of it
        S = (B - c).T @ (B - c) / 8.0 / 3.0
        I_box = np.trace(S) * np.eye(3) - S
        assert np.allclose(I_box / np.trace(I_box), J / np.trace(J), atol=1e-5)
        # the fixture, inside the uniform box of that mass, sits on the shrunk box's face
        w, E = np.linalg.eigh((B - c).T @ (B - c) / 8.0)
        p = E.T @ (np.asarray(t["fixture_xyz"]) - c)
        assert np.max(np.abs(p) / np.sqrt(w)) == pytest.approx(1.0, abs=1e-5)


def test_target_size_sets_the_box(cap):
    res = _with_scenario(cap, target={"size": [1.0, 1.2, 1.4]})
    fig = A.animation_figure(res, frames=3)
    B = _box_in_body(res, fig, 1)
    assert np.allclose(np.ptp(B, axis=0), [1.0, 1.2, 1.4], atol=F32)  # body axes


def test_the_target_path_and_fixture_are_the_recorded_target_poses(cap, anim):
    fx = np.r_[cap.manifest["scenario"]["target"]["fixture_xyz"], 1.0]
    for j in (0, 7, len(anim["frames"]) - 1):
        ks = [_sample(cap, anim, i) for i in range(j + 1)]
        path, _ = _in_frame(anim, j, "target path (recorded)")
        want = np.array([_T(cap["target_pose"][k])[:3, 3] for k in ks])
        assert np.allclose(path, want, atol=1e-12, rtol=0)  # float64 path
        marker, _ = _in_frame(anim, j, "grapple fixture")
        assert np.allclose(marker[0], (_T(cap["target_pose"][ks[-1]]) @ fx)[:3], atol=1e-12)


def test_the_grasp_shows_from_the_grasp_event_on(cap, anim):
    t_g = _grasp(cap)
    after = []
    for j in range(len(anim["frames"])):
        k = _sample(cap, anim, j)
        _, box = _in_frame(anim, j, BOX)
        _, marker = _in_frame(anim, j, "grapple fixture")
        grasped = cap.t[k] >= t_g
        after.append(grasped)
        assert box["color"] == (GRASPED_COLOR if grasped else TARGET_COLOR)
        assert ("grasped at t = 1.5 s" in marker["text"][0]) == grasped
    assert any(after) and not all(after)


def test_the_view_holds_the_target_in_every_frame(cap, anim):
    sc = anim["layout"]["scene"]
    lo = np.array([sc[f"{a}axis"]["range"][0] for a in "xyz"])
    hi = np.array([sc[f"{a}axis"]["range"][1] for a in "xyz"])
    for j in range(len(anim["frames"])):
        for name in (BOX, "grapple fixture axes (x red, y green, z blue)"):
            P, _ = _in_frame(anim, j, name)
            assert np.all(P >= lo) and np.all(P <= hi)


def test_a_gif_shows_the_target_turn_green_at_the_grasp(cap, tmp_path):
    from PIL import Image  # only for this test

    path = A.animate(cap, tmp_path / "c.gif", frames=3)
    im = Image.open(path)
    green = []
    for k in (0, 2):  # before and after the grasp (t = 0 and 2.5 s)
        im.seek(k)
        rgb = np.asarray(im.convert("RGB"), int)
        green.append(
            int(np.sum((rgb[..., 1] > rgb[..., 0] + 40) & (rgb[..., 1] > rgb[..., 2] + 20)))
        )
    assert green[1] > 20 * max(green[0], 50)  # the box, thousands of pixels, turned green


def _hostile_data(res, **data):
    return Results(dict(res.data, **data), res.info, res.manifest)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda r: _hostile_data(r, target_pose=r["target_pose"][:, :7]), r"'target_pose'.*7\)"),
        (lambda r: _hostile_data(r, target_pose=r["target_pose"][:-1]), r"'target_pose' has shape"),
        (lambda r: _hostile_data(r, target_pose=2.0 * r["target_pose"]), "unit dual quaternion"),
        (lambda r: _hostile_data(r, target_pose=np.nan * r["target_pose"]), "not finite"),
        (lambda r: _with_scenario(r, target={"inertia": "import os"}), r"\['inertia'\]"),
        (lambda r: _with_scenario(r, target={"inertia": [1.0, 1.0, 5.0, 0, 0, 0]}), "triangle"),
        (lambda r: _with_scenario(r, target={"mass": -3.0}), r"\['mass'\]"),
        (lambda r: Results(r.data, r.info, dict(r.manifest, scenario={})), r"\['target'\]"),
        (lambda r: _with_scenario(r, target={"size": [1.0, -1.0, 1.0]}), r"\['size'\]"),
        (lambda r: _with_scenario(r, target={"size": [1.0, 1e300, 1.0]}), r"\['size'\]"),
    ],
)  # fmt: skip
def test_hostile_capture_data_is_refused_naming_it(cap, change, match):
    with pytest.raises(ValueError, match=match):
        A.animation_figure(change(cap), frames=3)


def test_a_bogus_target_pose_file_is_one_line_and_exit_2(cap, tmp_path, capsys):
    _hostile_data(cap, target_pose=cap["target_pose"][:, :3]).save(tmp_path / "bad")
    assert main(["animate", str(tmp_path / "bad")]) == 2
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("dqspace: error")]
    assert len(err) == 1 and "target_pose" in err[0]
    bad = _hostile_data(cap, target_twist=cap["target_twist"][:, :2])
    with pytest.raises(ValueError, match="'target_twist' has shape"):
        plot_capture_momentum(bad)


# ------------------------------------------------------------------ the figures

CAPTURE_FIGURES = ("capture_rates", "capture_momentum", "capture_interface", "capture_approach")


def test_a_capture_run_draws_the_capture_figures_with_content(figs, cap):
    assert set(CAPTURE_FIGURES) <= set(figs)
    t_g = _grasp(cap)
    for name in CAPTURE_FIGURES:
        fig = figs[name]
        img = np.asarray(fig.canvas.buffer_rgba())[..., :3] / 255.0
        ink = (img < 0.9).any(axis=2).mean()
        assert 0.02 < ink < 0.9 and img.std() > 0.05, (name, ink)
        for ax in fig.axes:  # the grasp on every panel, at its time
            lines = [ln for ln in ax.get_lines() if ln.get_gid() == "event"]
            assert [list(ln.get_xdata()) for ln in lines] == [[t_g, t_g]], name
        title = fig.get_suptitle().replace("\xa0", " ")
        assert "before the grasp: arm computed_torque" in title, name
        if name != "capture_approach":
            assert "after the grasp: arm impedance: hold_omega_n 1 rad/s" in title, name
            assert "interface_force_limit 50 N" in title, name
    tracking = figs["tracking"].get_suptitle().replace("\xa0", " ")
    assert "after the grasp: arm impedance: hold_omega_n 1 rad/s" in tracking


def test_rates_show_the_residual_and_the_detumble_time(figs, cap):
    ax = figs["capture_rates"].axes[0]
    (res_line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "residual"]
    assert res_line.get_ydata()[0] == 1.0  # deg/s, from the scenario
    d = cap.manifest["metrics"]["detumble_time"]
    assert np.isfinite(d)
    (det,) = [ln for ln in ax.get_lines() if ln.get_gid() == "detumbled"]
    assert det.get_xdata()[0] == pytest.approx(_grasp(cap) + d, abs=1e-12)
    # the drawn base rate is the base's: finite differences of its recorded attitude
    (base,) = [ln for ln in ax.get_lines() if ln.get_label() == "|ω| base"]
    y = np.asarray(base.get_ydata(), float)
    q, t = cap["q"][:, :4], cap.t
    for k in (165, 190, 220):  # after the grasp's velocity jump, the base turning
        dq = (q[k + 1] - q[k - 1]) / (t[k + 1] - t[k - 1])
        w0, w = q[k][0], q[k][1:]  # omega_body = 2 Im(conj(q) q')
        om = 2.0 * (w0 * dq[1:] - dq[0] * w - np.cross(w, dq[1:]))
        assert np.degrees(np.linalg.norm(om)) > 0.05
        assert y[k] == pytest.approx(np.degrees(np.linalg.norm(om)), rel=1e-2)


def test_the_momentum_split_at_the_grasp_is_the_runs_stack_momentum(cap, figs):
    h_b, h_d = stack_momentum_split(cap)
    k = int(np.flatnonzero(cap.t >= _grasp(cap))[0])  # the post-impact row
    assert np.linalg.norm(h_b[k]) == pytest.approx(
        cap.manifest["metrics"]["stack_momentum"], rel=1e-9
    )
    # the fastest decrease the actuators allow starts there, at slope -tau_max
    (bound,) = [
        ln for ln in figs["capture_momentum"].axes[0].get_lines() if ln.get_gid() == "bound"
    ]
    x, y = np.asarray(bound.get_xdata()), np.asarray(bound.get_ydata())
    assert x[0] == cap.t[k] and y[0] == pytest.approx(np.linalg.norm(h_b[k]), rel=1e-12)
    tau = cap.manifest["metrics"]["max_available_torque"]
    assert np.allclose(np.diff(y) / np.diff(x), -tau, rtol=1e-9)
    # before the grasp the devices carry almost nothing and the bodies the stack's
    assert np.all(np.linalg.norm(h_d[:k], axis=1) < 0.1 * np.linalg.norm(h_b[:k], axis=1))


def test_the_interface_force_is_the_targets_mass_times_its_com_acceleration(cap, figs):
    ax = figs["capture_interface"].axes[0]
    (force,) = [ln for ln in ax.get_lines() if ln.get_label() == "|force|"]
    y = np.asarray(force.get_ydata(), float)
    t_g = _grasp(cap)
    before = cap.t < t_g
    assert np.all(np.isnan(y[before]))  # no contact before the grasp
    m = cap.manifest["scenario"]["target"]["mass"]
    c = np.r_[cap.manifest["scenario"]["target"]["com"], 1.0]
    p = np.array([(_T(x) @ c)[:3] for x in cap["target_pose"]])  # CoM, inertial
    dt = cap.t[1] - cap.t[0]
    k = np.flatnonzero(~before)[4:-2]  # past the grasp's jump, inside the record
    f = m * np.linalg.norm(p[k + 1] - 2.0 * p[k] + p[k - 1], axis=1) / dt**2
    peak = cap.manifest["metrics"]["interface_force_peak"]
    assert np.nanmax(y) == pytest.approx(peak, rel=1e-12)
    assert np.max(np.abs(y[k] - f)) < 2e-2 * peak
    # limits: the impedance hold's (the run's), none with the joint hold
    run = cap.manifest["scenario"]["capture"]
    assert run["hold"] == "impedance"
    for axis, key in zip(figs["capture_interface"].axes[:2], ("force", "torque"), strict=True):
        (lim,) = [ln for ln in axis.get_lines() if ln.get_gid() == "interface_limit"]
        assert lim.get_ydata()[0] == run[f"interface_{key}_limit"]
    capture = dict(run, interface_force_limit=5.0)
    fig = plot_capture_interface(_with_scenario(cap, capture=capture))
    (lim,) = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "interface_limit"]
    assert lim.get_ydata()[0] == 5.0
    fig = plot_capture_interface(_with_scenario(cap, capture=dict(run, hold="joint")))
    assert not [ln for a in fig.axes for ln in a.get_lines() if ln.get_gid() == "interface_limit"]


def test_the_approach_starts_at_the_standoff_and_ends_at_the_grasp_distance(cap, figs):
    fig = figs["capture_approach"]
    (d,) = [ln for ln in fig.axes[0].get_lines() if ln.get_label().startswith("distance")]
    y = np.asarray(d.get_ydata(), float)
    # the arm starts on the reference (inverse kinematics): the configured stand-off
    assert y[0] == pytest.approx(1e3 * np.linalg.norm([0.0, 0.0, -0.2]), rel=1e-3)
    k = int(np.flatnonzero(cap.t <= _grasp(cap))[-1])
    assert y[k] == pytest.approx(1e3 * cap.manifest["metrics"]["grasp_distance"], rel=1e-9)
    assert np.all(np.isnan(y[k + 1 :]))  # only the approach
    for ax, level in zip(fig.axes, (20.0, np.degrees(0.02)), strict=True):
        (tol,) = [ln for ln in ax.get_lines() if ln.get_gid() == "tolerance"]
        assert tol.get_ydata()[0] == pytest.approx(level, rel=1e-12)


# ------------------------------------------------------------------ another servicer


def test_another_servicer_and_target_are_drawn(ur5):
    figs = figures(ur5)
    assert set(CAPTURE_FIGURES) <= set(figs)
    h_b, _ = stack_momentum_split(ur5)
    k = int(np.flatnonzero(ur5.t >= _grasp(ur5))[0])
    assert np.linalg.norm(h_b[k]) == pytest.approx(
        ur5.manifest["metrics"]["stack_momentum"], rel=1e-9
    )
    fig = A.animation_figure(ur5, frames=4)
    j = len(fig["frames"]) - 1
    B = _box_in_body(ur5, fig, j)
    assert np.allclose(B.mean(axis=0), [0.02, 0.0, -0.01], atol=F32)


# ------------------------------------------------------------------ a real browser


def _hue_pixels(img, color):
    """Pixels of ``color``'s hue (within 8/255), saturated enough."""
    from PIL import Image  # only for the browser test

    hsv = np.asarray(Image.fromarray(img).convert("HSV")).astype(int)
    h0 = colorsys.rgb_to_hsv(*(int(color[i : i + 2], 16) / 255 for i in (1, 3, 5)))[0]
    return (np.abs(hsv[..., 0] - 255 * h0) <= 8) & (hsv[..., 1] > 60)


def test_a_browser_shows_the_target_turn_green_at_the_grasp(cap, tmp_path):
    exe = _chromium()  # skipped without chromium unless DQSPACE_REQUIRE_BROWSER=1
    page = A.animate(cap, tmp_path / "c.html", frames=3)  # t = 0, 1.25, 2.5 s
    shots = [
        _screenshot(exe, page, frame, tmp_path / f"f{frame}.png", tmp_path) for frame in (0, 2)
    ]
    before, after = shots
    assert len(np.unique(before.reshape(-1, 3), axis=0)) > 500  # WebGL drew a shaded scene
    # the box: thousands of pixels of the target's blue before, of green after
    assert _hue_pixels(before, TARGET_COLOR).sum() > 3000
    assert _hue_pixels(after, GRASPED_COLOR).sum() > 3000
    assert _hue_pixels(after, GRASPED_COLOR).sum() > 5 * _hue_pixels(before, GRASPED_COLOR).sum()


def test_a_run_that_stopped_before_the_grasp_is_drawn_and_says_so(cap):
    n = int(np.flatnonzero(cap.t < _grasp(cap))[-1])  # rows before the grasp
    data = {k: v[:n] for k, v in cap.data.items()}
    manifest = dict(cap.manifest, events=[], status="failed", error="diverged", metrics={})
    res = Results(data, cap.info, manifest)
    figs = figures(res)
    for name in CAPTURE_FIGURES:
        FigureCanvasAgg(figs[name]).draw()
    texts = [t.get_text() for ax in figs["capture_interface"].axes for t in ax.texts]
    assert texts == ["no sample after the grasp (t = 1.5 s)"] * 2  # capture.grasp_time
    fig = A.animation_figure(res, frames=4)
    for j in range(4):
        _, box = _in_frame(fig, j, BOX)
        _, marker = _in_frame(fig, j, "grapple fixture")
        assert box["color"] == TARGET_COLOR and marker["text"] == [""]
