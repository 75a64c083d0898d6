"""Relative motion about a circular orbit: Clohessy-Wiltshire forces and gravity-gradient
torques on every body, the one compiled implementation (:mod:`dqspace.multibody.orbit` is
its checked Python face; the closed-loop plant callback calls it at every RK4 stage).

The inertial frame of the model is the Hill (LVLH) frame of a circular reference orbit of
rate ``n`` [rad/s]: x radial (away from the planet), y along-track, z the orbit normal.  A
particle at ``r`` moving with ``r'`` in that frame accelerates (Clohessy-Wiltshire)::

    x'' = 3 n^2 x + 2 n y',    y'' = -2 n x',    z'' = -n^2 z

and a rigid body of inertia ``J`` about its centre of mass feels the gravity-gradient torque
``3 n^2 r_hat x (J r_hat)``, ``r_hat`` the radial direction in body axes (``mu / R^3 = n^2``
on a circular orbit).  :func:`hill_wrenches` applies the first at every body's centre of mass
(``m a``, with the centre of mass's position and velocity in the Hill frame) and adds the
second, as external wrenches ``[f, tau]`` in body axes about each body's origin.
"""

import numpy as np
from numba import njit

from .kinematics import _kinematics_pass
from .layout import COM, INERTIA_O, MASS, PARENT, RNEA_WIDTH, ROT, TRANS, TWIST


@njit(cache=True)
def hill_acceleration(r, r_dot, n, out):
    """Clohessy-Wiltshire acceleration ``out`` (3,) [m/s^2] of a particle at ``r`` (3,) [m]
    moving with ``r_dot`` (3,) [m/s] in the Hill frame, orbit rate ``n`` [rad/s]."""
    out[0] = 3.0 * n * n * r[0] + 2.0 * n * r_dot[1]
    out[1] = -2.0 * n * r_dot[0]
    out[2] = -n * n * r[2]


@njit(cache=True)
def gravity_gradient_torque(R, J, n, out):
    """Gravity-gradient torque ``out`` (3,) [N m] about the centre of mass, body axes:
    ``3 n^2 r_hat x (J r_hat)``, ``r_hat = R^T e_x`` the radial direction in body axes.

    R : (3, 3) attitude, body -> Hill; J : (3, 3) inertia about the centre of mass, body
    axes [kg m^2]."""
    r0, r1, r2 = R[0, 0], R[0, 1], R[0, 2]  # R^T e_x: the first row of R
    j0 = J[0, 0] * r0 + J[0, 1] * r1 + J[0, 2] * r2
    j1 = J[1, 0] * r0 + J[1, 1] * r1 + J[1, 2] * r2
    j2 = J[2, 0] * r0 + J[2, 1] * r1 + J[2, 2] * r2
    k = 3.0 * n * n
    out[0] = k * (r1 * j2 - r2 * j1)
    out[1] = k * (r2 * j0 - r0 * j2)
    out[2] = k * (r0 * j1 - r1 * j0)


@njit(cache=True)
def hill_wrenches(ints, reals, q, v, n, fext):
    """Add the Hill terms and the gravity gradient of every body to ``fext`` (nb, 6)
    ``[f, tau]`` (body axes, about each body's origin); orbit rate ``n`` [rad/s].

    One kinematics pass (:func:`._kinematics_pass`: each body's frame in its parent and
    its twist), the inertial attitudes and positions by composition down the tree
    (``R_k = R_parent R_rel``, ``r_k = r_parent + R_k r^k``), then per body of mass m,
    centre of mass c and inertia J_c about it::

        r_c = r_k + R_k c,   v_c = R_k (v_k + w_k x c)          (Hill frame)
        F   = m R_k^T a_CW(r_c, v_c)                             (body axes)
        tau = c x F + 3 n^2 r_hat x (J_c r_hat)                  (about the origin)
    """
    nb = ints.shape[0]
    W = np.empty((nb + 1, RNEA_WIDTH))
    _kinematics_pass(ints, reals, q, v, np.zeros(v.shape[0]), W)
    Rk = np.empty((nb, 3, 3))
    rk = np.empty((nb, 3))
    Rrel = np.empty((3, 3))
    Jc = np.empty((3, 3))
    c, rc, vc = np.empty(3), np.empty(3), np.empty(3)
    a, F, gg = np.empty(3), np.empty(3), np.empty(3)
    for k in range(nb):
        for i in range(3):
            for j in range(3):
                Rrel[i, j] = W[k, ROT + 3 * i + j]
        p = ints[k, PARENT]
        for i in range(3):
            for j in range(3):
                if p < 0:
                    Rk[k, i, j] = Rrel[i, j]
                else:
                    Rk[k, i, j] = (
                        Rk[p, i, 0] * Rrel[0, j]
                        + Rk[p, i, 1] * Rrel[1, j]
                        + Rk[p, i, 2] * Rrel[2, j]
                    )
        R = Rk[k]
        for i in range(3):
            rk[k, i] = (rk[p, i] if p >= 0 else 0.0) + (
                R[i, 0] * W[k, TRANS] + R[i, 1] * W[k, TRANS + 1] + R[i, 2] * W[k, TRANS + 2]
            )
        m = reals[k, MASS]
        for i in range(3):
            c[i] = reals[k, COM + i]
        cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
        for i in range(3):  # J_c = J_O - m (|c|^2 I - c c^T)
            for j in range(3):
                d = cc if i == j else 0.0
                Jc[i, j] = reals[k, INERTIA_O + 3 * i + j] - m * (d - c[i] * c[j])
        w0, w1, w2 = W[k, TWIST], W[k, TWIST + 1], W[k, TWIST + 2]
        u0 = W[k, TWIST + 3] + w1 * c[2] - w2 * c[1]  # v_k + w_k x c, body axes
        u1 = W[k, TWIST + 4] + w2 * c[0] - w0 * c[2]
        u2 = W[k, TWIST + 5] + w0 * c[1] - w1 * c[0]
        for i in range(3):
            rc[i] = rk[k, i] + R[i, 0] * c[0] + R[i, 1] * c[1] + R[i, 2] * c[2]
            vc[i] = R[i, 0] * u0 + R[i, 1] * u1 + R[i, 2] * u2
        hill_acceleration(rc, vc, n, a)
        for i in range(3):
            F[i] = m * (R[0, i] * a[0] + R[1, i] * a[1] + R[2, i] * a[2])
        gravity_gradient_torque(R, Jc, n, gg)
        fext[k, 0] += F[0]
        fext[k, 1] += F[1]
        fext[k, 2] += F[2]
        fext[k, 3] += c[1] * F[2] - c[2] * F[1] + gg[0]
        fext[k, 4] += c[2] * F[0] - c[0] * F[2] + gg[1]
        fext[k, 5] += c[0] * F[1] - c[1] * F[0] + gg[2]
