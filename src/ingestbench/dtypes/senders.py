"""The client paths of the dtype matrix, on a frame in memory, as the benchmark's methods take
their frames: over ILP `dataframe()` (polars through the workflow's `to_pandas`), `threads` (two
senders, a half each), `rows` (one `row()` call per row from the library's own row iterator) and
`vectorized` (the workflow's ILP encoder on the frame's Arrow batch, raw connections); over
PGWire (transport pg) `to_sql` (pandas), `write_database` (polars), psycopg's `executemany` and
asyncpg's, the benchmark's SQL methods.

Over ILP categorical columns are symbols, as `dataframe()` decides by default
(``symbols="auto"``), and the server makes the table. The SQL paths insert into a table made
first with the type the case expects, as every SQL variant of the benchmark does: what the cell
shows is whether the driver carries the dtype into that column.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from questdb import Sender

from ingestbench.columnar.arrow import to_pandas
from ingestbench.ingest.frames.encoder import IlpEncoder, as_record_batch
from ingestbench.ingest.methods import pgwire
from ingestbench.ingest.methods.base import row_ranges
from ingestbench.ingest.methods.ilp_file import CONNECTIONS
from ingestbench.server.process import QuestDB
from ingestbench.variants import SQL_METHOD_LIBRARY, SQL_TRANSPORT

AT = "ts"


def _conf(qdb: QuestDB, transport: str) -> str:
    return qdb.ilp_conf(transport, 2)


def dataframe(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    with Sender.from_conf(_conf(qdb, transport)) as sender:
        sender.dataframe(to_pandas(frame), table_name=table, at=AT)


def threads(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    parts = [frame[offset : offset + length] for offset, length in row_ranges(len(frame), 2)]
    with ThreadPoolExecutor(len(parts)) as pool:
        list(pool.map(lambda part: dataframe(qdb, transport, table, part, symbol), parts))


def rows(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    if type(frame).__module__.startswith("polars"):
        tuples = frame.iter_rows()
    else:
        tuples = frame.itertuples(index=False, name=None)
    with Sender.from_conf(_conf(qdb, transport)) as sender:
        for seq, value, at in tuples:
            sender.row(
                table,
                symbols={"value": value} if symbol else None,
                columns={"seq": seq} if symbol else {"seq": seq, "value": value},
                at=at,
            )


def vectorized(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    fields = ["seq"] if symbol else ["seq", "value"]
    encoder = IlpEncoder(table, ["value"] if symbol else [], fields, AT)
    data = encoder.encode(as_record_batch(frame))
    connection = CONNECTIONS[transport](qdb)
    try:
        connection.send(memoryview(data))
    finally:
        connection.close()


#: The designated timestamp's name in the table a SQL path inserts into: the name ILP gives it,
#: which the check reads.
SQL_AT = "timestamp"


def _sql_frame(frame: Any) -> Any:
    """The frame with its time column named as the table's (a user's frame matches its table)."""
    if type(frame).__module__.startswith("polars"):
        return frame.rename({AT: SQL_AT})
    return frame.rename(columns={AT: SQL_AT})


def to_sql(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    with pgwire.sqlalchemy_engine(qdb) as engine:
        pgwire.to_sql(engine, _sql_frame(frame), table, len(frame))


def write_database(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    with pgwire.sqlalchemy_engine(qdb) as engine:
        pgwire.write_database(engine, _sql_frame(frame), table, len(frame))


def executemany(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    with pgwire.psycopg_connection(qdb) as conn:
        pgwire.executemany(conn, _sql_frame(frame), table, len(frame))


def asyncpg(qdb: QuestDB, transport: str, table: str, frame: Any, symbol: bool) -> None:
    with pgwire.asyncpg_connection(qdb) as held:
        pgwire.asyncpg_insert(held, pgwire.naive_utc(_sql_frame(frame)), table, len(frame))


#: The matrix's methods, by the names the benchmark's variants use.
METHODS = {"dataframe": dataframe, "threads": threads, "rows": rows, "vectorized": vectorized,
           "to_sql": to_sql, "write_database": write_database, "executemany": executemany,
           "asyncpg": asyncpg}  # fmt: skip
#: The SQL paths: over PGWire only, into a table made first (`sql_table`), each in the library
#: it belongs to (ingestbench.variants).
SQL_METHODS = ("to_sql", "write_database", "executemany", "asyncpg")


def sql_table(qdb: QuestDB, table: str, questdb_type: str) -> None:
    """The table a SQL path inserts into: the case's column type, a designated timestamp."""
    qdb.sql(f"CREATE TABLE {table} (seq LONG, value {questdb_type}, {SQL_AT} TIMESTAMP) "
            f"TIMESTAMP({SQL_AT}) PARTITION BY DAY WAL")  # fmt: skip


def applies(method: str, transport: str, library: str) -> bool:
    """Whether the cell exists: ILP paths over http and tcp, SQL paths over pg in their library."""
    if method not in SQL_METHODS:
        return transport != SQL_TRANSPORT
    return transport == SQL_TRANSPORT and SQL_METHOD_LIBRARY.get(method, library) == library
