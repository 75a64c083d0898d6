"""Reading a directory someone sent you (a result, a sweep, a Monte Carlo campaign, a
tuning): every file is read within limits that nothing in the directory can raise, and its
structure is checked before anything uses it.  What fails raises :class:`ResultError` (a
ValueError) naming the file and the problem; the command line prints it on one line and
exits 2.  Nothing a directory names is imported or run: files are parsed as data
(JSON, ``.npz`` arrays of numbers, nothing unpickled).

Limits
------
:func:`max_load_bytes`
    the bytes one load may inflate from ``.npz`` archives: a result (all its series), or
    all the stored series of a campaign.  ``$DQSPACE_MAX_LOAD_BYTES`` (a byte count:
    ``16G``, ``512M``, ``4000000000``) sets it; by default :data:`DEFAULT_MAX_LOAD_BYTES`
    (8 GiB, the most a run records by default, see
    :data:`dqspace.scenarios.sim.runner.DEFAULT_MAX_BYTES`), and at most half the
    physical memory (as for the run): whatever a run on this machine writes under its
    default limit can be read back, and a hostile archive cannot take more than half the
    memory.  Each member's size announced in the archive is checked before it is read,
    and the bytes actually inflated are counted while they are read (an archive may
    announce less than it holds: it is refused when it holds more).  The manifest of a
    result also bounds its archive, but the manifest comes with the archive: the absolute
    limit does not depend on anything in the directory.
:data:`MAX_MEMBERS`
    arrays in one archive; :data:`MAX_NDIM` dimensions of one array; only arrays of
    numbers or booleans are read (no Python objects, strings or records).
:data:`MAX_JSON_BYTES`, :data:`MAX_JSON_DEPTH`
    the size of a JSON file and how deeply its arrays and objects may nest.

Structure: :func:`check_structure` checks a parsed JSON document against a small
declarative description (:class:`Obj`, :class:`ListOf`, :class:`MapOf`, :class:`Choice`,
:class:`Maybe`, :class:`Also`, :data:`NUMBER`, :data:`ANY`); :func:`check_scenario` a
recorded scenario against the scenario schema; :func:`check_time` a series of sample times
(finite, strictly increasing).
"""

from __future__ import annotations

import abc
import contextlib
import errno
import json
import math
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ..._env import env_bytes
from ..spec.config import ScenarioError, check_recorded, short
from ..spec.schema import SCHEMA
from .storage import MAX_JSON_BYTES, format_bytes, open_regular, read_regular, read_upto

__all__ = [
    "ANY",
    "Also",
    "DEFAULT_MAX_LOAD_BYTES",
    "LOAD_LIMIT_VARIABLE",
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_MEMBERS",
    "MAX_NDIM",
    "NUMBER",
    "Choice",
    "ListOf",
    "LoadBudget",
    "LoadLimitError",
    "MapOf",
    "Maybe",
    "Obj",
    "ResultError",
    "check_scenario",
    "check_structure",
    "check_time",
    "json_depth",
    "max_load_bytes",
    "npz_arrays",
    "read_file",
    "read_json",
    "read_npz",
]

#: [bytes] the default of :func:`max_load_bytes` (also at most half the physical memory)
DEFAULT_MAX_LOAD_BYTES = 8 << 30
#: the environment variable that sets :func:`max_load_bytes`
LOAD_LIMIT_VARIABLE = "DQSPACE_MAX_LOAD_BYTES"
#: most arrays (members) in one ``.npz`` archive
MAX_MEMBERS = 4096
#: most dimensions of one stored array
MAX_NDIM = 8
#: deepest nesting of arrays and objects in a JSON file (a result manifest nests 7 deep)
MAX_JSON_DEPTH = 64
_KINDS = "biuf"  # booleans, integers, floats: what a stored series may hold
_CHUNK = 1 << 20  # [bytes] read from an archive member at a time


class ResultError(ValueError):
    """A result (or sweep, campaign, tuning) file is missing, damaged or inconsistent.

    Attributes
    ----------
    path : Path, the file or directory
    problem : str
    """

    def __init__(self, path: str | os.PathLike, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class LoadLimitError(ResultError):
    """A file would inflate beyond :func:`max_load_bytes` (or another absolute limit)."""


# ------------------------------------------------------------------ limits


def max_load_bytes() -> tuple[int, str]:
    """``(limit [bytes], where it comes from)``: what one load may inflate (module doc).

    Raises ValueError naming ``DQSPACE_MAX_LOAD_BYTES`` when it is set to anything but a
    positive byte count."""
    env = env_bytes(LOAD_LIMIT_VARIABLE, None)
    if env is not None:
        return env, LOAD_LIMIT_VARIABLE
    with contextlib.suppress(ValueError, OSError, AttributeError):
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        if 0 < phys // 2 < DEFAULT_MAX_LOAD_BYTES:
            return phys // 2, "half the physical memory"
    return DEFAULT_MAX_LOAD_BYTES, "the default"


class LoadBudget:
    """The bytes one load may still inflate, shared by every archive it reads.

    Parameters
    ----------
    limit : bytes, or None for :func:`max_load_bytes`
    """

    def __init__(self, limit: int | None = None) -> None:
        given = (int(limit), "the caller's limit") if limit is not None else None
        self.limit, self.source = given or max_load_bytes()
        self.used = 0

    def _refuse(self, path, what, nbytes):
        hint = (
            f"set {LOAD_LIMIT_VARIABLE} higher"
            if self.source == LOAD_LIMIT_VARIABLE
            else f"{LOAD_LIMIT_VARIABLE} raises it"
        )
        raise LoadLimitError(
            path,
            f"{what} {format_bytes(nbytes)}"
            + (f" (after {format_bytes(self.used)} already read)" if self.used else "")
            + f": more than the load limit of {format_bytes(self.limit)} ({self.source}; "
            f"{hint} if you trust this file); damaged, or a zip bomb: not read",
        )

    def check(self, nbytes: int, path, what: str = "would inflate to") -> None:
        """LoadLimitError (naming ``path``, the limit and the variable) unless ``nbytes``
        more fit."""
        if self.used + nbytes > self.limit:
            self._refuse(path, what, nbytes)

    def take(self, nbytes: int, path, what: str = "inflates to more than") -> None:
        """Count ``nbytes`` inflated (LoadLimitError past the limit)."""
        self.check(nbytes, path, what)
        self.used += nbytes


def read_file(path: str | os.PathLike, limit: int, budget: LoadBudget | None = None) -> bytes:
    """The bytes of the regular file ``path`` (a link at its end is not followed; a FIFO,
    a device or a directory is refused: OSError saying what it is), at most ``limit``
    bytes (OSError beyond, before reading), counted in ``budget`` when given
    (:class:`LoadLimitError` past it): a data file a received directory names."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            too_big = f"is {format_bytes(size)}, more than the {format_bytes(limit)} read"
            raise OSError(errno.EFBIG, too_big, str(path))
        if budget is not None:
            budget.check(size, path, "would read")
        data = read_upto(fh, limit)
    if budget is not None:
        budget.take(len(data), path, "would read")
    return data


# ------------------------------------------------------------------- .npz


def read_npz(
    path: str | os.PathLike,
    budget: LoadBudget | None = None,
    *,
    check_members=None,
    cap: tuple[int, str] | None = None,
) -> dict:
    """The arrays of the ``.npz`` file ``path`` (a regular file, links not followed), read
    within ``budget`` (default: a new :class:`LoadBudget`); see :func:`npz_arrays`.

    Raises
    ------
    FileNotFoundError : no such file
    ResultError : unreadable, damaged, or beyond a limit (:class:`LoadLimitError`)
    """
    path = Path(path)
    try:
        fh = open_regular(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ResultError(path, f"cannot be read ({exc.strerror or exc})") from None
    with fh:
        return npz_arrays(fh, path, budget, check_members=check_members, cap=cap)


def npz_arrays(fh, path, budget: LoadBudget | None = None, *, check_members=None, cap=None) -> dict:
    """The arrays of the open ``.npz`` file ``fh`` (named ``path`` in errors): name ->
    ndarray of numbers or booleans.

    ``check_members(names)``, given the set of array names before anything is read, may
    raise ResultError; ``cap = (bytes, why)`` a tighter bound on the announced total (a
    result's manifest).  The announced sizes are checked against ``cap`` and the budget
    before any is read; the bytes inflated are counted as they are read.
    """
    budget = LoadBudget() if budget is None else budget
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        problem = f"is not a readable .npz archive ({exc}); empty or truncated?"
        raise ResultError(path, problem) from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise LoadLimitError(
                path, f"holds {len(infos)} arrays, more than the {MAX_MEMBERS} read; not read"
            )
        members = {}
        for info in infos:
            name = info.filename.removesuffix(".npy")
            if name in members:
                raise ResultError(path, f"holds two arrays named {name!r}; damaged")
            members[name] = info
        if check_members is not None:
            check_members(set(members))
        total = sum(i.file_size for i in infos)
        budget.check(total, path)  # the absolute limit first: it names the variable
        if cap is not None and total > cap[0]:
            raise ResultError(
                path,
                f"would inflate to {format_bytes(total)}, more than the "
                f"{format_bytes(cap[0])} {cap[1]} (damaged, or a zip bomb); not read",
            )
        return {name: _read_member(zf, info, path, name, budget) for name, info in members.items()}


def _read_member(zf, info, path, name, budget):
    fmt = np.lib.format
    what = f"series {name!r}"
    try:
        with zf.open(info) as f:
            version = fmt.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = fmt.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = fmt.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy version {version}")
            if dtype.hasobject:
                raise ResultError(path, f"{what} holds Python objects; not read")
            if dtype.kind not in _KINDS or dtype.subdtype is not None:
                raise ResultError(path, f"{what} is {dtype}, not numbers; not read")
            if len(shape) > MAX_NDIM or any(s < 0 for s in shape):
                raise ResultError(path, f"{what} has the shape {shape} (at most {MAX_NDIM} axes)")
            count = math.prod(shape)
            nbytes = count * dtype.itemsize
            header = f.tell()
            if header + nbytes > info.file_size:
                raise ResultError(
                    path,
                    f"{what} announces {shape} {dtype} ({format_bytes(nbytes)}) in "
                    f"{format_bytes(info.file_size)}; damaged",
                )
            budget.check(nbytes, path, f"{what} would inflate to")
            try:
                flat = np.empty(count, dtype)
            except MemoryError:
                raise LoadLimitError(
                    path,
                    f"{what}: {format_bytes(nbytes)} do not fit in the memory left (within "
                    f"the load limit of {format_bytes(budget.limit)}, {budget.source}; "
                    f"{LOAD_LIMIT_VARIABLE} lowers it)",
                ) from None
            buf = memoryview(flat.view(np.uint8))
            got = 0
            while got < nbytes:  # a running count: never more than announced
                k = f.readinto(buf[got : min(nbytes, got + _CHUNK)])
                if not k:
                    raise ResultError(path, f"{what} is truncated")
                got += k
                budget.take(k, path)
            if f.read(1):  # also where zipfile checks the CRC of the member
                raise ResultError(path, f"{what} holds more than its header announces; damaged")
            return flat.reshape(shape, order="F" if fortran else "C")
    except ResultError:
        raise
    except (
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        ValueError,
        OSError,
        TypeError,
        RuntimeError,  # an encrypted member
        NotImplementedError,  # an unknown compression
        SyntaxError,  # a header that is not a Python literal
    ) as exc:
        raise ResultError(path, f"{what} is damaged ({exc})") from None


# ------------------------------------------------------------------- JSON


def json_depth(doc) -> int:
    """How deeply arrays and objects nest in a parsed JSON document (a scalar: 0),
    counted without recursion."""
    depth, stack = 0, [(doc, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        depth = max(depth, d)
        stack.extend((v, d + 1) for v in node if isinstance(v, (dict, list)))
    return depth


def read_json(path: str | os.PathLike, what: str, *, limit: int = MAX_JSON_BYTES):
    """The parsed JSON file ``path`` (a regular file, at most ``limit`` bytes, nested at
    most :data:`MAX_JSON_DEPTH` deep; ``what`` names it in errors: ``"sweep manifest"``).

    Raises
    ------
    FileNotFoundError : no such file
    ResultError : unreadable, too large, nested too deeply, not JSON
    """
    path = Path(path)
    try:
        data = read_regular(path, limit)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ResultError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        doc = json.loads(data)
    except RecursionError:
        doc = None
        depth = f"more than {MAX_JSON_DEPTH}"
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, a huge integer
        raise ResultError(path, f"is not valid JSON ({exc}); empty or truncated?") from None
    else:
        depth = json_depth(doc)
    if not isinstance(depth, int) or depth > MAX_JSON_DEPTH:
        raise ResultError(
            path,
            f"is nested too deeply to be a {what} ({depth} levels of arrays and objects, "
            f"at most {MAX_JSON_DEPTH}); damaged, not read",
        )
    return doc


# -------------------------------------------------------------- structure


class _Spec(abc.ABC):
    """What a value of a JSON document must be (:func:`check_structure`)."""

    @abc.abstractmethod
    def describe(self) -> str:
        """The expected value in words."""

    @abc.abstractmethod
    def check(self, value, where) -> None:
        """Raise when ``value`` (at ``where``) is not what this spec says."""


class _Type(_Spec):
    def __init__(self, types, text):
        self.types, self.text = types, text

    def describe(self):
        return self.text

    def check(self, value, where):
        if not isinstance(value, self.types) or (
            isinstance(value, bool) and bool not in self.types and object not in self.types
        ):
            _wrong(where, self, value)


#: a JSON number (an integer or a float, NaN and infinities included; not true/false)
NUMBER = _Type((int, float), "a number")
#: any JSON value
ANY = _Type((object,), "anything")
_SIMPLE = {
    str: _Type((str,), "a string"),
    int: _Type((int,), "an integer"),
    bool: _Type((bool,), "true or false"),
    float: NUMBER,
    dict: _Type((dict,), "an object"),
    list: _Type((list,), "an array"),
}


def _spec(s) -> _Spec:
    return s if isinstance(s, _Spec) else _SIMPLE[s]


class Maybe(_Spec):
    """``spec`` or null."""

    def __init__(self, spec):
        self.spec = _spec(spec)

    def describe(self):
        return f"{self.spec.describe()} or null"

    def check(self, value, where):
        if value is not None:
            self.spec.check(value, where)


class Choice(_Spec):
    """One of the given strings."""

    def __init__(self, *choices):
        self.choices = choices

    def describe(self):
        return "one of " + ", ".join(map(repr, self.choices))

    def check(self, value, where):
        if not isinstance(value, str) or value not in self.choices:
            _wrong(where, self, value)


class ListOf(_Spec):
    """An array of values of ``spec`` (at most ``max_len`` of them, or exactly ``length``,
    when given)."""

    def __init__(self, spec, max_len=None, length=None):
        self.spec, self.max_len, self.length = _spec(spec), max_len, length

    def describe(self):
        return "an array" if self.length is None else f"an array of {self.length}"

    def check(self, value, where):
        if not isinstance(value, list) or (self.length is not None and len(value) != self.length):
            _wrong(where, self, value)
        if self.max_len is not None and len(value) > self.max_len:
            raise _Bad(where, f"has {len(value)} entries, at most {self.max_len} expected")
        for i, v in enumerate(value):
            self.spec.check(v, f"{where}[{i}]")


class MapOf(_Spec):
    """An object whose every value is of ``spec``."""

    def __init__(self, spec):
        self.spec = _spec(spec)

    def describe(self):
        return "an object"

    def check(self, value, where):
        if not isinstance(value, dict):
            _wrong(where, self, value)
        for k, v in value.items():
            self.spec.check(v, f"{where}.{k}" if where else str(k))


class Obj(_Spec):
    """An object with the ``required`` keys and maybe the ``optional`` ones (name ->
    spec); other keys are let through (a newer version may add some)."""

    def __init__(self, required=None, optional=None):
        self.required = {k: _spec(s) for k, s in (required or {}).items()}
        self.optional = {k: _spec(s) for k, s in (optional or {}).items()}

    def describe(self):
        return "an object"

    def check(self, value, where):
        if not isinstance(value, dict):
            _wrong(where, self, value)
        for k, s in self.required.items():
            sub = f"{where}.{k}" if where else k
            if k not in value:
                raise _Bad(sub, "missing")
            s.check(value[k], sub)
        for k, s in self.optional.items():
            if k in value:
                s.check(value[k], f"{where}.{k}" if where else k)


class Also(_Spec):
    """An object of ``spec`` that, when it has the key ``key``, is also of ``then`` (rows
    of an older version lack what newer ones hold)."""

    def __init__(self, spec, key, then):
        self.spec, self.key, self.then = _spec(spec), key, _spec(then)

    def describe(self):
        return self.spec.describe()

    def check(self, value, where):
        self.spec.check(value, where)
        if self.key in value:
            self.then.check(value, where)


class _Bad(Exception):
    def __init__(self, where, problem):
        self.where, self.problem = where, problem


def _shown(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _wrong(where, spec, value):
    raise _Bad(where, f"expected {spec.describe()}, found {_shown(value)}")


def check_structure(path: str | os.PathLike, doc, spec, what: str) -> None:
    """ResultError naming ``path`` and the key unless ``doc`` (a parsed JSON file, a
    ``what``: ``"Monte Carlo summary"``) is as ``spec`` describes."""
    try:
        _spec(spec).check(doc, "")
    except _Bad as exc:
        if not exc.where:
            raise ResultError(path, f"is not a {what} ({exc.problem})") from None
        raise ResultError(
            path, f"has no valid {exc.where!r} ({exc.problem}; a damaged {what})"
        ) from None


def check_time(path: str | os.PathLike, t, name: str = "t") -> None:
    """ResultError naming ``path`` unless ``t`` is a 1-D array of real, finite, strictly
    increasing sample times."""
    t = np.asarray(t)
    if t.ndim != 1 or t.dtype.kind not in "iuf":
        raise ResultError(
            path, f"series {name!r} is not a 1-D array of times ({t.dtype} {t.shape})"
        )
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        i = int(bad[0])
        raise ResultError(path, f"series {name!r} is not finite at sample {i} ({t[i]}); damaged")
    back = np.flatnonzero(np.diff(t) <= 0)
    if back.size:
        i = int(back[0]) + 1
        raise ResultError(
            path,
            f"series {name!r} is not strictly increasing at sample {i} ({t[i - 1]!r} then "
            f"{t[i]!r}); damaged",
        )


def check_scenario(path: str | os.PathLike, doc, where: str) -> None:
    """ResultError naming ``path`` unless the keys of ``doc`` (a resolved scenario a file
    recorded, under the key ``where``) that the scenario schema knows have its types and
    ranges (:func:`~dqspace.scenarios.spec.config.check_recorded`)."""
    try:
        check_recorded(doc, SCHEMA, source=where)
    except ScenarioError as exc:
        raise ResultError(path, f"{short(str(exc), 300)} (a damaged record)") from None
