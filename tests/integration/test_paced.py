"""Paced ingestion against a real QuestDB: every path and flush mode lands row for row, and a
step the path cannot keep up with is marked, its latency growing through it."""

from __future__ import annotations

import json

import pytest

from ingestbench.paced.job import Step, measure_step, run_steps
from ingestbench.paced.names import PacedPath
from ingestbench.paced.settings import PacedSettings
from ingestbench.tsbs.columns import cpu_spec


def paced_settings(**over) -> PacedSettings:
    values = dict(arrival_rows=5, step_arrivals=100, warmup_arrivals=10, rates_of_max=(0.5,),
                  rates_rows_per_s=(), auto_flush_rows=40, auto_flush_interval_ms=50,
                  latency_bound_s=1.0, sample_interval_s=0.1, visible_timeout_s=60,
                  max_step_s=30) | over  # fmt: skip
    return PacedSettings(**values)


def frame_of(dataset, library="pandas"):
    from ingestbench.ingest.frames.readers import read_frame

    return read_frame(dataset["parquet"], library, "parquet", spec=cpu_spec())


#: One path per flush mode here; tests/faults/test_paced.py runs the other paths.
PATHS = [
    PacedPath("pandas", "dataframe", "http", "arrival"),
    PacedPath("pandas", "dataframe", "http", "rows"),
    PacedPath("pandas", "dataframe", "tcp", "interval"),
]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_every_flush_mode_validates_row_for_row(questdb, tiny_dataset, tmp_path, path):
    """Warm-up, unpaced and one paced step, each table checked against the dataset's first
    rows by DuckDB (run_step raises on any difference)."""
    settings = paced_settings()
    steps = run_steps(questdb, path, cpu_spec(), frame_of(tiny_dataset, path.library),
                      settings, 2, tiny_dataset["parquet"], tmp_path)  # fmt: skip
    assert [s["kind"] for s in steps] == ["warmup", "unpaced", "paced"]
    assert [s["validation"]["rows"] for s in steps] == [50, 500, 500]
    assert all(s["validation"]["ok"] for s in steps)
    paced = steps[-1]
    assert paced["offered_rows_per_s"] == pytest.approx(0.5 * steps[1]["achieved_rows_per_s"])
    assert paced["latency"]["p999"] is None  # 100 arrivals give no p99.9
    assert 0 < paced["latency"]["p50"] <= paced["latency"]["p99"] <= paced["latency"]["max"]
    json.dumps(steps)  # the record is plain JSON


def test_a_step_beyond_the_path_is_marked_and_its_latency_grows(questdb, tiny_dataset):
    """Offered ten times what the path does unpaced: the producer falls behind its schedule,
    the step is not sustained, and each arrival waits longer than the one before (sampled
    every 20 ms here, so that a short step's growth is well above the resolution)."""
    path = PacedPath("pandas", "rows", "http", "arrival")
    settings = paced_settings(arrival_rows=5, step_arrivals=400, sample_interval_s=0.02)
    frame = frame_of(tiny_dataset)
    table = cpu_spec(table="paced_beyond")
    from ingestbench.server.table import recreate_table

    recreate_table(questdb, table)
    unpaced = measure_step(questdb, path, table, frame, settings, 2, Step("u", "unpaced", 400))
    recreate_table(questdb, table)
    rate = 10 * unpaced.achieved_rows_per_s
    beyond = measure_step(questdb, path, table, frame, settings, 2,
                          Step("b", "paced", 400, rate))  # fmt: skip
    assert not beyond.keeps_up and not beyond.sustained
    assert beyond.achieved_rows_per_s < 0.99 * rate
    assert beyond.rising
    assert beyond.last_quarter_p50_s > beyond.first_quarter_p50_s + 2 * settings.sample_interval_s
    assert beyond.latency["max"] > beyond.latency["p50"]
