"""Prove what landed: DuckDB over the source against SQL over QuestDB and its export, row for row.

Three pieces, used by three jobs:

- `expected_aggregates` (rule `expected`): DuckDB over the dataset's Parquet (or its first N rows in
  file order): row count, rows per host, first and last timestamp, per field sum/min/max, distinct
  values per tag.
- `questdb_aggregates` and `export_table` (the ingest job, after its last repeat): the same
  aggregates by SQL over QuestDB, and the whole table exported as Parquet through `/exp`.
- `validate_run` (rule `validate`): compares the two aggregate sets check by check and the source
  rows with the export row by row (DuckDB `EXCEPT ALL` both ways, over row hashes), types
  normalised: tags as VARCHAR, fields as DOUBLE (compared exactly), the timestamp as epoch
  microseconds in UTC.

Timestamps in the aggregates are ISO strings with microsecond precision in UTC
("2016-01-01T00:00:00.000000Z", QuestDB's own format), built on both sides from epoch microseconds,
so a unit mix-up (microseconds read as nanoseconds lands in January 1970) shows as it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import re
import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import requests

from .errors import UserError
from .files import write_json_atomic
from .server import QuestDB, QuestDBError
from .table import FIELDS, TAGS, TIMESTAMP

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
# Tags with at most this many distinct values list them; larger ones (hostname) keep count + hash.
TAG_VALUES_LIMIT = 100
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ValidationFailed(UserError):
    """An ingestion did not land what the source holds (the message names variant and check)."""


# ---------------------------------------------------------------------------------------------
# small helpers


def iso_us(epoch_us: int | None) -> str | None:
    """Epoch microseconds as an ISO string in UTC with microsecond precision (QuestDB's format)."""
    if epoch_us is None:
        return None
    return (_EPOCH + timedelta(microseconds=int(epoch_us))).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _sql_str(value: str | Path) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _check_name(table: str) -> str:
    if not _NAME.match(table):
        raise UserError(
            f"table name {table!r} is not a plain SQL identifier; fix `table` in config."
        )
    return table


def _number(value: Any) -> int | float | None:
    """JSON-safe number: ints stay ints (LONG fields, HUGEINT sums), everything else float."""
    if value is None:
        return None
    if isinstance(value, int):
        return value
    return float(value)


def _tag_summary(values: list[str | None]) -> dict[str, Any]:
    ordered = sorted(values, key=lambda v: (v is None, v or ""))
    digest = hashlib.sha256(json.dumps(ordered, ensure_ascii=False).encode()).hexdigest()
    summary: dict[str, Any] = {"count": len(ordered), "sha256": digest}
    if len(ordered) <= TAG_VALUES_LIMIT:
        summary["values"] = ordered
    return summary


def _epoch_us(column: str, sql_type: str) -> str:
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


def _is_integer_type(sql_type: str) -> bool:
    t = sql_type.upper()
    return any(k in t for k in ("INT", "LONG", "SHORT", "BYTE")) and "INTERVAL" not in t


def _load_json(path: Path, what: str) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UserError(f"the {what} {path} is missing; rerun the rule that writes it.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(
            f"the {what} {path} is not valid JSON ({exc}); delete it and rerun the workflow."
        ) from None


def _unwrap(aggregates: dict[str, Any]) -> dict[str, Any]:
    """Accept the bare aggregates or a result file that wraps them under "aggregates"."""
    return aggregates.get("aggregates", aggregates)


def _duck(
    memory_limit: str | None = None, spill_dir: Path | None = None
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection; with a memory limit it spills to `spill_dir` instead of growing."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    if memory_limit:
        con.execute(f"SET memory_limit = {_sql_str(memory_limit)}")
        con.execute("SET preserve_insertion_order = false")  # lets big scans stream
    if spill_dir:
        con.execute(f"SET temp_directory = {_sql_str(spill_dir)}")
    return con


@contextlib.contextmanager
def duckdb_limits(memory_limit: str | None, spill_root: Path | None):
    """`_duck` keyword arguments for one job: its own spill directory, removed afterwards."""
    if spill_root is None:
        yield {"memory_limit": memory_limit}
        return
    Path(spill_root).mkdir(parents=True, exist_ok=True)
    spill = Path(tempfile.mkdtemp(prefix="validate-", dir=spill_root))
    try:
        yield {"memory_limit": memory_limit, "spill_dir": spill}
    finally:
        shutil.rmtree(spill, ignore_errors=True)


def _source_relation(parquet: Path, limit: int | None) -> str:
    """SQL for the dataset rows, or its first `limit` rows in file order."""
    if limit is None:
        return f"read_parquet({_sql_str(parquet)})"
    return (
        f"(SELECT * EXCLUDE (file_row_number) FROM read_parquet({_sql_str(parquet)}, "
        f"file_row_number = true) WHERE file_row_number < {int(limit)})"
    )


def _unreadable(path: Path, exc: Exception) -> UserError:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return UserError(
        f"cannot read {path} ({first}); the file is missing, corrupted or truncated: delete it and "
        f"rerun the rule that writes it."
    )


# ---------------------------------------------------------------------------------------------
# aggregates


def expected_aggregates(
    parquet: Path, limit: int | None = None, duck: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The aggregates of the dataset (or of its first `limit` rows in file order), by DuckDB."""
    parquet = Path(parquet)
    con = _duck(**(duck or {}))
    try:
        src = _source_relation(parquet, limit)
        con.execute(f"CREATE TEMP VIEW src AS SELECT * FROM {src}")
        types = {name: str(t) for name, t, *_ in con.execute("DESCRIBE src").fetchall()}
    except duckdb.Error as exc:
        raise _unreadable(parquet, exc) from None
    missing = [c for c in (*TAGS, *FIELDS, TIMESTAMP) if c not in types]
    if missing:
        raise UserError(
            f"{parquet} lacks the columns {', '.join(missing)}; it is not a TSBS cpu dataset of "
            f"this workflow: delete it and rerun."
        )
    agg: dict[str, Any] = {}
    ts_us = _epoch_us(TIMESTAMP, types[TIMESTAMP])
    row_count, first, last = con.execute(
        f"SELECT count(*), min({ts_us}), max({ts_us}) FROM src"
    ).fetchone()
    agg["row_count"] = int(row_count)
    hosts = con.execute("SELECT hostname::VARCHAR, count(*) FROM src GROUP BY 1").fetchall()
    agg["rows_per_host"] = {h: int(n) for h, n in sorted(hosts, key=lambda r: (r[0] is None, r[0]))}
    agg["first_ts"], agg["last_ts"] = iso_us(first), iso_us(last)
    exprs = []
    for f in FIELDS:
        total = f"sum({f})" if _is_integer_type(types[f]) else f"fsum({f})"  # fsum: Kahan
        exprs += [total, f"min({f})", f"max({f})"]
    values = con.execute(f"SELECT {', '.join(exprs)} FROM src").fetchone()
    agg["fields"] = {
        f: {"type": "long" if _is_integer_type(types[f]) else "double",
            "sum": _number(values[3 * i]), "min": _number(values[3 * i + 1]),
            "max": _number(values[3 * i + 2])}
        for i, f in enumerate(FIELDS)
    }  # fmt: skip
    agg["tags"] = {}
    for t in TAGS:
        distinct = con.execute(f"SELECT DISTINCT {t}::VARCHAR FROM src").fetchall()
        agg["tags"][t] = _tag_summary([v for (v,) in distinct])
    con.close()
    return agg


def questdb_aggregates(qdb: QuestDB, table: str) -> dict[str, Any]:
    """The same aggregates as `expected_aggregates`, by SQL over QuestDB (after wait_wal_table)."""
    t = _check_name(table)
    types = {
        name: str(typ)
        for name, typ in qdb.rows(f"SELECT \"column\", type FROM table_columns('{t}')")
    }
    agg: dict[str, Any] = {}
    row_count, first, last = qdb.rows(
        f"SELECT count(), cast(min({TIMESTAMP}) AS long), cast(max({TIMESTAMP}) AS long) FROM {t}"
    )[0]
    agg["row_count"] = int(row_count)
    hosts = qdb.rows(f"SELECT hostname, count() FROM {t} GROUP BY hostname")
    agg["rows_per_host"] = {h: int(n) for h, n in sorted(hosts, key=lambda r: (r[0] is None, r[0]))}
    agg["first_ts"], agg["last_ts"] = iso_us(first), iso_us(last)
    exprs = []
    for f in FIELDS:
        integer = _is_integer_type(types.get(f, "DOUBLE"))
        exprs += [f"sum({f})" if integer else f"ksum({f})", f"min({f})", f"max({f})"]
    values = qdb.rows(f"SELECT {', '.join(exprs)} FROM {t}")[0]
    agg["fields"] = {
        f: {"type": "long" if _is_integer_type(types.get(f, "DOUBLE")) else "double",
            "sum": _number(values[3 * i]), "min": _number(values[3 * i + 1]),
            "max": _number(values[3 * i + 2])}
        for i, f in enumerate(FIELDS)
    }  # fmt: skip
    agg["tags"] = {}
    for tag in TAGS:
        distinct = qdb.rows(f"SELECT DISTINCT {tag} FROM {t}")
        agg["tags"][tag] = _tag_summary([v for (v,) in distinct])
    return agg


# ---------------------------------------------------------------------------------------------
# export


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
    t = _check_name(table)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if piece_rows is None:
        rows = _export_piece(qdb, f"SELECT * FROM {t}", t, path, fmt)
        log.info("exported table %s (%d rows) to %s", t, rows, path)
        return
    total = int(qdb.scalar(f"SELECT count() FROM {t}"))
    tmp_dir = path.with_name(f".{path.name}.tmp-{os.getpid()}")
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


def export_relation(path: Path) -> str:
    """DuckDB SQL reading an export: one Parquet file, or every piece of an export directory."""
    path = Path(path)
    return f"read_parquet({_sql_str(path / '*.parquet' if path.is_dir() else path)})"


def _export_piece(qdb: QuestDB, query: str, table: str, path: Path, fmt: str) -> int:
    """One /exp call into the Parquet file `path` (atomically); returns its rows."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp_csv = path.with_name(f".{path.name}.tmp-{os.getpid()}.csv")
    try:
        if fmt == "parquet" and not _download(qdb, query, "parquet", tmp):
            log.warning("QuestDB at %s refused the Parquet export; exporting CSV", qdb.url)
            fmt = "csv"
        if fmt == "csv":
            _download(qdb, query, "csv", tmp_csv)
            _csv_to_parquet(qdb, table, tmp_csv, tmp)
        try:
            import pyarrow.parquet as pq

            rows = pq.read_metadata(tmp).num_rows
        except Exception as exc:  # noqa: BLE001 (any reader error means a broken export)
            raise QuestDBError(
                f"the export of table {table} from {qdb.url} is not readable Parquet ({exc}); "
                f"see the server log."
            ) from None
        os.replace(tmp, path)
        return rows
    finally:
        for p in (tmp, tmp_csv):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()


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
    columns = ", ".join(
        f"{_sql_str(c)}: {_sql_str(duck_types.get(ty, 'VARCHAR'))}" for c, ty in cols
    )
    select = ", ".join(
        f"CAST({c} AS TIMESTAMPTZ) AS {c}" if ty == "TIMESTAMP" else c for c, ty in cols
    )
    con = _duck()
    try:
        con.execute(
            f"COPY (SELECT {select} FROM read_csv({_sql_str(csv)}, header = true, "
            f"columns = {{{columns}}})) TO {_sql_str(parquet)} (FORMAT parquet)"
        )
    finally:
        con.close()


# ---------------------------------------------------------------------------------------------
# validation


def _check(name: str, passed: bool, expected: Any, actual: Any, **detail: Any) -> dict[str, Any]:
    out = {"name": name, "passed": bool(passed), "expected": expected, "actual": actual}
    if detail:
        out["differences"] = detail
    return out


def _close(expected: Any, actual: Any, rel_tolerance: float) -> bool:
    if expected is None or actual is None:
        return expected is None and actual is None
    return math.isclose(float(expected), float(actual), rel_tol=rel_tolerance, abs_tol=0.0)


def _aggregate_checks(
    exp: dict[str, Any], act: dict[str, Any], rel_tolerance: float, max_differences: int
) -> list[dict[str, Any]]:
    checks = [_check("row_count", exp["row_count"] == act["row_count"], exp["row_count"],
                     act["row_count"])]  # fmt: skip
    e_hosts, a_hosts = exp["rows_per_host"], act["rows_per_host"]
    differing = sorted(h for h in set(e_hosts) | set(a_hosts) if e_hosts.get(h) != a_hosts.get(h))
    checks.append(
        _check(
            "rows_per_host",
            not differing,
            {"hosts": len(e_hosts), "rows": sum(e_hosts.values())},
            {"hosts": len(a_hosts), "rows": sum(a_hosts.values())},
            **(
                {"hosts": len(differing),
                 "first": [{"hostname": h, "expected": e_hosts.get(h), "actual": a_hosts.get(h)}
                           for h in differing[:max_differences]]}
                if differing else {}
            ),
        )
    )  # fmt: skip
    for key in ("first_ts", "last_ts"):
        checks.append(_check(key, exp[key] == act[key], exp[key], act[key]))
    for f in FIELDS:
        e, a = exp["fields"][f], act["fields"][f]
        checks.append(_check(f"field_sum:{f}", _close(e["sum"], a["sum"], rel_tolerance),
                             e["sum"], a["sum"]))  # fmt: skip
        for stat in ("min", "max"):
            same = e[stat] == a[stat] or (e[stat] is not None and a[stat] is not None
                                          and float(e[stat]) == float(a[stat]))  # fmt: skip
            checks.append(_check(f"field_{stat}:{f}", same, e[stat], a[stat]))
    for t in TAGS:
        e, a = exp["tags"][t], act["tags"][t]
        same = e["count"] == a["count"] and e["sha256"] == a["sha256"]
        detail = {}
        if not same and "values" in e and "values" in a:
            detail = {
                "missing_in_questdb": [v for v in e["values"] if v not in a["values"]],
                "unexpected_in_questdb": [v for v in a["values"] if v not in e["values"]],
            }
        shown_e = {k: e[k] for k in ("count", "sha256", "values") if k in e}
        shown_a = {k: a[k] for k in ("count", "sha256", "values") if k in a}
        checks.append(_check(f"tag_distinct:{t}", same, shown_e, shown_a, **detail))
    return checks


def _normalised_select(relation: str, types: dict[str, str]) -> str:
    """Tags as VARCHAR, fields as DOUBLE (exact), the timestamp as epoch microseconds (UTC)."""
    cols = [f"CAST({t} AS VARCHAR) AS {t}" for t in TAGS]
    cols += [f"CAST({f} AS DOUBLE) AS {f}" for f in FIELDS]
    cols.append(f"{_epoch_us(TIMESTAMP, types[TIMESTAMP])} AS timestamp_us")
    return f"SELECT {', '.join(cols)} FROM {relation}"


def _row_dicts(rows: list[tuple], names: list[str]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        d = dict(zip(names, row, strict=True))
        d[TIMESTAMP] = iso_us(d.pop("timestamp_us"))
        out.append(d)
    return out


def row_level_comparison(
    source_parquet: Path,
    export_parquet: Path,
    limit: int | None,
    max_differences: int,
    duck: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`EXCEPT ALL` both ways between the source rows (or their prefix) and the export.

    The multisets compared are of 64-bit hashes of the normalised rows (one pass over each file,
    about 20x faster than `EXCEPT ALL` over 21 columns); the rows behind differing hashes are read
    back to report them. Two different rows would have to collide for a difference to hide:
    odds of about n^2 / 2^65, 3e-8 for 1M rows.
    """
    con = _duck(**(duck or {}))
    try:
        con.execute(
            f"CREATE TEMP VIEW src_raw AS SELECT * FROM {_source_relation(source_parquet, limit)}"
        )
        src_types = {n: str(t) for n, t, *_ in con.execute("DESCRIBE src_raw").fetchall()}
        try:
            export = export_relation(export_parquet)
            con.execute(f"CREATE TEMP VIEW exp_raw AS SELECT * FROM {export}")
            exp_types = {n: str(t) for n, t, *_ in con.execute("DESCRIBE exp_raw").fetchall()}
        except duckdb.Error as exc:
            raise _unreadable(export_parquet, exc) from None
        needed = (*TAGS, *FIELDS, TIMESTAMP)
        result: dict[str, Any] = {
            "columns_missing_in_export": [c for c in needed if c not in exp_types],
            "columns_unexpected_in_export": [c for c in exp_types if c not in needed],
            "export_timestamp_type": exp_types.get(TIMESTAMP),
        }
        if result["columns_missing_in_export"]:
            return result
        names = [*TAGS, *FIELDS, "timestamp_us"]
        row_hash = f"hash({', '.join(names)})"
        for side, raw, types in (("src", "src_raw", src_types), ("exp", "exp_raw", exp_types)):
            con.execute(f"CREATE TEMP VIEW {side} AS {_normalised_select(raw, types)}")
            con.execute(f"CREATE TEMP TABLE {side}_h AS SELECT {row_hash} AS h FROM {side}")
        result["source_rows"] = con.execute("SELECT count(*) FROM src_h").fetchone()[0]
        result["export_rows"] = con.execute("SELECT count(*) FROM exp_h").fetchone()[0]
        for side, this, other in (("missing", "src", "exp"), ("unexpected", "exp", "src")):
            con.execute(
                f"CREATE TEMP TABLE {side} AS "
                f"SELECT h FROM {this}_h EXCEPT ALL SELECT h FROM {other}_h"
            )
            result[side] = con.execute(f"SELECT count(*) FROM {side}").fetchone()[0]
            rows = []
            if result[side]:  # read the differing rows back (a second pass, only on failure)
                rows = con.execute(
                    f"SELECT DISTINCT {', '.join(names)} FROM {this} "
                    f"WHERE {row_hash} IN (SELECT h FROM {side}) "
                    f"ORDER BY timestamp_us, hostname LIMIT {int(max_differences)}"
                ).fetchall()
            result[f"first_{side}"] = _row_dicts(rows, names)
        return result
    except duckdb.Error as exc:
        raise UserError(
            f"DuckDB could not compare {source_parquet} with {export_parquet} "
            f"({str(exc).splitlines()[0][:200]}); delete the export and rerun its ingest job."
        ) from None
    finally:
        con.close()


def validate_run(
    run: dict[str, Any],
    dataset_parquet: Path,
    expected: dict[str, Any],
    actual: dict[str, Any],
    export_parquet: Path,
    rel_tolerance: float = 1e-9,
    max_differences: int = 5,
    duck: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The validation result of one run (schema in DESIGN); `passed` is False if any check fails.

    `expected` holds the aggregates of the whole dataset; a run capped to its first N rows (N =
    run["rows"]) is checked against the aggregates and rows of that prefix instead.
    """
    expected, actual = _unwrap(expected), _unwrap(actual)
    dataset = run.get("dataset") or {}
    dataset_name = dataset.get("name") if isinstance(dataset, dict) else str(dataset)
    run_rows = run.get("rows")
    limit = None
    if run_rows is not None and int(run_rows) != expected["row_count"]:
        limit = int(run_rows)
        log.info("run capped to %d rows: recomputing the expected aggregates of that prefix", limit)
        expected = expected_aggregates(dataset_parquet, limit=limit, duck=duck)
    checks = []
    if limit is not None and expected["row_count"] != limit:
        checks.append(_check("run_rows", False, expected["row_count"], limit))
    checks += _aggregate_checks(expected, actual, rel_tolerance, max_differences)
    rows = row_level_comparison(dataset_parquet, export_parquet, limit, max_differences, duck)
    missing_cols = rows["columns_missing_in_export"]
    if missing_cols:
        checks.append(_check("export_columns", False, [*TAGS, *FIELDS, TIMESTAMP],
                             list(rows.get("columns_unexpected_in_export", [])),
                             missing=missing_cols))  # fmt: skip
        checks.append(_check("row_level", False, {"missing": 0, "unexpected": 0},
                             "not compared: export lacks columns"))  # fmt: skip
        differing = {"missing": None, "unexpected": None}
        first = {"missing_in_questdb": [], "unexpected_in_questdb": []}
    else:
        differing = {"missing": rows["missing"], "unexpected": rows["unexpected"]}
        checks.append(
            _check(
                "row_level",
                rows["missing"] == 0 and rows["unexpected"] == 0,
                {"rows": rows["source_rows"], "missing": 0, "unexpected": 0},
                {"rows": rows["export_rows"], **differing},
            )
        )
        first = {"missing_in_questdb": rows["first_missing"],
                 "unexpected_in_questdb": rows["first_unexpected"]}  # fmt: skip
    passed = all(c["passed"] for c in checks)
    result = {
        "schema_version": SCHEMA_VERSION,
        "variant": run.get("variant", {}),
        "dataset": dataset_name,
        "passed": passed,
        "source_rows": "all" if limit is None else f"first {limit} in file order",
        "export_timestamp_type": rows.get("export_timestamp_type"),
        "rel_tolerance": rel_tolerance,
        "failed_checks": [c["name"] for c in checks if not c["passed"]],
        "checks": checks,
        "first_differences": first,
        "differing_rows": differing,
    }
    return result


def failure_message(
    result: dict[str, Any], log_path: Path | str | None = None, hint: bool = True
) -> str:
    """One sentence naming the variant and the first failed check."""
    variant = (result.get("variant") or {}).get("name", "?")
    failed = [c for c in result["checks"] if not c["passed"]]
    first = failed[0]
    more = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
    where = f"; the full report is in {log_path}" if log_path else ""
    return (
        f"validation of variant {variant} on dataset {result.get('dataset')} failed check "
        f"{first['name']} (expected {_short(first['expected'])}, QuestDB has "
        f"{_short(first['actual'])}){more}{where}"
        + ("; set validation.on_failure: report in the config to record failures without "
           "stopping." if hint else ".")
    )  # fmt: skip


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# file-level steps (what the Snakemake scripts call)


def write_expected(parquet: Path, output: Path, dataset: str | None = None) -> dict[str, Any]:
    """Rule `expected`: the aggregates of the whole dataset as results/expected/<dataset>.json."""
    parquet = Path(parquet)
    log.info("computing the expected aggregates of %s", parquet)
    agg = expected_aggregates(parquet)
    data = {"schema_version": SCHEMA_VERSION, "dataset": dataset or parquet.stem,
            "source": str(parquet), "aggregates": agg}  # fmt: skip
    write_json_atomic(output, data)
    log.info("wrote %s (%d rows)", output, agg["row_count"])
    return data


def _to_log_file(text: str) -> None:
    """Details for the rule's log file only (the terminal gets the one-sentence summary)."""
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler)]
    if not handlers:
        log.info("%s", text)
        return
    record = log.makeRecord(log.name, logging.INFO, __file__, 0, text, None, None)
    for handler in handlers:
        handler.handle(record)


def validate_files(
    run: Path,
    actual: Path,
    export: Path,
    expected: Path,
    parquet: Path,
    output: Path,
    validation: dict[str, Any] | None = None,
    log_path: Path | str | None = None,
    spill_root: Path | None = None,
) -> dict[str, Any]:
    """Rule `validate`: write the validation JSON; on failure with on_failure=fail, raise.

    DuckDB runs within `validation["memory_limit"]` and spills under `spill_root`.
    """
    validation = validation or {}
    on_failure = validation.get("on_failure", "fail")
    with duckdb_limits(validation.get("memory_limit"), spill_root) as duck:
        result = validate_run(
            _load_json(Path(run), "run file"),
            Path(parquet),
            _load_json(Path(expected), "expected aggregates file"),
            _load_json(Path(actual), "QuestDB aggregates file"),
            Path(export),
            rel_tolerance=float(validation.get("rel_tolerance", 1e-9)),
            max_differences=int(validation.get("max_differences", 5)),
            duck=duck,
        )
    for c in result["checks"]:
        if not c["passed"]:
            _to_log_file(f"check {c['name']} failed: expected {_short(c['expected'], 300)}, "
                         f"actual {_short(c['actual'], 300)}")  # fmt: skip
    if not result["passed"]:
        _to_log_file("the full validation report:\n" + json.dumps(result, indent=2))
        if on_failure == "fail":
            raise ValidationFailed(failure_message(result, log_path))
        log.warning("%s", failure_message(result, log_path, hint=False))
    write_json_atomic(output, result)
    status = "passed" if result["passed"] else "FAILED (recorded only: on_failure is report)"
    log.info("validation of %s %s; wrote %s", result["variant"].get("name"), status, output)
    return result
