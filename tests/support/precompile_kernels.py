"""Small kernels a child process of :mod:`dqspace._precompile` can import and compile (the
tests of tests/test_precompile.py)."""

from numba import types

from dqspace._jit import signature_on_first_call


def _scaled_sum(x, k):
    s = 0.0
    for j in range(x.shape[0]):
        s += k * x[j]
    return s


def _product(x, k):
    s = 1.0
    for j in range(x.shape[0]):
        s *= k * x[j]
    return s


scaled_sum = signature_on_first_call({}, returns=types.float64, cache=True)(_scaled_sum)
product = signature_on_first_call({}, returns=types.float64, cache=True)(_product)
