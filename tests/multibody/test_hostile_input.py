"""Hostile inputs found by a bad-input campaign, one test each: URDF text and numbers, DH
tables, model magnitudes, finite inputs whose dynamics overflow, step counts of the
simulators, and strided arrays at every public entry point.  Each bad input raises a
ValueError naming it; each good one gives the result of an independent computation.
"""

import dataclasses

import numpy as np
import pytest

import dqspace.multibody as mb
from dqspace.dq import dq_from_translation, dq_identity, translation_from_dq
from dqspace.multibody import DHRow, LinkInertia, arm_from_dh, model_from_urdf, models

PAPER = models.space_manipulator()
RNG = np.random.default_rng(7)
Q = PAPER.random_configuration(RNG)
V = RNG.normal(size=PAPER.nv)
TAU = RNG.normal(size=PAPER.nv)
FEXT = RNG.normal(size=(PAPER.nb, 6))

INERTIAL = (
    '<inertial><mass value="1.5"/>'
    '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>'
)


def urdf(origin="0 0 0", mass="1.5", ixx="0.02", com="0 0 0"):
    inertial = (
        f'<inertial><origin xyz="{com}"/><mass value="{mass}"/>'
        f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>'
    )
    return (
        f'<robot name="r"><link name="a">{INERTIAL}</link><link name="b">{inertial}</link>'
        f'<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
        f'<origin xyz="{origin}"/><axis xyz="0 0 1"/></joint></robot>'
    )


# ------------------------------------------------------------------------------ URDF


@pytest.mark.parametrize(
    "lead",
    ["\ufeff", "\ufeff  \n", " \n\t"],
    ids=["bom", "bom_and_space", "space"],
)
@pytest.mark.parametrize("declaration", ["", '<?xml version="1.0" encoding="utf-8"?>\n'])
def test_urdf_text_after_a_byte_order_mark_or_space_is_xml(lead, declaration, tmp_path):
    """Was: a string starting with a BOM was opened as a file path (FileNotFoundError)."""
    text = declaration + urdf("0.25 0 0")
    model = model_from_urdf(lead + text)
    assert np.allclose(translation_from_dq(model.joint_placement[1]), [0.25, 0.0, 0.0])
    path = tmp_path / "r.urdf"
    path.write_bytes((lead + text).encode("utf-8"))
    for source in ((lead + text).encode("utf-8"), path, str(path)):
        assert np.array_equal(model_from_urdf(source).joint_placement, model.joint_placement)


def test_urdf_string_that_is_neither_xml_nor_a_file():
    with pytest.raises(ValueError, match=r"neither a file nor URDF text"):
        model_from_urdf("robot: " + urdf())


@pytest.mark.parametrize(
    "token", ["1_0", "0x1", "\u0661", "1e", ".", "--1", "1.0.0", "1,5", "1e+", "e3"]
)
def test_urdf_numbers_must_be_plain_decimal(token):
    """Was: ``1_0`` read as 10 (Python's float accepts ``_`` and non-ASCII digits)."""
    with pytest.raises(ValueError, match=r"joint 'j' <origin xyz> must be 3 numbers, got "):
        model_from_urdf(urdf(f"{token} 0 0"))


@pytest.mark.parametrize(
    "token, value",
    [("1.", 1.0), (".5", 0.5), ("+2.5e-1", 0.25), ("-3E+2", -300.0), ("007", 7.0)],
)
def test_urdf_plain_number_forms_are_read(token, value):
    model = model_from_urdf(urdf(f"{token} 0 0"))
    assert translation_from_dq(model.joint_placement[1])[0] == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("token", ["nan", "-inf", "Infinity", "1e400"])
def test_urdf_non_finite_numbers(token):
    with pytest.raises(ValueError, match=r"joint 'j' <origin xyz> must be finite"):
        model_from_urdf(urdf(f"0 {token} 0"))


URDF_MAGNITUDES = {
    "joint_origin_1e300": (
        dict(origin="1e300 0 0"),
        r"joint 'j' <origin xyz> is 1e\+300 m long, beyond the 1e\+06 m",
    ),
    "joint_origin_norm": (
        dict(origin="6e5 6e5 6e5"),
        r"joint 'j' <origin xyz> is 1\.03923e\+06 m long",
    ),
    "inertial_origin": (
        dict(com="0 0 -2e6"),
        r"link 'b': <inertial> <origin xyz> is 2e\+06 m long",
    ),
    "huge_mass": (dict(mass="1e15"), r"link 'b'.*mass 1e\+15 kg is outside the accepted range"),
    "tiny_mass": (dict(mass="1e-20"), r"link 'b'.*mass 1e-20 kg is outside the accepted range"),
    "huge_inertia": (
        dict(ixx="1e30"),
        r"link 'b'.*principal moments of inertia .* outside the accepted range",
    ),
}


@pytest.mark.parametrize("case", list(URDF_MAGNITUDES))
def test_urdf_absurd_magnitudes_are_refused_at_build(case):
    """Was: an origin of 1e300 built a model whose dynamics returned NaN."""
    kw, match = URDF_MAGNITUDES[case]
    with pytest.raises(ValueError, match=match):
        model_from_urdf(urdf(**kw))


def test_urdf_magnitudes_just_inside_the_limits_build():
    model = model_from_urdf(urdf(origin="9.9e5 0 0", com="0 0 -9e5"))
    assert translation_from_dq(model.joint_placement[1])[0] == 9.9e5
    assert model.com[1][2] == -9e5


# ------------------------------------------------------------ model magnitudes (any builder)

BODIES = PAPER.bodies()


def _built_with(k, **changes):
    bodies = list(BODIES)
    if "joint" in changes:
        changes["joint"] = dataclasses.replace(bodies[k].joint, **changes["joint"])
    bodies[k] = dataclasses.replace(bodies[k], **changes)
    return mb.Model.build(bodies)


MODEL_MAGNITUDES = {
    "placement": (
        lambda: _built_with(3, joint=dict(placement=dq_from_translation([0.0, 2e6, 0.0]))),
        r"body 'link3': joint placement translation is 2e\+06 m long",
    ),
    "com": (
        lambda: _built_with(2, com=np.array([1e7, 0.0, 0.0])),
        r"body 'link2': com is 1e\+07 m long",
    ),
    "mass": (lambda: _built_with(4, mass=1e13), r"body 'link4': mass 1e\+13 kg is outside"),
    "inertia_small": (
        lambda: _built_with(5, inertia=1e-40 * np.eye(3)),
        r"body 'link5': principal moments of inertia \[1e-40",
    ),
    "frame": (
        lambda: PAPER.with_frames([mb.Frame("far", 1, dq_from_translation([0.0, 0.0, 5e6]))]),
        r"frame 'far' placement translation is 5e\+06 m long",
    ),
    "gravity": (lambda: PAPER.with_gravity([0.0, 0.0, -1e7]), r"gravity .* larger than"),
    "mass_string": (
        lambda: _built_with(4, mass="1_0"),
        r"body 'link4': mass must hold real numbers, got values of type <U3",
    ),
    "com_complex": (
        lambda: _built_with(4, com=np.array([0.0, 0.0, 1j])),
        r"body 'link4': com must hold real numbers, got values of type complex128",
    ),
    "gravity_1e300": (lambda: PAPER.with_gravity([1e300, 1e300, 0.0]), r"gravity .* larger"),
}


@pytest.mark.parametrize("case", list(MODEL_MAGNITUDES))
def test_model_refuses_absurd_magnitudes(case):
    call, match = MODEL_MAGNITUDES[case]
    with pytest.raises(ValueError, match=match):
        call()


# -------------------------------------------------------------------------------- DH

LINK = LinkInertia(1.0, np.array([0.0, 0.0, 0.05]), np.diag([0.01, 0.01, 0.005]))

DH_ERRORS = {
    "empty_table": (dict(rows=[], links=[]), r"the DH table is empty"),
    "two_values": (
        dict(rows=[(0.1, 0.2, 0.0), (0.1, 0.2)]),
        r"DH row 1 \('link2'\): must have 3 or 4 values",
    ),
    "six_values": (
        dict(rows=[(0.1, 0.2, 0.0, 0.0, False, 1.0), (0.1, 0.2, 0.0)]),
        r"DH row 0 \('link1'\): must have 3 or 4 values",
    ),
    "not_a_sequence": (dict(rows=[(0.1, 0.2, 0.0), 3.0]), r"DH row 1 \('link2'\): must be a"),
    "names_shorter": (
        dict(names=["shoulder"]),
        r"names has 1 entries for 2 DH rows: DH row 1 has no name",
    ),
    "names_longer": (dict(names=["a", "b", "c"]), r"names has 3 entries for 2 DH rows"),
    "name_not_a_string": (dict(names=["a", 7]), r"DH row 1: its name must be a non-empty"),
    "complex_alpha": (
        dict(rows=[(0.1, 0.2, 0.3 + 1j), (0.1, 0.2, 0.0)], names=["up", "fore"]),
        r"DH row 0 \('up'\): alpha must be a finite real number, got \(0\.3\+1j\)",
    ),
    "nan_entry": (
        dict(rows=[(0.1, 0.2, 0.0), DHRow(0.1, float("nan"), 0.0)]),
        r"DH row 1 \('link2'\): d must be a finite real number, got nan",
    ),
    "inf_theta0": (
        dict(rows=[(0.1, 0.2, 0.0, np.inf), (0.1, 0.2, 0.0)]),
        r"DH row 0 \('link1'\): theta0 must be a finite real number, got inf",
    ),
    "string_entry": (
        dict(rows=[(0.1, "0.2", 0.0), (0.1, 0.2, 0.0)]),
        r"DH row 0 \('link1'\): d must be a finite real number, got '0.2'",
    ),
    "bool_entry": (
        dict(rows=[(0.1, 0.2, 0.0), (True, 0.2, 0.0)]),
        r"DH row 1 \('link2'\): a must be a finite real number, got True",
    ),
    "prismatic_not_bool": (
        dict(rows=[(0.1, 0.2, 0.0, 0.0, "yes"), (0.1, 0.2, 0.0)]),
        r"DH row 0 \('link1'\): prismatic must be True or False",
    ),
    "huge_length": (
        dict(rows=[(0.1, 0.2, 0.0), (1e300, 0.2, 0.0)]),
        r"DH row 1 \('link2'\): \|a\| = 1e\+300 m is beyond the 1e\+06 m",
    ),
    "link_not_an_inertia": (
        dict(links=[LINK, (1.0, np.zeros(3), np.eye(3))]),
        r"links\[1\] \('link2'\) must be a LinkInertia, got tuple",
    ),
    "rows_and_links_differ": (dict(links=[LINK]), r"2 DH rows but 1 link inertias"),
    "mount_not_unit": (dict(mount=2.0 * dq_identity()), r"mount is not a unit dual quaternion"),
}


@pytest.mark.parametrize("case", list(DH_ERRORS))
def test_dh_table_errors_name_the_row(case):
    """Was: IndexError / TypeError, or a message naming an internal argument."""
    kw, match = DH_ERRORS[case]
    args = dict(rows=[(0.1, 0.2, 0.0), (0.1, 0.2, 0.0)], links=[LINK, LINK]) | kw
    rows, links = args.pop("rows"), args.pop("links")
    with pytest.raises(ValueError, match=match):
        arm_from_dh(rows, links, **args)


@pytest.mark.parametrize(
    "args, match",
    [
        (("1_0", [1, 1, 1, 0, 0, 0], [0, 0, 0]), r"LinkInertia mass must hold real numbers"),
        ((1.0, [1, 1, 1, 0, 0], [0, 0, 0]), r"LinkInertia inertia6 must have shape \(6,\)"),
        ((1.0, [1, 1, 1, 0, 0, 0], [0, 0, 1j]), r"LinkInertia com must hold real numbers"),
    ],
)
def test_link_inertia_from_table_refuses_what_is_not_real_numbers(args, match):
    with pytest.raises(ValueError, match=match):
        LinkInertia.from_table(*args)


def test_dh_rows_of_any_real_type_give_the_same_arm():
    """DHRow, tuples, numpy rows and numpy scalars are one table."""
    ref = arm_from_dh(models.IIWA_DH, models.IIWA_LINKS)
    table = np.array([[r.a, r.d, r.alpha, r.theta0] for r in models.IIWA_DH])
    for rows in (table, [tuple(r) for r in table.tolist()], list(table.astype(np.float32))):
        m = arm_from_dh(rows, models.IIWA_LINKS)
        np.testing.assert_allclose(m.joint_placement, ref.joint_placement, atol=1e-7)


# ------------------------------------------------------------ overflow in the dynamics

PRISMATIC = arm_from_dh(  # a slide perpendicular to the revolute axis
    [DHRow(0.0, 0.1, np.pi / 2), DHRow(0.2, 0.0, 0.0, prismatic=True)], [LINK, LINK]
)
QP = np.array([0.3, 1e200])  # a 1e200 m slide: finite, but m r^2 overflows
HUGE_V = np.full(PAPER.nv, 1e160)
HUGE = np.full(PAPER.nv, 1e308)
HUGE_F = np.full((PAPER.nb, 6), 1e308)
MASK = np.r_[np.zeros(6, bool), np.ones(PAPER.nv - 6, bool)]

OVERFLOWS = {
    "forward_dynamics-v": (lambda: mb.forward_dynamics(PAPER, Q, HUGE_V, TAU), "v"),
    "forward_dynamics-tau": (lambda: mb.forward_dynamics(PAPER, Q, V, HUGE), "tau"),
    "forward_dynamics-f_ext": (lambda: mb.forward_dynamics(PAPER, Q, V, TAU, HUGE_F), "f_ext"),
    "forward_dynamics_matrix-v": (
        lambda: mb.forward_dynamics(PAPER, Q, HUGE_V, TAU, method="matrix"),
        "v",
    ),
    "forward_dynamics_matrix-tau": (
        lambda: mb.forward_dynamics(PAPER, Q, V, HUGE, FEXT, method="matrix"),
        "tau",
    ),
    "forward_dynamics_aba_wrenches": (
        lambda: mb.forward_dynamics_aba(PAPER, Q, HUGE_V, TAU, return_constraint_wrenches=True),
        "v",
    ),
    "inverse_dynamics-v": (lambda: mb.inverse_dynamics(PAPER, Q, HUGE_V, TAU), "v"),
    "inverse_dynamics-a": (lambda: mb.inverse_dynamics(PAPER, Q, V, HUGE, FEXT), "a"),
    "bias_forces-v": (lambda: mb.bias_forces(PAPER, Q, HUGE_V), "v"),
    "joint_wrenches-a": (lambda: mb.joint_wrenches(PAPER, Q, V, HUGE), "a"),
    "constraint_wrenches-v": (lambda: mb.constraint_wrenches(PAPER, Q, HUGE_V, TAU), "v"),
    "mixed_dynamics-tau_free": (
        lambda: mb.mixed_dynamics(PAPER, Q, V, prescribed=MASK, tau_free=HUGE[:6]),
        "tau_free",
    ),
    "mixed_dynamics-v": (lambda: mb.mixed_dynamics(PAPER, Q, HUGE_V, prescribed=MASK), "v"),
    "free_floating_inverse_dynamics-a_joints": (
        lambda: mb.free_floating_inverse_dynamics(PAPER, Q, V, HUGE[6:]),
        "a_joints",
    ),
    "state_derivative-v": (lambda: mb.state_derivative(PAPER, Q, HUGE_V, TAU), "v"),
    "mass_matrix-q": (lambda: mb.mass_matrix(PRISMATIC, QP), r"q \(prismatic\)"),
    "forward_dynamics-q": (
        lambda: mb.forward_dynamics(PRISMATIC, QP, np.ones(2), np.ones(2)),
        r"q \(prismatic\)",
    ),
    "forward_dynamics_matrix-q": (
        lambda: mb.forward_dynamics(PRISMATIC, QP, np.ones(2), np.ones(2), method="matrix"),
        r"q \(prismatic\)",
    ),
    "mixed_dynamics-q": (
        lambda: mb.mixed_dynamics(PRISMATIC, QP, np.ones(2), prescribed=[True, False]),
        r"q \(prismatic\)",
    ),
    "inverse_dynamics-q": (
        lambda: mb.inverse_dynamics(PRISMATIC, QP, np.ones(2), np.ones(2)),
        r"q \(prismatic\)",
    ),
    "integrate-v": (lambda: mb.integrate(PAPER, Q, HUGE, 10.0), "v"),
    "forward_dynamics_batch-V": (
        lambda: mb.forward_dynamics_batch(PAPER, [Q, Q], [V, HUGE_V], [TAU, TAU]),
        r"V\[1\]",
    ),
    "inverse_dynamics_batch-A": (
        lambda: mb.inverse_dynamics_batch(PAPER, [Q, Q], [V, V], [TAU, HUGE]),
        r"A\[1\]",
    ),
}


@pytest.mark.parametrize("case", list(OVERFLOWS))
def test_finite_inputs_that_overflow_raise_naming_the_input(case):
    """Was: NaN returned silently for v = 1e160, tau = 1e308, ..."""
    call, name = OVERFLOWS[case]
    with pytest.raises(ValueError, match=rf"not finite \(float64 overflow\).* {name} is too large"):
        call()


def test_large_inputs_that_do_not_overflow_are_accepted():
    """Bias forces without gravity are quadratic in v: C(q, s v) = s^2 C(q, v) for s = 1e100."""
    s = 1e100
    c1 = mb.bias_forces(PAPER, Q, V)
    cs = mb.bias_forces(PAPER, Q, s * V)
    np.testing.assert_allclose(cs / s**2, c1, rtol=1e-12, atol=1e-12 * np.abs(c1).max())
    a = mb.forward_dynamics(PAPER, Q, np.zeros(PAPER.nv), 1e200 * TAU)
    np.testing.assert_allclose(a / 1e200, mb.forward_dynamics(PAPER, Q, np.zeros(13), TAU))


# ------------------------------------------------------------------- step counts and dt

Q0, V0 = PAPER.neutral_configuration(), 0.1 * V


def _compiled(**kw):
    return mb.simulate_compiled(PAPER, Q0, V0, **({"dt": 1e-3, "n_steps": 4} | kw))


def _batch(**kw):
    return mb.simulate_batch(PAPER, [Q0], [V0], **({"dt": 1e-3, "n_steps": 4} | kw))


def _rk4(**kw):
    return mb.simulate_rk4(PAPER, Q0, V0, **({"dt": 1e-3, "n_steps": 4} | kw))


SIMULATORS = {"simulate_compiled": _compiled, "simulate_batch": _batch, "simulate_rk4": _rk4}
BAD_COUNTS = [-5, 0, 2.7, 4.0, True, "4", None, np.float64(4.0)]


@pytest.mark.parametrize("sim", list(SIMULATORS))
@pytest.mark.parametrize("key", ["n_steps", "record_every"])
@pytest.mark.parametrize("value", BAD_COUNTS, ids=[repr(x) for x in BAD_COUNTS])
def test_step_counts_must_be_positive_integers(sim, key, value):
    """Was: simulate_compiled(n_steps=-5) returned 1 sample, n_steps=2.7 ran 2 steps."""
    with pytest.raises(ValueError, match=rf"{key} must be a positive integer, got "):
        SIMULATORS[sim](**{key: value})


@pytest.mark.parametrize("sim", list(SIMULATORS))
@pytest.mark.parametrize("dt", [0.0, -1e-3, np.nan, np.inf, "1e-3"])
def test_dt_must_be_positive_and_finite(sim, dt):
    with pytest.raises(ValueError, match=r"dt must be (positive and finite|a number)"):
        SIMULATORS[sim](dt=dt)


@pytest.mark.parametrize("sim", ["simulate_compiled", "simulate_batch"])
def test_n_steps_must_be_a_multiple_of_record_every(sim):
    with pytest.raises(ValueError, match=r"n_steps \(5\) must be a multiple of record_every \(2\)"):
        SIMULATORS[sim](n_steps=5, record_every=2)


@pytest.mark.parametrize("sim", list(SIMULATORS))
def test_numpy_integer_step_counts_are_accepted(sim):
    """n_steps = 4 recorded every 2: the initial state and 2 records, at t = 0, 2 dt, 4 dt."""
    tr = SIMULATORS[sim](n_steps=np.int64(4), record_every=np.int32(2))
    np.testing.assert_allclose(tr.t, [0.0, 2e-3, 4e-3], rtol=1e-12)


COMPILED_ERRORS = {
    "t0": (dict(t0=np.nan), r"t0 must be finite"),
    "hook_every": (
        dict(hook=lambda *a: None, hook_every=0),
        r"hook_every must be a positive integer",
    ),
    "hook_not_callable": (dict(hook=3), r"hook must be callable"),
    "params_2d": (dict(params=np.zeros((2, 2))), r"params must have 1 dimension"),
    "params_nan": (dict(params=[0.0, np.nan]), r"params\[1\] is not finite"),
}


@pytest.mark.parametrize("case", list(COMPILED_ERRORS))
def test_simulate_compiled_argument_errors(case):
    kw, match = COMPILED_ERRORS[case]
    with pytest.raises(ValueError, match=match):
        _compiled(**kw)


def test_callback_memory_must_be_writable():
    mem = np.zeros(2)
    mem.setflags(write=False)
    with pytest.raises(ValueError, match=r"mem must be a C-contiguous, writable float64"):
        _compiled(mem=mem)
    with pytest.raises(ValueError, match=r"mem must have shape \(1, M\), got \(2,\)"):
        _batch(mem=np.zeros(2))


# ------------------------------------------------------------------------ strided arrays


def _strided(x):
    """A non-contiguous view with the values of x (every other element of a larger array)."""
    x = np.asarray(x, dtype=np.float64)
    big = np.zeros((*x.shape[:-1], 2 * x.shape[-1]))
    big[..., ::2] = x
    view = big[..., ::2]
    assert not view.flags.c_contiguous and np.array_equal(view, x)
    return view


STRIDED_CALLS = {
    "rk4_step": lambda q, v, t, f: mb.rk4_step(PAPER, q, v, 1e-3, (t, f)),
    "simulate_compiled": lambda q, v, t, f: mb.simulate_compiled(PAPER, q, v, dt=1e-3, n_steps=3).q,
    "simulate_rk4": lambda q, v, t, f: mb.simulate_rk4(PAPER, q, v, dt=1e-3, n_steps=2).v,
    "forward_dynamics": lambda q, v, t, f: mb.forward_dynamics(PAPER, q, v, t, f),
    "forward_dynamics_matrix": lambda q, v, t, f: mb.forward_dynamics(
        PAPER, q, v, t, f, method="matrix"
    ),
    "inverse_dynamics": lambda q, v, t, f: mb.inverse_dynamics(PAPER, q, v, t, f),
    "mass_matrix": lambda q, v, t, f: mb.mass_matrix(PAPER, q),
    "constraint_wrenches": lambda q, v, t, f: mb.constraint_wrenches(PAPER, q, v, t, f).wrench,
    "mixed_dynamics": lambda q, v, t, f: (
        mb.mixed_dynamics(PAPER, q, v, prescribed=MASK, a_prescribed=t, f_ext=f).tau
    ),
    "free_floating_inverse_dynamics": lambda q, v, t, f: (
        mb.free_floating_inverse_dynamics(PAPER, q, v, t[6:], f).a
    ),
    "integrate": lambda q, v, t, f: mb.integrate(PAPER, q, v, 0.1),
    "frame_jacobian": lambda q, v, t, f: mb.frame_jacobian(PAPER, q, "ee"),
    "momentum": lambda q, v, t, f: mb.momentum(PAPER, q, v).linear,
    "forward_dynamics_batch": lambda q, v, t, f: mb.forward_dynamics_batch(
        PAPER, q[None], v[None], t[None]
    ),
    "simulate_batch": lambda q, v, t, f: (
        mb.simulate_batch(
            PAPER, np.stack([q, q], axis=1).T, np.stack([v, v], axis=1).T, dt=1e-3, n_steps=2
        ).q
    ),
}


@pytest.mark.parametrize("entry", list(STRIDED_CALLS))
def test_strided_arrays_are_accepted_and_give_the_contiguous_result(entry):
    """Was: rk4_step raised numba's TypeError (no matching definition) on strided arrays."""
    call = STRIDED_CALLS[entry]
    args = (Q, 0.1 * V, TAU, FEXT)
    expected = call(*args)
    strided = tuple(_strided(x) for x in args)
    result = call(*strided)
    if isinstance(expected, tuple):  # rk4_step: (q, v)
        expected, result = np.concatenate(expected), np.concatenate(result)
    np.testing.assert_array_equal(result, expected)


# ------------------------------------------------------------- state arrays that are not real

NOT_REAL = {
    "complex": V.astype(complex) + 1j,
    "strings": [str(x) for x in V],
    "underscore_strings": ["1_0"] * PAPER.nv,
    "booleans": np.ones(PAPER.nv, bool),
    "objects": [None] * PAPER.nv,
}
NOT_REAL_CALLS = {
    "forward_dynamics": lambda v: mb.forward_dynamics(PAPER, Q, v, TAU),
    "forward_dynamics_matrix": lambda v: mb.forward_dynamics(PAPER, Q, v, TAU, method="matrix"),
    "inverse_dynamics": lambda v: mb.inverse_dynamics(PAPER, Q, v, TAU),
    "kinetic_energy": lambda v: mb.kinetic_energy(PAPER, Q, v),
    "simulate_compiled": lambda v: mb.simulate_compiled(PAPER, Q, v, dt=1e-3, n_steps=1),
}


@pytest.mark.filterwarnings("ignore:Casting complex values to real")  # before the refusal
@pytest.mark.parametrize("call", list(NOT_REAL_CALLS))
@pytest.mark.parametrize("kind", list(NOT_REAL))
def test_state_arrays_must_hold_real_numbers(call, kind):
    """numpy would read "1_0" as 10 and drop an imaginary part (with only a warning)."""
    with pytest.raises(ValueError, match=r"v0? must hold real numbers, got values of type"):
        NOT_REAL_CALLS[call](NOT_REAL[kind])


@pytest.mark.parametrize("fn, speed", [("momentum", 1e307), ("kinetic_energy", 1e160)])
def test_momentum_and_energy_of_an_overflowing_velocity_name_it(fn, speed):
    import dqspace.multibody as mb

    model = mb.models.space_manipulator()
    q, v = model.neutral_configuration(), np.full(model.nv, speed)  # m v or v^2 overflows
    with pytest.raises(ValueError, match=r"not finite.*v is too large"):
        getattr(mb, fn)(model, q, v)
