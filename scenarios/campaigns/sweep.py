"""Parameter sweeps: many variants of one scenario, run on Dask, collected in a DataFrame.

Three modules: :mod:`dqspace.scenarios.spec.variants` (override sets, grids, sample files, ids),
:mod:`.sweep_store` (what a sweep keeps on disk) and this one (metrics and execution).

A *variant* is a set of overrides of the base scenario, keyed like ``--set``:
``{"base_controller.kp_trans": [2000, 2000, 2000], "scenario.seed": 1}``;
``"faults[0].time"`` addresses an entry of the base's fault list and ``"faults"``
replaces the whole list (a list of fault tables).  A sweep is either a *grid*
(key -> list of values; the Cartesian product, the last key varying fastest)
or explicit *samples* (a list of override dicts).

>>> from dqspace.scenarios import load_scenario, sweep
>>> sc = load_scenario("station-keeping", ["scenario.duration=5"])
>>> df = sweep(sc, {"base_controller.kp_trans": [[600] * 3, [2000] * 3],
...                 "scenario.seed": [0, 1]}, out="runs/kp")      # doctest: +SKIP

Execution (``scheduler``): a ``dask.distributed`` LocalCluster of worker
*processes* with one thread each (the simulation holds the GIL in places) by
default; or an existing cluster (its address ``"tcp://host:port"``, a
``distributed.Client`` or a cluster object); or ``"synchronous"``: one after
the other in the calling process (debugging, reference timings).  Every worker
compiles (or loads from numba's on-disk cache) the simulation kernels on first
use.

Storage (``out``): ``<out>/sweep.json`` (the base scenario and its requirements),
``<out>/variants/<id>/metrics.json`` per variant (its overrides, metrics, run
time, error, degradations), optionally ``<out>/variants/<id>/result/`` (the full result), and
``<out>/metrics.csv`` (the DataFrame).  Every file is written atomically by the
client as its variant completes, so a sweep interrupted and restarted with the
same ``out`` runs only the variants not yet stored.  One sweep at a time writes an
``out`` (a second one refuses with :class:`~dqspace.scenarios.store.results.OutputLocked`
naming the first).  A stored ``metrics.json`` that is damaged (truncated, not a JSON
object, without its ``id``) is reported (a warning on the ``"dqspace.sweep"`` logger,
listing the files) and its variant run again; :func:`load_sweep` skips and reports such
files.  The variant id is the first 16 hex digits of the SHA-256 of the canonical
override set (keys sorted, values as validated by the schema: ``600`` and ``600.0`` are
the same variant).

Security: ``scheduler="tls://host:port"`` needs TLS credentials: a
``distributed.Security`` object (``security=``) or the Dask configuration
(``distributed.comm.tls.ca-file``, ``.client.cert``, ``.client.key``); without either,
:func:`connect` raises a ValueError saying so.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..._progress import Heartbeat, LineRate, beat_period, left_text
from ..sim.metrics import METRICS, summarize
from ..spec.scenario import Scenario, load_scenario
from ..spec.schema_arms import arm_metric_names
from ..spec.schema_capture import CAPTURE_METRICS
from ..spec.variants import make_variants, override_cell, resolved_value
from ..store.storage import atomic_write_bytes
from ..store.sweep_store import SweepStore, report_damaged

if TYPE_CHECKING:
    import pandas

__all__ = ["sweep", "connect", "EXTRA_COLUMNS"]

log = logging.getLogger("dqspace.sweep")
#: columns every sweep DataFrame has besides the overrides and the metrics
EXTRA_COLUMNS = ("run_time", "error", "cached")

#: Dask settings of the local cluster :func:`connect` starts: no statistical profiler (for a
#: dashboard it does not serve), slower monitors (``bench_montecarlo.py --dask-defaults``).
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
}


# ----------------------------------------------------------------- metrics


@dataclass(frozen=True)
class _MetricSpec:
    names: tuple  # requested, in order
    custom: dict  # name -> callable(Results) -> float


def _metric_spec(metrics, scenario):
    kind = scenario.config["scenario"]["kind"]
    closed = kind != "open_loop"  # closed_loop, capture
    if metrics is None:
        if not closed:
            raise ValueError(
                "metrics: an open-loop scenario has no standard metrics; give callables "
                "f(results) -> float"
            )
        # and each extra arm's ([[extra_arm]]: ee_rms_<name>, ee_max_<name>)
        capture = tuple(CAPTURE_METRICS) if kind == "capture" else ()
        return _MetricSpec((*METRICS, *arm_metric_names(scenario.config), *capture), {})
    items = list(metrics.items()) if isinstance(metrics, dict) else [(None, m) for m in metrics]
    if not items:
        raise ValueError("metrics: empty (give names from summarize or callables)")
    names, custom = [], {}
    for name, m in items:
        if isinstance(m, str):
            if m not in METRICS:
                raise ValueError(f"metrics: unknown metric {m!r} (known: {', '.join(METRICS)})")
            if not closed:
                raise ValueError(f"metrics: {m!r} needs a closed-loop scenario")
            name = name or m
            if name != m:
                raise ValueError(f"metrics: {name!r}: a standard metric keeps its name {m!r}")
        elif callable(m):
            name = name or getattr(m, "__name__", "")
            if not name.isidentifier():
                raise ValueError(
                    f"metrics: callable {m!r} has no usable name {name!r}; pass a dict "
                    f"name -> callable"
                )
            if name in METRICS or name in EXTRA_COLUMNS or name == "variant":
                raise ValueError(f"metrics: custom metric name {name!r} is already a column")
            custom[name] = m
        else:
            raise ValueError(f"metrics: {m!r} is neither a metric name nor a callable")
        if name in names:
            raise ValueError(f"metrics: {name!r} requested twice")
        names.append(name)
    return _MetricSpec(tuple(names), custom)


def _check_picklable(custom):
    """Custom metrics travel to the workers with cloudpickle: fail early, naming the metric."""
    import cloudpickle  # Dask's serializer: loaded when a sweep checks its metrics

    for name, fn in custom.items():
        try:
            cloudpickle.dumps(fn)
        except Exception as exc:
            raise ValueError(
                f"metrics: {name!r} cannot be sent to the workers ({type(exc).__name__}: "
                f"{exc}); avoid capturing unpicklable objects such as locks or open files"
            ) from None


def _evaluate(config, source, custom, keep_result, series=None):
    """Run one variant (on a worker); never raises for a failing run.

    Returns dict: metrics (name -> float), run_time [s], error (str or None),
    traceback, result (Results or None), series (``series(result)``: dict name -> 1-D
    float array, or None), degraded (the run's degradations, one line each: its
    manifest's ``degraded``).
    """
    from ..sim.runner import run  # the simulation (numba kernels): on the worker, when used

    rec = {"metrics": {}, "run_time": float("nan"), "error": None, "traceback": None}
    rec["result"] = rec["series"] = None
    rec["degraded"] = []
    rec["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    t0 = time.perf_counter()
    try:
        res = run(Scenario(config, source), progress=False)
    except Exception as exc:
        rec["run_time"] = time.perf_counter() - t0
        rec["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        rec["traceback"] = traceback.format_exc()
        return rec
    rec["run_time"] = time.perf_counter() - t0
    rec["degraded"] = [str(d) for d in res.manifest.get("degraded") or []]
    errors = []
    fns = dict(custom)
    if config["scenario"]["kind"] == "closed_loop":
        fns = {"summarize": summarize, **fns}
    elif config["scenario"]["kind"] == "capture":  # summarize's and the capture's own
        fns = {"summarize": lambda res: res.manifest["metrics"], **fns}
    for name, fn in fns.items():
        try:
            value = fn(res)
            if name == "summarize":
                rec["metrics"].update(value)
            else:
                rec["metrics"][name] = float(value)
        except Exception as exc:
            if name != "summarize":
                rec["metrics"][name] = float("nan")
            errors.append(f"metric {name!r}: {type(exc).__name__}: {' '.join(str(exc).split())}")
            rec["traceback"] = traceback.format_exc()
    if series is not None:
        try:
            rec["series"] = {k: np.asarray(v, dtype=float) for k, v in series(res).items()}
        except Exception as exc:
            errors.append(f"series: {type(exc).__name__}: {' '.join(str(exc).split())}")
            rec["traceback"] = traceback.format_exc()
    if errors:
        rec["error"] = "; ".join(errors)
    if keep_result:
        rec["result"] = res
    return rec


# --------------------------------------------------------------- execution


class _Progress:
    """On a terminal (or in Jupyter) one line redrawn in place:
    ``sweep [####    ] 5/16 variants (2 stored, 1 failed)  12.3 s``.  Elsewhere (a pipe,
    a CI log) plain lines at the rate of :class:`dqspace._progress.LineRate`, a heartbeat
    among them while no variant finishes:
    ``sweep: 5/16 variants (2 stored, 1 failed), 12.3 s wall, about 40 s left`` (the time
    left: the wall time so far per variant run now, times the variants left)."""

    def __init__(self, total, n_cached, enabled, stream=None):
        self.stream = stream or sys.stderr
        self.total, self.done, self.failed, self.cached = total, n_cached, 0, n_cached
        self.enabled = enabled and total > 0
        mod = type(self.stream).__module__
        self.live = getattr(self.stream, "isatty", lambda: False)() or mod.startswith("ipykernel")
        self.t0 = time.perf_counter()
        self.lock = threading.Lock()  # the heartbeat's thread shows too
        self.rate = self.heartbeat = None
        if self.enabled and not self.live:
            self.rate = LineRate()
            self.heartbeat = Heartbeat(beat_period(self.rate.max_wall), self.show).start()
        self.show(first=True)

    def add(self, failed):
        self.done += 1
        self.failed += bool(failed)
        self.show()

    def show(self, first=False):
        if not self.enabled:
            return
        with self.lock:
            self._show(first)

    def _show(self, first):
        el = time.perf_counter() - self.t0
        counts = f"{self.done}/{self.total} variants ({self.cached} stored, {self.failed} failed)"
        if self.live:
            bar = "#" * (20 * self.done // self.total)
            self.stream.write(f"\rsweep [{bar:20s}] {counts}  {el:.1f} s")
            self.stream.flush()
            return
        if not (self.rate.due(self.done / self.total) or first):
            return
        run_now = self.done - self.cached  # the stored ones took no time
        left = left_text(el / run_now * (self.total - self.done) if run_now > 0 else None)
        left = "done" if self.done >= self.total else left
        self.stream.write(f"sweep: {counts}, {el:.1f} s wall, {left}\n")
        self.stream.flush()

    def close(self):
        if self.heartbeat is not None:
            self.heartbeat.stop()
        if self.enabled and self.live:
            self.stream.write("\n")
            self.stream.flush()


def _check_execution(scheduler, workers):
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)):
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if scheduler is not None and workers is not None:
        raise ValueError(
            f"workers = {workers} applies to the local cluster only; with scheduler = "
            f"{scheduler!r} the cluster's own workers run the sweep"
        )
    if isinstance(scheduler, str) and scheduler != "synchronous" and "://" not in scheduler:
        raise ValueError(
            f"scheduler = {scheduler!r}: expected an address such as 'tcp://host:8786' "
            f"or 'synchronous'"
        )


def _security(address, security):
    """The ``distributed.Security`` to reach ``address`` (None: Dask's configuration).

    Raises ValueError for a ``tls://`` address without usable TLS credentials.
    """
    if security is not None:
        from distributed import Security  # Dask: loaded when a sweep runs

        if not isinstance(security, Security):
            raise ValueError(f"security must be a distributed.Security, got {security!r}")
    if not isinstance(address, str) or not address.startswith("tls://"):
        return security
    from distributed import Security  # Dask: loaded when a sweep runs

    sec = security if security is not None else Security()  # None: the Dask configuration
    try:
        ctx = sec.get_connection_args("client").get("ssl_context")
    except (OSError, ValueError) as exc:
        raise ValueError(f"scheduler {address!r}: unusable TLS credentials ({exc})") from None
    if ctx is None:
        raise ValueError(
            f"scheduler {address!r} uses TLS, but no TLS credentials are configured: pass "
            f"security=distributed.Security(tls_ca_file=..., tls_client_cert=..., "
            f"tls_client_key=...), or set distributed.comm.tls.ca-file, "
            f"distributed.comm.tls.client.cert and distributed.comm.tls.client.key in the "
            f"Dask configuration (~/.config/dask/distributed.yaml, or environment variables "
            f"such as DASK_DISTRIBUTED__COMM__TLS__CA_FILE)"
        )
    return sec


@contextlib.contextmanager
def connect(scheduler=None, workers=None, *, security=None):
    """A ``distributed.Client`` for ``scheduler`` (see :func:`sweep`), closed on exit.

    ``scheduler`` None starts a LocalCluster of ``workers`` processes (default: the
    number of CPUs), one thread each, shut down on exit.  A Client given is yielded
    as is and left open.  ``"synchronous"`` yields None (run in this process).

    ``security``: a ``distributed.Security`` for a ``"tls://..."`` address (or the local
    cluster); None uses the Dask configuration.  A ``tls://`` address with neither raises
    ValueError saying how to configure it.
    """
    _check_execution(scheduler, workers)
    if scheduler == "synchronous":
        yield None
        return
    from dask import config as dask_config  # Dask: loaded when a sweep runs
    from distributed import Client, LocalCluster  # (the same)

    if isinstance(scheduler, Client):
        yield scheduler
        return
    if scheduler is None:
        n = workers or os.cpu_count() or 1
        extra = {} if security is None else {"security": _security(None, security)}
        with dask_config.set(LOCAL_CLUSTER_CONFIG):  # the workers take it when started
            cluster = LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                # the scheduler's HTTP routes (health, metrics) on a free loopback port:
                # by default they take 8787, and a second cluster on the machine warned
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                silence_logs=logging.ERROR,
                **extra,
            )
        with cluster, Client(cluster) as client:
            yield client
        return
    address = getattr(scheduler, "scheduler_address", scheduler)
    if not isinstance(address, str):
        raise ValueError(
            f"scheduler must be an address 'tcp://host:port', a distributed.Client, a "
            f"cluster or 'synchronous', got {scheduler!r}"
        )
    sec = _security(
        address, security if security is not None else getattr(scheduler, "security", None)
    )
    try:
        client = Client(address, timeout="10s", **({} if sec is None else {"security": sec}))
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"scheduler {address!r}: cannot connect ({exc})") from None
    with client:
        yield client


def _run_serial(todo, custom, keep, series, on_done):
    for v in todo:
        rec = _evaluate(v.scenario.config, v.scenario.source, custom, keep, series)
        on_done(v, rec, persist=True)


def _local(client) -> bool:
    """True when ``client``'s scheduler runs on this machine (its workers share the kernel
    cache)."""
    address = str(getattr(client.scheduler, "address", "") or "")
    host = address.split("://")[-1].rsplit(":", 1)[0].strip("[]")
    return address.startswith("inproc://") or host in ("127.0.0.1", "localhost", "::1")


def _compile_once(config):
    """Compile what a run of ``config`` needs here, before the workers would all compile it
    at once: a closed loop runs one tick (its records and metrics call kernels after the
    loop), a capture compiles its loop.  A failing one is left to its worker to report."""
    from ..sim.capture import Capture  # the simulation: loaded when a campaign runs
    from ..sim.runner import run  # (the same)

    try:
        if config["scenario"]["kind"] == "capture":
            Capture(config).compile()
        elif config["scenario"]["kind"] == "closed_loop":
            one = {**config["scenario"], "duration": 1.0 / config["control"]["rate"]}
            run(Scenario({**config, "scenario": one}, "one tick"), progress=False)
    except Exception as exc:  # noqa: BLE001 (reported by the run itself)
        log.debug("compiling before the workers run: %s", exc)


def _run_dask(client, todo, custom, keep, series, on_done):
    from distributed import as_completed  # Dask: loaded when a sweep runs

    if todo and _local(client):
        _compile_once(todo[0].scenario.config)
    futures = {}
    for v in todo:
        fut = client.submit(
            _evaluate, v.scenario.config, v.scenario.source, custom, keep, series, pure=False
        )
        futures[fut] = v
    try:
        for fut in as_completed(list(futures)):
            v = futures[fut]
            try:
                rec = fut.result()
                persist = True
            except Exception as exc:  # the cluster's failure, not the run's: retried next time
                msg = " ".join(str(exc).split())
                rec = {
                    "metrics": {},
                    "run_time": float("nan"),
                    "error": f"{type(exc).__name__}: {msg}",
                    "traceback": None,
                    "result": None,
                    "series": None,
                    "worker": None,
                    "degraded": [],
                }
                persist = False
            on_done(v, rec, persist=persist)
            fut.release()
    finally:
        client.cancel([f for f in futures if not f.done()])


def sweep(
    scenario: Scenario | str | os.PathLike,
    grid: Mapping[str, Sequence] | None = None,
    *,
    samples: Sequence[Mapping[str, object]] | None = None,
    metrics: Sequence[str] | None = None,
    out: str | os.PathLike | None = None,
    workers: int | None = None,
    scheduler: object = None,
    keep_results: bool = False,
    retry_failed: bool = False,
    progress: bool = True,
    security: object = None,
    series: Callable | None = None,
) -> pandas.DataFrame:
    """Run variants of a scenario and return their metrics as a DataFrame.

    Parameters
    ----------
    scenario : Scenario, or a scenario file / embedded name (loaded without overrides)
    grid : dict key -> list of values; the variants are the Cartesian product
        (``{"base_controller.kp_trans": [[600] * 3, [2000] * 3], "scenario.seed": [0, 1]}``:
        4 variants).  Keys as ``--set``: ``section.key``, ``faults[i].key``; ``faults``
        replaces the fault list.
    samples : list of override dicts (explicit variants); exclusive with ``grid``
    metrics : names from :data:`dqspace.scenarios.sim.metrics.METRICS`, callables
        ``f(results) -> float`` (named by ``__name__``), or a dict name -> callable;
        default: every standard metric.  Callables run on the workers (they must be
        picklable by cloudpickle: module functions, closures, lambdas in a dict).
    out : directory to store every variant (restart skips the stored ones); None: keep
        nothing on disk
    workers : int, processes of the local cluster (default: the number of CPUs);
        only when ``scheduler`` is None
    scheduler : None (start a LocalCluster), ``"tcp://host:port"`` (an existing
        scheduler), a ``distributed.Client`` or cluster object, or ``"synchronous"``
        (run here, one after the other)
    keep_results : also store each variant's full result under ``<out>/variants/<id>/result``
    retry_failed : rerun the stored variants that failed (default: report their error)
    progress : a progress line on stderr
    security : ``distributed.Security`` for a ``"tls://..."`` scheduler (None: the Dask
        configuration; a TLS address without credentials raises ValueError)
    series : optional ``f(results) -> {name: 1-D array}`` run on the workers after the
        metrics (picklable, as the metric callables); stored as
        ``<out>/variants/<id>/series.npz`` (needs ``out``; a stored variant without that
        file runs again).  Monte Carlo campaigns keep their decimated errors this way.

    Returns
    -------
    pandas.DataFrame, one row per variant in grid/sample order, columns: ``variant``
    (the id), one per override key, one per metric, ``run_time`` [s] (wall time of
    the run, without the metrics), ``error`` (None, or ``"Type: message"`` of a failed
    run or metric; the metrics of a failed run are NaN) and ``cached`` (True: read
    from ``out``, not run now).  ``df.attrs["sweep"]`` holds ``wall_time`` [s],
    ``n_run``, ``n_cached``, ``n_failed``, ``out``, ``damaged`` (``"path: problem"`` of
    each stored variant file found damaged, and so run again).

    Raises
    ------
    ValueError on invalid overrides (naming the variant and key), metrics, workers,
    scheduler, security, or an ``out`` directory holding a sweep of a different base
    scenario; OutputLocked (a ValueError) if another sweep writes ``out``.
    KeyboardInterrupt passes through; the variants completed so far are stored.
    """
    t_start = time.perf_counter()
    _check_execution(scheduler, workers)
    _security(getattr(scheduler, "scheduler_address", scheduler), security)
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    variants = make_variants(scenario, grid, samples=samples)
    spec = _metric_spec(metrics, scenario)
    if scheduler != "synchronous":
        _check_picklable(spec.custom)
    if keep_results and out is None:
        raise ValueError("keep_results=True needs an out directory")
    if series is not None and (out is None or not callable(series)):
        raise ValueError("series must be a callable f(results) -> dict, with an out directory")
    if series is not None and scheduler != "synchronous":
        _check_picklable({"series": series})
    ex = _Execution(scheduler, workers, security, keep_results, retry_failed, progress, series)
    store = SweepStore(out, scenario) if out is not None else None
    try:
        return _sweep(scenario, variants, spec, store, ex, t_start)
    finally:
        if store is not None:
            store.close()


@dataclass(frozen=True)
class _Execution:
    scheduler: object
    workers: object
    security: object
    keep_results: bool
    retry_failed: bool
    progress: bool
    series: Callable | None = None


def _sweep(scenario, variants, spec, store, ex, t_start):
    import pandas as pd  # heavy: loaded when a sweep runs

    records, cached, todo = {}, set(), []
    for v in variants:
        rec = store.load(v, spec.names, ex.retry_failed, ex.series is not None) if store else None
        if rec is not None:
            records[v.id] = rec
            cached.add(v.id)
        else:
            todo.append(v)
    damaged = store.damaged if store is not None else []
    report_damaged(damaged, "found; their variants run again")
    bar = _Progress(len(variants), len(cached), ex.progress)

    def on_done(v, rec, persist):
        if store is not None and persist:
            store.save(v, rec)
        rec.pop("result", None)
        rec.pop("series", None)
        records[v.id] = rec
        bar.add(rec["error"] is not None)

    workers = ex.workers
    if ex.scheduler is None and workers is None:
        workers = max(1, min(os.cpu_count() or 1, len(todo)))
    try:
        if todo:
            with connect(ex.scheduler, workers, security=ex.security) as client:
                if client is None:
                    _run_serial(todo, spec.custom, ex.keep_results, ex.series, on_done)
                else:
                    _run_dask(client, todo, spec.custom, ex.keep_results, ex.series, on_done)
    finally:
        bar.close()

    rows = []
    keys = list(dict.fromkeys(k for v in variants for k in v.overrides))
    for v in variants:
        rec = records[v.id]
        row = {"variant": v.id}
        for k in keys:
            row[k] = override_cell(v.overrides.get(k, resolved_value(scenario.config, k)))
        for name in spec.names:
            row[name] = float(rec["metrics"].get(name, float("nan")))
        row["run_time"] = float(rec["run_time"])
        row["error"] = rec["error"]
        row["cached"] = v.id in cached
        rows.append(row)
    df = pd.DataFrame(rows, columns=["variant", *keys, *spec.names, *EXTRA_COLUMNS])
    df.attrs["sweep"] = {
        "wall_time": time.perf_counter() - t_start,
        "n_run": len(todo),
        "n_cached": len(cached),
        "n_failed": int(df["error"].notna().sum()),
        "out": str(store.out) if store is not None else None,
        "damaged": [str(e) for e in damaged],
    }
    if store is not None:
        atomic_write_bytes(store.out / "metrics.csv", df.to_csv(index=False).encode())
    return df
