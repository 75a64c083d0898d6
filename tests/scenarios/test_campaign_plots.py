"""Figures of several runs: the overlay labels each run by what differs, a sweep's
trade-off and Pareto front show the swept values and the requirements, the Monte Carlo
envelopes are the percentiles of the runs; and ``dqspace plot`` draws each."""

import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.campaigns.montecarlo import envelopes
from dqspace.scenarios.cli import main
from dqspace.scenarios.figures import campaign_plots as C
from dqspace.scenarios.store.results import Results

SHORT = ["scenario.duration=1.0", "trajectory.start_time=0.3"]
KP = "base_controller.kp_trans"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two stored runs differing in kp_trans only."""
    root = tmp_path_factory.mktemp("runs")
    out = []
    for name, kp in (("soft", 600), ("stiff", 2000)):
        over = [*SHORT, f"{KP}=[{kp}, {kp}, {kp}]", "outputs.plots=false"]
        run(load_scenario("station-keeping", over), out=root / name, progress=False)
        out.append(root / name)
    return out


def _drawn(fig):
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig


def _no_offsets(fig):
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            assert axis.get_major_formatter().get_offset() == ""


def _legend_right_of_axes(fig):
    r = fig.canvas.get_renderer()
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is not None:
            assert leg.get_window_extent(r).x0 >= ax.get_window_extent(r).x1


# ------------------------------------------------------------------ overlay


def test_overlay_has_one_labelled_line_per_run_naming_the_differing_key(two_runs):
    results = [Results.load(p) for p in two_runs]
    labels, keys = C.run_labels(results, names=["soft", "stiff"])
    assert keys == [KP]
    assert labels == [f"{KP}=[600, 600, 600]", f"{KP}=[2000, 2000, 2000]"]
    fig = _drawn(C.plot_runs(results, names=["soft", "stiff"]))
    ax = fig.axes[0]
    runs = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("run")]
    assert [ln.get_label() for ln in runs] == labels
    assert len({(ln.get_linestyle(), ln.get_marker()) for ln in runs}) == 2  # greyscale
    expected = 1e3 * np.abs(results[1]["base_pos_err"]).max(axis=1)
    drawn = np.asarray(runs[1].get_ydata(), float)
    np.testing.assert_allclose(drawn[expected > 0], expected[expected > 0])
    assert np.isnan(drawn[expected == 0]).all()  # zero: not on a log axis
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] in legend and labels[1] in legend
    # the requirement on every error panel, at its value in display units
    for a, level in zip(fig.axes[:3], (1.0, 0.05, 1.0), strict=True):
        (req,) = [ln for ln in a.get_lines() if ln.get_gid() == "requirement"]
        assert req.get_ydata()[0] == pytest.approx(level)
    # each run's metric, at its value
    marks = [ln.get_ydata()[0] for ln in ax.get_lines() if ln.get_gid() == "metric"]
    expected = [1e3 * r.manifest["metrics"]["base_pos_err_max"] for r in results]
    assert marks == pytest.approx(expected)
    _no_offsets(fig)
    _legend_right_of_axes(fig)


def test_overlay_of_identical_scenarios_uses_the_names_and_marks_a_failed_run(two_runs):
    res = Results.load(two_runs[0])
    failed = Results(res.data, res.info, dict(res.manifest, status="failed", message="boom"))
    labels, keys = C.run_labels([res, failed], names=["a", "b"])
    assert keys == [] and labels == ["a", "b"]
    fig = _drawn(C.plot_runs([res, failed], names=["a", "b"]))
    assert "b: FAILED at t = 1 s: boom" in fig.get_suptitle()
    runs = [ln.get_label() for ln in fig.axes[0].get_lines() if ln.get_gid() == "run1"]
    assert runs == ["b (FAILED)"]
    ends = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == "run_end"]
    assert len(ends) == 1 and ends[0].get_xdata()[0] == pytest.approx(1.0)


def test_labels_of_runs_of_several_scenarios_group_by_name():
    def fake(name, kp):
        sc = {"scenario": {"name": name}, "base_controller": {"kp_trans": [kp] * 3}, "arm": {}}
        if name == "other":
            sc["arm"] = {"model": "ur5.urdf", "mount_xyz": [0, 0, 0.4]}
        return Results({"t": np.zeros(1)}, {}, {"scenario": sc})

    labels, keys = C.run_labels([fake("sk", 600), fake("sk", 2000), fake("other", 600)])
    assert labels == [f"sk: {KP}=[600, 600, 600]", f"sk: {KP}=[2000, 2000, 2000]", "other"]
    assert set(keys) == {KP, "scenario.name", "arm.model", "arm.mount_xyz"}


def test_dqspace_plot_of_several_runs_writes_the_comparison(two_runs, tmp_path, capsys):
    code = main(["plot", *map(str, two_runs), "--out", str(tmp_path), "--formats", "png"])
    assert code == 0 and (tmp_path / "comparison.png").read_bytes()[:4] == b"\x89PNG"
    assert "comparison.png" in capsys.readouterr().out


def test_comparisons_of_different_runs_go_to_different_folders(two_runs, capsys):
    """`dqspace plot A B` overwrote <parent>/comparison/ whatever A and B were: each set of
    results now has its own default folder (named after them), so a comparison of other runs
    leaves an earlier one alone."""
    soft, stiff = two_runs
    assert main(["plot", str(soft), str(stiff), "--formats", "png"]) == 0
    first = soft.parent / "comparison-soft-vs-stiff" / "comparison.png"
    assert first.read_bytes()[:4] == b"\x89PNG"
    before = first.read_bytes()
    assert main(["plot", str(stiff), str(soft), "--formats", "png"]) == 0
    second = soft.parent / "comparison-stiff-vs-soft" / "comparison.png"
    assert second.is_file() and first.read_bytes() == before
    assert str(second) in capsys.readouterr().out


# ------------------------------------------------------------------ sweeps


def _sweep_df():
    """A 3 x 2 grid (kp_trans x seed) with metrics made up in SI units, one failure."""
    rows = []
    for kp in (300.0, 600.0, 2000.0):
        for seed in (0, 1):
            rows.append(
                {
                    "variant": f"v{kp:g}-{seed}",
                    KP: (kp, kp, kp),
                    "scenario.seed": seed,
                    "base_pos_err_max": 2e-2 / kp * (1 + 0.1 * seed),  # [m]
                    "base_att_err_max": 0.02,
                    "ee_max": 1.5e-5,
                    "total_impulse": 10.0 + kp / 100.0 + seed,
                    "run_time": 1.0,
                    "error": None,
                }
            )
    rows[-1].update(base_pos_err_max=np.nan, total_impulse=np.nan, error="RunFailed: x")
    return pd.DataFrame(rows)


def test_tradeoff_plots_each_metric_against_the_swept_value_with_requirements():
    df = _sweep_df()
    assert C.swept_keys(df) == [KP, "scenario.seed"]
    fig = _drawn(C.plot_sweep_tradeoff(df, {"scenario": {"name": "sk"}}))
    ax = fig.axes[0]
    assert ax.get_ylabel() == "base_pos_err_max\n[mm]"
    assert fig.axes[-1].get_xlabel() == f"{KP} (×3, equal components) [N/m]"
    lines = [ln for ln in ax.get_lines() if ln.get_gid() == "variants"]
    assert [ln.get_label() for ln in lines] == ["0", "1"]  # the values of scenario.seed
    assert ax.get_legend().get_title().get_text() == "scenario.seed"
    np.testing.assert_allclose(lines[0].get_xdata(), [300.0, 600.0, 2000.0])
    np.testing.assert_allclose(lines[0].get_ydata(), [20 / 300, 20 / 600, 20 / 2000])  # [mm]
    np.testing.assert_allclose(lines[1].get_xdata(), [300.0, 600.0])  # the failed one left out
    (req,) = [ln for ln in ax.get_lines() if ln.get_gid() == "requirement"]
    assert req.get_ydata()[0] == pytest.approx(1.0)
    assert "5 of 6 met" in ax.get_title(loc="left")
    (failed,) = [ln for ln in ax.get_lines() if ln.get_gid() == "failed"]
    assert list(failed.get_xdata()) == [2000.0]
    assert "1 FAILED" in fig.get_suptitle()
    _no_offsets(fig)
    _legend_right_of_axes(fig)


def test_with_two_swept_keys_the_best_names_both_and_the_lines_follow_the_values():
    """The "best ... at" line named only the first key, and the lines (and legend) of the
    second key came in the rows' order (60, 120, 30)."""
    rows = []
    for rate in (60, 120, 30):  # the order the variants ran in
        for kp in (300.0, 600.0):
            rows.append(
                {"variant": f"v{rate}-{kp:g}", KP: (kp, kp, kp), "control.rate": rate,
                 "base_pos_err_max": 1e-3 * kp / rate, "base_att_err_max": 0.02,
                 "ee_max": 1e-5, "total_impulse": 10.0, "run_time": 1.0, "error": None}
            )  # fmt: skip
    df = pd.DataFrame(rows)
    assert C.swept_keys(df) == [KP, "control.rate"]
    fig = _drawn(C.plot_sweep_tradeoff(df, {"scenario": {"name": "sk"}}))
    ax = fig.axes[0]
    lines = [ln for ln in ax.get_lines() if ln.get_gid() == "variants"]
    assert [ln.get_label() for ln in lines] == ["30", "60", "120"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:3] == ["30", "60", "120"]
    # the smallest error: kp 300 at rate 120 (0.3 / 120 m = 2.5 mm)
    title = ax.get_title(loc="left")
    assert re.search(
        rf"best 2\.5 mm at {re.escape(KP)} = \[300, 300, 300\], control\.rate = 120", title
    )


def _dominated(a, b, i):
    return any(
        a[j] <= a[i] and b[j] <= b[i] and (a[j] < a[i] or b[j] < b[i]) for j in range(len(a))
    )


def test_pareto_front_is_the_set_of_non_dominated_points():
    rng = np.random.default_rng(3)
    a, b = rng.random(40), rng.random(40)
    a[5], b[7] = np.nan, np.nan
    front = C.pareto_front(a, b)
    ok = [i for i in range(40) if np.isfinite(a[i]) and np.isfinite(b[i])]
    brute = [i for i in ok if not _dominated(a[ok], b[ok], ok.index(i))]
    assert sorted(front.tolist()) == sorted(brute)
    assert list(a[front]) == sorted(a[front])  # along the front
    assert np.all(np.diff(b[front]) < 0)  # trading one metric for the other
    df = _sweep_df()
    fig = _drawn(C.plot_pareto(df, "base_pos_err_max", "total_impulse"))
    ax = fig.axes[0]
    assert ax.get_xlabel() == "base_pos_err_max [mm]" and ax.get_ylabel() == "total_impulse [N s]"
    (pareto,) = [ln for ln in ax.get_lines() if ln.get_gid() == "pareto"]
    x = 1e3 * df["base_pos_err_max"].to_numpy()
    y = df["total_impulse"].to_numpy()
    np.testing.assert_allclose(pareto.get_xdata(), x[C.pareto_front(x, y)])
    texts = [t.get_text() for t in ax.texts]
    assert any(re.search(r"kp_trans=\[300, 300, 300\]; seed=0", t) for t in texts)
    with pytest.raises(ValueError, match="metric 'nope' not in this sweep"):
        C.plot_pareto(df, "nope", "total_impulse")


def test_dqspace_plot_of_a_sweep_directory_writes_tradeoff_and_pareto(tmp_path, capsys):
    from dqspace.scenarios import sweep

    sc = load_scenario("station-keeping", ["scenario.duration=0.2"])
    out = tmp_path / "sw"
    sweep(sc, {KP: [[600] * 3, [2000] * 3]}, out=out, scheduler="synchronous", progress=False)
    assert main(["plot", str(out), "--formats", "png", "--pareto", "ee_rms,total_impulse"]) == 0
    for f in ("sweep_tradeoff.png", "sweep_pareto.png"):
        assert (out / f).read_bytes()[:4] == b"\x89PNG" and (out / f).stat().st_size > 20_000
    assert main(["plot", str(out), "--pareto", "ee_rms"]) == 2
    assert "give two metric names" in capsys.readouterr().err


# ------------------------------------------------------------------ envelopes


def test_envelopes_ignore_the_runs_that_ended_and_resample_other_grids():
    t = np.arange(1, 11) * 0.1
    rng = np.random.default_rng(0)
    runs = [
        {"t": t, "base_pos_err_max": rng.random(10), "base_att_err_max": rng.random(10)}
        for _ in range(5)
    ]
    runs[2]["base_pos_err_max"][6:] = np.nan  # stopped at 0.6 s
    coarse = np.arange(1, 6) * 0.2  # a run on a coarser grid: interpolated
    runs.append({"t": coarse, "base_pos_err_max": np.ones(5), "base_att_err_max": np.ones(5)})
    env = envelopes(runs)["base_pos_err_max"]
    np.testing.assert_array_equal(env["t"], t)
    Y = np.vstack(
        [r["base_pos_err_max"] for r in runs[:5]] + [np.interp(t, coarse, np.ones(5), left=np.nan)]
    )
    for k in range(10):
        col = Y[:, k][np.isfinite(Y[:, k])]
        assert env["runs"][k] == col.size
        for q in (50, 95, 99):
            assert env[f"p{q}"][k] == pytest.approx(np.percentile(col, q), rel=1e-12)
        assert env["min"][k] == col.min() and env["max"][k] == col.max()
    assert env["runs"][0] == 5 and env["runs"][9] == 5  # 0.1 s: before the coarse grid starts
