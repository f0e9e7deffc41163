"""`ingestbench server`: the workflow's managed QuestDB, in the foreground, for external mode.

The same jar, Java and settings as a job's embedded server (server.configured), on free or
fixed ports, until Ctrl-C or SIGTERM. It prints the config block that points the workflow at it.
"""

from __future__ import annotations

import errno
import os
import secrets
import socket
import sys
import time
from pathlib import Path
from typing import TextIO

import psutil
import yaml

from ingestbench.config import QuestDBSettings
from ingestbench.errors import UserError
from ingestbench.server.access import Access, IlpKey, Secret
from ingestbench.server.configured import configured_server
from ingestbench.server.handle import QuestDB, QuestDBError
from ingestbench.server.jar import resolve_jar
from ingestbench.server.process import LOOPBACK, Terminated

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


#: `--auth`: the users, and the environment variables that hold their secrets.
HTTP_USER, PASSWORD_ENV = "admin", "QDB_PASSWORD"
ILP_USER, ILP_KEY_ENV = "ingestbench", "QDB_ILP_KEY"


def server_access() -> tuple[Access, dict[str, str]]:
    """`--auth`: basic auth and an ILP/TCP key, the secrets from QDB_PASSWORD and QDB_ILP_KEY,
    or made here when unset; also the made ones (variable -> value), which the user must export."""
    made = {}
    password = os.environ.get(PASSWORD_ENV)
    if not password:
        password = made[PASSWORD_ENV] = secrets.token_urlsafe(18)
    key_d = os.environ.get(ILP_KEY_ENV)
    key = IlpKey.from_private(key_d) if key_d else IlpKey.generate()
    if not key_d:
        made[ILP_KEY_ENV] = key.d.reveal()
    # PGWire's user is the HTTP one, with the same password (one secret fewer to hand over)
    access = Access(http_user=HTTP_USER, http_password=Secret(password), tcp_user=ILP_USER,
                    tcp_token=key.d, tcp_token_x=key.x, tcp_token_y=key.y, pg_user=HTTP_USER,
                    pg_password=Secret(password))  # fmt: skip
    return access, made


def config_block(qdb: QuestDB, bind: str) -> str:
    """The `questdb:` block that points the workflow at this server (its credentials as the
    names of the variables that hold them)."""
    host = socket.getfqdn() if bind in WILDCARD_ADDRESSES else bind
    block: dict = {"mode": "external", "host": host, "http_port": qdb.http_port,
                   "ilp_port": qdb.ilp_port, "pg_port": qdb.pg_port}  # fmt: skip
    access = qdb.access
    if access.http_password is not None:
        block["auth"] = {
            "http": {"username": access.http_user, "password_env": PASSWORD_ENV},
            "tcp": {"username": access.tcp_user, "token_env": ILP_KEY_ENV,
                    "token_x": access.tcp_token_x, "token_y": access.tcp_token_y},
            "pg": {"username": access.pg_user, "password_env": PASSWORD_ENV},
        }  # fmt: skip
    block["copy_root"] = str(qdb.copy_root)  # last: the line a reader may wait for
    return yaml.safe_dump({"questdb": block}, sort_keys=False)


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
    auth: bool = False,
) -> None:
    """Run the server until Ctrl-C or SIGTERM, then stop it (and remove its data unless kept).
    With `auth` it asks for a user and password over HTTP and a key over ILP/TCP."""
    for port, flag in ((http_port, "--http-port"), (ilp_port, "--ilp-port")):
        if port:
            check_port_free(bind, port, flag)
    access, made = server_access() if auth else (Access(), {})
    jar = resolve_jar(settings)
    try:
        with configured_server(
            settings,
            jar,
            log_path,
            bind=bind,
            ports={"http": http_port, "ilp": ilp_port},
            access=access,
        ) as qdb:
            print(
                f"QuestDB is up (pid {qdb.pid}, data in {qdb.data_dir}, log in "
                f"{log_path or qdb.data_dir / 'server.log'}).\n"
                "Put this block in your config file (e.g. --configfile external.yaml) and run "
                "the workflow; stop the server with Ctrl-C.\n",
                file=out,
            )
            if made:  # the only place these secrets are ever shown: this terminal, once
                print(
                    "Export the secrets it made (or set them before starting it):\n"
                    + "".join(f"export {k}={v}\n" for k, v in made.items()),
                    file=out,
                )
            print(config_block(qdb, bind), file=out, flush=True)
            _wait_while_running(qdb.pid)
    except (KeyboardInterrupt, Terminated):
        print("QuestDB stopped.", file=out, flush=True)
