"""The dynamics-check figure of an open-loop run: the end-effector path against the
independent reference the run recorded (``ee_ref_I``)."""

from __future__ import annotations

import numpy as np

from .common import (
    XYZ,
    component_style,
    finish_figure,
    new_figure,
    reference_markers,
    scenario_section,
)
from .units import format_number, to_display

__all__ = ["plot_dynamics_check", "reference_method"]


def _open_loop_input(res):
    ol = scenario_section(res, "open_loop")
    if not ol:
        return ""
    f = ", ".join(format_number(x) for x in ol.get("base_force_amplitude", ()))
    tq = ", ".join(format_number(x) for x in ol.get("base_torque_amplitude", ()))
    w = format_number(ol.get("frequency", float("nan")))
    return f"base force sin({w} t)·[{f}] N, torque sin({w} t)·[{tq}] N m"


def _integrator_text(res):
    integ = scenario_section(res, "integrator")
    if integ.get("method") == "adaptive":
        return (
            f"ABA, adaptive RK45 (rtol {format_number(integ.get('rtol'))}, "
            f"max step {format_number(1e3 * integ.get('max_step', np.nan))} ms)"
        )
    if integ.get("method") == "rk4":
        return f"ABA, Lie-group RK4 (dt = {format_number(1e3 * integ.get('dt', np.nan))} ms)"
    return "ABA"


def reference_method(res) -> str:
    """How the recorded reference ``ee_ref_I`` was computed, as the run described it (the
    series' description), else ``"independent reference"``."""
    info = res.info.get("ee_ref_I") if isinstance(res.info, dict) else None
    text = str(getattr(info, "description", "") or "")
    prefix = "end-effector position, independent reference ("
    if text.startswith(prefix) and text.endswith(")"):
        return text[len(prefix) : -1]
    return text.removeprefix("end-effector position, ") or "independent reference"


def plot_dynamics_check(res):
    """End-effector path of an open-loop run and its distance to the independent reference.

    The reference is the recorded series ``ee_ref_I`` (the open-loop runner records it); a
    result without it (written before it was always recorded) is drawn alone, one panel,
    with "reference not recorded" in its title -- the figure never recomputes it.
    """
    t = res.t
    ee = np.asarray(res["ee_pos_I"], float)
    ref = np.asarray(res["ee_ref_I"], float) if "ee_ref_I" in res else None
    what = "end-effector vs an independent reference (paper eq. 50)"
    if ref is None:
        what = "end-effector path (paper eq. 50); reference not recorded"
    fig, ax = new_figure(1 if ref is None else 2, res, what, height=2.8)
    r0 = ee[0] if len(ee) else np.zeros(3)
    d_run, u = to_display(ee - r0, "m")
    for i, c in enumerate(XYZ):
        ax[0].plot(t, d_run[:, i], **component_style(i), label=f"{c}, run")
    start = ", ".join(format_number(x) for x in np.round(to_display(r0, "m")[0], 3))
    ax[0].set_ylabel(f"displacement from\nr(0) = ({start}) [{u}]")
    if ref is None:
        ax[0].set_title(
            f"{_open_loop_input(res)}\nrun: {_integrator_text(res)}; reference not recorded "
            "in this result (ee_ref_I)",
            loc="left",
            fontsize="small",
        )
        return finish_figure(fig, ax, res)
    d_ref, _ = to_display(ref - r0, "m")
    for i in range(3):
        reference_markers(ax[0], t, d_ref[:, i], "reference (x, y, z)" if i == 0 else None)
    err = to_display(np.linalg.norm(ee - ref, axis=1), "m")[0]
    shown = err > 0
    ax[1].semilogy(
        t, np.where(shown, err, np.nan), color="k", lw=1.2, label="|r_run − r_reference|"
    )
    ax[1].set_ylabel(f"distance to the\nreference [{u}]")
    # float64 resolves the position itself only to ~1 ulp: below 10 ulp is rounding
    level = 10.0 * float(np.spacing(np.abs(to_display(ee, "m")[0]).max())) if len(ee) else 0.0
    ax[1].axhline(level, color="0.4", lw=1.0, ls=":", label="10 ulp of |r| (rounding)")
    ax[1].set_ylim(bottom=level / 10.0 if level > 0 else None)
    if shown.any():
        k = int(np.argmax(err))
        ax[1].set_title(
            f"largest: {format_number(err[k])} {u} at t = {format_number(t[k])} s",
            loc="left",
            fontsize="small",
        )
    ax[0].set_title(
        f"{_open_loop_input(res)}\nrun: {_integrator_text(res)}; "
        f"reference: {reference_method(res)}",
        loc="left",
        fontsize="small",
    )
    return finish_figure(fig, ax, res)
