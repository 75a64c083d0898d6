"""When a capture grasps, and how: the grasp trigger and the two-stage grasp with restitution.

* :class:`GraspTrigger` decides the grasp tick during the approach (the stop rule of the
  approach's :class:`~dqspace.scenarios.sim.closed_loop.ClosedLoop`, checked between
  chunks on the plant's state at a tick).  ``capture.trigger = "aligned"``: the first tick
  at or after ``capture.approach_duration`` at which the fixture has been within
  ``capture.grasp_tolerance`` of the end-effector (distance [m] and angle [rad]) and the
  relative twist within ``capture.grasp_rate_tolerance`` ([m/s] and [rad/s]) at every tick
  for ``capture.grasp_dwell``; ``"time"``: the tick of ``capture.grasp_time`` if the
  fixture is then within ``grasp_tolerance``.  Either way ``grasp_time`` is the latest
  tick: never aligned by then, the grasp is *missed* (no exception: the run goes on with
  the approach's closed loop to its end).  From the approach's end to the timeout the
  chunks are one tick long, so that the run stops at the tick the trigger chose.
* :func:`grasp` is the impact: :func:`~dqspace.multibody.grasp_impact` with
  ``capture.restitution`` e (the contact: the relative twist at the fixture after it is
  ``-e`` times the one before), then, for ``e > 0``, the latch closing at the same instant
  (a rigid grasp from the bounced state): the bodies end up held together.

``docs/capture.md`` describes both.
"""

from __future__ import annotations

import math

import numpy as np

from ...dq import adjoint_matrix, dq_conj, dq_mul
from ...multibody import frame_pose, frame_twist, grasp_impact, grasp_misalignment
from ..spec.schema_capture import CAPTURE_METRICS

__all__ = ["GraspTrigger", "grasp", "relative_twist", "TRIGGERS"]

#: the values of ``capture.trigger``
TRIGGERS = ("aligned", "time")


def relative_twist(model, q, v, ee, target, pose, twist) -> np.ndarray:
    """(6,) ``[w, v]`` the fixture's twist relative to a frame fixed to the end-effector's
    link at the fixture's current pose, in the fixture's axes (``grasp_impact``'s
    ``relative_twist_before``): ``Ad(fixture) xi_T - Ad(X) xi_ee``, ``X`` the fixture's
    pose in the end-effector's frame."""
    X = dq_mul(dq_conj(frame_pose(model, q, ee)), dq_mul(pose, target.fixture))
    servicer = adjoint_matrix(X) @ frame_twist(model, q, v, ee)
    return adjoint_matrix(target.fixture) @ twist - servicer


class GraspTrigger:
    """The grasp trigger of a capture's approach (module docstring): the ``stop`` rule of
    its closed loop.

    Parameters
    ----------
    capture : dict, the scenario's ``[capture]`` section
    period : float [s], the control period
    model : Model, the servicer's plant; ee : str, its end-effector frame
    target : Target; motion : Trajectory, the target's poses ``.q`` and twists ``.v`` at
        the ticks (through the timeout at least)
    on_miss : callable or None, called once when the grasp is missed (before the next chunk)

    Attributes
    ----------
    tick : int or None, the grasp tick once chosen
    missed : bool, True once the timeout passed without a grasp
    at_grasp : dict, the checks at the grasp tick (``distance`` [m], ``angle`` [rad],
        ``speed`` [m/s], ``rate`` [rad/s] of the relative twist)
    """

    def __init__(self, capture, period, model, ee, target, motion, on_miss=None):
        self.mode = capture["trigger"]
        self.tol = capture["grasp_tolerance"]
        self.rate_tol = capture["grasp_rate_tolerance"]
        self.first = math.ceil(capture["approach_duration"] / period - 1e-9)
        self.last = int(round(capture["grasp_time"] / period))
        self.dwell = math.ceil(capture["grasp_dwell"] / period - 1e-9)  # ticks
        self.model, self.ee, self.target, self.motion = model, ee, target, motion
        self.tick, self.missed, self.since, self.at_grasp = None, False, None, {}
        self.on_miss = on_miss

    @property
    def done(self) -> bool:
        return self.tick is not None or self.missed

    def chunk_end(self, k: int, k1: int) -> int:
        """The end of a chunk from tick k (at most ``k1``): one tick at a time while the
        trigger may fire, a chunk ends where it may start firing."""
        if self.done or k > self.last:
            return k1
        start = self.last if self.mode == "time" else self.first
        return min(k1, start) if k < start else k + 1

    def measure(self, k, q, v) -> dict:
        """The alignment at tick k: distance [m], angle [rad], relative speed [m/s] and
        rate [rad/s]."""
        pose, twist = self.motion.q[k], self.motion.v[k]
        dist, angle = grasp_misalignment(self.model, q, self.target, pose, frame=self.ee)
        g = relative_twist(self.model, q, v, self.ee, self.target, pose, twist)
        rate, speed = (float(np.linalg.norm(g[:3])), float(np.linalg.norm(g[3:])))
        return {"distance": dist, "angle": angle, "speed": speed, "rate": rate}

    def check(self, k: int, q, v) -> bool:
        """True: grasp at tick k (the state ``q``, ``v`` at it); records a miss at the
        timeout."""
        if self.done or k < (self.last if self.mode == "time" else self.first):
            return False
        m = self.measure(k, q, v)
        aligned = m["distance"] <= self.tol and m["angle"] <= self.tol
        if self.mode == "aligned":
            aligned = aligned and m["speed"] <= self.rate_tol and m["rate"] <= self.rate_tol
            self.since = (k if self.since is None else self.since) if aligned else None
            fire = aligned and k - self.since >= self.dwell
        else:
            fire = aligned and k == self.last
        if fire:
            self.tick, self.at_grasp = k, m
            return True
        self.missed = k >= self.last
        if self.missed and self.on_miss is not None:
            self.on_miss()
        return False

    def event(self, period: float) -> dict:
        """The manifest's event of a miss."""
        what = "aligned" if self.mode == "aligned" else "within capture.grasp_tolerance"
        return {
            "t": self.last * period,
            "event": "grasp missed",
            "reason": f"the fixture was not {what} by capture.grasp_time",
        }

    def metrics(self, period: float) -> dict:
        """``grasp_missed`` (1 or 0), and at a grasp ``grasp_instant`` [s],
        ``grasp_relative_speed`` [m/s] and ``grasp_relative_rate`` [rad/s]; after a miss
        every other capture metric is NaN (not measured: a requirement on it is
        UNDECIDED), none before the trigger decided (an interrupted run)."""
        if self.tick is None:
            if not self.missed:
                return {}
            return {**dict.fromkeys(CAPTURE_METRICS, float("nan")), "grasp_missed": 1.0}
        return {
            "grasp_missed": 0.0,
            "grasp_instant": self.tick * period,
            "grasp_relative_speed": self.at_grasp["speed"],
            "grasp_relative_rate": self.at_grasp["rate"],
        }


def grasp(model, q, v, target, pose, twist, ee, restitution, tol):
    """The grasp at one instant: ``(contact, latch)`` :class:`~dqspace.multibody.
    GraspImpact`.  ``contact``: the impact with the restitution (its relative twist after
    is ``-e`` times the one before); ``latch``: for ``e > 0`` the rigid grasp from the
    bounced state that holds the target (None for ``e = 0``: the contact is rigid).  The
    held state is ``(latch or contact).v``.  Raises the ValueError of ``grasp_impact``
    when the fixture is beyond ``tol``."""
    contact = grasp_impact(model, q, v, target, pose, twist, frame=ee,
                           restitution=restitution, tol=tol)  # fmt: skip
    if restitution == 0.0:
        return contact, None
    latch = grasp_impact(model, q, contact.servicer_v, target, pose, contact.target_twist,
                         frame=ee, restitution=0.0, tol=None)  # fmt: skip
    return contact, latch
