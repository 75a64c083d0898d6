"""The README's two commands work one after the other in one clone, in either order.

``pip install .`` then ``pip install -e .`` (and the reverse) into one virtual
environment: dqspace must import from the install that came last, whole.  The bug this
guards against: numba's caches written inside the installed package survived pip's
uninstall as bare folders, and those shadowed the editable install (every import of
``dqspace.scenarios`` failed with "unknown location").

The environments are real venvs; dqspace's dependencies come from this interpreter's
environment through a path file (no download), and dqspace is installed with
``--no-deps --no-build-isolation``.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("dq", "multibody", "actuators", "control", "scenarios")

IMPORT_ALL = f"""
import importlib, sys
import dqspace
mods = ["dqspace." + p for p in {PACKAGES!r}]
for m in mods:
    importlib.import_module(m)
from dqspace.scenarios import RunInterrupted, load_scenario, run  # the import that broke
import dqspace.scenarios.sim.runner, dqspace.scenarios.campaigns.sweep
print(dqspace.__version__)
print(sys.modules["dqspace.scenarios"].__file__)
"""

COMPILE_SOME = """
import numpy as np
from dqspace.dq import dq_mul, dq_identity
print(dq_mul(dq_identity(), dq_identity()))
"""


def _source_copy(dest):
    """The repository's files as a fresh clone has them (tracked and new, not ignored)."""
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for f in filter(None, files):
        src = ROOT / f.decode()
        if src.is_file():
            (dest / f.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f.decode())
    return dest


def _venv(path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    py = path / "bin" / "python"
    site = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # this environment's packages (numpy, numba, pip, setuptools ...) without running its
    # .pth files: the editable dqspace of this checkout stays out of sight
    here = sysconfig.get_paths()["purelib"]
    Path(site, "zz_test_dependencies.pth").write_text(here + "\n")
    return py, Path(site)


def _run(py, args, env, cwd):
    p = subprocess.run([py, *args], capture_output=True, text=True, env=env, cwd=cwd)
    assert p.returncode == 0, f"{' '.join(map(str, args))}:\n{p.stdout}\n{p.stderr}"
    return p.stdout


def _pip_install(py, src, env, editable):
    args = ["-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q"]
    args += ["-e", str(src)] if editable else [str(src)]
    _run(py, args, env, cwd=src.parent)


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ)
    e["DQSPACE_CACHE_DIR"] = str(tmp_path / "cache")  # this test's own kernel cache
    e.pop("NUMBA_CACHE_DIR", None)
    e.pop("PYTHONPATH", None)
    return e


def _no_jit(env):
    """Imports resolve modules; compiling them again (a minute) would test nothing more."""
    return {**env, "NUMBA_DISABLE_JIT": "1"}


def _installed_files(site):
    return {p for p in (site / "dqspace").rglob("*") if p.is_file()}


@pytest.mark.slow
def test_install_then_editable_install_imports_the_editable_copy(tmp_path, env):
    src = _source_copy(tmp_path / "clone")
    py, site = _venv(tmp_path / "venv")
    _pip_install(py, src, env, editable=False)
    before = _installed_files(site)
    _run(py, ["-c", COMPILE_SOME], env, cwd=tmp_path)  # compiles and caches kernels
    # nothing is written inside the installed package (pip would leave it behind)
    assert _installed_files(site) == before
    assert any(Path(env["DQSPACE_CACHE_DIR"]).rglob("*.nbi")), "no kernel was cached"

    _pip_install(py, src, env, editable=True)
    out = _run(py, ["-c", IMPORT_ALL], _no_jit(env), cwd=tmp_path).split()
    assert Path(out[-1]).resolve() == (src / "scenarios" / "__init__.py").resolve()
    assert not (site / "dqspace").exists()


@pytest.mark.slow
def test_editable_install_then_install_imports_the_installed_copy(tmp_path, env):
    src = _source_copy(tmp_path / "clone")
    py, site = _venv(tmp_path / "venv")
    _pip_install(py, src, env, editable=True)
    _run(py, ["-c", COMPILE_SOME], env, cwd=tmp_path)
    _pip_install(py, src, env, editable=False)
    out = _run(py, ["-c", IMPORT_ALL], _no_jit(env), cwd=tmp_path).split()
    assert Path(out[-1]).resolve() == (site / "dqspace" / "scenarios" / "__init__.py").resolve()
