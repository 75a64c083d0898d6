"""The analytic Clohessy-Wiltshire solution: an independent reference for the orbit terms."""

import numpy as np


def clohessy_wiltshire(t, r0, v0, n):
    """Position of a free particle relative to a circular reference orbit of rate ``n``
    [rad/s] (Hill frame: x radial, y along-track, z orbit normal), starting at ``r0`` [m]
    with velocity ``v0`` [m/s]; ``t`` scalar -> (3,), or (N,) -> (N, 3)."""
    x0, y0, z0 = r0
    vx, vy, vz = v0
    t = np.asarray(t, dtype=float)
    s, c = np.sin(n * t), np.cos(n * t)
    x = (4 - 3 * c) * x0 + s / n * vx + 2 / n * (1 - c) * vy
    y = 6 * (s - n * t) * x0 + y0 - 2 / n * (1 - c) * vx + (4 * s - 3 * n * t) / n * vy
    z = z0 * c + vz / n * s
    return np.stack([x, y, z], axis=-1)
