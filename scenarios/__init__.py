"""dqspace.scenarios: scenario files, the closed-loop runner, results, plots and the CLI.

>>> from dqspace.scenarios import load_scenario, run
>>> sc = load_scenario("station-keeping", ["scenario.duration=2"])
>>> res = run(sc, out="runs/demo")          # doctest: +SKIP
>>> res["base_pos_err"].max()               # doctest: +SKIP
>>> df = sweep(sc, {"scenario.seed": [0, 1]})  # doctest: +SKIP

The names below load their module on first use, so that reading a scenario (or the
``dqspace`` command line) does not import the simulation, matplotlib or Dask.
"""

import importlib

#: public name -> module that defines it
_WHERE = {
    "ScenarioError": "config",
    "embedded_scenarios": "config",
    "plot_all": "plots",
    "Results": "results",
    "SeriesInfo": "results",
    "ResultError": "results",
    "OutputError": "results",
    "OutputLocked": "results",
    "RunFailed": "runner",
    "RunTooLarge": "runner",
    "RunInterrupted": "runner",
    "run": "runner",
    "Scenario": "scenario",
    "load_scenario": "scenario",
    "load_sweep": "sweep_store",
    "TuneResult": "tuning",
    "tune": "tuning",
}

# the function `sweep` shares its name with its module: bound now, or importing the module
# `dqspace.scenarios.sweep` would rebind the name to the module (sweep.py imports no Dask)
from .sweep import sweep  # noqa: E402, F401

__all__ = sorted([*_WHERE, "sweep"])


def __getattr__(name):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
