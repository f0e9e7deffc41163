"""The visibility sampler: a table's rows accepted and visible, and its WAL transactions, read
over HTTP `/exec` every `interval_s` on a thread of its own. The readers' process runs it beside
its readers (worker); paced ingestion around each step (ingestbench.paced.job).

A sample's query is sent at `start` and its answer read at `end`: rows a sample sees were
visible by its end (paced latencies count to it, never under-stated), and the WAL's state is
dated by its start (the readers' visibility lag). A late sample is not made up for: a burst of
samples would load the server exactly when it is slow. One more sample is taken once stopped:
the window ends with the rows visible, and the writer at the last transaction. A failed sample
is counted, not guessed; an answer without the table (not created yet) is neither.

Light: requests and the standard library only, so the readers' process starts quickly.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import requests

#: The one query: rows visible (applied) and waiting in the WAL, and the WAL's transactions:
#: sequencer (committed) and writer (applied).
SAMPLE_SQL = ("SELECT table_row_count, wal_pending_row_count, wal_txn, table_txn FROM tables() "
              "WHERE table_name = '{table}'")  # fmt: skip
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


@dataclass(eq=False)
class VisibilitySampler:
    """Samples `table` from start() (or entering) until stop(); `wait_for(rows)` waits until a
    sample sees that many rows visible, `first` is set once the first sample was tried."""

    url: str  # the server's HTTP root
    http_kwargs: dict[str, Any]
    table: str
    interval_s: float
    samples: list[Sample] = field(default_factory=list)
    failed: int = 0
    failed_at: list[float] = field(default_factory=list)  # each failed sample's end
    errors: list[str] = field(default_factory=list)
    cpu_s: float = 0.0  # the sampler thread's CPU time: the sampling's own cost
    first: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._stop, self._seen = threading.Event(), threading.Condition()
        self._thread = threading.Thread(target=self._run, name="visibility", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def __enter__(self) -> VisibilitySampler:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _run(self) -> None:
        cpu0 = time.thread_time()
        sql = SAMPLE_SQL.format(table=self.table)
        try:
            with requests.Session() as session:
                due, last = time.monotonic(), False
                while True:
                    self._sample(session, sql)
                    self.first.set()
                    if last:
                        break
                    due = max(due + self.interval_s, time.monotonic())
                    last = self._stop.wait(max(0.0, due - time.monotonic()))
        finally:
            self.first.set()  # a sampler that failed before its first sample holds nobody up
            self.cpu_s = time.thread_time() - cpu0

    def _sample(self, session: requests.Session, sql: str) -> None:
        start = time.monotonic()
        try:
            r = session.get(f"{self.url}/exec", params={"query": sql}, timeout=10,
                            **self.http_kwargs)  # fmt: skip
            rows = r.json().get("dataset", []) if r.status_code == 200 else None
        except (requests.RequestException, ValueError) as exc:
            rows, error = None, f"{type(exc).__name__}: {exc}"
        else:
            error = "" if rows is not None else f"HTTP {r.status_code}: {r.text[:200]}"
        end = time.monotonic()
        if rows is None:
            self.failed += 1
            self.failed_at.append(end)
            if len(self.errors) < KEPT_ERRORS:
                self.errors.append(error)
        elif rows:  # a new WAL table has no counts yet: 0
            visible, pending, sequencer, writer = (int(v or 0) for v in rows[0])
            with self._seen:
                self.samples.append(Sample(start, end, visible, pending, sequencer, writer))
                self._seen.notify_all()

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
