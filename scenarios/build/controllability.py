"""Controllability of a scenario's actuator set, checked when its system is built.

The flight software shares the commanded base wrench ``[f, tau]`` (base axes) between the
devices as ``thrusters.mode`` says (:mod:`dqspace.control.flight.actuation`): the thrusters
are allocated a demand, and the torque they do not deliver goes to the VSCMGs, then to the
reaction wheels. So each mode asks each device for a set of wrench directions:

==========================  ===========================================  ==================
``thrusters.mode``          the thrusters' demand, which their positive  the momentum
                            cone must contain                            devices must span
==========================  ===========================================  ==================
``force``                   every force (the rows ``H_f``; their torque  every torque
                            side effect goes to the momentum devices)
``wrench``, no wheels       every wrench (the rows ``H``)                nothing
``wrench`` with wheels      every force with zero torque, and (when      every torque
                            ``wheels.desaturation_gain > 0``) the
                            dumping torque ``-k h`` about every axis of
                            the wheels' span, where their momentum
                            ``h`` lies
==========================  ===========================================  ==================

**Thrusters: a cone, not a span.** Thrust is one-sided (``0 <= sigma_i <= sigma_max``), so
the wrenches the thrusters give are the positive combinations of the columns of ``H``
(the rows the mode allocates): a set whose columns span R^6 but all push along +x cannot
give a force along -x. The test used is one linear program per required direction ``b``
(``scipy.optimize.linprog``, HiGHS)::

    reach(b) = max t   s.t.   H_rows sigma = t b,   0 <= sigma <= sigma_max

``b`` lies in the cone iff ``reach(b) > 0`` (the cone is the union of the scaled copies
of the thrusters' reachable set ``{H sigma : 0 <= sigma <= sigma_max}``, which holds the
origin). The cone contains a subspace iff it contains ``+b`` and ``-b`` for each ``b`` of
a basis of it (a convex cone holding them holds every ``sum c_k b_k = sum |c_k| (sign c_k
b_k)``), so the LPs over the signed basis directions decide the question exactly, and
each names the direction it fails on. Why an LP rather than a rank, a null space or a
non-negative least squares: the rank accepts one-sided sets; the LP's optimum is also the
*margin*, the most of ``b`` the thrusters give at once at full thrust [N or N m], which
is what the warning about a nearly missing direction reports, in the units of the demand.
The check uses the nominal thrusters (faults are events of a run).

**Momentum devices: a span.** A wheel gives torque along its axis, of either sign. A VSCMG
unit's torque (its gimbal torque along ``t(gamma)``, its wheel torque along
``s(gamma)``) lies in the plane across its gimbal axis ``g``, whatever the gimbal angle
(``s`` and ``t`` turn in that plane), so the honest, gimbal-angle-free test of a cluster is
the span of those planes, with its own wheels' span. The devices' unit torque axes (each
wheel's axis; ``s0``, ``t0`` of each VSCMG) are the columns of a 3 x m matrix; a singular
value below :data:`MISSING_FRACTION` of the largest is a missing torque direction (its
left singular vector), one below :data:`WARN_FRACTION` a poorly conditioned set.

A missing direction is a :class:`~dqspace.scenarios.spec.config.ScenarioError` naming the
table, the mode and the direction(s) in base axes; a nearly missing one (the smallest
reach of a kind, force or torque, below :data:`WARN_FRACTION` of the largest, or the
devices' smallest singular value below it) a warning on the ``dqspace.build`` logger.
A base without thrusters (``thrusters.enabled = false``) is not checked: it has no
station keeping by choice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..spec.config import ScenarioError

__all__ = [
    "WARN_FRACTION",
    "MISSING_FRACTION",
    "Reach",
    "thruster_reach",
    "device_torque_axes",
    "check_actuators",
    "direction_name",
]

log = logging.getLogger("dqspace.build")

#: a direction the actuators give less than this fraction of their best one (thrusters:
#: of the same kind, force or torque; momentum devices: smallest over largest singular
#: value of their unit torque axes) is "nearly missing": a warning
WARN_FRACTION = 0.05
#: below this fraction a direction is missing (an error): the thrusters' reach relative to
#: the most any one thruster gives of that kind; the devices' singular value relative to
#: their largest
MISSING_FRACTION = 1e-7
#: HiGHS's feasibility tolerances for the reach LPs (its 1e-7 defaults would blur
#: :data:`MISSING_FRACTION`)
_LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
_AXES = "xyz"


@dataclass(frozen=True)
class Reach:
    """One direction asked of the thrusters: ``kind`` ``"force"`` or ``"torque"``,
    ``axis`` (3,) a unit vector in base axes, ``amount`` the most of it they give at once
    at full thrust [N or N m] (0: missing) and ``scale`` the most any one thruster gives
    of that kind [N or N m]."""

    kind: str
    axis: NDArray[np.float64]
    amount: float
    scale: float

    @property
    def missing(self) -> bool:
        return not self.amount > MISSING_FRACTION * self.scale

    @property
    def name(self) -> str:
        word = "along" if self.kind == "force" else "about"
        return f"{self.kind} {word} {direction_name(self.axis)}"


def direction_name(axis, signed: bool = True) -> str:
    """``"+x"``, ``"-z"`` for a base axis (``"x"`` unsigned), else the unit vector
    ``"(0.707, 0.707, 0)"``."""
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    k = int(np.argmax(np.abs(a)))
    if abs(a[k]) > 1.0 - 1e-9:
        sign = ("+" if a[k] > 0 else "-") if signed else ""
        return f"{sign}{_AXES[k]}"
    if not signed and a[k] < 0:
        a = -a
    return "(" + ", ".join(f"{v:.3g}" for v in a + 0.0) + ")"


def thruster_reach(H_rows, sigma_max, direction) -> float:
    """The most of ``direction`` (m,) the thrusters give at once: ``max t`` such that
    ``H_rows sigma = t direction`` with ``0 <= sigma <= sigma_max`` (the module docstring);
    0 when the direction is outside their positive cone."""
    # scipy.optimize takes ~0.7 s to import: loaded only when a system is checked
    from scipy.optimize import linprog

    H = np.asarray(H_rows, float)
    m, S = H.shape
    b = np.asarray(direction, float).reshape(m)
    A = np.hstack([H, -b[:, None]])
    cost = np.zeros(S + 1)
    cost[-1] = -1.0
    bounds = [(0.0, float(s)) for s in sigma_max] + [(0.0, None)]
    res = linprog(
        cost, A_eq=A, b_eq=np.zeros(m), bounds=bounds, method="highs", options=_LP_OPTIONS
    )
    if res.status != 0:  # sigma = 0, t = 0 is feasible and t is bounded: a solver failure
        raise RuntimeError(f"the thrusters' reach LP failed: {res.message}")
    return max(0.0, float(res.x[-1]))


def device_torque_axes(cluster, wheels) -> NDArray[np.float64]:
    """(3, m) the momentum devices' unit torque axes, base axes: ``s0`` and ``t0`` of each
    VSCMG (its torque plane, across its gimbal axis, at every gimbal angle), then each
    wheel's axis; (3, 0) without devices."""
    cols = []
    if cluster is not None:
        cols += [np.asarray(cluster.A_s0, float), np.asarray(cluster.A_t0, float)]
    if wheels is not None:
        cols.append(np.asarray(wheels.A, float))
    return np.hstack(cols) if cols else np.zeros((3, 0))


def _basis(U) -> list[NDArray[np.float64]]:
    """An orthonormal basis of the span of the orthonormal columns ``U`` (3, r): the base
    axes that lie in it first (so that messages name ``z`` rather than a rotated
    vector), completed from ``U``."""
    U = np.asarray(U, float).reshape(3, -1)
    out = [e for e in np.eye(3) if np.linalg.norm(U.T @ e) > 1.0 - 1e-9]
    for u in U.T:
        if len(out) == U.shape[1]:
            break
        w = u - sum((u @ e) * e for e in out)
        n = np.linalg.norm(w)
        if n > 1e-6:
            out.append(w / n)
    return out


def _span(M):
    """``(singular values, span, missing)`` of the columns of ``M`` (3, m): the three
    singular values (zeros appended) and orthonormal bases (lists, as :func:`_basis` orders
    them) of the span and of the missing directions, those of the singular values at or
    below :data:`MISSING_FRACTION` of the largest (all of R^3 when ``M`` is empty)."""
    if M.shape[1] == 0 or not np.any(M):
        return np.zeros(3), [], list(np.eye(3))
    U, s, _ = np.linalg.svd(M, full_matrices=True)
    s = np.r_[s, np.zeros(3 - len(s))]
    small = s <= MISSING_FRACTION * s[0]
    return s, _basis(U[:, ~small]), _basis(U[:, small])


def _listed(names) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _what(reaches) -> str:
    """``"a force along -x and +y and a torque about +z"``."""
    parts = []
    for kind, word in (("force", "along"), ("torque", "about")):
        names = [direction_name(r.axis) for r in reaches if r.kind == kind]
        if names:
            parts.append(f"a {kind} {word} {_listed(names)}")
    return " and ".join(parts)


def _thruster_key(cfg) -> str:
    t = cfg["thrusters"]
    return "[[thruster]]" if t["layout"] == "table" else f"thrusters.layout = {t['layout']!r}"


def _device_key(cfg, cluster, wheels) -> str:
    keys = []
    for sec, rows, dev in (("vscmg", "vscmg_unit", cluster), ("wheels", "wheel", wheels)):
        if dev is not None:
            layout = cfg[sec]["layout"]
            keys.append(f"[[{rows}]]" if layout == "table" else f"{sec}.layout = {layout!r}")
    return " and ".join(keys)


def _demand(cfg, wheels):
    """``(rows, directions, why)``: the rows of ``H`` the mode allocates (3 or 6), the
    ``(kind, axis)`` pairs its demand must reach in both signs, and the words saying why."""
    mode = cfg["thrusters"]["mode"]
    head = f"in thrusters.mode = {mode!r}"
    forces = [("force", e) for e in np.eye(3)]
    if mode == "force":
        return 3, forces, f"{head} they take the whole force"
    if wheels is None:
        why = f"{head} they take the whole wrench (pure forces and pure torques)"
        return 6, forces + [("torque", e) for e in np.eye(3)], why
    if cfg["wheels"]["desaturation_gain"] > 0:
        dump = _span(np.asarray(wheels.A, float))[1]  # where the wheels' momentum lies
        why = (
            f"{head} with wheels they take the force (with zero torque) and the wheels' "
            f"momentum dumping"
        )
        return 6, forces + [("torque", u) for u in dump], why
    return 6, forces, f"{head} with wheels they take the force, with zero torque"


def _reaches(thrusters, rows, dirs) -> list[Reach]:
    """The :class:`Reach` of both signs of each ``(kind, axis)`` of ``dirs``, with the
    first ``rows`` rows of ``H`` (3: the force rows alone, the torque free)."""
    H = np.asarray(thrusters.H, float)
    smax = np.asarray(thrusters.sigma_max, float)
    scale = {
        "force": float(np.max(smax * np.linalg.norm(H[:3], axis=0))),
        "torque": float(np.max(smax * np.linalg.norm(H[3:], axis=0))),
    }
    out = []
    for kind, axis in dirs:
        first = 0 if kind == "force" else 3
        for sign in (1.0, -1.0):
            b = np.zeros(rows)
            b[first : first + 3] = sign * axis
            out.append(Reach(kind, sign * axis, thruster_reach(H[:rows], smax, b), scale[kind]))
    return out


def _force_mode_passes(thrusters) -> bool:
    """Whether the thrusters give every force, their torque free (mode 'force')."""
    forces = [("force", e) for e in np.eye(3)]
    return not any(r.missing for r in _reaches(thrusters, 3, forces))


def _thruster_warnings(key, reaches, mode) -> list[str]:
    out = []
    for kind, unit in (("force", "N"), ("torque", "N m")):
        mine = [r for r in reaches if r.kind == kind]
        if not mine:
            continue
        low, high = min(mine, key=lambda r: r.amount), max(mine, key=lambda r: r.amount)
        if low.amount < WARN_FRACTION * high.amount:
            out.append(
                f"{key}: the thrusters nearly cannot produce a {low.name} (base axes): at "
                f"most {low.amount:.3g} {unit} at full thrust, "
                f"{100 * low.amount / high.amount:.2g} % of the {high.amount:.3g} {unit} "
                f"{'along' if kind == 'force' else 'about'} {direction_name(high.axis)} "
                f"(thrusters.mode = {mode!r})"
            )
    return out


def check_actuators(cfg, thrusters, cluster, wheels) -> list[str]:
    """Check that the actuators can give every wrench direction ``cfg``'s mode asks of them
    (the module docstring); log each warning on ``dqspace.build`` and return them.

    Parameters
    ----------
    cfg : dict, a resolved closed-loop scenario
    thrusters : ThrusterSet or None (``thrusters.enabled = false``: nothing is checked)
    cluster : VSCMGCluster or None
    wheels : WheelArray or None

    Raises
    ------
    ScenarioError naming the table and the missing direction(s), in base axes.
    """
    if thrusters is None:
        return []
    mode = cfg["thrusters"]["mode"]
    key = _thruster_key(cfg)
    rows, dirs, why = _demand(cfg, wheels)
    reaches = _reaches(thrusters, rows, dirs)
    missing = [r for r in reaches if r.missing]
    M = device_torque_axes(cluster, wheels)
    s, _, gap = _span(M)
    # the momentum devices take the torque in mode 'force', and the control torque with wheels
    devices_take_torque = mode == "force" or wheels is not None
    if mode == "force":
        role = "which thrusters.mode = 'force' leaves to them (the thrusters take only the force)"
    else:
        role = "which thrusters.mode = 'wrench' with wheels leaves to them (the control torque)"
    errors = []
    if missing:
        hint = ""
        if mode == "wrench" and M.shape[1] and not gap and _force_mode_passes(thrusters):
            hint = (
                "; with thrusters.mode = 'force' they would take only the force and the "
                "momentum devices the torque, which this set can do"
            )
        errors.append(
            f"{key}: the thrusters cannot produce {_what(missing)} (base axes): {why}, and "
            f"thrust is one-sided, so each direction needs thrusters whose positive "
            f"combination gives it{hint}"
        )
    if devices_take_torque and M.shape[1] == 0:
        errors.append(
            "thrusters.mode = 'force': no momentum device takes the base torque "
            "(vscmg.enabled and wheels.enabled are false), so nothing produces a torque "
            "about x, y or z (base axes); use thrusters.mode = 'wrench' or enable [vscmg] "
            "or [wheels]"
        )
    elif devices_take_torque and gap:
        names = _listed([direction_name(u, signed=False) for u in gap])
        errors.append(
            f"{_device_key(cfg, cluster, wheels)}: the momentum devices cannot produce a "
            f"torque about {names} (base axes, either sign), {role}: their torque axes "
            f"(the wheels' axes, the planes across the VSCMGs' gimbal axes) do not span it"
        )
    if errors:
        raise ScenarioError("; ".join(errors))
    warnings = _thruster_warnings(key, reaches, mode)
    if devices_take_torque and s[2] < WARN_FRACTION * s[0]:
        weakest = np.linalg.svd(M)[0][:, 2]
        warnings.append(
            f"{_device_key(cfg, cluster, wheels)}: the momentum devices nearly cannot "
            f"produce a torque about {direction_name(weakest, signed=False)} (base axes), "
            f"{role}: the smallest singular value of their unit torque axes is {s[2]:.3g}, "
            f"{100 * s[2] / s[0]:.2g} % of the largest"
        )
    if mode == "force" and wheels is not None and cfg["wheels"]["desaturation_gain"] > 0:
        warnings.append(
            f"wheels.desaturation_gain = {cfg['wheels']['desaturation_gain']:g}: in "
            f"thrusters.mode = 'force' the thrusters take only the force, so the wheels' "
            f"momentum is never dumped (thrusters.mode = 'wrench' gives them the dumping)"
        )
    for w in warnings:
        log.warning("warning: scenario %r: %s", cfg["scenario"]["name"], w)
    return warnings
