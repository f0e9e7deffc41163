"""A small realistic table to try own data on (configs/own.yaml): trades, not TSBS.

Many rows share a timestamp (a burst of trades per millisecond tick); string columns of very
different cardinality (a handful of venues and sides as categories, a few hundred instruments,
thousands of traders as plain strings); nullable integers; a float32 fee with nulls; a boolean
and a trade date. A seed fixes the rows. Written as Parquet (the symbols dictionary-encoded, as
pandas writes a category) or as CSV with ';' between fields and NA for a null.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from ingestbench.storage.files import atomic_paths

VENUES = ("XLON", "XPAR", "XETR", "XNYS")
SIDES = ("buy", "sell")
INSTRUMENTS = 300
TRADERS = 5_000
ROWS_PER_TICK = 40
START_US = 1_735_689_600_000_000  # 2025-01-01T00:00:00Z
CSV_NULL = "NA"
CSV_DELIMITER = ";"


#: Rows made and written at a time (each piece draws from its own seed, seed + its number).
PIECE_ROWS = 500_000


def trades(rows: int, seed: int = 7, first_row: int = 0) -> pa.Table:
    """`rows` trades from row `first_row` on."""
    rng = np.random.default_rng(seed)
    row = np.arange(first_row, first_row + rows)
    ts = START_US + (row // ROWS_PER_TICK) * 1_000  # one tick a millisecond

    def nullable(values: np.ndarray, share: float, type_: pa.DataType) -> pa.Array:
        return pa.array(values, type_, mask=rng.random(rows) < share)

    def category(choices, codes) -> pa.Array:
        return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(choices))

    instruments = [f"INS{i:04d}" for i in range(INSTRUMENTS)]
    return pa.table({
        "ts": pa.array(ts, pa.timestamp("us", tz="UTC")),
        "venue": category(VENUES, rng.integers(0, len(VENUES), rows)),
        "instrument": category(instruments, rng.zipf(1.3, rows) % INSTRUMENTS),
        "side": category(SIDES, rng.integers(0, 2, rows)),
        "trader": pa.array([f"trader-{t}" for t in rng.integers(0, TRADERS, rows)]),
        "price": pa.array(np.round(rng.lognormal(4, 0.5, rows), 4)),
        "qty": nullable(rng.integers(1, 10_000, rows), 0.05, pa.int64()),
        "level": nullable(rng.integers(0, 20, rows).astype(np.int32), 0.1, pa.int32()),
        "fee": nullable(rng.random(rows).astype(np.float32), 0.2, pa.float32()),
        "aggressive": pa.array(rng.random(rows) < 0.5),
        "trade_date": pa.array(ts // 86_400_000_000, pa.int32()).cast(pa.date32()),
    })  # fmt: skip


def write_example(path: Path, rows: int, seed: int = 7) -> None:
    """The trades table at `path`: Parquet or (by its suffix) CSV, written piece by piece (a
    10M-row table never sits in memory whole)."""
    import pyarrow.parquet as pq

    path = Path(path)
    starts = range(0, rows, PIECE_ROWS)
    with atomic_paths(path) as (tmp,), open(tmp, "wb") as fh:
        writer = None
        for i, start in enumerate(starts):
            table = trades(min(PIECE_ROWS, rows - start), seed + i, start)
            if path.suffix == ".csv":
                _write_csv(table, fh, header=i == 0)
                continue
            writer = writer or pq.ParquetWriter(fh, table.schema)
            writer.write_table(table, row_group_size=50_000)
        if writer is not None:
            writer.close()


def _write_csv(table: pa.Table, fh, header: bool) -> None:
    """As a spreadsheet export would: NA for null, ';' between fields, times without a zone."""
    import polars as pl

    frame = pl.from_arrow(table).with_columns(
        pl.col("ts").dt.replace_time_zone(None).dt.strftime("%Y-%m-%d %H:%M:%S.%6f")
    )
    frame.write_csv(fh, separator=CSV_DELIMITER, null_value=CSV_NULL, include_header=header)
