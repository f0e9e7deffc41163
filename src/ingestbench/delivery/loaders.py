"""The resending loaders: each path's load as a user following its docs writes it, with the
catalogue's resend rule (ingestbench.catalogue, `resend`), and a record of what the code saw.

Every loader sends the dataset in batches of `batch_rows`, each from the code's own copy (the
frame): a failed attempt closes the connection, and the batch goes again on a fresh one, after
a pause, until `resend_deadline_s` has passed since the batch's first try; then the load gives up
with the last error (it *reports* the fault). A load that ends without giving up *claims
success*. `progress(rows)` is called before each batch goes, with the rows handed over by then:
the fault injector's trigger.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingestbench.datasets import of_spec
from ingestbench.delivery.paths import DeliveryPath
from ingestbench.delivery.settings import DeliverySettings
from ingestbench.server.handle import QuestDB
from ingestbench.tsbs.columns import TableSpec

ILP_PROTOCOL = 2  # doubles in binary, as the benchmark sends them (3 for own decimals)


class GaveUp(Exception):
    """A batch could not be delivered within the resend deadline."""


@dataclass
class LoadOutcome:
    """What the user code saw: every error it caught, whether it gave up, when rows went in."""

    errors: list[str] = field(default_factory=list)
    errors_at: list[float] = field(default_factory=list)
    gave_up: str | None = None
    #: time.monotonic() of each acknowledged (or, over TCP, written) batch
    delivered_at: list[float] = field(default_factory=list)
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
    parquet: Path  # the same rows as a file (server_parquet hands it to the server)
    settings: DeliverySettings
    progress: Callable[[int], None] = lambda rows: None
    outcome: LoadOutcome = field(default_factory=LoadOutcome)

    def batches(self) -> list[tuple[int, Any]]:
        n, k = len(self.frame), self.settings.batch_rows
        return [(start + min(k, n - start), self.frame.iloc[start : start + k])
                for start in range(0, n, k)]  # fmt: skip


class _Resender:
    """One connection of a loader, reopened after every failure; `send(batch)` resends."""

    def __init__(self, load: Load, opener: Callable[[], Any], closer: Callable[[Any], None]):
        self.load, self.opener, self.closer = load, opener, closer
        self.conn: Any = None

    def send(self, action: Callable[[Any], None]) -> None:
        s, started = self.load.settings, time.monotonic()
        while True:
            try:
                if self.conn is None:
                    self.conn = self.opener()
                action(self.conn)
            except Exception as exc:  # what user code catches: any failure of the attempt
                self.load.outcome.error(exc)
                self.close()
                if time.monotonic() - started > s.resend_deadline_s:
                    raise GaveUp(self.load.outcome.errors[-1]) from exc
                time.sleep(s.resend_backoff_s)
                continue
            self.load.outcome.delivered()
            return

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                self.closer(conn)


def _ilp_sender(load: Load) -> _Resender:
    from questdb import Sender

    s = load.settings
    extra: dict[str, Any] = {"auto_flush": "off"}
    if load.path.transport == "http":
        extra |= {"retry_timeout": s.retry_timeout_ms, "request_timeout": s.request_timeout_ms,
                  "request_min_throughput": 0}  # fmt: skip
    protocol = of_spec(load.spec).ilp_protocol(load.spec, ILP_PROTOCOL)
    conf = load.qdb.ilp_conf(load.path.transport, protocol, **extra)

    def opener():
        sender = Sender.from_conf(conf)
        sender.establish()
        return sender

    # A failed connection's buffer is dropped, never flushed on close.
    return _Resender(load, opener, lambda sender: sender.close(flush=False))


def _dataframe_batch(load: Load, batch: Any) -> Callable[[Any], None]:
    def action(sender) -> None:
        sender.dataframe(batch, table_name=load.spec.table, symbols=list(load.spec.tags),
                         at=load.spec.timestamp)  # fmt: skip
        sender.flush()

    return action


def load_dataframe(load: Load) -> None:
    """`dataframe()` per batch, flushed; over HTTP the client retries for `retry_timeout` first.
    The last connection is closed politely (over TCP that is when its last rows go)."""
    conn = _ilp_sender(load)
    try:
        for done, batch in load.batches():
            load.progress(done)
            conn.send(_dataframe_batch(load, batch))
        if conn.conn is not None:
            conn.conn.close()
            conn.conn = None
    finally:
        conn.close()


def load_threads(load: Load) -> None:
    """`workers` threads, each with its own sender, each taking the next batch."""
    batches = iter(load.batches())
    lock = threading.Lock()
    failures: list[BaseException] = []

    def worker() -> None:
        conn = _ilp_sender(load)
        try:
            while not failures:
                with lock:
                    item = next(batches, None)
                    if item is None:
                        break
                    load.progress(item[0])
                conn.send(_dataframe_batch(load, item[1]))
            if conn.conn is not None:
                conn.conn.close()
                conn.conn = None
        except BaseException as exc:  # noqa: BLE001 (handed to the main thread)
            failures.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(load.settings.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]


def load_vectorized(load: Load) -> None:
    """The frame encoded into ILP column by column, each batch's bytes written to one raw
    ILP/TCP socket; after an error: a new socket, the batch written again."""
    from ingestbench.ingest.frames.encoder import IlpEncoder, as_record_batch
    from ingestbench.server.access import open_ilp_tcp

    spec, qdb = load.spec, load.qdb
    encoder = IlpEncoder(spec.table, spec.tags, spec.fields, spec.timestamp)

    def opener():
        return open_ilp_tcp(qdb.host, qdb.ilp_port, qdb.access, timeout=30)

    conn = _Resender(load, opener, lambda sock: sock.close())
    try:
        for done, batch in load.batches():
            load.progress(done)
            data = encoder.encode(as_record_batch(batch))
            conn.send(lambda sock, data=data: sock.sendall(data))
        if conn.conn is not None:
            conn.conn.shutdown(2)  # a polite end: the server reads to it
            conn.close()
    finally:
        conn.close()


def load_executemany(load: Load) -> None:
    """A prepared INSERT, `executemany` per batch in a transaction of its own (psycopg 3)."""
    import psycopg

    from ingestbench.ingest.methods.pgwire import bound_rows, insert_sql

    spec = load.spec
    columns = list(spec.columns)
    sql = insert_sql(spec.table, columns, lambda i: "%s")
    params = {**load.qdb.pg_params(), "connect_timeout": 10}

    def opener():
        return psycopg.connect(prepare_threshold=0, **params)

    conn = _Resender(load, opener, lambda c: c.close())
    try:
        for done, batch in load.batches():
            load.progress(done)
            rows = list(
                bound_rows(batch[columns])
            )  # nulls as None, as the ingest method binds them

            def action(c, rows=rows) -> None:
                with c.transaction(), c.cursor() as cur:
                    cur.executemany(sql, rows)

            conn.send(action)
    finally:
        conn.close()


def load_server_parquet(load: Load) -> None:
    """The file in the server's copy root, then one INSERT … SELECT from it (of the table's
    columns where the file may hold more: own data), sent again after an error
    (`statement_timeout_s` is the wait a user gives it)."""
    from ingestbench.server.uploads import placed_in

    spec, qdb = load.spec, load.qdb
    with placed_in(Path(qdb.copy_root), load.parquet) as placed:
        named = of_spec(spec).parquet_columns(spec)
        cols = "*" if named is None else ", ".join(named)
        into = "" if named is None else f"({cols})"
        statement = (f"INSERT INTO {spec.table}{into} SELECT {cols} "
                     f"FROM read_parquet('{placed.name}')")  # fmt: skip
        conn = _Resender(load, lambda: qdb, lambda q: None)
        load.progress(len(load.frame))
        conn.send(lambda q: q.sql(statement, timeout=load.settings.statement_timeout_s))


def loader(method: str) -> Callable[[Load], None]:
    """The resending loader of a delivery method of the catalogue: `load_<method>` above."""
    return globals()[f"load_{method}"]


def run_load(load: Load) -> LoadOutcome:
    """The path's loader; a give-up is recorded, never raised."""
    try:
        loader(load.path.method)(load)
    except GaveUp as exc:
        load.outcome.gave_up = str(exc)
    return load.outcome
