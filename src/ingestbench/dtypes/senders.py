"""The client paths of the dtype matrix: each a method of the benchmark (ingestbench.catalogue's
`dtype_matrix`), sending a case's frame held in memory as it sends a chunk (`Method.send_frame`):
over ILP `dataframe()`, `threads`, `rows` and `vectorized`; over PGWire (transport pg) the SQL
methods, each in the library it belongs to.

Over ILP a category column is a symbol, as the benchmark's methods send a table's tags, and the
server makes the table. The SQL paths insert into a table made first with the type the case
expects, as every SQL variant of the benchmark does: what the cell shows is whether the driver
carries the dtype into that column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ingestbench import catalogue
from ingestbench.columnar.arrow import is_polars
from ingestbench.ingest.methods import METHODS as CLASSES
from ingestbench.ingest.methods import Job
from ingestbench.server.handle import QuestDB
from ingestbench.tables.spec import TableSpec
from ingestbench.variants import make_variant

AT = "ts"
#: The matrix's methods, by the names the benchmark's variants use.
METHODS = catalogue.names(dtype_matrix=True)
#: The SQL paths: over PGWire only, into a table made first (`sql_table`).
SQL_METHODS = tuple(m for m in METHODS if catalogue.METHODS[m].family == "sql")
#: The designated timestamp's name in the table a SQL path inserts into: the name ILP gives it,
#: which the check reads.
SQL_AT = "timestamp"


def _renamed(frame: Any, names: dict[str, str]) -> Any:
    if is_polars(frame):
        return frame.rename(names)
    return frame.rename(columns=names)


def _ordered(frame: Any, columns: tuple[str, ...]) -> Any:
    """The frame's columns in the table's order (tags, fields, timestamp), as a user's frame
    matches its table."""
    if is_polars(frame):
        return frame.select(list(columns))
    return frame[list(columns)]


def send(qdb: QuestDB, method: str, transport: str, table: str, frame: Any, symbol: bool) -> None:
    """The case's frame (columns seq, value, ts) into `table` by the benchmark's `method`."""
    library = "polars" if is_polars(frame) else "pandas"
    variant = make_variant(library, method, "parquet", transport, batch_rows=max(len(frame), 1))
    if method in SQL_METHODS:
        spec = TableSpec(table, (), ("seq", "value"), ("long", "long"), SQL_AT)
        frame = _renamed(frame, {AT: SQL_AT})
    else:
        tags, fields = (("value",), ("seq",)) if symbol else ((), ("seq", "value"))
        spec = TableSpec(table, tags, fields, ("long",) * len(fields), AT, nullable=True)
        frame = _ordered(frame, spec.columns)
    job = Job(qdb, variant, Path(), ())
    CLASSES[method]().send_frame(job, spec, frame)


def sql_table(qdb: QuestDB, table: str, questdb_type: str) -> None:
    """The table a SQL path inserts into: the case's column type, a designated timestamp."""
    qdb.sql(f"CREATE TABLE {table} (seq LONG, value {questdb_type}, {SQL_AT} TIMESTAMP) "
            f"TIMESTAMP({SQL_AT}) PARTITION BY DAY WAL")  # fmt: skip


def applies(method: str, transport: str, library: str) -> bool:
    """Whether the cell exists: the method offers the transport in the case's library."""
    record = catalogue.METHODS[method]
    return transport in record.transports and library in record.libraries
