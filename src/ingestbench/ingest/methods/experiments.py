"""What a method does in the paced and delivery experiments: the interfaces its own module
implements, named by its catalogue record (`paced`, `deliver`) and resolved here, so that no
other module chooses the code by the method's name.

- Paced (ingestbench.paced): a `PacedStream` subclass, opened for one step on one table with
  the step's `PacedFlush`; it takes `send(arrival)` per arrival and `finish()` at the step's end.
- Delivery (ingestbench.delivery): a loader function `deliver(load)` on a `ResendLoad`, which
  sends the load's batches, each through the resend helper the experiment gives it.

ingestbench.paced and ingestbench.delivery import this; it imports neither.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ingestbench.catalogue import FlushMode
from ingestbench.columnar.arrow import is_polars
from ingestbench.ingest.methods.base import dataframe_into
from ingestbench.server.handle import QuestDB
from ingestbench.tables.spec import TableSpec


def resolve(ref: str) -> Any:
    """A catalogue record's `module:name`, its module under ingestbench.ingest.methods."""
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(f"ingestbench.ingest.methods.{module}"), name)


@dataclass(frozen=True)
class PacedFlush:
    """A paced step's flush mode with the client's auto-flush values."""

    mode: FlushMode
    auto_flush_rows: int
    auto_flush_interval_ms: int

    def client_conf(self) -> dict[str, Any]:
        """The ILP client's auto-flush settings of the mode."""
        if self.mode == "arrival":
            return {"auto_flush": "off"}
        if self.mode == "rows":
            return {"auto_flush_rows": self.auto_flush_rows, "auto_flush_interval": "off"}
        return {"auto_flush_interval": self.auto_flush_interval_ms, "auto_flush_rows": "off"}

    def due(self, rows: int, since_s: float) -> bool:
        """Whether buffered writes go now, by the client's own rules (checked per arrival)."""
        if self.mode == "arrival":
            return True
        if self.mode == "rows":
            return rows >= self.auto_flush_rows
        return since_s >= self.auto_flush_interval_ms / 1000


class PacedStream:
    """One paced step's connection into one table, as a streaming user writes it."""

    @staticmethod
    def arrivals(frame, arrival_rows: int, count: int) -> list:
        """The step's arrivals, cut before it starts (not timed): slices of the frame."""
        if is_polars(frame):
            return [frame.slice(i * arrival_rows, arrival_rows) for i in range(count)]
        return [frame.iloc[i * arrival_rows : (i + 1) * arrival_rows] for i in range(count)]

    @classmethod
    def opened(
        cls, qdb: QuestDB, spec: TableSpec, transport: str, flush: PacedFlush, protocol: int,
        columns: list[str],
    ) -> contextlib.AbstractContextManager[PacedStream]:  # fmt: skip
        """The stream connected into `spec.table`, closed when the block ends."""
        raise NotImplementedError

    def send(self, arrival) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        """Every step ends with a flush."""
        raise NotImplementedError


class SenderStream(PacedStream):
    """One ILP client Sender, `into(sender, arrival, spec)` per arrival, flushed as the mode
    says. The client checks its auto-flush triggers only when rows are added, so buffered rows
    wait for the next arrival."""

    into: Callable[[Any, Any, TableSpec], None] = staticmethod(dataframe_into)

    def __init__(self, sender, spec: TableSpec, explicit: bool):
        self.sender, self.spec, self.explicit = sender, spec, explicit

    @classmethod
    @contextlib.contextmanager
    def opened(cls, qdb, spec, transport, flush, protocol, columns) -> Iterator[SenderStream]:
        from questdb import Sender

        with Sender.from_conf(qdb.ilp_conf(transport, protocol, **flush.client_conf())) as s:
            yield cls(s, spec, flush.mode == "arrival")

    def send(self, arrival) -> None:
        self.into(self.sender, arrival, self.spec)
        if self.explicit:
            self.sender.flush()

    def finish(self) -> None:
        self.sender.flush()


class GaveUp(Exception):
    """A batch could not be delivered within the resend deadline: the error the loading code
    raises to its caller."""


class Resender(Protocol):
    """One connection of a loader, reopened after a failure: `send(action)` runs
    `action(connection)` until it succeeds or the resend deadline passes (then it raises)."""

    conn: Any
    opens: int  # connections opened so far: a reconnect is the second and later

    def send(self, action: Callable[[Any], None]) -> None: ...

    def close(self) -> None: ...


class ResendSettings(Protocol):
    workers: int
    retry_timeout_ms: int
    request_timeout_ms: int
    statement_timeout_s: float
    resend_deadline_s: float
    resend_backoff_s: float
    settle_s: float


class ResendLoad(Protocol):
    """What a delivery loader is given (ingestbench.delivery.loaders.Load)."""

    qdb: QuestDB
    spec: TableSpec
    parquet: Path  # the load's rows as a file
    settings: ResendSettings

    @property
    def transport(self) -> str: ...

    @property
    def rows(self) -> int: ...

    @property
    def ilp_protocol(self) -> int: ...

    @property
    def frame(self) -> Any: ...

    def batches(self) -> list[tuple[int, Any]]:
        """(its first row, the batch), from the code's own copy."""
        ...

    def sending(self, first_row: int, rows: int) -> None:
        """Called before each batch goes (in the thread that sends it): its rows of the copy."""
        ...

    def resender(self, opener: Callable[[], Any], closer: Callable[[Any], None]) -> Resender: ...


def ilp_resender(load: ResendLoad) -> Resender:
    """An ILP client Sender with auto-flush off (over HTTP with the load's timeouts), reopened
    after a failure; a failed connection's buffer is dropped, never flushed on close."""
    from questdb import Sender

    s = load.settings
    extra: dict[str, Any] = {"auto_flush": "off"}
    if load.transport == "http":
        extra |= {"retry_timeout": s.retry_timeout_ms, "request_timeout": s.request_timeout_ms,
                  "request_min_throughput": 0}  # fmt: skip
    conf = load.qdb.ilp_conf(load.transport, load.ilp_protocol, **extra)

    def opener():
        sender = Sender.from_conf(conf)
        sender.establish()
        return sender

    return load.resender(opener, lambda sender: sender.close(flush=False))


def dataframe_batch(load: ResendLoad, batch: Any) -> Callable[[Any], None]:
    """The action that sends one batch with `dataframe()` and flushes it."""

    def action(sender) -> None:
        dataframe_into(sender, batch, load.spec)
        sender.flush()

    return action


def close_politely(conn: Resender) -> None:
    """The last connection closed with its flush (over TCP that is when its last rows go)."""
    if conn.conn is not None:
        conn.conn.close()
        conn.conn = None
