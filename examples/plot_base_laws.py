"""
Base laws compared on the linearised loop: PD, PID, PD + disturbance observer
==============================================================================

The station-keeping system held at its initial pose (the arm on a joint reference, ideal
actuators), linearised about rest with each of the three built-in base laws
(``base_controller.law`` = ``dual_pd``, ``dual_pid``, ``dual_pd_dob``) and the scenario's
default gains.  The integrator and the observer add their states to the linear model:
their poles appear next to the PD's, the integral puts a zero at s = 0 in the response to
a disturbance wrench on the base, and the base loop, broken at the actuation input, keeps
its phase margins.  The arm-reaction feedforward is on, as in the scenario.
"""

from dqspace.control import (
    BaseController,
    BaseDOBController,
    BasePIDController,
    IntegralGains,
    StationKeepingFeedback,
    base_loop,
    base_loop_margins,
    disturbance_response,
)
from dqspace.scenarios import load_scenario
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.figures.linear_figures import (
    margins_table,
    plot_disturbance_bode,
    plot_margins_table,
    plot_pole_map,
)

cfg = load_scenario("station-keeping").config
bc = cfg["base_controller"]
sy = build_system(cfg)
model, q0 = sy.controller_model, sy.q0[: sy.controller_model.nq]
period = 1.0 / cfg["control"]["rate"]
integral = IntegralGains(
    ki_rot=bc["ki_rot"], ki_trans=bc["ki_trans"], limit_force=bc["integral_limit_force"],
    limit_torque=bc["integral_limit_torque"],
)  # fmt: skip
laws = {
    "dual PD": BaseController(model, sy.base.gains),
    "dual PID": BasePIDController(model, sy.base.gains, integral, period=period),
    "dual PD + DOB": BaseDOBController(
        model, sy.base.gains, bandwidth=bc["observer_bandwidth"], period=period
    ),
}
responses, margins = {}, {}
for label, law in laws.items():
    feedback = StationKeepingFeedback(law, sy.arm.law, sy.base_reference, q0[8:])
    responses[label] = disturbance_response(model, q0, controller=feedback)
    margins[label] = base_loop_margins(base_loop(model, q0, controller=feedback))

# %%
# The closed-loop poles: the integrator adds six (the slow pairs move), the observer six
# at -K (the separation principle: the PD's poles stay).

fig_poles = plot_pole_map(responses)

# %%
# From a disturbance wrench on the base to the base pose error: the PD's static gain,
# the integral's zero at s = 0; the observer removes the direct static gains (with the
# feedforward on, the arm's phantom reaction keeps part of them: docs/control.md).

fig_bode = plot_disturbance_bode(responses)

# %%
# The base loop's margins, loop at a time (the five other channels closed); a gain
# margin below 0 dB is a lower one (the integral and the observer make the loop
# conditionally stable: it tolerates that much less gain).  The figure functions return a
# matplotlib ``Figure`` (``fig.savefig(...)`` writes it).

print(margins_table(margins))
fig_margins = plot_margins_table(margins)
