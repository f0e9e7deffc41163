"""A job's child process ends with the job, even when the job is SIGKILLed (the OOM killer):
the per-repeat checks' child, from the same pool the repeats use."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import psutil

from tests.helpers import REPO, wait_for

# A job in miniature: the checks' pool, its child's pid printed, then a check that never ends.
JOB = """
import os, time
from ingestbench.ingest.workers import child_pool
pool = child_pool()
print(pool.submit(os.getpid).result(), flush=True)
pool.submit(time.sleep, 3600).result()
"""


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _dies_with_its_job(script: str, what: str) -> None:
    """Run `script` as a job that prints its child's pid, SIGKILL the job (no clean-up of its
    own runs), and wait for the child to go too."""
    job = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                           cwd=REPO)  # fmt: skip
    child = int(job.stdout.readline())
    try:
        assert psutil.Process(child).ppid() == job.pid
        os.kill(job.pid, signal.SIGKILL)
        job.wait(timeout=60)
        wait_for(lambda: _gone(child), f"{what} to die with its job", timeout_s=60)
    finally:
        if not _gone(child):
            os.kill(child, signal.SIGKILL)
        job.stdout.close()


def test_the_checks_child_dies_when_its_job_is_sigkilled():
    _dies_with_its_job(JOB, "the checks' child")


# The paced sampler in its own process, sampling an address where nothing answers (each sample
# fails): its pid printed, then the job waits for ever.
SAMPLER_JOB = """
import time
from ingestbench.readers.sampler import VisibilitySampler
sampler = VisibilitySampler("http://127.0.0.1:9", {}, "t", 0.05, own_process=True)
sampler.start()
time.sleep(1)
print(sampler._child.pid, flush=True)
time.sleep(3600)
"""


def test_the_sampling_process_dies_when_its_job_is_sigkilled():
    _dies_with_its_job(SAMPLER_JOB, "the sampling process")
