"""The paper's dynamics check (Sec. 5.1, eq. 50), run by dqspace and by Pinocchio.

System: the paper's space manipulator (floating base + iiwa), at rest in the
neutral configuration at t = 0, no gravity.  Input: base force and torque
``sin(t) [1, 2, 3]`` (N, N m).  "在基座上施加如下力和力矩" (apply the following
force and torque on the base) is read in the base (body) frame, the frame of
the base's generalized force: ``tau[:6] = [torque, force] = sin(t) [1, 2, 3, 1, 2, 3]``
(Pinocchio: ``[force, torque]``, the same numbers).  Both runs integrate for
10 s with an adaptive RK45 at rtol = atol = 1e-8, max_step = 1e-3, and
compare the end-effector position (frame ``"ee"``) in the inertial frame.

* dqspace: ``simulate_adaptive`` (its own Lie-group local coordinates, matrix
  forward dynamics).
* Pinocchio: an independent integrator written here: ``scipy.integrate.solve_ivp``
  on local coordinates ``q(t) = pin.integrate(q_ref, theta(t))`` with
  ``theta_dot = dIntegrate_dv(q_ref, theta)^-1 v`` and ``v_dot = pin.aba``,
  re-anchored (``q_ref <- q(t)``, ``theta <- 0``) at every output time.
"""

import time
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from scipy.integrate import solve_ivp

from dqspace.dq import translation_from_dq
from dqspace.multibody import frame_pose, models, simulate_adaptive
from support.pin_bridge import q_to_pin, to_pinocchio, v_to_pin

RTOL = ATOL = 1e-8
MAX_STEP = 1e-3  # [s]
AMPLITUDE = np.array([1.0, 2.0, 3.0])  # [N] and [N m]


@dataclass(frozen=True)
class DynamicsCheck:
    """End-effector positions of both runs.

    Attributes
    ----------
    t : (N,) output times [s]
    ee_dqspace, ee_pinocchio : (N, 3) end-effector position in the inertial frame [m]
    seconds_dqspace, seconds_pinocchio : wall-clock time of each run [s]
    """

    t: np.ndarray
    ee_dqspace: np.ndarray
    ee_pinocchio: np.ndarray
    seconds_dqspace: float
    seconds_pinocchio: float

    @property
    def difference(self):
        """(N,) distance between the two end-effector positions [m]."""
        return np.linalg.norm(self.ee_dqspace - self.ee_pinocchio, axis=1)


def base_wrench(model, t):
    """Generalized force (nv,) of eq. (50): base ``[torque, force]`` = sin(t) [1, 2, 3] each."""
    tau = np.zeros(model.nv)
    tau[:3] = np.sin(t) * AMPLITUDE  # torque [N m], base axes
    tau[3:6] = np.sin(t) * AMPLITUDE  # force [N], base axes
    return tau


def run_dqspace(model, t_eval):
    q0, v0 = model.neutral_configuration(), np.zeros(model.nv)
    start = time.perf_counter()
    traj = simulate_adaptive(
        model,
        q0,
        v0,
        (t_eval[0], t_eval[-1]),
        inputs=lambda t: base_wrench(model, t),
        t_eval=t_eval,
        rtol=RTOL,
        atol=ATOL,
        max_step=MAX_STEP,
    )
    seconds = time.perf_counter() - start
    ee = np.array([translation_from_dq(frame_pose(model, q, "ee")) for q in traj.q])
    return ee, seconds


def run_pinocchio(model, t_eval):
    pm = to_pinocchio(model)
    pd = pm.createData()
    fid = pm.getFrameId("ee")
    nv = pm.nv
    q_ref = q_to_pin(model, model.neutral_configuration())
    v = np.zeros(nv)

    def rhs(t, y):
        theta, vel = y[:nv], y[nv:]
        q = pin.integrate(pm, q_ref, theta)
        J = pin.dIntegrate(pm, q_ref, theta, pin.ArgumentPosition.ARG1)
        tau = v_to_pin(model, base_wrench(model, t))
        return np.concatenate([np.linalg.solve(J, vel), pin.aba(pm, pd, q, vel, tau)])

    def ee_at(q):
        pin.framesForwardKinematics(pm, pd, q)
        return pd.oMf[fid].translation.copy()

    start = time.perf_counter()
    out = [ee_at(q_ref)]
    for t0, t1 in zip(t_eval[:-1], t_eval[1:], strict=True):
        sol = solve_ivp(
            rhs,
            (t0, t1),
            np.concatenate([np.zeros(nv), v]),
            method="RK45",
            rtol=RTOL,
            atol=ATOL,
            max_step=MAX_STEP,
        )
        if not sol.success:
            raise RuntimeError(f"Pinocchio run failed at t = {sol.t[-1]}: {sol.message}")
        q_ref = pin.integrate(pm, q_ref, sol.y[:nv, -1])
        v = sol.y[nv:, -1].copy()
        out.append(ee_at(q_ref))
    return np.array(out), time.perf_counter() - start


def run(t_end=10.0, n_out=1001, model=None):
    """Both runs on ``t_eval = linspace(0, t_end, n_out)``."""
    model = models.space_manipulator() if model is None else model
    t = np.linspace(0.0, t_end, n_out)
    ee_dq, s_dq = run_dqspace(model, t)
    ee_pin, s_pin = run_pinocchio(model, t)
    return DynamicsCheck(t, ee_dq, ee_pin, s_dq, s_pin)


def plot(result, path):
    """Save the comparison figure: both end-effector trajectories and their distance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax0, ax1) = plt.subplots(2, 1, figsize=(8, 7), sharex=True, constrained_layout=True)
    for i, (axis, color) in enumerate(zip("xyz", ("C0", "C1", "C2"), strict=True)):
        ax0.plot(result.t, result.ee_dqspace[:, i], color=color, lw=2.0, label=f"{axis}, dqspace")
        ax0.plot(
            result.t,
            result.ee_pinocchio[:, i],
            color="k",
            ls="--",
            lw=1.0,
            label="Pinocchio ABA (x, y, z)" if i == 0 else None,
        )
    ax0.set_ylabel("end-effector position [m]")
    ax0.set_title(
        "Dynamics check (paper eq. 50): base force and torque sin(t)·[1, 2, 3] N, N·m\n"
        f"RK45, rtol = atol = {RTOL:g}, max step {MAX_STEP:g} s"
    )
    ax0.legend(loc="best", fontsize=8, ncol=2)
    ax0.grid(True, alpha=0.3)
    d = np.maximum(result.difference, 1e-18)
    ax1.semilogy(result.t, d, color="C3", label="|r_dqspace - r_Pinocchio|")
    ax1.axhline(1e-6, color="k", ls=":", label="1e-6 m (acceptance)")
    ax1.set_xlabel("time [s]")
    ax1.set_ylabel("end-effector position difference [m]")
    ax1.legend(loc="best", fontsize=8)
    ax1.grid(True, which="both", alpha=0.3)
    fig.savefig(path, dpi=120)
    plt.close(fig)
