"""The server reads the file itself: QuestDB's CSV import over HTTP (`/imp`), its parallel CSV
import in SQL (`COPY`), or `read_parquet()` in SQL.

No client library and no ILP: read and convert are 0 (placing a file in the copy root is `read`),
the server's import is `send`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_exponential

from ingestbench.datasets import of_spec
from ingestbench.ingest.methods.base import Job, Method, SendError, TablePart
from ingestbench.ingest.methods.experiments import ResendLoad
from ingestbench.ingest.timing import Clock
from ingestbench.own.rejected import first_rejected_row
from ingestbench.server.handle import QuestDBError
from ingestbench.server.uploads import placed_in, upload_multipart
from ingestbench.tables.spec import TableSpec


class ServerCsv(Method):
    """QuestDB imports the CSV itself: upload to the /imp endpoint with the schema."""

    def send_pass(self, job: Job, clock: Clock) -> Any:
        clock.lap("read")
        clock.lap("convert")
        for part in job.tables:  # one upload per table
            self._import(job, part)
        clock.lap("send")
        return None

    def _import(self, job: Job, part: TablePart) -> None:
        csv = of_spec(part.spec).csv_import(part.spec)  # its time patterns, its delimiter
        # skipRow: the import reads the whole file and counts every row it rejects (a rejected
        # import fails the job all the same: its count differs).
        params = {"name": part.spec.table, "timestamp": part.spec.timestamp,
                  "partitionBy": part.spec.partition_by, "fmt": "json", "atomicity": "skipRow",
                  "overwrite": "false"}  # fmt: skip
        if csv.delimiter is not None:
            params["delimiter"] = csv.delimiter
        schema = csv.schema
        try:  # the server's request: its credentials, and what fails in one sentence
            r = upload_multipart(job.qdb.request, "/imp", params,
                                 {"schema": json.dumps(schema)}, "data", part.path)  # fmt: skip
        except QuestDBError as exc:
            raise SendError(f"{job.variant.name}: {exc}") from None
        body = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
        # /imp answers OK for a file with a short line (it stores what it can of it): its own
        # counts are checked here, and the repeat's checks catch the row it made up.
        imported = body.get("rowsImported")
        if (r.status_code != 200 or body.get("status") != "OK" or body.get("rowsRejected")
                or imported != part.rows):  # fmt: skip
            said = body.get("status") or r.text.strip()[:300] or f"HTTP {r.status_code}"
            raise SendError(rejected_sentence(job, part, "CSV import", said, imported))

    def serialize_pass(self, job: Job, state: Any) -> None:
        return None  # no ILP involved


def rejected_sentence(
    job: Job, part: TablePart, what: str, said: str | None, imported: int | None
) -> str:
    """How many rows QuestDB's import rejected and the first of them, quoted from the file."""
    done = imported or 0
    count = (f"rejected {part.rows - done:,} of the {part.rows:,} rows of {part.path.name} "
             f"({done:,} imported)")  # fmt: skip
    if done > part.rows:  # a short line split in two, say: more rows than the file has
        count = f"imported {done:,} rows from {part.path.name}, which holds {part.rows:,}"
    if said and said != "OK":
        count += f", saying {said!r}"
    first = _first_rejected(part)
    where = (f"; the first it could not read is row {first[0]:,} (column {first[1]!r}): "
             f"{first[2]!r}" if first else "")  # fmt: skip
    fix = of_spec(part.spec).csv_import(part.spec).fix
    return f"{job.variant.name}: QuestDB's {what} {count}{where}; {fix}, then rerun."


def _first_rejected(part: TablePart) -> tuple[int, str, str] | None:
    csv = of_spec(part.spec).csv_import(part.spec)
    return first_rejected_row(part.path, part.spec, csv.patterns, csv.delimiter or ",",
                              csv.null_values, csv.timestamp_format)  # fmt: skip


def _in_copy_root(job: Job) -> Path:
    if job.qdb.copy_root is None:
        raise SendError(
            f"{job.variant.name} needs the server's copy root (cairo.sql.copy.root); set "
            f"questdb.copy_root for the external server, or drop this variant."
        )
    return Path(job.qdb.copy_root)


#: What QuestDB says to a COPY while the last one is still being released; and how long to retry.
IMPORT_BUSY = "another import may be in progress"
COPY_BUSY_S = 30

#: How often the state of a COPY is polled: a 1M-row import takes seconds.
COPY_POLL_S = 0.05
COPY_TIMEOUT_S = 3600


class ServerCopy(Method):
    """QuestDB's parallel CSV import: place the file in the copy root (timed as read), then
    `COPY`, which runs in the background; `send` ends when its log says it finished."""

    def send_pass(self, job: Job, clock: Clock) -> Any:
        for part in job.tables:  # one COPY per table, one after the other (one runs at a time)
            with placed_in(_in_copy_root(job), part.path) as placed:
                clock.lap("read")
                clock.lap("convert")
                self._copy(job, part, placed.name)
                clock.lap("send")
        return None

    @staticmethod
    def _copy(job: Job, part: TablePart, name: str) -> None:
        # Parallel import needs an empty, partitioned table: the runner has just made one.
        csv = of_spec(part.spec).csv_import(part.spec)  # its time pattern, its delimiter
        pattern = csv.timestamp_pattern
        delimiter = f"DELIMITER '{csv.delimiter}' " if csv.delimiter is not None else ""
        # SKIP_ROW: the import counts every row it rejects (as /imp's skipRow).
        sql = (
            f"COPY {part.spec.table} FROM '{name}' WITH HEADER true "
            f"TIMESTAMP '{part.spec.timestamp}' FORMAT '{pattern}' {delimiter}"
            f"PARTITION BY {part.spec.partition_by} ON ERROR SKIP_ROW"
        )
        # One COPY runs at a time, and the import log may say the last one finished a moment
        # before the server lets the next start ("another import may be in progress").
        retrying = Retrying(
            retry=retry_if_exception(lambda exc: IMPORT_BUSY in str(exc)),
            wait=wait_exponential(multiplier=0.01, max=0.5),
            stop=stop_after_delay(COPY_BUSY_S),
            reraise=True,
        )
        copy_id = retrying(job.qdb.scalar, sql)
        status, message, imported = _wait_for_copy(job, copy_id)
        if status != "finished" or imported != part.rows:
            said = message or (None if status == "finished" else status)
            raise SendError(rejected_sentence(job, part, "COPY", said, imported))

    def serialize_pass(self, job: Job, state: Any) -> None:
        return None  # no ILP involved


def _wait_for_copy(job: Job, copy_id: str) -> tuple[str, str | None, int | None]:
    """(status, message, rows imported) of the COPY's last state: its row without a phase."""
    deadline = time.monotonic() + COPY_TIMEOUT_S
    while time.monotonic() < deadline:
        done = job.qdb.rows(
            f"SELECT status, message, rows_imported FROM sys.text_import_log "
            f"WHERE id = '{copy_id}' AND phase IS NULL AND status <> 'started'"
        )
        if done:
            status, message, imported = done[-1]
            return status, message, None if imported is None else int(imported)
        time.sleep(COPY_POLL_S)
    raise SendError(
        f"{job.variant.name}: QuestDB's COPY {copy_id} did not end within {COPY_TIMEOUT_S} s; "
        f"see the server log (COPY '{copy_id}' CANCEL stops it)."
    )


def parquet_insert(spec: TableSpec, placed: str) -> str:
    """The one statement that loads the placed file: INSERT … SELECT from read_parquet(), of the
    table's columns where the file may hold more (own data)."""
    named = of_spec(spec).parquet_columns(spec)
    cols = "*" if named is None else ", ".join(named)
    into = "" if named is None else f"({cols})"
    return f"INSERT INTO {spec.table}{into} SELECT {cols} FROM read_parquet('{placed}')"


class ServerParquet(Method):
    """QuestDB reads the Parquet: place it in the copy root (timed as read), then INSERT SELECT."""

    def send_pass(self, job: Job, clock: Clock) -> Any:
        for part in job.tables:
            with placed_in(_in_copy_root(job), part.path) as placed:
                clock.lap("read")
                clock.lap("convert")
                job.qdb.sql(parquet_insert(part.spec, placed.name))
            clock.lap("send")
        return None

    def serialize_pass(self, job: Job, state: Any) -> None:
        return None  # no ILP involved


def deliver(load: ResendLoad) -> None:
    """Delivery: the file in the server's copy root, then its one statement, sent again after
    an error (`statement_timeout_s` is the wait a user gives it)."""
    with placed_in(Path(load.qdb.copy_root), load.parquet) as placed:
        statement = parquet_insert(load.spec, placed.name)
        conn = load.resender(lambda: load.qdb, lambda q: None)
        load.sending(0, load.rows)
        conn.send(lambda q: q.sql(statement, timeout=load.settings.statement_timeout_s))
