"""The paper's dynamics check (eq. 50) against Pinocchio's ABA: end-effector position over
the full 10 s agrees to 1e-6 m (see tests/support/dynamics_check.py for the set-up and
benchmarks/dynamics_check.py for the figure docs/dynamics_check.png)."""

import pathlib

import numpy as np

from support.dynamics_check import plot, run

ROOT = pathlib.Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_end_effector_agrees_with_pinocchio_over_10_s(tmp_path):
    result = run(t_end=10.0, n_out=1001)
    d = result.difference
    travel = np.linalg.norm(result.ee_pinocchio - result.ee_pinocchio[0], axis=1).max()
    print(
        f"\ndynamics check (eq. 50), 10 s: max |r_dqspace - r_pinocchio| = {d.max():.2e} m, "
        f"end-effector travel {travel:.3f} m; wall clock dqspace {result.seconds_dqspace:.1f} s, "
        f"Pinocchio {result.seconds_pinocchio:.1f} s"
    )
    assert result.t[-1] == 10.0
    assert travel > 0.1  # the check is not vacuous: the arm and base move
    assert d.max() < 1e-6
    out = tmp_path / "check.png"
    plot(result, out)  # the benchmark script's plotting still works
    assert out.read_bytes()[:8] == PNG_SIGNATURE


def test_committed_figure_is_a_png():
    assert (ROOT / "docs" / "dynamics_check.png").read_bytes()[:8] == PNG_SIGNATURE
