"""Broadcasting gufuncs over the compiled kernels of :mod:`dqspace.dq.kernels`.

Each gufunc is a two-line loop body around one kernel; numpy supplies the
broadcasting over leading axes.  Numba's gufuncs cannot create an output
dimension that no input has, so such outputs take a *shape carrier*: a
module-level dummy array (``_S3``, ``_S6`` ...) whose only role is to fix the
output's core shape.  The public wrappers pass it; users never see it.
"""

import numpy as np
from numba import guvectorize

from .._numba_cache import build_lock
from . import kernels as k

_F = "float64"


_SPECS = {}


def _gu(sig, layout):
    """Register a gufunc body; it is compiled (or loaded from the cache) on first use."""

    def register(fn):
        _SPECS[fn.__name__] = (fn, sig, layout)

    return register


def __getattr__(name):
    try:
        fn, sig, layout = _SPECS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    with build_lock():  # numba's gufunc caches are not safe to write concurrently
        g = guvectorize([sig], layout, nopython=True, cache=True)(fn)
    globals()[name] = g
    return g


# shape carriers (never written)
S2 = np.zeros(2)
S3 = np.zeros(3)
S4 = np.zeros(4)
S6 = np.zeros(6)
S8 = np.zeros(8)
S33 = np.zeros((3, 3))
S44 = np.zeros((4, 4))
S66 = np.zeros((6, 6))
S88 = np.zeros((8, 8))
for _s in (S2, S3, S4, S6, S8, S33, S44, S66, S88):
    _s.setflags(write=False)

_V = f"{_F}[:]"
_M = f"{_F}[:, :]"


# ---- quaternions
@_gu(f"void({_V}, {_V}, {_V})", "(n),(n)->(n)")
def q_mul(a, b, out):
    k.q_mul(a, b, out)


@_gu(f"void({_V}, {_V})", "(n)->(n)")
def q_conj(a, out):
    k.q_conj(a, out)


@_gu(f"void({_V}, {_V}, {_V})", "(n),(m)->(m)")
def q_rotate(q, v, out):
    k.q_rotate(q, v, out)


@_gu(f"void({_V}, {_V}, {_V})", "(n),(m)->(m)")
def q_rotate_inv(q, v, out):
    k.q_rotate_inv(q, v, out)


@_gu(f"void({_V}, {_M}, {_M})", "(n),(m,m)->(m,m)")
def q_to_rotation_matrix(q, _s, out):
    k.q_to_rotation_matrix(q, out)


@_gu(f"void({_M}, {_V}, {_V})", "(m,m),(n)->(n)")
def q_from_rotation_matrix(R, _s, out):
    k.q_from_rotation_matrix(R, out)


@_gu(f"void({_V}, {_V}, {_V})", "(m),(n)->(n)")
def q_exp(u, _s, out):
    k.q_exp(u, out)


@_gu(f"void({_V}, {_V}, {_V})", "(n),(m)->(m)")
def q_log(q, _s, out):
    k.q_log(q, out)


# ---- dual quaternions
@_gu(f"void({_V}, {_V}, {_V})", "(n),(n)->(n)")
def dq_mul(a, b, out):
    k.dq_mul(a, b, out)


@_gu(f"void({_V}, {_V})", "(n)->(n)")
def dq_conj(a, out):
    k.dq_conj(a, out)


@_gu(f"void({_V}, {_V})", "(n)->(n)")
def dq_inv(a, out):
    k.dq_inv(a, out)


@_gu(f"void({_V}, {_V})", "(n)->(n)")
def dq_normalize(a, out):
    k.dq_normalize(a, out)


@_gu(f"void({_V}, {_V}, {_V})", "(n),(m)->(m)")
def dq_norm(a, _s, out):
    k.dq_norm(a, out)


@_gu(f"void({_V}, {_V}, {_V})", "(n),(m)->(m)")
def dq_translation(a, _s, out):
    k.dq_translation(a, out)


@_gu(f"void({_V}, {_V}, {_V})", "(n),(m)->(m)")
def dq_translation_body(a, _s, out):
    k.dq_translation_body(a, out)


@_gu(f"void({_V}, {_V}, {_V}, {_V})", "(n),(m),(k)->(k)")
def dq_from_quat_translation(q, r, _s, out):
    k.dq_from_quat_translation(q, r, out)


@_gu(f"void({_V}, {_M}, {_M})", "(n),(m,m)->(m,m)")
def dq_to_transform(a, _s, out):
    k.dq_to_transform(a, out)


@_gu(f"void({_M}, {_V}, {_V})", "(m,m),(n)->(n)")
def dq_from_transform(T, _s, out):
    k.dq_from_transform(T, out)


@_gu(f"void({_V}, {_M}, {_M})", "(n),(m,m)->(m,m)")
def dq_adjoint(a, _s, out):
    k.dq_adjoint(a, out)


@_gu(f"void({_V}, {_M}, {_M})", "(n),(n,n)->(n,n)")
def dq_left_matrix(a, _s, out):
    k.dq_left_matrix(a, out)


@_gu(f"void({_V}, {_M}, {_M})", "(n),(n,n)->(n,n)")
def dq_right_matrix(a, _s, out):
    k.dq_right_matrix(a, out)


@_gu(f"void({_V}, {_V}, {_V})", "(n),(m)->(m)")
def dq_log(a, _s, out):
    k.dq_log(a, out)


@_gu(f"void({_V}, {_V}, {_V})", "(m),(n)->(n)")
def dq_exp(x, _s, out):
    k.dq_exp(x, out)


@_gu(f"void({_V}, {_V}, {_V})", "(n),(m)->(m)")
def dq_screw_log(a, _s, out):
    k.dq_screw_log(a, out)


@_gu(f"void({_V}, {_V}, {_V})", "(m),(n)->(n)")
def dq_screw_exp(x, _s, out):
    k.dq_screw_exp(x, out)


@_gu(f"void({_V}, {_F}, {_V})", "(n),()->(n)")
def dq_pow(a, t, out):
    k.dq_pow(a, t, out)


@_gu(f"void({_V}, {_V}, {_F}, {_V})", "(n),(n),()->(n)")
def dq_sclerp(a, b, t, out):
    k.dq_sclerp(a, b, t, out)


# ---- dual vectors
@_gu(f"void({_V}, {_V}, {_V})", "(n),(n)->(n)")
def dv_cross(x, y, out):
    k.dv_cross(x, y, out)


@_gu(f"void({_V}, {_V}, {_V})", "(n),(m)->(m)")
def dv_frame_change(a, x, out):
    k.dv_frame_change(a, x, out)


@_gu(f"void({_V}, {_V}, {_V})", "(n),(m)->(m)")
def dv_frame_change_inv(a, x, out):
    k.dv_frame_change_inv(a, x, out)


for _name in _SPECS:
    del globals()[_name]
