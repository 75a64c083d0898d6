"""The base loop of a linearised closed loop: broken at the base's actuation input, its gain
and phase margins, and the response to a disturbance wrench on the base.

:func:`base_loop` linearises a closed loop (a state feedback such as
:class:`~dqspace.control.station_keeping.StationKeepingFeedback`, with or without states of
its own) twice over: the applied base wrench ``u`` (6,) ``[f, tau]`` and the commanded one
``y``.  With the loop broken at the actuation input (the plant gets ``u``, the law still
sees the state and computes ``y``; an observer keeps integrating its own command) the loop
transfer is ``L(s) = -Y(s) / U(s)`` (6 x 6, negative-feedback convention: closing it is
``u = y``).  :func:`loop_at_a_time` keeps one channel broken and the five others closed,
:func:`loop_margins` reads the gain and phase margins of a SISO loop from its frequency response
(crossings refined with Brent's method; python-control's ``stability_margins`` on
:meth:`~dqspace.control.linear_model.LinearModel.to_statespace` gives the same numbers).
:func:`disturbance_response` is the closed loop from a disturbance wrench on the base to
the base pose error, :func:`step_response` a linear model's response to a step.  See
``docs/linearization.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..multibody import Model
from .linear_model import LinearModel
from .linearize import Input, Output, linearize

__all__ = [
    "LoopMargins",
    "base_loop",
    "loop_at_a_time",
    "loop_margins",
    "base_loop_margins",
    "disturbance_response",
    "step_response",
    "CHANNELS",
]

#: The base loop's channels, in wrench order.
CHANNELS = ("fx", "fy", "fz", "tx", "ty", "tz")
_SWAP = np.r_[3, 4, 5, 0, 1, 2]  # [tau, f] <-> [f, tau]


@dataclass(frozen=True)
class LoopMargins:
    """Stability margins of a SISO loop ``L(s)`` (negative feedback: ``1 + L``).

    Attributes
    ----------
    gain_margin : the factor on the loop gain that reaches instability at the phase
        crossing nearest to it (``1/|L(j w_pc)|``: above 1 the gain may grow, below 1 it
        may shrink by that factor, a conditionally stable loop); inf without a crossing
    phase_margin : [deg] at the gain crossing with the smallest margin; inf without one
    stability_margin : ``min |1 + L(j w)|`` over the frequencies: the distance of the
        Nyquist curve to -1
    phase_crossover, gain_crossover : [rad/s] (nan without a crossing)
    gain_margins, phase_margins : every crossing's margin, by increasing frequency
    """

    gain_margin: float
    phase_margin: float
    stability_margin: float
    phase_crossover: float
    gain_crossover: float
    gain_margins: tuple[float, ...] = ()
    phase_margins: tuple[float, ...] = ()

    @property
    def gain_margin_db(self) -> float:
        """The gain margin in dB (``20 log10``; negative for a lower gain margin)."""
        return 20.0 * float(np.log10(self.gain_margin))


def base_loop(
    model: Model,
    q: ArrayLike,
    v: ArrayLike | None = None,
    *,
    controller: Callable[..., Any],
    t: float = 0.0,
) -> LinearModel:
    """The base loop ``L(s)`` (6 x 6) of a closed loop, broken at the base's actuation input.

    Parameters
    ----------
    model : Model with a FREE root (the one ``controller`` acts on)
    q, v : operating point (v default zero)
    controller : the closed loop's state feedback ``k(t, q, v)`` (as :func:`linearize`;
        its base rows are the commanded base wrench)
    t : time of the operating point [s]

    Returns
    -------
    LinearModel with inputs ``u_fx .. u_tz`` (the wrench applied at the base's actuation
    input [N, N m]), outputs ``l_fx .. l_tz`` (minus the commanded wrench), and the closed
    loop's states (the loop's ``A`` is the open loop's).
    """
    lin = linearize(
        model, q, v, controller=controller, t=t, inputs=[Input.base_wrench(model)],
        outputs=[Output.control(model, range(6))],
    )  # fmt: skip
    # closed: x' = A x + B u with the applied wrench = commanded (K x) + u; open: - B K x
    K = lin.C[_SWAP]  # the commanded wrench [f, tau] (the output is the generalized force)
    return LinearModel(
        A=lin.A - lin.B @ K, B=lin.B, C=-K, D=-lin.D[_SWAP], state_names=lin.state_names,
        input_names=lin.input_names, output_names=tuple(f"l_{c}" for c in CHANNELS),
        x0=lin.x0, u0=lin.u0, q0=lin.q0, t0=lin.t0,
    )  # fmt: skip


def loop_at_a_time(loop: LinearModel, channel: int | str) -> LinearModel:
    """The SISO loop of one channel of ``loop`` (:func:`base_loop`) with the others closed.

    ``channel`` an index or a name of :data:`CHANNELS` (``"fx"`` ... ``"tz"``).
    """
    n = loop.nu
    i = CHANNELS.index(channel) if channel in CHANNELS[:n] else channel
    if not isinstance(i, int | np.integer) or not 0 <= i < n:
        raise ValueError(f"channel must be one of {CHANNELS[:n]} or 0..{n - 1}, got {channel!r}")
    E = np.eye(n)
    E[i, i] = 0.0  # u_j = -y_j for j != i (closed), u_i = w (broken)
    M = np.linalg.inv(np.eye(n) + E @ loop.D)
    A, B, C, D = loop.A, loop.B, loop.C, loop.D
    return LinearModel(
        A=A - B @ M @ E @ C, B=B @ M[:, i : i + 1], C=(C[i] - D[i] @ M @ E @ C)[None],
        D=(D[i] @ M[:, i])[None, None], state_names=loop.state_names,
        input_names=(loop.input_names[i],), output_names=(loop.output_names[i],), x0=loop.x0,
        u0=loop.u0[i : i + 1], q0=loop.q0, t0=loop.t0,
    )  # fmt: skip


def loop_margins(loop: LinearModel, omega: ArrayLike | None = None) -> LoopMargins:
    """Gain, phase and stability margins of a SISO loop ``L(s)`` (:class:`LoopMargins`).

    Parameters
    ----------
    loop : LinearModel with one input and one output (e.g. :func:`loop_at_a_time`)
    omega : (n,) increasing frequencies [rad/s] where crossings are looked for (default
        2000 points from 1e-3 to 1e3); each crossing is refined by Brent's method
    """
    from scipy.optimize import brentq  # here, not at import: scipy takes ~0.2 s

    if loop.nu != 1 or loop.ny != 1:
        raise ValueError(f"loop_margins needs a SISO loop, got {loop.ny} x {loop.nu}")
    w = np.logspace(-3, 3, 2000) if omega is None else np.asarray(omega, float)
    if w.ndim != 1 or w.size < 2 or np.any(np.diff(w) <= 0) or w[0] <= 0:
        raise ValueError("omega must be increasing positive frequencies (at least two)")

    def L(x):
        return complex(loop.frequency_response([x])[0, 0, 0])

    G = loop.frequency_response(w)[0, 0]
    mag = np.abs(G) - 1.0
    wc = [brentq(lambda x: abs(L(x)) - 1.0, w[k], w[k + 1]) for k in _sign_changes(mag)]
    im = G.imag
    wpc = [
        brentq(lambda x: L(x).imag, w[k], w[k + 1])
        for k in _sign_changes(im)
        if G[k].real < 0.0 and G[k + 1].real < 0.0
    ]
    pm = [float(np.remainder(np.angle(L(x), deg=True), 360.0) - 180.0) for x in wc]
    with np.errstate(divide="ignore"):
        gm = [float(1.0 / abs(L(x))) for x in wpc]
    j_gm = int(np.argmin(np.abs(np.log(gm)))) if gm else None
    j_pm = int(np.argmin(np.abs(pm))) if pm else None
    return LoopMargins(
        gain_margin=gm[j_gm] if gm else np.inf,
        phase_margin=pm[j_pm] if pm else np.inf,
        stability_margin=float(np.min(np.abs(1.0 + G))),
        phase_crossover=wpc[j_gm] if gm else np.nan,
        gain_crossover=wc[j_pm] if pm else np.nan,
        gain_margins=tuple(gm),
        phase_margins=tuple(pm),
    )


def _sign_changes(x):
    s = np.sign(x)
    return np.flatnonzero(s[:-1] * s[1:] < 0)


def base_loop_margins(loop: LinearModel, omega: ArrayLike | None = None) -> dict[str, LoopMargins]:
    """:func:`loop_margins` of each channel of a base loop (:func:`base_loop`), loop at a time."""
    return {c: loop_margins(loop_at_a_time(loop, c), omega) for c in CHANNELS[: loop.nu]}


def disturbance_response(
    model: Model,
    q: ArrayLike,
    v: ArrayLike | None = None,
    *,
    controller: Callable[..., Any],
    t: float = 0.0,
) -> LinearModel:
    """The closed loop from a disturbance wrench on the base to the base pose error.

    Inputs ``d_fx`` ... ``d_tz`` [N, N m] (base axes, about its origin), outputs ``att_x``
    ... ``pos_z`` (``[theta n, r]`` [rad, m], base axes, about the operating pose):
    :func:`linearize` with :meth:`Input.external_wrench` and :meth:`Output.base_pose_error`.
    """
    return linearize(
        model, q, v, controller=controller, t=t, inputs=[Input.external_wrench(model)],
        outputs=[Output.base_pose_error()],
    )  # fmt: skip


def step_response(lin: LinearModel, u: ArrayLike, times: ArrayLike) -> NDArray[np.float64]:
    """The response of a linear model to a step of its inputs, from rest.

    The outputs' deviation (m, ny) of ``lin`` after a step ``u`` (nu,) of its inputs at
    t = 0, at ``times`` (m,) [s]; exact (the matrix exponential).
    """
    from scipy.linalg import expm  # here, not at import: scipy takes ~0.2 s

    u = np.asarray(u, float)
    t = np.asarray(times, float)
    n = lin.nx
    # augmented [[A, B u], [0, 0]]: exp gives x(t) = int_0^t e^{A s} ds B u
    Z = np.zeros((n + 1, n + 1))
    Z[:n, :n] = lin.A
    Z[:n, n] = lin.B @ u
    out = np.empty((t.size, lin.ny))
    for k, tk in enumerate(t):
        x = expm(Z * tk)[:n, n]
        out[k] = lin.C @ x + lin.D @ u
    return out
