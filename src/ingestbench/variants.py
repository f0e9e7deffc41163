"""The variant matrix: which ways of ingesting exist, and which combinations make sense.

This module is the one place that decides it; rules, scripts and the summary only read it.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass
from typing import Any

LIBRARIES = ("pandas", "polars")
CLIENT_METHODS = ("rows", "iterrows", "dataframe", "threads", "processes", "batches")
# Python loops calling sender.row() per row; slow, so `rows_cap` may cap the rows they ingest.
ROW_LOOP_METHODS = ("rows", "iterrows")
# DataFrame.iterrows() is a pandas API (QuestDB's published baseline); polars has no such loop.
PANDAS_ONLY_METHODS = ("iterrows",)
SERVER_METHODS = ("server_csv", "server_parquet")
FORMATS = ("parquet", "csv")
TRANSPORTS = ("http", "tcp")
DEFAULT_WORKERS = 2
DEFAULT_BATCH_ROWS = 10_000


@dataclass(frozen=True, order=True)
class Variant:
    library: str  # pandas, polars, or none (the server reads the file itself)
    method: str
    format: str
    transport: str
    workers: int = 1
    batch_rows: int | None = None

    @property
    def name(self) -> str:
        name = f"{self.library}-{self.method}-{self.format}-{self.transport}"
        if self.method in ("threads", "processes"):
            name += f"-w{self.workers}"
        if self.method == "batches":
            name += f"-b{self.batch_rows}"
        return name

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **asdict(self)}


def _as_list(value: Any, default: Any) -> list:
    if value is None:
        value = default
    return list(value) if isinstance(value, list | tuple) else [value]


def make_variant(
    library: str, method: str, fmt: str, transport: str, workers=None, batch_rows=None
):
    """Normalise one combination; return None when it makes no sense (the single exclusion rule)."""
    if method in SERVER_METHODS:
        # The server reads the file: no client library, its own format, always over HTTP/SQL.
        wanted = "csv" if method == "server_csv" else "parquet"
        if fmt != wanted:
            return None
        return Variant("none", method, fmt, "http")
    known = (
        library in LIBRARIES,
        method in CLIENT_METHODS,
        fmt in FORMATS,
        transport in TRANSPORTS,
    )
    if not all(known):
        return None
    if method in PANDAS_ONLY_METHODS and library != "pandas":
        return None
    return Variant(
        library,
        method,
        fmt,
        transport,
        workers=(workers or DEFAULT_WORKERS) if method in ("threads", "processes") else 1,
        batch_rows=(batch_rows or DEFAULT_BATCH_ROWS) if method == "batches" else None,
    )


def expand_spec(spec: dict[str, Any]) -> list[Variant]:
    """Cross product of one config spec's lists, invalid combinations dropped."""
    combos = itertools.product(
        _as_list(spec.get("library"), LIBRARIES),
        _as_list(spec["method"], None),
        _as_list(spec.get("format"), FORMATS),
        _as_list(spec.get("transport"), TRANSPORTS),
        _as_list(spec.get("workers"), DEFAULT_WORKERS),
        _as_list(spec.get("batch_rows"), DEFAULT_BATCH_ROWS),
    )
    found = {make_variant(*c) for c in combos}
    return sorted(v for v in found if v is not None)


def variants_by_dataset(
    config: dict[str, Any], dataset_labels: list[str]
) -> dict[str, list[Variant]]:
    """{dataset label: sorted unique variants} for a validated config."""
    out: dict[str, set[Variant]] = {label: set() for label in dataset_labels}
    for spec in config["variants"]:
        for label in spec.get("datasets", dataset_labels):
            out[label].update(expand_spec(spec))
    return {label: sorted(vs) for label, vs in out.items()}


def parse_variant_name(name: str) -> Variant:
    """Inverse of Variant.name (used by the ingest rule's wildcard)."""
    parts = name.split("-")
    library, method, fmt, transport = parts[:4]
    workers, batch_rows = 1, None
    for extra in parts[4:]:
        if extra.startswith("w"):
            workers = int(extra[1:])
        elif extra.startswith("b"):
            batch_rows = int(extra[1:])
    variant = make_variant(library, method, fmt, transport, workers, batch_rows)
    if variant is None or variant.name != name:
        raise ValueError(f"not a valid variant name: {name!r}")
    return variant
