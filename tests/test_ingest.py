"""Every method lands every row in a real QuestDB; user-caused failures end in one sentence."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from pathlib import Path

import psutil
import pytest

from ingestbench import runner
from ingestbench.config import validate_config
from ingestbench.errors import UserError
from ingestbench.ingest import ingest_job
from ingestbench.methods import Job
from ingestbench.runner import run_variant
from ingestbench.server import QuestDB, embedded_server
from ingestbench.variants import parse_variant_name

EVERY_METHOD = [
    "pandas-rows-parquet-http",
    "polars-rows-csv-tcp",
    "pandas-dataframe-csv-tcp",
    "polars-dataframe-parquet-http",
    "pandas-threads-parquet-tcp-w2",
    "polars-threads-csv-http-w3",
    "pandas-processes-csv-http-w2",
    "polars-processes-parquet-tcp-w2",
    "pandas-batches-parquet-http-b300",
    "polars-batches-csv-tcp-b700",
    "none-server_csv-csv-http",
    "none-server_parquet-parquet-http",
]


def _job(qdb: QuestDB, tiny_dataset, name: str, table: str, rows: int | None = None) -> Job:
    variant = parse_variant_name(name)
    n = rows or tiny_dataset["manifest"]["rows"]
    return Job(qdb, table, variant, tiny_dataset[variant.format], n, 2)


@pytest.mark.parametrize("name", EVERY_METHOD)
def test_every_method_lands_every_row(questdb, tiny_dataset, name):
    table = "t_" + name.replace("-", "_")
    job = _job(questdb, tiny_dataset, name, table)
    doc = run_variant(job, {"name": "tiny"}, "double", repeats=2)
    assert questdb.scalar(f"SELECT count() FROM {table}") == 2000
    assert questdb.scalar(f"SELECT count_distinct(hostname) FROM {table}") == 40
    # The table is recreated per repeat, so the second repeat did not double the rows.
    assert [r["cold"] for r in doc["repeats"]] == [True, False]
    for r in doc["repeats"]:
        assert set(r["phases"]) == {"read", "convert", "serialize", "send", "visible"}
        assert r["end_to_end"] == pytest.approx(
            sum(r["phases"][p] for p in ("read", "convert", "send", "visible")), abs=1e-5
        )
        assert r["server_cpu_s"] > 0 and r["peak_rss_bytes"] > 0
    if doc["variant"]["library"] == "none":
        assert doc["ilp_bytes"] is None
    else:  # about 450 bytes of ILP (protocol 2) per TSBS row
        assert 300 * 2000 < doc["ilp_bytes"] < 600 * 2000


def test_rows_method_ingests_only_the_capped_prefix(questdb, tiny_dataset):
    job = _job(questdb, tiny_dataset, "polars-rows-parquet-http", "t_capped", rows=123)
    run_variant(job, {"name": "tiny"}, "double", repeats=1)
    assert questdb.scalar("SELECT count() FROM t_capped") == 123
    # The first 123 rows of the file: epochs 0-3 of 40 hosts (rows go epoch by epoch).
    assert questdb.scalar("SELECT count_distinct(timestamp) FROM t_capped") == 4


def _config(**over):
    config = {"datasets": [{"label": "tiny", "scale": 40, "epochs": 50}],
              "variants": [{"method": "dataframe"}], "repeats": 1, **over}  # fmt: skip
    return validate_config(config)


def _outputs(tmp_path: Path) -> dict[str, Path]:
    return {"run_out": tmp_path / "run.json", "actual_out": tmp_path / "actual.json",
            "export_out": tmp_path / "export.parquet"}  # fmt: skip


def test_a_running_repeat_reports_its_phase(questdb, tiny_dataset, monkeypatch, caplog):
    monkeypatch.setattr(runner, "HEARTBEAT_S", 0.005)  # every repeat is "long" here
    job = _job(questdb, tiny_dataset, "pandas-rows-parquet-http", "t_heartbeat")
    with caplog.at_level(logging.INFO, logger="ingestbench.runner"):
        run_variant(job, {"name": "tiny"}, "double", repeats=1)
    beats = [r.getMessage() for r in caplog.records if "so far" in r.getMessage()]
    assert beats and all(
        re.fullmatch(r"pandas-rows-parquet-http repeat 0: \d+ s so far, "
                     r"(read|convert|send|visible|serialize \(the separate pass\))", b)
        for b in beats
    ), beats  # fmt: skip


def test_ingest_job_writes_run_actual_and_export(questdb_jar, tiny_dataset, tmp_path):
    out = _outputs(tmp_path)
    manifest = tiny_dataset["dir"] / f"{tiny_dataset['params'].name}.manifest.json"
    doc = ingest_job(_config(), parse_variant_name("pandas-dataframe-parquet-http"),
                     tiny_dataset["parquet"], manifest, jar=questdb_jar, **out)  # fmt: skip
    assert json.loads(out["run_out"].read_text()) == doc
    assert doc["schema_version"] == 2 and doc["rows"] == 2000
    assert doc["dataset"]["name"] == tiny_dataset["params"].name
    assert doc["server"]["version"].startswith("Build Information: QuestDB 9.3.4")
    assert json.loads(out["actual_out"].read_text())["aggregates"]["row_count"] == 2000
    assert out["export_out"].stat().st_size > 0


def test_an_unreachable_server_is_one_sentence_and_no_run_file(tiny_dataset, tmp_path):
    config = _config(questdb={"mode": "external", "host": "127.0.0.1", "http_port": 1})
    out = _outputs(tmp_path)
    manifest = tiny_dataset["dir"] / f"{tiny_dataset['params'].name}.manifest.json"
    with pytest.raises(UserError, match="unreachable .*; check that the server is running"):
        ingest_job(config, parse_variant_name("pandas-dataframe-parquet-http"),
                   tiny_dataset["parquet"], manifest, **out)  # fmt: skip
    assert not any(p.exists() for p in out.values())


def test_rows_the_server_rejects_show_its_message(questdb, tiny_dataset):
    job = _job(questdb, tiny_dataset, "pandas-dataframe-parquet-http", "t_rejects")
    original = job.qdb.sql

    def sabotage(query, **kw):  # a tag cannot land in a DOUBLE column
        if query.startswith("CREATE TABLE"):
            query = query.replace("hostname SYMBOL", "hostname DOUBLE")
        return original(query, **kw)

    job.qdb = QuestDB(**{**questdb.__dict__})
    job.qdb.sql = sabotage
    with pytest.raises(UserError, match="QuestDB refused the rows .*hostname") as err:
        run_variant(job, {"name": "tiny"}, "double", repeats=1)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_truncated_input_file_is_one_sentence(questdb, tiny_dataset, tmp_path, fmt):
    broken = tmp_path / f"broken.{fmt}"
    data = tiny_dataset[fmt].read_bytes()
    broken.write_bytes(data[: len(data) // 2] if fmt == "parquet" else data[:50])
    variant = parse_variant_name(f"pandas-dataframe-{fmt}-http")
    job = Job(questdb, "t_broken", variant, broken, 2000, 2)
    with pytest.raises(UserError, match="corrupted or truncated|lacks the column"):
        run_variant(job, {"name": "tiny"}, "double", repeats=1)


def test_the_server_dying_mid_send_is_one_sentence(questdb_jar, tiny_dataset, tmp_path):
    with embedded_server(questdb_jar, log_path=tmp_path / "dying.log") as qdb:
        job = _job(qdb, tiny_dataset, "pandas-rows-parquet-http", "t_dying")

        def kill_soon():
            time.sleep(0.5)
            import psutil

            psutil.Process(qdb.pid).kill()

        # A slow method over many repeats, so the kill lands during a send.
        threading.Thread(target=kill_soon, daemon=True).start()
        with pytest.raises(UserError) as err:
            run_variant(job, {"name": "tiny"}, "double", repeats=50)
    assert "\n" not in str(err.value)
    assert "QuestDB" in str(err.value)


def test_external_mode_uses_the_running_server_and_starts_none(questdb, tiny_dataset, tmp_path):
    config = _config(
        questdb={"mode": "external", "host": questdb.host, "http_port": questdb.http_port,
                 "ilp_port": questdb.ilp_port, "copy_root": str(questdb.copy_root)},
        table="t_external",
    )  # fmt: skip
    manifest = tiny_dataset["dir"] / f"{tiny_dataset['params'].name}.manifest.json"
    java_before = {p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == "java"}
    for name in ("polars-dataframe-csv-tcp", "none-server_parquet-parquet-http"):
        doc = ingest_job(config, parse_variant_name(name), tiny_dataset[name.split("-")[2]],
                         manifest, tmp_path / f"{name}.json")  # fmt: skip
        assert doc["server"]["mode"] == "external"
        assert all(r["server_cpu_s"] is None for r in doc["repeats"])
        assert questdb.scalar("SELECT count() FROM t_external") == 2000
    java_after = {p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == "java"}
    assert java_after <= java_before
