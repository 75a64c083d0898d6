"""The realistic scenario and its tuned design (``station-keeping-realistic``,
``station-keeping-tuned``; docs/robust-design.md).

The tuned design changes the design only (the base law and its gains, the navigation
filter's tuning, the relative-navigation grade): the plant, the devices, the thrusters'
imperfections, the task, the dispersions and the requirements are the realistic
scenario's, so its campaign answers the same question.  The confirmation's seeds are
disjoint from the tuning's."""

import pytest

from dqspace.scenarios import load_scenario
from dqspace.scenarios.spec.dispersions import Dispersions

#: what a design may choose (section -> keys; None: the whole section)
DESIGN = {
    "scenario": {"name", "description"},
    "base_controller": None,
    "sensors": {"translation_accel_psd", "translation_measurement_noise_scale",
                "attitude_process_noise_scale", "attitude_measurement_noise_scale",
                "relnav_velocity_noise"},
}  # fmt: skip
TUNING_SEED, TUNING_RUNS, CONFIRM_SEED, CONFIRM_RUNS = 1000, 60, 2000, 299


@pytest.fixture(scope="module")
def pair():
    return load_scenario("station-keeping-realistic"), load_scenario("station-keeping-tuned")


def test_the_realistic_scenario_is_the_paper_design_under_realism(pair):
    realistic, _ = pair
    paper = load_scenario("station-keeping").config
    cfg = realistic.config
    assert cfg["sensors"]["enabled"] is True
    t = cfg["thrusters"]
    assert (t["misalignment_deg"], t["magnitude_error"]) == (0.5, 0.02)
    assert (t["open_delay"], t["close_delay"], t["min_on_time"]) == (0.002, 0.002, 0.002)
    assert cfg["base_controller"] == paper["base_controller"]  # the paper's law and gains
    assert realistic.dispersions == load_scenario("station-keeping").dispersions


def test_the_tuned_design_changes_only_the_design(pair):
    realistic, tuned = pair
    a, b = realistic.config, tuned.config
    assert a.keys() == b.keys()
    changed = set()
    for section in a:
        for key in set(a[section]) | set(b[section]):
            if a[section].get(key) != b[section].get(key):
                allowed = DESIGN.get(section, set())
                assert allowed is None or key in allowed, f"{section}.{key} is not design"
                changed.add(f"{section}.{key}")
    assert "base_controller.law" in changed
    assert tuned.dispersions == realistic.dispersions
    assert tuned.config["base_controller"]["law"] == "dual_pd_dob"


def test_the_confirmation_seeds_are_disjoint_from_the_tuning_seeds(pair):
    _, tuned = pair
    disp = Dispersions.from_table(tuned.dispersions, tuned.config)
    tuning = disp.samples(TUNING_RUNS, TUNING_SEED)
    confirm = disp.samples(CONFIRM_RUNS, CONFIRM_SEED)
    seeds = {s["scenario.seed"] for s in tuning}
    assert len(seeds) == TUNING_RUNS
    assert not seeds & {s["scenario.seed"] for s in confirm}
    # and so are the dispersed values (no sample of the tuning reappears)
    key = next(iter(tuned.dispersions))
    assert not {repr(s[key]) for s in tuning} & {repr(s[key]) for s in confirm}
