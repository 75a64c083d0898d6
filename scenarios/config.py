"""Scenario files: a typed schema, validation with errors naming the key and the file,
embedded scenarios, ``--set`` overrides, and a TOML writer for ``dqspace show``.

A scenario is a TOML file of tables (``[section]``) of typed keys, plus
arrays of tables (``[[faults]]``).  Every key has a type, a unit, a default
(or is required) and, for numbers, a range.  Unknown keys, missing values,
wrong types and out-of-range numbers raise :class:`ScenarioError` with the
file and the dotted key.
"""

import math
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = [
    "ScenarioError",
    "Field",
    "Section",
    "validate",
    "load_toml",
    "apply_overrides",
    "dumps_toml",
    "embedded_scenarios",
    "embedded_path",
]


class ScenarioError(ValueError):
    """A scenario file (or override) is invalid; the message names the file and the key."""


_REQUIRED = object()


@dataclass(frozen=True)
class Field:
    """One typed key.

    kind : "float" | "int" | "bool" | "str" | "vec" (list of floats) | "choice"
    length : required list length for "vec" (None: any non-empty length)
    """

    kind: str
    default: object = _REQUIRED
    unit: str = ""
    doc: str = ""
    min: float | None = None
    max: float | None = None
    length: int | None = None
    choices: tuple = ()
    min_inclusive: bool = True

    @property
    def required(self):
        return self.default is _REQUIRED


@dataclass(frozen=True)
class Section:
    """A table of fields; ``many=True`` for an array of tables (``[[name]]``)."""

    fields: dict
    doc: str = ""
    many: bool = False


def _where(source, key):
    return f"{source}: {key}"


def _check_number(value, f, source, key):
    if f.min is not None:
        bad = value < f.min if f.min_inclusive else value <= f.min
        if bad:
            op = ">=" if f.min_inclusive else ">"
            raise ScenarioError(
                f"{_where(source, key)} = {value} is out of range: must be {op} "
                f"{f.min}{' ' + f.unit if f.unit else ''}"
            )
    if f.max is not None and value > f.max:
        raise ScenarioError(
            f"{_where(source, key)} = {value} is out of range: must be <= "
            f"{f.max}{' ' + f.unit if f.unit else ''}"
        )


def _coerce(value, f, source, key):
    if f.kind == "bool":
        if not isinstance(value, bool):
            raise ScenarioError(f"{_where(source, key)} must be true or false, got {value!r}")
        return value
    if f.kind == "str":
        if not isinstance(value, str):
            raise ScenarioError(f"{_where(source, key)} must be a string, got {value!r}")
        return value
    if f.kind == "choice":
        if value not in f.choices:
            raise ScenarioError(
                f"{_where(source, key)} = {value!r} is not one of {list(f.choices)}"
            )
        return value
    if f.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ScenarioError(f"{_where(source, key)} must be an integer, got {value!r}")
        _check_number(value, f, source, key)
        return value
    if f.kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ScenarioError(f"{_where(source, key)} must be a number, got {value!r}")
        value = float(value)
        if not math.isfinite(value):
            raise ScenarioError(f"{_where(source, key)} must be finite, got {value}")
        _check_number(value, f, source, key)
        return value
    if f.kind == "vec":
        if not isinstance(value, list) or not value:
            raise ScenarioError(f"{_where(source, key)} must be a list of numbers, got {value!r}")
        if f.length is not None and len(value) != f.length:
            raise ScenarioError(
                f"{_where(source, key)} must have {f.length} numbers, got {len(value)}"
            )
        out = []
        for i, x in enumerate(value):
            out.append(
                _coerce(
                    x,
                    Field(
                        "float", min=f.min, max=f.max, unit=f.unit, min_inclusive=f.min_inclusive
                    ),
                    source,
                    f"{key}[{i}]",
                )
            )
        return out
    raise AssertionError(f"unknown field kind {f.kind}")


def _validate_table(table, fields, source, prefix):
    if not isinstance(table, dict):
        raise ScenarioError(f"{_where(source, prefix)} must be a table, got {table!r}")
    unknown = sorted(set(table) - set(fields))
    if unknown:
        raise ScenarioError(
            f"{_where(source, prefix + '.' + unknown[0])}: unknown key "
            f"(known keys of [{prefix}]: {', '.join(sorted(fields))})"
        )
    out = {}
    for name, f in fields.items():
        key = f"{prefix}.{name}"
        if name in table:
            out[name] = _coerce(table[name], f, source, key)
        elif f.required:
            raise ScenarioError(f"{_where(source, key)}: missing value ({f.doc or f.kind})")
        else:
            out[name] = f.default
    return out


def validate(doc, schema, source="<scenario>"):
    """Validate a parsed TOML document against ``schema`` (dict name -> Section).

    Returns the resolved document: every section and key present, defaults filled in.
    """
    unknown = sorted(set(doc) - set(schema))
    if unknown:
        raise ScenarioError(
            f"{source}: unknown section [{unknown[0]}] (sections: {', '.join(sorted(schema))})"
        )
    out = {}
    for name, sec in schema.items():
        if sec.many:
            items = doc.get(name, [])
            if not isinstance(items, list):
                raise ScenarioError(f"{source}: {name} must be an array of tables [[{name}]]")
            out[name] = [
                _validate_table(t, sec.fields, source, f"{name}[{i}]") for i, t in enumerate(items)
            ]
        else:
            out[name] = _validate_table(doc.get(name, {}), sec.fields, source, name)
    return out


def load_toml(path):
    """Parse a TOML file; syntax errors become :class:`ScenarioError` naming the file."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such scenario file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: invalid TOML: {exc}") from None


def apply_overrides(doc, overrides, source="--set"):
    """Apply ``key=value`` overrides (dotted keys, TOML values) to a parsed document.

    ``base_controller.kp_trans=[1, 1, 1]``, ``scenario.duration=5``; a bare word
    that is not valid TOML is taken as a string (``thrusters.allocator=cvxpy``).
    ``faults[0].time=3`` addresses an entry of an array of tables.
    """
    doc = {
        k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
        for k, v in doc.items()
    }
    for item in overrides:
        if "=" not in item:
            raise ScenarioError(f"{source} {item!r}: expected key=value")
        key, raw = item.split("=", 1)
        key = key.strip()
        try:
            value = tomllib.loads(f"x = {raw.strip()}")["x"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()
        parts = key.split(".")
        if len(parts) != 2:
            raise ScenarioError(f"{source} {item!r}: key must be section.key")
        sec, name = parts
        if sec.endswith("]") and "[" in sec:
            base, idx = sec[:-1].split("[")
            lst = doc.setdefault(base, [])
            i = int(idx)
            if not isinstance(lst, list) or i >= len(lst):
                raise ScenarioError(f"{source} {item!r}: no entry {base}[{i}]")
            lst[i] = {**lst[i], name: value}
        else:
            table = doc.setdefault(sec, {})
            if not isinstance(table, dict):
                raise ScenarioError(f"{source} {item!r}: {sec} is not a table")
            doc[sec] = {**table, name: value}
    return doc


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def dumps_toml(doc, schema=None):
    """Write a resolved scenario as TOML (with units as comments when a schema is given)."""
    lines = []
    for name, content in doc.items():
        sec = schema.get(name) if schema else None
        tables = content if isinstance(content, list) else [content]
        for table in tables:
            lines.append(f"[[{name}]]" if isinstance(content, list) else f"[{name}]")
            for k, v in table.items():
                if v is None:
                    continue
                f = sec.fields.get(k) if sec else None
                note = f"  # [{f.unit}]" if f is not None and f.unit else ""
                lines.append(f"{k} = {_toml_value(v)}{note}")
            lines.append("")
    return "\n".join(lines)


def embedded_scenarios():
    """Names of the scenarios shipped with the package."""
    files = resources.files("dqspace.scenarios") / "data"
    return sorted(p.name[:-5] for p in files.iterdir() if p.name.endswith(".toml"))


def embedded_path(name):
    """Path of an embedded scenario file (``station-keeping``, ``dynamics-check``, ...)."""
    p = resources.files("dqspace.scenarios") / "data" / f"{name}.toml"
    if not p.is_file():
        raise ScenarioError(
            f"{name!r} is neither a scenario file nor an embedded scenario "
            f"(embedded: {', '.join(embedded_scenarios())})"
        )
    return Path(str(p))
