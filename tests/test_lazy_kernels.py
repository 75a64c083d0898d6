"""Kernels with explicit signatures compile at their first use, not at import."""

import subprocess
import sys
import textwrap
from collections import namedtuple

import numpy as np
import pytest
from numba import njit, types
from numba import typeof as numba_typeof

from dqspace._jit import LazyKernel, TypedCall, compiled, lazy_njit, signature_on_first_call
from dqspace.dq import dq_from_translation
from dqspace.multibody import INPUTS_SIG, models
from dqspace.multibody.simulation import resolve_inputs


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


# ---------------------------------------------------------------- kernel pointers


def _checked_total(blocks, k):
    s = 0.0
    for j in range(blocks[0].shape[0]):
        if blocks[0][j] < 0.0:
            raise ValueError("a negative entry")
        s += k * blocks[0][j]
    for a in blocks:
        s += a[0]
    return s


def _through(fn, blocks, k):
    return fn(blocks, k)


def test_a_kernel_pointer_calls_the_native_entry_exceptions_and_all():
    # numba's C wrapper (the only entry of a plain FunctionType argument) prints an exception
    # and returns garbage; the native entry a KernelPointer carries propagates it, message
    # and all, and passes a tuple of many arrays as a direct call does
    from dqspace._jit import KernelPointer, NativeFunctionType, signature_on_first_call

    kernel = signature_on_first_call({}, returns=types.float64)(_checked_total)
    blocks = tuple(np.full(3, float(i)) for i in range(40))
    ptr = kernel.pointer(blocks, 2.0)
    assert isinstance(ptr, KernelPointer)
    assert isinstance(numba_typeof(ptr), NativeFunctionType)
    caller = njit(_through)
    expected = 2.0 * 0.0 * 3 + sum(range(40))
    assert caller(ptr, blocks, 2.0) == expected
    assert ptr.jit_address() > 0
    bad = (np.array([1.0, -1.0, 0.0]),) + blocks[1:]
    try:
        caller(ptr, bad, 2.0)
    except ValueError as e:
        assert "a negative entry" in str(e)
    else:
        raise AssertionError("the exception did not cross the pointer")


def test_a_foreign_wrapper_address_still_calls_through_its_c_entry():
    # an object that only gives a C wrapper's address (no native entry) is still called
    from numba import cfunc

    from dqspace._jit import KernelPointer

    sig = types.float64(types.float64)
    doubled = cfunc(sig)(lambda x: 2.0 * x)

    class Foreign(types.WrapperAddressProtocol):
        def __wrapper_address__(self):
            return doubled.address

        def signature(self):
            return sig

    ptr = KernelPointer(Foreign(), sig)
    assert ptr.jit_address() == 0
    assert njit(lambda f, x: f(x))(ptr, 1.5) == 3.0


Block = namedtuple("Block", ["a", "b"])


def _weighted_sum(blk, w, out):
    out[0] = w * (blk.a.sum() + blk.b.sum())


def test_a_typed_call_types_each_tuple_once_and_follows_new_types(monkeypatch):
    import dqspace._jit as jit

    kernel = signature_on_first_call({})(_weighted_sum)
    call = TypedCall(kernel, keep=4)
    typed = []
    monkeypatch.setattr(jit, "typeof", lambda x: typed.append(type(x)) or numba_typeof(x))
    blk, out = Block(np.arange(3.0), np.ones(2)), np.zeros(1)
    for w in (1.0, 2.0, 3.0):
        call(blk, w, out)
        assert out[0] == w * 5.0
    assert typed.count(Block) == 1  # the tuple typed once, the scalar and out at each call
    assert typed.count(float) == 3
    blk.a[:] = 10.0  # its contents may change (not its type): the call sees the new values
    call(blk, 1.0, out)
    assert out[0] == 32.0
    # a tuple of other types: another compiled version, the same answer as numba's own
    small = Block(np.arange(3, dtype=np.float32), np.ones(2, dtype=np.float32))
    call(small, 0.5, out)
    want = np.zeros(1)
    njit(_weighted_sum)(small, 0.5, want)
    assert out[0] == want[0] == 2.5
    assert len(kernel._compiled) == 2
    for _ in range(10):  # tuples made and dropped (a record per chunk): the memory is bounded
        call(Block(np.zeros(1), np.zeros(1)), 1.0, out)
    assert len(call._tuples) == 4


def test_an_inputs_callback_given_lazy_is_compiled_at_its_first_call_not_when_resolved():
    # the closed loop types its plant block while the callback still compiles elsewhere
    def add_one(t, t_step, q, v, params, mem, tau, fext):
        tau[0] += 1.0

    kernel = LazyKernel(add_one, INPUTS_SIG, {})
    pointer = resolve_inputs(kernel)
    assert kernel._dispatcher is None  # not compiled yet
    assert resolve_inputs(kernel) is pointer  # one pointer per callback

    @njit
    def call(f, tau):
        z = np.zeros(1)
        f(0.0, 0.0, z, z, z, z, tau, np.zeros((1, 6)))

    tau = np.zeros(2)
    call(pointer, tau)
    assert kernel._dispatcher is not None and tau[0] == 1.0
    wrong = LazyKernel(add_one, types.void(types.float64), {})
    with pytest.raises(ValueError, match="INPUTS_SIG"):
        resolve_inputs(wrong)
