"""I/O at scale: the disk check, files handed to the server, exports in pieces, bounded DuckDB."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ingestbench.ingest.methods import Job, SendError, cpu_job
from ingestbench.ingest.runner import run_repeat
from ingestbench.results.records import SCHEMA_VERSION
from ingestbench.server.handle import QuestDB
from ingestbench.server.process import embedded_server
from ingestbench.server.table import wait_visible
from ingestbench.server.uploads import placed_in
from ingestbench.storage import disk
from ingestbench.validate import (
    expected_aggregates,
    export_table,
    questdb_aggregates,
    validate_files,
    validate_run,
)
from ingestbench.variants import parse_variant_name
from tests.helpers import REPO, STARTUP_S, cpu_aggregates, snakemake_command

GB = 10**9


# ------------------------------------------------------------------------------ disk check


def test_the_disk_check_stops_on_a_shortage_with_one_sentence(tmp_path):
    needs = disk.workflow_needs([(100_000_000, ["parquet", "csv"])], [100_000_000], tmp_path)
    with pytest.raises(disk.DiskSpaceError) as info:
        disk.check_needs(needs, free=lambda path: 5 * GB)  # a simulated, nearly full disk
    message = str(info.value)
    # 100M rows: Parquet 8 GB + CSV 28 GB; one job: server data 30 GB, export and spill 14 GB.
    assert message.startswith(f"not enough disk space under {tmp_path.parent}")
    assert "this run needs about " in message and "datasets 36.0 GB" in message
    assert "and 5.0 GB is free; free some space" in message
    assert "\n" not in message


def test_the_disk_check_passes_when_space_suffices_and_counts_nothing_done(tmp_path):
    disk.check_needs(disk.workflow_needs([(1_000_000, ["parquet"])], [], tmp_path),
                     free=lambda path: 1 * GB)  # fmt: skip
    # An external server keeps its data on its own disk.
    needs = disk.workflow_needs([], [10**6], tmp_path, embedded_server=False)
    assert [n.what for n in needs if n.nbytes] == ["one validation export and spill"]
    # Nothing left to generate or ingest needs nothing, however full the disk.
    disk.check_needs(disk.workflow_needs([(10**9, [])], [], tmp_path), free=lambda path: 0)


def test_the_workflow_checks_the_disk_before_any_job(tmp_path):
    for name in ("Snakefile", "config.yaml", "requirements.lock"):
        shutil.copy(REPO / name, tmp_path / name)
    for name in ("rules", "scripts", "schemas", "profiles", "report", "envs", "src"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    config = tmp_path / "huge.yaml"  # 4e11 rows: more than any disk here holds
    config.write_text(
        "datasets: [{label: main, scale: 4000, epochs: 100000000}]\n"
        "variants: [{library: pandas, method: dataframe, format: parquet, transport: http}]\n"
    )
    cmd = snakemake_command(config, cores=1)
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode != 0
    assert "not enough disk space under" in run.stderr and "GB is free" in run.stderr
    assert not (tmp_path / "results" / "data").exists()  # no job ran
    dry = subprocess.run([*cmd, "-n"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr[-2000:]  # a dry run plans, it does not check


def test_ingestbench_generate_checks_the_disk_first(tmp_path):
    cmd = [str(Path(sys.executable).with_name("ingestbench")), "generate", "--scale", "4000",
           "--epochs", "100000000", "--format", "parquet", "--out", str(tmp_path)]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert "not enough disk space under" in run.stderr
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------------------------ server files


def test_a_placed_file_is_a_hard_link_and_goes_afterwards_also_on_failure(tmp_path):
    source = tmp_path / "data.parquet"
    source.write_bytes(b"x" * 1000)
    root = tmp_path / "import"
    root.mkdir()
    with placed_in(root, source) as placed:
        assert os.stat(placed).st_ino == os.stat(source).st_ino  # one copy on disk
    assert not placed.exists() and source.exists()
    with pytest.raises(RuntimeError), placed_in(root, source) as placed:
        raise RuntimeError("the import failed")
    assert not placed.exists() and source.exists()


@pytest.mark.skipif(
    not Path("/dev/shm").is_dir() or os.stat("/dev/shm").st_dev == os.stat("/tmp").st_dev,
    reason="needs a second file system",
)
def test_a_placed_file_across_file_systems_is_copied_and_says_so(tmp_path, caplog):
    source = tmp_path / "data.parquet"
    source.write_bytes(b"x" * 1000)
    root = Path(tempfile_dir := os.path.join("/dev/shm", f"ingestbench-test-{os.getpid()}"))
    root.mkdir()
    try:
        with caplog.at_level(logging.WARNING), placed_in(root, source) as placed:
            assert placed.read_bytes() == source.read_bytes()
            assert os.stat(placed).st_ino != os.stat(source).st_ino
        assert "copying it instead" in caplog.text
        assert not placed.exists()
    finally:
        shutil.rmtree(tempfile_dir, ignore_errors=True)


def test_an_upload_is_streamed_in_big_reads_with_its_length(tmp_path, monkeypatch):
    """The multipart body arrives whole, with Content-Length (not chunked), read from the file
    in pieces of at most UPLOAD_READ_BYTES (here shrunk, so that the file takes several)."""
    import email.parser
    import http.server
    import threading

    from ingestbench.server import uploads as server_files

    got: dict = {}

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            got["headers"] = dict(self.headers)
            got["body"] = self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    reads: list[int] = []
    read = server_files.MultipartEncoder.read
    monkeypatch.setattr(server_files.MultipartEncoder, "read",
                        lambda self, n=-1: reads.append(n) or read(self, n))  # fmt: skip
    monkeypatch.setattr(server_files, "UPLOAD_READ_BYTES", 4096)
    data = tmp_path / "data.csv"
    data.write_bytes(b"".join(b"host_%d,%d\n" % (i, i) for i in range(5000)))
    server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.handle_request, daemon=True).start()
    try:
        qdb = QuestDB("127.0.0.1", server.server_port, 9009)  # its request: as server_csv's
        response = server_files.upload_multipart(qdb.request, "/imp", {"name": "t"},
                                                 {"schema": "[]"}, "data", data)  # fmt: skip
    finally:
        server.server_close()
    assert response.status_code == 200
    assert "Transfer-Encoding" not in got["headers"]
    assert int(got["headers"]["Content-Length"]) == len(got["body"])
    message = email.parser.BytesParser().parsebytes(
        b"Content-Type: " + got["headers"]["Content-Type"].encode() + b"\r\n\r\n" + got["body"]
    )
    parts = {part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
             for part in message.get_payload()}  # fmt: skip
    assert parts == {"schema": b"[]", "data": data.read_bytes()}
    assert set(reads) == {4096} and len(reads) > len(data.read_bytes()) // 4096


def _run_document(variant, rows: int) -> dict:
    """A run document as the ingest job writes it, without repeats (validation reads no more)."""
    return {"schema_version": SCHEMA_VERSION, "dataset": {"name": "tiny", "rows": rows},
            "variant": variant.to_dict(), "rows": rows, "table_rows": {"cpu": rows},
            "repeats": []}  # fmt: skip


def _ingest_and_validate(qdb, tiny_dataset, name, table, tmp_path, piece_rows=None):
    variant = parse_variant_name(name)
    rows = tiny_dataset["manifest"]["rows"]
    job = cpu_job(qdb, table, variant, tiny_dataset[variant.format], rows, 2, field_type="double")
    run_repeat(job, 0)
    wait_visible(qdb, table, rows)
    export = tmp_path / f"{table}-export"  # a directory of each table's export
    export_table(qdb, table, export / "cpu", piece_rows=piece_rows)
    run = _run_document(variant, rows)
    expected = cpu_aggregates(expected_aggregates(tiny_dataset["parquet"]))
    result = validate_run(run, tiny_dataset["parquet"], expected,
                          cpu_aggregates(questdb_aggregates(qdb, table)), export)  # fmt: skip
    return result, export / "cpu"


@pytest.mark.parametrize(
    "name",
    ["none-server_csv-csv-http", "none-server_copy-csv-http", "none-server_parquet-parquet-http"],
)
def test_server_side_imports_validate_row_for_row(questdb, tiny_dataset, tmp_path, name):
    table = "t_" + name.split("-")[1]
    result, _ = _ingest_and_validate(questdb, tiny_dataset, name, table, tmp_path, 10**9)
    assert result["passed"], result["failed_checks"]
    for fmt in ("csv", "parquet"):
        assert not (Path(questdb.copy_root) / tiny_dataset[fmt].name).exists()  # it went


def test_a_copy_of_a_damaged_csv_is_one_sentence_and_leaves_the_file_in_place(
    questdb, tiny_dataset, tmp_path
):
    damaged = tmp_path / tiny_dataset["csv"].name
    lines = tiny_dataset["csv"].read_text().splitlines(keepends=True)
    cells = lines[500].split(",")
    cells[10] = "not-a-number"  # the first field, a DOUBLE column
    lines[500] = ",".join(cells)
    damaged.write_text("".join(lines))
    variant = parse_variant_name("none-server_copy-csv-http")
    job = cpu_job(
        questdb, "t_copy_damaged", variant, damaged, len(lines) - 1, 2, field_type="double"
    )
    with pytest.raises(SendError) as caught:
        run_repeat(job, 0)
    assert (
        f"QuestDB's COPY rejected 1 of the {len(lines) - 1:,} rows of {damaged.name} "
        f"({len(lines) - 2:,} imported); the first it could not read is row 500 (column "
        f"'usage_user'): {lines[500].strip()[:200]!r}; check that the file is intact, then rerun."
    ) in str(caught.value)
    assert damaged.exists() and not (Path(questdb.copy_root) / damaged.name).exists()


# ------------------------------------------------------------------------------ export, DuckDB


def test_an_export_in_pieces_validates_row_for_row(questdb, tiny_dataset, tmp_path):
    result, export = _ingest_and_validate(questdb, tiny_dataset, "pandas-dataframe-parquet-http",
                                          "t_pieces", tmp_path, piece_rows=333)  # fmt: skip
    pieces = sorted(export.glob("*.parquet"))
    assert [pq.read_metadata(p).num_rows for p in pieces] == [333] * 6 + [2]  # 2,000 rows
    assert not list(export.parent.glob(".*tmp*"))
    assert result["passed"], result["failed_checks"]
    check = next(c for c in result["checks"] if c["name"] == "row_level")
    assert check["actual"] == {"rows": 2000, "missing": 0, "unexpected": 0}


def test_a_damaged_table_fails_the_row_check_through_the_pieces(questdb, tiny_dataset, tmp_path):
    _ingest_and_validate(questdb, tiny_dataset, "pandas-dataframe-parquet-http", "t_dmg",
                         tmp_path)  # fmt: skip
    questdb.sql("UPDATE t_dmg SET usage_user = usage_user + 1 WHERE hostname = 'host_3'")
    questdb.sql("SELECT wait_wal_table('t_dmg')")
    export = tmp_path / "dmg-export"
    export_table(questdb, "t_dmg", export / "cpu", piece_rows=500)
    run = _run_document(parse_variant_name("pandas-dataframe-parquet-http"), 2000)
    expected = cpu_aggregates(expected_aggregates(tiny_dataset["parquet"]))
    actual = cpu_aggregates(questdb_aggregates(questdb, "t_dmg"))
    result = validate_run(run, tiny_dataset["parquet"], expected, actual, export)
    assert "row_level" in result["failed_checks"]
    assert result["differing_rows"] == {"missing": 50, "unexpected": 50}  # 50 epochs of host_3


def test_validation_runs_under_a_memory_limit_and_cleans_its_spill(questdb, tiny_dataset,
                                                                    tmp_path):  # fmt: skip
    _, export = _ingest_and_validate(questdb, tiny_dataset, "polars-dataframe-csv-tcp", "t_mem",
                                     tmp_path, piece_rows=700)  # fmt: skip
    files = {k: tmp_path / f"{k}.json" for k in ("run", "actual", "expected")}
    run = _run_document(parse_variant_name("polars-dataframe-csv-tcp"), 2000)
    files["run"].write_text(json.dumps(run))
    files["actual"].write_text(json.dumps(cpu_aggregates(questdb_aggregates(questdb, "t_mem"))))
    files["expected"].write_text(
        json.dumps(cpu_aggregates(expected_aggregates(tiny_dataset["parquet"])))
    )
    spill_root = tmp_path / "results" / "tmp" / "duckdb"
    result = validate_files(**files, export=export.parent, parquet=tiny_dataset["parquet"],
                            output=tmp_path / "out.json", spill_root=spill_root,
                            validation={"memory_limit": "64MB"})  # fmt: skip
    assert result["passed"], result["failed_checks"]
    assert spill_root.is_dir() and not list(spill_root.iterdir())


# ------------------------------------------------------------------------------ data directory


def test_a_failing_job_still_deletes_its_server_data_directory(questdb_jar, tmp_path):
    with (
        pytest.raises(RuntimeError, match="the job failed"),
        embedded_server(
            questdb_jar, startup_timeout_s=STARTUP_S, log_path=tmp_path / "s.log"
        ) as qdb,
    ):
        root = qdb.data_dir
        qdb.sql("CREATE TABLE t (x INT)")
        raise RuntimeError("the job failed")
    assert not root.exists()


def test_keep_data_keeps_the_data_directory(questdb_jar, tmp_path):
    with embedded_server(
        questdb_jar, keep_data=True, startup_timeout_s=STARTUP_S, log_path=tmp_path / "s.log"
    ) as qdb:
        root = qdb.data_dir
    try:
        assert (root / "db").is_dir()
        assert not (root / "tmp").exists()  # the unpacked native libraries are not data
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_copy_while_another_runs_waits_for_it(questdb, tiny_dataset, tmp_path):
    """QuestDB runs one COPY at a time and refuses the next while the last is being released
    ("another import may be in progress"): the next is retried, and every table lands whole."""
    from concurrent.futures import ThreadPoolExecutor

    from ingestbench.ingest.methods import TablePart
    from ingestbench.ingest.methods.server_side import ServerCopy
    from ingestbench.server.table import recreate_table
    from ingestbench.server.uploads import placed_in
    from ingestbench.tsbs.columns import cpu_spec

    variant = parse_variant_name("none-server_copy-csv-http")
    parts = [TablePart(cpu_spec("double", f"t_copy_{i}"), tiny_dataset["csv"], 2000)
             for i in range(4)]  # fmt: skip
    job = Job(questdb, variant, tiny_dataset["csv"], tuple(parts), 2)

    def copy(part: TablePart) -> None:
        recreate_table(questdb, part.spec)
        target = tmp_path / f"{part.spec.table}.csv"  # a name of its own in the copy root
        target.write_bytes(tiny_dataset["csv"].read_bytes())
        with placed_in(Path(questdb.copy_root), target) as placed:
            ServerCopy._copy(job, part, placed.name)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(copy, parts))  # four at once: some meet another in progress
    for part in parts:
        assert questdb.scalar(f"SELECT count() FROM {part.spec.table}") == 2000


def test_kept_exports_count_once_per_pending_job(tmp_path):
    """With validation.keep_export every job's export stays: the check counts each one."""
    rows = [1_000_000, 1_000_000, 2_000_000]
    kept = {n.what: n.nbytes for n in disk.workflow_needs([], rows, tmp_path, keep_exports=True)}
    once = {n.what: n.nbytes for n in disk.workflow_needs([], rows, tmp_path)}
    assert kept["the kept validation exports and a spill"] == (
        sum(rows) * disk.EXPORT_BYTES_PER_ROW + max(rows) * disk.SPILL_BYTES_PER_ROW
    )
    assert once["one validation export and spill"] == max(rows) * (
        disk.EXPORT_BYTES_PER_ROW + disk.SPILL_BYTES_PER_ROW
    )
