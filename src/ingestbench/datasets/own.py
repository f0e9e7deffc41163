"""The user's own file as a kind: described, hashed into its manifest and read where it is, never
copied (ingestbench.own); `sorted: true` derives a copy sorted by its timestamp.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ingestbench.datasets.kind import CsvImport, DatasetKind, FrameSource, TableSource
from ingestbench.datasets.tsbs import CSV_TIMESTAMP_PATTERN
from ingestbench.errors import UserError
from ingestbench.own import dataset as own_dataset
from ingestbench.own.dataset import OwnDataset
from ingestbench.own.spec import OwnTableSpec
from ingestbench.readers.queries import QueryKind, latest_queries
from ingestbench.storage.disk import sorted_copy_bytes
from ingestbench.tables.spec import TableSpec
from ingestbench.variants import Variant


class OwnKind(DatasetKind):
    """A `datasets[]` entry with a `path`: one table, described from the file (OwnTableSpec)."""

    name = own_dataset.PREFIX  # every own dataset's name starts with it
    checks = "columns"
    data_rule = "describe"

    def __repr__(self) -> str:
        return "OwnKind()"

    def claims_entry(self, entry: dict[str, Any]) -> bool:
        return isinstance(entry, dict) and "path" in entry  # the user's file, not TSBS parameters

    def claims_manifest(self, manifest: dict[str, Any]) -> bool:
        return bool(manifest.get("own"))

    def claims_spec(self, spec: TableSpec) -> bool:
        return isinstance(spec, OwnTableSpec)

    def claims_run(self, dataset: dict[str, Any]) -> bool:
        return bool(dataset.get("own"))

    def dataset_name(self, entry: dict[str, Any]) -> str:
        return OwnDataset.from_config(entry).name

    def derived(self, entry: dict[str, Any], data_dir: str) -> dict[str, dict[str, Any]]:
        if not entry.get("sorted"):
            return {}
        copy = own_dataset.sorted_copy(entry, data_dir)
        return {self.dataset_name(copy): copy}

    def variants(self, entry: dict[str, Any], variants: list[Variant]) -> list[Variant]:
        return own_dataset.own_variants(entry, variants)

    def formats(self, variants: list[Variant]) -> list[str]:
        # Only the ILP text is made from the user's file; the file itself is read where it is.
        return ["ilp"] if any(v.format == "ilp" for v in variants) else []

    def check_entry(self, entry: dict[str, Any], data_dir: str) -> None:
        own_dataset.check_manifest_source(entry, data_dir)

    def source_files(self, entry: dict[str, Any]) -> list[str]:
        return own_dataset.own_data_files(entry)

    def data_input(self, entry: dict[str, Any], fmt: str, made: str) -> str:
        return made if fmt == "ilp" else str(OwnDataset.from_config(entry).path)

    def validation_source(self, entry: dict[str, Any], parquet: str) -> str:
        return str(OwnDataset.from_config(entry).path)

    def file_is_directory(self, fmt: str) -> bool:
        return False  # its ILP text, the one file it makes

    def profile_source(self, name: str, data_dir: str, results_dir: str) -> str:
        return f"{data_dir}/{name}.manifest.json"  # the describe pass

    def rows(self, entry: dict[str, Any], name: str, data_dir: str) -> int:
        return own_dataset.own_rows(entry, name, data_dir)

    def derived_bytes(self, entry: dict[str, Any]) -> int:
        """A sorted copy not yet written: about its source's bytes, and DuckDB's spill as much
        again."""
        if not entry.get("derived") or OwnDataset.from_config(entry).path.exists():
            return 0
        return sorted_copy_bytes(own_dataset.own_data_files(entry["derived"]["source"]))

    def run_summary(self, manifest: dict[str, Any]) -> dict[str, Any]:
        from ingestbench.own.summary import own_summary

        return own_summary(manifest)

    def table_sources(
        self, variant: Variant, manifest: dict[str, Any], data: Path, table: str
    ) -> list[TableSource]:
        """The user's one table, under its own name: read from the user's file where it is (the
        ILP text is the dataset's own file)."""
        spec = OwnTableSpec.from_dict(manifest["table"])
        path = Path(data) if variant.format == "ilp" else Path(spec.source.path)
        return [TableSource(spec, path, int(manifest["rows"]))]

    def unsupported(self, variant: Variant, manifest: dict[str, Any]) -> str | None:
        from ingestbench.own.support import why_cannot_load

        return why_cannot_load(variant, OwnTableSpec.from_dict(manifest["table"]), manifest)

    def refusal_is_unsupported(self) -> bool:
        return True  # a value of the user's that a path cannot carry: that path cannot load it

    def ilp_protocol(self, spec: TableSpec, configured: int) -> int:
        from ingestbench.own.support import protocol_for

        return protocol_for(spec, configured)  # a table with decimals: the version carrying them

    def check_source(self, manifest: Path, data: Path, dataset: dict[str, Any]) -> Path | None:
        return Path(dataset["table"]["source"]["path"])  # the user's file, where it is

    def table_files(self, source: Path, specs: tuple[TableSpec, ...]) -> tuple[Path, ...]:
        return (Path(source),) * len(specs)

    def source_tables(
        self, source: Path, table: dict[str, Any] | None
    ) -> list[tuple[TableSpec, Path]]:
        return [(OwnTableSpec.from_dict(table), Path(source))]

    def expected_profile(
        self,
        tables: list[tuple[TableSpec, Path]],
        aggregates: dict[str, Any],
        manifest: dict[str, Any],
    ) -> dict[str, Any] | None:
        return None  # its manifest's (the describe pass), profile_source

    def reader_queries(self, spec: TableSpec, dataset: dict[str, Any]) -> tuple[QueryKind, ...]:
        """The latest row and a count per second over the last minute of its timestamp."""
        return latest_queries(spec.table, spec.timestamp)

    def why_not_paced(self, entry: dict[str, Any]) -> str | None:
        return None  # its rows in file order, stamped when due (or its own times), one table

    def why_not_delivered(self, entry: dict[str, Any]) -> str | None:
        return None  # one table, compared with the user's file row for row

    def stated_rows(self, entry: dict[str, Any]) -> int | None:
        return None  # counted when the file is described, not before

    def stated_keys(self, entry: dict[str, Any]) -> int | None:
        return None  # read when a paced job starts

    def more_rows(self, entry: dict[str, Any], rows: int) -> str:
        return f"give datasets[].path a file of at least {rows:,} rows"

    def keys_unique(self, manifest: dict[str, Any]) -> bool:
        return False  # not known: DEDUP could merge distinct rows of the user's

    def one_table(self, manifest: dict[str, Any], data: Path, table: str) -> TableSource:
        """The user's table, read from the user's file where it is."""
        spec = OwnTableSpec.from_dict(manifest["table"])
        return TableSource(dataclasses.replace(spec, table=table), Path(spec.source.path),
                           int(manifest["rows"]))  # fmt: skip

    def frames(self, spec: TableSpec) -> FrameSource | None:
        from ingestbench.own.read import OwnFrames

        return OwnFrames(spec)

    def csv_import(self, spec: TableSpec) -> CsvImport:
        """The user's CSV: its delimiter, null markers and time patterns."""
        from ingestbench.own.support import csv_import_schema, timestamp_pattern

        csv = spec.source.csv
        return CsvImport(
            schema=csv_import_schema(spec),
            delimiter=csv.delimiter,
            timestamp_pattern=timestamp_pattern(spec) or CSV_TIMESTAMP_PATTERN,
            patterns={t.column: t.pattern for t in spec.source.times if t.pattern},
            null_values=tuple(csv.null_values),
            timestamp_format=csv.timestamp_format,
            fix="set datasets[].csv.timestamp_format to the format of its times, or fix those "
            "rows in the file",
        )

    def parquet_columns(self, spec: TableSpec) -> tuple[str, ...] | None:
        return tuple(spec.columns)  # the file may hold columns the table leaves out

    def source_relation(self, spec: TableSpec, path: Path, limit: int | None) -> str:
        from ingestbench.columnar.duckdb_sql import (
            own_relation,  # duckdb: not at the Snakefile's start
        )

        return own_relation(spec, limit)  # the user's file, as spec.source reads it

    def unreadable(self, spec: TableSpec, path: Path, exc: Exception) -> UserError:
        from ingestbench.columnar.duckdb_sql import own_unreadable

        return own_unreadable(spec.source.path, exc)


OWN = OwnKind()
