"""The readers' figures from samples and query logs, on made-up inputs."""

from __future__ import annotations

import random

import pytest

from ingestbench.datasets import OWN, TSBS_CPU, TSBS_IOT
from ingestbench.readers.beside import lag_basis
from ingestbench.readers.stats import gap_lags, query_stats, txn_lags, visibility
from ingestbench.tsbs.columns import cpu_spec


def test_a_transaction_lags_from_first_seen_committed_to_first_seen_applied():
    # (t, accepted, visible, sequencer txn, writer txn)
    samples = [(0.0, 0, 0, 0, 0), (0.1, 100, 0, 1, 0), (0.2, 300, 100, 3, 1),
               (0.3, 300, 300, 3, 3), (0.4, 400, 300, 4, 3)]  # fmt: skip
    lags, unresolved = txn_lags(samples)
    # txn 1: seen at 0.1, applied at 0.2; txns 2, 3: seen at 0.2, applied at 0.3; txn 4 open.
    assert lags == pytest.approx([0.1, 0.1, 0.1]) and unresolved == 1
    gaps, open_ = gap_lags(samples)
    assert gaps == pytest.approx([0.0, 0.1, 0.1, 0.0]) and open_ == 1
    figures = visibility(samples, "txn")
    assert figures["backlog_rows_max"] == 200 and figures["lag_s_max"] == pytest.approx(0.1)
    assert set(visibility(samples, "n/a")) == {
        "basis",
        "backlog_rows_p50",
        "backlog_rows_p95",
        "backlog_rows_p99",
        "backlog_rows_max",
    }


def test_the_basis_follows_the_path():
    assert lag_basis("dataframe", "http") == "txn"
    assert lag_basis("vectorized", "tcp") == "gap"
    assert lag_basis("server_parquet", "http") == "n/a"


def test_queries_outside_the_window_do_not_count_and_a_slow_reader_is_marked():
    log = {"kind": [0, 1, 0, 1], "start": [0.5, 1.5, 2.0, 9.0], "seconds": [0.1, 0.2, 0.3, 0.4],
           "ok": [True, False, True, True], "errors": ["b: HTTP 400"], "late": 0}  # fmt: skip
    out = query_stats([log], ["a", "b"], (1.0, 3.0), rate_per_s=5.0)
    assert out["queries"]["a"]["count"] == 1 and out["queries"]["b"]["errors"] == 1
    assert out["errors"] == 1 and out["error_messages"] == ["b: HTTP 400"]
    assert out["reader_rates"] == [1.0] and out["readers_behind"] == 1  # 1/s of 5/s


def test_tsbs_data_gets_the_devops_mix_with_windows_inside_its_span():
    dataset = {"scale": 40, "epochs": 8641, "start": "2016-01-01T00:00:00Z", "interval_s": 10}
    kinds = {k.name: k for k in TSBS_CPU.reader_queries(cpu_spec(table="cpu"), dataset)}
    assert list(kinds) == ["lastpoint", "groupby-1h", "high-cpu-12h", "last-minute"]
    sql = kinds["high-cpu-12h"].sql(random.Random(1))
    assert "hostname = 'host_" in sql and "'2016-01-01T" in sql and "usage_user > 90.0" in sql


def test_iot_and_own_tables_get_the_latest_row_and_the_last_minute():
    spec = cpu_spec(table="readings")  # any table with a designated timestamp
    for kind in (TSBS_IOT, OWN):
        assert [k.name for k in kind.reader_queries(spec, {})] == ["latest-row", "last-minute"]
        assert "FROM readings LIMIT -1" in kind.reader_queries(spec, {})[0].template
