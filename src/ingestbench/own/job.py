"""What an ingestion job does differently on own data: the dataset as its run file names it, its
one table, and the run of a method that cannot load it (`unsupported`, with the reason).

An unsupported run's files are written as the ingest rule promises them: a run file without
repeats that says why, an aggregates file saying the same, an empty export; the validation then
records the reason instead of checks, and the summary lists the variant apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ingestbench.files import write_json_atomic
from ingestbench.own.spec import OwnTableSpec
from ingestbench.results.records import SCHEMA_VERSION, RunFile, write_run
from ingestbench.variants import Variant


def own_summary(manifest: dict[str, Any]) -> dict[str, Any]:
    """The dataset as every run file of it names it: label, rows, columns, bytes, the hash of
    its data and the table it was loaded as."""
    return {"name": manifest["name"], "rows": manifest["rows"], "field_type": "mixed",
            "dedup": False, "label": manifest["label"], "own": True,
            "columns": manifest["columns"], "bytes": manifest["bytes"],
            "sha256": manifest["sha256"], "table": manifest["table"]}  # fmt: skip


def own_spec(manifest: dict[str, Any]) -> OwnTableSpec:
    return OwnTableSpec.from_dict(manifest["table"])


def own_parts(variant: Variant, manifest: dict[str, Any], data: Path, rows: int) -> tuple:
    """The job's one table: read from the user's file where it is (the ILP text is the
    dataset's own file), its first `rows` rows in file order (all but for a capped row loop)."""
    from ingestbench.ingest.methods import TablePart

    spec = own_spec(manifest)
    path = Path(data) if variant.format == "ilp" else Path(spec.source.path)
    return (TablePart(spec, path, int(rows)),)


def own_source_checks(job: Any, dataset: dict[str, Any]) -> dict[str, Any]:
    """What every repeat's table is checked against (validate.own_checks): the file's checks,
    or its first rows' when a capped row loop loads only those."""
    from ingestbench.validate.own_checks import own_source_checks as checks

    return {p.spec.table: checks(p.spec, None if p.rows == dataset["rows"] else p.rows)
            for p in job.tables}  # fmt: skip


def write_unsupported(
    files: Any, variant: Variant, manifest: dict[str, Any], reason: str
) -> RunFile:
    """The outputs of a job whose method cannot load this table."""
    doc = {"schema_version": SCHEMA_VERSION, "dataset": own_summary(manifest),
           "variant": variant.to_dict(), "rows": 0, "repeats": [],
           "unsupported": reason}  # fmt: skip
    if files.actual:
        write_json_atomic(files.actual, {"schema_version": SCHEMA_VERSION, "unsupported": reason})
    if files.export:
        Path(files.export).mkdir(parents=True, exist_ok=True)
    return write_run(files.run, doc)


def unsupported_from_error(exc: BaseException) -> str | None:
    """The reason a load failed when it is the data the path cannot carry (the client or the
    encoder refusing a value, the server refusing the rows); None for anything else."""
    from ingestbench.ingest.encoder import EncodeError
    from ingestbench.ingest.methods import SendError

    if isinstance(exc, EncodeError):
        return str(exc)
    # The client refusing a value, the server the rows, or its COPY the file's values.
    said = ("could not serialize", "refused", "'s COPY of")
    if isinstance(exc, SendError) and any(words in str(exc) for words in said):
        return str(exc)
    return None
