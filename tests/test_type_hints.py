"""The public API is typed: every public function, method and property of the five packages
has annotations for its parameters and its result, and (outside scenarios, whose hints name
pandas and their own classes lazily) the annotations resolve."""

import inspect
import typing
from importlib import import_module
from pathlib import Path

import pytest

import dqspace

PACKAGES = [
    "dqspace.dq",
    "dqspace.multibody",
    "dqspace.actuators",
    "dqspace.control",
    "dqspace.scenarios",
]


def _public_callables(pkg):
    m = import_module(pkg)
    for name in m.__all__:
        obj = getattr(m, name)
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj) and typing.Protocol not in obj.__mro__:
            for attr, f in vars(obj).items():
                if isinstance(f, property):
                    f = f.fget
                if isinstance(f, (classmethod, staticmethod)):
                    f = f.__func__
                public = not attr.startswith("_") or attr in ("__init__", "__call__")
                if public and inspect.isfunction(f):
                    yield f"{name}.{attr}", f


def _unannotated(f):
    sig = inspect.signature(f)
    missing = [
        p.name
        for p in sig.parameters.values()
        if p.name not in ("self", "cls")
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        and p.annotation is inspect.Parameter.empty
    ]
    if sig.return_annotation is inspect.Signature.empty and f.__name__ != "__init__":
        missing.append("return")
    return missing


@pytest.mark.parametrize("pkg", PACKAGES)
def test_every_public_callable_is_annotated(pkg):
    bad = {n: m for n, f in _public_callables(pkg) if (m := _unannotated(f))}
    assert not bad, bad


@pytest.mark.parametrize("pkg", PACKAGES[:4])
def test_the_annotations_resolve(pkg):
    for _name, f in _public_callables(pkg):
        typing.get_type_hints(f)  # a misspelt or missing name raises NameError: the test fails


def test_the_package_says_it_is_typed():
    assert (Path(dqspace.__file__).parent / "py.typed").is_file()
