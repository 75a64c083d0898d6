"""Reaction-wheel arrays: the wheels as multibody bodies, their momentum and their motors.

A wheel is a rotor on a REVOLUTE joint about its spin axis ``a`` on the base; its motor
torque ``u`` acts on the rotor and, reacting, on the base (the multibody dynamics carry both:
the torque is internal).  Over short times the base receives ``-u a`` from each wheel and the
gyroscopic torque ``-w x h`` of the wheels' momentum ``h`` turning with it.

Physics only: what the wheels are (:class:`ReactionWheel`, :class:`WheelArray`, the
layouts), their bodies in a multibody model (:func:`attach_wheels`), their spin momentum
(:func:`wheel_momentum_kernel`) and what a motor delivers of a command
(:func:`motor_limit_kernel`).  The decisions -- the torque distribution over the wheels and
momentum management by the thrusters -- are :mod:`dqspace.actuators.wheel_control`.

Wheel speeds are in rad/s; :data:`RPM` converts from revolutions per minute (``x * RPM``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..dq import dq_from_rotation_translation
from ..dq.checks import check_unit_vector
from ..multibody import Body, Joint, JointType, Model
from ._checks import finite_vec3, finite_vector, positive

__all__ = [
    "RPM",
    "motor_limit_kernel",
    "ReactionWheel",
    "WheelArray",
    "WheelIndex",
    "WheelModel",
    "attach_wheels",
    "motor_torque_limits",
    "wheel_momentum_kernel",
    "pyramid_wheels",
    "orthogonal_wheels",
]

#: One revolution per minute in rad/s (a thirtieth of pi): a speed of ``x`` rpm is ``x * RPM``
#: rad/s, the one conversion of the actuators (wheel and VSCMG speeds).
RPM = math.pi / 30.0
#: defaults of the named layouts (a small-satellite wheel, dqspace's choice)
SPIN_INERTIA = 0.01  # [kg m^2]
WHEEL_MASS = 1.0  # [kg]
MAX_TORQUE = 0.5  # [N m]
MAX_SPEED = 6000.0 * RPM  # [rad/s]


@dataclass(frozen=True, eq=False)
class ReactionWheel:
    """One reaction wheel on the base.

    Attributes
    ----------
    axis : (3,) spin axis in the base frame (any non-zero length; stored normalised)
    position : (3,) centre of the rotor in the base frame [m]
    spin_inertia : rotor moment about the axis [kg m^2]
    transverse_inertia : rotor moment about a transverse axis through its centre [kg m^2];
        0 means half the spin moment (a thin disc)
    mass : rotor mass [kg]
    max_torque : motor torque limit [N m]
    max_speed : speed limit relative to the base [rad/s]
    friction : viscous friction [N m s/rad] (the plant subtracts ``friction * speed``)
    name : label
    coulomb : Coulomb friction [N m] (the plant subtracts ``coulomb * sign(speed)``)
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
    coulomb: float = 0.0

    def __post_init__(self) -> None:
        who = f"wheel {self.name!r}" if self.name else "wheel"
        # any non-zero length (a direction given up to scale), normalised
        axis = check_unit_vector(self.axis, f"{who}: axis", tol=math.inf)
        p = finite_vec3(self.position, f"{who}: position")
        Is = positive(self.spin_inertia, f"{who}: spin_inertia", "kg m^2")
        It = float(self.transverse_inertia)
        if not (math.isfinite(It) and It >= 0):
            raise ValueError(f"{who}: transverse_inertia must be >= 0 and finite, got {It}")
        It = It if It > 0 else 0.5 * Is
        if Is > 2.0 * It * (1 + 1e-12):
            raise ValueError(
                f"{who}: spin_inertia {Is} > 2 x transverse_inertia {It}: no rigid rotor has "
                f"such moments"
            )
        fr, cf = float(self.friction), float(self.coulomb)
        if not (math.isfinite(fr) and fr >= 0):
            raise ValueError(f"{who}: friction must be >= 0 and finite, got {fr}")
        if not (math.isfinite(cf) and cf >= 0):
            raise ValueError(f"{who}: coulomb must be >= 0 and finite, got {cf}")
        object.__setattr__(self, "axis", axis)
        object.__setattr__(self, "position", p)
        object.__setattr__(self, "spin_inertia", Is)
        object.__setattr__(self, "transverse_inertia", It)
        object.__setattr__(self, "mass", positive(self.mass, f"{who}: mass", "kg"))
        object.__setattr__(
            self, "max_torque", positive(self.max_torque, f"{who}: max_torque", "N m")
        )
        object.__setattr__(
            self, "max_speed", positive(self.max_speed, f"{who}: max_speed", "rad/s")
        )
        object.__setattr__(self, "friction", fr)
        object.__setattr__(self, "coulomb", cf)
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
        om = np.ascontiguousarray(finite_vector(wheel_speed, "wheel_speed", self.n))
        w = np.zeros(3) if base_rate is None else finite_vector(base_rate, "base_rate", 3)
        h = np.empty(3)
        wheel_momentum_kernel(self.A, self.I_s, om, np.ascontiguousarray(w), h)
        return h


def pyramid_wheels(
    *,
    skew: float = math.acos(1.0 / math.sqrt(3.0)),
    radius: float = 0.25,
    spin_inertia: float = SPIN_INERTIA,
    mass: float = WHEEL_MASS,
    max_torque: float = MAX_TORQUE,
    max_speed: float = MAX_SPEED,
    friction: float = 0.0,
    coulomb: float = 0.0,
) -> WheelArray:
    """Four wheels in a pyramid: wheel i at ``radius`` along ``n_i`` (+x, +y, -x, -y), its
    axis ``sin(skew) n_i + cos(skew) z`` (the default skew gives equal authority on the
    three axes); every wheel with the viscous ``friction`` [N m s/rad] and the Coulomb
    ``coulomb`` [N m] friction."""
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
                friction,
                name=f"rw{i + 1}",
                coulomb=coulomb,
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
    friction: float = 0.0,
    coulomb: float = 0.0,
) -> WheelArray:
    """Three wheels on the base axes x, y, z, each at ``radius`` along its axis (friction as
    :func:`pyramid_wheels`)."""
    return WheelArray(
        ReactionWheel(
            a,
            radius * a,
            spin_inertia,
            0.0,
            mass,
            max_torque,
            max_speed,
            friction,
            name=f"rw{i + 1}",
            coulomb=coulomb,
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
        v[self.index.wheel_v] = finite_vector(wheel_speed, "wheel_speed", self.array.n)
        return q, v

    def joint_torques(self, motor_torque: ArrayLike) -> NDArray[np.float64]:
        """(nv,) generalized force with the motor torques at the wheel joints."""
        tau = np.zeros(self.model.nv)
        tau[self.index.wheel_v] = finite_vector(motor_torque, "motor_torque", self.array.n)
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


def motor_torque_limits(
    array: WheelArray, motor_torque: ArrayLike, wheel_speed: ArrayLike
) -> NDArray[np.float64]:
    """The torque the motors deliver (N,): clipped to their limits, zero where it would push
    a wheel at its speed limit further out, less viscous and Coulomb friction
    (:func:`motor_limit_kernel`, the rule the plant applies at every integration stage)."""
    u = finite_vector(motor_torque, "motor_torque", array.n)
    om = finite_vector(wheel_speed, "wheel_speed", array.n)
    out = np.empty(array.n)
    for i, w in enumerate(array.wheels):
        out[i], _ = motor_limit_kernel(
            u[i], om[i], array.max_torque[i], array.max_speed[i], w.friction, w.coulomb
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
