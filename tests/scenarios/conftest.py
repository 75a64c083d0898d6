"""Fixtures shared by the scenario tests."""

import pytest

from dqspace.scenarios.campaigns.sweep import connect


@pytest.fixture(scope="session")
def client():
    """A local Dask cluster of two single-threaded worker processes (what `--workers 2`
    starts), started once for the sweep and tuning tests."""
    with connect(workers=2) as c:
        yield c
