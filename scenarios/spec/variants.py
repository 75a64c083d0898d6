"""Sweep variants: override sets of a base scenario, grids, sample files, variant ids.

A *variant* is a set of overrides of the base scenario, keyed like ``--set``:
``{"base_controller.kp_trans": [2000, 2000, 2000], "scenario.seed": 1}``;
``"faults[0].time"`` addresses an entry of the base's fault list and ``"faults"``
replaces the whole list (a list of fault tables).  A sweep is either a *grid*
(key -> list of values; the Cartesian product, the last key varying fastest)
or explicit *samples* (a list of override dicts).  The variant id is the first 16 hex
digits of the SHA-256 of the canonical override set (keys sorted, values as validated by
the schema: ``600`` and ``600.0`` are the same variant).
"""

import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .config import MAX_VARIANTS, apply_overrides, toml_value, validate
from .scenario import Scenario, cross_checks
from .schema import SCHEMA
from .schema_arms import with_arm_requirements

__all__ = [
    "Variant",
    "make_variants",
    "grid_product",
    "scenario_with",
    "variant_id",
    "load_grid_file",
    "load_samples_file",
    "resolved_value",
    "override_cell",
]


@dataclass(frozen=True)
class Variant:
    """One variant of a sweep.

    Attributes
    ----------
    id : str, 16 hex digits (hash of the canonical overrides)
    overrides : dict key -> value, canonical (as validated: floats, lists, ...)
    scenario : Scenario, the base with the overrides applied and validated
    """

    id: str
    overrides: dict
    scenario: Scenario


# ----------------------------------------------------------------- overrides


def _plain(v):
    """Python/TOML-compatible value: tuples and arrays to lists, numpy scalars to Python."""
    if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    return v


def _many_sections():
    return {name for name, sec in SCHEMA.items() if sec.many}


def resolved_value(cfg: dict, key: str):
    """The value of a resolved scenario at an override key.

    Parameters
    ----------
    cfg : dict, a resolved scenario (``Scenario.config``)
    key : str, ``"section.name"``, ``"faults[i].name"`` (an entry of an array of tables)
        or ``"faults"`` (the whole array)

    Raises
    ------
    KeyError, IndexError : no such section, key or entry
    """
    if key in _many_sections():
        return cfg[key]
    sec, name = key.split(".", 1)
    if sec.endswith("]") and "[" in sec:
        base, idx = sec[:-1].split("[")
        return cfg[base][int(idx)][name]
    return cfg[sec][name]


def variant_id(overrides):
    """Deterministic id of a canonical override set: 16 hex digits of SHA-256.

    ``overrides`` must be canonical (values as :func:`scenario_with` returns them);
    the key order does not matter.
    """
    text = json.dumps(_plain(overrides), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def scenario_with(scenario, overrides, where="variant"):
    """The base scenario with ``overrides`` applied and validated.

    Parameters
    ----------
    scenario : Scenario, the base
    overrides : dict key -> value (``"section.key"``, ``"faults[i].key"``, ``"faults"``)
    where : str, named in error messages

    Returns
    -------
    (Scenario, dict) : the variant and its canonical overrides (key -> validated value)

    Raises
    ------
    ValueError (ScenarioError) naming ``where`` and the key.
    """
    if not isinstance(overrides, dict):
        raise ValueError(f"{where}: overrides must be a mapping key -> value, got {overrides!r}")
    doc = scenario.config
    many = _many_sections()
    strings = []
    for key, value in overrides.items():
        if not isinstance(key, str):
            raise ValueError(f"{where}: override key {key!r} must be a string 'section.key'")
        key = key.strip()
        value = _plain(value)
        if key in many:
            if not isinstance(value, list):
                raise ValueError(
                    f"{where}: {key} must be a list of tables (one per entry), got {value!r}"
                )
            doc = {**doc, key: value}
            continue
        try:
            strings.append(f"{key}={toml_value(value)}")
        except TypeError:
            raise ValueError(
                f"{where}: {key} = {value!r}: not a scenario value (number, string, "
                f"bool or list of numbers)"
            ) from None
    doc = apply_overrides(doc, strings, where)
    cfg = validate(doc, with_arm_requirements(SCHEMA, doc), where)  # [[extra_arm]]'s too
    cross_checks(cfg, where)
    canon = {k.strip(): resolved_value(cfg, k.strip()) for k in overrides}
    return Scenario(cfg, f"{scenario.source} (with {canon})"), canon


def grid_product(grid, where="grid"):
    """The Cartesian product of a grid, as a list of override dicts.

    Parameters
    ----------
    grid : dict key -> non-empty list of values (the last key varies fastest)
    """
    if not isinstance(grid, dict) or not grid:
        raise ValueError(f"{where}: must be a non-empty mapping key -> list of values")
    keys = list(grid)
    for k in keys:
        vals = grid[k]
        if isinstance(vals, (str, bytes, dict)) or not hasattr(vals, "__len__") or not len(vals):
            raise ValueError(f"{where}: {k!r} must map to a non-empty list of values, got {vals!r}")
    count = 1
    for k in keys:
        count *= len(grid[k])
    if count > MAX_VARIANTS:
        raise ValueError(
            f"{where}: {count:,} variants (the product of the lists' lengths): more than "
            f"{MAX_VARIANTS:,}; sweep fewer values per key, or in several sweeps"
        )
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*grid.values())]


def make_variants(scenario, grid=None, *, samples=None, where=None):
    """Resolve a grid or a list of samples into validated :class:`Variant` objects.

    Raises ValueError naming the variant and the key on any invalid override, and on
    two variants with the same canonical overrides.
    """
    if (grid is None) == (samples is None):
        raise ValueError("give exactly one of grid (key -> list of values) or samples")
    if grid is not None:
        where = where or "grid"
        combos = grid_product(grid, where)
    else:
        where = where or "samples"
        if isinstance(samples, (str, bytes, dict)) or not hasattr(samples, "__iter__"):
            raise ValueError(f"{where}: must be a list of override dicts, got {samples!r}")
        combos = list(itertools.islice(samples, MAX_VARIANTS + 1))
        if len(combos) > MAX_VARIANTS:
            raise ValueError(f"{where}: more than {MAX_VARIANTS:,} variants in one sweep")
        if not combos:
            raise ValueError(f"{where}: is empty (give at least one override dict)")
    out, seen = [], {}
    for i, ov in enumerate(combos):
        sc, canon = scenario_with(scenario, ov, f"{where} variant {i}")
        vid = variant_id(canon)
        if vid in seen:
            raise ValueError(
                f"{where}: variant {i} {canon} repeats variant {seen[vid]} (same overrides)"
            )
        seen[vid] = i
        out.append(Variant(vid, canon, sc))
    return out


# --------------------------------------------------------------- grid files


def _flatten(table, where):
    """``{section: {key: v}}`` and ``{"section.key": v}`` -> ``{"section.key": v}``."""
    if not isinstance(table, dict):
        raise ValueError(f"{where}: expected a table of overrides, got {table!r}")
    flat = {}
    many = _many_sections()
    for k, v in table.items():
        if isinstance(v, dict) and "." not in k and k not in many:
            for kk, vv in v.items():
                flat[f"{k}.{kk}"] = vv
        elif "." in k or k in many:
            flat[k] = v
        else:
            raise ValueError(f"{where}: key {k!r} must be section.key (e.g. scenario.seed)")
    return flat


def _read_mapping_file(path, kind):
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such {kind} file")
    suffix = path.suffix.lower()
    text = path.read_bytes()
    if suffix == ".toml":
        try:
            return tomllib.loads(text.decode())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: invalid TOML ({str(exc).splitlines()[0]})") from None
    if suffix == ".json":
        try:
            return json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: invalid JSON ({exc})") from None
    raise ValueError(f"{path}: unknown {kind} file type {suffix!r} (use .toml or .json)")


def load_grid_file(path):
    """Read a grid file: TOML or JSON mapping ``section.key`` (or tables) to lists of values.

    TOML::

        [base_controller]
        kp_trans = [[600, 600, 600], [2000, 2000, 2000]]
        [scenario]
        seed = [0, 1]

    JSON: ``{"base_controller.kp_trans": [[600, 600, 600], [2000, 2000, 2000]],
    "scenario.seed": [0, 1]}``.
    """
    doc = _read_mapping_file(path, "grid")
    if not isinstance(doc, dict) or not doc:
        raise ValueError(f"{path}: a grid file must map section.key to lists of values")
    grid = _flatten(doc, str(path))
    grid_product(grid, str(path))  # structure check: non-empty lists
    return grid


def load_samples_file(path):
    """Read a samples file: explicit variants, one override table each.

    TOML: ``[[samples]]`` tables (``base_controller.kp_trans = [...]``, dotted keys);
    JSON: a list of objects, or ``{"samples": [...]}``.
    """
    doc = _read_mapping_file(path, "samples")
    if isinstance(doc, dict):
        if set(doc) != {"samples"}:
            raise ValueError(
                f"{path}: a samples file holds one array of tables 'samples' "
                f"(found keys: {', '.join(sorted(doc)) or 'none'})"
            )
        doc = doc["samples"]
    if not isinstance(doc, list) or not doc:
        raise ValueError(f"{path}: 'samples' must be a non-empty list of override tables")
    return [_flatten(s, f"{path} samples[{i}]") for i, s in enumerate(doc)]


def override_cell(v):
    """An override value as a DataFrame cell: a list of scalars becomes a tuple (hashable,
    so a sweep's table can be grouped by it); other values are returned as they are."""
    if isinstance(v, list) and all(not isinstance(x, (list, dict)) for x in v):
        return tuple(v)
    return v
