"""What the delivery loads send: the dataset's one table as its kind gives it (a generated TSBS
cpu table, or the user's own table read from the user's file), and which paths cannot run on it.

The kind gives the table from the dataset's manifest, renamed to the experiment's table, and says
whether its keys are unique: the DEDUP paths run only where they are. A path a method cannot load
for that table is `unsupported` with the kind's reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingestbench.catalogue import METHODS
from ingestbench.datasets import IngestKind, PacedDeliveryKind, of_manifest
from ingestbench.delivery.paths import DeliveryPath
from ingestbench.tables.spec import TableSpec
from ingestbench.variants import Variant

#: Why a `-dedup` path does not run on a dataset whose keys are not known to be unique (own data).
OWN_DEDUP = (
    "own data's keys are not known to be unique: DEDUP UPSERT KEYS on its timestamp and symbols "
    "could merge distinct rows"
)


@dataclass(frozen=True)
class DeliverySource:
    """The table the loads fill (`spec`, named as on the server), the file its rows are read
    from (server_parquet hands it to the server, the checker compares with it), the dataset's
    manifest, and whether its rows' keys are unique (as its kind says)."""

    spec: TableSpec
    path: Path
    manifest: dict[str, Any]
    keys_unique: bool


def _variant(path: DeliveryPath, fmt: str) -> Variant:
    server = METHODS[path.method].family == "server"
    return Variant("none" if server else "pandas", path.method, fmt, path.transport)


def delivery_source(manifest: dict[str, Any], data: Path, table: str) -> DeliverySource:
    """The dataset's one table (a cpu dataset or an own one: `settings.check` refuses others),
    named `table`, read from `data` (its Parquet, or the user's file)."""
    kind: PacedDeliveryKind = of_manifest(manifest)
    one = kind.one_table(manifest, Path(data), table)
    return DeliverySource(one.spec, one.path, manifest, kind.keys_unique(manifest))


def why_unsupported(path: DeliveryPath, source: DeliverySource) -> str | None:
    """Why `path` cannot run on this table (one clause), or None: DEDUP on data whose keys are
    not known to be unique, or a method the dataset's kind says cannot load it (the client
    paths read the file in any of their formats; server_parquet needs a Parquet file)."""
    if path.dedup and not source.keys_unique:
        return OWN_DEDUP
    kind: IngestKind = of_manifest(source.manifest)
    reasons = [kind.unsupported(_variant(path, fmt), source.manifest)
               for fmt in METHODS[path.method].formats]  # fmt: skip
    return None if None in reasons else reasons[0]
