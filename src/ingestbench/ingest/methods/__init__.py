"""The ways to ingest: each method runs one repeat's timed phases against a real server.

`METHODS` below is the one registry. Adding a method: one subclass of `Method` (base.py) in the
module of its kind, its entry here, and its name in ingestbench.variants (which decides the
matrix without importing this package; a test checks the two agree).

Within ingest, may import: frames, timing, workers.
"""

from __future__ import annotations

from ingestbench.ingest.methods.base import (
    Job,
    Method,
    SendError,
    TablePart,
    Unsupported,
    client_errors,
    cpu_job,
    dataframe_into,
    read_whole,
)
from ingestbench.ingest.methods.frames import Batches, Dataframe
from ingestbench.ingest.methods.ilp_file import IlpFile
from ingestbench.ingest.methods.loops import Iterrows, Rows
from ingestbench.ingest.methods.parallel import Processes, Threads
from ingestbench.ingest.methods.pgwire import (
    Adbc,
    Asyncpg,
    Executemany,
    PsycopgCopy,
    ToSql,
    ToSqlMulti,
    WriteDatabase,
)
from ingestbench.ingest.methods.server_side import ServerCopy, ServerCsv, ServerParquet
from ingestbench.ingest.methods.vectorized import Vectorized
from ingestbench.ingest.timing import Clock

METHODS: dict[str, type[Method]] = {
    "rows": Rows,
    "iterrows": Iterrows,
    "dataframe": Dataframe,
    "batches": Batches,
    "threads": Threads,
    "processes": Processes,
    "server_csv": ServerCsv,
    "server_copy": ServerCopy,
    "server_parquet": ServerParquet,
    "ilp_file": IlpFile,
    "vectorized": Vectorized,
    "to_sql": ToSql,
    "to_sql_multi": ToSqlMulti,
    "write_database": WriteDatabase,
    "executemany": Executemany,
    "asyncpg": Asyncpg,
    "psycopg_copy": PsycopgCopy,
    "adbc": Adbc,
}

__all__ = [
    "METHODS",
    "Clock",
    "Job",
    "Method",
    "SendError",
    "TablePart",
    "Unsupported",
    "client_errors",
    "cpu_job",
    "dataframe_into",
    "read_whole",
]
