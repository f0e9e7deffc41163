"""Watching the worker processes of one repeat, so that one dying never leaves the others waiting.

A killed worker (SIGKILL, the OOM killer) reports nothing and never reaches the barrier its
siblings and the parent wait on; without a watch the parent would wait out the barrier's timeout.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from ingestbench.server.process import die_with_parent


def child_pool() -> ProcessPoolExecutor:
    """One spawned child process that ends with this one, even when this one is SIGKILLed
    (a killed job must leave no checker holding its memory)."""
    return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_die_with, initargs=(os.getpid(),))  # fmt: skip


def _die_with(parent: int) -> None:
    """Runs first in the child: the kernel's parent-death signal, and an exit if the parent is
    gone already (it died before the signal was asked for)."""
    die_with_parent()
    if os.getppid() != parent:
        os._exit(1)


def died(procs: list) -> list:
    """Workers that ended abnormally (a worker that reports, even an error, exits with 0)."""
    return [p for p in procs if p.exitcode not in (None, 0)]


@contextlib.contextmanager
def watched(procs: list, barrier=None, interval_s: float = 0.2) -> Iterator[None]:
    """Break `barrier` (if any) as soon as a worker dies; on the way out, end every worker still
    alive."""
    done = threading.Event()

    def watch() -> None:
        while not done.wait(interval_s):
            if died(procs):
                if barrier is not None:
                    barrier.abort()
                return

    watcher = threading.Thread(target=watch, name="worker-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join(1.0)  # a daemon: never wait on a barrier lock a killed worker left held
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join()


def collect(procs: list, results, timeout_s: float, interval_s: float = 0.2) -> list[Any] | None:
    """One outcome per worker from `results`; None as soon as a worker died without reporting."""
    outcomes: list[Any] = []
    done = gather(
        procs, results, outcomes, lambda got: len(got) >= len(procs), timeout_s, interval_s
    )
    return outcomes if done else None


def gather(
    procs: list, results, messages: list, done, timeout_s: float, interval_s: float = 0.2
) -> bool:
    """Append messages from `results` to `messages` until `done(messages)`; False as soon as a
    worker died without reporting (or after `timeout_s`). No lock is shared with the workers: a
    worker killed at any point cannot leave the parent waiting."""
    waited = 0.0
    while not done(messages):
        try:
            messages.append(results.get(timeout=interval_s))
        except queue.Empty:
            if died(procs):
                return False
            waited += interval_s
            if waited >= timeout_s:
                return False
    return True
