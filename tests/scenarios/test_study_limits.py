"""Studies have stated limits, checked before anything is expanded or drawn: a grid of
1e20 variants, a samples list without end, a campaign of 1e9 runs, and a truncated normal
whose bounds hold almost none of its probability (drawn by rejection: it looped forever)."""

import itertools

import pytest

from dqspace.scenarios import load_scenario
from dqspace.scenarios.spec.config import MAX_VARIANTS
from dqspace.scenarios.spec.dispersions import MIN_TRUNCATED_MASS, Dispersions
from dqspace.scenarios.spec.variants import grid_product, make_variants


@pytest.fixture(scope="module")
def sk():
    return load_scenario("station-keeping")


def test_a_grid_beyond_the_limit_is_refused_before_it_is_expanded():
    grid = {f"k{i}": list(range(10)) for i in range(20)}  # 1e20 variants
    with pytest.raises(ValueError, match=f"more than {MAX_VARIANTS:,}"):
        grid_product(grid)
    assert len(grid_product({"a": [1, 2], "b": [3, 4, 5]})) == 6


def test_samples_beyond_the_limit_are_refused_without_reading_them_all(sk):
    endless = ({"scenario.seed": i} for i in itertools.count())
    with pytest.raises(ValueError, match=f"more than {MAX_VARIANTS:,} variants"):
        make_variants(sk, samples=endless)


def test_a_campaign_beyond_the_limit_is_refused_before_drawing(sk):
    disp = Dispersions.from_table(sk.dispersions, sk.config)
    with pytest.raises(ValueError, match="runs: more than"):
        disp.samples(10**9, 0)
    assert len(disp.samples(3, 0)) == 3


@pytest.mark.parametrize("sigma, low, high, ok", [
    (1e10, -1e-12, 1e-12, False),  # ~1e-22 of the mass: looped forever
    (1.0, -1e-4, 1e-4, False),  # 8e-5
    (1.0, -0.01, 0.01, True),  # 8e-3
    (0.0, -1.0, 1.0, True),  # no spread: every draw is 0
])  # fmt: skip
def test_a_truncated_normal_must_hold_some_probability(sk, sigma, low, high, ok):
    table = {"arm.payload_mass": {"dist": "truncnormal", "sigma": sigma, "low": low,
                                  "high": high}}  # fmt: skip
    if not ok:
        with pytest.raises(ValueError, match=f"below {MIN_TRUNCATED_MASS:g}"):
            Dispersions.from_table(table, sk.config)
        return
    draws = Dispersions.from_table(table, sk.config).samples(50, 1)
    nominal = sk.config["arm"]["payload_mass"]
    assert all(low <= d["arm.payload_mass"] - nominal <= high for d in draws)
