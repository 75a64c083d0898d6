"""The ``dqspace`` command line."""

import argparse
import sys

import numpy as np


def _demo(_args):
    """A short tour of the dual-quaternion algebra."""
    from dqspace.dq import DualQuaternion, frame_change

    np.set_printoptions(precision=4, suppress=True)
    T_IB = DualQuaternion.from_rpy_deg([0.0, 0.0, 90.0], [1.0, 0.0, 0.0])
    T_BE = DualQuaternion.from_rpy_deg([0.0, 30.0, 0.0], [0.0, 0.0, 0.5])
    T_IE = T_IB * T_BE
    print("pose of B in I:        ", T_IB)
    print("pose of E in I:        ", T_IE)
    print("E origin in I [m]:     ", T_IE.translation)
    print("E rpy in I [deg]:      ", T_IE.rpy_deg())
    print("log(T_IE) (Table 1):   ", T_IE.log())
    half = T_IB.sclerp(T_IE, 0.5)
    print("ScLERP halfway [m]:    ", half.translation)
    twist_I = np.array([0.0, 0.0, 1.0, 0.1, 0.0, 0.0])  # [w, v] at I's origin
    print("twist seen at E (in E):", frame_change(T_IE.array, twist_I))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="dqspace",
        description="Dual-quaternion modelling, simulation and control of space robots.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="print a short tour of the dual-quaternion algebra")
    p.set_defaults(func=_demo)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
