"""The method catalogue: one record per way of ingesting, and the grammar of a variant's name.

Everything that must know a method's properties or its code reads them here: the variant
matrix, the schema's enums, the generated docs and configs, the warm-up, own data's support, the
dtype matrix, the paced and delivery experiments. A test fails on method names used elsewhere.

It stays light (the Snakefile imports it at parse time): no client library, nothing of the
package.

May import: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Family = Literal["client", "server", "file", "sql"]
#: How a paced step flushes: an explicit flush per arrival, or the client's auto-flush by rows
#: (auto_flush_interval off) or by interval (auto_flush_rows off).
FlushMode = Literal["arrival", "rows", "interval"]
FLUSH_MODES: tuple[FlushMode, ...] = ("arrival", "rows", "interval")

LIBRARIES = ("pandas", "polars")
NO_LIBRARY = "none"  # the server reads the file, or the file's bytes are sent as they are
FORMATS = ("parquet", "csv", "ilp")
FRAME_FORMATS = ("parquet", "csv")  # what a dataframe library reads; ILP text is not among them
TRANSPORTS = ("http", "tcp")
SQL_TRANSPORT = "pg"
ALL_PHASES = "all"

#: A variant's name: `library-method-format-transport`, then a letter and value per setting the
#: method has, in this order (`pandas-threads-parquet-http-w2`, `...-tcp-farrival`): a backfill
#: variant's (w, b, c) in ingestbench.variants, a paced path's (f, p) in ingestbench.paced.names.
NAME_SUFFIXES = {"w": "workers", "b": "batch_rows", "c": "chunk_rows", "f": "flush",
                 "p": "producers"}  # fmt: skip


@dataclass(frozen=True)
class Method:
    """What the code, the schema, the docs and the configs know of one method."""

    name: str
    family: Family
    doc: str  # docs/methods.md's "what it does"
    phases: str  # docs/methods.md's "phases it fills"
    libraries: tuple[str, ...] = LIBRARIES
    formats: tuple[str, ...] = FRAME_FORMATS
    transports: tuple[str, ...] = TRANSPORTS
    #: `-wN`: N threads, processes or connections.
    workers: bool = False
    #: `-bK`: K rows per flush or statement, and K's default.
    batch_rows: int | None = None
    #: `-cN`: reads the file in chunks of N rows (client and SQL methods).
    chunked: bool = False
    #: Slow enough that `rows_cap` caps the rows it ingests.
    capped: bool = False
    #: Warms the server up with itself; otherwise with one `dataframe()` call.
    warms_up: bool = False
    #: Writes ILP protocol 2 itself (binary doubles): protocol version 1 is refused.
    protocol_2: bool = False
    #: Each worker runs the `dataframe` method's sender (its 1-worker point is `dataframe`).
    sender_pool: bool = False
    #: The server reads the file from its copy root (cairo.sql.copy.root).
    copy_root: bool = False
    server_features: tuple[str, ...] = ()  # server.versions' FEATURES: else unsupported, why
    #: Its class, under ingestbench.ingest.methods (`module.Class`), resolved by that package.
    implementation: str = ""
    #: docs/iot.md: how it loads two tables in one job.
    two_tables: str = ""
    #: configs/full.yaml: the values of its settings that the full cross product sweeps.
    sweep: tuple[tuple[str, tuple], ...] = ()
    #: Among the dtype matrix's client paths (it takes a frame in memory: `Method.send_frame`).
    dtype_matrix: bool = False
    #: Paced experiment: the flush modes it runs with (none: it cannot be paced).
    flush_modes: tuple[FlushMode, ...] = ()
    #: Why it cannot be paced, where it cannot.
    unpaced_reason: str | None = None
    #: Delivery experiment: how user code following the method's docs resends after a fault
    #: (None: not among the delivery paths).
    resend: str | None = None
    #: Delivery experiment: the transports it is tried over (the paths a user picks between).
    delivery_transports: tuple[str, ...] = ()
    #: Paced: its stream class; delivery: its resending loader (`module:name` in its module under
    #: ingestbench.ingest.methods); own data: the refusals of ingestbench.own.support that apply.
    paced: str = ""
    deliver: str = ""
    #: Delivery: a second rule for the transports it names, as a user can copy it (its text, the
    #: transports, its loader): the `-resume` paths.
    resume: str | None = None
    resume_transports: tuple[str, ...] = ()
    deliver_resume: str = ""
    own_refusals: tuple[str, ...] = ()


# docs/iot.md's "Loading two tables": what each method does with a dataset of two tables.
T_ROWS = (
    "one sender, `row()` per row of each table; a null tag or field is left out of the call "
    "(`row()` takes no null)"
)
T_FRAME = (
    "one sender; streamed, one chunk of each table in turn, each `dataframe()` call naming its "
    "table"
)
T_POOL = "each sender takes the next chunk, of either table, from the one stream"
T_VEC = "each connection encodes the next chunk with its table's encoder"
T_SERVER = "one import per table, one after the other"
T_FILE = "the one file, whose lines name their tables"
T_SQL = (
    "one PGWire connection; streamed, one chunk of each table in turn, each INSERT naming its "
    "table; a null is bound as NULL"
)
T_COPY = "unsupported: QuestDB takes no `COPY … FROM STDIN`"

_PACED_NOT = "the server reads a whole file: it has no arrivals to pace"

CATALOGUE: tuple[Method, ...] = (
    Method(
        "rows",
        "client",
        "Python loop calling `sender.row()` per row (pandas `itertuples`, polars `iter_rows`): "
        "the baseline of QuestDB's blog (capped by `rows_cap`)",
        "read, send, visible",
        chunked=True,
        capped=True,
        flush_modes=FLUSH_MODES,
        paced="loops:RowsStream",
        implementation="loops.Rows",
        two_tables=T_ROWS,
        dtype_matrix=True,
    ),
    Method(
        "iterrows",
        "client",
        "pandas only: `df.iterrows()` + `sender.row()`, the loop QuestDB's published pandas "
        "benchmark divides by (capped by `rows_cap` like `rows`)",
        "read, send, visible",
        libraries=("pandas",),
        chunked=True,
        capped=True,
        implementation="loops.Iterrows",
        two_tables=T_ROWS,
    ),
    Method(
        "dataframe",
        "client",
        "`sender.dataframe()` on each chunk (one call in whole-file mode); polars goes to pandas "
        "through Arrow (timed as convert; categories stay categories)",
        "read, convert, send, visible",
        chunked=True,
        warms_up=True,
        flush_modes=FLUSH_MODES,
        paced="frames:DataframeStream",
        resend=(
            "over HTTP: the client's own retries (`retry_timeout`), then the code catches the "
            "error and sends the failed batch again from its own copy (a failed flush clears "
            "the buffer); over TCP: nothing is acknowledged, so after an error it reconnects "
            "and resends from its last completed flush"
        ),
        implementation="frames.Dataframe",
        two_tables=T_FRAME,
        dtype_matrix=True,
        delivery_transports=("http", "tcp"),
        deliver="frames:deliver",
        resume=(
            "after a reconnect, wait for the table's WAL, read its latest timestamp and resend "
            "every row at or after it; after the last batch, close and wait until the table "
            "shows the last row's timestamp, and if its latest stands still below that, resend "
            "from it the same way (exact on a DEDUP table; without DEDUP the rows at that "
            "timestamp are sent twice)"
        ),
        resume_transports=("tcp",),
        deliver_resume="frames:deliver_resume",
    ),
    Method(
        "threads",
        "client",
        "N threads, each with its own sender (serialization releases the GIL). Streamed (the "
        "default): each takes the next chunk of one stream when it is free, so rows reach the "
        "server close to time order; whole-file (`chunk_rows: all`): contiguous row ranges, one "
        "per thread",
        ALL_PHASES,
        workers=True,
        chunked=True,
        warms_up=True,
        sender_pool=True,
        resend=(
            "each thread as `dataframe()` over HTTP: the client's retries, then the failed "
            "chunk sent again from the thread's own copy"
        ),
        implementation="parallel.Threads",
        two_tables=T_POOL,
        sweep=(("workers", (2, 4, 8)),),
        dtype_matrix=True,
        delivery_transports=("http",),
        deliver="parallel:deliver_threads",
    ),
    Method(
        "processes",
        "client",
        "N spawned processes, each with its own sender. Streamed: the parent reads and converts "
        "the chunks and queues them, each worker taking the next when it is free; whole-file: "
        "each worker reads its own row range of the file, and barriers keep the phases apart",
        ALL_PHASES,
        workers=True,
        chunked=True,
        warms_up=True,
        sender_pool=True,
        implementation="parallel.Processes",
        two_tables=T_POOL,
        sweep=(("workers", (2, 4, 8)),),
    ),
    Method(
        "batches",
        "client",
        "auto-flush off, an explicit `flush()` every K rows (buffered vs the auto-flush default "
        "of `dataframe`)",
        ALL_PHASES,
        batch_rows=10_000,
        chunked=True,
        warms_up=True,
        implementation="frames.Batches",
        two_tables=T_FRAME,
        sweep=(("batch_rows", (1_000, 10_000, 75_000)),),
    ),
    Method(
        "vectorized",
        "client",
        "the frame (pandas or polars, as Arrow) encoded into ILP column by column with Arrow, "
        "NumPy and one compiled loop instead of the client's cell-by-cell `dataframe()`, byte "
        "for byte the same lines, written to N raw connections (TCP socket or `/write` POSTs, "
        'as `ilp_file` does); see "Encoding ILP column by column"',
        "read, convert, send, visible",
        workers=True,
        chunked=True,
        warms_up=True,
        protocol_2=True,
        server_features=("ilp_protocol_2",),
        # No client buffer: a streaming user buffers the encoded arrivals by the same rules.
        flush_modes=FLUSH_MODES,
        paced="vectorized:VectorizedStream",
        resend=(
            "over TCP: nothing is acknowledged, so after an error it reconnects and resends "
            "from the last piece it finished writing"
        ),
        implementation="vectorized.Vectorized",
        two_tables=T_VEC,
        sweep=(("workers", (1, 2, 4)),),
        dtype_matrix=True,
        delivery_transports=("tcp",),
        deliver="vectorized:deliver",
    ),
    Method(
        "server_csv",
        "server",
        "QuestDB imports the CSV itself through `/imp` with the schema",
        "send, visible",
        libraries=(NO_LIBRARY,),
        formats=("csv",),
        transports=("http",),
        unpaced_reason=_PACED_NOT,
        implementation="server_side.ServerCsv",
        two_tables=T_SERVER,
    ),
    Method(
        "server_copy",
        "server",
        "QuestDB's parallel CSV import: the file is placed in the server's copy root (timed as "
        "read), then SQL `COPY … FROM` into the empty table; `send` ends when "
        "`sys.text_import_log` says it finished",
        "read, send, visible",
        libraries=(NO_LIBRARY,),
        formats=("csv",),
        transports=("http",),
        copy_root=True,
        own_refusals=("copy_time_columns",),
        unpaced_reason=_PACED_NOT,
        implementation="server_side.ServerCopy",
        two_tables=T_SERVER,
    ),
    Method(
        "server_parquet",
        "server",
        "the file is placed in the server's copy root (timed as read), then `INSERT INTO … "
        "SELECT * FROM read_parquet(…)`",
        "read, send, visible",
        libraries=(NO_LIBRARY,),
        formats=("parquet",),
        transports=("http",),
        copy_root=True,
        server_features=("read_parquet", "parquet_nanos"),
        unpaced_reason=_PACED_NOT,
        resend="the import statement sent again after an error",
        implementation="server_side.ServerParquet",
        two_tables=T_SERVER,
        delivery_transports=("http",),
        deliver="server_side:deliver",
        own_refusals=("one_file", "small_int_nulls", "uint32"),
    ),
    Method(
        "ilp_file",
        "file",
        "the dataset's ILP text file sent as it is, no library (`none`), format `ilp`, over TCP "
        "or HTTP with N connections: the wire ceiling "
        "([methodology.md](methodology.md#the-wire-ceiling))",
        "send, visible",
        libraries=(NO_LIBRARY,),
        formats=("ilp",),
        workers=True,
        own_refusals=("protocol_1",),
        unpaced_reason="it sends a whole file of ILP text: it has no arrivals to pace",
        implementation="ilp_file.IlpFile",
        two_tables=T_FILE,
        sweep=(("workers", (1, 2, 4)),),
    ),
    Method(
        "to_sql",
        "sql",
        "SQL over PGWire (transport `pg`): pandas `DataFrame.to_sql` through SQLAlchemy's "
        'PostgreSQL dialect on psycopg 3, appending (`if_exists="append"`) into the table '
        "every variant lands in, an `executemany` of a one-row INSERT every K rows (`chunksize`, "
        "`-bK`); capped by `rows_cap` like the row loops",
        "read, send, visible",
        libraries=("pandas",),
        transports=(SQL_TRANSPORT,),
        batch_rows=10_000,
        chunked=True,
        capped=True,
        warms_up=True,
        implementation="pgwire.ToSql",
        two_tables=T_SQL,
        dtype_matrix=True,
    ),
    Method(
        "to_sql_multi",
        "sql",
        '`to_sql` with `method="multi"`: one INSERT with the VALUES of K rows per statement '
        "(K = 1,000 by default: PGWire takes at most 65,535 bind parameters per statement)",
        "read, send, visible",
        libraries=("pandas",),
        transports=(SQL_TRANSPORT,),
        # One INSERT carries rows x columns bind parameters, and PGWire counts them in 16 bits
        # (at most 65,535), so 10,000 rows of 21 columns cannot go.
        batch_rows=1_000,
        chunked=True,
        capped=True,
        warms_up=True,
        implementation="pgwire.ToSqlMulti",
        two_tables=T_SQL,
    ),
    Method(
        "write_database",
        "sql",
        "polars only: `DataFrame.write_database` through the same SQLAlchemy engine "
        '(`if_table_exists="append"`; pandas\' `to_sql` beneath, K rows per `chunksize`)',
        "read, send, visible",
        libraries=("polars",),
        transports=(SQL_TRANSPORT,),
        batch_rows=10_000,
        chunked=True,
        capped=True,
        warms_up=True,
        implementation="pgwire.WriteDatabase",
        two_tables=T_SQL,
        dtype_matrix=True,
    ),
    Method(
        "executemany",
        "sql",
        "psycopg 3 without SQLAlchemy: a prepared INSERT, `cursor.executemany` over K rows "
        "(pipelined), one transaction per K rows; the rows from `itertuples`/`iter_rows`",
        "read, send, visible",
        transports=(SQL_TRANSPORT,),
        batch_rows=10_000,
        chunked=True,
        capped=True,
        warms_up=True,
        flush_modes=("arrival",),
        paced="pgwire:ExecutemanyStream",
        resend="the batch's transaction rolled back and sent again after an error",
        implementation="pgwire.Executemany",
        two_tables=T_SQL,
        dtype_matrix=True,
        delivery_transports=(SQL_TRANSPORT,),
        deliver="pgwire:deliver_executemany",
    ),
    Method(
        "asyncpg",
        "sql",
        "asyncpg: `executemany` of a prepared INSERT over K rows, one transaction each; binary "
        "parameters where psycopg sends text (the timestamp column's zone dropped first, as "
        "asyncpg binds a TIMESTAMP)",
        "read, convert, send, visible",
        transports=(SQL_TRANSPORT,),
        batch_rows=10_000,
        chunked=True,
        capped=True,
        warms_up=True,
        implementation="pgwire.Asyncpg",
        two_tables=T_SQL,
        dtype_matrix=True,
    ),
    Method(
        "psycopg_copy",
        "sql",
        "psycopg 3's `cursor.copy()` (`COPY … FROM STDIN`, PostgreSQL's fast path): tried once, "
        "`unsupported` with QuestDB's answer (it takes no COPY from the client)",
        "none",
        transports=(SQL_TRANSPORT,),
        batch_rows=10_000,
        chunked=True,
        capped=True,
        warms_up=True,
        implementation="pgwire.PsycopgCopy",
        two_tables=T_COPY,
        sweep=(("format", ("parquet",)),),  # unsupported: tried once
    ),
    Method(
        "adbc",
        "sql",
        'polars only: `write_database(engine="adbc")`, ADBC\'s PostgreSQL driver (`COPY … '
        "FROM STDIN`): tried once, `unsupported` with QuestDB's answer",
        "none",
        libraries=("polars",),
        transports=(SQL_TRANSPORT,),
        batch_rows=10_000,
        chunked=True,
        capped=True,
        warms_up=True,
        implementation="pgwire.Adbc",
        two_tables=T_COPY,
        sweep=(("format", ("parquet",)),),  # unsupported: tried once
    ),
)

METHODS: dict[str, Method] = {m.name: m for m in CATALOGUE}
METHOD_NAMES: tuple[str, ...] = tuple(METHODS)


def names(**where: object) -> tuple[str, ...]:
    """The methods whose fields equal `where`, in catalogue order: names(family="sql")."""
    return tuple(m.name for m in CATALOGUE if all(getattr(m, k) == v for k, v in where.items()))


def paced_names() -> tuple[str, ...]:
    """The methods the paced experiment can run."""
    return tuple(m.name for m in CATALOGUE if m.flush_modes)


def delivery_names() -> tuple[str, ...]:
    """The methods the delivery experiment runs, each with its resend rule."""
    return tuple(m.name for m in CATALOGUE if m.resend)
