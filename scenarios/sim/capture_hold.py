"""The laws of a capture's phase after the grasp with ``capture.hold = "impedance"``.

The arm holds the target by a task-space impedance about the end-effector's pose at the
grasp (:func:`~dqspace.control.capture_hold.impedance_hold`), its wrench saturated at the
interface limits; the base holds its pose by the dual PD scaled to what the interface
passes on (:class:`~dqspace.control.capture_hold.InterfaceLimitedBase`; another base law
is kept as the scenario sets it, unlimited).  The limits are
``capture.interface_margin`` times ``capture.interface_force_limit`` and
``interface_torque_limit`` (the margin keeps room for what the laws leave out: the arm's
own inertia, the tumble's velocity terms, the thrusters' pulses).  ``docs/capture.md``
derives them.
"""

from __future__ import annotations

from ...control import BaseController
from ...control.capture_hold import InterfaceLimitedBase, impedance_hold, interface_map

__all__ = ["hold_limits", "hold_laws"]


def hold_limits(cfg) -> tuple[float, float]:
    """``(f_max [N], tau_max [N m])`` the hold's laws aim at: the margin times the limits."""
    c = cfg["capture"]
    eta = c["interface_margin"]
    return eta * c["interface_force_limit"], eta * c["interface_torque_limit"]


def hold_laws(cfg, target, held):
    """``laws(system)`` for :class:`~dqspace.scenarios.sim.closed_loop.ClosedLoop`: sets the
    system's arm law (the impedance hold of ``target``, held at ``held`` (8,) in the
    end-effector's frame) and base law (the dual PD of ``base_controller``'s gains, limited
    by the interface map of the stack at the system's initial state, the grasp; another
    base law, e.g. ``dual_pid`` or the centre-of-mass hold, is kept unlimited)."""
    c, limits = cfg["capture"], hold_limits(cfg)

    def laws(sy):
        m, frame = sy.controller_model, sy.arm_info.ee_frame
        sy.arm = impedance_hold(
            m, target, held, omega_n=c["hold_omega_n"], zeta=c["hold_zeta"], frame=frame,
            wrench_limit=limits,
            null_space_damping=cfg["arm_controller"]["null_space_damping"],
        )  # fmt: skip
        if type(sy.base) is BaseController:  # the dual PD; another law is kept as it is
            G = interface_map(m, sy.q0[: m.nq], target, held, frame)
            sy.base = InterfaceLimitedBase(m, sy.base.gains, G, limits)

    return laws
