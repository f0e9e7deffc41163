"""The ingested table exported as Parquet (QuestDB's `/exp`), for the row-level comparison."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import requests

from ingestbench.columnar.duckdb_sql import check_name, duck, sql_str
from ingestbench.server.handle import QuestDB, QuestDBError
from ingestbench.storage.files import atomic_path, temporary_path

log = logging.getLogger(__name__)


def export_table(
    qdb: QuestDB, table: str, path: Path, fmt: str = "parquet", piece_rows: int | None = None
) -> None:
    """The whole table as Parquet (GET /exp ... fmt=parquet), written atomically to `path`.

    QuestDB 9.3.4 exports Parquet directly: tags as strings, fields as double/int64 and the
    timestamp as timestamp[us, tz=UTC]. A server that refuses the Parquet format gets the CSV
    export converted to the same Parquet shape by DuckDB (`fmt="csv"` forces that path).

    With `piece_rows`, `path` is a directory of Parquet files of at most that many rows each
    (`LIMIT` windows over the table's timestamp order, one /exp call each), which the validation
    reads as one table: no single request has to carry a 100M-row table. The response is always
    streamed to disk, never held in memory.
    """
    t = check_name(table)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if piece_rows is None:
        rows = _export_piece(qdb, f"SELECT * FROM {t}", t, path, fmt)
        log.info("exported table %s (%d rows) to %s", t, rows, path)
        return
    total = int(qdb.scalar(f"SELECT count() FROM {t}"))
    tmp_dir = temporary_path(path)
    shutil.rmtree(tmp_dir, ignore_errors=True)
    tmp_dir.mkdir()
    try:
        starts = range(0, total, int(piece_rows)) if total else [0]
        for i, lo in enumerate(starts):
            hi = min(lo + int(piece_rows), total)
            # rows lo..hi-1 in the table's (timestamp) order; an empty table in one empty piece
            query = f"SELECT * FROM {t} LIMIT {lo},{hi}" if total else f"SELECT * FROM {t}"
            rows = _export_piece(qdb, query, t, tmp_dir / f"part-{i:05d}.parquet", fmt)
            if rows != hi - lo:
                raise QuestDBError(
                    f"the export of rows {lo}..{hi} of table {t} from {qdb.url} holds {rows} "
                    f"rows; the table changed while it was exported, or see the server log."
                )
        shutil.rmtree(path, ignore_errors=True)
        os.replace(tmp_dir, path)
        log.info("exported table %s (%d rows) to %s in %d piece(s)", t, total, path, len(starts))
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)


def export_tables(
    qdb: QuestDB, tables: dict[str, str], path: Path, piece_rows: int | None = None
) -> None:
    """Each table of `tables` (its directory's name: its name on the server) into a directory of
    `path`, all of them or none: a failure leaves no export to mistake for a whole one."""
    path = Path(path)
    staging = temporary_path(path)
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for name, table in tables.items():
            export_table(qdb, table, staging / name, piece_rows=piece_rows)
        shutil.rmtree(path, ignore_errors=True)
        os.replace(staging, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _export_piece(qdb: QuestDB, query: str, table: str, path: Path, fmt: str) -> int:
    """One /exp call into the Parquet file `path` (atomically); returns its rows."""
    with atomic_path(path) as tmp:
        tmp_csv = tmp.with_name(f"{tmp.name}.csv")
        try:
            return _export(qdb, query, table, fmt, tmp, tmp_csv)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp_csv.unlink()


def _export(qdb: QuestDB, query: str, t: str, fmt: str, tmp: Path, tmp_csv: Path) -> int:
    """Download the query into `tmp` (via `tmp_csv` for the CSV path); return its row count."""
    if not qdb.text_is_exact:
        _pg_to_parquet(qdb, query, t, tmp)
        fmt = "pg"
    elif fmt == "parquet" and not _download(qdb, query, "parquet", tmp):
        log.warning("QuestDB at %s refused the Parquet export; exporting CSV", qdb.url)
        fmt = "csv"
    if fmt == "csv":
        _download(qdb, query, "csv", tmp_csv)
        _csv_to_parquet(qdb, t, tmp_csv, tmp)
    import pyarrow.parquet as pq

    unreadable = f"the export of table {t} from {qdb.url} is not readable Parquet ({{error}}); "
    with _failing_as(Exception, unreadable + "see the server log."):  # any reader error
        return pq.read_metadata(tmp).num_rows


@contextlib.contextmanager
def _failing_as(errors: type[BaseException] | tuple[type[BaseException], ...], message: str):
    """An error of `errors` inside becomes QuestDBError(`message`), its `{error}` the error's
    text and `{kind}` its class: the one way an export fails, without the library's traceback."""
    try:
        yield
    except errors as exc:
        raise QuestDBError(message.format(error=exc, kind=type(exc).__name__)) from None


def _download(qdb: QuestDB, query: str, fmt: str, target: Path) -> bool:
    """Stream /exp into `target`; False if the server does not know the format (it refuses it,
    or, as QuestDB before 9.1 does, ignores `fmt` and sends CSV)."""
    params = {"query": query}
    if fmt != "csv":
        params["fmt"] = fmt
    broke = f"the export from QuestDB at {qdb.url} broke off ({{kind}}); check that the server "
    broke += "is running."
    with _failing_as(requests.RequestException, broke):
        with qdb.request("GET", "/exp", params=params, stream=True, timeout=600) as r:
            if r.status_code != 200:
                message = r.text[:300]
                if fmt != "csv" and "format" in message.lower():
                    return False
                raise QuestDBError(f"QuestDB refused to export `{query}` as {fmt}: {message}.")
            with open(target, "wb") as out:
                for chunk in r.iter_content(1 << 20):
                    out.write(chunk)
        if fmt == "parquet":
            with open(target, "rb") as written:
                if written.read(4) != b"PAR1":
                    return False
    return True


#: A column's type on the server as the export's Arrow type (what the Parquet export writes);
#: the rest are strings, a TIMESTAMP microseconds in UTC.
_ARROW_TYPES = {"DOUBLE": "float64", "FLOAT": "float32", "LONG": "int64", "INT": "int32",
                "SHORT": "int16", "BYTE": "int8", "BOOLEAN": "bool_"}  # fmt: skip
#: Rows fetched at a time: one batch of the Parquet file, so that no step holds the table.
PG_BATCH_ROWS = 100_000


def _pg_to_parquet(qdb: QuestDB, query: str, table: str, parquet: Path) -> None:
    """`query` read over PGWire in binary into `parquet`, in the Parquet export's shape. A server
    before 9.0.3 prints a DOUBLE with at most 12 decimals in its text (/exp), which would fail
    the row-for-row check of every exact value; its binary format carries the double itself."""
    import psycopg
    import pyarrow as pa
    import pyarrow.parquet as pq

    stamp = pa.timestamp("us", tz="UTC")
    columns = qdb.rows(f"SELECT \"column\", type FROM table_columns('{table}')")
    types = [stamp if ty == "TIMESTAMP" else getattr(pa, _ARROW_TYPES.get(ty, "string"))()
             for _, ty in columns]  # fmt: skip
    schema = pa.schema([pa.field(c, t) for (c, _), t in zip(columns, types, strict=True)])
    broke = f"the export over PGWire from QuestDB at {qdb.url} failed ({{error}}); see its log."
    with (
        _failing_as(psycopg.Error, broke),
        psycopg.connect(**qdb.pg_params()) as conn,
        conn.cursor(binary=True) as cur,
        pq.ParquetWriter(parquet, schema) as out,
    ):
        cur.execute(query)
        while batch := cur.fetchmany(PG_BATCH_ROWS):
            arrays = []
            for values, kind in zip(zip(*batch, strict=True), types, strict=True):
                arrays.append(
                    pa.array([_utc(v) for v in values] if kind == stamp else values, kind)
                )
            out.write_table(pa.Table.from_arrays(arrays, schema=schema))


def _utc(value: Any) -> Any:
    """A TIMESTAMP read over PGWire (a naive datetime, in UTC) as an aware one."""
    return value.replace(tzinfo=dt.UTC) if value is not None and value.tzinfo is None else value


def _csv_to_parquet(qdb: QuestDB, table: str, csv: Path, parquet: Path) -> None:
    duck_types = {"SYMBOL": "VARCHAR", "STRING": "VARCHAR", "VARCHAR": "VARCHAR",
                  "DOUBLE": "DOUBLE", "FLOAT": "FLOAT", "LONG": "BIGINT", "INT": "INTEGER",
                  "TIMESTAMP": "VARCHAR"}  # fmt: skip
    cols = qdb.rows(f"SELECT \"column\", type FROM table_columns('{table}')")
    columns = ", ".join(f"{sql_str(c)}: {sql_str(duck_types.get(ty, 'VARCHAR'))}" for c, ty in cols)
    select = ", ".join(
        f"CAST({c} AS TIMESTAMPTZ) AS {c}" if ty == "TIMESTAMP" else c for c, ty in cols
    )
    con = duck()
    try:
        con.execute(
            f"COPY (SELECT {select} FROM read_csv({sql_str(csv)}, header = true, "
            f"columns = {{{columns}}})) TO {sql_str(parquet)} (FORMAT parquet)"
        )
    finally:
        con.close()
