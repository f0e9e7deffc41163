"""The TSBS cpu-only generator: determinism, faithfulness to TSBS, file formats, errors, CLI."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ingestbench
from ingestbench.errors import UserError
from ingestbench.tsbs import (
    FIELDS,
    REGIONS,
    TAGS,
    DatasetParams,
    GeneratorError,
    generate,
)

COLUMNS = [*TAGS, *FIELDS, "timestamp"]
START_NS = 1_451_606_400 * 10**9  # 2016-01-01T00:00:00Z
INTERVAL_NS = 10 * 10**9


def make(tmp_path: Path, sub: str = "out", formats=("parquet", "csv"), **kw) -> dict:
    params = DatasetParams(**kw)
    out = tmp_path / sub
    manifest = generate(params, out, formats=formats, progress=False)
    return {
        "params": params,
        "manifest": manifest,
        "parquet": out / f"{params.name}.parquet",
        "csv": out / f"{params.name}.csv",
        "dir": out,
    }


def walk_values(path: Path, params: DatasetParams) -> np.ndarray:
    """Fields as (epochs, scale, 10), valid for in-order datasets."""
    table = pq.read_table(path, columns=list(FIELDS))
    values = np.column_stack([table[f].to_numpy() for f in FIELDS])
    return values.reshape(params.epochs, params.scale, len(FIELDS))


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> dict:
    """Scale 4000 (TSBS's default), a few epochs: enough hosts to see every tag value."""
    return make(tmp_path_factory.mktemp("big"), formats=("parquet",), scale=4000, epochs=3)


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> dict:
    return make(tmp_path_factory.mktemp("small"), scale=50, epochs=40, seed=3)


# ----------------------------------------------------------------------------- determinism


def test_same_seed_gives_byte_identical_files_and_another_seed_differs(tmp_path):
    a = make(tmp_path, "a", scale=30, epochs=20, seed=1)
    b = make(tmp_path, "b", scale=30, epochs=20, seed=1)
    c = make(tmp_path, "c", scale=30, epochs=20, seed=2)
    for fmt in ("parquet", "csv"):
        assert a[fmt].read_bytes() == b[fmt].read_bytes()
        assert a[fmt].read_bytes() != c[fmt].read_bytes()
    assert a["manifest"] == b["manifest"]


def test_row_group_size_changes_layout_not_rows(tmp_path):
    params = DatasetParams(scale=7, epochs=50, seed=5)
    generate(params, tmp_path / "one", progress=False)
    generate(params, tmp_path / "many", progress=False, row_group_rows=20)  # 2 epochs a row group
    name = params.name
    csv_one = (tmp_path / "one" / f"{name}.csv").read_bytes()
    assert csv_one == (tmp_path / "many" / f"{name}.csv").read_bytes()
    many = pq.ParquetFile(tmp_path / "many" / f"{name}.parquet")
    assert many.metadata.num_row_groups == 25
    assert many.read().equals(pq.read_table(tmp_path / "one" / f"{name}.parquet"))


# ----------------------------------------------------------------------------- formats


def test_parquet_and_csv_hold_the_same_rows_in_the_same_order(small):
    con = duckdb.connect()
    parquet = con.sql(
        "SELECT * EXCLUDE (timestamp), epoch_ns(timestamp) AS ts "
        f"FROM read_parquet('{small['parquet']}')"
    ).fetchall()
    types = {c: "VARCHAR" for c in TAGS} | {f: "DOUBLE" for f in FIELDS}
    types["timestamp"] = "TIMESTAMPTZ"
    csv = con.sql(
        f"SELECT * EXCLUDE (timestamp), epoch_ns(timestamp) AS ts "
        f"FROM read_csv('{small['csv']}', header = true, columns = {types})"
    ).fetchall()
    assert len(parquet) == small["params"].rows
    assert parquet == csv  # exact doubles: the CSV holds the shortest round-trip text


def test_column_names_order_and_types(small):
    schema = pq.read_schema(small["parquet"])
    assert schema.names == COLUMNS
    for tag in TAGS:
        assert schema.field(tag).type == pa.dictionary(pa.int32(), pa.string())
    for field in FIELDS:
        assert schema.field(field).type == pa.float64()
    assert schema.field("timestamp").type == pa.timestamp("ns", tz="UTC")
    with open(small["csv"]) as fh:
        assert fh.readline().rstrip("\n").split(",") == COLUMNS


def test_readers_get_categorical_tags(small):
    import pandas as pd
    import polars as pl

    df = pd.read_parquet(small["parquet"])
    assert list(df.columns) == COLUMNS
    assert all(isinstance(df[t].dtype, pd.CategoricalDtype) for t in TAGS)
    assert all(df[f].dtype == np.float64 for f in FIELDS)
    assert str(df["timestamp"].dtype) == "datetime64[ns, UTC]"
    pf = pl.read_parquet(small["parquet"])
    assert pf.columns == COLUMNS
    assert all(isinstance(pf.schema[t], pl.Categorical) for t in TAGS)
    assert all(pf.schema[f] == pl.Float64 for f in FIELDS)
    assert pf.schema["timestamp"] == pl.Datetime("ns", "UTC")


def test_csv_is_readable_by_pandas_polars_and_duckdb(small):
    import pandas as pd
    import polars as pl

    table = pq.read_table(small["parquet"], columns=["timestamp"])
    expected = table["timestamp"].cast(pa.int64()).to_numpy()
    first = small["csv"].read_text().splitlines()[1]
    assert first.endswith(",2016-01-01T00:00:00.000000Z")
    df = pd.read_csv(small["csv"])
    ts = pd.to_datetime(df["timestamp"], format="ISO8601", utc=True)
    as_ns = (ts - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(1, "ns")
    assert (as_ns.to_numpy() == expected).all()
    assert all(df[f].dtype == np.float64 for f in FIELDS)
    pf = pl.read_csv(small["csv"], try_parse_dates=True)
    assert pf.height == small["params"].rows
    assert isinstance(pf.schema["timestamp"], pl.Datetime)
    rel = duckdb.sql(f"SELECT * FROM read_csv('{small['csv']}')")
    assert dict(zip(rel.columns, map(str, rel.types), strict=True))["timestamp"].startswith(
        "TIMESTAMP"
    )


def test_manifest_describes_the_files(small):
    m = small["manifest"]
    p = small["params"]
    assert m["schema_version"] == 1
    assert m["name"] == p.name == "cpu-s50-e40-seed3"
    assert (m["rows"], m["hosts"], m["epochs"]) == (2000, 50, 40)
    assert m["params"]["scale"] == 50 and m["params"]["seed"] == 3
    assert m["first_timestamp"] == "2016-01-01T00:00:00.000000Z"
    assert m["last_timestamp"] == "2016-01-01T00:06:30.000000Z"
    assert [c["name"] for c in m["columns"]] == COLUMNS
    assert m["generator"]["version"]
    for fmt in ("parquet", "csv"):
        data = small[fmt].read_bytes()
        assert m["files"][fmt]["bytes"] == len(data)
        assert m["files"][fmt]["sha256"] == hashlib.sha256(data).hexdigest()
    on_disk = json.loads((small["dir"] / f"{p.name}.manifest.json").read_text())
    assert on_disk == m
    assert not list(small["dir"].glob("*.tmp-*"))


# ----------------------------------------------------------------------------- faithfulness


def test_tag_cardinalities_at_scale_4000(big):
    table = pq.read_table(big["parquet"])
    distinct = {t: len(set(table[t].to_pylist())) for t in TAGS}
    assert distinct == {
        "hostname": 4000,
        "region": 9,
        "datacenter": 23,
        "rack": 100,
        "os": 3,
        "arch": 2,
        "team": 4,
        "service": 20,
        "service_version": 2,
        "service_environment": 3,
    }
    assert set(table["rack"].to_pylist()) == {str(i) for i in range(100)}
    assert set(table["service"].to_pylist()) == {str(i) for i in range(20)}
    assert set(table["os"].to_pylist()) == {"Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10"}


def test_hostnames_in_order_within_each_epoch(big):
    hosts = pq.read_table(big["parquet"], columns=["hostname"])["hostname"].to_pylist()
    assert hosts == [f"host_{i}" for i in range(4000)] * 3


def test_every_host_keeps_its_tags(big):
    other = ", ".join(f"count(DISTINCT {t}) AS {t}" for t in TAGS[1:])
    rows = duckdb.sql(
        f"SELECT hostname, count(*) AS n, {other} FROM read_parquet('{big['parquet']}') "
        "GROUP BY hostname"
    ).fetchall()
    assert len(rows) == 4000
    assert all(r[1] == 3 and set(r[2:]) == {1} for r in rows)


def test_each_datacenter_is_inside_its_region(big):
    pairs = duckdb.sql(
        f"SELECT DISTINCT region, datacenter FROM read_parquet('{big['parquet']}')"
    ).fetchall()
    assert len(pairs) == 23
    for region, datacenter in pairs:
        assert datacenter.startswith(region)
        assert datacenter in REGIONS[region]


def test_values_stay_within_0_and_100(small, big):
    for data in (small, big):
        values = walk_values(data["parquet"], data["params"])
        assert values.min() >= 0.0 and values.max() <= 100.0
    start = walk_values(big["parquet"], big["params"])[0]
    assert 45 < start.mean() < 55 and start.max() < 100.0  # epoch 0: uniform on [0, 100)


def test_walk_steps_look_like_standard_normal_away_from_the_bounds(tmp_path):
    data = make(tmp_path, formats=("parquet",), scale=200, epochs=200, seed=11)
    values = walk_values(data["parquet"], data["params"])
    steps = np.diff(values, axis=0)
    before, after = values[:-1], values[1:]
    inside = (before > 5) & (before < 95) & (after > 0) & (after < 100)
    free = steps[inside]
    assert free.size > 300_000
    assert abs(np.abs(free).mean() - np.sqrt(2 / np.pi)) < 0.01  # E|N(0,1)| = 0.798
    assert abs(free.mean()) < 0.01 and abs(free.std() - 1.0) < 0.01
    # each host and field walks on its own: neighbouring series are uncorrelated
    assert abs(np.corrcoef(steps[:, 0, 0], steps[:, 1, 0])[0, 1]) < 0.3
    assert abs(np.corrcoef(steps[:, :, 0].ravel(), steps[:, :, 1].ravel())[0, 1]) < 0.02


def test_epochs_share_a_timestamp_10s_apart_from_2016(small):
    p = small["params"]
    ts = pq.read_table(small["parquet"], columns=["timestamp"])["timestamp"]
    ns = ts.cast(pa.int64()).to_numpy().reshape(p.epochs, p.scale)
    assert (ns == ns[:, :1]).all()
    assert ns[0, 0] == START_NS
    assert (np.diff(ns[:, 0]) == INTERVAL_NS).all()


def test_rows_equal_scale_times_epochs(tmp_path):
    data = make(tmp_path, scale=13, epochs=17)
    assert data["params"].rows == 221
    assert pq.read_metadata(data["parquet"]).num_rows == 221
    assert len(data["csv"].read_text().splitlines()) == 222  # + header


def test_long_fields_are_the_truncated_doubles(tmp_path, small):
    p = small["params"]
    data = make(tmp_path, scale=p.scale, epochs=p.epochs, seed=p.seed, field_type="long")
    assert data["params"].name == "cpu-s50-e40-seed3-long"
    schema = pq.read_schema(data["parquet"])
    assert all(schema.field(f).type == pa.int64() for f in FIELDS)
    longs = walk_values(data["parquet"], data["params"])
    doubles = walk_values(small["parquet"], p)
    assert (longs == np.trunc(doubles)).all()
    body = data["csv"].read_text().splitlines()[1]
    assert all("." not in v for v in body.split(",")[10:20])


# ----------------------------------------------------------------------------- out of order


def test_out_of_order_keeps_rows_and_shuffles_within_the_lag(tmp_path, small):
    p = small["params"]
    data = make(tmp_path, scale=p.scale, epochs=p.epochs, seed=p.seed, out_of_order_lag_s=30.0)
    assert data["params"].name == "cpu-s50-e40-seed3-ooo30s"
    con = duckdb.connect()
    ooo, ordered = f"read_parquet('{data['parquet']}')", f"read_parquet('{small['parquet']}')"
    for a, b in ((ooo, ordered), (ordered, ooo)):
        assert con.sql(f"SELECT count(*) FROM (FROM {a} EXCEPT ALL FROM {b})").fetchall() == [(0,)]
    assert con.sql(f"SELECT count(*) FROM {ooo}").fetchall() == [(p.rows,)]

    ts = pq.read_table(data["parquet"], columns=["timestamp"])["timestamp"]
    ns = ts.cast(pa.int64()).to_numpy()
    behind = np.maximum.accumulate(ns) - ns
    assert behind.max() > 0  # really out of order
    assert behind.max() < 30 * 10**9  # never behind a row 30 s or more later
    csv = duckdb.sql(f"SELECT epoch_ns(timestamp::TIMESTAMPTZ) FROM read_csv('{data['csv']}')")
    assert [r[0] for r in csv.fetchall()] == ns.tolist()


def test_out_of_order_is_independent_of_row_group_size(tmp_path):
    params = DatasetParams(scale=9, epochs=60, seed=4, out_of_order_lag_s=25.0)
    generate(params, tmp_path / "one", progress=False)
    generate(params, tmp_path / "many", progress=False, row_group_rows=27)
    name = params.name
    for fmt in ("csv",):
        one = (tmp_path / "one" / f"{name}.{fmt}").read_bytes()
        assert one == (tmp_path / "many" / f"{name}.{fmt}").read_bytes()
    table = pq.read_table(tmp_path / "many" / f"{name}.parquet")
    assert table.equals(pq.read_table(tmp_path / "one" / f"{name}.parquet"))


# ----------------------------------------------------------------------------- parameters


def test_from_config_turns_rows_into_whole_epochs_and_names_the_dataset():
    entry = {"label": "main", "scale": 4000, "rows": 1_000_001, "seed": 42}
    p = DatasetParams.from_config(entry)
    assert (p.epochs, p.rows, p.name) == (251, 1_004_000, "cpu-s4000-e251-seed42")
    p = DatasetParams.from_config(
        {
            "label": "ooo",
            "scale": 4000,
            "epochs": 250,
            "seed": 42,
            "field_type": "long",
            "interval": "5s",
            "start": "2020-02-03T04:05:06Z",
            "out_of_order": {"lag": "30s"},
        }
    )
    assert p.name == "cpu-s4000-e250-seed42-long-ooo30s-i5s-t20200203T040506Z"
    assert (p.interval_s, p.out_of_order_lag_s) == (5.0, 30.0)
    default = {"scale": 4000, "epochs": 250, "out_of_order": None, "interval": "10s"}
    assert DatasetParams.from_config(default) == DatasetParams(4000, 250)
    assert DatasetParams(4000, 250, interval_s=0.5).name == "cpu-s4000-e250-seed42-i500ms"


def test_dedup_is_a_table_option_named_in_the_dataset_but_not_in_its_rows():
    plain = DatasetParams.from_config({"scale": 40, "epochs": 5})
    dedup = DatasetParams.from_config({"scale": 40, "epochs": 5, "dedup": True})
    assert dedup.name == plain.name + "-dedup"
    assert dedup.to_dict() == {**plain.to_dict(), "dedup": True}
    assert "dedup" not in plain.to_dict()  # manifests written before the option stay valid
    with pytest.raises(GeneratorError, match="dedup must be true or false"):
        DatasetParams(40, 5, dedup="yes")


def test_the_dedup_table_has_upsert_keys_on_the_timestamp_and_every_tag():
    from ingestbench.server.table import create_table_sql
    from ingestbench.tsbs.columns import TAGS

    assert "DEDUP" not in create_table_sql("cpu")
    sql = create_table_sql("cpu", "double", dedup=True)
    assert sql.endswith(f"WAL DEDUP UPSERT KEYS(timestamp, {', '.join(TAGS)})")


def one_sentence(message: str) -> bool:
    return message.endswith(".") and message.count(". ") == 0 and ": " in message


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"scale": 0, "epochs": 5}, "scale must be a positive integer (got 0)"),
        ({"scale": 5, "epochs": -1}, "epochs must be a positive integer (got -1)"),
        ({"scale": 5, "epochs": 5, "field_type": "float"}, "unknown field type 'float'"),
        ({"scale": 5, "epochs": 5, "seed": -3}, "seed must be a non-negative integer"),
        ({"scale": 5, "epochs": 5, "interval_s": 0}, "interval must be a positive"),
        ({"scale": 5, "epochs": 5, "out_of_order_lag_s": -1.0}, "lag must be a positive"),
        ({"scale": 5, "epochs": 5, "start": "yesterday"}, "start must be an ISO-8601 time"),
    ],
)
def test_bad_parameters_give_one_sentence(kwargs, fragment):
    with pytest.raises(GeneratorError) as info:
        DatasetParams(**kwargs)
    assert fragment in str(info.value)
    assert one_sentence(str(info.value))
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({"out_of_order": {"lag": "soon"}}, "at 'out_of_order.lag': 'soon' does not match"),
        ({"rows": 100}, "sets both epochs and rows: set one of datasets[].epochs and"),
        ({"colour": "red"}, "'colour' is not a key here"),
        ({"field_type": "float"}, "'float' is not one of double, long; set datasets[].field_type"),
    ],
)
def test_bad_config_entry_gives_one_sentence_from_the_schema(entry, fragment):
    with pytest.raises(GeneratorError) as info:
        DatasetParams.from_config({"scale": 4, "epochs": 4, **entry})
    assert fragment in str(info.value)
    assert one_sentence(str(info.value))


def test_a_dataset_takes_the_schemas_defaults_in_code_and_on_the_command_line():
    from ingestbench.schema import load_schema

    items = load_schema()["$defs"]["tsbs_dataset"]["properties"]
    params = DatasetParams(scale=3, epochs=4)
    assert params == DatasetParams.from_config({"scale": 3, "epochs": 4})
    assert (params.seed, params.start, params.field_type) == tuple(
        items[k]["default"] for k in ("seed", "start", "field_type")
    )
    assert f"{params.interval_s:g}s" == items["interval"]["default"]
    help_text = run_cli("generate", "--help").stdout
    for key in ("seed", "start", "interval"):
        assert f"(default: {items[key]['default']})" in help_text


def test_a_bad_row_group_size_names_the_argument_that_sets_it(tmp_path):
    with pytest.raises(GeneratorError, match=r"set generate\(\)'s row_group_rows to 1 or more"):
        generate(DatasetParams(scale=2, epochs=2), tmp_path, row_group_rows=0)


def test_unwritable_output_path_leaves_no_file(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(GeneratorError) as info:
        generate(DatasetParams(scale=5, epochs=5), blocker / "data", progress=False)
    assert "choose a writable output directory" in str(info.value)
    assert one_sentence(str(info.value))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_output_directory_leaves_no_file(tmp_path):
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o555)
    try:
        with pytest.raises(GeneratorError, match="cannot write"):
            generate(DatasetParams(scale=5, epochs=5), out, progress=False)
        assert list(out.iterdir()) == []
    finally:
        out.chmod(0o755)


def test_failure_mid_write_keeps_the_old_files_and_removes_temporaries(tmp_path, monkeypatch):
    from ingestbench.tsbs import writers

    params = DatasetParams(scale=20, epochs=10)
    generate(params, tmp_path, progress=False)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    calls = []

    def failing_write(self, chunk):
        calls.append(chunk.n)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(writers.CsvWriter, "write", failing_write)
    with pytest.raises(UserError) as info:  # the atomic writer names the full disk
        generate(params, tmp_path, progress=False, row_group_rows=40)
    assert "No space left on device" in str(info.value)
    assert one_sentence(str(info.value))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


# ----------------------------------------------------------------------------- CLI


def run_cli(*args: str) -> subprocess.CompletedProcess:
    src = str(Path(ingestbench.__file__).resolve().parents[1])
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    )
    return subprocess.run(
        [sys.executable, "-m", "ingestbench.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_cli_generate_end_to_end(tmp_path):
    out = tmp_path / "data"
    done = run_cli(
        "generate", "--scale", "12", "--rows", "100", "--seed", "7", "--field-type", "long",
        "--out-of-order-lag", "30s", "--format", "parquet", "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    manifest_path = Path(done.stdout.strip())
    assert manifest_path == out / "cpu-s12-e9-seed7-long-ooo30s.manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["rows"] == 108 and list(manifest["files"]) == ["parquet"]
    assert pq.read_metadata(out / "cpu-s12-e9-seed7-long-ooo30s.parquet").num_rows == 108
    assert not (out / "cpu-s12-e9-seed7-long-ooo30s.csv").exists()

    both = run_cli("generate", "--scale", "3", "--epochs", "4", "--out", str(out))
    assert both.returncode == 0, both.stderr
    assert {p.name for p in out.glob("cpu-s3-e4-seed42.*")} == {
        "cpu-s3-e4-seed42.parquet",
        "cpu-s3-e4-seed42.csv",
        "cpu-s3-e4-seed42.manifest.json",
    }


def test_cli_bad_input_exits_2_with_one_sentence(tmp_path):
    done = run_cli("generate", "--scale", "0", "--epochs", "5", "--out", str(tmp_path / "x"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "ERROR: invalid dataset at 'scale': 0 is less than the minimum of 1; "
        "set datasets[].scale (or --scale) as docs/configuration.md describes."
    ]
    assert not (tmp_path / "x").exists()
