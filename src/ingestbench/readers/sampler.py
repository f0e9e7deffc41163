"""The visibility sampler: a table's rows accepted and visible, and its WAL transactions, read
over HTTP `/exec` every `interval_s` on a thread of its own. The readers' process runs it beside
its readers (worker); paced ingestion around each step (ingestbench.paced.job).

A sample's query is sent at `start` and its answer read at `end`: rows a sample sees were
visible by its end (paced latencies count to it, never under-stated), and the WAL's state is
dated by its start (the readers' visibility lag). A late sample is not made up for: a burst of
samples would load the server exactly when it is slow. One more sample is taken once stopped:
the window ends with the rows visible, and the writer at the last transaction. A failed sample
is counted, not guessed; an answer without the table (not created yet) is neither.

Given a `key` (a SYMBOL column), each sample also reads the latest timestamp of every value of
it (LATEST ON), in microseconds since the epoch: where several producers write one table, each
from values of its own, that tells whose rows are visible (ingestbench.paced.producers).

With `own_process`, the samples are taken in a process of their own (spawned, killed with
its parent) and sent back through a pipe: a producer thread that holds the interpreter (a
pandas call per arrival, hundreds a second) would otherwise delay a sampler thread beside it by
far more than its interval. Both processes read one clock (CLOCK_MONOTONIC), so a sample's
times mean the same on either side.

Light: requests and the standard library only, so the readers' process starts quickly.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import requests

#: The one query: rows visible (applied) and waiting in the WAL, and the WAL's transactions:
#: sequencer (committed) and writer (applied).
SAMPLE_SQL = ("SELECT table_row_count, wal_pending_row_count, wal_txn, table_txn FROM tables() "
              "WHERE table_name = '{table}'")  # fmt: skip
#: Each value of a key column with its latest timestamp (the timestamp cast to microseconds).
LATEST_SQL = ("SELECT {key}, cast({timestamp} AS LONG) FROM \"{table}\" "
              "LATEST ON {timestamp} PARTITION BY {key}")  # fmt: skip
#: Errors kept word for word (every error is counted; the first few are kept).
KEPT_ERRORS = 5


@dataclass(frozen=True, slots=True)
class Sample:
    start: float  # time.monotonic() as the query was sent
    end: float  # as its answer was read
    visible: int  # table_row_count: applied, readable
    pending: int  # wal_pending_row_count: committed, not applied yet
    sequencer_txn: int
    writer_txn: int
    latest: dict[str, int] | None = None  # the key's values' latest timestamps, where asked


@dataclass(eq=False)
class VisibilitySampler:
    """Samples `table` from start() (or entering) until stop(); `wait_for(rows)` waits until a
    sample sees that many rows visible, `first` is set once the first sample was tried."""

    url: str  # the server's HTTP root
    http_kwargs: dict[str, Any]
    table: str
    interval_s: float
    key: tuple[str, str] | None = None  # (SYMBOL column, timestamp column): read each's latest
    samples: list[Sample] = field(default_factory=list)
    failed: int = 0
    failed_at: list[float] = field(default_factory=list)  # each failed sample's end
    errors: list[str] = field(default_factory=list)
    cpu_s: float = 0.0  # the sampler thread's CPU time: the sampling's own cost
    first: threading.Event = field(default_factory=threading.Event)
    own_process: bool = False  # sample from a process of its own (its answers piped back)
    forward: Callable[[tuple], None] | None = None  # the sampling process's pipe to its parent

    def __post_init__(self) -> None:
        self._stop, self._seen = threading.Event(), threading.Condition()
        self._thread = threading.Thread(target=self._run, name="visibility", daemon=True)
        self._child: Any = None

    def start(self) -> None:
        if not self.own_process:
            self._thread.start()
            return
        context = multiprocessing.get_context("spawn")  # nothing of this process's threads
        receive, send = context.Pipe(duplex=False)
        self._stop = context.Event()
        self._child = context.Process(
            target=_sample_elsewhere, name="visibility", daemon=True,
            args=(self.url, self.http_kwargs, self.table, self.interval_s, self.key, send,
                  self._stop),
        )  # fmt: skip
        self._child.start()
        send.close()  # the child's end: EOF here once the child has gone
        self._thread = threading.Thread(target=self._collect, args=(receive,), daemon=True,
                                        name="visibility-pipe")  # fmt: skip
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        if self._child is not None:
            self._child.join(30)
            if self._child.is_alive():
                self._child.kill()
                self._child.join()

    def _collect(self, receive: Any) -> None:
        """In the parent: the child's samples, failures and CPU time, as they come."""
        try:
            while True:
                message = receive.recv()
                if message[0] == "sample":
                    with self._seen:
                        self.samples.append(message[1])
                        self._seen.notify_all()
                elif message[0] == "failed":
                    self._failed(message[1], message[2])
                elif message[0] == "cpu":
                    self.cpu_s = message[1]
                self.first.set()
        except (EOFError, OSError):
            pass  # the child ended (stopped, or failed: its samples so far stand)
        finally:
            receive.close()
            self.first.set()
            with self._seen:
                self._seen.notify_all()

    def _failed(self, end: float, error: str) -> None:
        self.failed += 1
        self.failed_at.append(end)
        if len(self.errors) < KEPT_ERRORS:
            self.errors.append(error)

    def __enter__(self) -> VisibilitySampler:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _run(self) -> None:
        cpu0 = time.thread_time()
        sql = SAMPLE_SQL.format(table=self.table)
        latest = None if self.key is None else LATEST_SQL.format(
            key=self.key[0], timestamp=self.key[1], table=self.table)  # fmt: skip
        try:
            with requests.Session() as session:
                due, last = time.monotonic(), False
                while True:
                    self._sample(session, sql, latest)
                    self.first.set()
                    if last:
                        break
                    due = max(due + self.interval_s, time.monotonic())
                    last = self._stop.wait(max(0.0, due - time.monotonic()))
        finally:
            self.first.set()  # a sampler that failed before its first sample holds nobody up
            self.cpu_s = time.thread_time() - cpu0
            if self.forward:
                self.forward(("cpu", self.cpu_s))

    def _query(self, session: requests.Session, sql: str) -> tuple[list | None, str]:
        """The answer's rows (None: the query failed) and, where it failed, why."""
        try:
            r = session.get(f"{self.url}/exec", params={"query": sql}, timeout=10,
                            **self.http_kwargs)  # fmt: skip
            rows = r.json().get("dataset", []) if r.status_code == 200 else None
        except (requests.RequestException, ValueError) as exc:
            return None, f"{type(exc).__name__}: {exc}"
        return rows, "" if rows is not None else f"HTTP {r.status_code}: {r.text[:200]}"

    def _sample(self, session: requests.Session, sql: str, latest_sql: str | None) -> None:
        start = time.monotonic()
        rows, error = self._query(session, sql)
        latest = None
        if rows and latest_sql is not None:  # read after the count: never ahead of it
            pairs, error = self._query(session, latest_sql)
            rows = rows if pairs is not None else None
            latest = {str(k): int(v) for k, v in pairs or []}
        end = time.monotonic()
        if rows is None:
            self._failed(end, error)
            if self.forward:
                self.forward(("failed", end, error))
        elif rows:  # a new WAL table has no counts yet: 0
            visible, pending, sequencer, writer = (int(v or 0) for v in rows[0])
            sample = Sample(start, end, visible, pending, sequencer, writer, latest)
            with self._seen:
                self.samples.append(sample)
                self._seen.notify_all()
            if self.forward:
                self.forward(("sample", sample))

    def wait_for(self, rows: int, timeout_s: float) -> bool:
        """True once a sample has seen `rows` rows visible; False after `timeout_s`."""
        end = time.monotonic() + timeout_s
        with self._seen:
            while not self.samples or self.samples[-1].visible < rows:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._seen.wait(left)
        return True


def _sample_elsewhere(url: str, http_kwargs: dict[str, Any], table: str, interval_s: float,
                      key: tuple[str, str] | None, send: Any, stop: Any) -> None:  # fmt: skip
    """The sampling process: the same loop, each answer piped to the parent; it ends when
    stopped, and with its parent (killed, or its pipe gone)."""
    from ingestbench.server.process import die_with_parent

    die_with_parent()
    sampler = VisibilitySampler(url, http_kwargs, table, interval_s, key, forward=send.send)
    sampler._stop = stop
    try:
        sampler._run()
    except (BrokenPipeError, EOFError, OSError):
        pass  # the parent has gone: nothing to report to
    finally:
        send.close()
