"""Linearisation of open- and closed-loop multibody dynamics on the tangent space of q.

State, about an operating point ``(t0, q0, v0, u0)``:

    x = [delta, v]        q = integrate(model, q0, delta)  (q0 (+) delta)
    delta = difference(model, q0, q)                      (nv,)

so the base pose contributes 6 coordinates (3 attitude, 3 position: the body
twist that carries q0's base pose to q's in unit time, ``q^_0 o exp(1/2 delta^)``)
and each joint quaternion 3; x has 2 nv components.  Exact nonlinear rates:

    delta' = dexpinv(delta, v)      (the right-trivialised inverse differential of the
                                     exponential; = v at delta = 0)
    v'     = FD(q0 (+) delta, v, tau, f_ext)       (P32, by the articulated-body recursion)
    tau    = k(t0, q, v)[0] + S u,  f_ext = k(t0, q, v)[1] + W u

with ``k`` an optional state-feedback law (closed loop), ``S`` and ``W``
the input channels' generalized-force and external-wrench matrices
(:class:`Input`).  Outputs ``y = h(t0, q, v, v')`` (:class:`Output`).  A law with states
of its own (an integrator, an observer: ``law_states``) adds them to x, ``x = [delta, v,
z]``, with their rates ``z' = k_z(t0, q, v, z)`` (:func:`linearize`).

Method: the Jacobian of ``z = [delta, v, u] -> [x', y]`` at ``z0 = [0, v0, u0]``
by central differences on the Lie algebra (q perturbed through
``integrate(model, q0, +-h e_i)``, never by adding to quaternion components),
improved by one Richardson extrapolation (``method="richardson"``, default)::

    D(h) = (g(z0 + h e_i) - g(z0 - h e_i)) / (2 h),    J e_i = (4 D(h/2) - D(h)) / 3

Truncation error O(h^4), rounding O(eps |g| / h); with h = 1e-3 (scaled by
``max(1, |z0_i|)``) the absolute error of an entry is about 1e-12 times the larger
of the rates and the Jacobian's entries (against Pinocchio's analytic ABA
derivatives: ``docs/linearization.md``).  Plain central differences
(``method="central"``, default h = 6e-6 ~ eps^(1/3)) cost half and are ~70 times
less accurate.  Inputs enter linearly and velocities at most quadratically (in
the dynamics and in this package's controllers), so their columns carry rounding
error only.

The result is a :class:`~dqspace.control.linear_model.LinearModel` of plain numpy arrays
(its module also holds the frequency-domain helpers; the class is re-exported here);
:meth:`LinearModel.to_statespace` gives a ``control.StateSpace`` when
python-control (the optional extra ``dqspace[control]``) is installed
(imported through :func:`~dqspace.control.pycontrol.python_control`).  A
closed-loop law to linearise with:
:class:`~dqspace.control.station_keeping.StationKeepingFeedback`.
See ``docs/linearization.md``.
"""

import math
from collections.abc import Callable, Sequence
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dq import dq_conj, dq_log, dq_mul, translation_from_dq
from ..multibody import (
    JointType,
    Model,
    check_configuration,
    external_wrenches,
    forward_dynamics,
    frame_pose,
    integrate,
)
from ..multibody import kernels as _K
from ._checks import finite_vector, unit_pose
from .linear_model import LinearModel

__all__ = [
    "Input",
    "Output",
    "LinearModel",
    "linearize",
]

_Vector = NDArray[np.float64]
#: ``fn(t, q, v, a) -> y`` of an :class:`Output`
_OutputFn = Callable[[float, _Vector, _Vector, _Vector], ArrayLike]
#: ``controller(t, q, v) -> tau | (tau, f_ext)``
_Controller = Callable[[float, _Vector, _Vector], Any]

#: Default step of each method (before scaling by ``max(1, |z0_i|)``).
DEFAULT_STEP = {"richardson": 1e-3, "central": 6e-6}
#: Largest accepted step: beyond it the "linearisation" is a secant.
MAX_STEP = 0.1


# ------------------------------------------------------------------ names


def _coordinate_names(model):
    """Names of the delta (position-like), v and generalized-force components.

    ``{joint}_rx/ry/rz/px/py/pz`` and ``{joint}_wx/.../vz``, forces ``{joint}_tx/.../fz``
    for a FREE joint (the base's generalized force is ``[torque, force]``); ``rx..rz``,
    ``wx..wz``, ``tx..tz`` for a spherical one; ``{joint}_q``, ``{joint}_v`` and
    ``{joint}_tau`` (revolute) or ``{joint}_f`` (prismatic).  No dots: python-control
    reserves them in signal names.
    """
    pos, vel, frc = [], [], []
    for k in range(model.nb):
        j = model.joint_names[k]
        t = JointType(int(model.joint_type[k]))
        if t == JointType.FREE:
            pos += [f"{j}_{c}" for c in ("rx", "ry", "rz", "px", "py", "pz")]
            vel += [f"{j}_{c}" for c in ("wx", "wy", "wz", "vx", "vy", "vz")]
            frc += [f"{j}_{c}" for c in ("tx", "ty", "tz", "fx", "fy", "fz")]
        elif t == JointType.SPHERICAL:
            pos += [f"{j}_{c}" for c in ("rx", "ry", "rz")]
            vel += [f"{j}_{c}" for c in ("wx", "wy", "wz")]
            frc += [f"{j}_{c}" for c in ("tx", "ty", "tz")]
        elif t in (JointType.REVOLUTE, JointType.PRISMATIC):
            pos.append(f"{j}_q")
            vel.append(f"{j}_v")
            frc.append(f"{j}_tau" if t == JointType.REVOLUTE else f"{j}_f")
    return pos, vel, frc


# ----------------------------------------------------------------- inputs

_WRENCH = ("fx", "fy", "fz", "tx", "ty", "tz")


class Input:
    """An exogenous input channel ``u`` (m,), entering linearly.

    ``tau += generalized @ u`` (generalized forces, paired with v) and
    ``f_ext += (wrench @ u).reshape(nb, 6)`` (external wrenches ``[f, tau]``
    per body, body frame, about its origin).  Build with the class methods;
    the constructor takes the matrices directly.

    Parameters
    ----------
    names : sequence of str, (m,), unique within a linearisation (no dots: python-control
        reserves them)
    generalized : (nv, m) array, optional [N m or N per input unit]
    wrench : (nb * 6, m) array, optional, body k's rows ``6k : 6k + 6``
    """

    def __init__(
        self,
        names: str | Sequence[str],
        *,
        generalized: ArrayLike | None = None,
        wrench: ArrayLike | None = None,
    ) -> None:
        self.names = _signal_names(names)
        m = len(self.names)
        if m == 0:
            raise ValueError("an Input needs at least one name (one column)")
        self.generalized = None if generalized is None else _matrix(generalized, m, "generalized")
        self.wrench = None if wrench is None else _matrix(wrench, m, "wrench")
        if self.generalized is None and self.wrench is None:
            raise ValueError("an Input needs a generalized-force or an external-wrench matrix")

    @property
    def size(self) -> int:
        """Number of input components m."""
        return len(self.names)

    def _check(self, model):
        if self.generalized is not None and self.generalized.shape[0] != model.nv:
            raise ValueError(
                f"input {self.names[0]!r}...: generalized matrix has "
                f"{self.generalized.shape[0]} rows, the model has nv = {model.nv}"
            )
        if self.wrench is not None and self.wrench.shape[0] != 6 * model.nb:
            raise ValueError(
                f"input {self.names[0]!r}...: wrench matrix has {self.wrench.shape[0]} rows, "
                f"the model needs 6 nb = {6 * model.nb}"
            )

    @classmethod
    def generalized_forces(
        cls, model: Model, indices: ArrayLike | None = None, *, prefix: str = ""
    ) -> Self:
        """Generalized forces ``tau[indices]`` (all nv by default) [N m, N].

        Names ``prefix + {joint}_tau`` for a revolute joint, ``{joint}_tx ... _fz`` for
        the base (its generalized force is ``[torque, force]``, base axes).
        """
        idx = _index_list(indices, model.nv)
        S = np.zeros((model.nv, idx.size))
        S[idx, np.arange(idx.size)] = 1.0
        _, _, frc = _coordinate_names(model)
        return cls([prefix + frc[i] for i in idx], generalized=S)

    @classmethod
    def joint_torques(cls, model: Model, *, prefix: str = "") -> Self:
        """The joints' generalized forces (all but the floating base's six)."""
        start = 6 if model.floating else 0
        if model.nv == start:
            raise ValueError("the model has no joints besides its floating base")
        return cls.generalized_forces(model, np.arange(start, model.nv), prefix=prefix)

    @classmethod
    def base_wrench(cls, model: Model, *, prefix: str = "u_") -> Self:
        """The base's wrench ``[f, tau]`` (6,) [N, N m] in base axes about the base origin,
        as its generalized force ``[tau, f]`` (the controller's input, e.g. thrusters)."""
        if not model.floating:
            raise ValueError("base_wrench needs a floating-base model (root joint FREE)")
        S = np.zeros((model.nv, 6))
        S[3:6, 0:3] = np.eye(3)  # force -> generalized rows 3..5
        S[0:3, 3:6] = np.eye(3)  # torque -> generalized rows 0..2
        return cls([prefix + c for c in _WRENCH], generalized=S)

    @classmethod
    def external_wrench(cls, model: Model, target: int | str = 0, *, prefix: str = "d_") -> Self:
        """An external wrench ``[f, tau]`` (6,) [N, N m] on a body or named frame, in that
        frame's axes about its origin (a disturbance; default: on the root body).

        Physically the same as :meth:`base_wrench` on the base; kept apart so that the
        control input and the disturbance are separate channels.
        """
        q = model.neutral_configuration()  # the LOCAL map does not depend on q
        W = np.empty((6 * model.nb, 6))
        for i in range(6):
            e = np.zeros(6)
            e[i] = 1.0
            W[:, i] = external_wrenches(model, q, {target: e}).reshape(-1)
        return cls([prefix + c for c in _WRENCH], wrench=W)

    @classmethod
    def matrix(cls, model: Model, S: ArrayLike, names: Sequence[str]) -> Self:
        """``tau += S u`` for any (nv, m) input matrix ``S``."""
        S = np.asarray(S, float)
        if S.ndim != 2 or S.shape[0] != model.nv:
            raise ValueError(f"S must have shape (nv, m) = ({model.nv}, m), got {S.shape}")
        if len(names) != S.shape[1]:
            raise ValueError(f"names has {len(names)} entries for the {S.shape[1]} columns of S")
        return cls(names, generalized=S)

    def __repr__(self) -> str:
        return f"Input({list(self.names)})"


def _signal_names(names):
    """Names as a tuple of str; ValueError on a dot (python-control reserves it)."""
    if isinstance(names, str):
        names = [names]
    out = tuple(str(n) for n in names)
    bad = [n for n in out if "." in n]
    if bad:
        raise ValueError(f"signal names must not contain '.', got {bad}")
    return out


def _index_list(indices, n):
    """Distinct integer indices (k,) in 0..n-1 (all n when None), or a ValueError."""
    if indices is None:
        return np.arange(n)
    try:
        idx = np.atleast_1d(np.asarray(indices))
        ok = idx.ndim == 1 and idx.size > 0 and np.issubdtype(idx.dtype, np.integer)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"indices must be a non-empty list of integers, got {indices!r}")
    idx = idx.astype(np.int64)
    if idx.min() < 0 or idx.max() >= n:
        raise ValueError(f"indices must lie in 0..{n - 1}, got {idx.tolist()}")
    if np.unique(idx).size != idx.size:
        raise ValueError(f"indices must be distinct, got {idx.tolist()}")
    return idx


def _matrix(a, m, what):
    try:
        a = np.array(a, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a numeric matrix, got {a!r}") from None
    if a.ndim != 2 or a.shape[1] != m:
        raise ValueError(f"{what} must have shape (n, {m}) (one column per name), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} must be finite")
    return a


# ---------------------------------------------------------------- outputs


class Output:
    """An output ``y = fn(t, q, v, a)`` (m,), a (nonlinear) function of the state and of
    the generalized accelerations a (these make D non-zero).

    Build with the class methods or from any function.

    Parameters
    ----------
    names : sequence of str, (m,), without dots
    fn : callable ``fn(t, q, v, a) -> (m,)``
    """

    def __init__(self, names: str | Sequence[str], fn: _OutputFn) -> None:
        self.names = _signal_names(names)
        if not self.names:
            raise ValueError("an Output needs at least one name")
        if not callable(fn):
            raise ValueError(f"fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self._bind = None  # (model, q0) -> fn, for outputs defined relative to q0
        self._is_state = False
        self._control = None  # indices of the controller's generalized force

    def _function(self, model, q0):
        return self.fn if self._bind is None else self._bind(model, q0)

    @classmethod
    def state(cls) -> Self:
        """The state x itself (C = I, D = 0, exactly); names are the state names."""
        out = cls(["x"], lambda t, q, v, a: np.zeros(1))
        out._is_state = True
        return out

    @classmethod
    def control(cls, model: Model, indices: ArrayLike | None = None) -> Self:
        """The controller's generalized force ``k(t, q, v)[indices]`` (all nv by default)
        [N m, N]: what the law commands (e.g. the base rows, to break the loop at the base's
        actuation input); zeros without a controller.  Names ``cmd_`` + the force names."""
        idx = _index_list(indices, model.nv)
        _, _, frc = _coordinate_names(model)
        out = cls([f"cmd_{frc[i]}" for i in idx], lambda t, q, v, a: np.zeros(idx.size))
        out._control = idx
        return out

    @classmethod
    def base_pose_error(cls, reference: ArrayLike | None = None) -> Self:
        """``2 log(q^_ref* o q^_base) = [theta n, r]`` (6,) [rad, m]: the base's attitude
        error (rotation vector) and position relative to the reference, in base axes
        (Table 1; the error the dual PD acts on, P43-P46, short-way sign).

        Parameters
        ----------
        reference : (8,) pose, optional; default the operating point's base pose
        """
        names = ("att_x", "att_y", "att_z", "pos_x", "pos_y", "pos_z")
        ref = None if reference is None else unit_pose(reference, "reference")

        def bind(model, q0):
            if not model.floating:
                raise ValueError("base_pose_error needs a floating-base model (root joint FREE)")
            r = q0[:8].copy() if ref is None else ref
            r_conj = dq_conj(r)

            def fn(t, q, v, a):
                e = dq_mul(r_conj, q[:8])
                return 2.0 * dq_log(e if e[0] >= 0.0 else -e)

            return fn

        out = cls(names, lambda t, q, v, a: np.zeros(6))
        out._bind = bind
        return out

    @classmethod
    def frame_position(cls, model: Model, frame: int | str) -> Self:
        """Position (3,) [m] of a named frame or body in the inertial frame."""
        frame_pose(model, model.neutral_configuration(), frame)  # ValueError if unknown

        def fn(t, q, v, a):
            return translation_from_dq(frame_pose(model, q, frame))

        return cls([f"{frame}_x", f"{frame}_y", f"{frame}_z"], fn)

    @classmethod
    def base_twist(cls, model: Model) -> Self:
        """The base's body twist ``[w, v]`` (6,) [rad/s, m/s]."""
        if not model.floating:
            raise ValueError("base_twist needs a floating-base model (root joint FREE)")
        _, vel, _ = _coordinate_names(model)
        return cls(vel[:6], lambda t, q, v, a: v[:6].copy())

    @classmethod
    def acceleration(cls, model: Model, indices: ArrayLike | None = None) -> Self:
        """Generalized accelerations ``a[indices]`` (all by default) [rad/s^2, m/s^2]."""
        idx = _index_list(indices, model.nv)
        _, vel, _ = _coordinate_names(model)
        return cls([f"{vel[i]}_dot" for i in idx], lambda t, q, v, a: a[idx].copy())

    def __repr__(self) -> str:
        return f"Output({list(self.names)})"


# ----------------------------------------------------------- linearisation


def _controller_output(out, model):
    """(tau (nv,), f_ext (nb, 6) or None) from a controller's return value."""
    if isinstance(out, tuple):
        if len(out) != 2:
            raise ValueError("controller must return tau or (tau, f_ext)")
        tau, f = out
        f = np.asarray(f, float)
        if f.shape != (model.nb, 6):
            raise ValueError(f"controller's f_ext must have shape ({model.nb}, 6), got {f.shape}")
    else:
        tau, f = out, None
    tau = np.asarray(tau, float)
    if tau.shape != (model.nv,):
        raise ValueError(f"controller must return tau of shape ({model.nv},), got {tau.shape}")
    return tau, f


def linearize(
    model: Model,
    q: ArrayLike,
    v: ArrayLike | None = None,
    *,
    inputs: Sequence[Input] | None = None,
    outputs: Sequence[Output] | None = None,
    u0: ArrayLike | None = None,
    controller: _Controller | None = None,
    t: float = 0.0,
    method: str = "richardson",
    step: float | None = None,
) -> LinearModel:
    """Linearise ``x' = f(x, u)``, ``y = h(x, u)`` about ``(q, v, u0)`` in tangent coordinates.

    Parameters
    ----------
    model : Model
    q : (nq,) operating configuration (unit base pose / quaternions)
    v : (nv,) operating velocity [rad/s, m/s], default zero
    inputs : sequence of :class:`Input`, default ``[Input.generalized_forces(model)]``
        The exogenous inputs, stacked in order; their names must be unique.
    outputs : sequence of :class:`Output`, default ``[Output.state()]``
    u0 : (nu,) operating input, default zero
    controller : callable ``controller(t, q, v) -> tau | (tau, f_ext)``, optional
        State feedback closing the loop (the signature of
        :func:`dqspace.multibody.simulate_rk4`'s controller): ``tau`` (nv,),
        ``f_ext`` (nb, 6); added to the inputs' contribution.  It must be a
        smooth function of (q, v) near the operating point.  A law with states
        ``z`` (nz,) of its own declares them: ``controller.law_states`` (their
        names), ``controller.law_states0(t, q, v) -> z0`` (their operating
        value) and ``controller.law_rates(t, q, v, z) -> (tau | (tau, f_ext),
        z')``; x is then ``[delta, v, z]`` (2 nv + nz,) (e.g.
        :class:`~dqspace.control.station_keeping.StationKeepingFeedback` with an
        integrator or an observer in its base law).  ``linearizable = False`` on it or
        its ``base`` (a constrained optimiser: the MPC base law): ValueError.
    t : float, time of the operating point [s] (passed to the controller and outputs)
    method : {"richardson", "central"}
    step : float, relative step h in (0, 0.1]; default 1e-3 (richardson), 6e-6 (central).
        Component i is perturbed by ``h max(1, |z0_i|)``.

    Returns
    -------
    LinearModel

    Raises
    ------
    ValueError
        wrong shapes, non-finite values or a non-unit q (as the multibody
        functions), an unknown method, a step outside (0, 0.1], duplicate
        input or output names, inputs built for another model, a controller
        or output returning the wrong shape.
    """
    if method not in DEFAULT_STEP:
        raise ValueError(f"method must be 'richardson' or 'central', got {method!r}")
    h = DEFAULT_STEP[method] if step is None else step
    try:
        h = float(h)
    except (TypeError, ValueError):
        raise ValueError(f"step must be a number, got {step!r}") from None
    if not (math.isfinite(h) and 0.0 < h <= MAX_STEP):
        raise ValueError(f"step must lie in (0, {MAX_STEP:g}], got {h}")
    try:
        t = float(t)
    except (TypeError, ValueError):
        raise ValueError(f"t must be a number, got {t!r}") from None
    if not math.isfinite(t):
        raise ValueError(f"t must be finite, got {t}")
    q0 = check_configuration(model, q).copy()  # ValueError: shape, non-finite, not unit
    nv, nb = model.nv, model.nb
    v0 = np.zeros(nv) if v is None else finite_vector(v, "v", nv)
    if controller is not None and not callable(controller):
        raise ValueError(f"controller must be callable, got {type(controller).__name__}")
    laws = (controller, getattr(controller, "base", None))
    if law := next((c for c in laws if getattr(c, "linearizable", True) is False), None):
        raise ValueError(
            f"the controller's law ({type(law).__name__}) has no linearisation: a constrained "
            "optimiser; linearise with a dual PD, PID or PD + observer base law"
        )
    law_states = tuple(getattr(controller, "law_states", ()) or ())
    nz = len(law_states)
    z_law = finite_vector(controller.law_states0(t, q0, v0), "law_states0", nz) if nz else ()

    inputs = [Input.generalized_forces(model)] if inputs is None else list(inputs)
    outputs = [Output.state()] if outputs is None else list(outputs)
    for i in inputs:
        if not isinstance(i, Input):
            raise ValueError(f"inputs must be Input objects, got {type(i).__name__}")
        i._check(model)
    for o in outputs:
        if not isinstance(o, Output):
            raise ValueError(f"outputs must be Output objects, got {type(o).__name__}")
    pos_names, vel_names, _ = _coordinate_names(model)
    state_names = tuple(pos_names + vel_names) + law_states
    input_names = tuple(n for i in inputs for n in i.names)
    output_names = tuple(n for o in outputs for n in (state_names if o._is_state else o.names))
    for what, names in (("input", input_names), ("output", output_names)):
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"{what} names must be unique; repeated: {dup}")
    nu = len(input_names)
    u_op = np.zeros(nu) if u0 is None else finite_vector(u0, "u0", nu)
    S = np.zeros((nv, nu))
    W = np.zeros((6 * nb, nu))
    c = 0
    for i in inputs:
        if i.generalized is not None:
            S[:, c : c + i.size] = i.generalized
        if i.wrench is not None:
            W[:, c : c + i.size] = i.wrench
        c += i.size
    fns = [None if o._is_state else o._function(model, q0) for o in outputs]
    nx = 2 * nv + nz
    sizes = [nx if o._is_state else len(o.names) for o in outputs]
    ny = sum(sizes)
    ints, _ = model.packed
    theta_dot = np.empty(nv)

    def g(z):
        """[x' (nx), y (ny)] at z = [delta, v, z_law, u]."""
        delta, vel, u = z[:nv], z[nv : 2 * nv], z[nx:]
        qz = integrate(model, q0, delta)
        tau = S @ u
        f_ext = (W @ u).reshape(nb, 6)
        tk, z_dot = np.zeros(nv), ()
        if nz:
            raw, z_dot = controller.law_rates(t, qz, vel.copy(), z[2 * nv : nx].copy())
            z_dot = finite_vector(z_dot, "law_rates' z'", nz)
        elif controller is not None:
            raw = controller(t, qz, vel.copy())
        if controller is not None:
            tk, fk = _controller_output(raw, model)
            tau = tau + tk
            if fk is not None:
                f_ext = f_ext + fk
        a = forward_dynamics(model, qz, vel, tau, f_ext)
        _K.dexpinv(ints, delta, vel, theta_dot)
        out = np.empty(nx + ny)
        out[:nv] = theta_dot
        out[nv : 2 * nv] = a
        out[2 * nv : nx] = z_dot
        k = nx
        for o, fn, m in zip(outputs, fns, sizes, strict=True):
            if o._is_state:
                out[k : k + m] = z[:nx]  # delta = difference(q0, qz) exactly
            elif o._control is not None:
                out[k : k + m] = tk[o._control]
            else:
                y = np.asarray(fn(t, qz, vel, a), float)
                if y.shape != (m,):
                    raise ValueError(
                        f"output {o.names[0]!r}... returned shape {y.shape}, expected ({m},)"
                    )
                out[k : k + m] = y
            k += m
        return out

    z0 = np.concatenate([np.zeros(nv), v0, z_law, u_op])
    g0 = g(z0)
    scale = np.maximum(1.0, np.abs(z0))
    J = np.empty((nx + ny, nx + nu))
    for i in range(nx + nu):
        hi = h * scale[i]
        J[:, i] = _central(g, z0, i, hi)
        if method == "richardson":
            d2 = _central(g, z0, i, 0.5 * hi)
            J[:, i] = d2 + (d2 - J[:, i]) / 3.0
    # the state output is exact: C = I, D = 0 on its rows
    k = nx
    for o, m in zip(outputs, sizes, strict=True):
        if o._is_state:
            J[k : k + m] = np.hstack([np.eye(nx), np.zeros((nx, nu))])
        k += m
    return LinearModel(
        A=J[:nx, :nx].copy(),
        B=J[:nx, nx:].copy(),
        C=J[nx:, :nx].copy(),
        D=J[nx:, nx:].copy(),
        state_names=state_names,
        input_names=input_names,
        output_names=output_names,
        x0=z0[:nx].copy(),
        u0=u_op.copy(),
        q0=q0,
        t0=t,
        xdot0=g0[:nx].copy(),
        y0=g0[nx:].copy(),
    )


def _central(g, z0, i, h):
    zp = z0.copy()
    zm = z0.copy()
    zp[i] += h
    zm[i] -= h
    return (g(zp) - g(zm)) / (2.0 * h)
