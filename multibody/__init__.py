"""dqspace.multibody: models, kinematics, inverse and forward dynamics of rigid-body trees.

Conventions are those of ``docs/conventions.md``: body-frame twists ``[w, v]``, wrenches
``[f, tau]``, the floating base's configuration a unit dual quaternion and its
velocity the body twist, generalized forces ``[torque, force]`` for the base.
"""

from .._numba_cache import install as _install_kernel_cache

_install_kernel_cache()  # before any compiled function is defined


from . import models
from ._state import configuration as check_configuration
from .articulated import (
    ForwardDynamicsResult,
    JointWrenches,
    MixedResult,
    constraint_wrenches,
    forward_dynamics_aba,
    mixed_dynamics,
)
from .capture import GraspImpact, attach_target, grasp_impact, grasp_misalignment
from .description import model_from_dict, model_to_dict
from .dh import DHRow, LinkInertia, arm_from_dh
from .dynamics import (
    FreeFloatingResult,
    bias_forces,
    forward_dynamics,
    free_floating_inverse_dynamics,
    inverse_dynamics,
    joint_wrenches,
    mass_matrix,
)
from .integrators import (
    IntegrationError,
    Trajectory,
    difference,
    integrate,
    rk4_step,
    simulate_adaptive,
    simulate_rk4,
    state_derivative,
)
from .kinematics import (
    Kinematics,
    Momentum,
    Reference,
    center_of_mass,
    external_wrenches,
    floating_base_jacobians,
    forward_kinematics,
    frame_jacobian,
    frame_pose,
    frame_twist,
    generalized_jacobian,
    kinetic_energy,
    momentum,
)
from .model import Body, Frame, Joint, JointType, Model, dual_inertia_matrix
from .simulation import (
    INPUTS_SIG,
    BatchTrajectories,
    forward_dynamics_batch,
    inverse_dynamics_batch,
    no_inputs,
    simulate_batch,
    simulate_compiled,
    stack_model_parameters,
)
from .target import Target, free_motion
from .urdf import model_from_urdf

__all__ = [
    "check_configuration",
    "BatchTrajectories",
    "Body",
    "DHRow",
    "ForwardDynamicsResult",
    "Frame",
    "FreeFloatingResult",
    "GraspImpact",
    "INPUTS_SIG",
    "IntegrationError",
    "Joint",
    "JointType",
    "JointWrenches",
    "Kinematics",
    "LinkInertia",
    "MixedResult",
    "Model",
    "Momentum",
    "Reference",
    "Target",
    "Trajectory",
    "arm_from_dh",
    "attach_target",
    "bias_forces",
    "center_of_mass",
    "constraint_wrenches",
    "difference",
    "dual_inertia_matrix",
    "external_wrenches",
    "floating_base_jacobians",
    "forward_dynamics",
    "forward_dynamics_aba",
    "forward_dynamics_batch",
    "forward_kinematics",
    "free_motion",
    "frame_jacobian",
    "frame_pose",
    "frame_twist",
    "free_floating_inverse_dynamics",
    "generalized_jacobian",
    "grasp_impact",
    "grasp_misalignment",
    "integrate",
    "inverse_dynamics",
    "inverse_dynamics_batch",
    "joint_wrenches",
    "kinetic_energy",
    "mass_matrix",
    "mixed_dynamics",
    "model_from_dict",
    "model_from_urdf",
    "model_to_dict",
    "models",
    "momentum",
    "no_inputs",
    "rk4_step",
    "simulate_adaptive",
    "simulate_batch",
    "simulate_compiled",
    "simulate_rk4",
    "stack_model_parameters",
    "state_derivative",
]
