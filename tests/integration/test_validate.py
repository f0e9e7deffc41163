"""Validation against a real QuestDB and real DuckDB: a correct ingestion passes, damage is caught.

One clean ingestion of the tiny TSBS dataset per module; every damaged case copies it over SQL into
a fresh table of its own, damages it, exports it and validates it.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from questdb import Sender

from ingestbench import validate
from ingestbench.results.records import SCHEMA_VERSION
from ingestbench.server.table import COLUMNS, FIELDS, TAGS, recreate_table, wait_visible
from ingestbench.validate import (
    ValidationFailed,
    expected_aggregates,
    export_table,
    questdb_aggregates,
    validate_files,
    validate_run,
)
from tests.helpers import cpu_aggregates

VARIANT = {"name": "pandas-dataframe-parquet-http", "library": "pandas", "method": "dataframe",
           "format": "parquet", "transport": "http", "workers": 1, "batch_rows": None}  # fmt: skip
SELECT_ALL = ", ".join(COLUMNS)
# A row from the middle of the dataset (neither first nor last timestamp).
HOST, TS = "host_5", "2016-01-01T00:03:00.000000Z"
ROW = f"hostname = '{HOST}' AND timestamp = '{TS}'"


def _name(prefix: str = "val") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def _ingest(qdb, df: pd.DataFrame, protocol: int = 2) -> str:
    table = _name()
    recreate_table(qdb, table)
    with Sender.from_conf(qdb.ilp_conf("http", protocol)) as sender:
        sender.dataframe(df, table_name=table, symbols=list(TAGS), at="timestamp")
    wait_visible(qdb, table, len(df))
    return table


def _run(rows: int) -> dict:
    # The settings it ran under name its server (a version and a settings set)
    settings = {"questdb": {"version": "9.3.4", "settings": [{"name": "uncommitted100k"}]}}
    return {"schema_version": 1, "dataset": {"name": "tiny", "rows": 2000}, "variant": VARIANT,
            "rows": rows, "table_rows": {"cpu": rows}, "repeats": [],
            "settings": settings}  # fmt: skip


@pytest.fixture(scope="module")
def source(tiny_dataset):
    return Path(tiny_dataset["parquet"])


@pytest.fixture(scope="module")
def source_df(source):
    return pd.read_parquet(source)


@pytest.fixture(scope="module")
def expected(source):
    return expected_aggregates(source)


@pytest.fixture(scope="module")
def base_table(questdb, source_df):
    return _ingest(questdb, source_df)


def _copy(qdb, base: str, *statements: str, rows: int) -> str:
    """A fresh table filled by INSERT ... SELECT statements ({t} = new table, {b} = base)."""
    table = _name()
    recreate_table(qdb, table)
    for statement in statements:
        qdb.sql(statement.format(t=table, b=base))
        qdb.sql(f"SELECT wait_wal_table('{table}')")
    wait_visible(qdb, table, rows)
    return table


def _validate(qdb, table, source, expected, tmp_path, rows=None, **kw):
    export = tmp_path / table  # a directory of each table's export, as the ingest job writes
    export_table(qdb, table, export / "cpu")
    actual = questdb_aggregates(qdb, table)
    n = expected["row_count"] if rows is None else rows
    return validate_run(_run(n), source, cpu_aggregates(expected), cpu_aggregates(actual), export,
                        1e-9, 5, **kw)  # fmt: skip


def _failed(result) -> set[str]:
    return {c["name"] for c in result["checks"] if not c["passed"]}


def test_expected_aggregates_of_tiny_dataset(expected, source_df):
    assert expected["row_count"] == len(source_df) == 2000
    assert len(expected["rows_per_host"]) == 40
    assert set(expected["rows_per_host"].values()) == {50}
    assert expected["first_ts"] == "2016-01-01T00:00:00.000000Z"
    assert expected["last_ts"] == "2016-01-01T00:08:10.000000Z"
    for f in FIELDS:
        assert expected["fields"][f]["min"] == source_df[f].min()
        assert expected["fields"][f]["max"] == source_df[f].max()
        assert expected["fields"][f]["sum"] == pytest.approx(source_df[f].sum(), rel=1e-12)
    assert expected["tags"]["region"]["values"] == sorted(source_df["region"].astype(str).unique())
    assert expected["tags"]["hostname"]["count"] == 40


def test_correct_ingestion_passes(questdb, base_table, source, expected, tmp_path):
    export = tmp_path / "export" / "cpu"
    export_table(questdb, base_table, export)
    # What QuestDB 9.3.4 exports: strings, doubles and microseconds in UTC.
    schema = pq.read_schema(export)
    assert schema.field("timestamp").type == pa.timestamp("us", tz="UTC")
    assert schema.field("usage_user").type == pa.float64()
    actual = questdb_aggregates(questdb, base_table)
    # Everything but the sums is equal exactly (min/max too: ILP v2 sends doubles in binary);
    # the sums differ in the last bits (summation order), hence the relative tolerance.
    for f in FIELDS:
        e, a = expected["fields"][f], actual["fields"][f]
        assert (a["min"], a["max"]) == (e["min"], e["max"])
        assert a["sum"] == pytest.approx(e["sum"], rel=1e-12)
    assert {k: v for k, v in actual.items() if k != "fields"} == {
        k: v for k, v in expected.items() if k != "fields"
    }
    result = validate_run(_run(2000), source, cpu_aggregates(expected), cpu_aggregates(actual),
                          export.parent, 1e-9, 5)  # fmt: skip
    assert result["passed"], _failed(result)
    assert result["differing_rows"] == {"missing": 0, "unexpected": 0}
    assert result["dataset"] == "tiny" and result["variant"] == VARIANT
    json.dumps(result)  # the result is plain JSON


def test_dropped_row(questdb, base_table, source, expected, tmp_path):
    t = _copy(questdb, base_table, f"INSERT INTO {{t}} SELECT * FROM {{b}} WHERE NOT ({ROW})",
              rows=1999)  # fmt: skip
    result = _validate(questdb, t, source, expected, tmp_path)
    assert not result["passed"]
    assert {"row_count", "rows_per_host", "row_level"} <= _failed(result)
    assert result["differing_rows"] == {"missing": 1, "unexpected": 0}
    (missing,) = result["first_differences"]["missing_in_questdb"]
    assert (missing["hostname"], missing["timestamp"]) == (HOST, TS)
    assert result["checks"][0]["name"] == "row_count"


def test_duplicated_row(questdb, base_table, source, expected, tmp_path):
    t = _copy(questdb, base_table, "INSERT INTO {t} SELECT * FROM {b}",
              f"INSERT INTO {{t}} SELECT * FROM {{b}} WHERE {ROW}", rows=2001)  # fmt: skip
    result = _validate(questdb, t, source, expected, tmp_path)
    assert {"row_count", "rows_per_host", "row_level"} <= _failed(result)
    assert result["differing_rows"] == {"missing": 0, "unexpected": 1}
    (extra,) = result["first_differences"]["unexpected_in_questdb"]  # the row, reported once
    assert (extra["hostname"], extra["timestamp"]) == (HOST, TS)


def test_changed_field_value(questdb, base_table, source, expected, tmp_path):
    t = _copy(questdb, base_table, "INSERT INTO {t} SELECT * FROM {b}", rows=2000)
    questdb.sql(f"UPDATE {t} SET usage_user = usage_user + 0.5 WHERE {ROW}")
    questdb.sql(f"SELECT wait_wal_table('{t}')")
    result = _validate(questdb, t, source, expected, tmp_path)
    assert {"field_sum:usage_user", "row_level"} <= _failed(result)
    assert not {"row_count", "rows_per_host", "field_sum:usage_system"} & _failed(result)
    assert result["differing_rows"] == {"missing": 1, "unexpected": 1}
    (missing,), (unexpected,) = result["first_differences"].values()
    assert unexpected["usage_user"] == missing["usage_user"] + 0.5


def test_changed_tag(questdb, base_table, source, expected, tmp_path, monkeypatch):
    t = _copy(questdb, base_table, "INSERT INTO {t} SELECT * FROM {b}", rows=2000)
    questdb.sql(f"UPDATE {t} SET region = 'mars-north-1' WHERE {ROW}")
    questdb.sql(f"SELECT wait_wal_table('{t}')")
    result = _validate(questdb, t, source, expected, tmp_path)
    assert {"tag_distinct:region", "row_level"} <= _failed(result)
    check = next(c for c in result["checks"] if c["name"] == "tag_distinct:region")
    assert check["differences"]["unexpected_in_questdb"] == ["mars-north-1"]
    assert result["differing_rows"] == {"missing": 1, "unexpected": 1}
    # Tags with many values (hostname at scale 4000) keep only count + hash: still caught.
    monkeypatch.setattr(validate.aggregates, "TAG_VALUES_LIMIT", 5)
    result = _validate(questdb, t, source, expected_aggregates(source), tmp_path)
    check = next(c for c in result["checks"] if c["name"] == "tag_distinct:region")
    assert not check["passed"] and "values" not in check["expected"]


def test_shifted_timestamp_is_caught_row_for_row(questdb, base_table, source, expected, tmp_path):
    others = ", ".join(c for c in COLUMNS if c != "timestamp")
    t = _copy(
        questdb,
        base_table,
        f"INSERT INTO {{t}} SELECT * FROM {{b}} WHERE NOT ({ROW})",
        f"INSERT INTO {{t}} SELECT {others}, dateadd('s', 1, timestamp) FROM {{b}} WHERE {ROW}",
        rows=2000,
    )
    result = _validate(questdb, t, source, expected, tmp_path)
    # Every aggregate still agrees: only the row-level comparison sees it.
    assert _failed(result) == {"row_level"}
    assert result["first_differences"]["unexpected_in_questdb"][0]["timestamp"] == (
        "2016-01-01T00:03:01.000000Z"
    )


def test_microseconds_read_as_nanoseconds(questdb, base_table, source, expected, tmp_path):
    # What a server reading the client's microseconds as nanoseconds stores: micros / 1000.
    others = ", ".join(c for c in COLUMNS if c != "timestamp")
    t = _copy(
        questdb,
        base_table,
        f"INSERT INTO {{t}} SELECT {others}, cast(cast(timestamp AS long) / 1000 AS timestamp) "
        f"FROM {{b}}",
        rows=2000,
    )
    result = _validate(questdb, t, source, expected, tmp_path)
    assert {"first_ts", "last_ts", "row_level"} <= _failed(result)
    first_ts = next(c for c in result["checks"] if c["name"] == "first_ts")
    assert first_ts["actual"].startswith("1970-01-17")
    assert result["differing_rows"] == {"missing": 2000, "unexpected": 2000}


def test_export_timestamp_unit_and_zone_do_not_matter(questdb, base_table, source, expected,
                                                      tmp_path):  # fmt: skip
    """The row-level comparison compares instants: ns or us, UTC or another zone, all the same."""
    export = tmp_path / "export" / "cpu"
    export_table(questdb, base_table, export)
    table = pq.read_table(export)
    i = table.schema.get_field_index("timestamp")
    ts = (
        table.column(i).cast(pa.timestamp("ns", tz="UTC")).cast(pa.timestamp("ns", tz="Asia/Tokyo"))
    )
    pq.write_table(table.set_column(i, "timestamp", ts), export)
    actual = questdb_aggregates(questdb, base_table)
    result = validate_run(_run(2000), source, cpu_aggregates(expected), cpu_aggregates(actual),
                          export.parent, 1e-9, 5)  # fmt: skip
    assert result["passed"], _failed(result)


def test_csv_export_fallback(questdb, base_table, source, expected, tmp_path):
    export = tmp_path / "export" / "cpu"
    export_table(questdb, base_table, export, fmt="csv")
    assert pq.read_schema(export).field("timestamp").type == pa.timestamp("us", tz="UTC")
    actual = questdb_aggregates(questdb, base_table)
    result = validate_run(_run(2000), source, cpu_aggregates(expected), cpu_aggregates(actual),
                          export.parent, 1e-9, 5)  # fmt: skip
    assert result["passed"], _failed(result)


def test_capped_run_validates_against_prefix(questdb, source, source_df, expected, tmp_path):
    t = _ingest(questdb, source_df.head(700))
    result = _validate(questdb, t, source, expected, tmp_path, rows=700)
    assert result["passed"], _failed(result)
    assert result["source_rows"] == "first 700 in file order"
    assert next(c for c in result["checks"] if c["name"] == "row_count")["expected"] == 700
    # The wrong 700 rows (file rows 1..700, not 0..699) are caught.
    t = _ingest(questdb, source_df.iloc[1:701])
    result = _validate(questdb, t, source, expected, tmp_path, rows=700)
    assert "row_level" in _failed(result)
    assert result["differing_rows"] == {"missing": 1, "unexpected": 1}


def _files(questdb, table, source, expected, tmp_path, run_rows):
    paths = {k: tmp_path / f"{k}.json" for k in ("run", "actual", "expected")}
    paths["run"].write_text(json.dumps(_run(run_rows)))
    paths["actual"].write_text(
        json.dumps({"schema_version": 1, **cpu_aggregates(questdb_aggregates(questdb, table))})
    )
    paths["expected"].write_text(json.dumps({"schema_version": 1, **cpu_aggregates(expected)}))
    paths["export"] = tmp_path / "export"
    export_table(questdb, table, paths["export"] / "cpu")
    return {**paths, "parquet": source, "output": tmp_path / "validation" / "out.json"}


def test_on_failure_fail_raises_one_sentence_and_writes_nothing(questdb, base_table, source,
                                                                expected, tmp_path):  # fmt: skip
    t = _copy(questdb, base_table, f"INSERT INTO {{t}} SELECT * FROM {{b}} WHERE NOT ({ROW})",
              rows=1999)  # fmt: skip
    files = _files(questdb, t, source, expected, tmp_path, 2000)
    with pytest.raises(ValidationFailed) as info:
        validate_files(**files, validation={"on_failure": "fail"}, log_path="the.log")
    message = str(info.value)
    assert VARIANT["name"] in message and "row_count" in message and "the.log" in message
    assert "on QuestDB 9.3.4-uncommitted100k failed check" in message
    assert "\n" not in message
    assert not files["output"].exists()

    result = validate_files(**files, validation={"on_failure": "report", "max_differences": 1})
    written = json.loads(files["output"].read_text())
    assert written == json.loads(json.dumps(result))
    assert written["passed"] is False and written["schema_version"] == SCHEMA_VERSION
    assert "row_count" in written["failed_checks"]


def test_validate_files_passes(questdb, base_table, source, expected, tmp_path):
    files = _files(questdb, base_table, source, expected, tmp_path, 2000)
    result = validate_files(**files, validation={"on_failure": "fail"})
    assert result["passed"] and json.loads(files["output"].read_text())["passed"]


def test_a_server_that_sends_csv_for_parquet_is_validated_through_csv(
    source, source_df, expected, tmp_path
):
    """QuestDB before 9.1 ignores /exp's fmt=parquet and sends CSV: the export notices and
    falls back to CSV, so an older server's runs validate too."""
    from ingestbench.server.jar import fetch_jar
    from ingestbench.server.process import embedded_server
    from tests.helpers import STARTUP_S

    with embedded_server(fetch_jar("9.0.3"), startup_timeout_s=STARTUP_S) as old:
        assert "9.0.3" in old.version()
        table = _ingest(old, source_df)
        result = _validate(old, table, source, expected, tmp_path)
    assert result["passed"], _failed(result)


def test_a_server_that_prints_doubles_cut_is_validated_over_pgwire(source, source_df, expected,
                                                                    tmp_path):  # fmt: skip
    """QuestDB before 9.0.3 prints a DOUBLE with at most 12 decimals (/exp, /exec), so its text
    cannot be checked row for row; the export reads the table over PGWire in binary instead."""
    from ingestbench.server.jar import fetch_jar
    from ingestbench.server.process import embedded_server
    from tests.helpers import STARTUP_S

    with embedded_server(fetch_jar("8.2.0"), startup_timeout_s=STARTUP_S) as old:
        assert old.release() == "8.2.0"
        table = _ingest(old, source_df, protocol=1)  # ILP protocol 2 arrived in 9.0
        value = float(source_df["usage_user"].iloc[0])
        text = old.scalar(f"SELECT usage_user FROM {table} LIMIT 1")
        assert len(repr(value)) > len(repr(float(text)))  # the server's text cuts digits
        result = _validate(old, table, source, expected, tmp_path)
    assert result["passed"], _failed(result)
