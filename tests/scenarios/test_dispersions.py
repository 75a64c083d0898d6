"""Monte Carlo dispersions: each sample reproducible alone, the distributions' moments, the
percentile and requirement tables, bad tables refused."""

import numpy as np
import pytest
from scipy import stats

from dqspace.scenarios import load_scenario
from dqspace.scenarios.spec.dispersions import Dispersions, percentiles, requirement_table

CFG = load_scenario("station-keeping").config
TABLE = {
    "base.mass": {"dist": "normal", "sigma_rel": 0.05},
    "disturbance.torque": {"dist": "uniform", "low": -0.01, "high": 0.02},
    "arm.payload_mass": {"dist": "truncnormal", "sigma": 1.0, "low": -0.5, "high": 2.0},
    "base_controller.kp_rot": {"dist": "normal", "sigma": 4.0},
}


def test_sample_i_is_the_same_whatever_n_and_comes_from_the_spawned_sequence():
    d = Dispersions.from_table(TABLE, CFG)
    few, many = d.samples(3, seed=11), d.samples(50, seed=11)
    assert few == many[:3]
    assert d.samples(3, seed=12) != few
    # the generator of sample i is SeedSequence(seed).spawn(n)[i]
    child = np.random.SeedSequence(11).spawn(50)[7]
    rng = np.random.default_rng(child)
    assert many[7]["base.mass"] == pytest.approx(27.0 * (1 + 0.05 * rng.standard_normal()))
    assert len({s["scenario.seed"] for s in many}) == 50
    # every sample is a valid set of overrides
    over = [f"{k}={v}" for k, v in many[0].items()]
    assert load_scenario("station-keeping", over).config["base"]["mass"] == many[0]["base.mass"]


def test_the_draws_have_the_distributions_moments():
    d = Dispersions.from_table(TABLE, CFG)
    s = d.samples(4000, seed=3)
    mass = np.array([x["base.mass"] for x in s])
    tq = np.array([x["disturbance.torque"] for x in s])
    pl = np.array([x["arm.payload_mass"] for x in s])
    n = len(s)
    assert abs(mass.mean() - 27.0) < 4 * 1.35 / np.sqrt(n)
    assert abs(mass.std() - 1.35) < 0.05 * 1.35
    assert tq.min() >= -0.01 and tq.max() <= 0.02
    assert abs(tq.mean() - 0.005) < 4 * (0.03 / np.sqrt(12)) / np.sqrt(3 * n)
    tn = stats.truncnorm(-0.5, 2.0)  # offsets in units of sigma = 1
    assert pl.min() >= -0.5 and pl.max() <= 2.0
    assert abs(pl.mean() - tn.mean()) < 4 * tn.std() / np.sqrt(n)
    assert stats.kstest(pl, tn.cdf).pvalue > 1e-3


def test_percentiles_and_requirements_against_numpy():
    rng = np.random.default_rng(0)
    v = rng.exponential(1e-3, 1000)
    p = percentiles(np.r_[v, np.nan], (50, 95, 99))  # NaNs (failed runs) are left out
    assert p == {q: float(np.percentile(v, q)) for q in (50, 95, 99)}
    rows = {"base_pos_err_max": v, "ee_max": 2 * v}
    table = requirement_table(
        rows, {"base_pos_err_max": ("<=", 5e-3, 99), "ee_max": ("<=", 1e-3, 95)}
    )
    assert table[0]["ok"] is True and table[0]["value"] == float(np.percentile(v, 99))
    assert table[1]["ok"] is False
    with pytest.raises(ValueError, match="no such metric"):
        requirement_table(rows, {"base_pos": ("<=", 1.0, 99)})


@pytest.mark.parametrize(
    "table, match",
    [
        ({"base.mas": {"dist": "normal", "sigma": 1}}, "did you mean 'mass'"),
        ({"basse.mass": {"dist": "normal", "sigma": 1}}, "unknown section"),
        ({"arm.model": {"dist": "normal", "sigma": 1}}, "not a number"),
        ({"base.mass": {"dist": "gauss", "sigma": 1}}, "unknown dist"),
        ({"base.mass": {"dist": "normal"}}, "needs sigma or sigma_rel"),
        ({"base.mass": {"dist": "normal", "sigma": 1, "low": 0}}, "does not apply"),
        ({"base.mass": {"dist": "uniform", "low": 1.0, "high": 0.0}}, "low must be below"),
        ({"base.mass": {"dist": "truncnormal", "sigma": 1, "low": 1, "high": 2}}, "contain 0"),
        ({"base.mass": {"dist": "normal", "sigma": -1}}, ">= 0"),
        ({"base.mass": 3.0}, "expected"),
    ],
)
def test_bad_tables_name_the_key(table, match):
    with pytest.raises(ValueError, match=match):
        Dispersions.from_table(table, CFG)
