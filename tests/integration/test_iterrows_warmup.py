"""QuestDB's published baseline (the iterrows loop) and the warm-up, against a real QuestDB."""

from __future__ import annotations

import json

import pytest

from ingestbench.config import Settings, validate_config
from ingestbench.errors import UserError
from ingestbench.ingest.job import IngestFiles, ingest_job
from ingestbench.ingest.methods import cpu_job
from ingestbench.ingest.parts import rows_to_ingest
from ingestbench.ingest.runner import run_variant
from ingestbench.ingest.warmup import warmup_method
from ingestbench.validate import (
    expected_aggregates,
    export_table,
    questdb_aggregates,
    validate_run,
)
from ingestbench.variants import parse_variant_name
from tests.helpers import cpu_aggregates


def _config(**over):
    """A validated config around the tiny dataset."""
    config = {"datasets": [{"label": "tiny", "scale": 40, "epochs": 50}],
              "variants": [{"method": "dataframe"}], "repeats": 2, **over}  # fmt: skip
    return validate_config(config)


def _validated(qdb, table: str, doc: dict, tiny_dataset, tmp_path) -> dict:
    """Validate the table row for row against the dataset with DuckDB, as the workflow does."""
    export = tmp_path / table  # a directory of each table's export
    export_table(qdb, table, export / "cpu")
    expected = cpu_aggregates(expected_aggregates(tiny_dataset["parquet"]))
    return validate_run(doc, tiny_dataset["parquet"], expected,
                        cpu_aggregates(questdb_aggregates(qdb, table)), export)  # fmt: skip


def _run(qdb, tiny_dataset, name: str, rows: int = 2000, warmup_rows: int = 0) -> tuple[str, dict]:
    variant = parse_variant_name(name)
    table = "t_seed_" + name.replace("-", "_")
    job = cpu_job(qdb, table, variant, tiny_dataset[variant.format], rows, 2, field_type="double")
    dataset = {"name": tiny_dataset["params"].name, "rows": 2000}
    return table, run_variant(job, dataset, repeats=2, warmup_rows=warmup_rows)


@pytest.mark.parametrize("name", ["pandas-iterrows-parquet-http", "pandas-iterrows-csv-tcp"])
def test_iterrows_lands_every_row_and_validates_row_for_row(questdb, tiny_dataset, tmp_path, name):
    table, doc = _run(questdb, tiny_dataset, name)
    assert doc["variant"]["method"] == "iterrows" and doc["rows"] == 2000
    assert 300 * 2000 < doc["ilp_bytes"] < 600 * 2000  # the serialize pass ran the same loop
    result = _validated(questdb, table, doc, tiny_dataset, tmp_path)
    assert result["passed"], result["failed_checks"]


def test_iterrows_is_capped_like_the_rows_loop(questdb, tiny_dataset, tmp_path):
    variant = parse_variant_name("pandas-iterrows-parquet-tcp")
    assert rows_to_ingest(variant, 2000, 130) == 130
    table, doc = _run(questdb, tiny_dataset, variant.name, rows=130)
    assert doc["rows"] == 130
    assert _validated(questdb, table, doc, tiny_dataset, tmp_path)["passed"]


def test_iterrows_is_pandas_only():
    with pytest.raises(ValueError, match="not a valid variant"):
        parse_variant_name("polars-iterrows-parquet-http")


@pytest.mark.parametrize(
    ("name", "warmup_rows", "expected_method"),
    [
        ("pandas-threads-parquet-tcp-w2", 700, "threads"),  # its own method
        ("pandas-iterrows-parquet-http", 700, "dataframe"),  # the loop would be slow
        ("none-server_parquet-parquet-http", 5000, "dataframe"),  # capped to the dataset
    ],
)
def test_a_warm_up_runs_apart_and_leaves_exactly_the_dataset(
    questdb, tiny_dataset, tmp_path, name, warmup_rows, expected_method
):
    table, doc = _run(questdb, tiny_dataset, name, warmup_rows=warmup_rows)
    assert doc["schema_version"] == 2
    assert doc["warmup"]["rows"] == min(warmup_rows, 2000)
    assert doc["warmup"]["seconds"] > 0 and doc["warmup"]["method"] == expected_method
    assert warmup_method(parse_variant_name(name)) == expected_method
    assert [r["cold"] for r in doc["repeats"]] == [False, False]  # the warm-up met the cold JVM
    # The warm-up's rows went with its table: the table holds the dataset, once.
    assert questdb.scalar(f"SELECT count() FROM {table}") == 2000
    result = _validated(questdb, table, doc, tiny_dataset, tmp_path)
    assert result["passed"], result["failed_checks"]


def test_ingest_job_passes_the_configured_warm_up(questdb, tiny_dataset, tmp_path):
    config = _config(warmup_rows=500, table="t_seed_job", questdb={
        "mode": "external", "host": questdb.host, "http_port": questdb.http_port,
        "ilp_port": questdb.ilp_port})  # fmt: skip
    manifest = tiny_dataset["dir"] / f"{tiny_dataset['params'].name}.manifest.json"
    files = IngestFiles(tiny_dataset["parquet"], manifest, tmp_path / "run.json")
    run = ingest_job(Settings.from_config(config),
                     parse_variant_name("pandas-dataframe-parquet-http"), files)  # fmt: skip
    assert json.loads((tmp_path / "run.json").read_text())["warmup"]["rows"] == 500
    assert [r.cold for r in run.repeats] == [False, False]


def test_without_a_warm_up_the_first_repeat_is_cold(questdb, tiny_dataset):
    variant = parse_variant_name("pandas-dataframe-parquet-http")
    job = cpu_job(
        questdb, "t_no_warmup", variant, tiny_dataset["parquet"], 2000, 2, field_type="double"
    )
    doc = run_variant(job, {"name": "tiny", "rows": 2000}, repeats=2, warmup_rows=0)
    assert doc["warmup"] is None
    assert [r["cold"] for r in doc["repeats"]] == [True, False]


@pytest.mark.parametrize("value", [-1, 1.5, "lots"])
def test_warmup_rows_must_be_a_whole_number_not_below_zero(value):
    with pytest.raises(UserError, match="warmup_rows"):
        _config(warmup_rows=value)


def test_warmup_rows_defaults_on():
    assert _config()["warmup_rows"] > 0
