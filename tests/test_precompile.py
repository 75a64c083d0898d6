"""Kernels compiled in parallel processes on a cold cache (dqspace._precompile), and what
crossing a kernel pointer does to exceptions."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from numba import types
    import dqspace._precompile as pc
    from tests.support import precompile_kernels as pk
    mode = sys.argv[1]
    x = np.arange(1.0, 4.0)
    jobs = [(pk.scaled_sum, pk.scaled_sum.signature(x, 2.0)),
            (pk.product, pk.product.signature(x, 2.0))]
    if mode == "notice":
        import logging
        logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
        pc.precompile(jobs, processes=2)
        pc.precompile(jobs, processes=2)  # warm: says nothing
        print(json.dumps("done"))
    elif mode == "probe":
        print(json.dumps([pc.is_cached(k, s) for k, s in jobs]))
    elif mode == "precompile":
        pc.precompile(jobs, processes=2)
        d = [k.compile(s) for k, s in jobs]
        print(json.dumps({
            "values": [d[0](x, 2.0), d[1](x, 2.0)],
            # misses: compiled in this process; hits: loaded from the cache
            "misses": [sum(k.stats.cache_misses.values()) for k in d],
            "hits": [sum(k.stats.cache_hits.values()) for k in d],
        }))
    """
)


def _python(code, *args, env):
    out = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return __import__("json").loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def cold_env(tmp_path, monkeypatch):
    import os

    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")  # every kernel, these tests' too
    env.pop("DQSPACE_COMPILE_PROCESSES", None)
    return env


def test_a_child_compiles_into_the_cache_and_the_parent_loads_it(cold_env):
    assert _python(CHILD, "probe", env=cold_env) == [False, False]
    got = _python(CHILD, "precompile", env=cold_env)
    x = np.arange(1.0, 4.0)
    assert got["values"] == [2.0 * x.sum(), np.prod(2.0 * x)]
    # the first job compiled here, the second in a child: loaded from the cache here
    assert got["misses"] == [1, 0] and got["hits"] == [0, 1]
    assert _python(CHILD, "probe", env=cold_env) == [True, True]
    # warm: nothing compiled, nothing started
    again = _python(CHILD, "precompile", env=cold_env)
    assert again["misses"] == [0, 0] and again["hits"] == [1, 1]


def test_a_child_that_cannot_compile_costs_only_its_time(cold_env, tmp_path):
    """A job the child cannot find (it imports the kernel by name) is compiled here."""
    code = CHILD.replace(
        "pc.precompile(jobs, processes=2)",
        "pc._locate = lambda k: ('no_such_module_for_dqspace', 'x')\n"
        "    pc.precompile(jobs, processes=2)",
    )
    got = _python(code, "precompile", env=cold_env)
    assert got["values"][0] == 12.0
    assert got["misses"] == [1, 1]  # both compiled in the parent


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_the_process_count_setting_is_checked(monkeypatch, value):
    from dqspace._precompile import compile_processes

    monkeypatch.setenv("DQSPACE_COMPILE_PROCESSES", value)
    with pytest.raises(ValueError, match="DQSPACE_COMPILE_PROCESSES"):
        compile_processes()
    monkeypatch.setenv("DQSPACE_COMPILE_PROCESSES", "3")
    assert compile_processes() == 3


def test_an_exception_in_a_compiled_stage_stops_the_run_naming_the_stage():
    """A compiled base law that raises: the laws stage (reached through a pointer) returns
    a status and the run fails naming the stage and the tick's time, keeping the rows."""
    import types as pytypes
    from collections import namedtuple

    from numba import njit

    from dqspace.control import BaseController
    from dqspace.control.base import BaseLawParams
    from dqspace.control.flight.law import BASE_LAWS, pd_base_law_kernel, register_base_law
    from dqspace.scenarios import RunFailed, load_scenario, run

    @njit
    def raising(P, state, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb, ff, e, el, et):
        if t >= 0.05:
            raise ValueError("boom")
        pd_base_law_kernel(P, state, t, q, v, pose, twist, acc, use_ff, arm_acc, wrench, fb,
                           ff, e, el, et)  # fmt: skip

    # a params type of its own: the compiled tick picks a law's kernel by it
    Params = namedtuple("RaisingLawParams", BaseLawParams._fields)
    mod = pytypes.ModuleType("dqspace_test_raising_law")
    mod.Law = type(
        "Law",
        (BaseController,),
        {"kernel_params": lambda self: Params(*BaseController.kernel_params(self))},
    )
    sys.modules[mod.__name__] = mod
    register_base_law(mod.Law, Params, raising)
    try:
        sc = load_scenario(
            "station-keeping",
            [f"base_controller.law={mod.__name__}:Law", "scenario.duration=0.2"],
        )
        with pytest.raises(RunFailed) as info:
            run(sc, progress=False)
    finally:
        BASE_LAWS.pop(mod.Law, None)
        sys.modules.pop(mod.__name__, None)
    cause = info.value.cause
    assert "FlightSoftwareError" in cause and "laws stage" in cause and "t = 0.05 s" in cause
    assert len(info.value.results.data["t"]) == 5  # the ticks before it are kept


@pytest.mark.parametrize(
    "address, local",
    [
        ("tcp://127.0.0.1:8786", True),
        ("tcp://localhost:40001", True),
        ("tcp://[::1]:8786", True),
        ("inproc://10.0.0.2/1234/1", True),
        ("tcp://10.0.0.7:8786", False),
        ("tls://scheduler.example.org:8786", False),
        ("", False),
    ],
)
def test_a_campaign_compiles_in_its_client_only_for_a_scheduler_on_this_machine(address, local):
    """Workers on this machine share the kernel cache the client fills; remote ones do not."""
    import types as pytypes

    from dqspace.scenarios.campaigns.sweep import _local

    client = pytypes.SimpleNamespace(scheduler=pytypes.SimpleNamespace(address=address))
    assert _local(client) is local


def test_compiling_kernels_not_yet_cached_is_announced_once(cold_env):
    """A new kind of run on an otherwise warm cache compiled for a minute in silence (the
    start-up notice looks at the cache as a whole): whatever must compile is announced, by
    name, when it starts; nothing is said when it is cached."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, "notice"], cwd=ROOT, env=cold_env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [ln for ln in out.stdout.splitlines() if "not in the kernel cache yet" in ln]
    assert len(lines) == 1, out.stdout
    assert "compiling 2 kernels" in lines[0] and "product, scaled_sum" in lines[0]


LOCKING = textwrap.dedent(
    """
    import json, pathlib, sys, time
    import numpy as np
    from dqspace._jit import _kernel_name
    from dqspace._numba_cache import kernel_lock
    from tests.support import precompile_kernels as pk
    role, folder = sys.argv[1], pathlib.Path(sys.argv[2])
    x = np.arange(1.0, 4.0)
    sig = pk.scaled_sum.signature(x, 2.0)
    if role == "holder":  # holds the kernel's lock, lets the other start, then compiles
        with kernel_lock(_kernel_name(pk.scaled_sum.py_func, sig)):
            (folder / "held").touch()
            while not (folder / "compiling").exists():
                time.sleep(0.01)
            time.sleep(1.0)  # without the lock the other would compile it meanwhile
            d = pk.scaled_sum.compile(sig)
    else:
        (folder / "compiling").touch()
        d = pk.scaled_sum.compile(sig)
    print(json.dumps({"value": d(x, 2.0), "misses": sum(d.stats.cache_misses.values()),
                      "hits": sum(d.stats.cache_hits.values())}))
    """
)


def test_two_processes_needing_one_kernel_compile_it_once(cold_env, tmp_path):
    """The second waits on the kernel's lock, then loads what the first compiled."""
    import json
    import time

    def start(role):
        return subprocess.Popen(
            [sys.executable, "-c", LOCKING, role, str(tmp_path)], cwd=ROOT, env=cold_env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    holder = start("holder")
    t0 = time.monotonic()
    while not (tmp_path / "held").exists():
        assert holder.poll() is None, holder.communicate()[1]
        assert time.monotonic() - t0 < 300, "the holder never took the lock"
        time.sleep(0.02)
    other = start("other")
    got = []
    for p in (holder, other):
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        got.append(json.loads(out.strip().splitlines()[-1]))
    assert got[0] == {"value": 12.0, "misses": 1, "hits": 0}  # compiled by the holder
    assert got[1] == {"value": 12.0, "misses": 0, "hits": 1}  # loaded, not compiled again


def test_a_kernel_lock_is_reentrant_and_a_stuck_holder_only_delays(monkeypatch, tmp_path, caplog):
    import threading

    from dqspace._numba_cache import kernel_lock

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("DQSPACE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("DQSPACE_LOCK_TIMEOUT", "0.3")
    entered = []

    def other_thread():  # another thread is another holder (the lock is per thread)
        with kernel_lock("k(float64)"):
            entered.append("k")

    with kernel_lock("k(float64)"), kernel_lock("k(float64)"):  # the same thread: re-entrant
        t = threading.Thread(target=other_thread)
        t.start()
        t.join(timeout=60)
        assert entered == ["k"]  # it waited its time-out, then went on
    assert "compiling it here anyway" in caplog.text and "the kernel k(float64)" in caplog.text


ONE_RUN = textwrap.dedent(
    """
    import json, sys
    from numba.core import dispatcher

    compiled, armed, compile = [], [False], dispatcher.Dispatcher.compile

    def counting(self, sig):  # numba compiles or loads a kernel for a new signature
        if armed[0]:
            compiled.append(self.py_func.__qualname__)
        return compile(self, sig)

    dispatcher.Dispatcher.compile = counting
    from dqspace.scenarios import load_scenario
    from dqspace.scenarios.campaigns.sweep import _compile_once, _evaluate

    cfg = load_scenario("station-keeping", ["scenario.duration=0.3"]).config
    _compile_once(cfg)
    armed[0] = True
    rec = _evaluate(cfg, "test", {}, False, None)
    print(json.dumps({"error": rec["error"], "compiled": sorted(set(compiled))}))
    """
)


def test_a_campaign_client_leaves_its_workers_nothing_to_compile():
    """Before its workers start, a campaign's client compiles (or loads) every kernel a run
    calls, those of its records and metrics after the loop too: a worker on this machine
    then only loads them from the cache, and workers never compile the same kernel at once."""
    import os

    got = _python(ONE_RUN, env=dict(os.environ))
    assert got["error"] is None
    assert got["compiled"] == []
