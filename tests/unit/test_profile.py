"""Each dataset's profile, measured where the data is read anyway (an own file's describe pass, a
TSBS dataset's expected pass) and held against what DuckDB and pyarrow say of the same files;
the recommendation drawn from a run; and `sorted: true`, a copy written by DuckDB in bounded
memory as a dataset of its own, the user's file untouched."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from ingestbench.columnar.duckdb_sql import sql_str
from ingestbench.datasets import dataset_entries, plan
from ingestbench.own.dataset import OwnDataset
from ingestbench.own.example import write_example
from ingestbench.own.flights import write_flights
from ingestbench.own.manifest import own_manifest, spec_of
from ingestbench.own.sort import as_sorted_copy, write_sorted
from ingestbench.results.profile_text import profile_lines, profile_text, recommendation
from ingestbench.storage.disk import sorted_copy_bytes, workflow_needs
from ingestbench.tsbs.generator import generate
from ingestbench.tsbs.manifest import sha256
from ingestbench.tsbs.params import DatasetParams
from ingestbench.validate.aggregates import write_expected

ROWS = 20_000
CSV_SYMBOLS = {"symbols": ["carrier", "origin", "dest"]}


@pytest.fixture(scope="module")
def flights(tmp_path_factory):
    out = tmp_path_factory.mktemp("flights")
    write_flights(out / "flights.parquet", ROWS)
    write_flights(out / "flights.csv", ROWS)
    return out


def manifest_of(path, tmp_path, **entry):
    dataset = OwnDataset.from_config({"label": "f", "path": str(path), **entry})
    return own_manifest(dataset, tmp_path / "hashes.json", spill_root=tmp_path)


def by_hand(path):
    """What DuckDB says of the file, row by row in file order, without the workflow's query."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    df = con.execute(f"SELECT * FROM read_parquet({sql_str(path)})").df()
    con.close()
    return df


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_an_own_profile_counts_what_makes_rows_dear(flights, tmp_path, fmt):
    entry = {"partition_by": "DAY", **(CSV_SYMBOLS if fmt == "csv" else {})}
    m = manifest_of(flights / f"flights.{fmt}", tmp_path, **entry)
    profile, [table] = m["profile"], m["profile"]["tables"]
    df = by_hand(flights / "flights.parquet")
    ts = df["time_hour"]
    late = int((ts < ts.cummax().shift(1)).sum())  # behind the running maximum, in file order
    assert profile["rows"] == table["rows"] == ROWS
    assert table["late_rows"] == late and table["late_share"] > 0.8
    assert table["max_lag_s"] == (ts.cummax() - ts).max().total_seconds()
    assert table["partitions"] == ts.dt.floor("D").nunique()  # the unit the table takes
    strings = ["carrier", "origin", "dest", "tailnum", "booking"]
    assert table["distinct"] == {c: df[c].nunique() for c in strings}
    assert table["types"]["SYMBOL"] == 3 and table["types"]["VARCHAR"] == 2
    assert sum(table["types"].values()) == len(df.columns)
    sizes = profile["bytes_per_row"]
    own = (flights / f"flights.{fmt}").stat().st_size / ROWS
    assert sizes[fmt] == {"bytes_per_row": pytest.approx(own, abs=0.1), "estimate": False}
    others = [f for f in ("csv", "ilp") if f != fmt]
    assert all(sizes[f]["estimate"] and sizes[f]["bytes_per_row"] > 0 for f in others)
    text = "\n".join(profile_lines(profile, "sort by the timestamp first: 2.0× faster here"))
    assert "rows arrive behind the running maximum timestamp" in text
    assert "(estimate)" in text and "`booking`" in text and "DAY partition(s)" in text


def test_a_file_in_time_order_has_no_late_row(tmp_path):
    write_example(tmp_path / "trades.parquet", 5_000)
    [table] = manifest_of(tmp_path / "trades.parquet", tmp_path)["profile"]["tables"]
    assert table["late_rows"] == 0 and table["max_lag_s"] == 0
    assert "in time order" in profile_text(manifest_of(tmp_path / "trades.parquet", tmp_path)
                                           ["profile"])  # fmt: skip


def test_a_tsbs_profile_comes_from_the_expected_pass(tmp_path):
    for lag, late in ((None, False), ("30s", True)):
        params = DatasetParams.from_config(
            {
                "scale": 20,
                "epochs": 50,
                "seed": 3,
                "out_of_order": None if lag is None else {"lag": lag},
            }  # fmt: skip
        )
        manifest = generate(params, tmp_path, formats=("parquet",), progress=False)
        doc = write_expected(tmp_path / f"{params.name}.parquet", tmp_path / "e.json",
                             params.name, manifest)  # fmt: skip
        [table] = doc["profile"]["tables"]
        assert table["types"] == {"SYMBOL": 10, "TIMESTAMP": 1, "DOUBLE": 10}
        assert table["distinct"]["hostname"] == 20 and table["partition_by"] == "DAY"
        assert (table["late_rows"] > 0) is late
        sizes = doc["profile"]["bytes_per_row"]
        assert not sizes["parquet"]["estimate"] and sizes["csv"]["estimate"]


def summary(rates):
    return pd.DataFrame([
        {"dataset": d, "variant": v, "method": v.split("-")[1], "rows_per_s_median": r,
         "validated": True}
        for d, v, r in rates
    ])  # fmt: skip


def test_the_recommendation_is_drawn_from_the_run():
    late = {"tables": [{"late_share": 0.9}]}
    copy = {"tables": [{"late_share": 0.0}],
            "derived": {"from": "own-f", "by": "ts", "sort_s": 1.5}}  # fmt: skip
    df = summary([
        ("own-f", "pandas-dataframe-parquet-http", 100), ("own-f", "none-ilp_file-ilp-tcp-w2", 900),
        ("own-f-sorted", "pandas-dataframe-parquet-http", 240),
    ])  # fmt: skip
    profiles = {"own-f": late, "own-f-sorted": copy}
    line = recommendation("own-f", df, profiles)
    assert line.startswith("sort by the timestamp first: 2.4× faster here")
    assert "1.5 s" in line and recommendation("own-f-sorted", df, profiles) == line
    df = summary([
        ("own-f", "pandas-dataframe-parquet-http", 100),
        ("own-f", "none-server_parquet-parquet-http", 150),
        ("own-f-sorted", "pandas-dataframe-parquet-http", 240),
    ])  # fmt: skip
    assert recommendation("own-f", df, profiles).startswith(
        "sort by the timestamp first: 1.6× faster here (`pandas-dataframe-parquet-http` sorted "
        "against `none-server_parquet-parquet-http` unsorted; `pandas-dataframe-parquet-http` "
        "itself 2.4×; the sort took 1.5 s, once)"
    )
    df = summary([("own-f", "pandas-dataframe-parquet-http", 100),
                  ("own-f", "none-server_parquet-parquet-http", 160)])  # fmt: skip
    assert recommendation("own-f", df, {"own-f": late}) == (
        "use `server_parquet`: 1.6× the best client path (`pandas-dataframe-parquet-http`)"
    )
    df = summary([("own-f", "pandas-dataframe-parquet-http", 100)])
    assert "`sorted: true` measures it" in recommendation("own-f", df, {"own-f": late})


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_sorted_copy_holds_the_same_rows_in_time_order(flights, tmp_path, fmt):
    source = flights / f"flights.{fmt}"
    before = sha256(source)
    entry = {"label": "f", "path": str(source), "sorted": True,
             **(CSV_SYMBOLS if fmt == "csv" else {})}  # fmt: skip
    names = dataset_entries({"datasets": [entry], "data_dir": str(tmp_path)})
    copy = names["own-f-sorted"]
    assert copy["derived"]["from"] == "own-f" and copy["path"].endswith(f"own-f-sorted.{fmt}")
    options = {k: v for k, v in entry.items() if k not in ("label", "path")}
    m = manifest_of(source, tmp_path, **options)
    record = write_sorted(spec_of(m), tmp_path / f"own-f-sorted.{fmt}", tmp_path / "sort.json",
                          memory_limit="64MB")  # fmt: skip
    assert sha256(source) == before  # the user's file is only read
    assert record["rows"] == ROWS and record["sort_s"] > 0
    twin = as_sorted_copy(OwnDataset.from_config(copy), m)
    sm = own_manifest(twin, tmp_path / "h2.json", spill_root=tmp_path)
    [table] = sm["profile"]["tables"]
    assert table["late_rows"] == 0 and sm["rows"] == ROWS
    assert sm["table"]["symbols"] == m["table"]["symbols"]
    assert table["distinct"] == m["profile"]["tables"][0]["distinct"]
    assert sm["table"]["columns"] == m["table"]["columns"]  # the same table, column by column


def test_a_sorted_copy_is_a_dataset_of_its_own_with_the_same_variants(tmp_path):
    config = {
        "data_dir": "results/data",
        "datasets": [{"label": "f", "path": "f.parquet", "sorted": True}],
        "variants": [{"library": "pandas", "method": "dataframe", "format": "parquet",
                      "transport": "http"}],
    }  # fmt: skip
    planned = plan(config)
    assert list(planned) == ["own-f", "own-f-sorted"]
    assert planned["own-f"] == planned["own-f-sorted"]


def test_the_disk_check_counts_a_sorted_copy(tmp_path):
    (tmp_path / "f.parquet").write_bytes(b"x" * 1000)
    copy = sorted_copy_bytes([tmp_path / "f.parquet"])
    assert copy == 2000  # the copy and DuckDB's spill
    [data, *_] = workflow_needs([], [], results=tmp_path, data=tmp_path, sorted_copies=[copy])
    assert data.nbytes == copy and "sorted copies" in data.what
