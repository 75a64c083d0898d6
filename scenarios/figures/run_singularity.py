"""The VSCMG singularity figure: the steering law's singularity measure against the level
where it brings in the wheel mode, read from the run's manifest (never rebuilt)."""

from __future__ import annotations

import math

import numpy as np

from .common import (
    component_style,
    finish_figure,
    limit_line,
    new_figure,
    run_metrics,
    superscript,
)
from .units import format_number

__all__ = ["plot_singularity", "recorded_steering"]


def recorded_steering(res) -> dict | None:
    """The steering law's constants the run recorded (``manifest["system"]["steering"]``:
    ``h_ref`` [N m s], ``mu``, ``lambda0``, ``wheel_mu``, ``singularity_level`` [-]), or
    None when the result does not hold them (a result written before they were recorded,
    or values that are not positive finite numbers)."""
    steering = (res.manifest.get("system") or {}).get("steering")
    if not isinstance(steering, dict):
        return None
    out = {}
    for key in ("h_ref", "mu", "lambda0", "wheel_mu", "singularity_level"):
        x = steering.get(key)
        if type(x) not in (int, float) or not math.isfinite(x) or x < 0:
            return None
        out[key] = float(x)
    return out if out["h_ref"] > 0 else None


def plot_singularity(res):
    """The CMG singularity measure δ_C = det(C Cᵀ) / h_ref⁶ [-] (0: singular) with the
    level below which the steering law brings in the wheel mode (its weight at 1 % of
    full, δ_C = ln(100) / μ_w); the metric ``min_det_GGt`` in the title.

    The steering law's constants are read from the manifest (:func:`recorded_steering`);
    a result that does not record them shows det(C Cᵀ) itself on a linear axis in a power
    of 10 named in its label, and says that h_ref was not recorded.
    """
    t = res.t
    law = recorded_steering(res)
    settings = [
        f"steering: h_ref {format_number(law['h_ref'])} N m s, "
        f"μ_w {format_number(law['wheel_mu'])}, "
        f"λ0 {format_number(law['lambda0'])}, μ {format_number(law['mu'])}"
        if law is not None
        else "steering law not recorded in this result: det(C Cᵀ) not normalised"
    ]
    fig, ax = new_figure(1, res, "VSCMG singularity measure", settings, height=2.8)
    det_c = np.asarray(res["det_CCt"] if "det_CCt" in res else res["det_GGt"], float)
    which = "det(C Cᵀ)" if "det_CCt" in res else "det(G Gᵀ)"
    finite = det_c[np.isfinite(det_c)]
    if law is not None:
        delta = det_c / law["h_ref"] ** 6
        ax[0].plot(t, delta, **component_style(0), label=f"δ_C = {which} / h_ref⁶")
        level = law["singularity_level"]
        limit_line(
            ax[0],
            level,
            f"δ_C = {format_number(level, 3)}: below it the\nsteering weighs in the"
            "\nwheel mode (≥ 1 %)",
            "limit",
        )
        ax[0].axhline(0.0, color="k", lw=0.8)
        top = max(float(np.nanmax(delta)) if finite.size else 1.0, 2.0 * level)
        ax[0].set_ylim(-0.03 * top, 1.15 * top)
        ax[0].set_ylabel("singularity measure\nδ_C [-]")
        shown, label = delta, "δ_C"
    else:
        top = float(np.abs(finite).max()) if finite.size else 1.0
        exp3 = 3 * int(np.floor(np.log10(top) / 3)) if top > 0 else 0
        shown = det_c / 10.0**exp3
        ax[0].plot(t, shown, **component_style(0), label=f"{which}\n(h_ref not recorded)")
        power = "" if exp3 == 0 else f"10{superscript(exp3)} "
        ax[0].set_ylabel(f"{which}\n[{power}(N m s)⁶]")
        label = which
    parts = []
    if finite.size:
        k = int(np.nanargmin(shown))
        lo, hi = format_number(np.nanmin(shown), 6), format_number(np.nanmax(shown), 6)
        parts.append(
            f"min {label} = {format_number(shown[k])} at t = {format_number(t[k])} s "
            f"(0 = singular; range {lo} to {hi})"
        )
    m = run_metrics(res).get("min_det_GGt")
    if m is not None and np.isfinite(m):
        parts.append(f"min det(G Gᵀ) = {format_number(m)} (min_det_GGt)")
    ax[0].set_title("; ".join(parts), loc="left", fontsize="small")
    return finish_figure(fig, ax, res)
