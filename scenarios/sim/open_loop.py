"""The open loop: a prescribed wrench on the base, simulated in chunks (the paper's dynamics
check, eq. 50).

The base receives ``sin(w t) [force, torque]`` (``[open_loop]``), integrated with RK4 or
adaptively, in chunks of ``outputs.checkpoint_every`` simulated seconds; the end-effector
and base positions are recorded with the end-effector path of an independent reference
(matrix-form dynamics, DOP853), integrated along with the run.
"""

from __future__ import annotations

import numpy as np

from ...dq import translation_from_dq
from ...multibody import frame_pose, simulate_adaptive, simulate_compiled
from ..build.describe import open_loop_figure_facts
from ..build.dynamics_check import REFERENCE_METHOD, ReferenceIntegrator, open_loop_model
from . import boundary as _inputs

__all__ = ["OpenLoop"]


class OpenLoop:
    """The dynamics check: ``sin(w t) [force, torque]`` on the base, simulated in chunks."""

    closed = False

    def __init__(self, cfg):
        model = self.model = open_loop_model(cfg)
        ol = cfg["open_loop"]
        self.cfg = cfg
        self.duration = T = cfg["scenario"]["duration"]
        self.rate = rate = cfg["control"]["record_rate"]
        self.n = int(round(T * rate))
        self.rows = self.n + 1
        self.t = 0.0
        self.params = np.array(
            [ol["frequency"], *ol["base_torque_amplitude"], *ol["base_force_amplitude"]], float
        )
        self.chunk = max(1, int(round(cfg["outputs"]["checkpoint_every"] * rate)))
        self.spec = {
            "t": ((), "s"),
            "q": ((model.nq,), "-", (), "configuration (base pose, joint angles [rad])"),
            "v": ((model.nv,), "-", (), "velocity (base twist [rad/s, m/s], joint rates)"),
            "ee_pos_I": ((3,), "m", ("x", "y", "z"), "end-effector position, inertial frame"),
            "base_pos_I": ((3,), "m", ("x", "y", "z"), "base position, inertial frame"),
        }
        self.spec["ee_ref_I"] = (
            (3,),
            "m",
            ("x", "y", "z"),
            f"end-effector position, independent reference ({REFERENCE_METHOD})",
        )
        self.reference = ReferenceIntegrator(cfg)  # advanced with the run, chunk by chunk

    def _add(self, rec, t, Q, V):
        ee = np.array([translation_from_dq(frame_pose(self.model, q, "ee")) for q in Q])
        base = np.array([translation_from_dq(q[:8]) for q in Q])
        k = rec.n  # the reference on the record grid (~0.05 s per s simulated)
        grid = np.linspace(0.0, self.duration, self.n + 1)[k : k + len(t)]
        ref = self.reference.advance(grid)
        rec.add_rows(len(t), t=t, q=Q, v=V, ee_pos_I=ee, base_pos_I=base, ee_ref_I=ref)

    def _segment(self, q, v, k, m):
        """States at records ``k + 1 .. k + m`` from the state ``(q, v)`` at record ``k``."""
        model, integ, rate = self.model, self.cfg["integrator"], self.rate
        if integ["method"] == "adaptive":
            params = self.params

            def u(t):
                tau = np.zeros(model.nv)
                tau[:6] = np.sin(params[0] * t) * params[1:]
                return tau

            t_eval = np.linspace(0.0, self.duration, self.n + 1)[k : k + m + 1]
            tr = simulate_adaptive(
                model,
                q,
                v,
                (t_eval[0], t_eval[-1]),
                inputs=u,
                t_eval=t_eval,
                rtol=integ["rtol"],
                atol=integ["atol"],
                max_step=integ["max_step"],
            )
            return tr.t[1:], tr.q[1:], tr.v[1:]
        dt = integ["dt"]
        every = int(round(1.0 / (rate * dt)))
        tr = simulate_compiled(
            model,
            q,
            v,
            dt=dt,
            n_steps=every * m,
            t0=(k * every) * dt,
            inputs=_inputs.open_loop_inputs,
            params=self.params,
            record_every=every,
        )
        return np.arange(k + 1, k + m + 1) * every * dt, tr.q[1:], tr.v[1:]

    def simulate(self, rec, checkpoint, bar):
        rec.manifest["system"] = open_loop_figure_facts(self.model, self.cfg)
        q, v = self.model.neutral_configuration(), np.zeros(self.model.nv)
        self._add(rec, np.zeros(1), q[None], v[None])
        k = 0
        while k < self.n:
            m = min(self.chunk, self.n - k)
            t, Q, V = self._segment(q, v, k, m)
            self._add(rec, t, Q, V)
            q, v, k = Q[-1], V[-1], k + m
            self.t = float(t[-1])
            bar.update(self.t)
            if k < self.n and checkpoint is not None:
                checkpoint()
