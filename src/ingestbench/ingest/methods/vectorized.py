"""Method `vectorized`: the frame encoded into ILP column by column
(ingestbench.ingest.frames.encoder), the bytes written to raw ILP connections as `ilp_file` writes
its file.

The same lines as `dataframe()` (byte for byte), made per column and per distinct value instead
of per cell: the path to try when the client's serializer is what limits a load. `workers`
threads each take the next piece of one stream (so rows reach the server close to time order
and every connection stays busy to the end), encode it and send it on a connection of their
own: over TCP a socket to the ILP port, over HTTP POSTs to ``/write`` (each a transaction,
acknowledged before the next).

Timing as for the other client methods: `read` and `convert` (the frame as an Arrow record
batch, zero-copy where the library allows) on the reader thread, `send` = encoding + writing,
busy time summed over pieces and workers. A chunk is encoded and sent in pieces (`PIECE_ROWS`),
so a worker holds one piece's ILP. Whole-file mode reads and converts the whole file, then
encodes and sends it in the same pieces. ILP protocol 2 only: it writes
doubles in binary.
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ingestbench.ingest.frames.encoder import EncodeError, IlpEncoder, as_record_batch
from ingestbench.ingest.methods.base import (
    STREAMED,
    Busy,
    Job,
    Method,
    iter_parts,
    read_whole,
    stream_chunks,
)
from ingestbench.ingest.methods.experiments import PacedFlush, PacedStream, ResendLoad
from ingestbench.ingest.methods.ilp_file import as_user_error, job_connections, open_connections
from ingestbench.ingest.timing import Clock
from ingestbench.tables.spec import TableSpec

#: Rows encoded and sent at a time, within a chunk. Over TCP a piece of
#: 25k rows (about 10 MiB of ILP) held RSS at 490-580 MiB against 730-890 for whole 100k-row
#: chunks, at the same rate (1M rows, 2 workers, 3 repeats). Over HTTP every piece is a POST the
#: worker waits for: 25k-row POSTs ran 20 % slower than whole chunks, 50k-row ones as fast
#: (medians 360k and 351k rows/s, RSS 504-611 against 595-748 MiB; 1 worker, 2 x 3 repeats).
PIECE_ROWS = {"tcp": 25_000, "http": 50_000}


def pieces(batch, transport: str) -> list:
    """The batch in the slices that are encoded and sent one at a time over `transport`."""
    rows = PIECE_ROWS[transport]
    return [batch.slice(start, rows) for start in range(0, batch.num_rows, rows)]


class Encoders(dict):
    """One encoder per table, made when its first chunk comes (one set per worker)."""

    def __missing__(self, spec: TableSpec) -> IlpEncoder:
        self[spec] = IlpEncoder(spec.table, spec.tags, spec.fields, spec.timestamp)
        return self[spec]


class _Batches:
    """Whole record batches, (spec, batch) pairs, handed out one by one like a ChunkStream
    (get() until None); _Pieces cuts them."""

    def __init__(self, batches: list):
        self._items = iter(batches)
        self._lock = threading.Lock()

    def get(self):
        with self._lock:
            return next(self._items, None)

    def close(self) -> None:
        with self._lock:
            self._items = iter(())


class _Pieces:
    """The pieces of a stream's chunks, one at a time to whichever worker asks (get() until
    None), so that every connection stays busy to the end and the rows of all connections
    stay close to time order. Dealing whole chunks left the last chunk's connection sending
    alone while the other had nothing (the server's parsing then on one core)."""

    def __init__(self, chunks, transport: str):
        self._chunks, self._transport = chunks, transport
        self._pending: collections.deque = collections.deque()
        self._lock = threading.Lock()

    def get(self):
        with self._lock:  # waiting for the next chunk here holds the others: they need it too
            if not self._pending:
                item = self._chunks.get()
                if item is None:
                    return None
                spec, chunk = item
                self._pending.extend((spec, piece) for piece in pieces(chunk, self._transport))
            return self._pending.popleft()

    def close(self) -> None:
        self._chunks.close()


class Vectorized(Method):
    def convert(self, frame):
        return as_record_batch(frame)

    def send_frame(self, job: Job, spec: TableSpec, frame) -> None:
        """The frame's pieces encoded and written to the first of the variant's connections."""
        encoder = Encoders()[spec]
        with job_connections(job) as connections:
            for piece in pieces(self.convert(frame), job.variant.transport):
                connections[0].send(memoryview(encoder.encode(piece)))

    def send_pass(self, job: Job, clock: Clock) -> Any:
        if job.protocol_version < 2:
            raise EncodeError(
                f"{job.variant.name}: the vectorized encoder writes ILP protocol 2 (binary "
                f"doubles), and the config asks for {job.protocol_version}; set "
                f"ilp_protocol_version: 2 or drop the vectorized variants."
            )
        streamed = job.variant.chunk_rows is not None
        batches = []
        if not streamed:
            for part in job.tables:
                frame = read_whole(job, part)
                clock.lap("read")
                batches.append((part.spec, self.convert(frame)))
                del frame  # the batch shares what it can; the rest of the frame can go
                clock.lap("convert")
        with job_connections(job) as connections, contextlib.ExitStack() as stack:
            if streamed:
                clock.start_wall()  # connecting is outside every phase; the file opens now
                clock.current = "send"
                chunks = stack.enter_context(stream_chunks(job, clock, self.convert))
            else:
                clock.restart()
                chunks = _Batches(batches)
            # Streamed, each worker adds its busy time to `send`; whole-file, `send` is one lap.
            self._send_all(job, chunks, connections, clock if streamed else Clock())
            if streamed:
                clock.restart()  # visible starts when the last byte went out
            else:
                clock.lap("send")
        return {STREAMED: True} if streamed else batches

    def _send_all(self, job: Job, chunks, connections: list, busy: Clock) -> None:
        """One thread per connection: take the next piece of the stream, encode it, send it
        (timed into `busy`); the first error stops the stream (the others see its end). The
        reader's and the encoder's errors are sentences already; a failed send becomes one."""
        chunks = _Pieces(chunks, job.variant.transport)

        def work(connection) -> None:
            encoders = Encoders()
            try:
                while (item := chunks.get()) is not None:
                    spec, piece = item
                    with Busy(busy, "send"):
                        data = memoryview(encoders[spec].encode(piece))
                        try:
                            connection.send(data)
                        except Exception as exc:
                            raise as_user_error(job, connection.where, exc) from None
            except BaseException:
                chunks.close()
                raise

        with ThreadPoolExecutor(len(connections)) as pool:
            try:
                list(pool.map(work, connections))
            except BaseException:
                chunks.close()  # SIGTERM or Ctrl-C: end the stream before the pool waits
                raise

    def timed_serialize(self, job: Job, state: Any) -> tuple[int, float]:
        """Encode every chunk again into bytes nobody sends: (ILP bytes, busy seconds)."""
        encoders, nbytes, busy = Encoders(), 0, 0.0
        transport = job.variant.transport
        if isinstance(state, dict) and state.get(STREAMED):
            batches = ((spec, self.convert(frame)) for spec, frame in iter_parts(job))
        else:
            batches = iter(state)  # each table's whole batch, in pieces like any chunk
        for spec, batch in batches:
            t0 = time.perf_counter()
            encoder = encoders[spec]
            nbytes += sum(encoder.encode(piece).size for piece in pieces(batch, transport))
            busy += time.perf_counter() - t0
        return nbytes, busy


class VectorizedStream(PacedStream):
    """Paced: each arrival encoded, its bytes on one raw connection (a TCP socket, or a POST to
    /write per write). There is no client buffer, so a streaming user buffers the encoded
    arrivals and writes them by the rules the client applies, checked at each arrival."""

    @staticmethod
    def arrivals(frame, arrival_rows: int, count: int) -> list:
        batch = as_record_batch(frame)  # the encoder's input
        return [batch.slice(i * arrival_rows, arrival_rows) for i in range(count)]

    def __init__(self, connection, spec: TableSpec, flush: PacedFlush):
        self.connection, self.flush = connection, flush
        self.encoder = IlpEncoder(spec.table, spec.tags, spec.fields, spec.timestamp)
        self.pending: list[bytes] = []
        self.rows = 0
        self.last = time.monotonic()

    @classmethod
    @contextlib.contextmanager
    def opened(cls, qdb, spec, transport, flush, protocol, columns):
        with open_connections(qdb, transport, 1, f"vectorized over {transport}") as (conn,):
            yield cls(conn, spec, flush)

    def send(self, arrival) -> None:
        self.pending.append(self.encoder.encode(arrival).to_pybytes())
        self.rows += arrival.num_rows
        if self.flush.due(self.rows, time.monotonic() - self.last):
            self.finish()

    def finish(self) -> None:
        if self.pending:
            self.connection.send(memoryview(b"".join(self.pending)))
        self.pending, self.rows, self.last = [], 0, time.monotonic()


def deliver(load: ResendLoad) -> None:
    """Delivery: each batch encoded, its bytes written to one raw ILP/TCP socket; after an
    error: a new socket, the batch written again."""
    from ingestbench.server.access import open_ilp_tcp

    spec, qdb = load.spec, load.qdb
    encoder = IlpEncoder(spec.table, spec.tags, spec.fields, spec.timestamp)

    def opener():
        return open_ilp_tcp(qdb.host, qdb.ilp_port, qdb.access, timeout=30)

    conn = load.resender(opener, lambda sock: sock.close())
    try:
        for first, batch in load.batches():
            load.sending(first, len(batch))
            data = encoder.encode(as_record_batch(batch))
            conn.send(lambda sock, data=data: sock.sendall(data))
        if conn.conn is not None:
            conn.conn.shutdown(2)  # a polite end: the server reads to it
            conn.close()
    finally:
        conn.close()
