"""An embedded server's data directory: made under TMPDIR with the file naming its owner, told
when its disk is full, and removed once nobody owns it any more.

An embedded server's data directory (hundreds of MB per job) goes when its job ends, also on
failure, Ctrl-C and SIGTERM; a job killed by SIGKILL or the OOM killer takes its server with it
(PR_SET_PDEATHSIG) but leaves the directory. So each directory carries a file naming its owner
(the process that started the server: its PID, start time and host), and the next server start
(a job's, or `ingestbench server`) removes the directories whose owner is gone, logging each.
A directory kept on purpose (questdb.keep_data) gives its owner file up and is never removed.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import shutil
import socket
import tempfile
from pathlib import Path

import psutil

from ingestbench.errors import UserError

log = logging.getLogger(__name__)
OWNER_FILE = ".ingestbench-owner.json"
PREFIX = "ingestbench-questdb-"


class DiskFullAtStart(UserError):
    """The disk under a starting server's data directory is full."""


# What QuestDB's log says when a file cannot be written or grown: ENOSPC (errno 28) or its tag.
_DISK_FULL = re.compile(r"No space left|DISK FULL|errno=28\b", re.I)
#: Free bytes below which a disk counts as full when a server could not start on it.
FULL_DISK_BYTES = 64 * 2**20


def disk_full_error(root: Path) -> UserError:
    free = shutil.disk_usage(root).free if root.exists() else 0
    return DiskFullAtStart(
        f"QuestDB could not start because the disk of its data directory {root} is full "
        f"({free / 2**20:,.0f} MiB free): free space there or point TMPDIR at a bigger disk, "
        f"then rerun."
    )


def raise_if_full_at_start(root: Path | None, log_text: str) -> None:
    """A server that exited while starting (`log_text`: its log of that start) on a full disk:
    say so (and not "a damaged jar")."""
    if root is None:
        return
    free = shutil.disk_usage(root).free if root.exists() else 0
    if free < FULL_DISK_BYTES or _DISK_FULL.search(log_text):
        raise disk_full_error(root)


def new_data_dir() -> Path:
    """A fresh data directory under TMPDIR, with its `import` (copy root) and `tmp` folders and
    the file naming this process as its owner."""
    root = None
    try:
        root = Path(tempfile.mkdtemp(prefix=PREFIX))
        for sub in ("import", "tmp"):
            (root / sub).mkdir()
        claim(root)
    except OSError as exc:
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)
        if exc.errno == errno.ENOSPC:
            raise disk_full_error(Path(tempfile.gettempdir())) from None
        raise
    return root


def _start_time(pid: int) -> float | None:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def claim(root: Path) -> None:
    """Name this process as the owner of the data directory `root`."""
    owner = {"pid": os.getpid(), "started": _start_time(os.getpid()), "host": socket.gethostname()}
    (Path(root) / OWNER_FILE).write_text(json.dumps(owner))


def release(root: Path) -> None:
    """`root` is kept on purpose: no owner, so no later start removes it."""
    with contextlib.suppress(OSError):
        (Path(root) / OWNER_FILE).unlink()


def _owner(root: Path) -> tuple[int, bool] | None:
    """(owner's PID, whether it is alive) of `root`; None for a directory without owner file
    (kept, or still being made) and for one owned on another host (a shared TMPDIR)."""
    try:
        owner = json.loads((Path(root) / OWNER_FILE).read_text())
        pid, started, host = int(owner["pid"]), owner.get("started"), owner.get("host")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if host != socket.gethostname():
        return None
    now = _start_time(pid)  # a PID reused by another process is no owner
    return pid, now is not None and (started is None or abs(now - float(started)) < 1.0)


def owner_gone(root: Path) -> int | None:
    """The PID of `root`'s owner if that process is gone, else None."""
    owner = _owner(root)
    return owner[0] if owner and not owner[1] else None


def live_owner(root: Path) -> int | None:
    """The PID of `root`'s owner while it runs, else None."""
    owner = _owner(root)
    return owner[0] if owner and owner[1] else None


def _size_mib(root: Path) -> float:
    total = 0
    for path in root.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file():
                total += path.stat().st_size
    return total / 2**20


def remove_orphans(where: Path | None = None) -> list[Path]:
    """Remove the data directories under `where` (TMPDIR) whose owner is gone; what it removed."""
    removed = []
    for root in sorted(Path(where or tempfile.gettempdir()).glob(f"{PREFIX}*")):
        pid = owner_gone(root) if root.is_dir() else None
        if pid is None:
            continue
        size = _size_mib(root)
        shutil.rmtree(root, ignore_errors=True)
        if not root.exists():
            log.warning("removed the QuestDB data directory %s (%.0f MiB) left by process %d, "
                        "which is gone (killed, perhaps by the OOM killer)",
                        root, size, pid)  # fmt: skip
            removed.append(root)
    return removed
