"""paced.csv: one row per step of every paced job and repeat (its window's percentiles, rates,
observed resolution and verdict)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ingestbench.storage.files import load_json, write_text_atomic

#: paced.csv's version: 2 measures steps by time in steady state, per repeat; 3 adds the
#: spread of the producers' p99 (several producers into one table).
TABLE_VERSION = 3
PERCENTILE_KEYS = ("p50", "p90", "p99", "p999", "max")
COLUMNS = (
    "table_version", "dataset", "variant", "path", "library", "method", "transport", "flush",
    "producers", "repeat", "step", "kind", "status", "of_max", "offered_rows_per_s",
    "released_rows_per_s", "sent_rows_per_s", "visible_rows_per_s", "backlog_rows_per_s",
    "latency_slope", "measured_s", "arrivals", "arrival_rows", "rows",
    *(f"latency_{k}_s" for k in PERCENTILE_KEYS), *(f"service_{k}_s" for k in PERCENTILE_KEYS),
    "p999_note", "keeps_up", "rising", "measured", "passed", "latency_bound_s", "within_bound",
    "resolution_s", "failed_samples", "sample_interval_s", "producer_p99_spread_s", "validated",
    "skipped",
    "server",  # the server it ran on (server.versions' label): its record's folder
)  # fmt: skip

#: A measured step's own fields, as they are in its record.
STEP_KEYS = ("released_rows_per_s", "sent_rows_per_s", "visible_rows_per_s",
             "backlog_rows_per_s", "latency_slope", "measured_s", "arrivals", "rows",
             "p999_note", "keeps_up", "rising", "measured", "passed", "within_bound",
             "resolution_s", "failed_samples", "producer_p99_spread_s")  # fmt: skip
BOOLEAN_COLUMNS = ("keeps_up", "rising", "measured", "passed", "within_bound", "validated")


def step_rows(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A job record's steps as paced.csv rows."""
    settings = record["settings"]
    rows = []
    for step in record["steps"]:
        row = {k: record.get(k) for k in ("dataset", "variant", "path", "library", "method",
                                          "transport", "flush")}  # fmt: skip
        row |= {"table_version": TABLE_VERSION, "producers": record.get("producers", 1),
                "repeat": step.get("repeat"), "step": step["name"], "kind": step["kind"],
                "status": step.get("status"), "of_max": step.get("of_max"),
                "offered_rows_per_s": step.get("rows_per_s"),
                "arrival_rows": settings["arrival_rows"],
                "latency_bound_s": settings["latency_bound_s"],
                "sample_interval_s": settings.get("sample_interval_s"),
                "skipped": step.get("skipped")}  # fmt: skip
        if "latency" in step:
            row |= {k: step.get(k) for k in STEP_KEYS}
            row |= {f"latency_{k}_s": step["latency"][k] for k in PERCENTILE_KEYS}
            row |= {f"service_{k}_s": step["service"][k] for k in PERCENTILE_KEYS}
            row["validated"] = bool(step.get("validation", {}).get("ok"))
        rows.append(row)
    return rows


def paced_table(records: Iterable[Path]) -> pd.DataFrame:
    # paced/<server>/<dataset>/<job>.json: the server is the folder above the dataset's
    rows = [r | {"server": Path(path).parent.parent.name}
            for path in records for r in step_rows(load_json(path, "paced record"))]  # fmt: skip
    return pd.DataFrame(rows, columns=list(COLUMNS))


def write_paced_table(records: Iterable[Path], csv: Path) -> pd.DataFrame:
    df = paced_table(records)
    write_text_atomic(csv, df.to_csv(index=False))
    return df


def read_paced_table(csv: Path) -> pd.DataFrame:
    df = pd.read_csv(csv)
    for col in BOOLEAN_COLUMNS:
        df[col] = df[col].map({True: True, "True": True, False: False, "False": False})
    return df
