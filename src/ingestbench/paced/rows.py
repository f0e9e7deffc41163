"""The rows a repeat sends, written once before it starts (untimed): the dataset's rows in file
order, each stamped with its arrival's due time (counted from the file's first timestamp, so
never out of order) and cycled as often as the steps need; or, with `timestamps: file`, the
file's own rows and times, never repeated. The file written is what validation compares the
table with."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ingestbench.errors import UserError
from ingestbench.tables.spec import TableSpec

#: Units of an Arrow timestamp per second.
PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


class RowsError(UserError):
    pass


def stamped_rows(source: Path, spec: TableSpec, offsets_s: np.ndarray, arrival_rows: int,
                 cycled: bool, out: Path) -> Path:  # fmt: skip
    """Write the rows of arrivals due at `offsets_s` (seconds from the repeat's start) to `out`."""
    table = pq.read_table(source, columns=list(spec.columns))
    rows = len(offsets_s) * arrival_rows
    if not cycled:
        if rows > table.num_rows:
            raise RowsError(
                f"{source.name} has {table.num_rows:,} rows and the steps send {rows:,} with "
                f"paced.timestamps: file, which never repeats a row; give a larger file, lower "
                f"the rates or set paced.timestamps: due (rows cycled, stamped when due)."
            )
        pq.write_table(table.slice(0, rows), out)
        return out
    taken = table.take(pa.array(np.arange(rows) % table.num_rows))
    column = table.column(spec.timestamp)
    first = int(column.cast(pa.int64())[0].as_py())
    per_s = PER_SECOND[column.type.unit]
    stamps = first + np.repeat(np.rint(np.asarray(offsets_s) * per_s).astype(np.int64),
                               arrival_rows)  # fmt: skip
    index = taken.schema.get_field_index(spec.timestamp)
    stamped = pa.array(stamps, pa.int64()).cast(column.type)
    pq.write_table(taken.set_column(index, taken.schema.field(index), stamped), out)
    return out
