"""Figures of a run, readable on a printed page and in greyscale.

Each ``plot_*`` function takes :class:`dqspace.scenarios.store.results.Results` and returns
a matplotlib Figure (no pyplot: headless and notebook alike); :func:`plot_all` writes the
figures of a result (closed loop: up to seven; open loop: the dynamics check).  Figures of
several runs (overlays, sweeps, Monte Carlo) are in
:mod:`dqspace.scenarios.figures.campaign_plots`.

This module gathers the figures of a run, one module per family: the base
(:mod:`.run_base`: disturbance rejection, wrench balance), tracking (:mod:`.run_tracking`),
thrusters and momentum devices (:mod:`.run_devices`), the VSCMG singularity
(:mod:`.run_singularity`) and the dynamics check (:mod:`.run_open_loop`); they draw through
the shared machinery of :mod:`.common`.  Figures read what the run recorded (its series
and manifest) and never rebuild the system.

Conventions (:mod:`dqspace.scenarios.figures.units`): values in display units (mm, deg,
deg/s, rpm, N, N m) with the unit in brackets on every axis; no offset or
multiplier notation on any axis; legends outside the axes, on the right; lines differ
in line style (and markers) as well as colour.  Each title names the scenario, the
settings that matter for the figure (gains, limits) and, unless the run completed, its
status (``FAILED at t = 3.2 s``, ``interrupted``, ``degraded: <every degradation>``), in
red, every line wrapped to the figure's width; the last sample of a run that did not
complete is a red vertical line.  The manifest's events are marked on every panel: thruster
faults and other instants as dash-dot vertical lines, named once in the first panel's
legend; the degradations' intervals (``manifest["degradations"]``) as hatched spans under
the curves, a hatch, a colour and a band of the panel's height per kind, named in one
legend under the figure.

Requirements and limits: a quantity with a requirement (:func:`requirement_limits`: the
scenario's ``requirements`` table, else
:data:`dqspace.scenarios.campaigns.montecarlo.DEFAULT_REQUIREMENTS`) or a device limit is
drawn as its magnitude on a log axis, so that the limit (a dotted black line) and the data
are both in view however far apart; the metric's value is a black triangle at its peak and
is stated, with the verdict, above the panel.

Series used (see :mod:`dqspace.scenarios.sim.runner`; SI): closed loop ``base_pos_err``
[m], ``base_att_err`` [rad], ``arm_reaction`` (planned) and ``arm_reaction_applied``
(a result without it: the planned one alone) [N, N m], ``wrench_thr_true`` (else
``wrench_thr``) [N, N m], ``vscmg_torque_cmd``/``vscmg_torque_err`` [N m],
``rw_torque_err`` [N m], ``ee_pos``/``ee_ref``/``ee_err`` [m], ``thrust_cmd`` [N],
``thrust_on`` [s], ``gimbal_rate`` [rad/s], ``wheel_speed`` [rad/s], ``det_CCt``,
``det_GGt``, ``rw_speed`` [rad/s], ``rw_torque_cmd`` [N m], ``dump_torque`` [N m];
open loop ``ee_pos_I`` [m] and ``ee_ref_I`` [m] (a result without it is drawn without the
reference).  Manifest (``manifest["system"]``): ``thrusters`` (names),
``wheel_max_speed_rpm``, ``steering`` (the singularity figure's h_ref and level; see
:mod:`dqspace.scenarios.build.describe`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..sim.metrics import extra_arm_names
from .common import REQUIREMENTS, literal_text, requirement_limits, scenario_config
from .recorded import check_recorded_series
from .run_base import actuator_wrenches, plot_disturbance_rejection, plot_wrench_balance
from .run_capture import capture_figures
from .run_devices import plot_thrusters, plot_vscmg, plot_wheels
from .run_open_loop import plot_dynamics_check
from .run_singularity import plot_singularity
from .run_tracking import plot_tracking

if TYPE_CHECKING:
    from ..store.results import Results

__all__ = [
    "REQUIREMENTS",
    "requirement_limits",
    "plot_disturbance_rejection",
    "plot_wrench_balance",
    "plot_tracking",
    "plot_thrusters",
    "plot_vscmg",
    "plot_singularity",
    "plot_wheels",
    "plot_dynamics_check",
    "plot_all",
    "figures",
    "actuator_wrenches",
]

# ------------------------------------------------------------------ all figures

_CLOSED_LOOP = {
    "disturbance_rejection": (plot_disturbance_rejection, ("base_pos_err", "arm_reaction")),
    "wrench_balance": (plot_wrench_balance, ("base_pos_err", "arm_reaction")),
    "tracking": (plot_tracking, ("ee_pos", "ee_ref", "ee_err")),
    "thrusters": (plot_thrusters, ("thrust_cmd", "thrust_on")),
    "vscmg": (plot_vscmg, ("gimbal_rate", "wheel_speed")),
    "singularity": (plot_singularity, ("det_GGt",)),
    "wheels": (plot_wheels, ("rw_speed", "rw_torque_cmd")),
}
_OPEN_LOOP = {"dynamics_check": (plot_dynamics_check, ("ee_pos_I",))}


def _has(res, name):
    """A series with at least one sample and one column (zero VSCMGs or thrusters: absent)."""
    if name not in res:
        return False
    x = np.asarray(res[name], float)
    return x.shape[0] > 0 and (x.ndim == 1 or x.shape[1] > 0) and bool(np.isfinite(x).any())


def figures(res: Results) -> dict:
    """``{name: Figure}`` of a result: what :func:`plot_all` writes, not saved."""
    check_recorded_series(res)  # a damaged result: one error naming its file
    kind = (scenario_config(res).get("scenario") or {}).get("kind", "closed_loop")
    table = _OPEN_LOOP if kind == "open_loop" else _CLOSED_LOOP
    out = {  # the text as written: names and messages from the result are not TeX
        name: literal_text(fn(res))
        for name, (fn, needs) in table.items()
        if all(_has(res, k) for k in needs)
    }
    if kind == "capture":  # rates, momentum, interface wrench, approach (.run_capture)
        out.update({k: literal_text(f) for k, f in capture_figures(res).items()})
    for arm in extra_arm_names(res) if kind != "open_loop" else []:  # one per extra arm
        if all(_has(res, f"{k}_{arm}") for k in ("ee_pos", "ee_ref", "ee_err")):
            out[f"tracking_{arm}"] = literal_text(plot_tracking(res, arm))
    return out


def plot_all(
    res: Results, directory: str | os.PathLike, formats: Sequence[str] = ("png", "pdf")
) -> list[Path]:
    """Write the figures of a result as ``<directory>/<name>.<fmt>``.

    Chooses by ``manifest["scenario"]["scenario"]["kind"]``: ``"closed_loop"`` (the
    default) writes the closed-loop figures whose series are present (VSCMG and wheel
    figures only with those devices), ``"open_loop"`` the dynamics-check figure.

    Returns
    -------
    list of Path, the files written (empty: nothing to plot)
    """
    directory = Path(directory)
    paths = []
    for name, fig in figures(res).items():
        directory.mkdir(parents=True, exist_ok=True)
        for fmt in formats:
            p = directory / f"{name}.{fmt}"
            fig.savefig(p, dpi=150)
            paths.append(p)
    return paths
