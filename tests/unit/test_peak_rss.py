"""PeakRss counts the client's process tree (workers too, even ones started late) and the server
apart, with real processes that hold known amounts of memory. Each test measures a process tree
of its own, so nothing else this test session runs (a server fixture) is counted."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from ingestbench.ingest.runner import PeakRss

MIB = 2**20

# A root process: after `delay` seconds it starts one child per size, each writing that many MiB
# (so they are resident), prints the children's PIDs and waits.
ROOT = textwrap.dedent("""
    import subprocess, sys, time
    delay, sizes = float(sys.argv[1]), sys.argv[2:]
    hold = "import sys, time; b = b'x' * (int(sys.argv[1]) << 20); print(flush=1); time.sleep(60)"
    time.sleep(delay)
    out = subprocess.PIPE
    kids = [subprocess.Popen([sys.executable, "-c", hold, s], stdout=out) for s in sizes]
    for kid in kids:
        kid.stdout.readline()
    print(*(kid.pid for kid in kids), flush=True)
    time.sleep(60)
""")


@pytest.fixture
def tree():
    """tree(delay, *mib) starts a root as above; every process of it is killed afterwards."""
    roots: list[subprocess.Popen] = []

    def start(delay: float, *mib: int) -> subprocess.Popen:
        cmd = [sys.executable, "-c", ROOT, str(delay), *map(str, mib)]
        roots.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True))
        return roots[-1]

    yield start
    for root in roots:
        for proc in [*psutil.Process(root.pid).children(recursive=True), root]:
            proc.kill()
        root.wait()


def test_client_tree_and_server_are_measured_apart(tree):
    root = tree(0, 300, 100)
    server_pid, _ = map(int, root.stdout.readline().split())  # both children hold their memory
    with PeakRss(server_pid=server_pid, root_pid=root.pid) as rss:
        time.sleep(0.1)
    assert rss.server >= 300 * MIB
    assert 100 * MIB <= rss.client < 300 * MIB  # the worker in, the server out


def test_a_worker_started_after_the_first_look_counts(tree):
    root = tree(0.3, 150)
    with PeakRss(root_pid=root.pid, interval_s=0.01, tree_interval_s=0.05) as rss:
        root.stdout.readline()  # the worker started after PeakRss first looked, and holds 150 MiB
        deadline = time.monotonic() + 10  # a busy machine may delay the next look of the tree
        while rss.client < 150 * MIB and time.monotonic() < deadline:
            time.sleep(0.05)
    assert rss.client >= 150 * MIB
    assert rss.server is None
