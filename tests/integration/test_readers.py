"""Readers beside ingestion against a real QuestDB: every failed query counted, the sampler's
samples in their shape, and a job with readers still validated row for row."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

from ingestbench.config import Settings, validate_config
from ingestbench.ingest.job import IngestFiles, ingest_job
from ingestbench.readers.load import QueryLoad
from ingestbench.readers.queries import QueryKind, latest_queries
from ingestbench.readers.series import COLUMNS, series_path
from ingestbench.readers.worker import LoadPlan
from ingestbench.validate import expected_aggregates, validate_run
from ingestbench.variants import parse_variant_name
from tests.helpers import cpu_aggregates


def _plan(qdb, table: str, kinds, readers: int = 2, **over) -> LoadPlan:
    values = {"url": qdb.url, "http_kwargs": qdb.access.http_kwargs(), "table": table,
              "kinds": tuple(kinds), "readers": readers, "rate_per_s": 20.0,
              "sample_interval_s": None} | over  # fmt: skip
    return LoadPlan(**values)


def test_every_failed_query_is_counted_and_the_first_are_kept(questdb):
    questdb.sql("CREATE TABLE t_reads (v DOUBLE, ts TIMESTAMP) TIMESTAMP(ts) PARTITION BY DAY WAL")
    good = QueryKind("good", "SELECT count() FROM t_reads")
    bad = QueryKind("bad", "SELECT count() FROM t_no_such_table")
    record = QueryLoad(_plan(questdb, "t_reads", [good, bad])).run_for(1.0).record()
    queries = record["queries"]
    # Each reader alternates the two kinds: as many failed as answered, none dropped.
    assert queries["bad"]["count"] == 0 and queries["bad"]["errors"] > 0
    assert queries["good"]["count"] > 0 and queries["good"]["errors"] == 0
    assert abs(queries["good"]["count"] - queries["bad"]["errors"]) <= record["readers"]
    assert record["errors"] == queries["bad"]["errors"] == record["all"]["errors"]
    assert record["error_messages"] and all(
        m.startswith("bad: HTTP 400") and "t_no_such_table" in m for m in record["error_messages"]
    )
    assert queries["bad"]["p50_ms"] is None  # no latency of a query that failed
    assert record["readers_behind"] in (0, 1, 2) and len(record["reader_rates"]) == 2


def test_readers_as_fast_as_they_can_outpace_a_set_rate_and_none_is_marked_behind(questdb):
    questdb.sql("CREATE TABLE t_fast (v DOUBLE, ts TIMESTAMP) TIMESTAMP(ts) PARTITION BY DAY WAL")
    kinds = [QueryKind("count", "SELECT count() FROM t_fast")]
    paced = QueryLoad(_plan(questdb, "t_fast", kinds, readers=1, rate_per_s=5.0)).run_for(1.0)
    fast = QueryLoad(_plan(questdb, "t_fast", kinds, readers=1, rate_per_s=None)).run_for(1.0)
    paced, fast = paced.record(), fast.record()
    assert paced["queries"]["count"]["count"] <= 7  # 5 a second, give or take the edges
    assert fast["queries"]["count"]["count"] > paced["queries"]["count"]["count"]
    assert fast["errors"] == 0 and fast["rate_per_s"] is None
    assert fast["readers_behind"] is None  # no set rate: nobody can fall behind it


def test_the_sampler_sees_rows_accepted_then_visible_in_order(questdb):
    questdb.sql("CREATE TABLE t_sampled (v DOUBLE, ts TIMESTAMP) TIMESTAMP(ts) "
                "PARTITION BY DAY WAL")  # fmt: skip
    kinds = latest_queries("t_sampled", "ts")
    assert [k.name for k in kinds] == ["latest-row", "last-minute"]
    load = QueryLoad(_plan(questdb, "t_sampled", kinds, readers=1, sample_interval_s=0.05))
    with load:
        for i in range(5):
            day = f"2024-01-0{i + 1}"
            questdb.sql(f"INSERT INTO t_sampled SELECT x * 1.0, dateadd('s', x::int, '{day}') "
                        "FROM long_sequence(1000)")  # fmt: skip
        questdb.sql("SELECT wait_wal_table('t_sampled')")
        questdb.sql("SELECT count() FROM t_sampled")  # one more sample's time after the apply
        time.sleep(0.3)
        load.stop()
    record = load.record()
    series = record["series"]
    assert len(series) >= 3 and all(len(s) == 5 for s in series)  # t, accepted, visible, txns
    times = [s[0] for s in series]
    assert times == sorted(times)
    # The baseline is taken before the window opens, so no transaction can precede it.
    assert times[0] <= 0 and series[0][1] == 0 and series[0][3] == 0
    assert all(s[2] <= s[1] for s in series)  # visible <= accepted
    assert all(s[4] <= s[3] for s in series)  # writer txn <= sequencer txn
    assert series[-1][1:3] == (5000, 5000) and series[-1][3] == series[-1][4] == 5
    assert record["sampler"]["samples"] == len(series) and record["sampler"]["failed"] == 0
    lag = record["visibility"]
    assert lag["basis"] == "txn" and lag["lags"] + lag["unresolved"] >= 1
    assert lag["lag_s_p50"] is None or lag["lag_s_p50"] >= 0


def test_a_job_with_readers_is_validated_row_for_row(questdb_jar, tiny_dataset, tmp_path):
    config = {"datasets": [{"label": "tiny", "scale": 40, "epochs": 50}],
              "variants": [{"method": "dataframe"}], "repeats": 1,
              "readers": {"counts": [0, 2], "rate_per_s": 20, "idle_s": 0.5}}  # fmt: skip
    settings = Settings.from_config(validate_config(config))
    expected = cpu_aggregates(expected_aggregates(tiny_dataset["parquet"]))
    basis = {"pandas-dataframe-parquet-http": "txn", "pandas-vectorized-parquet-tcp-w2": "gap",
             "none-server_parquet-parquet-http": "n/a"}  # fmt: skip
    for name in basis:
        out = tmp_path / name
        files = IngestFiles(
            data=tiny_dataset["parquet"],
            manifest=tiny_dataset["dir"] / f"{tiny_dataset['params'].name}.manifest.json",
            run=out / "run.json", actual=out / "actual.json", export=out / "export",
        )  # fmt: skip
        run = ingest_job(settings, parse_variant_name(name), files, jar=questdb_jar)
        readers = run.readers
        assert readers["counts"] == [0, 2] and [r["readers"] for r in readers["runs"]] == [0, 2]
        assert readers["lag_basis"] == basis[name]
        assert [k for k in readers["queries"]] == [
            "lastpoint",
            "groupby-1h",
            "high-cpu-12h",
            "last-minute",
        ]
        with_two = readers["runs"][1]["repeats"][0]["load"]
        assert with_two["readers"] == 2 and with_two["errors"] == 0, with_two["error_messages"]
        assert [i["readers"] for i in readers["idle"]] == [2]
        # The plain repeats are the baseline, as in a run without readers.
        assert len(run.repeats) == 1 and "load" not in run.repeats[0].extra
        with series_path(files.run).open() as f:
            rows = list(csv.reader(f))
        assert tuple(rows[0]) == COLUMNS and {r[0] for r in rows[1:]} == {"0", "2"}
        actual = json.loads(files.actual.read_text())
        result = validate_run(run, tiny_dataset["parquet"], expected,
                              actual, Path(files.export))  # fmt: skip
        assert result["passed"], result["failed_checks"]
