"""DuckDB connections, SQL quoting, the relations over a dataset's files and the timestamp rule:
shared by the validation steps and the counts of a user's own file (ingestbench.own.manifest).

Timestamps are compared as epoch microseconds in UTC, and shown as ISO strings with microsecond
precision ("2016-01-01T00:00:00.000000Z", QuestDB's own format), so a unit mix-up (microseconds
read as nanoseconds lands in January 1970) shows as it is.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from ingestbench.errors import UserError

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def iso_us(epoch_us: int | None) -> str | None:
    """Epoch microseconds as an ISO string in UTC with microsecond precision (QuestDB's format)."""
    if epoch_us is None:
        return None
    return (_EPOCH + timedelta(microseconds=int(epoch_us))).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def sql_str(value: str | Path) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def ident(name: str) -> str:
    """A column name quoted for DuckDB, and QuestDB alike (a user's column may be a keyword)."""
    return '"' + name.replace('"', '""') + '"'


def check_name(table: str) -> str:
    if not _NAME.match(table):
        raise UserError(
            f"table name {table!r} is not a plain SQL identifier; fix `table` in config."
        )
    return table


def number(value: Any) -> int | float | None:
    """JSON-safe number: ints stay ints (LONG fields, HUGEINT sums), everything else float."""
    if value is None:
        return None
    if isinstance(value, int):
        return value
    return float(value)


def epoch_us(column: str, sql_type: str) -> str:
    """DuckDB SQL: a timestamp column of any unit or zone as epoch microseconds (UTC).

    Nanoseconds are floored to microseconds, as QuestDB stores a nanosecond ILP timestamp in a
    TIMESTAMP column; other units and zones go through DuckDB's own conversion.
    """
    t = sql_type.upper()
    if t.endswith("_NS"):
        ns = f"epoch_ns({column})"
        return f"(({ns} - ((({ns} % 1000) + 1000) % 1000)) // 1000)"
    if t.startswith("TIMESTAMP") and ("TZ" in t or "TIME ZONE" in t):
        return f"epoch_us(CAST({column} AS TIMESTAMPTZ))"
    if t.startswith("TIMESTAMP") or t == "DATE":
        return f"epoch_us(CAST({column} AS TIMESTAMP))"
    return f"CAST({column} AS BIGINT)"  # an integer column: micros, as QuestDB stores them


def is_integer_type(sql_type: str) -> bool:
    t = sql_type.upper()
    return any(k in t for k in ("INT", "LONG", "SHORT", "BYTE")) and "INTERVAL" not in t


def duck(
    memory_limit: str | None = None, spill_dir: Path | None = None
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection; with a memory limit it spills to `spill_dir` instead of growing."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    # Its progress bar would spill into logs and benchmark output (it draws on any terminal).
    con.execute("SET enable_progress_bar = false")
    if memory_limit:
        con.execute(f"SET memory_limit = {sql_str(memory_limit)}")
        con.execute("SET preserve_insertion_order = false")  # lets big scans stream
    if spill_dir:
        con.execute(f"SET temp_directory = {sql_str(spill_dir)}")
    return con


@contextlib.contextmanager
def duckdb_limits(memory_limit: str | None, spill_root: Path | None) -> Iterator[dict[str, Any]]:
    """`duck` keyword arguments for one job: its own spill directory, removed afterwards."""
    if spill_root is None:
        yield {"memory_limit": memory_limit}
        return
    Path(spill_root).mkdir(parents=True, exist_ok=True)
    spill = Path(tempfile.mkdtemp(prefix="validate-", dir=spill_root))
    try:
        yield {"memory_limit": memory_limit, "spill_dir": spill}
    finally:
        shutil.rmtree(spill, ignore_errors=True)


def export_relation(path: Path) -> str:
    """DuckDB SQL reading an export: one Parquet file, or every piece of an export directory."""
    path = Path(path)
    return f"read_parquet({sql_str(path / '*.parquet' if path.is_dir() else path)})"


def source_relation(parquet: Path, limit: int | None) -> str:
    """SQL for the dataset rows, or its first `limit` rows in file order."""
    if limit is None:
        return f"read_parquet({sql_str(parquet)})"
    return (
        f"(SELECT * EXCLUDE (file_row_number) FROM read_parquet({sql_str(parquet)}, "
        f"file_row_number = true) WHERE file_row_number < {int(limit)})"
    )


def _duck_type(arrow: str) -> str:
    """The DuckDB type a CSV column is read as, from the Arrow type the clients read it as."""
    if arrow.startswith("timestamp["):
        return "TIMESTAMPTZ" if "tz=" in arrow else "TIMESTAMP"
    if arrow.startswith(("dictionary", "string", "large_string")):
        return "VARCHAR"
    known = {"bool": "BOOLEAN", "int64": "BIGINT", "int32": "INTEGER", "double": "DOUBLE",
             "float": "FLOAT", "date32[day]": "DATE"}  # fmt: skip
    return known.get(arrow, "VARCHAR")


def own_relation(spec: Any, limit: int | None = None) -> str:
    """DuckDB SQL reading an own dataset's file as its source (ingestbench.own.spec): a Parquet
    file, a directory of them (hive partitions as plain strings, cast later by kind), or a CSV
    read with the dataset's options and the column types the clients read; or its first `limit`
    rows in file order, the rows a capped row loop reads (ingestbench.own.read)."""
    src = spec.source
    if src.directory:
        glob = sql_str(Path(src.path) / "**" / "*.parquet")
        hive = "true" if src.hive else "false"
        # The clients read the files in the order of their paths (pyarrow sorts them), each
        # from its first row: a prefix is taken in that order.
        where = ", filename = true, file_row_number = true" if limit is not None else ""
        files = (f"read_parquet({glob}, hive_partitioning = {hive}, "
                 f"hive_types_autocast = false{where})")  # fmt: skip
        if limit is not None:
            files = (f"(SELECT * EXCLUDE (filename, file_row_number) FROM {files} "
                     f"ORDER BY filename, file_row_number LIMIT {int(limit)})")  # fmt: skip
        # A partition key reads as text here, and as pyarrow typed it in the clients.
        casts = [f"CAST({ident(n)} AS {_duck_type(t)}) AS {ident(n)}" for n, t in src.types
                 if _duck_type(t) in ("BIGINT", "INTEGER", "DOUBLE", "BOOLEAN")]  # fmt: skip
        return f"(SELECT * REPLACE ({', '.join(casts)}) FROM {files})" if casts else files
    if src.format == "parquet":
        return source_relation(Path(src.path), limit)
    options = _csv_options(src)
    if limit is None:
        return f"read_csv({sql_str(src.path)}, {', '.join(options)})"
    # One reading thread: its rows come in file order, and LIMIT keeps the first of them.
    rows = f"read_csv({sql_str(src.path)}, {', '.join([*options, 'parallel = false'])})"
    return f"(SELECT * FROM {rows} LIMIT {int(limit)})"


def own_in_file_order(spec: Any) -> tuple[str, str]:
    """(a relation of an own file's rows, the SQL that orders them as the clients send them):
    a directory's files in the order of their paths, each from its first row; a CSV read by one
    thread, its rows numbered as they come. For what depends on the order (late rows)."""
    src = spec.source
    if src.directory:
        glob = sql_str(Path(src.path) / "**" / "*.parquet")
        hive = "true" if src.hive else "false"
        files = (f"read_parquet({glob}, hive_partitioning = {hive}, hive_types_autocast = false, "
                 "filename = true, file_row_number = true)")  # fmt: skip
        return files, "filename, file_row_number"
    if src.format == "parquet":
        return f"read_parquet({sql_str(src.path)}, file_row_number = true)", "file_row_number"
    rows = f"read_csv({sql_str(src.path)}, {', '.join([*_csv_options(src), 'parallel = false'])})"
    return f"(SELECT *, row_number() OVER () AS __row FROM {rows})", "__row"


def _csv_options(src: Any) -> list[str]:
    csv = src.csv
    types = ", ".join(f"{sql_str(n)}: {sql_str(_duck_type(t))}" for n, t in src.types)
    options = [
        "header = true",
        f"delim = {sql_str(csv.delimiter)}",
        f"nullstr = [{', '.join(sql_str(v) for v in csv.null_values)}]",
        f"types = {{{types}}}",
    ]
    if csv.timestamp_format:
        options.append(f"timestampformat = {sql_str(csv.timestamp_format)}")
    return options


def unreadable(path: Path, exc: Exception) -> UserError:
    """A file this workflow wrote (a dataset, an export) that DuckDB cannot read."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return UserError(
        f"cannot read {path} ({first}); the file is missing, corrupted or truncated: delete it and "
        f"rerun the rule that writes it."
    )


#: The user's own file is theirs: the fix never deletes it.
OWN_FILE_UNREADABLE = (
    "cannot read your file {path} ({reason}); it changed or broke since its manifest was "
    "written, and this workflow never writes or deletes it: restore or fix the file, then rerun "
    "(its dataset is described again)."
)


def own_unreadable(path: Path | str, exc: Exception) -> UserError:
    """The user's own file that DuckDB cannot read."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return UserError(OWN_FILE_UNREADABLE.format(path=path, reason=first))
