"""A server that faults can be done to: killed (SIGKILL) and started again on the SAME data
directory and the SAME ports, or paused (SIGSTOP) and resumed (SIGCONT).

A fresh server (`fresh_server`) gets a fresh directory and fresh ports at every start, which a
restart must not: the rows written before the kill are in that directory, and the clients
reconnect to those ports. Here the directory and the ports are picked once; each start is a
process of its own, launched as every server is (the config's launch: `server_launch`, with its
Java, pools and idle workers), and the context manager stops the last one and removes the
directory on exit, also on failure, Ctrl-C and SIGTERM, and also while the server is paused.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ingestbench.config import QuestDBSettings
from ingestbench.server import data_dir
from ingestbench.server.configured import server_launch
from ingestbench.server.handle import QuestDB
from ingestbench.server.process import (
    ServerLaunch,
    launch,
    pick_ports,
    sigterm_unwinds,
    stop_process,
)

log = logging.getLogger(__name__)


class RestartableServer:
    """One data directory and one set of ports; a process on them at a time."""

    def __init__(self, server: ServerLaunch, root: Path, log_path: Path):
        self.server, self.root, self.log_path = server, root, log_path
        self.ports = pick_ports({})
        self.proc: subprocess.Popen | None = None
        self.paused = False
        self.starts = 0
        # PR_SET_PDEATHSIG kills a child when the THREAD that forked it ends, not the process:
        # every start forks from this one thread, which lives as long as the server may.
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="questdb-spawner")

    @property
    def qdb(self) -> QuestDB:
        """A handle of the server (the same address across restarts)."""
        pid = self.proc.pid if self.proc else None
        return self.server.handle(self.root, self.ports, pid, self.log_path)

    def _spawn(self, *args) -> subprocess.Popen:
        self.proc = self._spawner.submit(launch, *args).result()  # stoppable while it starts
        return self.proc

    def start(self) -> None:
        """Start a server on the directory and ports; return once it answers. The ports are
        fixed: a taken one is an error in one sentence, never a silent move."""
        self.server.start(self.root, self.ports, self.log_path, self.ports, spawn=self._spawn)
        self.starts += 1
        log.info("QuestDB pid %d up on %s (start %d)", self.proc.pid, self.root, self.starts)

    def kill(self) -> None:
        """SIGKILL, as the OOM killer sends it: a process crash, not a power loss. What the
        server had written stays in the page cache and reaches the disk, so writes not yet
        synced are never dropped here; whether they would survive a power loss is
        `cairo.commit.mode`'s to decide, and nothing here tests it. Waits until the process is
        gone."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.resume()  # a stopped process takes SIGKILL too, but leave no stale state
        self.proc.kill()
        self.proc.wait()
        log.info("killed QuestDB pid %d", self.proc.pid)

    def restart(self) -> None:
        """Kill, then start again on the same directory and ports."""
        self.kill()
        self.start()

    def pause(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        if self.paused and self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
        self.paused = False

    def stop(self) -> None:
        self.resume()  # a stopped JVM would ignore SIGTERM until killed
        if self.proc is not None:
            stop_process(self.proc, self.server.shutdown_grace_s)
        self._spawner.shutdown()


@contextlib.contextmanager
def restartable_server(
    settings: QuestDBSettings, jar: Path, log_path: Path | None = None
) -> Iterator[RestartableServer]:
    """A started RestartableServer of the config's `questdb` settings on a fresh directory;
    stopped and its directory removed on exit, whatever state (paused, killed) the faults left
    it in."""
    data_dir.remove_orphans()
    root = data_dir.new_data_dir()
    log_path = Path(log_path) if log_path else root / "server.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    server = RestartableServer(server_launch(settings, jar), root, log_path)
    try:
        with sigterm_unwinds():
            server.start()
            yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
        # A start racing the removal cannot recreate it: nothing runs on it any more.
        deadline = time.monotonic() + 5
        while root.exists() and time.monotonic() < deadline:
            shutil.rmtree(root, ignore_errors=True)
            time.sleep(0.1)
