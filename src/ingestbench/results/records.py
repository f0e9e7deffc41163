"""The result files that pass between rules, as typed records: one schema version, one writer and
one reader per file.

- the run file (`results/runs/<server>/<dataset>/<variant>.json`): `RunFile`, its `Repeat`s, the
  `RunDataset` and `RunVariant` it ran; written by the ingest job, read by validation, the summary
  and the CLI;
- the validation file (`results/validation/<server>/<dataset>/<variant>.json`): `Validation`;
- a row of `results/summary.csv`: `SummaryRow` (the columns that identify a run; the statistics
  are computed by ingestbench.results.summary).

Version 1 files (before host, warm-up and per-process memory were recorded) still load: every
field added since is optional. Fields a record does not know are kept as they are (`extra`), so a
newer writer's additions survive a read and a write. A file of an unknown (newer) version, or a
document that is not such a file, is refused with one sentence naming the file and the fix.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ingestbench.storage.files import ResultFileError, load_json, write_json_atomic

#: Written into every result file; bump when a field changes meaning or goes away.
SCHEMA_VERSION = 2

#: The timed phases of a repeat, in order; `end_to_end` is the sum of END_TO_END_PHASES (the wall
#: time when streamed), and `serialize` is a separate pass after them, never part of it
#: (ingestbench.ingest.timing).
PHASES = ("read", "convert", "serialize", "send", "visible")
END_TO_END_PHASES = ("read", "convert", "send", "visible")
#: The times the summary has statistics of (columns `<time>_s_<stat>`), and those statistics.
TIMES = (*PHASES, "end_to_end")
STATS = ("median", "min", "max")
#: Versions the readers accept (1: files from before host, warm-up and RSS split were recorded).
READABLE_VERSIONS = (1, 2)

_OPTIONAL = {"omit_if_none": True}


def optional(default: Any = None) -> Any:
    """A field added after version 1: absent in older files, and not written while it is None."""
    return field(default=default, metadata=_OPTIONAL)


class RecordError(ResultFileError):
    """A result file that its reader cannot take (wrong kind, version or shape)."""


class _Record:
    """from_dict/to_dict for the dataclasses below: declared fields in order, then the extras."""

    extra: dict[str, Any]
    #: Key order of the written document when it differs from the field order (required fields
    #: must come first in a dataclass, not in a file people read).
    ORDER: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "") -> Any:
        if not isinstance(data, dict):
            raise _ShapeError(f"{where or cls.__name__} is a {type(data).__name__}, not an object")
        known = {f.name: f for f in dataclasses.fields(cls) if f.name != "extra"}
        missing = [
            name
            for name, f in known.items()
            if name not in data
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            raise _ShapeError(f"{where or cls.__name__} lacks {', '.join(missing)}")
        values = {name: cls._convert(name, data[name], where) for name in known if name in data}
        extra = {k: v for k, v in data.items() if k not in known}
        return cls(**values, extra=extra)

    @classmethod
    def _convert(cls, name: str, value: Any, where: str) -> Any:
        return value

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if value is None and f.metadata.get("omit_if_none"):
                continue
            if isinstance(value, _Record):
                value = value.to_dict()
            elif isinstance(value, list):
                value = [v.to_dict() if isinstance(v, _Record) else v for v in value]
            out[f.name] = value
        out.update(self.extra)
        if self.ORDER:
            out = {k: out[k] for k in self.ORDER if k in out} | {
                k: v for k, v in out.items() if k not in self.ORDER
            }
        return out


class _ShapeError(Exception):
    """Internal: what is missing or of the wrong type; the reader turns it into a RecordError."""


# ---------------------------------------------------------------------------------- run file


@dataclass
class RunDataset(_Record):
    """The dataset a run ingested (from its manifest)."""

    name: str
    rows: int
    scale: int | None = None
    epochs: int | None = None
    seed: int | None = None
    field_type: str = "double"
    out_of_order_lag_s: float | None = None
    dedup: bool = False  # the table had DEDUP UPSERT KEYS
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunVariant(_Record):
    """The variant a run used (ingestbench.variants.Variant as written by its to_dict())."""

    name: str
    library: str
    method: str
    format: str
    transport: str
    workers: int = 1
    batch_rows: int | None = None
    chunk_rows: int | None = optional()  # None: whole-file mode (or a method without chunks)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Host(_Record):
    """The machine a run ran on."""

    hostname: str
    slurm_job_id: str | None = None
    cpu_model: str | None = None
    cpu_count: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Warmup(_Record):
    """The untimed warm-up ingestion before the timed repeats."""

    rows: int
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Repeat(_Record):
    """One timed ingestion: phase seconds (PHASES) and what it cost."""

    repeat: int
    cold: bool
    phases: dict[str, float]
    end_to_end: float
    client_cpu_s: float | None = None
    server_cpu_s: float | None = None
    peak_rss_bytes: int | None = optional()  # version 1: client and server together
    client_rss_bytes: int | None = optional()  # the client's process tree, workers included
    server_rss_bytes: int | None = optional()  # the embedded server; None for an external one
    overlap: float | None = optional()  # (read + convert + send + visible) / end_to_end
    table_disk_bytes: int | None = optional()  # the table on disk once visible (table_storage())
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunFile(_Record):
    """Every repeat of one variant on one dataset."""

    KIND: ClassVar[str] = "run file"
    ORDER: ClassVar[tuple[str, ...]] = ("schema_version", "dataset", "variant", "rows",
        "table_rows", "ilp_bytes", "ilp_protocol_version", "settings", "server", "host", "warmup",
        "repeats")  # fmt: skip

    schema_version: int
    dataset: RunDataset
    variant: RunVariant
    rows: int
    repeats: list[Repeat]
    ilp_bytes: int | None = None
    ilp_protocol_version: int | None = None
    server: dict[str, Any] = field(default_factory=dict)
    host: Host | None = optional()
    warmup: Warmup | None = optional()
    # The config's settings it ran under (ingestbench.workflow.rule_inputs.ingest_settings); absent
    # in files written before they were recorded.
    settings: dict[str, Any] | None = optional()
    # The rows sent to each table, keyed by the dataset's name of it (cpu: {"cpu": rows});
    # absent where no table was loaded (an own table no method of the variant can load).
    table_rows: dict[str, int] | None = optional()
    # The repeats again with readers beside them (ingestbench.readers.beside): absent in a
    # run without readers.
    readers: dict[str, Any] | None = optional()
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def _convert(cls, name: str, value: Any, where: str) -> Any:
        parts = {"dataset": RunDataset, "variant": RunVariant, "host": Host, "warmup": Warmup}
        if name in parts and value is not None:
            return parts[name].from_dict(value, name)
        if name == "repeats":
            if not isinstance(value, list):
                raise _ShapeError("repeats is not a list")
            return [Repeat.from_dict(r, f"repeats[{i}]") for i, r in enumerate(value)]
        return value


# ---------------------------------------------------------------------------- validation file


@dataclass
class Validation(_Record):
    """What was checked of one run against DuckDB, and what differed."""

    KIND: ClassVar[str] = "validation file"
    ORDER: ClassVar[tuple[str, ...]] = ("schema_version", "variant", "dataset", "passed")

    schema_version: int
    passed: bool
    variant: dict[str, Any] = field(default_factory=dict)
    dataset: str | None = None
    source_rows: str | None = None
    export_timestamp_type: str | None = None
    rel_tolerance: float | None = None
    failed_checks: list[str] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    first_differences: Any = None
    differing_rows: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------- summary row


@dataclass
class SummaryRow:
    """The columns of a summary.csv row that say which run it is (the statistics follow them)."""

    dataset: str
    dataset_rows: int | None
    scale: int | None
    epochs: int | None
    seed: int | None
    field_type: str | None
    variant: str
    library: str
    method: str
    format: str
    transport: str
    workers: int | None
    batch_rows: int | None
    rows: int | None
    ilp_bytes: int | None
    ilp_protocol_version: int | None
    repeats: int

    @classmethod
    def from_run(cls, run: RunFile) -> SummaryRow:
        ds, var = run.dataset, run.variant
        return cls(
            dataset=ds.name, dataset_rows=ds.rows, scale=ds.scale, epochs=ds.epochs, seed=ds.seed,
            field_type=ds.field_type, variant=var.name, library=var.library, method=var.method,
            format=var.format, transport=var.transport, workers=var.workers,
            batch_rows=var.batch_rows, rows=run.rows, ilp_bytes=run.ilp_bytes,
            ilp_protocol_version=run.ilp_protocol_version, repeats=len(run.repeats),
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# ---------------------------------------------------------------------------- reading, writing


def _parse(cls: Any, data: dict[str, Any], path: Path, rule: str) -> Any:
    fix = f"delete it and rerun the {rule}"
    version = data.get("schema_version")
    if version is None:
        raise RecordError(
            f"{path} is not a {cls.KIND} of this workflow (no schema_version); {fix}."
        )
    if version not in READABLE_VERSIONS:
        newest = max(READABLE_VERSIONS)
        advice = (
            "update ingestbench to read it, or " + fix
            if isinstance(version, int) and version > newest
            else fix
        )
        raise RecordError(
            f"the {cls.KIND} {path} has schema_version {version!r}, but this ingestbench reads "
            f"versions {', '.join(map(str, READABLE_VERSIONS))}; {advice}."
        )
    try:
        return cls.from_dict(data)
    except (_ShapeError, TypeError) as exc:
        raise RecordError(f"{path} is not a {cls.KIND} of this workflow ({exc}); {fix}.") from None


def read_run(path: str | Path) -> RunFile:
    """The run file at `path`, version 1 or 2; RecordError (one sentence) for anything else."""
    path = Path(path)
    return _parse(RunFile, load_json(path, "run file", RecordError), path, "ingest job")


def run_from_dict(doc: dict[str, Any], where: str = "the run document") -> RunFile:
    return _parse(RunFile, doc, Path(where), "ingest job")


def write_run(path: str | Path, run: RunFile | dict[str, Any]) -> RunFile:
    """Write a run file (atomically, in the current schema version); returns what was written."""
    if isinstance(run, dict):
        run = run_from_dict(run)
    run = dataclasses.replace(run, schema_version=SCHEMA_VERSION)
    write_json_atomic(path, run.to_dict())
    return run


def read_validation(path: str | Path) -> Validation:
    path = Path(path)
    data = load_json(path, "validation file", RecordError)
    return _parse(Validation, data, path, "validate rule")


def write_validation(path: str | Path, result: Validation | dict[str, Any]) -> Validation:
    if isinstance(result, dict):
        result = _parse(Validation, result, Path(path), "validate rule")
    result = dataclasses.replace(result, schema_version=SCHEMA_VERSION)
    write_json_atomic(path, result.to_dict())
    return result
