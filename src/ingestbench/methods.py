"""The ways to ingest: each method runs one repeat's timed phases against a real server.

A method's `send_pass` covers read -> convert -> send (the clock laps each phase) and returns
what the separate, untimed-by-end-to-end `serialize_pass` needs (ingestbench.timing).

Adding a method: one subclass of `Method` and its entry in `METHODS` (the one registry), plus the
method's name in ingestbench.variants (which decides the matrix without importing this module).
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing as mp
import queue
import resource
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from questdb import QuestDBError as ClientError
from questdb import Sender, TimestampNanos

from .columns import TAGS, TIMESTAMP
from .errors import UserError
from .ilp_file import IlpFile
from .pipeline import ChunkStream
from .readers import head, import_libraries, iter_frames, read_frame, to_pandas
from .server import QuestDB
from .server_files import placed_in, upload_multipart
from .timing import PHASES, Clock  # noqa: F401 (PHASES: re-exported for older imports)
from .variants import Variant
from .workers import collect, watched

log = logging.getLogger(__name__)
# Each repeat connects fresh senders on purpose (a repeat is a whole ingestion), so the client's
# hint about a "burst of reconnections" is noise here.
warnings.filterwarnings("ignore", message=".*burst of reconnections", category=UserWarning)
CSV_TIMESTAMP_PATTERN = "yyyy-MM-ddTHH:mm:ss.SSSUUUZ"


class SendError(UserError):
    pass


@dataclass
class Job:
    """Everything one ingestion needs; picklable, so process workers get it too."""

    qdb: QuestDB
    table: str
    variant: Variant
    path: Path  # the dataset file in the variant's format
    rows: int  # rows to ingest: the dataset's, or the cap of the `rows` method
    protocol_version: int = 2

    def conf(self, **extra: Any) -> str:
        return self.qdb.ilp_conf(self.variant.transport, self.protocol_version, **extra)


_CONNECTION_ERRORS = {"CouldNotResolveAddr", "SocketError", "ConnectTimeout", "HandshakeError"}


@contextlib.contextmanager
def client_errors(job: Job, doing: str):
    """Turn the client's exceptions into one sentence naming the cause and the fix."""
    try:
        yield
    except ClientError as exc:
        text = str(exc).strip().replace("\n", " ")[:400]
        code = getattr(getattr(exc, "code", None), "name", "")
        where = f"ILP/{job.variant.transport} at {job.qdb.host}"
        if code in _CONNECTION_ERRORS:
            cause, fix = f"lost the connection to QuestDB ({where})", "check that it is running"
        elif code.startswith("Server"):
            cause, fix = f"QuestDB refused the rows ({where})", "fix the data or the table"
        else:
            cause, fix = "the client could not serialize the frame", "fix the frame's dtypes"
        raise SendError(
            f"{job.variant.name}: {cause} while {doing}: {text}; {fix}, see the logs, then "
            f"rerun this job."
        ) from None


def read_whole(job: Job):
    """The whole file (or the capped prefix of the `rows` method) in the variant's library."""
    return head(read_frame(job.path, job.variant.library, job.variant.format), job.rows)


def stream_chunks(job: Job, clock: Clock, convert) -> ChunkStream:
    """The variant's file as converted chunks, read ahead on a thread (timed as read/convert)."""
    v = job.variant
    frames = iter_frames(job.path, v.library, v.format, v.chunk_rows, job.rows)
    return ChunkStream(frames, convert, clock)


class _Busy:
    """Adds the time spent inside the `with` block to one phase of the clock."""

    def __init__(self, clock: Clock, phase: str):
        self.clock, self.phase = clock, phase

    def __enter__(self) -> None:
        self._t0 = time.perf_counter()

    def __exit__(self, *exc) -> None:
        self.clock.add(self.phase, time.perf_counter() - self._t0)


STREAMED = "streamed"  # the state key of a streamed send pass: the serialize pass re-reads


def dataframe_into(target, frame, job: Job) -> None:
    target.dataframe(frame, table_name=job.table, symbols=list(TAGS), at=TIMESTAMP)


def _chunks(n_rows: int, parts: int) -> list[tuple[int, int]]:
    """Split [0, n_rows) into `parts` contiguous (offset, length) ranges."""
    step = -(-n_rows // parts)
    return [(o, min(step, n_rows - o)) for o in range(0, n_rows, step)]


def _serialized_bytes(job: Job, frame, into=dataframe_into) -> int:
    """ILP bytes of `frame` serialized by `into` into a fresh buffer (nothing is sent)."""
    with Sender.from_conf(job.conf()) as sender:  # connects, sends nothing
        buf = sender.new_buffer()
        into(buf, frame, job)
        return len(buf)


def _rows_into(target, frame, job: Job) -> None:
    """The baseline from QuestDB's blog: one row() call per row."""
    table, tag_idx = job.table, range(len(TAGS))
    names = list(frame.columns)
    fields = [n for n in names if n not in TAGS and n != TIMESTAMP]
    if type(frame).__module__.startswith("polars"):
        rows = frame.iter_rows()
    else:
        rows = frame.itertuples(index=False, name=None)
    n_tags = len(TAGS)
    for row in rows:
        target.row(
            table,
            symbols={TAGS[i]: row[i] for i in tag_idx},
            columns=dict(zip(fields, row[n_tags:-1], strict=True)),
            at=row[-1],
        )


class Method:
    """Base: read, convert, send. Streamed (the default) chunk by chunk with reading on a thread
    of its own, or, with chunk_rows null, the whole file in one go. Subclasses change the send."""

    def send_pass(self, job: Job, clock: Clock) -> Any:
        if job.variant.chunk_rows is not None:
            return self.stream_pass(job, clock)
        frame = read_whole(job)
        clock.lap("read")
        frame = self.convert(frame)
        clock.lap("convert")
        with client_errors(job, "connecting"), Sender.from_conf(self.conf(job)) as sender:
            clock.restart()  # connecting is outside every phase
            with client_errors(job, "sending"):
                self.send(sender, frame, job)
                sender.flush()
            clock.lap("send")
        return frame

    def stream_pass(self, job: Job, clock: Clock) -> dict[str, Any]:
        """One sender takes the chunks in order while the reader thread prepares the next."""
        with client_errors(job, "connecting"), Sender.from_conf(self.conf(job)) as sender:
            clock.start_wall()  # connecting is outside every phase; the file opens now
            clock.current = "send"
            with stream_chunks(job, clock, self.convert) as chunks, client_errors(job, "sending"):
                for chunk in chunks:
                    with _Busy(clock, "send"):
                        self.send(sender, chunk, job)
                with _Busy(clock, "send"):
                    sender.flush()
            clock.restart()  # visible starts when the last flush returned
        return {STREAMED: True}

    def convert(self, frame):
        return to_pandas(frame)

    def conf(self, job: Job) -> str:
        return job.conf()

    def send(self, sender, frame, job: Job) -> None:
        dataframe_into(sender, frame, job)

    def serialize_into(self, target, frame, job: Job) -> None:
        """Fill a buffer (or sender) with `frame` as this method's send does."""
        dataframe_into(target, frame, job)

    def serialize_pass(self, job: Job, state: Any) -> int | None:
        return _serialized_bytes(job, state, self.serialize_into)

    def timed_serialize(self, job: Job, state: Any) -> tuple[int | None, float]:
        """(ILP bytes, seconds) of the separate serialize pass; (None, 0) without ILP."""
        if isinstance(state, dict) and state.get(STREAMED):
            return self.streamed_serialize(job)
        t0 = time.perf_counter()
        nbytes = self.serialize_pass(job, state)
        return nbytes, (time.perf_counter() - t0) if nbytes is not None else 0.0

    def streamed_serialize(self, job: Job) -> tuple[int, float]:
        """Re-read the chunks and serialize each into one reused buffer: (bytes, busy seconds
        summed over chunks). Reading is not timed; memory stays at one chunk and its ILP."""
        nbytes, busy = 0, 0.0
        v = job.variant
        with Sender.from_conf(job.conf()) as sender:  # connects, sends nothing
            buf = sender.new_buffer()
            for frame in iter_frames(job.path, v.library, v.format, v.chunk_rows, job.rows):
                chunk = self.convert(frame)
                buf.clear()
                t0 = time.perf_counter()
                self.serialize_into(buf, chunk, job)
                busy += time.perf_counter() - t0
                nbytes += len(buf)
        return nbytes, busy


class Rows(Method):
    def convert(self, frame):
        return frame  # iterate natively: pandas itertuples, polars iter_rows

    def serialize_into(self, target, frame, job: Job) -> None:
        _rows_into(target, frame, job)

    def send(self, sender, frame, job: Job) -> None:
        self.serialize_into(sender, frame, job)


def _iterrows_into(target, frame, job: Job) -> None:
    """QuestDB's published pandas baseline, as its benchmark loops: iterrows(), then row()."""
    fields = [n for n in frame.columns if n not in TAGS and n != TIMESTAMP]
    for _index, row in frame.iterrows():
        target.row(
            job.table,
            symbols={tag: row[tag] for tag in TAGS},
            columns={name: row[name] for name in fields},
            at=TimestampNanos(row[TIMESTAMP].value),
        )


class Iterrows(Rows):
    """The row loop over `DataFrame.iterrows()` (pandas only): a Series built per row."""

    def serialize_into(self, target, frame, job: Job) -> None:
        _iterrows_into(target, frame, job)


class Dataframe(Method):
    pass


class Batches(Method):
    """Explicit flush every K rows, auto-flush off (buffered vs the auto-flush default).

    Batches run across chunk boundaries: a batch may span the end of one chunk and the start of
    the next, so every flush carries K rows whatever the chunk size."""

    pending = 0  # rows in the buffer since the last flush

    def conf(self, job: Job) -> str:
        return job.conf(auto_flush="off")

    def send(self, sender, frame, job: Job) -> None:
        k, start = job.variant.batch_rows, 0
        while start < len(frame):
            take = min(k - self.pending, len(frame) - start)
            dataframe_into(sender, frame.iloc[start : start + take], job)
            start, self.pending = start + take, self.pending + take
            if self.pending == k:
                sender.flush()
                self.pending = 0


class Threads(Method):
    """N threads, one sender each (serialization releases the GIL). Streamed: each thread takes
    the next chunk of one stream when it is free, so rows reach the server close to time order.
    Whole-file: contiguous row ranges, one per thread."""

    def stream_pass(self, job: Job, clock: Clock) -> dict[str, Any]:
        with contextlib.ExitStack() as stack:
            with client_errors(job, "connecting"):
                senders = [
                    stack.enter_context(Sender.from_conf(job.conf()))
                    for _ in range(job.variant.workers)
                ]
            clock.start_wall()  # connecting is outside every phase; the file opens now
            clock.current = "send"
            chunks = stack.enter_context(stream_chunks(job, clock, to_pandas))

            def send(sender):
                try:
                    with client_errors(job, "sending"):
                        while (chunk := chunks.get()) is not None:
                            with _Busy(clock, "send"):
                                dataframe_into(sender, chunk, job)
                        with _Busy(clock, "send"):
                            sender.flush()
                except BaseException:
                    chunks.close()  # stop reading; the other threads see the end
                    raise

            with ThreadPoolExecutor(len(senders)) as pool:
                list(pool.map(send, senders))
            clock.restart()  # visible starts when the last flush returned
        return {STREAMED: True}

    def send_pass(self, job: Job, clock: Clock) -> Any:
        if job.variant.chunk_rows is not None:
            return self.stream_pass(job, clock)
        frame = read_whole(job)
        clock.lap("read")
        frame = to_pandas(frame)
        parts = [frame.iloc[o : o + n] for o, n in _chunks(len(frame), job.variant.workers)]
        clock.lap("convert")
        with contextlib.ExitStack() as stack:
            with client_errors(job, "connecting"):
                senders = [stack.enter_context(Sender.from_conf(job.conf())) for _ in parts]
            clock.restart()  # connecting is outside every phase

            def send(sender, part):
                with client_errors(job, "sending"):
                    dataframe_into(sender, part, job)
                    sender.flush()

            with ThreadPoolExecutor(len(parts)) as pool:
                list(pool.map(send, senders, parts))
            clock.lap("send")
        return parts

    def serialize_pass(self, job: Job, state: Any) -> int:
        with ThreadPoolExecutor(len(state)) as pool:
            return sum(pool.map(lambda part: _serialized_bytes(job, part), state))


def _process_worker(job: Job, offset: int, length: int, barrier, results) -> None:
    """One process: connect, then read its rows, send them, serialize them, phase by phase."""

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    try:
        import_libraries(job.variant.library)  # before the clock starts, as in the parent
        with Sender.from_conf(job.conf()) as sender:
            cpu0 = cpu()
            barrier.wait()  # all connected: the clock starts
            frame = read_frame(job.path, job.variant.library, job.variant.format, offset, length)
            barrier.wait()  # read
            frame = to_pandas(frame)
            barrier.wait()  # convert
            dataframe_into(sender, frame, job)
            sender.flush()
            barrier.wait()  # send
            cpu1 = cpu()
        t0 = time.perf_counter()
        nbytes = _serialized_bytes(job, frame)
        results.put(("ok", cpu1 - cpu0, nbytes, time.perf_counter() - t0))
    except BaseException as exc:  # report, and let the others through the barrier
        barrier.abort()
        results.put(("error", f"{type(exc).__name__}: {exc}", None, None))


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _stream_worker(job: Job, chunks, barrier, results) -> None:
    """One process: connect, then send the chunks the parent queues until None; report the CPU
    and the busy seconds of sending."""
    try:
        import_libraries(job.variant.library)  # before the clock starts, as in the parent
        with Sender.from_conf(job.conf()) as sender:
            cpu0, busy = _cpu_seconds(), 0.0
            barrier.wait()  # all connected: the clock starts
            while (chunk := chunks.get()) is not None:
                t0 = time.perf_counter()
                dataframe_into(sender, chunk, job)
                busy += time.perf_counter() - t0
            t0 = time.perf_counter()
            sender.flush()
            busy += time.perf_counter() - t0
            cpu1 = _cpu_seconds()
        results.put(("ok", cpu1 - cpu0, busy, None))
    except BaseException as exc:  # report, and let the parent through the barrier
        barrier.abort()
        results.put(("error", f"{type(exc).__name__}: {exc}", None, None))


class _WorkerGone(Exception):
    pass


class Processes(Method):
    """N processes, one sender each. Streamed: the parent reads and converts the chunks and
    queues them (a pickled chunk costs a copy, far less than serializing it); each worker takes
    the next chunk when it is free, so rows reach the server close to time order. Whole-file:
    each worker reads its own row range of the file."""

    def stream_pass(self, job: Job, clock: Clock) -> dict[str, Any]:
        ctx = mp.get_context("spawn")  # fork is unsafe with pyarrow/polars thread pools
        n = job.variant.workers
        queue_ = ctx.Queue(maxsize=n)  # chunks in flight: bounded, so memory is too
        barrier, results = ctx.Barrier(n + 1, timeout=600), ctx.Queue()
        procs = [
            ctx.Process(target=_stream_worker, args=(job, queue_, barrier, results), daemon=True)
            for _ in range(n)
        ]
        for p in procs:
            p.start()

        def put(item) -> None:  # wait for room, but not for a worker that is gone
            while True:
                try:
                    return queue_.put(item, timeout=0.2)
                except queue.Full:
                    if any(p.exitcode is not None for p in procs):
                        raise _WorkerGone from None

        try:
            with watched(procs, barrier):
                try:
                    barrier.wait()  # all workers started, imported and connected
                    clock.start_wall()  # the file opens now
                    clock.current = "send"
                    with stream_chunks(job, clock, to_pandas) as chunks:
                        for chunk in chunks:
                            put(chunk)
                    for _ in procs:
                        put(None)
                except (threading.BrokenBarrierError, _WorkerGone):
                    pass  # a worker failed or died; its message follows
                outcomes = self._outcomes(job, procs, results)
            clock.add("send", sum(o[2] for o in outcomes))
            clock.restart()  # visible starts when every worker's last flush returned
        finally:
            queue_.cancel_join_thread()  # never block exit on chunks nobody will take
        return {STREAMED: True, "worker_cpu_s": sum(o[1] for o in outcomes)}

    @staticmethod
    def _outcomes(job: Job, procs, results) -> list[tuple]:
        """Every worker's report; a SendError naming the first failure or a worker that died."""
        outcomes = collect(procs, results, timeout_s=600)
        if outcomes is None:  # a worker died without reporting (killed, or crashed natively)
            codes = [p.exitcode for p in procs]
            raise SendError(
                f"{job.variant.name}: a worker process died without a word (exit codes {codes}); "
                f"check memory and the server log, then rerun this job."
            )
        errors = [o[1] for o in outcomes if o[0] == "error"]
        if errors:
            raise SendError(
                f"{job.variant.name}: a worker process failed ({errors[0][:300]}); check the "
                f"server log and the input file, then rerun this job."
            )
        return outcomes

    def send_pass(self, job: Job, clock: Clock) -> Any:
        if job.variant.chunk_rows is not None:
            return self.stream_pass(job, clock)
        ctx = mp.get_context("spawn")  # fork is unsafe with pyarrow/polars thread pools
        ranges = _chunks(job.rows, job.variant.workers)
        barrier, results = ctx.Barrier(len(ranges) + 1, timeout=600), ctx.Queue()
        procs = [
            ctx.Process(target=_process_worker, args=(job, o, n, barrier, results), daemon=True)
            for o, n in ranges
        ]
        for p in procs:
            p.start()
        with watched(procs, barrier):
            try:
                barrier.wait()  # all workers started, imported and connected
                clock.restart()
                for phase in ("read", "convert", "send"):
                    barrier.wait()
                    clock.lap(phase)
            except threading.BrokenBarrierError:
                pass  # a worker failed or died; its message follows
            outcomes = self._outcomes(job, procs, results)
        return {
            "worker_cpu_s": sum(o[1] for o in outcomes),
            "ilp_bytes": sum(o[2] for o in outcomes),
            "serialize_s": max(o[3] for o in outcomes),  # the workers serialize in parallel
        }

    def timed_serialize(self, job: Job, state: Any) -> tuple[int | None, float]:
        if state.get(STREAMED):
            return self.streamed_serialize(job)
        return state["ilp_bytes"], state["serialize_s"]  # done by the workers, after sending


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
        return None


METHODS: dict[str, type[Method]] = {
    "rows": Rows,
    "iterrows": Iterrows,
    "dataframe": Dataframe,
    "batches": Batches,
    "threads": Threads,
    "processes": Processes,
    "server_csv": ServerCsv,
    "server_parquet": ServerParquet,
    "ilp_file": IlpFile,
}
