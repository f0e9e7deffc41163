"""The ingested table exported as Parquet (QuestDB's `/exp`), for the row-level comparison."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import requests

from ..files import atomic_path
from ..server import QuestDB, QuestDBError
from .sql import check_name, duck, sql_str

log = logging.getLogger(__name__)


def export_table(qdb: QuestDB, table: str, path: Path, fmt: str = "parquet") -> None:
    """The whole table as Parquet (GET /exp ... fmt=parquet), written atomically to `path`.

    QuestDB 9.3.4 exports Parquet directly: tags as strings, fields as double/int64 and the
    timestamp as timestamp[us, tz=UTC]. A server that refuses the Parquet format gets the CSV
    export converted to the same Parquet shape by DuckDB (`fmt="csv"` forces that path).
    """
    t = check_name(table)
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp_csv = tmp.with_name(f"{tmp.name}.csv")
        try:
            rows = _export(qdb, t, fmt, tmp, tmp_csv)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp_csv.unlink()
    log.info("exported table %s (%d rows) to %s", t, rows, path)


def _export(qdb: QuestDB, t: str, fmt: str, tmp: Path, tmp_csv: Path) -> int:
    """Download the table into `tmp` (via `tmp_csv` for the CSV path); return its row count."""
    if fmt == "parquet" and not _download(qdb, f"SELECT * FROM {t}", "parquet", tmp):
        log.warning("QuestDB at %s refused the Parquet export; exporting CSV", qdb.url)
        fmt = "csv"
    if fmt == "csv":
        _download(qdb, f"SELECT * FROM {t}", "csv", tmp_csv)
        _csv_to_parquet(qdb, t, tmp_csv, tmp)
    try:
        import pyarrow.parquet as pq

        rows = pq.read_metadata(tmp).num_rows
    except Exception as exc:  # noqa: BLE001 (any reader error means a broken export)
        raise QuestDBError(
            f"the export of table {t} from {qdb.url} is not readable Parquet ({exc}); see the "
            f"server log."
        ) from None
    return rows


def _download(qdb: QuestDB, query: str, fmt: str, target: Path) -> bool:
    """Stream /exp into `target`; False if the server does not know the format."""
    params = {"query": query}
    if fmt != "csv":
        params["fmt"] = fmt
    try:
        with requests.get(f"{qdb.url}/exp", params=params, stream=True, timeout=600) as r:
            if r.status_code != 200:
                message = r.text[:300]
                if fmt != "csv" and "format" in message.lower():
                    return False
                raise QuestDBError(f"QuestDB refused to export `{query}` as {fmt}: {message}.")
            with open(target, "wb") as out:
                for chunk in r.iter_content(1 << 20):
                    out.write(chunk)
    except requests.RequestException as exc:
        raise QuestDBError(
            f"the export from QuestDB at {qdb.url} broke off ({type(exc).__name__}); check that "
            f"the server is running."
        ) from None
    return True


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
