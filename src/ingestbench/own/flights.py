"""A string-heavy example table whose rows are not in time order (configs/sorted.yaml): flights.

Like an export grouped by a key: the rows come carrier by carrier, each carrier's flights in
time order, so from the second carrier on nearly every row arrives behind the running maximum
timestamp, spread over a year of partitions. Strings of every cardinality: carrier, origin and
destination as categories (symbols), tail numbers (thousands, with nulls) and booking
references (up to ~100k) as plain strings; nullable integer delays, a float with nulls, an
hourly timestamp many rows share. A seed fixes the rows. Written as Parquet or, by its suffix,
as the CSV pyarrow writes by default, one carrier at a time (memory stays at one carrier).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from ingestbench.storage.files import atomic_paths

CARRIERS = tuple(f"C{i:02d}" for i in range(16))
AIRPORTS = tuple(f"A{i:03d}" for i in range(120))
ORIGINS = AIRPORTS[:3]
TAILS = 4_000
BOOKINGS = 100_000
HOURS = 365 * 24
START_S = 1_356_998_400  # 2013-01-01T00:00:00Z


def carrier_rows(carrier: int, rows: int, seed: int) -> pa.Table:
    """One carrier's `rows` flights, in time order."""
    rng = np.random.default_rng(seed * 1_000 + carrier)
    hours = np.sort(rng.integers(0, HOURS, rows))
    ts = (START_S + hours * 3600) * 1_000_000

    def category(choices, codes) -> pa.Array:
        return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(choices))

    def nullable(values, share: float, type_: pa.DataType) -> pa.Array:
        return pa.array(values, type_, mask=rng.random(rows) < share)

    tails = np.char.add("N", rng.integers(0, TAILS, rows).astype(str))
    bookings = np.char.add("BK", rng.integers(0, BOOKINGS, rows).astype(str))
    return pa.table({
        "time_hour": pa.array(ts, pa.timestamp("us", tz="UTC")),
        "carrier": category(CARRIERS, np.full(rows, carrier)),
        "origin": category(ORIGINS, rng.integers(0, len(ORIGINS), rows)),
        "dest": category(AIRPORTS, rng.zipf(1.5, rows) % len(AIRPORTS)),
        "tailnum": nullable(tails, 0.02, pa.string()),
        "booking": pa.array(bookings, pa.string()),
        "flight": pa.array(rng.integers(1, 8_000, rows), pa.int32()),
        "dep_delay": nullable(rng.normal(10, 40, rows).astype(np.int32), 0.03, pa.int32()),
        "arr_delay": nullable(rng.normal(5, 45, rows).astype(np.int32), 0.03, pa.int32()),
        "air_time": nullable(rng.uniform(20, 600, rows), 0.03, pa.float64()),
        "distance": pa.array(rng.integers(80, 5_000, rows), pa.int64()),
    })  # fmt: skip


def write_flights(path: Path, rows: int, seed: int = 13) -> None:
    """The flights table at `path`, carrier after carrier: Parquet, or CSV by its suffix."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    path = Path(path)
    per = -(-rows // len(CARRIERS))
    with atomic_paths(path) as (tmp,), open(tmp, "wb") as fh:
        writer = None
        for i in range(len(CARRIERS)):
            n = min(per, rows - i * per)
            if n <= 0:
                break
            table = carrier_rows(i, n, seed)
            if path.suffix == ".csv":
                opts = pcsv.WriteOptions(include_header=writer is None)
                pcsv.write_csv(table.cast(_plain(table.schema)), fh, opts)
                writer = True
                continue
            writer = writer or pq.ParquetWriter(fh, table.schema)
            writer.write_table(table, row_group_size=100_000)
        if writer not in (None, True):
            writer.close()


def _plain(schema: pa.Schema) -> pa.Schema:
    """A CSV holds no dictionaries: the categories as plain strings."""
    return pa.schema([pa.field(f.name, pa.string()) if pa.types.is_dictionary(f.type) else f
                      for f in schema])  # fmt: skip
