"""The rooms of dqspace and the rules between them (``docs/architecture.md``).

* Layering of the five code folders: ``dq`` imports none of the others; ``multibody`` only
  ``dq``; ``actuators`` ``dq`` and ``multibody``; ``control`` those and ``actuators``;
  ``scenarios`` anything.
* Layering inside ``scenarios``, by job: ``spec`` <- ``store`` <- ``build`` <- ``sim`` <-
  ``campaigns`` <- ``figures`` <- the command line (the modules at its top).  A
  sub-package imports only those at or below it.
* No import cycle between modules (imports inside functions count).
* Privacy: a folder uses another folder only through its public names; a private module
  (``_checks``) is imported only from its own package; in ``control`` and ``scenarios`` no
  module imports another module's private name (``from .x import _y``) at all (the lower
  floors' packages share private kernel building blocks inside the package).
* No absolute ``dqspace.`` import inside the packages (they import relatively).
* A function-level import says why on its line or the line above (a comment: it keeps
  start-up fast, or breaks what would be a cycle).
* Every module is at most :data:`MAX_LINES` lines.

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
#: the sub-packages of ``scenarios`` from the bottom up; its top-level modules are above all
SCENARIO_LAYERS = ("spec", "store", "build", "sim", "campaigns", "figures")
# dqspace's own infrastructure modules (numba cache set-up, lazy compilation, kernel
# pointers, compiling in parallel processes, progress lines, checked environment
# variables), usable by every folder.
INFRASTRUCTURE = {
    "dqspace._numba_cache",
    "dqspace._jit",
    "dqspace._precompile",
    "dqspace._progress",
    "dqspace._env",
}
MAX_LINES = 600
#: the folders whose modules share no private name at all; in the lower floors a package's
#: kernels share their private building blocks inside the package (``multibody.kernels``)
STRICT = ("control", "scenarios")


def _module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = ["dqspace", *rel.parts]
    if parts[-1] == "__init__":
        parts.pop()
    return parts, path.name == "__init__.py"


def _imports(path, text=None):
    """(absolute module, imported name or None, line, inside a function) of every import."""
    parts, is_pkg = _module_name(path)
    package = parts if is_pkg else parts[:-1]
    out = []
    text = path.read_text() if text is None else text
    tree = ast.parse(text, str(path))
    inner = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner |= {id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
    for node in ast.walk(tree):
        local = id(node) in inner
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno, local) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            out += [(module, a.name, node.lineno, local) for a in node.names]
    return out


def _resolve(module, name, known):
    """The module an import refers to: ``from pkg import sub`` is the module ``pkg.sub``."""
    if name is not None and f"{module}.{name}" in known:
        return f"{module}.{name}", None
    return module, name


def _sources():
    return sorted(p for f in FOLDERS for p in (ROOT / f).rglob("*.py"))


def _known():
    return {".".join(_module_name(p)[0]) for p in _sources()}


def _private(part):
    return part.startswith("_") and not part.startswith("__")


def _scenario_layer(mparts):
    """The layer index of a ``dqspace.scenarios...`` module (top-level modules: above all)."""
    if len(mparts) > 2 and mparts[2] in SCENARIO_LAYERS:
        return SCENARIO_LAYERS.index(mparts[2])
    return len(SCENARIO_LAYERS)


def _violations(path, text=None, known=None):
    known = _known() if known is None else known
    me, is_pkg = _module_name(path)
    my_pkg = me if is_pkg else me[:-1]
    own = me[1]
    found = []
    for module, name, line, _ in _imports(path, text):
        if not module or not module.startswith("dqspace"):
            continue
        if module in INFRASTRUCTURE:
            continue
        module, name = _resolve(module, name, known)
        mparts = module.split(".")
        where = f"{path.relative_to(ROOT)}:{line}: {module}" + (f" import {name}" if name else "")
        if len(mparts) == 1:  # `from dqspace import x`: x a folder, or the version
            if name is not None and name not in FOLDERS and name != "__version__":
                found.append(f"{where} -- imports dqspace.{name}")
            continue
        other = mparts[1]
        if other != own and other not in ALLOWED[own]:
            found.append(f"{where} -- {own} may not import {other}")
        if own == "scenarios" and other == "scenarios":
            if _scenario_layer(mparts) > _scenario_layer(me):
                found.append(f"{where} -- a lower room of scenarios imports a higher one")
        # a private module: only from inside its own package
        for i, p in enumerate(mparts[1:], start=1):
            if _private(p) and mparts[:i] != my_pkg[:i]:
                found.append(f"{where} -- private module {p} used outside its package")
        if name and _private(name) and mparts != me and (own in STRICT or other != own):
            found.append(f"{where} -- private name {name} of another module")
    return found


def test_the_scan_sees_every_folder_and_resolves_relative_imports():
    files = _sources()
    assert {p.relative_to(ROOT).parts[0] for p in files} == set(FOLDERS)
    text = "from . import kernels\nfrom ..dq.checks import x\nfrom .kernels.layout import y\n"
    got = [i[:3] for i in _imports(ROOT / "multibody" / "m.py", text)]
    assert got == [
        ("dqspace.multibody", "kernels", 1),
        ("dqspace.dq.checks", "x", 2),
        ("dqspace.multibody.kernels.layout", "y", 3),
    ]
    got = _imports(
        ROOT / "multibody" / "kernels" / "__init__.py", "def f():\n    from .. import a\n"
    )
    assert got == [("dqspace.multibody", "a", 2, True)]


@pytest.mark.parametrize(
    "where, source, expected",
    [
        ("control/planted.py", "from ..multibody._state import x\n", "private module _state"),
        ("control/planted.py", "from dqspace.dq.checks import _y\n", "private name _y"),
        ("actuators/planted.py", "from ..dq.checks import _y\n", "private name _y"),
        ("control/planted.py", "from .ik import _limits\n", "private name _limits"),
        ("multibody/planted.py", "from ..control import pd\n", "multibody may not import control"),
        ("dq/planted.py", "from .. import multibody\n", "dq may not import multibody"),
        ("scenarios/spec/planted.py", "from ..sim import runner\n", "lower room"),
        ("scenarios/campaigns/planted.py", "from ..figures import plots\n", "lower room"),
        ("scenarios/sim/planted.py", "from ..figures.plots import plot_all\n", "lower room"),
    ],
)
def test_the_rules_catch_a_planted_violation(where, source, expected):
    found = _violations(ROOT / where, source)
    assert any(expected in f for f in found), found


@pytest.mark.parametrize(
    "where, source",
    [
        ("multibody/planted.py", "from ..dq.checks import first_nonfinite as _nonfinite\n"),
        ("multibody/planted.py", "from . import _state\nfrom ._state import real_array\n"),
        ("multibody/kernels/planted.py", "from .frames import _column\n"),
        ("scenarios/cli.py", "from .figures import plots\nfrom ..control import pd\n"),
        ("scenarios/figures/planted.py", "from ..campaigns import montecarlo\n"),
        ("scenarios/sim/planted.py", "from ..build.system import build_system\n"),
    ],
)
def test_the_rules_accept_allowed_imports(where, source):
    assert _violations(ROOT / where, source) == []


def test_no_module_breaks_the_layering_or_the_privacy_rules():
    known = _known()
    found = [v for p in _sources() for v in _violations(p, known=known)]
    assert not found, "\n".join(found)


def _graph():
    known = _known()
    graph = {m: set() for m in known}
    for p in _sources():
        me = ".".join(_module_name(p)[0])
        for module, name, _, _ in _imports(p):
            if not module or not module.startswith("dqspace."):
                continue
            target, _ = _resolve(module, name, known)
            if target in known and target != me:
                graph[me].add(target)
    return graph


def _cycle(graph):
    """A cycle of the graph (a list of modules), or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack[stack.index(n) :] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_cycle_finder_finds_a_planted_cycle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _cycle(g) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_between_modules():
    # a package's __init__ importing its own modules is not a cycle of jobs: leave those out
    graph = {
        m: {n for n in targets if not m.startswith(n + ".")} for m, targets in _graph().items()
    }
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_no_absolute_dqspace_import_inside_the_packages():
    found = []
    for p in _sources():
        for module, _, line, _ in _imports(p):
            text = p.read_text().splitlines()[line - 1]
            if module and module.startswith("dqspace") and "dqspace" in text.split("#")[0]:
                if module not in INFRASTRUCTURE:
                    found.append(f"{p.relative_to(ROOT)}:{line}: {text.strip()}")
    assert not found, "\n".join(found)


def test_every_function_level_import_says_why():
    found = []
    for p in _sources():
        lines = p.read_text().splitlines()
        for _, _, line, local in _imports(p):
            if not local:
                continue
            here, above = lines[line - 1], lines[line - 2] if line > 1 else ""
            if "#" not in here and not above.strip().startswith("#"):
                found.append(f"{p.relative_to(ROOT)}:{line}: {here.strip()}")
    assert not sorted(set(found)), "\n".join(sorted(set(found)))


def test_every_module_is_at_most_600_lines():
    big = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in _sources()
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    ]
    assert not big, "\n".join(big)


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
