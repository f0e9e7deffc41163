"""The paced paths, as a streaming user writes them: one arrival at a time into one table.

Each path is opened on a table, takes `send(arrival)` per arrival (a slice of the step's frame,
or of its record batch) and `finish()` at the step's end (every step ends with a flush):

- `rows`: `Sender.row()` per row; `dataframe`: `Sender.dataframe()` per arrival; both with the
  client's flush modes: an explicit `flush()` per arrival (auto-flush off), auto-flush by rows
  (`auto_flush_interval` off, else its 1,000 ms default stays on) or by interval
  (`auto_flush_rows` off). The client checks both triggers only when a row (or a frame) has been
  added, so buffered rows wait for the next arrival.
- `vectorized`: the column-wise encoder, its bytes on one raw connection (a TCP socket, or a
  POST to /write per write). It has no client buffer, so a streaming user buffers the encoded
  arrivals and writes them by the same rules the client applies, checked at each arrival.
- `executemany`: psycopg's `executemany` of the arrival's rows, autocommit.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from ingestbench.paced.names import PacedPath
from ingestbench.paced.settings import PacedSettings
from ingestbench.server.process import QuestDB
from ingestbench.tsbs.columns import TableSpec


def flush_conf(path: PacedPath, settings: PacedSettings) -> dict[str, Any]:
    """The client's auto-flush settings of the flush mode."""
    if path.flush == "arrival":
        return {"auto_flush": "off"}
    if path.flush == "rows":
        return {"auto_flush_rows": settings.auto_flush_rows, "auto_flush_interval": "off"}
    return {"auto_flush_interval": settings.auto_flush_interval_ms, "auto_flush_rows": "off"}


class SenderPath:
    """`rows` and `dataframe`: one client Sender, flushed as the mode says."""

    def __init__(self, sender, path: PacedPath, spec: TableSpec):
        from ingestbench.ingest.methods.base import dataframe_into
        from ingestbench.ingest.methods.loops import rows_into

        self.sender, self.spec = sender, spec
        self.explicit = path.flush == "arrival"
        self.into = rows_into if path.method == "rows" else dataframe_into

    def send(self, arrival) -> None:
        self.into(self.sender, arrival, self.spec)
        if self.explicit:
            self.sender.flush()

    def finish(self) -> None:
        self.sender.flush()


class BufferedWrites:
    """The encoded arrivals of `vectorized`, written by the client's rules: at each arrival,
    when the mode says so (every arrival; `auto_flush_rows` rows buffered; the interval passed
    since the last write)."""

    def __init__(self, connection, encoder, path: PacedPath, settings: PacedSettings):
        self.connection, self.encoder = connection, encoder
        self.mode, self.settings = path.flush, settings
        self.pending: list[bytes] = []
        self.rows = 0
        self.last = time.monotonic()

    def send(self, arrival) -> None:
        self.pending.append(self.encoder.encode(arrival).to_pybytes())
        self.rows += arrival.num_rows
        if self.mode == "arrival":
            due = True
        elif self.mode == "rows":
            due = self.rows >= self.settings.auto_flush_rows
        else:
            due = time.monotonic() - self.last >= self.settings.auto_flush_interval_ms / 1000
        if due:
            self.finish()

    def finish(self) -> None:
        if self.pending:
            self.connection.send(memoryview(b"".join(self.pending)))
        self.pending, self.rows, self.last = [], 0, time.monotonic()


class ExecutemanyPath:
    """psycopg 3, autocommit: `executemany` of a prepared INSERT over the arrival's rows."""

    def __init__(self, conn, spec: TableSpec, columns: list[str]):
        from ingestbench.ingest.methods.pgwire import insert_sql

        self.conn = conn
        self.sql = insert_sql(spec.table, columns, lambda i: "%s")

    def send(self, arrival) -> None:
        from ingestbench.ingest.methods.pgwire import bound_rows

        with self.conn.cursor() as cur:
            cur.executemany(self.sql, list(bound_rows(arrival)))

    def finish(self) -> None:
        """Nothing waits: every statement committed itself."""


@contextlib.contextmanager
def open_path(
    qdb: QuestDB, path: PacedPath, spec: TableSpec, settings: PacedSettings, protocol: int,
    columns: list[str],
) -> Iterator[Any]:  # fmt: skip
    """The path connected for one step into `spec.table`, closed when the block ends."""
    if path.method in ("rows", "dataframe"):
        from questdb import Sender

        conf = qdb.ilp_conf(path.transport, protocol, **flush_conf(path, settings))
        with Sender.from_conf(conf) as sender:
            yield SenderPath(sender, path, spec)
        return
    if path.method == "vectorized":
        from ingestbench.ingest.frames.encoder import IlpEncoder
        from ingestbench.ingest.methods.base import Job
        from ingestbench.ingest.methods.ilp_file import open_connections
        from ingestbench.variants import Variant

        variant = Variant(path.library, "vectorized", "parquet", path.transport, workers=1)
        job = Job(qdb, variant, spec.table, (), protocol)  # type: ignore[arg-type]
        encoder = IlpEncoder(spec.table, spec.tags, spec.fields, spec.timestamp)
        with open_connections(job) as (connection,):
            yield BufferedWrites(connection, encoder, path, settings)
        return
    if path.method == "executemany":
        from ingestbench.ingest.methods.pgwire import psycopg_connection

        with psycopg_connection(qdb) as conn:
            conn.autocommit = True
            yield ExecutemanyPath(conn, spec, columns)
        return
    raise ValueError(f"no paced path for method {path.method!r}")  # the catalogue says which


def arrivals_of(frame, path: PacedPath, arrival_rows: int, count: int) -> list:
    """The step's arrivals, cut before it starts (not timed): frame slices, or record-batch
    slices for `vectorized` (the encoder's input)."""
    if path.method == "vectorized":
        from ingestbench.ingest.frames.encoder import as_record_batch

        batch = as_record_batch(frame)
        return [batch.slice(i * arrival_rows, arrival_rows) for i in range(count)]
    if type(frame).__module__.startswith("polars"):
        return [frame.slice(i * arrival_rows, arrival_rows) for i in range(count)]
    return [frame.iloc[i * arrival_rows : (i + 1) * arrival_rows] for i in range(count)]
