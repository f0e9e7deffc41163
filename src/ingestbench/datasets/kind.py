"""The interface every kind of dataset implements: what the rules and the stages ask of a dataset
instead of asking which kind it is.

A kind answers at four levels, each from what that level holds:

- a `datasets[]` entry of the config (the rules: its name, derived datasets, the formats it
  needs, the variants it supports, the files its jobs read, the disk check's estimates);
- its manifest (the ingest job: its run summary, table parts, unsupported variants);
- a table's spec (the readers, the server's imports, the validation's DuckDB source and checks);
- a run file's dataset (the validation of a run).

Answers that depend on a table's shape only (every TSBS table, cpu's or iot's, is read, imported
and checked alike) come from the first kind that claims the spec (`ingestbench.datasets.of_spec`).
The partition unit is the spec's (`TableSpec.partition_by`: TSBS's default, an own table's chosen
by ingestbench.own.partition when it is described), so no stage asks the kind for it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ingestbench.errors import UserError
from ingestbench.queryload.queries import QueryKind
from ingestbench.tables.spec import TableSpec
from ingestbench.variants import Variant


@dataclass(frozen=True)
class TableSource:
    """One table of a dataset as a job fills it: its spec (named as it lands on the server), the
    file its rows are read from, its rows in the dataset, and the dataset's name of the table
    ("": the same as on the server)."""

    spec: TableSpec
    path: Path
    rows: int
    key: str = ""


@dataclass(frozen=True)
class CsvImport:
    """How QuestDB's own CSV imports (`/imp`, `COPY`) read a table's CSV: the `/imp` schema, the
    delimiter to name (None: the server's default, a comma), the designated timestamp's pattern,
    every time column's pattern (for naming the first rejected row), the file's null markers and
    strptime format, and the fix a rejected import's sentence ends with."""

    schema: list[dict[str, str]]
    delimiter: str | None
    timestamp_pattern: str
    patterns: dict[str, str]
    null_values: tuple[str, ...] = ("",)
    timestamp_format: str | None = None
    fix: str = "check that the file is intact"


class FrameSource(Protocol):
    """A table's rows as dataframes, for a kind that reads its source itself (not a Parquet or
    CSV file the readers of ingestbench.ingest.frames open as a user would)."""

    def read(self, library: str, offset: int, length: int | None) -> Any: ...

    def iter(self, library: str, chunk_rows: int, rows: int) -> Iterator[Any]: ...


class DatasetKind(ABC):
    """One kind of dataset. Every method is abstract: a new kind answers each question, and
    tests/unit/test_datasets.py holds the registry to this interface."""

    #: Its name ("cpu", "iot", "own").
    name: str
    #: The repeat-check family ingestbench.validate.repeat_checks applies to its tables: "tsbs"
    #: (rows per first tag, every field's sum, min and max) or "columns" (per column as its kind
    #: allows).
    checks: str
    #: The rule that writes its files and manifest: "generate" (TSBS) or "describe" (a file that
    #: exists: described, hashed, never copied).
    data_rule: str

    # Which kind: the lookups of ingestbench.datasets ask each kind in turn.
    @abstractmethod
    def claims_entry(self, entry: dict[str, Any]) -> bool:
        """Whether a `datasets[]` entry is of this kind."""

    @abstractmethod
    def claims_manifest(self, manifest: dict[str, Any]) -> bool:
        """Whether a dataset manifest is of this kind."""

    @abstractmethod
    def claims_spec(self, spec: TableSpec) -> bool:
        """Whether a table's spec is of this kind (its shape's answers)."""

    @abstractmethod
    def claims_run(self, dataset: dict[str, Any]) -> bool:
        """Whether a run file's dataset (its run summary) is of this kind."""

    # The config's entry: the rules and the plan.
    @abstractmethod
    def dataset_name(self, entry: dict[str, Any]) -> str:
        """The dataset's name, which every file of it carries."""

    @abstractmethod
    def derived(self, entry: dict[str, Any], data_dir: str) -> dict[str, dict[str, Any]]:
        """{name: entry} of the datasets made from this one and benchmarked beside it."""

    @abstractmethod
    def variants(self, entry: dict[str, Any], variants: list[Variant]) -> list[Variant]:
        """Of the variants the config gives the dataset, those it supports."""

    @abstractmethod
    def formats(self, variants: list[Variant]) -> list[str]:
        """The formats its data rule writes for these variants."""

    @abstractmethod
    def check_entry(self, entry: dict[str, Any], data_dir: str) -> None:
        """Raise a UserError if the entry cannot run as it stands (before any job)."""

    @abstractmethod
    def source_files(self, entry: dict[str, Any]) -> list[str]:
        """The files its data rule reads (none for generated data)."""

    @abstractmethod
    def data_input(self, entry: dict[str, Any], fmt: str, made: str) -> str:
        """The file an ingestion of format `fmt` reads; `made`: the data rule's file of it."""

    @abstractmethod
    def validation_source(self, entry: dict[str, Any], parquet: str) -> str:
        """What DuckDB reads the expected rows from; `parquet`: the data rule's Parquet."""

    @abstractmethod
    def file_is_directory(self, fmt: str) -> bool:
        """Whether its file in `fmt` is a directory (a file per table)."""

    @abstractmethod
    def profile_source(self, name: str, data_dir: str, results_dir: str) -> str:
        """The file holding its profile."""

    @abstractmethod
    def rows(self, entry: dict[str, Any], name: str, data_dir: str) -> int:
        """Its rows, for the disk check: known, or estimated before its data exists."""

    @abstractmethod
    def derived_bytes(self, entry: dict[str, Any]) -> int:
        """Bytes its data rule needs beyond its formats' files while it writes (the disk
        check); 0 once written."""

    # Its manifest: the ingest job.
    @abstractmethod
    def run_summary(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """The dataset as every run file of it names it."""

    @abstractmethod
    def table_sources(
        self, variant: Variant, manifest: dict[str, Any], data: Path, table: str
    ) -> list[TableSource]:
        """Its tables in the variant's format (`data`); `table`: the config's name of the cpu
        table on the server."""

    @abstractmethod
    def unsupported(self, variant: Variant, manifest: dict[str, Any]) -> str | None:
        """Why the variant cannot load this dataset, before any server starts; None: it can."""

    @abstractmethod
    def refusal_is_unsupported(self) -> bool:
        """Whether a value a path cannot carry (found only by loading) makes the variant
        unsupported rather than failed: true of data the workflow did not write."""

    @abstractmethod
    def ilp_protocol(self, spec: TableSpec, configured: int) -> int:
        """The ILP protocol version its table goes over."""

    @abstractmethod
    def check_source(self, manifest: Path, data: Path, dataset: dict[str, Any]) -> Path | None:
        """The file the repeats' source checks read (None: none there to read)."""

    @abstractmethod
    def table_files(self, source: Path, specs: tuple[TableSpec, ...]) -> tuple[Path, ...]:
        """Each table's file of a dataset file `source` (a file per table, or the one file)."""

    @abstractmethod
    def source_tables(
        self, source: Path, table: dict[str, Any] | None
    ) -> list[tuple[TableSpec, Path]]:
        """Each table with the file its rows are read from (`source`: its validation source;
        `table`: the table as its manifest and run files describe it, where they do)."""

    @abstractmethod
    def expected_profile(
        self,
        tables: list[tuple[TableSpec, Path]],
        aggregates: dict[str, Any],
        manifest: dict[str, Any],
    ) -> dict[str, Any] | None:
        """Its profile from the expected pass (None: its profile is elsewhere, profile_source)."""

    @abstractmethod
    def reader_queries(self, spec: TableSpec, dataset: dict[str, Any]) -> tuple[QueryKind, ...]:
        """The queries readers beside ingestion send to the table (`dataset`: the manifest's
        params and run summary)."""

    # A table's spec: the readers, the server's imports, the validation.
    @abstractmethod
    def frames(self, spec: TableSpec) -> FrameSource | None:
        """Its own reader of the table's rows; None: its files, read as a user reads them."""

    @abstractmethod
    def csv_import(self, spec: TableSpec) -> CsvImport:
        """How the server's CSV imports read the table's CSV."""

    @abstractmethod
    def parquet_columns(self, spec: TableSpec) -> tuple[str, ...] | None:
        """The columns the server's Parquet read inserts (None: all of the file's)."""

    @abstractmethod
    def source_relation(self, spec: TableSpec, path: Path, limit: int | None) -> str:
        """DuckDB SQL of the table's source rows (or its first `limit` in file order)."""

    @abstractmethod
    def unreadable(self, spec: TableSpec, path: Path, exc: Exception) -> UserError:
        """The sentence for a source DuckDB cannot read: cause and fix."""
