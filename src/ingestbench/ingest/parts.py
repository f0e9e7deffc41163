"""The tables a job fills, as each kind of dataset gives them: a TSBS use case its tables (cpu
one, iot two) in the dataset's files, the user's own dataset its one table in the user's file.
`job_parts` is the one door: the job never asks which kind it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ingestbench.ingest.methods.base import TablePart
from ingestbench.own.job import own_spec
from ingestbench.tsbs.columns import table_files, use_case_tables
from ingestbench.variants import CAPPED_METHODS, Variant


def rows_to_ingest(variant: Variant, dataset_rows: int, rows_cap: int | None) -> int:
    """The slow row loops and SQL methods may be capped; every other method ingests it all."""
    if variant.method in CAPPED_METHODS and rows_cap:
        return min(rows_cap, dataset_rows)
    return dataset_rows


def job_parts(
    variant: Variant, manifest: dict[str, Any], data: Path, table: str, rows_cap: int | None
) -> tuple[TablePart, ...]:
    """The dataset's tables in the variant's format (`data`), each with the rows to ingest.
    `table` names the cpu table on the server (the config's `table`)."""
    kind = own_parts if manifest.get("own") else tsbs_parts
    return kind(variant, manifest, Path(data), table, rows_cap)


def tsbs_parts(
    variant: Variant, manifest: dict[str, Any], data: Path, table: str, rows_cap: int | None
) -> tuple[TablePart, ...]:
    """A TSBS use case's tables, each from its file (the ILP text is one file for all) and
    under the dataset's name of it; rows capped for the row loops."""
    params = manifest["params"]
    use_case, field_type = params.get("use_case", "cpu"), params["field_type"]
    named = use_case_tables(use_case, field_type)  # as the dataset names them
    specs = use_case_tables(use_case, field_type, table)  # as they land on the server
    files = (data,) * len(specs) if variant.format == "ilp" else table_files(data, specs)
    return tuple(
        TablePart(spec, path, rows_to_ingest(variant, _table_rows(manifest, name.table), rows_cap),
                  key=name.table)
        for spec, name, path in zip(specs, named, files, strict=True)
    )  # fmt: skip


def _table_rows(manifest: dict[str, Any], table: str) -> int:
    """A table's rows: a manifest of several tables lists each; a cpu manifest's rows are its
    one table's."""
    return manifest["tables"][table]["rows"] if "tables" in manifest else manifest["rows"]


def own_parts(
    variant: Variant, manifest: dict[str, Any], data: Path, table: str, rows_cap: int | None
) -> tuple[TablePart, ...]:
    """The user's one table, under its own name: read from the user's file where it is (the ILP
    text is the dataset's own file), its first rows in file order: all of them but for a capped row
    loop."""
    spec = own_spec(manifest)
    path = data if variant.format == "ilp" else Path(spec.source.path)
    return (TablePart(spec, path, rows_to_ingest(variant, int(manifest["rows"]), rows_cap)),)
