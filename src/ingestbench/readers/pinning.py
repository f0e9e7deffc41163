"""A dedicated server, approximated: the server and the client on cores of their own.

`sched_setaffinity` sets one thread's cores; a thread started later takes its creator's. So
every thread of the server's process tree and of this process is set, once the server runs and
before the warm-up: the threads, workers and processes started after that inherit the cores
(the readers' process sets its own, `readers` of `pin_cores`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import psutil

from ingestbench.errors import UserError

log = logging.getLogger(__name__)


def _threads(pid: int) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(t) for t in os.listdir(Path("/proc") / str(pid) / "task")]
    return [pid]


def pin_tree(pid: int, cores: Iterable[int], descendants: bool = True) -> int:
    """Every thread of `pid` (and of its descendants) onto `cores`; how many threads were set."""
    cores = set(cores)
    pids = [pid]
    with contextlib.suppress(psutil.Error):
        pids += [p.pid for p in psutil.Process(pid).children(recursive=True)] if descendants else []
    done = 0
    for proc in pids:
        for tid in _threads(proc):
            with contextlib.suppress(ProcessLookupError):  # a thread that just ended
                os.sched_setaffinity(tid, cores)
                done += 1
    return done


def check_cores(pins: Mapping[str, list[int]]) -> None:
    """Every core named is one this process may use; else one sentence with the fix."""
    usable = os.sched_getaffinity(0)
    for role, cores in pins.items():
        if not set(cores) <= usable:
            raise UserError(
                f"readers.pin_cores.{role} names cores {sorted(set(cores) - usable)}, but this "
                f"job may use cores {sorted(usable)} only; name cores among those (or set "
                f"readers.pin_cores: null)."
            )


def pin_server_and_client(server_pid: int | None, pins: Mapping[str, list[int]]) -> None:
    """The server's process tree onto `pins["server"]` and this process onto `pins["client"]`;
    an external server (no pid here) is left where it runs."""
    check_cores(pins)
    if server_pid is not None:
        n = pin_tree(server_pid, pins["server"])
        log.info("pinned the server's %d threads to cores %s", n, pins["server"])
    else:
        log.warning("readers.pin_cores: the external server is not this job's to pin")
    # This process's threads only: the embedded server is one of its children.
    n = pin_tree(os.getpid(), pins["client"], descendants=False)
    log.info("pinned the client's %d threads to cores %s", n, pins["client"])
