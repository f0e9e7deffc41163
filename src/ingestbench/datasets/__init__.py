"""The kinds of dataset, the one seam on "which kind is this?": the rules and the stages ask a
dataset's kind instead of branching on it, each through the protocol of its questions (`kind`).

- `kind`: the callers' protocols (the plan's, ingestion's, a table's, validation's, paced and
  delivery's, the lookups'), `DatasetKind` (all of them, what every kind implements), and the
  records a kind answers with.
- `tsbs`: TSBS's cpu and iot use cases (implemented by ingestbench.tsbs), and `tsbs_profile`,
  a TSBS dataset's profile from its expected pass.
- `own`: the user's own file (implemented by ingestbench.own).
- here: the registry, the lookups from an entry, a manifest, a table's spec or a run file's
  dataset to its kind, and the plan (each dataset's variants), which the Snakefile, the CLI
  and the docs share.

Light: the Snakefile imports it; the kinds import their heavy parts where they use them.

May import: errors, tables, variants, storage.disk (the sorted copy's bytes), columnar.duckdb_sql (a
source's relation), results.profile (the profile's shape), readers.queries (the queries readers
send), tsbs and own.
"""

from __future__ import annotations

from typing import Any

from ingestbench.datasets.kind import (
    PROTOCOLS,
    ClaimingKind,
    CsvImport,
    DatasetKind,
    FrameSource,
    IngestKind,
    PacedDeliveryKind,
    PlanKind,
    TableKind,
    TableSource,
    ValidationKind,
)
from ingestbench.datasets.own import OWN
from ingestbench.datasets.tsbs import TSBS_CPU, TSBS_IOT
from ingestbench.tables.spec import TableSpec
from ingestbench.variants import Variant

#: Every kind, asked in this order: the first that claims an entry, manifest, spec or run is its.
KINDS: tuple[DatasetKind, ...] = (OWN, TSBS_CPU, TSBS_IOT)


def _first(claims: str, thing: Any, what: str) -> DatasetKind:
    for kind in KINDS:
        if getattr(kind, claims)(thing):
            return kind
    raise ValueError(f"no kind of dataset claims this {what}: {thing!r:.200}")


def of_entry(entry: dict[str, Any]) -> DatasetKind:
    """The kind of a `datasets[]` entry (validated: its schema admits only known kinds): what
    the plan (PlanKind) and paced and delivery (PacedDeliveryKind) ask."""
    return _first("claims_entry", entry, "datasets[] entry")


def of_manifest(manifest: dict[str, Any]) -> DatasetKind:
    """The kind of a dataset's manifest: what ingestion (IngestKind), the expected pass
    (ValidationKind) and delivery (PacedDeliveryKind) ask."""
    return _first("claims_manifest", manifest, "manifest")


def of_spec(spec: TableSpec) -> TableKind:
    """The kind of a table's spec: a table's questions only, which its shape answers."""
    return _first("claims_spec", spec, "table spec")


def of_run(dataset: dict[str, Any]) -> ValidationKind:
    """The kind of a run file's dataset (a run summary, as `IngestKind.run_summary` wrote it),
    for the run's validation."""
    return _first("claims_run", dataset, "run file's dataset")


def dataset_pattern() -> str:
    """The dataset wildcard: a kind's name (every dataset's name starts with it), then
    dash-separated words."""
    return f"({'|'.join(kind.name for kind in KINDS)})-[A-Za-z0-9-]+"


def dataset_name(entry: dict[str, Any]) -> str:
    """The name of any `datasets[]` entry: own data by its label, TSBS data by its parameters."""
    return of_entry(entry).dataset_name(entry)


def dataset_entries(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{dataset name: entry} of every dataset a validated config runs: its own entries, each
    followed by those derived from it (an own dataset's sorted copy, `sorted: true`)."""
    out = {}
    for d in config["datasets"]:
        out[dataset_name(d)] = d
        out |= of_entry(d).derived(d, config["data_dir"])
    return out


def plan(config: dict[str, Any]) -> dict[str, tuple[str, list[Variant]]]:
    """The one plan of a validated config: {dataset name: (its label, the variants it runs)},
    what the Snakefile runs, `ingestbench variants` lists and docs/methods.md counts. A derived
    dataset runs its source's variants, under its source's label."""
    from ingestbench.variants import variants_by_dataset

    entries = {d["label"]: d for d in config["datasets"]}
    by_label = variants_by_dataset(config, list(entries))
    out = {}
    for name, d in dataset_entries(config).items():
        label = (d.get("derived") or {}).get("source", d)["label"]
        out[name] = (label, of_entry(d).variants(d, by_label[label]))
    return out


__all__ = [
    "KINDS",
    "OWN",
    "PROTOCOLS",
    "ClaimingKind",
    "CsvImport",
    "DatasetKind",
    "FrameSource",
    "IngestKind",
    "PacedDeliveryKind",
    "PlanKind",
    "TableKind",
    "TableSource",
    "ValidationKind",
    "dataset_entries",
    "dataset_name",
    "dataset_pattern",
    "of_entry",
    "of_manifest",
    "of_run",
    "of_spec",
    "plan",
]
