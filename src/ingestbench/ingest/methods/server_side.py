"""The server reads the file itself: QuestDB's CSV import over HTTP, or `read_parquet()` in SQL.

No client library and no ILP: read and convert are 0, the server's import is `send`.
"""

from __future__ import annotations

import json
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


class ServerParquet(Method):
    """QuestDB reads the Parquet: place it in the copy root (timed as read), then INSERT SELECT."""

    def send_pass(self, job: Job, clock: Clock) -> Any:
        if job.qdb.copy_root is None:
            raise SendError(
                f"{job.variant.name} needs the server's copy root (cairo.sql.copy.root); set "
                f"questdb.copy_root for the external server, or drop this variant."
            )
        with placed_in(Path(job.qdb.copy_root), job.path) as placed:
            clock.lap("read")
            clock.lap("convert")
            job.qdb.sql(f"INSERT INTO {job.table} SELECT * FROM read_parquet('{placed.name}')")
        clock.lap("send")
        return None

    def serialize_pass(self, job: Job, state: Any) -> None:
        return None  # no ILP involved
