"""The one declaration of the packed model arrays, the joint table and the kernel workspaces.

Every per-body array the kernels read or write is a 2-D float (or int) array with one row
per body, whose columns are cut into named *fields*.  Each layout below is a list of
``(name, size)`` fields; the offsets are computed once, here, and exported as module-level
integer constants (numba freezes module-level ints into compiled code as constants, so
``W[k, TWIST + 2]`` costs what ``W[k, 14]`` costs).  A kernel reads a field as
``W[k, TWIST:TWIST + 6]`` or ``W[k, TWIST + j]``; no offset is written as a bare number.

Packed model (built by :class:`dqspace.multibody.Model`, read-only):

* ``ints`` (nb, ``INTS.width``) int64: :data:`INTS` -- parent index (-1 for a root),
  joint type (:data:`FIXED` ... :data:`FREE`), first index of the joint in q and in v.
* ``reals`` (nb, ``REALS.width``) float64: :data:`REALS` -- joint axis (3, unit; body
  frame), joint placement (8, unit dual quaternion), mass [kg], centre of mass (3) [m],
  inertia about the body origin ``J_O`` (3x3 row-major) [kg m^2], and ``swap(M^_k)``
  (6x6 row-major), the symmetric spatial inertia the articulated-body recursion starts from.

Workspaces (one row per body, plus scratch rows; allocated by the public kernels):

* :data:`FRAME` fields, shared by every recursion: the frame of body k in its parent
  (``rot``: R of ``rel_k``, body k -> parent, row-major; ``trans``: r^k, the translation of
  ``rel_k`` in body k), its twist ``w_k`` (P12), velocity product ``alpha_k`` (P15) and
  acceleration ``acc_k = d/dt w_k - g_k`` (P16).
* :data:`RNEA_WS` (rnea, kinematics, momentum): FRAME + the joint wrench ``f_k`` (swapped
  ``[tau, f]``); row nb holds the inertial frame's acceleration ``-g`` in ``acc``.
* :data:`CRBA_WS`: ``rot``, ``trans`` + the composite rigid-body inertia of body k's subtree
  (mass, first moment ``m c``, inertia about the origin, upper triangle).
* :data:`ABA_WS` (articulated body, ``docs/articulated.md``): FRAME + bias wrench ``z_k``,
  ``U_k = P_k S_k``, ``u_k = tau_k - S_k^T z_k``, ``D_k^-1`` and the articulated inertia
  ``P_k`` (6x6 row-major, swapped); row nb is :data:`ABA_SCRATCH`, row nb + 1 a 6x6 matrix.
"""

#: Joint types (the integer values of :class:`dqspace.multibody.JointType`).
FIXED, REVOLUTE, PRISMATIC, SPHERICAL, FREE = 0, 1, 2, 3, 4
#: The joint table: sizes of a joint's configuration (nq) and velocity (nv), by joint type.
JOINT_NQ = (0, 1, 1, 4, 8)
JOINT_NV = (0, 1, 1, 3, 6)

#: Largest distance of a base pose or joint quaternion from the unit manifold accepted as
#: input by the compiled checks (``aba_checked``) and by ``multibody.check_configuration``.
CONFIG_TOL = 1e-6


class Layout:
    """Named, contiguous fields of the columns of a per-body array.

    ``Layout("name", [("a", 3), ("b", 6)])`` has ``.a == 0``, ``.b == 3``, ``.width == 9``,
    ``.size("b") == 6`` and ``.fields`` the list it was built from.
    """

    def __init__(self, name, fields):
        self.name = name
        self.fields = tuple(fields)
        self.offsets = {}
        offset = 0
        for field, size in self.fields:
            if field in self.offsets or hasattr(Layout, field):
                raise ValueError(f"layout {name!r}: duplicate or reserved field {field!r}")
            self.offsets[field] = offset
            setattr(self, field, offset)
            offset += size
        self.width = offset

    def size(self, field):
        """Number of columns of ``field``."""
        return dict(self.fields)[field]

    def __repr__(self):
        body = ", ".join(f"{f}@{self.offsets[f]}:{n}" for f, n in self.fields)
        return f"Layout({self.name!r}, width={self.width}: {body})"


# ------------------------------------------------------------- packed model
INTS = Layout("ints", [("parent", 1), ("joint_type", 1), ("q_index", 1), ("v_index", 1)])
REALS = Layout(
    "reals",
    [
        ("axis", 3),
        ("placement", 8),
        ("mass", 1),
        ("com", 3),
        ("inertia_o", 9),
        ("spatial_inertia", 36),
    ],
)
PARENT, JOINT_TYPE, Q_INDEX, V_INDEX = INTS.parent, INTS.joint_type, INTS.q_index, INTS.v_index
AXIS, PLACEMENT, MASS, COM = REALS.axis, REALS.placement, REALS.mass, REALS.com
INERTIA_O, SPATIAL_INERTIA = REALS.inertia_o, REALS.spatial_inertia

# --------------------------------------------------------------- workspaces
FRAME = [("rot", 9), ("trans", 3), ("twist", 6), ("alpha", 6), ("acc", 6)]
RNEA_WS = Layout("rnea", [*FRAME, ("wrench", 6)])
ABA_WS = Layout("aba", [*FRAME, ("bias", 6), ("U", 6), ("u", 6), ("D_inv", 9), ("art_inertia", 36)])
CRBA_WS = Layout("crba", [*FRAME[:2], ("c_mass", 1), ("c_first_moment", 3), ("c_inertia", 6)])
#: Row nb of the articulated-body workspace: the projected ``P_k^A``, ``z_k^A`` of the body
#: being passed to its parent, the inertial frame's acceleration ``-g``, two short vectors.
ABA_SCRATCH = Layout(
    "aba scratch",
    [("art_inertia_a", 36), ("bias_a", 6), ("inertial_acc", 6), ("tmp1", 6), ("tmp2", 6)],
)

# frame fields (the same offsets in every workspace that has them)
ROT, TRANS, TWIST, ALPHA, ACC = (
    RNEA_WS.rot,
    RNEA_WS.trans,
    RNEA_WS.twist,
    RNEA_WS.alpha,
    RNEA_WS.acc,
)
# rnea
WRENCH = RNEA_WS.wrench
#: Columns of a workspace for :func:`~dqspace.multibody.kernels.rnea` and the kinematics,
#: ``(nb + 1, RNEA_WIDTH)``.
RNEA_WIDTH = RNEA_WS.width
# crba
C_MASS, C_FIRST_MOMENT, C_INERTIA = CRBA_WS.c_mass, CRBA_WS.c_first_moment, CRBA_WS.c_inertia
#: Columns of a workspace for :func:`~dqspace.multibody.kernels.crba`, ``(nb, CRBA_WIDTH)``.
CRBA_WIDTH = CRBA_WS.width
# articulated body
BIAS, U_MAT, U_VEC, D_INV, ART_INERTIA = (
    ABA_WS.bias,
    ABA_WS.U,
    ABA_WS.u,
    ABA_WS.D_inv,
    ABA_WS.art_inertia,
)
ABA_WIDTH = ABA_WS.width
ART_INERTIA_A, BIAS_A, INERTIAL_ACC = (
    ABA_SCRATCH.art_inertia_a,
    ABA_SCRATCH.bias_a,
    ABA_SCRATCH.inertial_acc,
)
TMP1, TMP2 = ABA_SCRATCH.tmp1, ABA_SCRATCH.tmp2

WORKSPACES = (RNEA_WS, CRBA_WS, ABA_WS, ABA_SCRATCH)

for _ws in (RNEA_WS, CRBA_WS, ABA_WS):  # the shared frame helpers index every workspace alike
    assert (_ws.rot, _ws.trans) == (ROT, TRANS), _ws
assert ABA_WS.acc == ACC and ABA_WS.twist == TWIST and ABA_WS.alpha == ALPHA
assert ABA_SCRATCH.width <= ABA_WIDTH and 36 <= ABA_WIDTH
