"""Figures of several runs: overlays of runs, sweep trade-offs, Monte Carlo dispersions.

The conventions of :mod:`dqspace.scenarios.figures.plots` hold (display units named on
every axis, no offset notation, legends outside the axes, line styles and markers as well
as colours, requirements as dotted black lines with the metric's value stated):

- :func:`plot_runs`: runs overlaid, one line per run labelled by what differs between
  their resolved scenarios (:func:`run_labels`: ``base_controller.kp_trans=[2000, 2000,
  2000]``);
- :func:`plot_sweep_tradeoff` and :func:`plot_pareto`: a sweep's metrics against the
  swept parameter, and the Pareto front of two metrics (both minimised);
- :func:`plot_envelopes`, :func:`plot_histograms` and :func:`plot_sensitivity`: a Monte
  Carlo campaign's percentile bands over time, its metrics' histograms with the
  requirements' confidence bounds and verdicts, and the tornado plot of which dispersed
  parameter drives each metric; :func:`plot_montecarlo` writes them from a campaign
  directory;
- :func:`save` writes a figure in several formats.

This module gathers them from their modules: :mod:`.campaign_runs` (overlays),
:mod:`.campaign_sweep` (sweeps), :mod:`.campaign_montecarlo` and
:mod:`.campaign_sensitivity` (Monte Carlo).
"""

from .campaign_montecarlo import plot_envelopes, plot_histograms, plot_montecarlo
from .campaign_runs import plot_runs, run_labels
from .campaign_sensitivity import plot_sensitivity
from .campaign_sweep import (
    TRADEOFF_METRICS,
    pareto_front,
    plot_pareto,
    plot_sweep_tradeoff,
    swept_keys,
)
from .common import save

__all__ = [
    "TRADEOFF_METRICS",
    "run_labels",
    "plot_runs",
    "swept_keys",
    "plot_sweep_tradeoff",
    "pareto_front",
    "plot_pareto",
    "plot_envelopes",
    "plot_histograms",
    "plot_montecarlo",
    "plot_sensitivity",
    "save",
]
