"""The figures of a run, as a reviewer reads them: units on every axis, no offset
notation, legends clear of the data, requirements drawn at their values with the
metrics stated, status and faults shown, thrusters named, the wrench balance adding up;
and the dynamics check's independent reference agrees with the run."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.image import imread

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.dynamics_check import reference_ee_positions
from dqspace.scenarios.figures import plots as P
from dqspace.scenarios.figures.common import STATUS_COLOR
from dqspace.scenarios.figures.units import format_number
from dqspace.scenarios.store.results import Results

CLOSED = ["scenario.duration=1.5", "trajectory.start_time=0.5"]
OPEN = ["scenario.duration=3", "integrator.method='rk4'"]
CLOSED_FIGURES = {
    "disturbance_rejection": P.plot_disturbance_rejection,
    "wrench_balance": P.plot_wrench_balance,
    "tracking": P.plot_tracking,
    "thrusters": P.plot_thrusters,
    "vscmg": P.plot_vscmg,
    "singularity": P.plot_singularity,
}
UNIT = re.compile(r"\[[^\]]+\]")
DEG_PER_RAD, RPM_PER_RAD_S = 180.0 / np.pi, 60.0 / (2.0 * np.pi)


@pytest.fixture(scope="module")
def closed():
    return run(load_scenario("station-keeping", CLOSED), out=None, progress=False)


@pytest.fixture(scope="module")
def wheels():
    """ur5-waypoints (reaction wheels, named thrusters), long enough to pass the transient."""
    return run(load_scenario("ur5-waypoints", ["scenario.duration=2.5"]), progress=False)


@pytest.fixture(scope="module")
def open_loop():
    return run(load_scenario("dynamics-check", [*OPEN, "integrator.dt=0.001"]), progress=False)


def _drawn(fig):
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig


@pytest.fixture(scope="module")
def figures(closed, wheels, open_loop):
    figs = {name: _drawn(fn(closed)) for name, fn in CLOSED_FIGURES.items()}
    figs["wheels"] = _drawn(P.plot_wheels(wheels))
    figs["wrench_balance_wheels"] = _drawn(P.plot_wrench_balance(wheels))
    figs["dynamics_check"] = _drawn(P.plot_dynamics_check(open_loop))
    return figs


def _with_manifest(res, **changes):
    return Results(res.data, res.info, dict(res.manifest, **changes))


def _with_scenario(res, **sections):
    return _with_manifest(res, scenario=dict(res.manifest["scenario"], **sections))


def _labelled(ticks):
    return [t for t in ticks if t.get_visible() and t.get_text()]


def _line(ax, label):
    (ln,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return ln


def _gid(ax, gid):
    return [ln for ln in ax.get_lines() if ln.get_gid() == gid]


def _level(line):
    """The y of a horizontal line (constant ydata over the axes' width)."""
    y = np.asarray(line.get_ydata(), float)
    assert np.all(y == y[0]) and list(line.get_xdata()) == [0, 1]
    return float(y[0])


def _plot_axes(fig):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


# ------------------------------------------------------------------ rendering


def test_plot_all_writes_the_figures_of_each_kind_with_content(closed, wheels, open_loop, tmp_path):
    files = P.plot_all(closed, tmp_path / "c", formats=("png",))
    files += P.plot_all(wheels, tmp_path / "w", formats=("png",))
    files += P.plot_all(open_loop, tmp_path / "o", formats=("png",))
    assert {p.parent.name + "/" + p.stem for p in files} == {
        *(f"c/{n}" for n in CLOSED_FIGURES),
        *(f"w/{n}" for n in ("disturbance_rejection", "wrench_balance", "tracking")),
        "w/thrusters",
        "w/wheels",
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
        bottom = [ax for ax in _plot_axes(fig) if ax.get_subplotspec().is_last_row()]
        assert bottom and all(ax.get_xlabel() == "time [s]" for ax in bottom), name


def test_the_wheel_speed_axis_reads_3000_rpm_not_an_offset(figures):
    ax = figures["vscmg"].axes[2]
    assert "[rpm]" in ax.get_ylabel()
    ticks = [float(t.get_text().replace("−", "-")) for t in _labelled(ax.get_yticklabels())]
    assert min(ticks) > 2900 and max(ticks) < 3100


def _data_extent(ax, r):
    """Display-coordinate bounding boxes of the drawn lines' last 10 % of points."""
    boxes = []
    for ln in ax.get_lines():
        x, y = np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
        if ln.get_gid() or x.size < 10:
            continue
        tail = slice(int(0.9 * x.size), None)
        pts = ax.transData.transform(np.c_[x[tail], y[tail]])
        pts = pts[np.isfinite(pts).all(axis=1)]
        if pts.size:
            boxes.append(pts)
    return np.vstack(boxes) if boxes else np.zeros((0, 2))


def test_legends_stay_clear_of_the_data_and_every_text_inside_the_figure(figures):
    for name, fig in figures.items():
        r = fig.canvas.get_renderer()
        page = fig.bbox
        for ax in fig.axes:
            texts = [ax.xaxis.label, ax.yaxis.label, ax.title, ax._left_title]
            leg = ax.get_legend()
            if leg is not None:
                lb = leg.get_window_extent(r)
                tail = _data_extent(ax, r)  # the end of the run, where legends used to sit
                inside = (
                    (tail[:, 0] >= lb.x0)
                    & (tail[:, 0] <= lb.x1)
                    & (tail[:, 1] >= lb.y0)
                    & (tail[:, 1] <= lb.y1)
                )
                assert not inside.any(), name
                assert lb.x0 >= ax.get_window_extent(r).x1, name  # right of the plotting area
                texts.append(leg)
            for t in texts:
                if t.get_visible() and (t is leg or t.get_text()):
                    b = t.get_window_extent(r)
                    assert page.x0 - 1 <= b.x0 and b.x1 <= page.x1 + 1, (name, t)
                    assert page.y0 - 1 <= b.y0 and b.y1 <= page.y1 + 1, (name, t)


def test_lines_of_a_panel_differ_in_style_not_only_colour(figures):
    for name, fig in figures.items():
        for ax in fig.axes:
            lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
            styles = [(ln.get_linestyle(), ln.get_linewidth(), ln.get_marker()) for ln in lines]
            assert len(set(styles)) == len(styles), (name, ax.get_ylabel(), styles)


# ------------------------------------------------------------ display units


def test_values_are_plotted_in_display_units(closed, figures):
    vs = figures["vscmg"].axes
    assert "[deg/s]" in vs[0].get_ylabel() and "[rpm]" in vs[2].get_ylabel()
    np.testing.assert_allclose(
        _line(vs[0], "gimbal 1").get_ydata(), DEG_PER_RAD * closed["gimbal_rate"][:, 0]
    )
    np.testing.assert_allclose(
        _line(vs[2], "wheel 2").get_ydata(), RPM_PER_RAD_S * closed["wheel_speed"][:, 1]
    )
    dr = figures["disturbance_rejection"].axes
    largest = 1e3 * np.abs(closed["base_pos_err"]).max(axis=1)
    y = np.asarray(_line(dr[0], "largest axis |error|").get_ydata(), float)
    np.testing.assert_allclose(y[largest > 0], largest[largest > 0])
    assert np.isnan(y[largest == 0]).all()  # zero is not drawn on a log axis
    wb = figures["wrench_balance"].axes
    np.testing.assert_allclose(
        _line(wb[11], "attitude error").get_ydata(), DEG_PER_RAD * closed["base_att_err"][:, 2]
    )


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
    # the view starts at most 3 decades below the peak (no floor at 1e-6 mm)
    assert ax[4].get_ylim()[0] > 1e-3 * drawn.max() / 3.0


# ------------------------------------------------------------ requirements and metrics


def _numbers(text):
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?", text)]


def test_requirements_are_lines_at_their_values_with_the_metric_stated(closed, figures):
    ax = figures["disturbance_rejection"].axes
    metrics = closed.manifest["metrics"]
    for a, metric, factor, limit in (
        (ax[0], "base_pos_err_max", 1e3, 1.0),  # m -> mm; 1 mm
        (ax[1], "base_att_err_max", 1.0, 0.05),  # deg; 0.05 deg
    ):
        assert a.get_yscale() == "log"
        (req,) = _gid(a, "requirement")
        assert _level(req) == pytest.approx(limit, rel=1e-12)
        lo, hi = a.get_ylim()
        assert lo < limit < hi  # in view whatever the margin
        value = factor * metrics[metric]
        (mark,) = _gid(a, "metric")
        assert mark.get_ydata()[0] == pytest.approx(value, rel=1e-12)
        title = a.get_title(loc="left")
        assert f"max {format_number(value)} " in title and f"({metric})" in title
        assert "MET (margin" in title
        assert (
            mark.get_label() == f"{metric} = {format_number(value)} {'mm' if factor > 1 else 'deg'}"
        )
    # the tracking figure: ee_max <= 1 mm, on the |error| panel
    (req,) = _gid(figures["tracking"].axes[4], "requirement")
    assert _level(req) == pytest.approx(1.0)


def test_the_ee_metric_window_is_shaded_and_a_run_inside_it_says_so(closed, wheels, figures):
    ax = figures["tracking"].axes[4]  # the 1.5 s run ends inside the 2 s transient
    title = ax.get_title(loc="left")
    assert "ended before the window of ee_max: not measured" in title
    assert title.endswith("requirement ≤ 1 mm: UNDECIDED")  # not MET, not 0
    assert not _gid(ax, "metric")
    (span,) = [p for p in ax.patches if p.get_gid() == "transient"]
    assert span.get_x() == pytest.approx(0.0) and span.get_width() == pytest.approx(1.5)
    fig = _drawn(P.plot_tracking(wheels))  # 2.5 s: the metric exists, marked after 2 s
    (mark,) = _gid(fig.axes[4], "metric")
    assert mark.get_xdata()[0] >= 2.0
    assert mark.get_ydata()[0] == pytest.approx(1e3 * wheels.manifest["metrics"]["ee_max"])


def test_a_scenario_requirements_table_moves_the_lines_and_the_verdict(closed):
    value = closed.manifest["metrics"]["base_pos_err_max"]
    res = _with_scenario(closed, requirements={"base_pos_err_max": value / 2.0})
    fig = P.plot_disturbance_rejection(res)
    (req,) = _gid(fig.axes[0], "requirement")
    assert _level(req) == pytest.approx(1e3 * value / 2.0, rel=1e-12)
    assert "NOT MET (×2 over)" in fig.axes[0].get_title(loc="left")
    assert P.requirement_limits(res)["base_att_err_max"] == 0.05  # the others: defaults
    with pytest.raises(ValueError, match="requirements.base_pos_err: no such metric"):
        P.plot_disturbance_rejection(_with_scenario(closed, requirements={"base_pos_err": 1}))


def test_device_limits_are_drawn_with_the_metric(closed, wheels, figures):
    ax = figures["vscmg"].axes[1]
    (lim,) = _gid(ax, "limit")
    assert _level(lim) == pytest.approx(DEG_PER_RAD * 1.0)  # vscmg.gimbal_rate_limit 1 rad/s
    (mark,) = _gid(ax, "metric")
    assert mark.get_ydata()[0] == pytest.approx(
        DEG_PER_RAD * closed.manifest["metrics"]["peak_gimbal_rate"]
    )
    ax = figures["wheels"].axes[1]
    levels = sorted(_level(ln) for ln in _gid(ax, "limit"))
    assert levels == pytest.approx([6000.0])  # desaturation off: no dumping thresholds
    (mark,) = _gid(ax, "metric")
    assert mark.get_ydata()[0] == pytest.approx(
        RPM_PER_RAD_S * wheels.manifest["metrics"]["peak_rw_speed"]
    )
    dumping = _with_scenario(
        wheels, wheels=dict(wheels.manifest["scenario"]["wheels"], desaturation_gain=0.1)
    )
    levels = sorted(_level(ln) for ln in _gid(P.plot_wheels(dumping).axes[1], "limit"))
    assert levels == pytest.approx([0.5 * 6000.0, 0.8 * 6000.0, 6000.0])


def test_singularity_measure_is_normalised_with_its_threshold(closed, figures):
    ax = figures["singularity"].axes[0]
    # h_ref = I_ws Omega_0: the paper's wheel (Ixx 0.1233 kg m^2) at 3000 rpm
    h_ref = 0.1233 * 3000.0 * np.pi / 30.0
    np.testing.assert_allclose(
        _line(ax, "δ_C = det(C Cᵀ) / h_ref⁶").get_ydata(), closed["det_CCt"] / h_ref**6, rtol=1e-9
    )
    (lim,) = _gid(ax, "limit")
    assert _level(lim) == pytest.approx(math.log(100.0) / 10.0)  # wheel weight mu_w = 10
    lo, hi = ax.get_ylim()
    assert lo <= 0.0 and hi > np.nanmax(closed["det_CCt"]) / h_ref**6  # 0 = singular in view
    assert f"{format_number(closed.manifest['metrics']['min_det_GGt'])} (min_det_GGt)" in (
        ax.get_title(loc="left")
    )


def _title(fig):
    """A figure's title as read (a value and its unit are joined by a no-break space)."""
    return fig.get_suptitle().replace("\u00a0", " ")


def test_titles_name_the_gains_that_matter(closed, figures):
    title = _title(figures["disturbance_rejection"])
    assert "kp_trans 600 N/m" in title and "kd_rot 60 N m s/rad" in title
    assert "omega_n 20 rad/s" in _title(figures["tracking"])
    assert "max_thrust 10 N" in _title(figures["thrusters"])
    assert "gimbal_rate_limit 1 rad/s" in _title(figures["vscmg"])
    stiff = _with_scenario(
        closed,
        base_controller=dict(
            closed.manifest["scenario"]["base_controller"], kp_trans=[2000.0, 600.0, 600.0]
        ),
    )
    assert "kp_trans [2000, 600, 600] N/m" in _title(P.plot_disturbance_rejection(stiff))


# ------------------------------------------------------------ status and faults


def test_titles_say_a_status_other_than_complete_in_red(closed):
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
            fig = fn(_with_manifest(closed, **changes))
            lines = fig.get_suptitle().splitlines()
            assert lines[0].startswith("station-keeping: ")
            red = to_rgb(fig._suptitle.get_color()) == to_rgb(STATUS_COLOR)
            if expected is None:
                assert not red and not any("FAILED" in ln or "degraded" in ln for ln in lines)
            else:
                assert expected in lines[1] and red
    failed = P.plot_vscmg(_with_manifest(closed, status="failed", message="IntegrationError: v[3]"))
    assert "IntegrationError: v[3]" in failed.get_suptitle()
    for ax in _plot_axes(failed):  # the last sample marked on every panel
        (end,) = _gid(ax, "run_end")
        assert end.get_xdata()[0] == pytest.approx(t_end)


def test_fault_events_are_vertical_lines_on_every_panel_and_named_once(closed):
    event = {"t": 0.7, "event": "thruster fault", "time": 0.7, "thruster": 3, "kind": "failed_off"}
    res = _with_manifest(closed, events=[event])
    for name, fn in CLOSED_FIGURES.items():
        fig = fn(res)
        axes = _plot_axes(fig)
        for ax in axes:
            marks = _gid(ax, "event")
            assert len(marks) == 1 and marks[0].get_xdata()[0] == pytest.approx(0.7), name
        named = [
            t.get_text()
            for ax in axes
            if ax.get_legend()
            for t in ax.get_legend().get_texts()
            if "thruster fault: thruster 3 failed_off" in t.get_text()
        ]
        assert len(named) == 1, name
    thr = P.plot_thrusters(res)
    rows = [c for c in thr.axes[0].collections if c.get_gid() == "fault_row"]
    (seg,) = rows[0].get_segments()
    assert seg[0].tolist() == pytest.approx([0.7, 3.0]) and seg[1][0] == pytest.approx(1.5)


def test_degradation_episodes_are_spans_named_once(closed):
    episodes = [
        {"t": 0.2, "event": "steering saturated", "until": 0.3, "ticks": 11},
        {"t": 0.9, "event": "steering saturated", "until": 0.95, "ticks": 6},
    ]
    fig = _drawn(P.plot_disturbance_rejection(_with_manifest(closed, events=episodes)))
    spans = [p for p in fig.axes[0].patches if p.get_gid() == "episode"]
    assert [(round(p.get_x(), 6), round(p.get_x() + p.get_width(), 6)) for p in spans] == [
        (0.2, 0.31),
        (0.9, 0.96),  # until + one control period (the last tick's period)
    ]
    texts = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert texts.count("steering saturated (2 episodes)") == 1
    assert not any("steering" in t.get_text() for t in fig.axes[0].get_legend().get_texts())


def test_every_thruster_is_labelled_by_its_name_and_the_bars_are_explained(closed, wheels, figures):
    names = [t["name"] for t in wheels.manifest["system"]["thrusters"]]
    fig = _drawn(P.plot_thrusters(wheels))
    for ax in fig.axes[:2]:
        assert [t.get_text() for t in ax.get_yticklabels()] == [
            f"{i} {n}" for i, n in enumerate(names)
        ]
    assert names[:2] == ["+x", "-x"]
    S = closed["thrust_cmd"].shape[1]
    assert len(_labelled(figures["thrusters"].axes[0].get_yticklabels())) == S
    words = figures["thrusters"].axes[1].get_title(loc="left")
    period_ms = 1e3 * np.median(np.diff(closed.t))
    peak_ms = 1e3 * closed["thrust_on"].max()
    assert "bar height ∝ on-time, full height = " in words
    full, period = re.search(r"= (\S+) ms on in a (\S+) ms period", words).groups()
    assert float(full) == pytest.approx(peak_ms, rel=1e-3)
    assert float(period) == pytest.approx(period_ms, rel=1e-3)


# ------------------------------------------------------------ wrench balance


def _mean(x, n):
    """Centred mean over n samples, fewer at the ends (an independent loop)."""
    h = n // 2
    return np.array([x[max(0, i - h) : i + h + 1].mean() for i in range(len(x))])


def test_wrench_balance_adds_the_actuators_to_the_reaction(closed, wheels, figures):
    for res, fig, device in (
        (closed, figures["wrench_balance"], "VSCMGs (asked − steering error)"),
        (wheels, figures["wrench_balance_wheels"], "wheels (asked − shortfall)"),
    ):
        ax = fig.axes  # 4 rows x 3 columns, row-major
        n = int(round(0.2 / np.median(np.diff(res.t)))) | 1
        thr = res["wrench_thr_true"]
        tau = res["vscmg_torque_cmd"] - (
            res["vscmg_torque_err"] if device.startswith("VSCMG") else res["rw_torque_err"]
        )
        applied = res["arm_reaction_applied"]
        for j in range(3):
            force, torque = ax[j], ax[3 + j]
            a_label, p_label = (
                ("arm reaction (applied)", "arm reaction (planned)") if j == 2 else ("_a", "_a")
            )
            drawn = [ln for ln in force.get_lines() if ln.get_label() in (a_label, p_label)]
            assert len(drawn) == 2
            a_line, p_line = drawn
            np.testing.assert_allclose(a_line.get_ydata(), applied[:, j])
            np.testing.assert_allclose(p_line.get_ydata(), res["arm_reaction"][:, j])
            assert p_line.get_linewidth() < a_line.get_linewidth()
            assert p_line.get_linestyle() == "--" and a_line.get_linestyle() == "-"
            # the residual is what the base felt: the applied reaction and the actuators
            resid_f = applied[:, j] + thr[:, j]
            resid_t = applied[:, 3 + j] + thr[:, 3 + j] + tau[:, j]
            means = [ln for ln in force.get_lines() if ln.get_marker() == "o"]
            np.testing.assert_allclose(means[0].get_ydata(), _mean(resid_f, n), atol=1e-12)
            means = [ln for ln in torque.get_lines() if ln.get_marker() == "o"]
            np.testing.assert_allclose(means[0].get_ydata(), _mean(resid_t, n), atol=1e-12)
        labels = [t.get_text() for t in ax[2].get_legend().get_texts()]
        assert device in labels and "thrusters (delivered)" in labels
        # rejection: the torque the base feels is a small part of the arm's reaction
        react = np.sqrt(np.mean(applied[:, 3:] ** 2))
        felt = np.sqrt(np.mean((applied[:, 3:] + thr[:, 3:] + tau) ** 2))
        assert felt < 0.2 * react


def test_disturbance_rejection_draws_the_applied_reaction_and_the_planned_thin(closed, figures):
    ax = figures["disturbance_rejection"].axes
    applied, planned = closed["arm_reaction_applied"], closed["arm_reaction"]
    for row, name, off in ((2, "f", 0), (3, "τ", 3)):
        lines = ax[row].get_lines()
        for i, c in enumerate("xyz"):
            a_line = _line(ax[row], f"{name}{c} (applied)")
            np.testing.assert_allclose(a_line.get_ydata(), applied[:, off + i])
            p_line = lines[3 + i]  # the planned ones follow, thin and dashed, over them
            np.testing.assert_allclose(p_line.get_ydata(), planned[:, off + i])
            assert p_line.get_linewidth() < a_line.get_linewidth()
            assert p_line.get_linestyle() == "--" and p_line.get_zorder() > a_line.get_zorder()
        texts = [t.get_text() for t in ax[row].get_legend().get_texts()]
        assert texts == [f"{name}{c} (applied)" for c in "xyz"] + ["(planned), each\ncomponent"]
    assert "arm reaction (applied)" in ax[2].get_title(loc="left")
    # a result recorded before the applied reaction: the planned one alone, as before
    old = Results(
        {k: v for k, v in closed.data.items() if k != "arm_reaction_applied"},
        closed.info,
        closed.manifest,
    )
    ax = P.plot_disturbance_rejection(old).axes
    texts = [t.get_text() for t in ax[2].get_legend().get_texts()]
    assert texts == [f"f{c} (planned)" for c in "xyz"]
    np.testing.assert_allclose(_line(ax[2], "fy (planned)").get_ydata(), planned[:, 1])


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
    # the run records its reference (integrated chunk by chunk with the run: it agrees with
    # a one-shot recomputation to the integration's tolerance); the error panel is the
    # distance to the recorded one, in mm
    assert "ee_ref_I" in open_loop
    ref = reference_ee_positions(open_loop.manifest["scenario"], open_loop.t)
    assert np.abs(open_loop["ee_ref_I"] - ref).max() < 1e-10
    err = np.asarray(_line(figures["dynamics_check"].axes[1], "|r_run − r_reference|").get_ydata())
    expected = 1e3 * _distance(open_loop, open_loop["ee_ref_I"])
    np.testing.assert_allclose(err[expected > 0], expected[expected > 0], rtol=1e-9)
    assert np.nanmax(err) < 1.5e-6 and np.isnan(err[0])  # exactly 0 at t = 0: not drawn
    assert "reference: matrix-form" in figures["dynamics_check"].axes[0].get_title(loc="left")
    data = dict(open_loop.data, ee_ref_I=open_loop["ee_pos_I"] + [0.0, 2e-6, 0.0])
    fig = P.plot_dynamics_check(Results(data, open_loop.info, open_loop.manifest))
    err = np.asarray(_line(fig.axes[1], "|r_run − r_reference|").get_ydata())
    np.testing.assert_allclose(err, 2e-3, rtol=1e-6)  # 2 µm = 0.002 mm, everywhere


def test_dynamics_check_without_a_recorded_reference_draws_the_run_alone(open_loop, monkeypatch):
    from dqspace.scenarios.build import dynamics_check

    def refuse(*args, **kwargs):
        raise AssertionError("the figure recomputed the reference")

    monkeypatch.setattr(dynamics_check, "reference_ee_positions", refuse)
    data = {k: v for k, v in open_loop.data.items() if k != "ee_ref_I"}
    info = {k: v for k, v in open_loop.info.items() if k != "ee_ref_I"}
    fig = _drawn(P.plot_dynamics_check(Results(data, info, open_loop.manifest)))
    assert "reference not recorded" in fig.get_suptitle()
    (ax,) = _plot_axes(fig)  # one panel: the run's path
    assert "reference not recorded" in ax.get_title(loc="left")
    assert not [ln for ln in ax.get_lines() if ln.get_label().startswith("reference")]
    np.testing.assert_allclose(
        _line(ax, "x, run").get_ydata(),
        1e3 * (open_loop["ee_pos_I"][:, 0] - open_loop["ee_pos_I"][0, 0]),
    )


def test_singularity_without_recorded_steering_says_so_and_rebuilds_nothing(closed):
    system = {k: v for k, v in closed.manifest["system"].items() if k != "steering"}
    fig = _drawn(P.plot_singularity(_with_manifest(closed, system=system)))
    assert "steering law not recorded" in fig.get_suptitle()
    ax = fig.axes[0]
    (line,) = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    assert line.get_label() == "det(C Cᵀ)\n(h_ref not recorded)"
    assert not _gid(ax, "limit")  # the threshold needs the recorded wheel weight
    top = np.abs(closed["det_CCt"]).max()
    exp3 = 3 * int(np.floor(np.log10(top) / 3))
    np.testing.assert_allclose(line.get_ydata(), closed["det_CCt"] / 10.0**exp3, rtol=1e-12)
    # hostile values are not trusted either
    bad = dict(closed.manifest["system"], steering={"h_ref": "1e3", "wheel_mu": 10.0})
    assert "not recorded" in P.plot_singularity(_with_manifest(closed, system=bad)).get_suptitle()


def test_the_recorded_steering_is_the_runs_own(closed):
    from dqspace.scenarios.build.system import build_system

    law = build_system(closed.manifest["scenario"]).steering
    rec = closed.manifest["system"]["steering"]
    assert (rec["h_ref"], rec["mu"], rec["lambda0"], rec["wheel_mu"]) == (
        law.h_ref,
        law.mu,
        law.lambda0,
        law.wheel_mu,
    )
    assert rec["singularity_level"] == math.log(100.0) / law.wheel_mu


def test_figures_import_nothing_that_builds_a_system():
    """The figures read what a run recorded: no module of ``scenarios/figures`` imports the
    system builder, the runner or ``importlib`` (nothing a result names is imported)."""
    import ast
    from pathlib import Path

    import dqspace.scenarios.figures as F

    folder = Path(F.__file__).parent
    found = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                module = ("." * node.level) + (node.module or "")
                if module.startswith(("..build", "..sim.runner", "..sim.loop", "..sim.plant")):
                    found.append(f"{path.name}: {module}")
                if module in ("importlib", "pickle"):
                    found.append(f"{path.name}: {module}")
            elif isinstance(node, ast.Import):
                found += [
                    f"{path.name}: {a.name}"
                    for a in node.names
                    if a.name in ("importlib", "pickle")
                ]
    assert not found, found


@pytest.mark.parametrize("name", ["station-keeping", "ur5-waypoints", "dynamics-check"])
@pytest.mark.parametrize("duration", [0.01, 0.05])
def test_every_figure_of_a_run_of_a_few_samples_is_drawn(name, duration, tmp_path):
    """A 0.1 s run committed its result and then failed in matplotlib: a moving mean wider
    than the run (np.convolve 'same' returns the longer length).  Runs of 2 and 6 samples
    draw every figure of their kind."""
    res = run(load_scenario(name, [f"scenario.duration={duration}", "outputs.plots=false"]),
              progress=False)  # fmt: skip
    files = list(P.plot_all(res, tmp_path, formats=["png"]))
    assert files and all(Path(f).stat().st_size > 0 for f in files)


def test_the_moving_mean_keeps_the_length_and_the_mean_of_a_constant():
    from dqspace.scenarios.figures.run_base import moving_mean

    for n_t in (1, 2, 5, 6, 40):
        x = np.full((n_t, 3), 2.5)
        y = moving_mean(x, 21)
        assert y.shape == x.shape
        np.testing.assert_allclose(y, 2.5, rtol=1e-15)


def test_a_magnitude_that_is_zero_throughout_says_so_over_the_runs_span():
    """A log axis cannot draw 0: the panel says it (a blank panel would look broken)."""
    from matplotlib.figure import Figure

    from dqspace.scenarios.figures.common import magnitude

    t = np.linspace(0.0, 3.0, 31)
    ax_zero, ax_some = Figure().subplots(2)
    magnitude(ax_zero, t, np.zeros(31), label="error angle")
    magnitude(ax_some, t, np.r_[0.0, np.ones(30)], label="error angle")
    said = [x.get_text() for x in ax_zero.texts if x.get_gid() == "all-zero"]
    assert said == ["error angle: 0 throughout"]
    assert ax_zero.get_xlim() == (0.0, 3.0)
    assert not [x for x in ax_some.texts if x.get_gid() == "all-zero"]
