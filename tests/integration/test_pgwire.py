"""The SQL methods over PGWire against a real QuestDB: every row lands in the runner's table,
checked per repeat and row for row by DuckDB; the COPY paths end as unsupported with QuestDB's
answer; the PGWire user of a secured server."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from pathlib import Path

import pytest

from ingestbench.config import Settings, validate_config
from ingestbench.errors import UserError
from ingestbench.ingest.job import IngestFiles, ingest_job
from ingestbench.ingest.methods import METHODS, Unsupported, cpu_job
from ingestbench.ingest.runner import RepeatGuards, run_variant
from ingestbench.ingest.timing import Clock
from ingestbench.server.access import Access, Secret
from ingestbench.server.process import embedded_server
from ingestbench.server.table import recreate_table
from ingestbench.tsbs.columns import cpu_spec
from ingestbench.validate import expected_aggregates, export_table, questdb_aggregates, validate_run
from ingestbench.validate.repeat_checks import source_checks
from ingestbench.variants import parse_variant_name
from tests.helpers import STARTUP_S, cpu_aggregates

SQL_VARIANTS = [
    "pandas-to_sql-parquet-pg-b500",
    "pandas-to_sql_multi-csv-pg-b300",
    "polars-write_database-parquet-pg-b700",
    "pandas-executemany-csv-pg-b700",
    "polars-executemany-parquet-pg-b10000",
    "pandas-asyncpg-parquet-pg-b300",
    "polars-asyncpg-csv-pg-b10000",
    "pandas-to_sql-parquet-pg-b500-call",  # whole-file mode
]


def _source_checks(parquet: Path, table: str) -> dict:
    return {table: source_checks(parquet, cpu_spec("double", table), 2000)}


def _job(qdb, tiny_dataset, name: str, table: str, rows: int = 2000):
    variant = parse_variant_name(name)
    return cpu_job(qdb, table, variant, tiny_dataset[variant.format], rows, field_type="double")


@pytest.mark.parametrize("name", SQL_VARIANTS)
def test_every_sql_method_lands_every_row_validated(questdb, tiny_dataset, tmp_path, name):
    table = "t_" + name.replace("-", "_")
    job = _job(questdb, tiny_dataset, name, table)
    parquet = Path(tiny_dataset["parquet"])
    guards = RepeatGuards(functools.partial(_source_checks, parquet, table), 1e-9, 300)
    doc = run_variant(job, {"name": "tiny", "rows": 2000}, repeats=2, warmup_rows=500,
                      guards=guards)  # fmt: skip
    assert doc["repeat_checks"] == [table] and len(doc["repeats"]) == 2
    assert doc["warmup"]["method"] == job.variant.method  # warmed up over PGWire, by itself
    assert doc["ilp_bytes"] is None and all(r["phases"]["send"] > 0 for r in doc["repeats"])
    # The runner's table, not one the library made: designated timestamp, WAL, symbols.
    meta = questdb.rows(f"SELECT designatedTimestamp, walEnabled, partitionBy FROM tables() "
                        f"WHERE table_name = '{table}'")  # fmt: skip
    assert meta == [["timestamp", True, "DAY"]]
    types = dict(questdb.rows(f"SELECT \"column\", type FROM table_columns('{table}')"))
    assert types["hostname"] == "SYMBOL" and types["usage_user"] == "DOUBLE"
    # Row for row against the file, by DuckDB.
    export_table(questdb, table, tmp_path / "export" / "cpu")
    expected = expected_aggregates(parquet)
    run = {"schema_version": 1, "dataset": {"name": "tiny", "rows": 2000},
           "variant": job.variant.to_dict(), "rows": 2000, "table_rows": {"cpu": 2000},
           "repeats": []}  # fmt: skip
    result = validate_run(run, parquet, cpu_aggregates(expected),
                          cpu_aggregates(questdb_aggregates(questdb, table)),
                          tmp_path / "export", 1e-9, 5)  # fmt: skip
    assert result["passed"], [c for c in result["checks"] if not c["passed"]]


def _settings(**over) -> Settings:
    config = {"datasets": [{"label": "tiny", "scale": 40, "epochs": 50}],
              "variants": [{"method": "dataframe"}], "repeats": 1, "warmup_rows": 0,
              **over}  # fmt: skip
    return Settings.from_config(validate_config(config))


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("pandas-psycopg_copy-parquet-pg-b10000", "got COMMAND_OK"),
        ("polars-adbc-parquet-pg-b10000", "Invalid column: typsend"),
    ],
)
def test_the_copy_paths_are_unsupported_with_questdbs_answer(
    questdb_jar, tiny_dataset, tmp_path, name, said
):
    files = IngestFiles(
        data=tiny_dataset["parquet"],
        manifest=tiny_dataset["dir"] / f"{tiny_dataset['params'].name}.manifest.json",
        run=tmp_path / "run.json",
        actual=tmp_path / "actual.json",
        export=tmp_path / "export",
    )
    run = ingest_job(_settings(), parse_variant_name(name), files, jar=questdb_jar)
    doc = json.loads(files.run.read_text())
    assert doc["repeats"] == [] and doc["dataset"]["name"] == tiny_dataset["params"].name
    assert "FROM STDIN" in doc["unsupported"] and said in doc["unsupported"]
    assert run.extra["unsupported"] == doc["unsupported"]
    assert json.loads(files.actual.read_text())["unsupported"] == doc["unsupported"]


def test_the_pgwire_user_of_a_secured_server(questdb_jar, tiny_dataset):
    access = Access(pg_user="bench", pg_password=Secret("s3cret-pg"))
    with embedded_server(questdb_jar, startup_timeout_s=STARTUP_S, access=access) as qdb:
        job = _job(qdb, tiny_dataset, "pandas-executemany-parquet-pg-b10000", "t_pg_user")
        run_variant(job, {"name": "tiny", "rows": 2000}, repeats=1)
        assert qdb.scalar("SELECT count() FROM t_pg_user") == 2000
        qdb.access = Access(pg_user="bench", pg_password=Secret("wrong-one"))
        with pytest.raises(UserError, match="QuestDB refused the rows .*PGWire") as err:
            run_variant(job, {"name": "tiny", "rows": 2000}, repeats=1)
        assert "wrong-one" not in str(err.value) and "\n" not in str(err.value)


def test_an_external_server_takes_pg_port_and_the_pg_user_from_the_environment(
    questdb_jar, tiny_dataset, tmp_path, monkeypatch
):
    access = Access(pg_user="bench", pg_password=Secret("pg-from-env"))
    with embedded_server(questdb_jar, startup_timeout_s=STARTUP_S, access=access) as qdb:
        monkeypatch.setenv("BENCH_PG_PASSWORD", "pg-from-env")
        external = {
            "mode": "external",
            "host": qdb.host,
            "http_port": qdb.http_port,
            "ilp_port": qdb.ilp_port,
            "pg_port": qdb.pg_port,
            "auth": {"pg": {"username": "bench", "password_env": "BENCH_PG_PASSWORD"}},
        }
        files = IngestFiles(
            data=tiny_dataset["parquet"],
            manifest=tiny_dataset["dir"] / f"{tiny_dataset['params'].name}.manifest.json",
            run=tmp_path / "run.json",
            actual=tmp_path / "actual.json",
            export=tmp_path / "export",
        )
        variant = parse_variant_name("pandas-to_sql-parquet-pg-b10000")
        run = ingest_job(_settings(questdb=external), variant, files)
        assert run.server["mode"] == "external" and run.rows == 2000
        assert json.loads(files.actual.read_text())["tables"]["cpu"]["row_count"] == 2000
        assert "pg-from-env" not in files.run.read_text()
        # the run's table was the prefixed one, dropped at the end
        assert not qdb.rows("SELECT table_name FROM tables() WHERE table_name ~ '^ingestbench_'")


@pytest.mark.parametrize("name", ["pandas-executemany-parquet-pg-b10000",
                                  "polars-asyncpg-parquet-pg-b10000"])  # fmt: skip
def test_tls_on_pgwire_is_unsupported_with_the_servers_answer(questdb, tiny_dataset, name):
    """QuestDB open source answers the SSLRequest with "N": a TLS config cannot use PGWire."""
    job = _job(questdb, tiny_dataset, name, "t_pg_tls")
    recreate_table(questdb, job.tables[0].spec)
    job.qdb = dataclasses.replace(questdb, access=Access(tls=True))
    with pytest.raises(Unsupported, match="takes no TLS on PGWire") as err:
        METHODS[job.variant.method]().send_pass(job, Clock())
    assert re.search("server does not support SSL|rejected SSL upgrade", str(err.value))
    assert questdb.scalar("SELECT count() FROM t_pg_tls") == 0
