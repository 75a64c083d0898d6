"""Thrusters on the base: geometry, thrust bounds, faults and the wrench they produce.

A thruster ``i`` sits at ``R_i`` (base frame, [m]) and pushes the base along the unit
direction ``d_i`` (base frame; the force on the base, opposite to the exhaust) with a
thrust ``sigma_i`` [N], ``sigma_min <= sigma_i <= sigma_max`` (thrusters only push:
``sigma_min >= 0``).  The set of ``S`` thrusters produces, about the base frame origin and
in base coordinates (paper eqs. 33-35),

    f = sum_i sigma_i d_i                      (33)
    tau = sum_i R_i x (sigma_i d_i)            (34)
    [f; tau] = [H_f; H_t] sigma = H sigma      (35)

so column ``i`` of ``H`` is ``[d_i; R_i x d_i]``.  The wrench order ``[f, tau]`` is the
dqspace dual-force convention ``f + eps tau`` (``docs/conventions.md``); the base's
generalized force is its swap ``[tau, f]``.

This module is physics only: it says what wrench a set of thrust commands produces,
faults included.  Deciding the commands is the allocator's job
(:mod:`dqspace.actuators.allocation`); turning them into on/off pulses is
:mod:`dqspace.actuators.pwm`.

Faults (:class:`ThrusterFault`) change what a command delivers:

============ ==================================================================
kind          delivered thrust for a command ``c`` (after saturation to bounds)
============ ==================================================================
nominal       ``c``
failed_off    ``0`` (the command has no effect)
stuck_on      ``stuck_thrust`` (default ``sigma_max``; the command has no effect)
degraded      ``scale * c``, ``0 < scale <= 1`` (lower chamber pressure: the
              maximum delivered thrust becomes ``scale * sigma_max``)
============ ==================================================================

Hence ``delivered = effectiveness * clip(c, sigma_min, sigma_max) + fixed_thrust`` with
``effectiveness`` 1, 0, 0, ``scale`` and ``fixed_thrust`` 0, 0, ``stuck_thrust``, 0.

Valve timing (when a commanded on/off pulse actually delivers thrust: opening and closing
delays, a minimum on-time) is :mod:`dqspace.actuators.valves`; :class:`Valves`,
:class:`ValveWindows` and :func:`valve_plan_kernel` are re-exported here.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Self

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ..dq import UNIT_TOL
from ..dq.checks import check_unit_vector
from ._checks import finite_scalar
from .valves import Valves, ValveWindows, valve_plan_kernel

__all__ = [
    "MIN_IMPULSE_BIT",
    "FaultKind",
    "Thruster",
    "ThrusterFault",
    "ThrusterSet",
    "Valves",
    "ValveWindows",
    "delivered_thrust_kernel",
    "valve_plan_kernel",
    "paper_thruster_set",
]


def _readonly(a: ArrayLike) -> NDArray[np.float64]:
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


def _vector3(value: ArrayLike, what: str, who: str) -> NDArray[np.float64]:
    a = np.asarray(value, dtype=float)
    if a.shape != (3,):
        raise ValueError(f"{who}: {what} must have shape (3,), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{who}: {what} must be finite, got {a}")
    return a


#: Default minimum impulse bit of a thruster [N s]: 1 ms minimum on-time at 10 N, the value
#: the embedded scenarios run with (the default of :class:`Thruster`,
#: :func:`paper_thruster_set` and the scenario key ``thrusters.min_impulse_bit``).
MIN_IMPULSE_BIT = 0.01


@dataclass(frozen=True, eq=False)
class Thruster:
    """One thruster rigidly mounted on the base.

    Attributes
    ----------
    position : (3,) array [m]
        Mounting point ``R_i`` in base coordinates (relative to the base frame origin).
    direction : (3,) array
        Unit direction ``d_i`` of the force on the base, base coordinates (opposite to the
        exhaust).  Accepted if ``| |d| - 1 | <= dqspace.dq.UNIT_TOL`` and then stored
        normalized.
    sigma_max : float [N]
        Maximum thrust, ``> 0`` and ``>= sigma_min``.
    sigma_min : float [N]
        Minimum thrust, ``>= 0`` (thrusters only push).  Default 0.
    min_impulse_bit : float [N s]
        Smallest impulse one firing can deliver (``sigma_max`` times the minimum valve
        on-time); 0 means none.  Default :data:`MIN_IMPULSE_BIT` (0.01 N s).  Used by
        :mod:`dqspace.actuators.pwm`.
    name : str
        Optional label, used in error messages and fault look-ups.

    ``sigma_min``, ``min_impulse_bit`` and ``name`` are keyword-only.
    """

    position: NDArray[np.float64]
    direction: NDArray[np.float64]
    sigma_max: float
    sigma_min: float = field(default=0.0, kw_only=True)
    min_impulse_bit: float = field(default=MIN_IMPULSE_BIT, kw_only=True)
    name: str = field(default="", kw_only=True)

    def __post_init__(self) -> None:
        who = f"thruster {self.name!r}" if self.name else "thruster"
        p = _vector3(self.position, "position", who)
        d = _vector3(self.direction, "direction", who)
        # a thruster direction is accepted within dq.UNIT_TOL (1e-6) of unit length, then
        # stored normalised
        d = check_unit_vector(d, f"{who}: direction", tol=UNIT_TOL)
        smax = finite_scalar(self.sigma_max, "sigma_max [N]", who)
        smin = finite_scalar(self.sigma_min, "sigma_min [N]", who)
        mib = finite_scalar(self.min_impulse_bit, "min_impulse_bit [N s]", who)
        if smin < 0.0:
            raise ValueError(f"{who}: sigma_min must be >= 0 (thrusters only push), got {smin}")
        if smin > smax:
            raise ValueError(f"{who}: sigma_min = {smin} N exceeds sigma_max = {smax} N")
        if smax <= 0.0:
            raise ValueError(f"{who}: sigma_max must be > 0, got {smax}")
        if mib < 0.0:
            raise ValueError(f"{who}: min_impulse_bit must be >= 0, got {mib}")
        object.__setattr__(self, "position", _readonly(p))
        object.__setattr__(self, "direction", _readonly(d))
        object.__setattr__(self, "sigma_max", smax)
        object.__setattr__(self, "sigma_min", smin)
        object.__setattr__(self, "min_impulse_bit", mib)
        object.__setattr__(self, "name", str(self.name))


class FaultKind(StrEnum):
    """Health of one thruster (see the module docstring for what each delivers)."""

    NOMINAL = "nominal"
    FAILED_OFF = "failed_off"
    STUCK_ON = "stuck_on"
    DEGRADED = "degraded"


@dataclass(frozen=True)
class ThrusterFault:
    """The health of one thruster.

    Build with the class methods: ``ThrusterFault.failed_off()``,
    ``ThrusterFault.stuck_on(thrust=None)``, ``ThrusterFault.degraded(scale)``.

    Attributes
    ----------
    kind : FaultKind
    scale : float
        DEGRADED only: delivered thrust per unit command, ``0 < scale <= 1``.
    stuck_thrust : float or None [N]
        STUCK_ON only: the thrust delivered whatever the command; ``None`` means the
        thruster's ``sigma_max``.  Must lie in ``[0, sigma_max]`` of its thruster.
    """

    kind: FaultKind = FaultKind.NOMINAL
    scale: float = 1.0
    stuck_thrust: float | None = None

    def __post_init__(self) -> None:
        try:
            kind = FaultKind(self.kind)
        except ValueError:
            raise ValueError(
                f"fault kind must be one of {[k.value for k in FaultKind]}, got {self.kind!r}"
            ) from None
        object.__setattr__(self, "kind", kind)
        scale = finite_scalar(self.scale, "scale", "fault")
        if kind is FaultKind.DEGRADED:
            if not 0.0 < scale <= 1.0:
                raise ValueError(
                    f"fault: degraded scale must be in (0, 1], got {scale} "
                    "(use ThrusterFault.failed_off() for a dead thruster)"
                )
        elif scale != 1.0:
            raise ValueError(f"fault: scale applies to degraded thrusters only, got {scale}")
        if self.stuck_thrust is not None:
            if kind is not FaultKind.STUCK_ON:
                raise ValueError("fault: stuck_thrust applies to stuck_on thrusters only")
            st = finite_scalar(self.stuck_thrust, "stuck_thrust [N]", "fault")
            if st < 0.0:
                raise ValueError(f"fault: stuck_thrust must be >= 0, got {st}")
            object.__setattr__(self, "stuck_thrust", st)
        object.__setattr__(self, "scale", scale)

    @classmethod
    def nominal(cls) -> Self:
        """A healthy thruster."""
        return cls(FaultKind.NOMINAL)

    @classmethod
    def failed_off(cls) -> Self:
        """A thruster that no longer fires."""
        return cls(FaultKind.FAILED_OFF)

    @classmethod
    def stuck_on(cls, thrust: float | None = None) -> Self:
        """A thruster firing at ``thrust`` [N] (default its ``sigma_max``) whatever the command."""
        return cls(FaultKind.STUCK_ON, stuck_thrust=thrust)

    @classmethod
    def degraded(cls, scale: float) -> Self:
        """A thruster delivering ``scale`` times its command, ``0 < scale <= 1``."""
        return cls(FaultKind.DEGRADED, scale=scale)


@dataclass(frozen=True, eq=False)
class ThrusterSet:
    """``S`` thrusters on the base and their current health (immutable).

    Parameters
    ----------
    thrusters : sequence of Thruster, length S >= 1
        Names, where given, must be unique.
    faults : mapping {int or str: ThrusterFault}, optional
        Health of the thrusters keyed by index or name; the others are nominal.

    Attributes
    ----------
    thrusters : tuple of Thruster
    faults : tuple of ThrusterFault, length S
    H : (6, S) array
        Mapping of eq. (35), rows ``[H_f; H_t]``: column ``i`` is ``[d_i; R_i x d_i]``
        (nominal geometry; faults do not change it).  Units [1] and [m].
    positions, directions : (S, 3) arrays [m], [1]
    sigma_min, sigma_max : (S,) arrays [N]
    min_impulse_bit : (S,) array [N s]
    effectiveness : (S,) array
        Delivered thrust per unit command: 1 nominal, ``scale`` degraded, 0 failed-off
        and stuck-on.
    fixed_thrust : (S,) array [N]
        Thrust delivered whatever the command: ``stuck_thrust`` for stuck-on, else 0.
    command_lower, command_upper : (S,) arrays [N]
        The command range worth planning with: ``[sigma_min, sigma_max]`` for nominal and
        degraded thrusters, ``[0, 0]`` for failed-off and stuck-on ones (their command
        has no effect).
    """

    thrusters: Sequence[Thruster]
    faults: Mapping[int | str, ThrusterFault] | Sequence[ThrusterFault] | None = field(default=None)

    def __post_init__(self) -> None:
        ths = tuple(self.thrusters)
        if len(ths) == 0:
            raise ValueError("thrusters: a thruster set needs at least one thruster")
        for i, t in enumerate(ths):
            if not isinstance(t, Thruster):
                raise ValueError(f"thrusters[{i}] must be a Thruster, got {type(t).__name__}")
        names = [t.name for t in ths if t.name]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"thrusters: names must be unique, repeated: {dup}")
        object.__setattr__(self, "thrusters", ths)
        S = len(ths)

        faults = [ThrusterFault.nominal()] * S
        given = self.faults
        if given is not None:
            if isinstance(given, Mapping):
                items = given.items()
            elif isinstance(given, Sequence) and len(given) == S:
                items = enumerate(given)
            else:
                raise ValueError(
                    "faults must be a mapping {index or name: ThrusterFault} or a "
                    f"sequence of {S} ThrusterFault"
                )
            for key, fault in items:
                i = self.index(key)
                if not isinstance(fault, ThrusterFault):
                    raise ValueError(
                        f"faults[{key!r}] must be a ThrusterFault, got {type(fault).__name__}"
                    )
                faults[i] = fault
        object.__setattr__(self, "faults", tuple(faults))

        P = np.array([t.position for t in ths])
        D = np.array([t.direction for t in ths])
        smin = np.array([t.sigma_min for t in ths])
        smax = np.array([t.sigma_max for t in ths])
        eff = np.ones(S)
        fixed = np.zeros(S)
        lo = smin.copy()
        hi = smax.copy()
        for i, fault in enumerate(self.faults):
            if fault.kind is FaultKind.NOMINAL:
                continue
            if fault.kind is FaultKind.DEGRADED:
                eff[i] = fault.scale
                continue
            eff[i] = 0.0
            lo[i] = hi[i] = 0.0
            if fault.kind is FaultKind.STUCK_ON:
                st = smax[i] if fault.stuck_thrust is None else fault.stuck_thrust
                if st > smax[i]:
                    raise ValueError(
                        f"faults: {self._label(i)} stuck_thrust = {st} N exceeds its "
                        f"sigma_max = {smax[i]} N"
                    )
                fixed[i] = st
        H = np.vstack([D.T, np.cross(P, D).T])
        for name, value in [
            ("positions", P),
            ("directions", D),
            ("sigma_min", smin),
            ("sigma_max", smax),
            ("min_impulse_bit", [t.min_impulse_bit for t in ths]),
            ("H", H),
            ("effectiveness", eff),
            ("fixed_thrust", fixed),
            ("command_lower", lo),
            ("command_upper", hi),
        ]:
            object.__setattr__(self, name, _readonly(value))

    def __repr__(self) -> str:
        faults = {
            i: f.kind.value for i, f in enumerate(self.faults) if f.kind is not FaultKind.NOMINAL
        }
        return f"ThrusterSet({self.n} thrusters, faults={faults})"

    # -- look-ups ---------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.thrusters)

    @property
    def n(self) -> int:
        """Number of thrusters ``S``."""
        return len(self.thrusters)

    @property
    def names(self) -> tuple[str, ...]:
        """Tuple of the thrusters' names (``""`` where none was given)."""
        return tuple(t.name for t in self.thrusters)

    @property
    def H_f(self) -> NDArray[np.float64]:
        """(3, S) force mapping of eq. (35): column ``i`` is ``d_i``."""
        return self.H[:3]

    @property
    def H_t(self) -> NDArray[np.float64]:
        """(3, S) torque mapping of eq. (35), about the base origin: column ``i`` is
        ``R_i x d_i`` [m]."""
        return self.H[3:]

    def _label(self, i):
        name = self.thrusters[i].name
        return f"thruster {i} ({name!r})" if name else f"thruster {i}"

    def index(self, key: int | str) -> int:
        """Index of a thruster given its index or its name."""
        if isinstance(key, str):
            for i, t in enumerate(self.thrusters):
                if t.name == key:
                    return i
            raise ValueError(f"no thruster named {key!r}; names: {list(self.names)}")
        if isinstance(key, bool) or not isinstance(key, int | np.integer):
            raise ValueError(f"thruster key must be an int index or a name, got {key!r}")
        if not -self.n <= key < self.n:
            raise ValueError(f"thruster index {key} out of range for {self.n} thrusters")
        return int(key) % self.n

    def with_faults(self, faults: Mapping[int | str, ThrusterFault]) -> "ThrusterSet":
        """A copy of this set with the given faults applied on top of the current ones.

        Parameters
        ----------
        faults : mapping {int or str: ThrusterFault}
            Use ``ThrusterFault.nominal()`` to repair a thruster.
        """
        if not isinstance(faults, Mapping):
            raise ValueError("faults must be a mapping {index or name: ThrusterFault}")
        new = dict(enumerate(self.faults))
        for key, fault in faults.items():
            new[self.index(key)] = fault
        return ThrusterSet(self.thrusters, new)

    def healthy(self) -> "ThrusterSet":
        """A copy of this set with every thruster nominal."""
        return ThrusterSet(self.thrusters)

    def same_geometry(self, other: object) -> bool:
        """True if ``other`` has the same thrusters (positions, directions, bounds, names);
        the faults may differ."""
        return isinstance(other, ThrusterSet) and (
            other is self or other.thrusters == self.thrusters or self._geometry_equal(other)
        )

    def _geometry_equal(self, other):
        return (
            other.n == self.n
            and other.names == self.names
            and np.array_equal(other.H, self.H)
            and np.array_equal(other.sigma_min, self.sigma_min)
            and np.array_equal(other.sigma_max, self.sigma_max)
            and np.array_equal(other.min_impulse_bit, self.min_impulse_bit)
        )

    # -- physics ------------------------------------------------------------------
    def _check_sigma(self, sigma):
        s = np.asarray(sigma, dtype=float)
        if s.ndim == 0 or s.shape[-1] != self.n:
            raise ValueError(f"sigma must have shape (..., {self.n}), got {s.shape}")
        if not np.all(np.isfinite(s)):
            bad = tuple(int(k) for k in np.argwhere(~np.isfinite(s))[0])
            raise ValueError(f"sigma must be finite, got {s[bad]} at index {bad}")
        return s

    def delivered_thrust(self, sigma: ArrayLike) -> NDArray[np.float64]:
        """Thrust each thruster delivers for the commands ``sigma``.

        Commands are saturated to ``[sigma_min, sigma_max]`` (a thruster cannot push
        harder than its maximum, nor pull), then the faults apply:
        ``effectiveness * clip(sigma) + fixed_thrust``.

        Parameters
        ----------
        sigma : (..., S) array [N], commanded thrusts

        Returns
        -------
        (..., S) array [N]
        """
        s = self._check_sigma(sigma)
        flat = np.ascontiguousarray(s.reshape(-1, self.n))
        out = np.empty(flat.shape)
        _delivered_thrust_rows(
            flat, self.sigma_min, self.sigma_max, self.effectiveness, self.fixed_thrust, out
        )
        return out.reshape(s.shape)

    def wrench(self, sigma: ArrayLike) -> NDArray[np.float64]:
        """Wrench ``[f, tau]`` the set produces on the base for the commands ``sigma``.

        ``H @ delivered_thrust(sigma)`` (eqs. 33-35): force and torque about the base frame
        origin, base coordinates.

        Parameters
        ----------
        sigma : (..., S) array [N], commanded thrusts

        Returns
        -------
        (..., 6) array, ``[f (N), tau (N m)]``
        """
        return self.delivered_thrust(sigma) @ self.H.T


@njit(cache=True)
def delivered_thrust_kernel(
    sigma: NDArray[np.float64],
    sigma_min: NDArray[np.float64],
    sigma_max: NDArray[np.float64],
    effectiveness: NDArray[np.float64],
    fixed_thrust: NDArray[np.float64],
    out: NDArray[np.float64],
) -> None:
    """Delivered thrust ``effectiveness * clip(sigma, sigma_min, sigma_max) + fixed_thrust``
    (compiled; the one implementation of :meth:`ThrusterSet.delivered_thrust`).

    Parameters
    ----------
    sigma : (S,) commanded thrusts [N]
    sigma_min, sigma_max : (S,) thrust bounds [N]
    effectiveness, fixed_thrust : (S,) the faults (:class:`ThrusterSet`) [-], [N]
    out : (S,) written, delivered thrusts [N] (may be ``sigma`` itself)
    """
    for i in range(sigma.shape[0]):
        out[i] = effectiveness[i] * min(max(sigma[i], sigma_min[i]), sigma_max[i]) + fixed_thrust[i]


@njit(cache=True)
def _delivered_thrust_rows(sigma, sigma_min, sigma_max, effectiveness, fixed_thrust, out):
    for k in range(sigma.shape[0]):
        delivered_thrust_kernel(sigma[k], sigma_min, sigma_max, effectiveness, fixed_thrust, out[k])


# One vertex of the 0.3 m cube per row (signs of x, y, z): a regular tetrahedron.
_PAPER_VERTICES = ((1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1))


def paper_thruster_set(
    *,
    half_size: float = 0.15,
    sigma_max: float = 10.0,
    sigma_min: float = 0.0,
    min_impulse_bit: float = MIN_IMPULSE_BIT,
    faults: Mapping[int | str, ThrusterFault] | None = None,
) -> ThrusterSet:
    """The ready 12-thruster layout used for the paper's base (section 5).

    The paper mounts "3 groups of thrusters at 4 vertices" of the 0.3 m cube base but gives
    neither positions nor directions (its figure 6 is not available) nor thrust levels;
    these are dqspace's choices (``docs/thrusters.md``):

    * 4 vertices forming a regular tetrahedron, ``half_size * s`` with
      ``s`` in ``(+,+,+), (+,-,-), (-,+,-), (-,-,+)``;
    * at each vertex 3 thrusters whose exhaust points outward along the cube's face
      normals, so the force on the base is ``-s_k e_k`` for ``k = x, y, z``
      (names ``"v<vertex>_<axis>"``, e.g. ``"v0_x"``; index ``3 * vertex + k``).

    Every direction of force and every axis of torque is then reachable with non-negative
    thrust (``H`` has rank 6 and its columns positively span R^6).

    Parameters
    ----------
    half_size : float [m], half the cube's edge (base centred on its frame origin)
    sigma_max : float [N], maximum thrust of every thruster (default 10 N)
    sigma_min : float [N], minimum thrust (default 0)
    min_impulse_bit : float [N s], default :data:`MIN_IMPULSE_BIT` (0.01 N s: 1 ms minimum
        on-time at 10 N)
    faults : mapping, optional, as in :class:`ThrusterSet`

    Returns
    -------
    ThrusterSet
    """
    h = finite_scalar(half_size, "half_size [m]", "paper_thruster_set")
    if h <= 0.0:
        raise ValueError(f"paper_thruster_set: half_size must be > 0, got {h}")
    thrusters = []
    for v, signs in enumerate(_PAPER_VERTICES):
        s = np.array(signs, dtype=float)
        for k, axis in enumerate("xyz"):
            d = np.zeros(3)
            d[k] = -s[k]
            thrusters.append(
                Thruster(
                    position=h * s,
                    direction=d,
                    sigma_max=sigma_max,
                    sigma_min=sigma_min,
                    min_impulse_bit=min_impulse_bit,
                    name=f"v{v}_{axis}",
                )
            )
    return ThrusterSet(tuple(thrusters), faults)
