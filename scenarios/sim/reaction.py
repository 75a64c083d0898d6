"""The arm's reaction on the base as the plant applied it, computed from a run's records.

The flight software records the reaction it *planned* (``arm_reaction``: the law's, from
its planned joint accelerations, on the controller model).  What the arm did to the base
(``arm_reaction_applied``) is computed here after each chunk of the closed loop, in
Python and compiled code outside the loop (:mod:`dqspace.scenarios.sim.loop` is not
changed), from what the chunk recorded, at every recorded tick k:

1. **what the plant applied**: the plant boundary's own callback
   (:func:`~dqspace.scenarios.sim.boundary.closed_loop_inputs`) at the recorded state
   ``(q_k, v_k)``, with the commands the plant held over the period after the tick (with
   ``control.computation_delay``, the previous tick's; before the first, none): the arm's
   joint torques and the reaction-wheel motor torques through the joint limiter (torque
   clip, rate cut, friction), the VSCMG servo torques, the disturbance (its noise
   included) and the orbit terms.  The thrusters' wrench is their mean over the period as
   the valves delivered it (``wrench_thr_true``): the pulses inside a period are not
   recorded, and the reaction at the tick is that of the period's mean thrust;
2. **the accelerations** by forward dynamics of the plant model (the articulated-body
   algorithm, :func:`~dqspace.multibody.kernels.aba`) with those forces;
3. **the joint wrenches** by inverse dynamics at those accelerations
   (:func:`~dqspace.multibody.kernels.rnea`): the wrench ``f_c`` the base exerts through
   the joint of each *arm root* (every child body of the base that belongs to the arm:
   not a VSCMG gimbal or wheel, not a reaction wheel), in body c's frame about its origin.
   The arm's reaction on the base is ``-sum_c rel_c o f_c o rel_c*``: the wrench
   ``[f, tau]`` the arm exerts on the base, in the base frame about its origin
   (``docs/conventions.md``).

It differs from the planned one by what the plan does not know: the joint limiter, the
true plant (its mass errors), the devices' and thrusters' effect on the base's
acceleration and the base's actual motion; the planned reaction also carries the base's
own gyroscopic term (zero at rest), which the arm does not transmit.  A state at which
the forward dynamics fail (a run that diverged) gives NaN.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..._jit import dispatcher_for, signature_on_first_call
from ...dq.dual_kernels import dv_frame_change_inv
from ...multibody.kernels import aba, relative_pose, rnea
from ...multibody.simulation import resolve_inputs
from . import boundary as _inputs

__all__ = ["AppliedReaction", "arm_roots", "arm_reaction_kernel", "applied_reaction_kernel"]


def arm_roots(model, index) -> np.ndarray:
    """The arm's root bodies (int64): the children of the base (body 0) other than the
    momentum devices' bodies (the VSCMG gimbals and wheels, the reaction wheels, found by
    their velocity indices in ``index``, a
    :data:`~dqspace.control.flight.interfaces.PlantIndex`)."""
    devices = {int(j) for j in (*index.gimbal_v, *index.wheel_v, *index.rw_v)}
    roots = [
        k
        for k in range(1, model.nb)
        if int(model.parent[k]) == 0
        and not (int(model.joint_nv[k]) > 0 and int(model.v_index[k]) in devices)
    ]
    return np.array(roots, dtype=np.int64)


@njit(cache=True)
def arm_reaction_kernel(ints, reals, gravity, q, v, a, fext, roots, tau, force, out):
    """``out`` (6,) ``[f, tau]``: the wrench the bodies ``roots`` (children of the base)
    exert on the base at ``(q, v, a)`` with the external wrenches ``fext`` (nb, 6) (or
    (0, 6)), in the base frame about its origin: ``-sum_c rel_c o f_c o rel_c*`` with
    ``f_c`` the joint wrenches of the inverse dynamics (``rnea``; its work arrays ``tau``
    (nv,) and ``force`` (nb, 6))."""
    rnea(ints, reals, gravity, q, v, a, fext, tau, force)
    w = np.empty(6)
    rel = np.empty(8)
    out[:] = 0.0
    for i in range(roots.shape[0]):
        c = roots[i]
        x = relative_pose(ints, reals, c, q)
        for j in range(8):
            rel[j] = x[j]
        dv_frame_change_inv(rel, force[c], w)
        for j in range(6):
            out[j] -= w[j]


def _applied_reaction(
    ints, reals, gravity, inputs, params, steps, arm_v, rw_v, roots, t, Q, V, arm_tau, rw_tau,
    gimbal_rate_cmd, wheel_accel_cmd, delivered, dist, out,
):  # fmt: skip
    """Rows of :func:`applied_reaction_kernel` (the module docstring): ``t`` (m,), ``Q``
    (m, nq), ``V`` (m, nv) the recorded states; the commands held over each row's period:
    ``arm_tau`` (m, n), ``rw_tau`` (m, W) [N m] (before the limiter), ``gimbal_rate_cmd``,
    ``wheel_accel_cmd`` (m, K), the thrusters' mean ``delivered`` (m, S) [N] and the
    disturbance ``dist`` (m, 6); ``inputs`` the plant boundary's callback, ``params`` a
    copy of its parameters (written), ``steps`` dynamics steps per period; ``arm_v``,
    ``rw_v`` where the commands act in v; ``roots`` the arm's root bodies.  Writes ``out``
    (m, 6); NaN where the forward dynamics fail."""
    m, nv, nb = t.shape[0], V.shape[1], ints.shape[0]
    S = delivered.shape[1]
    held = np.zeros(nv)
    tau = np.empty(nv)
    fext = np.empty((nb, 6))
    a = np.empty(nv)
    work_tau = np.empty(nv)
    force = np.empty((nb, 6))
    none = np.zeros(S)
    whole = np.full(S, float(steps))  # one pulse over the period: its mean thrust
    mem = np.zeros(0)  # the limiter's report is not wanted here
    for r in range(m):
        held[:] = 0.0
        for j in range(arm_v.shape[0]):
            held[arm_v[j]] = arm_tau[r, j]
        for j in range(rw_v.shape[0]):
            held[rw_v[j]] = rw_tau[r, j]
        _inputs.write_tick(
            params, t[r], held, none, none, none, whole, delivered[r], none, dist[r],
            gimbal_rate_cmd[r], wheel_accel_cmd[r],
        )  # fmt: skip
        q, v = Q[r], V[r]
        inputs(t[r], t[r], q, v, params, mem, tau, fext)
        if not aba(ints, reals, gravity, q, v, tau, fext, a):
            out[r, :] = np.nan
            continue
        arm_reaction_kernel(ints, reals, gravity, q, v, a, fext, roots, work_tau, force, out[r])


#: :func:`_applied_reaction` compiled for its arguments' types (the boundary's callback is
#: numba's ``FunctionType``: called through a pointer, not compiled in; cacheable)
applied_reaction_kernel = signature_on_first_call({}, cache=True)(_applied_reaction)


class AppliedReaction:
    """The applied reaction of a closed loop's rows (module docstring): built with the
    system, the plant, the flight software's plant index and whether the commands apply
    a period late (``control.computation_delay``); called with each chunk's records in
    order (it keeps the last commands of a chunk for the next one's first row)."""

    def __init__(self, system, plant, index, delay):
        model = system.plant
        self.ints, self.reals = model.packed
        self.gravity = np.asarray(model.gravity, float)
        self.inputs = resolve_inputs(_inputs.closed_loop_inputs)
        self.params = plant.params.copy()  # the run's constants; the tick's fields rewritten
        self.steps = int(plant.steps)
        self.arm_v = np.asarray(index.arm_v, np.int64)
        self.rw_v = np.asarray(index.rw_v, np.int64)
        self.roots = arm_roots(model, index)
        self.delay = bool(delay)
        self._kernel = None
        self.reset()

    def reset(self) -> None:
        """Before the first tick: no command held yet (the run's start)."""
        self._last = None

    def _held(self, R, m):
        """The commands held over the periods of the first m rows (arm and wheel torques,
        gimbal-rate and wheel-acceleration commands) and the last row's commands."""
        cmds = [np.ascontiguousarray(x[:m]) for x in (
            R.arm_tau, R.rw_cmd, R.gimbal_rate_cmd, R.wheel_accel_cmd
        )]  # fmt: skip
        if not self.delay or not m:
            return cmds, self._last
        # with the computation delay, the commands held over period k are tick k - 1's
        last = self._last or [np.zeros(c.shape[1:]) for c in cmds]
        held = [np.concatenate([x[None], c[:-1]]) for x, c in zip(last, cmds, strict=True)]
        return held, [c[m - 1].copy() for c in cmds]

    def _arguments(self, held, R, m, dist, out):
        return (
            self.ints, self.reals, self.gravity, self.inputs, self.params, self.steps,
            self.arm_v, self.rw_v, self.roots, np.ascontiguousarray(R.t[:m]),
            np.ascontiguousarray(R.q[:m]), np.ascontiguousarray(R.v[:m]), *held,
            np.ascontiguousarray(R.delivered[:m]), np.ascontiguousarray(dist[:m]), out,
        )  # fmt: skip

    def kernel_job(self, R, dist) -> tuple:
        """``(kernel, signature)`` of the kernel for records like ``R`` (what
        :func:`~dqspace._precompile.precompile` compiles with the run's other kernels)."""
        held, _ = self._held(R, 0)
        args = self._arguments(held, R, 0, dist, np.zeros((0, 6)))
        return applied_reaction_kernel, applied_reaction_kernel.signature(*args)

    def __call__(self, R, m, dist) -> np.ndarray:
        """(m, 6) ``[f, tau]`` [N, N m]: the applied reaction at the first m rows of the
        records ``R`` (:data:`~dqspace.scenarios.sim.loop.Record`) with the disturbance
        ``dist`` (m, 6) of those ticks; the rows follow those of the previous call."""
        out = np.zeros((m, 6))
        if not m:
            return out
        held, self._last = self._held(R, m)
        args = self._arguments(held, R, m, dist, out)
        if self._kernel is None:
            sig = applied_reaction_kernel.signature(*args)
            self._kernel = dispatcher_for(applied_reaction_kernel, sig)
        self._kernel(*args)
        return out
