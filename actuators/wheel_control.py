"""Reaction-wheel laws: the torque distribution over the wheels, with saturation, and
momentum management by the thrusters.

The wheels themselves (array, bodies, momentum, motors) are
:mod:`dqspace.actuators.reaction_wheels`; these laws decide their commands.

Distribution (:func:`distribute`): for a torque ``tau`` wanted on the base, the motor torques
are the minimum-norm solution of ``-A u = tau + w x h`` (A the (3, N) spin axes), then
saturated: a wheel's torque is clipped to its limit, and a wheel at its speed limit (or that
would pass it within ``dt``) may not be pushed further out; the torque the saturated wheels
cannot give is redistributed over the others by minimum norm, until no wheel is beyond its
bounds.  What remains is reported as the torque error.

Momentum management (:class:`MomentumManager`): when a wheel's speed passes
``start_fraction`` of its limit, the thrusters are asked for an external torque
``-gain h`` (base axes) until every wheel is below ``stop_fraction`` of its limit; the flight
software asks the wheels for the control torque less that torque, so the base still gets the
control torque while the wheels' momentum decays as ``exp(-gain t)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ._checks import finite_vector, positive
from .linalg import lstsq_min_norm
from .reaction_wheels import WheelArray, wheel_momentum_kernel

__all__ = [
    "DUMP_START_FRACTION",
    "DUMP_STOP_FRACTION",
    "MomentumManager",
    "WheelCommand",
    "distribute",
    "distribute_kernel",
    "momentum_dump_kernel",
]

#: Default fraction of a wheel's speed limit above which momentum dumping starts.
DUMP_START_FRACTION = 0.8
#: Default fraction of the speed limit below which every wheel must be for dumping to stop.
DUMP_STOP_FRACTION = 0.5


@dataclass(frozen=True)
class WheelCommand:
    """Motor torques (N,) [N m], the base torque error (3,) (delivered minus wanted) and
    which wheels were saturated (N,) bool."""

    motor_torque: NDArray[np.float64]
    torque_error: NDArray[np.float64]
    saturated: NDArray[np.bool_]


def distribute(
    array: WheelArray, torque: ArrayLike, wheel_speed: ArrayLike, *, dt: float | None = None
) -> WheelCommand:
    """Motor torques that put ``torque`` (3,) on the base (see the module docstring).

    ``torque`` already includes any gyroscopic compensation; ``dt`` [s], optional, the time
    the torques are held (a wheel may not pass its speed limit within it).  The
    computation is :func:`distribute_kernel`'s."""
    tau = np.ascontiguousarray(finite_vector(torque, "torque", 3))
    om = np.ascontiguousarray(finite_vector(wheel_speed, "wheel_speed", array.n))
    if dt is not None and not (math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be positive and finite, got {dt}")
    u, err, sat = np.empty(array.n), np.empty(3), np.empty(array.n, dtype=bool)
    distribute_kernel(
        array.A, array.I_s, array.max_torque, array.max_speed, tau, om,
        0.0 if dt is None else float(dt), u, err, sat,
    )  # fmt: skip
    return WheelCommand(u, err, sat)


@njit(cache=True)
def distribute_kernel(
    A: NDArray[np.float64],
    I_s: NDArray[np.float64],
    max_torque: NDArray[np.float64],
    max_speed: NDArray[np.float64],
    torque: NDArray[np.float64],
    wheel_speed: NDArray[np.float64],
    dt: float,
    motor_torque: NDArray[np.float64],
    torque_error: NDArray[np.float64],
    saturated: NDArray[np.bool_],
) -> None:
    """Minimum-norm torque distribution with saturation and redistribution (compiled; the
    one implementation of :func:`distribute`).

    Bounds per wheel: ``[-max_torque, max_torque]``; with ``dt > 0`` narrowed to the torque
    that brings the wheel to its speed limit within dt, ``(+-max_speed - Omega) I_s / dt``
    (never past zero); with ``dt <= 0`` a wheel at its speed limit may only slow down.
    Then, until no free wheel leaves its bounds (at most N + 1 passes): the free wheels
    take the minimum-norm solution ``u_F = -A_F^+ (tau + A_S u_S)`` (``A_F^+`` the
    pseudo-inverse, singular values below 1e-15 s_max dropped, as ``numpy.linalg.pinv``),
    those beyond a bound are clipped to it and saturated.

    Parameters
    ----------
    A : (3, N) spin axes, base coordinates
    I_s : (N,) spin moments [kg m^2]
    max_torque : (N,) [N m]
    max_speed : (N,) [rad/s]
    torque : (3,) torque wanted on the base, gyroscopic compensation included [N m]
    wheel_speed : (N,) [rad/s]
    dt : float, how long the torques are held [s]; <= 0 for none
    motor_torque : (N,) written, u [N m]
    torque_error : (3,) written, ``-A u - torque`` (delivered minus wanted) [N m]
    saturated : (N,) bool written, the wheels held at a bound
    """
    n = A.shape[1]
    lo = np.empty(n)
    hi = np.empty(n)
    for i in range(n):
        lo[i], hi[i] = -max_torque[i], max_torque[i]
        om = wheel_speed[i]
        if dt <= 0.0:
            if om >= max_speed[i]:
                hi[i] = 0.0
            if om <= -max_speed[i]:
                lo[i] = 0.0
        else:
            room_up = (max_speed[i] - om) * I_s[i] / dt
            room_down = (-max_speed[i] - om) * I_s[i] / dt
            hi[i] = min(hi[i], max(room_up, 0.0))
            lo[i] = max(lo[i], min(room_down, 0.0))
    u = motor_torque
    cols = np.empty(n, np.int64)
    rest = np.empty(3)
    x = np.empty(n)
    for i in range(n):
        u[i] = 0.0
        saturated[i] = False
    for _ in range(n + 1):
        k = 0
        for i in range(n):
            if not saturated[i]:
                cols[k] = i
                k += 1
        if k == 0:
            break
        for j in range(3):  # -A_F u_F = tau + A_S u_S  ->  A_F u_F = -(tau + A_S u_S)
            acc = torque[j]
            for i in range(n):
                if saturated[i]:
                    acc += A[j, i] * u[i]
            rest[j] = -acc
        lstsq_min_norm(A, cols, k, rest, 1e-15, x)
        out = False
        for f in range(k):
            i = cols[f]
            u[i] = x[f]
            if u[i] > hi[i] + 1e-15 or u[i] < lo[i] - 1e-15:
                out = True
        if not out:
            break
        for f in range(k):
            i = cols[f]
            if u[i] > hi[i] + 1e-15 or u[i] < lo[i] - 1e-15:
                u[i] = min(max(u[i], lo[i]), hi[i])
                saturated[i] = True
    for i in range(n):
        u[i] = min(max(u[i], lo[i]), hi[i])
    for j in range(3):
        acc = 0.0
        for i in range(n):
            acc += A[j, i] * u[i]
        torque_error[j] = -acc - torque[j]


class MomentumManager:
    """Momentum dumping with hysteresis (see the module docstring).

    Call ``manager(wheel_speed, base_rate=None) -> (3,)`` the torque [N m] (base axes) the
    thrusters should apply; ``active`` says whether dumping is on.  That state lives in the
    (1,) float array ``active_state`` (1.0 while dumping), which :func:`momentum_dump_kernel`
    updates: compiled flight software given this array and the Python object share it.
    """

    def __init__(
        self,
        array: WheelArray,
        *,
        gain: float,
        start_fraction: float = DUMP_START_FRACTION,
        stop_fraction: float = DUMP_STOP_FRACTION,
    ) -> None:
        self.array = array
        self.gain = positive(gain, "gain", "1/s")
        if not 0.0 <= stop_fraction < start_fraction <= 1.0:
            raise ValueError(
                f"need 0 <= stop_fraction < start_fraction <= 1, got {stop_fraction}, "
                f"{start_fraction}"
            )
        self.start_fraction, self.stop_fraction = float(start_fraction), float(stop_fraction)
        #: (1,) float array, 1.0 while dumping: the state :func:`momentum_dump_kernel`
        #: updates, shared with compiled code that holds this array
        self.active_state = np.zeros(1)

    @property
    def active(self) -> bool:
        """Whether dumping is on (``active_state[0] != 0``)."""
        return bool(self.active_state[0] != 0.0)

    @active.setter
    def active(self, value: bool) -> None:
        self.active_state[0] = 1.0 if value else 0.0

    def __call__(
        self, wheel_speed: ArrayLike, base_rate: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        om = np.ascontiguousarray(finite_vector(wheel_speed, "wheel_speed", self.array.n))
        w = np.zeros(3) if base_rate is None else finite_vector(base_rate, "base_rate", 3)
        out = np.empty(3)
        arr = self.array
        momentum_dump_kernel(
            arr.A, arr.I_s, arr.max_speed, self.gain, self.start_fraction, self.stop_fraction,
            om, np.ascontiguousarray(w), self.active_state, out,
        )  # fmt: skip
        return out


@njit(cache=True)
def momentum_dump_kernel(
    A: NDArray[np.float64],
    I_s: NDArray[np.float64],
    max_speed: NDArray[np.float64],
    gain: float,
    start_fraction: float,
    stop_fraction: float,
    wheel_speed: NDArray[np.float64],
    base_rate: NDArray[np.float64],
    active: NDArray[np.float64],
    torque: NDArray[np.float64],
) -> None:
    """Momentum dumping with hysteresis (compiled; the one implementation of
    :class:`MomentumManager`).

    Dumping starts when a wheel's ``|Omega| / max_speed`` exceeds ``start_fraction`` and
    stops when every wheel is below ``stop_fraction``; while on, the thrusters are asked
    for ``-gain h`` (``h`` from :func:`wheel_momentum_kernel`).

    Parameters
    ----------
    A : (3, N) spin axes, base coordinates
    I_s : (N,) spin moments [kg m^2]
    max_speed : (N,) [rad/s]
    gain : float [1/s]
    start_fraction, stop_fraction : float, ``0 <= stop < start <= 1``
    wheel_speed : (N,) [rad/s]
    base_rate : (3,) [rad/s]
    active : (1,) float, read and updated: 1.0 while dumping, else 0.0
        (:attr:`MomentumManager.active_state`)
    torque : (3,) written, the torque the thrusters should apply, base axes [N m]
    """
    above = False
    below = True
    for i in range(wheel_speed.shape[0]):
        frac = abs(wheel_speed[i]) / max_speed[i]
        above = above or frac > start_fraction
        below = below and frac < stop_fraction
    if active[0] == 0.0 and above:
        active[0] = 1.0
    elif active[0] != 0.0 and below:
        active[0] = 0.0
    if active[0] == 0.0:
        torque[0] = torque[1] = torque[2] = 0.0
        return
    wheel_momentum_kernel(A, I_s, wheel_speed, base_rate, torque)
    for j in range(3):
        torque[j] = -gain * torque[j]
