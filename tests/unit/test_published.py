"""The summary's iterrows speed-up and warm/cold columns; the table next to QuestDB's figures."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ingestbench.results.published import BASELINE, PUBLISHED, published_comparison
from ingestbench.results.summary import summarize, to_markdown

DATASET = {"name": "cpu-s4000-e2500-seed42", "rows": 10_000, "scale": 4000, "epochs": 2500,
           "seed": 42, "field_type": "double"}  # fmt: skip


def _run(tmp: Path, name: str, rows: int, e2e: list[float], warmup: dict | None) -> Path:
    library, method, fmt, transport, *extra = name.split("-")
    repeats = [
        {"repeat": i, "cold": warmup is None and i == 0, "end_to_end": e,
         "phases": {"read": 0.0, "convert": 0.0, "serialize": e / 4, "send": e / 2,
                    "visible": e / 2}}
        for i, e in enumerate(e2e)
    ]  # fmt: skip
    doc = {"schema_version": 2, "dataset": DATASET, "rows": rows, "ilp_bytes": rows * 488,
           "ilp_protocol_version": 1, "warmup": warmup, "repeats": repeats,
           "variant": {"name": name, "library": library, "method": method, "format": fmt,
                       "transport": transport, "workers": int(extra[0][1:]) if extra else 1,
                       "batch_rows": None}}  # fmt: skip
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def runs(tmp_path):
    warm = {"rows": 3000, "seconds": 0.5, "method": "dataframe"}
    return [
        _run(tmp_path, "pandas-iterrows-parquet-tcp", 1000, [0.1, 0.1, 0.1], warm),  # 10k/s
        _run(tmp_path, "pandas-rows-parquet-tcp", 1000, [0.05, 0.05, 0.05], warm),  # 20k/s
        _run(tmp_path, "pandas-dataframe-parquet-tcp", 10_000, [0.05, 0.04, 0.05], warm),
        _run(tmp_path, "pandas-threads-parquet-tcp-w8", 10_000, [0.08, 0.02, 0.025], None),
        _run(tmp_path, "polars-dataframe-parquet-tcp", 10_000, [0.05, 0.05, 0.05], None),
    ]


def test_speedups_against_both_loops(runs):
    df = summarize(runs).set_index("variant")
    assert df.loc["pandas-dataframe-parquet-tcp", "speedup_vs_rows"] == pytest.approx(10)
    assert df.loc["pandas-dataframe-parquet-tcp", "speedup_iterrows"] == pytest.approx(20)
    assert df.loc["pandas-iterrows-parquet-tcp", "speedup_iterrows"] == pytest.approx(1)
    assert math.isnan(df.loc["polars-dataframe-parquet-tcp", "speedup_iterrows"])  # pandas only


def test_warm_and_cold_stay_visible(runs):
    df = summarize(runs).set_index("variant")
    warmed = df.loc["pandas-dataframe-parquet-tcp"]
    assert (warmed["warm_repeats"], warmed["warmup_rows"], warmed["warmup_s"]) == (3, 3000, 0.5)
    assert math.isnan(warmed["cold_end_to_end_s"])
    cold = df.loc["pandas-threads-parquet-tcp-w8"]
    assert (cold["warm_repeats"], cold["warmup_rows"], cold["cold_end_to_end_s"]) == (2, 0, 0.08)
    # Without a warm-up the cold repeat stays in the statistics, as before.
    assert cold["end_to_end_s_max"] == pytest.approx(0.08)
    md = to_markdown(summarize(runs))
    assert "× iterrows" in md and "Some jobs warmed their server up first" in md


def test_the_published_table_sets_ours_next_to_the_published_figures(runs):
    md = published_comparison(summarize(runs))
    # send rows/s: 10,000 rows / (0.05 / 2 s) = 400k; published 0.56M: 0.71x.
    assert "| sender.dataframe(), 1 thread | `pandas-dataframe-parquet-tcp` | 10,000,000 / " in md
    assert "| 0.56M | 0.40M | 0.71× |" in md
    # The published speed-ups come from the data: 261.04 / 9.13 MiB/s.
    assert f"{PUBLISHED[1].send_mib_per_s / BASELINE.send_mib_per_s:.1f}×" == "28.6×"
    assert "| sender.dataframe(), 1 thread | 28.6× | 20.0× |" in md
    assert "protocol" not in md.split("\n")[-2]  # ours ran protocol 1 too: no caveat


def test_variants_not_run_say_so(runs):
    md = published_comparison(summarize(runs[1:2]))
    assert md.count("not run") == 6
