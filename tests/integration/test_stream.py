"""Streamed ingestion: chunks that do not divide the file land every row, checked row for row with
DuckDB; a broken file fails mid-stream in one sentence; no worker process outlives its run."""

from __future__ import annotations

import itertools
import multiprocessing as mp

import pytest

from ingestbench.catalogue import METHODS
from ingestbench.columnar.arrow import to_pandas
from ingestbench.config import Settings, validate_config
from ingestbench.errors import UserError
from ingestbench.ingest.frames.readers import iter_frames
from ingestbench.ingest.job import IngestFiles, ingest_job
from ingestbench.ingest.methods import cpu_job
from ingestbench.ingest.runner import run_variant
from ingestbench.validate import (
    expected_aggregates,
    export_table,
    questdb_aggregates,
    validate_run,
)
from ingestbench.variants import CLIENT_METHODS, parse_variant_name
from tests.helpers import cpu_aggregates

CHUNK = 333  # does not divide the tiny dataset's 2,000 rows
SUFFIX = {"threads": "-w2", "processes": "-w3", "batches": "-b250", "vectorized": "-w2"}
STREAMED = [
    f"{lib}-{method}-{fmt}-{transport}{SUFFIX.get(method, '')}-c{CHUNK}"
    for (i, (lib, fmt)), method in itertools.product(
        enumerate(itertools.product(("pandas", "polars"), ("parquet", "csv"))), CLIENT_METHODS
    )
    for transport in [("http", "tcp")[(i + CLIENT_METHODS.index(method)) % 2]]
    if lib in METHODS[method].libraries
]


@pytest.fixture(scope="module")
def expected(tiny_dataset):
    return expected_aggregates(tiny_dataset["parquet"])


@pytest.mark.parametrize("name", STREAMED)
def test_a_streamed_run_lands_every_row_in_order(questdb, tiny_dataset, expected, tmp_path, name):
    variant = parse_variant_name(name)
    table = "s_" + name.replace("-", "_")
    rows = 1234 if METHODS[variant.method].capped else 2000  # the row loop's cap, mid-chunk
    job = cpu_job(
        questdb, table, variant, tiny_dataset[variant.format], rows, 2, field_type="double"
    )
    run = run_variant(job, {"name": "tiny", "rows": 2000}, repeats=1)
    export = tmp_path / "export"  # a directory of each table's export
    export_table(questdb, table, export / "cpu")
    result = validate_run(run, tiny_dataset["parquet"], cpu_aggregates(expected),
                          cpu_aggregates(questdb_aggregates(questdb, table)), export)  # fmt: skip
    assert result["passed"], result["failed_checks"]
    assert run["variant"]["chunk_rows"] == CHUNK
    # The separate serialize pass covers every row, chunk by chunk: ~450 B/row of ILP.
    assert 300 * rows < run["ilp_bytes"] < 600 * rows


@pytest.mark.parametrize("library", ["pandas", "polars"])
@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_chunks_keep_categorical_tags_and_utc_time(tiny_dataset, library, fmt):
    frames = list(iter_frames(tiny_dataset[fmt], library, fmt, CHUNK, 2000))
    assert [len(f) for f in frames] == [CHUNK] * 6 + [2000 - 6 * CHUNK]
    for frame in map(to_pandas, frames):
        assert str(frame["hostname"].dtype) == "category"
        assert str(frame["timestamp"].dt.tz) == "UTC"


def test_a_small_csv_block_cuts_lines_and_loses_none(tiny_dataset, monkeypatch):
    from ingestbench.ingest.frames import readers

    monkeypatch.setattr(readers, "CSV_BLOCK_BYTES", 1000)  # about 4 lines: most blocks end mid-line
    whole = readers.read_frame(tiny_dataset["csv"], "pandas", "csv")
    frames = list(iter_frames(tiny_dataset["csv"], "pandas", "csv", CHUNK, 2000))
    streamed = to_pandas(frames[0])
    assert streamed["usage_user"].tolist() == whole["usage_user"].head(CHUNK).tolist()
    assert sum(map(len, frames)) == 2000


def _broken_copy(tiny_dataset, tmp_path, fmt: str, how: str):
    data = tiny_dataset[fmt].read_bytes()
    broken = tmp_path / f"broken.{fmt}"
    if how == "truncated":  # most of the file, cut mid-line / mid-page
        broken.write_bytes(data[: int(len(data) * 0.7)])
    else:  # a malformed line in the middle of a CSV
        lines = data.split(b"\n")
        lines[1500] = lines[1500][:40]
        broken.write_bytes(b"\n".join(lines))
    return broken


@pytest.mark.parametrize(
    ("name", "how"),
    [
        ("pandas-dataframe-parquet-http-c333", "truncated"),
        ("polars-threads-parquet-tcp-w2-c333", "truncated"),
        ("pandas-dataframe-csv-tcp-c333", "truncated"),
        ("polars-dataframe-csv-http-c333", "truncated"),
        ("pandas-processes-csv-http-w2-c333", "malformed"),
        ("polars-batches-csv-http-b250-c333", "malformed"),
        ("pandas-vectorized-parquet-tcp-w2-c333", "truncated"),
        ("polars-vectorized-csv-http-w1-c333", "malformed"),
    ],
)
def test_a_broken_file_fails_mid_stream_in_one_sentence_and_writes_no_run_file(
    questdb, tiny_dataset, tmp_path, name, how
):
    variant = parse_variant_name(name)
    broken = _broken_copy(tiny_dataset, tmp_path, variant.format, how)
    manifest = tiny_dataset["dir"] / f"{tiny_dataset['params'].name}.manifest.json"
    config = validate_config({  # the session's server, as an external one: no second start-up
        "datasets": [{"label": "tiny", "scale": 40, "epochs": 50}], "table": "s_broken",
        "variants": [{"method": "dataframe"}], "repeats": 1,
        "questdb": {"mode": "external", "host": questdb.host, "http_port": questdb.http_port,
                    "ilp_port": questdb.ilp_port},
    })  # fmt: skip
    run_out = tmp_path / "run.json"
    with pytest.raises(UserError, match="cannot read .*corrupted or truncated") as err:
        ingest_job(Settings.from_config(config), variant, IngestFiles(broken, manifest, run_out))
    assert "\n" not in str(err.value)
    assert not run_out.exists()
    assert not mp.active_children()  # no worker left behind


def test_a_processes_run_leaves_no_worker_behind(questdb, tiny_dataset):
    job = cpu_job(questdb, "s_workers", parse_variant_name("polars-processes-parquet-http-w2-c333"),
              tiny_dataset["parquet"], 2000, 2, field_type="double")  # fmt: skip
    run_variant(job, {"name": "tiny", "rows": 2000}, repeats=2)
    assert not mp.active_children()
