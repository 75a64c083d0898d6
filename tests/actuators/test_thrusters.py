"""Thruster model: mapping H = [H_f; H_t] (P33-P35), the paper's layout, faults, bad input
(valve timing: ``test_valves.py``)."""

import numpy as np
import pinocchio as pin
import pytest
from scipy.optimize import linprog

from dqspace.actuators.thrusters import (
    MIN_IMPULSE_BIT,
    FaultKind,
    Thruster,
    ThrusterFault,
    ThrusterSet,
    paper_thruster_set,
)
from dqspace.dq import dq_from_quat_translation, frame_change_inv, quat_from_axis_angle


def random_set(rng, S=7, sigma_max=8.0):
    ths = []
    for i in range(S):
        d = rng.normal(size=3)
        ths.append(
            Thruster(
                position=rng.uniform(-0.5, 0.5, 3),
                direction=d / np.linalg.norm(d),
                sigma_max=sigma_max,
                name=f"t{i}",
            )
        )
    return ThrusterSet(ths)


def test_mapping_matches_pinocchio_force_transport(rng):
    """Column i of H is the unit force d_i at R_i moved to the base origin (Pinocchio)."""
    ts = random_set(rng)
    for i, t in enumerate(ts.thrusters):
        f0 = pin.SE3(np.eye(3), t.position).act(pin.Force(t.direction, np.zeros(3)))
        np.testing.assert_allclose(ts.H[:, i], np.r_[f0.linear, f0.angular], atol=1e-15)
    np.testing.assert_array_equal(ts.H_f, ts.H[:3])
    np.testing.assert_array_equal(ts.H_t, ts.H[3:])
    sigma = rng.uniform(0, 8, ts.n)
    total = pin.Force.Zero()
    for s, t in zip(sigma, ts.thrusters, strict=True):
        total += pin.SE3(np.eye(3), t.position).act(pin.Force(s * t.direction, np.zeros(3)))
    np.testing.assert_allclose(ts.wrench(sigma), np.r_[total.linear, total.angular], atol=1e-13)


def test_wrench_is_the_dual_force_of_a_thruster_frame(rng):
    """Same wrench from dqspace's frame change: thrust along x of a frame T at R_i, moved to B."""
    ts = random_set(rng, S=4)
    sigma = rng.uniform(0, 8, ts.n)
    total = np.zeros(6)
    ex = np.array([1.0, 0.0, 0.0])
    for s, t in zip(sigma, ts.thrusters, strict=True):
        axis = np.cross(ex, t.direction)
        angle = np.arctan2(np.linalg.norm(axis), ex @ t.direction)
        q_BT = quat_from_axis_angle(axis / np.linalg.norm(axis), angle)
        dq_BT = dq_from_quat_translation(q_BT, t.position)
        total += frame_change_inv(dq_BT, np.r_[s * ex, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(ts.wrench(sigma), total, atol=1e-12)


def test_batched_wrench_matches_row_by_row(rng):
    ts = random_set(rng)
    sigma = rng.uniform(0, 8, (5, ts.n))
    np.testing.assert_allclose(ts.wrench(sigma), [ts.wrench(s) for s in sigma], atol=1e-14)
    assert ts.wrench(sigma[None]).shape == (1, 5, 6)


def test_commands_saturate_to_the_bounds():
    t = Thruster([0.1, 0, 0], [0, 1.0, 0], sigma_max=5.0, sigma_min=1.0)
    ts = ThrusterSet([t])
    np.testing.assert_allclose(
        ts.delivered_thrust([[7.0], [0.5], [-3.0], [2.5]]).ravel(), [5, 1, 1, 2.5]
    )
    np.testing.assert_allclose(ts.wrench([7.0]), [0, 5, 0, 0, 0, 0.5], atol=1e-15)


# -- the paper's layout --------------------------------------------------------------------
def test_paper_layout_geometry():
    ts = paper_thruster_set()
    assert ts.n == 12
    P, D = ts.positions, ts.directions
    np.testing.assert_array_equal(np.abs(P), 0.15)  # on vertices of the 0.3 m cube
    vertices = {tuple(p) for p in P}
    assert len(vertices) == 4
    for v in vertices:
        at = np.all(P == v, axis=1)
        assert at.sum() == 3
        np.testing.assert_allclose(D[at] @ D[at].T, np.eye(3), atol=1e-15)
    # the four vertices are mutually non-adjacent (a regular tetrahedron): pairwise 0.3*sqrt(2)
    V = np.array(sorted(vertices))
    dist = np.linalg.norm(V[:, None] - V[None], axis=-1)
    np.testing.assert_allclose(dist[~np.eye(4, dtype=bool)], 0.3 * np.sqrt(2), rtol=1e-14)
    # every force points into the body, so every plume points away from it
    assert np.all(np.einsum("ij,ij->i", P, D) < 0)
    np.testing.assert_array_equal(ts.sigma_min, 0.0)
    np.testing.assert_array_equal(ts.sigma_max, 10.0)
    np.testing.assert_array_equal(ts.min_impulse_bit, MIN_IMPULSE_BIT)
    assert ts.names[0] == "v0_x" and ts.index("v3_z") == 11


@pytest.mark.parametrize("rows", [slice(0, 3), slice(0, 6)], ids=["H_f", "H"])
def test_paper_layout_reaches_every_direction_with_pushing_thrusters(rows):
    """Positive span = R^m: every +-unit wrench is an LP-feasible sigma >= 0, H has full row
    rank and a strictly positive sigma lies in its null space."""
    H = paper_thruster_set().H[rows]
    m = H.shape[0]
    assert np.linalg.matrix_rank(H) == m
    for k in range(m):
        for sign in (1.0, -1.0):
            e = np.zeros(m)
            e[k] = sign
            res = linprog(np.ones(12), A_eq=H, b_eq=e, bounds=(0, None), method="highs")
            assert res.status == 0, (k, sign, res.message)
    res = linprog(np.zeros(12), A_eq=H, b_eq=np.zeros(m), bounds=(1, None), method="highs")
    assert res.status == 0


def test_paper_layout_force_capability_is_two_thrusters_per_direction():
    """Each axis direction has exactly two thrusters: the force-only capability is a box of
    +-2 sigma_max."""
    ts = paper_thruster_set(sigma_max=7.0)
    for k in range(3):
        for sign in (1.0, -1.0):
            res = linprog(-sign * ts.H_f[k], bounds=(0, 7.0), method="highs")
            assert res.fun == pytest.approx(-14.0, abs=1e-12)
            assert np.sum(ts.H_f[k] * sign > 0.5) == 2


# -- faults --------------------------------------------------------------------------------
def test_faults_change_what_a_command_delivers(rng):
    ts = paper_thruster_set()
    faulty = ts.with_faults(
        {
            0: ThrusterFault.failed_off(),
            "v1_y": ThrusterFault.stuck_on(),
            5: ThrusterFault.stuck_on(thrust=3.0),
            7: ThrusterFault.degraded(0.4),
        }
    )
    assert [f.kind for f in faulty.faults[:8]] == [
        FaultKind.FAILED_OFF,
        FaultKind.NOMINAL,
        FaultKind.NOMINAL,
        FaultKind.NOMINAL,
        FaultKind.STUCK_ON,
        FaultKind.STUCK_ON,
        FaultKind.NOMINAL,
        FaultKind.DEGRADED,
    ]
    sigma = rng.uniform(0, 10, 12)
    expected_thrust = sigma.copy()
    expected_thrust[0] = 0.0
    expected_thrust[4] = 10.0
    expected_thrust[5] = 3.0
    expected_thrust[7] = 0.4 * sigma[7]
    np.testing.assert_allclose(faulty.delivered_thrust(sigma), expected_thrust, atol=1e-15)
    expected = sum(expected_thrust[i] * ts.H[:, i] for i in range(12))
    np.testing.assert_allclose(faulty.wrench(sigma), expected, atol=1e-13)
    np.testing.assert_allclose(faulty.command_upper[[0, 4, 5, 7]], [0, 0, 0, 10])
    np.testing.assert_allclose(faulty.effectiveness[[0, 4, 5, 7, 8]], [0, 0, 0, 0.4, 1])
    np.testing.assert_allclose(faulty.fixed_thrust[[0, 4, 5, 7]], [0, 10, 3, 0])
    # the healthy set is untouched (immutability) and repair works
    np.testing.assert_allclose(ts.wrench(sigma), ts.H @ sigma, atol=1e-13)
    repaired = faulty.with_faults({0: ThrusterFault.nominal()})
    assert (
        repaired.faults[0].kind is FaultKind.NOMINAL
        and repaired.faults[4].kind is FaultKind.STUCK_ON
    )
    assert all(f.kind is FaultKind.NOMINAL for f in faulty.healthy().faults)
    assert faulty.same_geometry(ts) and not faulty.same_geometry(random_set(rng, S=12))
    assert repr(faulty) == (
        "ThrusterSet(12 thrusters, faults={0: 'failed_off', 4: 'stuck_on', 5: 'stuck_on', "
        "7: 'degraded'})"
    )


# -- bad input: one test per documented error ------------------------------------------------
def make(**kw):
    args = dict(position=[0.1, 0.0, 0.0], direction=[0.0, 0.0, 1.0], sigma_max=5.0, name="T7")
    args.update(kw)
    return Thruster(**args)


def test_non_unit_direction_is_rejected_naming_the_thruster():
    with pytest.raises(ValueError, match=r"'T7'.*direction must be a unit vector.*norm 1\.1"):
        make(direction=[0.0, 0.0, 1.1])


def test_sigma_min_above_sigma_max_is_rejected():
    with pytest.raises(ValueError, match=r"'T7'.*sigma_min = 6\.0 N exceeds sigma_max = 5\.0"):
        make(sigma_min=6.0)


def test_negative_sigma_min_is_rejected():
    with pytest.raises(ValueError, match=r"'T7'.*sigma_min must be >= 0.*-1\.0"):
        make(sigma_min=-1.0)


def test_non_positive_sigma_max_is_rejected():
    with pytest.raises(ValueError, match=r"'T7'.*sigma_max must be > 0, got 0\.0"):
        make(sigma_max=0.0)


def test_wrong_shape_position_is_rejected():
    with pytest.raises(ValueError, match=r"'T7'.*position must have shape \(3,\), got \(2,\)"):
        make(position=[0.1, 0.2])


def test_wrong_shape_direction_is_rejected():
    with pytest.raises(ValueError, match=r"'T7'.*direction must have shape \(3,\), got \(4,\)"):
        make(direction=[0.0, 0.0, 1.0, 0.0])


def test_nan_position_is_rejected():
    with pytest.raises(ValueError, match=r"'T7'.*position must be finite"):
        make(position=[0.1, np.nan, 0.0])


def test_nan_sigma_max_is_rejected():
    with pytest.raises(ValueError, match=r"'T7'.*sigma_max \[N\] must be finite"):
        make(sigma_max=np.nan)


def test_negative_min_impulse_bit_is_rejected():
    with pytest.raises(ValueError, match=r"'T7'.*min_impulse_bit must be >= 0, got -0\.1"):
        make(min_impulse_bit=-0.1)


def test_empty_set_is_rejected():
    with pytest.raises(ValueError, match="at least one thruster"):
        ThrusterSet([])


def test_non_thruster_member_is_rejected():
    with pytest.raises(ValueError, match=r"thrusters\[1\] must be a Thruster, got dict"):
        ThrusterSet([make(), {}])


def test_duplicate_names_are_rejected():
    with pytest.raises(ValueError, match=r"names must be unique.*'T7'"):
        ThrusterSet([make(), make()])


def test_fault_on_unknown_name_is_rejected():
    with pytest.raises(ValueError, match=r"no thruster named 'v9_x'"):
        paper_thruster_set().with_faults({"v9_x": ThrusterFault.failed_off()})


def test_fault_on_out_of_range_index_is_rejected():
    with pytest.raises(ValueError, match=r"index 12 out of range for 12 thrusters"):
        paper_thruster_set(faults={12: ThrusterFault.failed_off()})


def test_fault_that_is_not_a_fault_is_rejected():
    with pytest.raises(ValueError, match=r"faults\[3\] must be a ThrusterFault"):
        paper_thruster_set(faults={3: "failed"})


def test_degraded_scale_outside_0_1_is_rejected():
    with pytest.raises(ValueError, match=r"degraded scale must be in \(0, 1\], got 1\.5"):
        ThrusterFault.degraded(1.5)
    with pytest.raises(ValueError, match=r"degraded scale must be in \(0, 1\], got 0\.0"):
        ThrusterFault.degraded(0.0)


def test_scale_on_a_non_degraded_fault_is_rejected():
    with pytest.raises(ValueError, match="scale applies to degraded thrusters only"):
        ThrusterFault(FaultKind.FAILED_OFF, scale=0.5)


def test_stuck_thrust_on_a_non_stuck_fault_is_rejected():
    with pytest.raises(ValueError, match="stuck_thrust applies to stuck_on thrusters only"):
        ThrusterFault(FaultKind.DEGRADED, scale=0.5, stuck_thrust=2.0)


def test_negative_stuck_thrust_is_rejected():
    with pytest.raises(ValueError, match=r"stuck_thrust must be >= 0, got -2\.0"):
        ThrusterFault.stuck_on(-2.0)


def test_stuck_thrust_above_sigma_max_is_rejected_naming_the_thruster():
    with pytest.raises(ValueError, match=r"thruster 4 \('v1_y'\) stuck_thrust = 12\.0 N exceeds"):
        paper_thruster_set(faults={4: ThrusterFault.stuck_on(12.0)})


def test_unknown_fault_kind_is_rejected():
    with pytest.raises(ValueError, match=r"fault kind must be one of.*'leaking'"):
        ThrusterFault("leaking")


def test_wrench_of_wrong_shape_commands_is_rejected():
    with pytest.raises(ValueError, match=r"sigma must have shape \(\.\.\., 12\), got \(11,\)"):
        paper_thruster_set().wrench(np.zeros(11))


def test_wrench_of_nan_commands_is_rejected():
    s = np.zeros(12)
    s[3] = np.nan
    with pytest.raises(ValueError, match=r"sigma must be finite, got nan at index \(3,\)"):
        paper_thruster_set().wrench(s)


def test_non_positive_cube_size_is_rejected():
    with pytest.raises(ValueError, match=r"half_size must be > 0, got -0\.15"):
        paper_thruster_set(half_size=-0.15)
