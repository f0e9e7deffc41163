"""The checker: the table against its source, row for row with multiplicity, in DuckDB.

The table is exported as Parquet (validate.export), the source read as its kind reads it (the
validation's relation), and the two compared as the workflow's validation compares them
(validate.rows.compare_multisets): the missing rows (in the source more often than in the
table) and the unexpected ones (the reverse). An unexpected row that is a source row is a
duplicate; one that is no source row is altered, and it stands for one of the missing rows, so:
lost = missing - altered.

Each missing row is joined to its batch by its place in the source (the batch's first row and
length, from the load's history; the latest batch that covered it wins, as a resend supersedes
the attempt before it) and counted by what the client was told of that batch: `acknowledged`
(ok), `unknown`, or `reported` (the error reached the caller, or the batch was never sent after
the load gave up). Altered rows come off `unknown` first, then `reported`, then `acknowledged`:
which missing row an altered one stands for is not known, and a loss is only called
acknowledged when nothing else explains it.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    lost_acknowledged: int
    lost_unknown: int
    lost_reported: int
    duplicated: int
    altered: int


#: A batch's status (loaders.Batch) -> the loss it makes of its missing rows.
LOSS = {"ok": "acknowledged", "unknown": "unknown", "pending": "unknown", "fail": "reported"}


def compare(
    source: Path, export: Path, spec: TableSpec, batches: Sequence[tuple[int, int, str]] = ()
) -> Delivered:
    """Source and export compared as multisets of whole rows; the source read as its dataset's
    kind reads it (a TSBS Parquet file, or the user's own file as its spec says). `batches`:
    (first row, rows, status) of each batch sent, in the order they went (none: every missing
    row counts as reported)."""
    con = duck()
    try:
        found = compare_multisets(
            con,
            spec,
            typed_view(con, "src_raw", of_spec(spec).source_relation(spec, source, None)),
            typed_view(con, "exp_raw", export_relation(export)),
        )
        by_loss = _missing_by_loss(con, batches)
    finally:
        con.close()
    altered = found.unexpected - found.unexpected_in_source
    rest = altered
    for loss in ("unknown", "reported", "acknowledged"):
        taken = min(rest, by_loss[loss])
        by_loss[loss], rest = by_loss[loss] - taken, rest - taken
    return Delivered(
        source_rows=found.source_rows,
        table_rows=found.export_rows,
        lost=max(found.missing - altered, 0),
        lost_acknowledged=by_loss["acknowledged"],
        lost_unknown=by_loss["unknown"],
        lost_reported=by_loss["reported"],
        duplicated=found.unexpected_in_source,
        altered=altered,
    )


def _missing_by_loss(con, batches: Sequence[tuple[int, int, str]]) -> dict[str, int]:
    """The missing rows by the loss their batch makes of them. A hash missing c times is the
    last c of its source rows (src_h keeps the source's order: its rowid is the row's place)."""
    con.execute("CREATE TEMP TABLE batches (seq BIGINT, first_row BIGINT, rows BIGINT, "
                "loss VARCHAR)")  # fmt: skip
    if batches:
        con.executemany("INSERT INTO batches VALUES (?, ?, ?, ?)",
                        [(i, first, rows, LOSS[status])
                         for i, (first, rows, status) in enumerate(batches)])  # fmt: skip
    counted = con.execute("""
        WITH m AS (SELECT h, count(*) AS c FROM missing GROUP BY h),
        s AS (SELECT rowid AS rn, h,
                     row_number() OVER (PARTITION BY h ORDER BY rowid DESC) AS k
              FROM src_h WHERE h IN (SELECT h FROM m)),
        lost AS (SELECT rn FROM s JOIN m USING (h) WHERE k <= c),
        placed AS (SELECT rn, arg_max(b.loss, b.seq) AS loss FROM lost
                   LEFT JOIN batches b ON rn >= b.first_row AND rn < b.first_row + b.rows
                   GROUP BY rn)
        SELECT coalesce(loss, 'reported'), count(*) FROM placed GROUP BY 1
    """).fetchall()  # fmt: skip
    out = {"acknowledged": 0, "unknown": 0, "reported": 0}
    out.update({loss: int(n) for loss, n in counted})
    return out


def check_table(
    qdb: QuestDB,
    spec: TableSpec,
    source: Path,
    work: Path,
    batches: Sequence[tuple[int, int, str]] = (),
) -> Delivered:
    """Export the table from the server and compare it with `source`; the export is removed."""
    export = work / f"{spec.table}.parquet"
    try:
        export_table(qdb, spec.table, export)
        return compare(source, export, spec, batches)
    finally:
        export.unlink(missing_ok=True)
