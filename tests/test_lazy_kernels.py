"""Kernels with explicit signatures compile at their first use, not at import."""

import subprocess
import sys
import textwrap

import numpy as np
from numba import njit, types

from dqspace._jit import LazyKernel, compiled, lazy_njit
from dqspace.dq import dq_from_translation
from dqspace.multibody import models


def test_importing_every_package_runs_no_compiled_code(tmp_path):
    # numba's CPU target (and with it numba.np.arraymath) starts with the first compiled call;
    # a fresh interpreter, outside the repository, so nothing else has started it
    code = textwrap.dedent(
        """
        import sys
        import dqspace, dqspace.dq, dqspace.multibody, dqspace.actuators, dqspace.control
        import dqspace.scenarios
        started = [m for m in ("numba.np.arraymath", "numba.core.typing.mathdecl")
                   if m in sys.modules]
        assert not started, f"importing dqspace ran compiled code ({started} loaded)"
        from dqspace.multibody import kernels
        assert type(kernels.sim.rk4_loop).__name__ == "LazyKernel"
        """
    )
    res = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stderr


def test_the_arm_mount_written_out_is_the_translation_it_names():
    np.testing.assert_array_equal(
        models.ARM_MOUNT, dq_from_translation([0.0, 0.0, 0.5 * models.BASE_SIZE])
    )


# a module-level lazy kernel and a compiled caller that references it as a global
@lazy_njit(types.float64(types.float64), cache=False)
def _twice(x):
    return 2.0 * x


@njit(cache=False)
def _calls_twice(x):
    return _twice(x) + 1.0


def test_a_lazy_kernel_compiles_on_first_use_then_is_numbas_dispatcher():
    lazy = globals()["_twice"]
    if isinstance(lazy, LazyKernel):  # not yet used in this process
        assert "not compiled" in repr(lazy)
        assert lazy(3.0) == 6.0
        assert lazy._dispatcher is not None
    # the module attribute is now numba's dispatcher, with the declared signature only
    d = globals()["_twice"]
    assert not isinstance(d, LazyKernel)
    assert compiled(lazy) is d and compiled(d) is d
    assert [str(s) for s in d.signatures] == ["(float64,)"]


def test_compiled_code_calling_a_lazy_kernel_sees_the_kernel():
    assert _calls_twice(4.0) == 9.0


def test_a_lazy_kernel_keeps_its_name_doc_and_numbas_attributes():
    @lazy_njit(types.int64(types.int64))
    def square(n):
        """n squared."""
        return n * n

    assert square.__name__ == "square" and square.__doc__ == "n squared."
    assert square.signatures == [(types.int64,)]  # forwarded to numba: compiles now
    assert square(7) == 49
    try:
        square.no_such_attribute  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("a missing attribute did not raise AttributeError")
