"""Distribution-free percentile bounds (order statistics) against scipy.stats.binom, and their
coverage on draws from a known distribution."""

import numpy as np
import pytest
from scipy.stats import binom

from dqspace.scenarios.campaigns.confidence import (
    MET,
    NOT_MET,
    UNDECIDED,
    lower_rank,
    min_runs,
    percentile_bounds,
    upper_rank,
    verdict,
)


def test_299_runs_with_none_above_bound_p99_at_95_percent():
    assert min_runs(0.99, 0.95) == 299 and min_runs(0.95, 0.95) == 59
    assert upper_rank(298, 0.99, 0.95) is None and upper_rank(299, 0.99, 0.95) == 299
    x = np.linspace(0.0, 0.9e-3, 299)  # every run below 1 mm
    v = verdict(x, "<=", 1e-3, 99, 0.95)
    assert v.status == MET and v.bound.upper == x[-1]


@pytest.mark.parametrize("seed", range(20))
def test_the_ranks_are_the_binomial_ones(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    p = float(rng.uniform(0.5, 0.999))
    c = float(rng.choice([0.8, 0.9, 0.95, 0.99]))
    k = upper_rank(n, p, c)
    if k is None:
        assert binom.cdf(n - 1, n, p) < c
    else:
        assert binom.cdf(k - 1, n, p) >= c and (k == 1 or binom.cdf(k - 2, n, p) < c)
    j = lower_rank(n, p, c)
    if j is None:
        assert binom.sf(0, n, p) < c
    else:
        assert binom.sf(j - 1, n, p) >= c and (j == n or binom.sf(j, n, p) < c)


def test_the_bounds_cover_the_true_quantile_as_often_as_claimed():
    # an exponential metric: P99 = ln(100); 400 runs per campaign, 2000 campaigns
    rng = np.random.default_rng(7)
    true = np.log(100.0)
    up = lo = 0
    for _ in range(2000):
        b = percentile_bounds(rng.exponential(size=400), 99, 0.95)
        up += b.upper >= true
        lo += b.lower <= true
    # coverage at least 95 % (binomial noise on 2000 campaigns: 3 sigma is about 1.5 %)
    assert up / 2000 >= 0.935 and lo / 2000 >= 0.935


def test_too_few_runs_or_a_clear_excess_are_said_so():
    few = verdict(np.zeros(100), "<=", 1.0, 99)
    assert few.status == UNDECIDED and "at least 299" in few.reason
    over = verdict(np.full(400, 2.0), "<=", 1.0, 99)
    assert over.status == NOT_MET
    assert verdict(np.full(400, 2.0), ">=", 1.0, 99).status == MET
    with pytest.raises(ValueError, match="quantile level"):
        upper_rank(10, 99, 0.95)
