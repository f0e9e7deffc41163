"""Own data described from real files: the type mapping, the refusals (one sentence each), the
manifest's hashes and counts, which methods apply, and the example table."""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingestbench.datasets import dataset_name
from ingestbench.own.dataset import OwnDataError, OwnDataset, own_variants
from ingestbench.own.describe import describe
from ingestbench.own.example import trades, write_example
from ingestbench.own.manifest import hash_files, own_manifest
from ingestbench.own.spec import OwnTableSpec
from ingestbench.own.support import questdb_pattern, why_cannot_load
from ingestbench.own.types import MAPPING, QUESTDB_TYPES, kind_of
from ingestbench.variants import parse_variant_name
from tests.helpers import TESTS

TS = pa.array(np.arange(4) * 1_000_000 + 1_700_000_000_000_000, pa.timestamp("us", tz="UTC"))


def _parquet(tmp_path: Path, columns: dict, name: str = "t.parquet") -> Path:
    path = tmp_path / name
    pq.write_table(pa.table(columns), path)
    return path


def _describe(path: Path, **entry):
    return describe(OwnDataset.from_config({"label": "mine", "path": str(path), **entry}))


def test_the_docs_show_the_one_mapping_table():
    text = (TESTS.parent / "docs" / "own-data.md").read_text()
    for arrow, kind, note in MAPPING:
        row = f"| {arrow.replace('|', chr(92) + '|')} | {QUESTDB_TYPES[kind]} | {note} |"
        assert row in text, arrow


@pytest.mark.parametrize(
    ("arrow", "kind"),
    [(pa.bool_(), "boolean"), (pa.int8(), "int"), (pa.int16(), "int"), (pa.int32(), "int"),
     (pa.uint16(), "int"), (pa.uint32(), "long"), (pa.int64(), "long"), (pa.uint64(), None),
     (pa.float32(), "float"), (pa.float64(), "double"), (pa.string(), "varchar"),
     (pa.large_string(), "varchar"), (pa.dictionary(pa.int32(), pa.string()), "symbol"),
     (pa.timestamp("ns", tz="Europe/Paris"), "timestamp"), (pa.timestamp("s"), "timestamp"),
     (pa.date32(), "date"), (pa.list_(pa.int64()), None), (pa.binary(), None),
     (pa.duration("s"), None), (pa.decimal128(10, 2), "decimal(10,2)"),
     (pa.decimal256(40, 5), "decimal(40,5)")],
)  # fmt: skip
def test_each_arrow_type_maps_to_one_kind(arrow, kind):
    assert kind_of(arrow) == kind


def test_a_table_in_file_order_with_symbols_by_the_default_rule(tmp_path):
    path = _parquet(tmp_path, {
        "venue": pa.array(["a", "b", "a", "c"]).dictionary_encode(),
        "ts": TS, "trader": pa.array(["x", None, "y", "z"]),
        "qty": pa.array([1, None, 3, 4], pa.int32()),
    })  # fmt: skip
    spec, skipped = _describe(path)
    assert skipped == []
    assert spec.order == ("venue", "ts", "trader", "qty")
    assert spec.tags == ("venue",) and spec.timestamp == "ts"
    assert dict(zip(spec.fields, spec.kinds, strict=True)) == {"trader": "varchar", "qty": "int"}
    assert OwnTableSpec.from_dict(spec.to_dict()) == spec  # what manifests and run files keep
    listed, _ = _describe(path, symbols=["trader"])
    assert listed.tags == ("trader",) and listed.kind("venue") == "varchar"


def test_a_list_column_is_refused_or_left_out_as_chosen(tmp_path):
    path = _parquet(tmp_path, {"ts": TS, "v": [1.0, 2, 3, 4], "tags": [[1], [2], [], None]})
    with pytest.raises(OwnDataError, match=r"column 'tags' .* list<.*no nested .* skip"):
        _describe(path)
    spec, skipped = _describe(path, unsupported_columns="skip")
    assert "tags" not in spec.columns and skipped[0]["name"] == "tags"


@pytest.mark.parametrize(
    ("columns", "entry", "sentence"),
    [({"v": [1, 2, 3, 4]}, {}, r"has no timestamp column.*add one"),
     ({"ts": TS, "t2": TS, "v": [1, 2, 3, 4]}, {}, r"2 timestamp columns \(ts, t2\).*timestamp"),
     ({"ts": TS, "order": [1, 2, 3, 4]}, {}, r"'order' is a word QuestDB's SQL reserves"),
     ({"ts": TS, "a b": [1, 2, 3, 4]}, {}, r"'a b' is not a name QuestDB takes"),
     ({"ts": TS, "Px": [1, 2, 3, 4], "px": [1, 2, 3, 4]}, {}, r"differ only in case"),
     ({"ts": TS, "v": [1, 2, 3, 4]}, {"symbols": ["v"]}, r"'v', which does not hold strings"),
     ({"ts": TS, "v": [1, 2, 3, 4]}, {"timestamp": "v"}, r"'v' does not read as timestamps"),
     ({"ts": TS, "s": ["a", "b", "c", "d"]}, {"symbols": ["s"]}, r"no column besides")],
)  # fmt: skip
def test_each_refusal_is_one_sentence_naming_cause_and_fix(tmp_path, columns, entry, sentence):
    with pytest.raises(OwnDataError, match=sentence) as caught:
        _describe(_parquet(tmp_path, columns), **entry)
    assert str(caught.value).count(". ") == 0 and str(caught.value).endswith(".")


def test_the_designated_timestamp_and_booleans_take_no_null(tmp_path):
    ts = pa.array([1, None, 3, 4], pa.timestamp("us"))
    with pytest.raises(OwnDataError, match=r"'ts' has 1 null.*fill or drop"):
        own_manifest(OwnDataset("a", _parquet(tmp_path, {"ts": ts, "v": [1, 2, 3, 4]})),
                     tmp_path / "h.json")  # fmt: skip
    flags = pa.array([True, None, False, True])
    with pytest.raises(OwnDataError, match=r"boolean column 'ok' has 1 null"):
        own_manifest(OwnDataset("b", _parquet(tmp_path, {"ts": TS, "ok": flags}, "b.parquet")),
                     tmp_path / "h.json")  # fmt: skip


def test_a_csv_with_its_own_null_marker_and_delimiter(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("at;name;qty\n2024-01-01 00:00:00;a;NA\n2024-01-01 00:00:01;NA;7\n")
    entry = {"label": "c", "path": str(path), "csv": {"delimiter": ";", "null_values": ["NA"]}}
    manifest = own_manifest(OwnDataset.from_config(entry), tmp_path / "h.json")
    assert manifest["rows"] == 2 and manifest["nulls"] == {"at": 0, "name": 1, "qty": 1}
    kinds = {c["name"]: c["questdb"] for c in manifest["table"]["columns"]}
    assert kinds == {"at": "TIMESTAMP", "name": "VARCHAR", "qty": "LONG"}


def test_a_hive_directory_has_its_keys_as_columns(tmp_path):
    for day in (1, 2):
        part = tmp_path / "d" / f"day={day}"
        part.mkdir(parents=True)
        pq.write_table(pa.table({"ts": TS, "v": [1.0, 2, 3, 4]}), part / "part-0.parquet")
    manifest = own_manifest(OwnDataset("h", tmp_path / "d"), tmp_path / "h.json")
    assert manifest["rows"] == 8 and len(manifest["files"]) == 2
    assert {c["name"] for c in manifest["table"]["columns"]} == {"ts", "v", "day"}
    assert manifest["table"]["source"]["hive"] is True


def test_a_file_is_hashed_again_only_when_it_changes(tmp_path):
    path = _parquet(tmp_path, {"ts": TS, "v": [1.0, 2, 3, 4]})
    cache = tmp_path / "hashes.json"
    first = hash_files(path, cache)
    cache.write_text(cache.read_text().replace(first["sha256"], "0" * 64))  # a stale cache entry
    assert hash_files(path, cache)["sha256"] == "0" * 64  # same size and mtime: not read again
    time.sleep(0.01)
    _parquet(tmp_path, {"ts": TS, "v": [1.0, 2, 3, 5]})
    changed = hash_files(path, cache)["sha256"]
    assert changed not in (first["sha256"], "0" * 64)


def test_which_methods_apply_to_an_own_table(tmp_path):
    write_example(tmp_path / "trades.parquet", 500)
    manifest = own_manifest(OwnDataset("tr", tmp_path / "trades.parquet"), tmp_path / "h.json")
    spec = OwnTableSpec.from_dict(manifest["table"])

    def reason(name):
        return why_cannot_load(parse_variant_name(name), spec, manifest)

    assert reason("pandas-dataframe-parquet-http") is None
    assert reason("none-server_parquet-parquet-http") is None
    assert reason("none-ilp_file-ilp-tcp-w2") is None
    assert reason("polars-vectorized-parquet-tcp-w2") is None  # strings, booleans, dates too
    assert reason("pandas-rows-parquet-http") is None  # any size: rows_cap caps it
    assert "reads csv" in reason("pandas-dataframe-csv-http")


def test_the_refusals_follow_what_the_catalogue_says_of_each_method(tmp_path):
    """Decided by what a method is (a server import, a writer of ILP protocol 2), not by its
    name: the rows without values, the decimals and the CSV imports' nulls."""
    import decimal

    def reasons(path, manifest_overrides=(), **entry):
        dataset = OwnDataset.from_config({"label": "mine", "path": str(path), **entry})
        manifest = own_manifest(dataset, tmp_path / "h.json") | dict(manifest_overrides)
        spec = OwnTableSpec.from_dict(manifest["table"])
        return lambda name: why_cannot_load(parse_variant_name(name), spec, manifest)

    prices = pa.array([decimal.Decimal("1.25")] * 4, pa.decimal128(10, 2))
    reason = reasons(_parquet(tmp_path, {"ts": TS, "price": prices}))
    assert "writes ILP protocol 2 itself" in reason("polars-vectorized-parquet-tcp-w2")
    assert reason("pandas-dataframe-parquet-http") is None  # it sends protocol 3

    reason = reasons(_parquet(tmp_path, {"ts": TS, "v": [1.0, 2, 3, 4]}),
                     {"rows_without_values": 2})  # fmt: skip
    assert "an ILP line needs a value" in reason("pandas-dataframe-parquet-http")
    assert reason("none-server_parquet-parquet-http") is None  # the server's imports take them

    csv = tmp_path / "t.csv"
    csv.write_text("ts,v,w\n2024-01-01T00:00:00Z,1.5,1\n2024-01-01T00:00:01Z,NA,2\n")
    reason = reasons(csv, csv={"null_values": ["NA"]})
    for name in ("none-server_csv-csv-http", "none-server_copy-csv-http"):
        assert "takes only empty fields as nulls" in reason(name)
    assert reason("pandas-dataframe-csv-http") is None


def test_the_csv_imports_need_empty_nulls_and_a_known_time_format():
    assert questdb_pattern("%Y-%m-%d %H:%M:%S.%f") == "yyyy-MM-dd HH:mm:ss.SSSUUU"
    assert questdb_pattern("%d/%m/%Y") == "dd/MM/yyyy"
    assert questdb_pattern("%b %d %Y") is None


def test_an_own_dataset_runs_its_formats_variants_and_the_ilp_text():
    entry = {"label": "my_csv", "path": "data/x.csv"}
    assert dataset_name(entry) == "own-my-csv"
    names = ["pandas-dataframe-parquet-http", "pandas-dataframe-csv-http",
             "none-ilp_file-ilp-tcp-w2", "none-server_parquet-parquet-http"]  # fmt: skip
    kept = own_variants(entry, [parse_variant_name(n) for n in names])
    assert [v.name for v in kept] == ["pandas-dataframe-csv-http", "none-ilp_file-ilp-tcp-w2"]


def test_the_example_trades_table_is_realistic():
    table = trades(2_000)
    assert table.column("venue").type == pa.dictionary(pa.int32(), pa.string())
    distinct = {n: len(set(table.column(n).to_pylist())) for n in ("venue", "trader")}
    assert distinct["venue"] <= 4 < 1_000 < distinct["trader"]
    assert table.column("qty").null_count > 0  # nullable integers
    ts = table.column("ts").to_pylist()
    assert len(set(ts)) * 10 < len(ts)  # many rows per timestamp
    assert re.match(r"own-", dataset_name({"label": "x", "path": "y.parquet"}))


def test_a_refusal_only_a_load_reveals_is_unsupported_and_anything_else_fails():
    from ingestbench.ingest.frames.encoder import EncodeError
    from ingestbench.ingest.job import unsupported_from_error
    from ingestbench.ingest.methods import SendError

    refused = SendError("v: QuestDB refused the rows (ILP/http at x) while sending: cast error")
    assert unsupported_from_error(refused) == str(refused)
    assert unsupported_from_error(EncodeError("column 'x' is bool")) == "column 'x' is bool"
    lost = SendError("v: lost the connection to QuestDB (ILP/tcp at x) while sending")
    assert unsupported_from_error(lost) is None  # a server gone is a failure, not the data
    assert unsupported_from_error(ValueError("bug")) is None


def test_a_symbol_that_barely_repeats_in_a_chunk_is_read_as_strings_by_every_library(tmp_path):
    """A symbol whose chunk holds more distinct values than half its rows gains nothing from a
    dictionary, and its pandas categories or polars Categorical cost a lookup per value: the
    reader hands it on as strings, chunk by chunk, with nulls kept; one that repeats stays a
    dictionary. Both libraries read the same choice."""
    import polars as pl

    from ingestbench.own.read import as_library, iter_tables

    n = 8
    path = _parquet(tmp_path, {
        "venue": pa.array(["a", "b"] * (n // 2)),  # 2 values: a dictionary
        "trader": pa.array(["t0", None, "t2", "t3", "t4", "t4", "t4", "t4"]),  # 4, then 1 in 4
        "ts": pa.array(np.arange(n) + 1_700_000_000_000_000, pa.timestamp("us", tz="UTC")),
        "qty": pa.array(range(n), pa.int64()),
    })  # fmt: skip
    spec, _ = _describe(path, symbols=["venue", "trader"])
    first, second = iter_tables(spec, 4, n)
    assert pa.types.is_dictionary(first.column("venue").type)
    assert first.column("trader").type == pa.string()  # 3 values and a null in 4 rows
    assert first.column("trader").to_pylist() == ["t0", None, "t2", "t3"]
    assert pa.types.is_dictionary(second.column("trader").type)  # 1 value in 4 rows
    assert as_library(first, "pandas")["trader"].dtype == "str"
    assert as_library(first, "pandas")["venue"].dtype == "category"
    assert as_library(first, "polars").schema["trader"] == pl.String


def test_a_symbol_in_several_chunks_is_judged_over_all_its_rows():
    """A chunk the reader assembles from several record batches (a CSV's blocks) is one
    judgement: its strings' distinct values over all its rows."""
    from ingestbench.columnar.arrow import as_symbol

    repeats = pa.chunked_array([pa.array(["a", "b", "c"]), pa.array(["a", "b", "c"])])
    assert pa.types.is_dictionary(as_symbol(repeats).type)  # 3 values in 6 rows
    barely = pa.chunked_array([pa.array(["a", "b", "c"]), pa.array(["d", "e", None])])
    assert as_symbol(barely).type == pa.string()
    assert as_symbol(barely).to_pylist() == ["a", "b", "c", "d", "e", None]
