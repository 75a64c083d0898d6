"""Keep numba's on-disk caches consistent with the sources of the whole package.

numba caches each compiled function next to its source and invalidates the
cache when *that* file changes, but not when a kernel it calls from another
file changes: a caller would keep running the old code (or crash on a changed
signature).  At the first import of dqspace this module fingerprints the
compiled source files of the five packages; when the
fingerprint differs from the one stamped at the last import, it deletes the
package's cached ``*.nbi``/``*.nbc`` files so that everything recompiles
consistently.  Only files that define numba functions count, by content (an
edit elsewhere, or a touch, changes nothing).  Installed releases never
change, so this costs reading a few dozen small files (a few milliseconds).
"""

import contextlib
import hashlib
import os
from pathlib import Path

_PACKAGES = ("dq", "multibody", "actuators", "control", "scenarios")
_STAMP = "dqspace-sources.stamp"


def _package_dirs():
    here = Path(__file__).resolve().parent  # .../dq (or .../dqspace/dq when installed)
    root = here.parent
    return [root / p for p in _PACKAGES if (root / p).is_dir()]


def _fingerprint(dirs):
    """Hash of the compiled sources: every file that defines numba functions."""
    h = hashlib.sha1()
    for d in dirs:
        for f in sorted(d.rglob("*.py")):
            text = f.read_bytes()
            if b"njit" in text or b"guvectorize" in text:
                h.update(str(f.relative_to(d.parent)).encode() + b"\0" + text)
    return h.hexdigest()


def ensure_consistent_caches(dirs=None, stamp=None):
    """Delete stale numba caches of the package if any source changed since the last import.

    ``dirs`` (source folders) and ``stamp`` (the fingerprint file) default to the
    installed package's; returns True when caches were cleared.
    """
    try:
        dirs = _package_dirs() if dirs is None else [Path(d) for d in dirs]
        if stamp is None:
            stamp = Path(__file__).resolve().parent / "__pycache__" / _STAMP
        stamp = Path(stamp)
        fp = _fingerprint(dirs)
        if stamp.is_file() and stamp.read_text() == fp:
            return False
        for d in dirs:
            for f in list(d.rglob("*.nbi")) + list(d.rglob("*.nbc")):
                with contextlib.suppress(OSError):
                    f.unlink()
        stamp.parent.mkdir(exist_ok=True)
        tmp = stamp.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(fp)
        os.replace(tmp, stamp)
        return True
    except OSError:  # read-only install: nothing to clean, nothing to stamp
        return False
