"""dqspace.actuators: thrusters with allocation and on/off firing, VSCMG cluster with steering.

Physics apart from decisions: :mod:`.thrusters` and :mod:`.vscmg`
say what wrench or torque the devices produce; :mod:`.allocation`,
:mod:`.pwm`, :mod:`.steering` and :mod:`.servo` decide the commands;
:mod:`.simplex` and :mod:`.bvls` are the compiled solvers the allocator uses.  Every law
is a compiled kernel wrapped by this Python API; :mod:`.kernels` lists them for compiled
callers (a compiled flight-software tick).
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
from .servo import ServoGains, ServoTorques, servo_controller, servo_torques
from .steering import SteeringCommand, SteeringLaw, steer
from .thrusters import (
    FaultKind,
    Thruster,
    ThrusterFault,
    ThrusterSet,
    Valves,
    ValveWindows,
    paper_thruster_set,
)
from .vscmg import (
    NOMINAL_WHEEL_SPEED,
    PYRAMID_SKEW,
    VSCMG,
    ClusterIndex,
    ClusterModel,
    ClusterState,
    VSCMGCluster,
    attach_cluster,
    pyramid_cluster,
)

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
    "NOMINAL_WHEEL_SPEED",
    "PYRAMID_SKEW",
    "PulseModulator",
    "PulseTrain",
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
    "Valves",
    "ValveWindows",
    "attach_cluster",
    "paper_thruster_set",
    "pyramid_cluster",
    "servo_controller",
    "servo_torques",
    "steer",
]
