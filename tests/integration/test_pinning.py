"""Pinning the server and the client to cores of their own (readers.pin_cores), on real
processes: every thread of a process tree moves, and a core the job may not use is one sentence."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ingestbench.errors import UserError
from ingestbench.readers.pinning import check_cores, pin_tree

# Three threads started, then a line: the parent pins only once they all exist.
THREADED = "import threading, time; [threading.Thread(target=time.sleep, args=(30,)).start() for _ in range(3)]; print(flush=True); time.sleep(30)"  # noqa: E501


def test_every_thread_of_a_tree_moves_to_the_cores():
    core = min(os.sched_getaffinity(0))
    child = subprocess.Popen([sys.executable, "-c", THREADED], stdout=subprocess.PIPE)
    try:
        child.stdout.readline()  # its threads started (a fixed wait lost the race when busy)
        assert pin_tree(child.pid, [core]) >= 4  # the main thread and three more
        threads = os.listdir(f"/proc/{child.pid}/task")
        assert all(os.sched_getaffinity(int(t)) == {core} for t in threads)
    finally:
        child.kill()
        child.wait()


def test_a_core_the_job_may_not_use_is_one_sentence():
    beyond = max(os.sched_getaffinity(0)) + 1
    with pytest.raises(UserError, match=rf"readers.pin_cores.server names cores \[{beyond}\]"):
        check_cores({"server": [beyond], "client": [min(os.sched_getaffinity(0))]})
