"""Read the user's file as the client methods take it: streamed in chunks of Arrow record
batches (a Parquet file's row groups, a Parquet directory's files one after the other, a CSV's
blocks), so client memory stays bounded by a chunk however big the file.

Every chunk holds the table's columns in the order the loops expect (symbols, the other
columns, the timestamp), a symbol as an Arrow dictionary (pandas category, polars Categorical)
where its values repeat within the chunk and as strings where they barely do
(columnar.arrow.as_symbol), a date as a timestamp at midnight UTC (the client sends no date
objects), a time in seconds or milliseconds as microseconds (the client's units are
microseconds and nanoseconds), a time without a zone as UTC. The file is read where it is:
`spec.source` names it; CSV is read by pyarrow for both libraries (polars takes the batches
zero-copy), with the dataset's delimiter, null markers and timestamp format.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from ingestbench.columnar.arrow import as_symbol, from_arrow, rechunk
from ingestbench.own.dataset import CsvOptions, OwnDataError
from ingestbench.own.spec import OwnTableSpec
from ingestbench.own.types import arrow_type

#: Bytes per parsed CSV block (as the TSBS reader).
CSV_BLOCK_BYTES = 4 << 20


@contextlib.contextmanager
def open_csv(
    path: Path,
    csv: CsvOptions,
    block_size: int = CSV_BLOCK_BYTES,
    column_types: dict[str, pa.DataType] | None = None,
    include: list[str] | None = None,
):
    import pyarrow.csv as pacsv

    convert = pacsv.ConvertOptions(
        null_values=list(csv.null_values),
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
        column_types=column_types or {},
        include_columns=include or [],
        timestamp_parsers=[csv.timestamp_format] if csv.timestamp_format else None,
    )
    reader = pacsv.open_csv(
        path,
        read_options=pacsv.ReadOptions(block_size=block_size),
        parse_options=pacsv.ParseOptions(delimiter=csv.delimiter),
        convert_options=convert,
    )
    try:
        yield reader
    finally:
        reader.close()


def is_hive(directory: Path) -> bool:
    """Whether a directory of Parquet files is hive-partitioned (subdirectories key=value)."""
    return any(p.is_dir() and "=" in p.name for p in directory.iterdir())


def hive_partitioning(directory: Path):
    """Hive partitions with plain (not dictionary) keys, or None for a directory without them."""
    import pyarrow.dataset as pds

    return pds.HivePartitioning.discover(infer_dictionary=False) if is_hive(directory) else None


def _read_types(spec: OwnTableSpec) -> dict[str, pa.DataType]:
    return {name: arrow_type(text) for name, text in spec.source.types}


def raw_batches(spec: OwnTableSpec, chunk_rows: int) -> Iterator[pa.RecordBatch]:
    """The file's record batches with the table's columns, as the file holds them."""
    src = spec.source
    path, columns = Path(src.path), list(spec.columns)
    if src.directory:
        import pyarrow.dataset as pds

        dataset = pds.dataset(path, format="parquet", partitioning=hive_partitioning(path))
        # One file and one batch ahead: memory stays at about a chunk, whatever the directory.
        yield from dataset.to_batches(columns=columns, batch_size=chunk_rows,
                                      batch_readahead=1, fragment_readahead=1)  # fmt: skip
    elif src.format == "parquet":
        import pyarrow.parquet as pq

        # pre_buffer=False: as the TSBS reader (its RSS would grow with the file otherwise).
        with pq.ParquetFile(path, pre_buffer=False) as pf:
            yield from pf.iter_batches(batch_size=chunk_rows, columns=columns)
    else:
        with open_csv(path, src.csv, column_types=_read_types(spec), include=columns) as reader:
            yield from reader


def conform(table: pa.Table | pa.RecordBatch, spec: OwnTableSpec) -> pa.Table:
    """The table's columns in row order (symbols, fields, timestamp), symbols as dictionaries
    where they repeat, dates and times as the client takes them (see the module), a string view
    as a plain string."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    arrays = []
    for name in spec.columns:
        column = table.column(name)
        t = column.type
        if name in spec.tags:
            column = as_symbol(column if pa.types.is_dictionary(t) else column.cast(pa.string()))
        elif pa.types.is_date(t):
            column = column.cast(pa.timestamp("ms")).cast(pa.timestamp("us", tz="UTC"))
        elif pa.types.is_timestamp(t) and (t.unit in ("s", "ms") or t.tz is None):
            # The client takes microseconds and nanoseconds; a naive time is UTC, said so.
            unit = "us" if t.unit in ("s", "ms") else t.unit
            column = column.cast(pa.timestamp(unit, tz=t.tz or "UTC"))
        elif pa.types.is_string_view(t):
            column = column.cast(pa.string())
        arrays.append(column)
    return pa.Table.from_arrays(arrays, names=list(spec.columns))


def iter_tables(spec: OwnTableSpec, chunk_rows: int, rows: int) -> Iterator[pa.Table]:
    """Arrow tables of `chunk_rows` rows (the last may be shorter), the first `rows` rows."""
    for table in rechunk(raw_batches(spec, chunk_rows), chunk_rows, rows):
        yield conform(table, spec)


def read_range(spec: OwnTableSpec, offset: int, length: int | None, rows: int) -> pa.Table:
    """Rows [offset, offset + length) of the file's first `rows` rows, as one Arrow table."""
    end = rows if length is None else min(rows, offset + length)
    pieces, seen = [], 0
    for table in iter_tables(spec, 1 << 20, end):
        n = table.num_rows
        if seen + n > offset:
            pieces.append(table.slice(max(0, offset - seen)))
        seen += n
    if not pieces:
        return conform(pa.Table.from_batches([], schema=_empty_schema(spec)), spec)
    return pa.concat_tables(pieces)


def _empty_schema(spec: OwnTableSpec) -> pa.Schema:
    return pa.schema([(n, arrow_type(t)) for n, t in spec.source.types if n in spec.columns])


def as_library(table: pa.Table, library: str) -> Any:
    return from_arrow(table, library)


class OwnFrames:
    """The table's rows as dataframes, read from the user's file where it is: the frame source
    of an own table (ingestbench.datasets), which the readers of ingestbench.ingest.frames use."""

    def __init__(self, spec: OwnTableSpec) -> None:
        self.spec = spec

    def iter(self, library: str, chunk_rows: int, rows: int) -> Iterator[Any]:
        done = 0
        try:
            for table in iter_tables(self.spec, chunk_rows, rows):
                done += table.num_rows
                yield as_library(table, library)
        except Exception as exc:  # pyarrow raises many types for a bad file
            raise self._unreadable(exc) from exc
        if done < rows:
            raise self._unreadable(EOFError(f"it ends after {done} of {rows} rows"))

    def read(self, library: str, offset: int, length: int | None) -> Any:
        rows = offset + length if length is not None else 1 << 62
        try:
            return as_library(read_range(self.spec, offset, length, rows), library)
        except Exception as exc:
            raise self._unreadable(exc) from exc

    def _unreadable(self, exc: Exception) -> OwnDataError:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        return OwnDataError(
            f"cannot read {self.spec.source.path} ({first}); the file changed or broke since its "
            f"manifest was written: rerun, so that the dataset is described again."
        )
