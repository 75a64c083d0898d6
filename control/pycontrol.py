"""Import shim for python-control, the optional extra ``dqspace[control]``.

The repository folder ``control/`` installs as ``dqspace.control``; python-control imports
as the top-level ``control``.  When the repository root is on ``sys.path`` (e.g. a Python
session started there), a plain ``import control`` finds the repository folder instead.
:func:`python_control` (also importable from :mod:`dqspace.control`) looks python-control
up past it; :meth:`dqspace.control.LinearModel.to_statespace` uses it.  See
``docs/linearization.md``.
"""

import importlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["python_control"]

_find_spec = importlib.machinery.PathFinder.find_spec


def python_control() -> ModuleType:
    """The python-control module (``import control``), or an ImportError naming the extra.

    The repository folder ``control/`` is ``dqspace.control``; when the
    repository root is on ``sys.path`` (e.g. the current directory there), a
    plain ``import control`` would find that folder instead.  This looks
    python-control up past it.
    """
    mod = sys.modules.get("control")
    if mod is not None and hasattr(mod, "StateSpace"):
        return mod
    own = Path(__file__).resolve().parent
    path = [p for p in sys.path if (Path(p or ".").resolve() / "control") != own]
    spec = _find_spec("control", path)
    if spec is None:
        raise ImportError(
            "python-control is not installed; install the optional extra: "
            "pip install 'dqspace[control]'"
        )
    if mod is not None:
        raise ImportError(
            "sys.modules['control'] is not python-control (the repository folder control/ "
            f"was imported as a top-level package from {getattr(mod, '__file__', '?')}); "
            "run from outside the repository root"
        )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["control"] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules["control"]
        raise
    return mod
