"""Display units: conversions and formatting against hand-computed values, and the sweep
table's width, columns and rows."""

import math

import numpy as np
import pandas as pd
import pytest

from dqspace.scenarios.figures.units import (
    display_metrics,
    format_number,
    format_quantity,
    format_sweep_table,
    to_display,
)
from dqspace.scenarios.sim.metrics import METRICS

UNITS = {name: unit for name, (unit, _) in METRICS.items()}


# ------------------------------------------------------------------ quantities


@pytest.mark.parametrize(
    ("value", "unit", "kind", "text"),
    [
        (3e-6, "m", None, "0.003 mm"),  # 3 µm, still in mm
        (3.31e-5, "m", None, "0.0331 mm"),
        (3e-9, "m", None, "0.000003 mm"),
        (1.5, "m", None, "1500 mm"),  # no switch to m either
        (104.72, "rad/s", "wheel_speed", "1000 rpm"),  # 104.72 * 60 / 2 pi = 1000.003
        (0.5, "rad/s", "peak_gimbal_rate", "28.65 deg/s"),  # 0.5 * 57.2958 = 28.648
        (0.5, "rad/s", None, "28.65 deg/s"),  # an angular rate without a kind: deg/s
        (math.pi / 4, "rad", None, "45 deg"),
        (0.0123, "deg", "base_att_err_max", "0.0123 deg"),  # metrics already in deg
        (1.5, "N m", None, "1.5 N m"),
        (12.25, "N s", None, "12.25 N s"),
        (7.0, "N", None, "7 N"),
        (2.0, "-", "alloc_not_optimal", "2"),  # a pure number has no unit
        (4.00395e9, "-", "min_det_GGt", "4.004e+09"),
        (1.0, "rad/s^2", "wheel_accel_cmd", "9.549 rpm/s"),  # 60 / 2 pi = 9.5493
        (-2.5e-4, "m", None, "-0.25 mm"),
    ],
)
def test_format_quantity_matches_hand_computed_text(value, unit, kind, text):
    assert format_quantity(value, unit, kind=kind) == text


def test_to_display_converts_arrays_and_ignores_kinds_of_other_units():
    v, unit = to_display(np.array([1e-3, -2e-3]), "m")
    assert unit == "mm"
    np.testing.assert_allclose(v, [1.0, -2.0])
    v, unit = to_display(np.pi, "rad", kind="wheel_speed")  # a wheel kind refines rad/s only
    assert unit == "deg" and v == pytest.approx(180.0)
    v, unit = to_display(2 * np.pi, "rad/s", kind="no such kind")
    assert unit == "deg/s" and v == pytest.approx(360.0)


def test_unknown_unit_is_refused_by_name():
    with pytest.raises(ValueError, match=r"unit 'furlong' has no display convention"):
        to_display(1.0, "furlong")
    with pytest.raises(ValueError, match=r"'N, N m'"):
        format_quantity(1.0, "N, N m")


@pytest.mark.parametrize(
    ("x", "digits", "text"),
    [
        (0.0, 4, "0"),
        (float("nan"), 4, "nan"),
        (float("inf"), 4, "inf"),
        (9.99996, 4, "10"),  # rounding up one decade keeps 4 digits, zeros dropped
        (123456.0, 4, "123456"),  # fixed up to 1e6: integers are not cut
        (1234567.0, 4, "1.235e+06"),
        (1.2e-7, 4, "1.2e-07"),
        (0.000123456, 3, "0.000123"),
        (2.0, 1, "2"),
    ],
)
def test_format_number(x, digits, text):
    assert format_number(x, digits) == text


def test_display_metrics_gives_each_metric_in_its_display_unit():
    metrics = {"peak_gimbal_rate": 0.5, "ee_rms": 3.31e-5, "alloc_not_optimal": 2.0, "mine": 1.25}
    assert display_metrics(metrics, UNITS) == [
        ("peak_gimbal_rate", "28.65", "deg/s"),
        ("ee_rms", "0.0331", "mm"),
        ("alloc_not_optimal", "2", "-"),
        ("mine", "1.25", "-"),  # not in units: a pure number
    ]


# ------------------------------------------------------------------ sweep table


def _sweep_frame(n=30, failed=()):
    """A DataFrame shaped like sweep()'s: variant, overrides, metrics, extras (SI)."""
    rows = []
    for i in range(n):
        row = {
            "variant": f"{i:016x}",
            "base_controller.kp_trans": (600.0 * (1 + i % 3),) * 3,
            "scenario.seed": i,
            "scenario.duration": 5.0,  # the same in every variant
        }
        for j, name in enumerate(METRICS):
            row[name] = 1e-5 * (i + 1) * (j + 1)
        row.update(run_time=1.0, error="RunFailed: boom" if i in failed else None, cached=False)
        rows.append(row)
    return pd.DataFrame(rows)


@pytest.mark.parametrize("width", [40, 60, 80, 100, 140])
def test_sweep_table_is_never_wider_than_asked(width):
    text = format_sweep_table(_sweep_frame(failed=(3,)), UNITS, max_width=width)
    assert max(len(line) for line in text.splitlines()) <= width


def test_sweep_table_shows_varying_overrides_and_metrics_in_display_units():
    df = _sweep_frame(n=3)
    lines = format_sweep_table(df, UNITS, max_width=100).splitlines()
    header = lines[0].split()
    assert header[:3] == ["#", "kp_trans", "seed"]  # duration does not vary: not shown
    assert "base pos max [mm]" in lines[0] and "base att max [deg]" in lines[0]
    cells = lines[2].split()  # row 1: kp 1200 x 3, seed 1
    assert cells[:3] == ["1", "1200×3", "1"]
    # base_pos_err_max = 2e-5 m -> 0.02 mm; base_att_err_max = 4e-5 deg (already deg)
    assert cells[3:5] == ["0.02", "0.00004"]
    assert lines[-1].startswith("not shown: ")  # the metrics that did not fit
    assert "ee max [mm]" in lines[-1]


def test_sweep_table_puts_the_unit_of_every_metric_in_its_header():
    text = format_sweep_table(_sweep_frame(n=2), UNITS, max_width=1000)
    for header in (
        "base pos max [mm]",
        "ee rms [mm]",
        "impulse [N s]",
        "gimbal rate max [deg/s]",
        "gimbal travel [deg]",
        "min det GGt [-]",
    ):
        assert header in text
    assert "not shown" not in text
    # peak_gimbal_rate of row 0 is 6e-5 rad/s = 0.003438 deg/s (6e-5 * 57.2958)
    assert "0.003438" in text.splitlines()[1].split()


def test_sweep_table_shows_first_and_last_rows_around_an_ellipsis():
    lines = format_sweep_table(_sweep_frame(n=30), UNITS, max_rows=6).splitlines()
    firsts = [line.split()[0] for line in lines[1:8]]
    assert firsts == ["0", "1", "2", "…", "27", "28", "29"]
    assert lines[4] == "… 24 rows not shown …"


def test_sweep_table_marks_failed_variants_and_shows_a_lone_variants_overrides():
    lines = format_sweep_table(_sweep_frame(n=3, failed=(1,)), UNITS).splitlines()
    assert lines[0].split()[:2] == ["#", "status"]
    assert [line.split()[1] for line in lines[1:4]] == ["ok", "FAILED", "ok"]
    one = format_sweep_table(_sweep_frame(n=1), UNITS).splitlines()
    assert one[0].split()[:4] == ["#", "kp_trans", "seed", "duration"]


def test_sweep_table_keeps_ambiguous_override_names_whole():
    df = pd.DataFrame(
        {
            "variant": ["a", "b"],
            "base_controller.kp": [1.0, 2.0],
            "arm_controller.kp": [3.0, 4.0],
            "faults": [[], [{"time": 2.0, "thruster": 0, "kind": "failed_off", "scale": 1.0}]],
            "run_time": [1.0, 1.0],
            "error": [None, None],
            "cached": [False, False],
        }
    )
    lines = format_sweep_table(df, UNITS, max_width=200).splitlines()
    assert lines[0].split() == ["#", "base_controller.kp", "arm_controller.kp", "faults"]
    assert lines[1].split()[-1] == "none"
    assert lines[2].split()[-3:] == ["failed_off", "#0", "t=2"]  # thruster 0 from 2 s


def test_sweep_table_input_checks():
    assert format_sweep_table(_sweep_frame(n=0), UNITS) == "(no variants)"
    with pytest.raises(ValueError, match="max_width"):
        format_sweep_table(_sweep_frame(n=2), UNITS, max_width=10)
