"""
Station keeping: the base rejects the arm's disturbance
=======================================================

The paper's closed loop (section 5.2), shortened to 3 s: the 27 kg base holds its
initial pose with 12 on/off thrusters (force) and four VSCMGs (torque) while the KUKA
iiwa's end-effector starts along the 3-D lemniscate (it holds until 1 s, then speeds
up). The base controller is a dual PD law with the arm's reaction as feedforward; the
arm follows its reference by inverse kinematics and computed torque.

The same run from the command line, 20 s and every figure written to
``runs/station-keeping/``::

    dqspace run station-keeping
"""

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.figures.plots import (
    plot_disturbance_rejection,
    plot_thrusters,
    plot_tracking,
)
from dqspace.scenarios.figures.units import format_quantity

# %%
# Load the embedded scenario with two overrides (the same ``key=value`` strings as the
# command line's ``--set``) and run it in memory (``out=None``: nothing is written).

scenario = load_scenario("station-keeping", ["scenario.duration=3", "outputs.plots=false"])
res = run(scenario, progress=False)

metrics, units = res.manifest["metrics"], res.manifest["metric_units"]
for name in ("base_pos_err_max", "base_att_err_max", "ee_rms", "ee_max", "total_impulse"):
    print(f"{name:>17}: {format_quantity(metrics[name], units[name])}")

# %%
# Base disturbance rejection: the base's position and attitude errors against the
# requirements (1 mm, 0.05 deg), and the arm's reaction force and torque on the base.
# The plot functions return a matplotlib ``Figure`` (``fig.savefig(...)`` writes it).

fig_rejection = plot_disturbance_rejection(res)

# %%
# End-effector tracking in the base frame: the reference (circles) and the actual path,
# the error per axis and its magnitude from the task's start.

fig_tracking = plot_tracking(res)

# %%
# The thrusters: the allocated commands and the on/off pulses that realise them.

fig_thrusters = plot_thrusters(res)
