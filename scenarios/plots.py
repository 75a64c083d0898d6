"""Figures of a run, readable on a printed page and in greyscale.

Each ``plot_*`` function takes :class:`dqspace.scenarios.results.Results` and returns a
matplotlib Figure (no pyplot: headless and notebook alike); :func:`plot_all` writes the
figures of a result (closed loop: five; open loop: the dynamics check).

Conventions (:mod:`dqspace.scenarios.units`): values in display units (mm, deg,
deg/s, rpm, N, N m) with the unit in brackets on every axis; no offset or
multiplier notation on any axis; legends outside the axes, on the right; the
components of a vector differ in line style as well as colour.  Each title names
the scenario and, unless the run completed, its status (``FAILED at t = 3.2 s``,
``interrupted``, ``degraded``); the manifest's events (thruster faults) are dash-dot
vertical lines labelled in the first panel's legend.

Series used (see :mod:`dqspace.scenarios.runner`; SI): closed loop ``base_pos_err``
[m], ``base_att_err`` [rad], ``arm_reaction`` [N, N m], ``ee_pos``/``ee_ref``/``ee_err``
[m], ``thrust_cmd`` [N], ``thrust_on`` [s], ``gimbal_rate`` [rad/s], ``wheel_speed``
[rad/s], ``det_GGt``, ``det_CCt``; open loop ``ee_pos_I`` [m] and, when recorded,
``ee_ref_I`` [m] (else recomputed by
:func:`dqspace.scenarios.dynamics_check.reference_ee_positions`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import ScalarFormatter

from .units import format_number, format_quantity, to_display

if TYPE_CHECKING:
    from .results import Results

__all__ = [
    "REQUIREMENTS",
    "plot_disturbance_rejection",
    "plot_tracking",
    "plot_thrusters",
    "plot_vscmg",
    "plot_singularity",
    "plot_dynamics_check",
    "plot_all",
]

#: default requirements (metric name -> limit in the metric's unit, see ``metrics.METRICS``);
#: a scenario's ``[requirements]`` table, when it has one, overrides them by name
REQUIREMENTS = {"base_pos_err_max": 1e-3, "base_att_err_max": 0.05}  # [m], [deg]

_XYZ = ("x", "y", "z")
_STYLES = ("-", "--", ":", "-.")
_EVENT_STYLE = {"color": "0.25", "ls": (0, (6, 2, 1, 2)), "lw": 1.0}


# ------------------------------------------------------------------ helpers


def _style(i):
    """Colour and line style of component i (distinct in greyscale for i < 4)."""
    return {"color": f"C{i % 10}", "ls": _STYLES[i % len(_STYLES)], "lw": 1.3}


def _scenario(res):
    sc = res.manifest.get("scenario") or {}
    return sc if isinstance(sc, dict) else {}


def _status_text(res):
    """'' for a complete run, else what went wrong (``FAILED at t = 3.2 s: ...``)."""
    m = res.manifest
    status = m.get("status", "complete")
    t_end = float(res.t[-1]) if len(res.t) else 0.0
    at = f"at t = {format_quantity(t_end, 's')}"
    message = " ".join(str(m.get("message") or "").split())
    if len(message) > 70:
        message = message[:69] + "…"
    if status == "failed":
        return f"FAILED {at}" + (f": {message}" if message else "")
    if status == "interrupted":
        return f"interrupted {at}"
    if status == "running":
        return f"incomplete (running, {at})"
    if status != "complete":
        return f"status {status!r} {at}"
    degraded = m.get("degraded") or []
    if degraded:
        return f"degraded: {degraded[0]}" + (
            f" (+{len(degraded) - 1} more)" if len(degraded) > 1 else ""
        )
    return ""


def _title(res, what):
    name = (_scenario(res).get("scenario") or {}).get("name", "unnamed scenario")
    status = _status_text(res)
    return f"{name}: {what}" + (f"\n{status}" if status else "")


def _events(res):
    """(t [s], label) of the manifest's events that have a time and a name."""
    out = []
    for e in res.manifest.get("events") or []:
        if not isinstance(e, dict) or "t" not in e or "event" not in e:
            continue
        out.append((float(e["t"]), f"{_event_name(e)}\nat t = {format_quantity(e['t'], 's')}"))
    return out


def _event_name(e):
    """``thruster fault: thruster 1 stuck_on`` (a kind by its value, a unit scale omitted)."""
    parts = []
    for k, v in e.items():
        if k in ("t", "event", "time") or (k == "scale" and v == 1.0):
            continue
        parts.append(str(v) if k == "kind" else f"{k} {v}")
    return f"{e['event']}: {' '.join(parts)}" if parts else str(e["event"])


def _fig(rows, res, what, height=2.0, width=9.0):
    # a bare Figure (no pyplot): no backend is chosen or changed; constrained layout keeps
    # the outside legends and every label inside the canvas
    fig = Figure(figsize=(width, 0.9 + height * rows), layout="constrained")
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    fig.suptitle(_title(res, what))
    return fig, axes


def _mark_events(res, axes):
    for t, label in _events(res):
        for k, ax in enumerate(axes):
            ax.axvline(t, **_EVENT_STYLE, label=label if k == 0 else "_event", gid="event")


def _legend(ax):
    """A legend outside the axes, on the right (never over the data)."""
    if any(not h.get_label().startswith("_") for h in ax.get_lines() + ax.collections):
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small")


def _plain_ticks(fig):
    """No offset (``+3e3``) and no multiplier (``1e-5``) on any linear axis."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            fmt = axis.get_major_formatter()
            if isinstance(fmt, ScalarFormatter):
                fmt.set_useOffset(False)
                fmt.set_scientific(False)


def _finish(fig, axes, res):
    _mark_events(res, axes)
    axes[-1].set_xlabel("time [s]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        _legend(ax)
    _plain_ticks(fig)
    return fig


def _display(res, name, si_unit, kind=None):
    return to_display(np.asarray(res[name], float), si_unit, kind)


def _reference_markers(ax, t, y, label):
    """A reference as ~40 open black circles over the actual line (both stay visible)."""
    every = max(1, len(t) // 40)
    ax.plot(t, y, ls="none", marker="o", ms=4, mfc="none", mec="k", markevery=every, label=label)


def _superscript(n):
    return str(n).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _log_floor(ax, values, decades):
    """Lower the log axis to at most ``decades`` below the peak (a view limit, not a clip)."""
    v = values[np.isfinite(values) & (values > 0)]
    if v.size:
        ax.set_ylim(bottom=max(float(v.min()), float(v.max()) * 10.0**-decades) / 1.5)


def _metrics(res):
    """The run's metrics (SI): the manifest's, else computed; {} when series are missing."""
    from .metrics import summarize

    m = res.manifest.get("metrics")
    if m:
        return m
    try:
        return summarize(res)
    except (KeyError, ValueError, IndexError):
        return {}


def _requirements(res):
    req = dict(REQUIREMENTS)
    req.update(_scenario(res).get("requirements") or {})
    return req


def _requirement(ax, value, limit, unit, what):
    """Draw ±limit when it is near the data (else say it is off scale); annotate the value."""
    ratio = value / limit if limit > 0 else np.inf
    if ratio > 1.0 / 3.0:  # in view: the data reach a third of it
        label = f"requirement {format_number(limit)} {unit}"
        for sign in (1, -1):
            ax.axhline(sign * limit, color="k", lw=1.0, ls=(0, (1, 1)), label=label)
            label = "_requirement"
        where = ""
    else:
        where = f", {format_number(100 * ratio, 2)} % of it (off scale)"
    verdict = "MET" if value <= limit else "NOT MET"
    ax.set_title(
        f"{what} = {format_number(value)} {unit}; requirement {format_number(limit)} {unit}"
        f" {verdict}{where}",
        loc="left",
        fontsize="small",
    )


# ------------------------------------------------------------------ closed loop


def plot_disturbance_rejection(res):
    """Base position and attitude errors vs time, with the requirements and the arm's
    reaction wrench on the base."""
    t = res.t
    fig, ax = _fig(4, res, "base disturbance rejection")
    pos, pu = _display(res, "base_pos_err", "m")
    att, au = _display(res, "base_att_err", "rad")
    react = np.asarray(res["arm_reaction"], float)
    for i, c in enumerate(_XYZ):
        ax[0].plot(t, pos[:, i], **_style(i), label=c)
        ax[1].plot(t, att[:, i], **_style(i), label=c)
        ax[2].plot(t, react[:, i], **_style(i), label=f"f{c}")
        ax[3].plot(t, react[:, 3 + i], **_style(i), label=f"τ{c}")
    angle = np.linalg.norm(att, axis=1)
    ax[1].plot(t, angle, color="0.5", lw=2.2, alpha=0.7, label="angle |θ|", zorder=1)
    req, m = _requirements(res), _metrics(res)
    if "base_pos_err_max" in m:
        value = to_display(m["base_pos_err_max"], "m")[0]
        limit = to_display(req["base_pos_err_max"], "m")[0]
        _requirement(ax[0], value, limit, pu, "max |error| (any axis)")
    if "base_att_err_max" in m:
        _requirement(ax[1], m["base_att_err_max"], req["base_att_err_max"], au, "max angle")
    ax[0].set_ylabel(f"position error [{pu}]")
    ax[1].set_ylabel(f"attitude error [{au}]\n(rotation vector)")
    ax[2].set_ylabel("arm reaction\nforce [N]")
    ax[3].set_ylabel("arm reaction\ntorque [N m]")
    return _finish(fig, ax, res)


def _task_start(res):
    traj = _scenario(res).get("trajectory") or {}
    return float(traj.get("start_time", 0.0))


def plot_tracking(res):
    """End-effector position and its reference (base frame), the error per axis and its
    magnitude (log scale, from the task's start)."""
    t = res.t
    fig, ax = _fig(5, res, "end-effector tracking (base frame)", height=1.8)
    pos, u = _display(res, "ee_pos", "m")
    ref, _ = _display(res, "ee_ref", "m")
    err, _ = _display(res, "ee_err", "m")
    for i, c in enumerate(_XYZ):
        ax[i].plot(t, pos[:, i], **_style(i), label="actual")
        _reference_markers(ax[i], t, ref[:, i], "reference")
        ax[i].set_ylabel(f"{c} [{u}]")
        ax[3].plot(t, err[:, i], **_style(i), label=c)
    ax[3].set_ylabel(f"error [{u}]")
    t0 = _task_start(res)
    norm = np.linalg.norm(err, axis=1)
    shown = (t >= t0) & (norm > 0)
    ax[4].semilogy(t, np.where(shown, norm, np.nan), color="k", lw=1.2, label="|error|")
    ax[4].set_ylabel(f"|error| [{u}]")
    m = _metrics(res)
    if m.get("ee_max", 0.0) > 0.0:  # 0: the run ended within the transient
        ax[4].set_title(
            f"after the transient: RMS {format_quantity(m['ee_rms'], 'm')}, "
            f"max {format_quantity(m['ee_max'], 'm')} (metrics ee_rms, ee_max)",
            loc="left",
            fontsize="small",
        )
    _log_floor(ax[4], np.where(shown, norm, np.nan), 4)
    for k, a in enumerate(ax):
        line = a.axvline(t0, color="0.5", lw=1.0, ls=":", label="task start" if k == 0 else None)
        line.set_gid("task_start")
    return _finish(fig, ax, res)


def plot_thrusters(res):
    """Thruster commands [N] (every thruster labelled) and the firing sequence."""
    t = res.t
    cmd, on = np.asarray(res["thrust_cmd"], float), np.asarray(res["thrust_on"], float)
    S = cmd.shape[1]
    fig, ax = _fig(2, res, "thrusters", height=max(2.6, 0.22 * S))
    t_last = t[-1] if len(t) > 1 and t[-1] > t[0] else (t[0] if len(t) else 0.0) + 1.0
    im = ax[0].imshow(
        cmd.T,
        aspect="auto",
        origin="lower",
        interpolation="nearest",
        extent=(t[0] if len(t) else 0.0, t_last, -0.5, S - 0.5),
        cmap="viridis",
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
    for a, what in zip(ax, ("command", "pulses"), strict=True):
        a.set_yticks(range(S), [str(i) for i in range(S)], fontsize="small" if S > 8 else None)
        a.set_ylabel(f"thruster ({what}) [-]")
    return _finish(fig, ax, res)


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
    """Gimbal rates [deg/s] and wheel speeds [rpm] of the VSCMG cluster."""
    t = res.t
    fig, ax = _fig(2, res, "VSCMG cluster", height=2.4)
    rate, ru = _display(res, "gimbal_rate", "rad/s", kind="gimbal_rate")
    speed, su = _display(res, "wheel_speed", "rad/s", kind="wheel_speed")
    for i in range(rate.shape[1]):
        ax[0].plot(t, rate[:, i], **_style(i), label=f"gimbal {i + 1}")
        ax[1].plot(t, speed[:, i], **_style(i), label=f"wheel {i + 1}")
    ax[0].set_ylabel(f"gimbal rate [{ru}]")
    ax[1].set_ylabel(f"wheel speed [{su}]")
    if rate.size:
        ax[0].set_title(
            f"peak |gimbal rate| = {format_number(np.abs(rate).max())} {ru}",
            loc="left",
            fontsize="small",
        )
    return _finish(fig, ax, res)


def plot_wheels(res):
    """Reaction-wheel speeds [rpm] (with their limits, from the manifest) and motor torques
    [N m]; the momentum-dumping torque asked of the thrusters when any."""
    t = res.t
    dump = np.asarray(res["dump_torque"], float) if "dump_torque" in res else None
    rows = 3 if dump is not None and np.any(dump != 0.0) else 2
    fig, ax = _fig(rows, res, "Reaction wheels", height=2.4)
    speed, su = _display(res, "rw_speed", "rad/s", kind="wheel_speed")
    torque = np.asarray(res["rw_torque_cmd"], float)
    for i in range(speed.shape[1]):
        ax[0].plot(t, speed[:, i], **_style(i), label=f"wheel {i + 1}")
        ax[1].plot(t, torque[:, i], **_style(i), label=f"wheel {i + 1}")
    limits = (res.manifest.get("system") or {}).get("wheel_max_speed_rpm") or []
    peak = float(np.abs(speed).max()) if speed.size else 0.0
    limit = max(limits) if limits and su == "rpm" else None
    if limit and peak > 0.2 * limit:  # the limit lines only where they do not flatten the data
        for sign in (1.0, -1.0):
            ax[0].axhline(sign * limit, color="0.3", ls="--", lw=1.0, label="_limit")
    ax[0].set_ylabel(f"wheel speed [{su}]")
    ax[1].set_ylabel("motor torque [N m]")
    if rows == 3:
        for i, c in enumerate("xyz"):
            ax[2].plot(t, dump[:, i], **_style(i), label=f"τ_{c}")
        ax[2].set_ylabel("dumping torque\n[N m]")
    if speed.size:
        of = f" (limit {format_number(limit)} {su}, dashed)" if limit and peak > 0.2 * limit else ""
        if limit and not of:
            of = f" (limit {format_number(limit)} {su})"
        ax[0].set_title(
            f"peak |wheel speed| = {format_number(peak)} {su}{of}", loc="left", fontsize="small"
        )
    return _finish(fig, ax, res)


def plot_singularity(res):
    """Singularity measures det(G Gᵀ) (whole VSCMG) and det(C Cᵀ) (gimbals only).

    A linear axis in a power of 10 named in its label (no offset); the title gives the
    smallest value (0 is singular).
    """
    t = res.t
    fig, ax = _fig(1, res, "VSCMG singularity measure", height=2.8)
    det_g = np.asarray(res["det_GGt"], float)
    det_c = np.asarray(res["det_CCt"], float) if "det_CCt" in res else None
    finite = det_g[np.isfinite(det_g)]
    top = float(np.abs(finite).max()) if finite.size else 1.0
    exp3 = 3 * int(np.floor(np.log10(top) / 3)) if top > 0 else 0
    scale = 10.0**exp3
    ax[0].plot(
        t, det_g / scale, **_style(0), label="det(G Gᵀ), unweighted\n(wheel columns in kg m²)"
    )
    if det_c is not None:
        ax[0].plot(t, det_c / scale, **_style(1), label="det(C Cᵀ), gimbals only")
    power = "" if exp3 == 0 else f"10{_superscript(exp3)} "
    ax[0].set_ylabel(f"determinant\n[{power}(N m s)⁶]")
    if finite.size:
        k = int(np.nanargmin(det_g))
        ax[0].set_title(
            f"min det(G Gᵀ) = {format_number(det_g[k])} at t = {format_number(t[k])} s "
            "(0 = singular)",
            loc="left",
            fontsize="small",
        )
    return _finish(fig, ax, res)


# ------------------------------------------------------------------ open loop


def _open_loop_input(res):
    ol = _scenario(res).get("open_loop") or {}
    if not ol:
        return ""
    f = ", ".join(format_number(x) for x in ol.get("base_force_amplitude", ()))
    tq = ", ".join(format_number(x) for x in ol.get("base_torque_amplitude", ()))
    w = format_number(ol.get("frequency", float("nan")))
    return f"base force sin({w} t)·[{f}] N, torque sin({w} t)·[{tq}] N m"


def _integrator_text(res):
    integ = _scenario(res).get("integrator") or {}
    if integ.get("method") == "adaptive":
        return (
            f"ABA, adaptive RK45 (rtol {format_number(integ.get('rtol'))}, "
            f"max step {format_number(1e3 * integ.get('max_step', np.nan))} ms)"
        )
    if integ.get("method") == "rk4":
        return f"ABA, Lie-group RK4 (dt = {format_number(1e3 * integ.get('dt', np.nan))} ms)"
    return "ABA"


def plot_dynamics_check(res):
    """End-effector path of an open-loop run and its distance to the independent reference.

    The reference is ``res["ee_ref_I"]`` when recorded, else recomputed from the
    manifest's scenario by :func:`dqspace.scenarios.dynamics_check.reference_ee_positions`.
    """
    from .dynamics_check import REFERENCE_METHOD, reference_ee_positions

    t = res.t
    ee = np.asarray(res["ee_pos_I"], float)
    if "ee_ref_I" in res:
        ref = np.asarray(res["ee_ref_I"], float)
    else:
        if not _scenario(res):
            raise ValueError("result: no ee_ref_I series and no scenario in its manifest")
        ref = reference_ee_positions(_scenario(res), t)
    fig, ax = _fig(2, res, "end-effector vs an independent reference (paper eq. 50)", height=2.8)
    r0 = ee[0] if len(ee) else np.zeros(3)
    d_run, u = to_display(ee - r0, "m")
    d_ref, _ = to_display(ref - r0, "m")
    for i, c in enumerate(_XYZ):
        ax[0].plot(t, d_run[:, i], **_style(i), label=f"{c}, run")
    for i in range(3):
        _reference_markers(ax[0], t, d_ref[:, i], "reference (x, y, z)" if i == 0 else None)
    start = ", ".join(format_number(x) for x in np.round(to_display(r0, "m")[0], 3))
    ax[0].set_ylabel(f"displacement from\nr(0) = ({start}) [{u}]")
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
        f"{_open_loop_input(res)}\nrun: {_integrator_text(res)}; reference: {REFERENCE_METHOD}",
        loc="left",
        fontsize="small",
    )
    return _finish(fig, ax, res)


# ------------------------------------------------------------------ all figures

_CLOSED_LOOP = {
    "disturbance_rejection": (plot_disturbance_rejection, ("base_pos_err", "arm_reaction")),
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


def plot_all(
    res: Results, directory: str | os.PathLike, formats: Sequence[str] = ("png", "pdf")
) -> list[Path]:
    """Write the figures of a result as ``<directory>/<name>.<fmt>``.

    Chooses by ``manifest["scenario"]["scenario"]["kind"]``: ``"closed_loop"`` (the
    default) writes the closed-loop figures whose series are present (VSCMG and wheel
    figures only with those devices),
    ``"open_loop"`` the dynamics-check figure.

    Returns
    -------
    list of Path, the files written (empty: nothing to plot)
    """
    directory = Path(directory)
    kind = (_scenario(res).get("scenario") or {}).get("kind", "closed_loop")
    figures = _OPEN_LOOP if kind == "open_loop" else _CLOSED_LOOP
    paths = []
    for name, (fn, needs) in figures.items():
        if not all(_has(res, k) for k in needs):
            continue
        fig = fn(res)
        directory.mkdir(parents=True, exist_ok=True)
        for fmt in formats:
            p = directory / f"{name}.{fmt}"
            fig.savefig(p, dpi=150)
            paths.append(p)
    return paths
