"""Results round-trip exactly, writes are atomic, CSV and pandas exports match the arrays."""

import json

import numpy as np
import pytest

from dqspace.scenarios.store import results as R
from dqspace.scenarios.store.results import Results, SeriesInfo


def sample(rng, n=50):
    data = {
        "t": np.linspace(0, 1, n),
        "base_pose": rng.normal(size=(n, 8)),
        "status": rng.integers(0, 3, size=n),
    }
    info = {
        "t": SeriesInfo("s"),
        "base_pose": SeriesInfo("-", ("qw", "qx", "qy", "qz", "dw", "dx", "dy", "dz")),
        "status": SeriesInfo("-", (), "allocator status code"),
    }
    return Results(data, info, {"status": "complete", "seed": 7, "scenario": {"a": {"b": 1.5}}})


def test_save_load_round_trip_is_exact(tmp_path, rng):
    r = sample(rng)
    r.save(tmp_path / "run")
    back = Results.load(tmp_path / "run")
    assert set(back.data) == set(r.data)
    for k in r.data:
        assert np.array_equal(back[k], r[k]) and back[k].dtype == r[k].dtype
    assert back.manifest["seed"] == 7 and back.status == "complete"
    assert back.manifest["scenario"] == {"a": {"b": 1.5}}
    assert back.info["base_pose"].columns[0] == "qw"
    assert back.manifest["n_samples"] == 50


def test_failure_in_the_middle_of_a_write_keeps_the_previous_file(tmp_path, rng, monkeypatch):
    r = sample(rng)
    r.save(tmp_path)
    before = (tmp_path / "result.npz").read_bytes()
    r.data = {k: v[:10] for k, v in r.data.items()}

    real_fsync = R.os.fsync

    def crash(fd):
        raise OSError("disk full (injected)")

    monkeypatch.setattr(R.os, "fsync", crash)
    with pytest.raises(OSError, match="injected"):
        r.save(tmp_path)
    monkeypatch.setattr(R.os, "fsync", real_fsync)
    assert (tmp_path / "result.npz").read_bytes() == before
    assert Results.load(tmp_path).manifest["n_samples"] == 50
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


def test_csv_and_dataframe_exports(tmp_path, rng):
    r = sample(rng)
    path = r.to_csv(tmp_path / "r.csv")
    header = path.read_text().splitlines()[0].split(",")
    assert header[:3] == ["t", "base_pose.qw", "base_pose.qx"]
    values = np.loadtxt(path, delimiter=",", skiprows=1)
    assert np.array_equal(values[:, 0], r["t"])
    assert np.array_equal(values[:, 1:9], r["base_pose"])
    df = r.to_dataframe()
    assert np.array_equal(df["base_pose.dz"].to_numpy(), r["base_pose"][:, 7])


def test_load_rejects_a_directory_that_is_not_a_result(tmp_path):
    with pytest.raises(ValueError, match="not a dqspace result"):
        Results.load(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "other"}))
    np.savez(tmp_path / "result.npz", t=np.zeros(1))
    with pytest.raises(ValueError, match="unknown format"):
        Results.load(tmp_path)


def test_mismatched_series_length_is_refused(tmp_path, rng):
    r = sample(rng)
    r.data["base_pose"] = r.data["base_pose"][:-1]
    with pytest.raises(ValueError, match="'base_pose' has 49 samples, t has 50"):
        r.save(tmp_path)
