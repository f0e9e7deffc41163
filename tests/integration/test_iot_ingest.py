"""The iot use case through every method: both tables through one sender (or one import per
table), into a real QuestDB, each table checked row for row by DuckDB, nulls included."""

from __future__ import annotations

import dataclasses
import json

import pyarrow.parquet as pq
import pytest

from ingestbench.catalogue import CATALOGUE
from ingestbench.ingest.methods import Job
from ingestbench.ingest.parts import job_parts
from ingestbench.ingest.runner import run_variant
from ingestbench.tsbs import DatasetParams, generate
from ingestbench.tsbs.columns import IOT_TABLES, table_file
from ingestbench.validate import export_table, questdb_aggregates, validate_run
from ingestbench.validate.aggregates import write_expected
from ingestbench.variants import parse_variant_name
from tests.helpers import sample_variants

#: Every method of the catalogue that loads (psycopg_copy and adbc are tried once and
#: unsupported: they fill no phase), one variant each (the libraries, formats and transports taken
#: in turn from method to method), and the client methods' first read whole.
EVERY_METHOD = [
    name
    for i, m in enumerate(CATALOGUE)
    if m.phases != "none"
    for name in sample_variants(m.name, 1, whole_file=m.family == "client", start=i)
]


@pytest.fixture(scope="module")
def iot_dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("iot")
    params = DatasetParams(scale=20, epochs=80, seed=11, use_case="iot")  # few trucks: late rows
    manifest = generate(params, out, formats=("parquet", "csv", "ilp"), progress=False)
    expected = out / "expected.json"
    write_expected(out / f"{params.name}.parquet", expected, params.name, manifest)
    return {"dir": out, "params": params, "manifest": manifest, "expected": expected}


def test_the_iot_files_hold_nulls_late_rows_and_both_tables(iot_dataset):
    manifest, out = iot_dataset["manifest"], iot_dataset["dir"]
    name = iot_dataset["params"].name
    assert set(manifest["tables"]) == {"readings", "diagnostics"}
    assert manifest["rows"] == sum(t["rows"] for t in manifest["tables"].values())
    for spec in IOT_TABLES:
        table = pq.read_table(table_file(out / f"{name}.parquet", spec))
        assert table.num_rows == manifest["tables"][spec.table]["rows"]
        assert any(table.column(t).null_count for t in spec.tags), "a null tag"
        assert any(table.column(f).null_count for f in spec.fields), "a null field"
        ts = table.column("timestamp").cast("int64").to_numpy()
        assert (ts[1:] < ts[:-1]).any(), "late rows"


@pytest.mark.parametrize("name", EVERY_METHOD)
def test_every_method_lands_both_iot_tables_row_for_row(questdb, iot_dataset, name, tmp_path):
    variant = parse_variant_name(name)
    manifest, params = iot_dataset["manifest"], iot_dataset["params"]
    data = iot_dataset["dir"] / f"{params.name}.{variant.format}"
    parts = job_parts(variant, manifest, data, "cpu", rows_cap=500)
    # Tables of their own per test (the session's server is shared); the ILP text names its
    # tables itself.
    suffix = "" if variant.method == "ilp_file" else "_" + name.replace("-", "_")
    parts = tuple(
        dataclasses.replace(p, spec=dataclasses.replace(p.spec, table=p.spec.table + suffix))
        for p in parts
    )
    job = Job(questdb, variant, data, parts, 2)
    dataset = {"name": params.name, "rows": manifest["rows"], "use_case": "iot"}
    doc = run_variant(job, dataset, repeats=1, warmup_rows=0)
    actual = {"tables": {}}
    for part in parts:
        plain = part.spec.table.removesuffix(suffix)
        actual["tables"][plain] = questdb_aggregates(questdb, part.spec.table, part.spec)
        export_table(questdb, part.spec.table, tmp_path / "export" / plain, piece_rows=10_000)
    doc["dataset"].update(scale=params.scale, epochs=params.epochs, seed=params.seed)
    result = validate_run(
        doc,
        iot_dataset["dir"] / f"{params.name}.parquet",
        json.loads(iot_dataset["expected"].read_text()),
        actual,
        tmp_path / "export",
    )
    assert result["passed"], [c for c in result["checks"] if not c["passed"]][:3]
    names = {c["name"] for c in result["checks"]}
    assert {"readings:row_level", "diagnostics:row_level"} <= names
    if variant.method in ("rows", "iterrows"):
        assert doc["rows"] == 1000  # 500 of each table


def test_a_changed_null_fails_the_iot_validation(questdb, iot_dataset, tmp_path):
    """A null turned into a value (or the reverse) is a difference, not a pass."""
    variant = parse_variant_name("pandas-dataframe-parquet-http")
    manifest, params = iot_dataset["manifest"], iot_dataset["params"]
    data = iot_dataset["dir"] / f"{params.name}.parquet"
    parts = tuple(
        dataclasses.replace(p, spec=dataclasses.replace(p.spec, table=f"{p.spec.table}_nullcheck"))
        for p in job_parts(variant, manifest, data, "cpu", rows_cap=None)
    )
    job = Job(questdb, variant, data, parts, 2)
    doc = run_variant(
        job,
        {"name": params.name, "rows": manifest["rows"], "use_case": "iot"},
        repeats=1,
        warmup_rows=0,
    )
    readings = parts[0].spec.table
    # One null latitude gets a value, as a loader that fills nulls with 0 would do.
    questdb.sql(f"UPDATE {readings} SET latitude = 0 WHERE latitude = null")
    questdb.sql(f"SELECT wait_wal_table('{readings}')")
    actual = {"tables": {}}
    for part in parts:
        plain = part.spec.table.removesuffix("_nullcheck")
        actual["tables"][plain] = questdb_aggregates(questdb, part.spec.table, part.spec)
        export_table(questdb, part.spec.table, tmp_path / "export" / plain, piece_rows=10_000)
    result = validate_run(doc, data, json.loads(iot_dataset["expected"].read_text()), actual,
                          tmp_path / "export")  # fmt: skip
    assert not result["passed"]
    assert "readings:row_level" in result["failed_checks"]
    assert not any(name.startswith("diagnostics:") for name in result["failed_checks"])
