"""PeakRss counts the client's process tree (workers too, even ones started late) and the server
apart, with real processes that hold known amounts of memory."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

from ingestbench.runner import PeakRss

MIB = 2**20


def holder(mib: int) -> subprocess.Popen:
    """A child process that writes `mib` MiB (so it is resident) and then waits."""
    code = f"import sys, time; b = b'x' * ({mib} << 20); print(flush=True); time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    proc.stdout.readline()  # the memory is written
    return proc


@pytest.fixture
def children():
    procs: list[subprocess.Popen] = []
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait()


def test_client_tree_and_server_are_measured_apart(children):
    server, worker = holder(300), holder(100)
    children += [server, worker]
    own = psutil.Process().memory_info().rss
    with PeakRss(server_pid=server.pid) as rss:
        time.sleep(0.1)
    assert rss.server >= 300 * MIB
    assert own + 100 * MIB <= rss.client < own + 300 * MIB  # the worker in, the server out


def test_a_worker_started_after_the_first_look_counts(children):
    with PeakRss(interval_s=0.01, tree_interval_s=0.05) as rss:
        children.append(holder(150))
        time.sleep(0.3)
    assert rss.client >= 150 * MIB
    assert rss.server is None
