"""The paper's dynamics check (eq. 50): dqspace against Pinocchio's ABA, and the figure.

Run from the repository root::

    /work/venv/bin/python benchmarks/dynamics_check.py             # writes docs/dynamics_check.png
    /work/venv/bin/python benchmarks/dynamics_check.py --out x.png

Base force and torque ``sin(t) [1, 2, 3]`` (N, N m, base axes) on the paper's
space manipulator at rest; 10 s with an adaptive RK45 (rtol = atol = 1e-8,
max step 1e-3 s) in dqspace (``simulate_adaptive``) and in an independent
Pinocchio integrator (``solve_ivp`` on ``pin.integrate`` / ``pin.dIntegrate``
local coordinates, ``pin.aba``).  The runs themselves live in
``tests/support/dynamics_check.py``, shared with
``tests/multibody/test_dynamics_check.py``.
"""

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.dynamics_check import plot, run  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "dynamics_check.png"))
    parser.add_argument("--t-end", type=float, default=10.0, help="horizon [s]")
    args = parser.parse_args(argv)

    result = run(t_end=args.t_end, n_out=int(round(100 * args.t_end)) + 1)
    d = result.difference
    travel = max(
        abs(result.ee_dqspace - result.ee_dqspace[0]).max(),
        abs(result.ee_pinocchio - result.ee_pinocchio[0]).max(),
    )
    print(f"horizon {result.t[-1]:g} s, {len(result.t)} output times")
    print(f"end-effector travel (largest coordinate change): {travel:.4f} m")
    print(f"max |r_dqspace - r_pinocchio| = {d.max():.3e} m (at t = {result.t[d.argmax()]:.2f} s)")
    print(f"final difference              = {d[-1]:.3e} m")
    print(
        f"wall clock: dqspace {result.seconds_dqspace:.2f} s, "
        f"Pinocchio {result.seconds_pinocchio:.2f} s"
    )
    plot(result, args.out)
    print(f"figure written to {args.out}")


if __name__ == "__main__":
    main()
