"""The server a job uses, from the config's `questdb` settings: the configured external one, or
a fresh embedded one (server.process) on the cached jar (server.jar), started from the JVM AOT
cache of that jar and Java when it can (server.aot).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ingestbench.config import QuestDBSettings
from ingestbench.server.aot import aot_cache_options
from ingestbench.server.jar import resolve_jar
from ingestbench.server.process import QuestDB, embedded_server, java_executable


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
        qdb = QuestDB(
            settings.host,
            settings.http_port,
            settings.ilp_port,
            copy_root=Path(settings.copy_root) if settings.copy_root else None,
        )
        qdb.sql("SELECT 1")  # fail early, with the clear message, if it is not there
        if while_starting is not None:
            while_starting()
        yield qdb
        return
    if jar is None:
        jar = resolve_jar(settings)
    with configured_server(settings, jar, log_path, while_starting=while_starting) as qdb:
        yield qdb


def configured_server(
    settings: QuestDBSettings, jar: Path, log_path: Path | None = None, **where: Any
) -> contextlib.AbstractContextManager[QuestDB]:
    """embedded_server() with the settings of the config's `questdb` block, from the JVM AOT
    cache of its jar and Java; `where` takes `while_starting`, and the `bind` address and fixed
    `ports` of a server started by hand."""
    java = java_executable(settings.java)
    return embedded_server(
        jar,
        java=java,
        jvm_options=aot_cache_options(java, jar, settings.startup_timeout_s),
        workers=dict(settings.workers),
        worker_idle=settings.worker_idle,
        startup_timeout_s=settings.startup_timeout_s,
        shutdown_grace_s=settings.shutdown_grace_s,
        keep_data=settings.keep_data,
        log_path=log_path,
        **where,
    )
