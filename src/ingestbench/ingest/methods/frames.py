"""One sender, whole frames: `Sender.dataframe()` as it is, and with explicit batches."""

from __future__ import annotations

import time
from typing import Any

from ingestbench.columnar.arrow import to_pandas
from ingestbench.ingest.methods.base import Job, Method, dataframe_into
from ingestbench.ingest.methods.experiments import (
    GaveUp,
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
        for first, batch in load.batches():
            load.sending(first, len(batch))
            conn.send(dataframe_batch(load, batch))
        close_politely(conn)
    finally:
        conn.close()


def deliver_resume(load: ResendLoad) -> None:
    """Delivery over ILP/TCP with the catalogue's `resume` rule: after a reconnect, wait for
    the table's WAL, read its latest timestamp and resend every row from the first at or after
    it (rows in time order, as TSBS writes them). TCP acknowledges nothing, so the table is the
    only witness of what arrived: after the last connection closes, the load is done only once
    the table shows the last row's timestamp (`_tail_position`); the tail it lacks goes again."""
    micros = _micros(load.frame[load.spec.timestamp])
    k, n = load.settings.batch_rows, load.rows
    conn = ilp_resender(load)
    position, resumed_on = 0, 1  # the first connection needs no resume

    def action(sender) -> None:
        nonlocal position, resumed_on
        if conn.opens > resumed_on:  # a new connection: the table says where to go on from
            resumed_on = conn.opens
            position = _first_at_or_after(micros, _latest_micros(load))
            load.sending(position, min(k, n - position))
        batch = load.frame.iloc[position : position + k]
        dataframe_into(sender, batch, load.spec)
        sender.flush()

    try:
        while position < n:
            while position < n:
                load.sending(position, min(k, n - position))
                conn.send(action)
                position += k
            close_politely(conn)
            position = _tail_position(load, micros)
            resumed_on = conn.opens + 1  # the next connection goes on from `position` as it is
    finally:
        conn.close()


_UNSEEN = object()  # no answer from the table yet


def _tail_position(load: ResendLoad, micros) -> int:
    """Where the table's rows end, once the last connection has closed: all of them when it
    shows the last row's timestamp; else, when its latest timestamp has stood still for
    `settle_s` (what the server had not committed when it died is gone; a live server commits
    a closed connection's rows well within it), the first row at or after that timestamp. A
    server that does not answer is asked again until the resend deadline, then the load gives
    up with its error."""
    s, last_row = load.settings, int(micros[-1])
    started = since = time.monotonic()
    seen: object = _UNSEEN
    while True:
        try:
            latest = _latest_micros(load)
        except Exception as exc:  # the server restarting after a kill: ask again
            if time.monotonic() - started > s.resend_deadline_s:
                raise GaveUp(f"the table did not answer: {type(exc).__name__}: {exc}") from exc
            time.sleep(s.resend_backoff_s)
            continue
        if latest is not None and latest >= last_row:
            return len(micros)
        if latest != seen:
            seen, since = latest, time.monotonic()
        elif time.monotonic() - since >= s.settle_s:
            return _first_at_or_after(micros, latest)
        time.sleep(0.1)


def _micros(column) -> Any:
    import pandas as pd

    naive = pd.to_datetime(column, utc=True).dt.tz_localize(None)
    return naive.to_numpy("datetime64[us]").astype("int64")


def _latest_micros(load: ResendLoad) -> int | None:
    """The table's latest timestamp once its WAL is applied (None: empty)."""
    from ingestbench.server.table import wait_wal

    wait_wal(load.qdb, load.spec.table)
    rows = load.qdb.rows(f"SELECT max({load.spec.timestamp})::long FROM {load.spec.table}")
    # An empty table answers no row at all (not a null): resend from the first row.
    return int(rows[0][0]) if rows and rows[0][0] is not None else None


def _first_at_or_after(micros, latest: int | None) -> int:
    import numpy as np

    if latest is None:
        return 0
    return int(np.searchsorted(micros, latest, side="left"))
