"""The table an own file is loaded into, as the readers, the DDL, the methods and the validation
take it: a TableSpec (symbols, other columns with their kinds, the designated timestamp) that
also says where the file is and how to read it.

Its dictionary form (`to_dict`, `from_dict`) is what the dataset's manifest and every run file
keep, so a run names the exact table it measured. Light: the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ingestbench.own.csv_times import TimePattern
from ingestbench.own.dataset import CsvOptions
from ingestbench.tables.column_kinds import NUMERIC_KINDS, questdb_type
from ingestbench.tables.spec import DEFAULT_PARTITION, TableSpec


@dataclass(frozen=True)
class OwnSource:
    """Where the file is and how it reads: `types` holds (column, Arrow type text) for every
    column the table takes, as pyarrow reads it (the CSV readers are held to these types)."""

    path: str
    format: str  # parquet or csv
    directory: bool = False  # a directory of Parquet files
    hive: bool = False  # ... whose subdirectories are hive partitions (key=value)
    csv: CsvOptions = field(default_factory=CsvOptions)
    types: tuple[tuple[str, str], ...] = ()
    times: tuple[TimePattern, ...] = ()  # a CSV's time columns as the server's imports read them

    def arrow_types(self) -> dict[str, str]:
        return dict(self.types)

    def time_pattern(self, column: str) -> TimePattern | None:
        return next((t for t in self.times if t.column == column), None)


@dataclass(frozen=True)
class OwnTableSpec(TableSpec):
    """A TableSpec of own data: `kinds` are of ingestbench.tables.column_kinds, `order` the
    columns in the file's order (the table's too), `source` the file."""

    source: OwnSource | None = None
    order: tuple[str, ...] = ()

    @property
    def file_columns(self) -> tuple[str, ...]:
        return self.order or self.columns

    @property
    def numeric_fields(self) -> tuple[str, ...]:
        return tuple(f for f, k in zip(self.fields, self.kinds, strict=True) if k in NUMERIC_KINDS)

    def questdb_type(self, column: str) -> str:
        if column == self.timestamp:
            return "TIMESTAMP"
        if column in self.tags:
            return "SYMBOL"
        return questdb_type(self.kind(column))

    def to_dict(self) -> dict[str, Any]:
        src = self.source or OwnSource("", "parquet")
        return {
            "table": self.table,
            "timestamp": self.timestamp,
            "symbols": list(self.tags),
            "columns": [{"name": c, "kind": self.column_kind(c), "questdb": self.questdb_type(c),
                         "arrow": src.arrow_types().get(c)} for c in self.file_columns],
            "source": {"path": src.path, "format": src.format, "directory": src.directory,
                       "hive": src.hive, "csv": src.csv.to_dict(),
                       "times": {t.column: t.to_dict() for t in src.times}},
            "partition_by": self.partition_by,
        }  # fmt: skip

    def column_kind(self, column: str) -> str:
        if column == self.timestamp:
            return "timestamp"
        return "symbol" if column in self.tags else self.kind(column)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OwnTableSpec:
        cols, ts = d["columns"], d["timestamp"]
        fields = [c for c in cols if c["name"] != ts and c["kind"] != "symbol"]
        s, csv = d["source"], d["source"].get("csv") or {}
        source = OwnSource(
            path=s["path"], format=s["format"], directory=bool(s.get("directory")),
            hive=bool(s.get("hive")),
            csv=CsvOptions(csv.get("delimiter", ","), tuple(csv.get("null_values", [""])),
                           csv.get("timestamp_format")),
            types=tuple((c["name"], c["arrow"]) for c in cols),
            times=tuple(TimePattern(c, t["pattern"], t["example"], t.get("problem"))
                        for c, t in (s.get("times") or {}).items()),
        )  # fmt: skip
        return cls(
            table=d["table"],
            tags=tuple(c["name"] for c in cols if c["kind"] == "symbol"),
            fields=tuple(c["name"] for c in fields),
            kinds=tuple(c["kind"] for c in fields),
            timestamp=ts,
            nullable=True,
            source=source,
            order=tuple(c["name"] for c in cols),
            partition_by=d.get("partition_by", DEFAULT_PARTITION),
        )
