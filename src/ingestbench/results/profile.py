"""A dataset's profile: what makes its rows cheap or dear to QuestDB, as a plain document.

It is measured where the data is already read (an own file's describe pass, own.profile; a TSBS
dataset's `expected` pass, datasets.tsbs_profile): rows; per table its columns per QuestDB type,
the distinct values of each string or symbol column, the rows that arrive behind the running maximum
timestamp (each one makes QuestDB merge into a partition it has written: its out-of-order path)
with the largest lag, and the partitions touched at the table's unit; bytes per row as Parquet,
CSV and ILP (the file's own size where it exists, else an estimate, named so). A sorted copy's
profile also says what it was derived from and how long the sort took (`derived`).

This module is the shape only, light (the standard library), so that the jobs measuring it do
not rerun when its text or the recommendation change (results.profile_text).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

FORMATS = ("parquet", "csv", "ilp")


def table_profile(
    table: str,
    rows: int,
    types: Iterable[str],
    distinct: Mapping[str, int],
    late_rows: int,
    max_lag_s: float | None,
    partition_by: str,
    partitions: int,
) -> dict[str, Any]:
    """One table's part of a profile; `types` is the QuestDB type of each column."""
    counts: dict[str, int] = {}
    for t in types:
        counts[t] = counts.get(t, 0) + 1
    return {
        "table": table, "rows": int(rows), "types": counts,
        "distinct": {k: int(v) for k, v in distinct.items()},
        "late_rows": int(late_rows), "late_share": late_rows / rows if rows else 0.0,
        "max_lag_s": float(max_lag_s or 0.0), "partition_by": partition_by,
        "partitions": int(partitions),
    }  # fmt: skip


def size(bytes_per_row: float | None, estimate: bool = False) -> dict[str, Any]:
    return {"bytes_per_row": None if bytes_per_row is None else round(float(bytes_per_row), 1),
            "estimate": bool(estimate)}  # fmt: skip


def dataset_profile(
    rows: int, tables: list[dict[str, Any]], sizes: Mapping[str, dict[str, Any]]
) -> dict[str, Any]:
    return {"rows": int(rows), "tables": tables,
            "bytes_per_row": {fmt: sizes.get(fmt) or size(None) for fmt in FORMATS}}  # fmt: skip
