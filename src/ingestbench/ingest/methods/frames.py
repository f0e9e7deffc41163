"""One sender, whole frames: `Sender.dataframe()` as it is, and with explicit batches."""

from __future__ import annotations

from ingestbench.columnar.arrow import to_pandas
from ingestbench.ingest.methods.base import Job, Method, dataframe_into
from ingestbench.ingest.methods.experiments import (
    ResendLoad,
    SenderStream,
    close_politely,
    dataframe_batch,
    ilp_resender,
)
from ingestbench.tables.spec import TableSpec


class Dataframe(Method):
    """`Sender.dataframe()` with the client's auto-flush: the base method unchanged."""


class Batches(Method):
    """Explicit flush every K rows, auto-flush off (buffered vs the auto-flush default).

    Batches run across chunk boundaries: a batch may span the end of one chunk and the start of
    the next, so every flush carries K rows whatever the chunk size."""

    pending = 0  # rows in the buffer since the last flush

    def conf(self, job: Job) -> str:
        return job.conf(auto_flush="off")

    def send(self, sender, frame, job: Job, spec: TableSpec) -> None:
        k, start = job.variant.batch_rows, 0
        while start < len(frame):
            take = min(k - self.pending, len(frame) - start)
            dataframe_into(sender, frame.iloc[start : start + take], spec)
            start, self.pending = start + take, self.pending + take
            if self.pending == k:
                sender.flush()
                self.pending = 0


class DataframeStream(SenderStream):
    """Paced: `dataframe()` per arrival, on one Sender; a polars arrival goes to pandas
    through Arrow first, as the backfill's convert does (a polars user pays it per arrival, so
    it is in the service time)."""

    @staticmethod
    def into(sender, arrival, spec: TableSpec) -> None:
        dataframe_into(sender, to_pandas(arrival), spec)


def deliver(load: ResendLoad) -> None:
    """Delivery: `dataframe()` per batch, flushed; over HTTP the client retries for
    `retry_timeout` first. The last connection is closed politely."""
    conn = ilp_resender(load)
    try:
        for done, batch in load.batches():
            load.progress(done)
            conn.send(dataframe_batch(load, batch))
        close_politely(conn)
    finally:
        conn.close()
