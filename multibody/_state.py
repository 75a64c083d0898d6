"""Validation of the state arrays every multibody function takes (q, v, a, tau, f_ext).

Each check returns a float64 array that the caller's array is never aliased
to when a kernel writes (kernels only read these), and raises a ValueError
naming the argument: wrong shape, non-finite value, or a quaternion / base
pose off its unit manifold by more than :data:`CONFIG_TOL`.
"""

import numpy as np

from dqspace.dq._checks import _first_nonfinite

from . import _kernels as K
from .model import JointType

#: Largest accepted distance of a base pose or joint quaternion from the unit
#: manifold (``| |q_r| - 1 |`` and ``|q_r . q_d|``).
CONFIG_TOL = 1e-6


def vector(x, name, n):
    """A finite float64 vector of length n."""
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    bad = _first_nonfinite(a)
    if bad >= 0:
        raise ValueError(f"{name}[{bad}] is not finite ({a[bad]})")
    return a


def configuration(model, q, name="q"):
    """A valid configuration vector (base pose and joint quaternions unit within CONFIG_TOL)."""
    q = vector(q, name, model.nq)
    err, k = K.config_error(model._ints, q)
    if err > CONFIG_TOL:
        sl = model.q_slice(k)
        what = "base pose" if model.joint_type[k] == JointType.FREE else "joint quaternion"
        raise ValueError(
            f"{name}[{sl.start}:{sl.stop}] ({what} of body {model.body_names[k]!r}) is not unit: "
            f"error {err:.3g} > {CONFIG_TOL:g}; normalise it (dqspace.dq.dq_normalize)"
        )
    return q


def wrenches(model, f_ext, name="f_ext"):
    """External wrenches as an (nb, 6) array (zeros when None)."""
    if f_ext is None:
        return np.zeros((model.nb, 6))
    f = np.asarray(f_ext, dtype=np.float64)
    if f.shape != (model.nb, 6):
        raise ValueError(
            f"{name} must have shape (nb, 6) = ({model.nb}, 6): one wrench [f, tau] per body, "
            f"in the body frame about its origin; got {f.shape} "
            f"(use external_wrenches() to build it from named frames)"
        )
    bad = _first_nonfinite(f.reshape(-1))
    if bad >= 0:
        raise ValueError(f"{name} for body {bad // 6} is not finite")
    return f
