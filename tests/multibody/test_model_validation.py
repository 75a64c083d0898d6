"""Every documented bad input of the model and of the algorithm entry points raises a
ValueError naming the quantity (one test per error); valid edge cases pass; the caller's
arrays are never modified.
"""

import dataclasses

import numpy as np
import pytest

from dqspace.dq import dq_from_translation, dq_identity
from dqspace.multibody import (
    Body,
    Frame,
    IntegrationError,
    Joint,
    JointType,
    Model,
    Reference,
    bias_forces,
    center_of_mass,
    difference,
    external_wrenches,
    floating_base_jacobians,
    forward_dynamics,
    forward_kinematics,
    frame_jacobian,
    frame_pose,
    frame_twist,
    free_floating_inverse_dynamics,
    generalized_jacobian,
    integrate,
    inverse_dynamics,
    joint_wrenches,
    kinetic_energy,
    mass_matrix,
    models,
    momentum,
    rk4_step,
    simulate_adaptive,
    simulate_rk4,
    state_derivative,
)
from support.spherical_models import spherical_arm

PAPER = models.space_manipulator()
BODIES = PAPER.bodies()


def _with(k, **changes):
    """PAPER's bodies with body k changed (joint fields via joint=dict(...))."""
    bodies = list(BODIES)
    if "joint" in changes:
        changes["joint"] = dataclasses.replace(bodies[k].joint, **changes["joint"])
    bodies[k] = dataclasses.replace(bodies[k], **changes)
    return bodies


# ------------------------------------------------------------------------ the model

MODEL_ERRORS = {
    "no_body": (lambda: Model.build([]), r"a model needs at least one body"),
    "duplicate_names": (
        lambda: Model.build(_with(2, name="link1")),
        r"body names must be unique",
    ),
    "first_body_not_root": (
        lambda: Model.build(_with(0, parent="link1")),
        r"body 'base': the first body is the root \(parent None\)",
    ),
    "root_parent_not_minus_one": (
        lambda: Model(
            names=["a"],
            parent=[0],
            joints=[BODIES[0].joint],
            mass=[1.0],
            com=[np.zeros(3)],
            inertia=[np.eye(3)],
        ),
        r"body 'a': body 0 is the root and must have parent -1",
    ),
    "parent_not_earlier": (
        lambda: Model(
            names=["a", "b", "c"],
            parent=[-1, 2, 1],
            joints=[b.joint for b in BODIES[:3]],
            mass=[1.0] * 3,
            com=[np.zeros(3)] * 3,
            inertia=[np.eye(3)] * 3,
        ),
        r"body 'b': parent index 2 is not an earlier body",
    ),
    "unknown_parent_name": (
        lambda: Model.build(_with(3, parent="ghost")),
        r"body 'link3': unknown parent 'ghost'",
    ),
    "unknown_joint_type": (
        lambda: Model.build(_with(1, joint=dict(type=7))),
        r"body 'link1': unknown joint type 7",
    ),
    "free_joint_not_at_root": (
        lambda: Model.build(_with(1, joint=dict(type=JointType.FREE))),
        r"body 'link1': only the root may have a FREE joint",
    ),
    "non_unit_axis": (
        lambda: Model.build(_with(2, joint=dict(axis=np.array([0.0, 0.0, 1.001])))),
        r"body 'link2': joint axis must be a unit vector, got \[0.0, 0.0, 1.001\] "
        r"\(norm 1.001, accepted within 1e-09 of 1\); normalise it",
    ),
    "zero_axis": (
        lambda: Model.build(_with(2, joint=dict(axis=np.zeros(3)))),
        r"body 'link2': joint axis must be a unit vector.*norm 0",
    ),
    "non_finite_axis": (
        lambda: Model.build(_with(2, joint=dict(axis=np.array([np.nan, 0.0, 1.0])))),
        r"body 'link2': joint axis must be a finite 3-vector, got array\(\[nan",
    ),
    "non_unit_placement": (
        lambda: Model.build(_with(4, joint=dict(placement=2.0 * dq_identity()))),
        r"body 'link4': joint placement is not a unit dual quaternion \(unit error 1\)",
    ),
    "non_finite_placement": (
        lambda: Model.build(_with(4, joint=dict(placement=np.r_[np.inf, np.zeros(7)]))),
        r"body 'link4': joint placement must be a finite \(8,\) dual quaternion",
    ),
    "zero_mass": (lambda: Model.build(_with(5, mass=0.0)), r"body 'link5': mass must be positive"),
    "negative_mass": (
        lambda: Model.build(_with(5, mass=-1.0)),
        r"body 'link5': mass must be positive and finite, got -1.0",
    ),
    "non_finite_mass": (
        lambda: Model.build(_with(5, mass=np.nan)),
        r"body 'link5': mass must be positive and finite, got nan",
    ),
    "non_finite_com": (
        lambda: Model.build(_with(6, com=np.array([0.0, np.inf, 0.0]))),
        r"body 'link6': com must be a finite 3-vector",
    ),
    "non_finite_inertia": (
        lambda: Model.build(_with(6, inertia=np.diag([1.0, np.nan, 1.0]))),
        r"body 'link6': inertia must be a finite 3x3 matrix",
    ),
    "non_symmetric_inertia": (
        lambda: Model.build(_with(7, inertia=np.array([[1.0, 0.1, 0], [0, 1, 0], [0, 0, 1]]))),
        r"body 'link7': inertia is not symmetric \(max \|I - I\^T\| = 0.1\)",
    ),
    "inertia_not_positive_definite": (
        lambda: Model.build(_with(7, inertia=np.diag([1.0, 1.0, -0.5]))),
        r"body 'link7': inertia is not positive-definite \(principal moments \[-0.5, 1.0, 1.0\]\)",
    ),
    "inertia_triangle_inequality": (
        lambda: Model.build(_with(7, inertia=np.diag([1.0, 1.0, 2.5]))),
        r"body 'link7': principal moments \[1.0, 1.0, 2.5\] violate the triangle inequality",
    ),
    "non_finite_gravity": (
        lambda: PAPER.with_gravity([0.0, np.nan, -9.81]),
        r"gravity must be finite",
    ),
    "frame_body_out_of_range": (
        lambda: PAPER.with_frames([Frame("cam", 8, dq_identity())]),
        r"frame 'cam': body index 8 out of range",
    ),
    "frame_placement_not_unit": (
        lambda: PAPER.with_frames([Frame("cam", 1, 1.5 * dq_identity())]),
        r"frame 'cam' placement is not a unit dual quaternion",
    ),
    "duplicate_frame_names": (
        lambda: PAPER.with_frames([Frame("ee", 1, dq_identity())]),
        r"frame names must be unique, got \['ee', 'ee'\]",
    ),
    "unknown_body_name": (lambda: PAPER.body_index("ghost"), r"no body named 'ghost'"),
    "body_index_out_of_range": (
        lambda: PAPER.body_index(8),
        r"body index 8 out of range 0\.\.7",
    ),
    "unknown_frame_name": (lambda: PAPER.frame_index("ghost"), r"no frame named 'ghost'"),
}


@pytest.mark.parametrize("case", list(MODEL_ERRORS))
def test_model_error(case):
    call, match = MODEL_ERRORS[case]
    with pytest.raises(ValueError, match=match):
        call()


def test_valid_edge_cases_pass():
    """A flat lamina (I3 = I1 + I2 exactly), a tiny mass, and massless named frames."""
    lamina = Model.build(_with(7, inertia=np.diag([1e-3, 2e-3, 3e-3]), mass=1e-9))
    assert lamina.mass[7] == 1e-9
    with_frames = PAPER.with_frames([Frame("cam", 0, dq_from_translation([0.1, 0.0, 0.0]))])
    assert with_frames.total_mass == PAPER.total_mass and with_frames.nv == PAPER.nv


def test_model_arrays_are_read_only():
    with pytest.raises(ValueError, match="read-only"):
        PAPER.mass[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        PAPER.joint_axis[1, 0] = 1.0


# ------------------------------------------------------------------ entry points

RNG = np.random.default_rng(11)
Q = PAPER.random_configuration(RNG)
STATE = {
    "q": Q,
    "q1": PAPER.random_configuration(RNG),
    "v": RNG.normal(size=PAPER.nv),
    "a": RNG.normal(size=PAPER.nv),
    "tau": RNG.normal(size=PAPER.nv),
    "a_joints": RNG.normal(size=PAPER.nv - 6),
    "f_ext": RNG.normal(size=(PAPER.nb, 6)),
}

# entry point -> (call(model, state), [(state key, name in the error message)])
M = PAPER
ENTRIES = {
    "mass_matrix": (lambda s: mass_matrix(M, s["q"]), [("q", "q")]),
    "inverse_dynamics": (
        lambda s: inverse_dynamics(M, s["q"], s["v"], s["a"], s["f_ext"]),
        [("q", "q"), ("v", "v"), ("a", "a"), ("f_ext", "f_ext")],
    ),
    "joint_wrenches": (
        lambda s: joint_wrenches(M, s["q"], s["v"], s["a"], s["f_ext"]),
        [("q", "q"), ("v", "v"), ("a", "a"), ("f_ext", "f_ext")],
    ),
    "bias_forces": (
        lambda s: bias_forces(M, s["q"], s["v"], s["f_ext"]),
        [("q", "q"), ("v", "v"), ("f_ext", "f_ext")],
    ),
    "forward_dynamics": (
        lambda s: forward_dynamics(M, s["q"], s["v"], s["tau"], s["f_ext"]),
        [("q", "q"), ("v", "v"), ("tau", "tau"), ("f_ext", "f_ext")],
    ),
    "free_floating_inverse_dynamics": (
        lambda s: free_floating_inverse_dynamics(M, s["q"], s["v"], s["a_joints"], s["f_ext"]),
        [("q", "q"), ("v", "v"), ("a_joints", "a_joints"), ("f_ext", "f_ext")],
    ),
    "forward_kinematics": (
        lambda s: forward_kinematics(M, s["q"], s["v"], s["a"]),
        [("q", "q"), ("v", "v"), ("a", "a")],
    ),
    "frame_pose": (lambda s: frame_pose(M, s["q"], "ee"), [("q", "q")]),
    "frame_twist": (lambda s: frame_twist(M, s["q"], s["v"], "ee"), [("q", "q"), ("v", "v")]),
    "frame_jacobian": (lambda s: frame_jacobian(M, s["q"], "ee", Reference.WORLD), [("q", "q")]),
    "floating_base_jacobians": (
        lambda s: floating_base_jacobians(M, s["q"], "ee"),
        [("q", "q")],
    ),
    "generalized_jacobian": (lambda s: generalized_jacobian(M, s["q"], "ee"), [("q", "q")]),
    "center_of_mass": (lambda s: center_of_mass(M, s["q"]), [("q", "q")]),
    "momentum": (lambda s: momentum(M, s["q"], s["v"]), [("q", "q"), ("v", "v")]),
    "kinetic_energy": (lambda s: kinetic_energy(M, s["q"], s["v"]), [("q", "q"), ("v", "v")]),
    "external_wrenches": (
        lambda s: external_wrenches(M, s["q"], {"ee": s["tau"][:6]}, Reference.WORLD),
        [("q", "q")],
    ),
    "integrate": (lambda s: integrate(M, s["q"], s["v"], 0.01), [("q", "q"), ("v", "v")]),
    "difference": (lambda s: difference(M, s["q"], s["q1"]), [("q", "q0"), ("q1", "q1")]),
    "state_derivative": (
        lambda s: state_derivative(M, s["q"], s["v"], s["tau"], s["f_ext"]),
        [("q", "q"), ("v", "v"), ("tau", "tau"), ("f_ext", "f_ext")],
    ),
    "rk4_step": (lambda s: rk4_step(M, s["q"], s["v"], 1e-3, s["tau"]), [("q", "q"), ("v", "v")]),
    "simulate_rk4": (
        lambda s: simulate_rk4(M, s["q"], s["v"], dt=1e-3, n_steps=2, inputs=s["tau"]),
        [("q", "q0"), ("v", "v0"), ("tau", "tau")],
    ),
    "simulate_adaptive": (
        lambda s: simulate_adaptive(
            M, s["q"], s["v"], (0.0, 1e-3), inputs=s["tau"], t_eval=[0.0, 1e-3]
        ),
        [("q", "q0"), ("v", "v0"), ("tau", "tau")],
    ),
}
ARG_CASES = [(e, key, name) for e, (_, args) in ENTRIES.items() for key, name in args]
ARG_IDS = [f"{e}-{name}" for e, _, name in ARG_CASES]


def _state(**changes):
    s = {k: v.copy() for k, v in STATE.items()}
    s.update(changes)
    return s


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_valid_input_runs(entry):
    """Guards the tables below: with valid arrays every entry point returns."""
    assert ENTRIES[entry][0](_state()) is not None


@pytest.mark.parametrize("entry, key, name", ARG_CASES, ids=ARG_IDS)
def test_wrong_shape_is_rejected(entry, key, name):
    bad = np.zeros((STATE[key].shape[0] + 1, *STATE[key].shape[1:]))
    if key.startswith("q"):
        bad[0] = 1.0
    match = rf"{name} must have shape" if key != "f_ext" else r"f_ext must have shape \(nb, 6\)"
    with pytest.raises(ValueError, match=match):
        ENTRIES[entry][0](_state(**{key: bad}))


@pytest.mark.parametrize("entry, key, name", ARG_CASES, ids=ARG_IDS)
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_value_is_rejected(entry, key, name, value):
    bad = STATE[key].copy()
    bad.reshape(-1)[-1] = value  # the last joint coordinate / last wrench component
    if key == "f_ext":
        match = rf"f_ext for body {PAPER.nb - 1} is not finite"
    else:
        match = rf"{name}\[{bad.size - 1}\] is not finite \({value}\)"
    with pytest.raises(ValueError, match=match):
        ENTRIES[entry][0](_state(**{key: bad}))


Q_ENTRIES = [(e, name) for e, key, name in ARG_CASES if key == "q"]


@pytest.mark.parametrize("entry, name", Q_ENTRIES, ids=[e for e, _ in Q_ENTRIES])
def test_non_unit_base_pose_is_rejected_beyond_tolerance(entry, name):
    """|q_r| off by 1e-4, or q_r . q_d = 1e-4: rejected; within 1e-8: accepted (CONFIG_TOL 1e-6)."""
    call = ENTRIES[entry][0]
    for scale, shift in ((1.0 + 1e-4, 0.0), (1.0, 1e-4)):
        q = Q.copy()
        q[:4] *= scale
        q[4:8] += shift * Q[:4]  # breaks q_r . q_d = 0
        with pytest.raises(
            ValueError, match=rf"{name}\[0:8\] \(base pose of body 'base'\) is not unit"
        ):
            call(_state(q=q))
    q = Q.copy()
    q[:8] *= 1.0 + 1e-8
    call(_state(q=q))


def test_non_unit_joint_quaternion_is_rejected():
    model = spherical_arm()
    q = model.random_configuration(np.random.default_rng(0))
    q[9:13] *= 1.01
    with pytest.raises(
        ValueError, match=r"q\[9:13\] \(joint quaternion of body 'wrist'\) is not unit"
    ):
        mass_matrix(model, q)


@pytest.mark.parametrize("entry", list(ENTRIES))
def test_callers_arrays_are_never_modified(entry):
    """Inputs are compared with copies afterwards, and passed read-only (a write would raise)."""
    s = _state()
    for x in s.values():
        x.setflags(write=False)
    before = {k: x.copy() for k, x in s.items()}
    ENTRIES[entry][0](s)
    for k, x in s.items():
        np.testing.assert_array_equal(x, before[k], err_msg=f"{entry} modified {k}")


# ------------------------------------------------------------------ other errors

IIWA = models.iiwa()
tau3 = np.zeros(3)

OTHER_ERRORS = {
    "accelerations_without_velocity": (
        lambda: forward_kinematics(PAPER, Q, None, STATE["a"]),
        r"accelerations need the velocity v as well",
    ),
    "unknown_forward_dynamics_method": (
        lambda: forward_dynamics(PAPER, Q, STATE["v"], STATE["tau"], method="newton"),
        r"method must be 'aba' or 'matrix', got 'newton'",
    ),
    "unknown_frame": (lambda: frame_pose(PAPER, Q, "camera"), r"no body named 'camera'"),
    "unknown_reference": (
        lambda: frame_jacobian(PAPER, Q, "ee", "body"),
        r"'body' is not a valid Reference",
    ),
    "floating_only_jacobians": (
        lambda: floating_base_jacobians(IIWA, np.zeros(7), "ee"),
        r"needs a floating-base model",
    ),
    "floating_only_generalized_jacobian": (
        lambda: generalized_jacobian(IIWA, np.zeros(7), "ee"),
        r"needs a floating-base model",
    ),
    "floating_only_free_floating_id": (
        lambda: free_floating_inverse_dynamics(IIWA, np.zeros(7), np.zeros(7), np.zeros(1)),
        r"free_floating_inverse_dynamics needs a floating-base model",
    ),
    "wrench_shape": (
        lambda: external_wrenches(PAPER, Q, {"ee": np.zeros(3)}),
        r"wrench on 'ee' must have shape \(6,\)",
    ),
    "momentum_point_shape": (
        lambda: momentum(PAPER, Q, STATE["v"], point=[0.0, 0.0]),
        r"point must have shape \(3,\)",
    ),
    "non_positive_dt": (
        lambda: simulate_rk4(PAPER, Q, STATE["v"], dt=0.0, n_steps=1),
        r"dt must be positive and finite, got 0.0",
    ),
    "non_finite_dt": (
        lambda: simulate_rk4(PAPER, Q, STATE["v"], dt=np.inf, n_steps=1),
        r"dt must be positive and finite, got inf",
    ),
    "input_callback_wrong_shape": (
        lambda: simulate_rk4(PAPER, Q, STATE["v"], dt=1e-3, n_steps=1, inputs=lambda t: tau3),
        r"tau must have shape \(13,\)",
    ),
}


@pytest.mark.parametrize("case", list(OTHER_ERRORS))
def test_other_error(case):
    call, match = OTHER_ERRORS[case]
    with pytest.raises(ValueError, match=match):
        call()


def test_divergence_stops_with_integration_error_naming_time_and_component():
    v = np.full(PAPER.nv, 1e200)
    with pytest.raises(IntegrationError, match=r"non-finite at t = 0.001 s"):
        simulate_rk4(PAPER, Q, v, dt=1e-3, n_steps=10)


# ---- shapes and arguments that used to slip through to numpy errors


_M = None


def _robot():
    global _M
    if _M is None:
        from dqspace.multibody.models import space_manipulator

        _M = space_manipulator()
    return _M


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda m: Model.build(
                [
                    Body(
                        "b",
                        None,
                        Joint(JointType.FREE, placement=np.ones(7)),
                        1.0,
                        np.zeros(3),
                        np.eye(3),
                    )
                ]
            ),
            r"body 'b': joint placement must have shape \(8,\), got \(7,\)",
        ),
        (
            lambda m: Model.build(
                [
                    Body(
                        "b",
                        None,
                        Joint(JointType.REVOLUTE, axis=[0, 1.0]),
                        1.0,
                        np.zeros(3),
                        np.eye(3),
                    )
                ]
            ),
            r"body 'b': joint axis must have shape \(3,\)",
        ),
        (
            lambda m: Model.build(
                [Body("b", None, Joint(JointType.FREE), 1.0, np.zeros(2), np.eye(3))]
            ),
            r"body 'b': com must have shape \(3,\)",
        ),
        (
            lambda m: Model.build(
                [Body("b", None, Joint(JointType.FREE), 1.0, np.zeros(3), np.eye(2))]
            ),
            r"body 'b': inertia must have shape \(3, 3\)",
        ),
        (lambda m: m.with_gravity([0.0, 0.0]), r"gravity must have shape \(3,\)"),
        (lambda m: m.with_frames([Frame("x", "ghost", dq_identity())]), r"no body named 'ghost'"),
        (
            lambda m: Model.build(m.bodies(), [Frame("x", "ghost", dq_identity())]),
            r"frame 'x': unknown body 'ghost'",
        ),
        (
            lambda m: integrate(m, m.neutral_configuration(), np.zeros(m.nv), np.nan),
            r"dt must be finite",
        ),
        (
            lambda m: simulate_rk4(
                m, m.neutral_configuration(), np.zeros(m.nv), dt=1e-3, n_steps=-1
            ),
            r"n_steps must be a positive integer",
        ),
        (
            lambda m: simulate_rk4(
                m, m.neutral_configuration(), np.zeros(m.nv), dt=1e-3, n_steps=2, record_every=0
            ),
            r"record_every must be a positive",
        ),
        (
            lambda m: simulate_adaptive(m, m.neutral_configuration(), np.zeros(m.nv), (1.0, 0.0)),
            r"t_span must have t1 > t0",
        ),
        (
            lambda m: simulate_adaptive(
                m, m.neutral_configuration(), np.zeros(m.nv), (0.0, np.nan)
            ),
            r"t_span\[1\] must be finite",
        ),
        (
            lambda m: simulate_adaptive(
                m, m.neutral_configuration(), np.zeros(m.nv), (0.0, 1.0), t_eval=[0.5, 0.2]
            ),
            r"t_eval must be finite, non-decreasing",
        ),
        (
            lambda m: rk4_step(m, m.neutral_configuration(), np.zeros(m.nv), np.nan),
            r"dt must be positive and finite",
        ),
        (
            lambda m: m.random_configuration(np.random.default_rng(0), angle=np.nan),
            r"angle must be finite and non-negative",
        ),
    ],
)
def test_argument_errors_name_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call(_robot())
