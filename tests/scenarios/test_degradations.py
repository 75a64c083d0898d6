"""Degraded runs as a person sees them: every saturation the metrics count is a named
degradation with its time intervals (manifest, console lines, report, figures); the
figures' warning names every degradation and stays inside the figure however many there
are; each kind has a hatch of its own, under the curves, named in a legend."""

import html
import re

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection
from matplotlib.lines import Line2D

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.figures import plots as P
from dqspace.scenarios.figures.common import DEGRADATION_LEGEND, SPAN_ZORDER, status_text
from dqspace.scenarios.figures.report import build_report
from dqspace.scenarios.sim.metrics import KINDS, NO_THRUSTER, degradations, summarize
from dqspace.scenarios.store.results import Results

CLOSED = ["scenario.duration=1.5", "trajectory.start_time=0.5"]
#: ur5-waypoints with limits low enough that the arm, the thrusters and the wheels saturate
LOW_LIMITS = [
    "scenario.duration=2.5",
    "arm.torque_limit=[0.05]",
    "arm.rate_limit=[0.2]",
    "wheels.max_torque=0.02",
    "thrusters.max_thrust=0.1",
    "thrusters.min_impulse_bit=0.001",
    "disturbance.force=[0.3, 0, 0]",
]
#: the saturation counts of summarize and the kinds of degradation they are counted as
COUNTED_AS = {
    "steering_saturated_ticks": ("steering saturated",),
    "alloc_best_effort_ticks": ("allocation best effort",),
    "thrust_saturated_ticks": ("thrust at maximum",),
    "rw_saturated_ticks": ("wheel torque short",),
    "rw_limited_ticks": ("reaction-wheel motor limited",),
    "gimbal_limited_ticks": ("gimbal motor limited",),
    "vscmg_spin_limited_ticks": ("VSCMG wheel motor limited",),
    "arm_saturated_ticks": ("arm torque limit", "arm rate limit"),
}


@pytest.fixture(scope="module")
def closed():
    return run(load_scenario("station-keeping", CLOSED), progress=False)


@pytest.fixture(scope="module")
def low_limits():
    return run(load_scenario("ur5-waypoints", LOW_LIMITS), progress=False)


def _ticks(t, a, b):
    return (t >= a - 1e-9) & (t <= b + 1e-9)


def _saturating(res):
    """``(Results, {kind: [(t0, t1)], ...})``: ``res`` with every kind of saturation
    injected into its series over known intervals (two wheels added)."""
    t = res.t
    N = len(t)
    d = {k: np.array(v, copy=True) for k, v in res.data.items()}
    truth = {}

    def put(kind, series, col, *spans):
        for a, b in spans:
            d[series][_ticks(t, a, b), col] = 1.0
        truth[kind] = list(spans)

    d["vscmg_torque_err"][_ticks(t, 0.10, 0.15)] = [0.3, 0.0, 0.0]
    truth["steering saturated"] = [(0.10, 0.15)]
    d["alloc_status"][_ticks(t, 0.20, 0.22)] = 2.0  # best effort
    truth["allocation best effort"] = [(0.20, 0.22)]
    put("thrust at maximum", "thrust_saturated", 3, (0.30, 0.34), (0.50, 0.52))
    d["rw_speed"] = np.zeros((N, 2))
    d["rw_limited"] = np.zeros((N, 2))
    d["rw_torque_err"] = np.zeros((N, 3))
    d["rw_torque_err"][_ticks(t, 0.60, 0.61)] = [0.0, 0.5, 0.0]
    truth["wheel torque short"] = [(0.60, 0.61)]
    put("reaction-wheel motor limited", "rw_limited", 1, (0.70, 0.75))
    put("gimbal motor limited", "gimbal_limited", 0, (0.80, 0.80))
    put("VSCMG wheel motor limited", "vscmg_spin_limited", 2, (0.90, 0.95))
    lim = res.manifest["system"]["arm"]
    tau_lim, rate_lim = lim["torque_limit"][1], lim["rate_limit"][3]
    at = _ticks(t, 1.00, 1.05)
    d["arm_tau"][at, 1] = tau_lim
    d["arm_saturated"][at, 1] = 1.0
    truth["arm torque limit"] = [(1.00, 1.05)]
    at = _ticks(t, 1.20, 1.22)
    d["v"][at, 6 + 3] = -rate_lim
    d["arm_saturated"][at, 3] = 1.0
    truth["arm rate limit"] = [(1.20, 1.22)]
    return Results(d, res.info, dict(res.manifest)), truth


def _with_table(res, table, **manifest):
    messages = [f"{r['label']} (message)" for r in table]
    m = dict(res.manifest, degradations=table, degraded=messages, **manifest)
    return Results(res.data, res.info, m)


def _drawn(fig):
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig


def _inside(fig, artist):
    """True when the artist's window extent lies inside the figure's."""
    box = artist.get_window_extent(fig.canvas.get_renderer())
    f = fig.bbox
    return (
        box.x0 >= f.x0 - 0.5
        and box.x1 <= f.x1 + 0.5
        and box.y0 >= f.y0 - 0.5
        and (box.y1 <= f.y1 + 0.5)
    )


def _spans(ax):
    return [p for p in ax.patches if p.get_gid() == "episode"]


def _plain(text):
    return " ".join(text.replace("\u00a0", " ").split())


# ------------------------------------------------------------ what is a degradation


def test_every_saturation_the_metrics_count_is_a_named_degradation_with_its_intervals(closed):
    assert degradations(closed).table == []  # the embedded scenario does not saturate
    res, truth = _saturating(closed)
    t = res.t
    period = float(np.median(np.diff(t)))
    messages, events, table = degradations(res)
    kinds = [r["kind"] for r in table]
    assert kinds == [k.kind for k in KINDS if k.kind in truth]  # all of them, in KINDS order
    assert set(kinds) == set(truth) and len(messages) == len(table)
    by_kind = {r["kind"]: r for r in table}
    for kind, spans in truth.items():
        r = by_kind[kind]
        expected = [[t[_ticks(t, a, b)][0], t[_ticks(t, a, b)][-1] + period] for a, b in spans]
        np.testing.assert_allclose(r["intervals"], expected, atol=1e-12)
        ticks = sum(int(_ticks(t, a, b).sum()) for a, b in spans)
        assert r["ticks"] == ticks and r["episodes"] == len(spans)
        assert r["duration"] == pytest.approx(ticks * period)
        mine = [e for e in events if e["event"] == kind]
        assert [(e["t"], e["until"]) for e in mine] == [(i[0], i[1] - period) for i in expected]
    # every count of summarize is a degradation of as many ticks
    counts = summarize(res)
    for metric, ks in COUNTED_AS.items():
        hit = np.zeros(len(t), bool)
        for k in ks:
            for a, b in by_kind[k]["intervals"]:
                hit |= (t >= a - 1e-9) & (t < b - 1e-9)
        assert counts[metric] == hit.sum() > 0, metric
    # the units are named: thruster 3 by its name, arm joints from 1
    name3 = closed.manifest["system"]["thrusters"][3]["name"]
    assert by_kind["thrust at maximum"]["label"] == f"thruster 3 ({name3}) at its maximum thrust"
    assert by_kind["arm torque limit"]["label"] == "arm joint 2 at its torque limit"
    assert by_kind["arm rate limit"]["label"] == "arm joint 4 at its rate limit"
    assert by_kind["reaction-wheel motor limited"]["units"] == ["2"]
    assert by_kind["VSCMG wheel motor limited"]["label"].startswith("VSCMG wheel 3 at its motor")


def test_a_run_at_low_limits_lists_each_limit_in_the_manifest_report_and_figures(low_limits):
    m = low_limits.manifest
    kinds = [d["kind"] for d in m["degradations"]]
    for kind in ("allocation best effort", "thrust at maximum", "arm torque limit"):
        assert kind in kinds
    assert len(kinds) >= 4 and len(m["degraded"]) == len(kinds)
    period = float(np.median(np.diff(low_limits.t)))
    for d, msg in zip(m["degradations"], m["degraded"], strict=True):
        assert msg.startswith(d["label"])
        assert sum(b - a for a, b in d["intervals"]) == pytest.approx(d["duration"])
        assert d["duration"] == pytest.approx(d["ticks"] * period)
    arm = next(d for d in m["degradations"] if d["kind"] == "arm torque limit")
    sat = low_limits["arm_saturated"] > 0
    assert arm["label"].startswith("arm joint")
    for u in arm["units"]:
        assert sat[:, int(u.split()[0]) - 1].any()
    # the report: one row per kind with its time
    page = build_report(low_limits)
    table = re.search(r'<table id="degradations">(.*?)</table>', page, re.S).group(1)
    assert table.count("<tr>") == len(kinds) + 1
    for d in m["degradations"]:
        assert html.escape(d["label"]) in table
    # the figures: the warning names them all
    status = status_text(low_limits)
    for d in m["degradations"]:
        assert d["label"] in status
    for name, fig in P.figures(low_limits).items():
        assert all(d["label"] in _plain(fig.get_suptitle()) for d in m["degradations"]), name


# ------------------------------------------------------------------ the figures

#: a run's degradations: (kind, label, duration [s], intervals)
_ONE = [("steering saturated", "VSCMG steering saturated", 0.06, [(0.1, 0.16)])]
_TWO = _ONE + [
    ("arm torque limit", "arm joint 2 at its torque limit", 0.12, [(0.4, 0.46), (0.9, 0.96)]),
]
_MANY = _TWO + [
    ("allocation best effort", "thrust allocation short of the demand", 0.3, [(0.2, 0.5)]),
    ("thrust at maximum", "thrusters 0 (+x), 1 (-x), 2 (+y), 3 (-y) and 4 more at their "
     "maximum thrust", 0.33, [(0.2, 0.53)]),
    ("wheel torque short", "reaction wheels short of the torque asked", 0.2, [(0.6, 0.8)]),
    ("reaction-wheel motor limited", "reaction wheels 1, 2, 3 and 4 at their motors' torque "
     "or speed limit", 0.4, [(0.7, 1.1)]),
    ("gimbal motor limited", "VSCMG gimbals 1, 2, 3 and 4 at their motors' torque or rate "
     "limit", 0.5, [(0.3, 0.8)]),
    ("VSCMG wheel motor limited", "VSCMG wheel 3 at its motor's torque or speed limit", 0.1,
     [(1.0, 1.1)]),
    ("arm rate limit", "arm joints 1 (a1), 2 (a2), 4 (a4) and 3 more at their rate limit", 0.3,
     [(1.1, 1.4)]),
    (NO_THRUSTER, "every thruster has failed", 0.51, [(1.0, 1.51)]),
    ("a kind from elsewhere", "something else that held", 0.1, [(1.3, 1.4)]),
]  # fmt: skip


def _table(items):
    return [
        {
            "kind": k,
            "label": label,
            "units": [],
            "ticks": int(round(d / 0.01)),
            "duration": d,
            "first": iv[0][0],
            "episodes": len(iv),
            "intervals": [list(x) for x in iv],
        }
        for k, label, d, iv in items
    ]


@pytest.fixture(scope="module")
def degraded_figures(closed):
    """Every closed-loop figure of the run with 1, 2 and 11 kinds of degradation, drawn."""
    out = {}
    for n, items in (("one", _ONE), ("two", _TWO), ("many", _MANY)):
        res = _with_table(closed, _table(items))
        out[n] = (items, {name: _drawn(fig) for name, fig in P.figures(res).items()})
    assert len(out["many"][1]) == 6  # station-keeping: every figure but the wheels'
    return out


@pytest.mark.parametrize("case", ["one", "two", "many"])
def test_the_warning_names_every_degradation_and_stays_inside_every_figure(degraded_figures, case):
    items, figs = degraded_figures[case]
    for name, fig in figs.items():
        title = fig._suptitle
        text = _plain(title.get_text())
        warning = "degraded: " + ", ".join(f"{label} ({d:g} s)" for _, label, d, _ in items)
        assert warning in text, name
        assert _inside(fig, title), (name, title.get_window_extent(), fig.bbox)
        # every line of it fits the figure's width, not only the block
        renderer = fig.canvas.get_renderer()
        assert title.get_window_extent(renderer).width <= fig.bbox.width
        legend = [lg for lg in fig.legends if lg.get_gid() == DEGRADATION_LEGEND]
        assert len(legend) == 1 and _inside(fig, legend[0]), name
        for ax in fig.axes:
            assert _inside(fig, ax), name
    if case == "many":  # wrapped over several lines
        assert figs["disturbance_rejection"].get_suptitle().count("\n") >= 4


@pytest.mark.parametrize("case", ["one", "two", "many"])
def test_each_kind_has_its_own_hatch_under_the_curves_and_a_legend_entry(degraded_figures, case):
    items, figs = degraded_figures[case]
    kinds = [k for k, *_ in items]
    for name, fig in figs.items():
        (legend,) = [lg for lg in fig.legends if lg.get_gid() == DEGRADATION_LEGEND]
        entries = legend.legend_handles
        texts = [_plain(t.get_text()) for t in legend.get_texts()]
        assert len(entries) == len(kinds)
        for (_, label, _, iv), text in zip(items, texts, strict=True):
            assert text.startswith(label) and f"{len(iv)} episode" in text
        hatches = [h.get_hatch() for h in entries]
        assert len(set(hatches)) == len(kinds)  # distinct kinds, distinct hatches
        drawn = 0
        for ax in fig.axes:
            spans = _spans(ax)
            if not spans:
                continue
            drawn += 1
            curves = [a for a in ax.get_children() if isinstance(a, (Line2D, Collection))]
            assert curves, name
            top = max(p.get_zorder() for p in spans)
            assert top == SPAN_ZORDER < min(c.get_zorder() for c in curves), name
            by_kind = {}
            for p in spans:
                by_kind.setdefault((p.get_hatch(), p.get_y(), p.get_height()), []).append(
                    (round(p.get_x(), 9), round(p.get_x() + p.get_width(), 9))
                )
            # one band per kind, in the legend's order from the top, with its intervals
            assert len(by_kind) == len(kinds), name
            bands = sorted(by_kind, key=lambda k: -k[1])
            for j, ((_, _, _, iv), band, hatch) in enumerate(
                zip(items, bands, hatches, strict=True)
            ):
                assert band[0] == hatch
                assert band[1] == pytest.approx(1 - (j + 1) / len(kinds))
                assert band[2] == pytest.approx(1 / len(kinds))
                assert by_kind[band] == [(round(a, 9), round(b, 9)) for a, b in iv]
            assert all(p.get_hatch_linewidth() < 1.0 for p in spans)
        assert drawn >= 1, name


def test_a_kind_keeps_its_hatch_whatever_else_the_run_has(degraded_figures):
    def hatch_of(case):
        _, figs = degraded_figures[case]
        (legend,) = [lg for lg in figs["tracking"].legends if lg.get_gid() == DEGRADATION_LEGEND]
        return {
            _plain(t.get_text()).split(" (")[0]: h.get_hatch()
            for t, h in zip(legend.get_texts(), legend.legend_handles, strict=True)
        }

    one, many = hatch_of("one"), hatch_of("many")
    assert one["VSCMG steering saturated"] == many["VSCMG steering saturated"]


def test_a_result_without_the_table_still_warns_and_hatches_from_its_events(closed):
    episodes = [
        {"t": 0.2, "event": "steering saturated", "until": 0.3, "ticks": 11},
        {"t": 0.5, "event": "motor limited", "until": 0.6, "ticks": 11},
    ]
    res = Results(
        closed.data,
        closed.info,
        dict(closed.manifest, events=episodes, degraded=["steering", "motors"]),
    )
    fig = _drawn(P.plot_tracking(res))
    assert "degraded: steering, motors" in _plain(fig.get_suptitle())
    hatches = {p.get_hatch() for p in _spans(fig.axes[0])}
    assert len(hatches) == 2
