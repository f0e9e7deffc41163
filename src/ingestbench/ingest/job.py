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

from ingestbench.config import Settings
from ingestbench.environment import host_info
from ingestbench.files import load_json, space_for, write_json_atomic
from ingestbench.ingest.contention import Contention
from ingestbench.results.records import SCHEMA_VERSION, RunFile, write_run
from ingestbench.server.configured import questdb_server
from ingestbench.server.process import QuestDB
from ingestbench.tsbs.columns import table_files
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


def dataset_summary(manifest: dict[str, Any]) -> dict[str, Any]:
    if manifest.get("own"):
        from ingestbench.own.job import own_summary

        return own_summary(manifest)
    p = manifest["params"]
    summary = {"name": manifest["name"], "rows": manifest["rows"], "scale": p["scale"],
               "epochs": p["epochs"], "seed": p["seed"], "field_type": p["field_type"],
               "out_of_order_lag_s": p.get("out_of_order_lag_s"),
               "dedup": bool(p.get("dedup", False))}  # fmt: skip
    if p.get("use_case", "cpu") != "cpu":  # absent for cpu: run files before it stay the same
        summary["use_case"] = p["use_case"]
    return summary


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

    `recorded_settings` (ingestbench.rule_inputs.ingest_settings) go into the run file: what
    it ran under, which the summary checks against the config."""
    manifest = load_json(files.manifest, "dataset manifest")
    qdb_settings = settings.questdb
    reason = server_unsupported(variant.method, qdb_settings.mode, qdb_settings.copy_root)
    if reason is None and manifest.get("own"):
        reason = _own_unsupported(variant, manifest)
    if reason is not None:  # decided before any server starts
        log.info("%s cannot run here: %s", variant.name, reason)
        from ingestbench.own.job import write_unsupported

        return write_unsupported(files, variant, dataset_summary(manifest), reason)
    contention = Contention().look()  # before this job's own server exists
    if settings.guards.exclusive:
        contention.refuse_if_busy()
    # The server first: its JVM starts (about 1 s) while this process imports (about 1 s).
    imports = functools.partial(import_measuring_code, variant.library)
    with questdb_server(settings.questdb, jar, server_log, while_starting=imports) as qdb:
        contention.qdb = qdb
        if settings.readers is not None and settings.readers.pin_cores:
            from ingestbench.queryload.pinning import pin_server_and_client

            pin_server_and_client(qdb.pid, settings.readers.pin_cores)
        try:
            doc = _measure(qdb, settings, variant, files, manifest, contention)
        except Exception as exc:
            reason = _refusal(manifest, exc)
            if reason is None:
                raise
            log.info("%s could not load this table: %s", variant.name, reason)
            from ingestbench.own.job import write_unsupported

            return write_unsupported(files, variant, dataset_summary(manifest), reason)
    doc["contention"] = contention.to_dict()
    if contention.contended:
        log.warning("%s shared the machine with other work during its repeats (%s); its run "
                    "is marked as contended", variant.name, doc["contention"])  # fmt: skip
    doc["host"] = host_info()
    if recorded_settings is not None:
        doc["settings"] = dict(recorded_settings)
    return write_run(files.run, doc)  # last: a run file exists only for a finished job


def _own_unsupported(variant: Variant, manifest: dict[str, Any]) -> str | None:
    from ingestbench.own.job import own_spec
    from ingestbench.own.methods import unsupported_reason

    return unsupported_reason(variant, own_spec(manifest), manifest)


def _refusal(manifest: dict[str, Any], exc: Exception) -> str | None:
    """A path the server does not offer makes the variant unsupported on any data; on own data,
    so does a value the path cannot carry."""
    from ingestbench.ingest.methods import Unsupported

    if isinstance(exc, Unsupported):
        return str(exc)
    if not manifest.get("own"):
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

    dataset = dataset_summary(manifest)
    parts = job_parts(variant, manifest, Path(files.data), settings.table, settings.rows_cap)
    protocol = settings.ilp_protocol_version
    if manifest.get("own"):  # a table with decimals goes over the version that carries them
        from ingestbench.own.methods import protocol_for

        protocol = protocol_for(parts[0].spec, protocol)
    job = Job(qdb, variant, Path(files.data), parts, protocol, dedup=dataset["dedup"])
    deadline_s = settings.guards.repeat_deadline_s or default_limit_s(job.rows)
    source = functools.partial(source_checks_of, job, files, dataset)
    guards = RepeatGuards(source, settings.validation.rel_tolerance, deadline_s, contention)
    doc = run_variant(job, dataset, settings.repeats, settings.warmup_rows, guards=guards)
    if settings.readers is not None and settings.readers.counts:  # the repeats with readers
        doc["readers"] = _with_readers(job, settings, manifest, guards, files)
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
    job: Job, settings: Settings, manifest: dict[str, Any], guards: Any, files: IngestFiles
) -> dict[str, Any]:
    """The run file's `readers` field, and the series file beside the run file (queryload)."""
    from ingestbench.ingest.runner import run_repeat
    from ingestbench.queryload.beside import beside_ingestion
    from ingestbench.queryload.series import series_path

    assert settings.readers is not None
    dataset = {**manifest.get("params", {}), **dataset_summary(manifest)}
    repeat = functools.partial(run_repeat, job, guards=guards)
    return beside_ingestion(job, settings.readers, dataset, repeat, settings.repeats,
                            series_path(files.run))  # fmt: skip


def source_checks_of(job: Job, files: IngestFiles, dataset: dict[str, Any]) -> dict[str, Any]:
    """Each table's checks (validate.repeat_checks), by DuckDB over the dataset's Parquet beside
    its manifest, else over the job's own file when that is CSV or Parquet; of the rows the job
    ingests (a capped row loop ingests the first rows in file order)."""
    from ingestbench.validate.repeat_checks import source_checks

    if dataset.get("own"):  # a user's columns, over the file where it is
        from ingestbench.validate.own_checks import own_source_checks

        whole = dataset["rows"]  # a capped row loop is checked on the file's first rows
        return {p.spec.table: own_source_checks(p.spec, None if p.rows == whole else p.rows)
                for p in job.tables}  # fmt: skip
    parquet = Path(files.manifest).with_name(f"{dataset['name']}.parquet")
    source = parquet if parquet.exists() else Path(files.data)
    if source.suffix not in (".parquet", ".csv"):
        log.warning("no Parquet or CSV of %s beside %s: its repeats are checked by their row "
                    "count only", dataset["name"], files.manifest)  # fmt: skip
        return {}
    # each table's file is named by the dataset's table, not by its name on the server
    named = tuple(dataclasses.replace(p.spec, table=p.dataset_table) for p in job.tables)
    checks = {}
    for part, path in zip(job.tables, table_files(source, named), strict=True):
        checks[part.spec.table] = source_checks(path, part.spec, part.rows)
    return checks
