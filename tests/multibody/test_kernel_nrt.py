"""numba's ``_nrt=False`` option, on which the speed of the dynamics kernels rests.

The passes of ``rnea``, ``crba`` and the articulated-body algorithm are
compiled without numba's reference counting (``kernels/frames.py`` module docstring:
safe only in functions that never allocate nor return arrays).  ``_nrt`` is a
private numba option; these tests catch a numba upgrade that drops it or
changes what it does.  That the kernels still give Pinocchio's values is
checked by ``test_pinocchio_agreement.py``, ``test_aba.py`` and ``test_mixed.py``.
"""

import numpy as np
from numba import njit

from dqspace.multibody import inverse_dynamics, mass_matrix, models
from dqspace.multibody.kernels import articulated as A
from dqspace.multibody.kernels import mixed_problem as MX
from dqspace.multibody.kernels import sim as S
from dqspace.multibody.kernels.kinematics import _twist_step
from dqspace.multibody.kernels.layout import CRBA_WIDTH, RNEA_WIDTH
from dqspace.multibody.kernels.mass_matrix import _crba
from dqspace.multibody.kernels.newton_euler import _rnea

NRT_CALLS = ("NRT_incref", "NRT_decref", "NRT_MemInfo_alloc")


def _nrt_calls(ir):
    return {name: ir.count(name) for name in NRT_CALLS if name in ir}


def _view_and_branch(x, y, i):
    r = x[i:]  # an array view, and a branch: numba reference-counts r
    if r[0] > 0.0:
        return y[1] + r[0]
    return 0.0


def test_numba_accepts_the_option_and_it_removes_reference_counting():
    x = np.array([1.0, 2.0, 3.0])
    plain = njit(_view_and_branch)
    bare = njit(_nrt=False)(_view_and_branch)
    assert plain(x, x, 1) == bare(x, x, 1) == 4.0
    assert _nrt_calls(plain.inspect_llvm(plain.signatures[0]))  # the control counts references
    assert _nrt_calls(bare.inspect_llvm(bare.signatures[0])) == {}


def test_passes_compile_without_reference_counting_or_allocation(rng):
    model = models.space_manipulator(gravity=(0.0, 0.0, -9.81))
    q = model.random_configuration(rng)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    tau = inverse_dynamics(model, q, v, a)  # compiles _rnea and _crba (or loads them)
    M = mass_matrix(model, q)
    passes = (A.velocity_pass, A._articulated, MX._mixed_articulated, MX._mixed_accelerations)
    for kernel in (_rnea, _crba, _twist_step, *passes, S._rk4):
        assert kernel.targetoptions.get("_nrt") is False, kernel.__name__
    # fresh copies of the two passes with the option (a cached kernel keeps no IR)
    rnea = njit(_nrt=False)(_rnea.py_func)
    crba = njit(_nrt=False)(_crba.py_func)
    ints, reals = model._ints, model._reals
    tau2 = np.empty(model.nv)
    W = np.empty((model.nb + 1, RNEA_WIDTH))
    rnea(ints, reals, model.gravity, q, v, a, np.empty((0, 6)), tau2, W)
    M2 = np.empty_like(M)
    crba(ints, reals, q, M2, np.empty((model.nb, CRBA_WIDTH)))
    np.testing.assert_allclose(tau2, tau, rtol=1e-14, atol=1e-14 * np.abs(tau).max())
    np.testing.assert_allclose(M2, M, rtol=1e-14, atol=1e-14 * np.abs(M).max())
    for f in (rnea, crba):
        assert _nrt_calls(f.inspect_llvm(f.signatures[0])) == {}
