"""The checker: the table against its source, row for row with multiplicity, in DuckDB.

The table is exported as Parquet (validate.export), the source read as its kind reads it (the
validation's relation), and both sides normalised as the workflow's
validation does (validate.rows). `EXCEPT ALL` both ways gives the missing rows (in the source
more often than in the table) and the extra ones (the reverse). An extra row that is a source
row is a duplicate; one that is no source row is altered, and it stands for one of the missing
rows, so: lost = missing - altered.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ingestbench.columnar.duckdb_sql import duck, export_relation, ident
from ingestbench.datasets import of_spec
from ingestbench.server.handle import QuestDB
from ingestbench.tsbs.columns import TableSpec
from ingestbench.validate.export import export_table
from ingestbench.validate.rows import _normalised_select


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
        for side, relation in (("src", of_spec(spec).source_relation(spec, source, None)),
                               ("exp", export_relation(export))):  # fmt: skip
            con.execute(f"CREATE TEMP VIEW {side}_raw AS SELECT * FROM {relation}")
            types = {n: str(t) for n, t, *_ in con.execute(f"DESCRIBE {side}_raw").fetchall()}
            con.execute(f"CREATE TEMP VIEW {side}_n AS "
                        f"{_normalised_select(f'{side}_raw', types, spec)}")  # fmt: skip
            row = ", ".join(map(ident, [*spec.tags, *spec.fields, "timestamp_us"]))
            con.execute(f"CREATE TEMP TABLE {side} AS SELECT hash({row}) AS h FROM {side}_n")

        def count(sql: str) -> int:
            return int(con.execute(sql).fetchone()[0])

        con.execute("CREATE TEMP TABLE missing AS SELECT h FROM src EXCEPT ALL SELECT h FROM exp")
        con.execute("CREATE TEMP TABLE extra AS SELECT h FROM exp EXCEPT ALL SELECT h FROM src")
        missing, extra = count("SELECT count(*) FROM missing"), count("SELECT count(*) FROM extra")
        duplicated = count("SELECT count(*) FROM extra WHERE h IN (SELECT h FROM src)")
        altered = extra - duplicated
        return Delivered(
            source_rows=count("SELECT count(*) FROM src"),
            table_rows=count("SELECT count(*) FROM exp"),
            lost=max(missing - altered, 0),
            duplicated=duplicated,
            altered=altered,
        )
    finally:
        con.close()


def check_table(qdb: QuestDB, spec: TableSpec, source: Path, work: Path) -> Delivered:
    """Export the table from the server and compare it with `source`; the export is removed."""
    export = work / f"{spec.table}.parquet"
    try:
        export_table(qdb, spec.table, export)
        return compare(source, export, spec)
    finally:
        export.unlink(missing_ok=True)
