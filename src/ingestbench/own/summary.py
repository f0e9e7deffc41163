"""An own dataset as every run file of it names it (its kind's run summary, ingestbench.datasets):
label, rows, columns, bytes, the hash of its data, the table it was loaded as and how its
partition unit was chosen."""

from __future__ import annotations

from typing import Any


def own_summary(manifest: dict[str, Any]) -> dict[str, Any]:
    return {"name": manifest["name"], "rows": manifest["rows"], "field_type": "mixed",
            "dedup": False, "label": manifest["label"], "own": True,
            "columns": manifest["columns"], "bytes": manifest["bytes"],
            "sha256": manifest["sha256"], "table": manifest["table"],
            "partition": manifest.get("partition")}  # fmt: skip
