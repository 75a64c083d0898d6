"""The package dqspace.actuators: lazy heavy imports, and one home per moved name."""

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import dqspace.actuators as actuators
from dqspace.actuators import (
    allocation,
    allocation_kernels,
    bvls,
    reaction_wheels,
    servo,
    simplex,
    thrusters,
    valves,
    vscmg,
    vscmg_multibody,
    wheel_control,
)


def test_import_loads_neither_cvxpy_nor_scipy_optimize_and_fast_path_needs_neither(tmp_path):
    # a fresh interpreter (this one has cvxpy loaded by other tests), outside the repository
    code = textwrap.dedent(
        """
        import sys
        import dqspace.actuators
        assert "cvxpy" not in sys.modules, "import dqspace.actuators loaded cvxpy"
        assert "scipy.optimize" not in sys.modules, "import dqspace.actuators loaded scipy.optimize"
        from dqspace.actuators import Allocator, paper_thruster_set
        r = Allocator(paper_thruster_set(), method="fast").allocate([30.0, 0.0, 0.0])
        assert r.status == "best_effort", r.status  # beyond 20 N: the least-squares fallback
        assert "scipy.optimize" not in sys.modules, "the fast path loaded scipy.optimize"
        assert "cvxpy" not in sys.modules, "the fast path loaded cvxpy"
        """
    )
    res = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr


def test_moved_names_are_the_same_objects_in_the_package_and_their_new_home():
    for name in ("ServoGains", "ServoTorques", "servo_torques", "servo_controller"):
        assert getattr(actuators, name) is getattr(servo, name)
        assert name not in vscmg.__all__
    assert allocation_kernels.bounded_simplex is simplex.bounded_simplex
    assert allocation_kernels.bvls is bvls.bvls
    # the compiled allocation, re-exported by the allocator's module
    for name in ("allocate_kernel", "allocation_problem", "recheck_kernel"):
        assert getattr(allocation, name) is getattr(allocation_kernels, name)
    # the multibody attachment of a VSCMG cluster
    for name in vscmg_multibody.__all__:
        assert getattr(actuators, name) is getattr(vscmg_multibody, name)
        assert name not in vscmg.__all__
    # valve timing, re-exported by the thruster module
    for name in valves.__all__:
        assert getattr(thrusters, name) is getattr(valves, name)
    assert actuators.Valves is valves.Valves and actuators.ValveWindows is valves.ValveWindows


def test_wheel_physics_and_wheel_laws_live_apart():
    laws = set(wheel_control.__all__)
    assert not laws & set(reaction_wheels.__all__)
    for name in ("MomentumManager", "WheelCommand", "distribute"):
        assert getattr(actuators, name) is getattr(wheel_control, name)
    for name in ("ReactionWheel", "WheelArray", "attach_wheels", "pyramid_wheels"):
        assert getattr(actuators, name) is getattr(reaction_wheels, name)
    # the physics module holds no law and imports none
    for name in laws:
        assert not hasattr(reaction_wheels, name), name
    assert "momentum_dump_kernel" in laws

    # the laws import the physics, never the other way round (not even inside a function)
    def imported(module):
        tree = ast.parse(Path(module.__file__).read_text())
        return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}

    assert "wheel_control" not in imported(reaction_wheels)
    assert "reaction_wheels" in imported(wheel_control)
