"""The dataset's manifest: parameters, size, time range, column schema and each file's sha256."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ingestbench import __version__
from ingestbench.tsbs.params import GENERATOR_VERSION, DatasetParams, format_timestamp
from ingestbench.tsbs.writers import column_schema

MANIFEST_SCHEMA_VERSION = 1


def sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def file_entry(name: str, path: Path) -> dict[str, Any]:
    """A file's entry in the manifest: its final name, and the size and sha256 of `path`."""
    return {"path": name, "bytes": path.stat().st_size, "sha256": sha256(path)}


def manifest(params: DatasetParams, files: dict) -> dict:
    last_ns = params.start_ns + (params.epochs - 1) * params.interval_ns
    return {
        "schema_version": MANIFEST_SCHEMA_VERSION,
        "name": params.name,
        "params": params.to_dict(),
        "rows": params.rows,
        "hosts": params.scale,
        "epochs": params.epochs,
        "first_timestamp": format_timestamp(params.start_ns),
        "last_timestamp": format_timestamp(last_ns),
        "order": "in order" if params.lag_ns is None else "shuffled within the lag",
        "columns": column_schema(params.field_type),
        "files": files,
        "generator": generator_info(),
    }


def generator_info() -> dict[str, Any]:
    return {
        "module": "ingestbench.tsbs",
        "version": GENERATOR_VERSION,
        "ingestbench": __version__,
        "numpy": np.__version__,
        "pyarrow": pa.__version__,
    }
