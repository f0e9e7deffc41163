"""Faults on the server's side, against real servers: rows the server made up or changed, a full
disk under its data, a server that stops answering, a job killed too hard to clean up, and two
runs on one machine. Each test checks the sentence the user sees, that no result claims success
and that no process it started is left. Run with `make test-faults`; docs/faults.md quotes the
sentences.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.faults.test_faults import (
    EXIT_USER_ERROR,
    ProcessTree,
    _alive,
    _external,
    _ingest_files,
    assert_no_result,
    copy_cached_jar,
    error_sentence,
    finish,
    ilp_connected,
    ingest_cli,
    wait_for,
    write_config,
)


@pytest.fixture(scope="module")
def jar_cache(questdb_jar, tmp_path_factory):
    """A private copy of the cached jar. Its JVM AOT cache is made by the first job, or not (on a
    loaded machine the recording server may outlast its stop): these faults do not depend on it."""
    return copy_cached_jar(questdb_jar, tmp_path_factory.mktemp("private") / "cache").parent


def dataset_copy(dataset, into: Path) -> Path:
    """The dataset's manifest and Parquet under `into` (as the workflow keeps them); the path
    of its Parquet."""
    into.mkdir(parents=True, exist_ok=True)
    name = dataset["params"].name
    for suffix in (".manifest.json", ".parquet"):
        shutil.copyfile(dataset["dir"] / f"{name}{suffix}", into / f"{name}{suffix}")
    return into / f"{name}.parquet"


def data_dir_of(server) -> Path:
    cmdline = server.cmdline()
    return Path(cmdline[cmdline.index("-d") + 1])


# ---------------------------------------------------------------------------------------------
# Rows the server made up or changed: caught by the repeat's checks, not only by the workflow's
# validation (which a run by hand never reaches)


def test_a_malformed_csv_line_through_imp_fails_the_job(tiny_dataset, jar_cache, tmp_path):
    parquet = dataset_copy(tiny_dataset, tmp_path / "data")
    data = parquet.with_suffix(".csv")
    lines = tiny_dataset["csv"].read_text().splitlines(keepends=True)
    lines[1000] = "host_1,not,a,row\n"  # /imp stores what it can of it, and says OK
    data.write_text("".join(lines))
    variant = "none-server_csv-csv-http"
    config = write_config(tmp_path / "c.yaml", warmup_rows=0,
                          questdb={"cache_dir": str(jar_cache)})  # fmt: skip
    out = tmp_path / "run.json"
    proc = ingest_cli(variant, data, config, out, tmp_path)
    code, stderr = finish(proc, ProcessTree(proc))
    assert code == EXIT_USER_ERROR
    message = error_sentence(stderr)
    assert re.fullmatch(
        r"ERROR: none-server_csv-csv-http repeat 0: table cpu differs from its source in "
        r"rows_per_key \(host_1: expected 50, found 51, host_\d+: expected 50, found 49\) "
        r"\(and \d+ other checks\), so this run is no result: see the server log for what it did "
        r"with the rows, then rerun\.",
        message,
    ), message
    assert_no_result(out)


def test_a_value_changed_in_an_early_repeat_is_caught(questdb, tiny_dataset, tmp_path, monkeypatch):
    """A fault that keeps the row count (a value changed after it landed) in the first of three
    repeats: the job fails there, and no run file holds its timing."""
    from ingestbench.ingest import runner
    from ingestbench.ingest.job import ingest_job
    from ingestbench.validate.repeat_checks import RepeatCheckFailed
    from ingestbench.variants import parse_variant_name

    table, calls = "t_changed", []
    visible = runner.wait_visible

    def visible_then_changed(qdb, name, rows, *args):
        count = visible(qdb, name, rows, *args)
        calls.append(name)
        if len(calls) == 1:  # the first repeat: one host's usage_user changed on the server
            qdb.sql(f"UPDATE {name} SET usage_user = usage_user + 1 WHERE hostname = 'host_3'")
            visible(qdb, name, rows, *args)
        return count

    monkeypatch.setattr(runner, "wait_visible", visible_then_changed)
    settings = dataclasses.replace(_external(questdb, table), repeats=3)
    files = _ingest_files(tiny_dataset, tmp_path)
    variant = parse_variant_name("pandas-dataframe-parquet-http")
    with pytest.raises(RepeatCheckFailed) as caught:
        ingest_job(settings, variant, files)
    assert re.fullmatch(
        # on the (external) test server the run's table has a name of its own
        r"pandas-dataframe-parquet-http repeat 0: table ingestbench_[0-9a-f]{8}_t_changed differs "
        r"from its source in "
        r"sum:usage_user \(expected [\d.]+, found [\d.]+\)( \(and \d+ other checks\))?, so this "
        r"run is no result: see the server log for what it did with the rows, then rerun\.",
        str(caught.value),
    ), str(caught.value)
    assert len(calls) == 1 and calls[0].endswith(f"_{table}")  # the later repeats never ran
    assert not files.run.exists() and not files.actual.exists()


# ---------------------------------------------------------------------------------------------
# The server's disk fills


@pytest.fixture
def small_disk(tmp_path):
    """A 256 MiB tmpfs: room for a server to start, not for the big dataset's table."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_disk_filled_mid_ingest_gives_the_cause(big_dataset, jar_cache, small_disk, tmp_path):
    variant = "pandas-dataframe-parquet-http"
    config = write_config(tmp_path / "c.yaml", warmup_rows=0,
                          questdb={"cache_dir": str(jar_cache)})  # fmt: skip
    out = tmp_path / "run.json"
    env = {**os.environ, "TMPDIR": str(small_disk)}  # where the server keeps its data
    proc = ingest_cli(variant, big_dataset["parquet"], config, out, tmp_path, env=env)
    code, stderr = finish(proc, ProcessTree(proc))
    assert code == EXIT_USER_ERROR
    message, data = error_sentence(stderr), re.escape(str(small_disk))
    assert re.fullmatch(
        # As the server meets the full disk first: applying the WAL (the table is suspended),
        # or writing the rows into it (the send fails).
        rf"ERROR: (QuestDB suspended the WAL of table cpu \(DISK FULL: No space left [^)]*\), "
        rf"its rows are not all in: the server's data directory {data}/ingestbench-questdb-\w+ "
        rf"is on a disk with |QuestDB could not write the rows: the disk of its data directory "
        rf"{data}/ingestbench-questdb-\w+ is full \()[\d,]+ MiB free\)?: free space there or "
        rf"point TMPDIR at a bigger disk, then rerun\.",
        message,
    ), message
    assert_no_result(out)
    assert list(small_disk.iterdir()) == []  # no data directory left behind


def test_a_full_disk_at_server_start_says_so(tiny_dataset, jar_cache, small_disk, tmp_path):
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (250 * 2**20))  # 6 MiB left: too little for a server
    variant = "pandas-dataframe-parquet-http"
    config = write_config(tmp_path / "c.yaml", questdb={"cache_dir": str(jar_cache)})
    out = tmp_path / "run.json"
    env = {**os.environ, "TMPDIR": str(small_disk)}
    proc = ingest_cli(variant, tiny_dataset["parquet"], config, out, tmp_path, env=env)
    code, stderr = finish(proc, ProcessTree(proc))
    assert code == EXIT_USER_ERROR
    message = error_sentence(stderr)
    assert re.fullmatch(
        rf"ERROR: QuestDB could not start because the disk of its data directory "
        rf"{re.escape(str(small_disk))}\S* is full \([\d,]+ MiB free\): free space there or "
        rf"point TMPDIR at a bigger disk, then rerun\.",
        message,
    ), message
    assert "jar" not in message
    assert_no_result(out)
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]


# ---------------------------------------------------------------------------------------------
# A server that stops answering; a job killed too hard to clean up


def test_a_stopped_server_fails_the_repeat_within_its_deadline(big_dataset, jar_cache, tmp_path):
    variant = "pandas-dataframe-parquet-tcp"
    config = write_config(tmp_path / "c.yaml", warmup_rows=0, guards={"repeat_deadline_s": 5},
                          questdb={"cache_dir": str(jar_cache)})  # fmt: skip
    out = tmp_path / "run.json"
    proc = ingest_cli(variant, big_dataset["parquet"], config, out, tmp_path)
    tree = ProcessTree(proc)
    server = wait_for(tree.questdb, "the job's QuestDB")
    wait_for(lambda: ilp_connected(server), "a client sending")
    server.suspend()  # SIGSTOP: the server holds its connections and answers nothing
    code, stderr = finish(proc, tree)
    assert code == EXIT_USER_ERROR
    message = error_sentence(stderr)
    assert re.fullmatch(
        rf"ERROR: pandas-dataframe-parquet-tcp repeat 0: the QuestDB server at "
        rf"http://127\.0\.0\.1:\d+ \(pid {server.pid}\) made no progress for 5 s while the job "
        rf"waited for (the server to accept the rows|the rows to become visible \(the WAL "
        rf"applied\)); its log \S+ may say why \(a stopped process, a long garbage collection, a "
        rf"machine out of memory\): fix that, or raise guards\.repeat_deadline_s if the server "
        rf"is only slow, then rerun\.",
        message,
    ), message
    assert_no_result(out)


def test_the_data_directory_of_a_killed_job_is_gone_after_the_next_job(
    big_dataset, tiny_dataset, jar_cache, tmp_path
):
    tmpdir = tmp_path / "tmp"  # this test's own TMPDIR: other runs' directories are not its
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    config = write_config(tmp_path / "c.yaml", warmup_rows=0,
                          questdb={"cache_dir": str(jar_cache)})  # fmt: skip
    out = tmp_path / "run.json"
    proc = ingest_cli("pandas-dataframe-parquet-tcp", big_dataset["parquet"], config, out,
                      tmp_path, env=env)  # fmt: skip
    tree = ProcessTree(proc)
    server = wait_for(tree.questdb, "the job's QuestDB")
    root = data_dir_of(server)
    wait_for(lambda: ilp_connected(server), "a client sending")
    os.kill(proc.pid, signal.SIGKILL)  # as the OOM killer does: no clean-up runs
    proc.communicate(timeout=60)
    wait_for(lambda: not _alive(server), "the server to die with its job")
    assert root.is_dir()  # but its data stayed
    nxt = ingest_cli("pandas-dataframe-parquet-http", tiny_dataset["parquet"], config, out,
                     tmp_path, env=env)  # fmt: skip
    code, stderr = finish(nxt, ProcessTree(nxt))
    assert code == 0, stderr[-3000:]
    assert not root.exists()
    removed = (rf"removed the QuestDB data directory {re.escape(str(root))} \([\d.]+ MiB\) left "
               rf"by process {proc.pid}, which is gone")  # fmt: skip
    assert re.search(removed, stderr), stderr[-3000:]
    assert list(tmpdir.iterdir()) == []  # the next job's own went when it ended


# ---------------------------------------------------------------------------------------------
# Two runs on one machine


def _run_file_contention(path: Path) -> dict:
    return json.loads(path.read_text())["contention"]


def test_two_concurrent_runs_are_both_marked_contended(tiny_dataset, jar_cache, tmp_path):
    """Run A is paused once its server is up; B starts (and sees A), and is paused once its
    server is up; A goes on (and sees B), then B: both overlap, whatever the machine's speed."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # both runs' data directories, and no other
    config = write_config(tmp_path / "c.yaml", warmup_rows=0, repeats=2,
                          questdb={"cache_dir": str(jar_cache)})  # fmt: skip
    outs = [tmp_path / "a.json", tmp_path / "b.json"]
    variant = "pandas-dataframe-parquet-http"
    a = ingest_cli(variant, tiny_dataset["parquet"], config, outs[0], tmp_path, env=env)
    a_tree = ProcessTree(a)
    a_server = wait_for(a_tree.questdb, "run A's QuestDB")
    os.kill(a.pid, signal.SIGSTOP)
    b = ingest_cli(variant, tiny_dataset["parquet"], config, outs[1], tmp_path, env=env)
    b_tree = ProcessTree(b)
    b_server = wait_for(b_tree.questdb, "run B's QuestDB")
    os.kill(b.pid, signal.SIGSTOP)
    os.kill(a.pid, signal.SIGCONT)
    code_a, stderr_a = finish(a, a_tree)
    os.kill(b.pid, signal.SIGCONT)
    code_b, stderr_b = finish(b, b_tree)
    assert (code_a, code_b) == (0, 0), (stderr_a + stderr_b)[-3000:]
    seen_by_a, seen_by_b = (_run_file_contention(p) for p in outs)
    assert seen_by_a["contended"] and seen_by_b["contended"]
    assert b.pid in seen_by_a["other_job_pids"] and b_server.pid in seen_by_a["other_questdb_pids"]
    assert a.pid in seen_by_b["other_job_pids"] and a_server.pid in seen_by_b["other_questdb_pids"]
    assert a_server.pid not in seen_by_a["other_questdb_pids"]  # its own server is no contention


def test_an_exclusive_run_refuses_to_start_beside_another(tiny_dataset, jar_cache, tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    config = write_config(tmp_path / "c.yaml", warmup_rows=0,
                          questdb={"cache_dir": str(jar_cache)})  # fmt: skip
    exclusive = write_config(tmp_path / "x.yaml", warmup_rows=0, guards={"exclusive": True},
                             questdb={"cache_dir": str(jar_cache)})  # fmt: skip
    variant = "pandas-dataframe-parquet-http"
    a = ingest_cli(variant, tiny_dataset["parquet"], config, tmp_path / "a.json", tmp_path, env=env)
    a_tree = ProcessTree(a)
    wait_for(a_tree.questdb, "run A's QuestDB")
    os.kill(a.pid, signal.SIGSTOP)
    try:
        out = tmp_path / "b.json"
        b = ingest_cli(variant, tiny_dataset["parquet"], exclusive, out, tmp_path, env=env)
        code, stderr = finish(b, ProcessTree(b))
    finally:
        os.kill(a.pid, signal.SIGCONT)
    assert code == EXIT_USER_ERROR
    message = error_sentence(stderr)
    assert re.fullmatch(
        rf"ERROR: another run is active on this machine \(.*the job of pid {a.pid}.*\) and "
        rf"guards\.exclusive is true: wait for it to end \(or stop it\), or set guards\.exclusive: "
        rf"false to run anyway with the results marked as contended, then rerun\.",
        message,
    ), message
    assert_no_result(out)
    code_a, stderr_a = finish(a, a_tree)
    assert code_a == 0, stderr_a[-3000:]
