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
    its data, the table it was loaded as and how its partition unit was chosen."""
    return {"name": manifest["name"], "rows": manifest["rows"], "field_type": "mixed",
            "dedup": False, "label": manifest["label"], "own": True,
            "columns": manifest["columns"], "bytes": manifest["bytes"],
            "sha256": manifest["sha256"], "table": manifest["table"],
            "partition": manifest.get("partition")}  # fmt: skip


def own_spec(manifest: dict[str, Any]) -> OwnTableSpec:
    return OwnTableSpec.from_dict(manifest["table"])


def write_unsupported(
    files: Any, variant: Variant, dataset: dict[str, Any], reason: str
) -> RunFile:
    """The outputs of a job whose method cannot load this table (or cannot run against the
    configured server); `dataset`: as its run files name it."""
    doc = {"schema_version": SCHEMA_VERSION, "dataset": dataset,
           "variant": variant.to_dict(), "rows": 0, "repeats": [],
           "unsupported": reason}  # fmt: skip
    if files.actual:
        write_json_atomic(files.actual, {"schema_version": SCHEMA_VERSION, "unsupported": reason})
    if files.export:
        Path(files.export).mkdir(parents=True, exist_ok=True)
    return write_run(files.run, doc)
