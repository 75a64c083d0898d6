"""Shared fixtures for the dqspace test suite (helpers live in tests/support/)."""

import numpy as np
import pytest
from hypothesis import settings

# No per-example deadline: the first example of a test may include a one-off
# numba compilation (cold cache), which is not what these tests measure.
settings.register_profile("dqspace", max_examples=150, deadline=None)
settings.load_profile("dqspace")


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
