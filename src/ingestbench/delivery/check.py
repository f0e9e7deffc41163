"""The checker: the table against its source, row for row with multiplicity, in DuckDB.

The table is exported as Parquet (validate.export), the source read as its kind reads it (the
validation's relation), and the two compared as the workflow's validation compares them
(validate.rows.compare_multisets): the missing rows (in the source more often than in the
table) and the unexpected ones (the reverse). An unexpected row that is a source row is a
duplicate; one that is no source row is altered, and it stands for one of the missing rows, so:
lost = missing - altered.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ingestbench.columnar.duckdb_sql import duck, export_relation
from ingestbench.datasets import of_spec
from ingestbench.server.handle import QuestDB
from ingestbench.tables.spec import TableSpec
from ingestbench.validate.export import export_table
from ingestbench.validate.rows import compare_multisets, typed_view


@dataclass(frozen=True)
class Delivered:
    source_rows: int
    table_rows: int
    lost: int
    duplicated: int
    altered: int


def compare(source: Path, export: Path, spec: TableSpec) -> Delivered:
    """Source and export compared as multisets of whole rows; the source read as its dataset's
    kind reads it (a TSBS Parquet file, or the user's own file as its spec says)."""
    con = duck()
    try:
        found = compare_multisets(
            con,
            spec,
            typed_view(con, "src_raw", of_spec(spec).source_relation(spec, source, None)),
            typed_view(con, "exp_raw", export_relation(export)),
        )
    finally:
        con.close()
    altered = found.unexpected - found.unexpected_in_source
    return Delivered(
        source_rows=found.source_rows,
        table_rows=found.export_rows,
        lost=max(found.missing - altered, 0),
        duplicated=found.unexpected_in_source,
        altered=altered,
    )


def check_table(qdb: QuestDB, spec: TableSpec, source: Path, work: Path) -> Delivered:
    """Export the table from the server and compare it with `source`; the export is removed."""
    export = work / f"{spec.table}.parquet"
    try:
        export_table(qdb, spec.table, export)
        return compare(source, export, spec)
    finally:
        export.unlink(missing_ok=True)
