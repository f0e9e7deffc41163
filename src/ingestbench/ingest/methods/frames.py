"""One sender, whole frames: `Sender.dataframe()` as it is, and with explicit batches."""

from __future__ import annotations

from ingestbench.ingest.methods.base import Job, Method, dataframe_into
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
