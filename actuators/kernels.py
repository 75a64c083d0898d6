"""The compiled kernels of the actuator laws: the one implementation of each, for compiled code.

Every kernel is a plain ``numba.njit(cache=True)`` function (no explicit signature), so it
can be called from Python and from other compiled code, e.g. a compiled flight-software
tick.  The Python API (:class:`~dqspace.actuators.VSCMGCluster`,
:func:`~dqspace.actuators.steer`, :class:`~dqspace.actuators.PulseModulator`,
:class:`~dqspace.actuators.Allocator`, ...) checks its arguments and calls these.

Kernels **trust their inputs**: shapes, finiteness and bounds are validated by the Python
wrappers, never here.  Arrays are float64 (bool where said) and C-contiguous; outputs are
written into caller-owned arrays.  Units are SI: N, N m, N s, rad, rad/s, kg m^2.
``K`` VSCMGs, ``S`` thrusters, ``N`` reaction wheels, ``m`` matched rows (3 or 6).

VSCMG cluster (:mod:`.vscmg`; the cluster's arrays ``A_g0, A_s0, A_t0`` (3, K) and
``I_cg, I_ws, I_s, I_t`` (K,) are attributes of :class:`~dqspace.actuators.VSCMGCluster`)
    ``vscmg_axes(A_s0, A_t0, gamma, A_s, A_t)``: spin and transverse axes (3, K) at the
    gimbal angles ``gamma`` (K,) [rad].

    ``vscmg_matrices(A_g0, A_s0, A_t0, I_cg, I_ws, I_s, I_t, gamma, wheel_speed, w_IB_B,
    B, C, E, d)``: writes ``B`` (3, K) [kg m^2], ``C`` (3, K) [N m s], ``E`` (3, K)
    [kg m^2], ``d`` (3,) [N m] of ``tau = B gamma_ddot + C gamma_dot + E Omega_dot + d``
    (eq. 40-41); ``wheel_speed`` (K,) [rad/s], ``w_IB_B`` (3,) [rad/s].

    ``servo_kernel(gamma, gamma_dot, wheel_speed, w, w_dot, A_g0, A_s0, A_t0, I_cg, I_ws,
    I_s, I_t, gimbal_rate_cmd, wheel_accel_cmd, gimbal_accel_ff, wheel_speed_ref, use_ref,
    k_g, k_w, tau_g, tau_w)`` (:mod:`.servo`): the gimbal and wheel motor torques
    ``tau_g``, ``tau_w`` (K,) [N m] of the servo loops; ``servo_unit(i, ...)`` one unit's
    ``(tau_g, tau_w)``, its own arguments as numbers (the plant calls it in place).

Steering (:mod:`.steering`)
    ``steer_kernel(params, C, E, tau_B, t, gimbal_rates, wheel_accels, torque_error)
    -> (lam, det_GGt, det_CCt, delta_C, delta_G, wheel_weight, scale)``: eq. (42) with the
    weighting and the time-varying R.  ``params`` a :data:`SteeringParams` (built once by
    ``SteeringLaw.kernel_params``); ``C`` (3, K), ``E`` (3, K) from ``vscmg_matrices``;
    ``tau_B`` (3,) [N m] the torque wanted on the base (pass ``tau - d``); ``t`` [s].
    Writes ``gimbal_rates`` (K,) [rad/s], ``wheel_accels`` (K,) [rad/s^2] and
    ``torque_error`` (3,) ``tau_B - (C gamma_dot + E Omega_dot)`` [N m].  Returns floats:
    lambda [N^2 m^2 s^2], ``det(G G^T)``, ``det(C C^T)``, the normalised determinants, the
    wheel weight [1/s^2] and the scale (< 1 when saturated).

Thrusters (:mod:`.thrusters`, :mod:`.valves`, :mod:`.pwm`, :mod:`.allocation_kernels`)
    ``delivered_thrust_kernel(sigma, sigma_min, sigma_max, effectiveness, fixed_thrust,
    out)``: ``out = effectiveness * clip(sigma, sigma_min, sigma_max) + fixed_thrust``
    (S,) [N].

    ``valve_plan_kernel(on_time, period, open_delay, close_delay, min_on_time, carry,
    tail_end, start, end, carry_out)``: one period of the valves (:class:`Valves`): the
    thrust windows ``tail_end``, ``start``, ``end`` (S,) of the pulses ``on_time`` (S,)
    given the earlier pulses' ``carry`` (S,), and the next period's ``carry_out`` (S,);
    times in one unit (the plant uses dynamics steps).

    ``modulate_kernel(sigma, sigma_max, min_impulse_bit, period, on_fraction,
    off_fraction, quantum, error_feedback, firing_prev, carry_in, on_time, impulse,
    firing, carry)``: one period of pulse modulation.  ``sigma`` (S,) [N] (clipped to
    ``[0, sigma_max]``), ``min_impulse_bit`` (S,) [N s], ``period``, ``quantum`` [s],
    Schmitt fractions (0.5, 0.5 for plain rounding), ``error_feedback`` bool,
    ``firing_prev`` (S,) bool, ``carry_in`` (S,) [N s].  Writes ``on_time`` (S,) [s],
    ``impulse`` (S,) [N s], ``firing`` (S,) bool, ``carry`` (S,) [N s].

    ``allocate_kernel(H_rows, effectiveness, fixed_thrust, demand, lo, hi, weights,
    residual_weights, tol, lp_max_iter, lsq_max_iter, sigma, info) -> (status, lp_status,
    lp_iterations, lp_check, lsq_status, lsq_iterations, lsq_check)``: the fast
    allocation.  ``H_rows`` (m, S) the first m rows of ``ThrusterSet.H``; the health
    ``effectiveness``, ``fixed_thrust``, ``lo = command_lower``, ``hi = command_upper``
    (S,); ``demand`` (m,) [N, N m]; ``weights`` (S,); ``residual_weights`` (m,); ``tol``
    the re-check's relative tolerance (1e-9); iteration limits (the allocator passes
    ``50 (m + S)`` each).  Writes ``sigma`` (S,) [N] and ``info``
    (``ALLOC_INFO_SIZE``,).  ``status`` is ``ALLOC_OPTIMAL``, ``ALLOC_BEST_EFFORT`` or
    ``ALLOC_SOLVER_ERROR`` (the order of ``AllocationStatus``); the other codes say why
    (``SIMPLEX_*``, ``BVLS_*`` or ``LSQ_NO_FREE``, ``CHECK_*``).

    ``allocation_problem(H_rows, effectiveness, fixed_thrust, demand, hi, tol, A, b)
    -> (eq_tol, bound_tol)`` and ``recheck_kernel(x, A, b, lo, hi, eq_tol, bound_tol,
    with_equality, info, at) -> check``: the pieces of ``allocate_kernel`` the cvxpy method
    shares (``info[at + CHECK_VIOLATION / CHECK_INDEX / CHECK_VALUE / CHECK_ERROR]``).

    ``bounded_simplex(A, b, c, lo, hi, max_iter, tol) -> (x, status, iterations)``
    (:mod:`.simplex`):
    ``min c.x  s.t.  A x = b, lo <= x <= hi`` (allocates ``x``).

    ``bvls(A, b, lo, hi, max_iter, x) -> (status, iterations)`` (:mod:`.bvls`):
    ``min |A x - b|^2  s.t.  lo <= x <= hi``, writes ``x`` (n,).

Reaction wheels (:mod:`.reaction_wheels` the physics, :mod:`.wheel_control` the laws; ``A``
(3, N) spin axes, ``I_s``, ``max_torque``, ``max_speed`` (N,) are attributes of ``WheelArray``)
    ``wheel_momentum_kernel(A, I_s, wheel_speed, base_rate, h)``: writes the spin momentum
    ``h`` (3,) [N m s]; ``wheel_speed`` (N,) [rad/s], ``base_rate`` (3,) [rad/s].

    ``distribute_kernel(A, I_s, max_torque, max_speed, torque, wheel_speed, dt,
    motor_torque, torque_error, saturated)``: minimum-norm distribution of ``torque`` (3,)
    [N m] with saturation and redistribution; ``dt`` [s] the hold time (<= 0: none).
    Writes ``motor_torque`` (N,) [N m], ``torque_error`` (3,) [N m] (delivered minus
    wanted) and ``saturated`` (N,) bool.

    ``momentum_dump_kernel(A, I_s, max_speed, gain, start_fraction, stop_fraction,
    wheel_speed, base_rate, active, torque)``: momentum dumping with hysteresis.  ``active``
    (1,) float, read and updated (``MomentumManager.active_state``: share that array to
    share the state); writes the thrusters' torque ``torque`` (3,) [N m].

    ``motor_limit_kernel(u, rate, max_torque, max_rate, viscous, coulomb) -> (torque,
    limited)``: what a motor delivers of the torque ``u`` [N m] at the joint rate [rad/s]:
    clipped to its torque limit, cut at its rate limit, less viscous and Coulomb friction
    (the plant's joint limiter: arm joints, wheels, VSCMG gimbals and wheels).

Linear algebra (:mod:`.linalg`)
    ``lu_factor(M, n, perm) -> det``, ``lu_solve(LU, n, perm, x)``,
    ``lstsq_min_norm(A, cols, k, b, rcond, x) -> rank``.

Allocation happens inside ``steer_kernel`` (one (4, 3, 3) scratch), ``allocate_kernel``,
``bounded_simplex``, ``bvls``, ``distribute_kernel`` and ``lstsq_min_norm`` (small
work arrays); the other kernels allocate nothing.

"""

from .allocation_kernels import (
    ALLOC_BEST_EFFORT,
    ALLOC_INACCURATE,
    ALLOC_INFO_SIZE,
    ALLOC_OPTIMAL,
    ALLOC_SOLVER_ERROR,
    CHECK_BOUNDS,
    CHECK_EQUALITY,
    CHECK_ERROR,
    CHECK_INDEX,
    CHECK_NONFINITE,
    CHECK_OK,
    CHECK_VALUE,
    CHECK_VIOLATION,
    CHECK_WIDTH,
    INFO_BOUND_TOL,
    INFO_EQ_TOL,
    INFO_LP,
    INFO_LSQ,
    LSQ_NO_FREE,
    allocate_kernel,
    allocation_problem,
    recheck_kernel,
)
from .bvls import BVLS_ITERATION_LIMIT, BVLS_OPTIMAL, BVLS_STATUS, bvls
from .linalg import lstsq_min_norm, lu_factor, lu_solve
from .pwm import modulate_kernel
from .reaction_wheels import motor_limit_kernel, wheel_momentum_kernel
from .servo import servo_kernel, servo_unit
from .simplex import (
    SIMPLEX_INFEASIBLE,
    SIMPLEX_ITERATION_LIMIT,
    SIMPLEX_OPTIMAL,
    SIMPLEX_STATUS,
    SIMPLEX_UNBOUNDED,
    bounded_simplex,
)
from .steering import SteeringParams, steer_kernel
from .thrusters import delivered_thrust_kernel
from .valves import valve_plan_kernel
from .vscmg import unit_axes, vscmg_axes, vscmg_matrices
from .wheel_control import distribute_kernel, momentum_dump_kernel

__all__ = [
    "ALLOC_BEST_EFFORT",
    "ALLOC_INACCURATE",
    "ALLOC_INFO_SIZE",
    "ALLOC_OPTIMAL",
    "ALLOC_SOLVER_ERROR",
    "BVLS_ITERATION_LIMIT",
    "BVLS_OPTIMAL",
    "BVLS_STATUS",
    "CHECK_BOUNDS",
    "CHECK_EQUALITY",
    "CHECK_ERROR",
    "CHECK_INDEX",
    "CHECK_NONFINITE",
    "CHECK_OK",
    "CHECK_VALUE",
    "CHECK_VIOLATION",
    "CHECK_WIDTH",
    "INFO_BOUND_TOL",
    "INFO_EQ_TOL",
    "INFO_LP",
    "INFO_LSQ",
    "LSQ_NO_FREE",
    "SIMPLEX_INFEASIBLE",
    "SIMPLEX_ITERATION_LIMIT",
    "SIMPLEX_OPTIMAL",
    "SIMPLEX_STATUS",
    "SIMPLEX_UNBOUNDED",
    "SteeringParams",
    "allocate_kernel",
    "allocation_problem",
    "bounded_simplex",
    "bvls",
    "delivered_thrust_kernel",
    "valve_plan_kernel",
    "distribute_kernel",
    "lstsq_min_norm",
    "lu_factor",
    "lu_solve",
    "modulate_kernel",
    "momentum_dump_kernel",
    "motor_limit_kernel",
    "recheck_kernel",
    "servo_kernel",
    "servo_unit",
    "steer_kernel",
    "unit_axes",
    "vscmg_axes",
    "vscmg_matrices",
    "wheel_momentum_kernel",
]
