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
    "ScenarioError": "spec.config",
    "embedded_scenarios": "spec.config",
    "plot_all": "figures.plots",
    "Results": "store.results",
    "SeriesInfo": "store.results",
    "ResultError": "store.results",
    "OutputError": "store.results",
    "OutputLocked": "store.results",
    "RunFailed": "sim.runner",
    "RunTooLarge": "sim.runner",
    "RunInterrupted": "sim.runner",
    "run": "sim.runner",
    "Scenario": "spec.scenario",
    "load_scenario": "spec.scenario",
    "load_sweep": "store.sweep_store",
    "TuneResult": "campaigns.tuning",
    "RobustTuneResult": "campaigns.tuning_results",
    "robust_tune": "campaigns.robust_tuning",
    "tune": "campaigns.tuning",
    "sweep": "campaigns.sweep",
}

__all__ = sorted(_WHERE)


def __getattr__(name):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
