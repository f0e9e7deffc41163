"""Method `ilp_file`: an ILP text file's bytes sent to the server unchanged (the wire ceiling).

What TSBS's own loader does: no dataframe, no serialization, only the file's lines on the wire.
Over TCP they go on raw sockets to the ILP port; over HTTP as POSTs to ``/write``, one block per
request, each acknowledged (204) before the connection sends its next one. ``workers`` is the
number of connections.

The file is cut into blocks of about ``BLOCK_BYTES`` (per transport), each ending after its
last ``\\n`` (the remainder starts the next block), and the blocks are dealt round-robin in
file order. So with several connections the server still receives rows close to time order;
contiguous halves per connection would make it merge out-of-order rows. Each connection has a
queue of ``QUEUE_BLOCKS``, so memory stays at a few blocks whatever the file's size.

Every line names its table, so the configured table must be the file's (TSBS: `cpu`). On an
external server, where the run's tables carry a prefix (server.handle), each line gets it on the
way: one C-level replace per block.

Timing: the file is read block by block while the blocks are sent, so reading is inside `send`
(read = convert = 0); `send` ends when the last byte is handed to the kernel (TCP) or the last
POST is acknowledged (HTTP). ILP bytes are the file's size; there is no serialize pass.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import queue
import re
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ingestbench.errors import UserError
from ingestbench.ingest.frames.readers import InputError
from ingestbench.ingest.methods.base import Job, Method
from ingestbench.ingest.timing import Clock
from ingestbench.server.access import AccessError, open_ilp_tcp
from ingestbench.server.handle import QuestDB

#: Bytes per block. TCP streams, so small blocks cost nothing; over HTTP every POST is a
#: transaction, and 2 MiB POSTs (~4k rows) ran at half the rate of 32 MiB ones here.
BLOCK_BYTES = {"tcp": 2 << 20, "http": 16 << 20}
QUEUE_BLOCKS = 2  # blocks waiting per connection (plus the one it is sending)
HTTP_TIMEOUT_S = 600


class IlpFileError(UserError):
    pass


def line_blocks(path: Path, block_bytes: int) -> Iterator[memoryview]:
    """The file in blocks of whole lines, in order; a line longer than a block is one block."""
    with open(path, "rb") as fh:
        carry = b""
        while data := fh.read(block_bytes):
            buf = carry + data if carry else data
            cut = buf.rfind(b"\n") + 1
            if cut == 0:  # no line ends in this block yet: read on
                carry = buf
                continue
            carry = buf[cut:]
            yield memoryview(buf)[:cut]
    if carry:  # a last line without its newline: the server needs it to end the line
        yield memoryview(carry + b"\n")


def measurement(path: Path) -> str:
    """The table the file's first line names (ILP: the text before the first ',' or ' ')."""
    with open(path, "rb") as fh:
        first = fh.readline(4096)
    return re.split(rb"[, ]", first, maxsplit=1)[0].decode(errors="replace").strip()


class _TcpConnection:
    def __init__(self, qdb: QuestDB):
        self.where = f"ILP/TCP at {qdb.host}:{qdb.ilp_port}"
        self.sock = open_ilp_tcp(qdb.host, qdb.ilp_port, qdb.access)  # TLS and key as set

    def send(self, block: memoryview) -> None:
        self.sock.sendall(block)

    def close(self) -> None:
        self.sock.close()


class _HttpConnection:
    def __init__(self, qdb: QuestDB):
        self.where = f"ILP/HTTP at {qdb.url}/write"
        self.access = qdb.access
        if qdb.access.tls:
            self.conn = http.client.HTTPSConnection(qdb.host, qdb.http_port,
                                                    timeout=HTTP_TIMEOUT_S,
                                                    context=qdb.access.ssl_context())  # fmt: skip
        else:
            self.conn = http.client.HTTPConnection(qdb.host, qdb.http_port, timeout=HTTP_TIMEOUT_S)
        try:
            self.conn.connect()
        except ssl.SSLCertVerificationError:
            raise AccessError(qdb.access.tls_failed(qdb.url) + ".") from None
        self.headers = {"Content-Type": "text/plain", **qdb.access.http_headers()}

    def send(self, block: memoryview) -> None:
        self.conn.request("POST", "/write", body=block, headers=self.headers)
        response = self.conn.getresponse()
        body = response.read()
        if response.status == 401:
            raise AccessError(self.access.http_refused(self.where) + ".")
        if response.status != 204:
            raise IlpFileError(f"QuestDB refused a block ({self.where}): {_server_error(body)}")

    def close(self) -> None:
        self.conn.close()


def _server_error(body: bytes) -> str:
    """The server's own sentence from a /write error answer (JSON with a `message`)."""
    try:
        message = str(json.loads(body).get("message", ""))
    except (ValueError, AttributeError):
        message = body.decode(errors="replace")
    return " ".join(message.split())[:400] or "no message"


#: A raw ILP connection per transport, opened on a server: `send(bytes)` and `close()`; the
#: vectorized method and the dtype matrix use them too.
CONNECTIONS = {"tcp": _TcpConnection, "http": _HttpConnection}


def _sender(connection, blocks: queue.Queue, errors: list[BaseException]) -> None:
    """Send every block of its queue; after a failure keep draining, so the reader never blocks."""
    while (block := blocks.get()) is not None:
        if errors:
            continue
        try:
            connection.send(block)
        except BaseException as exc:  # reported by the reading thread
            errors.append(exc)


@contextlib.contextmanager
def open_connections(qdb: QuestDB, transport: str, count: int, who: str) -> Iterator[list]:
    """`count` raw connections over `transport`, closed when the block ends; `who` (a variant's
    or a path's name) begins a failure's sentence."""
    connect = CONNECTIONS[transport]
    connections: list = []
    try:
        try:
            for _ in range(count):
                connections.append(connect(qdb))
        except AccessError as exc:
            raise IlpFileError(f"{who}: {exc}") from None
        except OSError as exc:
            raise IlpFileError(
                f"{who}: cannot connect to QuestDB ({exc.strerror or exc}); "
                f"check that it is running and its ports are right, then rerun."
            ) from None
        yield connections
    finally:
        for connection in connections:
            connection.close()


def job_connections(job: Job) -> contextlib.AbstractContextManager[list]:
    """A backfill job's connections: its variant's transport and `workers`."""
    v = job.variant
    return open_connections(job.qdb, v.transport, v.workers, v.name)


def renamed(block: memoryview, prefix: bytes) -> memoryview:
    """Whole lines with `prefix` before each (every line starts with its table's name)."""
    return memoryview(prefix + bytes(block[:-1]).replace(b"\n", b"\n" + prefix) + b"\n")


def send_file(job: Job, connections: list) -> None:
    """Deal the file's blocks round-robin in file order to the connections' senders; on an
    external server each line's table gets the server's prefix on the way."""
    prefix = job.qdb.table_prefix.encode()
    queues = [queue.Queue(QUEUE_BLOCKS) for _ in connections]
    errors: list[BaseException] = []
    threads = [
        threading.Thread(target=_sender, args=(c, q, errors), daemon=True)
        for c, q in zip(connections, queues, strict=True)
    ]
    for t in threads:
        t.start()
    try:
        for i, block in enumerate(line_blocks(job.path, BLOCK_BYTES[job.variant.transport])):
            if errors:
                break
            queues[i % len(queues)].put(renamed(block, prefix) if prefix else block)
    finally:
        for q in queues:
            q.put(None)
        for t in threads:
            t.join()
    if errors:
        raise as_user_error(job, connections[0].where, errors[0])


def as_user_error(job: Job, where: str, exc: BaseException) -> UserError:
    """A failed raw send as one sentence: the server's refusal, or the lost connection."""
    if isinstance(exc, AccessError):
        return IlpFileError(f"{job.variant.name}: {exc}")
    if isinstance(exc, UserError):
        return IlpFileError(f"{job.variant.name}: {exc}; fix the file or the table, then rerun.")
    return IlpFileError(
        f"{job.variant.name}: lost the connection to QuestDB ({where}) while sending "
        f"{job.path.name} ({type(exc).__name__}: {exc}); over TCP the server closes the "
        f"connection on a line it cannot take and its log names it: check that log, then rerun."
    )


class IlpFile(Method):
    """The file's bytes as they are: only `send_pass` and `timed_serialize` of `Method` apply."""

    protocol_version = 1  # text lines, doubles as decimals: what ILP version 1 sends

    def send_pass(self, job: Job, clock: Clock) -> Any:
        if not Path(job.path).is_file():
            raise InputError(f"input file {job.path} does not exist; run the generate rule first.")
        table = measurement(job.path)
        tables = [part.spec.table for part in job.parts]  # as named before a server's prefix
        if table not in tables:
            raise IlpFileError(
                f"{job.variant.name}: the lines of {job.path.name} go to table {table!r}, not to "
                f"the configured table {tables[0]!r} (the file is sent as it is); set "
                f"`table: {table}` in the config or drop the ilp_file variants."
            )
        clock.lap("read")  # 0: the file is read while it is sent (module docstring)
        clock.lap("convert")
        with job_connections(job) as connections:
            clock.restart()  # connecting is outside every phase
            send_file(job, connections)
            clock.lap("send")
        return None

    def timed_serialize(self, job: Job, state: Any) -> tuple[int | None, float]:
        # The bytes on the wire (a line per row, each with the server's prefix); no serializing.
        prefixes = len(job.qdb.table_prefix.encode()) * job.rows
        return Path(job.path).stat().st_size + prefixes, 0.0
