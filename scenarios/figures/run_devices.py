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
    log_view,
    magnitude,
    metric_mark,
    new_figure,
    run_metrics,
    scenario_config,
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


def _system(res) -> dict:
    """What the run recorded of its system (``manifest["system"]``; ``{}`` when absent)."""
    sysd = res.manifest.get("system")
    return sysd if isinstance(sysd, dict) else {}


def _thruster_settings(res):
    """The thrusters' settings line: each thruster's own thrust and minimum impulse bit
    (their range when they differ), from the run's thruster table."""
    thr = scenario_section(res, "thrusters")
    keys = ("allocator", "mode", "max_thrust", "min_impulse_bit", "pwm")
    rows = [r for r in _system(res).get("thrusters") or [] if isinstance(r, dict)]
    per_unit = {
        k: [r[k] for r in rows]
        for k in ("max_thrust", "min_impulse_bit")
        if all(k in r for r in rows)
    }
    return settings_text(
        res, "thrusters", [k for k in keys if k in thr], per_unit=per_unit, per="per thruster"
    )


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


#: the VSCMG motors' limits in the plant, as [vscmg] and [[vscmg_unit]] name them
_VSCMG_MOTORS = ("gimbal_torque_max", "gimbal_rate_max", "wheel_torque_max", "wheel_speed_max_rpm")


def plot_vscmg(res):
    """Gimbal rates [deg/s], their largest magnitude against the gimbal-rate limit
    (``vscmg.gimbal_rate_limit``, log axis, metric ``peak_gimbal_rate``), and wheel speeds
    [rpm] around their nominal speed.  The title states the steering's limits and the
    motors' limits in the plant (their range "(per unit)" when the units have their own)."""
    t = res.t
    v = scenario_section(res, "vscmg")
    motors = _system(res).get("vscmg_limits") or {}
    settings = [
        settings_text(res, "vscmg", ("gimbal_rate_limit", "wheel_accel_limit", "wheel_speed_rpm")),
        settings_text(
            res, "vscmg", _VSCMG_MOTORS, prefix="motors", per_unit=motors, per="per unit"
        ),
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


def _wheel_limits(res, n):
    """``(max speed [rpm], max torque [N m])``, (n,) each: every wheel's own limits, as the
    run recorded them (``manifest["system"]``), else from its scenario (the ``[[wheel]]``
    rows of a table, the ``[wheels]`` section otherwise); NaN where none is known."""
    w = scenario_section(res, "wheels")
    rows = scenario_config(res).get("wheel") if w.get("layout") == "table" else None
    rows = rows if isinstance(rows, list) and len(rows) == n else []
    out = []
    for recorded, key in (
        ("wheel_max_speed_rpm", "max_speed_rpm"),
        ("wheel_max_torque", "max_torque"),
    ):
        got = _system(res).get(recorded)
        if not (isinstance(got, list) and len(got) == n):
            given = [r.get(key) if isinstance(r, dict) else None for r in rows]
            got = given if rows and None not in given else [w.get(key, np.nan)] * n
        out.append(np.array(got, float))
    return out[0], out[1]


def _speed_limits(ax, t, speed, limits, w, peak, su):
    """The wheels' largest |speed| (log axis) against the speed limit (one line when every
    wheel has the same, else each wheel's |speed| against its own in its colour) and the
    momentum-dumping thresholds (fractions of each wheel's limit); the peak's share of the
    limit above the panel."""
    mag = np.abs(speed)
    dumping = (
        [(k, what) for k, what in _DUMPING if k in w] if w.get("desaturation_gain", 0) > 0 else []
    )
    one = limits.size == 0 or np.all(limits == limits[0])
    if one:
        lines = []
        if limits.size and np.isfinite(limits[0]):
            lim = float(limits[0])
            lines.append((lim, f"speed limit {format_number(lim)} {su}"))
            for key, what in dumping:
                level = float(w[key]) * lim
                lines.append((level, f"{what} {format_number(level)} {su}"))
        device_limit(
            ax,
            t,
            mag.max(axis=1) if mag.size else np.zeros(len(t)),
            limits=lines,
            value=peak,
            value_text=f"peak_rw_speed = {format_number(peak or 0)} {su}",
            what="largest |wheel speed|",
            unit=su,
        )
        # the dumping thresholds reuse the limit's dotted style: tell them apart by level
        for ln in ax.get_lines():
            if ln.get_gid() == "limit" and not ln.get_label().startswith("speed limit"):
                ln.set_linestyle((0, (4, 2)))
                ln.set_color("0.4")
        if lines and peak is not None:
            ax.set_title(
                f"peak {format_number(peak)} {su} (peak_rw_speed) = "
                f"{format_number(100 * peak / lines[0][0], 3)} % of the limit",
                loc="left",
                fontsize="small",
            )
        return
    shown = np.full(len(t), np.nan)
    for i in range(mag.shape[1]):
        style = component_style(i)
        line = magnitude(ax, t, mag[:, i], label=f"|wheel {i + 1}|", style=style)
        shown = np.fmax(shown, line)
        if np.isfinite(limits[i]):
            ax.axhline(
                limits[i],
                **{**LIMIT_STYLE, "color": style["color"]},
                gid="limit",
                label=f"wheel {i + 1} limit {format_number(limits[i])} {su}",
            )
    if peak is not None:
        metric_mark(ax, t, shown, peak, f"peak_rw_speed = {format_number(peak)} {su}")
    log_view(ax, shown, [*limits, peak])
    peaks = mag.max(axis=0) if len(mag) else np.zeros(len(limits))
    share = np.where(np.isfinite(limits), peaks / limits, -np.inf)
    k = int(np.argmax(share))
    text = (
        f"each wheel against its own limit; nearest: wheel {k + 1} at "
        f"{format_number(100 * share[k], 3)} % of {format_number(limits[k])} {su}"
    )
    if dumping:
        text += (
            "; dumping from "
            + " to ".join(f"{format_number(100 * float(w[key]), 3)} %" for key, _ in dumping)
            + " of each limit"
        )
    ax.set_title(text, loc="left", fontsize="small")


#: the momentum-dumping thresholds, fractions of a wheel's speed limit: key, label
_DUMPING = (("desaturation_start", "dumping starts"), ("desaturation_stop", "stops"))


def _torque_limits(ax, torque, limits):
    """Each wheel's motor torque limit (+-): one black line when the wheels share it, else
    a line per wheel in its colour; a limit more than three times the peak torque is not
    drawn (it would flatten the curves) but stated above the panel."""
    tpeak = float(np.abs(torque).max()) if torque.size else 0.0
    known = np.isfinite(limits) & (limits > 0)
    if not known.any():
        return
    one = np.all(limits == limits[0])
    off = []
    for i in np.flatnonzero(known)[:1] if one else np.flatnonzero(known):
        lim = float(limits[i])
        if tpeak < lim / 3.0:
            off.append(lim)
            continue
        color = LIMIT_STYLE["color"] if one else component_style(i)["color"]
        name = "limit" if one else f"wheel {i + 1} limit"
        for sign in (1.0, -1.0):
            ax.axhline(
                sign * lim,
                **{**LIMIT_STYLE, "color": color},
                gid="limit",
                label=f"{name} ±{format_number(lim)} N m" if sign > 0 else "_l",
            )
    if off:
        lo, hi = min(off), max(off)
        span = format_number(lo) if lo == hi else f"{format_number(lo)}–{format_number(hi)}"
        which = "limit" if len(off) == 1 else "limits"
        ax.set_title(
            f"{which} ±{span} N m: off scale (peak {format_number(100 * tpeak / lo, 3)} % of "
            f"{'it' if lo == hi else 'the smallest'})",
            loc="left",
            fontsize="small",
        )


def plot_wheels(res):
    """Reaction-wheel speeds [rpm]; their largest magnitude (log axis) against the speed
    limit and the momentum-dumping thresholds (metric ``peak_rw_speed``); motor torques
    [N m] with their limit; the momentum-dumping torque asked of the thrusters when any.
    Every limit is each wheel's own (a ``[[wheel]]`` table may give each its own): the
    title gives their range when they differ, and each wheel is drawn against its own."""
    t = res.t
    w = scenario_section(res, "wheels")
    dump = np.asarray(res["dump_torque"], float) if "dump_torque" in res else None
    rows = 4 if dump is not None and np.any(dump != 0.0) else 3
    speed, su = display_series(res, "rw_speed", "rad/s", kind="wheel_speed")
    torque = np.asarray(res["rw_torque_cmd"], float)
    max_speed, max_torque = _wheel_limits(res, speed.shape[1])
    per_unit = {
        k: v.tolist()
        for k, v in (("max_speed_rpm", max_speed), ("max_torque", max_torque))
        if v.size and np.all(np.isfinite(v))
    }
    settings = [
        settings_text(
            res,
            "wheels",
            ("max_speed_rpm", "max_torque", "desaturation_gain"),
            per_unit=per_unit,
            per="per wheel",
        ),
        base_gains_text(res, ("rot",)),
    ]
    fig, ax = new_figure(rows, res, "reaction wheels", settings, height=2.0)
    for i in range(speed.shape[1]):
        ax[0].plot(t, speed[:, i], **component_style(i), label=f"wheel {i + 1}")
        ax[2].plot(t, torque[:, i], **component_style(i), label=f"wheel {i + 1}")
    peak = run_metrics(res).get("peak_rw_speed")
    peak = to_display(float(peak), "rad/s", "wheel_speed")[0] if peak is not None else None
    _speed_limits(ax[1], t, speed, max_speed, w, peak, su)
    _torque_limits(ax[2], torque, max_torque)
    ax[0].set_ylabel(f"wheel speed [{su}]")
    ax[1].set_ylabel(f"|wheel speed| [{su}]")
    ax[2].set_ylabel("motor torque [N m]")
    if rows == 4:
        for i, c in enumerate(XYZ):
            ax[3].plot(t, dump[:, i], **component_style(i), label=f"τ{c}")
        ax[3].set_ylabel("dumping torque\n[N m]")
    return finish_figure(fig, ax, res)
