"""The one DDL every variant lands in, and the SQL around it (create, wait, count)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterable

from ingestbench.server.data_dir import FULL_DISK_BYTES
from ingestbench.server.handle import QuestDB, QuestDBError
from ingestbench.storage.disk import existing_ancestor
from ingestbench.tables.column_kinds import questdb_type
from ingestbench.tables.spec import TableSpec
from ingestbench.tsbs.columns import (  # noqa: F401 (COLUMNS, FIELDS, TAGS: re-exported)
    COLUMNS,
    FIELDS,
    TAGS,
    cpu_spec,
)


def create_table_sql(
    table: str | TableSpec, field_type: str = "double", dedup: bool = False
) -> str:
    """SYMBOL tags, DOUBLE or LONG fields, designated timestamp, the spec's partitions, WAL; with
    `dedup`, upsert keys of the timestamp and every tag (a row sent again replaces its twin).
    `table` is a spec, or the name of a cpu table whose fields are all `field_type`."""
    spec = cpu_spec(field_type, table) if isinstance(table, str) else table
    types = {t: "SYMBOL" for t in spec.tags}
    types |= {f: questdb_type(k) for f, k in zip(spec.fields, spec.kinds, strict=True)}
    ts = spec.timestamp
    types[ts] = "TIMESTAMP"
    # Own data keeps its file's column order (a CSV import maps columns by position).
    order = getattr(spec, "order", ()) or spec.columns
    cols = [f"{c} {types[c]}" for c in order]
    sql = (f"CREATE TABLE {spec.table} ({', '.join(cols)}) TIMESTAMP({ts}) "
           f"PARTITION BY {spec.partition_by} WAL")  # fmt: skip
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


class TableSuspended(QuestDBError):
    """QuestDB stopped applying a table's WAL (a full disk, too many open files, ...)."""


def _disk_full_fix(qdb: QuestDB) -> str:
    if qdb.data_dir is None:  # an external server: its disk is not ours to measure
        return "free space on the server's disk, then rerun"
    free = shutil.disk_usage(existing_ancestor(qdb.data_dir)).free
    return (f"the server's data directory {qdb.data_dir} is on a disk with {free / 2**20:,.0f} MiB "
            f"free: free space there or point TMPDIR at a bigger disk, then rerun")  # fmt: skip


def suspension_sentence(qdb: QuestDB, table: str, tag: str | None, message: str | None) -> str:
    """QuestDB's own errorTag and errorMessage, and the fix for the tag."""
    cause = f"{tag or 'no error tag'}: {(message or 'no message').strip()}"
    if (tag or "").upper() == "DISK FULL":
        fix = _disk_full_fix(qdb)
    else:
        fix = f"see {qdb.log_path or 'the server log'} for the cause, fix it, then rerun"
    return f"QuestDB suspended the WAL of table {table} ({cause}), its rows are not all in: {fix}."


def check_not_suspended(qdb: QuestDB, table: str) -> None:
    """Raise TableSuspended, with QuestDB's own cause, if the table's WAL is suspended."""
    try:
        rows = qdb.rows(
            f"SELECT suspended, errorTag, errorMessage FROM wal_tables() WHERE name = '{table}'"
        )
    except QuestDBError:  # a server older than errorTag (7.x: older than errorMessage too)
        try:
            query = f"SELECT suspended, errorMessage FROM wal_tables() WHERE name = '{table}'"
            rows = [[r[0], None, r[1]] for r in qdb.rows(query)]
        except QuestDBError:
            query = f"SELECT suspended FROM wal_tables() WHERE name = '{table}'"
            rows = [[r[0], None, None] for r in qdb.rows(query)]
    if rows and rows[0][0]:
        raise TableSuspended(suspension_sentence(qdb, table, rows[0][1], rows[0][2]))


class ServerDiskFull(QuestDBError):
    """The disk under an embedded server's data directory is full."""


def raise_send_cause(qdb: QuestDB, tables: Iterable[str]) -> None:
    """After a failed send, the cause behind it if the server knows one: a table whose WAL is
    suspended (TableSuspended), or, for an embedded server, a full disk under its data (the
    write into the WAL fails before a WAL apply suspends the table). Nothing otherwise, or if the
    server is gone: the send's own error then says so."""
    for table in tables:
        try:
            check_not_suspended(qdb, table)
        except TableSuspended:
            raise
        except QuestDBError:
            break
    if qdb.data_dir is not None and qdb.data_dir.exists():
        free = shutil.disk_usage(qdb.data_dir).free
        if free < FULL_DISK_BYTES:
            raise ServerDiskFull(
                f"QuestDB could not write the rows: the disk of its data directory "
                f"{qdb.data_dir} is full ({free / 2**20:,.0f} MiB free): free space there or point "
                f"TMPDIR at a bigger disk, then rerun."
            )


def wait_wal(qdb: QuestDB, table: str) -> None:
    """`wait_wal_table`, but a suspended table is told by its cause: wait_wal_table itself says
    only "table is suspended"."""
    check_not_suspended(qdb, table)
    try:
        qdb.sql(f"SELECT wait_wal_table('{table}')")
    except QuestDBError as exc:
        check_not_suspended(qdb, table)
        if "unknown function name: wait_wal_table" not in str(exc):
            raise
        _poll_wal(qdb, table)  # QuestDB 7.x has no wait_wal_table (server.versions)


def _poll_wal(qdb: QuestDB, table: str, timeout_s: float = 600.0) -> None:
    """Wait until the table's writer has applied every WAL transaction of its sequencer."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        check_not_suspended(qdb, table)
        body = qdb.sql(f"SELECT writerTxn, sequencerTxn FROM wal_tables() WHERE name = '{table}'")
        rows = body.get("dataset") or []
        if rows and rows[0][0] >= rows[0][1]:
            return
        time.sleep(0.05)
    raise QuestDBError(f"the WAL of table {table} was not applied within {timeout_s:.0f} s")


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
        wait_wal(qdb, table)
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
