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

import requests

from ingestbench.ingest.methods.base import Job, Method, SendError
from ingestbench.ingest.timing import Clock
from ingestbench.server.uploads import placed_in, upload_multipart
from ingestbench.tsbs.columns import TIMESTAMP

CSV_TIMESTAMP_PATTERN = "yyyy-MM-ddTHH:mm:ss.SSSUUUZ"


class ServerCsv(Method):
    """QuestDB imports the CSV itself: upload to the /imp endpoint with the schema."""

    def send_pass(self, job: Job, clock: Clock) -> Any:
        clock.lap("read")
        clock.lap("convert")
        schema = [{"name": TIMESTAMP, "type": "TIMESTAMP", "pattern": CSV_TIMESTAMP_PATTERN}]
        params = {"name": job.table, "timestamp": TIMESTAMP, "partitionBy": "DAY", "fmt": "json",
                  "atomicity": "abort", "overwrite": "false"}  # fmt: skip
        try:
            r = upload_multipart(
                f"{job.qdb.url}/imp", params, {"schema": json.dumps(schema)}, "data", job.path
            )
        except requests.RequestException as exc:
            raise SendError(
                f"{job.variant.name}: the CSV upload to {job.qdb.url}/imp failed "
                f"({type(exc).__name__}); check that the server is running, then rerun."
            ) from None
        body = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
        if r.status_code != 200 or body.get("status") != "OK" or body.get("rowsRejected"):
            raise SendError(
                f"{job.variant.name}: QuestDB's CSV import refused {job.path.name} "
                f"({body.get('status') or r.text[:300]}, {body.get('rowsRejected', '?')} rows "
                f"rejected); check that the file is intact and matches the table."
            )
        clock.lap("send")
        return None

    def serialize_pass(self, job: Job, state: Any) -> None:
        return None  # no ILP involved


def _in_copy_root(job: Job) -> Path:
    if job.qdb.copy_root is None:
        raise SendError(
            f"{job.variant.name} needs the server's copy root (cairo.sql.copy.root); set "
            f"questdb.copy_root for the external server, or drop this variant."
        )
    return Path(job.qdb.copy_root)


#: How often the state of a COPY is polled: a 1M-row import takes seconds.
COPY_POLL_S = 0.05
COPY_TIMEOUT_S = 3600


class ServerCopy(Method):
    """QuestDB's parallel CSV import: place the file in the copy root (timed as read), then
    `COPY`, which runs in the background; `send` ends when its log says it finished."""

    def send_pass(self, job: Job, clock: Clock) -> Any:
        with placed_in(_in_copy_root(job), job.path) as placed:
            clock.lap("read")
            clock.lap("convert")
            # Parallel import needs an empty, partitioned table: the runner has just made one.
            copy_id = job.qdb.scalar(
                f"COPY {job.table} FROM '{placed.name}' WITH HEADER true TIMESTAMP '{TIMESTAMP}' "
                f"FORMAT '{CSV_TIMESTAMP_PATTERN}' PARTITION BY DAY ON ERROR ABORT"
            )
            status, message, imported = _wait_for_copy(job, copy_id)
        if status != "finished" or imported != job.rows:
            raise SendError(
                f"{job.variant.name}: QuestDB's COPY of {job.path.name} ended {status} "
                f"({message or 'no message'}; {imported} of {job.rows} rows imported); check that "
                f"the file is intact and matches the table, see the server log, then rerun."
            )
        clock.lap("send")
        return None

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


class ServerParquet(Method):
    """QuestDB reads the Parquet: place it in the copy root (timed as read), then INSERT SELECT."""

    def send_pass(self, job: Job, clock: Clock) -> Any:
        with placed_in(_in_copy_root(job), job.path) as placed:
            clock.lap("read")
            clock.lap("convert")
            job.qdb.sql(f"INSERT INTO {job.table} SELECT * FROM read_parquet('{placed.name}')")
        clock.lap("send")
        return None

    def serialize_pass(self, job: Job, state: Any) -> None:
        return None  # no ILP involved
