"""The ILP text of an own dataset, made once from its file: what `ilp_file` sends as it is (the
wire ceiling). The questdb client's `dataframe()` writes the lines (protocol version 1: text,
as every ILP file), chunk by chunk, so memory stays at one chunk.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

from ingestbench.columnar.arrow import to_pandas
from ingestbench.own.read import as_library, iter_tables
from ingestbench.own.spec import OwnTableSpec
from ingestbench.storage.files import atomic_paths

log = logging.getLogger(__name__)
CHUNK_ROWS = 100_000


def write_ilp(spec: OwnTableSpec, rows: int, output: Path, lines_possible: bool = True) -> int:
    """Write the table's rows as ILP lines to `output` (atomically); the bytes written. Without
    `lines_possible` (a row has no value for a line: ingestbench.own.support says why `ilp_file`
    is unsupported) the file is left empty."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from questdb.ingress import Buffer

    written = 0
    with atomic_paths(output) as (tmp,), open(tmp, "wb") as fh:
        buf = Buffer(protocol_version=1)
        for table in iter_tables(spec, CHUNK_ROWS, rows) if lines_possible else ():
            buf.clear()
            frame = to_pandas(as_library(table, "pandas"))
            buf.dataframe(frame, table_name=spec.table, symbols=list(spec.tags), at=spec.timestamp)
            data = bytes(buf)
            fh.write(data)
            written += len(data)
    log.info("wrote the ILP text of %s: %d bytes -> %s", spec.source.path, written, output)
    return written
