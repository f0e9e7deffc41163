"""The summary's columns of a run with readers, on a hand-written run file; a summary without
readers has none of them."""

from __future__ import annotations

import json
import math

import pytest

from ingestbench.results.summary import summarize, to_markdown
from tests.helpers import FIXTURE_RESULTS

RUN = FIXTURE_RESULTS / "runs" / "cpu-s10-e10-seed1" / "pandas-dataframe-parquet-http.json"


def _load(readers: int, e2e: float, lag: float, errors: int = 0) -> dict:
    kind = {"count": 10, "errors": errors, "p50_ms": 2.0, "p95_ms": 5.0, "p99_ms": 9.0,
            "max_ms": 9.5, "per_s": 4.0}  # fmt: skip
    load = {"readers": readers, "readers_cpu_s": 0.2,
            "visibility": {"basis": "txn", "lag_s_p50": lag, "lag_s_p95": lag * 2,
                           "lag_s_p99": lag * 3, "lag_s_max": lag * 4, "backlog_rows_max": 50},
            "sampler": {"cpu_s": 0.01, "samples": 5}}  # fmt: skip
    if readers:
        load |= {"queries": {"lastpoint": kind}, "all": kind, "errors": errors,
                 "readers_behind": 1}  # fmt: skip
    return {"repeat": 9, "cold": False, "phases": {}, "end_to_end": e2e, "client_cpu_s": 0.5,
            "server_cpu_s": 1.0, "load": load}  # fmt: skip


def test_rates_slowdowns_lags_and_queries_per_reader_count(tmp_path):
    doc = json.loads(RUN.read_text())
    idle = {"readers": 2, "all": {"p50_ms": 1.0, "p95_ms": 2.0, "p99_ms": 3.0, "per_s": 9.0},
            "queries": {"lastpoint": {"p50_ms": 1.0, "p95_ms": 2.0, "p99_ms": 3.0,
                                      "per_s": 9.0}}, "errors": 0}  # fmt: skip
    doc["readers"] = {"counts": [0, 2], "rate_per_s": 5, "lag_basis": "txn", "idle": [idle],
                      "runs": [{"readers": 0, "repeats": [_load(0, 0.05, 0.1)]},
                               {"readers": 2, "repeats": [_load(2, 0.08, 0.2, errors=3),
                                                          _load(2, 0.10, 0.4)]}]}  # fmt: skip
    path = tmp_path / "runs" / "cpu-s10-e10-seed1" / RUN.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc))
    df = summarize([path])
    r = df.iloc[0]
    plain = r["rows_per_s_median"]
    # The median of the repeats' rates, as the plain repeats' (1,250 and 1,000 rows/s).
    assert r["rows_per_s_median_r2"] == pytest.approx(1125)
    assert r["slowdown_r2"] == pytest.approx(plain / 1125)
    assert r["slowdown_r0"] == pytest.approx(plain / (100 / 0.05))
    assert r["lag_s_p50_r2"] == pytest.approx(0.3) and r["lag_s_max_r2"] == pytest.approx(1.6)
    assert r["reader_errors_r2"] == 3 and r["readers_behind_r2"] == 1  # summed, never dropped
    assert r["query_p99_ms_r2"] == 9.0 and r["query_p99_ms_idle_r2"] == 3.0
    assert r["q_lastpoint_per_s_r2"] == 4.0 and r["qps_idle_r2"] == 9.0
    assert r["readers_cpu_s_per_1m_rows_r2"] == pytest.approx(0.2 / 1e-4)
    assert "query_p50_ms_r0" not in df and r["lag_basis"] == "txn"
    text = to_markdown(df)
    assert "## Readers beside ingestion" in text and "| `pandas-dataframe-parquet-http` |" in text


def test_a_summary_without_readers_has_none_of_their_columns():
    df = summarize([RUN])
    assert not [c for c in df.columns if c.endswith(("_r0", "_r2")) or "reader" in c]
    assert "Readers beside ingestion" not in to_markdown(df)
    assert not math.isnan(df.iloc[0]["rows_per_s_median"])
