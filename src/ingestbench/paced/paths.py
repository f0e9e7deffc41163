"""The paced paths, as a streaming user writes them: one arrival at a time into one table.

What each method does is its own module's stream (ingestbench.ingest.methods.experiments,
`PacedStream`), named by its catalogue record's `paced`: opened on a table for one step with
the step's flush mode, it takes `send(arrival)` per arrival (a slice of the step's frame, or
what the stream cuts it into) and `finish()` at the step's end (every step ends with a flush).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ingestbench.catalogue import METHODS
from ingestbench.ingest.methods.experiments import PacedFlush, PacedStream, resolve
from ingestbench.paced.names import PacedPath
from ingestbench.paced.settings import PacedSettings
from ingestbench.server.handle import QuestDB
from ingestbench.tables.spec import TableSpec


def stream_of(path: PacedPath) -> type[PacedStream]:
    """The method's stream class, as its catalogue record names it."""
    ref = METHODS[path.method].paced
    if not ref:  # the catalogue's flush modes say which methods are paced
        raise ValueError(f"no paced stream for method {path.method!r}")
    return resolve(ref)


def flush_of(path: PacedPath, settings: PacedSettings) -> PacedFlush:
    return PacedFlush(path.flush, settings.auto_flush_rows, settings.auto_flush_interval_ms)


@contextlib.contextmanager
def open_path(
    qdb: QuestDB, path: PacedPath, spec: TableSpec, settings: PacedSettings, protocol: int,
    columns: list[str],
) -> Iterator[PacedStream]:  # fmt: skip
    """The path connected for one step into `spec.table`, closed when the block ends."""
    flush = flush_of(path, settings)
    with stream_of(path).opened(qdb, spec, path.transport, flush, protocol, columns) as stream:
        yield stream


def arrivals_of(frame, path: PacedPath, arrival_rows: int, count: int) -> list:
    """The step's arrivals, cut before it starts (not timed), as the path's stream takes them."""
    return stream_of(path).arrivals(frame, arrival_rows, count)
