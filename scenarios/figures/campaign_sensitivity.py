"""The tornado plot of a Monte Carlo campaign: which dispersed parameter drives each
required metric (:func:`plot_sensitivity`, from the campaign's ``sensitivity``:
:func:`dqspace.scenarios.campaigns.sensitivity.campaign_sensitivity`)."""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.patches import Patch

from .common import campaign_figure, plain_ticks
from .units import format_number

__all__ = ["plot_sensitivity", "parameter_label"]

#: at most this many parameters per panel (the largest |PRCC|)
MAX_BARS = 12


def parameter_label(p: Mapping) -> str:
    """``plant.base_mass_error [kg]``: a parameter of the sensitivity with its unit."""
    unit = p.get("unit") or "-"
    return f"{p['parameter']} [{unit}]"


def plot_sensitivity(sens: Mapping, *, name: str = "", n: int | None = None, k: int = MAX_BARS):
    """One panel per metric: the PRCC of its k most influential dispersed parameters as
    horizontal bars, largest |PRCC| on top, in [-1, 1] (no unit); a significant one (p
    below the campaign's level) solid with its value starred, the others light and hatched;
    blue where the metric grows with the parameter, orange where it falls.  A metric
    without coefficients says why.

    Parameters
    ----------
    sens : the campaign's ``sensitivity`` (``montecarlo.json``)
    name, n : the scenario and the runs, in the title
    k : the most bars per panel
    """
    metrics = dict(sens.get("metrics", {}))
    if not metrics:
        raise ValueError("sensitivity: no metric")
    alpha = float(sens.get("significance", 0.05))
    rows = max([min(k, len(e.get("parameters", []))) for e in metrics.values()] + [1])
    title = (
        f"{name}: which dispersed parameter drives each metric"
        + (f" ({n} runs)" if n is not None else "")
        + f"\npartial rank correlation (PRCC); * and solid: significant at p < {alpha:g}"
    )
    fig, axes = campaign_figure(
        1, title, height=0.9 + 0.32 * rows, width=5.2 * len(metrics), cols=len(metrics)
    )
    for ax, (metric, entry) in zip(axes[0], metrics.items(), strict=True):
        params = list(entry.get("parameters", []))[:k]
        ax.set_title(f"{metric} ({entry.get('n', 0)} runs)", loc="left", fontsize="small")
        ax.set_xlim(-1.15, 1.15)
        ax.axvline(0.0, color="k", lw=0.8)
        ax.set_xlabel("PRCC [-]")
        ax.grid(True, axis="x", alpha=0.3)
        if not params:
            ax.text(
                0.5,
                0.5,
                f"no coefficients: {entry.get('note') or 'none'}",
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize="small",
                wrap=True,
            )
            ax.set_yticks([])
            continue
        y = list(range(len(params)))[::-1]  # the largest on top
        for yi, p in zip(y, params, strict=True):
            r, sig = p["prcc"], p["significant"]
            color = "C0" if r >= 0 else "C1"
            ax.barh(
                yi,
                r,
                height=0.7,
                color=color,
                alpha=1.0 if sig else 0.35,
                hatch=None if sig else "//",
                edgecolor=color,
                gid=f"bar:{p['parameter']}",
            )
            text = format_number(r, 2) + ("*" if sig else "")
            ax.text(
                r + (0.03 if r >= 0 else -0.03),
                yi,
                text,
                va="center",
                ha="left" if r >= 0 else "right",
                fontsize="x-small",
            )
        ax.set_yticks(y, [parameter_label(p) for p in params], fontsize="small")
        ax.set_ylim(-0.7, len(params) - 0.3)
    handles = [
        Patch(color="C0", label="metric grows with the parameter"),
        Patch(color="C1", label="metric falls as the parameter grows"),
        Patch(facecolor="0.6", edgecolor="0.6", alpha=0.35, hatch="//", label="not significant"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize="small")
    plain_ticks(fig)
    return fig
