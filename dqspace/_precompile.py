"""Compile a run's independent kernels in parallel processes when the kernel cache is cold.

A closed-loop run needs a few large kernels that do not call one another: the tick's
stages (navigation, laws, actuation: :data:`~dqspace.control.flight.tick.Stages`, reached
through pointers) and the loop with the plant.  On a cold cache numba compiles them one
after the other in one process, on one core.  :func:`precompile` takes the kernels with
their signatures, keeps in this process the first one not yet cached, and hands the others
to child processes (``python -m dqspace._precompile``, at most one per usable core besides
this one) that compile them into the shared on-disk cache; when they are done, this
process loads their code from the cache instead of compiling it.

Nothing changes what is compiled or the code produced: a kernel compiled in a child is
the one this process would have compiled (same function, signature and options; numba's
cache key).  A child that fails (killed, out of memory) costs only its time: its kernels
are then compiled here as before.  ``DQSPACE_COMPILE_PROCESSES`` caps the processes used
(``1``: compile everything here); on a warm cache nothing is started.
"""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
import tempfile
import time

from ._jit import LazyKernel, SignatureOnFirstCall, dispatcher_for
from ._progress import Heartbeat, LineRate, beat_period

__all__ = ["precompile", "start", "Compiling", "is_cached", "compile_processes"]

log = logging.getLogger("dqspace")


def compile_processes() -> int:
    """Processes that may compile at once: ``$DQSPACE_COMPILE_PROCESSES``, else one more than
    the usable cores (kernels differ in size: with one process per core the last one would
    finish alone), one on a single core.  Raises ValueError naming the variable when it is
    not a positive integer."""
    raw = os.environ.get("DQSPACE_COMPILE_PROCESSES", "").strip()
    if raw:
        try:
            n = int(raw)
        except ValueError:
            n = 0
        if n < 1:
            raise ValueError(f"DQSPACE_COMPILE_PROCESSES must be a positive integer, got {raw!r}")
        return n
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return cores + 1 if cores > 1 else 1


def _locate(kernel):
    """``(module, attribute)`` under which ``kernel`` is importable (a child finds it so)."""
    module = sys.modules[kernel.py_func.__module__]
    for name, value in vars(module).items():
        if value is kernel:
            return module.__name__, name
    raise LookupError(f"{kernel!r} is not a module attribute")


def is_cached(kernel, sig) -> bool:
    """True when numba's on-disk cache holds ``kernel`` (a ``SignatureOnFirstCall``, or a
    ``LazyKernel``) for ``sig``, or this process has it already.  Reads the cache's index
    only (no code is loaded); when the index cannot be read the answer is True (compile
    here, as always)."""
    if isinstance(kernel, LazyKernel):
        if kernel._dispatcher is not None:
            return True
        options, sig = kernel._options, kernel._signature
    else:
        if sig.args in kernel._compiled:
            return True
        options = kernel.options
    try:
        from numba import njit

        probe = njit(**options)(kernel.py_func)  # not compiled: only its cache
        cache = probe._cache
        key = cache._index_key(sig, probe.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 (numba internals moved: behave as without this module)
        return True


class Compiling:
    """Child processes compiling kernels into the cache (:func:`start`); :meth:`wait`."""

    def __init__(self, jobs, kept, children, names=""):
        self.jobs, self._kept, self._children = jobs, kept, children
        self._names = names  # of the kernels not cached ("": nothing to compile)
        self._t0 = time.perf_counter()

    def wait(self) -> None:
        """Compile the jobs kept here, wait for the children, then load (or compile here,
        should a child have failed) every job.  When stderr is not a terminal, an INFO line
        at least every 30 s says that compiling goes on (:mod:`dqspace._progress`)."""
        if not self._names or _terminal():
            self._wait()
            return
        try:
            rate = LineRate()
        except ValueError:  # a malformed DQSPACE_PROGRESS_SECONDS: said, children stopped
            self.cancel()
            raise

        def beat():
            if rate.due(0.0):
                log.info(
                    "still compiling %s: %.0f s so far (once per installation)",
                    self._names, time.perf_counter() - self._t0,
                )  # fmt: skip

        with Heartbeat(beat_period(rate.max_wall), beat):
            self._wait()

    def _wait(self):
        try:
            for kernel, sig in self._kept:
                dispatcher_for(kernel, sig)
        except BaseException:
            self.cancel()
            raise
        for child, err in self._children:
            with err:
                if child.wait():
                    err.seek(0)
                    tail = err.read()[-2000:].decode(errors="replace")
                    log.debug("a compiling child failed (%s): %s", child.returncode, tail)
        if self._children:
            log.debug("compiling children done in %.1f s", time.perf_counter() - self._t0)
        self._children = []
        for kernel, sig in self.jobs:
            dispatcher_for(kernel, sig)

    def cancel(self) -> None:
        """Stop the children (what they have cached stays valid)."""
        for child, err in self._children:
            child.kill()
            child.wait()
            err.close()
        self._children = []


def _terminal() -> bool:
    """True when stderr is a terminal (there, no line repeats that compiling goes on)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


def _spawn(share):
    err = tempfile.TemporaryFile()  # a pipe could fill and block the child
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "dqspace._precompile"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        with child.stdin:
            child.stdin.write(pickle.dumps([(*_locate(k), s) for k, s in share]))
    except (OSError, LookupError, pickle.PicklingError) as exc:
        log.debug("compiling in a child process failed to start: %s", exc)
        err.close()
        return None
    return child, err


def start(jobs, *, processes: int | None = None, keep: int = 0) -> Compiling:
    """Start compiling the ``jobs`` (``(kernel, signature)`` pairs) that are not cached yet
    in child processes, all but the first ``keep`` of them (this process compiles those at
    :meth:`Compiling.wait`), shared round-robin among at most ``processes - 1`` children
    (default :func:`compile_processes`); returns at once."""
    jobs = list(jobs)
    missing = [(k, s) for k, s in jobs if not is_cached(k, s)]
    processes = compile_processes() if processes is None else processes
    rest = missing[keep:]
    children = []
    if rest and processes > 1 and len(missing) > 1:
        n = min(processes - 1, len(rest))
        children = [c for c in (_spawn(rest[i::n]) for i in range(n)) if c is not None]
    names = ", ".join(sorted({k.py_func.__name__.strip("_") for k, _ in missing}))
    if missing:  # a new kind of run on a warm cache compiles too: say so, whatever the notice
        log.info(
            "compiling %d kernels not in the kernel cache yet (%s) in %d processes: "
            "up to a minute on 2 cores, once",
            len(missing), names, len(children) + (1 if keep or not children else 0),
        )  # fmt: skip
    return Compiling(jobs, missing[:keep] if children else [], children, names)


def precompile(jobs, *, processes: int | None = None) -> None:
    """Compile ``jobs`` (``(kernel, signature)`` pairs) with up to ``processes`` processes
    (default :func:`compile_processes`): the first job not cached in this one, the others
    in child processes (module docstring).  Returns when all are compiled and this process
    holds them; a job a child could not compile is compiled here."""
    start(jobs, processes=processes, keep=1).wait()


def _child() -> int:
    """Compile the jobs pickled on stdin (``(module, attribute, signature)``) into the
    cache.  The input comes from the parent process only (this module's :func:`start`)."""
    import importlib

    import dqspace  # noqa: F401 (the kernel cache's location and consistency)

    for module, name, sig in pickle.loads(sys.stdin.buffer.read()):
        obj = getattr(importlib.import_module(module), name)
        if isinstance(obj, (LazyKernel, SignatureOnFirstCall)):
            dispatcher_for(obj, sig)
    return 0


if __name__ == "__main__":
    sys.exit(_child())
