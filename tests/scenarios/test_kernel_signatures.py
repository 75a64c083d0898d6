"""A system's structure, not where its arrays came from, decides what the closed loop compiles.

numba compiles the loop and each stage of the tick once per distinct set of argument types,
and it types a read-only array apart from a writable one.  The parameter blocks hold their
arrays read-only whatever their origin (:func:`dqspace._jit.param_array`), and a device a
system lacks is an empty block of the same types: station keeping with or without wheels,
VSCMGs or thrusters, and the UR5 servicer, all run the same compiled loop and stages.
"""

import numpy as np
import pytest
from numba import typeof

from dqspace._jit import param_array
from dqspace.scenarios import load_scenario
from dqspace.scenarios.build.devices import actuation_params
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.sim.closed_loop import ClosedLoop

#: the same flight software's structure (dual PD base law, computed-torque arm, perfect
#: knowledge), different devices and arms
SAME_STRUCTURE = {
    "wheels too": ("station-keeping", ["wheels.enabled=true"]),
    "wheels instead of VSCMGs": (
        "station-keeping",
        ["vscmg.enabled=false", "wheels.enabled=true"],
    ),
    "no thrusters": ("station-keeping", ["thrusters.enabled=false"]),
    "thrusters take the torque": (
        "station-keeping",
        ["vscmg.enabled=false", "thrusters.mode=wrench"],
    ),
    "a UR5 on another base": ("ur5-waypoints", []),
}


def _signatures(name, sets):
    loop = ClosedLoop(load_scenario(name, ["outputs.plots=false", *sets]).config)
    loop._prepare()
    return [sig for _, sig in loop.kernel_jobs()]


@pytest.fixture(scope="module")
def reference():
    return _signatures("station-keeping", [])


@pytest.mark.filterwarnings("ignore:.*desaturation_gain")
@pytest.mark.parametrize("variant", SAME_STRUCTURE)
def test_systems_of_one_structure_share_the_compiled_loop_and_stages(reference, variant):
    got = _signatures(*SAME_STRUCTURE[variant])
    assert len(got) == len(reference)
    for mine, theirs in zip(got, reference, strict=True):
        assert mine == theirs


@pytest.mark.parametrize("variant", ["no thrusters", "wheels instead of VSCMGs"])
def test_an_absent_device_is_an_empty_block_of_the_same_types(variant):
    name, sets = SAME_STRUCTURE[variant]
    present = actuation_params(build_system(load_scenario("station-keeping").config))
    absent = actuation_params(build_system(load_scenario(name, sets).config))
    assert typeof(absent) == typeof(present)


def test_a_different_law_is_a_different_loop(reference):
    """The check above can fail: a structural change (the base law) changes the types."""
    got = _signatures("station-keeping", ["base_controller.law=dual_pd_dob"])
    assert got[0] != reference[0]


def test_param_array_is_contiguous_read_only_and_leaves_its_source_writable():
    src = np.arange(12.0).reshape(3, 4)
    a = param_array(src)
    assert not a.flags.writeable and a.flags.c_contiguous
    assert np.shares_memory(a, src)  # a view: no copy of an array that qualifies
    assert src.flags.writeable  # the owner may still update it
    src[0, 0] = 5.0
    assert a[0, 0] == 5.0
    strided = param_array(src[:, ::2])
    assert strided.flags.c_contiguous and not strided.flags.writeable
    np.testing.assert_array_equal(strided, src[:, ::2])
    ints = param_array([1, 2, 3], np.int64)
    assert ints.dtype == np.int64 and not ints.flags.writeable
    frozen = np.ones(3)
    frozen.flags.writeable = False
    assert param_array(frozen) is frozen
    assert typeof(param_array(np.ones(3))) == typeof(frozen)


@pytest.mark.parametrize("posture", [None, "given"])
def test_the_ik_of_a_build_and_of_the_flight_software_are_one_compiled_solver(monkeypatch, posture):
    """``solve_ik`` (a system's build solves the arm's first pose with it) passes the
    joint limits and the posture read-only, as the arm law's parameter block holds them:
    the flight software's IK is then the solver the build compiled, not a second one."""
    from dqspace.control import ik as ik_module

    sy = build_system(load_scenario("station-keeping").config)
    P = sy.arm.kernel_params()
    seen = []
    kernel = ik_module.ik_kernel

    def recording(*args):
        seen.append([typeof(a) for a in args])
        return kernel(*args)

    monkeypatch.setattr(ik_module, "ik_kernel", recording)
    model, n = sy.arm.model, sy.arm.law.n
    extra = {} if posture is None else {"posture": np.zeros(n)}
    got = ik_module.solve_ik(  # any target: the types are what is checked
        model, np.r_[1.0, np.zeros(7)], np.zeros(n), limits=sy.arm.limits, **extra
    )
    assert got.joints.shape == (n,) and len(seen) == 1
    flight = {0: P.ints, 1: P.reals, 6: P.place, 9: P.lo, 10: P.hi, 15: P.posture}
    for i, x in flight.items():
        assert seen[0][i] == typeof(x), f"argument {i}: {seen[0][i]} != {typeof(x)}"
