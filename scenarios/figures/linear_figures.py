"""Figures of linearised closed loops, to compare base laws: the closed-loop poles, the
frequency response from a disturbance wrench on the base to the base pose error, and the
base loop's stability margins.

Each function takes the models already computed (``{label: LinearModel}`` from
:func:`~dqspace.control.loop_analysis.disturbance_response`, margins from
:func:`~dqspace.control.loop_analysis.base_loop_margins`) and draws them; nothing is
linearised here.  Units on every axis: position error per force [mm/N], attitude error per
torque [deg/(N m)], frequencies [rad/s], poles [1/s].
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from ...control.linear_model import LinearModel
from ...control.loop_analysis import CHANNELS, LoopMargins
from .common import campaign_figure, legend, plain_ticks

__all__ = [
    "plot_pole_map",
    "plot_disturbance_bode",
    "margins_rows",
    "margins_table",
    "plot_margins_table",
]

_MARKERS = ("o", "x", "+", "s", "^", "D")
_LINES = ("-", "--", ":", "-.")
_FORCE = ("d_fx", "d_fy", "d_fz")
_TORQUE = ("d_tx", "d_ty", "d_tz")
_POS = ("pos_x", "pos_y", "pos_z")
_ATT = ("att_x", "att_y", "att_z")


def plot_pole_map(
    models: Mapping[str, LinearModel], *, zoom: float = 2.0, title: str = "Closed-loop poles"
) -> Figure:
    """The poles of each model (``{label: LinearModel}``), one marker per model: all of
    them (left) and those with ``|Re s| < zoom`` [1/s] (right, the slow ones)."""
    fig, axes = campaign_figure(1, title, height=3.6, width=10.0, cols=2)
    for k, (label, lin) in enumerate(models.items()):
        p = lin.poles()
        style = dict(marker=_MARKERS[k % len(_MARKERS)], ls="none", color=f"C{k}", ms=6)
        style["mfc"] = "none"
        axes[0, 0].plot(p.real, p.imag, label=f"{label} ({p.size} poles)", **style)
        near = np.abs(p.real) < zoom
        axes[0, 1].plot(p.real[near], p.imag[near], label=label, **style)
    for ax, what in zip(axes[0], ("all poles", f"|Re s| < {zoom:g} 1/s"), strict=True):
        ax.axvline(0.0, color="0.5", lw=0.8)
        ax.axhline(0.0, color="0.5", lw=0.8)
        ax.set_xlabel("Re s [1/s]")
        ax.set_ylabel("Im s [rad/s]")
        ax.set_title(what, fontsize="medium")
        ax.grid(True, alpha=0.3)
    axes[0, 1].set_xlim(-zoom, 0.05 * zoom)
    legend(axes[0, 1])
    plain_ticks(fig)
    return fig


def _block_gain(lin, inputs, outputs, omega):
    """Largest singular value (n_w,) of the 3 x 3 block of ``lin``'s frequency response."""
    G = lin.select(inputs=list(inputs), outputs=list(outputs)).frequency_response(omega)
    return np.array([np.linalg.svd(G[:, :, k], compute_uv=False)[0] for k in range(omega.size)])


def plot_disturbance_bode(
    models: Mapping[str, LinearModel],
    omega=None,
    *,
    title: str = "Disturbance wrench on the base to the base pose error",
) -> Figure:
    """The gain from a disturbance wrench on the base to the base pose error, for each
    model (``{label: LinearModel}`` with inputs ``d_fx .. d_tz`` and outputs ``att_x ..
    pos_z``, as :func:`~dqspace.control.loop_analysis.disturbance_response` makes them):
    the largest singular value of each 3 x 3 block (the worst direction) against the
    frequency ``omega`` [rad/s] (default 1e-3 .. 1e2): position error [mm] (top) and
    attitude error [deg] (bottom) per force [N] (left) and per torque [N m] (right)."""
    w = np.logspace(-3, 2, 300) if omega is None else np.asarray(omega, float)
    fig, axes = campaign_figure(2, title, height=2.8, width=11.0, cols=2, sharex=True)
    outputs = (
        (_POS, 1e3, "position error", "mm"),
        (_ATT, np.degrees(1.0), "attitude error", "deg"),
    )
    inputs = ((_FORCE, "force", "N"), (_TORQUE, "torque", "(N m)"))
    for row, (out, scale, what, unit_out) in enumerate(outputs):
        for col, (inp, cause, unit_in) in enumerate(inputs):
            ax = axes[row, col]
            drawn = False
            for k, (label, lin) in enumerate(models.items()):
                g = scale * _block_gain(lin, inp, out, w)
                g[g <= 1e-300] = np.nan  # a decoupled block: nothing on a log scale
                drawn |= bool(np.any(np.isfinite(g)))
                ax.plot(w, g, color=f"C{k}", ls=_LINES[k % len(_LINES)], lw=1.5, label=label)
            ax.set_xscale("log")
            if drawn:
                ax.set_yscale("log")
            else:
                ax.text(0.5, 0.5, "zero: decoupled", ha="center", transform=ax.transAxes)
            ax.set_ylabel(f"{what} / {cause} [{unit_out}/{unit_in}]")
            ax.grid(True, which="both", alpha=0.3)
    legend(axes[0, 1])
    for ax in axes[-1]:
        ax.set_xlabel("frequency [rad/s]")
    return fig


def margins_rows(margins: Mapping[str, Mapping[str, LoopMargins]]) -> list[list[str]]:
    """The rows of :func:`margins_table`: a header, then one row per law with each channel's
    phase margin [deg] and gain margins [dB] (lower / upper when the loop has both)."""
    rows = [["law", *(f"{c}: PM, GM" for c in CHANNELS)]]
    for label, per_channel in margins.items():
        row = [label]
        for c in CHANNELS:
            m = per_channel.get(c)
            if m is None:
                row.append("-")
                continue
            gms = [20.0 * np.log10(g) for g in m.gain_margins if np.isfinite(g) and g > 0]
            gm = " / ".join(f"{g:+.1f}" for g in sorted(gms)) if gms else "inf"
            row.append(f"{m.phase_margin:.0f} deg, {gm} dB")
        rows.append(row)
    return rows


def margins_table(margins: Mapping[str, Mapping[str, LoopMargins]]) -> str:
    """The base loop's margins of each law (``{label: {channel: LoopMargins}}`` from
    :func:`~dqspace.control.loop_analysis.base_loop_margins`) as a Markdown table: per
    channel (loop at a time, broken at the base's actuation input) the phase margin and the
    gain margins (a negative one: the gain may shrink by that much)."""
    rows = margins_rows(margins)
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def plot_margins_table(
    margins: Mapping[str, Mapping[str, LoopMargins]],
    *,
    title: str = "Base loop margins (loop at a time, broken at the actuation input)",
) -> Figure:
    """:func:`margins_table` drawn as a figure (a table, no axes)."""
    rows = margins_rows(margins)
    fig = Figure(figsize=(11.0, 0.9 + 0.35 * len(rows)), layout="constrained")
    ax = fig.subplots()
    ax.axis("off")
    table = ax.table(cellText=rows[1:], colLabels=rows[0], loc="center", cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    table.scale(1.0, 1.4)
    fig.suptitle(title, fontsize="medium")
    return fig
