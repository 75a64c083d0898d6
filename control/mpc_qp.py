"""The quadratic programme of the base MPC (:mod:`dqspace.control.mpc`): its weights, the
one formulation written with cvxpy, and the same QP assembled for OSQP, solved at run time.

Prediction model (the base's pose-error dynamics linearised about the reference, sampled at
the MPC period ``T`` with the inputs held over a step): state ``x = [log e^, w^_e]`` (12,),
both ``[rotation, translation]`` as :mod:`dqspace.control.pose_error` defines them, input
the base's generalized force ``u = [torque, force]`` (6,) less the previewed one ``d_k``
the reference needs (the arm's planned reaction and the reference's acceleration)::

    d/dt log e^ = 1/2 w^_e,      d/dt w^_e = M^-1 (u - d)
    x_k+1 = A x_k + B M^-1 (u_k - d_k),   A = [[I, T/2 I], [0, I]],  B = [[T^2/4 I], [T I]]

``M`` (6, 6) the inertia the base sees (a parameter, updated while the arm moves).  The
input is made of the thrusters' forces ``s`` (m,) and the momentum devices' torque ``tau``
(3,): ``u = G s + E tau`` with ``G = [[H_t or 0], [H_f]]``, ``E = [[I], [0]]``.  Over the
horizon ``k = 0 .. N-1``::

    min  sum_k=1..N-1 x_k' Q x_k + x_N' (t_N Q) x_N
         + sum_k=0..N-1 (r_impulse T 1's_k + r_thrust |s_k|^2 + r_torque |tau_k|^2)
    s.t. the dynamics,  s_lo <= s_k <= s_hi,  |tau_k| <= tau_max,
         |tau_k - tau_k-1| <= T tau_rate_max   (tau_-1 the torque last commanded)

:func:`cvxpy_problem` writes it with cvxpy (Parameters, DPP); :class:`MPCProblem` assembles
the same matrices once for OSQP and at each tick updates only the vectors (``q`` never
changes; ``l``, ``u`` carry the state, the disturbance and the last torque) and, when the
inertia changed, the values of the dynamics' input block (same sparsity), then solves warm
started from the previous solution.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

__all__ = ["MPCWeights", "MPCProblem", "cvxpy_problem", "prediction_matrices"]

NX = 12


def _vec3(value, name):
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or a (3,) array, got {value!r}") from None
    a = np.full(3, float(a)) if a.ndim == 0 else a
    if a.shape != (3,) or not np.all(np.isfinite(a)) or np.any(a < 0.0):
        raise ValueError(f"{name} must be 3 finite non-negative numbers, got {value!r}")
    return a


def _scalar(value, name, *, positive=False, allow_inf=False):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if np.isnan(x) or (not allow_inf and not np.isfinite(x)) or x < 0.0 or (positive and x == 0):
        need = "positive" if positive else "non-negative"
        raise ValueError(f"{name} must be {need} and finite, got {value!r}")
    return x


@dataclass(frozen=True)
class MPCWeights:
    """Horizon, period, weights, limits and solver settings of the base MPC.

    Attributes
    ----------
    horizon : int, steps N of the prediction (>= 2)
    period : float, the prediction's step T [s]
    q_rot, q_trans : (3,) weights on ``log e^`` (half the rotation vector [rad], half the
        position error [m]) [1/rad^2, 1/m^2]
    q_omega, q_vel : (3,) weights on the twist error [s^2/rad^2, s^2/m^2]
    terminal : float, the last state's weight is ``terminal * Q``
    r_impulse : float, weight of the thrusters' impulse ``T sum s`` [1/(N s)]
    r_thrust : float, quadratic weight on each thruster's force [1/N^2] (> 0 keeps the
        solution unique among thrusters that give the same force)
    r_torque : float, quadratic weight on the devices' torque [1/(N m)^2]
    torque_limit : (3,) largest device torque per base axis [N m]
    torque_rate_limit : float, largest change of the device torque [N m/s] (inf: none)
    eps : float, OSQP's absolute and relative tolerance
    max_iter : int, OSQP's iteration cap
    polish : bool, OSQP's solution polishing
    """

    horizon: int = 20
    period: float = 0.05
    q_rot: np.ndarray = field(default_factory=lambda: np.full(3, 1.0e5))
    q_trans: np.ndarray = field(default_factory=lambda: np.full(3, 2.0e4))
    q_omega: np.ndarray = field(default_factory=lambda: np.full(3, 1.0e3))
    q_vel: np.ndarray = field(default_factory=lambda: np.full(3, 1.0e3))
    terminal: float = 10.0
    r_impulse: float = 1.0
    r_thrust: float = 1.0e-2
    r_torque: float = 1.0
    torque_limit: np.ndarray = field(default_factory=lambda: np.full(3, 1.0))
    torque_rate_limit: float = np.inf
    eps: float = 1.0e-4
    max_iter: int = 200
    polish: bool = False

    def __post_init__(self):
        h = self.horizon
        if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or not 2 <= h <= 500:
            raise ValueError(f"horizon must be an integer in [2, 500], got {h!r}")
        m = self.max_iter
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"max_iter must be a positive integer, got {m!r}")
        for name in ("q_rot", "q_trans", "q_omega", "q_vel", "torque_limit"):
            object.__setattr__(self, name, _vec3(getattr(self, name), name))
        for name in ("period", "eps"):
            object.__setattr__(self, name, _scalar(getattr(self, name), name, positive=True))
        for name in ("terminal", "r_impulse", "r_thrust", "r_torque"):
            object.__setattr__(self, name, _scalar(getattr(self, name), name))
        rate = _scalar(self.torque_rate_limit, "torque_rate_limit", positive=True, allow_inf=True)
        object.__setattr__(self, "torque_rate_limit", rate)
        object.__setattr__(self, "polish", bool(self.polish))

    def replace(self, **changes) -> MPCWeights:
        """A copy with ``changes``."""
        return MPCWeights(
            **{f.name: changes.get(f.name, getattr(self, f.name)) for f in fields(self)}
        )

    @property
    def Q(self) -> NDArray[np.float64]:
        """(12, 12) diagonal state weight ``[q_rot, q_trans, q_omega, q_vel]``."""
        return np.diag(np.r_[self.q_rot, self.q_trans, self.q_omega, self.q_vel])


def prediction_matrices(T: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``A`` (12, 12) and ``B`` (12, 6) of the sampled error dynamics (module docstring):
    the input of ``B`` is the acceleration ``M^-1 (u - d)`` held over a step of ``T``."""
    eye = np.eye(6)
    A = np.block([[eye, 0.5 * T * eye], [np.zeros((6, 6)), eye]])
    B = np.vstack([0.25 * T * T * eye, T * eye])
    return A, B


def _input_matrices(G):
    G = np.ascontiguousarray(G, dtype=float)
    if G.ndim != 2 or G.shape[0] != 6 or G.shape[1] < 1:
        raise ValueError(f"G must have shape (6, m), got {G.shape}")
    E = np.vstack([np.eye(3), np.zeros((3, 3))])
    return G, np.hstack([G, E])


class MPCProblem:
    """The MPC's QP assembled for OSQP (module docstring), solved warm started.

    Parameters
    ----------
    weights : MPCWeights
    G : (6, m) generalized force ``[torque, force]`` per unit thruster force
    s_lo, s_hi : (m,) bounds of the thrusters' forces [N]
    M : (6, 6) the inertia the base sees (symmetric positive-definite)
    """

    def __init__(self, weights: MPCWeights, G: ArrayLike, s_lo: ArrayLike, s_hi: ArrayLike,
                 M: ArrayLike) -> None:  # fmt: skip
        import osqp  # noqa: PLC0415 - only an MPC law needs the solver

        self.weights = w = weights
        self.G, self.GE = _input_matrices(G)
        m = self.m = self.G.shape[1]
        self.s_lo = np.broadcast_to(np.asarray(s_lo, float), (m,)).copy()
        self.s_hi = np.broadcast_to(np.asarray(s_hi, float), (m,)).copy()
        if np.any(self.s_lo > self.s_hi):
            raise ValueError("thruster force bounds: s_lo must not exceed s_hi")
        N, T = w.horizon, w.period
        self.A, self.B = prediction_matrices(T)
        nu = m + 3
        self.nu, self.N = nu, N
        self.n = N * (NX + nu)
        Minv = self._minv(M)
        # cost: 1/2 z'Pz + q'z
        Q = w.Q
        blocks = [2.0 * Q] * (N - 1) + [2.0 * w.terminal * Q]
        R = np.r_[np.full(m, 2.0 * w.r_thrust), np.full(3, 2.0 * w.r_torque)]
        self.P = sp.block_diag([*blocks, sp.diags(np.tile(R, N))], format="csc")
        self.q = np.r_[np.zeros(N * NX), np.tile(np.r_[np.full(m, w.r_impulse * T), 0, 0, 0], N)]
        # constraints: dynamics (N*12 equalities), input bounds (N*nu), torque rates (N*3)
        self._rate = bool(np.isfinite(w.torque_rate_limit))
        self.A_qp, self._bu_index = self._constraints(Minv)
        self.l, self.u = self._bounds()
        self._M, self._Minv = np.array(M, dtype=float), Minv
        self.solver = osqp.OSQP()
        self.solver.setup(
            self.P, self.q, self.A_qp, self.l, self.u, eps_abs=w.eps, eps_rel=w.eps,
            max_iter=w.max_iter, polishing=w.polish, warm_starting=True, verbose=False,
        )  # fmt: skip
        self.last_time = 0.0
        self.last_status = ""
        self.last_iterations = 0

    @staticmethod
    def _minv(M):
        M = np.asarray(M, dtype=float)
        if M.shape != (6, 6) or not np.all(np.isfinite(M)):
            raise ValueError(f"M must be a finite (6, 6) matrix, got shape {M.shape}")
        try:
            np.linalg.cholesky(0.5 * (M + M.T))
        except np.linalg.LinAlgError:
            raise ValueError("M must be symmetric positive-definite") from None
        return np.linalg.inv(0.5 * (M + M.T))

    def _constraints(self, Minv):
        N, nu = self.N, self.nu
        A, Bu = self.A, self.B @ Minv @ self.GE  # (12, nu), dense: its pattern is fixed
        rows = []
        eye_x = sp.eye(NX)
        dyn_x = sp.kron(sp.eye(N), eye_x) - sp.kron(sp.eye(N, k=-1), A)
        # Bu kept structurally dense (explicit zeros) so that new values keep the pattern
        dyn_u = sp.kron(sp.eye(N), sp.csc_matrix(np.where(Bu == 0.0, 1.0, Bu)))
        rows.append(sp.hstack([dyn_x, -dyn_u]))
        rows.append(sp.hstack([sp.csc_matrix((N * nu, N * NX)), sp.eye(N * nu)]))
        if self._rate:
            sel = sp.hstack([sp.csc_matrix((3, self.m)), sp.eye(3)])
            diff = sp.kron(sp.eye(N) - sp.eye(N, k=-1), sel)
            rows.append(sp.hstack([sp.csc_matrix((3 * N, N * NX)), diff]))
        Aqp = sp.vstack(rows, format="csc")
        Aqp.sort_indices()
        # the positions in Aqp.data of the dynamics' input block, in the order of
        # np.tile of -Bu by columns (for updates with a new inertia)
        index = self._input_block_index(Aqp)
        Aqp.data[index] = -np.tile(Bu.ravel(order="F"), N)
        return Aqp, index

    def _input_block_index(self, Aqp):
        N, nu = self.N, self.nu
        index = []
        for k in range(N):
            for j in range(nu):
                col = N * NX + k * nu + j
                start, end = Aqp.indptr[col], Aqp.indptr[col + 1]
                r = Aqp.indices[start:end]
                sel = np.nonzero((r >= k * NX) & (r < (k + 1) * NX))[0]
                if sel.size != NX:
                    raise AssertionError("the dynamics' input block is not dense")
                index.append(start + sel)
        return np.concatenate(index)

    def _bounds(self):
        N, w = self.N, self.weights
        lo_u = np.tile(np.r_[self.s_lo, -w.torque_limit], N)
        hi_u = np.tile(np.r_[self.s_hi, w.torque_limit], N)
        nr = 3 * N if self._rate else 0
        dr = w.torque_rate_limit * w.period
        l = np.r_[np.zeros(N * NX), lo_u, np.full(nr, -dr)]
        u = np.r_[np.zeros(N * NX), hi_u, np.full(nr, dr)]
        return l, u

    def set_inertia(self, M: ArrayLike) -> None:
        """Use the inertia ``M`` (6, 6) in the prediction from the next solve on."""
        Bu = self.B @ self._minv(M) @ self.GE
        self.A_qp.data[self._bu_index] = -np.tile(Bu.ravel(order="F"), self.N)
        self._M = np.array(M, dtype=float)
        self._Minv = self._minv(M)
        self.solver.update(Ax=self.A_qp.data)

    @property
    def inertia(self) -> NDArray[np.float64]:
        """The inertia (6, 6) the prediction uses."""
        return self._M.copy()

    def vectors(self, x0, d, tau_prev):
        """``(l, u)`` of the QP for the state ``x0`` (12,), the previewed generalized
        force ``d`` ((6,) held, or (N, 6)) and the torque last commanded ``tau_prev`` (3,)."""
        N = self.N
        d = np.broadcast_to(np.asarray(d, float), (N, 6))
        acc = d @ self._Minv.T  # M^-1 d_k, row by row
        rhs = -(acc @ self.B.T)  # (N, 12)
        rhs[0] += self.A @ np.asarray(x0, float)
        l, u = self.l.copy(), self.u.copy()
        l[: N * NX] = rhs.ravel()
        u[: N * NX] = rhs.ravel()
        if self._rate:
            r0 = N * NX + N * self.nu
            l[r0 : r0 + 3] += tau_prev
            u[r0 : r0 + 3] += tau_prev
        return l, u

    def solve(self, x0: ArrayLike, d: ArrayLike, tau_prev: ArrayLike = (0.0, 0.0, 0.0)):
        """Solve for the state ``x0`` (12,), the previewed generalized force ``d`` ((6,)
        held over the horizon, or (N, 6)) and the torque last commanded ``tau_prev``.

        Returns
        -------
        s : (N, m) thrusters' forces [N]; tau : (N, 3) device torques [N m];
        x : (N, 12) predicted states x_1 .. x_N
        """
        t0 = time.perf_counter()
        l, u = self.vectors(x0, d, np.asarray(tau_prev, float))
        self.solver.update(l=l, u=u)
        res = self.solver.solve(raise_error=False)
        self.last_time = time.perf_counter() - t0
        self.last_status = res.info.status
        self.last_iterations = res.info.iter
        z = res.x
        if z is None or not np.all(np.isfinite(z)):
            raise RuntimeError(f"the MPC's QP failed: OSQP status {res.info.status!r}")
        N, m, nu = self.N, self.m, self.nu
        U = z[N * NX :].reshape(N, nu)
        return U[:, :m].copy(), U[:, m:].copy(), z[: N * NX].reshape(N, NX).copy()


def cvxpy_problem(weights: MPCWeights, G: ArrayLike, s_lo: ArrayLike, s_hi: ArrayLike):
    """The MPC's QP written with cvxpy (DPP), for reference and other solvers.

    Returns ``(problem, params, variables)``: ``params`` a dict of cvxpy Parameters ``x0``
    (12,), ``Minv`` (6, 6) the inverse inertia, ``acc`` (N, 6) the previewed disturbance
    as an acceleration ``M^-1 d_k``, ``tau_prev`` (3,); ``variables`` a dict of ``x`` (N,
    12), ``s`` (N, m), ``tau`` (N, 3).
    """
    import cvxpy as cp  # noqa: PLC0415 - about a second to import; only this formulation

    w = weights
    G, _ = _input_matrices(G)
    N, T, m = w.horizon, w.period, G.shape[1]
    A, B = prediction_matrices(T)
    E = np.vstack([np.eye(3), np.zeros((3, 3))])
    x0, Minv = cp.Parameter(NX, name="x0"), cp.Parameter((6, 6), name="Minv")
    acc, tau_prev = cp.Parameter((N, 6), name="acc"), cp.Parameter(3, name="tau_prev")
    x, s, tau = cp.Variable((N, NX)), cp.Variable((N, m)), cp.Variable((N, 3))
    Q = w.Q
    cons, cost = [], 0
    for k in range(N):
        prev = x0 if k == 0 else x[k - 1]
        u_k = G @ s[k] + E @ tau[k]
        cons.append(x[k] == A @ prev + B @ (Minv @ u_k) - B @ acc[k])
        cost += cp.quad_form(x[k], (w.terminal if k == N - 1 else 1.0) * Q)
        cost += w.r_impulse * T * cp.sum(s[k]) + w.r_thrust * cp.sum_squares(s[k])
        cost += w.r_torque * cp.sum_squares(tau[k])
        before = tau_prev if k == 0 else tau[k - 1]
        if np.isfinite(w.torque_rate_limit):
            cons.append(cp.abs(tau[k] - before) <= w.torque_rate_limit * T)
    cons += [s >= np.broadcast_to(s_lo, (N, m)), s <= np.broadcast_to(s_hi, (N, m))]
    lim = np.broadcast_to(w.torque_limit, (N, 3))
    cons += [tau <= lim, tau >= -lim]
    problem = cp.Problem(cp.Minimize(cost), cons)
    params = {"x0": x0, "Minv": Minv, "acc": acc, "tau_prev": tau_prev}
    return problem, params, {"x": x, "s": s, "tau": tau}
