"""Plots of a closed-loop run, readable on a printed page (units, legends, shared time axes).

Each function takes :class:`dqspace.scenarios.results.Results` and returns a
matplotlib Figure; :func:`plot_all` writes every figure as PNG and PDF.
Series used (see :mod:`dqspace.scenarios.runner`): ``base_pos_err`` [m],
``base_att_err`` [rad], ``arm_reaction`` [N, N m], ``ee_pos``/``ee_ref`` [m],
``ee_err`` [m], ``thrust_cmd`` [N], ``thrust_on`` [s], ``gimbal_rate``
[rad/s], ``wheel_speed`` [rad/s], ``det_GGt``, ``det_CCt``.
"""

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

__all__ = [
    "plot_disturbance_rejection",
    "plot_tracking",
    "plot_thrusters",
    "plot_vscmg",
    "plot_singularity",
    "plot_all",
]

_XYZ = ("x", "y", "z")


def _fig(rows, title, height=2.1):
    # a bare Figure (no pyplot): no backend is chosen or changed, so the functions work
    # headless and in notebooks alike (Jupyter displays a returned Figure)
    fig = Figure(figsize=(8.0, 0.8 + height * rows))
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)
    fig.suptitle(title)
    return fig, axes[:, 0]


def _finish(fig, axes):
    axes[-1].set_xlabel("time [s]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def plot_disturbance_rejection(res):
    """Base position and attitude errors vs time, with the arm's reaction wrench on the base."""
    t = res.t
    fig, ax = _fig(4, "Base disturbance rejection")
    for i, c in enumerate(_XYZ):
        ax[0].plot(t, 1e3 * res["base_pos_err"][:, i], label=c)
        ax[1].plot(t, np.degrees(res["base_att_err"][:, i]), label=c)
        ax[2].plot(t, res["arm_reaction"][:, i], label=f"f{c}")
        ax[3].plot(t, res["arm_reaction"][:, 3 + i], label=f"τ{c}")
    ax[0].set_ylabel("position error [mm]")
    ax[1].set_ylabel("attitude error [deg]")
    ax[2].set_ylabel("arm reaction\nforce [N]")
    ax[3].set_ylabel("arm reaction\ntorque [N m]")
    for a in ax:
        a.legend(loc="upper right", ncol=3, fontsize="small")
    return _finish(fig, ax)


def plot_tracking(res):
    """End-effector position vs its reference (base frame) and the tracking error."""
    t = res.t
    fig, ax = _fig(4, "End-effector tracking (base frame)")
    for i, c in enumerate(_XYZ):
        ax[i].plot(t, res["ee_ref"][:, i], "k--", lw=1.0, label="reference")
        ax[i].plot(t, res["ee_pos"][:, i], lw=1.2, label="actual")
        ax[i].set_ylabel(f"{c} [m]")
        ax[i].legend(loc="upper right", fontsize="small")
    ax[3].semilogy(t, np.maximum(1e3 * np.linalg.norm(res["ee_err"], axis=1), 1e-6))
    ax[3].set_ylabel("|error| [mm]")
    return _finish(fig, ax)


def plot_thrusters(res):
    """Thruster commands [N] and the firing sequence (on-time per control period)."""
    t = res.t
    cmd, on = res["thrust_cmd"], res["thrust_on"]
    S = cmd.shape[1]
    fig, ax = _fig(2, "Thrusters", height=2.8)
    im = ax[0].imshow(
        cmd.T,
        aspect="auto",
        origin="lower",
        interpolation="nearest",
        extent=(t[0], t[-1], -0.5, S - 0.5),
        cmap="viridis",
    )
    ax[0].set_ylabel("thruster")
    period = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
    duty = on / period
    peak = max(float(duty.max()), 1e-12)
    for i in range(S):
        fired = duty[:, i] > 0
        h = 0.45 * duty[fired, i] / peak
        ax[1].vlines(t[fired], i - h, i + h, lw=0.8)
    ax[1].set_ylim(-0.5, S - 0.5)
    ax[1].set_ylabel(f"firing (bar: duty,\nfull = {100 * peak:.0f} %)")
    _finish(fig, ax)
    fig.colorbar(im, ax=list(ax), label="command [N]", pad=0.01, fraction=0.04)
    return fig


def plot_vscmg(res):
    """Gimbal rates [deg/s] and wheel speeds [rpm]."""
    t = res.t
    fig, ax = _fig(2, "VSCMG cluster")
    K = res["gimbal_rate"].shape[1]
    for i in range(K):
        ax[0].plot(t, np.degrees(res["gimbal_rate"][:, i]), label=f"gimbal {i + 1}")
        ax[1].plot(t, res["wheel_speed"][:, i] * 60.0 / (2 * np.pi), label=f"wheel {i + 1}")
    ax[0].set_ylabel("gimbal rate [deg/s]")
    ax[1].set_ylabel("wheel speed [rpm]")
    for a in ax:
        a.legend(loc="upper right", ncol=4, fontsize="small")
    return _finish(fig, ax)


def plot_singularity(res):
    """Singularity measures det(G G^T) (whole VSCMG) and det(C C^T) (gimbal mode only)."""
    t = res.t
    fig, ax = _fig(1, "VSCMG singularity measure", height=2.6)
    ax[0].semilogy(t, res["det_GGt"], label="det(G Gᵀ)")
    if "det_CCt" in res:
        ax[0].semilogy(t, np.maximum(res["det_CCt"], 1e-300), label="det(C Cᵀ) (gimbals only)")
    ax[0].set_ylabel("determinant")
    ax[0].legend(loc="lower right", fontsize="small")
    return _finish(fig, ax)


_ALL = {
    "disturbance_rejection": (plot_disturbance_rejection, ("base_pos_err", "arm_reaction")),
    "tracking": (plot_tracking, ("ee_pos", "ee_ref")),
    "thrusters": (plot_thrusters, ("thrust_cmd", "thrust_on")),
    "vscmg": (plot_vscmg, ("gimbal_rate", "wheel_speed")),
    "singularity": (plot_singularity, ("det_GGt",)),
}


def plot_all(res, directory, formats=("png", "pdf")):
    """Write every figure whose series exist as ``<name>.<fmt>``; returns the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, (fn, needs) in _ALL.items():
        if not all(k in res for k in needs):
            continue
        fig = fn(res)
        for fmt in formats:
            p = directory / f"{name}.{fmt}"
            fig.savefig(p, dpi=150, bbox_inches="tight")
            paths.append(p)
    return paths
