"""One ingestion job: a server, the variant's repeats, then each table's aggregates and export.

This module imports only light modules: the measuring code is imported while the job's server
starts (see ingest_job).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingestbench.catalogue import METHODS
from ingestbench.config import Settings
from ingestbench.datasets import IngestKind, of_manifest, of_spec
from ingestbench.ingest.contention import Contention
from ingestbench.ingest.environment import host_info
from ingestbench.results.records import SCHEMA_VERSION, RunFile, write_run
from ingestbench.server.configured import questdb_server
from ingestbench.server.handle import QuestDB
from ingestbench.server.versions import missing
from ingestbench.storage.files import load_json, space_for, write_json_atomic
from ingestbench.variants import Variant, server_unsupported

if TYPE_CHECKING:
    from ingestbench.ingest.methods import Job

log = logging.getLogger(__name__)
# What _measure imports (with them pyarrow, numba and the QuestDB client).
MEASURING_CODE = ("ingestbench.ingest.dedup", "ingestbench.ingest.runner", "ingestbench.validate")


@dataclass(frozen=True)
class IngestFiles:
    """What one ingestion job reads and writes."""

    data: Path  # the dataset file in the variant's format
    manifest: Path  # the dataset's manifest (rows, parameters)
    run: Path  # the run file, written last
    actual: Path | None = None  # QuestDB's aggregates of each table, for validation
    export: Path | None = None  # a directory of each table's export as Parquet, for validation


def ingest_job(
    settings: Settings,
    variant: Variant,
    files: IngestFiles,
    *,
    jar: Path | None = None,
    server_log: Path | None = None,
    recorded_settings: Mapping[str, Any] | None = None,
) -> RunFile:
    """Run all repeats of `variant` on a fresh (or the external) server; write the outputs.

    `recorded_settings` (ingestbench.workflow.rule_inputs.ingest_settings) go into the run file:
    what it ran under, which the summary checks against the config."""
    manifest = load_json(files.manifest, "dataset manifest")
    kind: IngestKind = of_manifest(manifest)
    qdb_settings = settings.questdb
    reason = server_unsupported(variant.method, qdb_settings.mode, qdb_settings.copy_root)
    if reason is None and not qdb_settings.external:  # each version as it is
        reason = missing(qdb_settings.version, METHODS[variant.method].server_features)
    if reason is None:
        reason = kind.unsupported(variant, manifest)
    if reason is not None:  # decided before any server starts
        log.info("%s cannot run here: %s", variant.name, reason)
        return write_unsupported(files, variant, kind.run_summary(manifest), reason,
                                 recorded_settings)  # fmt: skip
    contention = Contention().look()  # before this job's own server exists
    if settings.guards.exclusive:
        contention.refuse_if_busy()
    # The server first: its JVM starts (about 1 s) while this process imports (about 1 s).
    imports = functools.partial(import_measuring_code, variant.library)
    with questdb_server(settings.questdb, jar, server_log, while_starting=imports) as qdb:
        contention.qdb = qdb
        if settings.readers is not None and settings.readers.pin_cores:
            from ingestbench.readers.pinning import pin_server_and_client

            pin_server_and_client(qdb.pid, settings.readers.pin_cores)
        try:
            doc = _measure(qdb, settings, variant, files, manifest, contention)
        except Exception as exc:
            reason = _refusal(kind, exc)
            if reason is None:
                raise
            log.info("%s could not load this table: %s", variant.name, reason)
            return write_unsupported(files, variant, kind.run_summary(manifest), reason,
                                     recorded_settings)  # fmt: skip
    doc["contention"] = contention.to_dict()
    if contention.contended:
        log.warning("%s shared the machine with other work during its repeats (%s); its run "
                    "is marked as contended", variant.name, doc["contention"])  # fmt: skip
    doc["host"] = host_info()
    if recorded_settings is not None:
        doc["settings"] = dict(recorded_settings)
    return write_run(files.run, doc)  # last: a run file exists only for a finished job


def write_unsupported(
    files: IngestFiles,
    variant: Variant,
    dataset: dict[str, Any],
    reason: str,
    settings: Mapping[str, Any] | None = None,
) -> RunFile:
    """The outputs of a job whose method cannot load this table (or cannot run against the
    configured server), as the ingest rule promises them: a run file without repeats that says
    why, an aggregates file saying the same, an empty export; the validation then records the
    reason instead of checks, and the summary lists the variant apart. `dataset`: as its run
    files name it."""
    doc = {"schema_version": SCHEMA_VERSION, "dataset": dataset,
           "variant": variant.to_dict(), "rows": 0, "repeats": [],
           "unsupported": reason}  # fmt: skip
    if settings is not None:  # its server (a version may lack what the path needs)
        doc["settings"] = dict(settings)
    if files.actual:
        write_json_atomic(files.actual, {"schema_version": SCHEMA_VERSION, "unsupported": reason})
    if files.export:
        Path(files.export).mkdir(parents=True, exist_ok=True)
    return write_run(files.run, doc)


def _refusal(kind: IngestKind, exc: Exception) -> str | None:
    """A path the server does not offer makes the variant unsupported on any data; on data of a
    kind that says so (the user's), so does a value the path cannot carry."""
    from ingestbench.ingest.methods import Unsupported

    if isinstance(exc, Unsupported):
        return str(exc)
    if not kind.refusal_is_unsupported():
        return None
    return unsupported_from_error(exc)


def unsupported_from_error(exc: BaseException) -> str | None:
    """The reason a load failed when it is the data the path cannot carry (the client or the
    encoder refusing a value, the server refusing the rows); None for anything else."""
    from ingestbench.ingest.frames.encoder import EncodeError
    from ingestbench.ingest.methods import SendError

    if isinstance(exc, EncodeError):
        return str(exc)
    # The client refusing a value, the server the rows, or its COPY the file's values.
    said = ("could not serialize", "refused", "'s COPY of")
    if isinstance(exc, SendError) and any(words in str(exc) for words in said):
        return str(exc)
    return None


def import_measuring_code(library: str) -> None:
    """The measuring code and the variant's dataframe libraries: pandas, polars, pyarrow, numba
    and the QuestDB client take about 1 s to import on a small machine."""
    for name in MEASURING_CODE:
        importlib.import_module(name)
    from ingestbench.ingest.frames.readers import import_libraries

    import_libraries(library)


def _measure(
    qdb: QuestDB,
    settings: Settings,
    variant: Variant,
    files: IngestFiles,
    manifest: dict[str, Any],
    contention: Contention | None = None,
) -> dict[str, Any]:
    """The repeats, then each table's aggregates and export: the run document, without its host."""
    from ingestbench.ingest.dedup import replay_check
    from ingestbench.ingest.methods import Job
    from ingestbench.ingest.parts import job_parts
    from ingestbench.ingest.runner import RepeatGuards, run_variant
    from ingestbench.server.deadline import default_limit_s
    from ingestbench.validate import export_tables, questdb_aggregates

    kind: IngestKind = of_manifest(manifest)
    dataset = kind.run_summary(manifest)
    parts = job_parts(variant, manifest, Path(files.data), settings.table, settings.rows_cap)
    protocol = of_spec(parts[0].spec).ilp_protocol(parts[0].spec, settings.ilp_protocol_version)
    job = Job(qdb, variant, Path(files.data), parts, protocol, dedup=dataset["dedup"])
    deadline_s = settings.guards.repeat_deadline_s or default_limit_s(job.rows)
    source = functools.partial(source_checks_of, kind, job, files, dataset)
    guards = RepeatGuards(source, settings.validation.rel_tolerance, deadline_s, contention)
    doc = run_variant(job, dataset, settings.repeats, settings.warmup_rows, guards=guards)
    if settings.readers is not None and settings.readers.counts:  # the repeats with readers
        # the queries its kind names, on the first table (iot's two are read on the first)
        queries = kind.reader_queries(job.tables[0].spec, {**manifest.get("params", {}), **dataset})
        doc["readers"] = _with_readers(job, settings, queries, guards, files)
    if job.dedup:  # every dataset has its Parquet beside the manifest
        parquet = Path(files.manifest).with_name(f"{dataset['name']}.parquet")
        doc["dedup_replay"] = replay_check(job, parquet)
    # Every file of the job's tables is keyed by the dataset's name of each table, whatever its
    # name on the server: its rows sent (the run file's table_rows), its aggregates, its export
    # (a directory per table).
    if files.actual:
        tables = {p.dataset_table: questdb_aggregates(qdb, p.spec.table, p.spec)
                  for p in job.tables}  # fmt: skip
        write_json_atomic(files.actual, {"schema_version": SCHEMA_VERSION, "tables": tables})
    if files.export:
        piece_rows = settings.validation.export_piece_rows
        with space_for(files.export):  # a directory of each table, by its dataset's name
            export_tables(qdb, {p.dataset_table: p.spec.table for p in job.tables},
                          Path(files.export), piece_rows=piece_rows)  # fmt: skip
    return doc


def _with_readers(
    job: Job, settings: Settings, queries: tuple[Any, ...], guards: Any, files: IngestFiles
) -> dict[str, Any]:
    """The run file's `readers` field, and the series file beside the run file (readers)."""
    from ingestbench.ingest.runner import run_repeat
    from ingestbench.readers.beside import beside_ingestion
    from ingestbench.readers.series import series_path

    assert settings.readers is not None
    repeat = functools.partial(run_repeat, job, guards=guards)
    return beside_ingestion(job, settings.readers, repeat, settings.repeats,
                            series_path(files.run), queries)  # fmt: skip


def source_checks_of(
    kind: IngestKind, job: Job, files: IngestFiles, dataset: dict[str, Any]
) -> dict[str, Any]:
    """Each table's checks (validate.repeat_checks), by DuckDB over the source the kind names
    (a TSBS dataset's Parquet beside its manifest, else the job's own file when that is CSV or
    Parquet; the user's file); of the rows the job ingests (a capped row loop ingests the first
    rows in file order)."""
    from ingestbench.validate.repeat_checks import table_source_checks

    source = kind.check_source(Path(files.manifest), Path(files.data), dataset)
    if source is None:  # the kind said why
        return {}
    # each table's file is named by the dataset's table, not by its name on the server
    named = tuple(dataclasses.replace(p.spec, table=p.dataset_table) for p in job.tables)
    whole = dataset["rows"]
    paths = kind.table_files(source, named)
    return {part.spec.table: table_source_checks(path, part.spec, part.rows, part.rows == whole)
            for part, path in zip(job.tables, paths, strict=True)}  # fmt: skip
