"""The `ingestbench` command runs the workflow's steps by hand."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ingestbench.config import load_config
from ingestbench.datasets import plan
from ingestbench.paced.settings import paced_paths
from tests.helpers import REPO

_CWD: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def cli_folder(tmp_path_factory):
    """The CLI runs in a folder of its own holding the default config.yaml, as a user's
    checkout would: what it writes relative to it (`ingest`'s server logs under results_dir)
    stays out of this checkout's results/."""
    folder = tmp_path_factory.mktemp("cli")
    shutil.copy(REPO / "config.yaml", folder / "config.yaml")
    _CWD[:] = [folder]
    yield folder


def ingestbench(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "ingestbench.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=_CWD[0])


def test_variants_lists_the_matrix_of_a_config():
    result = ingestbench("variants", "--config", str(REPO / "config.yaml"))
    assert result.returncode == 0
    for name, (label, variants) in plan(load_config(REPO / "config.yaml")).items():
        assert f"{name} ({label}): {len(variants)} variants" in result.stdout  # the one plan
    assert "cpu-s4000-e250-seed42-long (long): 4 variants" in result.stdout
    assert "  none-server_copy-csv-http" in result.stdout
    assert "  pandas-to_sql-parquet-pg-b10000" in result.stdout


def test_variants_lists_what_the_paced_and_delivery_configs_run():
    """Their experiments' jobs in the count line and listed; the dtype matrix, which their run
    does not take, in its heading alone."""
    paced = ingestbench("variants", "--config", str(REPO / "configs" / "paced.yaml"))
    assert paced.returncode == 0, paced.stderr
    lines = paced.stdout.splitlines()
    config = load_config(REPO / "configs" / "paced.yaml")
    jobs = [p.name for p in paced_paths(config)]
    assert lines[0].endswith(f"configs/paced.yaml runs 1 variant, {len(jobs)} paced jobs")
    assert "cpu-s100-e200-seed42 (paced): 1 variant" in lines
    assert all(f"  cpu-s100-e200-seed42/{name}" in lines for name in jobs)
    assert not any("polars Enum" in line for line in lines)
    assert any(line.startswith("experiment dtype_matrix, not in this run: ") for line in lines)
    delivery = ingestbench("variants", "--config", str(REPO / "configs" / "delivery.yaml"))
    assert delivery.returncode == 0, delivery.stderr
    lines = delivery.stdout.splitlines()
    paths = load_config(REPO / "configs" / "delivery.yaml")["delivery"]["paths"]
    assert lines[0].endswith(f"configs/delivery.yaml runs 6 variants, {len(paths)} delivery paths")
    assert all(f"  {path}" in lines for path in paths)


def test_ingest_help_offers_your_own_file():
    result = ingestbench("ingest", "--help")
    assert result.returncode == 0
    said = " ".join(result.stdout.split())
    assert "a generated one, or your own Parquet or CSV file" in said


def test_variants_into_a_pipe_that_closes_early_prints_no_traceback():
    cmd = f"{sys.executable} -m ingestbench.cli variants --config configs/full.yaml | head -n 1"
    result = subprocess.run(cmd, shell=True, capture_output=True, text=True, cwd=REPO)
    assert result.stdout.count("\n") == 1
    assert result.stderr == ""


@pytest.mark.server
def test_ingest_runs_one_variant_on_its_own_server(tiny_dataset, tmp_path):
    out = tmp_path / "run.json"
    result = ingestbench("ingest", "polars-batches-csv-http-b500", "--data",
                         str(tiny_dataset["csv"]), "--config", str(REPO / "config.yaml"),
                         "--repeats", "1", "--out", str(out))  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["rows"] == 2000 and len(doc["repeats"]) == 1
    assert doc["variant"]["batch_rows"] == 500


def test_ingest_refuses_an_unknown_variant_in_one_sentence(tiny_dataset):
    result = ingestbench("ingest", "pandas-teleport-csv-http", "--data", str(tiny_dataset["csv"]))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "ERROR: 'pandas-teleport-csv-http' is not a variant name; list valid ones with "
        "`ingestbench variants`."
    ]


@pytest.mark.server
@pytest.mark.parametrize("variant", ["polars-dataframe-parquet-http", "none-ilp_file-ilp-tcp-w1"])
def test_ingest_takes_your_own_file_by_hand(tmp_path, variant):
    from ingestbench.own.example import write_example

    data = tmp_path / "My Trades.parquet"
    write_example(data, 3_000)
    out = tmp_path / "run.json"
    config = str(REPO / "config.yaml")
    result = ingestbench("ingest", variant, "--data", str(data), "--config", config,
                         "--repeats", "1", "--out", str(out))  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["rows"] == 3_000 and len(doc["repeats"]) == 1
    assert doc["dataset"]["label"] == "my_trades" and doc["dataset"]["columns"] == 11
    assert (tmp_path / "run.manifest.json").is_file()


def test_ingest_by_hand_refuses_a_file_it_cannot_describe(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = tmp_path / "two.parquet"
    ts = pa.array([1, 2], pa.timestamp("us"))
    pq.write_table(pa.table({"a": ts, "b": ts, "v": [1.0, 2.0]}), data)
    result = ingestbench("ingest", "pandas-dataframe-parquet-http", "--data", str(data))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"ERROR: dataset 'two': {data} has 2 timestamp columns (a, b); name the designated one "
        "with --timestamp."
    ]


def test_variants_lists_an_own_datasets_variants_of_its_format():
    result = ingestbench("variants", "--config", str(REPO / "configs" / "own.yaml"))
    assert result.returncode == 0, result.stderr
    assert "own-trades (trades): 7 variants" in result.stdout
    assert "own-trades-csv (trades_csv): 6 variants" in result.stdout
    assert "  none-server_csv-csv-http" in result.stdout
