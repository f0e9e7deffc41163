"""The manifest of an own dataset: the file's bytes hashed (so every run names the data it
measured), its rows and nulls per column counted and its profile taken by DuckDB in one pass
(own.profile), and the table described from it.

The file is never copied or rewritten. Hashing a file of tens of GB takes minutes, so each
file's sha256 is kept in a cache beside the manifest (`<name>.hashes.json`) under its size and
modification time, and computed again only when one of them changed.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from ingestbench.own.dataset import OwnDataError, OwnDataset
from ingestbench.own.describe import describe, parquet_files
from ingestbench.own.partition import choose as choose_partition
from ingestbench.own.profile import own_profile, scan
from ingestbench.own.spec import OwnTableSpec
from ingestbench.storage.files import write_json_atomic
from ingestbench.tsbs.manifest import MANIFEST_SCHEMA_VERSION, generator_info, sha256

log = logging.getLogger(__name__)


def data_files(dataset_path: Path) -> list[Path]:
    path = Path(dataset_path)
    return parquet_files(path) if path.is_dir() else [path]


def _load_cache(cache: Path) -> dict[str, Any]:
    import json

    try:
        return json.loads(cache.read_text())
    except (OSError, ValueError):
        return {}


def hash_files(dataset_path: Path, cache: Path) -> dict[str, Any]:
    """{"bytes", "sha256", "files": [{path, bytes, sha256}]}: each file's hash (from the cache
    while its size and mtime are unchanged), and one over all of them for a directory."""
    path = Path(dataset_path)
    known, entries, rehashed = _load_cache(cache), [], 0
    for f in data_files(path):
        st = f.stat()
        key = str(f.resolve())
        hit = known.get(key)
        if hit and hit["bytes"] == st.st_size and hit["mtime_ns"] == st.st_mtime_ns:
            digest = hit["sha256"]
        else:
            digest, rehashed = sha256(f), rehashed + 1
            known[key] = {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}
        rel = f.relative_to(path).as_posix() if path.is_dir() else f.name
        entries.append({"path": rel, "bytes": st.st_size, "sha256": digest})
    write_json_atomic(cache, known)
    log.info("hashed %d of %d file(s) of %s (the others unchanged since the last hash)",
             rehashed, len(entries), path)  # fmt: skip
    if len(entries) == 1 and not path.is_dir():
        total = entries[0]["sha256"]
    else:
        h = hashlib.sha256()
        for e in entries:
            h.update(f"{e['path']}\0{e['sha256']}\n".encode())
        total = h.hexdigest()
    return {"bytes": sum(e["bytes"] for e in entries), "sha256": total, "files": entries}


def _refuse_nulls(dataset: OwnDataset, spec: OwnTableSpec, nulls: dict[str, int]) -> None:
    if nulls[spec.timestamp]:
        raise OwnDataError(
            f"dataset {dataset.label!r}: the designated timestamp {spec.timestamp!r} has "
            f"{nulls[spec.timestamp]} null(s), and QuestDB takes no row without one; fill or drop "
            f"those rows in the file, or name another column with datasets[].timestamp."
        )
    for field, kind in zip(spec.fields, spec.kinds, strict=True):
        if kind == "boolean" and nulls[field]:
            raise OwnDataError(
                f"dataset {dataset.label!r}: boolean column {field!r} has {nulls[field]} "
                f"null(s), and QuestDB's BOOLEAN has no null (it would store false); fill them "
                f"in the file or store the column as integers."
            )


def own_manifest(
    dataset: OwnDataset, cache: Path, spill_root: Path | None = None
) -> dict[str, Any]:
    """The manifest document of an own dataset (raises OwnDataError for a refused file), with
    its profile (own.profile; DuckDB spills under `spill_root`)."""
    spec, skipped = describe(dataset)
    measured = scan(spec, spill_root)
    rows, nulls = measured.rows, measured.nulls
    if rows == 0:
        raise OwnDataError(
            f"dataset {dataset.label!r}: {dataset.path} holds no row; point datasets[].path at "
            f"a file with data."
        )
    _refuse_nulls(dataset, spec, nulls)
    partition = choose_partition(dataset.partition_by, rows, measured.span_s)
    spec = replace(spec, partition_by=partition["by"])
    hashed = hash_files(dataset.path, cache)
    profile = own_profile(spec, measured, hashed["bytes"])
    return {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "name": dataset.name,
        "own": True,
        "label": dataset.label,
        "rows": rows,
        "columns": len(spec.file_columns),
        "bytes": hashed["bytes"],
        "sha256": hashed["sha256"],
        "files": hashed["files"],
        "table": spec.to_dict(),
        "nulls": nulls,
        "rows_without_values": measured.without_values,
        "partition": partition,
        "skipped_columns": skipped,
        "profile": profile,
        "generator": {**generator_info(), "module": "ingestbench.own"},
    }


def write_own_manifest(dataset: OwnDataset, output: Path) -> dict[str, Any]:
    cache = Path(output).with_name(f"{dataset.name}.hashes.json")
    doc = own_manifest(dataset, cache, spill_root=Path(output).parent)
    write_json_atomic(output, doc)
    log.info("described %s: %d rows, %d columns, %d bytes -> %s", dataset.path, doc["rows"],
             doc["columns"], doc["bytes"], output)  # fmt: skip
    return doc


def spec_of(manifest: dict[str, Any]) -> OwnTableSpec:
    return OwnTableSpec.from_dict(manifest["table"])
