"""The dtype matrix's cases: one column dtype of pandas or polars each, with nulls where the dtype
has them and the values a real frame holds (spaces, commas, quotes, non-ASCII, big integers,
sub-microsecond times), and what QuestDB should store for them.

A case's frame is ``seq`` (int64, the row's number and the key the check joins on; never null,
so no row is all nulls, which the client refuses), ``value`` (the dtype under test) and ``ts``
(the designated timestamp, datetime64[ns] UTC, one second apart).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: How a stored value is compared: the DuckDB type of the expected column (see check.py).
KINDS = ("string", "symbol", "long", "double", "boolean", "timestamp")

STRINGS = ("plain", None, "with space", "comma,equals=", 'quote"back\\slash', "é ✓ 日本", "x", "")
SYMBOLS = ("a", None, "b c", "a", "x,y=z", "é", "b c", "a")
LONGS = (1, None, -3, 2**62, -(2**62), 0, 42, 7)
DOUBLES = (1.5, None, -3.25, 1e300, 5e-324, 0.1, 42.0, -0.5)
BOOLS = (True, False, True, True, False, False, True, False)
_T0_NS = 1_700_000_000_000_000_000  # 2023-11-14T22:13:20Z
# Nanosecond times keep their last digits; the coarser units' values are exact in them.
TIMES_NS = tuple(
    None if d is None else _T0_NS + d
    for d in (123_456_789, None, 1, 86_400_000_000_999, 0, 7, 999_999_999, 5)
)
TIMES_US = tuple(None if t is None else t // 1_000 * 1_000 for t in TIMES_NS)
TIMES_MS = tuple(None if t is None else t // 1_000_000 * 1_000_000 for t in TIMES_NS)
#: Dates, each expected as the time at midnight UTC (what the workflow's readers send for one).
DATES = tuple(
    None if d is None else dt.date.fromisoformat(d)
    for d in ("2024-01-01", None, "1970-01-01", "2000-02-29", "2099-12-31", "2024-06-30",
              "1999-12-31", "2038-01-19")
)  # fmt: skip
MIDNIGHTS_NS = tuple(
    None if d is None else (d - dt.date(1970, 1, 1)).days * 86_400 * 10**9 for d in DATES
)
ROWS = len(STRINGS)
TS0_NS = 1_704_067_200_000_000_000  # the designated timestamps: 2024-01-01T00:00:00Z + seq s


@dataclass(frozen=True)
class Case:
    library: str  # pandas | polars
    dtype: str  # as the library spells it
    kind: str  # one of KINDS
    questdb_type: str  # the column type QuestDB should create for it
    values: tuple  # the column's values; None is a null (NaN, NA, NaT, null)
    column: Callable[[Sequence[Any]], Any]  # the values as the library's column of this dtype

    @property
    def name(self) -> str:
        return f"{self.library} {self.dtype}"

    def frame(self) -> Any:
        """The case's frame: seq, value, ts."""
        seq = np.arange(ROWS, dtype=np.int64)
        ts = np.arange(ROWS, dtype=np.int64) * 1_000_000_000 + TS0_NS
        if self.library == "pandas":
            import pandas as pd

            return pd.DataFrame(
                {
                    "seq": seq,
                    "value": self.column(self.values),
                    "ts": pd.to_datetime(ts, unit="ns", utc=True),
                }
            )
        import polars as pl

        return pl.DataFrame(
            {
                "seq": seq,
                "value": self.column(self.values),
                "ts": pl.Series(ts).cast(pl.Datetime("ns", "UTC")),
            }
        )


def _pandas(dtype: str) -> Callable[[Sequence[Any]], Any]:
    def column(values):
        import pandas as pd

        return pd.Series(list(values), dtype=dtype)

    return column


def _pandas_float(values):
    import pandas as pd

    return pd.Series([np.nan if v is None else v for v in values], dtype="float64")


def _pandas_arrow_dictionary(values):
    import pandas as pd
    import pyarrow as pa

    array = pa.array(list(values), pa.string()).dictionary_encode()
    return pd.Series(array, dtype=pd.ArrowDtype(array.type))


def _pandas_times(unit: str, tz: str | None = None) -> Callable[[Sequence[Any]], Any]:
    def column(values):
        import pandas as pd

        ns = pd.array([pd.NaT if v is None else pd.Timestamp(v, unit="ns") for v in values])
        series = pd.Series(ns, dtype="datetime64[ns]").astype(f"datetime64[{unit}]")
        if tz is not None:  # the same instants, seen from another zone
            series = series.dt.tz_localize("UTC").dt.tz_convert(tz)
        return series

    return column


def _pandas_dates(values):
    import pandas as pd

    return pd.Series(list(DATES), dtype=object)


def _pandas_arrow_dates(values):
    import pandas as pd
    import pyarrow as pa

    return pd.Series(pa.array(list(DATES), pa.date32()), dtype=pd.ArrowDtype(pa.date32()))


def _polars(dtype_of: Callable[[], Any]) -> Callable[[Sequence[Any]], Any]:
    def column(values):
        import polars as pl

        return pl.Series(list(values), dtype=dtype_of())

    return column


def _polars_times(unit: str, tz: str | None = None) -> Callable[[Sequence[Any]], Any]:
    def column(values):
        import polars as pl

        series = pl.Series(list(values), dtype=pl.Int64).cast(pl.Datetime("ns", "UTC"))
        series = series.dt.cast_time_unit(unit)
        return series.dt.convert_time_zone(tz) if tz else series.dt.replace_time_zone(None)

    return column


def _polars_dates():
    import polars as pl

    return pl.Series(list(DATES), dtype=pl.Date)


def _pl(name: str, *args: Any) -> Callable[[], Any]:
    def dtype():
        import polars as pl

        return getattr(pl, name)(*args) if args else getattr(pl, name)

    return dtype


CASES: tuple[Case, ...] = (
    Case("pandas", "object (str)", "string", "VARCHAR", STRINGS, _pandas("object")),
    Case("pandas", "str (pandas 3 default)", "string", "VARCHAR", STRINGS, _pandas("str")),
    Case("pandas", "string[pyarrow]", "string", "VARCHAR", STRINGS, _pandas("string[pyarrow]")),
    Case("pandas", "category", "symbol", "SYMBOL", SYMBOLS, _pandas("category")),
    Case(
        "pandas",
        "ArrowDtype(dictionary)",
        "symbol",
        "SYMBOL",
        SYMBOLS,
        _pandas_arrow_dictionary,
    ),
    Case("pandas", "Int64 (with NA)", "long", "LONG", LONGS, _pandas("Int64")),
    Case("pandas", "float64 (with NaN)", "double", "DOUBLE", DOUBLES, _pandas_float),
    Case("pandas", "bool", "boolean", "BOOLEAN", BOOLS, _pandas("bool")),
    Case("pandas", "datetime64[ns]", "timestamp", "TIMESTAMP_NS", TIMES_NS, _pandas_times("ns")),
    Case("pandas", "datetime64[us]", "timestamp", "TIMESTAMP", TIMES_US, _pandas_times("us")),
    Case("pandas", "datetime64[ms]", "timestamp", "TIMESTAMP", TIMES_MS, _pandas_times("ms")),
    Case(
        "pandas",
        "datetime64[ns, Europe/Paris]",
        "timestamp",
        "TIMESTAMP_NS",
        TIMES_NS,
        _pandas_times("ns", "Europe/Paris"),
    ),
    # pandas has no datetime64[D] (it refuses the dtype): a date column is date objects or Arrow's.
    Case("pandas", "date (object)", "timestamp", "TIMESTAMP", MIDNIGHTS_NS, _pandas_dates),
    Case(
        "pandas", "ArrowDtype(date32)", "timestamp", "TIMESTAMP", MIDNIGHTS_NS, _pandas_arrow_dates
    ),
    Case("polars", "String", "string", "VARCHAR", STRINGS, _polars(_pl("String"))),
    Case("polars", "Categorical", "symbol", "SYMBOL", SYMBOLS, _polars(_pl("Categorical"))),
    Case(
        "polars",
        "Enum",
        "symbol",
        "SYMBOL",
        SYMBOLS,
        _polars(_pl("Enum", sorted({s for s in SYMBOLS if s is not None}))),
    ),
    Case("polars", "Int64 (with null)", "long", "LONG", LONGS, _polars(_pl("Int64"))),
    Case(
        "polars",
        "Int32 (with null)",
        "long",
        "LONG",
        (1, None, -3, 2**31 - 1, -(2**31), 0, 42, 7),
        _polars(_pl("Int32")),
    ),  # fmt: skip
    Case("polars", "Float64 (with null)", "double", "DOUBLE", DOUBLES, _polars(_pl("Float64"))),
    Case("polars", "Datetime(us)", "timestamp", "TIMESTAMP", TIMES_US, _polars_times("us")),
    Case("polars", "Datetime(ns)", "timestamp", "TIMESTAMP_NS", TIMES_NS, _polars_times("ns")),
    Case(
        "polars",
        "Datetime(us, Asia/Tokyo)",
        "timestamp",
        "TIMESTAMP",
        TIMES_US,
        _polars_times("us", "Asia/Tokyo"),
    ),
    Case("polars", "Date", "timestamp", "TIMESTAMP", MIDNIGHTS_NS, lambda _: _polars_dates()),
    Case(
        "polars",
        "Datetime(ns, UTC)",
        "timestamp",
        "TIMESTAMP_NS",
        TIMES_NS,
        _polars_times("ns", "UTC"),
    ),
)


def listing(config: dict[str, Any]) -> list[str]:
    """What `ingestbench variants` says of the dtype matrix: its cases and the paths they take."""
    options = config["dtype_matrix"]
    cases = [c.name for c in CASES if c.library in options["libraries"]]
    return [f"{len(cases)} cases through {', '.join(options['methods'])} over "
            f"{', '.join(options['transports'])} (make run-dtypes):", *cases]  # fmt: skip
