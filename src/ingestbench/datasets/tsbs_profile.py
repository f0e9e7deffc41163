"""The profile of a TSBS dataset (results.profile), the tsbs kinds' `expected_profile`: taken by
rule `expected`, which reads its Parquet anyway. Its aggregates give the columns and distinct
tags, one query over the timestamp column alone (in file order) the late rows and the partitions
touched, and the generator's manifest the size of each file it wrote; a format it did not write
is an estimate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ingestbench.columnar.duckdb_sql import duck, ident, sql_str
from ingestbench.results.profile import FORMATS, dataset_profile, size, table_profile
from ingestbench.storage.disk import FILE_BYTES_PER_ROW
from ingestbench.tables.spec import TableSpec


def order_facts(parquet: Path, spec: TableSpec) -> tuple[int, float, int]:
    """(rows behind the running maximum timestamp in file order, the largest lag in seconds,
    partitions touched at the table's unit) of one table's Parquet."""
    ts = f"CAST({ident(spec.timestamp)} AS TIMESTAMPTZ)"  # any unit (TSBS writes ns), UTC
    unit = spec.partition_by.lower()
    late = (f"epoch(max({ts}) OVER (ORDER BY file_row_number ROWS BETWEEN UNBOUNDED PRECEDING "
            f"AND 1 PRECEDING)) - epoch({ts})")  # fmt: skip
    con = duck()
    try:
        n, lag, parts = con.execute(
            f"SELECT count(*) FILTER (WHERE late > 0), coalesce(max(late), 0), "
            f"count(DISTINCT date_trunc('{unit}', {ts})) FROM (SELECT {ident(spec.timestamp)}, "
            f"{late} AS late FROM read_parquet({sql_str(parquet)}, file_row_number = true))"
        ).fetchone()
    finally:
        con.close()
    return int(n), float(lag), int(parts)


def tsbs_profile(
    tables: list[tuple[TableSpec, Path]], aggregates: dict[str, Any], manifest: dict[str, Any]
) -> dict[str, Any]:
    """The profile of a TSBS dataset from its tables' files and expected aggregates."""
    out = []
    for spec, path in tables:
        agg = aggregates[spec.table]
        types = ["SYMBOL"] * len(spec.tags) + ["TIMESTAMP"]
        types += [f["type"].upper() for f in agg["fields"].values()]
        late, lag, parts = order_facts(path, spec)
        distinct = {t: v["count"] for t, v in agg["tags"].items()}
        out.append(table_profile(spec.table, agg["row_count"], types, distinct, late, lag,
                                 spec.partition_by, parts))  # fmt: skip
    rows = int(manifest.get("rows") or sum(t["rows"] for t in out))
    files = manifest.get("files") or {}
    sizes = {
        fmt: size(files[fmt]["bytes"] / rows)
        if isinstance(files.get(fmt), dict) and files[fmt].get("bytes")
        else size(FILE_BYTES_PER_ROW[fmt], estimate=True)
        for fmt in FORMATS
    }
    return dataset_profile(rows, out, sizes)
