"""Relative motion about a circular reference orbit: Hill (Clohessy-Wiltshire) terms and the
gravity-gradient torque, as external wrenches on every body.

The model's inertial frame is taken as the Hill (LVLH) frame of a circular reference orbit of
rate ``n`` [rad/s]: x radial (away from the planet), y along-track, z along the orbit normal,
origin on the reference orbit.  For a particle at ``r = (x, y, z)`` moving with ``r'`` in that
frame, the linearised relative dynamics (Clohessy-Wiltshire) are::

    x'' = 3 n^2 x + 2 n y',    y'' = -2 n x',    z'' = -n^2 z

(tidal gravity, centrifugal and Coriolis terms together).  :func:`hill_wrenches` applies the
corresponding force ``m a`` at every body's centre of mass, with the centre of mass's position
and velocity in the Hill frame, and adds each body's gravity-gradient torque about its centre
of mass, ``3 n^2 r_hat x (J_c r_hat)`` with ``r_hat`` the radial direction in body axes
(``mu / R^3 = n^2`` on a circular orbit).

Approximations, stated: the Hill frame's own rotation is left out of the bodies' attitude
dynamics (the bodies' angular velocities are taken relative to it as if it were inertial: an
error of order ``n`` in the rates, 1e-3 rad/s in low orbit); the tidal terms are linear in
the distance to the reference point (the relative motion is small against the orbit radius).
The result is what ``forward_dynamics(..., f_ext=...)`` takes: (nb, 6) ``[f, tau]`` in body
axes, the torque about the body frame's origin.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import rotation_matrix_from_dq, translation_from_dq
from .kinematics import forward_kinematics
from .model import Model

__all__ = ["hill_acceleration", "gravity_gradient_torque", "hill_wrenches"]


def _rate(n: float) -> float:
    n = float(n)
    if not (np.isfinite(n) and n >= 0.0):
        raise ValueError(f"orbit rate n must be >= 0 and finite [rad/s], got {n}")
    return n


def hill_acceleration(r: ArrayLike, r_dot: ArrayLike, n: float) -> NDArray[np.float64]:
    """The Clohessy-Wiltshire acceleration (3,) [m/s^2] of a particle at ``r`` moving with
    ``r_dot`` in the Hill frame (module docstring)."""
    n = _rate(n)
    x, _, z = np.asarray(r, dtype=float)
    vx, vy, _ = np.asarray(r_dot, dtype=float)
    return np.array([3.0 * n * n * x + 2.0 * n * vy, -2.0 * n * vx, -n * n * z])


def gravity_gradient_torque(
    R_IB: ArrayLike, inertia_com: ArrayLike, n: float
) -> NDArray[np.float64]:
    """Gravity-gradient torque (3,) [N m] about the centre of mass, body axes, of a body with
    attitude ``R_IB`` (body to Hill frame) and inertia ``inertia_com`` (3, 3) about its
    centre of mass in body axes: ``3 n^2 r_hat x (J r_hat)``, ``r_hat = R_IB^T e_x``."""
    n = _rate(n)
    r_hat = np.asarray(R_IB, dtype=float).T @ np.array([1.0, 0.0, 0.0])
    J = np.asarray(inertia_com, dtype=float)
    return 3.0 * n * n * np.cross(r_hat, J @ r_hat)


def hill_wrenches(model: Model, q: ArrayLike, v: ArrayLike, n: float) -> NDArray[np.float64]:
    """External wrenches (nb, 6) ``[f, tau]`` (body axes, about each body's origin) of the
    Hill terms and the gravity gradient on every body (module docstring); zero for n = 0."""
    n = _rate(n)
    f = np.zeros((model.nb, 6))
    if n == 0.0:
        return f
    kin = forward_kinematics(model, q, v)
    for k in range(model.nb):
        R = rotation_matrix_from_dq(kin.pose[k])
        c = model.com[k]
        w_B, v_B = kin.twist[k, :3], kin.twist[k, 3:]
        r_c = translation_from_dq(kin.pose[k]) + R @ c
        v_c = R @ (v_B + np.cross(w_B, c))
        F_B = model.mass[k] * (R.T @ hill_acceleration(r_c, v_c, n))
        tau = np.cross(c, F_B) + gravity_gradient_torque(R, model.inertia_com[k], n)
        f[k, :3] = F_B
        f[k, 3:] = tau
    return f
