"""The figures of a capture run (``scenario.kind = "capture"``, ``docs/capture.md``).

Four figures, written with the closed loop's (:func:`capture_figures`), each with the grasp
instant marked on every panel (the manifest's ``grasp`` event, a dash-dot line):

* ``capture_rates``: the base's and the target's angular rates through the grasp against
  the residual rate (``capture.residual_rate_deg_s``), the detumble time (metric
  ``detumble_time``) marked, and the target's body rates;
* ``capture_momentum``: the angular momentum of servicer and target about their common
  centre of mass, split into what the bodies' motion carries (the stack's, the momentum
  devices' own rates set to zero) and what the momentum devices' own rates carry, with
  the fastest decrease the actuators allow after the grasp
  (``|h(t_g)| - tau_max (t - t_g)``, ``tau_max`` the metric ``max_available_torque``) and
  the device requirement;
* ``capture_interface``: the force and the torque the arm applies to the held target at
  the fixture (the target's inverse dynamics on its recorded motion, as the metrics
  compute it), against
  ``capture.interface_force_limit`` / ``interface_torque_limit`` when the impedance hold
  (``capture.hold = "impedance"``) applies them, and the requirements on
  ``interface_force_peak`` / ``interface_torque_peak``;
* ``capture_approach``: the fixture's distance and angle from the end-effector until the
  grasp, against ``capture.grasp_tolerance``.

They read what the run recorded (``q``, ``v``, ``target_pose``, ``target_twist``, the
recorded plant in ``manifest["system"]``, the stored ``[target]`` and ``[capture]``
sections) and rebuild nothing but the target's one-body model from its mass properties.
"""

from __future__ import annotations

import math

import numpy as np

from ...dq import dq_normalize
from ...multibody import center_of_mass, grasp_misalignment, momentum
from ..sim.capture import interface_wrench
from .common import (
    arm_gains_text,
    base_gains_text,
    capture_hold_text,
    component_style,
    finish_figure,
    limit_line,
    log_view,
    magnitude,
    new_figure,
    required_magnitude,
    requirement_limits,
    run_metrics,
    scenario_section,
    settings_text,
)
from .recorded import recorded_sizes
from .scene import recorded_plant
from .target_view import GRASPED_COLOR, grasp_time, stored_target
from .units import format_number, format_quantity

__all__ = [
    "capture_figures",
    "plot_capture_rates",
    "plot_capture_momentum",
    "plot_capture_interface",
    "plot_capture_approach",
    "stack_momentum_split",
]

_DEG = 180.0 / math.pi


def _grasp(res):
    """The grasp time [s] (the manifest's ``grasp`` event; else ``capture.grasp_time``)."""
    t = grasp_time(res)
    if t is not None:
        return t
    t = scenario_section(res, "capture").get("grasp_time")
    return float(t) if type(t) in (int, float) else float("inf")


def _series(res, name, width):
    """A recorded series (samples, width) checked (ValueError naming it)."""
    if name not in res:
        raise ValueError(f"the result has no series {name!r}: not a capture run's")
    x = np.asarray(res[name], float)
    if x.shape != (len(res.t), width):
        raise ValueError(
            f"the result's series {name!r} has shape {x.shape}; expected ({len(res.t)}, {width})"
        )
    return x


def _phases_text(res):
    """The settings of both phases: the approach's arm law, the hold's, the base law."""
    before = arm_gains_text(res)
    before = f"before the grasp: {before}" if before else ""
    return [before, capture_hold_text(res), base_gains_text(res)]


def _title_line(res, what):
    t_g = _grasp(res)
    return f"{what} (grasp at t = {format_quantity(t_g, 's')})"


# ------------------------------------------------------------------ rates


def plot_capture_rates(res):
    """Base and target angular rates [deg/s] (log axis) with the residual rate and the
    detumble time; the target's body rates per axis."""
    t = res.t
    t_g = _grasp(res)
    w_b = np.linalg.norm(_series(res, "v", res["v"].shape[1])[:, :3], axis=1) * _DEG
    w_t_xyz = _series(res, "target_twist", 6)[:, :3] * _DEG
    w_t = np.linalg.norm(w_t_xyz, axis=1)
    fig, ax = new_figure(
        2, res, _title_line(res, "base and target rates"), _phases_text(res), height=2.2
    )
    magnitude(ax[0], t, w_b, label="|ω| base", style=component_style(0))
    shown = magnitude(ax[0], t, w_t, label="|ω| target", style=component_style(1))
    residual = scenario_section(res, "capture").get("residual_rate_deg_s")
    parts, extra = [], [float(np.nanmax(w_b[w_b > 0])) if np.any(w_b > 0) else None]
    if type(residual) in (int, float) and residual > 0:
        limit_line(ax[0], residual, f"residual rate {format_number(residual)} deg/s", "residual")
        extra.append(float(residual))
    d = run_metrics(res).get("detumble_time")
    if d is not None and np.isfinite(d):
        for a in ax:
            a.axvline(
                t_g + d,
                color=GRASPED_COLOR,
                lw=1.4,
                ls="--",
                gid="detumbled",
                label="detumbled" if a is ax[0] else "_detumbled",
            )
        parts.append(f"detumbled {format_quantity(d, 's')} after the grasp (detumble_time)")
    elif d is not None:
        parts.append("not detumbled by the end of the run (detumble_time: NaN)")
    log_view(ax[0], np.fmax(shown, np.where(w_b > 0, w_b, np.nan)), extra, decades=4.0)
    if parts:
        ax[0].set_title("; ".join(parts), loc="left", fontsize="small")
    ax[0].set_ylabel("rate [deg/s]")
    for i, c in enumerate("xyz"):
        ax[1].plot(t, w_t_xyz[:, i], **component_style(i), label=f"ω{c}")
    ax[1].set_ylabel("target body rate [deg/s]")
    ax[1].axhline(0.0, color="0.6", lw=0.8)
    return finish_figure(fig, ax, res)


# ------------------------------------------------------------------ momentum


def stack_momentum_split(res):
    """``(h_bodies, h_devices)`` (samples, 3) [N m s]: the angular momentum of servicer and
    target about their common centre of mass (inertial axes), the part the bodies' motion
    carries (the momentum devices' own rates set to zero) and the part the devices' own
    rates carry.  The servicer's from the recorded plant (the grasp adds no coordinate),
    the target's from its one-body model at ``target_pose`` and ``target_twist``."""
    plant = recorded_plant(res).model
    target, _ = stored_target(res)
    q, v = _series(res, "q", plant.nq), _series(res, "v", plant.nv)
    P = dq_normalize(_series(res, "target_pose", 8))
    X = _series(res, "target_twist", 6)
    n = recorded_sizes(res).n or 0
    nv_c = 6 + n  # the base's and the arm's velocities; the devices' after them
    m_s = float(np.sum(plant.mass))
    m_t = target.mass
    h_b, h_d = np.zeros((len(q), 3)), np.zeros((len(q), 3))
    for k in range(len(q)):
        if not (np.all(np.isfinite(q[k])) and np.all(np.isfinite(v[k]))):
            h_b[k] = h_d[k] = np.nan
            continue
        c_t = center_of_mass(target.model, P[k])
        c = (m_s * center_of_mass(plant, q[k]) + m_t * c_t) / (m_s + m_t)
        vb, vd = v[k].copy(), np.zeros_like(v[k])
        vb[nv_c:], vd[nv_c:] = 0.0, v[k][nv_c:]
        h_t = momentum(target.model, P[k], X[k], point=c).angular
        h_b[k] = momentum(plant, q[k], vb, point=c).angular + h_t
        h_d[k] = momentum(plant, q[k], vd, point=c).angular
    return h_b, h_d


def plot_capture_momentum(res):
    """|h| of the stack's motion, of the devices' rates and of their sum [N m s] (log
    axis), the fastest decrease the actuators allow after the grasp, the device
    requirement; the components of the stack's part."""
    t = res.t
    t_g = _grasp(res)
    h_b, h_d = stack_momentum_split(res)
    fig, ax = new_figure(
        2,
        res,
        _title_line(res, "angular momentum about the common CoM"),
        _phases_text(res),
        height=2.2,
    )
    nb, nd = np.linalg.norm(h_b, axis=1), np.linalg.norm(h_d, axis=1)
    s1 = magnitude(ax[0], t, nb, label="|h| bodies (devices' rates 0)", style=component_style(0))
    s2 = magnitude(ax[0], t, nd, label="|h| momentum devices", style=component_style(1))
    s3 = magnitude(
        ax[0],
        t,
        np.linalg.norm(h_b + h_d, axis=1),
        label="|h| total",
        style={"color": "k", "lw": 1.0, "ls": ":"},
    )
    extra, parts = [], []
    m = run_metrics(res)
    tau = m.get("max_available_torque")
    after = t >= t_g - 1e-9
    if tau is not None and np.isfinite(tau) and tau > 0 and after.any():
        k = int(np.flatnonzero(after)[0])
        bound = nb[k] - tau * (t - t[k])
        keep = after & (bound > 0)
        ax[0].plot(
            t[keep],
            bound[keep],
            color="#b00000",
            lw=1.6,
            ls=(0, (3, 1, 1, 1, 1, 1)),
            marker="|",
            gid="bound",
            label=f"fastest possible decrease\n(τ_max {format_number(tau)} N m)",
        )
        parts.append(f"τ_max {format_number(tau)} N m (max_available_torque)")
        b = m.get("detumble_bound")
        if b is not None and np.isfinite(b):
            parts.append(f"detumble_bound {format_quantity(b, 's')}")
    limit = requirement_limits(res).get("device_momentum_peak")
    if limit is not None:
        limit_line(ax[0], limit, f"requirement ≤ {format_number(limit)} N m s (devices)")
        extra.append(float(limit))
        peak = m.get("device_momentum_peak")
        if peak is not None and np.isfinite(peak):
            parts.append(f"devices' peak after the grasp {format_number(peak)} N m s")
    drawn = np.concatenate([s1, s2, s3])
    peak = np.nanmax(drawn) if np.isfinite(drawn).any() else None
    floor = np.nanmin(drawn) if peak is not None else None
    if peak is not None:  # the lowest drawn value, at most 3 decades below the peak
        extra.append(max(floor, peak * 1e-3))
    log_view(ax[0], np.fmax(np.fmax(s1, s2), s3), extra)
    ax[0].set_ylabel("|h| [N m s]")
    if parts:
        ax[0].set_title("; ".join(parts), loc="left", fontsize="small")
    for i, c in enumerate("xyz"):
        ax[1].plot(t, h_b[:, i], **component_style(i), label=f"h{c} bodies")
    ax[1].set_ylabel("h (inertial) [N m s]")
    return finish_figure(fig, ax, res)


# ------------------------------------------------------------------ interface wrench


def interface_series(res):
    """(samples, 6) ``[torque, force]`` the arm applies to the held target at the fixture
    (fixture axes), NaN before the grasp: :func:`~dqspace.scenarios.sim.capture.
    interface_wrench` on the recorded ``target_pose`` and ``target_twist`` after the grasp,
    as the metrics ``interface_force_peak`` and ``interface_torque_peak`` compute it."""
    t = np.asarray(res.t, float)
    after = t >= _grasp(res) - 1e-9
    out = np.full((len(t), 6), np.nan)
    if after.sum() < 2:
        return out
    target, _ = stored_target(res)
    P = _series(res, "target_pose", 8)[after]
    X = _series(res, "target_twist", 6)[after]
    period = float(np.median(np.diff(t[after])))
    out[after] = interface_wrench(target, dq_normalize(P), X, period)
    return out


def plot_capture_interface(res):
    """The interface force [N] and torque [N m] after the grasp (log axes) against their
    limits (``capture.interface_*_limit``) and requirements."""
    t = res.t
    t_g = _grasp(res)
    g = interface_series(res)
    cap = scenario_section(res, "capture")
    fig, ax = new_figure(
        2,
        res,
        _title_line(res, "interface wrench on the held target (fixture)"),
        _phases_text(res),
        height=2.2,
    )
    after = np.isfinite(g[:, 0])
    rows = (
        (ax[0], np.linalg.norm(g[:, 3:], axis=1), "force", "N", "interface_force_peak"),
        (ax[1], np.linalg.norm(g[:, :3], axis=1), "torque", "N m", "interface_torque_peak"),
    )
    for a, y, what, unit, metric in rows:
        a.set_ylabel(f"|{what}| [{unit}]")
        if not after.any():  # the run ended before the grasp: nothing to draw
            a.text(0.5, 0.5, f"no sample after the grasp (t = {format_number(t_g)} s)",
                   transform=a.transAxes, ha="center", va="center", gid="no-grasp")  # fmt: skip
            if len(t) > 1 and t[-1] > t[0]:
                a.set_xlim(t[0], t[-1])
            continue
        y = np.where(after, y, 0.0)
        shown = required_magnitude(
            a,
            t,
            y,
            res=res,
            metric=metric,
            what=f"|{what}|",
            unit=unit,
            mask=after,
            style=component_style(0),
        )
        # the limits bind the impedance hold only (capture.hold = "joint": none)
        lim = cap.get(f"interface_{what}_limit") if cap.get("hold") == "impedance" else None
        if type(lim) in (int, float) and math.isfinite(lim) and lim > 0:
            a.axhline(
                lim,
                color="#b00000",
                lw=1.4,
                ls="--",
                gid="interface_limit",
                label=f"capture.interface_{what}_limit {format_number(lim)} {unit}",
            )
            log_view(a, shown, [lim, requirement_limits(res).get(metric)])
    return finish_figure(fig, ax, res)


# ------------------------------------------------------------------ approach


def approach_misalignment(res):
    """``(distance [m], angle [rad])`` (samples,) of the fixture from the end-effector
    (:func:`~dqspace.multibody.grasp_misalignment` on the recorded plant and target)."""
    plant = recorded_plant(res)
    target, _ = stored_target(res)
    q = _series(res, "q", plant.model.nq)
    P = dq_normalize(_series(res, "target_pose", 8))
    d, a = np.full(len(q), np.nan), np.full(len(q), np.nan)
    for k in range(len(q)):
        if np.all(np.isfinite(q[k])) and plant.ee_frame:
            d[k], a[k] = grasp_misalignment(plant.model, q[k], target, P[k], plant.ee_frame)
    return d, a


def plot_capture_approach(res):
    """The fixture's distance [mm] and angle [deg] from the end-effector up to the grasp
    (log axes) against ``capture.grasp_tolerance``."""
    t = res.t
    t_g = _grasp(res)
    d, a = approach_misalignment(res)
    cap = scenario_section(res, "capture")
    before = t <= t_g + 1e-9
    title = _title_line(res, "end-effector to fixture during the approach")
    settings = [
        settings_text(res, "capture", ("approach_duration", "standoff", "grasp_tolerance"))
    ] + _phases_text(res)[:1]
    fig, ax = new_figure(2, res, title, settings, height=2.2)
    tol = cap.get("grasp_tolerance")
    tol = float(tol) if type(tol) in (int, float) and tol > 0 else None
    rows = ((ax[0], d * 1e3, "distance", "mm", 1e3), (ax[1], a * _DEG, "angle", "deg", _DEG))
    for axis, y, what, unit, scale in rows:
        shown = magnitude(
            axis,
            t,
            y,
            label=f"{what} (fixture to end-effector)",
            mask=before,
            style=component_style(0),
        )
        extra = []
        if tol is not None:
            limit_line(
                axis,
                tol * scale,
                f"grasp_tolerance {format_number(tol * scale)} {unit}",
                "tolerance",
            )
            extra.append(tol * scale)
        k = np.flatnonzero(before)
        if k.size:
            axis.set_title(
                f"at the grasp {format_number(y[k[-1]])} {unit}", loc="left", fontsize="small"
            )
        log_view(axis, shown, extra, decades=5.0)
        axis.set_ylabel(f"{what} [{unit}]")
    if np.any(before):
        ax[0].set_xlim(t[0], t[before][-1] + 0.05 * max(t[before][-1] - t[0], 1e-3))
    return finish_figure(fig, ax, res)


def capture_figures(res) -> dict:
    """``{name: Figure}`` of a capture run (module docstring); ``{}`` without its series."""
    if not all(k in res for k in ("q", "v", "target_pose", "target_twist")):
        return {}
    return {
        "capture_rates": plot_capture_rates(res),
        "capture_momentum": plot_capture_momentum(res),
        "capture_interface": plot_capture_interface(res),
        "capture_approach": plot_capture_approach(res),
    }
