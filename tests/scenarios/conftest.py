"""Fixtures shared by the scenario tests."""

import logging

import pytest


@pytest.fixture(scope="session")
def client():
    """A local Dask cluster of two single-threaded worker processes (like `--workers 2`),
    started once for the sweep and tuning tests."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c
