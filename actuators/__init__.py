"""dqspace.actuators: thrusters with allocation and on/off firing, VSCMG cluster with steering,
reaction wheels with torque distribution and momentum dumping.

Physics apart from decisions: :mod:`.thrusters`, :mod:`.valves`, :mod:`.vscmg`,
:mod:`.vscmg_multibody` and :mod:`.reaction_wheels` say what wrench or torque the devices
produce; :mod:`.allocation`, :mod:`.pwm`, :mod:`.steering`, :mod:`.servo` and
:mod:`.wheel_control` decide the commands; :mod:`.allocation_kernels`, :mod:`.simplex` and
:mod:`.bvls` are the compiled solvers the allocator uses.  Every law is a compiled kernel
wrapped by this Python API; :mod:`.kernels` lists them for compiled callers (a compiled
flight-software tick).
"""

from .._numba_cache import install as _install_kernel_cache

_install_kernel_cache()  # before any compiled function is defined


from .allocation import (
    AllocationMethod,
    AllocationMode,
    AllocationResult,
    AllocationStatus,
    Allocator,
)
from .pwm import PulseModulator, PulseTrain, SchmittTrigger
from .reaction_wheels import (
    RPM,
    ReactionWheel,
    WheelArray,
    WheelIndex,
    WheelModel,
    attach_wheels,
    motor_torque_limits,
    orthogonal_wheels,
    pyramid_wheels,
)
from .servo import ServoGains, ServoTorques, servo_controller, servo_torques
from .steering import SteeringCommand, SteeringLaw, steer
from .thrusters import (
    MIN_IMPULSE_BIT,
    FaultKind,
    Thruster,
    ThrusterFault,
    ThrusterSet,
    paper_thruster_set,
)
from .valves import Valves, ValveWindows
from .vscmg import (
    NOMINAL_WHEEL_SPEED,
    PYRAMID_SKEW,
    VSCMG,
    VSCMGCluster,
    VSCMGGeometry,
    empty_geometry,
    pyramid_cluster,
)
from .vscmg_multibody import ClusterIndex, ClusterModel, ClusterState, attach_cluster
from .wheel_control import MomentumManager, WheelCommand, distribute

__all__ = [
    "AllocationMethod",
    "AllocationMode",
    "AllocationResult",
    "AllocationStatus",
    "Allocator",
    "ClusterIndex",
    "ClusterModel",
    "ClusterState",
    "FaultKind",
    "MIN_IMPULSE_BIT",
    "MomentumManager",
    "NOMINAL_WHEEL_SPEED",
    "PYRAMID_SKEW",
    "PulseModulator",
    "PulseTrain",
    "RPM",
    "ReactionWheel",
    "SchmittTrigger",
    "ServoGains",
    "ServoTorques",
    "SteeringCommand",
    "SteeringLaw",
    "Thruster",
    "ThrusterFault",
    "ThrusterSet",
    "VSCMG",
    "VSCMGCluster",
    "VSCMGGeometry",
    "empty_geometry",
    "Valves",
    "ValveWindows",
    "WheelArray",
    "WheelCommand",
    "WheelIndex",
    "WheelModel",
    "attach_cluster",
    "attach_wheels",
    "distribute",
    "motor_torque_limits",
    "orthogonal_wheels",
    "paper_thruster_set",
    "pyramid_cluster",
    "pyramid_wheels",
    "servo_controller",
    "servo_torques",
    "steer",
]
