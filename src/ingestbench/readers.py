"""Read a dataset file the way a pandas or polars user would, and hand the client a pandas frame.

Tags come back as categoricals (cheap to serialize) and the timestamp as UTC datetimes.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from .columns import COLUMNS, TAGS, TIMESTAMP
from .errors import UserError

log = logging.getLogger(__name__)
CSV_TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S%.fZ"  # as the generator writes it (ISO 8601, UTC)


class InputError(UserError):
    pass


def _unreadable(path: Path, exc: Exception) -> InputError:
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return InputError(
        f"cannot read {path} ({first_line[:200]}); the file is corrupted or truncated: delete it "
        f"and rerun so that the generate rule writes it again."
    )


def import_libraries(library: str) -> None:
    """Import the dataframe libraries before the clock runs: their import (about a second on a
    small machine) is start-up cost, not part of reading a file, even in the cold repeat."""
    import pandas  # noqa: F401
    import pyarrow.csv  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    if library == "polars":
        import polars  # noqa: F401


def read_frame(
    path: Path, library: str, fmt: str, offset: int = 0, length: int | None = None
) -> Any:
    """Rows [offset, offset+length) of the file as a pandas or polars DataFrame."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"input file {path} does not exist; run the generate rule first.")
    try:
        frame = _READERS[(library, fmt)](path, offset, length)
    except InputError:
        raise
    except Exception as exc:  # pyarrow, polars and pandas raise many types for a bad file
        raise _unreadable(path, exc) from exc
    missing = set(COLUMNS) - set(frame.columns)
    if missing:
        raise InputError(
            f"{path} lacks the column(s) {sorted(missing)}; it is not a TSBS cpu file from this "
            f"workflow: delete it and rerun the generate rule."
        )
    return frame


def _pandas_parquet(path: Path, offset: int, length: int | None):
    import pyarrow.parquet as pq

    if offset == 0 and length is None:
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
    return table.to_pandas()


def _pandas_csv(path: Path, offset: int, length: int | None):
    import pandas as pd

    # Tags as strings: "category" would infer integer categories for rack and service ("0".."99").
    dtypes = {tag: "str" for tag in TAGS}
    if offset == 0 and length is None:
        return pd.read_csv(path, engine="pyarrow", dtype=dtypes, parse_dates=[TIMESTAMP])
    # The pyarrow engine cannot skip rows; the C engine can.
    frame = pd.read_csv(
        path, dtype=dtypes, skiprows=range(1, offset + 1), nrows=length, parse_dates=[TIMESTAMP]
    )
    return frame


def _polars_parquet(path: Path, offset: int, length: int | None):
    import polars as pl

    if offset == 0 and length is None:
        return pl.read_parquet(path)
    return pl.scan_parquet(path).slice(offset, length).collect()


def _polars_csv(path: Path, offset: int, length: int | None):
    import polars as pl

    # An explicit timestamp format parses about 1.5x faster than try_parse_dates' inference.
    return pl.read_csv(
        path,
        schema_overrides={tag: pl.Categorical for tag in TAGS},
        skip_rows_after_header=offset,
        n_rows=length,
    ).with_columns(
        pl.col(TIMESTAMP).str.to_datetime(CSV_TIMESTAMP_FORMAT, time_unit="us", time_zone="UTC")
    )


_READERS = {
    ("pandas", "parquet"): _pandas_parquet,
    ("pandas", "csv"): _pandas_csv,
    ("polars", "parquet"): _polars_parquet,
    ("polars", "csv"): _polars_csv,
}


def to_pandas(frame: Any):
    """The frame the ILP client takes: pandas as is; polars via to_pandas() (categories kept)."""
    if type(frame).__module__.startswith("polars"):
        # Plain to_pandas(): Categorical -> category; the Arrow-extension route would give Arrow
        # dictionary columns, which the client refuses.
        return frame.to_pandas()
    return frame


def head(frame: Any, rows: int | None):
    return frame if rows is None else frame.head(rows)
