"""
Forward dynamics against inverse dynamics
=========================================

Two independent checks of the multibody dynamics on the paper's space manipulator
(27 kg base, KUKA iiwa arm, free-floating, no gravity):

1. **Round trip.** Forward dynamics turns torques into accelerations; inverse dynamics
   (the recursive Newton-Euler algorithm, a different recursion) turns them back. Both
   forward methods are checked: the O(n) articulated-body algorithm (``"aba"``) and the
   paper's matrix form (``"matrix"``, mass matrix and a Cholesky solve).
2. **Momentum.** With no external wrench on the system, the arm's joint torques are
   internal: a free-floating simulation must keep the linear and angular momentum
   constant while the base moves in reaction to the arm.
"""

import matplotlib.pyplot as plt
import numpy as np

from dqspace.dq import translation_from_dq
from dqspace.multibody import (
    forward_dynamics,
    inverse_dynamics,
    kinetic_energy,
    models,
    momentum,
    simulate_rk4,
)

robot = models.space_manipulator()
print(f"{robot.nb} bodies, nq = {robot.nq}, nv = {robot.nv}, mass {robot.total_mass} kg")

# %%
# Round trip over random states
# -----------------------------
# 200 random configurations, velocities and generalized forces (seeded). For each,
# ``a = FD(q, v, tau)`` then ``tau_back = ID(q, v, a)``; the difference, relative to the
# size of ``tau``, is rounding only.

rng = np.random.default_rng(0)
n = 200
rel_err = {"aba": np.empty(n), "matrix": np.empty(n)}
for k in range(n):
    q = robot.random_configuration(rng)
    v = rng.normal(0.0, 0.5, robot.nv)  # [rad/s, m/s]
    tau = rng.normal(0.0, 5.0, robot.nv)  # base [N m, N], joints [N m]
    for method, err in rel_err.items():
        a = forward_dynamics(robot, q, v, tau, method=method)
        tau_back = inverse_dynamics(robot, q, v, a)
        err[k] = np.linalg.norm(tau_back - tau) / np.linalg.norm(tau)

for method, err in rel_err.items():
    print(
        f"{method:>6}: |ID(FD(tau)) - tau| / |tau|  median {np.median(err):.1e}, "
        f"max {err.max():.1e}"
    )

# %%
# Free-floating motion: momentum is conserved
# -------------------------------------------
# Everything at rest at t = 0; joint torques ``0.2 sin(2 pi f t)`` N m with a different
# frequency per joint, no force or torque on the base, 2 s at 1 ms steps (Lie-group RK4).

f = np.linspace(0.3, 0.9, 7)  # [Hz], one per joint


def inputs(t):
    """Generalized forces: nothing on the base (6), sinusoids on the 7 joints [N m]."""
    return np.r_[np.zeros(6), 0.2 * np.sin(2 * np.pi * f * t)]


q0, v0 = robot.neutral_configuration(), np.zeros(robot.nv)
traj = simulate_rk4(robot, q0, v0, dt=1e-3, n_steps=2000, inputs=inputs, record_every=10)
P = np.array([momentum(robot, q, v).linear for q, v in zip(traj.q, traj.v, strict=True)])
H = np.array([momentum(robot, q, v).angular for q, v in zip(traj.q, traj.v, strict=True)])
T = np.array([kinetic_energy(robot, q, v) for q, v in zip(traj.q, traj.v, strict=True)])
r_base = translation_from_dq(traj.q[:, :8])  # base position [m] (q[:8]: the base pose)
# the base's own linear momentum (its centre of mass is its origin): what the arm exchanges
p_base = robot.mass[0] * np.linalg.norm(traj.v[:, 3:6], axis=1)  # [kg m/s]

# %%
# The figure: the round-trip errors (left); the base's displacement caused by the arm,
# the kinetic energy the joint torques put in, and the system's momentum, many orders
# of magnitude below the momentum the base alone exchanges with the arm (right). What
# is left is RK4's truncation error: it falls 16-fold each time the step is halved.

fig, axes = plt.subplot_mosaic(
    [["rt", "base"], ["rt", "energy"], ["rt", "mom"]],
    figsize=(11, 7),
    layout="constrained",
    width_ratios=[1, 1.3],
)
ax = axes["rt"]
bins = np.logspace(-17, -12, 26)
ax.hist(rel_err["aba"], bins=bins, color="C0", alpha=0.7, label='FD method "aba"')
ax.hist(rel_err["matrix"], bins=bins, histtype="step", lw=2, color="C1", label='FD method "matrix"')
ax.axvline(np.finfo(float).eps, color="0.4", ls=":", label="machine epsilon")
ax.set_xscale("log")
ax.set_xlabel("|ID(q, v, FD(q, v, τ)) − τ| / |τ|  [-]")
ax.set_ylabel(f"states (of {n})")
ax.set_title("round trip over random states")
ax.legend(loc="upper left", fontsize="small")

t = traj.t
for i, c in enumerate("xyz"):
    axes["base"].plot(t, 1e3 * (r_base[:, i] - r_base[0, i]), label=c, ls=("-", "--", ":")[i])
axes["base"].set_ylabel("base displacement\n[mm]")
axes["base"].legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
axes["energy"].plot(t, T, color="k")
axes["energy"].set_ylabel("kinetic energy\n[J]")
axes["mom"].semilogy(t, p_base, color="0.5", lw=2, label="base alone, linear\n[kg m/s]")
axes["mom"].semilogy(t, np.linalg.norm(P, axis=1), label="system, linear\n[kg m/s]")
axes["mom"].semilogy(t, np.linalg.norm(H, axis=1), ls="--", label="system, angular\n[kg m²/s]")
axes["mom"].set_ylabel("|momentum|\n(log scale)")
axes["mom"].set_xlabel("time [s]")
axes["mom"].legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
for name in ("base", "energy", "mom"):
    axes[name].grid(alpha=0.3)
axes["base"].set_title("free-floating arm motion, no external wrench")
plt.show()

print(
    f"largest |linear momentum| {np.abs(P).max():.1e} kg m/s, "
    f"|angular momentum| {np.abs(H).max():.1e} kg m^2/s, "
    f"largest kinetic energy {T.max():.3f} J"
)
