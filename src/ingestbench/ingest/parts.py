"""The tables a job fills, as the dataset's kind gives them (ingestbench.datasets): a TSBS use
case its tables (cpu one, iot two) in the dataset's files, the user's own dataset its one table
in the user's file. `job_parts` is the one door: the job never asks which kind it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ingestbench.datasets import of_manifest
from ingestbench.ingest.methods.base import TablePart
from ingestbench.variants import CAPPED_METHODS, Variant


def rows_to_ingest(variant: Variant, dataset_rows: int, rows_cap: int | None) -> int:
    """The slow row loops and SQL methods may be capped; every other method ingests it all."""
    if variant.method in CAPPED_METHODS and rows_cap:
        return min(rows_cap, dataset_rows)
    return dataset_rows


def job_parts(
    variant: Variant, manifest: dict[str, Any], data: Path, table: str, rows_cap: int | None
) -> tuple[TablePart, ...]:
    """The dataset's tables in the variant's format (`data`), each with the rows to ingest (its
    first rows in file order: all of them but for a capped method). `table` names the cpu table
    on the server (the config's `table`)."""
    sources = of_manifest(manifest).table_sources(variant, manifest, Path(data), table)
    return tuple(
        TablePart(s.spec, s.path, rows_to_ingest(variant, s.rows, rows_cap), key=s.key)
        for s in sources
    )
