"""
Base gains against the arm's reaction
=====================================

How much of the arm's disturbance the base's dual PD law rejects on its own, for three
sets of gains, and what the feedforward of the arm's reaction (paper eq. 47) adds.

The default gains of the ``station-keeping`` scenario are scaled to natural
frequencies s = 0.5, 1 and 2 times the default at constant damping ratio (``kp × s²``,
``kd × s``), with the feedforward **off** so that the whole reaction acts on the PD
loop; one more run keeps the default gains with the feedforward on. Each run is 3 s:
the arm holds until 1 s, then starts along the lemniscate.
"""

import matplotlib.pyplot as plt
import numpy as np

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.figures.plots import REQUIREMENTS
from dqspace.scenarios.figures.units import to_display

DURATION = 3.0  # [s]
SCALES = (0.5, 1.0, 2.0)  # natural-frequency factors
GAINS = ("kp_rot", "kd_rot", "kp_trans", "kd_trans")

# the default gains, read from the scenario (N m/rad, N m s/rad, N/m, N s/m per axis)
default = load_scenario("station-keeping").config["base_controller"]


def overrides(scale, feedforward):
    """``--set`` strings: duration, no figures, the scaled gains, the feedforward."""
    out = [
        f"scenario.duration={DURATION}",
        "outputs.plots=false",
        f"base_controller.feedforward={str(feedforward).lower()}",
    ]
    for name in GAINS:
        factor = scale**2 if name.startswith("kp") else scale
        out.append(f"base_controller.{name}={[g * factor for g in default[name]]}")
    return out


runs = {
    f"PD only, s = {s}": run(load_scenario("station-keeping", overrides(s, False)), progress=False)
    for s in SCALES
}
runs["PD + feedforward, s = 1"] = run(
    load_scenario("station-keeping", overrides(1.0, True)), progress=False
)

# %%
# The base's position and attitude errors (magnitudes), in display units, with the
# requirements (``dqspace.scenarios.figures.plots.REQUIREMENTS``: 1 mm, 0.05 deg).

fig, (ax_p, ax_a) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, layout="constrained")
for k, (label, res) in enumerate(runs.items()):
    style = {"color": "k", "ls": "--"} if "feedforward" in label else {"color": f"C{k}"}
    pos, pos_unit = to_display(np.linalg.norm(res["base_pos_err"], axis=1), "m")
    att, att_unit = to_display(np.linalg.norm(res["base_att_err"], axis=1), "rad")
    ax_p.plot(res.t, pos, label=label, **style)
    ax_a.plot(res.t, att, label=label, **style)
req_pos, _ = to_display(REQUIREMENTS["base_pos_err_max"], "m")
req_att = REQUIREMENTS["base_att_err_max"]  # already in deg
ax_p.axhline(req_pos, color="0.4", ls=":", label=f"requirement {req_pos:g} {pos_unit}")
req_line = ax_a.axhline(req_att, color="0.4", ls=":", label=f"requirement {req_att:g} deg")
ax_p.set_ylabel(f"base position error |r| [{pos_unit}]")
ax_a.set_ylabel(f"base attitude error |θ| [{att_unit}]")
ax_a.set_xlabel("time [s]")
ax_p.set_title("station keeping while the arm starts along the lemniscate")
for ax in (ax_p, ax_a):
    ax.grid(alpha=0.3)
ax_p.legend(loc="upper left", fontsize="small")
ax_a.legend(handles=[req_line], loc="upper left", fontsize="small")  # the runs: as above
plt.show()

# %%
# Peak errors over the run: raising the gains shrinks the errors the reaction causes,
# and the feedforward removes most of the reaction at its source.

for label, res in runs.items():
    pos, pos_unit = to_display(np.linalg.norm(res["base_pos_err"], axis=1).max(), "m")
    att, att_unit = to_display(np.linalg.norm(res["base_att_err"], axis=1).max(), "rad")
    print(f"{label:>24}: position {pos:.4f} {pos_unit}, attitude {att:.4f} {att_unit}")
