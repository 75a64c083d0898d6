"""Fault injection for the data-safety tests: runs in child processes (to kill them, to
race them, to limit their file size) and damaged result files."""

import hashlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

_CHILD = r"""
import json, os, resource, sys, time
args = json.loads(sys.argv[1])
if args["fsize"]:
    resource.setrlimit(resource.RLIMIT_FSIZE, (args["fsize"], args["fsize"]))
from dqspace.scenarios import load_scenario, run
from dqspace.scenarios.sim.runner import OutputLocked, RunFailed
sc = load_scenario(args["scenario"], args["set"])
print("READY", os.getpid(), flush=True)
while args["go"] and not os.path.exists(args["go"]):
    time.sleep(0.002)
try:
    run(sc, out=args["out"], progress=False)
except OutputLocked as exc:
    print("LOCKED", exc, flush=True)
    sys.exit(3)
except RunFailed as exc:
    print("FAILED", exc, flush=True)
    sys.exit(4)
print("COMPLETE", flush=True)
"""


def spawn_run(out, overrides, *, scenario="station-keeping", fsize=None, go=None):
    """A child process running ``scenario`` into ``out``; prints READY, then one of
    COMPLETE, LOCKED <message> (exit 3), FAILED <message> (exit 4).

    fsize : RLIMIT_FSIZE [bytes] of the child (files larger fail with EFBIG)
    go : a path; the child waits for it to exist before starting the run
    """
    args = {
        "out": str(out),
        "set": list(overrides),
        "scenario": scenario,
        "fsize": fsize,
        "go": str(go) if go else None,
    }
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, json.dumps(args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_ready(proc):
    """Block until the child printed READY (its imports done); returns its pid."""
    line = proc.stdout.readline()
    assert line.startswith("READY"), (line, proc.stderr.read() if proc.poll() is not None else "")
    return int(line.split()[1])


def wait_for(predicate, timeout=120.0, what="condition"):
    t0 = time.monotonic()
    while not predicate():
        assert time.monotonic() - t0 < timeout, f"timed out waiting for {what}"
        time.sleep(0.01)


def committed(out):
    """Rows committed in ``out``'s checkpoint (read independently of the package)."""
    p = Path(out) / ".partial" / "commits.bin"
    if not p.is_file() or p.stat().st_size < 8:
        return 0
    raw = p.read_bytes()
    return int(np.frombuffer(raw[: len(raw) // 8 * 8], np.int64)[-1])


def dead_pid():
    """The pid of a process that has exited."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def tmp_files(root):
    return sorted(str(p) for p in Path(root).rglob("*.tmp"))


def write_npy_member(zf, name, shape, dtype="<f8", data=b"", fill=0, nbytes=None):
    """A raw ``<name>.npy`` member with the given header (the data may disagree with it)."""
    header = np.lib.format.header_data_from_array_1_0(np.zeros((0,), dtype))
    header["shape"] = tuple(shape)
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
        fh.write(buf.getvalue())
        fh.write(data)
        left = nbytes or 0
        chunk = bytes([fill]) * (1 << 20)
        while left > 0:
            fh.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def file_mode(path):
    return os.stat(path).st_mode & 0o777


def write_result_manifest(d, widths):
    """A complete result's ``manifest.json`` in ``d`` for the ``result.npz`` there, with the
    series ``t`` [s] and the named others [m] of the given shapes (``{name: shape list}``),
    its size and digest matching the archive: a manifest that is no defence."""
    series = {"t": {"unit": "s", "columns": [], "dtype": "<f8", "shape": []}}
    for name, shape in widths.items():
        series[name] = {"unit": "m", "columns": [], "dtype": "<f8", "shape": list(shape)}
    m = {
        "format": "dqspace-result/2",
        "status": "complete",
        "n_samples": 10,
        "series": series,
        "data": {
            "file": "result.npz",
            "bytes": (d / "result.npz").stat().st_size,
            "sha256": sha256(d / "result.npz"),
        },
    }
    (d / "manifest.json").write_text(json.dumps(m))
