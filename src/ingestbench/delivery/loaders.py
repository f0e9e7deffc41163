"""The resending loads: each path's load as a user following its docs writes it, with the
catalogue's resend rule (ingestbench.catalogue, `resend`), and a record of what the code saw.
The loader is the method's own (its record's `deliver`, in its module under
ingestbench.ingest.methods, on the `ResendLoad` interface that `Load` implements here).

Every loader sends the dataset in batches of `batch_rows`, each from the code's own copy (the
frame): a failed attempt closes the connection, and the batch goes again on a fresh one, after
a pause, until `resend_deadline_s` has passed since the batch's first try; then the load gives up
with the last error (it *reports* the fault). A load that ends without giving up *claims
success*. `sending(first_row, rows)` is called before each batch goes: the history records each
batch's attempts (start and answer times) and its outcome as the client saw it:

- `ok`: the server acknowledged it (HTTP's answer, PGWire's COMMIT);
- `fail`: the error reached the caller and the batch was not sent again (the load gave up; the
  batches it never sent count so too);
- `unknown`: the connection broke before an answer, or ILP/TCP, which answers nothing: a written
  batch is unknown until the table shows it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingestbench.catalogue import METHODS
from ingestbench.datasets import of_spec
from ingestbench.delivery.paths import DeliveryPath
from ingestbench.delivery.settings import DeliverySettings
from ingestbench.ingest.methods.experiments import GaveUp, resolve
from ingestbench.server.handle import QuestDB
from ingestbench.tables.spec import TableSpec

ILP_PROTOCOL = 2  # doubles in binary, as the benchmark sends them (3 for own decimals)


@dataclass
class Batch:
    """One batch as the client saw it: its rows of the source (`first_row`, `rows`), its
    attempts (time.monotonic() at start and at the answer or error; the error's text) and
    its status (`ok`, `fail`, `unknown`; `pending` while it goes)."""

    first_row: int
    rows: int
    status: str = "pending"
    attempts: list[tuple[float, float, str | None]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"first_row": self.first_row, "rows": self.rows, "status": self.status,
                "attempts": [list(a) for a in self.attempts]}  # fmt: skip


@dataclass
class LoadOutcome:
    """What the user code saw: every error it caught, whether it gave up, when rows went in."""

    errors: list[str] = field(default_factory=list)
    errors_at: list[float] = field(default_factory=list)
    gave_up: str | None = None
    #: time.monotonic() of each acknowledged (or, over TCP, written) batch
    delivered_at: list[float] = field(default_factory=list)
    history: list[Batch] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def error(self, exc: BaseException) -> None:
        with self.lock:
            self.errors.append(f"{type(exc).__name__}: {(str(exc) or '-').splitlines()[0][:160]}")
            self.errors_at.append(time.monotonic())

    def delivered(self) -> None:
        with self.lock:
            self.delivered_at.append(time.monotonic())

    @property
    def claimed_success(self) -> bool:
        return self.gave_up is None

    def recovery_s(self, fault_at: float | None) -> float | None:
        """From the fault to the first batch delivered after the last error it caused (over
        TCP a write can succeed into a connection the server has already dropped)."""
        if fault_at is None:
            return None
        since = max([fault_at, *(t for t in self.errors_at if t >= fault_at)])
        after = [t for t in self.delivered_at if t >= since]
        return round(after[0] - fault_at, 3) if after else None


@dataclass
class Load:
    """One load: where to (`qdb`, possibly a relay's ports), what, and how to resend."""

    path: DeliveryPath
    qdb: QuestDB
    spec: TableSpec
    frame: Any  # the whole dataset as a pandas DataFrame: the code's own copy
    parquet: Path  # the same rows as a file (for a loader that hands the server a file)
    settings: DeliverySettings
    #: Called in the loader's thread just after the server acknowledged a batch (the injector's
    #: kill after an acknowledgement).
    on_ack: Callable[[], None] = lambda: None
    outcome: LoadOutcome = field(default_factory=LoadOutcome)
    _current: threading.local = field(default_factory=threading.local, repr=False)

    def sending(self, first_row: int, rows: int) -> None:
        """The loader's hook before each batch goes: the next send of this thread is it."""
        batch = Batch(first_row, rows)
        with self.outcome.lock:
            self.outcome.history.append(batch)
        self._current.batch = batch

    def current(self) -> Batch:
        batch = getattr(self._current, "batch", None)
        if batch is None:  # a loader that did not say which rows: all of them
            self.sending(0, self.rows)
            batch = self._current.batch
        return batch

    @property
    def transport(self) -> str:
        return self.path.transport

    @property
    def rows(self) -> int:
        return len(self.frame)

    @property
    def ilp_protocol(self) -> int:
        return of_spec(self.spec).ilp_protocol(self.spec, ILP_PROTOCOL)

    def resender(self, opener: Callable[[], Any], closer: Callable[[Any], None]) -> _Resender:
        return _Resender(self, opener, closer)

    def batches(self) -> list[tuple[int, Any]]:
        n, k = len(self.frame), self.settings.batch_rows
        return [(start, self.frame.iloc[start : start + k]) for start in range(0, n, k)]


class _Resender:
    """One connection of a loader, reopened after every failure; `send(batch)` resends."""

    def __init__(self, load: Load, opener: Callable[[], Any], closer: Callable[[Any], None]):
        self.load, self.opener, self.closer = load, opener, closer
        self.conn: Any = None
        self.opens = 0  # connections opened: a reconnect is the second and later
        self.failures = 0

    def send(self, action: Callable[[Any], None]) -> None:
        s, started = self.load.settings, time.monotonic()
        acknowledged = self.load.path.acknowledged
        while True:
            attempt = time.monotonic()
            try:
                if self.conn is None:
                    self.conn = self.opener()
                    self.opens += 1
                action(self.conn)
            except Exception as exc:  # what user code catches: any failure of the attempt
                batch = self.load.current()  # after the action: a resume may have moved it
                self.load.outcome.error(exc)
                batch.attempts.append((attempt, time.monotonic(), self.load.outcome.errors[-1]))
                self.failures += 1
                self.close()
                if time.monotonic() - started > s.resend_deadline_s:
                    batch.status = "fail"
                    raise GaveUp(self.load.outcome.errors[-1]) from exc
                batch.status = "unknown"  # if a resend is cut short, its fate is unknown
                time.sleep(s.resend_backoff_s)
                continue
            batch = self.load.current()
            batch.attempts.append((attempt, time.monotonic(), None))
            batch.status = "ok" if acknowledged else "unknown"
            self.load.outcome.delivered()
            if acknowledged:
                self.load.on_ack()
            return

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                self.closer(conn)


def loader(method: str, resume: bool = False) -> Callable[[Load], None]:
    """The loader of a delivery method, as its catalogue record names it (`deliver`, or
    `deliver_resume` for its `-resume` paths)."""
    ref = METHODS[method].deliver_resume if resume else METHODS[method].deliver
    if not ref:
        raise ValueError(f"{method!r} is not a delivery method of the catalogue")
    return resolve(ref)


def run_load(load: Load) -> LoadOutcome:
    """The path's loader; a give-up is recorded, never raised. Batches it never sent after it
    gave up are `fail`: the error reached the caller (the checker counts uncovered rows so)."""
    try:
        loader(load.path.method, load.path.resume)(load)
    except GaveUp as exc:
        load.outcome.gave_up = str(exc)
    return load.outcome
