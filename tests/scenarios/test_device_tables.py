"""The devices of a user's own servicer, each unit with its own limits, and what the figures
show of them.

* VSCMG units with their own motor limits (``[[vscmg_unit]]``): in the plant a unit with a
  lower wheel-speed limit stops at its own limit while the others follow their command; a
  unit's own torque and rate limits bind on it alone (analytic: limit / inertia).
* Reaction-wheel friction (``[wheels]``, ``[[wheel]]``), through the one motor law of the
  plant: a free wheel spins down as ``w0 exp(-c t / J)`` under viscous friction and
  linearly under Coulomb friction, and the system's angular momentum does not change (the
  friction is internal); in the loop the momentum books still close.
* The figures: each wheel drawn against its own limits from the table, titles that give a
  range (not one value) when the units differ, and titles inside the figure.
"""

import math
import textwrap

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from dqspace.multibody import momentum, simulate_compiled
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.build.system import build_system
from dqspace.scenarios.figures import plots as P
from dqspace.scenarios.sim import boundary as _inputs
from dqspace.scenarios.sim.plant import Plant
from dqspace.scenarios.spec.config import ScenarioError
from dqspace.scenarios.store.results import Results
from support.books import momentum_closes

RPM = math.pi / 30.0  # [rad/s] per rpm, written out: the reference does not use the code's
W0_RPM = 3000.0  # the VSCMG wheels' nominal speed (vscmg.wheel_speed_rpm)
HEAVY = """
[base]
mass = 1e11
inertia = [1e11, 1e11, 1e11, 0.0, 0.0, 0.0]
[thrusters]
enabled = false
"""


def _scenario(tmp_path, text, overrides=()):
    f = tmp_path / "servicer.toml"
    f.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_scenario(f, list(overrides))


def _free_run(sy, T, *, gimbal_rate_cmd=None, wheel_accel_cmd=None):
    """The plant of ``sy`` integrated for T [s] from its initial state with the VSCMG
    commands held (zero arm and wheel torques): ``(t (N, 1), v (N, nv), q (N, nq), plant)``."""
    plant = Plant(sy)
    K = sy.cluster_model.cluster.K if sy.cluster_model is not None else 0
    gr = np.zeros(K) if gimbal_rate_cmd is None else np.asarray(gimbal_rate_cmd, float)
    wa = np.zeros(K) if wheel_accel_cmd is None else np.asarray(wheel_accel_cmd, float)
    z = np.zeros(0)
    plant.apply(0.0, np.zeros(sy.plant.nv), z, z, z, gr, wa, np.zeros(6))
    tr = simulate_compiled(
        sy.plant, sy.q0, sy.v0, dt=plant.dt, n_steps=int(round(T / plant.dt)),
        inputs=_inputs.closed_loop_inputs, params=plant.params, mem=plant.mem,
    )  # fmt: skip
    return tr.t[:, None], tr.v, tr.q, plant


# ------------------------------------------------------------------ VSCMG units' own limits

UNITS = """
[vscmg]
layout = "table"
wheel_speed_rpm = 3000.0
gimbal_torque_max = 10.0
gimbal_rate_max = 3.0
wheel_torque_max = 2.0
wheel_speed_max_rpm = 6000.0
[[vscmg_unit]]
position = [0.2, 0.0, 0.0]
gimbal_axis = [1.0, 0.0, 0.0]
spin_axis = [0.0, 1.0, 0.0]
wheel_speed_max_rpm = 3030.0
[[vscmg_unit]]
position = [0.0, 0.2, 0.0]
gimbal_axis = [0.0, 1.0, 0.0]
spin_axis = [0.0, 0.0, 1.0]
gimbal_rate_max = 0.3
[[vscmg_unit]]
position = [0.0, 0.0, 0.2]
gimbal_axis = [0.0, 0.0, 1.0]
spin_axis = [1.0, 0.0, 0.0]
wheel_torque_max = 0.05
gimbal_torque_max = 0.02
[[vscmg_unit]]
position = [-0.2, 0.0, 0.0]
gimbal_axis = [1.0, 0.0, 0.0]
spin_axis = [0.0, 0.0, 1.0]
"""


def test_a_vscmg_unit_is_clipped_at_its_own_wheel_speed_limit_and_another_is_not(tmp_path):
    sy = build_system(_scenario(tmp_path, "[scenario]\nname = 'units'\n" + HEAVY + UNITS).config)
    cm = sy.cluster_model
    a, T = 10.0, 0.6  # [rad/s^2] every wheel commanded; in 0.6 s +57 rpm
    t, v, _, plant = _free_run(sy, T, wheel_accel_cmd=np.full(4, a))
    om = v[:, cm.index.wheel_v]
    I_ws = cm.cluster.I_ws
    top, dt = 3030.0 * RPM, plant.dt
    # unit 1 stops at its own 3030 rpm (at most one step's acceleration beyond it) ...
    assert om[:, 0].max() <= top + a * dt and om[-1, 0] >= top
    reach = (top - W0_RPM * RPM) / a  # 0.314 s
    k = t[:, 0] < reach - dt
    np.testing.assert_allclose(om[k, 0], W0_RPM * RPM + a * t[k, 0], rtol=1e-12)
    # ... while units 2 and 4 (the section's 6000 rpm) go on past it at the command
    for i in (1, 3):
        np.testing.assert_allclose(om[:, i], W0_RPM * RPM + a * t[:, 0], rtol=1e-12)
    assert om[-1, 1] > top + 20 * RPM
    # unit 3's own wheel motor limit, 0.05 N m: it spins up at limit / inertia
    np.testing.assert_allclose(om[:, 2], W0_RPM * RPM + 0.05 / I_ws[2] * t[:, 0], rtol=1e-12)
    # the plant counted clips on the wheel rows of units 1 and 3 only
    hit = plant.devices(plant.mem > 0)
    assert hit["vscmg_wheel"].tolist() == [True, False, True, False]
    assert not hit["gimbal"].any()


def test_a_vscmg_unit_s_own_gimbal_torque_and_rate_limits_bind_on_it_alone(tmp_path):
    sy = build_system(_scenario(tmp_path, "[scenario]\nname = 'units'\n" + HEAVY + UNITS).config)
    cm = sy.cluster_model
    t, v, _, plant = _free_run(sy, 0.5, gimbal_rate_cmd=np.full(4, 1.0))
    gd = v[:, cm.index.gimbal_v]
    I_cg, dt = cm.cluster.I_cg, plant.dt
    # unit 3: its own 0.02 N m gimbal motor (the section's is 10 N m); the servo asks more
    # while the rate is below 0.98 rad/s
    np.testing.assert_allclose(gd[:, 2], 0.02 / I_cg[2] * t[:, 0], rtol=1e-6, atol=1e-12)
    # unit 2: its own 0.3 rad/s rate limit; the servo asks at most k_g * 1 rad/s = 50 rad/s^2,
    # so the rate ends at most one step's acceleration beyond the limit
    assert gd[:, 1].max() <= 0.3 + 50.0 * dt and gd[-1, 1] >= 0.3
    # units 1 and 4 reach the command, 1 rad/s, with the section's limits (3 rad/s, 10 N m)
    np.testing.assert_allclose(gd[-1, [0, 3]], 1.0, rtol=1e-9)
    hit = plant.devices(plant.mem > 0)
    assert hit["gimbal"].tolist() == [False, True, True, False]


def test_units_without_their_own_limits_take_the_section_s_and_bad_ones_are_refused(tmp_path):
    text = "[scenario]\nname = 'units'\n" + UNITS
    sc = _scenario(tmp_path, text)
    sy = build_system(sc.config)
    lim = sy.description["vscmg_limits"]
    assert lim["wheel_speed_max_rpm"] == pytest.approx([3030.0, 6000.0, 6000.0, 6000.0])
    assert lim["wheel_torque_max"] == [2.0, 2.0, 0.05, 2.0]
    assert lim["gimbal_torque_max"] == [10.0, 10.0, 0.02, 10.0]
    assert lim["gimbal_rate_max"] == [3.0, 0.3, 3.0, 3.0]
    # the pyramid: every unit the section's
    sy = build_system(load_scenario("station-keeping", ["vscmg.wheel_torque_max=1.5"]).config)
    assert sy.description["vscmg_limits"]["wheel_torque_max"] == [1.5] * 4
    bad = text.replace("gimbal_rate_max = 0.3", "gimbal_rate_max = 0.3\nwheel_speed_max_rpm = -5")
    with pytest.raises(
        ScenarioError,
        match=r"servicer.toml: vscmg_unit\[1\].wheel_speed_max_rpm = -5.0 is out of range: "
        r"must be >= 0.0 rpm",
    ):
        _scenario(tmp_path, bad)


# ------------------------------------------------------------------ reaction-wheel friction

WHEELS = """
[scenario]
name = "friction"
[vscmg]
enabled = false
[wheels]
enabled = true
layout = "table"
friction = 0.002
coulomb = 0.0
initial_speed_rpm = [3000.0, 0.0, 2000.0]
[[wheel]]
axis = [1.0, 0.0, 0.0]
spin_inertia = 0.02
max_torque = 0.5
max_speed_rpm = 6000.0
[[wheel]]
axis = [0.0, 1.0, 0.0]
spin_inertia = 0.02
max_torque = 0.5
max_speed_rpm = 6000.0
[[wheel]]
axis = [0.0, 0.0, 1.0]
spin_inertia = 0.03
max_torque = 0.5
max_speed_rpm = 6000.0
friction = 0.005
"""


def _spin_down(tmp_path, overrides=(), T=3.0):
    sy = build_system(_scenario(tmp_path, HEAVY + WHEELS, overrides).config)
    t, v, q, plant = _free_run(sy, T)
    om = v[:, sy.wheel_model.index.wheel_v]
    h = np.array([momentum(sy.plant, q[k], v[k]).angular for k in (0, len(t) // 2, -1)])
    return sy, t[:, 0], om, h, plant


def test_a_free_wheel_spins_down_exponentially_under_viscous_friction(tmp_path):
    sy, t, om, h, plant = _spin_down(tmp_path)
    # J, the inertia the friction decelerates: the wheel's spin inertia against the base's
    # 1e11 kg m^2 (I_s I_B / (I_s + I_B) = I_s to 1e-12)
    J = [0.02, 0.02, 0.03]
    # wheel 1 has the section's friction, wheel 3 its own 0.005 N m s/rad
    np.testing.assert_allclose(om[:, 0], 3000 * RPM * np.exp(-0.002 * t / J[0]), rtol=1e-9)
    np.testing.assert_allclose(om[:, 2], 2000 * RPM * np.exp(-0.005 * t / J[2]), rtol=1e-9)
    assert np.abs(om[:, 1]).max() < 1e-18  # at rest (the base barely turns): no friction
    assert om[-1, 2] < 0.7 * om[0, 2]  # the decay is well under way (exp(-0.5))
    # the friction is internal: the system's angular momentum does not change (8.9 N m s,
    # the wheels'; of it the friction moves 4.1 N m s to the base in 3 s)
    assert np.abs(h - h[0]).max() <= 1e-12 * np.linalg.norm(h[0])
    assert not plant.mem.any()  # friction is not a saturation


def test_a_free_wheel_spins_down_linearly_under_coulomb_friction(tmp_path):
    over = ["wheels.friction=0", "wheel[2].friction=-1", "wheels.coulomb=0.004"]
    sy, t, om, h, _ = _spin_down(tmp_path, over)
    assert [w.coulomb for w in sy.wheel_model.array.wheels] == [0.004] * 3
    np.testing.assert_allclose(om[:, 0], 3000 * RPM - 0.004 / 0.02 * t, rtol=1e-9)
    np.testing.assert_allclose(om[:, 2], 2000 * RPM - 0.004 / 0.03 * t, rtol=1e-9)
    assert np.abs(h - h[0]).max() <= 1e-12 * np.linalg.norm(h[0])


# ------------------------------------------------------------------ in the loop, and figures

#: ur5-waypoints' pyramid as a table: each wheel its own limits, two with friction; two
#: thrusters of 8 N among the 5 N ones
TABLE = [
    "scenario.duration=2.5",
    "wheels.layout=table",
    "wheel=["
    + ", ".join(
        f"{{axis = [{ax}], position = [{pos}], spin_inertia = 0.05, max_torque = {tq}, "
        f"max_speed_rpm = {sp}{extra}}}"
        for ax, pos, tq, sp, extra in (
            ("0.8165, 0.0, 0.5774", "0.25, 0.0, 0.0", 0.4, 3000.0, ", friction = 0.002"),
            ("0.0, 0.8165, 0.5774", "0.0, 0.25, 0.0", 0.5, 4000.0, ""),
            ("-0.8165, 0.0, 0.5774", "-0.25, 0.0, 0.0", 0.6, 5000.0, ", coulomb = 0.001"),
            ("0.0, -0.8165, 0.5774", "0.0, -0.25, 0.0", 0.7, 6000.0, ""),
        )
    )
    + "]",
    "thruster[0].max_thrust=8",
    "thruster[1].max_thrust=8",
]
SPEED_LIMITS, TORQUE_LIMITS = [3000.0, 4000.0, 5000.0, 6000.0], [0.4, 0.5, 0.6, 0.7]


@pytest.fixture(scope="module")
def table_run():
    sc = load_scenario("ur5-waypoints", TABLE)
    return sc, run(sc, progress=False)


def _drawn(fig):
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return fig, canvas.get_renderer()


def _levels(ax, gid="limit"):
    """The y of every horizontal line ``gid`` of ``ax`` with its colour."""
    out = []
    for ln in ax.get_lines():
        y = np.asarray(ln.get_ydata(), float)
        if ln.get_gid() == gid and np.all(y == y[0]):
            out.append((float(y[0]), ln.get_color()))
    return out


def _plain(text):
    return text.replace("\u00a0", " ")


def _inside(fig, renderer, text):
    """The text's bounding box lies within the figure's."""
    box, page = text.get_window_extent(renderer), fig.bbox
    return (
        box.x0 >= page.x0 - 0.5
        and box.x1 <= page.x1 + 0.5
        and box.y0 >= page.y0 - 0.5
        and box.y1 <= page.y1 + 0.5
    )


def test_in_the_loop_wheel_friction_keeps_the_momentum_books_closed(table_run):
    sc, res = table_run
    sy = build_system(sc.config)
    assert [w.friction for w in sy.wheel_model.array.wheels] == [0.002, 0.0, 0.0, 0.0]
    assert [w.coulomb for w in sy.wheel_model.array.wheels] == [0.0, 0.0, 0.001, 0.0]
    assert np.abs(res["rw_speed"]).max() > 1.0  # the wheels turned: friction acted
    momentum_closes(res, sy.plant, rtol=2e-3)


def test_the_wheels_figure_draws_each_wheel_s_own_limits_from_the_table(table_run):
    _, res = table_run
    fig, renderer = _drawn(P.plot_wheels(res))
    ax = fig.axes
    title = _plain(fig.get_suptitle())
    # one value per key only when the wheels agree; here each has its own
    assert "max_speed_rpm 3000–6000 rpm (per wheel)" in title
    assert "max_torque 0.4–0.7 N m (per wheel)" in title
    assert "max_speed_rpm 6000 rpm" not in title and "max_torque 1 N m" not in title
    speed = _levels(ax[1])
    assert sorted(y for y, _ in speed) == pytest.approx(SPEED_LIMITS, rel=1e-12)
    # each wheel's limit in that wheel's colour
    colors = {ln.get_label(): ln.get_color() for ln in ax[0].get_lines()}
    for i, lim in enumerate(SPEED_LIMITS):
        (drawn,) = [c for y, c in speed if y == pytest.approx(lim, rel=1e-12)]
        assert drawn == colors[f"wheel {i + 1}"]
    torque = _levels(ax[2])
    peak = float(np.abs(res["rw_torque_cmd"]).max())
    on_scale = [x for x in TORQUE_LIMITS if peak >= x / 3.0]
    assert on_scale  # the run pushes hard enough to put some in view
    expected = sorted([*on_scale, *(-x for x in on_scale)])
    assert sorted(y for y, _ in torque) == pytest.approx(expected, rel=1e-12)
    off = [x for x in TORQUE_LIMITS if x not in on_scale]
    if off:
        assert "off scale" in ax[2].get_title(loc="left")
    assert _inside(fig, renderer, fig._suptitle)


def test_the_thrusters_title_gives_the_range_of_thrust_of_the_table(table_run):
    _, res = table_run
    fig, renderer = _drawn(P.plot_thrusters(res))
    title = _plain(fig.get_suptitle())
    assert "max_thrust 5–8 N (per thruster)" in title
    assert "min_impulse_bit 0.005 N s," in title  # one value: every thruster has it
    assert _inside(fig, renderer, fig._suptitle)


@pytest.fixture(scope="module")
def units_run(tmp_path_factory):
    text = "[scenario]\nname = 'units'\nduration = 0.2\n" + UNITS
    return run(_scenario(tmp_path_factory.mktemp("units"), text), progress=False)


@pytest.mark.parametrize("name", ["units", "W" * 100, "my-servicer-" * 8 + "mk2"])
def test_the_vscmg_figure_s_title_fits_the_figure(units_run, name):
    sc = units_run.manifest["scenario"]
    named = dict(sc, scenario=dict(sc["scenario"], name=name))  # the longest names allowed
    res = Results(units_run.data, units_run.info, dict(units_run.manifest, scenario=named))
    fig, renderer = _drawn(P.plot_vscmg(res))
    assert fig.get_suptitle().startswith(name[:20])
    title = _plain(fig.get_suptitle())
    assert "gimbal_torque_max 0.02–10 N m (per unit)" in title
    assert "wheel_speed_max_rpm 3030–6000 rpm (per unit)" in title
    assert "gimbal_rate_max 0.3–3 rad/s (per unit)" in title
    assert _inside(fig, renderer, fig._suptitle)
    for ax in fig.axes:
        assert _inside(fig, renderer, ax.title) and _inside(fig, renderer, ax._left_title)
