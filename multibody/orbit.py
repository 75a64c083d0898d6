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

These are the checked Python faces of the one compiled implementation,
:mod:`dqspace.multibody.kernels.orbit`, which the closed-loop plant of a scenario with
``[orbit] enabled = true`` calls at every RK4 stage.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _state
from .kernels import orbit as _k
from .model import Model

__all__ = ["hill_acceleration", "gravity_gradient_torque", "hill_wrenches"]


def _rate(n: float) -> float:
    n = float(n)
    if not (np.isfinite(n) and n >= 0.0):
        raise ValueError(f"orbit rate n must be >= 0 and finite [rad/s], got {n}")
    return n


def _vec(x: ArrayLike, name: str, shape: tuple) -> NDArray[np.float64]:
    a = np.array(x, dtype=float)
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be a finite array of shape {shape}, got {x!r}")
    return a


def hill_acceleration(r: ArrayLike, r_dot: ArrayLike, n: float) -> NDArray[np.float64]:
    """The Clohessy-Wiltshire acceleration (3,) [m/s^2] of a particle at ``r`` [m] moving with
    ``r_dot`` [m/s] in the Hill frame (module docstring)."""
    out = np.empty(3)
    _k.hill_acceleration(_vec(r, "r", (3,)), _vec(r_dot, "r_dot", (3,)), _rate(n), out)
    return out


def gravity_gradient_torque(
    R_IB: ArrayLike, inertia_com: ArrayLike, n: float
) -> NDArray[np.float64]:
    """Gravity-gradient torque (3,) [N m] about the centre of mass, body axes, of a body with
    attitude ``R_IB`` (body to Hill frame) and inertia ``inertia_com`` (3, 3) about its
    centre of mass in body axes: ``3 n^2 r_hat x (J r_hat)``, ``r_hat = R_IB^T e_x``."""
    out = np.empty(3)
    R = _vec(R_IB, "R_IB", (3, 3))
    J = _vec(inertia_com, "inertia_com", (3, 3))
    _k.gravity_gradient_torque(R, J, _rate(n), out)
    return out


def hill_wrenches(model: Model, q: ArrayLike, v: ArrayLike, n: float) -> NDArray[np.float64]:
    """External wrenches (nb, 6) ``[f, tau]`` (body axes, about each body's origin) of the
    Hill terms and the gravity gradient on every body (module docstring); zero for n = 0."""
    n = _rate(n)
    q = np.array(_state.configuration(model, q, "q"))
    v = np.array(_state.vector(v, "v", model.nv))
    q.flags.writeable = v.flags.writeable = False  # as the plant callback's state
    f = np.zeros((model.nb, 6))
    if n == 0.0:
        return f
    # writable copies: the same compiled specialisation as the plant callback's
    _k.hill_wrenches(np.array(model._ints), np.array(model._reals), q, v, n, f)
    return f
