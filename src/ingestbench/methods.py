"""The ways to ingest: each method runs one repeat's timed phases against a real server.

A method's `send_pass` covers read -> convert -> send (the clock laps each phase) and returns
what the separate, untimed-by-end-to-end `serialize_pass` needs; see DESIGN "Timing boundaries".
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing as mp
import queue
import resource
import shutil
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from questdb import QuestDBError as ClientError
from questdb import Sender, TimestampNanos

from .errors import UserError
from .readers import head, import_libraries, read_frame, to_pandas
from .server import QuestDB
from .table import TAGS, TIMESTAMP
from .variants import Variant

log = logging.getLogger(__name__)
# Each repeat connects fresh senders on purpose (a repeat is a whole ingestion), so the client's
# hint about a "burst of reconnections" is noise here.
warnings.filterwarnings("ignore", message=".*burst of reconnections", category=UserWarning)
PHASES = ("read", "convert", "serialize", "send", "visible")
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


@dataclass
class Clock:
    """Laps of perf_counter() attributed to phases."""

    phases: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))
    current: str = "read"  # the phase under way, for progress reports
    _t: float = field(default_factory=time.perf_counter)

    def restart(self) -> None:
        self._t = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.phases[phase] += now - self._t
        self._t = now
        self.current = _NEXT_PHASE.get(phase, phase)


_NEXT_PHASE = {"read": "convert", "convert": "send", "send": "visible"}


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


def dataframe_into(target, frame, job: Job) -> None:
    target.dataframe(frame, table_name=job.table, symbols=list(TAGS), at=TIMESTAMP)


def _chunks(n_rows: int, parts: int) -> list[tuple[int, int]]:
    """Split [0, n_rows) into `parts` contiguous (offset, length) ranges."""
    step = -(-n_rows // parts)
    return [(o, min(step, n_rows - o)) for o in range(0, n_rows, step)]


def _serialized_bytes(job: Job, frame, rows_loop: bool = False) -> int:
    with Sender.from_conf(job.conf()) as sender:  # connects, sends nothing
        buf = sender.new_buffer()
        if rows_loop:
            _rows_into(buf, frame, job)
        else:
            dataframe_into(buf, frame, job)
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
    """Base: read the whole file, convert, send in one go. Subclasses change the send."""

    rows_loop = False

    def send_pass(self, job: Job, clock: Clock) -> Any:
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

    def convert(self, frame):
        return to_pandas(frame)

    def conf(self, job: Job) -> str:
        return job.conf()

    def send(self, sender, frame, job: Job) -> None:
        dataframe_into(sender, frame, job)

    def serialize_pass(self, job: Job, state: Any) -> int | None:
        return _serialized_bytes(job, state, self.rows_loop)

    def timed_serialize(self, job: Job, state: Any) -> tuple[int | None, float]:
        """(ILP bytes, seconds) of the separate serialize pass; (None, 0) without ILP."""
        t0 = time.perf_counter()
        nbytes = self.serialize_pass(job, state)
        return nbytes, (time.perf_counter() - t0) if nbytes is not None else 0.0


class Rows(Method):
    rows_loop = True

    def convert(self, frame):
        return frame  # iterate natively: pandas itertuples, polars iter_rows

    def send(self, sender, frame, job: Job) -> None:
        _rows_into(sender, frame, job)


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

    def send(self, sender, frame, job: Job) -> None:
        _iterrows_into(sender, frame, job)

    def serialize_pass(self, job: Job, state: Any) -> int:
        with Sender.from_conf(job.conf()) as sender:  # connects, sends nothing
            buf = sender.new_buffer()
            _iterrows_into(buf, state, job)
            return len(buf)


class Dataframe(Method):
    pass


class Batches(Method):
    """Explicit flush every K rows, auto-flush off (buffered vs the auto-flush default)."""

    def conf(self, job: Job) -> str:
        return job.conf(auto_flush="off")

    def send(self, sender, frame, job: Job) -> None:
        k = job.variant.batch_rows
        for start in range(0, len(frame), k):
            dataframe_into(sender, frame.iloc[start : start + k], job)
            sender.flush()


class Threads(Method):
    """N threads, one sender each, over contiguous row chunks (serialization releases the GIL)."""

    def send_pass(self, job: Job, clock: Clock) -> Any:
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


class Processes(Method):
    """N processes, one sender each, each reading its own row range of the file."""

    def send_pass(self, job: Job, clock: Clock) -> Any:
        ctx = mp.get_context("spawn")  # fork is unsafe with pyarrow/polars thread pools
        ranges = _chunks(job.rows, job.variant.workers)
        barrier, results = ctx.Barrier(len(ranges) + 1, timeout=600), ctx.Queue()
        procs = [
            ctx.Process(target=_process_worker, args=(job, o, n, barrier, results), daemon=True)
            for o, n in ranges
        ]
        for p in procs:
            p.start()
        try:
            barrier.wait()  # all workers started, imported and connected
            clock.restart()
            for phase in ("read", "convert", "send"):
                barrier.wait()
                clock.lap(phase)
        except threading.BrokenBarrierError:
            pass  # a worker failed; its message follows
        try:
            outcomes = [results.get(timeout=600) for _ in procs]
        except queue.Empty:  # a worker died without reporting (killed, or crashed natively)
            codes = [p.exitcode for p in procs]
            raise SendError(
                f"{job.variant.name}: a worker process died without a word (exit codes {codes}); "
                f"check memory and the server log, then rerun this job."
            ) from None
        for p in procs:
            p.join()
        errors = [o[1] for o in outcomes if o[0] == "error"]
        if errors:
            raise SendError(
                f"{job.variant.name}: a worker process failed ({errors[0][:300]}); check the "
                f"server log and the input file, then rerun this job."
            )
        return {
            "worker_cpu_s": sum(o[1] for o in outcomes),
            "ilp_bytes": sum(o[2] for o in outcomes),
            "serialize_s": max(o[3] for o in outcomes),  # the workers serialize in parallel
        }

    def timed_serialize(self, job: Job, state: Any) -> tuple[int | None, float]:
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
            with open(job.path, "rb") as fh:
                r = requests.post(
                    f"{job.qdb.url}/imp",
                    params=params,
                    files={"schema": (None, json.dumps(schema)), "data": (job.path.name, fh)},
                    timeout=3600,
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
        placed = Path(job.qdb.copy_root) / job.path.name
        shutil.copyfile(job.path, placed)
        clock.lap("read")
        clock.lap("convert")
        try:
            job.qdb.sql(f"INSERT INTO {job.table} SELECT * FROM read_parquet('{placed.name}')")
        finally:
            placed.unlink(missing_ok=True)
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
}
