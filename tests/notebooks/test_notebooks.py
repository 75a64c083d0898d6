"""Every notebook in notebooks/ runs top to bottom without an error, in under a minute, and
shows every figure it makes.

The kernel is this interpreter (``sys.executable``), through a kernelspec written to a
temporary directory that ``JUPYTER_PATH`` points at: a fresh CI venv needs no globally
installed kernel.  Each notebook runs with ``notebooks/`` as its working directory.

Figures: a code cell that makes a figure carries the cell tag ``figure`` (cell metadata
``"tags": ["figure"]``).  While a notebook runs, a probe cell put before its first cell counts
the matplotlib Figures each cell creates (pyplot's and bare ``Figure()`` alike); after the run
every tagged cell must show exactly one image per Figure it created (a Figure left undisplayed,
such as a ``plots.plot_*(res);`` ending in a semicolon, shows none; a pyplot figure that is also
the cell's last expression shows twice), every cell that created a Figure must be tagged, an
untagged cell shows no image, and no image is blank (a PNG of a single colour, or an SVG
without axes).  Run with ``-s`` to see each notebook's run time.
"""

import base64
import io
import json
import re
import sys
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
from matplotlib.image import imread
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
KERNEL = "dqspace-test-python"
#: [s] a cell may take at most this (a hung kernel fails the test; a cell's first use of
#: a kernel may compile it on a cold cache).  Tests assert no wall-clock times: each
#: notebook's time is printed (``pytest -s``) and the suite's is watched in CI.
CELL_TIMEOUT = 900.0
FIGURE_TAG = "figure"
IMAGE_TYPES = ("image/png", "image/svg+xml")
MIN_PIXEL_VARIANCE = 1e-4  # of the RGB values in [0, 1]; a blank image has 0

# Run before the notebook's first cell: count the Figures each cell creates, stored under
# the cell's execution count once it has run.
PROBE = """\
import matplotlib.figure as _probe_mf
from IPython import get_ipython as _probe_ip

_probe_figures, _probe_now = {}, [0]
_probe_init = _probe_mf.Figure.__init__


def _probe_counting_init(self, *args, **kwargs):
    _probe_init(self, *args, **kwargs)
    _probe_now[0] += 1


def _probe_before(info):
    _probe_now[0] = 0


def _probe_after(result):
    _probe_figures[result.execution_count] = _probe_now[0]


_probe_mf.Figure.__init__ = _probe_counting_init
_probe_ip().events.register("pre_run_cell", _probe_before)
_probe_ip().events.register("post_run_cell", _probe_after)
"""
REPORT = "import json as _probe_json\nprint(_probe_json.dumps(_probe_figures))"


@pytest.fixture(scope="module")
def compiled_kernels():
    """Compile (or load) the simulation kernels once, here, before any notebook is timed.

    numba caches them on disk; the notebook kernels and their Dask workers then load them
    instead of each compiling them at once on a cold machine (about a minute per process).
    """
    from dqspace.scenarios import load_scenario, run

    run(load_scenario("station-keeping", ["scenario.duration=0.1"]), progress=False)
    run(load_scenario("dynamics-check", ["scenario.duration=0.1"]), progress=False)


@pytest.fixture(scope="module")
def kernel_name(tmp_path_factory, compiled_kernels):
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": f"dqspace tests ({sys.executable})",
                "language": "python",
            }
        )
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(root))
        yield KERNEL


def _images(cell):
    """The (mime type, data) of every image the cell shows."""
    return [
        (mime, o.data[mime])
        for o in cell.get("outputs", [])
        if o.output_type in ("display_data", "execute_result")
        for mime in IMAGE_TYPES
        if mime in o.data
    ]


def _blank(mime, data):
    """True if the image shows nothing: one colour (PNG) or no axes (SVG)."""
    if mime == "image/svg+xml":
        return 'id="axes_' not in data
    pixels = imread(io.BytesIO(base64.b64decode(data)), format="png")
    return float(np.var(pixels[..., :3])) <= MIN_PIXEL_VARIANCE


def _tagged(cell):
    return FIGURE_TAG in cell.metadata.get("tags", [])


def _label(path, cell):
    first = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
    return f"{path.name}, cell In[{cell.execution_count}] {first[:60]!r}"


def test_every_notebook_the_readme_lists_exists():
    listed = set(re.findall(r"`([\w-]+\.ipynb)`", (NOTEBOOKS / "README.md").read_text()))
    assert {"station_keeping.ipynb", "gain_tuning.ipynb"} <= listed
    assert listed <= {p.name for p in NOTEBOOKS.glob("*.ipynb")}


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_cells_that_plot_are_tagged_figure(path):
    # the source-level half of the figure check (the run below checks what cells create)
    nb = nbformat.read(path, as_version=4)
    plots = re.compile(r"\bplot_\w+\(|\bplt\.(subplots|figure)\(|\bFigure\(|\.plot\.\w+\(")
    for cell in nb.cells:
        if _tagged(cell):
            assert cell.cell_type == "code", f"{path.name}: a {cell.cell_type} cell is tagged"
        if cell.cell_type == "code" and plots.search(cell.source):
            assert _tagged(cell), f"{path.name}: {cell.source[:60]!r} plots, tag it {FIGURE_TAG!r}"
    assert any(_tagged(c) for c in nb.cells), f"{path.name} has no figure"


def _execute(path, kernel_name):
    """Run the notebook with the probe; return it (probe cells removed), the Figures each
    cell created (by execution count) and the wall time [s]."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(PROBE))
    nb.cells.append(nbformat.v4.new_code_cell(REPORT))
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name=kernel_name,
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    t0 = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first failing cell
    wall = time.perf_counter() - t0
    report = nb.cells.pop()
    nb.cells.pop(0)
    created = {int(k): n for k, n in json.loads(report.outputs[0].text).items()}
    return nb, created, wall


def _check_figures(where, cell, n_figures):
    """A cell shows one non-blank image per Figure it created, and is tagged iff it does."""
    images = _images(cell)
    if n_figures:
        assert _tagged(cell), f"{where} creates {n_figures} figure(s): tag it {FIGURE_TAG!r}"
    if _tagged(cell):
        if not n_figures:
            hint = "it makes no figure: remove the tag"
        elif len(images) < n_figures:
            hint = "end the cell with the Figure (no ';') or display(fig)"
        else:
            hint = "a pyplot figure is shown once at the end of the cell: do not also return it"
        assert len(images) == n_figures > 0, (
            f"{where} (tagged {FIGURE_TAG!r}) created {n_figures} figure(s) and shows "
            f"{len(images)} image(s): {hint}"
        )
    else:
        assert not images, f"{where} shows {len(images)} image(s): tag it {FIGURE_TAG!r}"
    for mime, data in images:
        assert not _blank(mime, data), f"{where} shows a blank {mime} image"


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom_and_shows_its_figures(path, kernel_name):
    nb, created, wall = _execute(path, kernel_name)
    print(f"\n{path.name}: {wall:.1f} s")
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors
    executed = [c for c in code if c.source.strip()]
    assert executed and all(c.execution_count for c in executed)
    for cell in code:
        _check_figures(_label(path, cell), cell, created.get(cell.execution_count, 0))
