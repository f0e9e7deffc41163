"""What the delivery loads send: the dataset's one table as its kind gives it (a generated TSBS
cpu table, or the user's own table read from the user's file), and which paths cannot run on it.

The table comes from the dataset's manifest through the ingest job's door (`job_parts`), renamed
to the experiment's table; a path a method cannot load for that table is `unsupported` with the
kind's reason, and the DEDUP paths run only on generated data, whose keys are unique.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingestbench.catalogue import METHODS
from ingestbench.datasets import of_manifest
from ingestbench.delivery.paths import DeliveryPath
from ingestbench.ingest.parts import job_parts
from ingestbench.tables.spec import TableSpec
from ingestbench.variants import Variant

#: Why a `-dedup` path does not run on a user's own data.
OWN_DEDUP = (
    "own data's keys are not known to be unique: DEDUP UPSERT KEYS on its timestamp and symbols "
    "could merge distinct rows"
)


@dataclass(frozen=True)
class DeliverySource:
    """The table the loads fill (`spec`, named as on the server), the file its rows are read
    from (server_parquet hands it to the server, the checker compares with it), and the
    dataset's manifest."""

    spec: TableSpec
    path: Path
    manifest: dict[str, Any]

    @property
    def generated(self) -> bool:
        """Generated data (TSBS) has one row per timestamp and tags; a user's file is not known
        to."""
        return of_manifest(self.manifest).data_rule == "generate"


def _variant(path: DeliveryPath, fmt: str) -> Variant:
    server = METHODS[path.method].family == "server"
    return Variant("none" if server else "pandas", path.method, fmt, path.transport)


def delivery_source(manifest: dict[str, Any], data: Path, table: str) -> DeliverySource:
    """The dataset's one table (a cpu dataset or an own one: `settings.check` refuses others),
    as the ingest job gets it, named `table`."""
    # The rows as a client variant reads them (any one gives the same table and file).
    reader = Variant("pandas", "dataframe", "parquet", "http")
    (part,) = job_parts(reader, manifest, Path(data), table, None)
    return DeliverySource(dataclasses.replace(part.spec, table=table), part.path, manifest)


def why_unsupported(path: DeliveryPath, source: DeliverySource) -> str | None:
    """Why `path` cannot run on this table (one clause), or None: DEDUP on data whose keys are
    not known to be unique, or a method the dataset's kind says cannot load it (the client
    paths read the file in any of their formats; server_parquet needs a Parquet file)."""
    if path.dedup and not source.generated:
        return OWN_DEDUP
    kind = of_manifest(source.manifest)
    reasons = [kind.unsupported(_variant(path, fmt), source.manifest)
               for fmt in METHODS[path.method].formats]  # fmt: skip
    return None if None in reasons else reasons[0]
