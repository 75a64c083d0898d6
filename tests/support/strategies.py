"""Hypothesis strategies for quaternions, poses and dual vectors."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

finite = st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def unit_quats(draw):
    v = draw(arrays(np.float64, 4, elements=finite))
    n = np.linalg.norm(v)
    if n < 1e-3:
        v = np.array([1.0, 0.0, 0.0, 0.0])
        n = 1.0
    return v / n


@st.composite
def poses(draw):
    from dqspace.dq import dq_from_quat_translation

    q = draw(unit_quats())
    r = draw(arrays(np.float64, 3, elements=finite))
    return dq_from_quat_translation(q, r)


@st.composite
def general_dqs(draw):
    """Dual quaternions with a real part bounded away from zero."""
    a = draw(arrays(np.float64, 8, elements=finite))
    if np.linalg.norm(a[:4]) < 1e-2:
        a[0] += 1.0
    return a


dual_vectors = arrays(np.float64, 6, elements=finite)
