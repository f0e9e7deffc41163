"""DEDUP tables against a real QuestDB: rows sent again replace their twins, and the replay
check fails on a table without upsert keys."""

from __future__ import annotations

import pytest

from ingestbench.ingest.dedup import DedupError, replay_check
from ingestbench.ingest.methods import Job, cpu_job
from ingestbench.ingest.runner import run_variant
from ingestbench.variants import parse_variant_name

pytestmark = pytest.mark.server


def _job(questdb, tiny_dataset, table: str, dedup: bool) -> Job:
    variant = parse_variant_name("pandas-dataframe-parquet-tcp")
    rows = tiny_dataset["manifest"]["rows"]
    return cpu_job(
        questdb, table, variant, tiny_dataset["parquet"], rows, 2, dedup=dedup, field_type="double"
    )


def test_a_replayed_chunk_leaves_no_duplicate_in_a_dedup_table(questdb, tiny_dataset):
    job = _job(questdb, tiny_dataset, "t_dedup", dedup=True)
    doc = run_variant(job, {"name": "tiny"}, repeats=1)
    assert doc["repeats"][0]["end_to_end"] > 0
    ddl = questdb.scalar("SHOW CREATE TABLE t_dedup")  # QuestDB lists the keys in column order
    assert "DEDUP UPSERT KEYS(hostname,region,datacenter," in ddl and ",timestamp);" in ddl
    assert replay_check(job, tiny_dataset["parquet"]) == {"replayed_rows": 2000, "rows_after": 2000}


def test_the_replay_check_fails_on_a_table_without_upsert_keys(questdb, tiny_dataset):
    job = _job(questdb, tiny_dataset, "t_no_dedup", dedup=False)
    run_variant(job, {"name": "tiny"}, repeats=1)
    with pytest.raises(DedupError, match="holds 4000 rows after 2000 of its 2000 rows were sent"):
        replay_check(job, tiny_dataset["parquet"])
