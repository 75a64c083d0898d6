"""Sensitivity of a campaign's metrics to its dispersed parameters: PRCC on synthetic models
with a known structure, against an independent computation (the inverse of the rank
correlation matrix), the p-values against Student's t, the design matrix of a campaign's
DataFrame, and the tornado plot."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata, spearmanr
from scipy.stats import t as student_t

from dqspace.scenarios.campaigns.sensitivity import (
    SIGNIFICANCE,
    campaign_sensitivity,
    parameter_columns,
    prcc,
)


def _prcc_by_inverse(X, y):
    """The textbook PRCC: from the inverse C^-1 of the Pearson correlation matrix of the
    ranks of [X, y], PRCC_j = -C^-1[j, y] / sqrt(C^-1[j, j] C^-1[y, y])."""
    R = np.column_stack([rankdata(c) for c in np.column_stack([X, y]).T])
    P = np.linalg.inv(np.corrcoef(R, rowvar=False))
    k = X.shape[1]
    return np.array([-P[j, k] / np.sqrt(P[j, j] * P[k, k]) for j in range(k)])


def test_a_linear_driver_is_near_one_and_an_irrelevant_parameter_near_zero():
    rng = np.random.default_rng(1)
    n = 400
    X = rng.uniform(-1.0, 1.0, (n, 2))
    y = 3.0 * X[:, 0] + 0.05 * rng.standard_normal(n)  # x2 plays no part
    res = prcc(X, y)
    assert res.n == n
    assert res.coefficients[0] > 0.99 and abs(res.coefficients[1]) < 0.15
    assert res.p_values[0] < 1e-12 and res.p_values[1] > 0.01
    # a decreasing driver: the sign follows
    assert prcc(X, -y).coefficients[0] < -0.99


def test_a_monotone_non_linear_driver_is_still_one():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    y = np.exp(3.0 * X[:, 0])  # monotone: its ranks are x1's ranks
    r = prcc(X, y).coefficients
    assert r[0] == pytest.approx(1.0, abs=1e-12)
    # Spearman's rank correlation of x1 alone says the same (no other parameter matters)
    assert spearmanr(X[:, 0], y).statistic == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(5))
def test_prcc_equals_the_inverse_correlation_formula_and_p_values_student_t(seed):
    rng = np.random.default_rng(seed)
    n, k = 60, 4
    X = rng.normal(size=(n, k))
    y = X @ rng.normal(size=k) + np.sin(X[:, 0]) + rng.normal(size=n)
    res = prcc(X, y)
    np.testing.assert_allclose(res.coefficients, _prcc_by_inverse(X, y), rtol=0, atol=1e-10)
    dof = n - 2 - (k - 1)
    r = res.coefficients
    t = np.abs(r) * np.sqrt(dof / (1.0 - r**2))
    np.testing.assert_allclose(res.p_values, 2.0 * student_t.sf(t, dof), rtol=1e-10)
    # with one parameter, PRCC is Spearman's rank correlation, and so is its test
    one = prcc(X[:, :1], y)
    sp = spearmanr(X[:, 0], y)
    assert one.coefficients[0] == pytest.approx(sp.statistic, abs=1e-12)
    assert one.p_values[0] == pytest.approx(sp.pvalue, rel=1e-6)


def test_too_few_runs_and_bad_input_are_refused():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="2 parameters need at least 4 runs, got 3"):
        prcc(X, np.arange(3.0))
    with pytest.raises(ValueError, match="finite"):
        prcc(np.full((6, 1), np.nan), np.arange(6.0))
    with pytest.raises(ValueError, match=r"X must be \(n, k\)"):
        prcc(np.zeros(6), np.arange(6.0))


def _campaign(n=120, seed=3):
    """A campaign's DataFrame as montecarlo returns it: a scalar key, a vector key (tuples)
    with a component that is not dispersed, the run's seed, metrics (one failed run)."""
    rng = np.random.default_rng(seed)
    mass = rng.normal(0.0, 0.03, n)
    force = [(float(a), 0.0, float(b)) for a, b in rng.uniform(-0.1, 0.1, (n, 2))]
    fz = np.array([f[2] for f in force])
    pos = 1e-4 * (1.0 + 5.0 * fz + 0.01 * rng.standard_normal(n))
    pos[7] = np.nan  # a failed run
    return pd.DataFrame(
        {
            "variant": [f"v{i}" for i in range(n)],
            "plant.base_mass_error": mass,
            "disturbance.force": force,
            "scenario.seed": rng.integers(0, 2**31 - 1, n),
            "base_pos_err_max": pos,
            "ee_max": np.full(n, 1e-4),
        }
    )


def test_the_design_matrix_has_a_column_per_component_and_skips_constant_ones():
    df = _campaign()
    X, cols, skipped = parameter_columns(df, ["plant.base_mass_error", "disturbance.force"])
    assert [c["parameter"] for c in cols] == [
        "plant.base_mass_error",
        "disturbance.force[0]",
        "disturbance.force[2]",
    ]
    assert skipped == ["disturbance.force[1]"]
    assert [c["unit"] for c in cols] == ["-", "N", "N"]  # from the schema
    assert cols[2]["key"] == "disturbance.force" and cols[2]["component"] == 2
    np.testing.assert_array_equal(X[:, 2], [f[2] for f in df["disturbance.force"]])


def test_a_campaign_names_its_driver_and_says_why_a_metric_has_none():
    df = _campaign()
    keys = ["plant.base_mass_error", "disturbance.force"]  # not the run's seed: its noise
    sens = campaign_sensitivity(df, keys, ["base_pos_err_max", "ee_max"])
    pos = sens["metrics"]["base_pos_err_max"]
    assert pos["n"] == len(df) - 1  # the failed run left out
    top = pos["parameters"][0]
    assert top["parameter"] == "disturbance.force[2]" and top["prcc"] > 0.95
    assert top["significant"] and top["p_value"] < SIGNIFICANCE
    assert [abs(p["prcc"]) for p in pos["parameters"]] == sorted(
        (abs(p["prcc"]) for p in pos["parameters"]), reverse=True
    )
    assert sens["metrics"]["ee_max"]["note"] == "the metric does not vary"
    assert sens["skipped"] == ["disturbance.force[1]"]
    few = campaign_sensitivity(df.iloc[:4], keys, ["base_pos_err_max"])
    assert "3 parameters need at least 5 runs" in few["metrics"]["base_pos_err_max"]["note"]


def test_the_tornado_plot_sorts_the_bars_and_marks_the_significant_ones():
    from dqspace.scenarios.figures.campaign_plots import plot_sensitivity

    df = _campaign()
    sens = campaign_sensitivity(
        df, ["plant.base_mass_error", "disturbance.force"], ["base_pos_err_max", "ee_max"]
    )
    fig = plot_sensitivity(sens, name="synthetic", n=len(df))
    ax, empty = fig.axes[0], fig.axes[1]
    bars = [p for p in ax.patches if (p.get_gid() or "").startswith("bar:")]
    by_y = sorted(bars, key=lambda b: -b.get_y())  # top first
    assert by_y[0].get_gid() == "bar:disturbance.force[2]"
    widths = [abs(b.get_width()) for b in by_y]
    assert widths == sorted(widths, reverse=True)
    labels = dict(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels()), strict=True))
    assert labels[max(labels)] == "disturbance.force[2] [N]"  # the top tick, with its unit
    texts = [t.get_text() for t in ax.texts]
    assert any(t.endswith("*") for t in texts)  # the significant one starred
    assert by_y[0].get_alpha() == 1.0 and by_y[-1].get_alpha() < 1.0  # the others light
    assert "the metric does not vary" in " ".join(t.get_text() for t in empty.texts)
