"""The actuator set must give every wrench direction its thruster mode asks (checked when
the system is built: ``dqspace.scenarios.build.controllability``).

References, independent of the check's linear programs: scipy's non-negative least
squares (a direction is in the thrusters' positive cone iff NNLS reaches it with zero
residual), a brute-force Caratheodory enumeration (a direction is in the cone of 3-D
columns iff some three independent columns give it with non-negative weights), the
cross product of two wheel axes, and hand-derived reaches and singular values.
"""

import contextlib
import copy
import itertools
import logging
import math
import re

import numpy as np
import pytest
from scipy.optimize import nnls

from dqspace.actuators import paper_thruster_set
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build import devices
from dqspace.scenarios.build.controllability import check_actuators
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.cli import main
from dqspace.scenarios.sim.metrics import alloc_best_effort
from dqspace.scenarios.sim.shortfall import allocation_shortfall
from dqspace.scenarios.spec.config import ScenarioError
from support.scenario_rows import wheel_row

SK = "station-keeping"
_AXES = ("+x", "-x", "+y", "-y", "+z", "-z")
#: the paper's thrusters whose torque about z is positive (``docs/thrusters.md``: R x d)
PLUS_Z_TORQUE = (0, 4, 7, 9)


def _rows(positions, directions):
    return [
        {
            "name": f"t{i}",
            "position": list(map(float, p)),
            "direction": list(map(float, d)),
            "max_thrust": 0.0,
            "min_impulse_bit": -1.0,
        }
        for i, (p, d) in enumerate(zip(positions, directions, strict=True))
    ]


def _paper_rows(drop=()):
    ts = paper_thruster_set()
    keep = [i for i in range(ts.n) if i not in drop]
    return _rows(ts.positions[keep], ts.directions[keep])


def _wheel_rows(axes):
    return [wheel_row(a) for a in axes]


def _cfg(overrides=(), thrusters=None, wheels=None):
    cfg = copy.deepcopy(load_scenario(SK, list(overrides)).config)
    if thrusters is not None:
        cfg["thrusters"]["layout"] = "table"
        cfg["thruster"] = thrusters
    if wheels is not None:
        cfg["wheels"].update(enabled=True, layout="table")
        cfg["wheel"] = wheels
    return cfg


def _check(cfg):
    return check_actuators(
        cfg, devices.thrusters(cfg), devices.cluster(cfg), devices.wheel_array(cfg)
    )


def _in_cone(H, b):
    """NNLS: ``b`` is a non-negative combination of the columns of ``H``."""
    _, rnorm = nnls(np.asarray(H, float), np.asarray(b, float))
    return rnorm <= 1e-9


def _in_cone_caratheodory(H, b):
    """Brute force (3-D columns spanning R^3): some three independent columns give ``b``
    with non-negative weights."""
    H = np.asarray(H, float)
    for idx in itertools.combinations(range(H.shape[1]), 3):
        C = H[:, idx]
        if abs(np.linalg.det(C)) < 1e-9:
            continue
        if np.all(np.linalg.solve(C, b) >= -1e-12):
            return True
    return False


def _unit(k, sign, rows):
    """The signed unit wrench ``sign e_k`` (k < 3: force, else torque) in ``rows`` rows."""
    b = np.zeros(rows)
    b[k] = sign
    return b


def _missing(H, rows, torque=True):
    """The signed axes (``("force", "-x")``, ...) NNLS cannot reach with the rows of H."""
    out = set()
    for k in range(6 if torque else 3):
        for s, sign in ((1.0, "+"), (-1.0, "-")):
            if not _in_cone(H[:rows], _unit(k, s, rows)):
                out.add(("force" if k < 3 else "torque", sign + "xyz"[k % 3]))
    return out


def _named(message):
    """The signed axes a refusal names: ``{("force", "-x"), ("torque", "+z")}``."""
    text = re.search(r"cannot produce (.*?) \(base axes\)", message).group(1)
    parts = re.split(r"\s*(?:and )?a (force|torque) (?:along|about) ", text)
    assert parts[0] == ""
    out = set()
    for kind, axes in zip(parts[1::2], parts[2::2], strict=True):
        out |= {(kind, axis) for axis in re.findall(r"[+-][xyz]", axes)}
    return out


@contextlib.contextmanager
def _logged():
    """The messages logged on ``dqspace.build`` inside (a handler of its own: the CLI's
    set-up stops ``dqspace`` records from reaching pytest's)."""
    records = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda r: records.append(r.getMessage())
    logger = logging.getLogger("dqspace.build")
    logger.addHandler(handler)
    try:
        yield records
    finally:
        logger.removeHandler(handler)


# ------------------------------------------------------------------ the paper's layout


@pytest.mark.parametrize(
    "overrides",
    [[], ["thrusters.mode=wrench"], ["thrusters.mode=wrench", "vscmg.enabled=false"]],
)
def test_the_papers_twelve_thrusters_pass(overrides):
    H = paper_thruster_set().H
    assert _missing(H, 6) == set()  # NNLS: the 12 signed unit wrenches are reachable
    with _logged() as records:
        assert _check(_cfg(overrides)) == []
    assert records == []


def test_the_embedded_scenarios_pass_without_a_warning():
    for name in ("station-keeping", "ur5-waypoints"):
        cfg = load_scenario(name).config
        assert _check(cfg) == []


# ------------------------------------------------------------------ one-sided thrust


def test_removing_the_thrusters_that_give_plus_z_torque_is_refused_naming_it():
    rows = _paper_rows(drop=PLUS_Z_TORQUE)
    cfg = _cfg(["thrusters.mode=wrench", "vscmg.enabled=false"], thrusters=rows)
    H = devices.thrusters(cfg).H
    assert np.all(H[5] <= 0.0)  # no column left with a torque about +z
    expected = _missing(H, 6)
    assert ("torque", "+z") in expected
    with pytest.raises(ScenarioError) as err:
        _check(cfg)
    msg = str(err.value)
    assert _named(msg) == expected
    assert msg.startswith("[[thruster]]: the thrusters cannot produce")
    assert "thrusters.mode = 'wrench'" in msg and "one-sided" in msg


def test_thrusters_that_all_push_plus_x_cannot_give_minus_x():
    rng = np.random.default_rng(3)
    d = rng.normal(size=(8, 3))
    d[:, 0] = np.abs(d[:, 0]) + 0.2  # every direction pushes along +x
    d[0] = [1.0, 0.0, 0.0]
    d /= np.linalg.norm(d, axis=1)[:, None]
    p = rng.uniform(-0.3, 0.3, (8, 3))
    cfg = _cfg(thrusters=_rows(p, d))
    H = devices.thrusters(cfg).H
    assert np.linalg.matrix_rank(H) == 6  # they span every wrench, but one-sided
    expected = _missing(H, 3, torque=False)
    # brute force agrees: only +x is reachable as a pure force (every positive
    # combination pushes along +x; the first thruster gives +x alone)
    assert expected == {
        ("force", a)
        for a in _AXES
        if not _in_cone_caratheodory(H[:3], _unit("xyz".index(a[1]), float(a[0] + "1"), 3))
    }
    assert expected == {("force", a) for a in _AXES if a != "+x"}
    with pytest.raises(ScenarioError) as err:
        _check(cfg)
    assert _named(str(err.value)) == expected
    assert "thrusters.mode = 'force'" in str(err.value)
    # in mode 'wrench' no hint to use mode 'force': it would not pass either
    with pytest.raises(ScenarioError) as err:
        _check(_cfg(["thrusters.mode=wrench"], thrusters=_rows(p, d)))
    assert ("force", "-x") in _named(str(err.value)) and "would take" not in str(err.value)


@pytest.mark.parametrize("seed", range(6))
def test_random_tables_are_refused_exactly_where_the_cone_misses(seed):
    rng = np.random.default_rng(50 + seed)
    cases = {"pass": 0, "refused": 0}
    for _ in range(8):
        S = int(rng.integers(4, 15))
        d = rng.normal(size=(S, 3))
        d /= np.linalg.norm(d, axis=1)[:, None]
        rows = _rows(rng.uniform(-0.4, 0.4, (S, 3)), d)
        for overrides, rows_used, torque in (
            ([], 3, False),  # force: the VSCMGs take the torque
            (["thrusters.mode=wrench", "vscmg.enabled=false"], 6, True),
            (
                ["thrusters.mode=wrench", "vscmg.enabled=false", "wheels.enabled=true"]
                + ["wheels.layout=orthogonal", "wheels.desaturation_gain=0.1"],
                6,
                True,
            ),
            (
                ["thrusters.mode=wrench", "wheels.enabled=true", "wheels.desaturation_gain=0"],
                6,
                False,  # pure forces (zero torque) only
            ),
        ):
            cfg = _cfg(overrides, thrusters=rows)
            H = devices.thrusters(cfg).H
            expected = _missing(H, rows_used, torque)
            if rows_used == 3:  # a second reference in 3-D
                brute = {
                    ("force", s + "xyz"[k])
                    for k in range(3)
                    for s, v in (("+", 1.0), ("-", -1.0))
                    if not _in_cone_caratheodory(H[:3], _unit(k, v, 3))
                }
                assert brute == expected
            if expected:
                cases["refused"] += 1
                with pytest.raises(ScenarioError) as err:
                    _check(cfg)
                assert _named(str(err.value)) == expected
            else:
                cases["pass"] += 1
                _check(cfg)
    assert cases["pass"] > 0 and cases["refused"] > 0


# ------------------------------------------------------------------ momentum devices


def test_the_same_thrusters_pass_in_mode_force_with_four_pyramid_wheels():
    rows = _paper_rows(drop=PLUS_Z_TORQUE)
    cfg = _cfg(
        ["vscmg.enabled=false", "wheels.enabled=true", "wheels.layout=pyramid"]
        + ["wheels.desaturation_gain=0"],
        thrusters=rows,
    )
    H = devices.thrusters(cfg).H
    assert _missing(H, 3, torque=False) == set()  # NNLS: they give every force
    assert _check(cfg) == []


def test_wheels_cannot_be_dumped_about_an_axis_the_thrusters_do_not_turn():
    # wrench mode with wheels: the thrusters take the dumping torque about every axis of the
    # wheels' span, and this set has no torque about +z
    rows = _paper_rows(drop=PLUS_Z_TORQUE)
    ov = ["thrusters.mode=wrench", "vscmg.enabled=false", "wheels.enabled=true"]
    cfg = _cfg(ov + ["wheels.desaturation_gain=0.1"], thrusters=rows)
    H = devices.thrusters(cfg).H
    expected = _missing(H, 6)
    assert ("torque", "+z") in expected
    with pytest.raises(ScenarioError, match="momentum dumping") as err:
        _check(cfg)
    assert _named(str(err.value)) == expected
    # NNLS: the forces alone are reachable, so mode 'force' would do (the message says so)
    assert _missing(H, 3, torque=False) == set()
    assert "with thrusters.mode = 'force' they would take only the force" in str(err.value)
    # without dumping they are asked pure forces (zero torque): +x comes only from v2_x,
    # whose torque about -z nothing cancels now
    cfg = _cfg(ov + ["wheels.desaturation_gain=0"], thrusters=rows)
    expected = _missing(H, 6, torque=False)
    assert ("force", "+x") in expected
    with pytest.raises(ScenarioError, match="with zero torque") as err:
        _check(cfg)
    assert _named(str(err.value)) == expected


@pytest.mark.parametrize(
    "axes, normal",
    [
        ([[1, 0, 0], [0, 1, 0], [1, 1, 0]], "z"),
        ([[1, -1, 0], [0, 1, -1], [1, 0, -1], [2, -1, -1]], None),  # normal (1, 1, 1)
    ],
)
def test_wheels_in_a_plane_leave_the_torque_about_its_normal(axes, normal):
    a = np.asarray(axes, float)
    n = np.cross(a[0], a[1])
    n /= np.linalg.norm(n)
    if normal is None:
        normal = "(" + ", ".join(f"{v:.3g}" for v in n * np.sign(n[np.argmax(np.abs(n))])) + ")"
    cfg = _cfg(["vscmg.enabled=false"], wheels=_wheel_rows(a))
    with pytest.raises(ScenarioError) as err:
        _check(cfg)
    msg = str(err.value)
    assert msg.startswith("[[wheel]]: the momentum devices cannot produce a torque about ")
    assert f"about {normal} (base axes, either sign)" in msg
    assert "thrusters.mode = 'force'" in msg
    # a VSCMG pyramid besides them spans the rest
    cfg = _cfg([], wheels=_wheel_rows(a))
    assert not [w for w in _check(cfg) if "momentum devices" in w]


def test_mode_force_without_momentum_devices_is_refused():
    with pytest.raises(ScenarioError, match="no momentum device takes the base torque"):
        _check(_cfg(["vscmg.enabled=false"]))
    assert _check(_cfg(["vscmg.enabled=false", "thrusters.mode=wrench"])) == []
    # a free-flying base (no thrusters) is not checked
    assert _check(_cfg(["vscmg.enabled=false", "thrusters.enabled=false"])) == []


# ------------------------------------------------------------------ nearly missing


def test_a_nearly_missing_force_is_a_warning_with_its_margin():
    eps = 0.01
    d = np.vstack([np.eye(3), -np.eye(3)])
    d[3] = [-eps, 1.0, 0.0]  # the -x thruster nearly points along +y
    d /= np.linalg.norm(d, axis=1)[:, None]
    cfg = _cfg(thrusters=_rows(-0.2 * d, d))
    # by hand: -x comes only from the tilted one, its +y cancelled by the -y thruster; +y
    # from the +y thruster and the tilted one, whose -x the +x thruster cancels
    c = math.sqrt(1 + eps**2)
    least, most = 10.0 * eps / c, 10.0 + 10.0 / c
    with _logged() as records:
        (w,) = _check(cfg)
    assert "nearly cannot produce a force along -x" in w
    assert f"at most {least:.3g} N" in w and f"of the {most:.3g} N along +y" in w
    assert f"{100 * least / most:.2g} %" in w
    assert records == [f"warning: scenario 'station-keeping': {w}"]


def test_nearly_coplanar_wheels_are_a_warning_with_the_smallest_singular_value():
    alpha = math.radians(2.0)
    axes = [[1, 0, 0], [0, 1, 0], [math.cos(alpha), 0, math.sin(alpha)]]
    cfg = _cfg(["vscmg.enabled=false", "wheels.desaturation_gain=0"], wheels=_wheel_rows(axes))
    (w,) = _check(cfg)
    # by hand: the singular values are sqrt(1 + cos a), 1, sqrt(1 - cos a); the weakest
    # direction (sin a, 0, -(1 + cos a)) normalised
    s_min, s_max = math.sqrt(1 - math.cos(alpha)), math.sqrt(1 + math.cos(alpha))
    v = np.array([math.sin(alpha), 0.0, -(1 + math.cos(alpha))])
    v = -v / np.linalg.norm(v)
    assert f"about ({v[0]:.3g}, 0, {v[2]:.3g}) (base axes)" in w
    assert f"smallest singular value of their unit torque axes is {s_min:.3g}" in w
    assert f"{100 * s_min / s_max:.2g} % of the largest" in w


def test_dumping_in_mode_force_is_a_warning():
    cfg = _cfg(["wheels.enabled=true", "wheels.desaturation_gain=0.1"])
    (w,) = _check(cfg)
    assert w.startswith("wheels.desaturation_gain = 0.1: in thrusters.mode = 'force'")
    assert "never dumped" in w


# ------------------------------------------------------------------ at load


def test_a_run_is_refused_at_load_with_exit_status_2_naming_the_file(tmp_path, capsys):
    lines = ['[scenario]\nname = "noz"\n[vscmg]\nenabled = false\n']
    lines.append('[thrusters]\nlayout = "table"\nmode = "wrench"\n')
    for r in _paper_rows(drop=PLUS_Z_TORQUE):
        lines.append(f"[[thruster]]\nposition = {r['position']}\ndirection = {r['direction']}\n")
    f = tmp_path / "noz.toml"
    f.write_text("\n".join(lines))
    with pytest.raises(ScenarioError, match="torque about"):
        build_system(load_scenario(f).config)
    assert main(["run", str(f), "-q", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{f}: [[thruster]]: the thrusters cannot produce" in err
    assert "+z" in err and not (tmp_path / "out" / "result.npz").exists()


# ------------------------------------------------------------------ at run time


def _unmet_parts(line):
    """``{kind: (signed axes, "peak unit")}`` of a best-effort message."""
    found = re.findall(
        r"(force|torque) demand (?:along|about) ([-+xyz, ]+) \(up to ([^)]*)\)", line
    )
    return {kind: (set(re.findall(r"[+-][xyz]", axes)), peak) for kind, axes, peak in found}


def _expected_parts(short, mask):
    """The same from a shortfall computed apart: the signed axes reaching a tenth of the
    kind's largest shortfall, and that largest."""
    out = {}
    for kind, cols, unit in (("force", slice(0, 3), "N"), ("torque", slice(3, 6), "N m")):
        r = short[mask, cols]
        peak = np.linalg.norm(r, axis=1).max()
        if peak > 1e-6:
            axes = {
                f"{s}{'xyz'[k]}"
                for k in range(3)
                for s, v in (("+", 1), ("-", -1))
                if (v * r[:, k]).max() >= 0.1 * peak
            }
            out[kind] = (axes, f"{peak:.3g} {unit}")
    return out


def _faulty_run(faults, duration):
    cfg = _cfg(
        [f"scenario.duration={duration}", "thrusters.mode=wrench", "vscmg.enabled=false"]
        + ["thrusters.pwm=false", "base_reference.type=slew", "base_reference.rpy_deg=[0, 0, 5]"]
        + ["base_reference.duration=1"]
    )
    cfg["faults"] = faults
    res = run(cfg, progress=False)
    # without PWM the plant-side record of the nominal wrench the thrusters gave over each
    # period (faults in) is what the allocation achieved: the reference shortfall
    reference = res["wrench_cmd"] - res["wrench_thr"]
    (line,) = [m for m in res.manifest["degraded"] if m.startswith("thrust allocation")]
    return res, reference, line


def test_the_best_effort_message_names_the_unmet_part_the_failures_leave():
    # the paper's set in mode 'wrench' passes at load; its +z-torque thrusters then fail,
    # and the base is asked to turn about +z
    faults = [
        {"time": 0.2, "thruster": i, "kind": "failed_off", "scale": 1.0} for i in PLUS_Z_TORQUE
    ]
    res, reference, line = _faulty_run(faults, 0.6)
    best = alloc_best_effort(res)
    assert best.any() and not best[res.t < 0.2].any()
    np.testing.assert_allclose(allocation_shortfall(res), reference, atol=1e-12)
    parts = _unmet_parts(line)
    assert parts == _expected_parts(reference, best)
    assert "+z" in parts["torque"][0]  # nothing gives a torque about +z any more
    assert "could not meet the torque demand about" in line or "and the torque demand" in line


def test_the_shortfall_follows_stuck_on_and_degraded_thrusters():
    faults = [
        {"time": 0.2, "thruster": i, "kind": "failed_off", "scale": 1.0} for i in PLUS_Z_TORQUE
    ]
    faults += [
        {"time": 0.3, "thruster": 1, "kind": "stuck_on", "scale": 1.0},
        {"time": 0.4, "thruster": 2, "kind": "degraded", "scale": 0.5},
    ]
    res, reference, line = _faulty_run(faults, 0.6)
    np.testing.assert_allclose(allocation_shortfall(res), reference, atol=1e-12)
    assert _unmet_parts(line) == _expected_parts(reference, alloc_best_effort(res))
