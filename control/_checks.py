"""Argument checks shared by the modules of :mod:`dqspace.control` (private)."""

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["finite_vector", "unit_pose"]


def finite_vector(x: ArrayLike, name: str, n: int) -> NDArray[np.float64]:
    """A copy of ``x`` as a finite float (n,) vector, or a ValueError naming ``name`` and the
    first bad entry."""
    try:
        a = np.array(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric ({n},) vector, got {x!r}") from None
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] is not finite ({a[bad[0]]})")
    return a


def unit_pose(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """A copy of ``x`` as a finite (8,) unit dual quaternion (norm and orthogonality within
    1e-6), or a ValueError naming ``name``."""
    x = np.asarray(x, float)
    if x.shape != (8,) or not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be a finite (8,) unit dual quaternion, got {x}")
    err = max(abs(np.linalg.norm(x[:4]) - 1.0), abs(x[:4] @ x[4:]))
    if err > 1e-6:
        raise ValueError(f"{name} is not a unit dual quaternion (error {err:.3g})")
    return x.copy()
