"""The repository's set-up promises: layout, namespace, README commands and CI."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [b.strip() for b in blocks]


def test_readme_has_exactly_two_commands_and_ci_runs_the_test_one():
    cmds = readme_commands()
    assert len(cmds) == 2
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci == cmds[1]
    assert "pytest" in cmds[1] and "|| true" not in ci


def _ignored(name):
    """True for what .gitignore keeps out of the repository (builds, venvs, runs/)."""
    r = subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT)
    return r.returncode == 0


def test_top_level_layout():
    # what a user's own runs and builds leave (runs/, build/, *.egg-info) is not layout
    names = {p.name for p in ROOT.iterdir() if not p.name.startswith(".") and not _ignored(p.name)}
    code = {"dq", "multibody", "actuators", "control", "scenarios"}
    assert code | {"pyproject.toml", "tests", "notebooks"} <= names
    allowed = code | {
        "pyproject.toml",
        "tests",
        "notebooks",
        "README.md",
        "LICENSE",
        "CHANGELOG.md",
        "docs",
        "benchmarks",
        "examples",  # the documentation site's gallery (docs/conf.py)
        "dqspace",  # the package's own __init__ (version) and the numba cache guard
    }
    assert names <= allowed, names - allowed


def test_version_is_defined_once_and_printed_by_the_cli():
    from importlib import metadata

    import dqspace

    assert dqspace.__version__ == metadata.version("dqspace")
    out = subprocess.run(
        [sys.executable, "-m", "dqspace.scenarios.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.startswith(f"dqspace {dqspace.__version__}, Python ")
    assert "numba " in out and "numpy " in out


def test_the_changelog_has_release_notes_for_the_version():
    import re

    import dqspace

    text = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] — (\d{4}-\d\d-\d\d)$", text, re.M)
    assert releases, "no release heading '## [x.y.z] — yyyy-mm-dd'"
    # the newest release (first after [Unreleased]) is the package's version, non-dev
    assert releases[0][0] == dqspace.__version__
    section = text.split(f"## [{releases[0][0]}]")[1].split("\n## [")[0]
    for part in ("### Added", "### Changed", "### Fixed"):
        assert part in section, part


def test_installed_under_the_dqspace_namespace_only():
    import dqspace.dq

    # the code is imported from the repository (editable) or site-packages, never
    # through a top-level name such as `dq` or `control`
    assert dqspace.dq.__name__ == "dqspace.dq"
    out = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print(u.find_spec('dq'))"],
        capture_output=True,
        text=True,
        cwd="/",
        check=True,
    )
    assert out.stdout.strip() == "None"


def test_cli_demo_runs_and_prints_poses():
    out = subprocess.run(
        [sys.executable, "-m", "dqspace.scenarios.cli", "demo"],
        capture_output=True,
        text=True,
        check=True,
    )
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("E origin in I"))
    xyz = [float(t) for t in line.split("[")[-1].rstrip("]").split()]
    assert xyz == [1.0, -0.0, 0.5]  # (1, 0, 0) + Rz(90 deg) (0, 0, 0.5)


def test_ruff_lint_and_format_are_clean():
    """The repository passes ruff (rules and formatter configured in pyproject.toml)."""
    for args in (["check", "."], ["format", "--check", "."]):
        r = subprocess.run(
            [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
        )
        assert r.returncode == 0, f"ruff {' '.join(args)}:\n{r.stdout}{r.stderr}"


def _tracked(*patterns):
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", *patterns],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [ROOT / f for f in out if (ROOT / f).is_file()]


def test_the_project_refers_to_no_file_outside_the_repository():
    outside = re.compile(r"\.\./shared|\b(DESIGN|STYLE|TESTING)\.md\b")
    bad = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in _tracked("*.py", "*.md", "*.toml", "*.ipynb", "*.txt", "*.cfg")
        if p.name != "test_packaging.py"
        for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if outside.search(line)
    ]
    assert not bad, bad


def test_relative_links_in_the_documentation_resolve():
    link = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
    broken = []
    for page in _tracked("*.md"):
        for target in link.findall(page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken
