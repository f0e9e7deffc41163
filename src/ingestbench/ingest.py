"""One ingestion job: a server, the variant's repeats, then the table's aggregates and export."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from .environment import host_info
from .files import write_json_atomic
from .methods import Job
from .runner import run_variant
from .server import questdb_server
from .variants import Variant

log = logging.getLogger(__name__)


def rows_to_ingest(variant: Variant, dataset_rows: int, rows_cap: int | None) -> int:
    """The slow `rows` loop may be capped; every other method ingests the whole dataset."""
    if variant.method == "rows" and rows_cap:
        return min(rows_cap, dataset_rows)
    return dataset_rows


def dataset_summary(manifest: dict[str, Any]) -> dict[str, Any]:
    p = manifest["params"]
    return {"name": manifest["name"], "rows": manifest["rows"], "scale": p["scale"],
            "epochs": p["epochs"], "seed": p["seed"], "field_type": p["field_type"],
            "out_of_order_lag_s": p.get("out_of_order_lag_s")}  # fmt: skip


def ingest_job(
    config: dict[str, Any],
    variant: Variant,
    data_path: Path,
    manifest_path: Path,
    run_out: Path,
    actual_out: Path | None = None,
    export_out: Path | None = None,
    jar: Path | None = None,
    server_log: Path | None = None,
) -> dict[str, Any]:
    """Run all repeats of `variant` on a fresh (or the external) server; write the outputs."""
    from .validate import export_table, questdb_aggregates

    manifest = json.loads(Path(manifest_path).read_text())
    dataset = dataset_summary(manifest)
    rows = rows_to_ingest(variant, dataset["rows"], config["rows_cap"])
    table = config["table"]
    with questdb_server(config["questdb"], jar=jar, log_path=server_log) as qdb:
        job = Job(qdb, table, variant, Path(data_path), rows, config["ilp_protocol_version"])
        doc = run_variant(job, dataset, dataset["field_type"], config["repeats"])
        if actual_out:
            aggregates = questdb_aggregates(qdb, table)
            write_json_atomic(actual_out, {"schema_version": 1, "aggregates": aggregates})
        if export_out:
            export_table(qdb, table, Path(export_out))
    doc["host"] = host_info()
    write_json_atomic(run_out, doc)  # last: a run file exists only for a finished job
    return doc
