"""Argument checks shared by the modules of :mod:`dqspace.actuators` (private).

The unit-norm check of axes and directions is :func:`dqspace.dq.checks.check_unit_vector`;
these are the shape, finiteness and sign checks of the devices' other arguments.
"""

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["finite_scalar", "finite_vec3", "finite_vector", "positive"]


def finite_vec3(x: ArrayLike, what: str) -> NDArray[np.float64]:
    """``x`` as a finite float (3,) array (not copied when it is one already), or a
    ValueError naming ``what``."""
    a = np.asarray(x, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what} must be a finite 3-vector, got {x!r}")
    return a


def finite_vector(x: ArrayLike, name: str, n: int) -> NDArray[np.float64]:
    """``x`` as a finite float (n,) array (not copied when it is one already), or a
    ValueError naming ``name``, the expected and the given shape."""
    a = np.asarray(x, dtype=float)
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be a finite ({n},) array, got shape {a.shape}: {x!r}")
    return a


def positive(x: float, what: str, unit: str = "") -> float:
    """``x`` as a float, positive and finite, or a ValueError naming ``what`` [unit]."""
    x = float(x)
    if not (math.isfinite(x) and x > 0.0):
        where = f" [{unit}]" if unit else ""
        raise ValueError(f"{what} must be positive and finite{where}, got {x}")
    return x


def finite_scalar(value: object, what: str, who: str) -> float:
    """``value`` as a finite float, or a ValueError ``"{who}: {what} must be ..."``."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{who}: {what} must be a real number, got {value!r}") from None
    if not np.isfinite(x):
        raise ValueError(f"{who}: {what} must be finite, got {x}")
    return x
