"""`ingestbench server`: the workflow's managed QuestDB, in the foreground, for external mode.

The same jar, Java and settings as a job's embedded server (server.configured), on free or
fixed ports, until Ctrl-C or SIGTERM. It prints the config block that points the workflow at it.
"""

from __future__ import annotations

import errno
import socket
import sys
import time
from pathlib import Path
from typing import TextIO

import psutil
import yaml

from ingestbench.config import QuestDBSettings
from ingestbench.errors import UserError
from ingestbench.server.configured import configured_server
from ingestbench.server.jar import resolve_jar
from ingestbench.server.process import LOOPBACK, QuestDB, QuestDBError, Terminated

WILDCARD_ADDRESSES = ("0.0.0.0", "::")  # noqa: S104 (compared with, never bound by default)


def check_port_free(bind: str, port: int, flag: str) -> None:
    """Fail with the fix before Java starts, rather than with a server log after it."""
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((bind, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise UserError(
                    f"port {port} on {bind} is in use; pick another with {flag}, or leave "
                    f"{flag} out for a free port."
                ) from None
            raise UserError(
                f"cannot listen on {bind}:{port} ({exc.strerror}); give --bind an address of "
                f"this machine (or leave it out for 127.0.0.1)."
            ) from None


def config_block(qdb: QuestDB, bind: str) -> str:
    """The `questdb:` block that points the workflow at this server."""
    host = socket.getfqdn() if bind in WILDCARD_ADDRESSES else bind
    block = {
        "questdb": {
            "mode": "external",
            "host": host,
            "http_port": qdb.http_port,
            "ilp_port": qdb.ilp_port,
            "copy_root": str(qdb.copy_root),
        }
    }
    return yaml.safe_dump(block, sort_keys=False)


def _wait_while_running(pid: int) -> None:
    process = psutil.Process(pid)
    while process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
        time.sleep(0.5)
    raise QuestDBError(
        f"the QuestDB server (pid {pid}) exited by itself; its log says why, start it again."
    )


def serve(
    settings: QuestDBSettings,
    bind: str = LOOPBACK,
    http_port: int | None = None,
    ilp_port: int | None = None,
    log_path: Path | None = None,
    out: TextIO = sys.stdout,
) -> None:
    """Run the server until Ctrl-C or SIGTERM, then stop it (and remove its data unless kept)."""
    for port, flag in ((http_port, "--http-port"), (ilp_port, "--ilp-port")):
        if port:
            check_port_free(bind, port, flag)
    jar = resolve_jar(settings)
    try:
        with configured_server(
            settings, jar, log_path, bind=bind, ports={"http": http_port, "ilp": ilp_port}
        ) as qdb:
            print(
                f"QuestDB is up (pid {qdb.pid}, data in {qdb.data_dir}, log in "
                f"{log_path or qdb.data_dir / 'server.log'}).\n"
                "Put this block in your config file (e.g. --configfile external.yaml) and run "
                "the workflow; stop the server with Ctrl-C.\n",
                file=out,
            )
            print(config_block(qdb, bind), file=out, flush=True)
            _wait_while_running(qdb.pid)
    except (KeyboardInterrupt, Terminated):
        print("QuestDB stopped.", file=out, flush=True)
