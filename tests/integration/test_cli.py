"""The `ingestbench` command runs the workflow's steps by hand."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers import REPO


def ingestbench(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "ingestbench.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)


def test_variants_lists_the_matrix_of_a_config():
    result = ingestbench("variants", "--config", str(REPO / "config.yaml"))
    assert result.returncode == 0
    assert "cpu-s4000-e250-seed42 (main): 25 variants" in result.stdout
    assert "cpu-s4000-e250-seed42-long (long): 4 variants" in result.stdout
    assert "  none-server_copy-csv-http" in result.stdout


def test_variants_into_a_pipe_that_closes_early_prints_no_traceback():
    cmd = f"{sys.executable} -m ingestbench.cli variants --config config.full.yaml | head -n 1"
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
