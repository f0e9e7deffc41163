"""Paced ingestion against a real QuestDB: a job's steps, back to back on one connection and
table per repeat, land row for row (as stamped), and a step beyond the path fails."""

from __future__ import annotations

import json

import numpy as np
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
    """Warm-up, unpaced and a paced step at 0.3 of the maximum, each table checked
    against the rows it was sent, as stamped, by DuckDB (the job raises on any difference)."""
    steps = run_steps(questdb, path, cpu_spec(), tiny_dataset["parquet"], paced_settings(), 2,
                      tmp_path)  # fmt: skip
    assert [s["kind"] for s in steps] == ["warmup", "unpaced", "paced"]
    assert all(s["validation"]["ok"] for s in steps)
    unpaced, paced = steps[1], steps[2]
    assert unpaced["visible_rows_per_s"] > 0 and unpaced["measured_s"] > 0.5
    assert paced["rows_per_s"] == pytest.approx(0.3 * unpaced["visible_rows_per_s"])
    # whole arrivals: within one arrival's period of step_s
    assert abs(paced["measured_s"] - 1.5) <= 5 / paced["rows_per_s"]
    assert paced["latency"]["p999"] is None and "fewer than 10,000" in paced["p999_note"]
    assert 0 < paced["latency"]["p50"] <= paced["latency"]["p99"] <= paced["latency"]["max"]
    assert paced["resolution_s"] >= 0.05
    json.dumps(steps)  # the record is plain JSON


def test_own_data_is_paced_at_a_low_rate_stamped_when_due(questdb, tmp_path):
    """Your own Parquet file: its rows in file order, stamped when due and cycled past the
    file's 200 rows, at 50 rows/s (no step is skipped for its length), each table compared
    with the rows as stamped. Its strings are longer than 9 bytes: QuestDB's Parquet export
    read shorter VARCHARs of a fresh table back as NULL here (the trades example's venue)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ingestbench.own.dataset import OwnDataset
    from ingestbench.own.manifest import write_own_manifest
    from ingestbench.paced.job import _spec

    data = tmp_path / "meters.parquet"
    n = 200
    pq.write_table(pa.table({
        "ts": pa.array(np.arange(n) * 1_000_000, pa.timestamp("us")),
        "meter": [f"meter-number-{i % 7:04d}" for i in range(n)],
        "reading": np.linspace(0.0, 1.0, n),
    }), data)  # fmt: skip
    entry = {"label": "meters", "path": str(data)}
    manifest = write_own_manifest(OwnDataset.from_config(entry), tmp_path / "m.json")
    spec = _spec(manifest, data, "meters")  # as the job reads it, from the manifest
    settings = paced_settings(rates_of_max=(), rates_rows_per_s=(50.0,), step_s=2.0,
                              lead_in_s=0.5, warmup_arrivals=10)  # fmt: skip
    path = PacedPath("pandas", "dataframe", "http", "arrival")
    steps = run_steps(questdb, path, spec, data, settings, 2, tmp_path / "work")
    paced = steps[-1]
    assert paced["rows_per_s"] == 50.0 and paced["status"] != "skipped"
    assert paced["validation"]["ok"] and paced["validation"]["rows"] > 100
    assert steps[1]["validation"]["rows"] > n  # the unpaced step cycled the file's rows


@pytest.mark.parametrize("path", [PacedPath("pandas", "dataframe", "http", "arrival", 3),
                                  PacedPath("polars", "dataframe", "tcp", "rows", 2)],
                         ids=lambda p: p.name)  # fmt: skip
def test_several_producers_share_one_table_each_seen_by_its_own_hosts(
    questdb, tiny_dataset, tmp_path, path
):
    """N connections, each at 1/N of the rate with its own share of the hosts: the table holds
    every producer's rows (compared row for row), and each arrival's latency comes from its
    own hosts' latest timestamps, read with LATEST ON."""
    steps = run_steps(questdb, path, cpu_spec(), tiny_dataset["parquet"], paced_settings(), 2,
                      tmp_path)  # fmt: skip
    paced = steps[-1]
    assert paced["kind"] == "paced" and paced["validation"]["ok"]
    assert paced["validation"]["rows"] >= paced["rows"]  # every producer's rows, lead-in too
    p99 = paced["producer_p99_s"]
    assert len(p99) == path.producers and all(0 < p <= paced["latency"]["max"] for p in p99)
    assert paced["producer_p99_spread_s"] == pytest.approx(max(p99) - min(p99))
    assert 0 < paced["latency"]["p50"] <= paced["latency"]["p99"]
    hosts = questdb.rows(f"SELECT count_distinct(hostname) FROM {paced['table']}")[0][0]
    assert hosts == 40  # the producers' shares together: every host
    assert "producer_p99_s" not in steps[1]  # the unpaced step: one connection


def test_the_sampler_in_a_process_of_its_own_reads_on_the_parents_clock(questdb):
    """A producer holding the interpreter cannot delay it: its samples (with each key's latest
    timestamp) come through a pipe, timed by the child on the one monotonic clock, and it ends
    when stopped."""
    import os
    import time

    from ingestbench.readers.sampler import VisibilitySampler

    table = "t_sampler_process"
    questdb.sql(f"CREATE TABLE {table} (host SYMBOL, ts TIMESTAMP) TIMESTAMP(ts) "
                "PARTITION BY DAY WAL")  # fmt: skip
    try:
        sampler = VisibilitySampler(questdb.url, questdb.access.http_kwargs(), table, 0.05,
                                    ("host", "ts"), own_process=True)  # fmt: skip
        before = time.monotonic()
        with sampler:
            assert sampler.wait_for(0, 60)
            questdb.sql(f"INSERT INTO {table} VALUES ('a', 10), ('b', 20), ('a', 30)")
            assert sampler.wait_for(3, 60)
        child = sampler._child
        assert child.pid != os.getpid() and child.exitcode == 0  # stopped, not killed
        last = sampler.samples[-1]
        assert last.visible == 3 and last.latest == {"a": 30, "b": 20}
        assert before < sampler.samples[0].start and last.end < time.monotonic()
        ends = [s.end for s in sampler.samples]
        assert ends == sorted(ends) and len(ends) >= 2
    finally:
        questdb.sql(f"DROP TABLE {table}")
