"""The actuators' figures of a closed-loop run: thrusters (commands and firing), the VSCMG
cluster (gimbal rates, wheel speeds) and the reaction wheels (speeds, torques, momentum
dumping), each against its limits."""

from __future__ import annotations

import numpy as np

from .common import (
    LIMIT_STYLE,
    XYZ,
    base_gains_text,
    component_style,
    device_limit,
    display_series,
    finish_figure,
    new_figure,
    run_metrics,
    scenario_section,
    settings_text,
)
from .units import format_number, to_display

__all__ = ["plot_thrusters", "plot_vscmg", "plot_wheels"]


def _thruster_names(res, S):
    rows = (res.manifest.get("system") or {}).get("thrusters") or []
    names = [str(r.get("name", "")) if isinstance(r, dict) else "" for r in rows]
    if len(names) != S:
        names = [""] * S
    return [f"{i} {n}".strip() for i, n in enumerate(names)]


def _thruster_settings(res):
    thr = scenario_section(res, "thrusters")
    keys = ("allocator", "mode", "max_thrust", "min_impulse_bit", "pwm")
    return settings_text(res, "thrusters", [k for k in keys if k in thr])


def plot_thrusters(res):
    """Thruster commands [N] (every thruster labelled with its index and name) and the
    firing sequence."""
    t = res.t
    cmd, on = np.asarray(res["thrust_cmd"], float), np.asarray(res["thrust_on"], float)
    S = cmd.shape[1]
    fig, ax = new_figure(
        2,
        res,
        "thrusters",
        [_thruster_settings(res), base_gains_text(res, ("trans",))],
        height=max(2.6, 0.24 * S),
    )
    t_last = t[-1] if len(t) > 1 and t[-1] > t[0] else (t[0] if len(t) else 0.0) + 1.0
    im = ax[0].imshow(
        cmd.T,
        aspect="auto",
        origin="lower",
        interpolation="nearest",
        extent=(t[0] if len(t) else 0.0, t_last, -0.5, S - 0.5),
        cmap="viridis",  # lightness increases monotonically: reads in greyscale
    )
    fig.colorbar(
        im,
        ax=ax[0],
        location="top",
        label="allocated thrust command [N]",
        fraction=0.08,
        pad=0.02,
        aspect=50,
    )
    period = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
    peak = float(on.max()) if on.size else 0.0
    for i in range(S):
        fired = on[:, i] > 0
        h = 0.45 * on[fired, i] / peak if peak > 0 else np.zeros(0)
        ax[1].vlines(t[fired], i - h, i + h, lw=0.8, color="k")
    ax[1].set_ylim(-0.5, S - 0.5)
    ax[1].set_title(
        "firing: one bar per control period with a pulse; bar height ∝ on-time, "
        f"full height = {format_number(1e3 * peak)} ms on in a {format_number(1e3 * period)} ms "
        f"period ({format_number(100 * peak / period, 3)} % duty)"
        if peak > 0
        else "firing: no pulse",
        loc="left",
        fontsize="small",
    )
    _mark_faulty_thrusters(res, ax, S)
    names = _thruster_names(res, S)
    for a, what in zip(ax, ("command", "pulses"), strict=True):
        a.set_yticks(range(S), names, fontsize="small" if S > 8 else None)
        a.set_ylabel(f"thruster ({what}) [-]")
    return finish_figure(fig, ax, res)


def _mark_faulty_thrusters(res, axes, S):
    """A red dash-dot line along the row of each faulted thruster, from its fault on."""
    t_end = float(res.t[-1]) if len(res.t) else 0.0
    label = "faulted thruster"
    for e in res.manifest.get("events") or []:
        row = e.get("thruster") if isinstance(e, dict) and "t" in e else None
        if not isinstance(row, (int, np.integer)) or not 0 <= row < S:
            continue
        for k, ax in enumerate(axes):
            style = {"colors": "C3", "linestyles": "-.", "lw": 2.0, "gid": "fault_row"}
            ax.hlines(row, float(e["t"]), t_end, **style, label=label if k == 0 else "_fault")
        label = "_fault"


def plot_vscmg(res):
    """Gimbal rates [deg/s], their largest magnitude against the gimbal-rate limit
    (``vscmg.gimbal_rate_limit``, log axis, metric ``peak_gimbal_rate``), and wheel speeds
    [rpm] around their nominal speed."""
    t = res.t
    v = scenario_section(res, "vscmg")
    settings = [
        settings_text(res, "vscmg", ("gimbal_rate_limit", "wheel_accel_limit", "wheel_speed_rpm")),
        base_gains_text(res, ("rot",)),
    ]
    fig, ax = new_figure(3, res, "VSCMG cluster", settings, height=2.0)
    rate, ru = display_series(res, "gimbal_rate", "rad/s", kind="gimbal_rate")
    speed, su = display_series(res, "wheel_speed", "rad/s", kind="wheel_speed")
    for i in range(rate.shape[1]):
        ax[0].plot(t, rate[:, i], **component_style(i), label=f"gimbal {i + 1}")
        ax[2].plot(t, speed[:, i], **component_style(i), label=f"wheel {i + 1}")
    limits = []
    if "gimbal_rate_limit" in v:
        lim = to_display(float(v["gimbal_rate_limit"]), "rad/s", "gimbal_rate")[0]
        limits.append((lim, f"limit {format_number(lim)} {ru}"))
    peak = run_metrics(res).get("peak_gimbal_rate")
    peak = to_display(float(peak), "rad/s", "gimbal_rate")[0] if peak is not None else None
    device_limit(
        ax[1],
        t,
        np.abs(rate).max(axis=1) if rate.size else np.zeros(len(t)),
        limits=limits,
        value=peak,
        value_text=f"peak_gimbal_rate = {format_number(peak or 0)} {ru}",
        what="largest |gimbal rate|",
        unit=ru,
    )
    if limits and peak is not None:
        ax[1].set_title(
            f"peak {format_number(peak)} {ru} (peak_gimbal_rate) = "
            f"{format_number(100 * peak / limits[0][0], 3)} % of the limit {limits[0][1][6:]}",
            loc="left",
            fontsize="small",
        )
    if "wheel_speed_rpm" in v:
        ax[2].axhline(
            float(v["wheel_speed_rpm"]),
            color="0.3",
            ls=(0, (8, 2)),
            lw=1.0,
            label=f"nominal {format_number(v['wheel_speed_rpm'])} {su}",
            gid="nominal",
        )
    ax[0].set_ylabel(f"gimbal rate [{ru}]")
    ax[1].set_ylabel(f"|gimbal rate| [{ru}]")
    ax[2].set_ylabel(f"wheel speed [{su}]")
    return finish_figure(fig, ax, res)


def plot_wheels(res):
    """Reaction-wheel speeds [rpm]; their largest magnitude (log axis) against the speed
    limit and the momentum-dumping thresholds (metric ``peak_rw_speed``); motor torques
    [N m] with their limit; the momentum-dumping torque asked of the thrusters when any."""
    t = res.t
    w = scenario_section(res, "wheels")
    dump = np.asarray(res["dump_torque"], float) if "dump_torque" in res else None
    rows = 4 if dump is not None and np.any(dump != 0.0) else 3
    settings = [
        settings_text(res, "wheels", ("max_speed_rpm", "max_torque", "desaturation_gain")),
        base_gains_text(res, ("rot",)),
    ]
    fig, ax = new_figure(rows, res, "reaction wheels", settings, height=2.0)
    speed, su = display_series(res, "rw_speed", "rad/s", kind="wheel_speed")
    torque = np.asarray(res["rw_torque_cmd"], float)
    for i in range(speed.shape[1]):
        ax[0].plot(t, speed[:, i], **component_style(i), label=f"wheel {i + 1}")
        ax[2].plot(t, torque[:, i], **component_style(i), label=f"wheel {i + 1}")
    sys_limits = (res.manifest.get("system") or {}).get("wheel_max_speed_rpm") or []
    limit = min(sys_limits) if sys_limits else w.get("max_speed_rpm")
    limits = []
    if limit:
        limits.append((float(limit), f"speed limit {format_number(limit)} {su}"))
        if w.get("desaturation_gain", 0.0) > 0:
            for key, what in (
                ("desaturation_start", "dumping starts"),
                ("desaturation_stop", "stops"),
            ):
                if key in w:
                    level = float(w[key]) * float(limit)
                    limits.append((level, f"{what} {format_number(level)} {su}"))
    peak = run_metrics(res).get("peak_rw_speed")
    peak = to_display(float(peak), "rad/s", "wheel_speed")[0] if peak is not None else None
    shown = device_limit(
        ax[1],
        t,
        np.abs(speed).max(axis=1) if speed.size else np.zeros(len(t)),
        limits=limits,
        value=peak,
        value_text=f"peak_rw_speed = {format_number(peak or 0)} {su}",
        what="largest |wheel speed|",
        unit=su,
    )
    # the dumping thresholds reuse the limit's dotted style: tell them apart by their level
    for ln in ax[1].get_lines():
        if ln.get_gid() == "limit" and not ln.get_label().startswith("speed limit"):
            ln.set_linestyle((0, (4, 2)))
            ln.set_color("0.4")
    if limit and peak is not None:
        ax[1].set_title(
            f"peak {format_number(peak)} {su} (peak_rw_speed) = "
            f"{format_number(100 * peak / float(limit), 3)} % of the limit",
            loc="left",
            fontsize="small",
        )
    del shown
    max_torque = w.get("max_torque")
    if max_torque:
        tpeak = float(np.abs(torque).max()) if torque.size else 0.0
        if tpeak >= max_torque / 3.0:
            for sign in (1.0, -1.0):
                ax[2].axhline(
                    sign * max_torque,
                    **LIMIT_STYLE,
                    gid="limit",
                    label=f"limit ±{format_number(max_torque)} N m" if sign > 0 else "_l",
                )
        else:
            ax[2].set_title(
                f"limit ±{format_number(max_torque)} N m: off scale (peak "
                f"{format_number(100 * tpeak / max_torque, 3)} % of it)",
                loc="left",
                fontsize="small",
            )
    ax[0].set_ylabel(f"wheel speed [{su}]")
    ax[1].set_ylabel(f"|wheel speed| [{su}]")
    ax[2].set_ylabel("motor torque [N m]")
    if rows == 4:
        for i, c in enumerate(XYZ):
            ax[3].plot(t, dump[:, i], **component_style(i), label=f"τ{c}")
        ax[3].set_ylabel("dumping torque\n[N m]")
    return finish_figure(fig, ax, res)
