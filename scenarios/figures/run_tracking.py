"""The end-effector tracking figure of a closed-loop run: position against its reference,
the error per axis and its magnitude against the requirement."""

from __future__ import annotations

import numpy as np

from .common import (
    XYZ,
    arm_gains_text,
    capture_hold_text,
    component_style,
    display_series,
    finish_figure,
    new_figure,
    reference_markers,
    required_magnitude,
    run_metrics,
    scenario_config,
    scenario_section,
    transient,
)
from .units import format_number, format_quantity

__all__ = ["plot_tracking"]


def _task_start(res, arm=None):
    if arm is not None:  # an extra arm: its row's start_time ('initial': from the start)
        rows = scenario_config(res).get("extra_arm") or []
        row = next((r for r in rows if isinstance(r, dict) and r.get("name") == arm), {})
        return float(row.get("start_time", 0.0)) if row.get("task") != "initial" else 0.0
    return float(scenario_section(res, "trajectory").get("start_time", 0.0))


def plot_tracking(res, arm=None):
    """End-effector position and its reference (base frame), the error per axis, and its
    magnitude on a log axis with the requirement (``ee_max``) and the metrics; the
    transient the metrics leave out is hatched.  ``arm``: an extra arm's name (its series
    ``ee_pos_<arm>`` ..., its metrics ``ee_max_<arm>``, ``ee_rms_<arm>``); None: the first
    arm's."""
    t = res.t
    x = "" if arm is None else f"_{arm}"
    title = "end-effector tracking (base frame)" + ("" if arm is None else f", arm {arm}")
    fig, ax = new_figure(5, res, title, [arm_gains_text(res), capture_hold_text(res)], height=1.7)
    pos, u = display_series(res, f"ee_pos{x}", "m")
    ref, _ = display_series(res, f"ee_ref{x}", "m")
    err, _ = display_series(res, f"ee_err{x}", "m")
    for i, c in enumerate(XYZ):
        ax[i].plot(t, pos[:, i], **component_style(i), label="actual")
        reference_markers(ax[i], t, ref[:, i], "reference")
        ax[i].set_ylabel(f"{c} [{u}]")
        ax[3].plot(t, err[:, i], **component_style(i), label=c)
    ax[3].set_ylabel(f"error [{u}]")
    t0, t_tr = _task_start(res, arm), transient(res)
    norm = np.linalg.norm(err, axis=1)
    required_magnitude(
        ax[4],
        t,
        norm,
        res=res,
        metric=f"ee_max{x}",
        what="|error|",
        unit=u,
        mask=t >= t0,
        style={"color": "k", "lw": 1.2},
        window=t >= t_tr,
    )
    m = run_metrics(res)
    if f"ee_rms{x}" in m and np.any(t >= t_tr):
        rms = format_quantity(m[f"ee_rms{x}"], "m")
        ax[4].set_title(
            ax[4].get_title(loc="left") + f"; RMS {rms} (ee_rms{x})",
            loc="left",
            fontsize="small",
        )
    if len(t) and t[0] < t_tr:
        ax[4].axvspan(
            t[0],
            min(t_tr, t[-1]),
            facecolor="0.9",
            lw=0.0,
            zorder=0,
            label=f"t < {format_number(t_tr)} s: not in\nee_max{x}, ee_rms{x}",
            gid="transient",
        )
    ax[4].set_ylabel(f"|error| [{u}]")
    for k, a in enumerate(ax):
        line = a.axvline(t0, color="0.5", lw=1.0, ls=":", label="task start" if k == 0 else None)
        line.set_gid("task_start")
    return finish_figure(fig, ax, res)
