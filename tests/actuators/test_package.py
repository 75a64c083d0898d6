"""The package dqspace.actuators: lazy heavy imports, and one home per moved name."""

import subprocess
import sys
import textwrap

import dqspace.actuators as actuators
from dqspace.actuators import allocation, servo, simplex, vscmg


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
    assert allocation._bounded_simplex is simplex.bounded_simplex
