"""A cell's check: the table QuestDB made holds every row, each column of the expected type, and
every value equal to the frame's (seq, value and the designated timestamp), compared by DuckDB
on the table's Parquet export.

What a null becomes: QuestDB has no null BOOLEAN (pandas' bool has none either); a null
VARCHAR, SYMBOL, LONG and TIMESTAMP are NULL; a null DOUBLE is stored as NaN, which QuestDB
treats as its null, so the comparison reads NaN as NULL (the frame's NaN and null alike).
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa

from ingestbench.columnar.duckdb_sql import duck, sql_str
from ingestbench.dtypes.cases import ROWS, TS0_NS, Case
from ingestbench.server.handle import QuestDB, QuestDBError
from ingestbench.server.table import wait_visible
from ingestbench.validate.export import export_table

_EXPECTED_TYPE = {
    "string": pa.string(),
    "symbol": pa.string(),
    "long": pa.int64(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "timestamp": pa.int64(),  # epoch nanoseconds
}
#: The exported column as the expected one's DuckDB type.
_ACTUAL_SQL = {
    "string": "CAST(value AS VARCHAR)",
    "symbol": "CAST(value AS VARCHAR)",
    "long": "CAST(value AS BIGINT)",
    "double": "CASE WHEN isnan(value) THEN NULL ELSE CAST(value AS DOUBLE) END",
    "boolean": "CAST(value AS BOOLEAN)",
    "timestamp": "epoch_ns(value)",
}
#: The designated timestamp's type: microseconds, or nanoseconds when the client sends them.
DESIGNATED = ("TIMESTAMP", "TIMESTAMP_NS")
#: How long the row count may stand still below the frame's before the rows count as dropped:
#: long enough for a busy server to apply its WAL (3 s was not, on a slow shared host); no
#: cell of the reference matrix drops rows, so it costs nothing where the rows arrive.
STALL_S = 15.0


class CellMismatch(Exception):
    """The table QuestDB holds is not the frame that was sent."""


class RowsDropped(Exception):
    """Fewer rows arrived than were sent, with no error from the client (ILP over TCP)."""


def column_types(qdb: QuestDB, table: str) -> dict[str, str]:
    query = f"SELECT \"column\", type FROM table_columns('{table}')"
    return {name: kind for name, kind in qdb.rows(query)}


def _exists(qdb: QuestDB, table: str) -> bool:
    return bool(qdb.rows(f"SELECT table_name FROM tables() WHERE table_name = '{table}'"))


def _wait_rows(qdb: QuestDB, table: str) -> None:
    """Every row visible, or RowsDropped (CellMismatch for rows beyond the frame's). Over TCP
    the table may appear a moment after the client returns, or never when the server refused
    every line."""
    deadline = time.monotonic() + STALL_S
    while not _exists(qdb, table):
        if time.monotonic() > deadline:
            raise RowsDropped(f"none of the {ROWS} rows arrived")
        time.sleep(0.05)
    try:
        wait_visible(qdb, table, ROWS, stall_s=STALL_S)
    except QuestDBError:
        count = int(qdb.scalar(f"SELECT count() FROM {table}"))
        if count > ROWS:
            raise CellMismatch(f"the table holds {count} rows for the {ROWS} sent") from None
        if count == ROWS:
            raise
        raise RowsDropped(f"{ROWS - count} of {ROWS} rows never arrived") from None


def check_cell(qdb: QuestDB, table: str, case: Case, export: Path) -> None:
    """Return quietly when the table is the frame; raise RowsDropped or CellMismatch otherwise."""
    _wait_rows(qdb, table)
    types = column_types(qdb, table)
    # A table made by ILP names its designated timestamp `timestamp`, whatever the frame's.
    want = {"seq": ("LONG",), "value": (case.questdb_type,), "timestamp": DESIGNATED}
    wrong = {c: types.get(c) for c, t in want.items() if types.get(c) not in t}
    if wrong:
        found = ", ".join(
            f"{c} {t or 'missing'} (expected {' or '.join(want[c])})" for c, t in wrong.items()
        )
        raise CellMismatch(f"column types differ: {found}")
    export_table(qdb, table, export)
    expected = pa.table(
        {
            "seq": pa.array(range(ROWS), pa.int64()),
            "value": pa.array(list(case.values), _EXPECTED_TYPE[case.kind]),
            "ts": pa.array([TS0_NS + i * 1_000_000_000 for i in range(ROWS)], pa.int64()),
        }
    )
    with duck() as con:
        con.register("expected", expected)
        con.execute(
            f"CREATE VIEW actual AS SELECT CAST(seq AS BIGINT) AS seq, "
            f"{_ACTUAL_SQL[case.kind]} AS value, epoch_ns(timestamp) AS ts "
            f"FROM read_parquet({sql_str(export)})"
        )
        differ = con.execute(
            "SELECT e.seq, e.value, a.seq, a.value, e.ts = a.ts FROM expected e "
            "FULL OUTER JOIN actual a ON e.seq = a.seq "
            "WHERE a.seq IS NULL OR e.seq IS NULL OR e.value IS DISTINCT FROM a.value "
            "OR e.ts IS DISTINCT FROM a.ts ORDER BY coalesce(e.seq, a.seq)"
        ).fetchall()
    if differ:
        shown = "; ".join(
            f"seq {s if s is not None else s2}: sent {v!r}, stored {v2!r}"
            + ("" if same_ts in (True, None) else " (timestamp differs)")
            for s, v, s2, v2, same_ts in differ[:3]
        )
        raise CellMismatch(f"{len(differ)} of {ROWS} rows differ: {shown}")
