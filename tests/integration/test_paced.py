"""Paced ingestion against a real QuestDB: a job's steps, back to back on one connection and
table per repeat, land row for row (as stamped), and a step beyond the path fails."""

from __future__ import annotations

import json

import pytest

from ingestbench.paced.job import run_steps
from ingestbench.paced.names import PacedPath
from ingestbench.paced.settings import PacedSettings
from ingestbench.tsbs.columns import cpu_spec


def paced_settings(**over) -> PacedSettings:
    values = dict(arrival_rows=5, step_s=1.5, lead_in_s=0.5, repeats=1, timestamps="due",
                  warmup_arrivals=20, rates_of_max=(0.3,), rates_rows_per_s=(),
                  auto_flush_rows=40, auto_flush_interval_ms=50, latency_bound_s=1.0,
                  sample_interval_s=0.05, visible_timeout_s=60) | over  # fmt: skip
    return PacedSettings(**values)


#: One path per flush mode here; tests/faults/test_paced.py runs the other paths.
PATHS = [
    PacedPath("pandas", "dataframe", "http", "arrival"),
    PacedPath("polars", "dataframe", "http", "rows"),
    PacedPath("pandas", "dataframe", "tcp", "interval"),
]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_every_flush_mode_validates_row_for_row(questdb, tiny_dataset, tmp_path, path):
    """Warm-up, unpaced and a paced step at a tenth... of the maximum, each table checked
    against the rows it was sent, as stamped, by DuckDB (the job raises on any difference)."""
    steps = run_steps(questdb, path, cpu_spec(), tiny_dataset["parquet"], paced_settings(), 2,
                      tmp_path)  # fmt: skip
    assert [s["kind"] for s in steps] == ["warmup", "unpaced", "paced"]
    assert all(s["validation"]["ok"] for s in steps)
    unpaced, paced = steps[1], steps[2]
    assert unpaced["visible_rows_per_s"] > 0 and unpaced["measured_s"] > 0.5
    assert paced["rows_per_s"] == pytest.approx(0.3 * unpaced["visible_rows_per_s"])
    assert paced["measured_s"] == pytest.approx(1.5, rel=0.05)
    assert paced["latency"]["p999"] is None and "fewer than 10,000" in paced["p999_note"]
    assert 0 < paced["latency"]["p50"] <= paced["latency"]["p99"] <= paced["latency"]["max"]
    assert paced["resolution_s"] >= 0.05
    json.dumps(steps)  # the record is plain JSON
