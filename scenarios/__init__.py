"""dqspace.scenarios: scenario files, the closed-loop runner, results, plots and the CLI.

>>> from dqspace.scenarios import load_scenario, run
>>> sc = load_scenario("station-keeping", ["scenario.duration=2"])
>>> res = run(sc, out="runs/demo")          # doctest: +SKIP
>>> res["base_pos_err"].max()               # doctest: +SKIP
>>> df = sweep(sc, {"scenario.seed": [0, 1]})  # doctest: +SKIP
"""

from .config import ScenarioError, embedded_scenarios
from .plots import plot_all
from .results import Results, SeriesInfo
from .runner import RunInterrupted, run
from .scenario import Scenario, load_scenario
from .sweep import load_sweep, sweep
from .tuning import TuneResult, tune

__all__ = [
    "Results",
    "RunInterrupted",
    "Scenario",
    "ScenarioError",
    "SeriesInfo",
    "TuneResult",
    "embedded_scenarios",
    "load_scenario",
    "load_sweep",
    "plot_all",
    "run",
    "sweep",
    "tune",
]
