"""paced.csv: one row per step of every paced job (its percentiles, rates and verdicts)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ingestbench.storage.files import load_json, write_text_atomic

PERCENTILE_KEYS = ("p50", "p90", "p99", "p999", "max")
COLUMNS = (
    "dataset", "variant", "path", "library", "method", "transport", "flush", "step", "kind",
    "of_max", "offered_rows_per_s", "achieved_rows_per_s", "arrivals", "arrival_rows", "rows",
    *(f"latency_{k}_s" for k in PERCENTILE_KEYS), *(f"service_{k}_s" for k in PERCENTILE_KEYS),
    "first_quarter_p50_s", "last_quarter_p50_s", "keeps_up", "rising", "sustained",
    "latency_bound_s", "within_bound", "resolution_s", "validated", "skipped",
    "server",  # the server it ran on (server.versions' label): its record's folder
)  # fmt: skip

#: A measured step's own fields, as they are in its record.
STEP_KEYS = ("achieved_rows_per_s", "arrivals", "rows", "first_quarter_p50_s",
             "last_quarter_p50_s", "keeps_up", "rising", "sustained", "resolution_s")  # fmt: skip


def step_rows(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A job record's steps as paced.csv rows."""
    settings = record["settings"]
    bound = settings["latency_bound_s"]
    rows = []
    for step in record["steps"]:
        row = {k: record.get(k) for k in ("dataset", "variant", "path", "library", "method",
                                          "transport", "flush")}  # fmt: skip
        row |= {"step": step["name"], "kind": step["kind"], "of_max": step.get("of_max"),
                "offered_rows_per_s": step.get("rows_per_s"),
                "arrival_rows": settings["arrival_rows"], "latency_bound_s": bound,
                "skipped": step.get("skipped")}  # fmt: skip
        if not step.get("skipped"):
            p99 = step["latency"]["p99"]
            row |= {k: step[k] for k in STEP_KEYS}
            row |= {f"latency_{k}_s": step["latency"][k] for k in PERCENTILE_KEYS}
            row |= {f"service_{k}_s": step["service"][k] for k in PERCENTILE_KEYS}
            row["within_bound"] = bool(step["sustained"] and p99 is not None and p99 <= bound)
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
    for col in ("keeps_up", "rising", "sustained", "within_bound", "validated"):
        df[col] = df[col].map({True: True, "True": True, False: False, "False": False})
    return df
