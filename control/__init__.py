"""dqspace.control: dual-quaternion controllers, reference trajectories, inverse kinematics.

* :mod:`~dqspace.control.pose_error` -- pose error ``e^ = q^_d* o q^`` (P43) with the
  short-way sign, its Table-1 logarithm, the body-frame twist error;
* :mod:`~dqspace.control.pd` -- the dual PD law (P46) as a wrench ``[f, tau]``;
* :mod:`~dqspace.control.base` -- base control, PD + the arm's reaction feedforward (P47);
* :mod:`~dqspace.control.base_integral` -- the base law with integral action (anti-windup);
* :mod:`~dqspace.control.disturbance_observer` -- the base law with a disturbance observer;
* :mod:`~dqspace.control.com_hold` -- the base law holding the system's centre of mass
  and the base attitude;
* :mod:`~dqspace.control.capture_hold` -- a captured target held by a task-space
  impedance, and the base law limited to what the grapple interface passes on;
* :mod:`~dqspace.control.arm` -- IK references tracked by joint-space computed torque;
* :mod:`~dqspace.control.ik` -- damped least squares on the pose error, joint limits;
* :mod:`~dqspace.control.trajectories` -- references: lemniscate (P51), ScLERP, hold;
* :mod:`~dqspace.control.linearize` -- linearised open/closed-loop models in tangent
  coordinates (A, B, C, D; ``control.StateSpace`` with the ``dqspace[control]`` extra);
* :mod:`~dqspace.control.loop_analysis` -- the base loop broken at its actuation input,
  its margins, the disturbance-to-error response of a closed loop;
* :mod:`~dqspace.control.station_keeping` -- the station-keeping law (base PD + arm
  computed torque) as one state feedback ``k(t, q, v) -> tau``, e.g. to linearise;
* :mod:`~dqspace.control.pycontrol` -- ``python_control()``: python-control imported past
  the repository folder ``control/``.

Controllers share the call shape ``controller(t, state, reference) -> command`` with
``state`` a :class:`State` ``(q, v)``; see ``docs/control.md``.
"""

from .._numba_cache import install as _install_kernel_cache

_install_kernel_cache()  # before any compiled function is defined


from .arm import (
    ArmCommand,
    ArmController,
    JointCommand,
    JointComputedTorque,
    JointGains,
    NoArm,
)
from .base import BaseCommand, BaseController
from .base_integral import BasePIDController, IntegralGains
from .capture_hold import InterfaceLimitedBase
from .com_hold import CoMHoldController
from .disturbance_observer import BaseDOBController
from .ik import IIWA_JOINT_LIMITS, IIWA_LEMNISCATE_SEED, IKResult, IKStatus, solve_ik
from .linearize import Input, LinearModel, Output, linearize
from .loop_analysis import (
    LoopMargins,
    base_loop,
    base_loop_margins,
    disturbance_response,
    loop_at_a_time,
    loop_margins,
    step_response,
)
from .mpc import MPCBaseController, MPCWeights
from .multi_arm import MultiArmController
from .pd import DualPD, PDCommand, PDGains, State, dual_pd
from .pose_error import PoseError, dq_error, pose_error, shortest_sign, twist_error
from .pycontrol import python_control
from .reactionless import ReactionlessArmController, reaction_map, reaction_null_space
from .station_keeping import BaseFeedback, StationKeepingFeedback
from .trajectories import (
    LEMNISCATE_ORIENTATION,
    ConstantPose,
    JointReference,
    JointTrajectory,
    Lemniscate,
    PoseReference,
    PoseTrajectory,
    ScrewMotion,
    quintic_time_scaling,
    sample_trajectory,
)

__all__ = [
    "IIWA_JOINT_LIMITS",
    "IIWA_LEMNISCATE_SEED",
    "LEMNISCATE_ORIENTATION",
    "ArmCommand",
    "ArmController",
    "NoArm",
    "MultiArmController",
    "BaseCommand",
    "BaseController",
    "BaseDOBController",
    "BasePIDController",
    "CoMHoldController",
    "InterfaceLimitedBase",
    "ConstantPose",
    "DualPD",
    "IKResult",
    "IKStatus",
    "IntegralGains",
    "Input",
    "JointCommand",
    "JointComputedTorque",
    "JointGains",
    "JointReference",
    "JointTrajectory",
    "Lemniscate",
    "LinearModel",
    "LoopMargins",
    "Output",
    "PDCommand",
    "PDGains",
    "PoseError",
    "PoseReference",
    "PoseTrajectory",
    "ScrewMotion",
    "State",
    "StationKeepingFeedback",
    "ReactionlessArmController",
    "reaction_map",
    "reaction_null_space",
    "BaseFeedback",
    "MPCBaseController",
    "MPCWeights",
    "base_loop",
    "base_loop_margins",
    "disturbance_response",
    "dq_error",
    "dual_pd",
    "linearize",
    "loop_at_a_time",
    "loop_margins",
    "pose_error",
    "python_control",
    "quintic_time_scaling",
    "sample_trajectory",
    "shortest_sign",
    "solve_ik",
    "step_response",
    "twist_error",
]
