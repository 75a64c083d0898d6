"""The base's figures of a closed-loop run: disturbance rejection (the base's errors against
their requirements, the arm's reaction as the plant applied it and as the law planned it)
and the wrench balance on the base (the arm's applied reaction against what each actuator
delivered)."""

from __future__ import annotations

import numpy as np

from .common import (
    LIMIT_STYLE,
    XYZ,
    base_gains_text,
    component_style,
    display_series,
    finish_figure,
    legend,
    metric_unit,
    new_figure,
    required_magnitude,
    requirement_limits,
    scenario_section,
)
from .recorded import recorded_sizes
from .units import format_number, to_display

__all__ = [
    "plot_disturbance_rejection",
    "plot_wrench_balance",
    "actuator_wrenches",
    "moving_mean",
    "reactions",
    "PLANNED_STYLE",
]


def reactions(res):
    """``(applied, planned)`` (N, 6) ``[f, tau]`` [N, N m]: the arm's reaction on the base
    as the plant applied it (``arm_reaction_applied``; None for a result that does not
    record it) and as the law planned it (``arm_reaction``)."""
    planned = np.asarray(res["arm_reaction"], float)
    applied = res["arm_reaction_applied"] if "arm_reaction_applied" in res else None
    return (None if applied is None else np.asarray(applied, float)), planned


#: the planned reaction with the applied one: thin, dashed, drawn over it (the applied one
#: moves with the thrusters' pulses and would hide it)
PLANNED_STYLE = {"ls": (0, (4, 2)), "lw": 0.9, "zorder": 2.5}


def plot_disturbance_rejection(res):
    """The base's errors against their requirements, and the arm's reaction on the base.

    Panels: the largest axis |position error| [mm] and the attitude error angle [deg] on
    log axes with the requirements (``base_pos_err_max``, ``base_att_err_max``) and the
    metrics' values; the arm's reaction force [N] and torque [N m] on the base, as the
    plant applied it (``arm_reaction_applied``, the components' styles) and as the law
    planned it (``arm_reaction``, thin dashed black lines over them; a result without the
    applied one shows the planned one alone).  A system without an arm has the first two
    panels only.
    """
    t = res.t
    armless = recorded_sizes(res).n == 0  # no arm: no reaction to show
    fig, ax = new_figure(
        2 if armless else 4, res, "base disturbance rejection", [base_gains_text(res)],
        height=1.9,
    )  # fmt: skip
    pos, pu = display_series(res, "base_pos_err", "m")
    att, au = display_series(res, "base_att_err", "rad")
    applied, planned = reactions(res)
    required_magnitude(
        ax[0],
        t,
        np.abs(pos).max(axis=1),
        res=res,
        metric="base_pos_err_max",
        what="largest axis |error|",
        unit=pu,
    )
    required_magnitude(
        ax[1],
        t,
        np.linalg.norm(att, axis=1),
        res=res,
        metric="base_att_err_max",
        what="error angle",
        unit=au,
    )
    ax[0].set_ylabel(f"base position\nerror [{pu}]")
    ax[1].set_ylabel(f"base attitude\nerror [{au}]")
    if armless:
        return finish_figure(fig, ax, res)
    shown = planned if applied is None else applied
    which = "planned" if applied is None else "applied"
    for row, (name, off) in ((2, ("f", 0)), (3, ("τ", 3))):
        for i, c in enumerate(XYZ):
            style = component_style(i, lw=1.3 if applied is None else 1.5)
            ax[row].plot(t, shown[:, off + i], **style, label=f"{name}{c} ({which})")
        for i in range(3 if applied is not None else 0):
            ax[row].plot(
                t,
                planned[:, off + i],
                color="k",
                **PLANNED_STYLE,
                label="(planned), each\ncomponent" if i == 0 else "_planned",
            )
    if applied is not None:
        ax[2].set_title(
            "arm reaction (applied): what the arm's joints transmitted to the base; "
            "(planned): the law's, thin dashed black",
            loc="left",
            fontsize="small",
        )
    ax[2].set_ylabel("arm reaction\nforce [N]")
    ax[3].set_ylabel("arm reaction\ntorque [N m]")
    return finish_figure(fig, ax, res)


def moving_mean(x, n):
    """Centred mean over ``n`` samples along axis 0 (fewer at the ends); x (n_t,) or
    (n_t, m)."""
    x = np.asarray(x, float)
    n = min(n, len(x) - (1 - len(x) % 2))  # no wider than x (odd): 'same' keeps len(x)
    if n <= 1 or len(x) < 2:
        return x
    k = np.ones(n)
    num = np.apply_along_axis(lambda c: np.convolve(c, k, mode="same"), 0, x)
    den = np.convolve(np.ones(len(x)), k, mode="same")
    return num / (den[:, None] if x.ndim == 2 else den)


def _pad_torque(tau):
    tau = np.asarray(tau, float)
    return np.hstack([np.zeros_like(tau), tau])


def _columns(res, name):
    return np.asarray(res[name]).shape[1] if name in res and np.ndim(res[name]) == 2 else 0


def actuator_wrenches(res):
    """The wrenches [f, τ] (N, 6) [N, N m] on the base, base axes, other than the arm's.

    Returns a list of ``(label, wrench)``: thrusters (the delivered mean over each period,
    ``wrench_thr_true``, else ``wrench_thr``), VSCMGs (``vscmg_torque_cmd −
    vscmg_torque_err``: asked minus what the steering could not deliver), reaction wheels
    (what the flight software asked of them, ``vscmg_torque_cmd`` — plus
    ``vscmg_torque_err`` when a VSCMG cluster is present — minus ``rw_torque_err``) and
    the scenario's constant disturbance when not zero.  Devices absent from the run are
    left out.
    """
    out = []
    n = len(res.t)
    if _columns(res, "thrust_cmd"):
        name = "wrench_thr_true" if "wrench_thr_true" in res else "wrench_thr"
        out.append(("thrusters (delivered)", np.asarray(res[name], float)))
    K, W = _columns(res, "gimbal_rate"), _columns(res, "rw_speed")
    if K or W:
        asked = np.asarray(res["vscmg_torque_cmd"], float)
        err = np.asarray(res["vscmg_torque_err"], float)
        if K:
            out.append(("VSCMGs (asked − steering error)", _pad_torque(asked - err)))
        if W:
            # flight.FlightSoftware.tick asks the wheels for this torque
            wanted = asked + err if K else asked
            out.append(("wheels (asked − shortfall)", _pad_torque(wanted - res["rw_torque_err"])))
    dist = scenario_section(res, "disturbance")
    d6 = np.r_[dist.get("force", [0.0] * 3), dist.get("torque", [0.0] * 3)].astype(float)
    if np.any(d6 != 0.0):
        out.append(("disturbance (constant)", np.tile(d6, (n, 1))))
    return out


def plot_wrench_balance(res):
    """Rejection shown directly: the arm's reaction on the base against what the actuators
    delivered, the residual the base felt, and the base's error, per axis.

    Rows: force [N], torque [N m] (the reaction as the plant applied it, thick black, and
    as the law planned it, thin dashed pink; each actuator's wrench and the residual ``applied
    reaction + actuators``, averaged over 0.1 s since pulsed thrusters deliver their
    force in impulses; the residual per control tick in light grey), the base position
    error [mm] and attitude error [deg] (rotation vector).  Columns: x, y, z (base axes).
    """
    t = res.t
    period = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
    n = max(1, min(int(round(0.2 / period)) | 1, len(t) - (1 - len(t) % 2)))
    window = f"{n} ticks ({format_number(n * period)} s)"
    applied, planned = reactions(res)
    react = planned if applied is None else applied
    which = "planned" if applied is None else "applied"
    parts = actuator_wrenches(res)
    residual = react + sum((w for _, w in parts), np.zeros_like(react))
    dist = scenario_section(res, "disturbance")
    noise = dist.get("force_noise_std", 0.0) or dist.get("torque_noise_std", 0.0)
    settings = [
        base_gains_text(res),
        f"actuator lines and residual: mean over {window}; residual = arm reaction ({which}) "
        "+ actuators" + ("; disturbance noise not recorded, not included" if noise else ""),
    ]
    fig, ax = new_figure(
        4,
        res,
        "wrench balance on the base: arm reaction vs actuators",
        settings,
        height=2.0,
        width=13.0,
        cols=3,
        sharey="row",
    )
    pos, pu = display_series(res, "base_pos_err", "m")
    att, au = display_series(res, "base_att_err", "rad")
    styles = [  # thrusters: solid with squares (a dashed line on a stepped signal smears)
        {"color": "C0", "ls": "-", "lw": 1.2, "marker": "s", "ms": 3.5},
        {"color": "C1", "ls": "-.", "lw": 1.4},
        {"color": "C2", "ls": (0, (5, 1, 1, 1, 1, 1)), "lw": 1.4},
        {"color": "C4", "ls": (0, (8, 2)), "lw": 1.4},
    ]
    every = max(1, len(t) // 30)
    for j, c in enumerate(XYZ):
        last = j == 2
        for row, off in ((0, 0), (1, 3)):
            a = ax[row, j]
            a.plot(
                t,
                residual[:, off + j],
                color="0.85",
                lw=0.6,
                label="residual per tick\n(pulsed thrust)" if last else "_r",
            )
            a.plot(
                t,
                react[:, off + j],
                color="k",
                lw=2.0,
                label=f"arm reaction ({which})" if last else "_a",
            )
            if applied is not None:
                a.plot(
                    t,
                    planned[:, off + j],
                    color="C6",  # seen over the applied one's black
                    **PLANNED_STYLE,
                    label="arm reaction (planned)" if last else "_a",
                )
            for (label, w), st in zip(parts, styles, strict=False):
                if "marker" in st:
                    st = dict(st, markevery=(every // 2, every))
                a.plot(t, moving_mean(w[:, off + j], n), **st, label=label if last else "_p")
            a.plot(
                t,
                moving_mean(residual[:, off + j], n),
                color="C3",
                lw=1.3,
                marker="o",
                ms=3.5,
                markevery=every,
                label=f"residual, mean over\n{window}" if last else "_m",
            )
        ax[0, j].set_title(f"{c} (base axes)", fontsize="medium")
        ax[2, j].plot(t, pos[:, j], color="C0", lw=1.3, label="position error" if last else "_e")
        ax[3, j].plot(
            t, att[:, j], color="C1", ls="--", lw=1.3, label="attitude error" if last else "_e"
        )
    limits = requirement_limits(res)
    for row, metric, unit, data in (
        (2, "base_pos_err_max", pu, pos),
        (3, "base_att_err_max", au, att),
    ):
        if metric not in limits:
            continue
        lim = to_display(limits[metric], metric_unit(metric))[0]
        peak = float(np.nanmax(np.abs(data))) if data.size else 0.0
        if peak >= lim / 3.0:
            for j in range(3):
                for sign in (1.0, -1.0):
                    ax[row, j].axhline(
                        sign * lim,
                        **LIMIT_STYLE,
                        gid="requirement",
                        label=f"requirement ±{format_number(lim)} {unit}"
                        if j == 2 and sign > 0
                        else "_q",
                    )
            note = f"requirement ±{format_number(lim)} {unit} (dotted)"
        else:
            note = (
                f"requirement ±{format_number(lim)} {unit}: off scale, the peak "
                f"{format_number(peak)} {unit} is {format_number(100 * peak / lim, 2)} % of it"
            )
        ax[row, 0].set_title(note, loc="left", fontsize="small")
    ax[0, 0].set_ylabel("force [N]")
    ax[1, 0].set_ylabel("torque [N m]")
    ax[2, 0].set_ylabel(f"base position\nerror [{pu}]")
    ax[3, 0].set_ylabel(f"base attitude\nerror [{au}]")
    finish_figure(fig, ax, res, legends=False, label_ax=ax[0, 2])
    for row in (0, 2, 3):  # the torque row draws its lines as the force row does
        legend(ax[row, 2])
    return fig
