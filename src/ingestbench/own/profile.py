"""The describe pass over an own file: one DuckDB query that reads it once, in the order the
clients send it, for the manifest's counts (rows, nulls per column, rows without a value, the
time span that decides the partition unit) and the dataset's profile (results.profile): distinct
values per string column, the rows behind the running maximum timestamp and the largest lag, the
partitions touched at every unit, and the text width of every column (the CSV and ILP estimates).

The running maximum is a window over the file's order, so DuckDB holds its rows: it runs under a
memory limit and spills to a directory of its own beyond it.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingestbench.own.dataset import OwnDataError
from ingestbench.own.partition import UNITS
from ingestbench.own.spec import OwnTableSpec
from ingestbench.results.profile import dataset_profile, size, table_profile
from ingestbench.tables.column_kinds import STRING_KINDS

#: DuckDB's memory for the pass; beyond it the window spills to disk.
MEMORY_LIMIT = "1GB"
#: ILP's fixed bytes per line besides names and values: the space before the fields, the one
#: before the timestamp, 19 digits of nanoseconds and the newline.
ILP_LINE = 22
#: What ILP adds to a value's text, by kind: quotes around a string, `i` after an integer, and a
#: time sent as microseconds with `t` (16 digits + 1) instead of its text.
ILP_EXTRA = {"varchar": 2, "long": 1, "int": 1}


@dataclass(frozen=True)
class Scan:
    rows: int
    nulls: dict[str, int]
    without_values: int  # rows whose every field is null: no ILP line
    span_s: float
    distinct: dict[str, int]
    late_rows: int  # behind the running maximum timestamp, in file order
    max_lag_s: float
    partitions: dict[str, int]  # distinct partitions at each unit
    text_bytes: dict[str, int]  # the summed text width of each column's non-null values


def _string_columns(spec: OwnTableSpec) -> list[str]:
    return [c for c in spec.file_columns if spec.column_kind(c) in {"symbol", *STRING_KINDS}]


def scan(spec: OwnTableSpec, spill_root: Path | None = None) -> Scan:
    """The file measured by one DuckDB query (raises OwnDataError for a file it cannot read)."""
    from ingestbench.columnar.duckdb_sql import duck, ident, own_in_file_order, sql_str

    # Any unit or zone as an instant: DuckDB's epoch() takes no nanoseconds; the session is UTC.
    cols, ts = spec.file_columns, f"CAST({ident(spec.timestamp)} AS TIMESTAMPTZ)"
    strings = _string_columns(spec)
    rel, order = own_in_file_order(spec)
    empty = " AND ".join(f"{ident(f)} IS NULL" for f in spec.fields)
    exprs = [
        f"count(*) FILTER (WHERE {empty})", "count(*)",
        f"coalesce(epoch(max({ts})) - epoch(min({ts})), 0)",
        "count(*) FILTER (WHERE __late > 0)", "coalesce(max(__late), 0)",
        *(f"count(*) - count({ident(c)})" for c in cols),
        *(f"count(DISTINCT {ident(c)})" for c in strings),
        *(f"count(DISTINCT date_trunc('{u.lower()}', {ts}))" for u in UNITS),
        *(f"coalesce(sum(length(CAST({ident(c)} AS VARCHAR))), 0)" for c in cols),
    ]  # fmt: skip
    late = (f"epoch(max({ts}) OVER (ORDER BY {order} ROWS BETWEEN UNBOUNDED PRECEDING AND "
            f"1 PRECEDING)) - epoch({ts})")  # fmt: skip
    if spill_root is not None:
        Path(spill_root).mkdir(parents=True, exist_ok=True)
    spill = Path(tempfile.mkdtemp(prefix="describe-", dir=spill_root))
    con = duck()
    try:
        # Not duck(memory_limit=...): that lets DuckDB reorder rows, and the order matters here.
        con.execute(f"SET memory_limit = {sql_str(MEMORY_LIMIT)}")
        con.execute(f"SET temp_directory = {sql_str(spill)}")
        row = con.execute(
            f"SELECT {', '.join(exprs)} FROM (SELECT *, {late} AS __late FROM {rel})"
        ).fetchone()
    except Exception as exc:  # duckdb raises many types for a file it cannot read
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise OwnDataError(
            f"DuckDB cannot read {spec.source.path} ({first}); check the file and, for a CSV, "
            f"datasets[].csv."
        ) from None
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)
    values = iter(row[5:])
    take = lambda names: {n: int(next(values)) for n in names}  # noqa: E731
    nulls, distinct, partitions, text = take(cols), take(strings), take(UNITS), take(cols)
    return Scan(rows=int(row[1]), nulls=nulls, without_values=int(row[0]), span_s=float(row[2]),
                distinct=distinct, late_rows=int(row[3]), max_lag_s=float(row[4]),
                partitions=partitions, text_bytes=text)  # fmt: skip


def _estimates(spec: OwnTableSpec, s: Scan) -> dict[str, float]:
    """Bytes per row of the formats that are not written, from the columns' text widths."""
    avg = {c: s.text_bytes[c] / s.rows for c in spec.file_columns}
    csv = sum(avg.values()) + len(avg)  # a separator after each value, the last a newline
    ilp = len(spec.table) + ILP_LINE
    for c in spec.file_columns:
        share = 1 - s.nulls[c] / s.rows  # ILP leaves a null out, name and all
        kind = spec.column_kind(c)
        if c == spec.timestamp:
            continue
        value = 17 * share if kind == "timestamp" else avg[c] + ILP_EXTRA.get(kind, 0) * share
        ilp += (len(c) + 2) * share + value  # `,name=` (a comma or the line's space)
    return {"csv": csv, "ilp": ilp}


def own_profile(spec: OwnTableSpec, s: Scan, file_bytes: int) -> dict[str, Any]:
    """The profile of an own dataset at the partition unit its table takes (`spec`)."""
    estimates = _estimates(spec, s)
    fmt = spec.source.format
    sizes = {f: size(estimates[f], estimate=True) for f in ("csv", "ilp") if f != fmt}
    sizes[fmt] = size(file_bytes / s.rows)
    table = table_profile(
        spec.table, s.rows, [spec.questdb_type(c) for c in spec.file_columns], s.distinct,
        s.late_rows, s.max_lag_s, spec.partition_by, s.partitions[spec.partition_by],
    )  # fmt: skip
    return dataset_profile(s.rows, [table], sizes)


def with_ilp_file(profile: dict[str, Any], ilp_bytes: int) -> dict[str, Any]:
    """The profile once the ILP text is written: its own size instead of the estimate."""
    sizes = {**profile["bytes_per_row"], "ilp": size(ilp_bytes / profile["rows"])}
    return {**profile, "bytes_per_row": sizes}
