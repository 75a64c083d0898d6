"""``dqspace report``: one HTML page a reviewer opens offline, holding every metric in
display units, every figure embedded, the scenario, the versions and the run's status."""

import base64
import html
import re
import struct
import tomllib

import pytest

from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.cli import main
from dqspace.scenarios.figures.report import build_report, write_report
from dqspace.scenarios.figures.units import format_quantity
from dqspace.scenarios.sim.metrics import METRICS
from dqspace.scenarios.store.results import Results

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "sk"
    over = ["scenario.duration=1.0", "trajectory.start_time=0.3", "outputs.plots=false"]
    over.append("metrics.transient=0.5")  # every metric measured, the end-effector's too
    run(load_scenario("station-keeping", over), out=out, progress=False)
    return out


@pytest.fixture(scope="module")
def page(stored):
    assert main(["report", str(stored), "-q"]) == 0
    return (stored / "report.html").read_text(encoding="utf-8")


def _images(text):
    return re.findall(r'<img[^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)


def test_every_figure_is_embedded_as_a_decodable_png(page):
    images = _images(page)
    # station-keeping: rejection, wrench balance, tracking, thrusters, VSCMG, singularity
    assert len(images) == 6
    for b64 in images:
        png = base64.b64decode(b64, validate=True)
        assert png[:8] == PNG
        width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
        assert width > 800 and height > 300 and len(png) > 20_000


def test_no_resource_is_fetched_from_the_network(page):
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', page, flags=re.I)
    assert refs and all(r.startswith("data:") for r in refs)
    assert not re.search(r"url\(|@import|<script|<link|https?://", page, flags=re.I)


def test_every_metric_is_in_the_table_in_display_units(stored, page):
    res = Results.load(stored)
    table = page[page.index('<table id="metrics">') :]
    table = table[: table.index("</table>")]
    for name, value in res.manifest["metrics"].items():
        unit = METRICS[name][0]
        assert value == value, name  # measured: a number in display units
        shown = format_quantity(value, unit, kind=name)
        row = re.search(rf"<tr><td>{name}</td><td[^>]*>([^<]*)</td>", table)
        assert row is not None, name
        assert html.unescape(row.group(1)) == shown, name
    assert " mm</td>" in table and " deg</td>" in table  # lengths and angles converted
    assert "≤ 1 mm" in table and "met" in table


def test_the_scenario_is_the_resolved_toml_and_the_machine_is_named(stored, page):
    res = Results.load(stored)
    pre = re.search(r'<pre id="scenario">(.*?)</pre>', page, flags=re.S).group(1)
    doc = tomllib.loads(html.unescape(pre))
    assert doc["base_controller"] == res.manifest["scenario"]["base_controller"]
    assert doc["scenario"]["duration"] == 1.0
    machine = page[page.index('<table id="machine">') :]
    for text in (res.manifest["package_version"], res.manifest["python"], "numpy", "cpu_count"):
        assert str(text) in machine


def test_a_failed_run_says_so_and_lists_its_events(stored, tmp_path, monkeypatch):
    from dqspace.scenarios.figures import report

    monkeypatch.setattr(report, "figures", lambda res: {})  # the page's text only: faster
    res = Results.load(stored)
    events = [{"t": 0.4, "event": "thruster fault", "thruster": 2, "kind": "stuck_on"}]
    bad = Results(
        res.data,
        res.info,
        dict(
            res.manifest,
            status="failed",
            message="IntegrationError: x",
            events=events,
            degraded=["VSCMG steering saturated on 3 of 101 control ticks"],
        ),
    )
    text = build_report(bad)
    banner = re.search(r'<div class="banner (\w+)" id="status">([^<]*)</div>', text)
    assert banner.group(1) == "bad" and "FAILED at t = 1 s: IntegrationError: x" in banner.group(2)
    assert "VSCMG steering saturated on 3 of 101 control ticks" in text
    assert "<td>thruster fault</td>" in text and "kind = stuck_on" in text
    ok = re.search(r'<div class="banner (\w+)"', build_report(res)).group(1)
    assert ok == "ok"
    with pytest.raises(ValueError, match="is a directory"):
        write_report(res, tmp_path)


@pytest.mark.parametrize("name", ["report.pdf", "report.png", "r.html.txt"])
def test_a_report_named_as_another_format_is_refused(stored, tmp_path, capsys, name):
    """``--out report.pdf`` wrote an HTML page under a PDF's name."""
    assert main(["report", str(stored), "--out", str(tmp_path / name), "-q"]) == 2
    assert "a report is an HTML page; name it .html" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
