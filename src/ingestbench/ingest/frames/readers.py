"""Read a dataset file the way a pandas or polars user would, and hand the client a pandas frame.

Tags come back as categoricals (cheap to serialize) and the timestamp as UTC datetimes.
`read_frame` reads the whole file (or one row range); `iter_frames` streams it in chunks.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ingestbench.columnar.arrow import arrow_to_pandas, from_arrow, is_polars, rechunk
from ingestbench.datasets import of_spec
from ingestbench.errors import UserError
from ingestbench.tables.spec import TableSpec
from ingestbench.tsbs.columns import cpu_spec

log = logging.getLogger(__name__)
CSV_TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S%.fZ"  # as the generator writes it (ISO 8601, UTC)


class InputError(UserError):
    pass


PARQUET_MAGIC = b"PAR1"  # the first and the last four bytes of every Parquet file


def _content(path: Path) -> str:
    """What the file's first bytes say it holds: "parquet", "text" or "binary"."""
    with open(path, "rb") as fh:
        start = fh.read(4096)
    if start.startswith(PARQUET_MAGIC):
        return "parquet"
    try:
        start.decode()
    except UnicodeDecodeError as exc:  # a multi-byte character cut at the end of the sample
        if exc.start < len(start) - 4:
            return "binary"
    return "text"


def _unreadable(path: Path, exc: Exception, fmt: str | None = None) -> InputError:
    """The sentence for a file the reader failed on: a file of another format than the variant
    reads (a good file: nothing to delete), or a damaged one (delete it; the rule writes it)."""
    content = _content(path) if fmt and path.is_file() else None
    if fmt == "parquet" and content == "text":
        return InputError(
            f"{path} holds text (CSV, perhaps), not Parquet, and this variant reads Parquet: "
            f"point it at the dataset's .parquet file or choose a csv variant."
        )
    if fmt == "csv" and content == "parquet":
        return InputError(
            f"{path} is a Parquet file, and this variant reads CSV: point it at the dataset's "
            f".csv file or choose a parquet variant."
        )
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return InputError(
        f"cannot read {path} ({first_line[:200]}); the file is corrupted or truncated: delete it "
        f"and rerun so that the generate rule writes it again."
    )


def import_libraries(library: str) -> None:
    """Import the dataframe libraries before the clock runs: their import (about a second on a
    small machine) is start-up cost, not part of reading a file, even in the cold repeat."""
    import pandas  # noqa: F401
    import pyarrow as pa
    import pyarrow.csv  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    # Arrow's buffers from the C library's allocator rather than pyarrow's default, mimalloc:
    # with the chunk reader allocating and the senders freeing on other threads, mimalloc kept
    # handing the reader fresh pages, each first touched through a page fault (9-13 % of the
    # client's CPU in `vectorized`, measured by benchmarks/bench_arrow_pool.py).
    pa.set_memory_pool(pa.system_memory_pool())

    if library == "polars":
        import polars  # noqa: F401


def _require_file(path: Path) -> None:
    if not path.is_file():
        raise InputError(f"input file {path} does not exist; run the generate rule first.")


def _require_columns(path: Path, frame: Any, spec: TableSpec) -> None:
    """The table's columns, fields as numbers and the timestamp as a time. A file that reads but
    has other columns is somebody's good file, not a damaged one: the fix is the path."""
    missing = [c for c in spec.columns if c not in set(frame.columns)]
    if missing:
        raise InputError(
            f"{path} lacks the column(s) {missing} of the TSBS {spec.table} table; it is not a "
            f"file this workflow generates: point the job at the dataset's generated file."
        )
    for name, wanted in _mistyped(frame, spec):
        raise InputError(
            f"column {name!r} of {path} holds {wanted[0]} where the TSBS {spec.table} table has "
            f"{wanted[1]}; it is not a file this workflow generates: point the job at the "
            f"dataset's generated file."
        )


def _mistyped(frame: Any, spec: TableSpec) -> Iterator[tuple[str, tuple[str, str]]]:
    """(column, (what it holds, what it should)) for each field that is not a number and a
    timestamp that is not a time."""
    ts = spec.timestamp
    if is_polars(frame):
        schema = frame.schema
        for name in spec.fields:
            if not (schema[name].is_numeric() or str(schema[name]) == "Null"):
                yield name, (str(schema[name]), "numbers")
        if not schema[ts].is_temporal():
            yield ts, (str(schema[ts]), "timestamps")
        return
    import pandas as pd

    for name in spec.fields:
        if not pd.api.types.is_numeric_dtype(frame[name]):
            yield name, (str(frame[name].dtype), "numbers")
    if not pd.api.types.is_datetime64_any_dtype(frame[ts]):
        yield ts, (str(frame[ts].dtype), "timestamps")


def read_frame(
    path: Path,
    library: str,
    fmt: str,
    offset: int = 0,
    length: int | None = None,
    *,
    spec: TableSpec | None = None,
) -> Any:
    """Rows [offset, offset+length) of the file of table `spec` (cpu by default) as a pandas or
    polars DataFrame."""
    path, spec = Path(path), spec or cpu_spec()
    source = of_spec(spec).frames(spec)
    if source is not None:  # a kind that reads its source itself (the user's file, where it is)
        return source.read(library, offset, length)
    _require_file(path)
    try:
        frame = _READERS[(library, fmt)](path, offset, length, spec)
    except InputError:
        raise
    except Exception as exc:  # pyarrow, polars and pandas raise many types for a bad file
        raise _unreadable(path, exc, fmt) from exc
    _require_columns(path, frame, spec)
    return frame


def iter_frames(
    path: Path,
    library: str,
    fmt: str,
    chunk_rows: int,
    rows: int,
    *,
    spec: TableSpec | None = None,
) -> Iterator[Any]:
    """The first `rows` rows of the file, in file order, as pandas or polars DataFrames of at most
    `chunk_rows` rows each. Only about one chunk of the file is decoded at a time.

    Parquet is read by pyarrow's record batches (for polars too: `pl.from_arrow` is zero-copy),
    CSV by pyarrow's streaming reader for pandas and by polars' streaming engine for polars
    (about 1.7x faster than pyarrow's here); both cut the file's blocks at line ends. A file that
    ends early or breaks mid-stream raises InputError.
    """
    path, spec = Path(path), spec or cpu_spec()
    source = of_spec(spec).frames(spec)
    if source is not None:
        yield from source.iter(library, chunk_rows, rows)
        return
    _require_file(path)
    try:
        if (library, fmt) == ("polars", "csv"):
            frames = _first_rows(_polars_csv_frames(path, chunk_rows, spec), rows)
        else:
            tables = rechunk(_ARROW_BATCHES[fmt](path, chunk_rows, spec), chunk_rows, rows)
            frames = (from_arrow(table, library) for table in tables)
        done = 0
        for frame in frames:
            if done == 0:
                _require_columns(path, frame, spec)
            if _null_count(frame[spec.timestamp]):  # what a line cut short leaves behind in polars
                raise EOFError(f"a row without a timestamp after row {done}")
            done += len(frame)
            yield frame
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises many types for a bad file
        raise _unreadable(path, exc, fmt) from exc
    if done < rows:
        raise _unreadable(path, EOFError(f"it ends after {done} of {rows} rows"))


def _parquet_batches(path: Path, chunk_rows: int, spec: TableSpec) -> Iterator[Any]:
    import pyarrow.parquet as pq

    # pre_buffer=False: with pyarrow's default the reader keeps what it pre-buffered for the
    # batches already returned, and RSS grows with the file (about 90 MiB per 1M rows here).
    with pq.ParquetFile(path, pre_buffer=False) as pf:
        yield from pf.iter_batches(batch_size=chunk_rows)


# The CSV reader parses blocks of this many bytes; a block ends mid-line and the reader carries
# the rest of the line over. About 20k TSBS rows: big enough that per-block overhead is small.
CSV_BLOCK_BYTES = 4 << 20


def _csv_batches(path: Path, chunk_rows: int, spec: TableSpec) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    # Tags as dictionaries (pandas category, polars Categorical: cheap to serialize), and the
    # timestamp as UTC; the fields keep the types inferred from the first block. An empty
    # field is a null, of a tag too (strings_can_be_null), as polars and pandas read it.
    types = {tag: pa.dictionary(pa.int32(), pa.string()) for tag in spec.tags}
    types[spec.timestamp] = pa.timestamp("us", tz="UTC")
    if spec.nullable:  # a block could hold only nulls of a field: its type must not be guessed
        kinds = {"double": pa.float64(), "long": pa.int64()}
        types |= {f: kinds[spec.kind(f)] for f in spec.fields}
    reader = pacsv.open_csv(
        path,
        read_options=pacsv.ReadOptions(block_size=CSV_BLOCK_BYTES),
        convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=True),
    )
    try:
        yield from reader
    finally:
        reader.close()


_ARROW_BATCHES = {"parquet": _parquet_batches, "csv": _csv_batches}


def _polars_overrides(spec: TableSpec) -> dict[str, Any]:
    """Tags as Categorical; with nulls possible, the fields' types too (never guessed)."""
    import polars as pl

    overrides = {tag: pl.Categorical for tag in spec.tags}
    if spec.nullable:
        kinds = {"double": pl.Float64, "long": pl.Int64}
        overrides |= {f: kinds[spec.kind(f)] for f in spec.fields}
    return overrides


def _polars_csv_frames(path: Path, chunk_rows: int, spec: TableSpec) -> Iterator[Any]:
    import polars as pl

    lazy = pl.scan_csv(path, schema_overrides=_polars_overrides(spec))
    lazy = lazy.with_columns(
        pl.col(spec.timestamp).str.to_datetime(
            CSV_TIMESTAMP_FORMAT, time_unit="us", time_zone="UTC"
        )
    )
    yield from lazy.collect_batches(chunk_size=chunk_rows)


def _first_rows(frames: Iterable[Any], rows: int) -> Iterator[Any]:
    left = rows
    for frame in frames:
        yield frame.head(left) if len(frame) > left else frame
        left -= len(frame)
        if left <= 0:
            return


def _null_count(column: Any) -> int:
    return int(column.null_count() if hasattr(column, "null_count") else column.isna().sum())


def _pandas_parquet(path: Path, offset: int, length: int | None, spec: TableSpec):
    import pyarrow.parquet as pq

    if offset == 0 and length is None:
        if spec.nullable:
            return arrow_to_pandas(pq.read_table(path))
        import pandas as pd

        return pd.read_parquet(path, engine="pyarrow")
    # Read only the row groups that cover the range, as a careful pandas user would.
    pf = pq.ParquetFile(path)
    end = pf.metadata.num_rows if length is None else min(offset + length, pf.metadata.num_rows)
    groups, first_row, row = [], None, 0
    for i in range(pf.metadata.num_row_groups):
        n = pf.metadata.row_group(i).num_rows
        if row + n > offset and row < end:
            groups.append(i)
            first_row = row if first_row is None else first_row
        row += n
    table = pf.read_row_groups(groups).slice(offset - (first_row or 0), end - offset)
    return arrow_to_pandas(table)


def _pandas_csv(path: Path, offset: int, length: int | None, spec: TableSpec):
    import pandas as pd

    # Tags as strings: "category" would infer integer categories for rack and service ("0".."99").
    dtypes: dict[str, str] = {tag: "str" for tag in spec.tags}
    if spec.nullable:  # an integer field with empty cells: nullable, not float64
        dtypes |= {f: {"double": "float64", "long": "Int64"}[spec.kind(f)] for f in spec.fields}
    ts = [spec.timestamp]
    if offset == 0 and length is None:
        return pd.read_csv(path, engine="pyarrow", dtype=dtypes, parse_dates=ts)
    # The pyarrow engine cannot skip rows; the C engine can.
    frame = pd.read_csv(
        path, dtype=dtypes, skiprows=range(1, offset + 1), nrows=length, parse_dates=ts
    )
    return frame


def _polars_parquet(path: Path, offset: int, length: int | None, spec: TableSpec):
    import polars as pl

    if offset == 0 and length is None:
        return pl.read_parquet(path)
    return pl.scan_parquet(path).slice(offset, length).collect()


def _polars_csv(path: Path, offset: int, length: int | None, spec: TableSpec):
    import polars as pl

    # An explicit timestamp format parses about 1.5x faster than try_parse_dates' inference.
    return pl.read_csv(
        path,
        schema_overrides=_polars_overrides(spec),
        skip_rows_after_header=offset,
        n_rows=length,
    ).with_columns(
        pl.col(spec.timestamp).str.to_datetime(
            CSV_TIMESTAMP_FORMAT, time_unit="us", time_zone="UTC"
        )
    )


_READERS = {
    ("pandas", "parquet"): _pandas_parquet,
    ("pandas", "csv"): _pandas_csv,
    ("polars", "parquet"): _polars_parquet,
    ("polars", "csv"): _polars_csv,
}


def head(frame: Any, rows: int | None):
    return frame if rows is None else frame.head(rows)
