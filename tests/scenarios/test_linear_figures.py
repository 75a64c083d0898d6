"""The figures of linearised closed loops (dqspace.scenarios.figures.linear_figures): what
each draws is read back from the figure and compared with the models it was given."""

import numpy as np
import pytest

from dqspace.control import (
    BaseController,
    BaseDOBController,
    BaseFeedback,
    BasePIDController,
    IntegralGains,
    PDGains,
    base_loop,
    base_loop_margins,
    disturbance_response,
)
from dqspace.multibody import Body, Joint, JointType, Model
from dqspace.scenarios.figures.linear_figures import (
    margins_table,
    plot_disturbance_bode,
    plot_margins_table,
    plot_pole_map,
)

GAINS = PDGains(kp_rot=2.0, kd_rot=0.5, kp_trans=100.0, kd_trans=20.0)


@pytest.fixture(scope="module")
def analysed():
    body = Model.build(
        [Body("body", None, Joint(JointType.FREE), 27.0, np.zeros(3), np.diag([0.4, 0.5, 0.6]))]
    )
    pose = body.neutral_configuration()
    integral = IntegralGains(ki_rot=0.1, ki_trans=10.0, limit_force=1.0, limit_torque=0.1)
    laws = {
        "dual PD": BaseController(body, GAINS),
        "dual PID": BasePIDController(body, GAINS, integral, period=0.01),
        "dual PD + DOB": BaseDOBController(body, GAINS, bandwidth=2.0, period=0.01),
    }
    dist, margins = {}, {}
    for label, law in laws.items():
        fb = BaseFeedback(law, pose)
        dist[label] = disturbance_response(body, pose, controller=fb)
        margins[label] = base_loop_margins(base_loop(body, pose, controller=fb))
    return dist, margins


def test_pole_map_draws_every_pole_of_every_model(analysed, tmp_path):
    dist, _ = analysed
    fig = plot_pole_map(dist, zoom=1.0)
    full, zoom = fig.axes[:2]
    for line, (label, lin) in zip(full.get_lines()[: len(dist)], dist.items(), strict=True):
        p = np.sort_complex(lin.poles())
        got = np.sort_complex(line.get_xdata() + 1j * line.get_ydata())
        np.testing.assert_allclose(got, p)
        assert line.get_label().startswith(label)
    assert [a.get_xlabel() for a in (full, zoom)] == ["Re s [1/s]"] * 2
    assert zoom.get_xlim()[0] == -1.0
    fig.savefig(tmp_path / "poles.png")


def test_disturbance_bode_shows_the_static_gains(analysed, tmp_path):
    """The force-to-position panel at the lowest frequency: the PD's ``2/kp_trans`` (in
    mm/N), the integral's and the observer's far below; the torque-to-attitude panel:
    ``2/kp_rot`` in deg/(N m)."""
    dist, _ = analysed
    fig = plot_disturbance_bode(dist, np.logspace(-4, 2, 50))
    pos_f, _, _, att_t = fig.axes[:4]
    first = {ln.get_label(): ln.get_ydata()[0] for ln in pos_f.get_lines()}
    assert first["dual PD"] == pytest.approx(2.0 / 100.0 * 1e3, rel=1e-6)
    assert first["dual PID"] < 1e-2 * first["dual PD"]
    assert first["dual PD + DOB"] < 1e-2 * first["dual PD"]
    att = {ln.get_label(): ln.get_ydata()[0] for ln in att_t.get_lines()}
    assert att["dual PD"] == pytest.approx(np.degrees(2.0 / 2.0), rel=1e-6)
    assert pos_f.get_ylabel() == "position error / force [mm/N]"
    assert att_t.get_ylabel() == "attitude error / torque [deg/(N m)]"
    fig.savefig(tmp_path / "bode.png")


def test_margins_table_states_each_channel(analysed, tmp_path):
    _, margins = analysed
    text = margins_table(margins)
    lines = text.splitlines()
    assert lines[0].startswith("| law | fx: PM, GM")
    assert len(lines) == 2 + 3
    pm = margins["dual PD"]["fx"].phase_margin
    assert f"{pm:.0f} deg, inf dB" in lines[2]
    gm_pid = 20 * np.log10(min(margins["dual PID"]["fx"].gain_margins))
    assert f"{gm_pid:+.1f}" in lines[3]
    fig = plot_margins_table(margins)
    fig.savefig(tmp_path / "margins.png")
