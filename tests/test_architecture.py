"""The import rules between dqspace's five code folders.

* Layering: ``dq`` imports none of the others; ``multibody`` only ``dq``; ``actuators``
  ``dq`` and ``multibody``; ``control`` those and ``actuators``; ``scenarios`` anything.
* Privacy: a folder uses another folder only through its public names -- no import of a
  module or a name starting with ``_`` from a different folder (``from ..multibody._x``,
  ``from dqspace.dq.checks import _y``).  Within a folder anything goes.

The imports are read from the source (``ast``), so the test also sees imports inside
functions.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("dq", "multibody", "actuators", "control", "scenarios")
ALLOWED = {
    "dq": set(),
    "multibody": {"dq"},
    "actuators": {"dq", "multibody"},
    "control": {"dq", "multibody", "actuators"},
    "scenarios": set(FOLDERS),
}
# dqspace's own infrastructure module (numba cache set-up), imported by every folder's
# ``__init__`` before any compiled code is defined.
INFRASTRUCTURE = {"dqspace._numba_cache", "dqspace._jit"}
# Known violations still to be removed: (file, imported module, name).
ALLOW_LIST: set = set()


def _module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = ["dqspace", *rel.parts]
    if parts[-1] == "__init__":
        parts.pop()
    return parts, path.name == "__init__.py"


def _imports(path, text=None):
    """(absolute module, imported name or None, line) of every import in ``path``."""
    parts, is_pkg = _module_name(path)
    package = parts if is_pkg else parts[:-1]
    out = []
    text = path.read_text() if text is None else text
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            out += [(module, a.name, node.lineno) for a in node.names]
    return out


def _violations(path, text=None):
    own = path.relative_to(ROOT).parts[0]
    found = []
    for module, name, line in _imports(path, text):
        if not module.startswith("dqspace"):
            continue
        if module in INFRASTRUCTURE:
            continue
        mparts = module.split(".")
        if len(mparts) == 1:  # `from dqspace import x` / `from .. import x`: x is a folder
            if name is None:  # `import dqspace` (the version, the root package)
                continue
            if name in FOLDERS:
                mparts, name = ["dqspace", name], None
            else:
                found.append(f"{path.relative_to(ROOT)}:{line}: imports dqspace.{name}")
                continue
        other = mparts[1]
        if other == own:
            continue
        where = f"{path.relative_to(ROOT)}:{line}: {module}" + (f" import {name}" if name else "")
        if other not in ALLOWED[own]:
            found.append(f"{where} -- {own} may not import {other}")
        private = [p for p in mparts[2:] if p.startswith("_") and not p.startswith("__")]
        if name and name.startswith("_") and not name.startswith("__"):
            private.append(name)
        if private and (str(path.relative_to(ROOT)), module, name) not in ALLOW_LIST:
            found.append(f"{where} -- private {', '.join(private)} of {other}")
    return found


def _sources():
    return sorted(p for f in FOLDERS for p in (ROOT / f).rglob("*.py"))


def test_the_scan_sees_every_folder_and_resolves_relative_imports():
    files = _sources()
    assert {p.relative_to(ROOT).parts[0] for p in files} == set(FOLDERS)
    # relative imports resolve to absolute modules, from a module and from a package
    text = "from . import kernels\nfrom ..dq.checks import x\nfrom .kernels.layout import y\n"
    assert _imports(ROOT / "multibody" / "m.py", text) == [
        ("dqspace.multibody", "kernels", 1),
        ("dqspace.dq.checks", "x", 2),
        ("dqspace.multibody.kernels.layout", "y", 3),
    ]
    assert _imports(ROOT / "multibody" / "kernels" / "__init__.py", "from .. import _state\n") == [
        ("dqspace.multibody", "_state", 1)
    ]


@pytest.mark.parametrize(
    "folder, source, expected",
    [
        ("control", "from ..multibody._kernels import rnea\n", "private _kernels"),
        ("control", "from dqspace.dq._checks import check_unit_dq\n", "private _checks"),
        ("control", "from dqspace.multibody.kinematics import _frame_target\n", "private"),
        ("multibody", "from ..control import pd\n", "multibody may not import control"),
        (
            "multibody",
            "import dqspace.scenarios.sim.runner\n",
            "multibody may not import scenarios",
        ),
        ("dq", "from .. import multibody\n", "dq may not import multibody"),
    ],
)
def test_the_rules_catch_a_planted_violation(folder, source, expected):
    found = _violations(ROOT / folder / "planted.py", source)
    assert any(expected in f for f in found), found


@pytest.mark.parametrize(
    "folder, source",
    [
        ("multibody", "from ..dq.checks import first_nonfinite as _first_nonfinite\n"),
        ("multibody", "from . import _state\nfrom .kernels.articulated import _aba\n"),
        ("scenarios", "from ..control import pd\nfrom dqspace.multibody import kernels\n"),
    ],
)
def test_the_rules_accept_allowed_imports(folder, source):
    assert _violations(ROOT / folder / "planted.py", source) == []


def test_no_folder_imports_a_private_module_or_name_of_another_or_a_higher_layer():
    found = [v for p in _sources() for v in _violations(p)]
    assert not found, "\n".join(found)


def test_the_allow_list_holds_only_imports_that_still_exist():
    present = {(str(p.relative_to(ROOT)), m, n) for p in _sources() for m, n, _ in _imports(p)}
    assert ALLOW_LIST <= present, ALLOW_LIST - present


def test_only_multibody_reads_the_models_private_arrays():
    # other folders take the packed arrays through the public ``Model.packed``
    found = []
    for path in _sources():
        if path.relative_to(ROOT).parts[0] == "multibody":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in ("_ints", "_reals"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
    assert not found, "\n".join(found)
