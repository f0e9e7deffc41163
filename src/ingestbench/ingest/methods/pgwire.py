"""SQL over PostgreSQL's wire protocol (transport `pg`): the path most users try first.

Every method INSERTs into the table the runner created (the DDL every variant lands in); none
lets its library create one (pandas and polars append, never replace). `batch_rows` is the rows
per call: to_sql's chunksize, one executemany and its transaction. Reading is streamed like the
client methods; connecting (and SQLAlchemy's first look at the server) is outside every phase;
there is no ILP, so no serialize pass.

`psycopg_copy` and `adbc` are the paths through `COPY ... FROM STDIN`, which QuestDB does not
take: they try once and end the job as unsupported, with what QuestDB answered; so does any SQL
method asked for TLS (questdb.tls) by a server that has none on PGWire.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

from ingestbench.columnar.arrow import is_polars
from ingestbench.ingest.methods.base import (
    Job,
    Method,
    SendError,
    Unsupported,
)
from ingestbench.ingest.methods.experiments import PacedStream, ResendLoad
from ingestbench.server.handle import QuestDB
from ingestbench.tables.spec import TableSpec

#: SQLAlchemy's PostgreSQL dialect over psycopg 3, taught QuestDB's table list (dialect below).
DIALECT = "postgresql+questdb_psycopg"


def insert_sql(table: str, columns: list[str], placeholder) -> str:
    marks = ", ".join(placeholder(i) for i in range(len(columns)))
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"


def bound_rows(frame) -> Iterator[tuple]:
    """The frame's rows as tuples of Python values, nulls as None (what a driver binds)."""
    if is_polars(frame):
        return frame.iter_rows()
    return (tuple(None if _null(v) else v for v in row)
            for row in frame.itertuples(index=False, name=None))  # fmt: skip


def _null(value) -> bool:
    # pandas' NA compares as NA (not a bool), so it is told by its type before any comparison;
    # NaN (not equal to itself) is a missing value of a string or category column too, which a
    # driver would send as a float (to a DOUBLE column it is QuestDB's null either way).
    return value is None or type(value).__name__ in ("NAType", "NaTType") or value != value


#: What libpq (psycopg) and asyncpg say when the server answers their SSLRequest with "N".
NO_TLS = ("server does not support SSL", "rejected SSL upgrade")


def _pg_errors() -> tuple[type[BaseException], ...]:
    import asyncpg
    import psycopg
    import sqlalchemy.exc

    return psycopg.Error, sqlalchemy.exc.DBAPIError, asyncpg.PostgresError, OSError


@contextlib.contextmanager
def pg_errors(job: Job, doing: str):
    """A driver's exception as one sentence naming the server's answer and the fix."""
    try:
        yield
    except _pg_errors() as exc:
        text = getattr(exc, "orig", None) or exc  # SQLAlchemy wraps the driver's error
        message = job.qdb.access.mask(" ".join(str(text).split()))[:400]
        if any(words in message for words in NO_TLS):
            raise Unsupported(
                f"QuestDB open source takes no TLS on PGWire: it answers the driver's SSLRequest "
                f"with no ({message})"
            ) from None
        raise SendError(
            f"{job.variant.name}: QuestDB refused the rows (PGWire at {job.qdb.host}:"
            f"{job.qdb.pg_port}) while {doing}: {message}; fix the data or the table (or "
            f"questdb.pg_port and auth.pg), see the logs, then rerun this job."
        ) from None


class SqlMethod(Method):
    """Read (streamed or whole), then INSERT each chunk over one connection."""

    def errors(self, job: Job, doing: str):
        return pg_errors(job, doing)

    def finish(self, conn) -> None:
        pass  # every statement has returned: nothing is held back

    def convert(self, frame):
        return frame  # the frame as the library read it: what a user hands to_sql

    def connected(self, job: Job) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def timed_serialize(self, job: Job, state: Any) -> tuple[None, float]:
        return None, 0.0  # no ILP involved


def questdb_dialect():
    """SQLAlchemy's PostgreSQL dialect over psycopg 3 with two of QuestDB's answers: the table
    list from tables() (QuestDB's pg_catalog takes no `relkind = ANY(ARRAY[...])`, which the
    stock has_table asks before to_sql appends), and no hstore lookup at connect (it runs in a
    SAVEPOINT, which QuestDB does not have)."""
    from sqlalchemy.dialects import registry
    from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg

    class QuestDBPsycopg(PGDialect_psycopg):
        supports_statement_cache = True  # as the stock dialect: the subclass changes no SQL

        def __init__(self, **kwargs):
            super().__init__(use_native_hstore=False, **kwargs)

        def has_table(self, connection, table_name, schema=None, **kw) -> bool:
            found = connection.exec_driver_sql(
                "SELECT table_name FROM tables() WHERE table_name = %(name)s",
                {"name": table_name},
            )
            return found.first() is not None

    registry.impls["postgresql.questdb_psycopg"] = lambda: QuestDBPsycopg
    return QuestDBPsycopg


@contextlib.contextmanager
def sqlalchemy_engine(qdb: QuestDB) -> Iterator[Any]:
    """An engine on the PGWire port, connected once (SQLAlchemy looks at the server then)."""
    import sqlalchemy

    questdb_dialect()
    p = qdb.pg_params()
    url = sqlalchemy.URL.create(DIALECT, p.pop("user"), p.pop("password"), p.pop("host"),
                                p.pop("port"), p.pop("dbname"), query=p)  # fmt: skip
    engine = sqlalchemy.create_engine(url)
    try:
        with engine.connect():
            pass
        yield engine
    finally:
        engine.dispose()


def psycopg_connect(qdb: QuestDB, **extra: Any) -> Any:
    """A psycopg 3 connection; `extra` adds libpq parameters (connect_timeout)."""
    import psycopg

    # prepare_threshold 0: the INSERT is prepared on its first use, not its sixth
    return psycopg.connect(prepare_threshold=0, **qdb.pg_params(), **extra)


@contextlib.contextmanager
def psycopg_connection(qdb: QuestDB, **extra: Any) -> Iterator[Any]:
    with psycopg_connect(qdb, **extra) as conn:
        yield conn


@contextlib.contextmanager
def asyncpg_connection(qdb: QuestDB) -> Iterator[tuple[asyncio.Runner, Any]]:
    """(an event loop, an asyncpg connection on it): the SQL calls run to completion each."""
    import asyncpg

    p = qdb.pg_params()
    kwargs = {"host": p["host"], "port": p["port"], "user": p["user"],
              "password": p["password"], "database": p["dbname"]}  # fmt: skip
    if "sslmode" in p:
        kwargs["ssl"] = qdb.access.ssl_context()
    with asyncio.Runner() as runner:
        conn = runner.run(asyncpg.connect(**kwargs))
        try:
            yield runner, conn
        finally:
            runner.run(conn.close())


def to_sql(engine, frame, table: str, batch_rows: int, how: str | None = None) -> None:
    """pandas' to_sql, appending: the table exists (never one of pandas' making)."""
    frame.to_sql(table, engine, if_exists="append", index=False, chunksize=batch_rows,
                 method=how)  # fmt: skip


def write_database(engine, frame, table: str, batch_rows: int) -> None:
    frame.write_database(table, engine, if_table_exists="append",
                         engine_options={"chunksize": batch_rows})  # fmt: skip


def executemany(conn, frame, table: str, batch_rows: int) -> None:
    """A prepared INSERT, executemany over `batch_rows` rows, one transaction each."""
    sql = insert_sql(table, list(frame.columns), lambda i: "%s")
    rows = list(bound_rows(frame))
    for start in range(0, len(rows), batch_rows):
        with conn.cursor() as cur:
            cur.executemany(sql, rows[start : start + batch_rows])
        conn.commit()


def naive_utc(frame):
    """The frame's zoned times as UTC without the zone: asyncpg binds a TIMESTAMP from a naive
    datetime, and refuses a zoned one."""
    if is_polars(frame):
        import polars as pl

        zoned = [n for n, t in frame.schema.items() if getattr(t, "time_zone", None)]
        return frame.with_columns(pl.col(zoned).dt.convert_time_zone("UTC")
                                  .dt.replace_time_zone(None))  # fmt: skip
    frame = frame.copy(deep=False)
    for name in frame.columns:
        if getattr(frame[name].dtype, "tz", None) is not None:
            frame[name] = frame[name].dt.tz_convert(None)
    return frame


def asyncpg_insert(held: tuple[asyncio.Runner, Any], frame, table: str, batch_rows: int) -> None:
    """asyncpg's executemany of a prepared INSERT over `batch_rows` rows, one transaction each
    (`frame` as naive_utc makes it)."""
    runner, conn = held
    sql = insert_sql(table, list(frame.columns), lambda i: f"${i + 1}")
    rows = [tuple(_py(v) for v in row) for row in bound_rows(frame)]

    async def insert() -> None:
        for start in range(0, len(rows), batch_rows):
            async with conn.transaction():
                await conn.executemany(sql, rows[start : start + batch_rows])

    runner.run(insert())


def _py(value):
    """A pandas Timestamp as the datetime asyncpg's codec takes (it rejects pandas' own type)."""
    return value.to_pydatetime() if type(value).__name__ == "Timestamp" else value


class ToSql(SqlMethod):
    """pandas `DataFrame.to_sql` through SQLAlchemy, appending `batch_rows` rows per
    executemany of a one-row INSERT (method None)."""

    how: str | None = None

    def connected(self, job: Job):
        return sqlalchemy_engine(job.qdb)

    def send(self, engine, frame, job: Job, spec: TableSpec) -> None:
        to_sql(engine, frame, spec.table, job.variant.batch_rows, self.how)


class ToSqlMulti(ToSql):
    """to_sql with method="multi": one INSERT of `batch_rows` rows' VALUES per statement."""

    how = "multi"


class WriteDatabase(ToSql):
    """polars `DataFrame.write_database` with its SQLAlchemy engine (pandas' to_sql beneath)."""

    def send(self, engine, frame, job: Job, spec: TableSpec) -> None:
        write_database(engine, frame, spec.table, job.variant.batch_rows)


class Executemany(SqlMethod):
    """psycopg 3: a prepared INSERT, `executemany` over `batch_rows` rows, one transaction each."""

    def connected(self, job: Job):
        return psycopg_connection(job.qdb)

    def send(self, conn, frame, job: Job, spec: TableSpec) -> None:
        executemany(conn, frame, spec.table, job.variant.batch_rows)


class Asyncpg(SqlMethod):
    """asyncpg: `executemany` of a prepared INSERT over `batch_rows` rows, one transaction
    each; binary parameters and a pipeline of binds, where psycopg sends text."""

    def connected(self, job: Job):
        return asyncpg_connection(job.qdb)

    def convert(self, frame):
        return naive_utc(frame)

    def send(self, held, frame, job: Job, spec: TableSpec) -> None:
        asyncpg_insert(held, frame, spec.table, job.variant.batch_rows)


class PsycopgCopy(SqlMethod):
    """psycopg 3's `cursor.copy()`: `COPY ... FROM STDIN`, the fast path on PostgreSQL."""

    def connected(self, job: Job):
        return psycopg_connection(job.qdb)

    def send(self, conn, frame, job: Job, spec: TableSpec) -> None:
        import psycopg

        columns = ", ".join(frame.columns)
        try:
            with conn.cursor() as cur, cur.copy(f"COPY {spec.table} ({columns}) FROM STDIN") as cp:
                for row in bound_rows(frame):
                    cp.write_row(row)
        except psycopg.ProgrammingError as exc:
            raise Unsupported(
                f"QuestDB answers COPY ... FROM STDIN as a finished command, without the "
                f"copy-in response a client streams rows into (psycopg: {exc})"
            ) from None


class Adbc(SqlMethod):
    """polars `write_database` with engine="adbc": ADBC's PostgreSQL driver (COPY FROM STDIN)."""

    @contextlib.contextmanager
    def connected(self, job: Job):
        p = job.qdb.pg_params()
        yield (f"postgresql://{p['user']}:{p['password']}@{p['host']}:{p['port']}/"
               f"{p['dbname']}")  # fmt: skip

    def send(self, uri, frame, job: Job, spec: TableSpec) -> None:
        from adbc_driver_manager import Error

        try:
            frame.write_database(spec.table, uri, if_table_exists="append", engine="adbc")
        except Error as exc:
            said = job.qdb.access.mask(" ".join(str(exc).split()))[:400]
            raise Unsupported(
                f"ADBC's PostgreSQL driver reads the server's type catalog on connecting (before "
                f"its COPY FROM STDIN), and QuestDB refuses that query: {said}"
            ) from None


class ExecutemanyStream(PacedStream):
    """Paced: psycopg 3, autocommit, `executemany` of a prepared INSERT over the arrival's rows
    (flush mode `arrival` only: every statement commits itself)."""

    def __init__(self, conn, spec: TableSpec, columns: list[str]):
        self.conn = conn
        self.sql = insert_sql(spec.table, columns, lambda i: "%s")

    @classmethod
    @contextlib.contextmanager
    def opened(cls, qdb, spec, transport, flush, protocol, columns):
        with psycopg_connection(qdb) as conn:
            conn.autocommit = True
            yield cls(conn, spec, columns)

    def send(self, arrival) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(self.sql, list(bound_rows(arrival)))

    def finish(self) -> None:
        """Nothing waits: every statement committed itself."""


def deliver_executemany(load: ResendLoad) -> None:
    """Delivery: a prepared INSERT, `executemany` per batch in a transaction of its own."""
    columns = list(load.spec.columns)
    sql = insert_sql(load.spec.table, columns, lambda i: "%s")
    conn = load.resender(lambda: psycopg_connect(load.qdb, connect_timeout=10), lambda c: c.close())
    try:
        for first, batch in load.batches():
            load.sending(first, len(batch))
            rows = list(bound_rows(batch[columns]))  # nulls as None, as the ingest method binds

            def action(c, rows=rows) -> None:
                with c.transaction(), c.cursor() as cur:
                    cur.executemany(sql, rows)

            conn.send(action)
    finally:
        conn.close()
