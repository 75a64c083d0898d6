"""Variable-speed control moment gyroscopes (VSCMGs): the device and the cluster model.

Physics only (paper Sec. 3.2); the cluster as real bodies of a multibody model
(eq. 36-37) is :mod:`dqspace.actuators.vscmg_multibody`, the steering law that decides the
commands lives in :mod:`dqspace.actuators.steering`, the motor servo loops that
follow them in :mod:`dqspace.actuators.servo`.  Full derivation, the
chosen geometry and every departure from the printed equations are in
``docs/vscmg.md``.

One VSCMG is a gimbal frame turning about the gimbal axis ``g`` (fixed in the
base) by the gimbal angle ``gamma``, carrying a wheel (rotor) that spins about
the spin axis ``s`` at the speed ``Omega`` relative to the gimbal.  The
transverse axis completes the right-handed triad ``g = s x t``, i.e.
``t = g x s``.  At ``gamma`` the axes in base coordinates are (a positive
rotation about g)::

    s(gamma) = cos(gamma) s0 + sin(gamma) t0
    t(gamma) = cos(gamma) t0 - sin(gamma) s0
    ds/dgamma = g x s = t,      dt/dgamma = g x t = -s

Both centres of mass lie on the crossing point of the two axes, the mounting
point ``p`` (fixed in the base).  The gimbal frame's principal axes are
``(s, t, g)`` with moments ``(I_gs, I_gt, I_gg)``, the wheel is axisymmetric
about ``s`` with moments ``(I_ws, I_wt, I_wt)``.  With ``w`` the base's angular
velocity, the cluster's angular momentum about the mounting points is
``sum_i J_i(gamma) w + h`` with the relative part (the paper's)::

    h = A_g I_cg gamma_dot + A_s I_ws Omega,      I_cg = I_gg + I_wt

and the torque the cluster exerts on the base (base coordinates, about the
base origin) is that of the cluster *locked* at the current gimbal angles (a
rigid body moving with the base) plus

    tau = B gamma_ddot + C gamma_dot + E Omega_dot + d                 (40)-(41)
    B = -A_g I_cg
    C = -(A_t I_ws [Omega]_d + [w]x A_g I_cg + D(w) [I_s - I_t]_d)
    E = -A_s I_ws
    d = -[w]x A_s I_ws Omega

``D(w)`` has columns ``t_i (s_i . w) + s_i (t_i . w)``: the rate of the locked
inertia ``J_i(gamma)`` (``I_s = I_ws + I_gs``, ``I_t = I_wt + I_gt``).  The
minus signs make ``tau`` the torque ON the base (the paper's (40) prints the
rate of the cluster's momentum); ``d`` is the command-independent gyroscopic
torque of the wheel momentum.  The paper neglects ``B gamma_ddot`` in (41).
"""

import math
from collections import namedtuple
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .._jit import param_array
from ..dq.checks import AXIS_TOL, check_unit_vector
from ._checks import finite_vec3, finite_vector, positive
from .reaction_wheels import RPM

__all__ = [
    "TABLE4_MASS",
    "TABLE4_INERTIA",
    "PYRAMID_SKEW",
    "GIMBAL_MASS",
    "GIMBAL_INERTIA",
    "NOMINAL_WHEEL_SPEED",
    "MOUNT_RADIUS",
    "VSCMG",
    "VSCMGCluster",
    "VSCMGGeometry",
    "empty_geometry",
    "Axes",
    "VSCMGMatrices",
    "pyramid_cluster",
    "unit_axes",
    "vscmg_axes",
    "vscmg_matrices",
]

#: A cluster's geometry as the kernels read it (declared once; :attr:`VSCMGCluster.geometry`):
#: ``A_g0``, ``A_s0``, ``A_t0`` (3, K) the gimbal, spin and transverse axes at gamma = 0
#: (base coordinates); ``I_cg``, ``I_ws``, ``I_s``, ``I_t`` (K,) the moments [kg m^2] of
#: :class:`VSCMGCluster`.
VSCMGGeometry = namedtuple("VSCMGGeometry", ["A_g0", "A_s0", "A_t0", "I_cg", "I_ws", "I_s", "I_t"])


def empty_geometry() -> VSCMGGeometry:
    """The :data:`VSCMGGeometry` of no VSCMG (K = 0)."""
    return VSCMGGeometry(
        *(param_array(np.zeros((3, 0) if f.startswith("A_") else 0)) for f in VSCMGGeometry._fields)
    )


#: Rotor mass [kg], paper Table 4 (a steel cylinder of radius 0.1 m and height 0.1 m).
TABLE4_MASS = 24.66
#: Rotor inertia about its centre [kg m^2], Table 4: ``(Ixx, Iyy, Izz)``, x the spin axis.
TABLE4_INERTIA = (0.1233, 0.08221, 0.08221)
#: Skew angle of the standard pyramid [rad], ``acos(1/sqrt(3))`` = 54.7356 deg.
PYRAMID_SKEW = float(np.arccos(1.0 / np.sqrt(3.0)))
#: Gimbal frame (housing) mass [kg] -- a choice: a 2 kg thin cylindrical shell around the rotor.
GIMBAL_MASS = 2.0
#: Gimbal frame principal moments ``(I_gs, I_gt, I_gg)`` [kg m^2] of that shell
#: (radius 0.12 m, length 0.12 m, axis along s): ``m r^2`` and ``m (r^2/2 + L^2/12)``.
GIMBAL_INERTIA = (
    2.0 * 0.12**2,
    2.0 * (0.12**2 / 2 + 0.12**2 / 12),
    2.0 * (0.12**2 / 2 + 0.12**2 / 12),
)
#: Nominal wheel speed [rad/s] -- a choice: 3000 rpm (wheel momentum 38.7 N m s).
NOMINAL_WHEEL_SPEED = 3000.0 * RPM
#: Distance of the mounting points from the base centre [m] -- a choice: half the 0.3 m cube,
#: plus the 0.12 m housing radius, plus 0.03 m clearance.
MOUNT_RADIUS = 0.3


@dataclass(frozen=True)
class VSCMG:
    """One variable-speed control moment gyroscope.

    Attributes
    ----------
    gimbal_axis : (3,) unit gimbal axis g in the base frame
    spin_axis : (3,) unit spin axis s0 at gamma = 0 in the base frame, orthogonal to g
    position : (3,) mounting point p (centre of gimbal and wheel) in the base frame [m]
    wheel_mass : float [kg]
    wheel_inertia : (2,) ``(I_ws, I_wt)``: wheel moments about s and about any transverse
        axis through its centre [kg m^2]
    gimbal_mass : float [kg]
    gimbal_inertia : (3,) ``(I_gs, I_gt, I_gg)``: gimbal frame moments about s, t, g
        through p [kg m^2]
    nominal_wheel_speed : float, the wheel speed Omega relative to the gimbal at which the
        device is operated [rad/s] (used for default states and steering scales)

    Raises
    ------
    ValueError
        non-unit or non-orthogonal axes, non-positive masses or moments, moments that no
        rigid body has (triangle inequality), a non-positive nominal wheel speed.
    """

    gimbal_axis: NDArray[np.float64]
    spin_axis: NDArray[np.float64]
    position: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    wheel_mass: float = TABLE4_MASS
    wheel_inertia: tuple[float, float] = TABLE4_INERTIA[:2]
    gimbal_mass: float = GIMBAL_MASS
    gimbal_inertia: tuple[float, float, float] = GIMBAL_INERTIA
    nominal_wheel_speed: float = NOMINAL_WHEEL_SPEED

    def __post_init__(self) -> None:
        # the axes are kept as given (not normalised): unit to AXIS_TOL, orthogonal to it
        g = check_unit_vector(self.gimbal_axis, "gimbal_axis", normalize=False)
        s = check_unit_vector(self.spin_axis, "spin_axis", normalize=False)
        if abs(g @ s) > AXIS_TOL:
            raise ValueError(
                f"spin_axis {s.tolist()} is not orthogonal to gimbal_axis {g.tolist()} "
                f"(g . s = {g @ s:.3g})"
            )
        p = finite_vec3(self.position, "position")
        mw = positive(self.wheel_mass, "wheel_mass", "kg")
        mg = positive(self.gimbal_mass, "gimbal_mass", "kg")
        Iw = np.asarray(self.wheel_inertia, dtype=float)
        Ig = np.asarray(self.gimbal_inertia, dtype=float)
        if Iw.shape != (2,) or not np.all(np.isfinite(Iw)) or np.any(Iw <= 0):
            raise ValueError(
                f"wheel_inertia must be two positive moments (I_ws, I_wt) [kg m^2], got {Iw}"
            )
        if Ig.shape != (3,) or not np.all(np.isfinite(Ig)) or np.any(Ig <= 0):
            raise ValueError(
                f"gimbal_inertia must be three positive moments (I_gs, I_gt, I_gg) [kg m^2], "
                f"got {Ig}"
            )
        if Iw[0] > 2.0 * Iw[1] * (1 + 1e-12):
            raise ValueError(
                f"wheel_inertia {Iw.tolist()}: I_ws > 2 I_wt violates the triangle inequality "
                f"(no rigid wheel has such moments)"
            )
        srt = np.sort(Ig)
        if srt[0] + srt[1] < srt[2] * (1 - 1e-12):
            raise ValueError(
                f"gimbal_inertia {Ig.tolist()} violates the triangle inequality I1 + I2 >= I3"
            )
        w0 = positive(self.nominal_wheel_speed, "nominal_wheel_speed", "rad/s")
        object.__setattr__(self, "gimbal_axis", g)
        object.__setattr__(self, "spin_axis", s)
        object.__setattr__(self, "position", p)
        object.__setattr__(self, "wheel_mass", mw)
        object.__setattr__(self, "gimbal_mass", mg)
        object.__setattr__(self, "wheel_inertia", tuple(Iw.tolist()))
        object.__setattr__(self, "gimbal_inertia", tuple(Ig.tolist()))
        object.__setattr__(self, "nominal_wheel_speed", w0)
        for a in (g, s, p):
            a.setflags(write=False)

    @property
    def transverse_axis(self) -> NDArray[np.float64]:
        """t0 = g x s0 (3,), the transverse axis at gamma = 0 (so that g = s x t)."""
        return np.cross(self.gimbal_axis, self.spin_axis)

    @property
    def gimbal_axis_inertia(self) -> float:
        """``I_cg = I_gg + I_wt`` [kg m^2]: gimbal frame plus wheel about g."""
        return self.gimbal_inertia[2] + self.wheel_inertia[1]

    @property
    def frame_rotation(self) -> NDArray[np.float64]:
        """(3, 3) rotation ``[s0, t0, g]`` of the gimbal joint frame in the base frame."""
        return np.column_stack([self.spin_axis, self.transverse_axis, self.gimbal_axis])


@dataclass(frozen=True)
class Axes:
    """Axes of a cluster at the current gimbal angles, columns in base coordinates.

    Attributes
    ----------
    A_g, A_s, A_t : (3, K) gimbal, spin and transverse axes
    """

    A_g: NDArray[np.float64]
    A_s: NDArray[np.float64]
    A_t: NDArray[np.float64]


@dataclass(frozen=True)
class VSCMGMatrices:
    """The matrices of ``tau = B gamma_ddot + C gamma_dot + E Omega_dot + d`` (eq. 40-41).

    ``tau`` [N m] is the torque the cluster exerts on the base beyond that of the cluster
    locked at the current gimbal angles, base coordinates (see the module docstring).

    Attributes
    ----------
    A_g, A_s, A_t : (3, K) axes in base coordinates
    B : (3, K) [kg m^2], the gimbal-acceleration term the paper neglects
    C : (3, K) [N m s], torque per gimbal rate
    E : (3, K) [kg m^2], torque per wheel acceleration
    G : (3, 2K), ``[C E]`` (41)
    d : (3,) [N m], gyroscopic torque of the wheel momentum, ``-w x A_s I_ws Omega``
    """

    A_g: NDArray[np.float64]
    A_s: NDArray[np.float64]
    A_t: NDArray[np.float64]
    B: NDArray[np.float64]
    C: NDArray[np.float64]
    E: NDArray[np.float64]
    G: NDArray[np.float64]
    d: NDArray[np.float64]


# ------------------------------------------------------------------- kernels


@njit(cache=True)
def unit_axes(
    A_s0: NDArray[np.float64], A_t0: NDArray[np.float64], i: int, j: int, c: float, s: float
) -> tuple[float, float]:
    """Component j of unit i's spin and transverse axes at ``cos gamma = c, sin gamma = s``:
    ``(c s0 + s t0, c t0 - s s0)`` (the rotation about g; used by every VSCMG kernel)."""
    return c * A_s0[j, i] + s * A_t0[j, i], c * A_t0[j, i] - s * A_s0[j, i]


@njit(cache=True)
def vscmg_axes(
    A_s0: NDArray[np.float64],
    A_t0: NDArray[np.float64],
    gamma: NDArray[np.float64],
    A_s: NDArray[np.float64],
    A_t: NDArray[np.float64],
) -> None:
    """Spin and transverse axes at the gimbal angles (compiled; the one implementation).

    ``s(gamma) = cos(gamma) s0 + sin(gamma) t0``, ``t(gamma) = cos(gamma) t0 - sin(gamma) s0``.

    Parameters
    ----------
    A_s0, A_t0 : (3, K) axes at gamma = 0, base coordinates
    gamma : (K,) gimbal angles [rad]
    A_s, A_t : (3, K) written
    """
    for i in range(gamma.shape[0]):
        c, s = math.cos(gamma[i]), math.sin(gamma[i])
        for j in range(3):
            A_s[j, i], A_t[j, i] = unit_axes(A_s0, A_t0, i, j, c, s)


@njit(cache=True)
def vscmg_matrices(
    A_g0: NDArray[np.float64],
    A_s0: NDArray[np.float64],
    A_t0: NDArray[np.float64],
    I_cg: NDArray[np.float64],
    I_ws: NDArray[np.float64],
    I_s: NDArray[np.float64],
    I_t: NDArray[np.float64],
    gamma: NDArray[np.float64],
    wheel_speed: NDArray[np.float64],
    w_IB_B: NDArray[np.float64],
    B: NDArray[np.float64],
    C: NDArray[np.float64],
    E: NDArray[np.float64],
    d: NDArray[np.float64],
) -> None:
    """``B, C, E, d`` of eq. (40)-(41) at the state (compiled; the one implementation).

    With ``a_g, a_s, a_t`` unit i's axes at ``gamma_i`` and ``w = w_IB_B``::

        B_i = -I_cg a_g
        C_i = -(I_ws Omega_i a_t + I_cg w x a_g + (I_s - I_t)(a_t (w.a_s) + a_s (w.a_t)))
        E_i = -I_ws a_s
        d   = -w x sum_i I_ws Omega_i a_s

    Parameters
    ----------
    A_g0, A_s0, A_t0 : (3, K) gimbal, spin and transverse axes at gamma = 0, base coordinates
    I_cg, I_ws, I_s, I_t : (K,) moments [kg m^2] (see :class:`VSCMGCluster`)
    gamma : (K,) gimbal angles [rad]
    wheel_speed : (K,) wheel speeds Omega relative to the gimbals [rad/s]
    w_IB_B : (3,) base angular velocity, base coordinates [rad/s]
    B : (3, K) written [kg m^2]
    C : (3, K) written [N m s]
    E : (3, K) written [kg m^2]
    d : (3,) written [N m]
    """
    w0, w1, w2 = w_IB_B[0], w_IB_B[1], w_IB_B[2]
    h0 = h1 = h2 = 0.0
    for i in range(gamma.shape[0]):
        c, s = math.cos(gamma[i]), math.sin(gamma[i])
        s0, t0 = unit_axes(A_s0, A_t0, i, 0, c, s)
        s1, t1 = unit_axes(A_s0, A_t0, i, 1, c, s)
        s2, t2 = unit_axes(A_s0, A_t0, i, 2, c, s)
        g0, g1, g2 = A_g0[0, i] * I_cg[i], A_g0[1, i] * I_cg[i], A_g0[2, i] * I_cg[i]
        ws = w0 * s0 + w1 * s1 + w2 * s2
        wt = w0 * t0 + w1 * t1 + w2 * t2
        hw = I_ws[i] * wheel_speed[i]
        dI = I_s[i] - I_t[i]
        # w x (I_cg a_g), the rows of [w]x (I_cg a_g)
        wg0 = -w2 * g1 + w1 * g2
        wg1 = w2 * g0 - w0 * g2
        wg2 = -w1 * g0 + w0 * g1
        B[0, i], B[1, i], B[2, i] = -g0, -g1, -g2
        C[0, i] = -(t0 * hw + wg0 + (t0 * ws + s0 * wt) * dI)
        C[1, i] = -(t1 * hw + wg1 + (t1 * ws + s1 * wt) * dI)
        C[2, i] = -(t2 * hw + wg2 + (t2 * ws + s2 * wt) * dI)
        E[0, i], E[1, i], E[2, i] = -s0 * I_ws[i], -s1 * I_ws[i], -s2 * I_ws[i]
        h0 += s0 * hw
        h1 += s1 * hw
        h2 += s2 * hw
    d[0] = -(-w2 * h1 + w1 * h2)
    d[1] = -(w2 * h0 - w0 * h2)
    d[2] = -(-w1 * h0 + w0 * h1)


class VSCMGCluster:
    """K >= 3 VSCMGs mounted on one base.

    Parameters
    ----------
    units : sequence of :class:`VSCMG`

    Attributes
    ----------
    K : int
    units : tuple of VSCMG
    A_g0, A_s0, A_t0 : (3, K) axes at gamma = 0
    positions : (K, 3) mounting points [m]
    I_ws, I_wt, I_cg : (K,) wheel spin, wheel transverse, gimbal-axis moments [kg m^2]
    I_s, I_t : (K,) gimbal + wheel moments about s and t [kg m^2]
    nominal_wheel_speed : (K,) [rad/s]

    Raises
    ------
    ValueError
        fewer than 3 units (no full 3-axis control), gimbal axes that do not span
        three dimensions (every torque would lie in one plane).
    """

    def __init__(self, units: Iterable[VSCMG]) -> None:
        units = tuple(units)
        for i, u in enumerate(units):
            if not isinstance(u, VSCMG):
                raise ValueError(f"units[{i}] must be a VSCMG, got {type(u).__name__}")
        K = len(units)
        if K < 3:
            raise ValueError(f"a cluster needs K >= 3 VSCMGs for full 3-axis control, got K = {K}")
        self.units = units
        self.K = K
        self.A_g0 = np.column_stack([u.gimbal_axis for u in units])
        self.A_s0 = np.column_stack([u.spin_axis for u in units])
        self.A_t0 = np.column_stack([u.transverse_axis for u in units])
        sv = np.linalg.svd(self.A_g0, compute_uv=False)
        if sv[2] < 1e-6 * sv[0]:
            raise ValueError(
                f"the gimbal axes do not span 3 dimensions (singular values {sv.tolist()}): "
                f"all torques would lie in one plane"
            )
        self.positions = np.array([u.position for u in units])
        self.I_ws = np.array([u.wheel_inertia[0] for u in units])
        self.I_wt = np.array([u.wheel_inertia[1] for u in units])
        self.I_cg = np.array([u.gimbal_axis_inertia for u in units])
        self.I_s = self.I_ws + np.array([u.gimbal_inertia[0] for u in units])
        self.I_t = self.I_wt + np.array([u.gimbal_inertia[1] for u in units])
        self.nominal_wheel_speed = np.array([u.nominal_wheel_speed for u in units])
        for a in (
            self.A_g0,
            self.A_s0,
            self.A_t0,
            self.positions,
            self.I_ws,
            self.I_wt,
            self.I_cg,
            self.I_s,
            self.I_t,
            self.nominal_wheel_speed,
        ):
            a.setflags(write=False)

    def __repr__(self) -> str:
        return f"VSCMGCluster(K={self.K})"

    @property
    def geometry(self) -> VSCMGGeometry:
        """The cluster's :data:`VSCMGGeometry` (C-contiguous read-only arrays)."""
        return VSCMGGeometry(*(param_array(getattr(self, f)) for f in VSCMGGeometry._fields))

    @property
    def nominal_momentum(self) -> float:
        """Mean wheel momentum ``I_ws Omega_0`` at the nominal speeds [N m s]."""
        return float(np.mean(self.I_ws * self.nominal_wheel_speed))

    def axes(self, gamma: ArrayLike) -> Axes:
        """Axes at the gimbal angles ``gamma`` (K,) [rad]: :class:`Axes` (3, K) each."""
        gamma = np.ascontiguousarray(finite_vector(gamma, "gamma", self.K))
        A_s = np.empty((3, self.K))
        A_t = np.empty((3, self.K))
        vscmg_axes(self.A_s0, self.A_t0, gamma, A_s, A_t)
        return Axes(self.A_g0.copy(), A_s, A_t)

    def momentum(
        self, gamma: ArrayLike, gamma_dot: ArrayLike, wheel_speed: ArrayLike
    ) -> NDArray[np.float64]:
        """Relative angular momentum ``h = A_g I_cg gamma_dot + A_s I_ws Omega`` (3,) [N m s].

        Base coordinates; the cluster's total angular momentum about the mounting points
        is ``sum_i J_i(gamma) w + h`` (``J_i`` the locked inertia).
        """
        ax = self.axes(gamma)
        gd = finite_vector(gamma_dot, "gamma_dot", self.K)
        Om = finite_vector(wheel_speed, "wheel_speed", self.K)
        return ax.A_g @ (self.I_cg * gd) + ax.A_s @ (self.I_ws * Om)

    def matrices(
        self, gamma: ArrayLike, wheel_speed: ArrayLike, w_IB_B: ArrayLike
    ) -> VSCMGMatrices:
        """``B, C, E, G = [C E], d`` at the state (eq. 40-41 with the signs of ``docs/vscmg.md``).

        Parameters
        ----------
        gamma : (K,) gimbal angles [rad]
        wheel_speed : (K,) wheel speeds Omega relative to the gimbals [rad/s]
        w_IB_B : (3,) base angular velocity in base coordinates [rad/s]

        Returns
        -------
        VSCMGMatrices
        """
        K = self.K
        gamma = np.ascontiguousarray(finite_vector(gamma, "gamma", K))
        Om = np.ascontiguousarray(finite_vector(wheel_speed, "wheel_speed", K))
        w = np.ascontiguousarray(finite_vec3(w_IB_B, "w_IB_B"))
        A_s, A_t = np.empty((3, K)), np.empty((3, K))
        B, C, E, d = np.empty((3, K)), np.empty((3, K)), np.empty((3, K)), np.empty(3)
        vscmg_axes(self.A_s0, self.A_t0, gamma, A_s, A_t)
        vscmg_matrices(
            self.A_g0, self.A_s0, self.A_t0, self.I_cg, self.I_ws, self.I_s, self.I_t,
            gamma, Om, w, B, C, E, d,
        )  # fmt: skip
        return VSCMGMatrices(self.A_g0.copy(), A_s, A_t, B, C, E, np.hstack([C, E]), d)

    def base_torque(
        self,
        gamma: ArrayLike,
        gamma_dot: ArrayLike,
        wheel_speed: ArrayLike,
        w_IB_B: ArrayLike,
        gamma_ddot: ArrayLike,
        wheel_accel: ArrayLike,
    ) -> NDArray[np.float64]:
        """``tau = B gamma_ddot + C gamma_dot + E Omega_dot + d`` (3,) [N m], base coordinates.

        The torque on the base beyond that of the locked cluster (exact, all terms kept).
        """
        m = self.matrices(gamma, wheel_speed, w_IB_B)
        gd = finite_vector(gamma_dot, "gamma_dot", self.K)
        gdd = finite_vector(gamma_ddot, "gamma_ddot", self.K)
        Od = finite_vector(wheel_accel, "wheel_accel", self.K)
        return m.B @ gdd + m.C @ gd + m.E @ Od + m.d


def pyramid_cluster(
    *,
    skew: float = PYRAMID_SKEW,
    radius: float = MOUNT_RADIUS,
    wheel_speed: float = NOMINAL_WHEEL_SPEED,
    wheel_mass: float = TABLE4_MASS,
    wheel_inertia: tuple[float, float] = TABLE4_INERTIA[:2],
    gimbal_mass: float = GIMBAL_MASS,
    gimbal_inertia: tuple[float, float, float] = GIMBAL_INERTIA,
) -> VSCMGCluster:
    """Four VSCMGs in the standard pyramid around the base (the ready configuration).

    Unit i sits at ``radius`` along the outward normal ``n_i`` of a side face of the base
    (``n = +x, +y, -x, -y``); its gimbal axis leans out by the skew angle,
    ``g_i = sin(beta) n_i + cos(beta) z``, and its spin axis at gamma = 0 is
    ``s0_i = z x n_i`` (tangential).  This is Wie's pyramid: the wheel momenta cancel at
    gamma = 0 and ``gamma = (90, 0, -90, 0)`` deg is a singular set.

    Parameters
    ----------
    skew : float, beta [rad] (default acos(1/sqrt 3): equal momentum envelope on the axes)
    radius : float, distance of the mounting points from the base centre [m]
    wheel_speed : float, nominal wheel speed [rad/s]
    wheel_mass, wheel_inertia, gimbal_mass, gimbal_inertia : see :class:`VSCMG`

    Returns
    -------
    VSCMGCluster
    """
    radius = float(radius)
    if not np.isfinite(radius) or radius < 0:
        raise ValueError(f"radius must be non-negative and finite [m], got {radius}")
    sb, cb = np.sin(skew), np.cos(skew)
    z = np.array([0.0, 0.0, 1.0])
    units = []
    for n in ([1.0, 0, 0], [0, 1.0, 0], [-1.0, 0, 0], [0, -1.0, 0]):
        n = np.array(n)
        units.append(
            VSCMG(
                gimbal_axis=sb * n + cb * z,
                spin_axis=np.cross(z, n),
                position=radius * n,
                wheel_mass=wheel_mass,
                wheel_inertia=wheel_inertia,
                gimbal_mass=gimbal_mass,
                gimbal_inertia=gimbal_inertia,
                nominal_wheel_speed=wheel_speed,
            )
        )
    return VSCMGCluster(units)
