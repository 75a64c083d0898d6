"""Shared fixtures for the dqspace test suite (helpers live in tests/support/)."""

import os

import numpy as np
import pytest
from hypothesis import settings

# The suite's pytest-xdist workers keep every core busy: a run's kernels compile in its own
# process rather than in child processes (each would import dqspace and numba again, for
# no gain on a machine already loaded).  tests/test_precompile.py tests the parallel
# compile with its own setting.  Notebooks and Dask workers started by tests inherit it.
os.environ.setdefault("DQSPACE_COMPILE_PROCESSES", "1")

# No per-example deadline: the first example of a test may include a one-off
# numba compilation (cold cache), which is not what these tests measure.
settings.register_profile("dqspace", max_examples=150, deadline=None)
settings.load_profile("dqspace")


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
