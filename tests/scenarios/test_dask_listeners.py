"""What listens on the network when dqspace runs on Dask: every socket its local cluster
opens, and every socket of the scheduler and worker commands docs/sweeps.md gives, is on
the loopback interface (a Dask scheduler runs whatever code a client sends it)."""

import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil

from dqspace.scenarios.campaigns.sweep import connect

DOC = Path(__file__).resolve().parents[2] / "docs" / "sweeps.md"
LOOPBACK = {"127.0.0.1", "::1"}


def _listening(procs):
    out = set()
    for p in procs:
        try:
            for c in p.net_connections(kind="inet"):
                if c.status == psutil.CONN_LISTEN:
                    out.add((p.pid, c.laddr.ip, c.laddr.port))
        except psutil.NoSuchProcess:
            pass
    return out


def _tree(pid):
    p = psutil.Process(pid)
    return [p, *p.children(recursive=True)]


def test_the_local_cluster_listens_on_the_loopback_only():
    before = _listening(_tree(os.getpid()))
    with connect(workers=1) as client:
        client.submit(sum, [1, 2]).result()
        opened = _listening(_tree(os.getpid())) - before
    assert opened, "the cluster opened no listening socket?"
    assert {ip for _, ip, _ in opened} <= LOOPBACK, opened


def test_two_local_clusters_at_once_take_free_ports_without_a_warning(recwarn):
    # the scheduler's HTTP routes took port 8787 by default: a second cluster on the
    # machine (another campaign, a parallel test) warned that the port was in use
    before = _listening(_tree(os.getpid()))
    with connect(workers=1) as a, connect(workers=1) as b:
        assert a.submit(sum, [1, 2]).result() == b.submit(sum, [3, 4]).result() - 4
        opened = _listening(_tree(os.getpid())) - before
    assert {ip for _, ip, _ in opened} <= LOOPBACK, opened
    assert 8787 not in {port for _, _, port in opened}
    ports = [str(w.message) for w in recwarn if "already in use" in str(w.message)]
    assert not ports, ports


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _documented_commands():
    """The first scheduler and worker commands of docs/sweeps.md's scheduler section."""
    text = DOC.read_text(encoding="utf-8")
    sched = re.search(r"^(dask scheduler [^&\n]*)&", text, re.M).group(1)
    worker = re.search(r"^(dask worker [^&\n]*)&", text, re.M).group(1)
    return sched, worker


def test_the_documented_scheduler_and_worker_listen_on_the_loopback_only():
    sched, worker = _documented_commands()
    port, dash = _free_port(), _free_port()
    sched = sched.replace("8786", str(port)).replace("8787", str(dash))
    worker = worker.replace("8786", str(port)).replace("--nworkers 2", "--nworkers 1")
    exe = str(Path(sys.executable).with_name("dask"))
    procs = []
    try:
        for cmd in (sched, worker):
            argv = [exe, *shlex.split(cmd)[1:]]
            procs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))  # fmt: skip
            time.sleep(0.5)
        deadline = time.monotonic() + 60
        found = set()
        while time.monotonic() < deadline:  # until the worker process listens too
            found = set().union(*(_listening(_tree(p.pid)) for p in procs))
            if {pid for pid, _, _ in found} & {c.pid for c in _tree(procs[1].pid)[1:]}:
                break
            time.sleep(0.5)
        assert any(p == port for _, _, p in found), "the scheduler did not start"
        assert {ip for _, ip, _ in found} <= LOOPBACK, found
    finally:
        for p in reversed(procs):
            for c in _tree(p.pid)[::-1]:
                c.kill()
            p.wait(timeout=30)
