"""A user's controller module that fails is reported as the user's, with where, never as
"unexpected ... (a bug? report it)": a syntax error, an exception or ``sys.exit`` at import,
an exception in ``__init__`` (bad input, exit 2) or in ``__call__`` during the run (a run
failure, exit 1, the partial result kept)."""

import sys

import pytest

from dqspace.scenarios.cli import main
from dqspace.scenarios.store.results import Results

BODIES = {
    "syntax": ("def f(:\n    pass\n", "failed when imported: SyntaxError", 1),
    "raises": ("x = 1\nraise KeyError('boom at import')\n", "failed when imported: KeyError", 2),
    "exits": ("import sys\nsys.exit(0)\n", "called sys.exit(0) when imported", None),
    "init": (
        "from dqspace.control import BaseController\n\n\nclass Law(BaseController):\n"
        "    def __init__(self, model, gains):\n        raise ValueError('my constructor')\n",
        "Law(...) raised ValueError: my constructor",
        6,
    ),
}


@pytest.fixture
def user_dir(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("usermod_")]:
        del sys.modules[name]


def _run(out, law):
    return main(["run", "station-keeping", "--set", "scenario.duration=0.1", "--set",
                 "outputs.plots=false", "--set", f'base_controller.law="{law}"', "--out",
                 str(out), "-q"])  # fmt: skip


@pytest.mark.parametrize("case", list(BODIES))
def test_a_module_failing_at_import_or_construction_is_the_users_error(user_dir, capsys, case):
    body, says, line = BODIES[case]
    name = f"usermod_{case}"
    (user_dir / f"{name}.py").write_text(body)
    assert _run(user_dir / "out", f"{name}:Law") == 2
    err = capsys.readouterr().err
    assert says in err and "a bug?" not in err and "unexpected" not in err
    if line is not None:
        assert f"{name}.py:{line}" in err


def test_a_controller_raising_during_the_run_fails_the_run_keeping_what_it_computed(
    user_dir, capsys
):
    (user_dir / "usermod_call.py").write_text(
        "from dqspace.control import BaseController\n\n\nclass Law(BaseController):\n"
        "    def __call__(self, t, state, reference, *, arm_acc=None):\n"
        "        if t > 0.045:\n            raise RuntimeError('my bug')\n"
        "        return super().__call__(t, state, reference, arm_acc=arm_acc)\n"
    )
    out = user_dir / "out"
    assert _run(out, "usermod_call:Law") == 1
    err = capsys.readouterr().err
    assert "the controllers at t = 0.050 s raised RuntimeError: my bug" in err
    assert "usermod_call.py:7" in err and "partial result kept" in err
    assert "a bug?" not in err
    res = Results.load(out)
    assert res.manifest["status"] == "failed" and len(res.t) == 5  # the ticks before it
