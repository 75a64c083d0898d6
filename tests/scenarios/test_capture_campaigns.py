"""Campaigns of a capture scenario: a Monte Carlo over the embedded scenario's dispersions
of the target (rate, mass, inertia, initial pose) gives the same runs serially and on Dask,
carries the capture's metrics in its table and judges requirements on them; run i rerun
alone reproduces the campaign's row, and it used the sampled target (its initial rate and
pose in the recorded series, its mass in the plant after the grasp)."""

import json

import numpy as np
import pytest
from test_capture_scenario import _Bar, _Rows

from dqspace.dq import dq_from_rpy_deg
from dqspace.scenarios import load_scenario
from dqspace.scenarios.campaigns.montecarlo import montecarlo, read_summary
from dqspace.scenarios.campaigns.sweep import sweep
from dqspace.scenarios.sim.capture import Capture
from dqspace.scenarios.sim.metrics import METRICS
from dqspace.scenarios.spec.dispersions import Dispersions
from dqspace.scenarios.spec.schema_capture import CAPTURE_METRICS

#: short runs of the embedded capture (its [dispersions] table) with a 50 kg target
SHORT = [
    "scenario.duration=1.0",
    "capture.approach_duration=0.5",
    "capture.grasp_time=0.8",
    "capture.grasp_dwell=0.1",
    "capture.standoff=[0.0,0.0,-0.05]",
    "capture.hold_omega_n=5.0",
    "target.mass=50.0",
    "target.inertia=[4.0,3.5,3.0,0.2,-0.15,0.1]",
    "target.fixture_xyz=[0.0,0.0,-0.3]",
    "target.xyz=[0.5,0.0,2.05]",
    "target.rate_deg_s=[1.5,2.0,1.5]",
    "outputs.plots=false",
]
N = 3
#: the dispersed keys of the embedded scenario
DISPERSED = {"target.rate_deg_s", "target.mass", "target.inertia", "target.rpy_deg", "target.xyz"}


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory, client):
    sc = load_scenario("capture", SHORT)
    assert set(sc.dispersions) == DISPERSED
    base = tmp_path_factory.mktemp("capture-mc")
    req = {"grasp_missed": ("<=", 0.0, 50), "grasp_impulse_force": ("<=", 1.0, 50)}
    kw = dict(requirements=req, progress=False)
    serial = montecarlo(sc, N, scheduler="synchronous", out=base / "serial", **kw)
    dask = montecarlo(sc, N, scheduler=client, out=base / "dask", **kw)
    return sc, serial, dask, base


def _same(a, b):
    return a == b or (np.isnan(a) and np.isnan(b))


def test_a_capture_monte_carlo_is_the_same_serially_and_on_dask(campaigns):
    _, serial, dask, _ = campaigns
    assert list(serial["variant"]) == list(dask["variant"])
    names = [*METRICS, *CAPTURE_METRICS]
    for m in names:
        assert m in serial.columns, m  # the capture's metrics are in the table
        np.testing.assert_array_equal(serial[m].to_numpy(), dask[m].to_numpy(), err_msg=m)
    # every run grasped (a real capture each time) and the target differs from run to run
    assert (serial["grasp_missed"] == 0.0).all() and serial["error"].isna().all()
    assert np.all(np.isfinite(serial["detumble_bound"]))
    assert serial["stack_momentum"].nunique() == N


def test_the_capture_requirements_are_judged_and_stored(campaigns):
    _, _, dask, base = campaigns
    info = read_summary(base / "dask")  # the summary reads back with capture metrics
    rows = {r["metric"]: r for r in info["requirements"]}
    assert set(rows) == {"grasp_missed", "grasp_impulse_force"}
    want = np.percentile(dask["grasp_impulse_force"], 50)
    assert rows["grasp_impulse_force"]["value"] == pytest.approx(want, rel=1e-12)
    assert rows["grasp_missed"]["value"] == 0.0
    assert set(info["percentiles"]) >= {"detumble_time", "interface_force_peak"}


def test_run_i_alone_used_the_sampled_target(campaigns):
    sc, serial, _, _ = campaigns
    sample = Dispersions.from_table(sc.dispersions, sc.config).samples(N, 0)[2]
    row = serial.iloc[2]
    for key in DISPERSED:  # the campaign's table holds the drawn values
        got = row[key]
        got = json.loads(got) if isinstance(got, str) else got
        np.testing.assert_array_equal(np.asarray(got, float), np.asarray(sample[key], float))
    over = [f"{k}={json.dumps(v)}" for k, v in sample.items()]
    cap = Capture(load_scenario("capture", SHORT + over).config)
    rows = _Rows()
    cap.simulate(rows, lambda: None, _Bar())
    # the run used the drawn target: its initial rate and pose in the recorded series, its
    # mass in the plant after the grasp (the servicer's plus the target's)
    assert np.allclose(rows["target_twist"][0, :3], np.radians(sample["target.rate_deg_s"]),
                       rtol=0.0, atol=1e-15)  # fmt: skip
    pose = dq_from_rpy_deg(sample["target.rpy_deg"], sample["target.xyz"])
    assert np.allclose(rows["target_pose"][0], pose, rtol=0.0, atol=1e-15)
    m1, m2 = cap.phase1.sy.plant.total_mass, cap.phase2.sy.plant.total_mass
    assert m2 - m1 == pytest.approx(sample["target.mass"], rel=1e-12)
    assert sample["target.mass"] != 50.0
    # and reproduces the campaign's row, bit for bit
    for m, value in cap.metrics(rows).items():
        assert _same(value, row[m]), m


def test_a_capture_sweep_has_the_capture_metrics():
    df = sweep(load_scenario("capture", SHORT), {"capture.restitution": [0.0, 0.5]},
               scheduler="synchronous", progress=False)  # fmt: skip
    assert set(CAPTURE_METRICS) <= set(df.columns)
    rigid, bounced = df.iloc[0], df.iloc[1]
    # the contact's impulse (1 + e) times the rigid grasp's, the latch's e times; the held
    # state (hence the detumble) the same
    f = rigid["grasp_impulse_force"]
    assert f > 0.0 and rigid["grasp_latch_impulse_force"] == 0.0
    assert bounced["grasp_impulse_force"] == pytest.approx(1.5 * f, rel=1e-8)
    assert bounced["grasp_latch_impulse_force"] == pytest.approx(0.5 * f, rel=1e-8)
    assert bounced["stack_momentum"] == pytest.approx(rigid["stack_momentum"], rel=1e-9)
