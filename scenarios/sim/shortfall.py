"""What the thrust allocation left unmet, read back from a closed-loop result.

The compiled allocator records its status at every tick (``alloc_status``), not its
residual; the residual is cheap to recompute from what the result holds: the demand it was
given (``wrench_cmd``'s force; its torque in ``thrusters.mode = "wrench"``, or the
momentum-dumping torque ``dump_torque`` with reaction wheels), its commands
(``thrust_cmd``), the nominal thruster table (``manifest["system"]["thrusters"]``) and
the thruster faults (``manifest["events"]``, each from the tick it took effect at)::

    achieved = H_rows delivered(sigma),   shortfall = demand - achieved

with ``delivered`` the thrust a command gives under the thruster's health as the allocator
knew it (nominal ``clip(sigma, 0, sigma_max)``; degraded ``scale clip(sigma)``; failed off
0; stuck on ``sigma_max``). :func:`shortfall_words` says which part (force, torque) was
unmet, along which signed base axes and how much at most, for the degradation message of
:mod:`.metrics`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["allocation_shortfall", "shortfall_words", "NAMED_FRACTION", "UNMET_TOL"]

#: a signed axis is named when the shortfall along it reaches this fraction of the largest
#: shortfall of its kind (force or torque) on the ticks considered
NAMED_FRACTION = 0.1
#: [N or N m] a shortfall this small is the allocator's tolerance, not a shortfall (its
#: re-check accepts ``1e-9 max(1, |demand|, sigma_max)``)
UNMET_TOL = 1e-6
_AXES = "xyz"


def _thruster_matrix(table):
    """(6, S) ``[d; p x d]`` and (S,) ``sigma_max`` of the manifest's thruster table."""
    p = np.array([t["position"] for t in table], float).reshape(-1, 3)
    d = np.array([t["direction"] for t in table], float).reshape(-1, 3)
    return np.vstack([d.T, np.cross(p, d).T]), np.array([t["max_thrust"] for t in table], float)


def _delivered(res, sigma, smax):
    """(N, S) the thrust each command gives under the faults of the result's events."""
    out = np.clip(sigma, 0.0, smax)
    events = res.manifest.get("events") or []
    faults = sorted((e for e in events if e.get("event") == "thruster fault"), key=lambda e: e["t"])
    for e in faults:
        k = int(np.searchsorted(res.t, float(e["t"]) - 1e-9))
        i = int(e["thruster"])
        if e["kind"] == "failed_off":
            out[k:, i] = 0.0
        elif e["kind"] == "stuck_on":
            out[k:, i] = smax[i]
        else:  # degraded
            out[k:, i] = float(e["scale"]) * np.clip(sigma[k:, i], 0.0, smax[i])
    return out


def allocation_shortfall(res) -> NDArray[np.float64] | None:
    """(N, 6) ``[f, tau]`` [N, N m] each tick's allocation left unmet (module docstring);
    the torque is 0 in ``thrusters.mode = "force"`` (the thrusters are not asked any).
    None when the result lacks what it needs (no thrusters, an older manifest)."""
    try:
        mode = res.manifest["scenario"]["thrusters"]["mode"]
        table = res.manifest["system"]["thrusters"]
        sigma = np.asarray(res["thrust_cmd"], float)
        wrench = np.asarray(res["wrench_cmd"], float)
        H, smax = _thruster_matrix(table)
        if not table or sigma.shape != (len(res.t), H.shape[1]):
            return None
        achieved = _delivered(res, sigma, smax) @ H.T
        demand = wrench.copy()
        wheels = "rw_speed" in res and res["rw_speed"].size > 0
        if mode == "force":
            demand[:, 3:] = achieved[:, 3:] = 0.0
        elif wheels:
            demand[:, 3:] = np.asarray(res["dump_torque"], float)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None
    return demand - achieved


def shortfall_words(short, mask) -> str:
    """``"force demand along -x (up to 3.2 N) and the torque demand about +z (up to 0.4 N
    m)"``: the parts of ``short`` (N, 6) unmet on the ticks of ``mask`` (N,), naming the
    signed axes along which the shortfall reaches :data:`NAMED_FRACTION` of its kind's
    largest; ``""`` when nothing above :data:`UNMET_TOL` is unmet there."""
    s = np.asarray(short, float)[np.asarray(mask, bool)]
    parts = []
    for kind, word, unit, cols in (
        ("force", "along", "N", slice(0, 3)),
        ("torque", "about", "N m", slice(3, 6)),
    ):
        r = s[:, cols]
        peak = float(np.linalg.norm(r, axis=1).max()) if len(r) else 0.0
        if not peak > UNMET_TOL:
            continue
        names = [
            f"{sign}{_AXES[k]}"
            for k in range(3)
            for sign, v in (("+", 1.0), ("-", -1.0))
            if np.max(v * r[:, k]) >= NAMED_FRACTION * peak
        ]
        parts.append(f"{kind} demand {word} {', '.join(names)} (up to {peak:.3g} {unit})")
    return " and the ".join(parts)
