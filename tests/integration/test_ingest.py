"""Every method lands every row in a real QuestDB; user-caused failures end in one sentence."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import resource
import threading
import time
from pathlib import Path

import psutil
import pytest

from ingestbench.catalogue import CATALOGUE
from ingestbench.config import Settings, validate_config
from ingestbench.errors import UserError
from ingestbench.ingest import runner
from ingestbench.ingest.job import IngestFiles, ingest_job
from ingestbench.ingest.methods import Job, cpu_job
from ingestbench.ingest.runner import run_variant
from ingestbench.ingest.timing import whole_file_end_to_end
from ingestbench.results.records import SCHEMA_VERSION
from ingestbench.server.handle import QuestDB
from ingestbench.server.process import embedded_server
from ingestbench.variants import parse_variant_name
from tests.helpers import QUESTDB_VERSION, STARTUP_S, sample_variants

#: Every method of the catalogue's client and server families (ilp_file: test_ilp.py; SQL:
#: test_pgwire.py), two variants each and the first read whole.
EVERY_METHOD = [name for m in CATALOGUE if m.family in ("client", "server")
                for name in sample_variants(m.name, 2)]  # fmt: skip


def _job(qdb: QuestDB, tiny_dataset, name: str, table: str, rows: int | None = None) -> Job:
    variant = parse_variant_name(name)
    n = rows or tiny_dataset["manifest"]["rows"]
    return cpu_job(qdb, table, variant, tiny_dataset[variant.format], n, 2, field_type="double")


@pytest.mark.parametrize("name", EVERY_METHOD)
def test_every_method_lands_every_row(questdb, tiny_dataset, name):
    table = "t_" + name.replace("-", "_")
    job = _job(questdb, tiny_dataset, name, table)
    doc = run_variant(job, {"name": "tiny", "rows": 2000}, repeats=2)
    assert questdb.scalar(f"SELECT count() FROM {table}") == 2000
    assert questdb.scalar(f"SELECT count_distinct(hostname) FROM {table}") == 40
    # The table is recreated per repeat, so the second repeat did not double the rows.
    assert [r["cold"] for r in doc["repeats"]] == [True, False]
    for r in doc["repeats"]:
        assert set(r["phases"]) == {"read", "convert", "serialize", "send", "visible"}
        busy = sum(r["phases"][p] for p in ("read", "convert", "send", "visible"))
        if doc["variant"]["chunk_rows"] is None:  # one phase after the other
            assert r["end_to_end"] == pytest.approx(busy, abs=1e-5) and r["overlap"] == 1.0
        else:  # overlapping phases: end to end is wall time
            assert r["overlap"] == pytest.approx(busy / r["end_to_end"], abs=1e-3)
        assert r["server_cpu_s"] > 0 and r["server_rss_bytes"] > 0
        assert r["client_rss_bytes"] > 0
        # QuestDB's own figure for the table once visible: at least its 10 fields of 8 bytes.
        assert r["table_disk_bytes"] > 2000 * 10 * 8
        if doc["variant"]["method"] != "processes":  # no workers: the client is this process
            # The session's server is a child of this process (hundreds of MiB), but not part of
            # the client. (The kernel's high-water mark lags /proc's RSS by a few pages.)
            peak_here = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            assert (
                r["client_rss_bytes"] <= peak_here + 16 * 2**20 < r["server_rss_bytes"] + peak_here
            )
        assert "peak_rss_bytes" not in r
    if doc["variant"]["library"] == "none":
        assert doc["ilp_bytes"] is None
    else:  # about 450 bytes of ILP (protocol 2) per TSBS row
        assert 300 * 2000 < doc["ilp_bytes"] < 600 * 2000


def test_a_phase_timed_twice_stops_the_repeat_before_any_figure():
    phases = {"read": 0.2, "convert": 0.1, "serialize": 5.0, "send": 0.6, "visible": 0.1}
    # The serialize pass runs apart, after the others: never part of end to end.
    assert whole_file_end_to_end(phases, elapsed=1.0) == pytest.approx(1.0)
    # A send counted as its busy time and again as its lap adds up to more than the wall time.
    with pytest.raises(RuntimeError, match="a phase was timed twice"):
        whole_file_end_to_end({**phases, "send": 1.2}, elapsed=1.0)


def test_rows_method_ingests_only_the_capped_prefix(questdb, tiny_dataset):
    job = _job(questdb, tiny_dataset, "polars-rows-parquet-http", "t_capped", rows=123)
    run_variant(job, {"name": "tiny", "rows": 2000}, repeats=1)
    assert questdb.scalar("SELECT count() FROM t_capped") == 123
    # The first 123 rows of the file: epochs 0-3 of 40 hosts (rows go epoch by epoch).
    assert questdb.scalar("SELECT count_distinct(timestamp) FROM t_capped") == 4


def _config(**over):
    config = {"datasets": [{"label": "tiny", "scale": 40, "epochs": 50}],
              "variants": [{"method": "dataframe"}], "repeats": 1, **over}  # fmt: skip
    return Settings.from_config(validate_config(config))


def _files(tiny_dataset, tmp_path: Path, fmt: str = "parquet") -> IngestFiles:
    return IngestFiles(
        data=tiny_dataset[fmt],
        manifest=tiny_dataset["dir"] / f"{tiny_dataset['params'].name}.manifest.json",
        run=tmp_path / "run.json",
        actual=tmp_path / "actual.json",
        export=tmp_path / "export",
    )


def test_a_running_repeat_reports_its_phase(questdb, tiny_dataset, monkeypatch, caplog):
    monkeypatch.setattr(runner, "HEARTBEAT_S", 0.005)  # every repeat is "long" here
    job = _job(questdb, tiny_dataset, "pandas-rows-parquet-http", "t_heartbeat")
    with caplog.at_level(logging.INFO, logger="ingestbench.ingest.runner"):
        run_variant(job, {"name": "tiny", "rows": 2000}, repeats=1)
    beats = [r.getMessage() for r in caplog.records if "so far" in r.getMessage()]
    assert beats and all(
        re.fullmatch(r"pandas-rows-parquet-http repeat 0: \d+ s so far, "
                     r"(read|convert|send|visible|serialize \(the separate pass\))", b)
        for b in beats
    ), beats  # fmt: skip


def test_ingest_job_writes_run_actual_and_export(questdb_jar, tiny_dataset, tmp_path):
    files = _files(tiny_dataset, tmp_path)
    run = ingest_job(_config(), parse_variant_name("pandas-dataframe-parquet-http"), files,
                     jar=questdb_jar)  # fmt: skip
    assert json.loads(files.run.read_text()) == run.to_dict()
    assert run.schema_version == SCHEMA_VERSION and run.rows == 2000
    assert run.dataset.name == tiny_dataset["params"].name
    assert run.server["version"].startswith(f"Build Information: QuestDB {QUESTDB_VERSION}")
    assert run.table_rows == {"cpu": 2000}  # keyed by the dataset's table
    assert json.loads(files.actual.read_text())["tables"]["cpu"]["row_count"] == 2000
    # a directory per table, each in pieces
    assert [p.name for p in (files.export / "cpu").iterdir()] == ["part-00000.parquet"]


def test_an_unreachable_server_is_one_sentence_and_no_run_file(tiny_dataset, tmp_path):
    config = _config(questdb={"mode": "external", "host": "127.0.0.1", "http_port": 1})
    files = _files(tiny_dataset, tmp_path)
    with pytest.raises(UserError, match="unreachable .*; check that the server is running"):
        ingest_job(config, parse_variant_name("pandas-dataframe-parquet-http"), files)
    assert not any(p.exists() for p in (files.run, files.actual, files.export))


@pytest.mark.parametrize(
    "name", ["pandas-dataframe-parquet-http", "polars-vectorized-parquet-http-w2"]
)
def test_rows_the_server_rejects_show_its_message(questdb, tiny_dataset, name):
    job = _job(questdb, tiny_dataset, name, "t_rejects")
    original = job.qdb.sql

    def sabotage(query, **kw):  # a tag cannot land in a DOUBLE column
        if query.startswith("CREATE TABLE"):
            query = query.replace("hostname SYMBOL", "hostname DOUBLE")
        return original(query, **kw)

    job.qdb = dataclasses.replace(questdb)
    job.qdb.sql = sabotage
    with pytest.raises(UserError, match="QuestDB refused (the rows|a block) .*hostname") as err:
        run_variant(job, {"name": "tiny", "rows": 2000}, repeats=1)
    assert "\n" not in str(err.value)


def test_the_vectorized_encoder_refuses_protocol_1_in_one_sentence(questdb, tiny_dataset):
    job = _job(questdb, tiny_dataset, "pandas-vectorized-parquet-tcp-w2", "t_protocol1")
    job.protocol_version = 1
    with pytest.raises(UserError, match="writes ILP protocol 2 .*ilp_protocol_version: 2") as err:
        run_variant(job, {"name": "tiny", "rows": 2000}, repeats=1)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_truncated_input_file_is_one_sentence(questdb, tiny_dataset, tmp_path, fmt):
    broken = tmp_path / f"broken.{fmt}"
    data = tiny_dataset[fmt].read_bytes()
    broken.write_bytes(data[: len(data) // 2] if fmt == "parquet" else data[:50])
    variant = parse_variant_name(f"pandas-dataframe-{fmt}-http")
    job = cpu_job(questdb, "t_broken", variant, broken, 2000, 2, field_type="double")
    with pytest.raises(UserError, match="corrupted or truncated|lacks the column"):
        run_variant(job, {"name": "tiny", "rows": 2000}, repeats=1)


def test_the_server_dying_mid_send_is_one_sentence(questdb_jar, tiny_dataset, tmp_path):
    with embedded_server(
        questdb_jar, startup_timeout_s=STARTUP_S, log_path=tmp_path / "dying.log"
    ) as qdb:
        job = _job(qdb, tiny_dataset, "pandas-rows-parquet-http", "t_dying")

        def kill_soon():
            time.sleep(0.5)
            import psutil

            psutil.Process(qdb.pid).kill()

        # A slow method over many repeats, so the kill lands during a send.
        threading.Thread(target=kill_soon, daemon=True).start()
        with pytest.raises(UserError) as err:
            run_variant(job, {"name": "tiny", "rows": 2000}, repeats=50)
    assert "\n" not in str(err.value)
    assert "QuestDB" in str(err.value)


def _our_java() -> set[int]:
    """Java processes this test session started (the machine may run other people's servers)."""
    return {p.pid for p in psutil.Process().children(recursive=True) if p.name() == "java"}


def test_external_mode_uses_the_running_server_and_starts_none(questdb, tiny_dataset, tmp_path):
    config = _config(
        questdb={"mode": "external", "host": questdb.host, "http_port": questdb.http_port,
                 "ilp_port": questdb.ilp_port, "copy_root": str(questdb.copy_root),
                 "keep_tables": True},
        table="t_external",
    )  # fmt: skip
    java_before = _our_java()
    kept = (
        "SELECT table_name FROM tables() WHERE table_name ~ '^ingestbench_[0-9a-f]{8}_t_external$'"
    )
    for name in ("polars-dataframe-csv-tcp", "none-server_parquet-parquet-http"):
        files = _files(tiny_dataset, tmp_path, name.split("-")[2])
        run = ingest_job(config, parse_variant_name(name), files)
        assert run.server["mode"] == "external"
        assert all(r.server_cpu_s is None for r in run.repeats)
        assert all(r.server_rss_bytes is None for r in run.repeats)
        # The run's own table (a name of its own, kept by keep_tables) holds the dataset.
        [[table]] = questdb.rows(kept)
        assert questdb.scalar(f"SELECT count() FROM {table}") == 2000
        questdb.sql(f"DROP TABLE {table}")
    assert not questdb.rows("SELECT table_name FROM tables() WHERE table_name = 't_external'")
    java_after = _our_java()
    assert java_after <= java_before
