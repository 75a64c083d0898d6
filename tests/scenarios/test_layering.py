"""The layers inside ``scenarios/``: spec <- store <- build <- sim <- campaigns <- figures <- cli.

A sub-package imports its own modules and those of the layers below it, never above:
``spec`` (reading scenarios) imports no other sub-package, ``store`` only ``spec``, the
campaigns never draw figures.  The command line (``cli.py``, ``commands.py``) is on top.
The imports are read from the source (``ast``), including those inside functions.

Privacy inside ``scenarios/``: a module of the sub-packages listed in
:data:`PRIVATE_CHECKED` imports no private name (a leading underscore) of another module.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "scenarios"
LAYERS = ("spec", "store", "build", "sim", "campaigns", "figures", "cli")
#: modules directly in scenarios/ -> their layer
TOP = {"cli": "cli", "commands": "cli", "__init__": "cli"}
#: the sub-packages whose modules are checked for private cross-imports (the others are
#: being reworked; add them here as they are cleaned up)
PRIVATE_CHECKED = ("spec", "store", "campaigns", "cli")


def _layer(path):
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else TOP[path.stem]


def _imports(path, text=None):
    """(module path inside scenarios as a tuple, imported names, line) of each relative
    import of ``path`` that stays inside ``scenarios/``."""
    rel = path.relative_to(ROOT)
    package = list(rel.parts[:-1])
    out = []
    text = path.read_text() if text is None else text
    for node in ast.walk(ast.parse(text, str(path))):
        if not isinstance(node, ast.ImportFrom) or not node.level:
            continue
        up = node.level - 1
        if up > len(package):  # leaves scenarios/ (another folder)
            continue
        base = package[: len(package) - up]
        module = tuple(base + (node.module.split(".") if node.module else []))
        out.append((module, [a.name for a in node.names], node.lineno))
    return out


def _target_layer(module, name):
    """The layer an import reaches: ``from ..store.x import y`` -> store;
    ``from . import commands`` (in scenarios/) -> cli."""
    if module and module[0] in LAYERS[:-1]:
        return module[0]
    first = module[0] if module else name
    if first in LAYERS[:-1]:
        return first
    return TOP.get(first)


def _violations(path, text=None):
    own = _layer(path)
    found = []
    for module, names, line in _imports(path, text):
        for name in names:
            other = _target_layer(module, name)
            if other is None:
                continue
            if LAYERS.index(other) > LAYERS.index(own):
                where = f"{path.relative_to(ROOT)}:{line}"
                found.append(f"{where}: {'.'.join(module) or '.'} import {name} -- {own} < {other}")
    return found


def _private(path, text=None):
    own = tuple(path.relative_to(ROOT).with_suffix("").parts)
    found = []
    for module, names, line in _imports(path, text):
        for name in names:
            if name.startswith("_") and not name.startswith("__") and module != own:
                found.append(f"{path.relative_to(ROOT)}:{line}: {'.'.join(module)} import {name}")
    return found


def _sources():
    return sorted(ROOT.rglob("*.py"))


def test_the_scan_sees_every_layer():
    assert {_layer(p) for p in _sources()} == set(LAYERS)


@pytest.mark.parametrize(
    "where, source, expected",
    [
        ("campaigns/montecarlo.py", "from ..figures.campaign_plots import plot_montecarlo\n", 1),
        ("spec/variants.py", "from ..store.sweep_store import load_sweep\n", 1),
        ("store/results.py", "from ..sim import runner\n", 1),
        ("store/results.py", "from .. import commands\n", 1),
        ("spec/si.py", "from ...control.sensors import ARCSEC\nfrom .config import x\n", 0),
        ("figures/plots.py", "from ..campaigns.montecarlo import scenario_requirements\n", 0),
        ("commands.py", "from .figures.plots import plot_all\nfrom .spec import si\n", 0),
        ("cli.py", "from . import commands\n", 0),
    ],
)
def test_the_rule_catches_a_planted_import(where, source, expected):
    assert len(_violations(ROOT / where, source)) == expected


def test_no_sub_package_imports_a_higher_layer():
    found = [v for p in _sources() for v in _violations(p)]
    assert not found, "\n".join(found)


def test_no_module_of_the_checked_layers_imports_a_private_name_of_another():
    assert _private(ROOT / "spec" / "x.py", "from .config import _NAME\n")
    assert _private(ROOT / "cli.py", "from .store.sweep_store import _read_json\n")
    assert not _private(ROOT / "spec" / "x.py", "from . import config\nfrom .config import y\n")
    found = [v for p in _sources() if _layer(p) in PRIVATE_CHECKED for v in _private(p)]
    assert not found, "\n".join(found)
