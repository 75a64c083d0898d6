"""Reaction-wheel arrays: the wheels as multibody bodies, the torque distribution law with
saturation, and momentum management by the thrusters.

A wheel is a rotor on a REVOLUTE joint about its spin axis ``a`` on the base; its motor
torque ``u`` acts on the rotor and, reacting, on the base (the multibody dynamics carry both:
the torque is internal).  Over short times the base receives ``-u a`` from each wheel and the
gyroscopic torque ``-w x h`` of the wheels' momentum ``h`` turning with it.

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
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..dq import dq_from_rotation_translation
from ..multibody import Body, Joint, JointType, Model
from .linalg import lstsq_min_norm

__all__ = [
    "motor_limit_kernel",
    "ReactionWheel",
    "WheelArray",
    "WheelCommand",
    "WheelIndex",
    "WheelModel",
    "MomentumManager",
    "attach_wheels",
    "distribute",
    "distribute_kernel",
    "momentum_dump_kernel",
    "motor_torque_limits",
    "wheel_momentum_kernel",
    "pyramid_wheels",
    "orthogonal_wheels",
]

_RPM = math.pi / 30.0
#: defaults of the named layouts (a small-satellite wheel, dqspace's choice)
SPIN_INERTIA = 0.01  # [kg m^2]
WHEEL_MASS = 1.0  # [kg]
MAX_TORQUE = 0.5  # [N m]
MAX_SPEED = 6000.0 * _RPM  # [rad/s]


def _positive(x, what: str) -> float:
    x = float(x)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{what} must be positive and finite, got {x}")
    return x


@dataclass(frozen=True, eq=False)
class ReactionWheel:
    """One reaction wheel on the base.

    Attributes
    ----------
    axis : (3,) spin axis in the base frame (normalised; not zero)
    position : (3,) centre of the rotor in the base frame [m]
    spin_inertia : rotor moment about the axis [kg m^2]
    transverse_inertia : rotor moment about a transverse axis through its centre [kg m^2];
        0 means half the spin moment (a thin disc)
    mass : rotor mass [kg]
    max_torque : motor torque limit [N m]
    max_speed : speed limit relative to the base [rad/s]
    friction : viscous friction [N m s/rad] (the plant subtracts ``friction * speed``)
    name : label
    """

    axis: NDArray[np.float64]
    position: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    spin_inertia: float = SPIN_INERTIA
    transverse_inertia: float = 0.0
    mass: float = WHEEL_MASS
    max_torque: float = MAX_TORQUE
    max_speed: float = MAX_SPEED
    friction: float = 0.0
    name: str = ""

    def __post_init__(self) -> None:
        who = f"wheel {self.name!r}" if self.name else "wheel"
        a = np.asarray(self.axis, dtype=float)
        if a.shape != (3,) or not np.all(np.isfinite(a)):
            raise ValueError(f"{who}: axis must be a finite 3-vector, got {self.axis!r}")
        n = float(np.linalg.norm(a))
        if not n > 1e-12:
            raise ValueError(f"{who}: axis must not be zero")
        p = np.asarray(self.position, dtype=float)
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise ValueError(f"{who}: position must be a finite 3-vector, got {self.position!r}")
        Is = _positive(self.spin_inertia, f"{who}: spin_inertia [kg m^2]")
        It = float(self.transverse_inertia)
        if not (math.isfinite(It) and It >= 0):
            raise ValueError(f"{who}: transverse_inertia must be >= 0 and finite, got {It}")
        It = It if It > 0 else 0.5 * Is
        if Is > 2.0 * It * (1 + 1e-12):
            raise ValueError(
                f"{who}: spin_inertia {Is} > 2 x transverse_inertia {It}: no rigid rotor has "
                f"such moments"
            )
        fr = float(self.friction)
        if not (math.isfinite(fr) and fr >= 0):
            raise ValueError(f"{who}: friction must be >= 0 and finite, got {fr}")
        object.__setattr__(self, "axis", a / n)
        object.__setattr__(self, "position", p)
        object.__setattr__(self, "spin_inertia", Is)
        object.__setattr__(self, "transverse_inertia", It)
        object.__setattr__(self, "mass", _positive(self.mass, f"{who}: mass [kg]"))
        object.__setattr__(self, "max_torque", _positive(self.max_torque, f"{who}: max_torque"))
        object.__setattr__(self, "max_speed", _positive(self.max_speed, f"{who}: max_speed"))
        object.__setattr__(self, "friction", fr)
        for x in (self.axis, self.position):
            x.setflags(write=False)


class WheelArray:
    """N >= 1 reaction wheels: spin axes ``A`` (3, N), ``I_s``, ``max_torque``, ``max_speed``."""

    def __init__(self, wheels: Iterable[ReactionWheel]) -> None:
        self.wheels = tuple(wheels)
        if not self.wheels:
            raise ValueError("a wheel array needs at least one wheel")
        for w in self.wheels:
            if not isinstance(w, ReactionWheel):
                raise ValueError(f"wheels must be ReactionWheel, got {type(w).__name__}")
        self.n = len(self.wheels)
        self.A = np.column_stack([w.axis for w in self.wheels])
        self.I_s = np.array([w.spin_inertia for w in self.wheels])
        self.max_torque = np.array([w.max_torque for w in self.wheels])
        self.max_speed = np.array([w.max_speed for w in self.wheels])
        for x in (self.A, self.I_s, self.max_torque, self.max_speed):
            x.setflags(write=False)

    def __repr__(self) -> str:
        return f"WheelArray(n={self.n}, rank={np.linalg.matrix_rank(self.A)})"

    def momentum(
        self, wheel_speed: ArrayLike, base_rate: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """(3,) the wheels' spin angular momentum in base axes [N m s]:
        ``sum I_s,i (Omega_i + a_i . w) a_i`` (the rotors' transverse momentum from the base
        rate belongs to the base's composite inertia)."""
        om = np.ascontiguousarray(_vector(wheel_speed, "wheel_speed", self.n))
        w = np.zeros(3) if base_rate is None else _vector(base_rate, "base_rate", 3)
        h = np.empty(3)
        wheel_momentum_kernel(self.A, self.I_s, om, np.ascontiguousarray(w), h)
        return h


def _vector(x, name: str, n: int) -> NDArray[np.float64]:
    a = np.asarray(x, dtype=float)
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be a finite ({n},) array, got {np.shape(x)}")
    return a


def pyramid_wheels(
    *,
    skew: float = math.acos(1.0 / math.sqrt(3.0)),
    radius: float = 0.25,
    spin_inertia: float = SPIN_INERTIA,
    mass: float = WHEEL_MASS,
    max_torque: float = MAX_TORQUE,
    max_speed: float = MAX_SPEED,
) -> WheelArray:
    """Four wheels in a pyramid: wheel i at ``radius`` along ``n_i`` (+x, +y, -x, -y), its
    axis ``sin(skew) n_i + cos(skew) z`` (the default skew gives equal authority on the
    three axes)."""
    z = np.array([0.0, 0.0, 1.0])
    out = []
    for i, n in enumerate(np.array([[1.0, 0, 0], [0, 1.0, 0], [-1.0, 0, 0], [0, -1.0, 0]])):
        out.append(
            ReactionWheel(
                math.sin(skew) * n + math.cos(skew) * z,
                radius * n,
                spin_inertia,
                0.0,
                mass,
                max_torque,
                max_speed,
                name=f"rw{i + 1}",
            )
        )
    return WheelArray(out)


def orthogonal_wheels(
    *,
    radius: float = 0.25,
    spin_inertia: float = SPIN_INERTIA,
    mass: float = WHEEL_MASS,
    max_torque: float = MAX_TORQUE,
    max_speed: float = MAX_SPEED,
) -> WheelArray:
    """Three wheels on the base axes x, y, z, each at ``radius`` along its axis."""
    return WheelArray(
        ReactionWheel(
            a, radius * a, spin_inertia, 0.0, mass, max_torque, max_speed, name=f"rw{i + 1}"
        )
        for i, a in enumerate(np.eye(3))
    )


# ----------------------------------------------------------------- multibody


@dataclass(frozen=True)
class WheelIndex:
    """Where the wheels are in the state: ``wheel_q`` (N,) into q, ``wheel_v`` (N,) into v."""

    wheel_q: NDArray[np.int64]
    wheel_v: NDArray[np.int64]


@dataclass(frozen=True)
class WheelModel:
    """A model with an array attached (:func:`attach_wheels`)."""

    model: Model
    array: WheelArray
    index: WheelIndex

    def state(self, q: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
        """(N,) wheel speeds relative to the base [rad/s]."""
        return np.asarray(v, dtype=float)[self.index.wheel_v].copy()

    def with_state(
        self, q: ArrayLike, v: ArrayLike, *, wheel_speed: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Copies of (q, v) with the wheel speeds set."""
        q = np.array(q, dtype=float)
        v = np.array(v, dtype=float)
        v[self.index.wheel_v] = _vector(wheel_speed, "wheel_speed", self.array.n)
        return q, v

    def joint_torques(self, motor_torque: ArrayLike) -> NDArray[np.float64]:
        """(nv,) generalized force with the motor torques at the wheel joints."""
        tau = np.zeros(self.model.nv)
        tau[self.index.wheel_v] = _vector(motor_torque, "motor_torque", self.array.n)
        return tau


def attach_wheels(
    model: Model, array: WheelArray, *, parent: str | int = "base", prefix: str = "rw"
) -> WheelModel:
    """Append one rotor body per wheel on a REVOLUTE joint about its axis, at its position
    on ``parent`` (bodies ``{prefix}{i}``, joints of the same names)."""
    if not isinstance(array, WheelArray):
        raise ValueError(f"array must be a WheelArray, got {type(array).__name__}")
    p = model.body_index(parent)
    bodies = []
    for i, w in enumerate(array.wheels, start=1):
        a = w.axis
        J = w.transverse_inertia * np.eye(3) + (w.spin_inertia - w.transverse_inertia) * np.outer(
            a, a
        )
        place = dq_from_rotation_translation(np.eye(3), w.position)
        joint = Joint(JointType.REVOLUTE, a.copy(), place, f"{prefix}{i}")
        bodies.append(Body(f"{prefix}{i}", p, joint, w.mass, np.zeros(3), J))
    ext = model.with_bodies(bodies)
    nb0 = model.nb
    wq = np.array([int(ext.q_index[nb0 + i]) for i in range(array.n)], dtype=np.int64)
    wv = np.array([int(ext.v_index[nb0 + i]) for i in range(array.n)], dtype=np.int64)
    return WheelModel(ext, array, WheelIndex(wq, wv))


# ----------------------------------------------------------------- laws


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
    tau = np.ascontiguousarray(_vector(torque, "torque", 3))
    om = np.ascontiguousarray(_vector(wheel_speed, "wheel_speed", array.n))
    if dt is not None and not (math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be positive and finite, got {dt}")
    u, err, sat = np.empty(array.n), np.empty(3), np.empty(array.n, dtype=bool)
    distribute_kernel(
        array.A, array.I_s, array.max_torque, array.max_speed, tau, om,
        0.0 if dt is None else float(dt), u, err, sat,
    )  # fmt: skip
    return WheelCommand(u, err, sat)


@njit(cache=True)
def wheel_momentum_kernel(
    A: NDArray[np.float64],
    I_s: NDArray[np.float64],
    wheel_speed: NDArray[np.float64],
    base_rate: NDArray[np.float64],
    h: NDArray[np.float64],
) -> None:
    """The wheels' spin momentum ``h = sum_i I_s,i (Omega_i + a_i . w) a_i`` (compiled; the
    one implementation of :meth:`WheelArray.momentum`).

    Parameters
    ----------
    A : (3, N) spin axes, base coordinates
    I_s : (N,) spin moments [kg m^2]
    wheel_speed : (N,) speeds relative to the base [rad/s]
    base_rate : (3,) base angular velocity w, base coordinates [rad/s]
    h : (3,) written [N m s]
    """
    h[0] = h[1] = h[2] = 0.0
    for i in range(A.shape[1]):
        aw = A[0, i] * base_rate[0] + A[1, i] * base_rate[1] + A[2, i] * base_rate[2]
        hi = I_s[i] * (wheel_speed[i] + aw)
        for j in range(3):
            h[j] += A[j, i] * hi


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


def motor_torque_limits(
    array: WheelArray, motor_torque: ArrayLike, wheel_speed: ArrayLike
) -> NDArray[np.float64]:
    """The torque the motors deliver (N,): clipped to their limits, zero where it would push
    a wheel at its speed limit further out, less viscous friction (:func:`motor_limit_kernel`,
    the rule the plant applies at every integration stage)."""
    u = _vector(motor_torque, "motor_torque", array.n)
    om = _vector(wheel_speed, "wheel_speed", array.n)
    out = np.empty(array.n)
    for i, w in enumerate(array.wheels):
        out[i], _ = motor_limit_kernel(
            u[i], om[i], array.max_torque[i], array.max_speed[i], w.friction, 0.0
        )
    return out


@njit(cache=True)
def motor_limit_kernel(u, rate, max_torque, max_rate, viscous, coulomb):
    """What a motor delivers of the torque ``u`` [N m] at the joint rate ``rate`` [rad/s]
    (compiled; the one implementation of the motor limits, used by the plant for arm joints,
    reaction wheels and VSCMG gimbals and wheels): ``u`` clipped to ``+-max_torque``, cut to
    zero when the joint is at ``max_rate`` and ``u`` would push it further, less friction
    ``viscous * rate + coulomb * sign(rate)``.  Returns ``(torque, limited)``, ``limited``
    True when the clip or the cut changed ``u``."""
    out = min(max(u, -max_torque), max_torque)
    if (rate >= max_rate and out > 0.0) or (rate <= -max_rate and out < 0.0):
        out = 0.0
    limited = out != u
    out -= viscous * rate
    if coulomb != 0.0 and rate != 0.0:
        out -= coulomb if rate > 0.0 else -coulomb
    return out, limited


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
        start_fraction: float = 0.8,
        stop_fraction: float = 0.5,
    ) -> None:
        self.array = array
        self.gain = _positive(gain, "gain [1/s]")
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
        om = np.ascontiguousarray(_vector(wheel_speed, "wheel_speed", self.array.n))
        w = np.zeros(3) if base_rate is None else _vector(base_rate, "base_rate", 3)
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
