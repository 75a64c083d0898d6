"""Standard and modified DH tables describe the same arm; joint types; inertia frames; errors.

References, none of them ``arm_from_dh``:

* the UR5's standard DH table (UR's datasheet) and its modified (Craig) table, written
  out below by hand (a/alpha shifted down one row);
* a plain-numpy product of 4x4 DH matrices for either convention;
* the hand-written URDF ``scenarios/data/arms/ur5.urdf`` (its link frames are Craig's),
  parsed by ``model_from_urdf``;
* the UR5 flange at q = 0, worked out by hand from the table;
* for random arms (revolute and prismatic joints), the textbook conversion written in
  this file and the rigid-body transformation of the link inertias in numpy.
"""

from pathlib import Path

import numpy as np
import pytest

from dqspace.dq import dq_from_transform, dq_identity, transform_from_dq
from dqspace.multibody import (
    DHRow,
    JointType,
    LinkInertia,
    arm_from_dh,
    frame_pose,
    inverse_dynamics,
    mass_matrix,
    model_from_urdf,
)
from support.pin_compare import rel_err
from support.random_models import random_inertia

UR5_URDF = Path(__file__).resolve().parents[2] / "scenarios" / "data" / "arms" / "ur5.urdf"
HALF_PI = np.pi / 2
G = np.array([0.0, 0.0, -9.81])

#: UR5 standard DH, rows (a_i, d_i, alpha_i) [m, m, rad] (UR's published table).
UR5_STANDARD = (
    DHRow(0.0, 0.089159, HALF_PI),
    DHRow(-0.425, 0.0, 0.0),
    DHRow(-0.39225, 0.0, 0.0),
    DHRow(0.0, 0.10915, HALF_PI),
    DHRow(0.0, 0.09465, -HALF_PI),
    DHRow(0.0, 0.0823, 0.0),
)
#: The same arm in modified DH, rows (a_{i-1}, d_i, alpha_{i-1}), written out by hand.
#: The last standard row has a_6 = alpha_6 = 0: no tool transform is needed.
UR5_MODIFIED = (
    DHRow(0.0, 0.089159, 0.0),
    DHRow(0.0, 0.0, HALF_PI),
    DHRow(-0.425, 0.0, 0.0),
    DHRow(-0.39225, 0.10915, 0.0),
    DHRow(0.0, 0.09465, HALF_PI),
    DHRow(0.0, 0.0823, -HALF_PI),
)
UR5_MASS = (3.7, 8.393, 2.275, 1.219, 1.219, 0.1879)  # [kg]
#: Centres of mass in the standard (distal) DH frame i [m], as the controller's
#: urcontrol.conf gives them (quoted in ur_description; see the arms README).
UR5_COM_DH = (
    (0.0, -0.02561, 0.00193),
    (0.2125, 0.0, 0.11336),
    (0.11993, 0.0, 0.0265),
    (0.0, -0.0018, 0.01634),
    (0.0, 0.0018, 0.01634),
    (0.0, 0.0, -0.001159),
)
#: The same centres of mass in Craig's frame i (the URDF's link frames) [m].
UR5_COM_CRAIG = (
    (0.0, -0.00193, -0.02561),
    (-0.2125, 0.0, 0.11336),
    (-0.27232, 0.0, 0.0265),
    (0.0, -0.01634, -0.0018),
    (0.0, 0.01634, -0.0018),
    (0.0, 0.0, -0.001159),
)
#: Principal moments about the centre of mass in Craig's axes [kg m^2] (diagonal tensors).
UR5_J_CRAIG = (
    (0.014972358333333331, 0.014972358333333331, 0.01040625),
    (0.0151074, 0.13388583541666665, 0.13388583541666665),
    (0.004095, 0.031216803515624995, 0.031216803515624995),
    (0.002013889583333333, 0.002013889583333333, 0.0021942),
    (0.0018310395833333333, 0.0018310395833333333, 0.0021942),
    (8.062475833333332e-05, 8.062475833333332e-05, 0.0001321171875),
)
#: The same in the distal DH axes: Rx(alpha_i) swaps y and z where alpha_i = +-pi/2.
UR5_J_DH = (
    (0.014972358333333331, 0.01040625, 0.014972358333333331),
    UR5_J_CRAIG[1],
    UR5_J_CRAIG[2],
    (0.002013889583333333, 0.0021942, 0.002013889583333333),
    (0.0018310395833333333, 0.0021942, 0.0018310395833333333),
    UR5_J_CRAIG[5],
)


def ur5_links(frame):
    """Link inertias in Craig's frames, the distal DH frames, or standard body frames."""
    if frame == "craig":
        coms, Js = UR5_COM_CRAIG, UR5_J_CRAIG
    elif frame == "dh":
        coms, Js = UR5_COM_DH, UR5_J_DH
    else:  # standard body frame i = Craig's frame i moved back by Tz(-d_i)
        coms = [
            np.add(c, [0.0, 0.0, r.d]) for c, r in zip(UR5_COM_CRAIG, UR5_STANDARD, strict=True)
        ]
        Js = UR5_J_CRAIG
    return [
        LinkInertia(m, np.array(c, float), np.diag(J))
        for m, c, J in zip(UR5_MASS, coms, Js, strict=True)
    ]


def ur5_models(gravity=None):
    """Five builds of the UR5, all with the flange frame named "ee"."""
    std, mod = UR5_STANDARD, UR5_MODIFIED
    return {
        "standard, body frames": arm_from_dh(std, ur5_links("body"), flange="ee", gravity=gravity),
        "standard, DH frames": arm_from_dh(
            std, ur5_links("dh"), inertia_frame="dh", flange="ee", gravity=gravity
        ),
        "modified, body frames": arm_from_dh(
            mod, ur5_links("craig"), convention="modified", flange="ee", gravity=gravity
        ),
        "modified, DH frames": arm_from_dh(
            mod,
            ur5_links("craig"),
            convention="modified",
            inertia_frame="dh",
            flange="ee",
            gravity=gravity,
        ),
        "URDF": model_from_urdf(UR5_URDF, gravity=gravity),
    }


# ----------------------------------------------------------- plain-numpy DH reference


def _rz(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def _rx(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[1.0, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1]])


def _tr(x, y, z):
    T = np.eye(4)
    T[:3, 3] = x, y, z
    return T


def numpy_fk(rows, q, convention, tool=None):
    """Homogeneous transform of DH frame n (then ``tool``) from a textbook DH product."""
    T = np.eye(4)
    for r, qi in zip(rows, q, strict=True):
        theta = r.theta0 + (0.0 if r.prismatic else qi)
        d = r.d + (qi if r.prismatic else 0.0)
        if convention == "standard":
            T = T @ _rz(theta) @ _tr(0, 0, d) @ _tr(r.a, 0, 0) @ _rx(r.alpha)
        else:
            T = T @ _rx(r.alpha) @ _tr(r.a, 0, 0) @ _rz(theta) @ _tr(0, 0, d)
    return T if tool is None else T @ tool


def pose(model, q, frame="ee"):
    return transform_from_dq(frame_pose(model, q, frame))


# ------------------------------------------------------------------------ the UR5


def test_ur5_flange_at_zero_is_the_hand_computed_pose():
    """q = 0: the arm lies along -x; flange at (a2 + a3, -(d4 + d6), d1 - d5), axes Rx(pi/2)
    (alpha1 + alpha4 + alpha5 = pi/2 about the common x axis)."""
    r_ref = np.array([-0.425 - 0.39225, -(0.10915 + 0.0823), 0.089159 - 0.09465])
    R_ref = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])
    for name, model in ur5_models().items():
        T = pose(model, np.zeros(6))
        assert np.abs(T[:3, 3] - r_ref).max() < 1e-15, name
        assert np.abs(T[:3, :3] - R_ref).max() < 1e-15, name


def test_ur5_standard_modified_and_urdf_flanges_agree(rng):
    """200 random joint vectors: the flange of every build equals the numpy DH products of
    both tables (themselves equal) to 1e-12; the body frames are Craig's frames (modified
    body i = URDF link i) and the standard body i sits Tz(-d_i) below it."""
    models = ur5_models()
    urdf = models["URDF"]
    links = ("shoulder_link", "upper_arm_link", "forearm_link")
    links += ("wrist_1_link", "wrist_2_link", "wrist_3_link")
    worst = 0.0
    for _ in range(200):
        q = rng.uniform(-2 * np.pi, 2 * np.pi, 6)
        T_std = numpy_fk(UR5_STANDARD, q, "standard")
        T_mod = numpy_fk(UR5_MODIFIED, q, "modified")
        assert np.abs(T_std - T_mod).max() < 1e-12  # the hand conversion is right
        for model in models.values():
            worst = max(worst, np.abs(pose(model, q) - T_std).max())
        for i, link in enumerate(links):
            T_link = pose(urdf, q, link)
            mod = models["modified, body frames"]
            assert np.abs(pose(mod, q, f"link{i + 1}") - T_link).max() < 1e-12
            T_body_std = T_link @ _tr(0, 0, -UR5_STANDARD[i].d)
            std = models["standard, body frames"]
            assert np.abs(pose(std, q, f"link{i + 1}") - T_body_std).max() < 1e-12
    assert worst < 1e-12, worst


def test_ur5_dynamics_agree_across_conventions_inertia_frames_and_urdf(rng):
    """Same arm, same mass properties: the mass matrix and inverse dynamics (under gravity)
    of the four DH builds equal the URDF model's to 1e-12 (relative)."""
    models = ur5_models(gravity=G)
    urdf = models.pop("URDF")
    worst = {"mass_matrix": 0.0, "inverse_dynamics": 0.0}
    for _ in range(50):
        q = rng.uniform(-np.pi, np.pi, 6)
        v, a = rng.normal(size=6), rng.normal(size=6)
        M_ref, tau_ref = mass_matrix(urdf, q), inverse_dynamics(urdf, q, v, a)
        for model in models.values():
            e_M = rel_err(mass_matrix(model, q), M_ref)
            e_t = rel_err(inverse_dynamics(model, q, v, a), tau_ref)
            worst["mass_matrix"] = max(worst["mass_matrix"], e_M)
            worst["inverse_dynamics"] = max(worst["inverse_dynamics"], e_t)
    assert max(worst.values()) < 1e-12, worst


def test_ur5_inertia_frame_changes_the_dynamics_when_it_should():
    """The distal-frame values read as body-frame ones are a different arm: the check above
    can fail."""
    q = np.array([0.3, -1.0, 0.8, 0.2, 1.1, -0.4])
    right = arm_from_dh(UR5_STANDARD, ur5_links("dh"), inertia_frame="dh")
    wrong = arm_from_dh(UR5_STANDARD, ur5_links("dh"))
    assert rel_err(mass_matrix(wrong, q), mass_matrix(right, q)) > 1e-2


# ------------------------------------------------------------- random arms, both types


def _to_modified(rows):
    """Standard rows -> (modified rows, tool): a/alpha shifted down one row (textbook)."""
    out, a, alpha = [], 0.0, 0.0
    for r in rows:
        out.append(DHRow(a, r.d, alpha, r.theta0, r.prismatic))
        a, alpha = r.a, r.alpha
    return out, _tr(a, 0, 0) @ _rx(alpha)


def _random_arm(rng, n):
    rows, links = [], []
    for i in range(n):
        a, d = rng.uniform(-0.5, 0.5, 2)
        alpha, theta0 = rng.uniform(-np.pi, np.pi, 2)
        rows.append(DHRow(a, d, alpha, theta0, prismatic=i % 3 == 1))
        m = rng.uniform(0.5, 5.0)
        links.append(LinkInertia(m, rng.uniform(-0.2, 0.2, 3), random_inertia(rng, m)))
    return rows, links


def _moved(link, T):
    """Mass properties given in frame F, in frame B, T = pose of F in B (numpy)."""
    R = T[:3, :3]
    return LinkInertia(link.mass, T[:3, 3] + R @ link.com, R @ link.inertia @ R.T)


@pytest.mark.parametrize("seed", range(6))
def test_random_arms_same_in_both_conventions(seed):
    """Random tables of 1-7 rows, revolute and prismatic joints, non-zero theta0 and a
    last row with a_n, alpha_n != 0 (a tool transform for the modified table).  Link
    inertias are random in the standard distal frames; the same bodies are given to
    the modified build in Craig's frames (S_i = C_i Tx(a_i) Rx(alpha_i)) and to the
    standard body-frame build (S_i = B_i Tz(d_i) Tx(a_i) Rx(alpha_i)).  Flange poses equal
    the numpy DH product; mass matrices and inverse dynamics agree to 1e-12."""
    rng = np.random.default_rng(100 + seed)
    n = (1, 2, 3, 5, 6, 7)[seed]
    std, links_dh = _random_arm(rng, n)
    mod, tool_T = _to_modified(std)
    links_craig = [
        _moved(L, _tr(r.a, 0, 0) @ _rx(r.alpha)) for L, r in zip(links_dh, std, strict=True)
    ]
    links_body = [
        _moved(L, _tr(0, 0, r.d) @ _tr(r.a, 0, 0) @ _rx(r.alpha))
        for L, r in zip(links_dh, std, strict=True)
    ]
    assert {r.prismatic for r in std} == ({False, True} if n > 1 else {False})
    tool = dq_from_transform(tool_T)
    builds = [
        arm_from_dh(std, links_dh, inertia_frame="dh", gravity=G),
        arm_from_dh(std, links_body, gravity=G),
        arm_from_dh(mod, links_craig, convention="modified", tool=tool, gravity=G),
        arm_from_dh(
            mod, links_craig, convention="modified", inertia_frame="dh", tool=tool, gravity=G
        ),
    ]
    for model in builds:
        types = [JointType(int(t)) for t in model.joint_type]
        assert types == [r.joint_type for r in std]
    for _ in range(20):
        q = rng.uniform(-np.pi, np.pi, n)
        v, a = rng.normal(size=n), rng.normal(size=n)
        T_ref = numpy_fk(std, q, "standard")
        assert np.abs(numpy_fk(mod, q, "modified", tool_T) - T_ref).max() < 1e-12
        M_ref, tau_ref = mass_matrix(builds[0], q), inverse_dynamics(builds[0], q, v, a)
        for model in builds:
            assert np.abs(pose(model, q, "flange") - T_ref).max() < 1e-12
            assert rel_err(mass_matrix(model, q), M_ref) < 1e-12
            assert rel_err(inverse_dynamics(model, q, v, a), tau_ref) < 1e-12


def test_prismatic_row_slides_along_its_axis_by_q():
    """One prismatic row: the flange moves by q along the joint's axis, frame 0's z in the
    standard convention and Rx(alpha_0) z = (0, -sin alpha, cos alpha) in the modified one;
    its attitude does not change."""
    link = LinkInertia(1.0, np.zeros(3), np.diag([0.01, 0.01, 0.01]))
    alpha = 0.3
    axes = {"standard": [0.0, 0.0, 1.0], "modified": [0.0, -np.sin(alpha), np.cos(alpha)]}
    for conv, axis in axes.items():
        row = DHRow(0.2, 0.1, alpha, 0.4, prismatic=True)
        model = arm_from_dh([row], [link], convention=conv)
        assert JointType(int(model.joint_type[0])) == JointType.PRISMATIC
        T0 = pose(model, np.array([0.0]), "flange")
        T1 = pose(model, np.array([0.25]), "flange")
        assert np.abs(T1[:3, 3] - T0[:3, 3] - 0.25 * np.array(axis)).max() < 1e-15
        assert np.abs(T1[:3, :3] - T0[:3, :3]).max() == 0.0


def test_joint_type_of_a_row():
    assert DHRow(0.0, 0.1, 0.0).joint_type == JointType.REVOLUTE
    assert DHRow(0.0, 0.1, 0.0, prismatic=True).joint_type == JointType.PRISMATIC


# ------------------------------------------------------------------------ bad input

LINK = LinkInertia(1.0, np.array([0.0, 0.0, 0.05]), np.diag([0.01, 0.01, 0.005]))
ROWS = [(0.1, 0.2, 0.0), (0.1, 0.2, 0.0)]

BAD = {
    "convention_unknown": (dict(convention="craig"), r"convention must be 'standard' or 'mod"),
    "convention_not_str": (dict(convention=1), r"convention must be .* got 1"),
    "convention_case": (dict(convention="Standard"), r"convention must be"),
    "inertia_frame": (dict(inertia_frame="distal"), r"inertia_frame must be 'body' or 'dh'"),
    "rows_none": (dict(rows=None), r"rows must be a sequence \(list or tuple\), got NoneType"),
    "rows_string": (dict(rows="abc"), r"rows must be a sequence .* got str"),
    "links_number": (dict(links=3.0), r"links must be a sequence .* got float"),
    "names_string": (dict(names="ab"), r"names must be a sequence .* got str"),
    "flange_number": (dict(flange=5), r"flange must be a non-empty string or None, got 5"),
    "flange_empty": (dict(flange=""), r"flange must be a non-empty string or None"),
    "tool_without_flange": (dict(flange=None, tool=dq_identity()), r"tool .* needs a flange"),
    "tool_not_unit": (dict(tool=2.0 * dq_identity()), r"tool is not a unit dual quaternion"),
    "tool_shape": (dict(tool=np.zeros(7)), r"tool must be a finite \(8,\) dual quaternion"),
    "joint_type_string": (
        dict(rows=[(0.1, 0.2, 0.0, 0.0, "prismatic"), (0.1, 0.2, 0.0)]),
        r"DH row 0 \('link1'\): prismatic must be True or False \(the joint type\)",
    ),
    "three_rows_two_links": (dict(rows=[*ROWS, ROWS[0]]), r"3 DH rows but 2 link inertias"),
    "negative_mass": (
        dict(links=[LINK, LinkInertia(-1.0, np.zeros(3), np.eye(3) * 0.01)]),
        r"body 'link2': mass must be positive",
    ),
    "not_a_rigid_body": (
        dict(links=[LINK, LinkInertia(1.0, np.zeros(3), np.diag([0.1, 0.1, 0.3]))]),
        r"body 'link2': principal moments .* violate the triangle inequality",
    ),
    "dh_frame_com_shape": (
        dict(inertia_frame="dh", links=[LINK, LinkInertia(1.0, np.zeros(2), np.eye(3) * 0.01)]),
        r"links\[1\] \('link2'\) com must have shape \(3,\)",
    ),
    "dh_frame_inertia_shape": (
        dict(inertia_frame="dh", links=[LinkInertia(1.0, np.zeros(3), np.eye(2)), LINK]),
        r"links\[0\] \('link1'\) inertia must have shape \(3, 3\)",
    ),
    "dh_frame_asymmetric_inertia": (
        dict(
            inertia_frame="dh",
            links=[LINK, LinkInertia(1.0, np.zeros(3), [[0.1, 0.01, 0], [0, 0.1, 0], [0, 0, 0.1]])],
        ),
        r"body 'link2': inertia is not symmetric",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_dh_input_raises_a_clear_value_error(case):
    kw, match = BAD[case]
    args = dict(rows=ROWS, links=[LINK, LINK]) | kw
    rows, links = args.pop("rows"), args.pop("links")
    with pytest.raises(ValueError, match=match):
        arm_from_dh(rows, links, **args)


def test_rows_may_be_any_iterable():
    """A generator of rows is still a table (as before the sequence check)."""
    ref = arm_from_dh(ROWS, [LINK, LINK])
    model = arm_from_dh((r for r in ROWS), iter([LINK, LINK]))
    q = np.array([0.3, -0.2])
    assert np.abs(pose(model, q, "flange") - pose(ref, q, "flange")).max() == 0.0
