"""configs/own.yaml through the real workflow: own data (a generated trades table, as Parquet and
as a CSV with its own delimiter and null marker), every variant validated row for row or
unsupported with its reason; and a changed file reruns its jobs."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from ingestbench.dev.workflow_copy import copy_workflow
from ingestbench.own.example import write_example
from tests.helpers import QUESTDB_VERSION, TESTS

pytestmark = pytest.mark.server  # the workflow starts its own servers, from the jar
CONFIG = TESTS.parent / "configs" / "own.yaml"


def _snakemake(workdir, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--configfile", str(CONFIG), "--cores", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=1200, cwd=workdir)


@pytest.fixture(scope="module")
def own_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("own-workflow"))
    result = _snakemake(workdir)
    assert result.returncode == 0, result.stderr[-4000:]
    return workdir


def test_every_variant_is_validated_or_unsupported_with_a_reason(own_run):
    validations = list((own_run / "results" / "own" / "validation").glob("*/own-*/*.json"))
    assert {p.parent.name for p in validations} == {"own-trades", "own-trades-csv"}
    outcomes = {}
    for path in validations:
        result = json.loads(path.read_text())
        outcomes[(path.parent.name, path.stem)] = result.get("unsupported") or result["passed"]
        assert result["passed"] or result.get("unsupported"), path
    assert outcomes[("own-trades", "none-server_parquet-parquet-http")] is True
    assert outcomes[("own-trades", "polars-dataframe-parquet-http")] is True
    assert outcomes[("own-trades-csv", "pandas-dataframe-csv-http")] is True
    for dataset in ("own-trades", "own-trades-csv"):  # rows_cap: the file's first rows
        fmt = "csv" if dataset.endswith("csv") else "parquet"
        capped = json.loads((own_run / "results" / "own" / "validation" / QUESTDB_VERSION / dataset
                             / f"polars-rows-{fmt}-http.json").read_text())  # fmt: skip
        assert capped["passed"] and capped["source_rows"] == "first 5000 in file order"
    assert "'NA'" in outcomes[("own-trades-csv", "none-server_csv-csv-http")]
    # strings, booleans, nullable integers and dates: vectorized loads the table too
    assert outcomes[("own-trades", "pandas-vectorized-parquet-tcp-w2")] is True
    assert outcomes[("own-trades-csv", "pandas-vectorized-csv-tcp-w2")] is True
    assert not any(p.stem.endswith("-csv-http") for p in validations if "trades/" in str(p))


def test_the_summary_names_the_data_and_lists_the_unsupported(own_run):
    summary = pd.read_csv(own_run / "results" / "own" / "summary.csv")
    assert set(summary["dataset"]) == {"own-trades", "own-trades-csv"}
    assert set(summary["dataset_label"]) == {"trades", "trades_csv"}
    assert (summary["dataset_columns"] == 11).all() and (summary["dataset_bytes"] > 0).all()
    measured = summary[summary["status"] == "measured"]
    assert measured["validated"].astype(bool).all() and measured["reason"].isna().all()
    unsupported = summary[summary["status"] == "unsupported"]
    assert set(unsupported["variant"]) >= {"none-server_csv-csv-http"}
    assert unsupported["reason"].str.len().gt(0).all()
    assert unsupported["rows_per_s_median"].isna().all()
    assert len(summary) == len(list((own_run / "results" / "own" / "runs").glob("*/*/*.json")))
    text = (own_run / "results" / "own" / "summary.md").read_text()
    assert "## own-trades: 20,000 rows, 11 columns" in text and "`trades`" in text
    assert "**Unsupported on this data**" in text
    assert "ingest the first 5,000 rows only (`rows_cap`)" in text
    manifest = json.loads((own_run / "results/data/own-trades.manifest.json").read_text())
    (run_file,) = (own_run / "results/own/runs").glob(
        "*/own-trades/polars-dataframe-parquet-http.json"
    )
    run = json.loads(run_file.read_text())
    assert run["dataset"]["sha256"] == manifest["sha256"]  # every run names its data


def test_a_changed_file_reruns_its_jobs_and_only_then(own_run):
    idle = _snakemake(own_run, "-n")
    assert idle.returncode == 0 and "Nothing to be done" in idle.stdout + idle.stderr
    data = own_run / "results" / "examples" / "trades-20000.parquet"
    write_example(data, 20_000, seed=8)  # the user's file rewritten with other rows
    dry = _snakemake(own_run, "-n")
    out = dry.stdout + dry.stderr
    assert dry.returncode == 0, out[-3000:]
    stats = dict(line.split() for line in out.splitlines() if len(line.split()) == 2
                 and line.split()[1].isdigit())  # fmt: skip
    assert stats.get("describe_own_trades") == "1"
    assert int(stats["ingest"]) == 7  # every job of the Parquet dataset again
    assert "describe_own_trades_csv" not in out  # the CSV dataset is untouched


def test_the_archive_and_the_site_name_the_data(own_run):
    cli = [sys.executable, "-m", "ingestbench.cli"]
    # An archive of its own: the clone's archive/ holds the committed reference runs.
    archived = subprocess.run([*cli, "archive", "results/own", "--archive", "own-archive"],
                              capture_output=True, text=True, cwd=own_run)  # fmt: skip
    assert archived.returncode == 0, archived.stderr[-2000:]
    doc = json.loads(next((own_run / "own-archive").glob("*.json")).read_text())
    own = {d["name"]: d for d in doc["datasets"]}["own-trades"]
    assert own["label"] == "trades" and own["columns"] == 11 and own["bytes"] > 0
    gone = [v for v in doc["variants"] if v.get("status") == "unsupported"]
    assert {v["variant"] for v in gone} >= {"none-server_csv-csv-http"}
    assert all(v["reason"] for v in gone)
    site = subprocess.run([*cli, "site", "--archive", "own-archive", "--results", "results/own",
                           "--out", "site/index.html"],
                          capture_output=True, text=True, cwd=own_run)  # fmt: skip
    assert site.returncode == 0, site.stderr[-2000:]
    assert "own-trades" in (own_run / "site" / "index.html").read_text()
