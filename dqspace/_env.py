"""Settings read from environment variables, checked: a value that is not what the variable
takes (a word, ``nan``, a negative number, infinity) raises ValueError naming the variable
and what it expects, instead of failing later without saying why (or waiting forever).

Used by every folder (the build lock's ``DQSPACE_LOCK_TIMEOUT``, the run's
``DQSPACE_MAX_RESULT_BYTES``, the readers' ``DQSPACE_MAX_LOAD_BYTES``).
"""

from __future__ import annotations

import math
import os
import re

__all__ = ["env_number", "env_bytes", "parse_bytes"]

_BYTES = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]?)(?:i?B)?\s*")
_UNITS = "_KMGT"


def env_number(name: str, default: float, *, what: str = "a finite number >= 0") -> float:
    """``$name`` as a finite number >= 0, ``default`` when unset or blank.

    Raises ValueError ``"<name> = '<text>': expected <what> (unset: <default>)"`` for
    anything else (``nan``, ``inf``, ``-1``, ``abc``)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0.0 <= value < math.inf):  # also refuses nan
        raise ValueError(f"{name} = {text!r}: expected {what} (unset: {default:g})")
    return value


def parse_bytes(text: str) -> int | None:
    """A byte count written ``4000000000``, ``512M``, ``16G``, ``1.5GiB`` (binary
    multiples, K/M/G/T), or None when ``text`` is not one (or is not finite)."""
    m = _BYTES.fullmatch(text)
    if not m:
        return None
    value = float(m[1]) * 1024 ** _UNITS.index((m[2] or "_").upper())
    return int(value) if math.isfinite(value) and value < 2**63 else None


def env_bytes(name: str, default: int | None) -> int | None:
    """``$name`` as a positive byte count (:func:`parse_bytes`), ``default`` when unset
    or blank; ValueError naming the variable otherwise (``abc``, ``nan``, ``-1``, ``0``,
    ``1e400``)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    value = parse_bytes(text)
    if value is None or value < 1:
        raise ValueError(
            f"{name} = {text!r}: expected a positive number of bytes, e.g. 4000000000, "
            "512M, 16G (unset: the default)"
        )
    return value
