"""A dataset entry that names the user's own file: checked, named and parsed from the config.

Light on purpose (the standard library, and the schema for an entry's defaults): the Snakefile
imports it to name every dataset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingestbench.errors import UserError

#: Every own dataset's name starts so (the TSBS ones start with their use case).
PREFIX = "own"
FORMATS = ("parquet", "csv")
_SUFFIXES = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "csv"}


class OwnDataError(UserError, ValueError):
    """A file or entry this workflow cannot benchmark; the message names cause and fix."""


@dataclass(frozen=True)
class CsvOptions:
    """How the readers (pyarrow, polars, DuckDB, QuestDB's import) read the user's CSV."""

    delimiter: str = ","
    null_values: tuple[str, ...] = ("",)
    timestamp_format: str | None = None  # strptime, e.g. "%Y-%m-%d %H:%M:%S"; None: ISO 8601

    def to_dict(self) -> dict[str, Any]:
        return {"delimiter": self.delimiter, "null_values": list(self.null_values),
                "timestamp_format": self.timestamp_format}  # fmt: skip


@dataclass(frozen=True)
class OwnDataset:
    """One `datasets[]` entry with a `path`: the user's Parquet file, CSV file or directory of
    Parquet files (hive-partitioned or not), never copied or rewritten."""

    label: str
    path: Path
    timestamp: str | None = None
    table: str | None = None
    symbols: tuple[str, ...] | None = None  # None: the default rule (docs/own-data.md)
    csv: CsvOptions = field(default_factory=CsvOptions)
    unsupported_columns: str = "refuse"
    partition_by: str | None = None  # None: chosen from the file's rows per day (own.partition)
    derived_from: str | None = None  # a sorted copy: its source dataset's name

    @property
    def name(self) -> str:
        """``own-<label>`` (underscores as dashes: dataset names are dash-separated)."""
        return f"{PREFIX}-{self.label.replace('_', '-')}"

    @property
    def table_name(self) -> str:
        return self.table or self.label

    @property
    def format(self) -> str:
        """parquet or csv: a directory holds Parquet files; a file's suffix says which (also
        before a rule has made the file)."""
        fmt = _SUFFIXES.get(self.path.suffix.lower())
        if self.path.is_dir() or (fmt is None and not self.path.exists()):
            return "parquet"
        if fmt is None:
            raise OwnDataError(
                f"dataset {self.label!r}: cannot tell the format of {self.path} from its suffix "
                f"(datasets[].path): name it .parquet, .csv or .tsv, or point datasets[].path at "
                f"a directory of Parquet files."
            )
        return fmt

    def require_exists(self) -> None:
        if not self.path.exists():
            raise OwnDataError(
                f"dataset {self.label!r}: {self.path} does not exist; fix datasets[].path "
                f"(a path relative to the directory the workflow runs in)."
            )

    @classmethod
    def from_config(cls, d: dict[str, Any]) -> OwnDataset:
        """From a `datasets[]` entry with a `path`, checked against the schema, which fills in
        its defaults (of its `csv` block too, set or not)."""
        from ingestbench.schema import first_error, own_dataset_schema

        # `derived` is the workflow's own key of a sorted copy, never the user's.
        entry = {k: v for k, v in d.items() if k != "derived"}
        entry["csv"] = dict(entry.get("csv") or {})
        if "path" in entry:
            entry["path"] = str(entry["path"])
        error = first_error(entry, own_dataset_schema())
        if error is not None:
            where, message = error
            fix = "fix the datasets[] entry" if where == "(top level)" else (
                f"set datasets[].{where}")  # fmt: skip
            raise OwnDataError(
                f"invalid dataset {d.get('label')!r} at '{where}': {message}; {fix} as "
                f"docs/configuration.md describes."
            )
        csv, symbols, path = entry["csv"], entry.get("symbols"), Path(entry["path"])
        return cls(
            label=entry["label"],
            path=path,
            timestamp=entry.get("timestamp"),
            table=entry.get("table"),
            symbols=None if symbols is None else tuple(symbols),
            csv=CsvOptions(
                delimiter=csv.get("delimiter") or default_delimiter(path),
                null_values=tuple(csv["null_values"]),
                timestamp_format=csv.get("timestamp_format"),
            ),
            unsupported_columns=entry["unsupported_columns"],
            partition_by=entry.get("partition_by"),
            derived_from=(d.get("derived") or {}).get("from"),
        )


def default_delimiter(path: Path) -> str:
    """A .tsv file's fields are split on tabs, any other CSV file's on commas."""
    return "\t" if path.suffix.lower() == ".tsv" else ","


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def plain_identifier(name: str) -> bool:
    return bool(_IDENT.match(name))


def own_data_files(d: dict[str, Any]) -> list[str]:
    """The files an own dataset consists of (a directory's Parquet files, each an input of its
    describe rule: a file rewritten in place then reruns the dataset's jobs too)."""
    path = OwnDataset.from_config(d).path
    if not path.is_dir():
        return [str(path)]

    def hidden(p: Path) -> bool:
        return any(part.startswith((".", "_")) for part in p.relative_to(path).parts)

    return sorted(str(p) for p in path.rglob("*.parquet") if p.is_file() and not hidden(p))


#: A manifest's name is the label's: two files under one label would share it.
SAME_LABEL_OTHER_FILE = (
    "dataset {label!r} names {path}, but {manifest} describes {other} under the same name "
    "(another config gave that file this label): give this dataset a label of its own "
    "(datasets[].label), or delete {manifest} if {other} is no longer benchmarked."
)


def check_manifest_source(d: dict[str, Any], data_dir: str) -> None:
    """Refuse an own dataset whose manifest in `data_dir` describes another file: the same name
    must be the same data."""
    import json

    dataset = OwnDataset.from_config(d)
    manifest = Path(data_dir) / f"{dataset.name}.manifest.json"
    try:
        other = json.loads(manifest.read_text())["table"]["source"]["path"]
    except (OSError, ValueError, KeyError, TypeError):
        return  # none yet (or unreadable: its describe rule writes it anew)
    if Path(other).resolve() != dataset.path.resolve():
        raise OwnDataError(SAME_LABEL_OTHER_FILE.format(
            label=dataset.label, path=dataset.path, manifest=manifest, other=other))  # fmt: skip


#: A sorted copy's name and label end so: `own-<label>-sorted`.
SORTED = "sorted"


def sorted_copy(d: dict[str, Any], data_dir: str) -> dict[str, Any]:
    """The entry of an own dataset's sorted copy (`sorted: true`): a dataset of its own, whose
    file DuckDB writes into `data_dir` sorted by the timestamp, in the source's format (a
    directory becomes one Parquet file). Its `derived` names the source; its CSV gets ISO times
    (so no `timestamp_format`) and the source's first null marker."""
    source = OwnDataset.from_config(d)
    ext = "csv" if source.format == "csv" else "parquet"
    copy = {k: v for k, v in d.items() if k not in ("sorted", "csv")}
    if ext == "csv":
        csv = source.csv
        copy["csv"] = {"delimiter": csv.delimiter, "null_values": [csv.null_values[0]]}
    return {**copy, "label": f"{source.label}_{SORTED}",
            "path": f"{data_dir.rstrip('/')}/{source.name}-{SORTED}.{ext}",
            "derived": {"from": source.name, "source": d}}  # fmt: skip


def own_variants(d: dict[str, Any], variants: list) -> list:
    """The variants an own dataset runs: those reading its file's format, and the ILP text's
    (a csv variant of a Parquet file would need a copy of the file the workflow never makes)."""
    try:
        fmt = OwnDataset.from_config(d).format
    except OwnDataError:  # its describe rule says why, in one sentence, before any ingestion
        fmt = None
    return [v for v in variants if v.format in (fmt, "ilp")]


#: Bytes of an own file per row, for the disk check before its manifest counts them (a
#: generous guess: a compact Parquet file holds more rows per byte, so more is reserved).
OWN_BYTES_PER_ROW_GUESS = 20


def own_rows(d: dict[str, Any], name: str, data_dir: str) -> int:
    """An own dataset's rows: its manifest's, or guessed from its bytes before there is one."""
    manifest = Path(data_dir) / f"{name}.manifest.json"
    if manifest.exists():
        import json

        return int(json.loads(manifest.read_text()).get("rows", 0))
    if d.get("derived"):  # a sorted copy not yet written: its source's rows
        return own_rows(d["derived"]["source"], d["derived"]["from"], data_dir)
    path = Path(str(d["path"]))
    files = path.rglob("*") if path.is_dir() else [path]
    size = sum(f.stat().st_size for f in files if f.is_file())
    return size // OWN_BYTES_PER_ROW_GUESS
