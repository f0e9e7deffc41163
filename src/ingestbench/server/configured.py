"""The server a job uses, from the config's `questdb` settings: the configured external one, or
a fresh embedded one (server.process) on the cached jar (server.jar), started from the JVM AOT
cache of that jar and Java when it can (server.aot).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ingestbench.config import QuestDBSettings
from ingestbench.server.access import Access, check_ilp_tcp
from ingestbench.server.aot import aot_cache_options
from ingestbench.server.certificate import UNVERIFIED, check_certificate
from ingestbench.server.handle import QuestDB, QuestDBError
from ingestbench.server.jar import resolve_jar
from ingestbench.server.process import (
    LOOPBACK,
    ServerLaunch,
    fresh_server,
    java_executable,
    sigterm_unwinds,
)
from ingestbench.server.versions import launch_properties

log = logging.getLogger(__name__)


@contextlib.contextmanager
def questdb_server(
    settings: QuestDBSettings,
    jar: Path | None = None,
    log_path: Path | None = None,
    while_starting: Callable[[], object] | None = None,
) -> Iterator[QuestDB]:
    """The server a job uses: a fresh embedded one, or the configured external one.
    `while_starting` runs while an embedded server starts (see embedded_server)."""
    if settings.external:
        with external_server(settings) as qdb:
            if while_starting is not None:
                while_starting()
            yield qdb
        return
    if jar is None:
        jar = resolve_jar(settings)
    with configured_server(settings, jar, log_path, while_starting=while_starting) as qdb:
        yield qdb


@contextlib.contextmanager
def external_server(settings: QuestDBSettings) -> Iterator[QuestDB]:
    """The configured server, checked (reachable, credentials and key taken) before any work;
    the tables this run creates carry the prefix and a fresh run id, and go again at the end
    unless questdb.keep_tables."""
    access = Access.from_settings(settings.tls, settings.tls_roots, settings.auth or {},
                                  tls_verify=settings.tls_verify)  # fmt: skip
    if settings.tls and not settings.tls_verify:
        log.warning("%s", UNVERIFIED.format(host=settings.host))
        import urllib3  # requests' own warning on every request would bury the one above

        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    for port in (settings.http_port, settings.ilp_port):  # before any row, in one sentence
        check_certificate(settings.host, port, access)
    qdb = QuestDB(
        settings.host,
        settings.http_port,
        settings.ilp_port,
        settings.pg_port,
        copy_root=Path(settings.copy_root) if settings.copy_root else None,
        access=access,
        table_prefix=f"{settings.table_prefix}_{secrets.token_hex(4)}_",
    )
    qdb.sql("SELECT 1")  # fail early, with the clear message, if it is not there
    check_ilp_tcp(qdb.host, qdb.ilp_port, access)
    log.info("tables on the external server are named %s<table>", qdb.table_prefix)
    try:
        with sigterm_unwinds():
            yield qdb
    finally:
        drop_created_tables(qdb, settings.keep_tables)


def drop_created_tables(qdb: QuestDB, keep: bool) -> None:
    """Drop what this run created on an external server (only that), or name what is kept."""
    if keep:
        if qdb.created_tables:
            log.warning("kept the tables %s on the server (questdb.keep_tables)",
                        ", ".join(sorted(qdb.created_tables)))  # fmt: skip
        return
    for table in sorted(qdb.created_tables):
        try:
            qdb.sql(f"DROP TABLE IF EXISTS {table}")
        except QuestDBError as exc:  # the job's own error, if any, is the one to show
            log.warning("could not drop the table %s this run created: %s", table, exc)
        else:
            qdb.created_tables.discard(table)


def server_launch(
    settings: QuestDBSettings, jar: Path, bind: str = LOOPBACK, access: Access | None = None
) -> ServerLaunch:
    """How a server of the config's `questdb` block starts (its Java, pools, idle workers and
    timeouts), from the JVM AOT cache of its jar and Java: every server the workflow starts."""
    java = java_executable(settings.java)
    return ServerLaunch(
        jar,
        java,
        startup_timeout_s=settings.startup_timeout_s,
        shutdown_grace_s=settings.shutdown_grace_s,
        worker_idle=settings.worker_idle,
        pools=dict(settings.pools),
        jvm_options=tuple(aot_cache_options(java, jar, settings.startup_timeout_s)),
        bind=bind,
        access=access or Access(),
        # A jar given by path is of no known version: taken as the newest.
        version=None if settings.jar else settings.version,
        properties=launch_properties(settings.version, [settings.properties]),
    )


def configured_server(
    settings: QuestDBSettings,
    jar: Path,
    log_path: Path | None = None,
    bind: str = LOOPBACK,
    access: Access | None = None,
    **where: Any,
) -> contextlib.AbstractContextManager[QuestDB]:
    """fresh_server() of the config's launch (server_launch); `where` takes `while_starting`,
    and the fixed `ports` of a server started by hand (with its `bind` address and `access`)."""
    launch = server_launch(settings, jar, bind, access)
    return fresh_server(launch, keep_data=settings.keep_data, log_path=log_path, **where)
