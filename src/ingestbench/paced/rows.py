"""The rows a repeat sends, written once before it starts (untimed): the dataset's rows in file
order, each stamped with its arrival's due time (counted from the file's first timestamp, so
never out of order) and cycled as often as the steps need; or, with `timestamps: file`, the
file's own rows and times, never repeated. The file written is what validation compares the
table with."""

from __future__ import annotations

import dataclasses
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


def source_rows(spec: TableSpec, parquet: Path) -> pa.Table:
    """The dataset's rows in file order, as Arrow: its kind's own reader where it has one (your
    own Parquet or CSV file, typed as the clients read it), else the dataset's Parquet."""
    from ingestbench.datasets import of_spec

    frames = of_spec(spec).frames(spec)
    if frames is None:
        return pq.read_table(parquet, columns=list(spec.columns))
    table = frames.read("polars", 0, None).to_arrow()
    # back to the types the clients read the file with (polars reads strings as large ones)
    types = dict(spec.source.types)  # type: ignore[attr-defined]  # a kind with frames has one
    return pa.table({c: table.column(c).cast(types[c]) if c in types else table.column(c)
                     for c in spec.columns})  # fmt: skip


def reading(spec: TableSpec, rows: Path) -> TableSpec:
    """The spec with the rows written for a step as its source, for a kind that reads its own
    source (your own file): its readers and its validation then read what was sent."""
    source = getattr(spec, "source", None)
    if source is None:
        return spec
    moved = dataclasses.replace(source, path=str(rows), format="parquet", directory=False,
                                hive=False)  # fmt: skip
    return dataclasses.replace(spec, source=moved)


def stamped_rows(table: pa.Table, spec: TableSpec, offsets_s: np.ndarray, arrival_rows: int,
                 cycled: bool, out: Path) -> Path:  # fmt: skip
    """Write the rows of arrivals due at `offsets_s` (seconds from the repeat's start) to `out`."""
    if isinstance(table, (str, Path)):  # the dataset's Parquet, read here
        table = source_rows(spec, Path(table))
    rows = len(offsets_s) * arrival_rows
    if not cycled:
        if rows > table.num_rows:
            raise RowsError(
                f"the dataset has {table.num_rows:,} rows and the steps send {rows:,} with "
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
