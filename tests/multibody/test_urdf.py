"""The URDF builder: ordering, placements and merged mass properties against Pinocchio's own
URDF parser (``pin.buildModelFromXML``), conventions against scipy, and every validation error.
"""

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from dqspace.dq import dq_from_quat_translation, rotation_matrix_from_dq, transform_from_dq
from dqspace.multibody import (
    Frame,
    JointType,
    frame_jacobian,
    frame_pose,
    inverse_dynamics,
    mass_matrix,
    model_from_urdf,
)
from support.pin_compare import pin_model_from_urdf, rel_err
from support.random_trees import random_trees

INERTIAL = (
    '<inertial><mass value="1.5"/>'
    '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>'
)
LIMIT = '<limit effort="1" velocity="1" lower="-1" upper="1"/>'


def link(name, inertial=INERTIAL):
    return f'<link name="{name}">{inertial}</link>'


def joint(name, parent, child, kind="revolute", extra='<axis xyz="0 0 1"/>'):
    limit = LIMIT if kind in ("revolute", "prismatic") else ""
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f"{extra}{limit}</joint>"
    )


def robot(*elements):
    return '<robot name="r">' + "".join(elements) + "</robot>"


def two_links(**kw):
    return robot(link("a"), link("b"), joint("j", "a", "b", **kw))


TREES = random_trees(seed=5, count=12)


# --------------------------------------------------------------- against Pinocchio


def _body_of_pin_joint(floating):
    """dqspace body index of Pinocchio joint i (the documented mapping; universe -> -1 or 0)."""
    return (lambda i: i - 1) if floating else (lambda i: i)


@pytest.mark.parametrize("tree", TREES, ids=[f"tree{i}" for i in range(len(TREES))])
def test_joint_order_and_placements_match_pinocchio(tree):
    """Joint i of dqspace is Pinocchio's joint i+1 (floating) or i (fixed root = universe)."""
    model = model_from_urdf(tree.xml, floating=tree.floating)
    pm = pin_model_from_urdf(tree.xml, tree.floating, np.zeros(3))
    body = _body_of_pin_joint(tree.floating)
    assert (model.nq, model.nv) == (pm.nq + tree.floating, pm.nv)  # dq has 8, pin's ff 7
    assert model.nb == pm.njoints - tree.floating
    for i in range(1, pm.njoints):
        k = body(i)
        assert model.joint_names[k] == pm.names[i]
        assert model.parent[k] == body(pm.parents[i])
        assert int(model.v_index[k]) == pm.idx_vs[i]
        T = transform_from_dq(model.joint_placement[k])
        assert rel_err(T, pm.jointPlacements[i].homogeneous) < 1e-14
    assert model.joint_type[0] == (JointType.FREE if tree.floating else JointType.FIXED)


@pytest.mark.parametrize("tree", TREES, ids=[f"tree{i}" for i in range(len(TREES))])
def test_merged_mass_properties_match_pinocchio(tree):
    """Fixed-joint links merged into their body as Pinocchio does (fixed root: the universe)."""
    model = model_from_urdf(tree.xml, floating=tree.floating)
    pm = pin_model_from_urdf(tree.xml, tree.floating, np.zeros(3))
    body = _body_of_pin_joint(tree.floating)
    first = 1 if tree.floating else 0
    assert pm.njoints - first == model.nb
    for i in range(first, pm.njoints):
        k = body(i)
        Y = pm.inertias[i]
        assert abs(model.mass[k] - Y.mass) <= 1e-14 * Y.mass
        assert np.linalg.norm(model.com[k] - Y.lever) <= 1e-14 * max(1.0, np.linalg.norm(Y.lever))
        assert rel_err(model.inertia_com[k], Y.inertia) < 1e-13


@pytest.mark.parametrize("tree", TREES, ids=[f"tree{i}" for i in range(len(TREES))])
def test_link_frames_match_pinocchio_body_frames(tree):
    """Every link (merged ones included) is a named frame, placed as Pinocchio's BODY frame."""
    model = model_from_urdf(tree.xml, floating=tree.floating)
    pm = pin_model_from_urdf(tree.xml, tree.floating, np.zeros(3))
    body = _body_of_pin_joint(tree.floating)
    pin_links = [f.name for f in pm.frames if f.type == pin.FrameType.BODY]
    assert [f.name for f in model.frames] == pin_links  # same depth-first order
    for f in model.frames:
        pf = pm.frames[pm.getFrameId(f.name, pin.FrameType.BODY)]
        assert f.body == body(pf.parentJoint)
        assert rel_err(transform_from_dq(f.placement), pf.placement.homogeneous) < 1e-14


def test_children_are_visited_in_joint_name_order():
    """urdfdom keeps a link's child joints in a std::map, so they are visited in the byte
    order of the joint names (uppercase first), not in declaration order; the moving joints
    below a fixed joint are visited where the fixed joint sits."""
    xml = robot(
        link("root"),
        link("a"),
        link("b"),
        link("c"),
        link("d"),
        link("e"),
        link("f"),
        link("g"),
        joint("zz", "root", "a"),
        joint("aa", "root", "b"),
        joint("mm", "a", "c"),
        joint("bb", "b", "d"),
        joint("cc", "root", "e", "fixed"),
        joint("B", "e", "f"),
        joint("Ab", "root", "g"),
    )
    model = model_from_urdf(xml)
    # root's children in byte order: Ab (g), aa (b), cc (e, fixed), zz (a)
    assert model.joint_names[1:] == ("Ab", "aa", "bb", "B", "zz", "mm")
    assert model.body_names == ("root", "g", "b", "d", "f", "a", "c")
    assert [f.name for f in model.frames] == ["root", "g", "b", "d", "e", "f", "a", "c"]
    assert model.parent.tolist() == [-1, 0, 0, 2, 0, 0, 5]
    pm = pin.buildModelFromXML(xml)
    assert tuple(pm.names[1:]) == model.joint_names[1:]


# ------------------------------------------------------------------- conventions


def test_joint_origin_rpy_is_fixed_axis_xyz():
    """URDF rpy: R = Rz(y) Ry(p) Rx(r) (scipy's extrinsic 'xyz'); xyz is the position."""
    rpy, xyz = [0.3, -1.1, 2.4], [0.1, -0.2, 0.3]
    extra = f'<origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>'
    model = model_from_urdf(two_links(extra=extra + '<axis xyz="0 0 1"/>'))
    T = transform_from_dq(model.joint_placement[1])
    R_ref = Rotation.from_euler("xyz", rpy).as_matrix()
    np.testing.assert_allclose(T[:3, :3], R_ref, atol=1e-15)
    np.testing.assert_allclose(T[:3, 3], xyz, atol=1e-15)


def test_inertial_origin_places_com_and_rotates_inertia():
    """com = inertial xyz; the tensor (about the CoM, inertial axes) becomes R J R^T."""
    rpy, com = [0.4, 0.2, -0.9], [0.05, -0.02, 0.1]
    J = np.array([[0.02, 0.001, -0.002], [0.001, 0.03, 0.003], [-0.002, 0.003, 0.04]])
    ine = (
        f'<inertial><origin xyz="{com[0]} {com[1]} {com[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>'
        f'<mass value="2.5"/><inertia ixx="{J[0, 0]}" ixy="{J[0, 1]}" ixz="{J[0, 2]}" '
        f'iyy="{J[1, 1]}" iyz="{J[1, 2]}" izz="{J[2, 2]}"/></inertial>'
    )
    model = model_from_urdf(robot(link("a", ine)))
    R = Rotation.from_euler("xyz", rpy).as_matrix()
    assert model.mass[0] == 2.5
    np.testing.assert_allclose(model.com[0], com, atol=1e-16)
    np.testing.assert_allclose(model.inertia_com[0], R @ J @ R.T, atol=1e-16)


def test_fixed_joint_merge_by_parallel_axis_theorem():
    """Two point-like masses fixed 1 m apart: m = 3, CoM at 1/3, inertia m1 m2/m d^2 across."""
    tiny = '<inertia ixx="1e-6" ixy="0" ixz="0" iyy="1e-6" iyz="0" izz="1e-6"/>'
    xml = robot(
        link("a", f'<inertial><mass value="2"/>{tiny}</inertial>'),
        link("b", f'<inertial><mass value="1"/>{tiny}</inertial>'),
        joint("j", "a", "b", "fixed", '<origin xyz="1 0 0"/>'),
    )
    model = model_from_urdf(xml, floating=True)
    assert model.nb == 1 and model.mass[0] == 3.0
    np.testing.assert_allclose(model.com[0], [1 / 3, 0, 0], atol=1e-16)
    np.testing.assert_allclose(
        model.inertia_com[0], np.diag([2e-6, 2e-6 + 2 / 3, 2e-6 + 2 / 3]), atol=1e-15
    )
    np.testing.assert_allclose(transform_from_dq(model.frames[1].placement)[:3, 3], [1, 0, 0])


def test_default_axis_is_x():
    model = model_from_urdf(two_links(extra=""))
    np.testing.assert_array_equal(model.joint_axis[1], [1.0, 0.0, 0.0])


def test_prismatic_joint_slides_along_its_axis():
    model = model_from_urdf(two_links(kind="prismatic", extra='<axis xyz="0 1 0"/>'))
    assert model.joint_type[1] == JointType.PRISMATIC
    q = np.array([0.7])
    np.testing.assert_allclose(transform_from_dq(frame_pose(model, q, "b"))[:3, 3], [0, 0.7, 0])


def test_continuous_joint_matches_pinocchio_unbounded_revolute(rng):
    """continuous -> REVOLUTE; Pinocchio's RevoluteUnbounded stores [cos q, sin q]."""
    xml = robot(
        link("a"),
        link("b"),
        link("c"),
        joint("j1", "a", "b", "continuous", '<origin xyz="0 0 0.3"/><axis xyz="0 0.6 0.8"/>'),
        joint("j2", "b", "c", "revolute", '<origin xyz="0.2 0 0" rpy="0.1 0.2 0.3"/>'),
    )
    model = model_from_urdf(xml, gravity=[0, 0, -9.81])
    pm = pin.buildModelFromXML(xml)
    pd = pm.createData()
    assert model.joint_type[1] == JointType.REVOLUTE and pm.nq == 3
    for _ in range(10):
        q, v, a = rng.uniform(-3, 3, 2), rng.normal(size=2), rng.normal(size=2)
        qp = np.array([np.cos(q[0]), np.sin(q[0]), q[1]])
        assert rel_err(inverse_dynamics(model, q, v, a), pin.rnea(pm, pd, qp, v, a)) < 1e-13
        Mp = pin.crba(pm, pd, qp)
        assert rel_err(mass_matrix(model, q), np.triu(Mp) + np.triu(Mp, 1).T) < 1e-13


def test_massless_fixed_link_is_a_frame():
    """A link without <inertial> fixed to a body adds no mass and is a named frame."""
    xml = robot(
        link("a"),
        link("b"),
        link("tool", ""),
        joint("j", "a", "b"),
        joint("f", "b", "tool", "fixed", '<origin xyz="0 0 0.5"/>'),
    )
    model = model_from_urdf(xml)
    assert model.nb == 2 and model.mass[1] == 1.5
    q = np.array([0.3])
    J = frame_jacobian(model, q, "tool")
    assert J.shape == (6, 1)
    np.testing.assert_allclose(transform_from_dq(frame_pose(model, q, "tool"))[:3, 3], [0, 0, 0.5])


def test_moving_link_without_inertial_gets_the_mass_fixed_to_it():
    """A moving link with no <inertial> is a valid body if a massive link is fixed to it."""
    xml = robot(
        link("a"), link("b", ""), link("c"), joint("j", "a", "b"), joint("f", "b", "c", "fixed")
    )
    model = model_from_urdf(xml)
    assert model.nb == 2 and model.mass[1] == 1.5 and model.body_names[1] == "b"


def test_all_fixed_tree_has_no_degree_of_freedom():
    xml = robot(link("a"), link("b"), joint("f", "a", "b", "fixed", '<origin xyz="1 0 0"/>'))
    model = model_from_urdf(xml)
    assert (model.nb, model.nq, model.nv) == (1, 0, 0) and model.mass[0] == 3.0
    assert mass_matrix(model, np.zeros(0)).shape == (0, 0)
    np.testing.assert_allclose(transform_from_dq(frame_pose(model, [], "b"))[:3, 3], [1, 0, 0])


def test_root_joint_name_and_floating_base():
    model = model_from_urdf(two_links(), floating=True, root_name="base_joint")
    assert model.floating and model.joint_names[0] == "base_joint"
    assert (model.nq, model.nv) == (9, 7)
    assert model_from_urdf(two_links()).joint_names[0] == "root_joint"


def test_extra_frames_on_merged_links():
    xml = robot(
        link("a"),
        link("b"),
        link("c"),
        joint("j", "a", "b"),
        joint("f", "b", "c", "fixed", '<origin xyz="0 0 0.5" rpy="0 0 1.5707963267948966"/>'),
    )
    offset = dq_from_quat_translation([1, 0, 0, 0], [0.1, 0, 0])
    model = model_from_urdf(xml, frames=[Frame("tip", "c", offset), Frame("on_b", "b", offset)])
    q = np.array([0.0])
    np.testing.assert_allclose(
        transform_from_dq(frame_pose(model, q, "tip"))[:3, 3], [0, 0.1, 0.5], atol=1e-15
    )
    np.testing.assert_allclose(transform_from_dq(frame_pose(model, q, "on_b"))[:3, 3], [0.1, 0, 0])


def test_gravity_argument():
    model = model_from_urdf(two_links(), gravity=[0, 0, -9.81])
    np.testing.assert_array_equal(model.gravity, [0, 0, -9.81])
    assert np.all(model_from_urdf(two_links()).gravity == 0.0)  # free space by default


def test_reads_a_file_path(tmp_path):
    p = tmp_path / "r.urdf"
    p.write_text(two_links())
    for src in (p, str(p)):
        assert model_from_urdf(src).body_names == ("a", "b")
    assert model_from_urdf(two_links().encode()).body_names == ("a", "b")
    latin = tmp_path / "latin1.urdf"  # the XML declaration chooses the encoding
    xml = '<?xml version="1.0" encoding="ISO-8859-1"?>' + robot(link("bras_\u00e9"))
    latin.write_bytes(xml.encode("latin-1"))
    assert model_from_urdf(latin).body_names == ("bras_\u00e9",)


def test_axis_within_rounding_is_normalised_like_pinocchio():
    model = model_from_urdf(two_links(extra='<axis xyz="0 0.70710678118 0.70710678118"/>'))
    assert abs(np.linalg.norm(model.joint_axis[1]) - 1.0) < 1e-15


def test_rotation_of_merged_link_inertia():
    """A link fixed with a rotation contributes its inertia rotated into the body frame."""
    ine = (
        '<inertial><mass value="1"/>'
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial>'
    )
    xml = robot(
        link("a", ine),
        link("b", ine),
        joint("f", "a", "b", "fixed", '<origin rpy="0 0 1.5707963267948966"/>'),
    )
    model = model_from_urdf(xml)
    R = rotation_matrix_from_dq(model.frames[1].placement)
    J = np.diag([0.01, 0.02, 0.03])
    np.testing.assert_allclose(model.inertia_com[0], J + R @ J @ R.T, atol=1e-17)
    np.testing.assert_allclose(model.inertia_com[0], np.diag([0.03, 0.03, 0.06]), atol=1e-17)


# ----------------------------------------------------------------- validation errors


def _inertial(mass='<mass value="1"/>', inertia=None):
    inertia = (
        '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>' if inertia is None else inertia
    )
    return f"<inertial>{mass}{inertia}</inertial>"


ERRORS = {
    "malformed_xml": ("<robot><link name='a'></robot>", r"not well-formed URDF XML"),
    "not_a_robot": (
        "<model><link name='a'/></model>",
        r"root element must be <robot>, got <model>",
    ),
    "no_link": ("<robot name='r'/>", r"has no <link>"),
    "link_without_name": (robot("<link/>"), r"a <link> has no name"),
    "duplicate_link": (robot(link("a"), link("a")), r"link name 'a' appears more than once"),
    "duplicate_joint": (
        robot(link("a"), link("b"), link("c"), joint("j", "a", "b"), joint("j", "a", "c")),
        r"joint name 'j' appears more than once",
    ),
    "joint_without_name": (
        robot(
            link("a"), link("b"), '<joint type="fixed"><parent link="a"/><child link="b"/></joint>'
        ),
        r"a <joint> has no name",
    ),
    "joint_without_type": (
        robot(link("a"), link("b"), '<joint name="j"><parent link="a"/><child link="b"/></joint>'),
        r"joint 'j' has no type",
    ),
    "unknown_joint_type": (two_links(kind="spline"), r"joint 'j': unknown joint type 'spline'"),
    "floating_joint_type": (two_links(kind="floating"), r"joint 'j'.*'floating' is not supported"),
    "planar_joint_type": (two_links(kind="planar"), r"joint 'j'.*'planar' is not supported"),
    "missing_child": (
        robot(link("a"), '<joint name="j" type="fixed"><parent link="a"/></joint>'),
        r"joint 'j' needs <child link=...>",
    ),
    "unknown_link": (
        robot(link("a"), joint("j", "a", "ghost")),
        r"joint 'j': child link 'ghost' is not a <link>",
    ),
    "two_parents": (
        robot(link("a"), link("b"), link("c"), joint("j1", "a", "c"), joint("j2", "b", "c")),
        r"link 'c' is the child of several joints \('j1' and 'j2'\)",
    ),
    "several_roots": (robot(link("a"), link("b")), r"several root links \['a', 'b'\]"),
    "no_root_cycle": (
        robot(link("a"), link("b"), joint("j1", "a", "b"), joint("j2", "b", "a")),
        r"no root link.*cycle",
    ),
    "detached_cycle": (
        robot(link("r"), link("a"), link("b"), joint("j1", "a", "b"), joint("j2", "b", "a")),
        r"links \['a', 'b'\] are not connected to the root 'r'.*cycle",
    ),
    "non_numeric_origin": (
        two_links(extra='<origin xyz="0 zero 0"/>'),
        r"joint 'j' <origin xyz> must be 3 numbers, got '0 zero 0'",
    ),
    "wrong_count_origin": (
        two_links(extra='<origin rpy="0 1"/>'),
        r"joint 'j' <origin rpy> must be 3 numbers",
    ),
    "non_finite_origin": (
        two_links(extra='<origin xyz="0 nan 0"/>'),
        r"joint 'j' <origin xyz> must be finite",
    ),
    "non_unit_axis": (
        two_links(extra='<axis xyz="0 0.7071 0.7071"/>'),
        r"joint 'j': axis must be a unit vector, got \[0.0, 0.7071, 0.7071\] \(norm 0.99999",
    ),
    "zero_axis": (
        two_links(extra='<axis xyz="0 0 0"/>'),
        r"joint 'j': axis must be a unit vector, got \[0.0, 0.0, 0.0\] \(norm 0,",
    ),
    "inertial_without_mass": (
        robot(link("a", _inertial(mass=""))),
        r"link 'a': <inertial> needs <mass value=...>",
    ),
    "inertial_without_inertia": (
        robot(link("a", _inertial(inertia=""))),
        r"link 'a': <inertial> needs <inertia",
    ),
    "inertia_missing_attribute": (
        robot(link("a", _inertial(inertia='<inertia ixx="1" iyy="1" izz="1"/>'))),
        r"link 'a': <inertia> is missing the attribute\(s\) \['ixy', 'ixz', 'iyz'\]",
    ),
    "non_numeric_mass": (
        robot(link("a", _inertial(mass='<mass value="heavy"/>'))),
        r"link 'a': <mass value> must be 1 numbers, got 'heavy'",
    ),
    "zero_mass": (
        robot(link("a", _inertial(mass='<mass value="0"/>'))),
        r"link 'a': mass must be positive, got 0.0",
    ),
    "negative_mass": (
        robot(link("a", _inertial(mass='<mass value="-2"/>'))),
        r"link 'a': mass must be positive, got -2.0",
    ),
    "inertia_not_positive_definite": (
        robot(
            link(
                "a",
                _inertial(inertia='<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="-1"/>'),
            )
        ),
        r"URDF link 'a'.*not positive-definite",
    ),
    "inertia_triangle_inequality": (
        robot(
            link(
                "a", _inertial(inertia='<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="3"/>')
            )
        ),
        r"URDF link 'a'.*triangle inequality",
    ),
    "massless_body": (
        robot(link("a"), link("b", ""), joint("j", "a", "b")),
        r"link 'b' has no <inertial> and nothing fixed to it has mass",
    ),
    "massless_root": (
        robot(link("a", ""), link("b"), joint("j", "a", "b")),
        r"link 'a' has no <inertial>",
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_validation_error(case):
    xml, match = ERRORS[case]
    with pytest.raises(ValueError, match=match):
        model_from_urdf(xml)


def test_frame_on_unknown_link():
    with pytest.raises(
        ValueError, match=r"frame 'cam': no link named 'ghost'; links: \['a', 'b'\]"
    ):
        model_from_urdf(two_links(), frames=[Frame("cam", "ghost", np.r_[1.0, np.zeros(7)])])


def test_bad_source_type():
    with pytest.raises(ValueError, match=r"path_or_xml_string must be a path or a URDF string"):
        model_from_urdf(42)
