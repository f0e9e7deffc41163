"""A server that faults can be done to: killed (SIGKILL) and started again on the SAME data
directory and the SAME ports, or paused (SIGSTOP) and resumed (SIGCONT).

`embedded_server` gives every start a fresh directory and fresh ports, which a restart must not
do: the rows written before the kill are in that directory, and the clients reconnect to those
ports. Here the directory and the ports are picked once; each start is a process of its own
(PR_SET_PDEATHSIG, its own session) and the context manager stops the last one and removes the
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

from ingestbench.schema import questdb_defaults
from ingestbench.server import data_dir
from ingestbench.server.access import Access
from ingestbench.server.aot import aot_cache_options
from ingestbench.server.handle import QuestDB
from ingestbench.server.process import (
    LOOPBACK,
    _pick_ports,
    _wait_ready,
    java_executable,
    launch,
    server_auth_env,
    server_command,
    server_env,
    sigterm_unwinds,
    stop_process,
)

log = logging.getLogger(__name__)


class RestartableServer:
    """One data directory and one set of ports; a process on them at a time."""

    def __init__(self, jar: Path, root: Path, log_path: Path, java: str, startup_timeout_s: float):
        self.jar, self.root, self.log_path = jar, root, log_path
        self.java, self.startup_timeout_s = java, startup_timeout_s
        self.ports = _pick_ports({})
        self.proc: subprocess.Popen | None = None
        self.paused = False
        self.starts = 0
        # PR_SET_PDEATHSIG kills a child when the THREAD that forked it ends, not the process:
        # every start forks from this one thread, which lives as long as the server may.
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="questdb-spawner")

    @property
    def qdb(self) -> QuestDB:
        """A handle of the server (the same address across restarts)."""
        return QuestDB(LOOPBACK, self.ports["http"], self.ports["ilp"], self.ports["pg"],
                       self.root / "import", self.proc.pid if self.proc else None, self.root,
                       access=Access(), log_path=self.log_path)  # fmt: skip

    def start(self) -> None:
        """Start a server on the directory and ports; return once it answers."""
        defaults = questdb_defaults()
        jvm_options = aot_cache_options(self.java, self.jar, self.startup_timeout_s)
        cmd = server_command(self.java, self.jar, self.root, jvm_options)
        env = {**server_env(self.root, self.ports, {}, LOOPBACK, defaults["worker_idle"]),
               **server_auth_env(self.root, Access())}  # fmt: skip
        with open(self.log_path, "ab") as server_log:
            log_start = self.log_path.stat().st_size
            self.proc = self._spawner.submit(launch, cmd, env, self.root, server_log).result()
        self.starts += 1
        log.info("started QuestDB pid %d on %s (start %d)", self.proc.pid, self.root, self.starts)
        # The ports are fixed: a taken one is an error in one sentence, never a silent move.
        _wait_ready(self.qdb, self.proc, self.startup_timeout_s, self.log_path, self.jar,
                    log_start, dict(self.ports))  # fmt: skip

    def kill(self) -> None:
        """SIGKILL, as the OOM killer or a power cut would; waits until the process is gone."""
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

    def stop(self, grace_s: float) -> None:
        self.resume()  # a stopped JVM would ignore SIGTERM until killed
        if self.proc is not None:
            stop_process(self.proc, grace_s)
        self._spawner.shutdown()


@contextlib.contextmanager
def restartable_server(
    jar: Path,
    log_path: Path | None = None,
    java: str | None = None,
    startup_timeout_s: float | None = None,
) -> Iterator[RestartableServer]:
    """A started RestartableServer on a fresh directory; stopped and its directory removed on
    exit, whatever state (paused, killed) the faults left it in."""
    defaults = questdb_defaults()
    data_dir.remove_orphans()
    root = data_dir.new_data_dir()
    log_path = Path(log_path) if log_path else root / "server.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    server = RestartableServer(jar, root, log_path, java_executable(java),
                               startup_timeout_s or defaults["startup_timeout_s"])  # fmt: skip
    try:
        with sigterm_unwinds():
            server.start()
            yield server
    finally:
        server.stop(defaults["shutdown_grace_s"])
        shutil.rmtree(root, ignore_errors=True)
        # A start racing the removal cannot recreate it: nothing runs on it any more.
        deadline = time.monotonic() + 5
        while root.exists() and time.monotonic() < deadline:
            shutil.rmtree(root, ignore_errors=True)
            time.sleep(0.1)
