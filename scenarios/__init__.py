"""dqspace.scenarios: scenario files, the closed-loop runner, results, plots and the CLI.

>>> from dqspace.scenarios import load_scenario, run
>>> sc = load_scenario("station-keeping", ["scenario.duration=2"])
>>> res = run(sc, out="runs/demo")          # doctest: +SKIP
>>> res["base_pos_err"].max()               # doctest: +SKIP
"""

from .config import ScenarioError, embedded_scenarios
from .plots import plot_all
from .results import Results, SeriesInfo
from .runner import RunInterrupted, run
from .scenario import Scenario, load_scenario

__all__ = [
    "Results",
    "RunInterrupted",
    "Scenario",
    "ScenarioError",
    "SeriesInfo",
    "embedded_scenarios",
    "load_scenario",
    "plot_all",
    "run",
]
