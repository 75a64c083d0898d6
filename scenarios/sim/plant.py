"""The plant of a closed-loop run: multibody and actuator physics between two ticks.

:class:`Plant` prepares, from a built system, what the compiled loop integrates with the
commands of a tick held (:data:`~dqspace.scenarios.sim.loop.PlantBlock`): the multibody
model with the momentum devices as bodies, integrated with compiled Lie-group RK4 over the
period; the thrusters' pulses as their valves deliver them (``thrusters.open_delay``,
``close_delay``, ``min_on_time``; :class:`~dqspace.actuators.thrusters.Valves`, in dynamics
steps), the true thruster directions and magnitudes (imperfections in), the VSCMG servo
loops, the joint limiter (arm torque and rate limits; reaction-wheel motor torque, speed
and friction; VSCMG gimbal and wheel motor torque, rate and friction from ``[vscmg]``, each
unit's limits from its ``[[vscmg_unit]]`` row when it gives them) and,
with ``[orbit] enabled``, the orbit terms on every body -- all inside the integration
(:mod:`dqspace.scenarios.sim.boundary`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..._jit import KernelPointer, LazyKernel
from ...actuators import Valves
from ...multibody.kernels import sim as _sim
from ...multibody.simulation import resolve_inputs
from ..build.devices import vscmg_motor_limits
from . import boundary as _inputs
from .loop import PlantBlock

__all__ = ["Plant", "kernel_jobs"]


#: the integration loop as the compiled loop calls it (one kernel for every run)
_INTEGRATE = KernelPointer(_sim.rk4_loop, _sim.RK4_LOOP_SIG)


def kernel_jobs() -> list:
    """``(kernel, signature)`` of the plant's kernels whose signature is fixed (the
    boundary's callback, the integration loop) and this process has not compiled yet (what
    :func:`~dqspace._precompile.start` takes)."""
    kernels = (_inputs.closed_loop_inputs, _sim.rk4_loop)
    return [(k, k._signature) for k in kernels if isinstance(k, LazyKernel)]


def _f64(x):
    return np.ascontiguousarray(x, dtype=float)


class Plant:
    """The plant of a built system: multibody + actuator physics between ticks.

    What it adds to the commands (:mod:`dqspace.scenarios._inputs` does it inside the
    integration): the thrusters' valve timing (``thrusters.open_delay``, ``close_delay``,
    ``min_on_time``; :class:`~dqspace.actuators.thrusters.Valves`, in dynamics steps), the
    joint limiter (arm torque and rate limits; reaction-wheel motor torque, speed and
    friction; VSCMG gimbal and wheel motor torque, rate and friction from ``[vscmg]``, each
    unit's limits from its ``[[vscmg_unit]]`` row when it gives them), and, with
    ``[orbit] enabled``, the orbit terms on every body.
    """

    def __init__(self, system):
        sy = self.sy = system
        cfg = sy.cfg
        self.dt = cfg["integrator"]["dt"]
        self.steps = int(round(1.0 / cfg["control"]["rate"] / self.dt))
        plant = sy.plant
        S = sy.thrusters.n if sy.thrusters is not None else 0
        cm, wm, info = sy.cluster_model, sy.wheel_model, sy.arm_info
        K = cm.cluster.K if cm is not None else 0
        # the joint limiter: arm joints with a finite torque or rate limit, wheel motors,
        # VSCMG gimbal and wheel motors; `groups` names the limiter's rows of each device
        lim_v, lim_tau, lim_rate, lim_fr, lim_cf = [], [], [], [], []

        def limit(j, torque, rate, viscous=0.0, coulomb=0.0):
            lim_v.append(int(j))
            lim_tau.append(float(torque))
            lim_rate.append(float(rate))
            lim_fr.append(float(viscous))
            lim_cf.append(float(coulomb))
            return len(lim_v) - 1

        groups = {"arm": [], "rw": [], "gimbal": [], "vscmg_wheel": []}
        self._arm_rows = []  # the arm joints (0..n-1) the limiter has, in its order
        for j in range(info.n):
            if np.isfinite(info.torque_limit[j]) or np.isfinite(info.rate_limit[j]):
                groups["arm"].append(limit(6 + j, info.torque_limit[j], info.rate_limit[j]))
                self._arm_rows.append(j)
        if wm is not None:
            arr = wm.array
            for i, j in enumerate(wm.index.wheel_v):
                w = arr.wheels[i]
                groups["rw"].append(
                    limit(j, arr.max_torque[i], arr.max_speed[i], w.friction, w.coulomb)
                )
        if cm is not None:
            vc, lim = cfg["vscmg"], vscmg_motor_limits(cfg)  # each unit's limits
            for i, j in enumerate(cm.index.gimbal_v):
                groups["gimbal"].append(
                    limit(
                        j,
                        lim["gimbal_torque_max"][i],
                        lim["gimbal_rate_max"][i],
                        vc["gimbal_friction"],
                        vc["gimbal_coulomb"],
                    )
                )
            for i, j in enumerate(cm.index.wheel_v):
                groups["vscmg_wheel"].append(
                    limit(
                        j,
                        lim["wheel_torque_max"][i],
                        lim["wheel_speed_max"][i],
                        vc["wheel_friction"],
                        vc["wheel_coulomb"],
                    )
                )
        self.groups = {k: np.array(v, dtype=int) for k, v in groups.items()}
        big = np.finfo(float).max
        self.limited = dict(
            limited_v=np.array(lim_v, float),
            max_torque=np.nan_to_num(np.array(lim_tau, float), posinf=big),
            max_rate=np.nan_to_num(np.array(lim_rate, float), posinf=big),
            friction=np.array(lim_fr, float),
            coulomb=np.array(lim_cf, float),
        )
        orbit = cfg["orbit"]
        nb = plant.nb if orbit["enabled"] else 0
        self.layout = _inputs.layout(plant.nv, S, K, len(lim_v), nb)
        self.params = _inputs.pack(
            self.layout,
            dt=self.dt,
            H=sy.thruster_H_true if sy.thrusters is not None else np.zeros((6, 0)),
            k_g=cfg["vscmg"]["servo_bandwidth"],
            cluster_index=cm.index if cm is not None else None,
            geometry=cm.cluster.geometry if cm is not None else None,
            orbit_rate=orbit["rate"],
            model=plant,
            **self.limited,
        )
        self.tick_inputs = _inputs.TickInputs(self.layout, self.params)
        # the limiter's report: RK4 stages per limited joint at which it clipped
        self.mem = np.zeros(len(lim_v))
        tc = cfg["thrusters"]
        # the valves' timing in dynamics steps (Valves checks it), their state
        vt = Valves(
            S,
            period=float(self.steps),
            open_delay=tc["open_delay"] / self.dt,
            close_delay=tc["close_delay"] / self.dt,
            min_on_time=tc["min_on_time"] / self.dt,
        )
        self.valves = np.array([vt.open_delay, vt.close_delay, vt.min_on_time])
        self.valve_carry = np.full(S, -np.inf)  # thrust still coming from earlier pulses
        self.tail_level = np.zeros(S)  # thrust of the pulse still delivering [N]

    def apply(
        self, t, tau, n_on, on_level, off_level, gimbal_rate_cmd, wheel_accel_cmd,
        disturbance, *, commit=True,
    ) -> NDArray[np.float64]:  # fmt: skip
        """Write the commands of the period starting at ``t`` into ``params`` (``tau``
        (nv,), the pulses ``n_on`` [steps] and the levels (S,), the VSCMG commands (K,), the
        disturbance (6,) on the base)
        (:func:`~dqspace.scenarios._inputs.apply_commands`, valve timing in); returns (S,)
        the mean thrust [N] each thruster delivers over the period (valve timing and faults
        in; the magnitude errors are in ``thruster_H_true``).  ``commit=False``: the valves'
        state is left as it was."""
        delivered = np.empty(len(self.tail_level))
        _inputs.apply_commands(
            self.params, float(t), self.steps, _f64(tau), _f64(n_on), _f64(on_level),
            _f64(off_level), _f64(disturbance), _f64(gimbal_rate_cmd), _f64(wheel_accel_cmd),
            self.valves, self.valve_carry, self.tail_level, commit, delivered,
        )  # fmt: skip
        return delivered

    def saturation(self) -> dict[str, NDArray[np.bool_]]:
        """Which limited joints the limiter clipped (torque limit) or cut (rate limit) during
        the periods integrated since the last call, per device (:meth:`devices`); then starts
        counting afresh."""
        hit = self.mem > 0.0
        self.mem[:] = 0.0
        return self.devices(hit)

    def devices(self, hit: NDArray[np.bool_]) -> dict[str, NDArray[np.bool_]]:
        """The limiter's rows ``hit`` (..., L) per device: ``"arm"`` (..., n), ``"rw"``
        (..., W), ``"gimbal"`` (..., K), ``"vscmg_wheel"`` (..., K)."""
        hit = np.asarray(hit, dtype=bool)
        out = {k: hit[..., rows] for k, rows in self.groups.items()}
        arm = np.zeros((*hit.shape[:-1], self.sy.arm_info.n), dtype=bool)
        arm[..., self._arm_rows] = out["arm"]
        out["arm"] = arm
        return out

    def block(self) -> PlantBlock:
        """What the compiled loop integrates (:data:`~dqspace.scenarios.sim.loop.PlantBlock`):
        the plant model, the boundary's callback and parameters, the limiter's report and
        the valves' state (shared with this object)."""
        ints, reals = self.sy.plant.packed
        inputs = resolve_inputs(_inputs.closed_loop_inputs)  # compiled when first called
        return PlantBlock(
            _INTEGRATE, ints, reals, self.sy.plant.gravity, inputs,
            self.params, self.mem, self.dt, self.steps, self.valves, self.valve_carry,
            self.tail_level, np.zeros(self.sy.plant.nv),
        )  # fmt: skip
