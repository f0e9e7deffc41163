"""What every method shares: the job, the base `Method` (read, convert, send; whole-file or
streamed), the client's errors as one sentence, and the helpers that read and serialize frames.

A method's `send_pass` covers read -> convert -> send (the clock laps each phase) and returns
what the separate serialize pass, outside end to end, needs (ingestbench.ingest.timing).
"""

from __future__ import annotations

import contextlib
import resource
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from questdb import QuestDBError as ClientError
from questdb import Sender

from ingestbench.columnar.arrow import to_pandas
from ingestbench.errors import UserError
from ingestbench.ingest.frames.pipeline import ChunkStream
from ingestbench.ingest.frames.readers import head, iter_frames, read_frame
from ingestbench.ingest.timing import Clock
from ingestbench.server.handle import QuestDB
from ingestbench.tables.spec import TableSpec
from ingestbench.tsbs.columns import CPU_TABLE, cpu_spec, table_files
from ingestbench.variants import Variant

# Each repeat connects fresh senders on purpose (a repeat is a whole ingestion), so the client's
# hint about a "burst of reconnections" is noise here.
warnings.filterwarnings("ignore", message=".*burst of reconnections", category=UserWarning)

STREAMED = "streamed"  # the state key of a streamed send pass: the serialize pass re-reads


class SendError(UserError):
    pass


class Unsupported(SendError):
    """The path cannot load into QuestDB at all (what the server does not offer, in its words):
    the job records the variant as unsupported with this reason instead of failing."""


@dataclass(frozen=True)
class TablePart:
    """One table of a job: what it is (its spec, whose `table` is the name it lands in), the
    file it is read from, the rows to ingest into it, and the dataset's name of the table (its
    files and records; "" when it lands under that name)."""

    spec: TableSpec
    path: Path
    rows: int
    key: str = ""

    @property
    def dataset_table(self) -> str:
        return self.key or self.spec.table


@dataclass
class Job:
    """Everything one ingestion needs; picklable, so process workers get it too.

    Every use case gives its tables as `parts` (cpu one, iot two, the user's own one); `path` is
    the dataset in the variant's format: the one table's file, or the directory of their files
    (the ILP text is one file for all)."""

    qdb: QuestDB
    variant: Variant
    path: Path
    parts: tuple[TablePart, ...]
    protocol_version: int = 2
    dedup: bool = False  # the tables keep no duplicate (DEDUP UPSERT KEYS)

    @property
    def rows(self) -> int:
        """Rows to ingest over every table: the dataset's, or the cap of the `rows` method."""
        return sum(p.rows for p in self.parts)

    def conf(self, **extra: Any) -> str:
        return self.qdb.ilp_conf(self.variant.transport, self.protocol_version, **extra)

    @property
    def tables(self) -> tuple[TablePart, ...]:
        """The tables this job fills, in the order they are read, each under the name it has
        on the server (the server's table_name)."""
        if not self.qdb.table_prefix:
            return self.parts
        return tuple(replace(p, spec=replace(p.spec, table=self.qdb.table_name(p.spec.table)),
                             key=p.dataset_table) for p in self.parts)  # fmt: skip

    def in_format(self, fmt: str) -> Job:
        """The same job reading the dataset's files of format `fmt` instead."""
        path = Path(self.path).with_suffix(f".{fmt}")
        files = table_files(path, tuple(p.spec for p in self.parts))
        parts = tuple(replace(p, path=f) for p, f in zip(self.parts, files, strict=True))
        return replace(self, path=path, parts=parts)

    def with_rows(self, rows: int) -> Job:
        """The same job on the first `rows` rows (shared over the tables, in their order)."""
        parts, left = [], rows
        for i, part in enumerate(self.parts):
            share = min(part.rows, -(-left // (len(self.parts) - i)))
            parts.append(replace(part, rows=share))
            left -= share
        return replace(self, parts=tuple(parts))


def cpu_job(
    qdb: QuestDB,
    table: str,
    variant: Variant,
    path: Path,
    rows: int,
    protocol_version: int = 2,
    *,
    dedup: bool = False,
    field_type: str,
) -> Job:
    """A job of the TSBS cpu use case: its one table, named `table` on the server, of fields of
    `field_type` (the dataset's: no default that could label one type's measurement with
    another's), the first `rows` rows of the file `path`."""
    part = TablePart(cpu_spec(field_type, table), Path(path), rows, key=CPU_TABLE)
    return Job(qdb, variant, Path(path), (part,), protocol_version, dedup)


_CONNECTION_ERRORS = {"CouldNotResolveAddr", "SocketError", "ConnectTimeout", "HandshakeError"}


@contextlib.contextmanager
def client_errors(job: Job, doing: str):
    """Turn the client's exceptions into one sentence naming the cause and the fix."""
    try:
        yield
    except ClientError as exc:
        text = job.qdb.access.mask(str(exc).strip().replace("\n", " "))[:400]
        code = getattr(getattr(exc, "code", None), "name", "")
        where = f"ILP/{job.variant.transport} at {job.qdb.host}"
        if code in _CONNECTION_ERRORS and job.variant.transport == "tcp" and "reset" in text:
            # Over TCP the server answers a line it cannot take (a type clash, say) by closing
            # the connection; the client sees that only on a later write.
            cause = f"QuestDB closed the connection ({where}): over TCP it does so on a line it cannot take, such as a value whose type clashes with the table, or when it stops"  # noqa: E501
            fix = "find the line in the server log, fix the data or the table"
        elif code == "AuthError" or (code == "ServerFlushError" and "401" in text):
            cause, fix = f"QuestDB refused the credentials ({where})", "check questdb.auth"
        elif code == "TlsError":
            cause, fix = f"TLS failed ({where})", "check questdb.tls and tls_roots"
        elif code in _CONNECTION_ERRORS:
            cause, fix = f"lost the connection to QuestDB ({where})", "check that it is running"
        elif code.startswith("Server"):
            cause, fix = f"QuestDB refused the rows ({where})", "fix the data or the table"
        else:
            cause, fix = "the client could not serialize the frame", "fix the frame's dtypes"
        raise SendError(
            f"{job.variant.name}: {cause} while {doing}: {text}; {fix}, see the logs, then "
            f"rerun this job."
        ) from None


def read_whole(job: Job, part: TablePart | None = None):
    """The whole file of one table (or the capped prefix of the `rows` method) in the variant's
    library; the job's only table by default."""
    part = part or job.tables[0]
    return head(read_frame(part.path, job.variant.library, job.variant.format, spec=part.spec),
                part.rows)  # fmt: skip


def iter_parts(job: Job) -> Iterator[tuple[TableSpec, Any]]:
    """(spec, frame) chunks of every table of the job, one chunk of each table in turn (as a
    client holding several tables' frames would send them), each table in file order."""
    streams = [_table_chunks(job, part) for part in job.tables]
    try:
        while streams:
            for stream in list(streams):
                item = next(stream, None)
                if item is None:
                    streams.remove(stream)
                else:
                    yield item
    finally:
        for stream in streams:
            stream.close()


def _table_chunks(job: Job, part: TablePart) -> Iterator[tuple[TableSpec, Any]]:
    v = job.variant
    for frame in iter_frames(part.path, v.library, v.format, v.chunk_rows, part.rows,
                             spec=part.spec):  # fmt: skip
        yield part.spec, frame


def stream_chunks(job: Job, clock: Clock, convert) -> ChunkStream:
    """The variant's files as (spec, converted chunk) pairs, read ahead on a thread (timed as
    read/convert)."""
    return ChunkStream(iter_parts(job), lambda item: (item[0], convert(item[1])), clock)


class Busy:
    """Adds the time spent inside the `with` block to one phase of the clock."""

    def __init__(self, clock: Clock, phase: str):
        self.clock, self.phase = clock, phase

    def __enter__(self) -> None:
        self._t0 = time.perf_counter()

    def __exit__(self, *exc) -> None:
        self.clock.add(self.phase, time.perf_counter() - self._t0)


def cpu_seconds() -> float:
    """CPU (user + system) this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def dataframe_into(target, frame, spec: TableSpec) -> None:
    target.dataframe(frame, table_name=spec.table, symbols=list(spec.tags), at=spec.timestamp)


def row_ranges(n_rows: int, parts: int) -> list[tuple[int, int]]:
    """Split [0, n_rows) into `parts` contiguous (offset, length) ranges."""
    step = -(-n_rows // parts)
    return [(o, min(step, n_rows - o)) for o in range(0, n_rows, step)]


def serialized_bytes(job: Job, frames, into=dataframe_into) -> int:
    """ILP bytes of the (spec, frame) pairs serialized by `into` into a fresh buffer (nothing
    is sent)."""
    with Sender.from_conf(job.conf()) as sender:  # connects, sends nothing
        buf = sender.new_buffer()
        for spec, frame in frames:
            into(buf, frame, spec)
        return len(buf)


class Method:
    """Base: read, convert, send. Streamed (the default) chunk by chunk with reading on a thread
    of its own, or, with chunk_rows null, each table's whole file in one go. Subclasses change
    the send. One sender writes every table of the job."""

    def send_pass(self, job: Job, clock: Clock) -> Any:
        if job.variant.chunk_rows is not None:
            return self.stream_pass(job, clock)
        frames = []
        for part in job.tables:
            frame = read_whole(job, part)
            clock.lap("read")
            frames.append((part.spec, self.convert(frame)))
            clock.lap("convert")
        with self.errors(job, "connecting"), self.connected(job) as sender:
            clock.restart()  # connecting is outside every phase
            with self.errors(job, "sending"):
                for spec, frame in frames:
                    self.send(sender, frame, job, spec)
                self.finish(sender)
            clock.lap("send")
        return frames

    def send_frame(self, job: Job, spec: TableSpec, frame) -> None:
        """One frame held in memory, sent as this method sends a chunk, untimed and with the
        client's own exceptions (the dtype matrix's way in: what the method does to a dtype)."""
        with self.connected(job) as sender:
            self.send(sender, self.convert(frame), job, spec)
            self.finish(sender)

    def stream_pass(self, job: Job, clock: Clock) -> dict[str, Any]:
        """One sender takes the chunks in order while the reader thread prepares the next."""
        with self.errors(job, "connecting"), self.connected(job) as sender:
            clock.start_wall()  # connecting is outside every phase; the file opens now
            clock.current = "send"
            with stream_chunks(job, clock, self.convert) as chunks, self.errors(job, "sending"):
                for spec, chunk in chunks:
                    with Busy(clock, "send"):
                        self.send(sender, chunk, job, spec)
                with Busy(clock, "send"):
                    self.finish(sender)
            clock.restart()  # visible starts when the last flush returned
        return {STREAMED: True}

    def convert(self, frame):
        return to_pandas(frame)

    def conf(self, job: Job) -> str:
        return job.conf()

    def connected(self, job: Job):
        """The connection the passes send over (a context manager): an ILP sender here."""
        return Sender.from_conf(self.conf(job))

    def errors(self, job: Job, doing: str):
        """What turns a failure of the connection into one sentence (a context manager)."""
        return client_errors(job, doing)

    def finish(self, sender) -> None:
        """After the last chunk: what the connection still holds goes out."""
        sender.flush()

    def send(self, sender, frame, job: Job, spec: TableSpec) -> None:
        dataframe_into(sender, frame, spec)

    def serialize_into(self, target, frame, spec: TableSpec) -> None:
        """Fill a buffer (or sender) with `frame` as this method's send does."""
        dataframe_into(target, frame, spec)

    def serialize_pass(self, job: Job, state: Any) -> int | None:
        return serialized_bytes(job, state, self.serialize_into)

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
        with Sender.from_conf(job.conf()) as sender:  # connects, sends nothing
            buf = sender.new_buffer()
            for spec, frame in iter_parts(job):
                chunk = self.convert(frame)
                buf.clear()
                t0 = time.perf_counter()
                self.serialize_into(buf, chunk, spec)
                busy += time.perf_counter() - t0
                nbytes += len(buf)
        return nbytes, busy
