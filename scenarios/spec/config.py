"""Scenario files: a typed schema, validation with errors naming the key and the file,
embedded scenarios, ``--set`` overrides, and a TOML writer for ``dqspace show``.

A scenario is a TOML file of tables (``[section]``) of typed keys, plus
arrays of tables (``[[faults]]``).  Every key has a type, a unit, a default
(or is required) and, for numbers, a range.  Unknown keys, missing values,
wrong types and out-of-range numbers raise :class:`ScenarioError` with the
file and the dotted key, on one line; a misspelt key, section, choice or
embedded name gets a suggestion (``did you mean 'kp_trans'?``).
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .requirements import requirement_entry

__all__ = [
    "MAX_VARIANTS",
    "ScenarioError",
    "Field",
    "Section",
    "validate",
    "check_recorded",
    "load_toml",
    "apply_overrides",
    "dumps_toml",
    "embedded_scenarios",
    "embedded_path",
    "did_you_mean",
    "printable",
    "short",
    "toml_value",
    "is_plain_name",
    "NAME_MAX_LENGTH",
]


class ScenarioError(ValueError):
    """A scenario file (or override) is invalid; the message names the file and the key."""


_REQUIRED = object()

#: a plain name (``kind="name"``): it becomes a directory name (``runs/<name>``)
_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
NAME_MAX_LENGTH = 100
#: the most variants a sweep expands, or runs a Monte Carlo campaign draws, in one call
#: (split a larger study into several campaigns: run i depends on the seed and i only)
MAX_VARIANTS = 100_000


def is_plain_name(text) -> bool:
    """Whether ``text`` is a plain name (a ``kind="name"`` value such as ``scenario.name``):
    1 to :data:`NAME_MAX_LENGTH` ASCII letters, digits, ``-``, ``_`` or ``.``, not starting
    with ``.``; safe as a file or directory name."""
    return (
        isinstance(text, str) and 1 <= len(text) <= NAME_MAX_LENGTH and bool(_NAME.fullmatch(text))
    )


@dataclass(frozen=True)
class Field:
    """One typed key.

    kind : "float" | "int" | "bool" | "str" | "vec" (list of floats) | "choice" |
        "name" (a plain name: ASCII letters, digits, ``-``, ``_``, ``.``, not starting
        with ``.``, 1 to 100 characters; safe as a file name) | "requirement" (a limit, a
        table or a list, kept as the table ``{op, limit, percentile, confidence}``: see
        :func:`dqspace.scenarios.spec.requirements.parse_requirement`)
    length : required list length for "vec" (None: any non-empty length)
    empty : "vec" only: an empty list is accepted (it means "derived", see the key's doc)
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
    empty: bool = False

    @property
    def required(self):
        return self.default is _REQUIRED


@dataclass(frozen=True)
class Section:
    """A table of fields; ``many=True`` for an array of tables (``[[name]]``)."""

    fields: dict
    doc: str = ""
    many: bool = False


def did_you_mean(word, options):
    """``"; did you mean 'x'?"`` for the option closest to ``word`` (difflib), or ``""``."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, [str(o) for o in options], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def printable(text):
    """``text`` as is, or its repr when it holds control characters (keeps messages one line)."""
    text = str(text)
    return text if text.isprintable() else repr(text)


def short(text, limit=80):
    """``text`` on one line (see :func:`printable`), cut to about ``limit`` characters."""
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _where(source, key):
    return f"{source}: {key}"


def _got(value):
    """How a wrong value is shown: strings say so (``the string '5'``)."""
    return f"the string {value!r}" if isinstance(value, str) else repr(value)


def _check_number(value, f, source, key):
    unit = f" {f.unit}" if f.unit else ""
    if f.min is not None:
        bad = value < f.min if f.min_inclusive else value <= f.min
        if bad:
            op = ">=" if f.min_inclusive else ">"
            raise ScenarioError(
                f"{_where(source, key)} = {value} is out of range: must be {op} {f.min}{unit}"
            )
    if f.max is not None and value > f.max:
        raise ScenarioError(
            f"{_where(source, key)} = {value} is out of range: must be <= {f.max}{unit}"
        )


def _coerce_bool(value, f, source, key):
    if not isinstance(value, bool):
        hint = " (lowercase, without quotes)" if isinstance(value, str) else ""
        raise ScenarioError(f"{_where(source, key)} must be true or false{hint}, got {_got(value)}")
    return value


def _coerce_str(value, f, source, key):
    if not isinstance(value, str):
        raise ScenarioError(f"{_where(source, key)} must be a string, got {value!r}")
    if any("\ud800" <= c <= "\udfff" for c in value):
        raise ScenarioError(f"{_where(source, key)} = {value!r} is not valid Unicode text")
    return value


def _coerce_name(value, f, source, key):
    value = _coerce_str(value, f, source, key)
    if not is_plain_name(value):
        raise ScenarioError(
            f"{_where(source, key)} = {value!r} is not a plain name: use 1 to "
            f"{NAME_MAX_LENGTH} ASCII letters, digits, '-', '_' or '.', not starting with '.' "
            f"(it names the output directory)"
        )
    return value


def _coerce_choice(value, f, source, key):
    if isinstance(value, (list, dict)) or value not in f.choices:
        raise ScenarioError(
            f"{_where(source, key)} = {value!r} is not one of {list(f.choices)}"
            f"{did_you_mean(value, f.choices)}"
        )
    return value


def _coerce_int(value, f, source, key):
    if isinstance(value, bool) or not isinstance(value, int):
        hint = " (without quotes)" if isinstance(value, str) else ""
        raise ScenarioError(f"{_where(source, key)} must be an integer{hint}, got {_got(value)}")
    _check_number(value, f, source, key)
    return value


def _coerce_float(value, f, source, key):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        hint = " (without quotes)" if isinstance(value, str) else ""
        raise ScenarioError(f"{_where(source, key)} must be a number{hint}, got {_got(value)}")
    try:
        value = float(value)
    except OverflowError:
        digits = int(value.bit_length() * math.log10(2)) + 1
        raise ScenarioError(
            f"{_where(source, key)} is too large: an integer of {digits} digits"
        ) from None
    if not math.isfinite(value):
        raise ScenarioError(f"{_where(source, key)} must be finite, got {value}")
    _check_number(value, f, source, key)
    return value


def _coerce_vec(value, f, source, key):
    n = f"{f.length} " if f.length is not None else ""
    if f.empty and isinstance(value, list) and not value:
        return []
    if not isinstance(value, list) or not value:
        hint = " (a TOML array such as [1.0, 2.0, 3.0])" if isinstance(value, str) else ""
        raise ScenarioError(
            f"{_where(source, key)} must be a list of {n}numbers{hint}, got {_got(value)}"
        )
    if f.length is not None and len(value) != f.length:
        raise ScenarioError(f"{_where(source, key)} must have {f.length} numbers, got {len(value)}")
    item = Field("float", min=f.min, max=f.max, unit=f.unit, min_inclusive=f.min_inclusive)
    return [_coerce_float(x, item, source, f"{key}[{i}]") for i, x in enumerate(value)]


def _coerce_requirement(value, f, source, key):
    if value is None:  # no requirement (TOML has no null: a resolved scenario's default)
        return None
    try:
        return requirement_entry(value, key)
    except ValueError as exc:
        raise ScenarioError(f"{source}: {exc}") from None


_COERCE = {
    "requirement": _coerce_requirement,
    "bool": _coerce_bool,
    "str": _coerce_str,
    "name": _coerce_name,
    "choice": _coerce_choice,
    "int": _coerce_int,
    "float": _coerce_float,
    "vec": _coerce_vec,
}


def _coerce(value, f, source, key):
    if f.kind not in _COERCE:
        raise AssertionError(f"unknown field kind {f.kind}")
    return _COERCE[f.kind](value, f, source, key)


def _validate_table(table, fields, source, prefix, section):
    if not isinstance(table, dict):
        raise ScenarioError(f"{_where(source, prefix)} must be a table, got {table!r}")
    unknown = sorted(set(table) - set(fields))
    if unknown:
        raise ScenarioError(
            f"{_where(source, prefix + '.' + printable(unknown[0]))}: unknown key"
            f"{did_you_mean(unknown[0], fields)} (keys of [{section}]: {', '.join(fields)})"
        )
    out = {}
    for name, f in fields.items():
        key = f"{prefix}.{name}"
        if name in table:
            out[name] = _coerce(table[name], f, source, key)
        elif f.required:
            raise ScenarioError(f"{_where(source, key)}: missing value ({f.doc or f.kind})")
        elif isinstance(f.default, dict):  # a table: each scenario gets its own copy
            out[name] = dict(f.default)
        else:
            out[name] = f.default
    return out


def _unknown_section(name, value, schema, source):
    if not isinstance(value, (dict, list)):  # a key written before any [section]
        owners = [s for s, sec in schema.items() if name in sec.fields]
        hint = f"; it belongs in [{owners[0]}]" if owners else did_you_mean(name, schema)
        return ScenarioError(
            f"{source}: {printable(name)} = {value!r} is outside any [section]{hint}"
        )
    return ScenarioError(
        f"{source}: unknown section [{printable(name)}]{did_you_mean(name, schema)} "
        f"(sections: {', '.join(sorted(schema))})"
    )


def validate(doc, schema, source="<scenario>"):
    """Validate a parsed TOML document against ``schema`` (dict name -> Section).

    Returns the resolved document: every section and key present, defaults filled in.
    """
    unknown = sorted(set(doc) - set(schema))
    if unknown:
        raise _unknown_section(unknown[0], doc[unknown[0]], schema, source)
    out = {}
    for name, sec in schema.items():
        if sec.many:
            items = doc.get(name, [])
            if not isinstance(items, list):
                raise ScenarioError(f"{source}: {name} must be an array of tables [[{name}]]")
            out[name] = [
                _validate_table(t, sec.fields, source, f"{name}[{i}]", name)
                for i, t in enumerate(items)
            ]
        else:
            table = doc.get(name, {})
            if isinstance(table, list):
                raise ScenarioError(
                    f"{source}: [{name}] is one table: write [{name}], not [[{name}]]"
                )
            out[name] = _validate_table(table, sec.fields, source, name, name)
    return out


def check_recorded(doc, schema, source="<scenario>"):
    """Check the sections and keys of a scenario a file recorded (a result's manifest, a
    sweep's base) that ``schema`` knows: their types and ranges, as :func:`validate`.  Keys
    and sections missing, or that the schema does not know (another version's), are let
    through.  Raises ScenarioError naming ``source`` and the key."""
    if not isinstance(doc, dict):
        raise ScenarioError(f"{source} must be a table, got {short(repr(doc))}")
    for name, value in doc.items():  # a scenario is made of tables and arrays of tables
        if not isinstance(value, dict | list) or (
            isinstance(value, list) and not all(isinstance(t, dict) for t in value)
        ):
            raise ScenarioError(f"{source}: {short(name)} must be a table or an array of tables")
    for name, sec in schema.items():
        value = doc.get(name)
        if value is None:
            continue
        if sec.many and not isinstance(value, list):
            raise ScenarioError(f"{source}: {name} must be an array of tables")
        for i, table in enumerate(value if sec.many else [value]):
            prefix = f"{name}[{i}]" if sec.many else name
            if not isinstance(table, dict):
                raise ScenarioError(f"{_where(source, prefix)} must be a table")
            for key, f in sec.fields.items():
                if key in table:
                    _coerce(table[key], f, source, f"{prefix}.{key}")


def load_toml(path):
    """Parse a TOML file; unreadable files and syntax errors become :class:`ScenarioError`
    naming the file."""
    path = Path(path)
    where = printable(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ScenarioError(f"{where}: no such scenario file") from None
    except OSError as exc:
        raise ScenarioError(f"{where}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{where}: not a text file (a TOML file is UTF-8 text)") from None
    except ValueError as exc:  # TOMLDecodeError, or an integer of more than 4300 digits
        raise ScenarioError(f"{where}: invalid TOML: {exc}") from None


# ----------------------------------------------------------------- overrides

_INDEXED = re.compile(r"(?P<base>[^.\[\]]*)\[(?P<index>[^\[\]]*)\](?P<rest>.*)", re.S)


def _override_value(raw, where):
    """A TOML value, or a bare word taken as a string (``cvxpy``)."""
    text = raw.strip()
    if not text:
        raise ScenarioError(f"{where}: no value after '=' (write \"\" for an empty string)")
    try:
        parsed = tomllib.loads(f"x = {text}")
    except tomllib.TOMLDecodeError as exc:
        if text[0] in "[{\"'":
            raise ScenarioError(f"{where}: invalid TOML value ({exc})") from None
        return text
    except ValueError as exc:  # an integer of more than 4300 digits
        raise ScenarioError(f"{where}: invalid value ({exc})") from None
    if set(parsed) != {"x"}:
        raise ScenarioError(f"{where}: {text!r} is not a single value")
    return parsed["x"]


def _override_key(key, where):
    """(section, index or None, name) of ``section.name`` / ``section[i].name``;
    (section, None, None) for a bare ``section`` (a whole array of tables)."""
    if not key:
        raise ScenarioError(f"{where}: empty key (expected section.key=value)")
    m = _INDEXED.fullmatch(key)
    if m is not None:
        base, index, rest = m["base"], m["index"].strip(), m["rest"]
        if not rest.startswith(".") or "[" in rest or "]" in rest:
            raise ScenarioError(f"{where}: malformed key {key!r}; expected section[i].key")
        name = rest[1:]
    elif "[" in key or "]" in key:
        raise ScenarioError(f"{where}: malformed key {key!r}; expected section[i].key")
    else:
        base, _, name = key.partition(".")
        index, name = None, (name if "." in key else None)
    if name is not None and "." in name:
        raise ScenarioError(
            f"{where}: key {key!r} has too many dots; expected section.key or section[i].key"
        )
    if not base or name == "":
        raise ScenarioError(f"{where}: key {key!r} has an empty part; expected section.key")
    if index is not None and not re.fullmatch(r"[0-9]+", index, flags=re.ASCII):
        raise ScenarioError(
            f"{where}: index {index!r} of {base} must be a non-negative integer (0, 1, ...)"
        )
    return base, (int(index) if index is not None else None), name


def _check_override_key(sec, index, name, schema, where):
    """With a schema: the section and key exist, indexed as their kind needs."""
    if name is None and not (sec in schema and schema[sec].many):
        owners = [f"{s}.{sec}" for s, x in schema.items() if sec in x.fields]
        hint = f"; did you mean {owners[0]!r}?" if owners else ""
        raise ScenarioError(f"{where}: expected section.key{hint}")
    if sec not in schema:
        raise ScenarioError(
            f"{where}: unknown section [{printable(sec)}]{did_you_mean(sec, schema)} "
            f"(sections: {', '.join(sorted(schema))})"
        )
    s = schema[sec]
    if name is not None and s.many and index is None:
        raise ScenarioError(
            f"{where}: [[{sec}]] is an array of tables: address an entry, {sec}[i].{name}"
        )
    if index is not None and not s.many:
        raise ScenarioError(f"{where}: [{sec}] is a single table: write {sec}.{name}, without [i]")
    if name is not None and name not in s.fields:
        raise ScenarioError(
            f"{where}: {sec}.{printable(name)}: unknown key{did_you_mean(name, s.fields)} "
            f"(keys of [{sec}]: {', '.join(s.fields)})"
        )


def _set_entry(doc, sec, index, name, value, where):
    lst = doc.get(sec, [])
    if not isinstance(lst, list):
        raise ScenarioError(f"{where}: {sec} is not an array of tables; write {sec}.{name}")
    if index >= len(lst):
        n = len(lst)
        have = {0: "no entries", 1: f"1 entry, {sec}[0]"}.get(
            n, f"{n} entries, {sec}[0]..{sec}[{n - 1}]"
        )
        raise ScenarioError(f"{where}: no entry {sec}[{index}] ({sec} has {have})")
    if not isinstance(lst[index], dict):
        raise ScenarioError(f"{where}: {sec}[{index}] is not a table")
    lst = list(lst)
    lst[index] = {**lst[index], name: value}
    doc[sec] = lst


def apply_overrides(doc, overrides, source="--set", schema=None):
    """Apply ``key=value`` overrides (dotted keys, TOML values) to a parsed document.

    ``base_controller.kp_trans=[1, 1, 1]``, ``scenario.duration=5``; a bare word
    that is not valid TOML is taken as a string (``thrusters.allocator=cvxpy``).
    ``faults[0].time=3`` addresses an existing entry of an array of tables;
    ``faults=[{time = 1.0, thruster = 0, kind = "failed_off"}]`` replaces the array.

    Parameters
    ----------
    doc : dict, a parsed scenario (not modified)
    overrides : sequence of str
    source : str, named in error messages (with the override)
    schema : dict name -> Section, optional; given, unknown sections and keys are
        refused here, naming the override

    Returns
    -------
    dict, a new document
    """
    doc = dict(doc)
    for item in overrides:
        where = f"{source} {short(repr(item))}"
        if not isinstance(item, str) or "=" not in item:
            raise ScenarioError(f"{where}: expected key=value")
        key, raw = item.split("=", 1)
        sec, index, name = _override_key(key.strip(), where)
        if schema is not None:
            _check_override_key(sec, index, name, schema, where)
        value = _override_value(raw, where)
        if name is None:
            if not isinstance(value, list):
                raise ScenarioError(
                    f"{where}: expected section.key=value (or a whole array of tables, "
                    f"{sec}=[{{...}}, ...])"
                )
            doc[sec] = value
        elif index is not None:
            _set_entry(doc, sec, index, name, value, where)
        else:
            table = doc.get(sec, {})
            if not isinstance(table, dict):
                raise ScenarioError(f"{where}: {sec} is not a table")
            doc[sec] = {**table, name: value}
    return doc


# ----------------------------------------------------------------- writing

#: TOML's short escapes; other control characters are written \\uXXXX
_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"'}
_ESCAPES["\\"] = "\\\\"
#: a TOML bare key
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_string(s):
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for c in s:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif c < " " or c == "\x7f":
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def toml_value(v) -> str:
    """A scenario value as TOML text: a bool, int, float (``nan``, ``inf`` included),
    string (escaped), a list of those or a table of those (an inline table, ``{op = "<=",
    limit = 0.001}``); reads back to the same value.

    Raises
    ------
    TypeError : any other type (None, an object)
    """
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return repr(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        items = (
            f"{k if _BARE_KEY.fullmatch(str(k)) else _toml_string(str(k))} = {toml_value(x)}"
            for k, x in v.items()
        )
        return "{" + ", ".join(items) + "}"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def dumps_toml(doc, schema=None):
    """Write a resolved scenario as TOML (with units as comments when a schema is given).

    Every string is escaped as TOML requires, so the text reads back to the same values.
    """
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
                lines.append(f"{k} = {toml_value(v)}{note}")
            lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------ embedded files


def embedded_scenarios() -> list[str]:
    """Names of the scenarios shipped with the package."""
    files = resources.files("dqspace.scenarios") / "data"
    return sorted(p.name[:-5] for p in files.iterdir() if p.name.endswith(".toml"))


def embedded_path(name):
    """Path of an embedded scenario file (``station-keeping``, ``dynamics-check``, ...)."""
    names = embedded_scenarios()
    if name not in names:
        stem = Path(str(name)).stem
        raise ScenarioError(
            f"{str(name)!r} is neither a scenario file nor an embedded scenario"
            f"{did_you_mean(stem, names)} (embedded: {', '.join(names)})"
        )
    return Path(str(resources.files("dqspace.scenarios") / "data" / f"{name}.toml"))
