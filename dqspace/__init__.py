"""dqspace: model, simulate and control floating-base space robots with dual quaternions.

The toolkit is five packages, each importable on its own (dependencies point one way):

``dqspace.dq``
    dual-quaternion algebra (products, frame changes, log/exp, screws, ScLERP).
``dqspace.multibody``
    models (programmatic, DH, URDF), kinematics, Jacobians, inverse and forward dynamics,
    Lie-group integrators, compiled and batched simulation.
``dqspace.actuators``
    thrusters, allocation and pulse modulation; VSCMG clusters and their steering.
``dqspace.control``
    pose errors and dual PD laws, base and arm controllers, inverse kinematics,
    trajectories, linearisation.
``dqspace.scenarios``
    scenario files, the closed-loop runner, results, plots, sweeps, the ``dqspace`` CLI.

``import dqspace`` itself is cheap: it loads none of them.  Conventions (frames, twists,
wrenches, the swap) are in ``docs/conventions.md`` of the source distribution.
"""

__version__ = "0.2.0"

__all__ = ["__version__"]
