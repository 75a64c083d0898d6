"""The packed model layout, the kernel workspaces and the joint table (``kernels/layout.py``).

Every per-body array the kernels read is cut into named fields declared once; these tests
check that the declarations are consistent (no overlap, contiguous, the shared frame fields
at the same offsets in every workspace) and that what ``Model`` builds matches them,
against values computed here from the model's own attributes.
"""

import numpy as np
import pytest

from dqspace.multibody import JointType, _state, models
from dqspace.multibody.kernels import layout as L
from dqspace.multibody.model import NQ, NV
from support.random_models import random_tree

ALL_LAYOUTS = (L.INTS, L.REALS, *L.WORKSPACES)


@pytest.mark.parametrize("lay", ALL_LAYOUTS, ids=lambda x: x.name)
def test_fields_are_contiguous_and_disjoint(lay):
    covered = np.zeros(lay.width, dtype=int)
    expected = 0
    for name, size in lay.fields:
        assert size > 0, (lay.name, name)
        assert lay.offsets[name] == expected == getattr(lay, name), (lay.name, name)
        covered[expected : expected + size] += 1
        expected += size
    assert expected == lay.width
    assert (covered == 1).all(), f"{lay.name}: columns covered {covered}"


def test_duplicate_field_names_are_refused():
    with pytest.raises(ValueError, match="duplicate"):
        L.Layout("bad", [("a", 1), ("a", 2)])


def test_shared_frame_fields_sit_at_the_same_offsets_in_every_workspace():
    # the frame helpers (_to_child, _to_parent, _twist_step, ...) index any workspace alike
    for ws in (L.RNEA_WS, L.ABA_WS, L.CRBA_WS):
        assert (ws.rot, ws.trans) == (L.ROT, L.TRANS), ws
    for ws in (L.RNEA_WS, L.ABA_WS):
        assert (ws.twist, ws.alpha, ws.acc) == (L.TWIST, L.ALPHA, L.ACC), ws
    assert [f for f, _ in L.RNEA_WS.fields[: len(L.FRAME)]] == [f for f, _ in L.FRAME]
    # the scratch rows of the articulated-body workspace fit in its width
    assert L.ABA_SCRATCH.width <= L.ABA_WIDTH and 36 <= L.ABA_WIDTH


def test_module_constants_are_the_layout_offsets():
    pairs = {
        "PARENT": L.INTS.parent,
        "JOINT_TYPE": L.INTS.joint_type,
        "Q_INDEX": L.INTS.q_index,
        "V_INDEX": L.INTS.v_index,
        "AXIS": L.REALS.axis,
        "PLACEMENT": L.REALS.placement,
        "MASS": L.REALS.mass,
        "COM": L.REALS.com,
        "INERTIA_O": L.REALS.inertia_o,
        "SPATIAL_INERTIA": L.REALS.spatial_inertia,
        "WRENCH": L.RNEA_WS.wrench,
        "BIAS": L.ABA_WS.bias,
        "U_MAT": L.ABA_WS.U,
        "U_VEC": L.ABA_WS.u,
        "D_INV": L.ABA_WS.D_inv,
        "ART_INERTIA": L.ABA_WS.art_inertia,
        "C_MASS": L.CRBA_WS.c_mass,
        "C_FIRST_MOMENT": L.CRBA_WS.c_first_moment,
        "C_INERTIA": L.CRBA_WS.c_inertia,
    }
    for name, offset in pairs.items():
        value = getattr(L, name)
        assert type(value) is int and value == offset, name  # numba folds plain ints
    assert (L.RNEA_WIDTH, L.CRBA_WIDTH, L.ABA_WIDTH) == (
        L.RNEA_WS.width,
        L.CRBA_WS.width,
        L.ABA_WS.width,
    )


def test_joint_table_matches_joint_types_and_generalized_coordinates():
    assert [int(t) for t in JointType] == list(range(len(L.JOINT_NQ))) == list(range(5))
    assert (L.FIXED, L.REVOLUTE, L.PRISMATIC, L.SPHERICAL, L.FREE) == tuple(
        int(t) for t in JointType
    )
    # nq, nv from the meaning of each joint (docs/conventions.md), not from the table
    meaning = {"FIXED": (0, 0), "REVOLUTE": (1, 1), "PRISMATIC": (1, 1)}
    meaning |= {"SPHERICAL": (4, 3), "FREE": (8, 6)}  # quaternion / rate; dual quaternion / twist
    for t in JointType:
        assert (L.JOINT_NQ[t], L.JOINT_NV[t]) == meaning[t.name] == (NQ[t], NV[t])


def test_config_tolerance_is_the_python_checks_tolerance():
    assert L.CONFIG_TOL == _state.CONFIG_TOL


@pytest.mark.parametrize("seed", range(4))
def test_packed_arrays_of_random_trees_follow_the_layout(seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, int(rng.integers(2, 12)), floating=bool(seed % 2))
    ints, reals = model._ints, model._reals
    nb = model.nb
    assert ints.shape == (nb, L.INTS.width) and ints.dtype == np.int64
    assert reals.shape == (nb, L.REALS.width) and reals.dtype == np.float64
    np.testing.assert_array_equal(ints[:, L.PARENT], model.parent)
    np.testing.assert_array_equal(ints[:, L.JOINT_TYPE], model.joint_type)
    q_next = v_next = 0
    for k in range(nb):  # q, v indices: the joints' sizes laid end to end
        t = int(ints[k, L.JOINT_TYPE])
        assert (ints[k, L.Q_INDEX], ints[k, L.V_INDEX]) == (q_next, v_next)
        assert (model.joint_nq[k], model.joint_nv[k]) == (L.JOINT_NQ[t], L.JOINT_NV[t])
        q_next += L.JOINT_NQ[t]
        v_next += L.JOINT_NV[t]
    assert (q_next, v_next) == (model.nq, model.nv)
    np.testing.assert_array_equal(reals[:, L.AXIS : L.AXIS + 3], model.joint_axis)
    np.testing.assert_array_equal(reals[:, L.PLACEMENT : L.PLACEMENT + 8], model.joint_placement)
    np.testing.assert_array_equal(reals[:, L.MASS], model.mass)
    np.testing.assert_array_equal(reals[:, L.COM : L.COM + 3], model.com)
    for k in range(nb):
        m, c = model.mass[k], model.com[k]
        # parallel-axis theorem: J_O = J_C + m (|c|^2 I - c c^T)
        J_O = model.inertia_com[k] + m * (c @ c * np.eye(3) - np.outer(c, c))
        np.testing.assert_allclose(
            reals[k, L.INERTIA_O : L.INERTIA_O + 9].reshape(3, 3), J_O, rtol=1e-12, atol=1e-12
        )
        # swap(M^_k) maps a twist [w, v] to [h, p]: h = J_O w + m c x v, p = m (v - c x w)
        S = reals[k, L.SPATIAL_INERTIA : L.SPATIAL_INERTIA + 36].reshape(6, 6)
        w, v = rng.normal(size=3), rng.normal(size=3)
        h = J_O @ w + m * np.cross(c, v)
        p = m * (v - np.cross(c, w))
        np.testing.assert_allclose(S @ np.r_[w, v], np.r_[h, p], rtol=1e-12, atol=1e-12)


def test_paper_model_widths():
    model = models.space_manipulator()
    assert model._ints.shape[1] == L.INTS.width == 4
    assert model._reals.shape[1] == L.REALS.width == 60
