"""The one DDL every variant lands in, and the SQL around it (create, wait, count)."""

from __future__ import annotations

import time

from ingestbench.server.process import QuestDB, QuestDBError
from ingestbench.tsbs.columns import (  # noqa: F401 (COLUMNS, FIELDS, TAGS: re-exported)
    COLUMNS,
    FIELDS,
    TAGS,
    TableSpec,
    cpu_spec,
)

_SQL_TYPES = {"double": "DOUBLE", "long": "LONG"}


def create_table_sql(
    table: str | TableSpec, field_type: str = "double", dedup: bool = False
) -> str:
    """SYMBOL tags, DOUBLE or LONG fields, designated timestamp, daily partitions, WAL; with
    `dedup`, upsert keys of the timestamp and every tag (a row sent again replaces its twin).
    `table` is a spec, or the name of a cpu table whose fields are all `field_type`."""
    spec = cpu_spec(field_type, table) if isinstance(table, str) else table
    cols = [f"{t} SYMBOL" for t in spec.tags]
    cols += [f"{f} {_SQL_TYPES[k]}" for f, k in zip(spec.fields, spec.kinds, strict=True)]
    ts = spec.timestamp
    cols.append(f"{ts} TIMESTAMP")
    sql = f"CREATE TABLE {spec.table} ({', '.join(cols)}) TIMESTAMP({ts}) PARTITION BY DAY WAL"
    return sql + (f" DEDUP UPSERT KEYS({', '.join((ts, *spec.tags))})" if dedup else "")


def recreate_table(
    qdb: QuestDB, table: str | TableSpec, field_type: str = "double", dedup: bool = False
) -> None:
    """A fresh, empty table. On an embedded server (no table prefix) whatever had the name is
    dropped; on an external one only a table this run created: one it did not is refused."""
    name = table if isinstance(table, str) else table.table
    if not qdb.table_prefix or name in qdb.created_tables:
        qdb.sql(f"DROP TABLE IF EXISTS {name}")
        qdb.sql(create_table_sql(table, field_type, dedup))
        return
    if qdb.rows(f"SELECT table_name FROM tables() WHERE table_name = '{name}'"):
        raise QuestDBError(
            f"a table named {name} exists already on QuestDB at {qdb.url}, and this run "
            f"touches no table it did not create; rename or drop it yourself, or set another "
            f"questdb.table_prefix, then rerun."
        )
    qdb.sql(create_table_sql(table, field_type, dedup))  # refused too if it appeared meanwhile
    qdb.created_tables.add(name)


def disk_bytes(qdb: QuestDB, table: str) -> int | None:
    """The table's size on disk as QuestDB reports it (`table_storage()`: partitions, symbol
    maps and WAL segments, with the space QuestDB preallocates); None where the server lacks it."""
    try:
        rows = qdb.rows(f"SELECT diskSize FROM table_storage() WHERE tableName = '{table}'")
    except QuestDBError:  # a server older than table_storage()
        return None
    return int(rows[0][0]) if rows and rows[0][0] is not None else None


def check_not_suspended(qdb: QuestDB, table: str) -> None:
    rows = qdb.rows(f"SELECT suspended, errorMessage FROM wal_tables() WHERE name = '{table}'")
    if rows and rows[0][0]:
        raise QuestDBError(
            f"QuestDB suspended the WAL of table {table} ({rows[0][1] or 'no message'}); the "
            f"ingested rows do not match the table, see the server log."
        )


#: How long the row count may stand still below what was sent before the rows count as lost.
STALL_S = 60.0


def wait_visible(qdb: QuestDB, table: str, expected_rows: int, stall_s: float | None = None) -> int:
    """Block until the WAL is applied and count() == expected_rows; return the count.

    Over ILP/TCP nothing acknowledges the rows, so they may still be arriving: poll, and give up
    only when the count has not moved for `stall_s` (the server dropped rows or the connection).
    """
    stall_s = STALL_S if stall_s is None else stall_s
    last, last_change = -1, time.monotonic()
    while True:
        qdb.sql(f"SELECT wait_wal_table('{table}')")
        check_not_suspended(qdb, table)
        count = int(qdb.scalar(f"SELECT count() FROM {table}"))
        if count == expected_rows:
            return count
        if count != last:
            last, last_change = count, time.monotonic()
        if count > expected_rows:
            raise QuestDBError(
                f"table {table} holds {count} rows but {expected_rows} were sent: "
                f"{count - expected_rows} rows are duplicated; see the server log, then rerun."
            )
        if time.monotonic() - last_change > stall_s:
            raise QuestDBError(
                f"table {table} holds {count} rows but {expected_rows} were sent: "
                f"{expected_rows - count} rows are missing (over ILP/TCP the server drops the "
                f"lines it cannot take without telling the client; its log names them), so "
                f"this run is no result: fix the data or the table, then rerun."
            )
        time.sleep(0.05)
