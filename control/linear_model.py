"""The linear model a linearisation returns, and its frequency-domain helpers.

``x' = A dx + B du + xdot0``, ``y = y0 + C dx + D du`` in the tangent coordinates of
:func:`dqspace.control.linearize.linearize` (:class:`LinearModel`): poles, sub-models by
signal name, the frequency response ``G(j w)``, the static gain, and a
``control.StateSpace`` when python-control (the optional extra ``dqspace[control]``) is
installed.  See ``docs/linearization.md``.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["LinearModel"]


@dataclass(frozen=True)
class LinearModel:
    """``x' = A dx + B du + xdot0``, ``y = y0 + C dx + D du`` about ``(x0, u0)``.

    ``dx = x - x0`` with ``x = [delta, v]`` (2 nv,), ``delta`` the tangent-space
    coordinates of q about ``q0`` (``q = integrate(model, q0, delta)``), so
    ``x0 = [0, v0]``; ``du = u - u0``.  A closed loop whose law has states of its own
    (an integrator, an observer) appends them: ``x = [delta, v, z]``, ``x0 = [0, v0, z0]``.

    Attributes
    ----------
    A : (nx, nx), B : (nx, nu), C : (ny, nx), D : (ny, nu) ndarrays
    state_names, input_names, output_names : tuple of str
    x0 : (nx,) operating state ``[0, v0]`` (``[0, v0, z0]``) [rad, m, rad/s, m/s, ...]
    u0 : (nu,) operating input
    q0 : (nq,) configuration the chart is centred on
    t0 : float, time of the operating point [s]
    xdot0 : (nx,) state rate at the operating point (zero at an equilibrium)
    y0 : (ny,) outputs at the operating point
    """

    A: NDArray[np.float64]
    B: NDArray[np.float64]
    C: NDArray[np.float64]
    D: NDArray[np.float64]
    state_names: tuple[str, ...]
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]
    x0: NDArray[np.float64]
    u0: NDArray[np.float64]
    q0: NDArray[np.float64]
    t0: float = 0.0
    xdot0: NDArray[np.float64] | None = field(default=None)
    y0: NDArray[np.float64] | None = field(default=None)

    @property
    def nx(self) -> int:
        """Number of states (2 nv, plus the law's states)."""
        return self.A.shape[0]

    @property
    def nu(self) -> int:
        """Number of inputs."""
        return self.B.shape[1]

    @property
    def ny(self) -> int:
        """Number of outputs."""
        return self.C.shape[0]

    def poles(self) -> NDArray[np.inexact]:
        """Eigenvalues (nx,) of A [1/s]."""
        return np.linalg.eigvals(self.A)

    def select(
        self,
        inputs: str | int | Sequence[str | int] | None = None,
        outputs: str | int | Sequence[str | int] | None = None,
    ) -> "LinearModel":
        """The sub-model with the named (or indexed) inputs and outputs, in the given order."""
        iu = _indices(inputs, self.input_names, "input")
        iy = _indices(outputs, self.output_names, "output")
        return LinearModel(
            A=self.A,
            B=self.B[:, iu],
            C=self.C[iy],
            D=self.D[np.ix_(iy, iu)],
            state_names=self.state_names,
            input_names=tuple(self.input_names[i] for i in iu),
            output_names=tuple(self.output_names[i] for i in iy),
            x0=self.x0,
            u0=self.u0[iu],
            q0=self.q0,
            t0=self.t0,
            xdot0=self.xdot0,
            y0=None if self.y0 is None else self.y0[iy],
        )

    def frequency_response(self, omega: ArrayLike) -> NDArray[np.complex128]:
        """``G(j w) = C (j w I - A)^-1 B + D`` for each angular frequency.

        Parameters
        ----------
        omega : (n_w,) angular frequencies [rad/s], finite, >= 0

        Returns
        -------
        (ny, nu, n_w) complex ndarray

        Raises
        ------
        ValueError
            on negative or non-finite frequencies, or at a pole of A on the axis
            (e.g. omega = 0 for an open-loop floating base).
        """
        w = np.atleast_1d(np.asarray(omega, float))
        if w.ndim != 1 or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(f"omega must be finite, non-negative frequencies, got {omega!r}")
        eye = np.eye(self.nx)
        out = np.empty((self.ny, self.nu, w.size), complex)
        for k, wk in enumerate(w):
            try:
                X = np.linalg.solve(1j * wk * eye - self.A, self.B)
            except np.linalg.LinAlgError:
                raise ValueError(
                    f"j w I - A is singular at omega = {wk:g} rad/s: A has a pole there"
                ) from None
            out[:, :, k] = self.C @ X + self.D
        return out

    def dc_gain(self) -> NDArray[np.float64]:
        """Static gain ``-C A^-1 B + D`` (ny, nu); ValueError if A is singular."""
        cond = np.linalg.cond(self.A)
        if not np.isfinite(cond) or cond > 1e12:
            raise ValueError(
                f"A is singular (condition number {cond:.3g}): no static gain "
                "(an open-loop floating base, or an unstabilised mode)"
            )
        return -self.C @ np.linalg.solve(self.A, self.B) + self.D

    def to_statespace(self) -> Any:
        """A ``control.StateSpace`` with the same matrices and signal names.

        Raises
        ------
        ImportError
            when python-control is not installed (``pip install 'dqspace[control]'``).
        """
        from .pycontrol import python_control  # here: this module does not re-export it

        ct = python_control()
        return ct.ss(
            self.A,
            self.B,
            self.C,
            self.D,
            states=list(self.state_names),
            inputs=list(self.input_names),
            outputs=list(self.output_names),
        )


def _indices(sel, names, what):
    if sel is None:
        return list(range(len(names)))
    if isinstance(sel, str | int | np.integer):
        sel = [sel]
    out = []
    for s in sel:
        if isinstance(s, int | np.integer):
            if not 0 <= s < len(names):
                raise ValueError(f"{what} index {s} out of range 0..{len(names) - 1}")
            out.append(int(s))
        elif s in names:
            out.append(names.index(s))
        else:
            raise ValueError(f"no {what} named {s!r}; {what}s: {list(names)}")
    return out
