"""The iot use case through the real workflow: two tables per job, validated, beside cpu."""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest

from ingestbench.dev.workflow_copy import copy_workflow
from tests.helpers import TESTS, snakemake_command

pytestmark = pytest.mark.server  # the workflow starts its own servers, from the jar
CONFIG = TESTS / "data" / "config.iot-test.yaml"


@pytest.fixture(scope="module")
def iot_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("iot-workflow"))
    cmd = snakemake_command(CONFIG)
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=workdir)
    assert result.returncode == 0, result.stderr[-4000:]
    return workdir


def test_every_iot_variant_is_validated_table_by_table(iot_run):
    summary = pd.read_csv(iot_run / "results" / "summary.csv")
    iot = summary[summary["dataset"].str.startswith("iot-")]
    cpu = summary[summary["dataset"].str.startswith("cpu-")]
    assert len(iot) == 7 and len(cpu) == 2  # beside each other in one summary
    assert summary["validated"].all()
    validations = list((iot_run / "results" / "validation").glob("*/iot-*/*.json"))
    assert len(validations) == 7
    for path in validations:
        result = json.loads(path.read_text())
        assert result["passed"]
        names = {c["name"] for c in result["checks"]}
        assert {"readings:row_level", "diagnostics:row_level"} <= names


def test_the_iot_data_keeps_nulls_in_parquet_and_csv(iot_run):
    import pyarrow.parquet as pq

    data = iot_run / "results" / "data"
    manifest = json.loads(next(data.glob("iot-*.manifest.json")).read_text())
    readings = pq.read_table(next(data.glob("iot-*.parquet")) / "readings.parquet")
    assert readings.num_rows == manifest["tables"]["readings"]["rows"]
    assert readings.column("latitude").null_count > 0  # a numeric column with nulls
    csv = next(data.glob("iot-*.csv")) / "readings.csv"
    assert ",," in csv.read_text()  # an empty field: a null


def test_the_charts_show_iot_beside_cpu(iot_run):
    throughput = iot_run / "results" / "plots" / "throughput.png"
    assert throughput.stat().st_size > 0
    rows = pd.read_csv(iot_run / "results" / "summary.csv")
    assert {d.split("-")[0] for d in rows["dataset"]} == {"iot", "cpu"}
