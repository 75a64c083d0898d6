"""The series a figure or the animation reads, checked against the system the run recorded.

A result someone sent you may hold a series of the right length but the wrong width
(``ee_pos`` with 2 values per sample, ``thrust_cmd`` with one column fewer than the
recorded thrusters): the figures would fail on it with an index error.  Each series a run
records has the shape per sample that the recorded system gives it
(:data:`dqspace.scenarios.sim.series.CLOSED_LOOP`, from the sizes in
``manifest["system"]``); :func:`check_recorded_series` checks them before anything is
drawn.
"""

from __future__ import annotations

from ..sim.series import CLOSED_LOOP, Sizes
from ..store.results import ResultError
from .common import scenario_config

__all__ = ["check_recorded_series", "recorded_sizes"]

#: the open loop's series (``dqspace.scenarios.sim.open_loop``): shape per sample
_OPEN_LOOP = {
    "q": lambda z: (z.nq,),
    "v": lambda z: (z.nv,),
    "ee_pos_I": lambda z: (3,),
    "ee_ref_I": lambda z: (3,),
    "base_pos_I": lambda z: (3,),
}


def _count(x):
    return x if type(x) is int and x >= 0 else None


def recorded_sizes(res) -> Sizes:
    """The sizes the run recorded (``manifest["system"]``): ``nq``, ``nv``, the arm's
    joints ``n``, thrusters ``S``, VSCMGs ``K``, wheels ``W``; None where not recorded."""
    system = res.manifest.get("system")
    system = system if isinstance(system, dict) else {}
    plant = system.get("plant") if isinstance(system.get("plant"), dict) else {}
    arm = system.get("arm") if isinstance(system.get("arm"), dict) else None
    joints = arm.get("joints") if arm is not None else []
    thrusters = system.get("thrusters")
    return Sizes(
        _count(plant.get("nq")),
        _count(plant.get("nv")),
        len(joints) if isinstance(joints, list) else None,
        len(thrusters) if isinstance(thrusters, list) else None,
        _count(system.get("vscmg_units")),
        _count(system.get("wheels")),
    )


def check_recorded_series(res) -> None:
    """Raise unless every series of ``res`` that a run records has the shape per sample
    that the recorded system gives it (sizes not recorded: not checked).

    Raises
    ------
    ResultError (a ValueError) naming the result's data file (``res.source``), or
    ValueError for a result made in memory
    """
    sizes = recorded_sizes(res)
    open_loop = (scenario_config(res).get("scenario") or {}).get("kind") == "open_loop"
    rules = _OPEN_LOOP if open_loop else {s.name: s.shape for s in CLOSED_LOOP}
    for name, rule in rules.items():
        if name not in res:
            continue
        try:
            want = tuple(rule(sizes))
        except TypeError:  # a size the result does not record
            continue
        if None in want:
            continue
        got = tuple(getattr(res[name], "shape", ())[1:])
        if got != want:
            problem = (
                f"series {name!r} has {got} values per sample; the system the run recorded "
                f"gives it {want}: damaged, not drawn"
            )
            if getattr(res, "source", None) is not None:
                raise ResultError(res.source, problem)
            raise ValueError(f"the result's {problem}")
