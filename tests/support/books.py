"""Momentum bookkeeping of a closed-loop run: the system's momentum changes by exactly the
external impulse (the thrusters' and the disturbance's wrench on the base)."""

import numpy as np

from dqspace.dq import rotation_matrix_from_quat, translation_from_dq
from dqspace.multibody import momentum


def expected_momentum_change(res, series="wrench_thr_true"):
    """Sum over the periods of the thrusters' and the disturbance's wrench on the base,
    taken to the inertial frame with the base pose at the start of each period:
    (linear impulse (3,), angular impulse about the inertial origin (3,))."""
    t, q = res["t"], res["q"]
    dt = np.diff(t)
    dist = np.r_[
        res.manifest["scenario"]["disturbance"]["force"],
        res.manifest["scenario"]["disturbance"]["torque"],
    ]
    J = np.zeros(3)
    H = np.zeros(3)
    for k in range(len(dt)):
        R = rotation_matrix_from_quat(q[k, :4])
        r = translation_from_dq(q[k, :8])
        w = res[series][k] + dist
        f, tau = R @ w[:3], R @ w[3:]
        J += f * dt[k]
        H += (tau + np.cross(r, f)) * dt[k]
    return J, H


def momentum_closes(res, model, rtol):
    """Assert the momentum change of the run equals :func:`expected_momentum_change` (of
    ``wrench_thr_true``) within ``rtol`` of the impulse (or of 1e-3 N s, N m s)."""
    q, v = res["q"], res["v"]
    m0, m1 = momentum(model, q[0], v[0]), momentum(model, q[-1], v[-1])
    J, H = expected_momentum_change(res)
    dp, dh = m1.linear - m0.linear, m1.angular - m0.angular
    scale_p = max(np.linalg.norm(J), 1e-3)
    scale_h = max(np.linalg.norm(H), 1e-3)
    assert np.linalg.norm(dp - J) <= rtol * scale_p, (dp, J)
    assert np.linalg.norm(dh - H) <= rtol * scale_h, (dh, H)
