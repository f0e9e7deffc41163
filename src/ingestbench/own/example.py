"""A small realistic table to try own data on (config.own.yaml): trades, not TSBS.

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

from ingestbench.files import atomic_paths

VENUES = ("XLON", "XPAR", "XETR", "XNYS")
SIDES = ("buy", "sell")
INSTRUMENTS = 300
TRADERS = 5_000
ROWS_PER_TICK = 40
START_US = 1_735_689_600_000_000  # 2025-01-01T00:00:00Z
CSV_NULL = "NA"
CSV_DELIMITER = ";"


def trades(rows: int, seed: int = 7) -> pa.Table:
    rng = np.random.default_rng(seed)
    ts = START_US + (np.arange(rows) // ROWS_PER_TICK) * 1_000  # one tick a millisecond

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
        "level": nullable(rng.integers(0, 20, rows).astype(np.int16), 0.1, pa.int16()),
        "fee": nullable(rng.random(rows).astype(np.float32), 0.2, pa.float32()),
        "aggressive": pa.array(rng.random(rows) < 0.5),
        "trade_date": pa.array(ts // 86_400_000_000, pa.int32()).cast(pa.date32()),
    })  # fmt: skip


def write_example(path: Path, rows: int, seed: int = 7) -> None:
    """The trades table at `path`: Parquet or (by its suffix) CSV."""
    table = trades(rows, seed)
    path = Path(path)
    with atomic_paths(path) as (tmp,):
        if path.suffix == ".csv":
            _write_csv(table, tmp)
        else:
            import pyarrow.parquet as pq

            pq.write_table(table, tmp, row_group_size=50_000)


def _write_csv(table: pa.Table, path: Path) -> None:
    """As a spreadsheet export would: NA for null, ';' between fields, times without a zone."""
    import polars as pl

    frame = pl.from_arrow(table).with_columns(
        pl.col("ts").dt.replace_time_zone(None).dt.strftime("%Y-%m-%d %H:%M:%S.%6f")
    )
    frame.write_csv(path, separator=CSV_DELIMITER, null_value=CSV_NULL)
