"""What the rules and the stages ask of a dataset instead of asking which kind it is: one protocol
per caller, each with the questions that caller has, and `DatasetKind`, all of them, which every
kind of the registry implements.

- `ClaimingKind`: the registry's lookups (ingestbench.datasets), which kind an entry, a manifest,
  a table's spec or a run file's dataset is;
- `PlanKind`: a `datasets[]` entry of the config, for the plan, the rules and the preflight (its
  name, derived datasets, the formats it needs, the variants it supports, the files its jobs
  read, the disk check's estimates);
- `IngestKind`: its manifest, for the ingest job (its run summary, table parts, unsupported
  variants, readers' queries, the repeats' source);
- `TableKind`: a table's spec, for the readers, the server's imports and the validation's DuckDB
  source and checks;
- `ValidationKind`: the expected pass and a run's validation (its tables' sources, its profile);
- `PacedDeliveryKind`: paced ingestion and the delivery experiment, which send one table and
  ask whether this dataset is one they can send, its rows and whether its keys are unique.

Answers that depend on a table's shape only (every TSBS table, cpu's or iot's, is read, imported
and checked alike) come from the first kind that claims the spec (`ingestbench.datasets.of_spec`).
The partition unit is the spec's (`TableSpec.partition_by`: TSBS's default, an own table's chosen
by ingestbench.own.partition when it is described), so no stage asks the kind for it.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ingestbench.errors import UserError
from ingestbench.readers.queries import QueryKind
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


@runtime_checkable
class ClaimingKind(Protocol):
    """What the registry's lookups ask: whether a thing is of this kind (asked of each kind in
    turn, the first that claims it is its)."""

    #: Its name ("cpu", "iot", "own"), which every dataset's name of it starts with.
    name: str

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


@runtime_checkable
class PlanKind(Protocol):
    """What the plan, the Snakefile's rules and the preflight ask of a `datasets[]` entry."""

    #: The rule that writes its files and manifest: "generate" (TSBS) or "describe" (a file that
    #: exists: described, hashed, never copied).
    data_rule: str

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


@runtime_checkable
class IngestKind(Protocol):
    """What the ingest job asks of the dataset's manifest."""

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
    def check_source(self, manifest: Path, data: Path, dataset: dict[str, Any]) -> Path | None:
        """The file the repeats' source checks read (None: none there to read)."""

    @abstractmethod
    def table_files(self, source: Path, specs: tuple[TableSpec, ...]) -> tuple[Path, ...]:
        """Each table's file of a dataset file `source` (a file per table, or the one file)."""

    @abstractmethod
    def reader_queries(self, spec: TableSpec, dataset: dict[str, Any]) -> tuple[QueryKind, ...]:
        """The queries readers beside ingestion send to the table (`dataset`: the manifest's
        params and run summary)."""


@runtime_checkable
class TableKind(Protocol):
    """What the readers, the server's imports, the loads and the validation ask of one table's
    spec."""

    #: The repeat-check family ingestbench.validate.repeat_checks applies to its tables: "tsbs"
    #: (rows per first tag, every field's sum, min and max) or "columns" (per column as its kind
    #: allows).
    checks: str

    @abstractmethod
    def ilp_protocol(self, spec: TableSpec, configured: int) -> int:
        """The ILP protocol version its table goes over."""

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


@runtime_checkable
class ValidationKind(Protocol):
    """What the expected pass and a run's validation ask: where each table's rows are, and the
    dataset's profile."""

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


@runtime_checkable
class PacedDeliveryKind(Protocol):
    """What paced ingestion and the delivery experiment ask: each sends one table, row for row,
    and compares the server's table with its source; paced also needs its rows in time order,
    known before its data exists."""

    @abstractmethod
    def why_not_paced(self, entry: dict[str, Any]) -> str | None:
        """Why paced ingestion cannot run on the entry, as what the dataset is ("your own
        file"); None: it can."""

    @abstractmethod
    def why_not_delivered(self, entry: dict[str, Any]) -> str | None:
        """Why the delivery loads cannot send the entry, as what the dataset is ("a TSBS iot
        dataset"); None: they can."""

    @abstractmethod
    def stated_rows(self, entry: dict[str, Any]) -> int | None:
        """Its rows as the entry states them (None: only its data can say)."""

    @abstractmethod
    def stated_keys(self, entry: dict[str, Any]) -> int | None:
        """The distinct values of its table's first SYMBOL column as the entry states them,
        which paced producers share out (None: only its data can say)."""

    @abstractmethod
    def more_rows(self, entry: dict[str, Any], rows: int) -> str:
        """How the entry gets at least `rows` rows, as a fix ("raise its epochs to at least
        40")."""

    @abstractmethod
    def keys_unique(self, manifest: dict[str, Any]) -> bool:
        """Whether no two of its rows share a timestamp and tags, so that a table with DEDUP
        UPSERT KEYS on them keeps every row."""

    @abstractmethod
    def one_table(self, manifest: dict[str, Any], data: Path, table: str) -> TableSource:
        """Its one table, named `table` on the server, with the file a client reads its rows
        from (`data`: its Parquet, or the file its data rule found); a dataset of several tables
        raises ValueError (why_not_delivered and why_not_paced refuse it first)."""


class DatasetKind(
    ClaimingKind,
    PlanKind,
    IngestKind,
    TableKind,
    ValidationKind,
    PacedDeliveryKind,
    Protocol,
):
    """One kind of dataset: every question of every caller. Each kind of the registry subclasses
    it, so a kind that lacks an answer cannot be made; tests/unit/test_datasets.py holds each
    kind to each protocol."""


#: The callers' protocols, which together are DatasetKind.
PROTOCOLS = (ClaimingKind, PlanKind, IngestKind, TableKind, ValidationKind, PacedDeliveryKind)
