"""The figures of a run: they render, say their units, use no offset notation, keep their
legends off the data, show status and faults; and the dynamics check's independent
reference agrees with the run."""

import re

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.image import imread

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios import plots as P
from dqspace.scenarios.dynamics_check import reference_ee_positions
from dqspace.scenarios.results import Results

CLOSED = ["scenario.duration=1.5", "trajectory.start_time=0.5"]
OPEN = ["scenario.duration=3", "integrator.method='rk4'"]
CLOSED_FIGURES = {
    "disturbance_rejection": P.plot_disturbance_rejection,
    "tracking": P.plot_tracking,
    "thrusters": P.plot_thrusters,
    "vscmg": P.plot_vscmg,
    "singularity": P.plot_singularity,
}
UNIT = re.compile(r"\[[^\]]+\]")


@pytest.fixture(scope="module")
def closed():
    return run(load_scenario("station-keeping", CLOSED), out=None, progress=False)


@pytest.fixture(scope="module")
def open_loop():
    return run(load_scenario("dynamics-check", [*OPEN, "integrator.dt=0.001"]), progress=False)


def _drawn(fig):
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig


@pytest.fixture(scope="module")
def figures(closed, open_loop):
    figs = {name: _drawn(fn(closed)) for name, fn in CLOSED_FIGURES.items()}
    figs["dynamics_check"] = _drawn(P.plot_dynamics_check(open_loop))
    return figs


def _with_manifest(res, **changes):
    return Results(res.data, res.info, dict(res.manifest, **changes))


def _labelled(ticks):
    return [t for t in ticks if t.get_visible() and t.get_text()]


# ------------------------------------------------------------------ rendering


def test_plot_all_writes_the_figures_of_each_kind_with_content(closed, open_loop, tmp_path):
    files = P.plot_all(closed, tmp_path / "c", formats=("png",))
    files += P.plot_all(open_loop, tmp_path / "o", formats=("png",))
    assert {p.parent.name + "/" + p.stem for p in files} == {
        *(f"c/{n}" for n in CLOSED_FIGURES),
        "o/dynamics_check",
    }
    for p in files:
        img = imread(p)[..., :3]
        assert img.shape[0] > 400 and img.shape[1] > 800
        ink = (img < 0.9).any(axis=2).mean()  # share of pixels that are not (near) white
        assert 0.02 < ink < 0.9, (p.name, ink)
        assert img.std() > 0.05


def test_every_axis_names_its_unit_and_no_axis_uses_offset_notation(figures):
    for name, fig in figures.items():
        for ax in fig.axes:
            for axis, label, ticks in (
                (ax.xaxis, ax.get_xlabel(), ax.get_xticklabels()),
                (ax.yaxis, ax.get_ylabel(), ax.get_yticklabels()),
            ):
                if _labelled(ticks):
                    assert UNIT.search(label), (name, label)
                assert axis.get_major_formatter().get_offset() == "", (name, label)
        assert fig.axes[-1 if name != "thrusters" else 1].get_xlabel() == "time [s]"


def test_legends_sit_outside_the_axes_and_every_text_inside_the_figure(figures):
    for name, fig in figures.items():
        r = fig.canvas.get_renderer()
        page = fig.bbox
        for ax in fig.axes:
            texts = [ax.xaxis.label, ax.yaxis.label, ax.title, ax._left_title]
            leg = ax.get_legend()
            if leg is not None:
                lb, ab = leg.get_window_extent(r), ax.get_window_extent(r)
                assert lb.x0 >= ab.x1, name  # wholly to the right of the plotting area
                texts.append(leg)
            for t in texts:
                if t.get_visible() and (t is leg or t.get_text()):
                    b = t.get_window_extent(r)
                    assert page.x0 - 1 <= b.x0 and b.x1 <= page.x1 + 1, (name, t)
                    assert page.y0 - 1 <= b.y0 and b.y1 <= page.y1 + 1, (name, t)


def test_components_differ_in_line_style_not_only_colour(figures):
    for name, fig in figures.items():
        for ax in fig.axes:
            lines = [
                ln
                for ln in ax.get_lines()
                if not ln.get_label().startswith("_") and ln.get_linestyle() != "None"
            ]
            styles = [(ln.get_linestyle(), ln.get_linewidth()) for ln in lines]
            if len(lines) <= 4:
                assert len(set(styles)) == len(styles), (name, ax.get_ylabel(), styles)


# ------------------------------------------------------------ display units


def _line(ax, label):
    (ln,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return ln


def test_values_are_plotted_in_display_units(closed, figures):
    vs = figures["vscmg"].axes
    assert "[deg/s]" in vs[0].get_ylabel() and "[rpm]" in vs[1].get_ylabel()
    deg_per_rad, rpm_per_rad_s = 180.0 / np.pi, 60.0 / (2.0 * np.pi)
    np.testing.assert_allclose(
        _line(vs[0], "gimbal 1").get_ydata(), deg_per_rad * closed["gimbal_rate"][:, 0]
    )
    np.testing.assert_allclose(
        _line(vs[1], "wheel 2").get_ydata(), rpm_per_rad_s * closed["wheel_speed"][:, 1]
    )
    # 3000 rpm nominal: the axis shows it as such, not as an offset from 3e3
    ticks = [float(t.get_text().replace("−", "-")) for t in _labelled(vs[1].get_yticklabels())]
    assert min(ticks) > 2900 and max(ticks) < 3100
    dr = figures["disturbance_rejection"].axes
    np.testing.assert_allclose(_line(dr[0], "y").get_ydata(), 1e3 * closed["base_pos_err"][:, 1])


def test_tracking_shows_the_reference_and_no_floor_before_the_task_starts(closed, figures):
    ax = figures["tracking"].axes
    ref = _line(ax[0], "reference")
    assert ref.get_marker() == "o" and ref.get_linestyle() == "None"  # visible over the line
    np.testing.assert_allclose(ref.get_ydata(), 1e3 * closed["ee_ref"][:, 0])
    t = closed.t
    y = np.asarray(_line(ax[4], "|error|").get_ydata(), float)
    assert ax[4].get_yscale() == "log"
    assert np.isnan(y[t < 0.5]).all()  # the task starts at 0.5 s: nothing drawn before
    drawn = y[np.isfinite(y)]
    assert drawn.size > 0.5 * np.sum(t >= 0.5) and (drawn > 0).all()
    expected = 1e3 * np.linalg.norm(closed["ee_err"], axis=1)
    np.testing.assert_allclose(drawn, expected[np.isfinite(y)])


def _numbers(text):
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?", text)]


def test_requirements_are_drawn_or_reported_with_the_metric_value(closed):
    fig = P.plot_disturbance_rejection(closed)
    pos_title = fig.axes[0].get_title(loc="left")
    value = 1e3 * np.abs(closed["base_pos_err"]).max()  # [mm]
    assert "requirement 1 mm MET" in pos_title
    assert _numbers(pos_title)[0] == pytest.approx(value, rel=1e-3)
    # a tighter requirement from the scenario: drawn as lines at +-limit, and not met
    sc = dict(closed.manifest["scenario"], requirements={"base_pos_err_max": value / 2e3})
    fig = P.plot_disturbance_rejection(_with_manifest(closed, scenario=sc))
    ax = fig.axes[0]
    assert "NOT MET" in ax.get_title(loc="left")
    levels = sorted(
        ln.get_ydata()[0]
        for ln in ax.get_lines()
        if ln.get_linestyle() != "-" and ln.get_xdata()[0] == 0 and ln.get_xdata()[1] == 1
    )
    assert levels == pytest.approx([-value / 2, value / 2], rel=1e-9)


# ------------------------------------------------------------ status and faults


def test_titles_name_the_scenario_and_a_status_other_than_complete(closed):
    t_end = closed.t[-1]
    assert t_end == pytest.approx(1.5)
    cases = {
        "complete": (dict(status="complete"), None),
        "failed": (dict(status="failed", message="IntegrationError: v[3]"), "FAILED at t = 1.5 s"),
        "interrupted": (dict(status="interrupted"), "interrupted at t = 1.5 s"),
        "degraded": (dict(status="complete", degraded=["allocator fell back"]), "degraded"),
    }
    for fn in CLOSED_FIGURES.values():
        for changes, expected in cases.values():
            title = fn(_with_manifest(closed, **changes)).get_suptitle()
            assert title.startswith("station-keeping: ")
            if expected is None:
                assert "\n" not in title
            else:
                assert expected in title.splitlines()[1]
    failed = P.plot_vscmg(_with_manifest(closed, status="failed", message="IntegrationError: v[3]"))
    assert "IntegrationError: v[3]" in failed.get_suptitle()


def test_fault_events_are_vertical_lines_on_every_panel_and_named_once(closed):
    event = {"t": 0.7, "event": "thruster fault", "time": 0.7, "thruster": 3, "kind": "failed_off"}
    res = _with_manifest(closed, events=[event])
    for name, fn in CLOSED_FIGURES.items():
        fig = fn(res)
        axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
        for ax in axes:
            marks = [ln for ln in ax.get_lines() if ln.get_gid() == "event"]
            assert len(marks) == 1 and marks[0].get_xdata()[0] == pytest.approx(0.7), name
        legend_texts = [t.get_text() for t in axes[0].get_legend().get_texts()]
        assert any("thruster fault: thruster 3 failed_off" in t for t in legend_texts), name
    thr = P.plot_thrusters(res)
    rows = [c for c in thr.axes[0].collections if c.get_gid() == "fault_row"]
    (seg,) = rows[0].get_segments()
    assert seg[0].tolist() == pytest.approx([0.7, 3.0]) and seg[1][0] == pytest.approx(1.5)


def test_every_thruster_is_labelled_and_the_bars_are_explained(closed, figures):
    S = closed["thrust_cmd"].shape[1]
    for ax in figures["thrusters"].axes[:2]:
        assert [t.get_text() for t in ax.get_yticklabels()] == [str(i) for i in range(S)]
    words = figures["thrusters"].axes[1].get_title(loc="left")
    period_ms = 1e3 * np.median(np.diff(closed.t))
    peak_ms = 1e3 * closed["thrust_on"].max()
    assert "bar height ∝ on-time, full height = " in words
    full, period = re.search(r"= (\S+) ms on in a (\S+) ms period", words).groups()
    assert float(full) == pytest.approx(peak_ms, rel=1e-3)
    assert float(period) == pytest.approx(period_ms, rel=1e-3)


# ------------------------------------------------------------ dynamics check


def _distance(res, ref):
    return np.linalg.norm(res["ee_pos_I"] - ref, axis=1)


def test_reference_agrees_with_rk4_and_rk4_converges_to_it_at_fourth_order(open_loop):
    """Measured over 3 s: 3.7e-10 m at dt = 1 ms, 6.0e-9 m at 2 ms (ratio 16.2 = 2^4).

    The reference (matrix-form dynamics, DOP853 at 1e-13 on the embedded state) is
    itself within ~1e-11 m here (it moves by 8.6e-12 m from rtol 1e-12 to 1e-13), so
    the distance is RK4's own error: fourth order, shrinking 16-fold per halved step.
    """
    cfg = open_loop.manifest["scenario"]
    ref = reference_ee_positions(cfg, open_loop.t)
    fine = _distance(open_loop, ref)
    assert fine.max() < 1.5e-9  # [m]; the end-effector travels 0.15 m
    assert np.abs(open_loop["ee_pos_I"] - open_loop["ee_pos_I"][0]).max() > 0.1
    coarse_run = run(
        load_scenario("dynamics-check", [*OPEN, "integrator.dt=0.002"]), progress=False
    )
    coarse = _distance(coarse_run, ref)
    assert 12.0 < coarse.max() / fine.max() < 21.0


def test_reference_starts_at_rest_at_the_runs_first_point(open_loop):
    cfg = open_loop.manifest["scenario"]
    ref = reference_ee_positions(cfg, [0.0, 0.0])
    np.testing.assert_array_equal(ref[0], open_loop["ee_pos_I"][0])
    np.testing.assert_array_equal(ref[1], ref[0])


def test_reference_rejects_bad_input(open_loop):
    cfg = open_loop.manifest["scenario"]
    with pytest.raises(ValueError, match="open_loop"):
        reference_ee_positions({"scenario": cfg["scenario"]}, [0.0, 1.0])
    with pytest.raises(ValueError, match="non-decreasing"):
        reference_ee_positions(cfg, [0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="non-decreasing"):
        reference_ee_positions(cfg, [-1.0, 0.0])


def test_dynamics_check_figure_uses_a_recorded_reference_when_present(open_loop, figures):
    # recomputed (no ee_ref_I): the error panel is the distance measured above, in mm
    err = np.asarray(_line(figures["dynamics_check"].axes[1], "|r_run − r_reference|").get_ydata())
    assert np.nanmax(err) < 1.5e-6 and np.isnan(err[0])  # exactly 0 at t = 0: not drawn
    data = dict(open_loop.data, ee_ref_I=open_loop["ee_pos_I"] + [0.0, 2e-6, 0.0])
    fig = P.plot_dynamics_check(Results(data, open_loop.info, open_loop.manifest))
    err = np.asarray(_line(fig.axes[1], "|r_run − r_reference|").get_ydata())
    np.testing.assert_allclose(err, 2e-3, rtol=1e-6)  # 2 µm = 0.002 mm, everywhere
