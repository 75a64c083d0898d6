"""The compiled kernels of the multibody engine: the one implementation of each algorithm.

Every kernel is a numba function on the model's packed arrays and flat state vectors.
They **trust their inputs**: sizes, dtypes, finiteness and unit norms are validated once,
by the Python wrappers of :mod:`dqspace.multibody` (or by the compiled checks of
``aba_checked``), never here.  Arrays are float64 and C-contiguous unless noted; outputs
are written into caller-owned arrays.

Common arguments
----------------
ints : (nb, INTS.width) int64, reals : (nb, REALS.width) float64
    The packed model (``Model.packed``), columns laid out by :mod:`.layout`.
gravity : (3,)
    Uniform gravity in the inertial frame [m/s^2].
q : (nq,), v, a, tau : (nv,)
    Configuration, velocity [rad/s, m/s], acceleration, generalized forces [N m, N]
    (``docs/conventions.md``).
fext : (nb, 6) or (0, 6)
    External wrenches ``[f, tau]`` [N, N m] per body, in the body frame about its origin;
    an empty array means none.

Public kernels (module: name)
-----------------------------
:mod:`.kinematics`
    ``poses(ints, reals, q, rel, pose)``: relative and inertial poses (nb, 8);
    ``body_motions(ints, reals, q, v, a, twist, acc)``: body twists and accelerations
    (nb, 6) (``acc`` (0, 6) for twists only).
:mod:`.jacobian`
    ``frame_jacobian(ints, reals, pose, body, placement, J)``: (6, nv) Jacobian of a frame
    (placement (8,) on ``body``), in the frame's axes; ``pose`` from :func:`poses`.
:mod:`.momentum`
    ``system_momentum(ints, reals, q, v, out)``: ``[p, h_O]`` (6,) in the inertial frame;
    ``center_of_mass(ints, reals, q, out) -> total mass``: the system's centre of mass (3,);
    ``kinetic_energy(ints, reals, q, v) -> float`` [J].
:mod:`.newton_euler`
    ``rnea(ints, reals, gravity, q, v, a, fext, tau, force)``: inverse dynamics, tau (nv,)
    and the joint wrenches ``force`` (nb, 6).
:mod:`.mass_matrix`
    ``crba(ints, reals, q, M)``: mass matrix (nv, nv);
    ``forward_dynamics_matrix(ints, reals, gravity, q, v, tau, fext, a) -> bool``.
:mod:`.articulated`
    ``aba(ints, reals, gravity, q, v, tau, fext, a) -> bool``, ``aba_wrenches(..., a,
    wrench)``, ``aba_checked`` / ``aba_wrenches_checked`` (the same behind compiled input
    checks; return 0 ok, 1 bad input, 2 not positive-definite),
    ``split_wrenches(ints, reals, wrench, actuation, constraint, tau)``.
:mod:`.mixed_problem`
    ``mixed(ints, reals, gravity, q, v, prescribed, a_in, tau_in, fext, a, tau) -> bool``.
:mod:`.configuration`
    ``integrate(ints, q, v, dt, out)``: ``out = q (+) v dt``;
    ``config_error(ints, q) -> (worst, body)``; ``dexpinv(ints, theta, v, out)``.
:mod:`.frames`
    ``relative_pose(ints, reals, k, q)`` -> 8-tuple; ``spatial_inertia(reals, k, out)``.
:mod:`.orbit`
    ``hill_wrenches(ints, reals, q, v, n, fext)``: adds the Clohessy-Wiltshire forces and
    gravity-gradient torques of a circular orbit of rate n to ``fext`` (nb, 6);
    ``hill_acceleration(r, r_dot, n, out)``, ``gravity_gradient_torque(R, J, n, out)``.
:mod:`.linalg`
    ``cholesky(A, n) -> bool`` (in place, ``1 / L_jj`` on the diagonal) and
    ``cholesky_solve(L, n, x)``.
:mod:`.sim`
    The inputs-callback signature ``INPUTS_SIG``, ``rk4_step``, ``rk4_loop``, ``rk4_batch``,
    ``forward_dynamics_batch``, ``inverse_dynamics_batch`` (status codes ``OK``,
    ``SINGULAR``, ``NONFINITE``).

Where each pass is: ``forward_dynamics`` (:mod:`dqspace.multibody.dynamics`) calls
:func:`aba`, whose passes ``velocity_pass``, ``_articulated``, ``_accelerations`` are in
:mod:`.articulated` (:func:`mixed`, in :mod:`.mixed_problem`, runs the same velocity pass);
``inverse_dynamics`` calls :func:`rnea` (:mod:`.newton_euler`), whose base-to-tip pass is
``_forward_pass`` (:mod:`.kinematics`).
"""

from . import layout, orbit, sim
from .articulated import (
    aba,
    aba_checked,
    aba_wrenches,
    aba_wrenches_checked,
    split_wrenches,
)
from .configuration import config_error, dexpinv, integrate
from .frames import relative_pose, spatial_inertia
from .jacobian import frame_jacobian
from .kinematics import body_motions, poses
from .layout import CRBA_WIDTH, FIXED, FREE, PRISMATIC, REVOLUTE, RNEA_WIDTH, SPHERICAL
from .linalg import cholesky, cholesky_solve
from .mass_matrix import crba, forward_dynamics_matrix
from .mixed_problem import mixed
from .momentum import center_of_mass, kinetic_energy, system_momentum
from .newton_euler import rnea

__all__ = [
    "layout",
    "orbit",
    "sim",
    "aba",
    "aba_checked",
    "aba_wrenches",
    "aba_wrenches_checked",
    "mixed",
    "split_wrenches",
    "config_error",
    "dexpinv",
    "integrate",
    "relative_pose",
    "spatial_inertia",
    "frame_jacobian",
    "body_motions",
    "poses",
    "cholesky",
    "cholesky_solve",
    "crba",
    "forward_dynamics_matrix",
    "kinetic_energy",
    "center_of_mass",
    "system_momentum",
    "rnea",
    "FIXED",
    "REVOLUTE",
    "PRISMATIC",
    "SPHERICAL",
    "FREE",
    "RNEA_WIDTH",
    "CRBA_WIDTH",
]
