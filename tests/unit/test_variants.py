"""The variant matrix: expansion, the one exclusion rule, names, and the default config."""

import copy

import pytest
import yaml

from ingestbench.config import validate_config
from ingestbench.schema import load_schema
from ingestbench.variants import (
    FORMATS,
    METHOD_NAMES,
    READ_CHUNK_ROWS,
    SQL_TRANSPORT,
    TRANSPORTS,
    Variant,
    expand_spec,
    parse_variant_name,
    variants_by_dataset,
)
from tests.helpers import REPO


def test_a_spec_expands_to_its_cross_product():
    spec = {"library": ["pandas", "polars"], "method": "dataframe", "format": ["parquet", "csv"],
            "transport": ["http", "tcp"]}  # fmt: skip
    assert len(expand_spec(spec)) == 8


def test_server_methods_ignore_library_and_keep_their_own_format():
    spec = {"library": ["pandas", "polars"], "method": ["server_csv", "server_parquet"]}
    names = [v.name for v in expand_spec(spec)]
    assert names == ["none-server_csv-csv-http", "none-server_parquet-parquet-http"]


def test_workers_and_batches_only_where_they_mean_something():
    spec = {"library": "pandas", "method": ["dataframe", "threads", "batches"], "format": "parquet",
            "transport": "http", "workers": [2, 4], "batch_rows": [1000]}  # fmt: skip
    names = sorted(v.name for v in expand_spec(spec))
    assert names == [
        "pandas-batches-parquet-http-b1000",
        "pandas-dataframe-parquet-http",
        "pandas-threads-parquet-http-w2",
        "pandas-threads-parquet-http-w4",
    ]


@pytest.mark.parametrize(
    "variant",
    [
        Variant("polars", "processes", "csv", "tcp", workers=3),
        Variant("pandas", "batches", "parquet", "http", batch_rows=75000),
        Variant("none", "server_parquet", "parquet", "http"),
    ],  # fmt: skip
)
def test_names_round_trip(variant):
    assert parse_variant_name(variant.name) == variant


def test_ilp_file_only_as_library_none_format_ilp_and_clients_never_read_ilp():
    spec = {"library": ["pandas", "none"], "method": ["ilp_file", "dataframe"],
            "format": ["parquet", "ilp"], "transport": ["http", "tcp"],
            "workers": [1, 2]}  # fmt: skip
    names = sorted(v.name for v in expand_spec(spec))
    assert names == [
        "none-ilp_file-ilp-http-w1",
        "none-ilp_file-ilp-http-w2",
        "none-ilp_file-ilp-tcp-w1",
        "none-ilp_file-ilp-tcp-w2",
        "pandas-dataframe-parquet-http",
        "pandas-dataframe-parquet-tcp",
    ]


def test_a_spec_without_library_or_format_still_finds_ilp_file():
    names = [v.name for v in expand_spec({"method": "ilp_file", "transport": "tcp"})]
    assert names == ["none-ilp_file-ilp-tcp-w2"]  # workers: connections, 2 by default
    assert parse_variant_name("none-ilp_file-ilp-http-w3").workers == 3


@pytest.mark.parametrize(
    "name",
    [
        "pandas-teleport-csv-http",
        "none-server_csv-parquet-http",
        "pandas-ilp_file-ilp-tcp-w2",
        "none-ilp_file-parquet-tcp-w2",
        "pandas-dataframe-ilp-http",
        "none-dataframe-parquet-http",
    ],
)
def test_invalid_names_are_refused(name):
    with pytest.raises(ValueError, match="not a valid variant"):
        parse_variant_name(name)


@pytest.mark.parametrize("config_file", ["config.yaml", "configs/full.yaml"])
def test_shipped_configs_cover_every_method_library_format_and_transport(config_file):
    config = validate_config(yaml.safe_load((REPO / config_file).read_text()))
    labels = [d["label"] for d in config["datasets"]]
    variants = {v for vs in variants_by_dataset(copy.deepcopy(config), labels).values() for v in vs}
    assert {v.method for v in variants} == set(METHOD_NAMES)
    assert {v.library for v in variants} == {"pandas", "polars", "none"}
    assert {v.format for v in variants} == {"parquet", "csv", "ilp"}
    assert {v.transport for v in variants} == {"http", "tcp", "pg"}


def test_the_out_of_order_dataset_runs_dataframe_and_threads():
    config = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))
    ooo = variants_by_dataset(config, [d["label"] for d in config["datasets"]])["ooo"]
    assert {v.method for v in ooo} >= {"dataframe", "threads"}


def test_every_method_of_the_matrix_has_one_registered_class_and_no_more():
    from ingestbench.ingest.methods import METHODS, Method

    assert set(METHODS) == set(METHOD_NAMES)
    assert all(issubclass(cls, Method) for cls in METHODS.values())


def test_the_schema_offers_exactly_the_matrix():
    schema = load_schema()
    assert schema["$defs"]["method"]["enum"] == list(METHOD_NAMES)
    assert set(schema["$defs"]["format"]["enum"]) == set(FORMATS)
    assert set(schema["$defs"]["transport"]["enum"]) == {*TRANSPORTS, SQL_TRANSPORT}


def test_every_format_of_the_matrix_has_a_writer_and_a_size_per_row_and_no_more():
    from ingestbench.storage.disk import FILE_BYTES_PER_ROW
    from ingestbench.tsbs import WRITERS

    assert tuple(WRITERS) == FORMATS
    assert set(FORMATS) == set(FILE_BYTES_PER_ROW)


@pytest.mark.parametrize(
    ("name", "chunk_rows"),
    [
        ("pandas-dataframe-parquet-tcp", READ_CHUNK_ROWS),  # the default: no suffix
        ("pandas-dataframe-parquet-tcp-call", None),  # whole-file mode
        ("polars-threads-csv-http-w2-c333", 333),
        ("pandas-batches-parquet-http-b1000-c50000", 50_000),
        ("none-server_parquet-parquet-http", None),  # server methods never read in chunks
    ],
)
def test_chunk_suffixes_round_trip(name, chunk_rows):
    variant = parse_variant_name(name)
    assert variant.chunk_rows == chunk_rows and variant.name == name
    assert parse_variant_name(variant.name) == variant


@pytest.mark.parametrize(
    "name",
    [
        "pandas-dataframe-parquet-tcp-c100000",
        "pandas-rows-csv-http-cx",
        "none-server_csv-csv-http-call",
    ],
)
def test_non_canonical_chunk_suffixes_are_refused(name):
    with pytest.raises(ValueError, match="not a valid variant"):
        parse_variant_name(name)


def test_chunk_rows_in_a_spec_expands_and_validates():
    config = validate_config({"datasets": [{"label": "a", "scale": 10, "epochs": 10}],
                              "variants": [{"library": "pandas", "method": "dataframe",
                                            "format": "parquet", "transport": "tcp",
                                            "chunk_rows": ["all", 50000]}]})  # fmt: skip
    names = [v.name for v in expand_spec(config["variants"][0])]
    assert names == ["pandas-dataframe-parquet-tcp-call", "pandas-dataframe-parquet-tcp-c50000"]
    with pytest.raises(Exception, match="chunk_rows"):
        validate_config({**config, "variants": [{"method": "dataframe", "chunk_rows": 0}]})


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        # SQL over PGWire whatever transport the spec names; to_sql is pandas', write_database
        # polars'; batch_rows is the rows per call, its default 1,000 for to_sql_multi
        ({"library": ["pandas", "polars"], "method": ["to_sql", "to_sql_multi"],
          "format": "parquet", "transport": ["http", "tcp"]},
         ["pandas-to_sql-parquet-pg-b10000", "pandas-to_sql_multi-parquet-pg-b1000"]),
        ({"library": ["pandas", "polars"], "method": "write_database", "format": "csv",
          "batch_rows": 500}, ["polars-write_database-csv-pg-b500"]),
        ({"library": ["pandas", "polars", "none"], "method": "executemany", "format": "parquet",
          "transport": "pg"},
         ["pandas-executemany-parquet-pg-b10000", "polars-executemany-parquet-pg-b10000"]),
    ],
)  # fmt: skip
def test_sql_methods_expand_over_pgwire(spec, names):
    assert [v.name for v in expand_spec(spec)] == names
    assert all(parse_variant_name(n).name == n for n in names)


@pytest.mark.parametrize(
    "name",
    ["pandas-to_sql-parquet-http-b10000", "polars-to_sql-parquet-pg-b10000",
     "pandas-executemany-ilp-pg-b10000", "pandas-to_sql-parquet-pg-w2"],
)  # fmt: skip
def test_sql_names_off_the_matrix_are_refused(name):
    with pytest.raises(ValueError, match="not a valid variant"):
        parse_variant_name(name)
