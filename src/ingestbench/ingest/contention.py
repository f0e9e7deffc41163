"""Whether a job had the machine to itself: other QuestDB servers, other jobs of this workflow, and
the machine's load, looked at before and after every repeat.

Two runs on one machine (two clones, or a user's other work) slow each other without a sign; a
job records what it saw (`contention` in its run file), the summary and the site mark its rows,
and with `guards.exclusive` a job refuses to start while another run is active.

Another job is a data directory of an embedded server whose owner (server.data_dir) is a live
process other than this one; another QuestDB is any QuestDB process but this job's own server
(for an external server: but the one listening on its HTTP port).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from ingestbench.errors import UserError
from ingestbench.server import data_dir
from ingestbench.server.handle import QuestDB


class MachineBusy(UserError):
    """guards.exclusive and another run is active."""


def _questdb_pids() -> set[int]:
    pids = set()
    for p in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if "io.questdb" in " ".join(p.info["cmdline"] or ()):
                pids.add(p.pid)
    return pids


def _listening_on(port: int) -> set[int]:
    try:
        connections = psutil.net_connections("tcp")
    except psutil.Error:
        return set()
    listening = (c for c in connections if c.pid and c.status == psutil.CONN_LISTEN and c.laddr)
    return {c.pid for c in listening if c.laddr.port == port}


def _other_jobs(where: Path | None = None) -> set[int]:
    """Owners (live, not this process) of the embedded servers' data directories in TMPDIR."""
    owners = set()
    for root in Path(where or tempfile.gettempdir()).glob(f"{data_dir.PREFIX}*"):
        pid = data_dir.live_owner(root)
        if pid is not None and pid != os.getpid():
            owners.add(pid)
    return owners


@dataclass
class Contention:
    """What a job saw of other work on the machine while its repeats ran."""

    qdb: QuestDB | None = None
    other_questdb: set[int] = field(default_factory=set)
    other_jobs: set[int] = field(default_factory=set)
    load_1m_max: float = 0.0

    def own_servers(self) -> set[int]:
        if self.qdb is None:
            return set()
        if self.qdb.pid is not None:
            return {self.qdb.pid}
        return _listening_on(self.qdb.http_port)

    def look(self) -> Contention:
        """Add what runs now to what was seen."""
        self.other_questdb |= _questdb_pids() - self.own_servers()
        self.other_jobs |= _other_jobs()
        self.load_1m_max = max(self.load_1m_max, os.getloadavg()[0])
        return self

    @property
    def contended(self) -> bool:
        return bool(self.other_questdb or self.other_jobs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "contended": self.contended,
            "other_questdb_pids": sorted(self.other_questdb),
            "other_job_pids": sorted(self.other_jobs),
            "load_1m_max": round(self.load_1m_max, 2),
            "cores": os.cpu_count(),
        }

    def refuse_if_busy(self) -> None:
        """guards.exclusive: refuse to start if another run was seen."""
        if not self.contended:
            return
        seen = [f"QuestDB pid {p}" for p in sorted(self.other_questdb)]
        seen += [f"the job of pid {p}" for p in sorted(self.other_jobs)]
        raise MachineBusy(
            f"another run is active on this machine ({', '.join(seen)}) and guards.exclusive is "
            f"true: wait for it to end (or stop it), or set guards.exclusive: false to run "
            f"anyway with the results marked as contended, then rerun."
        )
