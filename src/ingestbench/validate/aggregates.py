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

from ingestbench.columnar.duckdb_sql import (
    check_name,
    duck,
    epoch_us,
    ident,
    is_integer_type,
    iso_us,
    number,
)
from ingestbench.datasets import ValidationKind, of_manifest, of_spec
from ingestbench.errors import UserError
from ingestbench.results.records import SCHEMA_VERSION
from ingestbench.server.handle import QuestDB
from ingestbench.storage.files import write_json_atomic
from ingestbench.tables.spec import TableSpec
from ingestbench.tsbs.columns import cpu_spec

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


def numeric_fields(spec: TableSpec) -> tuple[str, ...]:
    """The fields summed and bounded: all of a TSBS table's, the numbers of an own table's."""
    return getattr(spec, "numeric_fields", spec.fields)


def _field_aggregates(
    values, integer: dict[str, bool], fields: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """{field: type, sum, min, max} from one row of (sum, min, max) per field, in `fields` order."""
    return {
        f: {"type": "long" if integer[f] else "double", "sum": number(values[3 * i]),
            "min": number(values[3 * i + 1]), "max": number(values[3 * i + 2])}
        for i, f in enumerate(fields)
    }  # fmt: skip


def _per_key(rows) -> dict[str, int]:
    """Rows per value of the first tag (hostname, truck name); a null one under "null"."""
    return {("null" if k is None else k): int(n)
            for k, n in sorted(rows, key=lambda r: (r[0] is None, r[0] or ""))}  # fmt: skip


def expected_aggregates(
    parquet: Path,
    limit: int | None = None,
    limits: dict[str, Any] | None = None,
    spec: TableSpec | None = None,
) -> dict[str, Any]:
    """The aggregates of the table's file (or of its first `limit` rows in file order), by
    DuckDB; the cpu table's by default. A null field is left out of sum, min and max, as QuestDB
    leaves it out (NaN too: QuestDB stores a null DOUBLE as NaN)."""
    parquet, spec = Path(parquet), spec or cpu_spec()
    kind = of_spec(spec)
    tags, fields, ts = spec.tags, numeric_fields(spec), spec.timestamp
    con = duck(**(limits or {}))
    try:
        src = kind.source_relation(spec, parquet, limit)
        con.execute(f"CREATE TEMP VIEW src AS SELECT * FROM {src}")
        types = {name: str(t) for name, t, *_ in con.execute("DESCRIBE src").fetchall()}
    except duckdb.Error as exc:
        raise kind.unreadable(spec, parquet, exc) from None
    missing = [c for c in spec.columns if c not in types]
    if missing:
        raise UserError(
            f"{parquet} lacks the columns {', '.join(missing)}; it is not a TSBS {spec.table} "
            f"table of this workflow: delete it and rerun."
        )
    agg: dict[str, Any] = {}
    ts_us = epoch_us(ident(ts), types[ts])
    row_count, first, last = con.execute(
        f"SELECT count(*), min({ts_us}), max({ts_us}) FROM src"
    ).fetchone()
    agg["row_count"] = int(row_count)
    keys = (
        con.execute(f"SELECT {ident(tags[0])}::VARCHAR, count(*) FROM src GROUP BY 1").fetchall()
        if tags else []
    )  # fmt: skip
    agg["rows_per_host"] = _per_key(keys)
    agg["first_ts"], agg["last_ts"] = iso_us(first), iso_us(last)
    exprs = []
    for f in fields:
        q = ident(f)
        if is_integer_type(types[f]):
            exprs += [f"sum({q})", f"min({q})", f"max({q})"]
        else:
            v = f"(CASE WHEN isnan({q}) THEN NULL ELSE {q} END)" if spec.nullable else q
            exprs += [f"fsum({v})", f"min({v})", f"max({v})"]  # fsum: Kahan
    values = con.execute(f"SELECT {', '.join(exprs)} FROM src").fetchone() if exprs else ()
    integer = {f: is_integer_type(types[f]) for f in fields}
    agg["fields"] = _field_aggregates(values, integer, fields)
    agg["tags"] = {}
    for t in tags:
        distinct = con.execute(f"SELECT DISTINCT {ident(t)}::VARCHAR FROM src").fetchall()
        agg["tags"][t] = _tag_summary([v for (v,) in distinct])
    con.close()
    return agg


def questdb_aggregates(qdb: QuestDB, table: str, spec: TableSpec | None = None) -> dict[str, Any]:
    """The same aggregates as `expected_aggregates`, by SQL over QuestDB (after wait_wal_table),
    of `table` holding the rows of `spec` (the cpu table by default)."""
    t, spec = check_name(table), spec or cpu_spec()
    tags, fields, ts = spec.tags, numeric_fields(spec), spec.timestamp
    types = {
        name: str(typ)
        for name, typ in qdb.rows(f"SELECT \"column\", type FROM table_columns('{t}')")
    }
    agg: dict[str, Any] = {}
    row_count, first, last = qdb.rows(
        f"SELECT count(), cast(min({ts}) AS long), cast(max({ts}) AS long) FROM {t}"
    )[0]
    agg["row_count"] = int(row_count)
    keys = qdb.rows(f"SELECT {tags[0]}, count() FROM {t} GROUP BY {tags[0]}") if tags else []
    agg["rows_per_host"] = _per_key(keys)
    agg["first_ts"], agg["last_ts"] = iso_us(first), iso_us(last)
    integer = {f: is_integer_type(types.get(f, "DOUBLE")) for f in fields}
    exprs = []
    for f in fields:
        if types.get(f) == "FLOAT":  # as a double: its exact value, as DuckDB gives it
            exprs += [f"ksum({f})", f"cast(min({f}) AS double)", f"cast(max({f}) AS double)"]
        else:
            exprs += [f"sum({f})" if integer[f] else f"ksum({f})", f"min({f})", f"max({f})"]
    values = qdb.exact_rows(f"SELECT {', '.join(exprs)} FROM {t}")[0] if exprs else ()
    agg["fields"] = _field_aggregates(values, integer, fields)
    agg["tags"] = {}
    for tag in tags:
        distinct = qdb.rows(f"SELECT DISTINCT {tag} FROM {t}")
        agg["tags"][tag] = _tag_summary([v for (v,) in distinct])
    return agg


def write_expected(
    parquet: Path, output: Path, dataset: str, manifest: dict[str, Any]
) -> dict[str, Any]:
    """Rule `expected`: the aggregates of each table of the whole dataset (keyed by table) as
    results/expected/<dataset>.json, from the source its kind names (the dataset's Parquet, or
    the user's file as the table takes it), with the profile where the kind takes it here."""
    parquet = Path(parquet)
    log.info("computing the expected aggregates of %s", parquet)
    kind: ValidationKind = of_manifest(manifest)
    data = {"schema_version": SCHEMA_VERSION, "dataset": dataset, "source": str(parquet)}
    tables = kind.source_tables(parquet, manifest.get("table"))
    data["tables"] = {spec.table: expected_aggregates(path, spec=spec) for spec, path in tables}
    profile = kind.expected_profile(tables, data["tables"], manifest)
    if profile is not None:  # else elsewhere (an own dataset's: its manifest's)
        data["profile"] = profile
    write_json_atomic(output, data)
    rows = sum(agg["row_count"] for agg in data["tables"].values())
    log.info("wrote %s (%d rows)", output, rows)
    return data
