"""Several arms on one base (a dual-arm servicer): each arm runs the built-in arm law
(:class:`~dqspace.control.ArmController`: inverse kinematics of its end-effector reference
and joint computed torque) on its own joints of one controller model, in the compiled
flight software (:func:`~dqspace.control.flight.law.arms_kernel`).

The arms are branches of one tree hanging from the base, their joints one after the other
in ``v`` (the first arm's, then the second's, ...).  An arm's end-effector depends only on
the base and its own joints, so each arm's inverse kinematics is solved on its own joints
(the others' columns of its Jacobian are zero); the joint torques and the reaction the base
law feeds forward come from the inverse dynamics of the whole tree with the planned
accelerations of every joint, so that the base sees the reaction of all the arms at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

from .arm import ArmController, ArmLawParams
from .pd import State

__all__ = ["MultiArmController"]


class MultiArmController:
    """The arm law of several arms (module docstring).

    Parameters
    ----------
    arms : one :class:`~dqspace.control.ArmController` per arm, each on the same model and
        all its joints (seed, limits, gains of every joint), with its arm's end-effector
        frame
    offsets : each arm's first joint among the model's joints (0 for the first arm)
    sizes : each arm's number of joints
    """

    def __init__(
        self, arms: Sequence[ArmController], offsets: Sequence[int], sizes: Sequence[int]
    ) -> None:
        if not arms or len(arms) != len(offsets) or len(arms) != len(sizes):
            raise ValueError("MultiArmController: one offset and one size per arm")
        n = arms[0].law.n
        ends = [o + s for o, s in zip(offsets, sizes, strict=True)]
        if list(offsets) != [0, *ends[:-1]] or ends[-1] != n:
            raise ValueError(
                f"MultiArmController: the arms' joints must follow one another and cover the "
                f"model's {n} joints (offsets {list(offsets)}, sizes {list(sizes)})"
            )
        self.arms = list(arms)
        self.model = arms[0].model
        self.offsets, self.sizes = [int(o) for o in offsets], [int(s) for s in sizes]
        self.law = arms[0].law  # the joint law of all the joints (torques of the tree)
        self.seed = np.array(arms[0].seed, dtype=float)  # every arm's IK warm start

    @property
    def n(self) -> int:
        return self.law.n

    def kernel_params(self) -> tuple[ArmLawParams, ...]:
        """Each arm's :data:`~dqspace.control.arm.ArmLawParams` on its own joints: its
        first joint in q and v, its limits, gains and posture (what
        :func:`~dqspace.control.flight.law.arms_kernel` reads)."""
        out = []
        for a, o, s in zip(self.arms, self.offsets, self.sizes, strict=True):
            P = a.kernel_params()

            def cut(x, o=o, s=s):
                return np.ascontiguousarray(x[o : o + s], dtype=float)

            out.append(
                P._replace(
                    q0=P.q0 + o, v0=P.v0 + o, lo=cut(P.lo), hi=cut(P.hi), kp=cut(P.kp),
                    kd=cut(P.kd), posture=cut(P.posture),
                )
            )  # fmt: skip
        return tuple(out)

    def all_params(self) -> ArmLawParams:
        """The first arm's parameters on every joint (the limits of all the joints)."""
        return self.arms[0].kernel_params()

    def __call__(
        self, t: float, state: State, reference: Any = None, *, base_force: Any = None
    ) -> NoReturn:
        raise TypeError(
            "MultiArmController runs in the compiled flight software only (through "
            "StationKeepingLaw with a built-in base law)"
        )
