"""The aggregates both sides are checked on: DuckDB over the source file (rule `expected`) and
SQL over QuestDB (the ingest job, after its last repeat).

Row count, rows per host, first and last timestamp, per field sum/min/max, distinct values per
tag; of the whole dataset, or of its first N rows in file order for a capped run.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import duckdb

from ingestbench.errors import UserError
from ingestbench.files import write_json_atomic
from ingestbench.results.records import SCHEMA_VERSION
from ingestbench.server.process import QuestDB
from ingestbench.tsbs.columns import FIELDS, TAGS, TIMESTAMP
from ingestbench.validate.sql import (
    check_name,
    duck,
    epoch_us,
    is_integer_type,
    iso_us,
    number,
    source_relation,
    unreadable,
)

log = logging.getLogger(__name__)

# Tags with at most this many distinct values list them; larger ones (hostname) keep count + hash.
TAG_VALUES_LIMIT = 100


def _tag_summary(values: list[str | None]) -> dict[str, Any]:
    ordered = sorted(values, key=lambda v: (v is None, v or ""))
    digest = hashlib.sha256(json.dumps(ordered, ensure_ascii=False).encode()).hexdigest()
    summary: dict[str, Any] = {"count": len(ordered), "sha256": digest}
    if len(ordered) <= TAG_VALUES_LIMIT:
        summary["values"] = ordered
    return summary


def unwrap(aggregates: dict[str, Any]) -> dict[str, Any]:
    """Accept the bare aggregates or a result file that wraps them under "aggregates"."""
    return aggregates.get("aggregates", aggregates)


def _field_aggregates(values, integer: dict[str, bool]) -> dict[str, dict[str, Any]]:
    """{field: type, sum, min, max} from one row of (sum, min, max) per field, in FIELDS order."""
    return {
        f: {"type": "long" if integer[f] else "double", "sum": number(values[3 * i]),
            "min": number(values[3 * i + 1]), "max": number(values[3 * i + 2])}
        for i, f in enumerate(FIELDS)
    }  # fmt: skip


def expected_aggregates(
    parquet: Path, limit: int | None = None, limits: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The aggregates of the dataset (or of its first `limit` rows in file order), by DuckDB."""
    parquet = Path(parquet)
    con = duck(**(limits or {}))
    try:
        src = source_relation(parquet, limit)
        con.execute(f"CREATE TEMP VIEW src AS SELECT * FROM {src}")
        types = {name: str(t) for name, t, *_ in con.execute("DESCRIBE src").fetchall()}
    except duckdb.Error as exc:
        raise unreadable(parquet, exc) from None
    missing = [c for c in (*TAGS, *FIELDS, TIMESTAMP) if c not in types]
    if missing:
        raise UserError(
            f"{parquet} lacks the columns {', '.join(missing)}; it is not a TSBS cpu dataset of "
            f"this workflow: delete it and rerun."
        )
    agg: dict[str, Any] = {}
    ts_us = epoch_us(TIMESTAMP, types[TIMESTAMP])
    row_count, first, last = con.execute(
        f"SELECT count(*), min({ts_us}), max({ts_us}) FROM src"
    ).fetchone()
    agg["row_count"] = int(row_count)
    hosts = con.execute("SELECT hostname::VARCHAR, count(*) FROM src GROUP BY 1").fetchall()
    agg["rows_per_host"] = {h: int(n) for h, n in sorted(hosts, key=lambda r: (r[0] is None, r[0]))}
    agg["first_ts"], agg["last_ts"] = iso_us(first), iso_us(last)
    exprs = []
    for f in FIELDS:
        total = f"sum({f})" if is_integer_type(types[f]) else f"fsum({f})"  # fsum: Kahan
        exprs += [total, f"min({f})", f"max({f})"]
    values = con.execute(f"SELECT {', '.join(exprs)} FROM src").fetchone()
    agg["fields"] = _field_aggregates(values, {f: is_integer_type(types[f]) for f in FIELDS})
    agg["tags"] = {}
    for t in TAGS:
        distinct = con.execute(f"SELECT DISTINCT {t}::VARCHAR FROM src").fetchall()
        agg["tags"][t] = _tag_summary([v for (v,) in distinct])
    con.close()
    return agg


def questdb_aggregates(qdb: QuestDB, table: str) -> dict[str, Any]:
    """The same aggregates as `expected_aggregates`, by SQL over QuestDB (after wait_wal_table)."""
    t = check_name(table)
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
    integer = {f: is_integer_type(types.get(f, "DOUBLE")) for f in FIELDS}
    exprs = []
    for f in FIELDS:
        exprs += [f"sum({f})" if integer[f] else f"ksum({f})", f"min({f})", f"max({f})"]
    values = qdb.rows(f"SELECT {', '.join(exprs)} FROM {t}")[0]
    agg["fields"] = _field_aggregates(values, integer)
    agg["tags"] = {}
    for tag in TAGS:
        distinct = qdb.rows(f"SELECT DISTINCT {tag} FROM {t}")
        agg["tags"][tag] = _tag_summary([v for (v,) in distinct])
    return agg


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
