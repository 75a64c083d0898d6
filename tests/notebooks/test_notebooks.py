"""Every notebook in notebooks/ runs top to bottom without an error, in under 2 minutes.

The kernel is this interpreter (``sys.executable``), through a kernelspec written to a
temporary directory that ``JUPYTER_PATH`` points at: a fresh CI venv needs no globally
installed kernel.  Each notebook runs with ``notebooks/`` as its working directory.
"""

import json
import re
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
KERNEL = "dqspace-test-python"
BUDGET = 120.0  # [s] per notebook, top to bottom


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


def test_every_notebook_the_readme_lists_exists():
    listed = set(re.findall(r"`([\w-]+\.ipynb)`", (NOTEBOOKS / "README.md").read_text()))
    assert {"station_keeping.ipynb", "gain_tuning.ipynb"} <= listed
    assert listed <= {p.name for p in NOTEBOOKS.glob("*.ipynb")}


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(path, kernel_name):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=BUDGET,  # per cell; the whole notebook is checked below
        kernel_name=kernel_name,
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    t0 = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first failing cell
    wall = time.perf_counter() - t0
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors
    assert wall < BUDGET, f"{path.name} took {wall:.0f} s (budget {BUDGET:.0f} s)"
    executed = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert executed and all(c.execution_count for c in executed)
